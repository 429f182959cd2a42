"""Metrics over case results: per-label confusion counts, false interrupts, recovery, latency, and
the 95% interval of every figure.

Every rate is a fraction in [0, 1]. A label's tp/fp/fn: a case expected to have label L is a true
positive when the guard's flagged labels include L, else a false negative; every flagged label that
is not the expected one is a false positive.

**False interrupt** (one definition for every suite): an action that changes what happens (retry,
ask_human, block) on a clean case, one whose expected label is ``ok`` (the gold call, the query that
needs no intervention), in the preflight or at call time. A repair is no interrupt: the call runs.
``false_interrupt_rate`` is their share of the clean cases, with its counts and interval; the
suites' own figures (``normal_false_alarm_rate``, ``over_reflection_rate``, ``proceed_original``,
which may also count repairs) stay in ``paper_metrics``.

**Intervals**: a share of counts (``ratio`` of two integers, a ``Proportion``) gets the Wilson score
interval; any other figure (an F1, a mean of scores, an average of two shares) a percentile
bootstrap that resamples case *families* (``Case.family``: a source and its variants), since
variants of one source are not independent draws.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from guard_bench.labels import LABELS, OK

#: The two-sided 95% normal quantile.
Z95 = 1.959963984540054
#: Bootstrap resamples for the figures that are not shares of counts.
BOOTSTRAP = 400
#: Actions that change what happens: on a clean case, a false interrupt.
INTERRUPTS = frozenset({"retry", "ask_human", "block"})


class Proportion(float):
    """``k`` of ``n`` as a float that keeps its counts (arithmetic on it gives a plain float)."""

    k: int
    n: int

    def __new__(cls, k: int, n: int) -> Proportion:
        value = super().__new__(cls, k / n if n else 0.0)
        value.k, value.n = k, n
        return value

    def __reduce__(self) -> tuple[Any, ...]:
        return (Proportion, (self.k, self.n))


def ratio(num: float, den: float) -> float:
    """``num / den`` (0.0 when ``den`` is 0). Two counts, ``0 <= num <= den``, give a ``Proportion``,
    so the reports can put a Wilson interval on the figure."""
    if isinstance(num, int) and isinstance(den, int) and 0 <= num <= den:
        return Proportion(int(num), int(den))
    return num / den if den else 0.0


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``k`` successes in ``n`` trials ((0, 1) when n is 0)."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (0.0 if k == 0 else max(0.0, centre - half)), (1.0 if k == n else min(1.0, centre + half))


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def bootstrap(results: Sequence[Any], statistic: Callable[[list[Any]], Mapping[str, float]], keys: Iterable[str],
              resamples: int = BOOTSTRAP, seed: int = 0) -> dict[str, tuple[float, float]]:
    """Percentile 95% intervals of ``statistic(results)[key]`` for each key, resampling the results'
    families (``family``, else ``id``) with replacement; a key a resample lacks is left out of it."""
    keys = list(keys)
    by_family: dict[str, list[Any]] = defaultdict(list)
    for r in results:
        by_family[getattr(r, "family", "") or r.id].append(r)
    groups = list(by_family.values())
    if not groups or not keys:
        return {}
    rng = random.Random(seed)
    draws: dict[str, list[float]] = defaultdict(list)
    for _ in range(resamples):
        sample = [r for _ in groups for r in rng.choice(groups)]
        figures = statistic(sample)
        for k in keys:
            if k in figures:
                draws[k].append(float(figures[k]))
    return {k: (_quantile(v, 0.025), _quantile(v, 0.975)) for k, v in draws.items() if v}


def interval(value: float, bootstrapped: Mapping[str, tuple[float, float]] | None = None, key: str = "") -> dict[str, Any]:
    """A figure's interval entry: ``{"ci95": [lo, hi], "method": "wilson", "k", "n"}`` for a
    ``Proportion``, else the bootstrap interval of ``key`` (``method: "bootstrap"``), else none."""
    if isinstance(value, Proportion):
        lo, hi = wilson(value.k, value.n)
        return {"ci95": [lo, hi], "method": "wilson", "k": value.k, "n": value.n}
    if bootstrapped and key in bootstrapped:
        return {"ci95": list(bootstrapped[key]), "method": "bootstrap"}
    return {"ci95": None, "method": None}


def figure_intervals(results: Sequence[Any], figures: Mapping[str, float],
                     statistic: Callable[[list[Any]], Mapping[str, float]]) -> dict[str, dict[str, Any]]:
    """The interval of every figure ``statistic(results)`` gave (``figures``): Wilson for shares of
    counts, a family bootstrap of ``statistic`` for the rest."""
    other = [k for k, v in figures.items() if not isinstance(v, Proportion)]
    boot = bootstrap(results, statistic, other) if other else {}
    return {k: interval(v, boot, k) for k, v in figures.items()}


def is_false_interrupt(result: Any) -> bool:
    """A clean case (expected ``ok``) on which the guard's first decision retried, asked or blocked:
    the runner's ``flagged`` (the action does not run the call: one of ``INTERRUPTS``)."""
    return result.expected["label"] == OK and bool(result.flagged)


def false_interrupts(results: Sequence[Any]) -> dict[str, Any]:
    """``{"value", "k", "n", "ci95"}``: the false-interrupt rate over the clean cases, with its
    Wilson interval."""
    clean = [r for r in results if r.expected["label"] == OK]
    k = sum(1 for r in clean if is_false_interrupt(r))
    return {"value": ratio(k, len(clean)), "k": k, "n": len(clean), "ci95": list(wilson(k, len(clean)))}


def confusion(results: Sequence[Any], labels: Iterable[str] = LABELS) -> dict[str, dict[str, float]]:
    """Per label: n (cases expected to have it), tp, fp, fn, precision, recall, F1 (no intervals:
    ``confusion_intervals`` adds them)."""
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
    """The false-interrupt rate alone (what calibration weighs against F1)."""
    return false_interrupts(results)["value"]


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


def _f1_intervals(results: Sequence[Any], labels: Sequence[str], resamples: int = BOOTSTRAP,
                  seed: int = 0) -> dict[str, tuple[float, float]]:
    """The family-bootstrap interval of each label's F1: per family its tp/fp/fn counts, summed over
    families drawn with replacement (the same resampling as ``bootstrap``, vectorised); a draw
    holding no case of the label and no prediction of it has no F1 and is left out."""
    import numpy as np

    families: dict[str, int] = {}
    for r in results:
        families.setdefault(getattr(r, "family", "") or r.id, len(families))
    if not families or not labels:
        return {}
    counts = np.zeros((len(families), len(labels), 3))
    for r in results:
        f, want = families[getattr(r, "family", "") or r.id], r.expected["label"]
        for j, label in enumerate(labels):
            hit = label in r.predicted
            counts[f, j] += (want == label and hit, want != label and hit, want == label and not hit)
    draws = np.random.default_rng(seed).integers(0, len(families), size=(resamples, len(families)))
    tp, fp, fn = np.moveaxis(counts[draws].sum(axis=1), -1, 0)  # each resamples x labels
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = 2 * tp / (2 * tp + fp + fn)  # NaN in a draw without the label at all: left out
    return {label: (float(np.nanquantile(f1[:, j], 0.025)), float(np.nanquantile(f1[:, j], 0.975)))
            for j, label in enumerate(labels) if not np.isnan(f1[:, j]).all()}


def confusion_intervals(results: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """Per label: the confusion counts and figures, with ``ci95`` of precision and recall (Wilson)
    and of F1 (family bootstrap)."""
    conf = confusion(results)
    boot = _f1_intervals(results, list(conf))
    out: dict[str, dict[str, Any]] = {}
    for label, c in conf.items():
        tp, fp, n = int(c["tp"]), int(c["fp"]), int(c["n"])
        out[label] = {**c, "ci95": {"precision": list(wilson(tp, tp + fp)), "recall": list(wilson(tp, n)),
                                    "f1": list(boot[label]) if label in boot else None}}
    return out


def summary(results: Sequence[Any]) -> dict[str, Any]:
    """The suite-independent part of ``results.json``."""
    return {
        "n_cases": len(results),
        "n_families": len({getattr(r, "family", "") or r.id for r in results}),
        "n_errors": sum(1 for r in results if r.error),
        "categories": confusion_intervals(results),
        "false_interrupt_rate": false_interrupts(results),
        "recovery": _with_interval(recovery(results)),
        "latency_ms": latency(results),
    } | ({"semantic": semantic_costs(results)} if any(getattr(r, "semantic", None) for r in results) else {})


def semantic_costs(results: Sequence[Any]) -> dict[str, Any]:
    """What the embedding checks cost per decision (the first decision of each case, as
    ``latency_ms``): model calls (``passes``), texts and tokens through the model, the share of
    decisions that ran no model at all, and the cache hit rate (texts, messages' spans and tool
    registries found already embedded). ``setup`` is what building the guards cost (the tools of
    each registry, embedded once, before any decision). Counts, so they do not depend on the load."""
    costs = [r.semantic for r in results if getattr(r, "semantic", None)]
    lookups = sum(c.get("lookups", 0) for c in costs)
    hits = sum(c.get("hits", 0) for c in costs)
    setups = [c["setup"] for c in costs if isinstance(c.get("setup"), dict)]

    def spread(key: str) -> dict[str, float]:
        values = [float(c.get(key, 0)) for c in costs]
        return {"mean": round(statistics.fmean(values), 3), **{k: round(v, 3) for k, v in percentiles(values).items()},
                "max": max(values)}

    return {
        "decisions": len(costs),
        "backend": next((c["backend"] for c in costs if c.get("backend")), None),  # how the model ran: onnx, onnx-int8, torch
        "threads": next((c["threads"] for c in costs if c.get("threads")), None),  # onnxruntime's threads for the model
        "passes_per_decision": spread("passes"),
        "texts_per_decision": spread("texts"),
        "tokens_per_decision": spread("tokens"),
        "decisions_without_model": round(sum(1 for c in costs if not c.get("passes")) / len(costs), 4),
        "cache_hit_rate": round(hits / lookups, 4) if lookups else None,
        "setup_passes_per_case": round(statistics.fmean([s.get("passes", 0) for s in setups]), 3) if setups else 0.0,
        "setup_tokens_per_case": round(statistics.fmean([s.get("tokens", 0) for s in setups]), 1) if setups else 0.0,
    } | _warm_costs(costs)


def _warm_costs(costs: list[dict[str, Any]]) -> dict[str, Any]:
    """With ``--warm``: what the warm-up of the model's turn before each first decision cost, off
    the decision's path (milliseconds, which depend on the load, and tokens)."""
    warm = [c["warm"] for c in costs if isinstance(c.get("warm"), dict)]
    if not warm:
        return {}
    return {"warmed_decisions": len(warm),
            "warm_ms": {k: round(v, 3) for k, v in percentiles(float(w.get("ms", 0)) for w in warm).items()},
            "warm_tokens": {k: round(v, 3) for k, v in percentiles(float(w.get("tokens", 0)) for w in warm).items()}}


def _with_interval(rec: dict[str, Any]) -> dict[str, Any]:
    rate = rec["recovered_rate"]
    return rec | {"recovered_ci95": list(wilson(rate.k, rate.n)) if isinstance(rate, Proportion) else None}
