"""The ReflecTool-Bench rebuild on API-Bank dialogues: one clean and up to ten erroneous variants per
dialogue of the bundled self-made sample, the paper's Critique metrics, and a replay through the graph."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from guard_bench.agents import AgentSource
from guard_bench.cases import split_of
from guard_bench.datasets import api_bank, reflectool
from guard_bench.runner import CaseResult, run_cases
from guard.policy import Policy

SAMPLES = Path(__file__).parents[2] / "benchmarks" / "samples"
HOTEL = "BookHotel-level-1-1"
MISSING = "missing_information"
GOLD_HOTEL = {"hotel_name": "Seaview Inn", "check_in_time": "2023-07-01", "check_out_time": "2023-07-05",
              "room_count": 2, "adult_count": 3, "child_count": 1}


@pytest.fixture(scope="module")
def built() -> reflectool.Built:
    return reflectool.build(SAMPLES)


@pytest.fixture(scope="module")
def cases(built: reflectool.Built) -> dict:
    return {c.id: c for c in built.cases}


def users_words(case) -> list[str]:
    return [m["content"] for m in case.messages if m["role"] == "user"]


def test_each_dialogue_gives_a_clean_variant_and_the_errors_that_can_be_injected(built):
    assert reflectool.available(SAMPLES)
    assert Counter(c.subset for c in built.cases) == {"clean": 3, "user": 13, "assistant": 14}
    assert built.skipped == {
        "no recorded call without an exception": ["SearchEngine-level-1-1"],
        "recorded call does not fit its API description": ["TimedSwitch-level-1-1"],  # device_id vs name
        # the user never says "add" (AddReminder vs the distractor QueryReminder)
        "user incorrect_tool_selection: cannot be injected": ["AddReminder-GetUserToken-level-2-1/user/incorrect_tool_selection"],
        # Translate has no boolean, number or date to mistype
        "user parameter_mismatch: cannot be injected": ["Translate-level-1-1/user/parameter_mismatch"],
        "assistant parameter_mismatch: cannot be injected": ["Translate-level-1-1/assistant/parameter_mismatch"],
    }


def test_the_clean_variant_replays_the_last_recorded_call(cases):
    clean = cases[f"{HOTEL}/clean"]
    assert clean.expected.label == "ok" and clean.calls == clean.gold_calls
    assert clean.calls[0] == {"name": "BookHotel", "args": GOLD_HOTEL, "id": "call_0"}
    assert clean.tool_results == {"BookHotel": {"order_id": "H-1001"}}
    reminder = cases["AddReminder-GetUserToken-level-2-1/clean"]
    # the earlier token call and its recorded result stay in the conversation
    assert [m["role"] for m in reminder.messages] == ["system", "user", "assistant", "user", "assistant", "tool", "assistant"]
    assert reminder.messages[5]["content"] == '{"token": "q1w2e3r4"}'


def test_every_variant_offers_the_dialogues_apis_and_the_same_distractor(cases):
    hotel = [c for c in cases.values() if c.meta["dialogue"] == HOTEL]
    assert len(hotel) == 11 and all(c.gold_calls == cases[f"{HOTEL}/clean"].calls for c in hotel)
    assert {tuple(t["name"] for t in c.tools) for c in hotel} == {("BookHotel", "AddMeeting")}


def test_parameter_mismatch_from_either_side(cases):
    user = cases[f"{HOTEL}/user/parameter_mismatch"]
    assert users_words(user)[2] == "two rooms for 3 adults and 1 child."
    assert user.calls[0]["args"] == {**GOLD_HOTEL, "room_count": "two"}  # what the user said, passed on
    assert user.expected.label == "invalid_argument" and user.human.values == {"room_count": 2}
    assistant = cases[f"{HOTEL}/assistant/parameter_mismatch"]
    assert users_words(assistant) == users_words(cases[f"{HOTEL}/clean"])
    assert assistant.calls[0]["args"] == {**GOLD_HOTEL, "adult_count": "three"}


def test_missing_required_parameter_from_either_side(cases):
    user = cases[f"{HOTEL}/user/missing_required_parameter"]
    # the sentence with the three counts is gone, and so are they from the call
    assert user.expected.params == ["room_count", "adult_count", "child_count"]
    assert user.calls[0]["args"] == {k: GOLD_HOTEL[k] for k in ("hotel_name", "check_in_time", "check_out_time")}
    assert user.human.values == {"room_count": 2, "adult_count": 3, "child_count": 1}
    assistant = cases[f"{HOTEL}/assistant/missing_required_parameter"]
    assert assistant.expected.label == "missing_information" and "check_out_time" not in assistant.calls[0]["args"]


def test_incorrect_tool_selection_from_either_side(cases):
    user = cases[f"{HOTEL}/user/incorrect_tool_selection"]
    assert users_words(user)[0] == "I'd like to add a room at the Seaview Inn."  # "book" -> "add" (AddMeeting)
    for case in (user, cases[f"{HOTEL}/assistant/incorrect_tool_selection"]):
        assert case.calls[0]["name"] == "AddMeeting" and case.expected.label == "suspicious_tool_selection"
        assert case.human.tool == "BookHotel"


def test_ambiguous_reference_from_either_side(cases):
    user = cases[f"{HOTEL}/user/ambiguous_reference"]
    assert users_words(user)[1] == "Check in on July 1st and check out on that one."
    assert user.calls[0]["args"]["check_out_time"] == "that one" and user.human.values == {"check_out_time": "2023-07-05"}
    assert not api_bank.held_by(user.messages, "2023-07-05")
    assistant = cases[f"{HOTEL}/assistant/ambiguous_reference"]
    assert assistant.expected.label == "missing_information" and assistant.calls[0]["args"]["check_out_time"] == "it"


def test_over_and_under_specification(cases):
    over = cases[f"{HOTEL}/user/over_under_specification"]
    assert users_words(over)[2].endswith("Add a note: as discussed.")
    assert over.calls[0]["args"] == {**GOLD_HOTEL, "notes": "as discussed"} and over.expected.label == "invalid_argument"
    # Translate's languages are optional: its variants leave them out instead
    under = cases["Translate-level-1-1/user/over_under_specification"]
    assert under.expected.label == "missing_information" and under.calls[0]["args"] == {"src": "good morning"}
    assert users_words(under) == ['Please translate "good morning" for me.']
    assert cases["Translate-level-1-1/assistant/over_under_specification"].expected.params == ["src_lang"]


def test_injections_are_seeded_and_splits_fixed_by_the_family(built):
    again = reflectool.load(SAMPLES)
    assert [c.model_dump() for c in again] == [c.model_dump() for c in built.cases]
    assert all(c.split == split_of(c.family) for c in built.cases)


def result(subset: str, label: str, *, flagged: bool = False, action: str = "allow", predicted: list[str] | None = None,
           categories: list[str] | None = None, recovered: bool = False) -> CaseResult:
    return CaseResult(id=f"{subset}-{label}-{action}", suite="reflectool", subset=subset, split="test", expected={"label": label},
                      flagged=flagged, action=action, predicted=predicted or [], categories=categories or [], recovered=recovered)


def test_paper_metrics_by_hand():
    user = [
        result("user", "missing_information", flagged=True, action="ask_human", predicted=[MISSING], recovered=True),
        result("user", "invalid_argument", action="repair", categories=["type_violation"]),  # detected by its repair
        result("user", "ambiguous_reference"),  # let through
        result("user", "suspicious_tool_selection", flagged=True, action="retry", predicted=["invalid_argument"]),
    ]
    assistant = [
        result("assistant", "missing_information", flagged=True, action="ask_human", predicted=[MISSING], recovered=True),
        result("assistant", "invalid_argument"),
    ]
    clean = [result("clean", "ok"), result("clean", "ok", action="repair", categories=["type_violation"])]
    m = reflectool.paper_metrics(user + assistant + clean)
    # user: 3 of 4 detected; of those 2 classified (missing, type_violation -> invalid_argument), 1 recovered
    assert (m["detect_user"], m["class_user"], m["correct_user"]) == pytest.approx((3 / 4, 2 / 3, 1 / 3))
    # assistant: 1 of 2 detected, classified and recovered
    assert (m["detect_assistant"], m["class_assistant"], m["correct_assistant"]) == pytest.approx((1 / 2, 1.0, 1.0))
    # averages of the two sides, as the paper's "Avg" columns
    assert (m["detect_avg"], m["class_avg"], m["correct_avg"]) == pytest.approx((5 / 8, 5 / 6, 2 / 3))
    assert m["false_alarm_clean"] == pytest.approx(1 / 2)  # the repaired clean call changed a correct call


def test_replayed_through_the_guarded_graph(cases):
    ids = [f"{HOTEL}/clean", f"{HOTEL}/assistant/ambiguous_reference", f"{HOTEL}/assistant/over_under_specification"]
    results = {r.id: r for r in run_cases([cases[i] for i in ids], Policy(), AgentSource("reference"))}
    assert all(r.error is None and r.action is not None for r in results.values())
    clean = results[f"{HOTEL}/clean"]
    assert not reflectool.detected(clean) and clean.recovered
    assert all(reflectool.detected(results[i]) for i in ids[1:])
