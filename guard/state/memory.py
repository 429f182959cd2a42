"""The default state store: one process, one lock.

Right for a single replica, for tests and for the demo. Expiry follows the injected clock, so a
test advances time instead of sleeping. An escalation is deep-copied in and out (that one, never the
others), so a caller mutating an escalation's payload cannot change what is stored (as with a
remote backend).

Pending escalations are indexed like the Redis store's sorted sets: sorted lists of
``(expires_at, id)``, one for all and one per thread, kept with ``bisect``. Registering,
resolving, counting and a page cost O(log n) comparisons (plus a list insertion's memmove),
independent of the payloads of the others; the expiry sweep takes at most ``limit`` at a time.
"""

from __future__ import annotations

import bisect
import copy
import heapq
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from guard.state.base import (
    EXPIRED_RESOLUTION,
    SWEEP_LIMIT,
    Approval,
    CircuitStatus,
    Clock,
    Escalation,
    EscalationPage,
    EscalationRefused,
    EscalationStatus,
    PageCursor,
    RetryCounts,
    StateStore,
    circuit_status,
)
from guard.state.config import CircuitConfig

#: How long a resolved or expired escalation stays readable.
DEFAULT_RETENTION_SECONDS = 7 * 86400.0

#: Expired retry counts are dropped at most this often (seconds of the store's clock).
_SWEEP_INTERVAL = 60.0

#: Sorts after every id with the same expiry: ``(t, _LAST)`` bounds all entries expiring at ``t``.
_LAST = "\U0010ffff"


@dataclass
class _Retries:
    per_call: dict[str, int] = field(default_factory=dict)
    per_thread: int = 0
    expires_at: float = 0.0


@dataclass
class _Circuit:
    failures: int = 0
    opened_at: float | None = None
    reason: str | None = None
    probes: int = 0
    probes_expire_at: float = 0.0


class MemoryStore(StateStore):
    """Thread-safe in-process state: every operation holds one ``threading.Lock``."""

    def __init__(
        self,
        circuit: CircuitConfig | None = None,
        clock: Clock = time.time,
        retention_seconds: float = DEFAULT_RETENTION_SECONDS,
    ) -> None:
        self.circuit_config = circuit or CircuitConfig()
        self._clock = clock
        self._retention = retention_seconds
        self._lock = threading.Lock()
        self._retries: dict[str, _Retries] = {}
        self._sweep_at = 0.0
        self._circuits: dict[str, _Circuit] = {}
        self._escalations: dict[str, Escalation] = {}
        self._pending: list[PageCursor] = []  # (expires_at, id) of every pending escalation, sorted
        self._pending_by_thread: dict[str, list[PageCursor]] = {}
        self._forget: list[tuple[float, str]] = []  # heap: (when a closed escalation is dropped, id)
        self._approvals: dict[str, tuple[str, float]] = {}  # key -> (escalation id, expires at)
        self._approval_expiry: list[tuple[float, str]] = []  # heap: (expires at, key)

    # Retry budgets
    def incr_retries(self, thread_id: str, signature: str, ttl_seconds: float) -> RetryCounts:
        with self._lock:
            now = self._clock()
            if now >= self._sweep_at:
                self._retries = {t: r for t, r in self._retries.items() if r.expires_at > now}
                self._sweep_at = now + _SWEEP_INTERVAL
            entry = self._retries.get(thread_id)
            if entry is None or entry.expires_at <= now:
                self._retries[thread_id] = entry = _Retries()
            entry.per_call[signature] = entry.per_call.get(signature, 0) + 1
            entry.per_thread += 1
            entry.expires_at = now + ttl_seconds
            return RetryCounts(entry.per_call[signature], entry.per_thread)

    def get_retries(self, thread_id: str, signature: str) -> RetryCounts:
        with self._lock:
            entry = self._retries.get(thread_id)
            if entry is None or entry.expires_at <= self._clock():
                return RetryCounts(0, 0)
            return RetryCounts(entry.per_call.get(signature, 0), entry.per_thread)

    # Circuit breakers
    def record_tool_result(self, tool: str, ok: bool, reason: str | None = None) -> CircuitStatus:
        with self._lock:
            now = self._clock()
            if ok:
                c = self._circuits[tool] = _Circuit()
            else:
                c = self._circuits.setdefault(tool, _Circuit())
                c.failures += 1
                c.reason = reason
                half_open = c.opened_at is not None and now >= c.opened_at + self.circuit_config.reset_seconds
                if half_open or (c.opened_at is None and c.failures >= self.circuit_config.failure_threshold):
                    c.opened_at, c.probes = now, 0
            return self._status(tool, c, now)

    def circuit(self, tool: str) -> CircuitStatus:
        with self._lock:
            return self._status(tool, self._circuits.get(tool, _Circuit()), self._clock())

    def acquire_probe(self, tool: str) -> bool:
        with self._lock:
            now = self._clock()
            c = self._circuits.get(tool)
            if c is None or c.opened_at is None:
                return True
            if now < c.opened_at + self.circuit_config.reset_seconds:
                return False
            if c.probes_expire_at <= now:
                c.probes = 0
            if c.probes >= self.circuit_config.half_open_max_probes:
                return False
            c.probes += 1
            c.probes_expire_at = now + self.circuit_config.reset_seconds
            return True

    def all_circuits(self) -> dict[str, CircuitStatus]:
        with self._lock:
            now = self._clock()
            return {tool: self._status(tool, c, now) for tool, c in self._circuits.items()}

    def _status(self, tool: str, c: _Circuit, now: float) -> CircuitStatus:
        return circuit_status(tool, c.failures, c.opened_at, c.reason, now, self.circuit_config)

    # Escalations
    def put_escalation(
        self, escalation: Escalation, *, max_pending: int | None = None, max_pending_per_thread: int | None = None
    ) -> None:
        stored = _copy(escalation)
        with self._lock:
            now = self._clock()
            old = self._escalations.get(stored.id)
            if stored.status == "pending" and (old is None or old.status != "pending"):
                if max_pending is not None and _live(self._pending, now) >= max_pending:
                    raise EscalationRefused("max_pending", max_pending)
                thread = self._pending_by_thread.get(stored.thread_id, [])
                if max_pending_per_thread is not None and stored.thread_id and _live(thread, now) >= max_pending_per_thread:
                    raise EscalationRefused("max_pending_per_thread", max_pending_per_thread)
            if old is not None:
                self._unindex(old)
            self._escalations[stored.id] = stored
            if stored.status == "pending":
                entry = (stored.expires_at, stored.id)
                bisect.insort(self._pending, entry)
                bisect.insort(self._pending_by_thread.setdefault(stored.thread_id, []), entry)
            else:
                heapq.heappush(self._forget, ((stored.resolved_at or now) + self._retention, stored.id))

    def get_escalation(self, escalation_id: str) -> Escalation | None:
        with self._lock:
            e = self._escalations.get(escalation_id)
        return None if e is None else _copy(e)  # stored values are never mutated, only replaced

    def escalation_page(
        self, thread_id: str | None = None, *, limit: int = 100, after: PageCursor | None = None
    ) -> EscalationPage:
        with self._lock:
            index = self._pending if thread_id is None else self._pending_by_thread.get(thread_id, [])
            start = max((self._clock(), _LAST), after) if after is not None else (self._clock(), _LAST)
            i = bisect.bisect_right(index, start)
            entries = index[i : i + limit + 1]
            found = [self._escalations[eid] for _, eid in entries[:limit]]
        next_after = entries[limit - 1] if len(entries) > limit else None
        return EscalationPage([_copy(e) for e in found], next_after)

    def pending_count(self, thread_id: str | None = None) -> int:
        with self._lock:
            index = self._pending if thread_id is None else self._pending_by_thread.get(thread_id, [])
            return _live(index, self._clock())

    def resolve_escalation(
        self, escalation_id: str, resolution: dict[str, Any], *, approval: Approval | None = None
    ) -> Escalation | None:
        resolution = copy.deepcopy(resolution)
        with self._lock:
            now = self._clock()
            e = self._escalations.get(escalation_id)
            if e is None or e.status != "pending" or now >= e.expires_at:
                return None
            resolved = self._close(e, "resolved", resolution, now)
            if approval is not None:
                self._grant(approval, now)
        return _copy(resolved)

    def expire_escalations(
        self, now: float | None = None, *, default_resolution: dict[str, Any] | None = None, limit: int = SWEEP_LIMIT
    ) -> list[Escalation]:
        resolution = EXPIRED_RESOLUTION if default_resolution is None else default_resolution
        with self._lock:
            now = self._clock() if now is None else now
            due = self._pending[: min(bisect.bisect_right(self._pending, (now, _LAST)), limit)]  # no copy of the backlog
            expired = [self._close(self._escalations[eid], "expired", copy.deepcopy(resolution), now) for _, eid in due]
            while self._forget and self._forget[0][0] <= now and limit > 0:
                _, eid = heapq.heappop(self._forget)
                e = self._escalations.get(eid)
                if e is not None and e.resolved_at is not None and e.resolved_at + self._retention <= now:
                    del self._escalations[eid]
                limit -= 1
        return [_copy(e) for e in expired]

    def _close(self, e: Escalation, status: EscalationStatus, resolution: dict[str, Any], now: float) -> Escalation:
        """Replace a pending escalation by its closed version (a shallow update: the stored payload
        is shared, and never mutated)."""
        self._unindex(e)
        closed = e.model_copy(update={"status": status, "resolution": resolution, "resolved_at": now})
        self._escalations[e.id] = closed
        heapq.heappush(self._forget, (now + self._retention, e.id))
        return closed

    def _unindex(self, e: Escalation) -> None:
        if e.status != "pending":
            return
        entry = (e.expires_at, e.id)
        for index in (self._pending, self._pending_by_thread.get(e.thread_id, [])):
            i = bisect.bisect_left(index, entry)
            if i < len(index) and index[i] == entry:
                del index[i]
        if not self._pending_by_thread.get(e.thread_id, True):
            del self._pending_by_thread[e.thread_id]

    # Approvals
    def grant_approval(self, approval: Approval) -> None:
        with self._lock:
            self._grant(approval, self._clock())

    def _grant(self, approval: Approval, now: float) -> None:
        while self._approval_expiry and self._approval_expiry[0][0] <= now:  # drop lapsed ones
            _, key = heapq.heappop(self._approval_expiry)
            held = self._approvals.get(key)
            if held is not None and held[1] <= now:
                del self._approvals[key]
        expires_at = now + approval.ttl_seconds
        self._approvals[approval.key] = (approval.escalation_id, expires_at)
        heapq.heappush(self._approval_expiry, (expires_at, approval.key))

    def consume_approval(self, keys: list[str]) -> str | None:
        with self._lock:
            now = self._clock()
            for key in keys:
                held = self._approvals.pop(key, None)
                if held is not None and held[1] > now:
                    return held[0]
        return None

    # Lifecycle
    def ping(self) -> bool:
        return True

    def close(self) -> None:
        """Nothing to release."""


def _copy(e: Escalation) -> Escalation:
    """The one place an escalation is copied: per call, only the escalations it returns or stores."""
    return e.model_copy(deep=True)


def _live(index: list[PageCursor], now: float) -> int:
    """Entries of a sorted index not yet past their expiry."""
    return len(index) - bisect.bisect_right(index, (now, _LAST))
