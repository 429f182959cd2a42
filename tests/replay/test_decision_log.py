"""The decision log: what a line holds, redaction, the context, and that it never fails a check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from guard_graphs.agent import build_guarded_agent
from guard import Guard
from guard.decision_log import SCHEMA, log_context
from guard.policy import Policy, PolicyError
from tests.support import ai_call, scripted

TOOLS = [{
    "name": "search_flights", "description": "Search flights between two cities",
    "parameters": {"type": "object", "required": ["from_city", "to_city"], "properties": {
        "from_city": {"type": "string"}, "to_city": {"type": "string"}, "password": {"type": "string"},
        "card": {"type": "object", "properties": {"number": {"type": "string"}, "holder": {"type": "string"}}},
    }},
}]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def logging_policy(path: Path, **log: Any) -> Policy:
    return Policy.model_validate({"log": {"path": str(path), **log}})


def test_off_by_default_and_left_out_of_the_policy_hash(tmp_path: Path) -> None:
    assert Policy().log is None and Guard(TOOLS).decision_log is None
    logged = logging_policy(tmp_path / "d.jsonl", redact=["password"])
    assert logged.sha256 == Policy().sha256  # where decisions are recorded changes no decision


def test_a_decision_line_holds_the_call_conversation_policy_and_decision(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    guard = Guard(TOOLS, logging_policy(path))
    messages = [HumanMessage("Find flights to Paris please")]
    with log_context(thread_id="thread-1", source="test"):
        asked = guard.check({"name": "search_flights", "args": {"to_city": "Paris"}, "id": "c1"}, messages)
        ran = guard.check({"name": "search_flights", "args": {"to_city": "Paris", "from_city": "Berlin"}, "id": "c2"},
                          [HumanMessage("Flights from Berlin to Paris")])
    header, tool, toolset, first, second = lines(path)
    assert header["type"] == "header" and header["schema"] == SCHEMA
    assert tool["type"] == "tool" and tool["tool"]["name"] == "search_flights" and tool["tool"]["parameters"] == guard.registry.get("search_flights").parameters
    assert toolset == {"type": "toolset", "v": 1, "digest": guard.registry.fingerprint, "tools": [tool["digest"]]}
    assert first["type"] == "decision" and first["toolset"] == toolset["digest"] == second["toolset"]  # each description once per file
    assert first["thread_id"] == "thread-1" and first["source"] == "test" and first["stage"] == "call"
    assert first["call"] == {"name": "search_flights", "args": {"to_city": "Paris"}, "id": "c1"}
    assert first["conversation"]["messages"] == [{"role": "user", "content": "Find flights to Paris please"}]
    assert first["conversation"]["n"] == 1 and first["conversation"]["digest"]
    assert first["policy"] == {"name": "default", "sha256": guard.policy.sha256}
    assert first["decision"]["action"] == asked.action.value == "retry"
    assert first["decision"]["categories"] == ["missing_argument"]
    assert first["decision"]["confidence"] == 1.0 and first["decision"]["findings"][0]["path"] == "$.from_city"
    assert first["decision_id"] == asked.decision_id and second["decision_id"] == ran.decision_id
    assert second["decision"]["action"] == "allow" and second["decision"]["confidence"] is None


def test_redaction_by_name_and_by_path_and_messages_left_out(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    guard = Guard(TOOLS, logging_policy(path, redact=["pass*", "$.card.number"], include_messages=False))
    args = {"from_city": "Berlin", "to_city": "Paris", "password": "hunter2", "card": {"number": "4111", "holder": "Ann"}}
    earlier = AIMessage("", tool_calls=[{"name": "search_flights", "args": {"password": "hunter2"}, "id": "c0"}])
    guard.check({"name": "search_flights", "args": args, "id": "c1"}, [HumanMessage("Berlin to Paris"), earlier])
    record = lines(path)[-1]
    assert record["call"]["args"] == {**args, "password": "[redacted]", "card": {"number": "[redacted]", "holder": "Ann"}}
    assert record["redacted"] is True
    assert "messages" not in record["conversation"] and record["conversation"]["n"] == 2
    assert "hunter2" not in path.read_text() and "4111" not in path.read_text()


def test_a_path_pattern_reaches_into_arrays(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    guard = Guard([{"name": "pay", "parameters": {"type": "object", "properties": {"items": {"type": "array"}}}}],
                  logging_policy(path, redact=["$.items[*].ssn"]))
    guard.check({"name": "pay", "args": {"items": [{"ssn": "078-05-1120", "n": 1}, {"ssn": "219-09-9999"}]}, "id": "c1"})
    assert lines(path)[-1]["call"]["args"] == {"items": [{"ssn": "[redacted]", "n": 1}, {"ssn": "[redacted]"}]}


def test_an_unknown_key_in_the_log_section_fails_the_policy(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("log:\n  path: d.jsonl\n  include_message: false\n", encoding="utf-8")
    with pytest.raises(PolicyError, match="include_message"):
        Policy.from_yaml(policy)


def test_a_log_that_cannot_be_written_never_fails_the_check(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    guard = Guard(TOOLS, logging_policy(tmp_path / "taken"))  # a directory: open() fails
    decision = guard.check({"name": "search_flights", "args": {"from_city": "Berlin", "to_city": "Paris"}, "id": "c1"})
    assert decision.action.value == "allow"
    assert guard.decision_log is not None and guard.decision_log.errors == 1


def test_the_node_logs_thread_decisions_and_outcomes_with_no_code_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    ran: list[dict[str, Any]] = []

    def search_flights(from_city: str, to_city: str) -> str:
        """Search flights between two cities."""
        ran.append({"from_city": from_city, "to_city": to_city})
        return "LH123"

    model = scripted([ai_call("search_flights", {"from_city": "Berlin", "to_city": "Paris"}, "c1"), AIMessage("Booked.")])
    agent = build_guarded_agent(model, [search_flights], logging_policy(path), checkpointer=InMemorySaver())
    agent.invoke({"messages": [HumanMessage("Flights from Berlin to Paris")]}, {"configurable": {"thread_id": "t-42"}})
    assert ran == [{"from_city": "Berlin", "to_city": "Paris"}]
    decisions = [r for r in lines(path) if r["type"] == "decision"]
    outcomes = [r for r in lines(path) if r["type"] == "outcome"]
    assert [(d["thread_id"], d["call"]["id"], d["decision"]["action"]) for d in decisions if d["stage"] == "call"] == [("t-42", "c1", "allow")]
    assert [(o["thread_id"], o["call_id"], o["outcome"], o["attempts"]) for o in outcomes] == [("t-42", "c1", "ok", 1)]


def test_the_middleware_logs_with_the_runs_thread_and_the_log_replays_as_logged(tmp_path: Path, travel_tools: Any) -> None:
    from langchain.agents import create_agent

    from guard.middleware import GuardMiddleware
    from guard.replay import replay
    from tests.support import FAST

    path = tmp_path / "d.jsonl"
    model = scripted([ai_call("weather", {"city": "Paris"}, "c1"), ai_call("get_weather", {"city": "Paris"}, "c2")])
    object.__setattr__(model, "bind_tools", lambda tools, **kw: model)
    policy = {**FAST, "log": {"path": str(path)}}
    agent = create_agent(model, travel_tools, middleware=[GuardMiddleware(policy)], checkpointer=InMemorySaver())
    agent.invoke({"messages": [("user", "Weather in Paris")]}, {"configurable": {"thread_id": "m-7"}})
    decisions = [r for r in lines(path) if r["type"] == "decision"]
    assert [(d["thread_id"], d["call"]["name"], d["decision"]["action"]) for d in decisions] == [
        ("m-7", "weather", "retry"), ("m-7", "get_weather", "allow")]
    assert [(o["call_id"], o["outcome"]) for o in lines(path) if o["type"] == "outcome"] == [("c2", "ok")]
    report = replay([path], Policy.model_validate(FAST)).report
    assert report["decisions"] == 2 and report["changed"] == 0


def test_otlp_sends_each_line_to_the_guard_decisions_logger(caplog: pytest.LogCaptureFixture) -> None:
    guard = Guard(TOOLS, Policy.model_validate({"log": {"otlp": True}}))
    with caplog.at_level("INFO", logger="guard.decisions"):
        guard.check({"name": "search_flights", "args": {"from_city": "Berlin", "to_city": "Paris"}, "id": "c1"})
        guard.check({"name": "search_flights", "args": {"from_city": "Oslo", "to_city": "Rome"}, "id": "c2"})
    records = [json.loads(r.getMessage()) for r in caplog.records if r.name == "guard.decisions"]
    assert [r["type"] for r in records] == ["tool", "toolset", "decision", "decision"]  # descriptions once per process
    assert [r["call"]["id"] for r in records[2:]] == ["c1", "c2"]
