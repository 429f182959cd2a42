"""The ICT rebuild on API-Bank level-1: originals, API replacements and utterance removals built from
the bundled self-made sample, the paper's accuracy/F1 per manipulation, and a replay through the graph."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from guard_bench.agents import AgentSource
from guard_bench.cases import split_of
from guard_bench.datasets import api_bank, api_bank_ict
from guard_bench.runner import CaseResult, run_cases
from guard.policy import Policy

SAMPLES = Path(__file__).parents[2] / "benchmarks" / "samples"
REMINDER = "AddReminder-GetUserToken-level-2-1"


@pytest.fixture(scope="module")
def built() -> api_bank_ict.Built:
    return api_bank_ict.build(SAMPLES)


@pytest.fixture(scope="module")
def cases(built: api_bank_ict.Built) -> dict:
    return {c.id: c for c in built.cases}


def test_every_usable_record_gives_an_original_a_replacement_and_when_possible_a_removal(built):
    assert api_bank_ict.available(SAMPLES)
    assert Counter(c.subset for c in built.cases) == {"original": 7, "replacement": 7, "removal": 4}
    assert built.skipped == {
        # the user said these values only in their one turn, or not verbatim ("two" rooms)
        "no removable value (said by the user alone, not in their only turn)":
            ["BookHotel-level-1-1/0", "Wiki-level-1-1/0", "SearchEngine-level-1-1/0"],
        # the request names device_id, the description name
        "expected request does not fit its API description": ["TimedSwitch-level-1-1/0"],
    }
    assert api_bank_ict.load(SAMPLES) == built.cases


def test_an_original_replays_its_expected_request_cast_to_the_described_types(cases):
    hotel = cases["BookHotel-level-1-1/0"]
    assert hotel.expected.label == "ok" and hotel.calls == hotel.gold_calls
    assert hotel.calls[0]["args"] == {"hotel_name": "Seaview Inn", "check_in_time": "2023-07-01", "check_out_time": "2023-07-05",
                                      "room_count": 2, "adult_count": 3, "child_count": 1}
    assert hotel.messages[0] == {"role": "system", "content": "The current year is 2023."}
    assert cases["AddMeeting-level-1-1/0"].calls[0]["args"]["attendees"] == ["Ann", "Bo"]
    second = cases[f"{REMINDER}/1"]
    assert [m["role"] for m in second.messages] == ["system", "user", "assistant", "user", "assistant", "tool", "assistant"]


def test_a_replacement_swaps_the_needed_api_for_the_most_similar_unlisted_one(cases):
    original, replaced = cases["AddMeeting-level-1-1/0"], cases["AddMeeting-level-1-1/0/replace"]
    assert [t["name"] for t in original.tools] == ["AddMeeting", "GetUserToken"]
    assert [t["name"] for t in replaced.tools] == ["DeleteMeeting", "GetUserToken"]
    assert replaced.calls == original.calls and replaced.gold_calls == []
    assert replaced.expected.label == "no_suitable_tool" and replaced.expected.tool == "AddMeeting"
    assert replaced.meta["original"] == original.id
    # SearchEngine is Wiki's nearest neighbour, but the same input under another name may serve
    assert cases["Wiki-level-1-1/0/replace"].meta["replaced_by"] != "SearchEngine"


def test_a_removal_takes_the_users_words_out_and_the_human_knows_them(cases):
    removed = cases[f"{REMINDER}/1/remove"]
    assert removed.expected.label == "missing_information" and removed.expected.tool == "AddReminder"
    # one sentence held the content and the date: both are gone
    assert removed.human.values == {"content": "water the plants", "time": "2023-05-04 09:00:00"}
    assert removed.expected.params == ["content", "time"]
    assert [m["content"] for m in removed.messages if m["role"] == "user"] == ["My username is lena and my password is fern42."]
    assert not api_bank.held_by(removed.messages, "water the plants")
    assert removed.calls == cases[f"{REMINDER}/1"].calls == removed.gold_calls
    assert removed.meta["original"] == f"{REMINDER}/1"


def test_splits_are_fixed_by_the_family(built):
    assert all(c.split == split_of(c.family) for c in built.cases)
    assert [(c.id, c.split) for c in api_bank_ict.load(SAMPLES)] == [(c.id, c.split) for c in built.cases]


def result(subset: str, label: str, flagged: bool) -> CaseResult:
    return CaseResult(id=f"{subset}-{label}-{flagged}", suite="api-bank-ict", subset=subset, split="test",
                      expected={"label": label}, flagged=flagged)


def test_paper_metrics_by_hand():
    originals = [result("original", "ok", False), result("original", "ok", True), result("original", "ok", False)]
    replaced = [result("replacement", "no_suitable_tool", True), result("replacement", "no_suitable_tool", False)]
    removed = [result("removal", "missing_information", True)]
    m = api_bank_ict.paper_metrics(originals + replaced + removed)
    # replacement set = 3 originals + 2 replacements: tp 1, fn 1, fp 1, tn 2 -> acc 3/5, P = R = 1/2, F1 1/2
    assert m["replacement_acc"] == pytest.approx(0.6) and m["replacement_f1"] == pytest.approx(0.5)
    # removal set = 3 originals + 1 removal: tp 1, fp 1, tn 2 -> acc 3/4, P 1/2, R 1, F1 2/3
    assert m["removal_acc"] == pytest.approx(0.75) and m["removal_f1"] == pytest.approx(2 / 3)
    assert m["original_false_alarm_rate"] == pytest.approx(1 / 3)  # one of three originals stopped


def test_replayed_through_the_guarded_graph(cases):
    ids = [f"{REMINDER}/0", f"{REMINDER}/0/replace", "BookHotel-level-1-1/0"]
    results = {r.id: r for r in run_cases([cases[i] for i in ids], Policy(), AgentSource("reference"))}
    assert all(r.error is None and r.action is not None for r in results.values())
    original = results[f"{REMINDER}/0"]
    assert original.executed == [{k: v for k, v in c.items() if k != "id"} for c in cases[f"{REMINDER}/0"].gold_calls]
    replaced = results[f"{REMINDER}/0/replace"]
    assert replaced.flagged and replaced.executed == []  # the request's API is no longer registered
