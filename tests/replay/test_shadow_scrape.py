"""The shadow metric in a real Prometheus scrape: the guard service (uvicorn, a policy with a
``shadow`` candidate) decides a call the candidate would decide otherwise; Debian's Prometheus
scrapes ``/metrics`` and stores ``guard_shadow_disagreements_total`` with its labels."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.deploy.helpers import REPO, free_port, require_binary
from tests.deploy.test_prometheus_scrape import _api, _request, _stop, _wait

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


@pytest.fixture
def shadowed_service(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "candidate.yaml").write_text("name: candidate\nactions:\n  unknown_tool: block\n", encoding="utf-8")
    policy = tmp_path / "active.yaml"
    policy.write_text(f"name: active\nshadow: candidate.yaml\nlog:\n  path: {tmp_path / 'decisions.jsonl'}\n", encoding="utf-8")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "GUARD_", "PROMETHEUS_MULTIPROC"))}
    env.update(GUARD_POLICY=str(policy), GUARD_METRIC_TOOLS="get_weather", OTEL_TRACES_EXPORTER="none", PYTHONPATH=str(REPO))
    log = tmp_path / "guard.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "guard.service:create_app", "--factory", "--host", "127.0.0.1",
             "--port", str(port), "--log-level", "warning"],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(f"guard service on {url}", lambda: _request("GET", f"{url}/healthz", timeout=1)[0] == 200, 20, proc, log)
        yield url
    finally:
        _stop(proc)


@pytest.fixture
def scraping(tmp_path: Path, shadowed_service: str) -> Iterator[str]:
    port = free_port()
    config = {"global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
              "scrape_configs": [{"job_name": "guard", "static_configs": [{"targets": [shadowed_service.removeprefix("http://")]}]}]}
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    log = tmp_path / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [require_binary("prometheus"), f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(f"prometheus on {url}", lambda: _request("GET", f"{url}/-/ready", timeout=1)[0] == 200, 20, proc, log)
        yield url
    finally:
        _stop(proc)


def test_prometheus_stores_the_shadow_disagreements(shadowed_service: str, scraping: str, tmp_path: Path) -> None:
    said = [{"role": "user", "content": "What is the weather in Paris?"}]
    for call, thread in (({"name": "get_forecast", "args": {"city": "Paris"}, "id": "c1"}, "t1"),
                         ({"name": "get_weather", "args": {"city": "Paris"}, "id": "c2"}, "t1")):
        status, decision = _request("POST", f"{shadowed_service}/v1/check", {"tools": TOOLS, "messages": said, "call": call, "thread_id": thread})
        assert status == 200 and "shadow" not in decision, decision
    assert decision["action"] == "allow"

    def series() -> list[dict[str, object]] | None:
        return _api(scraping, "/api/v1/query", query="guard_shadow_disagreements_total")["result"] or None

    found = _wait("guard_shadow_disagreements_total in Prometheus", series, 20)
    assert [(s["metric"]["active_action"], s["metric"]["shadow_action"], s["metric"]["category"], float(s["value"][1]))
            for s in found] == [("retry", "block", "unknown_tool", 1.0)]
    lines = (tmp_path / "decisions.jsonl").read_text().splitlines()
    assert sum('"thread_id":"t1"' in line and '"source":"service"' in line for line in lines) == 2
