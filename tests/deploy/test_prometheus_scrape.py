"""A real Prometheus scrapes the real guard service; every metric the dashboard queries has series.

The service is ``guard.service.create_app()`` under uvicorn (a subprocess on a free loopback port,
configured by the environment like the container: GUARD_POLICY, GUARD_API_TOKEN,
GUARD_METRIC_TOOLS); a few real requests make the labelled counters exist. Debian's
``/usr/bin/prometheus`` scrapes it every second with the repository's alert rules loaded; the test
then asks Prometheus' HTTP API for each metric name the dashboard queries, runs every dashboard
expression, and checks that every alert rule evaluates without error. Everything stays on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml

from tests.deploy.helpers import (
    ALERTS,
    DEPLOY,
    METRIC_FAMILIES,
    REPO,
    dashboard_exprs,
    family_of,
    free_port,
    promql_metric_names,
    require_binary,
)

TOKEN = "deploy-test-token"
T = TypeVar("T")


def _function(name: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "description": f"The {name} tool.", "parameters": schema}}


TOOLS = [
    _function(
        "search_flights",
        {"from_city": {"type": "string"}, "to_city": {"type": "string"}, "passengers": {"type": "integer"}},
        ["from_city", "to_city"],
    ),
    _function("get_weather", {"city": {"type": "string"}}, ["city"]),
    _function("transfer_money", {"to_account": {"type": "string"}, "amount": {"type": "number"}}, ["to_account", "amount"]),
]
MESSAGES = [{"role": "user", "content": "Find flights from Berlin to Paris, check the weather in Paris, and send 20 EUR to account DE123."}]


def _request(method: str, url: str, body: Any = None, token: str | None = None, timeout: float = 5.0) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        raw, status = exc.read(), exc.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode("utf-8", "replace")


def _wait(
    what: str,
    probe: Callable[[], T | None],
    timeout: float,
    proc: subprocess.Popen[bytes] | None = None,
    log: Path | None = None,
) -> T:
    """Poll ``probe`` until it returns something truthy; fail (with the process' log) after ``timeout``."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"{what}: the process exited with {proc.returncode}\n{_log(log) if log else ''}", pytrace=False)
        try:
            result = probe()
            if result:
                return result
        except (OSError, ValueError) as exc:
            last_error = exc
        time.sleep(0.2)
    pytest.fail(f"{what}: not within {timeout:.0f} s (last error: {last_error})\n{_log(log) if log else ''}", pytrace=False)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def _log(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")[-4000:] if path.exists() else ""


#: A shadow candidate for the example policy: it would block what the example sends back for an
#: unknown tool, so the scrape has a disagreement to show (guard_shadow_disagreements_total).
CANDIDATE = "name: candidate\nactions:\n  unknown_tool: block\n"


@contextmanager
def served_guard(tmp_path: Path, env: dict[str, str]) -> Iterator[str]:
    """``guard.service:create_app`` under uvicorn on a free loopback port with ``env``; yields its
    base URL once ``/healthz`` answers (its log in ``tmp_path/guard.log`` otherwise)."""
    port = free_port()
    log = tmp_path / "guard.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "guard.service:create_app", "--factory",
             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        # needs guard.service (extras service, telemetry) and uvicorn: a failure here shows the service's log
        _wait(f"guard service on {url}", lambda: _request("GET", f"{url}/healthz", timeout=1)[0] == 200, 20, proc, log)
        yield url
    finally:
        _stop(proc)


@contextmanager
def served_prometheus(tmp_path: Path, config: dict[str, Any]) -> Iterator[str]:
    """Debian's prometheus with ``config`` on a free loopback port; yields its URL once ready."""
    binary = require_binary("prometheus")
    port = free_port()
    config_file = tmp_path / "prometheus.yml"
    config_file.write_text(yaml.safe_dump(config), encoding="utf-8")
    log = tmp_path / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [binary, f"--config.file={config_file}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(f"prometheus on {url}", lambda: _request("GET", f"{url}/-/ready", timeout=1)[0] == 200, 20, proc, log)
        yield url
    finally:
        _stop(proc)


@pytest.fixture
def guard_service(tmp_path: Path) -> Iterator[str]:
    """``guard.service:create_app`` under uvicorn on a free loopback port; yields its base URL. The
    policy is the example policy with a shadow candidate added (the example itself has none)."""
    (tmp_path / "candidate.yaml").write_text(CANDIDATE, encoding="utf-8")
    policy = tmp_path / "policy.yaml"
    policy.write_text((DEPLOY / "policy.yaml").read_text(encoding="utf-8") + "\nshadow: candidate.yaml\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "GUARD_", "PROMETHEUS_MULTIPROC"))}
    env.update(
        GUARD_POLICY=str(policy),
        GUARD_API_TOKEN=TOKEN,
        GUARD_METRIC_TOOLS="search_flights,get_weather",
        OTEL_TRACES_EXPORTER="none",
        PYTHONPATH=str(REPO),
    )
    with served_guard(tmp_path, env) as url:
        yield url


@pytest.fixture
def prometheus(tmp_path: Path, guard_service: str) -> Iterator[str]:
    """Debian's prometheus scraping the service every second, with the repository's alert rules."""
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(ALERTS)],
        "scrape_configs": [
            {"job_name": "guard", "metrics_path": "/metrics", "static_configs": [{"targets": [guard_service.removeprefix("http://")]}]}
        ],
    }
    with served_prometheus(tmp_path, config) as url:
        yield url


def _check(url: str, call: dict[str, Any], thread_id: str) -> dict[str, Any]:
    status, decision = _request("POST", f"{url}/v1/check", {"tools": TOOLS, "messages": MESSAGES, "call": call, "thread_id": thread_id}, TOKEN)
    assert status == 200, decision
    return decision


def _exercise(url: str) -> None:
    """Requests that make every labelled metric exist: an allowed call, a retry, an approval
    escalation answered by a human, and a tool failure reported to the circuit breaker."""
    assert _request("POST", f"{url}/v1/check", {"tools": TOOLS, "call": {"name": "get_weather", "args": {}}})[0] == 401

    allowed = _check(url, {"name": "search_flights", "args": {"from_city": "Berlin", "to_city": "Paris"}, "id": "c1"}, "t1")
    assert allowed["action"] == "allow", allowed
    retried = _check(url, {"name": "book_hotel", "args": {"city": "Paris"}, "id": "c2"}, "t1")
    assert retried["action"] == "retry", retried
    warned = _check(url, {"name": "get_weather", "args": {"city": "London"}, "id": "c4"}, "t1")
    assert warned["action"] == "warn" and warned["warnings"][0]["category"] == "ungrounded_value", warned
    asked = _check(url, {"name": "transfer_money", "args": {"to_account": "DE123", "amount": 20}, "id": "c3"}, "t1")
    assert asked["action"] == "ask_human" and asked["escalation"], asked

    status, pending = _request("GET", f"{url}/v1/escalations", token=TOKEN)
    assert status == 200 and [e["id"] for e in pending["escalations"]] == [asked["escalation"]["id"]], pending
    status, resolved = _request("POST", f"{url}/v1/escalations/{asked['escalation']['id']}/resolve", {"action": "approve"}, TOKEN)
    assert status == 200 and resolved["status"] == "resolved", resolved

    status, circuit = _request("POST", f"{url}/v1/outcome", {"tool": "get_weather", "ok": False, "error_kind": "tool_timeout"}, TOKEN)
    assert status == 200, circuit

    status, text = _request("GET", f"{url}/metrics")
    assert status == 200
    for family in METRIC_FAMILIES:
        base = re.escape(family.removesuffix("_total"))
        assert re.search(rf"^# TYPE {base}(_total)? {METRIC_FAMILIES[family]}$", text, re.MULTILINE), f"/metrics lacks {family}"


def _api(prometheus: str, path: str, **params: str) -> Any:
    status, body = _request("GET", f"{prometheus}{path}?{urllib.parse.urlencode(params)}")
    assert status == 200 and body["status"] == "success", body
    return body["data"]


def test_prometheus_scrapes_every_metric_the_dashboard_queries(guard_service: str, prometheus: str) -> None:
    _exercise(guard_service)

    def target_up() -> bool:
        targets = _api(prometheus, "/api/v1/targets")["activeTargets"]
        return bool(targets) and all(t["health"] == "up" and t["lastScrape"] > "0001" for t in targets)

    _wait("the guard target up in Prometheus", target_up, 20)

    names = sorted(set().union(*(promql_metric_names(expr) for _, expr in dashboard_exprs())))
    assert {family_of(n) for n in names} == set(METRIC_FAMILIES)

    def series_of(name: str) -> list[dict[str, Any]] | None:
        return _api(prometheus, "/api/v1/query", query=name)["result"] or None

    found: dict[str, list[dict[str, Any]]] = {}
    for name in names:
        found[name] = _wait(f"series of {name} in Prometheus", lambda name=name: series_of(name), 10)
        assert all(s["metric"]["job"] == "guard" for s in found[name])

    def values(name: str, **labels: str) -> list[float]:
        return [float(s["value"][1]) for s in found[name] if labels.items() <= s["metric"].items()]

    # what the requests above did, as Prometheus stored it
    assert values("guard_decisions_total", tool="search_flights", action="allow", category="none") == [1.0]
    assert values("guard_decisions_total", action="retry", category="unknown_tool") == [1.0]
    assert values("guard_decisions_total", tool="__unknown__", action="retry") == [1.0]
    assert sum(values("guard_retries_total", category="unknown_tool")) == 1.0
    assert values("guard_escalations_total", outcome="opened") and values("guard_escalations_total", outcome="approved")
    assert values("guard_escalations_pending") == [0.0]
    assert values("guard_tool_errors_total", tool="get_weather", kind="tool_timeout") == [1.0]
    assert values("guard_circuit_state", tool="get_weather") == [0.0]  # one failure: still closed
    assert values("guard_state_backend_errors_total") == [0.0]
    assert values("guard_warnings_total", tool="get_weather", category="ungrounded_value") == [1.0]
    assert values("guard_check_duration_seconds_count") == [4.0]
    assert values("guard_shadow_disagreements_total", active_action="retry", shadow_action="block", category="unknown_tool") == [1.0]

    # every dashboard expression runs on the real engine; the rate panels have data once two scrapes are in
    for title, expr in dashboard_exprs():
        _api(prometheus, "/api/v1/query", query=expr)
    _wait(
        "rate of guard_decisions_total",
        lambda: _api(prometheus, "/api/v1/query", query="sum by (action) (rate(guard_decisions_total[5m]))")["result"],
        10,
    )

    # the alert rules are loaded and evaluate without error against the live series
    def rules_evaluated() -> list[dict[str, Any]] | None:
        rules = [r for g in _api(prometheus, "/api/v1/rules")["groups"] for r in g["rules"]]
        return rules if rules and all(r.get("lastEvaluation", "").startswith("20") for r in rules) else None

    rules = _wait("alert rules evaluated", rules_evaluated, 10)
    assert len(rules) == 5
    assert all(r["health"] == "ok" for r in rules), [(r["name"], r.get("lastError")) for r in rules]
    assert all(r["state"] == "inactive" for r in rules), [(r["name"], r["state"]) for r in rules]
