"""``build_guarded_agent``: a ReAct loop (model -> guarded tools -> model) as a LangGraph graph.

The same graph serves the demo, the benchmark and users who want a guarded agent in one line: the
benchmark replays datasets through it, so what is measured is what runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableLambda
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import tools_condition

from guard.engine import Guard
from guard.node import GuardedToolNode


def _bind(model: Any, tools: Sequence[Any]) -> Runnable:
    """Bind the tools when the model supports it; scripted test models do not need them."""
    if isinstance(model, BaseChatModel):
        try:
            return model.bind_tools(list(tools))
        except NotImplementedError:
            return model
    return model


def build_guarded_agent(
    model: Any,
    tools: Sequence[Any],
    policy: Any = None,
    *,
    checkpointer: Any = None,
    guard: Guard | None = None,
    system_prompt: str | None = None,
    preflight: bool = False,
    **node_kwargs: Any,
) -> Any:
    """Compile a ReAct agent whose tool node is a ``GuardedToolNode``.

    ``model`` is a chat model (or any runnable from messages to an AI message). An
    ``interrupt()`` needs a ``checkpointer`` (``InMemorySaver()`` in a script, a Redis or Postgres
    saver in production). ``preflight=True`` puts the guard's preflight first: before the model
    proposes anything, it asks whether a tool can serve the request and whether every value is there.
    The agent tells the model of every tool failure (``handle_tool_errors=True``, ToolNode's text)
    rather than failing the run; pass ``handle_tool_errors`` to choose otherwise.
    """
    node_kwargs.setdefault("handle_tool_errors", True)
    guard = guard or Guard(tools, policy)
    bound = _bind(model, tools)
    prefix = [("system", system_prompt)] if system_prompt else []

    # While the model thinks, the guard embeds the request and the messages (Guard.warm): the
    # decision on the call the model proposes then finds them cached.
    def call_model(state: MessagesState) -> dict[str, Any]:
        guard.warm(state["messages"])
        return {"messages": [bound.invoke(prefix + list(state["messages"]))]}

    async def acall_model(state: MessagesState) -> dict[str, Any]:
        guard.warm(state["messages"])
        return {"messages": [await bound.ainvoke(prefix + list(state["messages"]))]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", RunnableLambda(call_model, afunc=acall_model))
    graph.add_node("tools", GuardedToolNode(tools, guard=guard, **node_kwargs))
    if preflight:
        from guard.preflight_node import PreflightNode, after_preflight

        graph.add_node("preflight", PreflightNode(guard))
        graph.add_edge(START, "preflight")
        graph.add_conditional_edges("preflight", after_preflight, {"model": "model", END: END})
    else:
        graph.add_edge(START, "model")
    graph.add_conditional_edges("model", tools_condition, {"tools": "tools", END: END})
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=checkpointer)
