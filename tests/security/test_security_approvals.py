"""Issue 11, items 6 and 7: a human's answer applies only to the call they were shown, and calls that
share an id in one batch never run.

Real LangGraph graphs and checkpointers; the only fake is the scripted chat model. The attack is
the one the issue reproduced: the question shows ``transfer_money(to=ACC-1, amount=50)``, the
thread's state is rewritten (``update_state``) before the answer, and a plain ``approve`` keyed by
the tool call id arrives.
"""

from __future__ import annotations

import asyncio

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from guard_graphs import build_guarded_agent
from guard.interrupts import BoundAsk
from guard.middleware import GuardMiddleware
from tests.support import FAST, ai_call, record, scripted, tool_messages

APPROVAL = {**FAST, "tools": {"transfer_money": {"requires_approval": True}}}
ASKED = {"to_account": "ACC-1", "amount": 50}
FORGED = {"to_account": "ATTACKER", "amount": 1000000}


def node_agent(tools, script, policy=APPROVAL, saver=None):
    return build_guarded_agent(scripted(script), tools, policy, checkpointer=saver or InMemorySaver())


def middleware_agent(tools, script, policy=APPROVAL):
    model = scripted(script)
    object.__setattr__(model, "bind_tools", lambda tools, **kw: model)
    return create_agent(model, tools, middleware=[GuardMiddleware(policy)], checkpointer=InMemorySaver())


def forge(agent, config, args):
    """Rewrite the pending call's arguments in the checkpointed AI message, keeping its id."""
    messages = agent.get_state(config).values["messages"]
    ai = next(m for m in reversed(messages) if isinstance(m, AIMessage) and m.tool_calls)
    calls = [{**c, "args": args} for c in ai.tool_calls]
    agent.update_state(config, {"messages": [ai.model_copy(update={"tool_calls": calls})]})


def question(result):
    return result["__interrupt__"][0].value


@pytest.mark.parametrize("make", [node_agent, middleware_agent], ids=["node", "middleware"])
def test_an_approval_never_runs_arguments_changed_after_the_question(travel_tools, calls, make):
    agent = make(travel_tools, [ai_call("transfer_money", ASKED, "pay")])
    config = {"configurable": {"thread_id": "forged"}}
    first = question(agent.invoke({"messages": [("user", "Send 50 to ACC-1.")]}, config))
    assert first["requests"][0]["args"] == ASKED

    forge(agent, config, FORGED)
    result = agent.invoke(Command(resume={"pay": {"action": "approve"}}), config)

    assert calls.log == []  # the approval was for ACC-1/50: nothing ran
    again = question(result)  # the call as it now stands is put to the human
    assert again["requests"][0]["args"] == FORGED
    assert again["requests"][0]["args_hash"] != first["requests"][0]["args_hash"]

    agent.invoke(Command(resume={"pay": {"action": "reject", "reason": "not what I asked"}}), config)
    assert calls.log == []


@pytest.mark.parametrize("make", [node_agent, middleware_agent], ids=["node", "middleware"])
def test_an_approval_of_the_call_as_shown_runs_it_once(travel_tools, calls, make):
    agent = make(travel_tools, [ai_call("transfer_money", ASKED, "pay")])
    config = {"configurable": {"thread_id": "plain"}}
    agent.invoke({"messages": [("user", "Send 50 to ACC-1.")]}, config)
    result = agent.invoke(Command(resume={"pay": {"action": "approve"}}), config)
    assert calls.log == [("transfer_money", {"to_account": "ACC-1", "amount": 50.0})]
    assert "__interrupt__" not in result


def test_the_re_asked_question_binds_the_second_answer(travel_tools, calls):
    """After a discarded answer, the answer to the new question applies, to the new arguments, and a
    replay of the node (LangGraph re-runs it on each resume) discards the stale one again."""
    agent = node_agent(travel_tools, [ai_call("transfer_money", ASKED, "pay")])
    config = {"configurable": {"thread_id": "second"}}
    agent.invoke({"messages": [("user", "Send 50 to ACC-1.")]}, config)
    forge(agent, config, {"to_account": "ACC-2", "amount": 70})
    again = question(agent.invoke(Command(resume={"pay": {"action": "approve"}}), config))
    assert again["ask"]["discarded"] == [0]
    agent.invoke(Command(resume={"pay": {"action": "approve"}}), config)
    assert calls.log == [("transfer_money", {"to_account": "ACC-2", "amount": 70.0})]


def test_an_answer_given_under_another_policy_is_asked_again(travel_tools, calls):
    """A new policy deployed between the question and the answer changes the policy hash the
    question was bound to: the call is checked again and asked about again."""
    saver = InMemorySaver()
    script = [ai_call("transfer_money", ASKED, "pay")]
    config = {"configurable": {"thread_id": "policy"}}
    before = node_agent(travel_tools, script, APPROVAL, saver)
    asked = question(before.invoke({"messages": [("user", "Send 50 to ACC-1.")]}, config))
    stricter = {**APPROVAL, "budgets": {"per_call": 1}}
    after = node_agent(travel_tools, [], stricter, saver)
    again = question(after.invoke(Command(resume={"pay": {"action": "approve"}}), config))
    assert calls.log == []
    assert again["policy_hash"] != asked["policy_hash"]
    after.invoke(Command(resume={"pay": {"action": "approve"}}), config)
    assert calls.log == [("transfer_money", {"to_account": "ACC-1", "amount": 50.0})]


def test_the_async_node_binds_answers_too(travel_tools, calls):
    agent = node_agent(travel_tools, [ai_call("transfer_money", ASKED, "pay")])
    config = {"configurable": {"thread_id": "async"}}

    async def scenario():
        await agent.ainvoke({"messages": [("user", "Send 50 to ACC-1.")]}, config)
        forge(agent, config, FORGED)
        return await agent.ainvoke(Command(resume={"pay": {"action": "approve"}}), config)

    result = asyncio.run(scenario())
    assert calls.log == [] and question(result)["requests"][0]["args"] == FORGED


@pytest.mark.parametrize("make", [node_agent, middleware_agent], ids=["node", "middleware"])
def test_calls_sharing_an_id_get_feedback_and_none_runs(travel_tools, calls, make):
    script = [ai_call("transfer_money", ASKED, "dup", ("get_weather", {"city": "Oslo"}, "dup"))]
    policy = {**FAST, "budgets": {"per_call": 1}}
    agent = make(travel_tools, script, policy)
    result = agent.invoke({"messages": [("user", "Send 50 to ACC-1 and tell me Oslo's weather.")]}, {"configurable": {"thread_id": "dup"}})
    answered = [m for m in tool_messages(result) if m.tool_call_id == "dup"]
    assert calls.log == []
    assert "__interrupt__" not in result
    assert len(answered) == 2
    for msg in answered:
        assert msg.status == "error" and "share the id 'dup'" in msg.content
        assert record(msg)["categories"] == ["malformed_arguments"]


@pytest.mark.parametrize("make", [node_agent, middleware_agent], ids=["node", "middleware"])
def test_with_the_batch_check_off_calls_sharing_an_id_run_as_toolnode_runs_them(travel_tools, calls, make):
    script = [ai_call("get_weather", {"city": "Oslo"}, "dup", ("get_weather", {"city": "Bergen"}, "dup"))]
    agent = make(travel_tools, script, {**FAST, "checks": {"duplicate_ids": False}})
    agent.invoke({"messages": [("user", "Weather in Oslo and in Bergen?")]}, {"configurable": {"thread_id": "dup-off"}})
    assert sorted(args["city"] for _, args in calls.log) == ["Bergen", "Oslo"]


def test_unique_ids_in_a_batch_are_not_refused(travel_tools, calls):
    script = [ai_call("get_weather", {"city": "Oslo"}, "a", ("get_weather", {"city": "Bergen"}, "b"))]
    agent = node_agent(travel_tools, script, FAST)
    agent.invoke({"messages": [("user", "Weather in Oslo and in Bergen?")]}, {"configurable": {"thread_id": "u"}})
    assert sorted(args["city"] for _, args in calls.log) == ["Bergen", "Oslo"]


def test_bound_ask_outside_a_graph_discards_answers_it_cannot_bind():
    """With no record of the question (no checkpointer), an answer cannot be shown to answer it."""
    asked: list[dict] = []

    def ask(q):
        asked.append(q)
        if len(asked) > 2:
            raise RuntimeError("paused")
        return {"c1": {"action": "approve"}}

    with pytest.raises(RuntimeError):
        BoundAsk(ask, reader=lambda: None)({"type": "guard.escalation", "escalation_id": "e"})
    assert [q["ask"] for q in asked] == [
        {"index": 0, "discarded": []},
        {"index": 1, "discarded": [0]},
        {"index": 2, "discarded": [0, 1]},
    ]


def test_answers_are_bound_across_processes_on_a_redis_checkpointer(travel_tools, calls, redis_server, key_prefix):
    """The question is read back from the durable checkpointer, so the binding holds when the
    answer reaches another replica: two graphs, two savers, one Redis."""
    from guard.state.checkpoint import PlainRedisSaver

    config = {"configurable": {"thread_id": "durable"}}
    with PlainRedisSaver(redis_server, key_prefix=key_prefix) as one, PlainRedisSaver(redis_server, key_prefix=key_prefix) as two:
        asking = node_agent(travel_tools, [ai_call("transfer_money", ASKED, "pay")], saver=one)
        asking.invoke({"messages": [("user", "Send 50 to ACC-1.")]}, config)
        forge(asking, config, FORGED)
        answering = node_agent(travel_tools, [], saver=two)
        again = question(answering.invoke(Command(resume={"pay": {"action": "approve"}}), config))
        assert calls.log == [] and again["requests"][0]["args"] == FORGED
        answering.invoke(Command(resume={"pay": {"action": "reject"}}), config)
        assert calls.log == []


def test_the_preflight_node_applies_an_answer_only_to_its_question():
    """The preflight asks for a missing date about Berlin -> Rome; the request is rewritten to
    Berlin -> Havana before the answer: the answer is not applied, the new request is asked about."""
    from langchain_core.messages import HumanMessage
    from langgraph.graph import END, START, MessagesState, StateGraph

    from guard import Guard
    from guard.preflight_node import PreflightNode, after_preflight

    tools = [{"name": "book_flight", "description": "Book a flight from one city to another on a date.",
              "parameters": {"type": "object", "required": ["from_city", "to_city", "date"], "properties": {
                  "from_city": {"type": "string"}, "to_city": {"type": "string"},
                  "date": {"type": "string", "format": "date"}}}}]
    graph = StateGraph(MessagesState)
    graph.add_node("preflight", PreflightNode(Guard(tools)))
    graph.add_node("model", lambda state: {"messages": [AIMessage(content="Booked.")]})
    graph.add_edge(START, "preflight")
    graph.add_conditional_edges("preflight", after_preflight, ["model", END])
    graph.add_edge("model", END)
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "pre"}}
    first = question(app.invoke({"messages": [("user", "Book a flight from Berlin to Rome")]}, config))
    request = app.get_state(config).values["messages"][-1]
    app.update_state(config, {"messages": [HumanMessage(content="Book a flight from Berlin to Havana", id=request.id)]})
    result = app.invoke(Command(resume={"preflight": {"action": "answer", "values": {"date": "2026-12-01"}}}), config)
    again = question(result)
    assert again["requests"][0]["args"]["to_city"] == "Havana" != first["requests"][0]["args"]["to_city"]


def test_a_tool_that_asks_its_own_question_after_an_approval_gets_its_answer():
    """The guard's question, then the tool's own interrupt in the same task: LangGraph keeps only
    the task's latest interrupt, and the approval given before it still stands."""
    from langchain_core.tools import tool
    from langgraph.types import interrupt

    ran: list[str] = []

    @tool
    def transfer_money(to_account: str, amount: float) -> str:
        """Transfer an amount of money to an account."""
        code = interrupt("the bank's one-time code?")
        ran.append(f"{to_account}:{amount}:{code}")
        return "ok"

    agent = node_agent([transfer_money], [ai_call("transfer_money", ASKED, "pay")])
    config = {"configurable": {"thread_id": "own-question"}}
    agent.invoke({"messages": [("user", "Send 50 to ACC-1.")]}, config)
    second = agent.invoke(Command(resume={"pay": {"action": "approve"}}), config)
    assert second["__interrupt__"][0].value == "the bank's one-time code?"
    agent.invoke(Command(resume="123456"), config)
    assert ran == ["ACC-1:50.0:123456"]


def test_calls_sharing_an_id_are_never_put_to_a_human_who_could_approve_them(travel_tools, calls):
    policy = {**FAST, "actions": {"malformed_arguments": "ask_human"}}
    script = [ai_call("transfer_money", ASKED, "dup", ("get_weather", {"city": "Oslo"}, "dup"))]
    result = node_agent(travel_tools, script, policy).invoke({"messages": [("user", "Send 50 to ACC-1 and the weather.")]},
                                                             {"configurable": {"thread_id": "dup-ask"}})
    assert "__interrupt__" not in result and calls.log == []
