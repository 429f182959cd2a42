"""Tool-Reflection-Bench: the loader on the bundled self-made sample, the fault labels, and the
paper's Repair@1 mapped onto what the guard lets run."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from guard_bench.agents import AgentSource
from guard_bench.cases import split_of
from guard_bench.datasets import tool_reflection
from guard_bench.runner import CaseResult, run_cases
from guard.policy import Policy

SAMPLES = Path(__file__).parents[2] / "benchmarks" / "samples"


@pytest.fixture(scope="module")
def cases() -> dict[str, tool_reflection.Case]:
    return {c.id: c for c in tool_reflection.load(SAMPLES)}


def test_one_faulty_case_per_record_and_one_case_per_earlier_call(cases):
    assert Counter(c.subset for c in cases.values()) == {"faulty_call": 5, "earlier_call": 3}
    assert sorted(c.id for c in cases.values() if c.subset == "faulty_call") == [f"test_sample:{n}" for n in range(1, 6)]
    assert all(c.split == split_of(c.family) for c in cases.values())


def test_the_conversation_up_to_the_faulty_call(cases):
    case = cases["test_sample:1"]
    assert [t["name"] for t in case.tools] == ["find_hotel", "book_hotel"]  # the <tools> block, not "<tools></tools>"
    assert [m["role"] for m in case.messages] == ["user", "assistant", "tool"]
    call, answer = case.messages[1]["tool_calls"][0], case.messages[2]
    assert call == {"name": "find_hotel", "args": {"city": "Lisbon", "nights": 3}, "id": "call_2_0"}
    assert answer["tool_call_id"] == "call_2_0" and '"hotel_id": "H-204"' in answer["content"]
    assert case.calls == [{"name": "book_hotel", "args": {"hotel_id": None, "nights": 3}, "id": "call_4_0"}]
    assert case.gold_calls == [{"name": "book_hotel", "args": {"hotel_id": "H-204", "nights": 3}}]
    assert case.human.values == {} and case.human.text is None  # the human knows nothing
    assert case.meta["reflect"].startswith("The hotel_id was null")


def test_earlier_calls_are_clean_cases_with_their_own_prefix(cases):
    earlier = cases["test_sample:1/earlier/0"]
    assert earlier.expected.label == "ok" and earlier.messages == [cases["test_sample:1"].messages[0]]
    assert earlier.calls == [cases["test_sample:1"].messages[1]["tool_calls"][0]]
    assert earlier.gold_calls == [{"name": "find_hotel", "args": {"city": "Lisbon", "nights": 3}}]


def test_the_expected_label_follows_the_nature_of_the_fault(cases):
    def expected(n: int) -> dict:
        return cases[f"test_sample:{n}"].expected.model_dump(exclude_defaults=True)

    assert expected(1) == {"label": "missing_information", "tool": "book_hotel", "params": ["hotel_id"], "values": [None]}  # null
    assert expected(2)["label"] == "invalid_argument" and expected(2)["params"] == ["amount"]  # words for a number
    assert expected(3)["label"] == "missing_information" and expected(3)["values"] == ["N/A"]  # sentinel
    assert expected(4) == {"label": "repeated_call", "tool": "get_user"}  # the same call again
    assert expected(5) == {"label": "other", "tool": "summarise_file"}  # called before its prerequisite


def test_sentinels():
    assert all(tool_reflection.is_sentinel(v) for v in (-1, "", "N/A", "unknown", "<file_path>", "{user_id}", "???"))
    assert not any(tool_reflection.is_sentinel(v) for v in (0, 42, "Lisbon", True, None))


def test_the_full_download_wins_over_the_sample_folder(tmp_path: Path):
    assert not tool_reflection.available(tmp_path)
    (tmp_path / "tool-reflection-sample").mkdir()
    shutil.copy(SAMPLES / "tool-reflection" / "test_sample.jsonl", tmp_path / "tool-reflection-sample" / "first.jsonl")
    assert {c.id.split(":")[0] for c in tool_reflection.load(tmp_path)} == {"first"}
    (tmp_path / "tool-reflection").mkdir()
    shutil.copy(SAMPLES / "tool-reflection" / "test_sample.jsonl", tmp_path / "tool-reflection" / "full.jsonl")
    assert {c.id.split(":")[0] for c in tool_reflection.load(tmp_path)} == {"full"}


def result(subset: str, **kw) -> CaseResult:
    return CaseResult(id=kw.pop("id", subset), suite="tool-reflection", subset=subset, split="test",
                      expected={"label": "ok" if subset == "earlier_call" else "other"}, **kw)


def test_paper_metrics_by_hand():
    results = [
        result("faulty_call", action="retry", flagged=True, recovered=False),  # caught, nothing ran
        result("faulty_call", action="repair", recovered=True),  # repaired into the ground truth
        result("faulty_call", action="allow", recovered=False),  # missed: the faulty call ran
        result("faulty_call", action="ask_human", flagged=True, recovered=False),  # asked, the human did not know
        result("earlier_call", action="allow", recovered=True),
        result("earlier_call", action="ask_human", flagged=True, recovered=False),  # a false alarm
    ]
    # detect: 3 of 4 faulty calls stopped or repaired; repair@1: 1 of 4; false alarms: 1 of 2 earlier calls
    assert tool_reflection.paper_metrics(results) == {"detect": 0.75, "repair_at_1": 0.25, "false_alarm_earlier_calls": 0.5}


def test_sample_cases_through_the_guarded_graph(cases):
    chosen = [cases["test_sample:2"], cases["test_sample:1"], cases["test_sample:1/earlier/0"]]
    words, null, earlier = run_cases(chosen, Policy(), AgentSource("reference"))
    assert not any(r.error for r in (words, null, earlier))
    assert tool_reflection.intervened(words)  # "two hundred fifty" for a number never runs as proposed
    # the null hotel_id is completed from the earlier find_hotel result: the ground truth runs
    assert null.action == "repair" and null.recovered is True
    assert null.executed == [{"name": "book_hotel", "args": {"hotel_id": "H-204", "nights": 3}}]
    assert earlier.action is not None
