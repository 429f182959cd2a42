"""GuardedToolNode in real LangGraph graphs (InMemorySaver checkpointer, scripted model)."""

from __future__ import annotations

from typing import Annotated, TypedDict

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command

from guard_graphs import build_guarded_agent
from guard import GuardedToolNode
from tests.support import FAST, ai_call, record, scripted, tool_messages

USER = "Find flights from Berlin to Paris for 2 people, and tell me the weather in Paris."


def node_graph(node):
    """ToolNode (and so GuardedToolNode) runs inside a graph: a one-node graph around it."""
    graph = StateGraph(MessagesState)
    graph.add_node("tools", node)
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile()


def new_messages(out, before):
    return out["messages"][len(before):]


def run(agent, payload, thread="t1"):
    return agent.invoke(payload, {"configurable": {"thread_id": thread}})


def agent_for(tools, script, policy=None, **kw):
    return build_guarded_agent(scripted(script), tools, {**FAST, **(policy or {})}, checkpointer=InMemorySaver(), **kw)


def test_allowed_call_runs_and_leaves_toolnodes_message_as_it_was(travel_tools, calls):
    """A call the guard lets run as proposed, with nothing to say about it: no record is added
    (the message is ToolNode's); a call it stepped in on is recorded (the repair test below)."""
    agent = agent_for(travel_tools, [ai_call("get_weather", {"city": "Paris"})])
    result = run(agent, {"messages": [("user", USER)]})
    (msg,) = tool_messages(result)
    assert calls.names() == ["get_weather"]
    assert msg.response_metadata == {} and msg.status == "success"
    assert result["messages"][-1].content == "done"


def test_unknown_tool_gets_feedback_then_the_retry_succeeds(travel_tools, calls):
    agent = agent_for(
        travel_tools,
        [ai_call("get_wether", {"city": "Paris"}, "c1"), ai_call("get_weather", {"city": "Paris"}, "c2")],
    )
    result = run(agent, {"messages": [("user", USER)]})
    first, second = tool_messages(result)
    assert first.status == "error" and record(first)["action"] == "retry"
    assert "get_weather" in first.content and "unknown_tool" in record(first)["categories"]
    assert second.status != "error" and calls.names() == ["get_weather"]


def test_repaired_call_runs_with_the_repaired_arguments(travel_tools, calls):
    agent = agent_for(travel_tools, [ai_call("search_flights", {"fromCity": "Berlin", "to_city": "Paris", "passengers": "2"})])
    result = run(agent, {"messages": [("user", USER)]})
    (msg,) = tool_messages(result)
    assert calls.log == [("search_flights", {"from_city": "Berlin", "to_city": "Paris", "passengers": 2})]
    rec = record(msg)
    assert rec["action"] == "repair"
    assert {r["kind"] for r in rec["repairs"]} >= {"param_names", "coerce_types"}


def test_budget_exhausted_then_the_human_is_asked(travel_tools, calls):
    bad = {"from_city": "Berlin", "to_city": "Paris", "passengers": "two adults"}
    agent = agent_for(
        travel_tools,
        [ai_call("search_flights", bad, "c1"), ai_call("search_flights", bad, "c2")],
        {"budgets": {"per_call": 1}},
    )
    result = run(agent, {"messages": [("user", USER)]})
    assert record(tool_messages(result)[0])["action"] == "retry"
    pending = result["__interrupt__"][0].value
    assert pending["kind"] == "budget_exhausted" and pending["tool_call_ids"] == ["c2"]
    assert calls.names() == []
    result = run(agent, Command(resume={"c2": {"action": "edit", "args": {**bad, "passengers": 2}}}))
    assert calls.log[-1][1]["passengers"] == 2


def test_invented_value_pauses_then_the_answer_is_rechecked_and_run(travel_tools, calls):
    agent = agent_for(travel_tools, [ai_call("get_weather", {"city": "Oslo"})])
    result = run(agent, {"messages": [("user", "What's the weather like where I am going?")]})
    pending = result["__interrupt__"][0].value
    assert pending["type"] == "guard.escalation" and pending["kind"] == "missing_information"
    (req,) = pending["requests"]
    assert req["tool_call_id"] == "c1" and req["missing"] == ["city"] and "get_weather" in req["question"]
    assert calls.names() == []
    result = run(agent, Command(resume={"c1": {"action": "answer", "values": {"city": "Bergen"}}}))
    assert calls.log == [("get_weather", {"city": "Bergen"})]
    assert record(tool_messages(result)[0])["action"] == "allow"


def test_two_parallel_calls_are_asked_once_and_resumed_by_id(travel_tools, calls):
    agent = agent_for(
        travel_tools,
        [ai_call("get_weather", {"city": "Oslo"}, "a", ("get_weather", {"city": "Rome"}, "b"))],
    )
    result = run(agent, {"messages": [("user", "Weather at both of my stops, please.")]})
    assert len(result["__interrupt__"]) == 1
    assert result["__interrupt__"][0].value["tool_call_ids"] == ["a", "b"]
    # Answers given in the opposite order: matched by id, never by position.
    result = run(
        agent,
        Command(resume={"b": {"action": "answer", "values": {"city": "Milan"}}, "a": {"action": "answer", "values": {"city": "Bergen"}}}),
    )
    assert sorted(args["city"] for _, args in calls.log) == ["Bergen", "Milan"]
    by_id = {m.tool_call_id: m for m in tool_messages(result)}
    assert "Bergen" in by_id["a"].content and "Milan" in by_id["b"].content


@pytest.mark.parametrize(
    ("answer", "ran", "status"),
    [
        ({"action": "approve"}, [("transfer_money", {"to_account": "DE12", "amount": 50.0})], None),
        ({"action": "edit", "args": {"to_account": "DE12", "amount": "20"}}, [("transfer_money", {"to_account": "DE12", "amount": 20.0})], None),
        ({"action": "reject", "reason": "too much"}, [], "error"),
    ],
)
def test_approval_approve_edit_and_reject(travel_tools, calls, answer, ran, status):
    policy = {"tools": {"transfer_money": {"requires_approval": True}}}
    agent = agent_for(travel_tools, [ai_call("transfer_money", {"to_account": "DE12", "amount": 50})], policy)
    result = run(agent, {"messages": [("user", "Send 50 to account DE12.")]})
    assert result["__interrupt__"][0].value["kind"] == "approval"
    result = run(agent, Command(resume={"c1": answer}))
    assert calls.log == ran
    msg = tool_messages(result)[0]
    assert msg.status == status or (status is None and msg.status != "error")
    if answer["action"] == "reject":
        assert "too much" in msg.content


def test_edited_args_are_validated_again(travel_tools, calls):
    policy = {"tools": {"transfer_money": {"requires_approval": True}}}
    agent = agent_for(travel_tools, [ai_call("transfer_money", {"to_account": "DE12", "amount": 50})], policy)
    run(agent, {"messages": [("user", "Send 50 to account DE12.")]})
    result = run(agent, Command(resume={"c1": {"action": "edit", "args": {"to_account": "DE12", "amount": "lots"}}}))
    msg = tool_messages(result)[0]
    assert calls.log == [] and msg.status == "error" and "type_violation" in record(msg)["categories"]


def test_timeout_is_retried_with_backoff_then_given_up():
    attempts = []

    @tool
    def slow_lookup(city: str) -> str:
        """Look a city up in a slow service."""
        attempts.append(city)
        raise TimeoutError("upstream took too long")

    agent = agent_for([slow_lookup], [ai_call("slow_lookup", {"city": "Paris"})], {"backoff": {"max_attempts": 3, "initial_seconds": 0, "jitter_seconds": 0}})
    result = run(agent, {"messages": [("user", "Look up Paris")]})
    msg = tool_messages(result)[0]
    assert len(attempts) == 3
    # the agent handles tool errors (handle_tool_errors=True): ToolNode's text, the guard's record
    assert msg.status == "error" and msg.content == "Error: TimeoutError('upstream took too long')\n Please fix your mistakes."
    assert record(msg)["attempts"] == 3 and record(msg)["outcome"] == "tool_timeout"
    assert record(msg)["attempt_errors"] == ["tool_timeout", "tool_timeout"]


def test_transient_failure_then_success_is_retried_transparently():
    attempts = []

    @tool
    def flaky(city: str) -> str:
        """A flaky service."""
        attempts.append(city)
        if len(attempts) == 1:
            raise ConnectionError("connection reset by peer")
        return "sunny"

    agent = agent_for([flaky], [ai_call("flaky", {"city": "Paris"})])
    msg = tool_messages(run(agent, {"messages": [("user", "Paris please")]}))[0]
    assert msg.content == "sunny" and record(msg)["attempts"] == 2 and record(msg)["action"] == "allow"


def test_permission_error_is_blocked_not_retried():
    attempts = []

    @tool
    def admin(city: str) -> str:
        """Needs admin rights."""
        attempts.append(city)
        raise PermissionError("403 forbidden")

    agent = agent_for([admin], [ai_call("admin", {"city": "Paris"})])
    msg = tool_messages(run(agent, {"messages": [("user", "Paris please")]}))[0]
    assert len(attempts) == 1 and record(msg)["outcome"] == "tool_permission" and record(msg)["outcome_action"] == "block"
    assert msg.status == "error" and "PermissionError('403 forbidden')" in msg.content


@pytest.mark.parametrize(
    "bad_call",
    [
        {"name": None, "args": {}, "id": "x"},
        {"name": "get_weather", "args": "{not json", "id": "x"},
        {"name": "get_weather", "args": ["Paris"], "id": "x"},
        {"name": "get_weather", "args": {"city": "\ud800\u202e" * 10}, "id": "x"},
        {"name": "get_weather", "args": {"city": "a" * 2_000_000}, "id": "x"},
    ],
)
def test_malformed_calls_get_a_finding_never_an_exception(travel_tools, calls, bad_call):
    node = GuardedToolNode(travel_tools, FAST)
    ai = AIMessage(content="", tool_calls=[])
    ai.tool_calls = [{**bad_call, "type": "tool_call"}]  # bypass pydantic: models do send such calls
    before = [HumanMessage("Weather in Paris"), ai]
    (msg,) = new_messages(node_graph(node).invoke({"messages": before}), before)
    assert msg.status == "error" and record(msg)["action"] in ("retry", "block")
    assert calls.names() == []


def test_invalid_tool_calls_are_answered_too(travel_tools, calls):
    node = GuardedToolNode(travel_tools, FAST)
    ai = AIMessage(content="", invalid_tool_calls=[{"name": "get_weather", "args": "{'city': 'Paris'", "id": "bad", "error": "json", "type": "invalid_tool_call"}])
    before = [HumanMessage("Weather in Paris"), ai]
    (msg,) = new_messages(node_graph(node).invoke({"messages": before}), before)
    assert msg.tool_call_id == "bad" and "malformed_arguments" in record(msg)["categories"]


async def test_async_graph_runs_the_same_decisions(travel_tools, calls):
    agent = agent_for(travel_tools, [ai_call("search_flights", {"from_city": "Berlin", "to_city": "Paris", "passengers": "2"})])
    result = await agent.ainvoke({"messages": [("user", USER)]}, {"configurable": {"thread_id": "a"}})
    assert record(tool_messages(result)[0])["action"] == "repair"
    assert calls.log[0][1]["passengers"] == 2


class HistoryState(TypedDict):
    history: Annotated[list, add_messages]


def test_node_in_a_hand_built_graph_with_a_custom_messages_key(travel_tools, calls):
    graph = StateGraph(HistoryState)
    graph.add_node("tools", GuardedToolNode(travel_tools, FAST, messages_key="history"))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    out = graph.compile().invoke({"history": [HumanMessage(USER), ai_call("get_weather", {"city": "Paris"})]})
    assert isinstance(out["history"][-1], ToolMessage) and calls.names() == ["get_weather"]


def test_a_circuit_opened_by_one_replica_makes_the_tool_unavailable_on_another():
    from guard.state import MemoryStore
    from guard.state.config import CircuitConfig

    store = MemoryStore(circuit=CircuitConfig(failure_threshold=2, reset_seconds=60))
    runs = []

    @tool
    def payments(city: str) -> str:
        """A payments backend that is down."""
        runs.append(city)
        raise PermissionError("403 forbidden: backend locked")

    replica_a = node_graph(GuardedToolNode([payments], FAST, store=store, handle_tool_errors=True))
    replica_b = node_graph(GuardedToolNode([payments], FAST, store=store, handle_tool_errors=True))
    for i in range(2):
        replica_a.invoke({"messages": [HumanMessage("Paris"), ai_call("payments", {"city": "Paris"}, f"a{i}")]})
    assert store.circuit("payments").state == "open" and len(runs) == 2
    out = replica_b.invoke({"messages": [HumanMessage("Paris"), ai_call("payments", {"city": "Paris"}, "b1")]})
    msg = out["messages"][-1]
    assert len(runs) == 2 and "unavailable_tool" in record(msg)["categories"]
    assert "circuit open after 2 failures" in msg.content


def test_the_agent_warms_the_guard_at_each_model_turn(travel_tools, calls):
    """While the model thinks, the guard embeds the conversation (``Guard.warm``): the agent asks for
    it before every model turn, with the messages the model is given."""
    from guard import Guard

    seen: list[list[str]] = []

    class Watching(Guard):
        def warm(self, messages):
            seen.append([m.content for m in messages])
            return super().warm(messages)

    guard = Watching(travel_tools, FAST)
    agent = build_guarded_agent(scripted([ai_call("get_weather", {"city": "Paris"})]), travel_tools, guard=guard,
                                checkpointer=InMemorySaver())
    result = run(agent, {"messages": [("user", USER)]})
    turns = [m for m in result["messages"] if m.type == "ai"]
    assert len(seen) == len(turns) == 2 and seen[0] == [USER]
    assert calls.names() == ["get_weather"]  # a guard without embedding checks warms nothing, changes nothing
