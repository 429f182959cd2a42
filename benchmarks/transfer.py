"""``guard bench transfer``: thresholds calibrated on the other suites' dev splits, measured on this
suite's test split.

A threshold tuned on a suite's own dev split can still fit that suite's wording, tools and
annotators, which its test split shares. Transfer asks the harder question a deployment faces: with
thresholds chosen on *other* data, what does the guard score here? Per target suite, the
coordinate-wise sweep of ``guard_bench.calibrate`` runs on the dev cases of every other suite with
data (never a case of the target), and the policy it keeps is run on the target's test split, beside
the base policy (and, with ``own``, the policy calibrated on the target's own dev split). Every
figure carries its 95% interval and the false-interrupt rate sits beside the recalls.

Writes ``transfer.json`` (per suite and policy: the chosen knob values, paper metrics, intervals,
false interrupts) and ``transfer.md`` (the table).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from guard_bench.agents import AgentSource
from guard_bench.calibrate import KNOBS, SuiteRuns, sweep, value_at
from guard_bench.cases import Case
from guard_bench.execute import missing_text, select_cases
from guard_bench.metrics import false_interrupts, figure_intervals
from guard_bench.report import fmt_ci, write_json
from guard_bench.runner import run_cases
from guard_bench.suites import SUITES
from guard_bench.suites import suite as load_suite
from guard.policy import Policy

#: Column order of the table: the base policy, calibrated on the suite's own dev split, on the others'.
COLUMNS = ("base", "own_dev", "other_dev")
TITLES = {"base": "base policy", "own_dev": "calibrated on own dev", "other_dev": "calibrated on other suites' dev"}


def _matcher(policy: Policy, semantic: bool) -> Any:
    if not semantic:
        return None
    from guard.semantic import semantic_for  # the extra

    return semantic_for(policy.checks.semantic)


def _measure(module: Any, cases: Sequence[Case], policy: Policy, semantic: bool) -> dict[str, Any]:
    results = run_cases(cases, policy, AgentSource("reference"), semantic=_matcher(policy, semantic))
    paper = module.paper_metrics(results)
    return {"policy_sha256": policy.sha256, "n_cases": len(results),
            "n_families": len({r.family or r.id for r in results}),
            "false_interrupt_rate": false_interrupts(results), "paper_metrics": paper,
            "paper_ci95": figure_intervals(results, paper, module.paper_metrics)}


def spread(cases: Sequence[Case], limit: int | None) -> list[Case]:
    """At most ``limit`` cases taken evenly across the load order (so every subset is represented,
    where the first ``limit`` would take the first files only); all of them without a limit."""
    if not limit or len(cases) <= limit:
        return list(cases)
    return [cases[i * len(cases) // limit] for i in range(limit)]


def _knobs(policy: Policy, semantic: bool) -> dict[str, Any]:
    return {k.path: value_at(policy, k.path) for k in KNOBS if semantic or not k.semantic}


def transfer(
    targets: Sequence[str],
    data: Path,
    *,
    base: Policy | None = None,
    semantic: bool = False,
    limit: int | None = None,
    max_false_alarms: float | None = None,
    own: bool = False,
    echo: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Per target suite: the policy calibrated on every other suite's dev cases, measured with the
    base policy (and with ``own`` the policy calibrated on the target's dev cases) on its test
    split. Returns what ``transfer.json`` holds."""
    base = base or Policy()
    modules = {n: load_suite(n) for n in SUITES}
    modules = {n: m for n, m in modules.items() if m.available(data)}
    dev = {n: spread(select_cases(m, data, "dev"), limit) for n, m in modules.items()}
    out: dict[str, Any] = {"data_dir": str(data), "semantic": semantic, "limit": limit,
                           "max_false_alarms": max_false_alarms, "base_sha256": base.sha256, "suites": {}}
    runs: SuiteRuns = {}  # each suite's dev results per policy, shared by the targets' sweeps
    for target in targets:
        if target not in modules:
            echo(f"skip {target}: {missing_text(target, data)}")
            continue
        start = time.perf_counter()
        others = {n: cases for n, cases in dev.items() if n != target and cases}
        policies = {"base": base}
        if own and dev[target]:
            policies["own_dev"], _ = sweep({target: dev[target]}, base, semantic=semantic, max_false_alarms=max_false_alarms, runs=runs)
        policies["other_dev"], _ = sweep(others, base, semantic=semantic, max_false_alarms=max_false_alarms, runs=runs)
        test = spread(select_cases(modules[target], data, "test"), limit)
        entry: dict[str, Any] = {"calibrated_on": sorted(others), "n_dev_cases": sum(len(c) for c in others.values())}
        for column, policy in policies.items():
            entry[column] = _measure(modules[target], test, policy, semantic) | {"knobs": _knobs(policy, semantic)}
        entry["seconds"] = round(time.perf_counter() - start, 1)
        out["suites"][target] = entry
        echo(f"{target}: calibrated on {', '.join(others) or 'nothing'} ({entry['n_dev_cases']} dev cases), "
             f"measured on {len(test)} test cases in {entry['seconds']:.1f} s")
    return out


def markdown(run: Mapping[str, Any], command: str) -> str:
    """The transfer table: per suite, each figure under each policy, with its 95% interval."""
    lines = ["# Threshold transfer", "", f"Command: `{command}`", "",
             "Thresholds calibrated (coordinate-wise, `guard bench calibrate`'s sweep) on the dev splits of every "
             "*other* suite, measured on this suite's test split; the base policy beside it. Figures with their "
             "95% interval (Wilson for shares, a family bootstrap otherwise).", ""]
    for name, entry in run["suites"].items():
        columns = [c for c in COLUMNS if c in entry]
        lines += [f"## {name}", "", f"Calibrated on: {', '.join(entry['calibrated_on']) or 'nothing'} "
                  f"({entry['n_dev_cases']} dev cases); test split: {entry[columns[0]]['n_cases']} cases in "
                  f"{entry[columns[0]]['n_families']} families.", "",
                  "| figure | " + " | ".join(TITLES[c] for c in columns) + " |", "|---|" + "---|" * len(columns)]
        fi = [entry[c]["false_interrupt_rate"] for c in columns]
        lines.append("| false_interrupt_rate | " + " | ".join(f"{fmt_ci(f['value'], f)} ({f['k']}/{f['n']})" for f in fi) + " |")
        for metric in entry[columns[0]]["paper_metrics"]:
            cells = [fmt_ci(entry[c]["paper_metrics"].get(metric), entry[c]["paper_ci95"].get(metric)) for c in columns]
            lines.append(f"| {metric} | " + " | ".join(cells) + " |")
        changed = [k for k in entry[columns[0]]["knobs"] if len({str(entry[c]["knobs"][k]) for c in columns}) > 1]
        for knob in changed:
            lines.append(f"| `{knob}` | " + " | ".join(str(entry[c]["knobs"][knob]) for c in columns) + " |")
        lines.append("")
    return "\n".join(lines)


def write(run: Mapping[str, Any], out: Path, command: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "transfer.json", dict(run) | {"command": command})
    (out / "transfer.md").write_text(markdown(run, command), encoding="utf-8")
