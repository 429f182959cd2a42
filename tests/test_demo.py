"""The offline demo shows the five behaviours the README promises, and the CLI prints it."""

from typer.testing import CliRunner

from guard_graphs.demo import run_demo
from guard.cli import app


def test_demo_shows_repair_retry_question_resume_and_backoff():
    steps = run_demo(policy={"backoff": {"initial_seconds": 0, "jitter_seconds": 0}})
    guard_lines = [s for s in steps if s.kind == "guard"]
    actions = [s.data.get("action") for s in guard_lines]
    assert actions[0] == "repair" and {r["kind"] for r in guard_lines[0].data["repairs"]} >= {"param_names", "coerce_types"}
    assert actions[1] == "retry" and "unknown_tool" in guard_lines[1].data["categories"]
    (question,) = [s for s in steps if s.kind == "interrupt"]
    assert question.data["kind"] == "missing_information" and question.data["requests"][0]["missing"] == ["email"]
    assert actions[2] == "allow" and guard_lines[2].data["signature"].startswith("book_flight:")
    assert guard_lines[3].data["attempts"] == 2 and guard_lines[3].data["attempt_errors"] == ["tool_timeout"]
    assert steps[-1].kind == "answer"


def test_cli_demo_and_policy_commands(tmp_path):
    runner = CliRunner()
    out = runner.invoke(app, ["demo"])
    assert out.exit_code == 0 and "repair" in out.output and "email" in out.output and "after 2 attempts" in out.output
    shown = runner.invoke(app, ["policy", "show"])
    assert shown.exit_code == 0 and "unknown_tool: retry" in shown.output and "sha256" in shown.output
    bad = tmp_path / "p.yaml"
    bad.write_text("name: x\nbudgets:\n  per_cal: 1\n")
    out = runner.invoke(app, ["policy", "validate", str(bad)])
    assert out.exit_code == 2 and "line 3" in out.output and "per_cal" in out.output
