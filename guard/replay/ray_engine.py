"""The Ray engine: Ray Data streams the log shards to a pool of actors, one ``Guard`` per actor.

The logs are read by a file-based Ray Data datasource that streams each file in blocks of lines
(never a whole file in memory; a byte that is not UTF-8 is replaced, so the line fails to parse and
is counted like any malformed line). Each file is one read task, so a log split into shards (one
file per writer, per hour...) is read in parallel. ``map_batches`` hands batches of lines to a
fixed pool of ``workers`` actors; each keeps one ``Replayer`` (its guards and their caches) for its
lifetime and answers a batch with the batch's ``Diff``; the driver merges the diffs as they come
(``Diff.merge`` is order-free, so the result is the local engine's). The first pass, which
collects the tool and toolset lines, runs in the driver for logs up to ``CATALOG_IN_DRIVER_BYTES``
and on Ray Data's read tasks above.

Sizing: the read tasks and the actors share the CPUs Ray sees. With one whole CPU per actor and as
many actors as CPUs, no CPU is left for a read task and the pipeline stalls, so each read task asks
for ``READ_CPUS`` and the actors share what is left (at most one CPU each). The per-row work reads
plain Python strings (``to_pylist`` of an Arrow column), never numpy scalars.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from guard.policy import Policy
from guard.replay.core import COUNTED_ONLY, Catalog, Diff, Replayer, catalog_candidate, catalog_entry, replay_policy

#: The CPU share each read task asks for.
READ_CPUS = 0.25
#: Lines per block a read task yields, and per batch an actor gets.
BLOCK_LINES = 2048
BATCH_LINES = 512
_CHUNK_BYTES = 1 << 20
#: The catalog pass sends a repeated tool or toolset line once per file (the driver would parse it
#: again for nothing: a digest's first description stays); it remembers at most this many lines.
_SENT_LINES = 65_536
_CATALOG_PREFIXES = tuple(p for p in COUNTED_ONLY if '"tool' in p)  # the tool and toolset lines
#: The catalog pass over logs up to this size runs in the driver, which reads the files itself (it
#: sees them: the command checks they exist), parsing each distinct tool line once: about 3 s per
#: GB on this project's machine, where Ray Data's read tasks took 10 s to start and read 0.7 GB.
#: Larger logs are read by Ray Data's read tasks, in parallel across the cluster.
CATALOG_IN_DRIVER_BYTES = 4 << 30


def _ray() -> Any:
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the tests install it
        from guard.extras import install_hint

        raise ImportError(f"--engine ray needs Ray Data: {install_hint('replay')}") from exc
    return ray


def _datasource(paths: list[str], catalog_only: bool) -> Any:
    from ray.data.datasource.file_based_datasource import FileBasedDatasource

    class LogLines(FileBasedDatasource):
        """The lines of decision-log files, streamed in blocks (``text`` column)."""

        def _read_stream(self, f: Any, path: str) -> Iterator[Any]:
            import pyarrow as pa

            rest, lines = b"", []
            sent: set[str] = set()  # the catalog pass: tool lines already sent (a file may repeat them)

            def sent_as(text: str) -> str | None:
                """What a (non-blank) line is sent as, None for not at all. The catalog pass sends
                tool and toolset lines, each once. The replay pass sends the writer's own tool,
                toolset and outcome lines (half of a log's bytes) as the prefix the replayer
                counts them by, and reads nothing else of: the same count, without the bytes."""
                if not catalog_only:
                    stripped = text.strip()
                    return next((p for p in COUNTED_ONLY if stripped.startswith(p)), text)
                if not catalog_candidate(text) or text in sent:
                    return None
                if text.startswith(_CATALOG_PREFIXES) and len(sent) < _SENT_LINES:
                    sent.add(text)
                return text

            while True:
                chunk = f.read(_CHUNK_BYTES)
                if not chunk:
                    break
                parts = (rest + chunk).split(b"\n")
                rest = parts.pop()
                for part in parts:
                    text = part.decode("utf-8", "replace")
                    if text.strip() and (line := sent_as(text)) is not None:
                        lines.append(line)
                if len(lines) >= BLOCK_LINES:
                    yield pa.table({"text": lines})
                    lines = []
            if rest.strip():
                text = rest.decode("utf-8", "replace")
                if (line := sent_as(text)) is not None:
                    lines.append(line)
            if lines:
                yield pa.table({"text": lines})

    return LogLines(paths)


class _ReplayActor:
    """One actor of the pool: one Replayer for its lifetime."""

    def __init__(self, policy: dict[str, Any], baseline: dict[str, Any] | None, catalog: list[Any]) -> None:
        import ray

        data = ray.get(catalog[0])
        self.replayer = Replayer(
            Policy.model_validate(policy), Catalog(data["tools"], data["toolsets"]),
            Policy.model_validate(baseline) if baseline is not None else None,
        )

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        diff = Diff()
        for line in batch.column("text").to_pylist():
            self.replayer.line(line, diff)
        return pa.table({"diff": [json.dumps(diff.state())]})


def run_ray(
    paths: Sequence[Path],
    policy: Policy,
    baseline: Policy | None = None,
    *,
    workers: int = 2,
    address: str | None = None,
    num_cpus: int | None = None,
) -> Diff:
    """Replay with Ray: join the cluster at ``address``, or start a local one (``num_cpus``,
    default every core) that stops when the replay ends."""
    ray = _ray()
    started = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": "warning"}
        if address:
            ray.init(address=address, **kwargs)
        else:
            # Ray runs its workers at niceness 15 (to keep its own daemons responsive), so on a
            # machine shared with other work the actors would starve; Ray's job submission runs
            # them at 0, as a command that owns its cluster does here.
            os.environ.setdefault("RAY_worker_niceness", "0")
            ray.init(num_cpus=num_cpus or os.cpu_count() or 1, **kwargs)
            started = True
    try:
        return _run(ray, [str(Path(p).resolve()) for p in paths], policy, baseline, workers)
    finally:
        if started:
            ray.shutdown()


def _run(ray: Any, files: list[str], policy: Policy, baseline: Policy | None, workers: int) -> Diff:
    from ray.data import DataContext

    ctx = DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    # one block stream per file: left to choose, Ray Data would read a file whole to split it into blocks
    blocks = len(files)
    if sum(os.path.getsize(f) for f in files) <= CATALOG_IN_DRIVER_BYTES:
        from guard.replay.local import catalog_of

        catalog = catalog_of([Path(f) for f in files])
    else:
        catalog = Catalog()
        for row in ray.data.read_datasource(_datasource(files, True), num_cpus=READ_CPUS, override_num_blocks=blocks).iter_rows():
            catalog.add(catalog_entry(row["text"]))
    catalog_ref = ray.put(catalog.to_json())
    cpus = float(ray.cluster_resources().get("CPU", 1.0))
    actor_cpus = max(0.1, min(1.0, (cpus - READ_CPUS) / workers))
    diffs = ray.data.read_datasource(_datasource(files, False), num_cpus=READ_CPUS, override_num_blocks=blocks).map_batches(
        _ReplayActor,
        fn_constructor_kwargs={
            "policy": replay_policy(policy).model_dump(mode="json"),
            "baseline": replay_policy(baseline).model_dump(mode="json") if baseline is not None else None,
            "catalog": [catalog_ref],
        },
        batch_size=BATCH_LINES,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=workers),
        num_cpus=actor_cpus,
    )
    total = Diff()
    for row in diffs.iter_rows():
        total.merge(Diff.from_state(json.loads(row["diff"])))
    return total
