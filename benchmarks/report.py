"""What a run writes: ``results.json``, ``cases.jsonl``, ``report.md`` and PNG plots.

``results.json`` is the contract other tools read (``guard bench compare``, CI gates); its keys are
fixed: suite, split, n_cases, n_families, policy {name, sha256}, categories (each with ``ci95`` of
precision, recall and F1), false_interrupt_rate {value, k, n, ci95} (``guard_bench.metrics``: retry,
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

from guard_bench import glossary
from guard_bench.metrics import confusion, figure_intervals, percentiles, summary
from guard_bench.suites import PaperFigure
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
        "subsets": dict(sorted(Counter(r.subset for r in results).items())),
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


#: The figures the terminal table shows per suite (the rest are in report.md).
HEADLINE: dict[str, tuple[str, ...]] = {
    "acebench": ("special_acc", "normal_false_alarm_rate"),
    "fail-talms": ("aware_underspecified", "aware_unavailable", "proceed_original"),
    "api-bank-ict": ("replacement_acc", "removal_acc"),
    "critictool": ("overall", "detect"),
    "reflectool": ("detect_avg", "correct_avg"),
    "bfcl": ("irrelevance_acc", "miss_param_acc", "relevant_false_alarm_rate"),
    "tool-reflection": ("detect", "repair_at_1"),
    "tool-reflection-rebuilt": ("detect", "repair_at_1"),
}
SAMPLES_BANNER = ("**Bundled samples: not comparable with the papers.** These figures come from the few self-made "
                  "cases in `benchmarks/samples/`, written to exercise the loaders; the papers' figures beside them "
                  "were measured on the full datasets. Get those with `guard bench fetch` (docs/datasets.md).")


def data_info(data: Path, samples: Path) -> dict[str, Any]:
    """What ``results.json`` records of the data a run read: the folder, and whether it is the bundled samples."""
    folder = Path(data).resolve()
    return {"dir": str(folder), "bundled_samples": folder == Path(samples).resolve()}


def markdown(run: dict[str, Any], figures: dict[str, list[PaperFigure]], command: str) -> str:
    """The report: per suite, the guard's paper-compatible figures beside the papers' own, the data it
    read (with a banner when that is the bundled samples) and a glossary of the terms used."""
    suites = suites_of(run)
    first = next(iter(suites.values()))
    data = run.get("data") or {}
    lines = [f"# guard benchmark report ({run.get('split', '')} split)", ""]
    if data.get("bundled_samples"):
        lines += [f"> {SAMPLES_BANNER}", ""]
    lines += [f"Command: `{command}`", ""]
    if data:
        lines += [f"Data: `{data['dir']}`" + (" (the bundled samples)" if data.get("bundled_samples") else ""), ""]
    lines += [f"Policy `{first['policy']['name']}` sha256 `{first['policy']['sha256'][:16]}…`", "",
              "Every figure is a share (0 to 1) with its 95% interval in brackets; the glossary at the end says "
              "what each name means.", ""]
    terms: list[tuple[str, str]] = []
    for name, res in suites.items():
        subsets = res.get("subsets") or {}
        lines += [f"## {name}", "", f"{res['n_cases']} cases in {res.get('n_families', '?')} families ({res['n_errors']} errors), "
                  f"{res['seconds']:.1f} s; {false_interrupt_text(res)}; guard latency p50 "
                  f"{res['latency_ms']['p50']:.2f} ms, p99 {res['latency_ms']['p99']:.2f} ms{latency_note(res)}{skipped_text(res)}.", ""]
        if subsets:
            lines += ["Cases per subset: " + ", ".join(f"{k} {v}" for k, v in subsets.items()) + ".", ""]
        lines += _judge_lines(res)
        lines += ["| metric | guard [95% interval] | paper figure | model | source |", "|---|---|---|---|---|"]
        fi = res.get("false_interrupt_rate")
        if isinstance(fi, dict):
            lines.append(f"| false_interrupt_rate | {fmt_ci(fi['value'], fi)} | | | retry, ask_human or block on a clean case |")
        by_metric: dict[str, list[PaperFigure]] = {}
        for f in figures.get(name, []):
            by_metric.setdefault(f.metric, []).append(f)
        for metric, value in res["paper_metrics"].items():
            terms.append((name, metric))
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
        lines += ["", recovery_text(res["recovery"]), ""]
        if res["n_cases"]:
            plots_md = [f"![{name} confusion](plots/{name}-confusion.png)", f"![{name} recall vs false alarms](plots/{name}-labels.png)"]
            if any(f.metric in res["paper_metrics"] for f in figures.get(name, [])):
                plots_md.append(f"![{name}: guard vs papers](plots/{name}-papers.png)")
            lines += [" ".join(plots_md), ""]
    return "\n".join(lines + glossary.lines(terms))


def recovery_text(rec: Mapping[str, Any]) -> str:
    """The recovery line; for a suite without gold calls, says so rather than "0.000 of 0"."""
    if not rec.get("n_with_gold"):
        return (f"Recovery: none of these cases has a gold call, so none is measured; "
                f"{rec['questions_per_case']:.2f} questions and {rec['retries_per_case']:.2f} retries per case.")
    return (f"Recovery: {fmt_ci(rec['recovered_rate'], {'ci95': rec.get('recovered_ci95')})} of {rec['n_with_gold']} cases "
            f"with a gold call ended with it; {rec['questions_per_case']:.2f} questions and "
            f"{rec['retries_per_case']:.2f} retries per case.")


def model_note(res: Mapping[str, Any]) -> str:
    """How the embedding model ran (" (model: onnx-int8)"), for a run with embeddings."""
    semantic = res.get("semantic") or {}
    backend, threads = semantic.get("backend"), semantic.get("threads")
    if not backend:
        return ""
    return f" (model: {backend}, {threads} thread{'s' if threads != 1 else ''})" if threads else f" (model: {backend})"


def latency_note(res: Mapping[str, Any]) -> str:
    """What the latency needs beside it: how the model ran (with embeddings), and why a p99 over
    few cases is high (it is the slowest case, usually the warm-up of the first)."""
    n = res.get("n_cases", 0)
    model = model_note(res)
    if n and n < 100:
        return f"{model} (p99 over {n} cases is the slowest case, usually the first: imports and validators warm up)"
    return model


def headline(run: dict[str, Any]) -> list[dict[str, Any]]:
    """Per suite, the rows of the terminal table: its case count, then its headline figures and its
    false-interrupt rate, each with its 95% interval."""
    rows = []
    for name, res in suites_of(run).items():
        wanted = [m for m in HEADLINE.get(name, ()) if m in res["paper_metrics"]] or list(res["paper_metrics"])[:2]
        figs = [(m, fmt_ci(res["paper_metrics"][m], res.get("paper_ci95", {}).get(m))) for m in wanted]
        fi = res.get("false_interrupt_rate")
        figs.append(("false_interrupt_rate", fmt_ci(fi["value"], fi) if isinstance(fi, Mapping) else fmt(res.get("false_alarm_rate"))))
        if res.get("n_errors"):
            figs.append(("errors", f"{res['n_errors']} cases failed to run (their error is in cases.jsonl)"))
        rows.append({"suite": name, "cases": res["n_cases"], "figures": figs})
    return rows


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


def plots(out_dir: Path, name: str, results: list[Any], paper: Mapping[str, float] | None = None,
          intervals: Mapping[str, Any] | None = None, figures: list[PaperFigure] | None = None) -> list[Path]:
    """A suite's plots under ``out_dir/plots``: the confusion matrix (expected label vs the guard's
    primary label), recall and false alarms per label (values and counts on the bars, zeros drawn),
    and, when the papers published figures the suite computes, the guard's beside theirs. Returns the files written."""
    if not results:
        return []  # a suite with no case in this split has nothing to draw
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plot_dir = out_dir / "plots"
    plot_dir.mkdir(parents=True, exist_ok=True)
    written = [_confusion_plot(plt, plot_dir, name, results), _labels_plot(plt, plot_dir, name, results)]
    if paper and figures and (chart := _papers_plot(plt, plot_dir, name, paper, intervals or {}, figures)):
        written.append(chart)
    return written


def _confusion_plot(plt: Any, plot_dir: Path, name: str, results: list[Any]) -> Path:
    expected = sorted({r.expected["label"] for r in results})
    predicted = sorted({p for r in results for p in r.predicted} | {"ok"})
    grid = [[sum(1 for r in results if r.expected["label"] == e and (r.predicted[0] if r.predicted else "ok") == p)
             for p in predicted] for e in expected]
    fig, ax = plt.subplots(figsize=(2.5 + 1.1 * len(predicted), 1.6 + 0.6 * len(expected)))
    ax.imshow(grid, cmap="Blues")
    ax.set_xticks(range(len(predicted)), predicted, rotation=40, ha="right")
    ax.set_yticks(range(len(expected)), expected)
    peak = max((v for row in grid for v in row), default=0)
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            ax.text(j, i, str(v), ha="center", va="center", fontsize=8, color="white" if peak and v > peak / 2 else "black")
    ax.set_xlabel("guard (primary label)")
    ax.set_ylabel("expected")
    ax.set_title(f"{name}: confusion ({len(results)} cases)", wrap=True)
    fig.tight_layout()
    path = plot_dir / f"{name}-confusion.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def _labels_plot(plt: Any, plot_dir: Path, name: str, results: list[Any]) -> Path:
    conf = confusion(results)
    clean = [r for r in results if r.expected["label"] == "ok"]
    names = list(conf)
    recall = [(conf[n]["recall"] or 0.0, conf[n]["tp"], conf[n]["tp"] + conf[n]["fn"]) for n in names]
    alarms = [(sum(1 for r in clean if n in r.predicted) / len(clean) if clean else 0.0,
               sum(1 for r in clean if n in r.predicted), len(clean)) for n in names]
    fig, ax = plt.subplots(figsize=(max(5.0, 1.5 * len(names) + 1.5), 3.8))
    xs = list(range(len(names)))
    for offset, series, label, colour in ((-0.2, recall, "recall", "tab:blue"),
                                          (0.2, alarms, f"false alarms on the {len(clean)} clean cases", "tab:orange")):
        values = [v for v, _k, _n in series]
        bars = ax.bar([x + offset for x in xs], values, width=0.4, label=label, color=colour)
        # a zero is drawn as a thin line on the axis and labelled, never left blank
        ax.bar([x + offset for x, v in zip(xs, values) if v == 0], [0.01] * values.count(0), width=0.4, color=colour)
        for bar, (v, k, n) in zip(bars, series):
            ax.text(bar.get_x() + bar.get_width() / 2, max(v, 0.01) + 0.02, f"{v:.2f}\n{k}/{n}", ha="center",
                    va="bottom", fontsize=7)
    ax.set_xticks(xs, names, rotation=30, ha="right")
    ax.set_ylim(0, 1.25)
    ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.35), ncol=2, frameon=False)
    ax.set_title(f"{name}: recall and false alarms per label", wrap=True)
    fig.tight_layout()
    path = plot_dir / f"{name}-labels.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def _papers_plot(plt: Any, plot_dir: Path, name: str, paper: Mapping[str, float], intervals: Mapping[str, Any],
                 figures: list[PaperFigure]) -> Path | None:
    """Per metric the papers published: the guard's figure (with its 95% interval) and each paper's."""
    refs = [f for f in figures if paper.get(f.metric) is not None]
    if not refs:
        return None
    metrics = list(dict.fromkeys(f.metric for f in refs))
    rows: list[tuple[str, float, Any, str]] = []  # label, value, interval, colour
    for metric in metrics:
        entry = intervals.get(metric) or {}
        counts = f" ({entry['k']}/{entry['n']})" if entry.get("n") else ""
        rows.append((f"{metric}: guard{counts}", float(paper[metric]), entry.get("ci95"), "tab:green"))
        rows += [(f"{metric}: {f.model}" + (" (paper, other data)" if f.rebuilt else " (paper)"), f.value, None, "tab:gray")
                 for f in refs if f.metric == metric]
    fig, ax = plt.subplots(figsize=(8.0, 0.9 + 0.32 * len(rows)))
    ys = list(range(len(rows)))[::-1]
    for y, (label, value, ci, colour) in zip(ys, rows):
        err = None if not ci else [[max(value - ci[0], 0)], [max(ci[1] - value, 0)]]
        ax.barh(y, max(value, 0.005), color=colour, xerr=err, capsize=3)
        right = max(value, ci[1] if ci else value, 0.005)
        ax.text(min(right, 1.0) + 0.015, y, f"{value:.3f}", va="center", fontsize=7)
    ax.set_yticks(ys, [r[0] for r in rows], fontsize=7)
    ax.set_xlim(0, 1.15)
    ax.set_title(f"{name}: guard (green, 95% interval) vs the papers' figures (grey)", fontsize=9, wrap=True)
    fig.tight_layout()
    path = plot_dir / f"{name}-papers.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
