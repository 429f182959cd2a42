"""Where the guard adds nothing, GuardedToolNode answers as ToolNode does; where it adds something
(a repair, its own finding), it steps in. Interceptors see every call first, injected arguments
are ToolNode's, any state type ToolNode takes works, and so for the middleware."""

from __future__ import annotations

import warnings
from typing import Annotated, Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedState, ToolNode
from langgraph.prebuilt.tool_node import ToolInvocationError

from guard import GuardedToolNode
from guard.middleware import GuardMiddleware
from tests.support import FAST, record, scripted

#: no repairs: a call is either run as proposed or sent back
STRICT = {**FAST, "repairs": {"coerce_types": False, "param_names": False, "parse_json": False}}


@tool
def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


@tool
def read_secret(name: str, auth: Annotated[str, InjectedState("auth")]) -> str:
    """Read a secret; the auth token comes from the graph state, never from the model."""
    return f"{name} read with {auth}"


class AuthState(MessagesState):
    auth: str


def graph_of(node: Any, state: Any = MessagesState) -> Any:
    graph = StateGraph(state)
    graph.add_node("tools", node)
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile()


def batch(name: str, args: dict[str, Any], call_id: str = "c1") -> list[Any]:
    return [HumanMessage("Add 1 and 2."), AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])]


def last(node: Any, messages: list[Any], state: Any = MessagesState, **extra: Any) -> ToolMessage:
    return graph_of(node, state).invoke({"messages": messages, **extra})["messages"][-1]


def test_calls_the_guard_lets_run_as_proposed_get_toolnodes_output_exactly():
    """A batch the guard has nothing to say about: the node's update is ToolNode's, message for
    message (content, status, metadata: no record added), sync and async, node and middleware."""
    import asyncio

    ai = AIMessage(content="", tool_calls=[
        {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"},
        {"name": "add", "args": {"a": 3, "b": 4}, "id": "c2", "type": "tool_call"},
    ])
    messages = [HumanMessage("Add 1 and 2, and 3 and 4."), ai]

    def plain(out: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(m.content, m.status, m.tool_call_id, m.response_metadata) for m in out["messages"] if isinstance(m, ToolMessage)]

    expected = plain(graph_of(ToolNode([add])).invoke({"messages": messages}))
    assert expected == [("3", "success", "c1", {}), ("7", "success", "c2", {})]
    for policy in (STRICT, FAST, {}):
        node = graph_of(GuardedToolNode([add], policy))
        assert plain(node.invoke({"messages": messages})) == expected
        assert plain(asyncio.run(node.ainvoke({"messages": messages}))) == expected
    for policy in (STRICT, FAST):
        agent = create_agent(bindable([ai]), [add], middleware=[GuardMiddleware(policy)])
        assert plain(agent.invoke({"messages": messages[:1]})) == expected


def test_an_unknown_tool_gets_toolnodes_answer_and_the_guards_record():
    expected = last(ToolNode([add]), batch("multiply", {"a": 1, "b": 2}))
    got = last(GuardedToolNode([add], STRICT), batch("multiply", {"a": 1, "b": 2}))
    assert got.content == expected.content == "Error: multiply is not a valid tool, try one of [add]."
    assert got.status == "error" and record(got)["action"] == "retry" and record(got)["categories"] == ["unknown_tool"]


@pytest.mark.parametrize("handle_tool_errors", [True, False])
def test_arguments_the_tools_schema_rejects_get_toolnodes_answer(handle_tool_errors):
    messages = batch("add", {"a": 1})  # b missing: the tool's own validation refuses it too
    if handle_tool_errors:
        expected = last(ToolNode([add], handle_tool_errors=True), messages)
        got = last(GuardedToolNode([add], STRICT, handle_tool_errors=True), messages)
        assert got.content == expected.content and "Field required" in got.content
        assert record(got)["categories"] == ["missing_argument"]
    else:
        with pytest.raises(ToolInvocationError):
            last(ToolNode([add], handle_tool_errors=False), messages)
        with pytest.raises(ToolInvocationError):
            last(GuardedToolNode([add], STRICT, handle_tool_errors=False), messages)


def test_the_guard_steps_in_where_it_adds_something():
    # "2" passes the tool's lax validation (ToolNode runs it); the guard sends it back, or repairs it
    plain = last(ToolNode([add]), batch("add", {"a": 1, "b": "2"}))
    strict = last(GuardedToolNode([add], STRICT), batch("add", {"a": 1, "b": "2"}))
    repairing = last(GuardedToolNode([add], FAST), batch("add", {"a": 1, "b": "2"}))
    assert plain.content == "3"
    assert strict.status == "error" and strict.content.startswith("The call to `add` was not run.")
    assert repairing.content == "3" and record(repairing)["action"] == "repair"


@pytest.mark.parametrize("node_cls", [ToolNode, GuardedToolNode])
def test_an_interceptor_sees_every_call_first_and_may_serve_an_unregistered_tool(node_cls):
    seen: list[str] = []

    def interceptor(request: Any, execute: Any) -> Any:
        seen.append(request.tool_call["name"])
        if request.tool is None and request.tool_call["name"] == "multiply":
            a, b = request.tool_call["args"]["a"], request.tool_call["args"]["b"]
            return ToolMessage(content=str(a * b), tool_call_id=request.tool_call["id"], name="multiply")
        return execute(request)

    kwargs = {"wrap_tool_call": interceptor}
    node = node_cls([add], STRICT, **kwargs) if node_cls is GuardedToolNode else node_cls([add], **kwargs)
    msg = last(node, batch("multiply", {"a": 3, "b": 4}))
    assert msg.content == "12" and seen == ["multiply"]


@pytest.mark.parametrize("policy", [STRICT, FAST])
def test_an_injected_argument_the_model_also_gave_is_overwritten_as_in_toolnode(policy):
    messages = [HumanMessage("Read the db secret."), batch("read_secret", {"name": "db", "auth": "forged-by-the-model"})[-1]]
    expected = last(ToolNode([read_secret]), messages, AuthState, auth="token-from-state")
    got = last(GuardedToolNode([read_secret], policy), messages, AuthState, auth="token-from-state")
    assert got.content == expected.content == "db read with token-from-state"
    # allowed as proposed, nothing to say: ToolNode's message, no record added
    assert got.response_metadata == expected.response_metadata == {}


def test_a_pydantic_v1_state_works_when_the_guard_repairs_a_call():
    """ToolNode takes a pydantic v1 model as its input (LangGraph's own tests invoke it so); the
    guard rebuilds that input with the repaired call."""
    from langgraph.runtime import Runtime

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pydantic.v1 import BaseModel as V1BaseModel

        class V1State(V1BaseModel):
            messages: list
            foo: str

        state = V1State(messages=batch("add", {"a": 1, "b": "2"}), foo="bar")
    config = {"configurable": {"__pregel_runtime": Runtime()}}  # what LangGraph's own tests pass
    (msg,) = GuardedToolNode([add], FAST).invoke(state, config=config)["messages"]
    assert msg.content == "3" and record(msg)["action"] == "repair"


def bindable(script: list[AIMessage]) -> Any:
    model = scripted(script)
    object.__setattr__(model, "bind_tools", lambda tools, **kw: model)
    return model


def test_the_middleware_answers_an_unknown_tool_as_the_agent_does():
    script = [batch("multiply", {"a": 1, "b": 2})[-1]]
    plain = create_agent(bindable(script), [add]).invoke({"messages": [HumanMessage("Multiply 1 and 2.")]})
    guarded = create_agent(bindable(script), [add], middleware=[GuardMiddleware(STRICT)]).invoke(
        {"messages": [HumanMessage("Multiply 1 and 2.")]}
    )
    (expected,) = [m for m in plain["messages"] if isinstance(m, ToolMessage)]
    (got,) = [m for m in guarded["messages"] if isinstance(m, ToolMessage)]
    assert got.content == expected.content and "multiply is not a valid tool" in got.content
    assert record(got)["categories"] == ["unknown_tool"]


@tool
def where(city: str, runtime) -> str:  # noqa: ANN001 - ToolNode injects a parameter named runtime
    """Where the call ran."""
    return f"{city} {runtime.tool_call_id}"


def test_a_parameter_named_runtime_is_injected_not_judged():
    messages = [HumanMessage("Paris"), batch("where", {"city": "Paris"}, "c9")[-1]]
    assert last(GuardedToolNode([where], FAST), messages).content == last(ToolNode([where]), messages).content == "Paris c9"
    agent = create_agent(bindable([messages[-1]]), [where], middleware=[GuardMiddleware(FAST)])
    (msg,) = [m for m in agent.invoke({"messages": [HumanMessage("Paris")]})["messages"] if isinstance(m, ToolMessage)]
    assert msg.content == "Paris c9" and "guard" not in msg.response_metadata


@tool
def multiply(a: int, b: int) -> str:
    """Multiply two numbers."""
    return str(a * b)


class ServesMultiply(AgentMiddleware):
    """Adds ``multiply`` to the model's tools at run time and serves it (LangChain's dynamic tools)."""

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(request.override(tools=[*request.tools, multiply]))

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        if request.tool_call["name"] == "multiply":
            return handler(request.override(tool=multiply))
        return handler(request)


@pytest.mark.parametrize("guard_first", [True, False])
def test_a_runtime_tool_is_served_and_checked_against_its_own_schema(guard_first):
    good = batch("multiply", {"a": 3, "b": 4}, "c1")[-1]
    bad = batch("multiply", {"a": 3, "b": "four"}, "c2")[-1]
    for script, expected in (([good], "12"), ([bad], None)):
        middleware = [GuardMiddleware(STRICT), ServesMultiply()] if guard_first else [ServesMultiply(), GuardMiddleware(STRICT)]
        out = create_agent(bindable(script), [add], middleware=middleware).invoke({"messages": [HumanMessage("3 times 4")]})
        (msg,) = [m for m in out["messages"] if isinstance(m, ToolMessage)]
        if expected is not None:
            assert msg.content == expected
            if guard_first:  # the guard, outside, did not know the tool: it records that an interceptor served it
                assert record(msg)["action"] == "allow" and record(msg)["note"] == "served by an interceptor"
            else:  # the guard, inside, knew the runtime tool and had nothing to say: no record
                assert "guard" not in msg.response_metadata
        elif guard_first:  # the guard, outside, sees no tool: the serving middleware and the tool node answer
            assert msg.status == "error" and "unknown_tool" in record(msg)["categories"]
        else:  # the guard, inside, is handed the runtime tool and checks the call against its schema
            assert msg.status == "error" and record(msg)["categories"] == ["type_violation"]


def test_arguments_the_tool_refuses_do_not_count_against_its_circuit():
    from guard.state import MemoryStore
    from guard.state.config import CircuitConfig

    store = MemoryStore(circuit=CircuitConfig(failure_threshold=1, reset_seconds=60))
    node = GuardedToolNode([add], STRICT, store=store, handle_tool_errors=True)
    msg = last(node, batch("add", {"a": 1}))  # b missing: ToolNode's own refusal, the tool never ran
    assert msg.status == "error" and "Field required" in msg.content
    assert store.circuit("add").state == "closed"
