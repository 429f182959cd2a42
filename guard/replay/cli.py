"""``guard replay``: the command (registered in ``guard.cli``)."""

from __future__ import annotations

from pathlib import Path

import typer


def replay_command(
    logs: list[str] = typer.Argument(..., help="decision logs: files, folders of *.jsonl shards, or glob patterns"),
    policy: Path = typer.Option(..., help="the new policy to re-decide every logged call under"),
    baseline: Path | None = typer.Option(
        None, help="the old policy, re-decided too (default: compare with the decisions as logged)"
    ),
    engine: str = typer.Option("local", help="local (one process) or ray"),
    workers: int = typer.Option(2, min=1, help="Ray actors (each holds one Guard)"),
    address: str | None = typer.Option(None, help="join this Ray cluster (default: start a local one for the command)"),
    out: Path = typer.Option(Path("replay-out"), help="folder for diff.json and run.json"),
    max_new_interrupts: float | None = typer.Option(
        None, min=0, max=1, help="exit 1 when the share of calls newly interrupted (asked about) exceeds this: the CI gate"
    ),
) -> None:
    """Re-decide every logged call under a new policy and write what would change: DIR/diff.json,
    DIR/report.html and DIR/run.json (docs/decision-log.md).

    \b
    Exit code: 0 done; 1 the share of newly interrupted calls is over --max-new-interrupts;
    2 a policy that cannot be read, or a log that is not there."""
    from guard.policy import Policy, PolicyError
    from guard.replay import replay, write_outputs

    if engine not in ("local", "ray"):
        raise typer.BadParameter("engine must be local or ray")
    try:
        new = Policy.from_yaml(policy)
        old = Policy.from_yaml(baseline) if baseline is not None else None
        run = replay(logs, new, old, engine=engine, workers=workers, address=address)  # type: ignore[arg-type]
    except (PolicyError, FileNotFoundError, ImportError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    written = write_outputs(run, out)
    r = run.report
    typer.echo(
        f"{r['decisions']} decisions replayed ({run.engine}, {run.workers} worker{'s' * (run.workers > 1)}, "
        f"{run.seconds:.1f} s, {run.decisions_per_second:,.0f}/s): {r['changed']} changed, "
        f"{r['newly_interrupted']} newly interrupted ({r['rates']['newly_interrupted']:.2%}), "
        f"{r['no_longer_interrupted']} no longer interrupted"
    )
    if r["skipped"]:
        typer.echo("skipped lines: " + ", ".join(f"{k} {v}" for k, v in r["skipped"].items()))
    typer.echo("wrote " + ", ".join(str(p) for p in written))
    if max_new_interrupts is not None and r["rates"]["newly_interrupted"] > max_new_interrupts:
        typer.echo(
            f"FAIL: {r['rates']['newly_interrupted']:.2%} of calls newly interrupted, over the budget of {max_new_interrupts:.2%}",
            err=True,
        )
        raise typer.Exit(1)
