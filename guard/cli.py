"""The ``guard`` command: the demo, policy tools, the HTTP service, one-off checks, the benchmark.

Errors in what the user gave (a policy, a tool list, a call, a missing extra) are one short line and
exit code 2; ``guard --debug ...`` shows the traceback instead. The console script (``app``) also
turns an unexpected error into one line (exit 1) unless ``--debug`` is given.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import typer
import yaml

from guard_bench.cli import app as bench_app
from guard.policy import Policy, PolicyError
from guard.replay.cli import replay_command

class _Guard(typer.Typer):
    """The console script (``guard = guard.cli:app``): an unexpected error is one line (exit 1)
    unless ``--debug`` is given, never a traceback."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except SystemExit:
            raise
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            sys.exit(130)
        except Exception as exc:  # noqa: BLE001 - the last resort: a short line, not a traceback
            if _state["debug"] or "--debug" in sys.argv[1:]:
                raise
            typer.echo(f"error: {type(exc).__name__}: {exc} (guard --debug ... shows the traceback)", err=True)
            sys.exit(1)


app = _Guard(help="Runtime guardrails for LLM agents that call tools.", no_args_is_help=True,
             pretty_exceptions_show_locals=False)
policy_app = typer.Typer(help="Show and validate guard policies.", no_args_is_help=True)
app.add_typer(policy_app, name="policy")
app.add_typer(bench_app, name="bench")
app.command("replay")(replay_command)

#: ``guard check``'s exit code per action (2 is a usage or input error, 1 an unexpected error).
CHECK_EXIT_CODES = {"allow": 0, "warn": 0, "repair": 3, "retry": 4, "ask_human": 5, "block": 6}
_state = {"debug": False}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("guard")
    except PackageNotFoundError:  # run from a checkout that is not installed
        return "unknown (not installed)"


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"guard {_version()}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(False, "--version", callback=_show_version, is_eager=True, help="print the version and exit"),
    debug: bool = typer.Option(False, "--debug", help="show tracebacks instead of one-line errors"),
) -> None:
    """Runtime guardrails for LLM agents that call tools."""
    _state["debug"] = debug


def _fail(message: str, exc: BaseException | None = None, code: int = 2) -> typer.Exit:
    """Print ``error: message`` and return the Exit to raise; with --debug, re-raise ``exc`` instead."""
    if exc is not None and _state["debug"]:
        raise exc
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)





@app.command()
def demo() -> None:
    """Run a scripted agent offline and print what the guard did at each step."""
    from guard_graphs.demo import print_demo, run_demo

    print_demo(run_demo())


_SERVE_HELP = """Run the HTTP service (extras: service, telemetry; redis when GUARD_REDIS_URL is set).

/v1/* needs "Authorization: Bearer $GUARD_API_TOKEN" when the token is set; without one the service only
listens on a loopback address, unless --insecure is given.

\b
Environment:
  GUARD_API_TOKEN             bearer token that /v1/* requires
  GUARD_POLICY                policy YAML file when --policy is not given
  GUARD_REDIS_URL             shared state (budgets, circuit breaker, escalations) in Redis
  GUARD_METRIC_TOOLS          comma-separated tool names that get their own metric label
  GUARD_REGISTRY_CACHE_BYTES  budget of the tool-registry cache per worker
  PROMETHEUS_MULTIPROC_DIR    an empty folder: /metrics sums every worker's metrics
  OTEL_*                      OpenTelemetry exporter settings (tracing)
"""


@app.command(help=_SERVE_HELP)
def serve(
    host: str = typer.Option("127.0.0.1", help="address to bind; beyond loopback it needs GUARD_API_TOKEN or --insecure"),
    port: int = typer.Option(8080, min=0, max=65535, help="port to listen on"),
    workers: int = typer.Option(1, min=1, help="worker processes; metrics are summed across them"),
    policy: Path | None = typer.Option(None, help="policy YAML file (default: GUARD_POLICY, else the built-in defaults)"),
    insecure: bool = typer.Option(
        False, "--insecure", help="listen beyond loopback without GUARD_API_TOKEN: /v1/* then answers anyone"
    ),
) -> None:
    try:
        from guard.service import InsecureBindError
        from guard.service import serve as run
    except ImportError as exc:
        raise _fail(str(exc), exc) from exc
    env_policy = os.environ.get("GUARD_POLICY")
    if policy is not None or env_policy:
        _load(policy or Path(env_policy))  # every problem of the file, before anything starts
    try:
        run(host=host, port=port, workers=workers, policy=policy, insecure=insecure)
    except (InsecureBindError, PolicyError, ImportError) as exc:
        raise _fail(str(exc), exc) from exc
    except OSError as exc:  # the address is taken, or cannot be bound
        raise _fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", exc) from exc


@policy_app.command("show")
def policy_show(path: Path | None = typer.Argument(None, help="a policy file; the defaults when omitted")) -> None:
    """Print every field of a policy with its value (defaults filled in) and its hash."""
    policy = _load(path)
    data = policy.model_dump(mode="json")
    data["actions"] = {c.value: _rule_text(policy.rule_for(c)) for c in _categories()}
    typer.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True).rstrip())
    typer.echo(f"# sha256: {policy.sha256}")


def _rule_text(rule: Any) -> Any:
    """An action as its name; actions graded by confidence as {action: floor}."""
    return {a.value: floor for a, floor in rule.items()} if isinstance(rule, dict) else rule.value


@policy_app.command("validate")
def policy_validate(path: Path = typer.Argument(..., help="the policy YAML file")) -> None:
    """Check a policy file strictly: print its version hash, or every problem with its file, line and key
    (and a did-you-mean for a misspelt key or value); exit 2 when there is one. An empty file is valid but said."""
    policy = _load(path)
    typer.echo(f"{path}: valid policy {policy.name!r}, sha256 {policy.sha256}")


@app.command()
def check(
    call: str = typer.Option(..., help="JSON file with the proposed call {name, args, id}, or - to read it from stdin"),
    tools: Path = typer.Option(..., help="JSON file with a list of tool descriptions"),
    messages: Path | None = typer.Option(None, help="JSON file with the conversation before the call (a list of messages)"),
    policy: Path | None = typer.Option(None, help="policy YAML file"),
) -> None:
    """Check one call and print the decision as JSON (action, findings, feedback, question).

    \b
    Exit code by action:
      0  allow or warn: the call may run as proposed (warnings are in the JSON)
      3  repair: run decision.repaired_call instead
      4  retry: send the feedback back to the model
      5  ask_human: ask decision.question
      6  block
      2  the call, tools, messages or policy could not be read (one line on stderr)
    """
    from guard.engine import Guard
    from guard.registry import ToolSchemaError

    pol = _load(policy)
    tool_list = _read_json(tools)
    if not isinstance(tool_list, list):
        raise _fail(f"{tools}: expected a JSON list of tool descriptions, got {_kind(tool_list)}")
    proposed = _read_json_text(sys.stdin.read(), "<stdin>") if call == "-" else _read_json(Path(call))
    where = "<stdin>" if call == "-" else call
    if not isinstance(proposed, dict):
        raise _fail(f"{where}: expected a JSON object {{name, args, id}}, got {_kind(proposed)}")
    if not isinstance(proposed.get("name"), str) or not proposed["name"]:
        raise _fail(f"{where}: the call has no \"name\" (a string)")
    if "args" in proposed and not isinstance(proposed["args"], (dict, str)):
        raise _fail(f"{where}: \"args\" must be an object, got {_kind(proposed['args'])}")
    history = _read_json(messages) if messages else None
    if history is not None and not isinstance(history, list):
        raise _fail(f"{messages}: expected a JSON list of messages, got {_kind(history)}")
    try:
        guard = Guard(tool_list, pol)
    except (ToolSchemaError, ValueError, TypeError) as exc:
        raise _fail(f"{tools}: {exc}", exc) from exc
    try:
        decision = guard.check(proposed, history)
    except (ValueError, TypeError) as exc:
        raise _fail(f"{where}: {exc}", exc) from exc
    typer.echo(decision.model_dump_json(indent=2))
    raise typer.Exit(CHECK_EXIT_CODES.get(str(decision.action), 1))


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null", bool: "a boolean"}.get(
        type(value), "a number")


def _load(path: Path | None) -> Policy:
    """The policy in ``path`` (the defaults for None); every problem of the file, then exit 2."""
    if path is None:
        return Policy()
    from guard.policy_lint import check_file

    checked = check_file(path)
    for warning in checked.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if checked.problems:
        for problem in checked.problems:
            typer.echo(f"error: {problem}", err=True)
        if len(checked.problems) > 1:
            typer.echo(f"{len(checked.problems)} problems in {path}", err=True)
        raise typer.Exit(2)
    try:
        return Policy.from_yaml(path)
    except PolicyError as exc:
        raise _fail(str(exc), exc) from exc


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _fail(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc
    return _read_json_text(text, str(path))


def _read_json_text(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise _fail(f"{where}: not JSON: {exc}") from exc


def _categories() -> list[Any]:
    from guard.taxonomy import Category

    return list(Category)
