"""The Ray engine gives the local engine's ``diff.json``, on a real local Ray cluster (2 CPUs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guard.policy import Policy
from guard.replay import replay, write_outputs

ray = pytest.importorskip("ray", reason="the replay extra (Ray Data) is part of the dev extra")


def shards(log: Path, folder: Path, n: int = 3) -> list[Path]:
    """The log dealt line by line into ``n`` shards: most decisions land in another shard than
    the descriptions of their tools, as when several writers append to their own files."""
    folder.mkdir()
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    paths = [folder / f"shard-{i}.jsonl" for i in range(n)]
    for i, path in enumerate(paths):
        path.write_text("".join(lines[i::n]) + "not json: counted, never a crash\n", encoding="utf-8")
    return paths


def test_ray_and_local_write_the_same_diff_json(bench_log: Path, tmp_path: Path) -> None:
    paths = shards(bench_log, tmp_path / "shards")
    new, old = Policy.model_validate({"actions": {"unknown_tool": "ask_human"}}), Policy()
    local = replay(paths, new, old)
    on_ray = replay(paths, new, old, engine="ray", workers=2, num_cpus=2)
    assert on_ray.report == local.report
    assert local.report["changed"] > 0 and local.report["skipped"] == {"malformed_json": 3}
    write_outputs(local, tmp_path / "local")
    write_outputs(on_ray, tmp_path / "ray")
    assert (tmp_path / "ray" / "diff.json").read_bytes() == (tmp_path / "local" / "diff.json").read_bytes()
    assert json.loads((tmp_path / "ray" / "run.json").read_text())["engine"] == "ray"
    assert not ray.is_initialized()  # the cluster the command started is gone with it


def test_a_catalog_pass_on_ray_data_gives_the_same_diff_json(bench_log: Path, tmp_path: Path, monkeypatch) -> None:
    """Logs larger than ``CATALOG_IN_DRIVER_BYTES`` have their tool lines collected by Ray Data's
    read tasks instead of the driver: the same catalog, the same diff."""
    from guard.replay import ray_engine

    monkeypatch.setattr(ray_engine, "CATALOG_IN_DRIVER_BYTES", 0)
    paths = shards(bench_log, tmp_path / "shards")
    new = Policy.model_validate({"actions": {"unknown_tool": "ask_human"}})
    assert replay(paths, new, engine="ray", workers=2, num_cpus=2).report == replay(paths, new).report
