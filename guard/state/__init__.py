"""Shared state for guard replicas: retry budgets, circuit breakers, pending escalations.

``make_store()`` picks the backend: in memory by default; Redis (wrapped so an outage degrades
instead of raising) when the configuration says so or ``GUARD_REDIS_URL`` is set, so a deployment
switches to shared state with one environment variable.
"""

from __future__ import annotations

import os

from guard.state.base import (
    EXPIRED_RESOLUTION,
    Approval,
    CircuitState,
    CircuitStatus,
    Escalation,
    EscalationPage,
    EscalationRefused,
    EscalationStatus,
    RetryCounts,
    StateBackendError,
    StateStore,
)
from guard.state.config import CircuitConfig, StateConfig
from guard.state.memory import MemoryStore
from guard.state.resilient import ResilientStore

#: Environment variable naming the Redis server; it selects the Redis backend.
REDIS_URL_ENV = "GUARD_REDIS_URL"


def make_store(config: StateConfig | None = None) -> StateStore:
    """The store a configuration asks for.

    Redis when ``backend == "redis"`` or ``GUARD_REDIS_URL`` is set (at the URL ``redis_url``, or
    the variable's when that is unset; a ``redis+cluster://`` URL names a Redis Cluster), with
    ``timeout_ms`` as its socket timeout and ``wait_replicas`` replicas awaited per write, wrapped in a
    ``ResilientStore`` answering per ``on_backend_error`` once a decision's ``timeout_ms`` budget
    is spent; otherwise a ``MemoryStore``.
    """
    config = config or StateConfig()
    env_url = os.environ.get(REDIS_URL_ENV) or None
    if config.backend == "memory" and env_url is None:
        return MemoryStore(circuit=config.circuit)
    url = config.redis_url or env_url
    if url is None:
        raise ValueError(f"state backend 'redis' needs redis_url or the {REDIS_URL_ENV} environment variable")
    from guard.state.redis import RedisStore  # redis is an optional dependency

    timeout = config.timeout_ms / 1000
    redis_store = RedisStore(
        url,
        key_prefix=config.key_prefix,
        circuit=config.circuit,
        socket_timeout=timeout,
        wait_replicas=config.wait_replicas,
    )
    return ResilientStore(redis_store, mode=config.on_backend_error, timeout_ms=config.timeout_ms)


__all__ = [
    "EXPIRED_RESOLUTION",
    "REDIS_URL_ENV",
    "Approval",
    "CircuitConfig",
    "CircuitState",
    "CircuitStatus",
    "Escalation",
    "EscalationPage",
    "EscalationRefused",
    "EscalationStatus",
    "MemoryStore",
    "ResilientStore",
    "RetryCounts",
    "StateBackendError",
    "StateConfig",
    "StateStore",
    "make_store",
]
