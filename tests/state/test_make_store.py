"""``make_store`` picks the backend from the configuration and the GUARD_REDIS_URL variable."""

from __future__ import annotations

import pytest
import redis

from guard.state import REDIS_URL_ENV, CircuitConfig, MemoryStore, ResilientStore, StateConfig, make_store
from guard.state.redis import RedisStore


def test_the_default_store_is_in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REDIS_URL_ENV, raising=False)
    assert isinstance(make_store(), MemoryStore)
    assert isinstance(make_store(StateConfig(redis_url="redis://ignored:6379/0")), MemoryStore)


def test_guard_redis_url_selects_a_resilient_redis_store(
    monkeypatch: pytest.MonkeyPatch, redis_server: str, key_prefix: str
) -> None:
    monkeypatch.setenv(REDIS_URL_ENV, redis_server)
    store = make_store(StateConfig(key_prefix=key_prefix, on_backend_error="fail_open"))
    assert isinstance(store, ResilientStore) and isinstance(store.inner, RedisStore)
    assert store.mode == "fail_open"
    assert store.ping()
    store.incr_retries("t1", "sig", ttl_seconds=60)
    assert redis.Redis.from_url(redis_server).exists(f"{key_prefix}retries:{{t1}}")
    store.close()


def test_a_configured_redis_url_wins_over_the_variable(monkeypatch: pytest.MonkeyPatch, redis_server: str) -> None:
    monkeypatch.setenv(REDIS_URL_ENV, "redis://127.0.0.1:1/0")
    store = make_store(StateConfig(backend="redis", redis_url=redis_server, circuit=CircuitConfig(failure_threshold=2)))
    assert isinstance(store, ResilientStore)
    assert store.ping()
    assert store.inner.circuit_config.failure_threshold == 2  # type: ignore[attr-defined]


def test_the_redis_backend_without_any_url_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REDIS_URL_ENV, raising=False)
    with pytest.raises(ValueError, match=REDIS_URL_ENV):
        make_store(StateConfig(backend="redis"))


def test_state_config_rejects_unknown_keys() -> None:
    with pytest.raises(ValueError, match="redis_ur"):
        StateConfig.model_validate({"backend": "redis", "redis_ur": "redis://x"})
