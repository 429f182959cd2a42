"""Reports say what they are: the data folder and whether it is the bundled samples (with a banner),
cases per subset, intervals, a glossary of every figure named, no internal paths, a clean out folder,
headline figures on the terminal, and plots for every suite (a guard-vs-papers chart where the papers
published figures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guard_bench import glossary, report
from guard_bench.cli import SAMPLES
from guard_bench.suites import SUITES
from guard_bench.suites import suite as load_suite
from guard.cli import app


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("run")
    (out / "plots").mkdir()
    (out / "plots" / "left-from-an-earlier-run.png").write_bytes(b"x")
    (out / "notes.txt").write_text("mine")
    result = CliRunner().invoke(app, ["bench", "run", "all", "--split", "all", "--data-dir", str(SAMPLES), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, result


def test_results_record_the_data_folder_and_the_cases_per_subset(sample_run: tuple[Path, object]) -> None:
    out, _ = sample_run
    run = json.loads((out / "results.json").read_text())
    assert run["data"] == {"dir": str(SAMPLES.resolve()), "bundled_samples": True}
    for name, res in run["suites"].items():
        assert sum(res["subsets"].values()) == res["n_cases"] > 0, name
        assert set(res["paper_ci95"]) == set(res["paper_metrics"]), name


def test_the_report_carries_the_samples_banner_intervals_and_a_glossary(sample_run: tuple[Path, object]) -> None:
    out, _ = sample_run
    text = (out / "report.md").read_text()
    assert text.splitlines()[2].startswith("> **Bundled samples: not comparable with the papers.**")
    assert f"Data: `{SAMPLES.resolve()}` (the bundled samples)" in text
    assert "Cases per subset: " in text and "## Glossary" in text
    glossary_part = text.split("## Glossary", 1)[1]
    run = json.loads((out / "results.json").read_text())
    for name, res in run["suites"].items():
        for metric in res["paper_metrics"]:
            assert f"- **{metric}**" in glossary_part
            assert glossary.explain(metric, name), f"{name}: {metric} has no explanation"
    # one name, two meanings: given once per suite
    assert "- **detect_user** (reflectool): " in glossary_part
    assert "- **detect_user** (tool-reflection-rebuilt): " in glossary_part
    assert "seeds/" not in text and "shared/" not in text


def test_the_out_folder_holds_only_this_runs_outputs(sample_run: tuple[Path, object]) -> None:
    out, _ = sample_run
    assert not (out / "plots" / "left-from-an-earlier-run.png").exists()
    assert (out / "notes.txt").read_text() == "mine"  # what a run did not write is left alone


def test_every_suite_gets_its_plots_and_a_papers_chart_where_papers_published(sample_run: tuple[Path, object]) -> None:
    out, _ = sample_run
    for name in SUITES:
        assert (out / "plots" / f"{name}-confusion.png").is_file()
        assert (out / "plots" / f"{name}-labels.png").is_file()
        assert (out / "plots" / f"{name}-papers.png").is_file() == bool(load_suite(name).PAPER), name


def test_the_terminal_shows_the_headline_figures_and_the_report_path(sample_run: tuple[Path, object]) -> None:
    out, result = sample_run
    stdout = result.stdout
    assert "bundled samples, not comparable with the papers" in " ".join(stdout.split())
    for name in SUITES:
        assert name[:16] in stdout
    assert "special_acc" in stdout and "false_interrupt_rate" in stdout
    assert f"report: {out / 'report.md'}" in stdout.replace("\n", "")


def test_recovery_without_gold_calls_says_so() -> None:
    text = report.recovery_text({"n_with_gold": 0, "recovered_rate": 0.0, "questions_per_case": 0.5, "retries_per_case": 0.0})
    assert "none of these cases has a gold call" in text and "0 cases" not in text


def test_a_high_p99_over_few_cases_is_explained() -> None:
    assert "warm up" in report.latency_note({"n_cases": 8})
    assert report.latency_note({"n_cases": 500}) == ""


def test_the_results_page_carries_the_banner_for_sample_runs() -> None:
    from guard_bench.results_page import render

    run = {"split": "test", "data": {"dir": "x", "bundled_samples": True},
           "suites": {}, "policy": {"name": "default", "sha256": "0" * 64}}
    assert report.SAMPLES_BANNER in render(run, None, figures={}, semantic_ran=False)
    run["data"]["bundled_samples"] = False
    assert report.SAMPLES_BANNER not in render(run, None, figures={}, semantic_ran=False)
