"""One benchmark run: the suites' cases of a split through the runner, and what a run writes.

``guard bench run`` is a thin command over ``run_suites``; ``guard bench results`` calls the same
function twice (rule-only and with the embedding checks), and ``guard bench calibrate`` selects its
cases with ``select_cases``, so the three can never disagree on which cases a split holds or on
what ``results.json`` says.
"""

from __future__ import annotations

import time
from pathlib import Path
from types import ModuleType
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress

from guard_bench import html_report, report
from guard_bench.cli import SAMPLES
from guard_bench.agents import AgentSource
from guard_bench.cases import Loaded
from guard_bench.runner import CaseResult, judge_off, run_cases
from guard.policy import Policy

SPLITS = ("dev", "test", "all")


def select_cases(module: ModuleType, data: Path, split: str, limit: int | None = None) -> Loaded:
    """A suite's cases in ``split`` (``all``: both), at most ``limit`` of them, in load order, with
    the count of records its loader could not read (``Loaded.skipped``)."""
    loaded = module.load(data)
    cases = [c for c in loaded if split == "all" or c.split == split][: limit or None]
    return Loaded(cases, getattr(loaded, "skipped", None))


def run_suites(
    suite: str,
    modules: dict[str, ModuleType],
    data: Path,
    split: str,
    policy: Policy,
    agents: AgentSource,
    out: Path,
    command: str,
    *,
    console: Console,
    agent: str = "reference",
    limit: int | None = None,
    semantic: Any = None,
    judge: Any = None,
    warm: bool = False,
) -> dict[str, Any] | None:
    """Run each suite in ``modules`` (``suite`` is what was asked for: one suite, ``all``, or several
    names joined by commas: anything but one suite's name writes one object per suite under ``suites``) and
    write ``results.json``, ``cases.jsonl``, ``report.md`` and ``plots/`` under ``out``.

    Returns what ``results.json`` holds, or None (after saying so) when no suite had data. A suite
    whose files are missing is skipped with a line, so ``all`` runs whatever is there. With a
    ``judge`` (``guard.checks.judge.Judge``) each suite also runs without it, for the figures beside.
    """
    out.mkdir(parents=True, exist_ok=True)
    clean_out(out)
    data_info = report.data_info(data, SAMPLES)
    console.print(escape(f"data: {data}  split: {split}  policy: {policy.name} ({policy.sha256[:12]})  agent: {agent}"),
                  highlight=False)
    if data_info["bundled_samples"]:
        console.print("[yellow]bundled samples: a few self-made cases per suite, not comparable with the papers; "
                      "guard bench fetch downloads the real datasets (docs/datasets.md)[/]")
    per_suite: dict[str, dict[str, Any]] = {}
    all_results: list[CaseResult] = []
    for name, module in modules.items():
        if not module.available(data):
            console.print(f"[yellow]skip[/] {name}: {escape(missing_text(name, data))}", highlight=False, soft_wrap=True)
            continue
        if not data_info["bundled_samples"]:
            _say_incomplete(name, data, console)
        cases = select_cases(module, data, split, limit)
        judged = judge is not None or policy.checks.judge.enabled
        plain = run_cases(cases, judge_off(policy), agents, semantic=semantic) if judged else None  # the baseline, first
        start = time.perf_counter()
        with Progress(console=console, transient=True) as bar:
            task = bar.add_task(name, total=len(cases))
            results = run_cases(cases, policy, agents, progress=lambda _r, task=task: bar.advance(task), semantic=semantic, judge=judge,
                                warm=warm)
        seconds = time.perf_counter() - start
        per_suite[name] = report.suite_result(name, split, policy, results, module.paper_metrics(results), seconds,
                                              judge_model=judge.name if judge is not None else None,
                                              paper_fn=module.paper_metrics, skipped=cases.skipped)
        if plain is not None:
            per_suite[name]["without_judge"] = report.without_judge(plain, module.paper_metrics(plain))
        report.plots(out, name, results, per_suite[name]["paper_metrics"], per_suite[name]["paper_ci95"], module.PAPER)
        all_results += results
        errors = per_suite[name]["n_errors"]
        console.print(f"{name}: {len(results)} cases in {seconds:.1f} s" + (f", [red]{errors} errors[/]" if errors else "")
                      + f"; {report.false_interrupt_text(per_suite[name])}{report.skipped_text(per_suite[name])}")
        console.print("  " + "; ".join(f"{m} {report.fmt_ci(v, per_suite[name]['paper_ci95'].get(m))}"
                                       for m, v in per_suite[name]["paper_metrics"].items()), highlight=False)
    if not per_suite:
        console.print("[red]no suite had data to run[/]")
        return None
    run_data: dict[str, Any] = (
        {"suite": suite, "split": split, "policy": {"name": policy.name, "sha256": policy.sha256}, "suites": per_suite}
        if suite not in per_suite else dict(per_suite[suite])
    )
    run_data["data"] = data_info
    report.write_json(out / "results.json", run_data)
    report.write_cases(out / "cases.jsonl", all_results)
    figures = {n: m.PAPER for n, m in modules.items()}
    (out / "report.md").write_text(report.markdown(run_data, figures, command), encoding="utf-8")
    cases = [r.model_dump(mode="json") for r in all_results]
    (out / "report.html").write_text(html_report.render(run_data, figures, cases, command), encoding="utf-8")
    console.print(f"wrote {out / 'results.json'}, {out / 'cases.jsonl'}, {out / 'report.html'}, {out / 'plots'}/")
    print_headline(run_data, out / "report.md", console)
    return run_data


#: What a run writes under ``--out``; removed first, so no file of an earlier run is left beside the new ones.
OUTPUTS = ("results.json", "cases.jsonl", "report.md", "report.html")


def clean_out(out: Path) -> None:
    """Remove what an earlier run wrote under ``out`` (its files and plots), and nothing else."""
    for name in OUTPUTS:
        (out / name).unlink(missing_ok=True)
    plots = out / "plots"
    if plots.is_dir():
        for png in plots.glob("*.png"):
            png.unlink()


def _say_incomplete(name: str, data: Path, console: Console) -> None:
    """A line per source of the suite that is only partly in ``data`` (its figures would cover fewer cases)."""
    from guard_bench.fetch import incomplete

    try:
        partial = incomplete(name, data)
    except (OSError, ValueError, KeyError):
        return  # no lock to compare with: nothing to say
    for source, missing in partial:
        shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        console.print("[yellow]incomplete[/] " + escape(
            f"{name}: {len(missing)} file(s) of {source.title} are missing from {data} ({shown}); its figures cover "
            f"only what is there; guard bench fetch {name} --dest {data} restores them"), highlight=False, soft_wrap=True)


def missing_text(name: str, data: Path) -> str:
    """Why a suite is skipped: the files its loader expected under ``data``, and the command that gets them."""
    from guard_bench.fetch import SUITE_NEEDS

    needs = ", ".join(SUITE_NEEDS.get(name, ()))
    return f"its data files are not in {data} (expected: {needs}); get them with: guard bench fetch {name} --dest {data}"


def print_headline(run: dict[str, Any], report_path: Path, console: Console) -> None:
    """The headline figures per suite as a compact table on the terminal, and where the report is."""
    from rich.table import Table

    info = run.get("data") or {}
    title = "headline figures (95% intervals)" + (" - bundled samples, not comparable with the papers"
                                                  if info.get("bundled_samples") else "")
    table = Table("suite", "cases", "figure", "guard [95% interval]", title=title, title_justify="left")
    for row in report.headline(run):
        for i, (figure, value) in enumerate(row["figures"]):
            table.add_row(row["suite"] if i == 0 else "", str(row["cases"]) if i == 0 else "", figure, value,
                          end_section=i == len(row["figures"]) - 1)
    stdout = Console(highlight=False)
    stdout.print(table)
    stdout.print(f"report: {report_path}", soft_wrap=True, markup=False)
