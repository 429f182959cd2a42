"""The state several guard replicas must agree on, behind one small synchronous interface.

Three things cannot live in one process once the guard runs as several replicas: retry budgets
(a model sent back by replica A must not get a fresh budget from replica B), per-tool circuit
breakers (a tool that keeps failing is cut off for everyone) and the escalations waiting for a
human (an answer is applied exactly once, whichever replica receives it). ``StateStore`` is that
contract; ``MemoryStore`` keeps it in one process and ``RedisStore`` across processes.

All times are ``time.time()`` floats from an injectable clock, so tests need no sleeps. A store
that cannot reach its backend raises ``StateBackendError``; ``ResilientStore`` turns that into an
explicit fail-open or fail-closed answer marked ``degraded``.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from guard.state.config import CircuitConfig

Clock = Callable[[], float]
CircuitState = Literal["closed", "open", "half_open"]
EscalationStatus = Literal["pending", "resolved", "expired"]

#: What an escalation nobody answered in time resolves to.
EXPIRED_RESOLUTION: dict[str, Any] = {"action": "reject", "reason": "expired"}

#: Expired escalations one ``expire_escalations`` call marks at most: the sweep runs on the request
#: path, so its cost is bounded whatever the backlog (a later call takes the rest).
SWEEP_LIMIT = 100

#: Where a page of pending escalations starts after: the previous page's last (expires_at, id).
PageCursor = tuple[float, str]


class StateBackendError(RuntimeError):
    """The shared-state backend could not be reached or refused an operation."""


class EscalationRefused(Exception):
    """An escalation was not registered because a cap on pending escalations was reached.

    ``cap`` names the policy setting (``max_pending`` or ``max_pending_per_thread``), ``limit``
    its value. Not a ``StateBackendError``: the backend answered, and said no.
    """

    def __init__(self, cap: str, limit: int) -> None:
        super().__init__(f"{cap} ({limit}) pending escalations reached")
        self.cap, self.limit = cap, limit


@dataclass(frozen=True)
class Approval:
    """A human's approval of one exact call, granted when its escalation is resolved and consumed
    (once) by the re-check that runs it. ``key`` binds thread, tool, arguments and policy
    (``approval_key``); ``escalation_id`` says which answer granted it."""

    key: str
    escalation_id: str
    ttl_seconds: float


def approval_key(thread_id: str, tool: str | None, args_hash: str, policy_hash: str) -> str:
    """The one key an approval of this call in this thread under this policy is stored under."""
    material = json.dumps([thread_id, tool, args_hash, policy_hash], separators=(",", ":"))
    return hashlib.sha256(material.encode()).hexdigest()


@dataclass(frozen=True)
class EscalationPage:
    """Pending escalations in order (soonest expiry, then id) and where the next page starts
    (None: this was the last)."""

    escalations: list[Escalation]
    next_after: PageCursor | None


@dataclass(frozen=True)
class RetryCounts:
    """Retries recorded so far for one call signature and for its whole thread."""

    per_call: int
    per_thread: int
    degraded: bool = False
    mode: str | None = None


@dataclass(frozen=True)
class CircuitStatus:
    """A tool's circuit as seen now: closed (calls run), open (calls refused) or half open (probing)."""

    tool: str
    state: CircuitState
    failures: int = 0
    reason: str | None = None
    opened_at: float | None = None
    retry_at: float | None = None
    degraded: bool = False
    mode: str | None = None


def circuit_status(
    tool: str, failures: int, opened_at: float | None, reason: str | None, now: float, config: CircuitConfig
) -> CircuitStatus:
    """The state follows from when the circuit opened: open until ``reset_seconds`` later, then half open."""
    if opened_at is None:
        return CircuitStatus(tool, "closed", failures, reason)
    retry_at = opened_at + config.reset_seconds
    return CircuitStatus(tool, "open" if now < retry_at else "half_open", failures, reason, opened_at, retry_at)


class Escalation(BaseModel):
    """A question put to a human, registered so that exactly one answer is ever applied to it.

    ``args_hash`` and ``policy_hash`` bind the answer to the exact arguments and policy it was asked
    about; ``trace_context`` carries the trace the question was raised in (W3C headers) so the
    answer, received later by any replica, joins that trace.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    thread_id: str
    payload: dict[str, Any]
    args_hash: str
    policy_hash: str
    created_at: float
    expires_at: float
    status: EscalationStatus = "pending"
    resolution: dict[str, Any] | None = None
    resolved_at: float | None = None
    trace_context: dict[str, str] = Field(default_factory=dict)
    tool_schema: dict[str, Any] | None = Field(
        None, description="the JSON schema of the tool's arguments, so an edited call is validated before it is accepted"
    )


class StateStore(ABC):
    """Retry budgets, circuit breakers and pending escalations shared by guard replicas.

    Every mutating operation is atomic across all replicas using the same backend.
    """

    # Retry budgets
    @abstractmethod
    def incr_retries(self, thread_id: str, signature: str, ttl_seconds: float) -> RetryCounts:
        """Count one more retry of ``signature`` in ``thread_id``; the thread's counts expire
        ``ttl_seconds`` after its last retry. Returns the counts after the increment."""

    @abstractmethod
    def get_retries(self, thread_id: str, signature: str) -> RetryCounts:
        """The counts so far (zero for a thread never seen or expired)."""

    # Circuit breakers
    @abstractmethod
    def record_tool_result(self, tool: str, ok: bool, reason: str | None = None) -> CircuitStatus:
        """A success closes the circuit and clears its failures; ``failure_threshold`` consecutive
        failures open it; a failure while half open (a failed probe) opens it again."""

    @abstractmethod
    def circuit(self, tool: str) -> CircuitStatus:
        """The tool's circuit now (closed for a tool never seen)."""

    @abstractmethod
    def acquire_probe(self, tool: str) -> bool:
        """Whether a call may run: always when closed, never when open, and when half open only
        while fewer than ``half_open_max_probes`` probes are in flight across replicas. A probe
        ends when its result is recorded, or after ``reset_seconds`` if it never is."""

    @abstractmethod
    def all_circuits(self) -> dict[str, CircuitStatus]:
        """Every tool with a recorded result, by name."""

    # Escalations
    @abstractmethod
    def put_escalation(
        self, escalation: Escalation, *, max_pending: int | None = None, max_pending_per_thread: int | None = None
    ) -> None:
        """Register (or replace) an escalation, in O(1) store operations whatever the backlog.

        A new pending escalation is refused with ``EscalationRefused`` (nothing stored) when
        ``max_pending`` escalations are already pending, or ``max_pending_per_thread`` in its
        thread (a thread id of ``""`` is not a thread: only the global cap applies). The check and
        the write are one atomic step across replicas."""

    @abstractmethod
    def get_escalation(self, escalation_id: str) -> Escalation | None: ...

    @abstractmethod
    def escalation_page(
        self, thread_id: str | None = None, *, limit: int = 100, after: PageCursor | None = None
    ) -> EscalationPage:
        """Up to ``limit`` escalations still awaiting an answer (pending and not yet past
        ``expires_at``), of one thread or of all, ordered by (expires_at, id), starting after
        ``after``. Costs O(log n + limit): walking the pages returns each escalation pending
        throughout exactly once."""

    def pending_escalations(self, thread_id: str | None = None) -> list[Escalation]:
        """Every escalation still awaiting an answer, soonest to expire first (all pages: O(n),
        for tests and tools, never on the request path)."""
        found: list[Escalation] = []
        after: PageCursor | None = None
        while True:
            page = self.escalation_page(thread_id, limit=500, after=after)
            found.extend(page.escalations)
            if page.next_after is None:
                return found
            after = page.next_after

    @abstractmethod
    def pending_count(self, thread_id: str | None = None) -> int:
        """How many escalations are pending and not yet past ``expires_at`` (O(log n))."""

    @abstractmethod
    def resolve_escalation(
        self, escalation_id: str, resolution: dict[str, Any], *, approval: Approval | None = None
    ) -> Escalation | None:
        """Apply an answer exactly once: the first caller gets the resolved escalation; a later or
        concurrent caller, an unknown id or an escalation past ``expires_at`` gets None. With
        ``approval``, the winner's resolution grants it in the same atomic step."""

    @abstractmethod
    def expire_escalations(
        self, now: float | None = None, *, default_resolution: dict[str, Any] | None = None, limit: int = SWEEP_LIMIT
    ) -> list[Escalation]:
        """Mark up to ``limit`` pending escalations whose ``expires_at`` has passed (soonest
        first) as expired, resolved with ``default_resolution`` (``EXPIRED_RESOLUTION`` unless
        given). Each escalation is returned by exactly one call, even when replicas sweep
        concurrently."""

    # Approvals
    @abstractmethod
    def grant_approval(self, approval: Approval) -> None:
        """Record an approval (replacing one under the same key); it lapses after its TTL."""

    @abstractmethod
    def consume_approval(self, keys: list[str]) -> str | None:
        """Take the first approval found under ``keys``: its escalation id, or None. Atomic
        across replicas: an approval is consumed once."""

    # Lifecycle
    @abstractmethod
    def ping(self) -> bool:
        """Whether the backend answers."""

    @abstractmethod
    def close(self) -> None: ...
