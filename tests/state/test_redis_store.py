"""What only the Redis store must do: keep its keys under the prefix with TTLs, share state with
another OS process, and report an unreachable server as ``StateBackendError`` without the password."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import redis

from guard.state import StateBackendError
from guard.state.redis import RedisStore, redact_url
from tests.state.helpers import CIRCUIT, FakeClock, free_port

ROOT = Path(__file__).resolve().parents[2]


def test_every_key_lives_under_the_prefix_and_retry_keys_carry_their_ttl(
    redis_server: str, key_prefix: str, clock: FakeClock
) -> None:
    store = RedisStore(redis_server, key_prefix=key_prefix, circuit=CIRCUIT, clock=clock)
    store.incr_retries("t1", "sig", ttl_seconds=120)
    store.record_tool_result("search", ok=False)
    raw = redis.Redis.from_url(redis_server, decode_responses=True)
    keys = set(raw.scan_iter(f"{key_prefix}*"))
    assert keys == {f"{key_prefix}retries:{{t1}}", f"{key_prefix}circuit:{{search}}", f"{key_prefix}{{circuits}}"}
    assert 119_000 < raw.pttl(f"{key_prefix}retries:{{t1}}") <= 120_000


def test_a_probe_slot_expires_after_reset_seconds_if_no_result_is_reported(
    redis_server: str, key_prefix: str, clock: FakeClock
) -> None:
    store = RedisStore(redis_server, key_prefix=key_prefix, circuit=CIRCUIT, clock=clock)
    for _ in range(3):
        store.record_tool_result("search", ok=False)
    clock.advance(10)
    assert store.acquire_probe("search")
    raw = redis.Redis.from_url(redis_server)
    assert 9_000 < raw.pttl(f"{key_prefix}probes:{{search}}") <= 10_000


def test_a_circuit_opened_in_another_process_is_open_here(redis_server: str, key_prefix: str) -> None:
    other = textwrap.dedent(
        f"""
        from guard.state import CircuitConfig
        from guard.state.redis import RedisStore
        store = RedisStore({redis_server!r}, key_prefix={key_prefix!r}, circuit=CircuitConfig(failure_threshold=3))
        for _ in range(3):
            store.record_tool_result("payments", ok=False, reason="503 from another process")
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", other], check=True, cwd=ROOT, env=env, timeout=30)
    here = RedisStore(redis_server, key_prefix=key_prefix, circuit=CIRCUIT)  # the real clock, like the other process
    status = here.circuit("payments")
    assert (status.state, status.failures, status.reason) == ("open", 3, "503 from another process")
    assert status.opened_at is not None and abs(status.opened_at - time.time()) < 30


def test_an_unreachable_server_raises_state_backend_error_naming_the_url_without_password() -> None:
    url = f"redis://guard:s3cret@127.0.0.1:{free_port()}/0"
    store = RedisStore(url, socket_timeout=0.2)
    with pytest.raises(StateBackendError) as info:
        store.incr_retries("t1", "sig", ttl_seconds=60)
    message = str(info.value)
    assert "redis://guard:***@127.0.0.1" in message and "incr_retries" in message
    assert "s3cret" not in message
    assert isinstance(info.value.__cause__, redis.exceptions.ConnectionError)
    assert store.ping() is False


def test_redact_url_keeps_everything_but_the_password() -> None:
    assert redact_url("redis://:pw@host:6380/2") == "redis://:***@host:6380/2"
    assert redact_url("rediss://user:pw@host/0?ssl_cert_reqs=none") == "rediss://user:***@host/0?ssl_cert_reqs=none"
    assert redact_url("redis://host:6379/0") == "redis://host:6379/0"
