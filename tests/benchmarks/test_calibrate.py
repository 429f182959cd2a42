"""``guard bench calibrate``: the sweep keeps the value the dev data make best, the written policy
loads and differs from the base only where it was swept, and the command refuses the test split and
invalid policies cleanly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from guard_bench import labels
from guard_bench.calibrate import (
    KNOBS,
    Calibration,
    Knob,
    Point,
    choose,
    policy_yaml,
    sweep,
    value_at,
    with_value,
)
from guard_bench.cases import Case, Expected
from guard_bench.cli import SAMPLES
from guard.cli import app
from guard.policy import Policy

WEATHER = {"name": "get_weather", "description": "Current weather forecast in a city", "parameters": {
    "type": "object", "properties": {"city": {"type": "string", "description": "city name"}}, "required": ["city"]}}

RELEVANCE = "checks.preflight.min_relevance"
FUZZY = "checks.grounding.min_fuzzy_score"


def ask(text: str, label: str = labels.OK) -> Case:
    """A preflight case (no proposed call): the request alone against the weather tool."""
    return Case(id=text, suite="fixture", subset="x", messages=[{"role": "user", "content": text}], tools=[WEATHER],
                expected=Expected(label=label))


# Lexical relevance to the weather tool (the preflight's ranking): 0.64 and 0.38 for the two weather
# questions, 0 for the other two. Only a cut-off between 0 and 0.38 separates them.
CASES = {"fixture": [
    ask("What is the weather forecast for Paris?"),
    ask("What is the weather in Oslo today?"),
    ask("Book a table for two at an Italian restaurant", labels.NO_SUITABLE_TOOL),
    ask("Translate hello into German", labels.NO_SUITABLE_TOOL),
]}
GRID = (0.0, 0.1, 0.5, 0.9)
BASE = Policy.model_validate({"name": "team", "budgets": {"per_call": 3}, "checks": {"preflight": {"min_relevance": 0.5}}})


def diff_paths(a: Any, b: Any, prefix: str = "") -> set[str]:
    """Dotted paths where two dumped policies differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        return {p for k in a.keys() | b.keys() for p in diff_paths(a.get(k), b.get(k), f"{prefix}{k}.")}
    return set() if a == b else {prefix.rstrip(".")}


def test_the_sweep_keeps_the_value_that_separates_the_dev_cases_and_skips_knobs_without_labels():
    knobs = (Knob(RELEVANCE, GRID, (labels.NO_SUITABLE_TOOL,)), Knob(FUZZY, (80.0, 95.0), (labels.MISSING_INFO,)))
    policy, results = sweep(CASES, BASE, knobs)
    relevance, fuzzy = results
    assert [p.value for p in relevance.points] == list(GRID)  # the base value 0.5 is in the grid once
    by_value = {p.value: p for p in relevance.points}
    assert by_value[0.0].recall == 0.0  # nothing is below 0: both unserved requests go ahead
    assert (by_value[0.1].f1, by_value[0.1].false_alarm_rate) == (1.0, 0.0)
    assert by_value[0.5].false_alarm_rate == 0.5 and by_value[0.9].false_alarm_rate == 1.0  # weather questions stopped
    assert relevance.base == 0.5 and relevance.chosen == 0.1
    assert fuzzy.points == [] and "no dev case is labelled missing_information" in fuzzy.note
    assert value_at(policy, RELEVANCE) == 0.1 and value_at(policy, FUZZY) == BASE.checks.grounding.min_fuzzy_score


def test_sweeps_sharing_suite_runs_run_each_suite_once_per_policy_and_choose_the_same(monkeypatch):
    """guard bench transfer sweeps every suite but one, once per target: with shared runs a suite's
    dev cases run once per distinct policy, and every sweep chooses what it would have alone."""
    import guard_bench.calibrate as calibrate

    knobs = (Knob(RELEVANCE, GRID, (labels.NO_SUITABLE_TOOL,)),)
    other = {"other": [ask("Will it rain in Rome tomorrow?"), ask("Order a pizza", labels.NO_SUITABLE_TOOL)]}
    alone = [sweep(cases, BASE, knobs)[0] for cases in (CASES, CASES | other)]
    ran: list[int] = []
    real = calibrate.run_cases
    monkeypatch.setattr(calibrate, "run_cases", lambda cases, *a, **kw: ran.append(len(cases)) or real(cases, *a, **kw))
    runs: calibrate.SuiteRuns = {}
    shared = [sweep(cases, BASE, knobs, runs=runs)[0] for cases in (CASES, CASES | other)]
    assert [p.sha256 for p in shared] == [p.sha256 for p in alone]
    # 4 grid values: the fixture runs 4 times (the second sweep reuses them), the other suite 4 times
    assert ran == [4] * 4 + [2] * 4
    assert len(runs) == 8


def test_the_written_policy_loads_and_differs_from_the_base_only_in_the_swept_field():
    knobs = (Knob(RELEVANCE, GRID, (labels.NO_SUITABLE_TOOL,)), Knob(FUZZY, (80.0, 95.0), (labels.MISSING_INFO,)))
    policy, results = sweep(CASES, BASE, knobs)
    cal = Calibration("fixture", "dev", "tests", "today", False, None, BASE.sha256, 4, 2, results, policy)
    base_data = {"name": "team", "budgets": {"per_call": 3}, "checks": {"preflight": {"min_relevance": 0.5}}}
    text = policy_yaml(cal, base_data, "team.yaml", "guard bench calibrate fixture")
    loaded = Policy.from_yaml_text(text)
    assert diff_paths(BASE.model_dump(mode="json"), loaded.model_dump(mode="json")) == {RELEVANCE}
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any("suite: fixture  split: dev" in line for line in header)
    assert any(line.startswith(f"# {RELEVANCE}") and " 0.1 " in line and "1.000" in line for line in header)
    assert "min_fuzzy_score" not in yaml.safe_load(text)["checks"].get("grounding", {})  # not swept: not written


def point(value: float, f1: float, alarms: float) -> Point:
    return Point(value, f1, f1, f1, 0, 0, 0, alarms, {}, 0.0)


def test_choice_best_f1_under_the_false_alarm_ceiling_then_fewest_alarms_then_nearest_the_base():
    points = [point(0.1, 0.9, 0.20), point(0.2, 0.8, 0.04), point(0.3, 0.8, 0.02), point(0.4, 0.5, 0.0)]
    assert choose(points, 0.1, None) == (points[0], True)
    assert choose(points, 0.1, 0.05) == (points[2], True)  # 0.2 and 0.3 tie on F1: fewer alarms wins
    assert choose(points, 0.1, -1.0)[1] is False and choose(points, 0.1, -1.0)[0] is points[3]
    tied = [point(0.1, 0.7, 0.0), point(0.2, 0.7, 0.0), point(0.3, 0.7, 0.0)]
    assert choose(tied, 0.3, None)[0] is tied[2]  # no evidence to move: the base value stays


def test_every_knob_path_exists_in_the_policy_and_its_grid_validates():
    for knob in KNOBS:
        for value in knob.grid:
            assert value_at(with_value(Policy(), knob.path, value), knob.path) == value
        assert set(knob.labels) <= set(labels.LABELS)


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, ["bench", "calibrate", *args])


def test_cli_writes_the_policy_the_json_and_the_png(tmp_path: Path):
    base = tmp_path / "base.yaml"
    base.write_text("name: team\nbudgets: {per_call: 3}\n")
    out, written = tmp_path / "cal", tmp_path / "calibrated.yaml"
    result = invoke("acebench", "--data-dir", str(SAMPLES), "--policy", str(base), "--out", str(out), "--out-policy", str(written))
    assert result.exit_code == 0, result.output
    assert "checks.preflight.min_relevance" in result.output
    png = (out / "calibration.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads((out / "calibration.json").read_text())
    assert data["split"] == "dev" and data["suite"] == "acebench"
    swept = {k["path"] for k in data["knobs"] if k["points"]}
    assert RELEVANCE in swept and all(k["points"] or k["note"] for k in data["knobs"])
    loaded = Policy.from_yaml(written)
    assert loaded.name == "team" and loaded.budgets.per_call == 3
    assert diff_paths(Policy.from_yaml(base).model_dump(mode="json"), loaded.model_dump(mode="json")) <= swept
    assert loaded.sha256 == data["policy_sha256"]


@pytest.mark.parametrize("split", ["test", "all"])
def test_cli_refuses_to_tune_on_test_cases(tmp_path: Path, split: str):
    result = invoke("acebench", "--data-dir", str(SAMPLES), "--split", split, "--out", str(tmp_path), "--out-policy", str(tmp_path / "p.yaml"))
    assert result.exit_code == 2
    assert "dev split only" in result.output and isinstance(result.exception, SystemExit)
    assert not (tmp_path / "p.yaml").exists()


def test_cli_reports_an_invalid_base_policy_without_a_traceback(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nchecks:\n  preflight:\n    min_relevence: 0.2\n")
    result = invoke("acebench", "--data-dir", str(SAMPLES), "--policy", str(bad), "--out", str(tmp_path))
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit)
    assert "bad.yaml, line 4" in result.output and "min_relevence" in result.output
    assert "Traceback" not in result.output


def test_cli_unknown_suite_is_a_clean_error(tmp_path: Path):
    result = invoke("nosuch", "--data-dir", str(SAMPLES), "--out", str(tmp_path))
    assert result.exit_code == 2 and "unknown suite nosuch;" in result.output
