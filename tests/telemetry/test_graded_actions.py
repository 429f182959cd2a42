"""Actions graded by a finding's confidence, and the ``warn`` action: the call runs, the finding is
recorded on the decision, in the ToolMessage record, as a span event and in guard_warnings_total."""

from __future__ import annotations

import pytest
from langchain_core.tools import tool

from guard_graphs import build_guarded_agent
from guard import Guard
from guard.policy import Policy, PolicyError, load_policy
from guard.taxonomy import Action, Category
from tests.support import FAST, ai_call, record, scripted, tool_messages

GRADED = {
    **FAST,
    "actions": {"ungrounded_value": {"ask_human": 0.9, "warn": 0.5}},
    "tools": {"get_weather": {"extra_checks": ["tests.extra_check:unsure_city"]}},
}
SAID = [{"role": "user", "content": "What's the weather in Atlantis, Avalon, Eldorado or Oslo?"}]


def weather_tool(log):
    @tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        log.append(city)
        return "sunny"

    return get_weather


@pytest.mark.parametrize(
    ("city", "action", "warned"),
    [("Atlantis", Action.ASK_HUMAN, False), ("Avalon", Action.WARN, True), ("Eldorado", Action.ALLOW, False), ("Oslo", Action.ALLOW, False)],
)
def test_the_confidence_picks_the_most_severe_action_whose_floor_it_reaches(city, action, warned):
    decision = Guard([weather_tool([])], GRADED).check({"name": "get_weather", "args": {"city": city}, "id": "c1"}, SAID)
    assert decision.action is action
    assert bool(decision.warnings) is warned
    assert decision.runs is (action is not Action.ASK_HUMAN)


def test_a_plain_action_ignores_the_confidence():
    policy = {**GRADED, "actions": {"ungrounded_value": "ask_human"}}
    decision = Guard([weather_tool([])], policy).check({"name": "get_weather", "args": {"city": "Eldorado"}, "id": "c1"}, SAID)
    assert decision.action is Action.ASK_HUMAN


def test_a_per_tool_override_may_be_graded_too():
    policy = {**GRADED, "tools": {"get_weather": {"extra_checks": ["tests.extra_check:unsure_city"],
                                                  "actions": {"ungrounded_value": {"block": 0.5}}}}}
    decision = Guard([weather_tool([])], policy).check({"name": "get_weather", "args": {"city": "Avalon"}, "id": "c1"}, SAID)
    assert decision.action is Action.BLOCK


def test_graded_actions_are_read_from_yaml_and_checked():
    policy = load_policy({"actions": {"ungrounded_value": {"ask_human": 0.9, "warn": 0.5}}})
    assert policy.action_for(Category.UNGROUNDED_VALUE, confidence=0.7) is Action.WARN
    assert policy.action_for(Category.UNGROUNDED_VALUE, confidence=0.2) is Action.ALLOW
    assert policy.action_for(Category.UNGROUNDED_VALUE) is Action.ASK_HUMAN
    with pytest.raises(PolicyError, match=r"actions\.ungrounded_value\.ask_human: Input should be less than or equal to 1"):
        Policy.from_yaml_text("actions:\n  ungrounded_value: {ask_human: 1.5}\n")
    with pytest.raises(PolicyError, match=r"actions\.ungrounded_value\.shout: Input should be 'allow'"):
        Policy.from_yaml_text("actions:\n  ungrounded_value: {shout: 0.5}\n")
    yaml_policy = Policy.from_yaml_text("actions:\n  ungrounded_value: {ask_human: 0.9, warn: 0.5}\n")
    assert yaml_policy.action_for(Category.UNGROUNDED_VALUE, confidence=0.5) is Action.WARN


def test_a_warned_call_runs_and_its_record_span_and_metric_say_so(telemetry, spans, registry):
    ran: list[str] = []
    agent = build_guarded_agent(scripted([ai_call("get_weather", {"city": "Avalon"})]), [weather_tool(ran)], GRADED,
                                telemetry=telemetry)
    result = agent.invoke({"messages": SAID})
    assert ran == ["Avalon"]
    rec = record(tool_messages(result)[0])
    assert rec["action"] == "warn"
    assert rec["warnings"] == [{"category": "ungrounded_value", "path": "$.city", "message": "'Avalon' may not exist", "confidence": 0.6}]
    events = [e for s in spans.get_finished_spans() for e in s.events if e.name == "guard.warning"]
    assert [e.attributes["guard.category"] for e in events] == ["ungrounded_value"]
    assert registry.get_sample_value("guard_warnings_total", {"tool": "get_weather", "category": "ungrounded_value"}) == 1.0
