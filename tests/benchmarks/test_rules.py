"""The rules report: firing counts per rule and split, and the calibration of confidence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from guard_bench.rules import calibration, markdown, report, rule_counts
from guard.cli import app


def finding(category: str, rule: str, confidence: float, check: str = "grounding") -> dict[str, Any]:
    return {"category": category, "rule": rule, "check": check, "confidence": confidence}


def case(split: str, label: str, flagged: bool, *findings: dict[str, Any]) -> dict[str, Any]:
    return {"split": split, "expected": {"label": label}, "flagged": flagged, "findings": list(findings)}


UNGROUNDED = finding("ungrounded_value", "ungrounded", 0.9)
MISSING = finding("missing_argument", "required", 1.0, "preflight")
CASES = [
    case("dev", "ok", True, UNGROUNDED),  # a false interrupt by this rule alone
    case("dev", "ok", True, UNGROUNDED, MISSING),  # a false interrupt with another rule
    case("dev", "ok", False, finding("ungrounded_value", "ungrounded", 0.6)),  # fired, only warned
    case("dev", "missing_information", True, UNGROUNDED),  # a hit
    case("dev", "invalid_argument", True, UNGROUNDED),  # a positive of another label
    case("test", "missing_information", True, MISSING),
    case("test", "ok", False),
]


def test_rule_counts_separate_clean_interrupts_sole_causes_hits_and_others():
    counts = rule_counts(CASES)
    assert dict(counts["grounding/ungrounded_value/ungrounded"]["dev"]) == {"clean": 3, "clean_interrupts": 2, "sole": 1, "hits": 1, "other": 1}
    assert dict(counts["preflight/missing_argument/required"]["dev"]) == {"clean": 1, "clean_interrupts": 1}
    assert dict(counts["preflight/missing_argument/required"]["test"]) == {"hits": 1}
    assert "test" not in counts["grounding/ungrounded_value/ungrounded"]


def test_calibration_compares_each_confidence_with_the_share_of_findings_that_were_right():
    cal = calibration(c for c in CASES if c["split"] == "dev")
    rows = {r["confidence"]: r for r in cal["levels"]}
    assert cal["findings"] == 6
    assert (rows[0.9]["findings"], rows[0.9]["right"]) == (4, 1)
    assert (rows[1.0]["findings"], rows[1.0]["right"]) == (1, 0)
    assert (rows[0.6]["findings"], rows[0.6]["right"]) == (1, 0)
    # findings-weighted |share right - confidence|: (4 * |0.25 - 0.9| + 1 * |0 - 1| + 1 * |0 - 0.6|) / 6
    assert cal["ece"] == pytest.approx((4 * 0.65 + 1.0 + 0.6) / 6)


def test_a_perfectly_calibrated_level_has_no_gap():
    cases = [case("dev", "missing_information", True, finding("missing_argument", "required", 0.5))] + [
        case("dev", "ok", True, finding("missing_argument", "required", 0.5))
    ]
    cal = calibration(cases)
    assert cal["ece"] == pytest.approx(0.0)


def write_run(folder: Path, cases: list[dict[str, Any]]) -> Path:
    folder.mkdir()
    lines = [json.dumps(c) for c in cases] + ["not json", "[1, 2]"]  # unreadable lines are skipped
    (folder / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_the_report_reads_several_runs_and_orders_rules_by_false_interrupts(tmp_path):
    dev = write_run(tmp_path / "dev", [c for c in CASES if c["split"] == "dev"])
    test = write_run(tmp_path / "test", [c for c in CASES if c["split"] == "test"])
    rep = report([dev, test])
    assert rep["splits"] == ["dev", "test"]
    assert rep["clean_cases"] == {"dev": 3, "test": 1}
    assert list(rep["rules"]) == ["grounding/ungrounded_value/ungrounded", "preflight/missing_argument/required"]
    text = markdown(rep)
    assert "| `grounding/ungrounded_value/ungrounded` | 3 (2, 1) / 1 / 1 | 0 (0, 0) / 0 / 0 |" in text
    assert "expected calibration error" in text


def test_guard_bench_rules_prints_and_writes_the_report(tmp_path):
    run = write_run(tmp_path / "run", CASES)
    out = tmp_path / "rules"
    result = CliRunner().invoke(app, ["bench", "rules", str(run), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "preflight/missing_argument/required" in result.output
    assert json.loads(out.with_suffix(".json").read_text())["clean_cases"] == {"dev": 3, "test": 1}
    assert out.with_suffix(".md").read_text().startswith("### Rules")


def test_a_missing_run_folder_is_a_short_error(tmp_path):
    result = CliRunner().invoke(app, ["bench", "rules", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert "error:" in result.output
