"""Shadow policies: the candidate decides every call too; the active decision is enforced, the
candidate's is logged and its disagreements counted; a failing candidate never touches a call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from prometheus_client import CollectorRegistry

from guard_graphs.agent import build_guarded_agent
from guard import Guard
from guard.policy import Policy
from guard.telemetry import Telemetry
from tests.support import ai_call, scripted

WEATHER = [{"name": "get_weather", "description": "The weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
UNKNOWN = {"name": "get_forecast", "args": {"city": "Paris"}, "id": "c1"}
CLEAN = {"name": "get_weather", "args": {"city": "Paris"}, "id": "c2"}
SAID = [HumanMessage("What is the weather in Paris?")]


def boom(ctx: Any) -> list[Any]:
    raise RuntimeError("the candidate's own check is broken")


def policies(tmp_path: Path, candidate: str, active: str = "") -> Path:
    (tmp_path / "candidate.yaml").write_text(candidate, encoding="utf-8")
    path = tmp_path / "active.yaml"
    path.write_text(f"name: active\nshadow: candidate.yaml\n{active}", encoding="utf-8")  # relative to this file
    return path


def value(registry: CollectorRegistry, **labels: str) -> float:
    return registry.get_sample_value("guard_shadow_disagreements_total", labels) or 0.0


def test_the_active_decision_is_enforced_and_the_candidates_kept_and_counted(tmp_path: Path) -> None:
    guard = Guard(WEATHER, policies(tmp_path, "name: candidate\nactions:\n  unknown_tool: block\n"))
    registry = CollectorRegistry()
    telemetry = Telemetry(registry=registry, known_tools=["get_weather"])
    unknown = telemetry.traced_check(lambda: guard.check(UNKNOWN, SAID), "get_forecast", "c1", 0)
    clean = telemetry.traced_check(lambda: guard.check(CLEAN, SAID), "get_weather", "c2", 0)
    assert unknown.action.value == "retry" and unknown.shadow.action == "block" and unknown.shadow.disagrees
    assert unknown.shadow.policy_name == "candidate" and unknown.shadow.policy_hash == guard.shadow.policy.sha256
    assert clean.action.value == "allow" and clean.shadow.action == "allow" and not clean.shadow.disagrees
    assert value(registry, active_action="retry", shadow_action="block", category="unknown_tool") == 1.0
    assert sum(s.value for m in registry.collect() if m.name == "guard_shadow_disagreements" for s in m.samples
               if s.name.endswith("_total")) == 1.0
    assert "shadow" not in unknown.model_dump() and "shadow" not in unknown.model_dump_json()  # in no payload


def test_the_candidates_decision_is_in_the_log_line(tmp_path: Path) -> None:
    log = tmp_path / "d.jsonl"
    guard = Guard(WEATHER, policies(tmp_path, "name: candidate\nactions:\n  unknown_tool: block\n", f"log:\n  path: {log}\n"))
    guard.check(UNKNOWN, SAID)
    record = [json.loads(line) for line in log.read_text().splitlines()][-1]
    assert record["decision"]["action"] == "retry" and record["policy"]["name"] == "active"
    assert record["shadow"] == {"policy": {"name": "candidate", "sha256": guard.shadow.policy.sha256}, "action": "block",
                                "categories": ["unknown_tool"]}


def test_a_failing_candidate_is_recorded_and_never_fails_the_call(tmp_path: Path) -> None:
    guard = Guard(WEATHER, policies(tmp_path, "tools:\n  get_weather:\n    extra_checks: ['tests.replay.test_shadow:boom']\n"))
    decision = guard.check(CLEAN, SAID)
    assert decision.action.value == "allow"
    assert decision.shadow.action is None and "RuntimeError" in decision.shadow.error and not decision.shadow.disagrees


def test_the_node_enforces_the_active_policy_and_counts_the_candidates_disagreement(tmp_path: Path) -> None:
    ran: list[str] = []

    def get_weather(city: str) -> str:
        """The weather in a city."""
        ran.append(city)
        return "sunny"

    registry = CollectorRegistry()
    telemetry = Telemetry(registry=registry, known_tools=["get_weather"])
    # the candidate would ask about every call to get_weather; the active policy runs it
    policy = Policy.from_yaml(policies(tmp_path, "tools:\n  get_weather:\n    requires_approval: true\n"))
    model = scripted([ai_call("get_weather", {"city": "Paris"}, "c1"), AIMessage("Sunny in Paris.")])
    agent = build_guarded_agent(model, [get_weather], policy, checkpointer=InMemorySaver(), telemetry=telemetry)
    result = agent.invoke({"messages": SAID}, {"configurable": {"thread_id": "t1"}})
    assert ran == ["Paris"] and "__interrupt__" not in result
    assert value(registry, active_action="allow", shadow_action="ask_human", category="approval_required") == 1.0
