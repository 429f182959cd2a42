"""Would a learned scorer interrupt better than the hand-set policy? An experiment, by one command.

``python -m guard_bench.scorer DEV_RUN TEST_RUN`` reads the ``cases.jsonl`` of a dev run and of a
test run (``guard bench run all --split dev|test``) and compares, per suite, two ways of deciding
whether to interrupt a case from the findings of the guard's first decision:

- **hand**: what the policy did (the run's ``flagged``);
- **learned**: a logistic regression over one feature per rule (``check/category/rule``: the
  highest confidence of its findings, 0 when it did not fire) and the number of findings, trained
  on the dev cases of every *other* suite (the transfer setting: nothing tuned on the suite it is
  measured on); its threshold is the lowest that keeps the false-interrupt rate on those training
  suites' clean cases at most ``--max-false-interrupts`` (each suite counted alone, the worst one
  binding).

Both are scored on the suite's test cases: the false-interrupt rate (clean cases interrupted) and
awareness (positive cases interrupted), each with its Wilson interval. The learned scorer only
re-weighs what the checks found; it cannot catch what no check noticed. Needs scikit-learn.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from guard_bench.labels import OK
from guard_bench.metrics import wilson
from guard_bench.rules import read_cases, rule_key

MAX_FALSE_INTERRUPTS = 0.03


def features(case: Mapping[str, Any], vocabulary: Sequence[str]) -> list[float]:
    """Per rule of ``vocabulary``, the highest confidence of its findings in the case (0: none),
    then the number of findings."""
    best: dict[str, float] = {}
    findings = [f for f in case.get("findings") or [] if isinstance(f, dict)]
    for f in findings:
        key = rule_key(f)
        best[key] = max(best.get(key, 0.0), float(f.get("confidence") or 1.0))
    return [best.get(k, 0.0) for k in vocabulary] + [float(len(findings))]


def _clean(case: Mapping[str, Any]) -> bool:
    return case.get("expected", {}).get("label") == OK


def _rates(cases: Sequence[Mapping[str, Any]], flagged: Sequence[bool]) -> dict[str, Any]:
    clean = [f for c, f in zip(cases, flagged) if _clean(c)]
    positive = [f for c, f in zip(cases, flagged) if not _clean(c)]
    fi, aw = sum(clean), sum(positive)
    return {
        "false_interrupts": {"value": fi / len(clean) if clean else 0.0, "k": fi, "n": len(clean), "ci95": list(wilson(fi, len(clean)))},
        "awareness": {"value": aw / len(positive) if positive else 0.0, "k": aw, "n": len(positive), "ci95": list(wilson(aw, len(positive)))},
    }


def _threshold(scores: Sequence[float], cases: Sequence[Mapping[str, Any]], ceiling: float) -> float:
    """The lowest score threshold at which every suite's clean cases are interrupted at most
    ``ceiling`` of the time (scores at or above the threshold interrupt)."""
    by_suite: dict[str, list[float]] = {}
    for s, c in zip(scores, cases):
        if _clean(c):
            by_suite.setdefault(str(c.get("suite")), []).append(s)
    for t in sorted(set(scores)) + [float("inf")]:
        if all(sum(x >= t for x in clean) <= ceiling * len(clean) for clean in by_suite.values()):
            return t
    return float("inf")


def experiment(dev: Sequence[Mapping[str, Any]], test: Sequence[Mapping[str, Any]], ceiling: float = MAX_FALSE_INTERRUPTS) -> dict[str, Any]:
    """Per suite of ``test``: the hand policy and the learned scorer (trained on the other suites' dev)."""
    from sklearn.linear_model import LogisticRegression

    out: dict[str, Any] = {}
    for suite in sorted({str(c.get("suite")) for c in test}):
        train = [c for c in dev if str(c.get("suite")) != suite]
        held = [c for c in test if str(c.get("suite")) == suite]
        if not held or not train:
            continue
        vocabulary = sorted({rule_key(f) for c in train for f in c.get("findings") or [] if isinstance(f, dict)})
        x = [features(c, vocabulary) for c in train]
        y = [int(not _clean(c)) for c in train]
        if len(set(y)) < 2:
            continue
        model = LogisticRegression(max_iter=1000).fit(x, y)
        threshold = _threshold(list(model.predict_proba(x)[:, 1]), train, ceiling)
        learned = [p >= threshold for p in model.predict_proba([features(c, vocabulary) for c in held])[:, 1]]
        out[suite] = {
            "cases": len(held),
            "hand": _rates(held, [bool(c.get("flagged")) for c in held]),
            "learned": _rates(held, [bool(x) for x in learned]),
            "threshold": float(threshold),
        }
    return out


def train(dev: Sequence[Mapping[str, Any]], ceiling: float = MAX_FALSE_INTERRUPTS) -> dict[str, Any]:
    """The scorer the guard ships (``guard/data/scorer.json``): trained on the dev cases of every
    suite, its threshold the lowest keeping each suite's dev false interrupts at most ``ceiling``."""
    import sklearn
    from sklearn.linear_model import LogisticRegression

    vocabulary = sorted({rule_key(f) for c in dev for f in c.get("findings") or [] if isinstance(f, dict)})
    x = [features(c, vocabulary) for c in dev]
    y = [int(not _clean(c)) for c in dev]
    model = LogisticRegression(max_iter=1000).fit(x, y)
    threshold = _threshold(list(model.predict_proba(x)[:, 1]), dev, ceiling)
    suites: dict[str, int] = {}
    for c in dev:
        suites[str(c.get("suite"))] = suites.get(str(c.get("suite")), 0) + 1
    return {
        "format": "guard.scorer/1",
        "model": "logistic regression (scikit-learn " + sklearn.__version__ + ")",
        "features": "per rule check/category/rule: the highest confidence of its findings (0: none); then the number of findings",
        "vocabulary": vocabulary,
        "coefficients": [round(float(w), 6) for w in model.coef_[0]],
        "intercept": round(float(model.intercept_[0]), 6),
        "threshold": round(float(threshold), 6),
        "max_false_interrupts": ceiling,
        "trained_on": {"split": "dev", "cases_per_suite": suites},
    }


def markdown(result: Mapping[str, Any], ceiling: float) -> str:
    def cell(r: Mapping[str, Any]) -> str:
        return f"{r['value']:.3f} [{r['ci95'][0]:.2f}, {r['ci95'][1]:.2f}]"

    lines = [
        f"Learned scorer (logistic regression over the rules' confidences, trained on the other suites' dev, threshold for "
        f"at most {ceiling:.0%} false interrupts on each training suite) against the hand-set policy, on each suite's test split.",
        "",
        "| suite | cases | hand: false interrupts | hand: awareness | learned: false interrupts | learned: awareness |",
        "|---|---|---|---|---|---|",
    ]
    for suite, r in result.items():
        lines.append(f"| {suite} | {r['cases']} | {cell(r['hand']['false_interrupts'])} | {cell(r['hand']['awareness'])} | "
                     f"{cell(r['learned']['false_interrupts'])} | {cell(r['learned']['awareness'])} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m guard_bench.scorer", description=__doc__.split("\n\n")[0])
    parser.add_argument("dev", type=Path, help="a dev run folder (cases.jsonl)")
    parser.add_argument("test", type=Path, nargs="?", help="a test run folder (cases.jsonl): compare on it")
    parser.add_argument("--max-false-interrupts", type=float, default=MAX_FALSE_INTERRUPTS)
    parser.add_argument("--out", type=Path, help="also write the figures as JSON")
    parser.add_argument("--train", type=Path, metavar="FILE", help="train on every suite of DEV and write the weights (guard/data/scorer.json)")
    args = parser.parse_args(argv)
    dev = list(read_cases([args.dev]))
    if args.train:
        args.train.write_text(json.dumps(train(dev, args.max_false_interrupts), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.train}")
    if args.test is None:
        return 0
    test = list(read_cases([args.test]))
    result = experiment(dev, test, args.max_false_interrupts)
    print(markdown(result, args.max_false_interrupts))
    if args.out:
        args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
