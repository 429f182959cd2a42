"""Helpers for the shared-state tests: a fake clock, the circuit settings they assume, and a
throwaway redis-server.

A missing ``redis-server`` binary fails the tests instead of skipping them: a skip would hide a CI
that forgot to install it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass

import pytest
import redis

from guard.state import CircuitConfig

CIRCUIT = CircuitConfig(failure_threshold=3, reset_seconds=10.0, half_open_max_probes=1)


class FakeClock:
    """A clock tests move by hand."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class RedisServer:
    process: subprocess.Popen[bytes]
    url: str

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after 5 s)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def free_port() -> int:
    """A loopback port nothing listens on (at the time of asking)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis() -> RedisServer:
    """A throwaway redis-server on a free loopback port, answering PING (within 10 s) or failing the test."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server not found: install Debian's redis-server (apt-get install -y redis-server)")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = RedisServer(process, f"redis://127.0.0.1:{port}/0")
    client = redis.Redis.from_url(server.url, socket_timeout=0.5, socket_connect_timeout=0.5, retry=None)
    deadline = time.monotonic() + 10
    try:
        while not _answers(client):
            if process.poll() is not None or time.monotonic() > deadline:
                server.stop()
                pytest.fail(f"redis-server on port {port} did not answer PING within 10 s (exit code {process.poll()})")
            time.sleep(0.02)
    finally:
        client.close()
    return server


def _answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.exceptions.ConnectionError:
        return False


def stop_process_group(process: "subprocess.Popen[bytes]") -> None:
    """SIGTERM a server started in its own process group, SIGKILL it if it lingers past 10 s."""
    import os
    import signal

    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def healthy(url: str) -> bool:
    """Whether a guard service answers ``/healthz`` with 200 within a second."""
    import httpx

    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
