"""The ``guard`` command explains itself: version, short errors with exit code 2 (tracebacks only with
--debug), ``guard check`` reading the call from stdin with an exit code per action, ``guard policy
validate`` listing every problem with its line and a did-you-mean, and the suite names in help."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guard.cli import CHECK_EXIT_CODES, app

TOOLS = [{"name": "get_weather", "description": "Current weather for a city.",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]
ASKED = [{"role": "user", "content": "What's the weather in Paris?"}]


def invoke(*args: str, stdin: str | None = None) -> object:
    return CliRunner().invoke(app, list(args), input=stdin)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"tools": tmp_path / "tools.json", "messages": tmp_path / "messages.json"}
    paths["tools"].write_text(json.dumps(TOOLS))
    paths["messages"].write_text(json.dumps(ASKED))
    return paths


def test_version() -> None:
    from importlib.metadata import version

    result = invoke("--version")
    assert result.exit_code == 0 and result.output.strip() == f"guard {version('guard')}"


def test_check_reads_the_call_from_stdin_and_exits_by_action(files: dict[str, Path]) -> None:
    call = json.dumps({"name": "get_weather", "args": {"city": "Paris"}, "id": "1"})
    allowed = invoke("check", "--call", "-", "--tools", str(files["tools"]), "--messages", str(files["messages"]), stdin=call)
    assert allowed.exit_code == 0, allowed.output
    assert json.loads(allowed.stdout)["action"] == "allow"
    unknown = json.dumps({"name": "get_wether_now", "args": {"city": "Paris"}, "id": "2"})
    sent_back = invoke("check", "--call", "-", "--tools", str(files["tools"]), "--messages", str(files["messages"]), stdin=unknown)
    decision = json.loads(sent_back.stdout)
    assert sent_back.exit_code == CHECK_EXIT_CODES[decision["action"]] != 0


def test_every_action_has_its_own_documented_exit_code() -> None:
    from guard.taxonomy import Action

    assert set(CHECK_EXIT_CODES) == {a.value for a in Action}
    stopping = [CHECK_EXIT_CODES[a] for a in ("repair", "retry", "ask_human", "block")]
    assert len(set(stopping)) == 4 and not {0, 1, 2} & set(stopping)
    help_text = invoke("check", "--help").output
    for action in ("repair", "retry", "ask_human", "block"):
        assert f"{CHECK_EXIT_CODES[action]}  {action}" in help_text


@pytest.mark.parametrize(("tools", "call", "says"), [
    ('[{"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "nonsense"}}}}]',
     '{"name": "f", "args": {}}', "unknown type 'nonsense'"),
    ('{"name": "f"}', '{"name": "f", "args": {}}', "expected a JSON list of tool descriptions"),
    ("[]", "[1, 2]", "expected a JSON object"),
    ("[]", '{"args": {}}', 'has no "name"'),
    ("[]", '{"name": "f", "args": [1]}', '"args" must be an object'),
    ("[]", "{not json", "not JSON"),
])
def test_bad_tools_and_calls_are_one_line_and_exit_2(tmp_path: Path, tools: str, call: str, says: str) -> None:
    (tmp_path / "tools.json").write_text(tools)
    result = invoke("check", "--call", "-", "--tools", str(tmp_path / "tools.json"), stdin=call)
    assert result.exit_code == 2
    assert says in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text('[{"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "nonsense"}}}}]')
    result = invoke("--debug", "check", "--call", "-", "--tools", str(tmp_path / "tools.json"), stdin='{"name": "f"}')
    assert result.exit_code != 0 and type(result.exception).__name__ == "ToolSchemaError"


def test_the_console_script_turns_an_unexpected_error_into_one_line(tmp_path: Path) -> None:
    """Through the installed entry point (``guard.cli:app``), in a subprocess: a missing file given
    as --messages is a short error; an exception nobody expected is one line, exit 1."""
    code = ("import sys; sys.argv = ['guard', 'demo']; import guard_graphs.demo as d; "
            "d.run_demo = lambda: (_ for _ in ()).throw(RuntimeError('boom')); from guard.cli import app; app()")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip() == "error: RuntimeError: boom (guard --debug ... shows the traceback)"


def test_policy_validate_lists_every_problem_with_line_and_suggestion(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("name: x\nactons: {}\nactions:\n  unknown_tol: retry\n  missing_argument: retyr\n"
                    "budgets: {per_cal: 2}\ntools:\n  pay: {requires_aproval: true}\n")
    result = invoke("policy", "validate", str(path))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert lines == [
        f"error: {path}, line 2: actons: unknown key 'actons' (did you mean 'actions'?)",
        f"error: {path}, line 4: actions.unknown_tol: unknown name 'unknown_tol' (did you mean 'unknown_tool'?)",
        f"error: {path}, line 5: actions.missing_argument: Input should be 'allow', 'warn', 'repair', 'retry', "
        "'ask_human' or 'block', got 'retyr' (did you mean 'retry'?)",
        f"error: {path}, line 6: budgets.per_cal: unknown key 'per_cal' (did you mean 'per_call'?)",
        f"error: {path}, line 8: tools.pay.requires_aproval: unknown key 'requires_aproval' (did you mean 'requires_approval'?)",
        f"5 problems in {path}",
    ]


def test_policy_validate_names_the_file_in_a_yaml_syntax_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: [x\n")
    result = invoke("policy", "validate", str(path))
    assert result.exit_code == 2
    assert str(path) in result.stderr and "<unicode string>" not in result.stderr


def test_policy_validate_warns_on_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("")
    result = invoke("policy", "validate", str(path))
    assert result.exit_code == 0
    assert "warning:" in result.stderr and "empty" in result.stderr
    assert "valid policy 'default'" in result.stdout


def test_a_bad_policy_given_to_serve_is_every_problem_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("actons: {}\nbudgets: {per_cal: 2}\n")
    result = invoke("serve", "--policy", str(path))
    assert result.exit_code == 2
    assert "did you mean 'actions'" in result.stderr and "did you mean 'per_call'" in result.stderr
    assert "Traceback" not in result.output


def test_a_bad_policy_in_guard_policy_is_refused_before_serve_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("budgets: {per_cal: 2}\n")
    monkeypatch.setenv("GUARD_POLICY", str(path))
    result = invoke("serve")
    assert result.exit_code == 2 and "did you mean 'per_call'" in result.stderr and "listening" not in result.output


def test_serve_help_names_its_options_and_environment() -> None:
    text = invoke("serve", "--help").output
    for word in ("--policy", "--host", "--port", "GUARD_API_TOKEN", "GUARD_POLICY", "GUARD_REDIS_URL", "OTEL_"):
        assert word in text


def test_bench_run_help_lists_the_suites_and_an_unknown_suite_suggests_one() -> None:
    from guard_bench.suites import SUITES

    text = " ".join(invoke("bench", "run", "--help").output.split())
    assert all(name in text for name in SUITES)
    result = invoke("bench", "run", "fail-talm")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: unknown suite fail-talm (did you mean fail-talms?)")
    assert "'" not in result.stderr and '"' not in result.stderr


def test_install_hints_name_this_project_not_the_pypi_package_called_guard() -> None:
    from guard.extras import install_hint

    hint = install_hint("service")
    assert "[service]" in hint and "'guard[service]'" not in hint
    assert hint.startswith("pip install ")
