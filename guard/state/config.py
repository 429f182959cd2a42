"""Configuration of the shared state: which backend, where, and what to do when it is down.

Strict like the policy (``extra="forbid"``): a misspelt key in a deployment's settings is an error,
not a silently ignored default.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

BackendErrorMode = Literal["fail_open", "fail_closed"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CircuitConfig(_Strict):
    """The per-tool circuit breaker shared by every replica."""

    failure_threshold: int = Field(5, ge=1, description="consecutive failures that open the circuit")
    reset_seconds: float = Field(30.0, gt=0, description="time an open circuit waits before a probe may run")
    half_open_max_probes: int = Field(1, ge=1, description="probes allowed at once across replicas when half open")


class StateConfig(_Strict):
    """Where retry budgets, circuits and escalations live."""

    backend: Literal["memory", "redis"] = "memory"
    redis_url: str | None = Field(
        None,
        description="redis://… (one server) or redis+cluster://host:port[,host:port…] (nodes of a Redis "
        "Cluster, the first that answers is asked for the slot map; rediss+cluster:// with TLS) URL; "
        "GUARD_REDIS_URL fills it when unset",
    )
    key_prefix: str = Field("guard:", description="prefix of every key; no '{' or '}' (the keys' cluster hash tags follow it)")
    on_backend_error: BackendErrorMode = Field(
        "fail_closed",
        description="fail_open: act as if nothing were recorded; fail_closed: budgets spent, circuits open",
    )
    retry_ttl_seconds: float = Field(86400, gt=0, description="retry counts of a thread expire this long after its last retry")
    timeout_ms: float = Field(
        500,
        gt=0,
        le=60_000,
        description="budget for all state operations of one decision (and the Redis socket timeout); "
        "once spent, the remaining operations answer per on_backend_error",
    )
    circuit: CircuitConfig = CircuitConfig()
    wait_replicas: int = Field(
        0,
        ge=0,
        le=16,
        description="after each state write, wait (Redis WAIT, within half of timeout_ms) until this many "
        "replicas have it, so a failover cannot lose it; fewer in time answers per on_backend_error. "
        "0: do not wait (a failover may lose the last writes)",
    )

    @field_validator("key_prefix")
    @classmethod
    def _no_braces(cls, prefix: str) -> str:
        return check_key_prefix(prefix)


def check_key_prefix(prefix: str) -> str:
    """A key prefix, refused when it holds ``{`` or ``}``: a brace in the prefix would become (part
    of) every key's hash tag and split the keys one operation touches across cluster slots."""
    if "{" in prefix or "}" in prefix:
        raise ValueError(f"key_prefix {prefix!r} must not contain '{{' or '}}': the keys' hash tags follow it")
    return prefix
