"""The rules report: how often each rule fires, on clean cases and on positives, per split; and
how well the findings' ``confidence`` is calibrated.

Every finding names the check and the rule that produced it (``check``, ``category``, ``rule``).
Read from the ``cases.jsonl`` of one or more runs (a dev run and a test run, or one ``--split
all`` run), per rule and split:

- ``clean``: clean cases (expected ``ok``) on which the rule fired; ``clean_interrupts``: those
  the guard then interrupted (retry, ask, block), and ``sole``: those interrupted by this rule
  alone (no other interrupting rule fired), which is what switching the rule off would save;
- ``hits``: positive cases on which it fired and named the case's own label; ``other``: positive
  cases with another label.

A rule that fires on clean cases and on few positives costs more than it catches; a rule that
fires only on dev and never on test may exist for one case. The calibration table groups the
findings of every case by their ``confidence``: a finding is right when the case's expected label
is the finding's label; the expected calibration error (ECE) is the findings-weighted mean gap
between confidence and the share right.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from guard_bench.labels import OK, label_of
from guard_bench.metrics import wilson

SPLITS = ("dev", "test")


def read_cases(folders: Iterable[Path]) -> Iterator[dict[str, Any]]:
    """Every case record of each run folder's ``cases.jsonl`` (a line that is no JSON object is skipped)."""
    for folder in folders:
        path = Path(folder) / "cases.jsonl"
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(record, dict):
                    yield record


def rule_key(finding: Mapping[str, Any]) -> str:
    """``check/category/rule``: a rule's name in the report."""
    return f"{finding.get('check') or '?'}/{finding.get('category')}/{finding.get('rule') or '-'}"


def rule_counts(cases: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Counter[str]]]:
    """``{rule: {split: Counter(clean, clean_interrupts, sole, hits, other)}}``."""
    table: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    for case in cases:
        split, expected = str(case.get("split")), case.get("expected", {}).get("label")
        findings = [f for f in case.get("findings") or [] if isinstance(f, dict)]
        keys = {rule_key(f): f for f in findings}
        for key, finding in keys.items():
            counts = table[key][split]
            if expected == OK:
                counts["clean"] += 1
                if case.get("flagged"):
                    counts["clean_interrupts"] += 1
                    if len(keys) == 1:
                        counts["sole"] += 1
            elif label_of(finding["category"]) == expected:
                counts["hits"] += 1
            else:
                counts["other"] += 1
    return table


def calibration(cases: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Per confidence level: findings, the share right (with its Wilson interval) and the gap; and
    the ECE over all findings. A finding is right when its label is the case's expected label."""
    levels: dict[float, list[int]] = defaultdict(lambda: [0, 0])
    for case in cases:
        expected = case.get("expected", {}).get("label")
        for f in case.get("findings") or []:
            if not isinstance(f, dict) or f.get("confidence") is None:
                continue
            bucket = levels[round(float(f["confidence"]), 2)]
            bucket[0] += 1
            bucket[1] += int(expected != OK and label_of(f["category"]) == expected)
    total = sum(n for n, _ in levels.values())
    rows = []
    ece = 0.0
    for conf in sorted(levels):
        n, right = levels[conf]
        share = right / n
        ece += n / total * abs(share - conf)
        rows.append({"confidence": conf, "findings": n, "right": right, "share_right": share, "ci95": list(wilson(right, n)), "gap": share - conf})
    return {"findings": total, "ece": ece if total else None, "levels": rows}


def report(folders: Sequence[Path]) -> dict[str, Any]:
    """The rules table and the calibration, per split, of the runs in ``folders``."""
    cases = list(read_cases(folders))
    splits = sorted({str(c.get("split")) for c in cases}, key=lambda s: (SPLITS.index(s) if s in SPLITS else 9, s))
    counts = rule_counts(cases)
    clean = Counter(str(c.get("split")) for c in cases if c.get("expected", {}).get("label") == OK)
    rules = {
        key: {split: dict(per[split]) for split in splits if split in per}
        for key, per in sorted(counts.items(), key=lambda kv: -sum(c["clean_interrupts"] for c in kv[1].values()))
    }
    return {
        "runs": [str(f) for f in folders],
        "splits": splits,
        "clean_cases": dict(clean),
        "rules": rules,
        "calibration": {split: calibration(c for c in cases if str(c.get("split")) == split) for split in splits},
    }


def markdown(rep: Mapping[str, Any]) -> str:
    """The report as two Markdown tables: rules (worst false-interrupt cost first), calibration."""
    splits = rep["splits"]
    head = " | ".join(f"{s}: clean (interrupted, alone) / hits / other" for s in splits)
    lines = [
        "### Rules: where each fires",
        "",
        "Clean: clean cases on which the rule fired (interrupted: the guard then retried, asked or blocked; alone: "
        "no other rule fired). Hits: positive cases on which it named the case's own label; other: positives of another label. "
        "Clean cases per split: " + ", ".join(f"{s} {rep['clean_cases'].get(s, 0)}" for s in splits) + ".",
        "",
        f"| rule (check/category/rule) | {head} |",
        "|---|" + "---|" * len(splits),
    ]
    for key, per in rep["rules"].items():
        cells = []
        for s in splits:
            c = per.get(s, {})
            cells.append(f"{c.get('clean', 0)} ({c.get('clean_interrupts', 0)}, {c.get('sole', 0)}) / {c.get('hits', 0)} / {c.get('other', 0)}")
        lines.append(f"| `{key}` | " + " | ".join(cells) + " |")
    lines += ["", "### Calibration of the findings' confidence", ""]
    for s in splits:
        cal = rep["calibration"][s]
        ece = "n/a" if cal["ece"] is None else f"{cal['ece']:.3f}"
        lines += [f"{s}: {cal['findings']} findings, expected calibration error {ece}.", "",
                  "| confidence | findings | right | share right [95% CI] | gap |", "|---|---|---|---|---|"]
        for row in cal["levels"]:
            lo, hi = row["ci95"]
            lines.append(f"| {row['confidence']:.2f} | {row['findings']} | {row['right']} | {row['share_right']:.3f} [{lo:.2f}, {hi:.2f}] | {row['gap']:+.3f} |")
        lines.append("")
    return "\n".join(lines)
