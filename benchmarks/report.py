"""What a run writes: ``results.json``, ``cases.jsonl``, ``report.md`` and PNG plots.

``results.json`` is the contract other tools read (``guard bench compare``, CI gates); its keys are
fixed: suite, split, n_cases, n_families, policy {name, sha256}, categories (each with ``ci95`` of
precision, recall and F1), false_interrupt_rate {value, k, n, ci95} (``benchmarks.metrics``: retry,
ask_human or block on a clean case), paper_metrics, paper_ci95 (per paper metric: ci95 [lo, hi],
method wilson|bootstrap, and k, n for a share), skipped_records {total, reasons} (records the loader
could not read), recovery, latency_ms, judge ("off", or what the optional LLM judge was asked and
cost; a judged run adds ``without_judge``, the same figures with no judge) (and, for ``all``, one
such object per suite under ``suites``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from benchmarks.metrics import confusion, figure_intervals, percentiles, summary
from benchmarks.suites import PaperFigure
from guard.policy import Policy


def suite_result(
    name: str, split: str, policy: Policy, results: list[Any], paper: dict[str, float], seconds: float,
    judge_model: str | None = None, paper_fn: Callable[[list[Any]], dict[str, float]] | None = None,
    skipped: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """``judge_model`` names the LLM judge the run was given; a policy's enabled ``checks.judge``
    names its own. ``paper_fn`` (the suite's ``paper_metrics``) is what the bootstrap intervals
    recompute; ``skipped`` counts the records the loader could not read, by reason."""
    if judge_model is None and policy.checks.judge.enabled:
        judge_model = policy.checks.judge.model
    return {
        "suite": name,
        "split": split,
        **summary(results),
        "policy": {"name": policy.name, "sha256": policy.sha256},
        "paper_metrics": paper,
        "paper_ci95": figure_intervals(results, paper, paper_fn or (lambda _rs: {})),
        "skipped_records": skipped_records(skipped),
        "seconds": seconds,
        "judge": judge_figures(results, judge_model),
    }


def skipped_records(skipped: Mapping[str, int] | None) -> dict[str, Any]:
    reasons = dict(sorted((skipped or {}).items()))
    return {"total": sum(reasons.values()), "reasons": reasons}


def judge_figures(results: list[Any], model: str | None) -> dict[str, Any] | str:
    """What the optional LLM judge did and cost over a suite's cases: "off" when no judge ran.

    ``questions`` counts every judgement; ``calls`` the model calls among them (not those answered
    from the cache or skipped at the thread's cap), which latency, tokens and cost are taken over.
    ``cost`` is None unless the policy gives prices per 1k tokens and the model reports its usage.
    """
    records = [j for r in results for j in r.judge]
    if model is None and not records:
        return "off"
    calls = [j for j in records if not j["cached"] and j["effect"] != "skipped"]
    costs = [j["cost"] for j in calls if j["cost"] is not None]
    kinds, effects = Counter(j["kind"] for j in records), Counter(j["effect"] for j in records)
    return {
        "model": model or records[0]["model"],
        "questions": len(records),
        "calls": len(calls),
        "cached": sum(1 for j in records if j["cached"]),
        "cases": sum(1 for r in results if r.judge),
        "by_kind": dict(sorted(kinds.items())),
        "effects": {e: effects[e] for e in ("dropped", "added", "kept", "failed", "skipped")},
        "latency_ms": {k: v for k, v in percentiles(j["latency_ms"] for j in calls).items() if k != "p95"},
        "input_tokens": sum(j["input_tokens"] or 0 for j in calls),
        "output_tokens": sum(j["output_tokens"] or 0 for j in calls),
        "cost": round(sum(costs), 6) if costs else None,
    }


def without_judge(results: list[Any], paper: dict[str, float]) -> dict[str, Any]:
    """The figures of the same cases run with no judge, to set beside a judged run's."""
    plain = summary(results)
    return {k: plain[k] for k in ("false_interrupt_rate", "categories", "recovery", "latency_ms")} | {"paper_metrics": paper}


def write_cases(path: Path, results: list[Any]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for r in results:
            fh.write(r.model_dump_json() + "\n")


def suites_of(run: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """A ``results.json`` as suite -> result (a one-suite run or an ``all`` run)."""
    if not run:
        return {}
    return dict(run["suites"]) if "suites" in run else {run["suite"]: dict(run)}


def fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def fmt_ci(value: float | None, entry: Mapping[str, Any] | None) -> str:
    """A figure and its 95% interval: ``0.606 [0.51, 0.69]`` (the figure alone without one; "— (no
    cases)" for a share of none)."""
    if (entry or {}).get("n") == 0:
        return "— (no cases)"
    ci = (entry or {}).get("ci95")
    return fmt(value) if value is None or not ci else f"{value:.3f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def false_interrupt_text(res: Mapping[str, Any]) -> str:
    """``false interrupts 0.092 [0.07, 0.12] (12 of 130 clean cases)``; older runs' false-alarm rate
    when the run has no false_interrupt_rate."""
    fi = res.get("false_interrupt_rate")
    if not isinstance(fi, Mapping):
        return f"false alarms on clean cases {fmt(res.get('false_alarm_rate'))}"
    return f"false interrupts {fmt_ci(fi['value'], fi)} ({fi['k']} of {fi['n']} clean cases)"


def skipped_text(res: Mapping[str, Any]) -> str:
    """``; 2 records skipped (unreadable: file: JSONDecodeError 2)``, or nothing when none was."""
    skipped = res.get("skipped_records") or {}
    if not skipped.get("total"):
        return ""
    reasons = ", ".join(f"{r} {n}" for r, n in skipped["reasons"].items())
    return f"; {skipped['total']} records skipped, unreadable ({reasons})"


def markdown(run: dict[str, Any], figures: dict[str, list[PaperFigure]], command: str) -> str:
    """The report: per suite, the guard's paper-compatible figures beside the papers' own."""
    suites = suites_of(run)
    lines = [f"# guard benchmark report ({run.get('split', '')} split)", "", f"Command: `{command}`", "",
             f"Policy `{next(iter(suites.values()))['policy']['name']}` sha256 `{next(iter(suites.values()))['policy']['sha256'][:16]}…`", ""]
    for name, res in suites.items():
        lines += [f"## {name}", "", f"{res['n_cases']} cases in {res.get('n_families', '?')} families ({res['n_errors']} errors), "
                  f"{res['seconds']:.1f} s; {false_interrupt_text(res)}; guard latency p50 "
                  f"{res['latency_ms']['p50']:.2f} ms, p99 {res['latency_ms']['p99']:.2f} ms{skipped_text(res)}.", ""]
        lines += _judge_lines(res)
        lines += ["| metric | guard [95% interval] | paper figure | model | source |", "|---|---|---|---|---|"]
        fi = res.get("false_interrupt_rate")
        if isinstance(fi, dict):
            lines.append(f"| false_interrupt_rate | {fmt_ci(fi['value'], fi)} | | | retry, ask_human or block on a clean case |")
        by_metric: dict[str, list[PaperFigure]] = {}
        for f in figures.get(name, []):
            by_metric.setdefault(f.metric, []).append(f)
        for metric, value in res["paper_metrics"].items():
            refs = by_metric.get(metric) or [None]
            for ref in refs:
                label = f"{metric} (rebuilt)" if ref is not None and ref.rebuilt else metric
                lines.append(f"| {label} | {fmt_ci(value, res.get('paper_ci95', {}).get(metric))} | {fmt(ref.value if ref else None)} | "
                             f"{ref.model if ref else ''} | {ref.source if ref else ''} |")
        lines += ["", "| label | n | tp | fp | fn | precision | recall | F1 |", "|---|---|---|---|---|---|---|---|"]
        for label, c in res["categories"].items():
            ci = c.get("ci95") or {}
            cells = " | ".join(fmt_ci(c[m], {"ci95": ci.get(m)}) for m in ("precision", "recall", "f1"))
            lines.append(f"| {label} | {c['n']} | {c['tp']} | {c['fp']} | {c['fn']} | {cells} |")
        rec = res["recovery"]
        lines += ["", f"Recovery: {fmt_ci(rec['recovered_rate'], {'ci95': rec.get('recovered_ci95')})} of {rec['n_with_gold']} cases with a gold call ended with it; "
                  f"{rec['questions_per_case']:.2f} questions and {rec['retries_per_case']:.2f} retries per case.", ""]
        if res["n_cases"]:
            lines += [f"![{name} confusion](plots/{name}-confusion.png) ![{name} recall vs false alarms](plots/{name}-labels.png)", ""]
    return "\n".join(lines)


def _judge_lines(res: dict[str, Any]) -> list[str]:
    """The judge's line ("judge: off", or its calls, latency, tokens and cost) and, for a judged
    run, its figures beside the same cases' without it."""
    judge = res.get("judge", "off")
    if not isinstance(judge, dict):
        return ["judge: off.", ""]
    effects = ", ".join(f"{n} {e}" for e, n in judge["effects"].items() if n) or "none"
    cost = "no cost figure (no prices in the policy, or no usage reported)" if judge["cost"] is None else f"cost {judge['cost']:.6g} (in the policy's price unit)"
    lines = [f"judge: `{judge['model']}`: {judge['questions']} questions in {judge['cases']} cases, {judge['calls']} model calls "
             f"({judge['cached']} answered from the cache; {effects}); latency p50 {judge['latency_ms']['p50']:.1f} ms, "
             f"p99 {judge['latency_ms']['p99']:.1f} ms; {judge['input_tokens']} input and {judge['output_tokens']} output tokens, {cost}.", ""]
    plain = res.get("without_judge")
    if not isinstance(plain, dict):
        return lines
    lines += ["| figure | without judge | with judge |", "|---|---|---|",
              # the label tests/checks/test_judge.py reads; the figure is the false-interrupt rate
              f"| false-alarm rate | {fmt(plain['false_interrupt_rate']['value'])} | {fmt(res['false_interrupt_rate']['value'])} |",
              f"| recovered | {fmt(plain['recovery']['recovered_rate'])} | {fmt(res['recovery']['recovered_rate'])} |"]
    lines += [f"| {m} | {fmt(plain['paper_metrics'].get(m))} | {fmt(v)} |" for m, v in res["paper_metrics"].items()]
    for label in sorted(set(plain["categories"]) | set(res["categories"])):
        before, after = plain["categories"].get(label, {}).get("f1"), res["categories"].get(label, {}).get("f1")
        lines.append(f"| {label} F1 | {fmt(before)} | {fmt(after)} |")
    lines += [f"| guard latency p50 / p99 ms | {plain['latency_ms']['p50']:.2f} / {plain['latency_ms']['p99']:.2f} | "
              f"{res['latency_ms']['p50']:.2f} / {res['latency_ms']['p99']:.2f} |", ""]
    return lines


def plots(out_dir: Path, name: str, results: list[Any]) -> None:
    """A confusion matrix (expected label vs the guard's primary label) and per-label recall vs false alarms."""
    if not results:
        return  # a suite with no case in this split has nothing to draw
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plot_dir = out_dir / "plots"
    plot_dir.mkdir(parents=True, exist_ok=True)
    expected = sorted({r.expected["label"] for r in results})
    predicted = sorted({p for r in results for p in r.predicted} | {"ok"})
    grid = [[sum(1 for r in results if r.expected["label"] == e and (r.predicted[0] if r.predicted else "ok") == p)
             for p in predicted] for e in expected]
    fig, ax = plt.subplots(figsize=(1.2 + 1.1 * len(predicted), 1.0 + 0.6 * len(expected)))
    ax.imshow(grid, cmap="Blues")
    ax.set_xticks(range(len(predicted)), predicted, rotation=40, ha="right")
    ax.set_yticks(range(len(expected)), expected)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            ax.text(j, i, str(v), ha="center", va="center", fontsize=8)
    ax.set_xlabel("guard (primary label)")
    ax.set_ylabel("expected")
    ax.set_title(f"{name}: confusion")
    fig.tight_layout()
    fig.savefig(plot_dir / f"{name}-confusion.png", dpi=110)
    plt.close(fig)
    conf = confusion(results)
    clean = [r for r in results if r.expected["label"] == "ok"]
    names = list(conf)
    recall = [conf[n]["recall"] for n in names]
    alarms = [sum(1 for r in clean if n in r.predicted) / len(clean) if clean else 0.0 for n in names]
    fig, ax = plt.subplots(figsize=(max(4, 1.3 * len(names)), 3.2))
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], recall, width=0.4, label="recall")
    ax.bar([x + 0.2 for x in xs], alarms, width=0.4, label="false alarms on clean cases")
    ax.set_xticks(list(xs), names, rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title(f"{name}: recall vs false alarms per label")
    fig.tight_layout()
    fig.savefig(plot_dir / f"{name}-labels.png", dpi=110)
    plt.close(fig)


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
