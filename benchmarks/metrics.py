"""Metrics over case results: per-label confusion counts, false alarms, recovery and latency.

Every rate is a fraction in [0, 1]. A label's tp/fp/fn: a case expected to have label L is a true
positive when the guard's flagged labels include L, else a false negative; every flagged label that
is not the expected one is a false positive. The false-alarm rate is the share of clean (``ok``)
cases the guard stopped.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from benchmarks.labels import LABELS, OK


def ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def confusion(results: Sequence[Any], labels: Iterable[str] = LABELS) -> dict[str, dict[str, float]]:
    """Per label: n (cases expected to have it), tp, fp, fn, precision, recall, F1."""
    out: dict[str, dict[str, float]] = {}
    for label in labels:
        tp = sum(1 for r in results if r.expected["label"] == label and label in r.predicted)
        fn = sum(1 for r in results if r.expected["label"] == label and label not in r.predicted)
        fp = sum(1 for r in results if r.expected["label"] != label and label in r.predicted)
        n = tp + fn
        if n == 0 and fp == 0:
            continue
        p, rc = ratio(tp, tp + fp), ratio(tp, n)
        out[label] = {"n": n, "tp": tp, "fp": fp, "fn": fn, "precision": p, "recall": rc, "f1": ratio(2 * p * rc, p + rc)}
    return out


def false_alarm_rate(results: Sequence[Any]) -> float:
    clean = [r for r in results if r.expected["label"] == OK]
    return ratio(sum(1 for r in clean if r.flagged), len(clean))


def binary(results: Sequence[Any], positive: Any) -> dict[str, float]:
    """Accuracy and F1 of 'flagged' against a positive class chosen by ``positive(result) -> bool``."""
    tp = sum(1 for r in results if positive(r) and r.flagged)
    fp = sum(1 for r in results if not positive(r) and r.flagged)
    fn = sum(1 for r in results if positive(r) and not r.flagged)
    tn = len(results) - tp - fp - fn
    p, rc = ratio(tp, tp + fp), ratio(tp, tp + fn)
    return {"acc": ratio(tp + tn, len(results)), "f1": ratio(2 * p * rc, p + rc), "precision": p, "recall": rc}


def recovery(results: Sequence[Any]) -> dict[str, float]:
    with_gold = [r for r in results if r.recovered is not None]
    return {
        "recovered_rate": ratio(sum(1 for r in with_gold if r.recovered), len(with_gold)),
        "n_with_gold": len(with_gold),
        "questions_per_case": ratio(sum(r.questions for r in results), len(results)),
        "retries_per_case": ratio(sum(r.retries for r in results), len(results)),
    }


def latency(results: Sequence[Any]) -> dict[str, float]:
    return percentiles([r.latency_ms for r in results if r.latency_ms > 0])


def percentiles(values: Iterable[float]) -> dict[str, float]:
    """p50, p95 and p99 of some timings (0.0 each when there are none)."""
    ordered = sorted(values)
    if not ordered:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0}
    if len(ordered) == 1:
        return {"p50": ordered[0], "p95": ordered[0], "p99": ordered[0]}
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return {"p50": q[49], "p95": q[94], "p99": q[98]}


def summary(results: Sequence[Any]) -> dict[str, Any]:
    """The suite-independent part of ``results.json``."""
    return {
        "n_cases": len(results),
        "n_errors": sum(1 for r in results if r.error),
        "categories": confusion(results),
        "false_alarm_rate": false_alarm_rate(results),
        "recovery": recovery(results),
        "latency_ms": latency(results),
    }
