"""The shadow metric in a real Prometheus scrape: the guard service (uvicorn, a policy with a
``shadow`` candidate) decides a call the candidate would decide otherwise; Debian's Prometheus
scrapes ``/metrics`` and stores ``guard_shadow_disagreements_total`` with its labels."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.helpers import REPO
from tests.deploy.test_prometheus_scrape import _api, _request, _wait, served_guard, served_prometheus

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city.", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


@pytest.fixture
def shadowed_service(tmp_path: Path) -> Iterator[str]:
    (tmp_path / "candidate.yaml").write_text("name: candidate\nactions:\n  unknown_tool: block\n", encoding="utf-8")
    policy = tmp_path / "active.yaml"
    policy.write_text(f"name: active\nshadow: candidate.yaml\nlog:\n  path: {tmp_path / 'decisions.jsonl'}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "GUARD_", "PROMETHEUS_MULTIPROC"))}
    env.update(GUARD_POLICY=str(policy), GUARD_METRIC_TOOLS="get_weather", OTEL_TRACES_EXPORTER="none", PYTHONPATH=str(REPO))
    with served_guard(tmp_path, env) as url:
        yield url


@pytest.fixture
def scraping(tmp_path: Path, shadowed_service: str) -> Iterator[str]:
    config = {"global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
              "scrape_configs": [{"job_name": "guard", "static_configs": [{"targets": [shadowed_service.removeprefix("http://")]}]}]}
    with served_prometheus(tmp_path, config) as url:
        yield url


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
