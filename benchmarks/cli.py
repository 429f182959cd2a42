"""``guard bench``: run suites through the guarded graph, and compare two runs (the CI gate)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import typer

from guard_bench.suites import SUITES

app = typer.Typer(help="Replay tool-use error datasets through the guarded graph.", no_args_is_help=True)

SAMPLES = Path(__file__).parent / "samples"
_SUITE_LIST = "suites: " + ", ".join(SUITES)


def default_data_dir() -> Path:
    """Where a run reads its data when ``--data-dir`` is not given: ``$GUARD_DATA_DIR``; else
    ``../shared/datasets`` when it exists (from the working folder or beside the project); else
    the folder ``guard bench fetch`` writes to by default, when it holds any suite's files; else the
    bundled samples."""
    from guard_bench import fetch

    if os.environ.get(fetch.DATA_DIR_ENV):
        return fetch.default_dest()
    for candidate in (Path("../shared/datasets"), Path(__file__).resolve().parents[2] / "shared" / "datasets"):
        if candidate.is_dir():
            return candidate
    fetched = fetch.default_dest()
    if fetched.is_dir() and any(p.is_dir() for p in fetched.iterdir()):
        return fetched
    return SAMPLES


_DATA_HELP = ("datasets folder (default: $GUARD_DATA_DIR, else a datasets folder beside the project, else what "
              "guard bench fetch wrote, else the bundled samples)")


@app.command()
def fetch(
    suites: list[str] | None = typer.Argument(None, help="suites whose data to download, or all (default: all); " + _SUITE_LIST,
                                              metavar="SUITE"),
    dest: Path | None = typer.Option(None, help="where to lay the files out (default: $GUARD_DATA_DIR, else $XDG_CACHE_HOME/guard/datasets, ~/.cache/guard/datasets)"),
    allow_unpinned: bool = typer.Option(False, "--allow-unpinned", help="also download sources with no pinned sha256 (BFCL, Tool-Reflection-Bench), unchecked"),
) -> None:
    """Download the public datasets at pinned revisions, check every file's sha256, and lay them out as the loaders read them.

    Sources, revisions, licences and layouts: docs/datasets.md. GUARD_DATA_MIRROR=URL reads archives
    from URL/codeload/OWNER/REPO/tar.gz/REV and files from URL/raw/OWNER/REPO/REV/PATH instead of GitHub."""
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import Progress

    from guard_bench import fetch as fetch_mod

    console = Console(stderr=True)
    names = suites or ["all"]
    _check_suites(names)
    target = dest or fetch_mod.default_dest()
    if target.exists() and not target.is_dir():
        typer.echo(f"error: --dest {target} is not a folder", err=True)
        raise typer.Exit(2)
    try:
        lock = fetch_mod.load_lock()
        sources = fetch_mod.sources_for(names)
    except (OSError, ValueError, KeyError) as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(2) from exc
    out = Console(highlight=False, soft_wrap=True)
    wrote = 0
    failed = []
    for name in (list(SUITES) if "all" in names else names):
        if name in fetch_mod.NOT_FETCHED:
            console.print(f"[yellow]note[/] {name}: {fetch_mod.NOT_FETCHED[name]}", highlight=False)
    for source in sources:
        if source.key not in lock and not allow_unpinned:
            console.print(f"[yellow]skip[/] {source.key}: no sha256 pinned (this project had only a few records of it); "
                          "--allow-unpinned downloads it unchecked", highlight=False)
            continue
        try:
            with Progress(console=console, transient=True, disable=not console.is_terminal) as bar:
                task = bar.add_task(source.key, total=None)
                done = fetch_mod.fetch_source(source, target, lock, allow_unpinned=allow_unpinned,
                                              progress=lambda n, total, task=task: bar.update(task, completed=n, total=total))
        except (fetch_mod.FetchError, OSError) as exc:
            console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False)
            failed.append(source.key)
            continue
        wrote += 1
        out.print(f"{source.key}: {done.files} files, {_size_text(done.bytes)}, {done.status} "
                  f"({source.repo}@{source.revision}) -> {done.dest}", markup=False)
        if source.key not in lock:
            for rel, digest in sorted(done.hashes.items()):
                console.print(f"  sha256 {digest}  {rel}", highlight=False)
    if failed:
        console.print(f"[red]{len(failed)} source(s) failed:[/] {', '.join(failed)} (nothing of them was written)")
        raise typer.Exit(1)
    if wrote:
        data_opt = "" if default_data_dir().resolve() == target.resolve() else f" --data-dir {shlex.quote(str(target))}"
        out.print(f"next: guard bench run {' '.join(dict.fromkeys(names))}{data_opt}", markup=False)


def _size_text(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.1f} kB"


def _check_suites(names: list[str]) -> None:
    """Exit 2 with the suite list and a did-you-mean for a name that is no suite."""
    import difflib

    from guard_bench.suites import SUITES

    for name in names:
        if name != "all" and name not in SUITES:
            close = difflib.get_close_matches(name, [*SUITES, "all"], n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            typer.echo(f"error: unknown suite {name}{hint}; choose from: all, {', '.join(SUITES)}", err=True)
            raise typer.Exit(2)


@app.command()
def run(
    suites: list[str] = typer.Argument(..., help="one or more suite names, or all; " + _SUITE_LIST, metavar="SUITE"),
    data_dir: Path | None = typer.Option(None, help=_DATA_HELP),
    split: str = typer.Option("test", help="dev, test or all"),
    policy: Path | None = typer.Option(None, help="policy YAML (default: the built-in policy)"),
    agent: str = typer.Option("reference", help="reference | recorded:FILE | live:PROVIDER:MODEL"),
    out: Path = typer.Option(Path("bench-out"), help="folder for results.json, cases.jsonl, report.md, plots/"),
    limit: int | None = typer.Option(None, help="at most N cases per suite (after the split)"),
    semantic: bool = typer.Option(False, help="add the embedding checks with the policy's checks.semantic thresholds (needs the semantic extra)"),
    warm: bool = typer.Option(False, help="with --semantic: each model turn warms the guard (Guard.warm) and lasts until the warm-up is done, as a real model's turn outlasts it; results.json gives the warm-ups' cost (semantic.warm_ms). Default: cold decisions"),
    judge: str | None = typer.Option(None, help="PROVIDER:MODEL: an LLM judge (init_chat_model) asked when the cheaper checks are unsure, with the policy's checks.judge bands; each suite also runs without it"),
    decision_log: Path | None = typer.Option(None, help="append every decision to this decision log (docs/decision-log.md), as a policy's log: section would: guard replay reads it"),
) -> None:
    """Run SUITE (several, or all) and write results.json, cases.jsonl, report.md and plots."""
    from rich.console import Console
    from rich.markup import escape

    from guard_bench.agents import AgentSource
    from guard_bench.execute import SPLITS, run_suites
    from guard_bench.suites import SUITES
    from guard_bench.suites import suite as load_suite
    from guard.policy import Policy, PolicyError

    console = Console(stderr=True)
    _check_suites(suites)
    if split not in SPLITS:
        raise typer.BadParameter("split must be dev, test or all")
    names = list(SUITES) if "all" in suites else list(dict.fromkeys(suites))
    suite = "all" if "all" in suites else ",".join(names)
    try:
        modules = [load_suite(n) for n in names]
        pol = Policy.from_yaml(policy) if policy else Policy()
        if decision_log is not None:
            from guard.decision_log import LogConfig

            pol = pol.model_copy(update={"log": LogConfig(path=str(decision_log))})
        agents = AgentSource(agent)
        matcher = _semantic(pol) if semantic else None
        judged = _judge(judge, pol) if judge else None
    except (KeyError, PolicyError, ValueError, OSError, ImportError) as exc:
        console.print(f"[red]error:[/] {escape(str(exc.args[0] if isinstance(exc, KeyError) else exc))}", highlight=False)
        raise typer.Exit(2) from exc
    data = data_dir or default_data_dir()
    command = "guard bench " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    if run_suites(suite, dict(zip(names, modules)), data, split, pol, agents, out, command,
                  console=console, agent=agent, limit=limit, semantic=matcher, judge=judged, warm=warm) is None:
        raise typer.Exit(1)


def _judge(spec: str, policy: Any) -> object:
    """The LLM judge for ``--judge PROVIDER:MODEL``, its model resolved now: a missing provider
    package or API key fails the command before any case runs, not every question after."""
    from guard.checks.judge import Judge

    judge = Judge(spec, policy.checks.judge)
    _ = judge.model  # resolved here, once
    return judge


def _semantic(policy: Any) -> object:
    """The embedding checks with the policy's thresholds (``checks.semantic``), enabled or not."""
    from guard.semantic import semantic_for

    return semantic_for(policy.checks.semantic)


@app.command()
def calibrate(
    suite: str = typer.Argument(..., help="a suite name, or all; " + _SUITE_LIST),
    data_dir: Path | None = typer.Option(None, help=_DATA_HELP),
    split: str = typer.Option("dev", help="dev (the only split calibration may look at; test and all are refused)"),
    policy: Path | None = typer.Option(None, help="base policy YAML (default: the built-in policy)"),
    semantic: bool = typer.Option(False, help="run the embedding checks and sweep their thresholds too (needs the semantic extra)"),
    out_policy: Path = typer.Option(Path("calibrated-policy.yaml"), help="where to write the calibrated policy"),
    out: Path = typer.Option(Path("bench-out/calibration"), help="folder for calibration.json (every sweep point) and calibration.png"),
    limit: int | None = typer.Option(None, help="at most N cases per suite (after the split)"),
    max_false_alarms: float | None = typer.Option(None, min=0, max=1, help="ceiling on the false-alarm rate on clean cases"),
) -> None:
    """Sweep the policy's thresholds on the dev split, one at a time, and write the best into a policy file."""
    from guard_bench.calibrate import calibrate as sweep_thresholds
    from guard.policy import PolicyError

    _check_suites([suite])
    command = "guard bench " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    try:
        done = sweep_thresholds(suite, data_dir or default_data_dir(), split=split, policy_path=policy, semantic=semantic,
                                out_policy=out_policy, out=out, limit=limit, max_false_alarms=max_false_alarms,
                                command=command, echo=typer.echo)
    except (KeyError, PolicyError, ValueError, OSError, ImportError) as exc:
        typer.echo(f"error: {exc.args[0] if isinstance(exc, KeyError) else exc}", err=True)
        raise typer.Exit(2) from exc
    if done is None:
        raise typer.Exit(1)


@app.command()
def transfer(
    suite: str = typer.Argument(..., help="the suite to measure, or all; " + _SUITE_LIST),
    data_dir: Path | None = typer.Option(None, help=_DATA_HELP),
    policy: Path | None = typer.Option(None, help="base policy YAML (default: the built-in policy)"),
    semantic: bool = typer.Option(False, help="run the embedding checks and sweep their thresholds too (needs the semantic extra)"),
    own: bool = typer.Option(False, help="also calibrate on the suite's own dev split, for the column beside"),
    limit: int | None = typer.Option(None, help="at most N cases per suite and split, taken evenly across the suite"),
    max_false_alarms: float | None = typer.Option(None, min=0, max=1, help="ceiling on the false-interrupt rate on clean cases"),
    out: Path = typer.Option(Path("bench-out/transfer"), help="folder for transfer.json and transfer.md"),
) -> None:
    """Calibrate the thresholds on every OTHER suite's dev split and measure them on SUITE's test split."""
    from guard_bench import transfer as transfer_mod
    from guard_bench.suites import SUITES
    from guard_bench.suites import suite as load_suite
    from guard.policy import Policy, PolicyError

    _check_suites([suite])
    command = "guard bench " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    try:
        targets = list(SUITES) if suite == "all" else [load_suite(suite).NAME]
        base = Policy.from_yaml(policy) if policy else Policy()
        if semantic:
            _semantic(base)  # a missing extra fails before any case runs
        run_data = transfer_mod.transfer(targets, data_dir or default_data_dir(), base=base, semantic=semantic, limit=limit,
                                         max_false_alarms=max_false_alarms, own=own, echo=typer.echo)
    except (KeyError, PolicyError, ValueError, OSError, ImportError) as exc:
        typer.echo(f"error: {exc.args[0] if isinstance(exc, KeyError) else exc}", err=True)
        raise typer.Exit(2) from exc
    if not run_data["suites"]:
        typer.echo("no suite had data to measure", err=True)
        raise typer.Exit(1)
    transfer_mod.write(run_data, out, command)
    typer.echo(f"wrote {out / 'transfer.json'}, {out / 'transfer.md'}")


@app.command()
def results(
    data_dir: Path | None = typer.Option(None, help=_DATA_HELP),
    out: Path = typer.Option(Path("bench-out/results"), help="run folders: OUT/rule and OUT/semantic"),
    page: Path | None = typer.Option(None, help="the page to write (default: benchmarks/RESULTS.md)"),
    policy: Path | None = typer.Option(None, help="policy YAML (default: the built-in policy)"),
    no_semantic: bool = typer.Option(False, "--no-semantic", help="the rule-only run only"),
    from_runs: bool = typer.Option(False, "--from-runs", help="render from the run folders already in OUT, without running"),
) -> None:
    """Run every suite's test split rule-only and with --semantic, then regenerate RESULTS.md from both."""
    from rich.console import Console

    from guard_bench import results_page
    from guard_bench.suites import SUITES
    from guard_bench.suites import suite as load_suite
    from guard.policy import PolicyError

    console = Console(stderr=True)
    options = [("--data-dir", data_dir), ("--out", out), ("--page", page), ("--policy", policy)]
    command = shlex.join(["guard", "bench", "results", *[str(a) for o, v in options if v is not None for a in (o, v)],
                          *(["--no-semantic"] if no_semantic else []), *(["--from-runs"] if from_runs else [])])
    target = page or results_page.PAGE
    try:
        if not from_runs:
            modules = {n: load_suite(n) for n in SUITES}
            results_page.run_both(modules, data_dir or default_data_dir(), out, policy_path=policy,
                                  semantic=not no_semantic, console=console)
        results_page.write_page(out, target, semantic=not no_semantic, command=command)
    except (PolicyError, ValueError, OSError, ImportError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    console.print(f"wrote {target}")


@app.command()
def compare(
    old: Path = typer.Argument(..., help="results.json of the baseline run"),
    new: Path = typer.Argument(..., help="results.json of the candidate run"),
    max_drop: float = typer.Option(0.01, help="largest allowed drop of any precision or recall"),
) -> None:
    """Print a Markdown diff per label; exit 1 when a precision or recall drops by more than --max-drop."""
    from guard_bench.compare import compare as diff

    try:
        a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (old, new))
    except (OSError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    table, regressions = diff(a, b, max_drop)
    typer.echo(table)
    if regressions:
        typer.echo("\nRegressions beyond --max-drop:\n" + "\n".join(f"- {r}" for r in regressions))
        raise typer.Exit(1)
    typer.echo(f"\nNo precision or recall dropped by more than {max_drop}.")


@app.command()
def rules(
    runs: list[Path] = typer.Argument(..., help="run folders (each with the cases.jsonl of a guard bench run: a dev and a test run, or one --split all run)"),
    out: Path | None = typer.Option(None, help="also write FILE.json and FILE.md (default: print the Markdown only)"),
) -> None:
    """Where each rule fires (clean cases, interrupts, positives) per split, and the calibration of the findings' confidence."""
    from guard_bench.rules import markdown, report

    try:
        rep = report(runs)
    except OSError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    text = markdown(rep)
    typer.echo(text)
    if out is not None:
        out.with_suffix(".json").write_text(json.dumps(rep, indent=2), encoding="utf-8")
        out.with_suffix(".md").write_text(text + "\n", encoding="utf-8")
        typer.echo(f"wrote {out.with_suffix('.json')}, {out.with_suffix('.md')}")
