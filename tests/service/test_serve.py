"""``serve``: the service under uvicorn, as ``guard serve`` runs it; with several workers the
metrics of all of them are served from any one."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.service.conftest import TOOLS
from tests.state.helpers import free_port, healthy, stop_process_group

ROOT = Path(__file__).parents[2]


@pytest.fixture
def served() -> Iterator[str]:
    """``serve(workers=2)`` in a process of its own, answering /healthz (within 30 s), stopped at teardown."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GUARD_", "PROMETHEUS_", "OTEL_"))}
    process = subprocess.Popen(
        [sys.executable, "-c", f"from guard.service import serve; serve(port={port}, workers=2)"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    try:
        while not healthy(url):
            if process.poll() is not None or time.monotonic() > deadline:
                why = process.stderr.read().decode() if process.poll() is not None else "no answer in 30 s"  # type: ignore[union-attr]
                pytest.fail(f"guard serve did not come up: {why}")
            time.sleep(0.1)
        yield url
    finally:
        stop_process_group(process)


def test_served_workers_report_their_metrics_together(served: str) -> None:
    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}
    request = {"tools": TOOLS, "messages": [{"role": "user", "content": "weather in Paris"}], "call": call}
    for _ in range(6):  # a connection each, so the workers share the requests
        assert httpx.post(f"{served}/v1/check", json=request, timeout=10).json()["action"] == "allow"
    for _ in range(4):  # whichever worker answers, it reports all six
        metrics = httpx.get(f"{served}/metrics", timeout=10).text
        assert 'guard_decisions_total{action="allow",category="none",tool="__unknown__"} 6.0' in metrics
