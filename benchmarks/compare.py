"""``guard bench compare OLD NEW``: the CI gate before a policy change.

Prints a Markdown diff per suite and label (precision, recall), of the false-interrupt rate and of
the paper metrics, and fails (exit 1) when any precision or recall drops, or the false-interrupt
rate rises, by more than ``max_drop``.
"""

from __future__ import annotations

from typing import Any

from guard_bench.report import suites_of


def compare(old: dict[str, Any], new: dict[str, Any], max_drop: float = 0.01) -> tuple[str, list[str]]:
    """The Markdown diff and the list of regressions beyond ``max_drop``."""
    lines = ["| suite | label | metric | old | new | change |", "|---|---|---|---|---|---|"]
    regressions: list[str] = []
    old_s, new_s = suites_of(old), suites_of(new)
    for suite in sorted(set(old_s) | set(new_s)):
        if suite not in new_s:
            regressions.append(f"{suite}: missing from the new run")
            continue
        if suite not in old_s:
            lines.append(f"| {suite} | (new suite) | | | | |")
            continue
        o_cat, n_cat = old_s[suite]["categories"], new_s[suite]["categories"]
        for label in sorted(set(o_cat) | set(n_cat)):
            for metric in ("precision", "recall"):
                a = o_cat.get(label, {}).get(metric)
                b = n_cat.get(label, {}).get(metric)
                if a is None and b is None:
                    continue
                delta = (b or 0.0) - (a or 0.0)
                lines.append(f"| {suite} | {label} | {metric} | {_f(a)} | {_f(b)} | {delta:+.3f} |")
                if a is not None and delta < -max_drop:
                    regressions.append(f"{suite} {label} {metric} {a:.3f} -> {(b or 0.0):.3f}")
        a, b = (_interrupts(s[suite]) for s in (old_s, new_s))
        if a is not None or b is not None:
            delta = (b or 0.0) - (a or 0.0)
            lines.append(f"| {suite} | (clean cases) | false_interrupt_rate | {_f(a)} | {_f(b)} | {delta:+.3f} |")
            if a is not None and b is not None and delta > max_drop:
                regressions.append(f"{suite} false_interrupt_rate {a:.3f} -> {b:.3f}")
        for metric in sorted(set(old_s[suite].get("paper_metrics", {})) | set(new_s[suite].get("paper_metrics", {}))):
            a, b = old_s[suite].get("paper_metrics", {}).get(metric), new_s[suite].get("paper_metrics", {}).get(metric)
            delta = (b or 0.0) - (a or 0.0)
            lines.append(f"| {suite} | (paper) | {metric} | {_f(a)} | {_f(b)} | {delta:+.3f} |")
    return "\n".join(lines), regressions


def _interrupts(result: dict[str, Any]) -> float | None:
    """The false-interrupt rate of a suite's result (an older run's false-alarm rate)."""
    fi = result.get("false_interrupt_rate")
    return fi.get("value") if isinstance(fi, dict) else result.get("false_alarm_rate")


def _f(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"
