"""Smoke test of ``benchmarks/throughput.py``: every cell runs (both modes, both stores, a real
redis-server and a real uvicorn) with tiny numbers, every decision is the expected allow, and the
table, the verdicts and the JSON rows come out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guard_bench import throughput


def test_throughput_runs_every_cell(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rows.json"
    rows = throughput.main(
        ["--requests", "15", "--seconds", "0.5", "--warmup", "2", "--clients", "1", "2", "--json", str(out)]
    )

    cells = {(r["mode"], r["store"], r["clients"]) for r in rows}
    assert cells == {(m, s, c) for m in throughput.MODES for s in throughput.STORES for c in (1, 2)}
    for row in rows:
        assert row["errors"] == 0, row
        assert 0 < row["decisions"] <= 15, row
        assert row["decisions_per_s"] > 0 and 0 < row["p50_ms"] <= row["p99_ms"], row
    assert json.loads(out.read_text(encoding="utf-8")) == rows

    printed = capsys.readouterr().out
    assert "| mode | store | clients | decisions/s | p50 ms | p99 ms |" in printed
    assert "Redis adds under 1 ms p99 per decision:" in printed
    assert "the service holds >= 500 decisions/s" in printed
