"""The ACEBench loader on the bundled self-made sample, and the paper's scoring of special cases."""

from __future__ import annotations

from pathlib import Path

from guard_bench.cases import split_of
from guard_bench.datasets import acebench
from guard_bench.runner import CaseResult

SAMPLES = Path(__file__).parents[2] / "benchmarks" / "samples"


def test_loader_reads_every_subset_with_its_truth():
    cases = {c.id: c for c in acebench.load(SAMPLES)}
    assert acebench.available(SAMPLES)
    incomplete = cases["special_incomplete_1"]
    assert incomplete.calls == [] and incomplete.uses_preflight
    assert incomplete.expected.label == "missing_information" and incomplete.expected.tool == "Loan_calculatePayment"
    assert incomplete.expected.params == ["rate"]
    assert cases["special_error_param_0"].expected.values == ["jane.doe@mail"]
    assert cases["special_irrelevant_0"].expected.label == "no_suitable_tool"
    normal = cases["normal_single_turn_single_function_0"]
    assert normal.expected.label == "ok" and normal.calls == normal.gold_calls
    assert normal.messages[0] == {"role": "system", "content": "The current time is April 30, 2024, Tuesday."}
    adjust = cases["normal_multi_turn_user_adjust_0_0"]
    assert [m["role"] for m in adjust.messages] == ["user", "assistant", "user"]
    assert all(c.split == split_of(c.family) for c in cases.values())


def test_a_second_call_of_the_same_tool_loses_its_suffix():
    (case,) = [c for c in acebench.load(SAMPLES) if c.id == "normal_single_turn_parallel_function_0"]
    assert [c["name"] for c in case.calls] == ["Weather_getForecast", "Weather_getForecast"]
    assert [c["id"] for c in case.calls] == ["call_0", "call_1"]


def special(subset: str, expected: dict, **kw) -> CaseResult:
    return CaseResult(id=subset, suite="acebench", subset=subset, split="test", expected=expected, **kw)


def test_render_and_score_like_the_paper():
    missing = special("special_incomplete", {"label": "missing_information", "tool": "Loan_calculatePayment", "params": ["rate"]},
                      flagged=True, predicted=["missing_information"], missing=["rate"], tool="Loan_calculatePayment")
    assert acebench.render(missing) == "Missing necessary parameters (rate) for the api (Loan_calculatePayment)"
    assert acebench.correct(missing)
    wrong_tool = missing.model_copy(update={"tool": "Weather_getForecast"})
    assert not acebench.correct(wrong_tool)
    bad_value = special("special_error_param", {"label": "invalid_argument", "params": ["email"], "values": ["jane.doe@mail"]},
                        flagged=True, predicted=["invalid_argument"],
                        findings=[{"category": "pattern_violation", "path": "$.email", "value": "jane.doe@mail"}])
    assert acebench.render(bad_value) == "There is incorrect value (jane.doe@mail) for the parameters (email) in the conversation history."
    assert acebench.correct(bad_value)
    irrelevant = special("special_irrelevant", {"label": "no_suitable_tool"}, flagged=True, predicted=["no_suitable_tool"])
    silent = special("special_irrelevant", {"label": "no_suitable_tool"})
    normal_ok = special("normal", {"label": "ok"})
    normal_alarm = special("normal", {"label": "ok"}, flagged=True, predicted=["missing_information"])
    m = acebench.paper_metrics([missing, wrong_tool, bad_value, irrelevant, silent, normal_ok, normal_alarm])
    # incomplete 1 of 2, error_param 1 of 1, irrelevant 1 of 2; special 3 of 5; normal alarms 1 of 2
    assert m == {"special_incomplete_acc": 0.5, "special_error_param_acc": 1.0, "special_irrelevant_acc": 0.5,
                 "special_acc": 0.6, "normal_false_alarm_rate": 0.5}
