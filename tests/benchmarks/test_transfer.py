"""``guard bench transfer``: a suite's test split measured with thresholds calibrated on the dev
splits of the OTHER suites only (never a case of its own), beside the base policy."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from guard_bench import transfer
from guard_bench.calibrate import with_value
from guard_bench.suites import suite
from guard.cli import app
from guard.policy import Policy

SAMPLES = Path(__file__).resolve().parents[2] / "benchmarks" / "samples"


def test_the_thresholds_come_from_the_other_suites_dev_cases_only(monkeypatch):
    seen: list[dict[str, list[str]]] = []

    def fake_sweep(cases, base, **kw):
        seen.append({n: [c.split for c in batch] for n, batch in cases.items()})
        return with_value(base, "checks.preflight.min_relevance", 0.2), []

    monkeypatch.setattr(transfer, "sweep", fake_sweep)
    run = transfer.transfer(["fail-talms"], SAMPLES, own=True, echo=lambda _m: None)
    own, others = seen  # the own-dev sweep first, then the others'
    assert list(own) == ["fail-talms"] and "fail-talms" not in others and len(others) >= 4
    assert {s for splits in [*own.values(), *others.values()] for s in splits} == {"dev"}
    entry = run["suites"]["fail-talms"]
    test_ids = [c.id for c in suite("fail-talms").load(SAMPLES) if c.split == "test"]
    assert entry["base"]["n_cases"] == entry["other_dev"]["n_cases"] == len(test_ids)
    assert entry["base"]["knobs"]["checks.preflight.min_relevance"] == Policy().checks.preflight.min_relevance
    assert entry["other_dev"]["knobs"]["checks.preflight.min_relevance"] == 0.2
    assert entry["other_dev"]["policy_sha256"] != entry["base"]["policy_sha256"]
    fi = entry["other_dev"]["false_interrupt_rate"]
    assert set(fi) == {"value", "k", "n", "ci95"} and fi["n"] == sum(1 for i in test_ids if i.startswith("Original/"))
    assert set(entry["other_dev"]["paper_ci95"]) == set(entry["other_dev"]["paper_metrics"])
    md = transfer.markdown(run, "cmd")
    assert "| false_interrupt_rate |" in md and "| `checks.preflight.min_relevance` | " in md


def test_the_command_writes_json_and_table(tmp_path):
    out = tmp_path / "tr"
    res = CliRunner().invoke(app, ["bench", "transfer", "bfcl", "--data-dir", str(SAMPLES), "--limit", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads((out / "transfer.json").read_text())
    assert "bfcl" not in data["suites"]["bfcl"]["calibrated_on"] and data["suites"]["bfcl"]["calibrated_on"]
    assert "## bfcl" in (out / "transfer.md").read_text()
    assert CliRunner().invoke(app, ["bench", "transfer", "nope", "--data-dir", str(SAMPLES)]).exit_code == 2


def test_a_limit_spreads_over_the_whole_suite():
    cases = list(range(10))
    assert transfer.spread(cases, 4) == [0, 2, 5, 7] and transfer.spread(cases, None) == cases
    assert transfer.spread(cases, 20) == cases
