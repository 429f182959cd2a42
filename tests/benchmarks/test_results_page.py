"""``guard bench results``: the page is rendered from two results.json files, the targets are marked
met or missed from the figures, and the hand-written notes land under their suite's table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from guard_bench.cli import SAMPLES
from guard_bench.results_page import TARGETS, parse_notes, render
from guard_bench.runner import CaseResult
from guard_bench.suites import PaperFigure
from guard_bench.suites import suite as load_suite
from guard.cli import app


def suite_result(name: str, metrics: dict[str, float], seconds: float = 1.0) -> dict[str, Any]:
    return {"suite": name, "split": "test", "n_cases": 10, "n_families": 6, "n_errors": 0, "categories": {},
            "false_interrupt_rate": {"value": 0.1, "k": 1, "n": 10, "ci95": [0.018, 0.404]},
            "recovery": {}, "latency_ms": {"p50": 0.5, "p95": 1.0, "p99": 2.0},
            "policy": {"name": "default", "sha256": "ab" * 32}, "paper_metrics": metrics, "seconds": seconds,
            "paper_ci95": {"special_acc": {"ci95": [0.41, 0.92], "method": "wilson", "k": 7, "n": 10}},
            "skipped_records": {"total": 2 if name == "critictool" else 0,
                                "reasons": {"base.json: KeyError": 2} if name == "critictool" else {}}}


def run(**suites: dict[str, float]) -> dict[str, Any]:
    per = {name.replace("_", "-"): suite_result(name.replace("_", "-"), m) for name, m in suites.items()}
    return {"suite": "all", "split": "test", "policy": {"name": "default", "sha256": "ab" * 32}, "suites": per}


RULE = run(acebench={"special_incomplete_acc": 0.5, "special_error_param_acc": 0.96, "special_acc": 0.7,
                     "normal_false_alarm_rate": 0.13},
           critictool={"reflect_tool_selection": 0.0, "over_reflection_rate": 0.05})
SEMANTIC = run(acebench={"special_incomplete_acc": 0.91, "special_error_param_acc": 0.94, "special_acc": 0.8,
                         "normal_false_alarm_rate": 0.02},
               critictool={"reflect_tool_selection": 0.61, "over_reflection_rate": 0.06})
FIGURES = {"acebench": [PaperFigure("special_acc", "GPT-4o", 0.93, "ACEBench Table 2")]}
NOTES = "Intro line.\n\n## acebench\n\nWhy incomplete is low.\n\n## critictool\n\nSelection needs embeddings.\n\n## Latency\n\nFast.\n"


def row(page: str, metric: str) -> list[str]:
    line = next(line for line in page.splitlines() if line.startswith(f"| {metric} |"))
    return [c.strip() for c in line.strip("|").split("|")]


def section(page: str, name: str) -> str:
    return page.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]


def test_rows_show_both_runs_the_target_and_met_or_missed():
    page = render(RULE, SEMANTIC, figures=FIGURES, notes=NOTES)
    assert row(page, "special_incomplete_acc") == ["special_incomplete_acc", "0.500", "0.910", "≥ 0.90", "**missed** / met", ""]
    assert row(page, "special_error_param_acc")[3:5] == ["≥ 0.95", "met / **missed**"]
    assert row(page, "normal_false_alarm_rate")[3:5] == ["≤ 0.03", "**missed** / met"]
    assert row(page, "over_reflection_rate")[3:5] == ["≤ 0.05", "met / **missed**"]  # at the ceiling is met
    assert row(page, "special_acc") == ["special_acc", "0.700 [0.41, 0.92]", "0.800 [0.41, 0.92]", "", "", "GPT-4o 0.930"]
    # a target whose metric neither run emitted is said to be unmeasured, never left out
    assert row(page, "special_irrelevant_acc")[1:5] == ["not measured", "not measured", "≥ 0.90", "not measured / not measured"]


def test_the_false_interrupt_rate_sits_beside_the_recalls_with_its_interval_and_skips_are_said():
    page = render(RULE, SEMANTIC, figures=FIGURES, notes=NOTES)
    ace = section(page, "acebench").splitlines()
    fi = next(i for i, line in enumerate(ace) if line.startswith("| false_interrupt_rate |"))
    assert ace[fi - 1].startswith("| normal_false_alarm_rate |") and ace[fi + 1].startswith("| special_acc |")  # after the targets
    assert row(page, "false_interrupt_rate")[1:3] == ["0.100 [0.02, 0.40] (1/10)"] * 2
    assert "10 cases in 6 families (0 errors) in 1.0 s; false interrupts 0.100 [0.02, 0.40] (1 of 10 clean cases)" in page
    assert "2 records skipped, unreadable (base.json: KeyError 2)" in section(page, "critictool")
    assert "skipped" not in section(page, "acebench")


def test_notes_land_under_their_suite_and_other_sections_at_the_end():
    page = render(RULE, SEMANTIC, figures=FIGURES, notes=NOTES)
    assert "Why incomplete is low." in section(page, "acebench")
    assert "Selection needs embeddings." in section(page, "critictool")
    assert "Why incomplete" not in section(page, "critictool")
    assert page.index("## Latency") > page.index("## critictool") and "Intro line." in page.split("## acebench")[0]
    assert parse_notes(NOTES)["Latency"] == "Fast."


def test_a_rule_only_page_says_the_semantic_run_did_not_happen():
    page = render(RULE, None, figures=FIGURES, notes="", semantic_ran=False)
    assert row(page, "special_incomplete_acc")[1:5] == ["0.500", "not run", "≥ 0.90", "**missed** / not run"]
    assert "semantic: not run" in page


def test_every_target_names_a_metric_its_suite_emits():
    """A renamed metric would silently turn a target into 'not measured': each suite, scored on its
    bundled samples, must emit every metric a target names."""
    for name in {t.suite for t in TARGETS}:
        module = load_suite(name)
        results = [CaseResult(id=c.id, suite=c.suite, subset=c.subset, split=c.split, expected=c.expected.model_dump(), meta=c.meta)
                   for c in module.load(SAMPLES)]
        emitted = module.paper_metrics(results)
        assert {t.metric for t in TARGETS if t.suite == name} <= set(emitted), name


def test_cli_from_runs_renders_without_running(tmp_path: Path):
    for mode, data in (("rule", RULE), ("semantic", SEMANTIC)):
        (tmp_path / mode).mkdir()
        (tmp_path / mode / "results.json").write_text(json.dumps(data))
    (tmp_path / "rule" / "run-meta.json").write_text(json.dumps(
        {"command": "guard bench run all --split test", "date": "2026-01-01 00:00 UTC", "machine": "test box", "wall_seconds": 42.0}))
    page = tmp_path / "RESULTS.md"
    result = CliRunner().invoke(app, ["bench", "results", "--from-runs", "--out", str(tmp_path), "--page", str(page)])
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert f"guard bench results --out {tmp_path} --page {page} --from-runs" in text
    assert "wall 42 s" in text and "test box" in text
    assert "sha256 `abababababababab…`" in text
    assert row(text, "special_incomplete_acc")[1:3] == ["0.500", "0.910"]


def test_cli_from_runs_without_runs_is_a_clean_error(tmp_path: Path):
    result = CliRunner().invoke(app, ["bench", "results", "--from-runs", "--out", str(tmp_path), "--page", str(tmp_path / "R.md")])
    assert result.exit_code == 2 and "run without --from-runs first" in result.output


def test_the_page_adds_the_rules_the_learned_scorer_and_the_transfer_table_from_the_case_records(tmp_path):
    from guard_bench.results_page import analysis_sections

    finding = {"category": "ungrounded_value", "check": "grounding", "rule": "ungrounded", "confidence": 0.9}
    for split, folder in (("dev", "dev"), ("test", "rule")):
        (tmp_path / folder).mkdir()
        cases = [{"suite": s, "split": split, "expected": {"label": label}, "flagged": flagged, "findings": [finding] if flagged else []}
                 for s in ("a", "b") for label, flagged in (("ok", False), ("ok", True), ("missing_information", True))]
        (tmp_path / folder / "cases.jsonl").write_text("\n".join(json.dumps(c) for c in cases), encoding="utf-8")
    assert analysis_sections(tmp_path / "nowhere") == []
    text = "\n".join(analysis_sections(tmp_path))
    assert "## Rules and calibration" in text and "`grounding/ungrounded_value/ungrounded`" in text
    assert "expected calibration error" in text and "## Learned scorer against the hand-set policy" in text
    assert "## Transfer" not in text
    (tmp_path / "transfer").mkdir()
    (tmp_path / "transfer" / "transfer.md").write_text("| suite | base |\n|---|---|\n", encoding="utf-8")
    assert "## Transfer" in "\n".join(analysis_sections(tmp_path))


def test_the_semantic_runs_latency_names_the_backend_the_model_ran_on():
    semantic = json.loads(json.dumps(SEMANTIC))
    semantic["suites"]["acebench"]["semantic"] = {"decisions": 10, "backend": "onnx-int8"}
    page = render(RULE, semantic, figures=FIGURES, notes=NOTES)
    lines = [line for line in section(page, "acebench").splitlines() if "guard latency" in line]
    assert lines[0].startswith("- rule:") and "(model:" not in lines[0]  # no model in a rule-only run
    assert lines[1].startswith("- semantic:") and lines[1].endswith("p99 2.00 ms (model: onnx-int8)")
    semantic["suites"]["acebench"]["semantic"]["threads"] = 2
    page = render(RULE, semantic, figures=FIGURES, notes=NOTES)
    lines = [line for line in section(page, "acebench").splitlines() if "guard latency" in line]
    assert lines[1].endswith("p99 2.00 ms (model: onnx-int8, 2 threads)")
