"""The ``guard`` command: the demo, policy tools, and one-off checks from JSON files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
import yaml

from benchmarks.cli import app as bench_app
from guard.policy import Policy, PolicyError

app = typer.Typer(help="Runtime guardrails for LLM agents that call tools.", no_args_is_help=True)
policy_app = typer.Typer(help="Show and validate guard policies.", no_args_is_help=True)
app.add_typer(policy_app, name="policy")
app.add_typer(bench_app, name="bench")


@app.command()
def demo() -> None:
    """Run a scripted agent offline and print what the guard did at each step."""
    from graphs.demo import print_demo, run_demo

    print_demo(run_demo())


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", help="address to bind; beyond loopback it needs GUARD_API_TOKEN or --insecure"),
    port: int = typer.Option(8080, min=0, max=65535, help="port to listen on"),
    workers: int = typer.Option(1, min=1, help="worker processes; metrics are summed across them"),
    policy: Path | None = typer.Option(None, help="policy YAML file (default: GUARD_POLICY, else the built-in defaults)"),
    insecure: bool = typer.Option(
        False, "--insecure", help="listen beyond loopback without GUARD_API_TOKEN: /v1/* then answers anyone"
    ),
) -> None:
    """Run the HTTP service (extras: service, telemetry; redis when GUARD_REDIS_URL is set).

    /v1/* needs "Authorization: Bearer $GUARD_API_TOKEN" when the token is set; without one the service only listens on a loopback address, unless --insecure is given."""
    from guard.service import InsecureBindError
    from guard.service import serve as run

    try:
        run(host=host, port=port, workers=workers, policy=policy, insecure=insecure)
    except InsecureBindError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    except PolicyError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


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
def policy_validate(path: Path) -> None:
    """Check a policy file strictly; print its version hash or the file, line and key at fault."""
    policy = _load(path)
    typer.echo(f"{path}: valid policy {policy.name!r}, sha256 {policy.sha256}")


@app.command()
def check(
    call: Path = typer.Option(..., help="JSON file with the proposed call {name, args, id}"),
    tools: Path = typer.Option(..., help="JSON file with a list of tool descriptions"),
    messages: Path | None = typer.Option(None, help="JSON file with the conversation before the call"),
    policy: Path | None = typer.Option(None, help="policy YAML file"),
) -> None:
    """Check one call and print the decision as JSON (action, findings, feedback, question)."""
    from guard.engine import Guard

    guard = Guard(_read_json(tools), _load(policy))
    decision = guard.check(_read_json(call), _read_json(messages) if messages else None)
    typer.echo(decision.model_dump_json(indent=2))


def _load(path: Path | None) -> Policy:
    if path is None:
        return Policy()
    try:
        return Policy.from_yaml(path)
    except PolicyError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        typer.echo(f"error: {path}: {exc}", err=True)
        raise typer.Exit(2) from exc


def _categories() -> list[Any]:
    from guard.taxonomy import Category

    return list(Category)
