"""A state store that never raises when its backend is down, and says so in every answer.

A guard sits on the request path: a Redis outage must not turn every tool call into an exception.
``ResilientStore`` catches ``StateBackendError`` from the store it wraps and answers as configured:

* ``fail_open``: as if nothing were recorded (no retries spent, circuits closed, probes allowed);
* ``fail_closed``: as if everything were spent (budgets at ``sys.maxsize``, circuits open with
  reason "state backend unavailable", no probes).

Either way the answer is marked ``degraded=True`` with its ``mode``, so a decision can record that
it was taken without shared state. Escalation reads answer None or []; writes are lost (and
counted): a human's answer that cannot be registered as resolved is never applied twice.

**Deadlines.** Inside ``with store.deadline():`` (one decision, one request) all operations share
a budget of ``timeout_ms`` of time spent waiting on the backend (the checks' own compute between
them does not count: a slow judge must not degrade a healthy store). Once it is spent, the
remaining operations are not sent to the backend at all but answered per ``mode`` as failures.
With a Redis store whose socket timeout is the same budget (``make_store`` sets both), a hung
server costs a decision about ``timeout_ms``, not a timeout per operation (at worst, an operation
started just inside the budget, twice it).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from guard.state.base import (
    SWEEP_LIMIT,
    Approval,
    CircuitState,
    CircuitStatus,
    Escalation,
    EscalationPage,
    PageCursor,
    RetryCounts,
    StateBackendError,
    StateStore,
)
from guard.state.config import BackendErrorMode

T = TypeVar("T")

log = logging.getLogger(__name__)

#: The reason a degraded fail-closed circuit reports.
UNAVAILABLE = "state backend unavailable"



class _Budget:
    """Seconds the current decision's state operations have spent, against their limit."""

    def __init__(self, limit: float) -> None:
        self.limit, self.spent = limit, 0.0


_budget: ContextVar[_Budget | None] = ContextVar("guard_state_budget", default=None)


class ResilientStore(StateStore):
    """Wraps a store; each ``StateBackendError`` is counted in ``errors``, passed to ``on_error``
    (operation name, exception), and answered per ``mode``."""

    def __init__(
        self,
        inner: StateStore,
        mode: BackendErrorMode = "fail_closed",
        on_error: Callable[[str, Exception], None] | None = None,
        timeout_ms: float | None = None,
    ) -> None:
        self.inner = inner
        self.mode = mode
        self.on_error = on_error
        self.timeout_ms = timeout_ms
        self.errors = 0
        self._lock = threading.Lock()

    @contextmanager
    def deadline(self) -> Iterator[None]:
        """All operations inside share one budget of ``timeout_ms`` (none when it is None; an
        enclosing deadline is kept)."""
        if self.timeout_ms is None or _budget.get() is not None:
            yield
            return
        token = _budget.set(_Budget(self.timeout_ms / 1000))
        try:
            yield
        finally:
            _budget.reset(token)

    def _attempt(self, operation: str, call: Callable[[], T], fallback: Callable[[], T]) -> T:
        budget = _budget.get()
        start = time.monotonic()
        try:
            if budget is not None and budget.spent >= budget.limit:
                raise StateBackendError(f"the {self.timeout_ms:g} ms budget for this decision's state operations is spent")
            return call()
        except StateBackendError as exc:
            with self._lock:
                self.errors += 1
            log.warning("%s: answering %s (%s)", exc, self.mode, operation)
            if self.on_error is not None:
                try:
                    self.on_error(operation, exc)
                except Exception:  # a broken metrics hook must not break the guard
                    log.exception("on_error hook failed")
            return fallback()
        finally:
            if budget is not None:
                budget.spent += time.monotonic() - start

    @property
    def _closed(self) -> bool:
        return self.mode == "fail_closed"

    def _counts(self) -> RetryCounts:
        spent = sys.maxsize if self._closed else 0
        return RetryCounts(spent, spent, degraded=True, mode=self.mode)

    def _circuit(self, tool: str) -> CircuitStatus:
        state: CircuitState = "open" if self._closed else "closed"
        return CircuitStatus(tool, state, reason=UNAVAILABLE, degraded=True, mode=self.mode)

    # Retry budgets
    def incr_retries(self, thread_id: str, signature: str, ttl_seconds: float) -> RetryCounts:
        return self._attempt("incr_retries", lambda: self.inner.incr_retries(thread_id, signature, ttl_seconds), self._counts)

    def get_retries(self, thread_id: str, signature: str) -> RetryCounts:
        return self._attempt("get_retries", lambda: self.inner.get_retries(thread_id, signature), self._counts)

    # Circuit breakers
    def record_tool_result(self, tool: str, ok: bool, reason: str | None = None) -> CircuitStatus:
        return self._attempt(
            "record_tool_result", lambda: self.inner.record_tool_result(tool, ok, reason), lambda: self._circuit(tool)
        )

    def circuit(self, tool: str) -> CircuitStatus:
        return self._attempt("circuit", lambda: self.inner.circuit(tool), lambda: self._circuit(tool))

    def acquire_probe(self, tool: str) -> bool:
        return self._attempt("acquire_probe", lambda: self.inner.acquire_probe(tool), lambda: not self._closed)

    def all_circuits(self) -> dict[str, CircuitStatus]:
        """Empty when degraded: without the backend no tool is known."""
        return self._attempt("all_circuits", self.inner.all_circuits, dict)

    # Escalations
    def put_escalation(
        self, escalation: Escalation, *, max_pending: int | None = None, max_pending_per_thread: int | None = None
    ) -> None:
        """A refusal over a cap (``EscalationRefused``) is an answer, not an outage: it is raised."""
        self._attempt(
            "put_escalation",
            lambda: self.inner.put_escalation(escalation, max_pending=max_pending, max_pending_per_thread=max_pending_per_thread),
            lambda: None,
        )

    def get_escalation(self, escalation_id: str) -> Escalation | None:
        return self._attempt("get_escalation", lambda: self.inner.get_escalation(escalation_id), lambda: None)

    def escalation_page(
        self, thread_id: str | None = None, *, limit: int = 100, after: PageCursor | None = None
    ) -> EscalationPage:
        return self._attempt(
            "escalation_page",
            lambda: self.inner.escalation_page(thread_id, limit=limit, after=after),
            lambda: EscalationPage([], None),
        )

    def pending_count(self, thread_id: str | None = None) -> int:
        return self._attempt("pending_count", lambda: self.inner.pending_count(thread_id), lambda: 0)

    def resolve_escalation(
        self, escalation_id: str, resolution: dict[str, Any], *, approval: Approval | None = None
    ) -> Escalation | None:
        return self._attempt(
            "resolve_escalation",
            lambda: self.inner.resolve_escalation(escalation_id, resolution, approval=approval),
            lambda: None,
        )

    def expire_escalations(
        self, now: float | None = None, *, default_resolution: dict[str, Any] | None = None, limit: int = SWEEP_LIMIT
    ) -> list[Escalation]:
        return self._attempt(
            "expire_escalations",
            lambda: self.inner.expire_escalations(now, default_resolution=default_resolution, limit=limit),
            list,
        )

    # Approvals
    def grant_approval(self, approval: Approval) -> None:
        self._attempt("grant_approval", lambda: self.inner.grant_approval(approval), lambda: None)

    def consume_approval(self, keys: list[str]) -> str | None:
        """None when degraded: without the backend no approval can be proven."""
        return self._attempt("consume_approval", lambda: self.inner.consume_approval(keys), lambda: None)

    # Lifecycle
    def ping(self) -> bool:
        """Outside any deadline: readiness has its own bound (the store's ping timeout)."""
        try:
            return self.inner.ping()
        except StateBackendError:
            return False

    def close(self) -> None:
        self._attempt("close", self.inner.close, lambda: None)
