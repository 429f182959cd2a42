"""Enforce mode keeps ToolNode's error semantics: a tool's exception follows ``handle_tool_errors``
exactly as in ToolNode, after the guard's retries of transient failures; interrupts always
propagate; in LangChain, outer middleware sees what the tool raised."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ToolRetryMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

from guard import GuardedToolNode
from guard.middleware import GuardMiddleware
from tests.support import FAST, scripted

POLICY = {**FAST, "backoff": {**FAST["backoff"], "max_attempts": 3}}


def tools_with(log: list[str]) -> list[Any]:
    @tool
    def broken(city: str) -> str:
        """A service with a bug."""
        log.append("broken")
        raise ValueError("bug in the service")

    @tool
    def refusing(city: str) -> str:
        """A service that reports a tool error."""
        log.append("refusing")
        raise ToolException("no data for this city")

    @tool
    def slow(city: str) -> str:
        """A service that times out."""
        log.append("slow")
        raise TimeoutError("upstream took too long")

    @tool
    def asks(city: str) -> str:
        """Asks the human before it answers."""
        log.append("asks")
        return f"{city}: {interrupt('sure?')}"

    return [broken, refusing, slow, asks]


def graph_of(node: Any, checkpointer: Any = None) -> Any:
    graph = StateGraph(MessagesState)
    graph.add_node("tools", node)
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile(checkpointer=checkpointer)


def call(name: str) -> dict[str, Any]:
    ai = AIMessage(content="", tool_calls=[{"name": name, "args": {"city": "Paris"}, "id": "c1", "type": "tool_call"}])
    return {"messages": [HumanMessage("Paris, please"), ai]}


def outcome(node_cls: Any, name: str, **kwargs: Any) -> tuple[Any, list[str]]:
    """What a one-node graph gives for one call: the tool message's content and status, or the
    exception; and which tools ran, how often."""
    log: list[str] = []
    node = node_cls(tools_with(log), POLICY, **kwargs) if node_cls is GuardedToolNode else node_cls(tools_with(log), **kwargs)
    try:
        msg = graph_of(node).invoke(call(name))["messages"][-1]
    except Exception as exc:
        return ("raised", type(exc), str(exc)), log
    assert isinstance(msg, ToolMessage)
    return (msg.content, msg.status), log


def custom_handler(e: ValueError) -> str:
    return f"handled: {e}"


@pytest.mark.parametrize(
    "handle_tool_errors",
    [False, True, "an error happened", custom_handler, (ToolException,), ValueError],
    ids=["false", "true", "text", "callable", "tuple", "type"],
)
@pytest.mark.parametrize("name", ["broken", "refusing"])
def test_a_tool_exception_follows_handle_tool_errors_as_in_toolnode(handle_tool_errors, name):
    expected, expected_log = outcome(ToolNode, name, handle_tool_errors=handle_tool_errors)
    got, log = outcome(GuardedToolNode, name, handle_tool_errors=handle_tool_errors)
    assert got == expected and log == expected_log


def test_the_default_handler_lets_a_plain_exception_out_as_toolnode_does():
    expected, _ = outcome(ToolNode, "broken")
    got, log = outcome(GuardedToolNode, "broken")
    assert expected[0] == "raised" and got == expected and log == ["broken"]


@pytest.mark.parametrize("handle_tool_errors", [False, True])
def test_a_transient_failure_is_retried_then_handed_on_as_toolnode_would(handle_tool_errors):
    expected, expected_log = outcome(ToolNode, "slow", handle_tool_errors=handle_tool_errors)
    got, log = outcome(GuardedToolNode, "slow", handle_tool_errors=handle_tool_errors)
    assert got == expected  # the exception, or ToolNode's own error text: never the guard's
    assert expected_log == ["slow"] and log == ["slow"] * 3


def test_an_interrupt_inside_a_tool_propagates_and_resumes():
    log: list[str] = []
    graph = graph_of(GuardedToolNode(tools_with(log), POLICY, handle_tool_errors=True), InMemorySaver())
    config = {"configurable": {"thread_id": "i1"}}
    first = graph.invoke(call("asks"), config)
    assert first["__interrupt__"][0].value == "sure?"
    msg = graph.invoke(Command(resume="yes"), config)["messages"][-1]
    assert msg.content == "Paris: yes" and log == ["asks", "asks"]


def test_a_wrapper_exception_is_handled_by_toolnode_rules():
    def wrapper(request: Any, execute: Any) -> Any:
        raise RuntimeError("wrapper broke")

    for handle_tool_errors in (True, False):
        expected, _ = outcome(ToolNode, "broken", handle_tool_errors=handle_tool_errors, wrap_tool_call=wrapper)
        got, log = outcome(GuardedToolNode, "broken", handle_tool_errors=handle_tool_errors, wrap_tool_call=wrapper)
        assert got == expected and log == []


class Seen(AgentMiddleware):
    """An outer middleware that records what the inner handler raised, then re-raises it."""

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[Exception] = []

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        try:
            return handler(request)
        except Exception as exc:
            self.errors.append(exc)
            raise


def bindable(script: list[AIMessage]) -> Any:
    model = scripted(script)
    object.__setattr__(model, "bind_tools", lambda tools, **kw: model)
    return model


def test_outer_middleware_sees_the_exception_the_tool_raised():
    seen, log = Seen(), []
    agent = create_agent(bindable([call("broken")["messages"][-1]]), tools_with(log), middleware=[seen, GuardMiddleware(POLICY)])
    with pytest.raises(ValueError, match="bug in the service"):
        agent.invoke({"messages": [HumanMessage("Paris, please")]})
    assert [type(e) for e in seen.errors] == [ValueError] and log == ["broken"]


@pytest.mark.parametrize("guard_first", [True, False])
def test_langchains_retry_middleware_retries_through_the_guard_in_either_order(guard_first):
    log: list[str] = []
    retry = ToolRetryMiddleware(max_retries=2, retry_on=(ValueError,), initial_delay=0, jitter=False)
    middleware = [GuardMiddleware(POLICY), retry] if guard_first else [retry, GuardMiddleware(POLICY)]
    agent = create_agent(bindable([call("broken")["messages"][-1]]), tools_with(log), middleware=middleware)
    msg = [m for m in agent.invoke({"messages": [HumanMessage("Paris, please")]})["messages"] if isinstance(m, ToolMessage)][0]
    assert log == ["broken"] * 3 and msg.status == "error" and "bug in the service" in msg.content


def test_the_middleware_reads_its_policy_file_when_built(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text("name: from-file\nmode: observe\n")
    middleware = GuardMiddleware(str(path))
    path.unlink()  # nothing is read later, on the agent's event loop
    assert middleware.observing and middleware._policy.name == "from-file"


async def test_a_middleware_built_inside_a_coroutine_reads_its_policy_file_off_the_event_loop(tmp_path, monkeypatch):
    import threading

    import guard.middleware as module

    path = tmp_path / "policy.yaml"
    path.write_text("name: from-file\n")
    readers: list[str] = []
    real = module.load_policy

    def spy(source: Any) -> Any:
        readers.append(threading.current_thread().name)
        return real(source)

    monkeypatch.setattr(module, "load_policy", spy)
    middleware = GuardMiddleware(str(path))  # an async app building its agent: nothing read yet
    assert readers == []

    @tool
    def weather(city: str) -> str:
        """Current weather in a city."""
        return f"sunny in {city}"

    agent = create_agent(bindable([call("weather")["messages"][-1]]), [weather], middleware=[middleware])
    out = await agent.ainvoke({"messages": [HumanMessage("Paris, please")]})
    assert [m.content for m in out["messages"] if isinstance(m, ToolMessage)] == ["sunny in Paris"]
    assert middleware.policy.name == "from-file"
    assert len(readers) == 1 and readers[0] != threading.current_thread().name


@pytest.mark.parametrize("interrupt_mode", ["batched", "per_call"])
@pytest.mark.parametrize(
    ("args", "ran", "status"),
    [({"to": "bob", "subject": "hi"}, ["bob"], "success"), ({"to": ["bob", "carol"]}, [], "error")],
    ids=["undeclared-arg", "wrong-type"],
)
def test_a_reviewers_edit_in_langchains_human_in_the_loop_is_the_reviewers_choice(interrupt_mode, args, ran, status):
    """An argument a reviewer added (or a value only the reviewer said) is no invention of the
    model: the call runs, as without the guard; a value of the wrong type is still sent back."""
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langchain_core.runnables import RunnableConfig
    from langgraph.types import Command

    sent: list[str] = []

    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        sent.append(to)
        return f"sent to {to}"

    proposal = AIMessage(content="", tool_calls=[{"name": "send_email", "args": {"to": "alice"}, "id": "e1", "type": "tool_call"}])
    agent = create_agent(
        bindable([proposal]),
        [send_email],
        middleware=[HumanInTheLoopMiddleware({"send_email": True}, interrupt_mode=interrupt_mode), GuardMiddleware(POLICY)],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": f"hitl-{interrupt_mode}"}}
    [intr] = agent.invoke({"messages": [HumanMessage("Email alice.")]}, config)["__interrupt__"]
    answer = {"type": "edit", "edited_action": {"name": "send_email", "args": args}}
    resume = Command(resume={intr.id: {"decisions": [answer]} if interrupt_mode == "batched" else answer})
    if interrupt_mode == "per_call" and status == "error":
        # LangChain checks a per-call answer against the tool's schema itself, before the guard
        with pytest.raises(Exception, match="validation error"):
            agent.invoke(resume, config)
        return
    final = agent.invoke(resume, config)
    [message] = [m for m in final["messages"] if isinstance(m, ToolMessage)]
    assert (sent, message.status) == (ran, status)
