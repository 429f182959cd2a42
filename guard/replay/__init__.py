"""``guard replay``: re-decide logged calls under a new policy and say what would change.

``replay(logs, policy, baseline=None, engine="local"|"ray")`` reads decision logs
(``guard.decision_log``, ``docs/decision-log.md``), re-decides every logged call under ``policy``
and compares each new decision with the logged one (or, with ``baseline``, with the baseline policy's
decision, re-made too). The local engine streams the files in one process; the Ray engine
(``guard.replay.ray_engine``) spreads them over a pool of actors with Ray Data. Both give the same
``diff.json`` (``Diff.report``).
"""

from __future__ import annotations

import glob
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from guard.policy import Policy
from guard.replay.core import Diff

__all__ = ["ReplayRun", "expand_logs", "replay", "write_outputs"]


@dataclass
class ReplayRun:
    """A finished replay: the diff, and how long it took (kept out of ``diff.json``, which must not
    depend on the machine)."""

    diff: Diff
    report: dict[str, Any]
    seconds: float
    engine: str
    workers: int

    @property
    def decisions_per_second(self) -> float:
        return self.report["decisions"] / self.seconds if self.seconds > 0 else 0.0


def expand_logs(logs: Sequence[str | Path]) -> list[Path]:
    """The files named: paths, folders (their ``*.jsonl`` files) and glob patterns, sorted and
    without repeats. A name that matches nothing is an error (a typo must not replay nothing)."""
    found: list[Path] = []
    for item in logs:
        text = str(item)
        path = Path(text)
        if path.is_dir():
            matches = sorted(path.glob("*.jsonl"))
        elif path.exists():
            matches = [path]
        else:
            matches = sorted(Path(p) for p in glob.glob(text))
        if not matches:
            raise FileNotFoundError(f"no decision log at {text!r}")
        found += matches
    return list(dict.fromkeys(found))


def replay(
    logs: Sequence[str | Path],
    policy: Policy,
    baseline: Policy | None = None,
    *,
    engine: Literal["local", "ray"] = "local",
    workers: int = 2,
    address: str | None = None,
    num_cpus: int | None = None,
) -> ReplayRun:
    paths = expand_logs(logs)
    start = time.perf_counter()
    if engine == "ray":
        from guard.replay.ray_engine import run_ray

        diff = run_ray(paths, policy, baseline, workers=workers, address=address, num_cpus=num_cpus)
    elif engine == "local":
        from guard.replay.local import run_local

        diff = run_local(paths, policy, baseline)
        workers = 1
    else:
        raise ValueError(f"unknown engine {engine!r} (local or ray)")
    seconds = time.perf_counter() - start
    meta = {
        "logs": [p.name for p in paths],
        "policy": {"name": policy.name, "sha256": policy.sha256},
        "baseline": {"name": baseline.name, "sha256": baseline.sha256} if baseline is not None else "logged",
    }
    return ReplayRun(diff, diff.report(meta), seconds, engine, workers)


def write_outputs(run: ReplayRun, out: Path) -> list[Path]:
    """``out/diff.json`` (engine-independent), ``out/report.html`` (the same, for a reader) and
    ``out/run.json`` (engine, workers, time, rate)."""
    out.mkdir(parents=True, exist_ok=True)
    diff_path = out / "diff.json"
    diff_path.write_text(json.dumps(run.report, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    from guard.replay.report import render

    html_path = out / "report.html"
    html_path.write_text(render(run.report), encoding="utf-8")
    run_path = out / "run.json"
    run_path.write_text(json.dumps({
        "engine": run.engine, "workers": run.workers, "seconds": round(run.seconds, 3),
        "decisions": run.report["decisions"], "decisions_per_second": round(run.decisions_per_second, 1),
    }, indent=2) + "\n", encoding="utf-8")
    return [diff_path, html_path, run_path]
