"""``guard replay``: a log re-decided under the policy that wrote it changes nothing; under another
it says what changes, and where; hostile lines are counted and passed over; the CLI is a CI gate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from guard.cli import app
from guard.policy import Policy
from guard.replay import expand_logs, replay
from guard.replay.core import Diff

ASK_ON_UNKNOWN = {"actions": {"unknown_tool": "ask_human"}}


def decisions_of(path: Path) -> list[dict[str, Any]]:
    return [r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if r["type"] == "decision"]


def test_the_policy_that_wrote_the_log_decides_every_call_again_as_logged(bench_log: Path) -> None:
    logged = decisions_of(bench_log)
    assert len(logged) >= 40 and {d["stage"] for d in logged} == {"call", "preflight"}
    report = replay([bench_log], Policy()).report
    assert report["decisions"] == len(logged)
    assert report["changed"] == 0 and report["categories_changed"] == 0 and report["examples"] == {}
    assert report["skipped"] == {}
    actions = {d["decision"]["action"] for d in logged}
    assert report["confusion"] == {a: {a: sum(d["decision"]["action"] == a for d in logged)} for a in sorted(actions)}
    assert report["baseline"] == "logged"


def test_a_new_policy_newly_interrupts_the_calls_it_would_ask_about(bench_log: Path) -> None:
    logged = decisions_of(bench_log)
    # the calls sent back only for an unknown tool are now put to the human
    expected = [d for d in logged if d["stage"] == "call" and d["decision"]["action"] == "retry"
                and set(d["decision"]["categories"]) == {"unknown_tool"}]
    assert expected
    report = replay([bench_log], Policy.model_validate(ASK_ON_UNKNOWN)).report
    assert report["newly_interrupted"] == len(expected) and report["no_longer_interrupted"] == 0
    assert report["confusion"]["retry"]["ask_human"] == len(expected)
    assert report["per_category"]["unknown_tool"]["newly_interrupted"] >= len(expected)
    assert sum(t["newly_interrupted"] for t in report["per_tool"].values()) == len(expected)
    shown = report["examples"]["retry->ask_human"]
    assert 0 < len(shown) <= 5
    assert {e["decision_id"] for e in shown} <= {d["decision_id"] for d in expected}
    assert all(e["new"]["action"] == "ask_human" and e["new"]["said"] for e in shown)
    assert report["rates"]["newly_interrupted"] == len(expected) / report["decisions"]


def test_a_baseline_is_re_decided_too(bench_log: Path) -> None:
    against_log = replay([bench_log], Policy.model_validate(ASK_ON_UNKNOWN)).report
    against_baseline = replay([bench_log], Policy.model_validate(ASK_ON_UNKNOWN), Policy()).report
    assert against_baseline["baseline"] == {"name": "default", "sha256": Policy().sha256}
    for key in ("decisions", "changed", "newly_interrupted", "confusion", "per_category", "per_tool", "examples"):
        assert against_baseline[key] == against_log[key], key


def test_hostile_lines_are_counted_and_passed_over(bench_log: Path, tmp_path: Path) -> None:
    log = tmp_path / "hostile.jsonl"
    shutil.copy(bench_log, log)
    template = decisions_of(bench_log)[0]
    no_messages = {**template, "conversation": {"digest": "x", "n": 3}}
    with log.open("ab") as f:
        for line in (
            b"not json at all",
            b"[1, 2, 3]",
            json.dumps({**template, "v": 2}).encode(),
            json.dumps({**template, "call": "not a call"}).encode(),
            json.dumps({**template, "state": {"per_call": -1}}).encode(),
            json.dumps({**template, "toolset": "no-such-toolset"}).encode(),
            json.dumps(no_messages).encode(),
            b'{"type": "decision", "v": 1, "call": {"name": "\xff\xfe"}}',  # not UTF-8, and no toolset
            b"",
        ):
            f.write(line + b"\n")
    clean = replay([bench_log], Policy()).report
    report = replay([log], Policy()).report
    assert report["skipped"] == {"invalid_record": 3, "malformed_json": 1, "no_messages": 1, "not_an_object": 1,
                                 "unknown_toolset": 1, "unsupported_version": 1}
    assert report["decisions"] == clean["decisions"] and report["changed"] == 0


def test_diffs_merge_in_any_order_to_the_same_report(bench_log: Path, tmp_path: Path) -> None:
    """What lets the Ray engine split the log anywhere: a diff summed by halves, merged either way,
    is the diff of the whole."""
    from guard.replay.core import Replayer
    from guard.replay.local import catalog_of, lines_of

    lines = list(lines_of([bench_log]))
    replayer = Replayer(Policy.model_validate(ASK_ON_UNKNOWN), catalog_of([bench_log]))
    whole, first, second = Diff(), Diff(), Diff()
    for line in lines:
        replayer.line(line, whole)
    for i, line in enumerate(lines):
        replayer.line(line, first if i % 2 else second)
    merged_ab = Diff.from_state(json.loads(json.dumps(first.state()))).merge(second)
    merged_ba = Diff.from_state(json.loads(json.dumps(second.state()))).merge(first)
    assert merged_ab.report({}) == merged_ba.report({}) == whole.report({})
    assert whole.report({})["changed"] > 0


def test_the_command_writes_diff_json_and_fails_over_the_interrupt_budget(bench_log: Path, tmp_path: Path) -> None:
    policy = tmp_path / "new.yaml"
    policy.write_text("actions:\n  unknown_tool: ask_human\n", encoding="utf-8")
    runner = CliRunner()
    over = runner.invoke(app, ["replay", str(bench_log), "--policy", str(policy), "--out", str(tmp_path / "a"), "--max-new-interrupts", "0.01"])
    assert over.exit_code == 1, over.output
    diff = json.loads((tmp_path / "a" / "diff.json").read_text())
    assert diff["newly_interrupted"] > 0 and diff["rates"]["newly_interrupted"] > 0.01
    assert json.loads((tmp_path / "a" / "run.json").read_text())["decisions"] == diff["decisions"]
    within = runner.invoke(app, ["replay", str(bench_log), "--policy", str(policy), "--out", str(tmp_path / "b"), "--max-new-interrupts", "0.9"])
    assert within.exit_code == 0, within.output
    assert (tmp_path / "b" / "diff.json").read_text() == (tmp_path / "a" / "diff.json").read_text()
    missing = runner.invoke(app, ["replay", str(tmp_path / "nothing-*.jsonl"), "--policy", str(policy)])
    assert missing.exit_code == 2 and "no decision log" in missing.output


def test_logs_are_named_by_file_folder_or_pattern(tmp_path: Path) -> None:
    for name in ("b.jsonl", "a.jsonl", "notes.txt"):
        (tmp_path / name).write_text("", encoding="utf-8")
    assert expand_logs([tmp_path]) == [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    assert expand_logs([str(tmp_path / "*.jsonl"), tmp_path / "a.jsonl"]) == [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    with pytest.raises(FileNotFoundError):
        expand_logs([tmp_path / "missing.jsonl"])


def test_a_benchmark_run_writes_a_log_that_replays_as_logged(tmp_path: Path) -> None:
    from guard_bench.cli import SAMPLES
    from guard_bench.cli import app as bench_app

    log = tmp_path / "bench.jsonl"
    result = CliRunner().invoke(bench_app, ["run", "acebench", "--data-dir", str(SAMPLES), "--split", "all", "--limit", "4",
                                            "--out", str(tmp_path / "out"), "--decision-log", str(log)])
    assert result.exit_code == 0, result.output
    logged = decisions_of(log)
    assert logged and {d["thread_id"] for d in logged} <= {json.loads(c)["id"] for c in (tmp_path / "out" / "cases.jsonl").read_text().splitlines()}
    report = replay([log], Policy()).report
    assert report["decisions"] == len(logged) and report["changed"] == 0
