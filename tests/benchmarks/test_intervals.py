"""The 95% intervals of the benchmark figures and the one false-interrupt definition."""

from __future__ import annotations

import json

import pytest

from guard_bench.metrics import (Proportion, bootstrap, false_interrupts, figure_intervals, is_false_interrupt, ratio,
                                summary, wilson)
from guard_bench.runner import CaseResult


def result(label: str, flagged: bool, family: str = "", action: str | None = None, **kw) -> CaseResult:
    return CaseResult(id=kw.pop("id", f"{family}-{label}-{flagged}"), suite="s", subset="x", split="test", family=family,
                      expected={"label": label}, flagged=flagged,
                      action=action or ("ask_human" if flagged else "allow"), **kw)


def test_wilson_matches_the_textbook_values():
    lo, hi = wilson(8, 10)  # p = 0.8, n = 10: (0.490, 0.943)
    assert (round(lo, 3), round(hi, 3)) == (0.49, 0.943)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0 and wilson(0, 0) == (0.0, 1.0)
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(1 - hi) and (round(lo, 3), round(hi, 3)) == (0.404, 0.596)


def test_a_ratio_of_counts_keeps_them_and_anything_else_is_a_plain_float():
    share = ratio(3, 4)
    assert isinstance(share, Proportion) and (share.k, share.n) == (3, 4) and share == 0.75
    assert json.loads(json.dumps({"m": share})) == {"m": 0.75}
    assert not isinstance(ratio(1.5, 2), Proportion) and not isinstance((share + ratio(1, 4)) / 2, Proportion)
    assert ratio(0, 0) == 0.0 and not isinstance(ratio(5, 4), Proportion)  # a mean of counts, not a share


def test_figure_intervals_are_wilson_for_shares_and_a_family_bootstrap_for_the_rest():
    results = [result("ok", i % 3 == 0, family=f"f{i // 2}") for i in range(20)]

    def figures(rs):
        share = ratio(sum(r.flagged for r in rs), len(rs))
        return {"share": share, "mean_of_two": (share + share) / 2}

    out = figure_intervals(results, figures(results), figures)
    assert out["share"]["method"] == "wilson" and (out["share"]["k"], out["share"]["n"]) == (7, 20)
    assert out["share"]["ci95"] == list(wilson(7, 20))
    assert out["mean_of_two"]["method"] == "bootstrap"
    lo, hi = out["mean_of_two"]["ci95"]
    assert lo < 7 / 20 < hi


def test_the_bootstrap_resamples_families_not_cases():
    # family a: one case; family b: three. Drawing families, the share of a-cases is 0, 1/4 or 1.
    results = [result("ok", False, family="a", id="a0")] + [result("ok", False, family="b", id=f"b{i}") for i in range(3)]
    draws = []

    def share_of_a(rs):
        draws.append(sum(r.family == "a" for r in rs) / len(rs))
        return {"a": draws[-1]}

    (lo, hi), = bootstrap(results, share_of_a, ["a"], resamples=200).values()
    assert set(draws) <= {0.0, 0.25, 1.0} and (lo, hi) == (0.0, 1.0)


def test_a_false_interrupt_is_retry_ask_or_block_on_a_clean_case():
    results = [result("ok", True, "f1", action="retry"), result("ok", True, "f1", action="block"),
               result("ok", False, "f2", action="repair"), result("ok", False, "f2"), result("missing_information", True, "f3", predicted=["missing_information"])]
    assert [is_false_interrupt(r) for r in results] == [True, True, False, False, False]
    fi = false_interrupts(results)
    assert (fi["value"], fi["k"], fi["n"]) == (0.5, 2, 4) and fi["ci95"] == list(wilson(2, 4))
    s = summary(results)
    assert s["false_interrupt_rate"] == fi and s["n_families"] == 3
    assert s["categories"]["missing_information"]["ci95"]["recall"] == list(wilson(1, 1))
    assert s["categories"]["missing_information"]["ci95"]["f1"] == [1.0, 1.0]  # every draw finds it
    assert s["recovery"]["recovered_ci95"] == [0.0, 1.0]  # no case with a gold call: no information


def test_the_f1_interval_resamples_families():
    # two families: one all right (tp 2), one all wrong (fn 2); drawn by family F1 is 1, 2/3 or 0
    results = [result("missing_information", True, "good", predicted=["missing_information"], id=f"g{i}") for i in range(2)]
    results += [result("missing_information", False, "bad", id=f"b{i}") for i in range(2)]
    lo, hi = summary(results)["categories"]["missing_information"]["ci95"]["f1"]
    assert (lo, hi) == (0.0, 1.0)


def test_a_share_of_no_cases_is_said_to_have_none():
    from guard_bench.report import fmt_ci

    assert fmt_ci(0.0, {"ci95": [0.0, 1.0], "method": "wilson", "k": 0, "n": 0}) == "— (no cases)"
    assert fmt_ci(0.5, {"ci95": [0.2, 0.8], "method": "wilson", "k": 2, "n": 4}) == "0.500 [0.20, 0.80]"
    assert fmt_ci(0.5, None) == "0.500"
