"""The BFCL loader on the bundled self-made sample: gold calls from acceptable values, one preflight
case per turn where the model must not call, and BFCL's behavioural scoring."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from guard_bench.agents import AgentSource
from guard_bench.cases import split_of
from guard_bench.datasets import bfcl
from guard_bench.runner import CaseResult, run_cases
from guard.policy import Policy

SAMPLES = Path(__file__).parents[2] / "benchmarks" / "samples"


@pytest.fixture
def cases() -> dict:
    return {c.id: c for c in bfcl.load(SAMPLES)}


def test_every_category_loads_with_its_expected_label(cases):
    assert bfcl.available(SAMPLES)
    assert Counter(c.subset for c in cases.values()) == {
        "irrelevance": 2, "live_irrelevance": 2, "simple_python": 2, "live_simple": 2,
        "multi_turn_miss_param": 1, "multi_turn_miss_func": 1}
    assert {c.subset: c.expected.label for c in cases.values()} == {
        "irrelevance": "no_suitable_tool", "live_irrelevance": "no_suitable_tool", "simple_python": "ok",
        "live_simple": "ok", "multi_turn_miss_param": "missing_information", "multi_turn_miss_func": "no_suitable_tool"}
    assert {c.subset for c in cases.values() if c.uses_preflight} == {
        "irrelevance", "live_irrelevance", "multi_turn_miss_param", "multi_turn_miss_func"}
    poem = cases["live_irrelevance_0-0-0"]
    assert [m["role"] for m in poem.messages] == ["system", "user"] and poem.tools[0]["name"] == "weather.get_forecast"


def test_the_reference_agent_replays_the_first_acceptable_value_and_leaves_out_optional_ones(cases):
    loan = cases["simple_python_0"]  # currency: ["", "USD"] -> left out
    assert loan.calls == loan.gold_calls == [
        {"name": "calculate_loan_payment", "args": {"principal": 20000, "annual_rate": 0.05, "years": 5}, "id": "call_0"}]
    table = cases["simple_python_1"]  # a dict parameter holds acceptable values of its own
    assert table.calls[0]["args"] == {"restaurant": "Luna", "party": {"adults": 2}, "time": "19:00"}
    assert cases["live_simple_0-0-0"].calls[0]["args"] == {"temperature": 21, "unit": "celsius"}  # "" second: kept
    assert bfcl.first_acceptable([[{"a": [1, 2], "b": [""]}, {"a": [3]}]]) == [{"a": 1}, {"a": 3}]


def test_a_miss_param_turn_is_the_conversation_up_to_it_with_earlier_calls_replayed(cases):
    case = cases["multi_turn_miss_param_0/turn_1"]
    assert case.uses_preflight and case.meta == {"record": "multi_turn_miss_param_0", "turn": 1,
                                                  "answer_turn": "The file is todo.txt, and I want the last 3 lines."}
    assert [m["role"] for m in case.messages] == ["user", "assistant", "tool", "tool", "user"]
    assert case.messages[1]["tool_calls"] == [{"name": "cd", "args": {"folder": "notes"}, "id": "turn0_call0"},
                                              {"name": "ls", "args": {}, "id": "turn0_call1"}]
    assert json.loads(case.messages[2]["content"]) == {"status": "ok", "tool": "cd"}
    assert [t["name"] for t in case.tools] == ["cd", "ls", "tail", "touch"]  # rm is excluded for the record
    # the next user turn says what was missing; values said before it are not counted
    assert case.expected.model_dump() == {"label": "missing_information", "params": ["file_name", "lines"], "tool": "tail",
                                          "values": ["todo.txt", 3]}
    assert case.human.values == {"file_name": "todo.txt", "lines": 3}
    assert case.human.text == "The file is todo.txt, and I want the last 3 lines."


def test_a_miss_func_turn_lacks_the_function_held_back_until_the_next_turn(cases):
    case = cases["multi_turn_miss_func_0/turn_1"]
    assert [t["name"] for t in case.tools] == ["cd", "ls", "tail", "touch", "rm", "create_ticket"]
    assert case.expected.label == "no_suitable_tool" and case.expected.tool == "close_ticket"
    assert case.human.tool == "close_ticket" and case.meta["missed_function"] == ["close_ticket"]
    assert [m["role"] for m in case.messages] == ["user", "assistant", "tool", "user"]


def test_gold_calls_written_as_python_are_parsed_with_positional_names():
    params = {"mv": ["source", "destination"]}
    assert bfcl.parse_call("mv('a.txt', destination='b')", params) == {"name": "mv", "args": {"source": "a.txt", "destination": "b"}}
    assert bfcl.parse_call("edit(updates={'priority': 2})", {}) == {"name": "edit", "args": {"updates": {"priority": 2}}}
    with pytest.raises(ValueError):
        bfcl.parse_call("mv('a', 'b', 'c')", params)
    with pytest.raises(ValueError):
        bfcl.parse_call("'just text'", params)


def test_without_function_docs_multi_turn_records_are_skipped_and_bfcl_sample_is_read(tmp_path):
    shutil.copytree(SAMPLES / "bfcl", tmp_path / "bfcl-sample", ignore=shutil.ignore_patterns("multi_turn_func_doc"))
    assert bfcl.available(tmp_path)
    subsets = Counter(c.subset for c in bfcl.load(tmp_path))
    assert subsets["simple_python"] == 2 and subsets["multi_turn_miss_param"] == 0 and subsets["multi_turn_miss_func"] == 0


def test_the_split_is_a_hash_of_the_family(cases):
    assert all(c.split == split_of(c.family) for c in cases.values())
    turns = [c for c in cases.values() if c.meta.get("record") == "multi_turn_miss_param_0"]
    assert len({c.family for c in turns}) == 1  # the turns of one record are one family


def result(subset: str, flagged: bool) -> CaseResult:
    return CaseResult(id=f"{subset}_x", suite="bfcl", subset=subset, split="test", expected={"label": "x"}, flagged=flagged)


def test_paper_metrics_by_hand():
    results = [
        result("irrelevance", True), result("irrelevance", True), result("irrelevance", False),
        result("live_irrelevance", False),
        result("simple_python", True), result("simple_python", False), result("live_simple", False), result("live_simple", False),
        result("multi_turn_miss_param", True), result("multi_turn_miss_param", False),
        result("multi_turn_miss_func", True),
    ]
    # irrelevance 2 of 3 stopped; live_irrelevance 0 of 1; relevant (simple + live_simple) 1 of 4 stopped;
    # miss_param 1 of 2; miss_func 1 of 1
    assert bfcl.paper_metrics(results) == pytest.approx({
        "irrelevance_acc": 2 / 3, "live_irrelevance_acc": 0.0, "relevant_false_alarm_rate": 0.25,
        "miss_param_acc": 0.5, "miss_func_acc": 1.0})
    assert bfcl.paper_metrics([result("irrelevance", True)]) == {"irrelevance_acc": 1.0}  # no cases, no metric
    assert bfcl.PAPER == []


def test_gold_calls_run_end_to_end_through_the_guarded_graph(cases):
    picked = [c for c in cases.values() if c.calls]
    results = run_cases(picked, Policy(), AgentSource("reference"))
    assert [r.error for r in results] == [None] * len(picked)
    assert all(r.action is not None for r in results)
    allowed = [r for r in results if not r.flagged]
    assert allowed, "at least one gold call should pass the guard"
    for r in allowed:  # what ran is the gold call, as replayed
        assert r.recovered and r.executed == [{"name": g["name"], "args": g["args"]} for g in r.gold_calls]


def test_no_call_turns_run_through_the_preflight_of_the_guarded_graph(cases):
    picked = [cases["irrelevance_0"], cases["multi_turn_miss_param_0/turn_1"], cases["multi_turn_miss_func_0/turn_1"]]
    results = run_cases(picked, Policy(), AgentSource("reference"))
    assert [r.error for r in results] == [None, None, None]
    assert all(r.action is not None for r in results)
