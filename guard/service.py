"""The guard as an HTTP service, for agents that are not written in Python or not built on LangGraph.

An agent sends each proposed tool call to ``POST /v1/check`` with its tool list and the
conversation; the answer is the ``Decision`` the in-process adapters get. Several replicas share
their state through the ``StateStore`` (Redis when ``GUARD_REDIS_URL`` is set):

* retry budgets are counted per ``thread_id`` in the store, so a model sent back by one replica
  does not get a fresh budget from the next;
* tool outcomes reported to ``POST /v1/outcome`` feed a circuit breaker per tool; a tool whose
  circuit is open is unavailable on every replica;
* a question to the human is registered as an escalation, listed by ``GET /v1/escalations`` and
  answered once through ``POST /v1/escalations/{id}/resolve``, whichever replica receives it;
  escalations nobody answers in time resolve to the policy's ``escalation.on_expiry``.

A state backend outage never becomes a 500: the store answers as its fail mode says and the
response's ``state`` reports ``degraded`` with the mode and the failed operations.

Configuration from the environment (``app_from_env``, ``guard serve``): ``GUARD_POLICY`` (policy
YAML path), ``GUARD_REDIS_URL`` (shared state), ``GUARD_API_TOKEN`` (bearer token required on
``/v1/*``), ``GUARD_METRIC_TOOLS`` (comma-separated tool names that get their own metric label;
the policy's per-tool overrides always do), the ``OTEL_*`` variables (tracing) and
``PROMETHEUS_MULTIPROC_DIR`` (metrics of several workers, see ``guard.telemetry``).
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import math
import logging
import os
import re
import secrets
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from guard.checks.measures import warm as warm_measures
from guard.extras import install_hint

try:
    from fastapi import (
        APIRouter,
        FastAPI,
        HTTPException,
        Query,
        Request,
        Response,
        Security,
    )
    from fastapi.exception_handlers import http_exception_handler
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, PlainTextResponse
    from fastapi.security import HTTPBearer
    from starlette.exceptions import HTTPException as StarletteHTTPException
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(f"guard.service needs FastAPI ({exc.name} is missing): {install_hint('service')}") from exc
from cachetools import LRUCache, cached
from pydantic import BaseModel, ConfigDict, Field, model_validator

from guard.budgets import GuardState
from guard.checks import CheckContext, arguments
from guard.checks.judge import judge_for
from guard.decision_log import log_context, writer_for
from guard.conversation import Conversation
from guard.engine import Guard
from guard.escalation import Answer, payload
from guard.models import Decision, ToolCall, short_hash
from guard.policy import Policy, load_policy
from guard.registry import ToolRegistry, ToolSchemaError, ToolSpec
from guard.state import (
    EXPIRED_RESOLUTION,
    Approval,
    CircuitStatus,
    Escalation,
    EscalationRefused,
    ResilientStore,
    StateConfig,
    StateStore,
    make_store,
)
from guard.state.base import Clock, PageCursor, approval_key
from guard.state.config import BackendErrorMode
from guard.taxonomy import TOOL_ERROR_CATEGORIES, Action, Category
from guard.text_hygiene import TextCheckedRoute, json_response
from guard.telemetry import (
    EscalationOutcome,
    Telemetry,
    configure_tracing_from_env,
    extract_context,
    inject_context,
    span_decision,
)

POLICY_ENV = "GUARD_POLICY"
TOKEN_ENV = "GUARD_API_TOKEN"
METRIC_TOOLS_ENV = "GUARD_METRIC_TOOLS"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
REGISTRY_CACHE_ENV = "GUARD_REGISTRY_CACHE_BYTES"
_log = logging.getLogger(__name__)
#: The tool-registry cache's budget per app (so per worker process), in estimated bytes of what
#: the registries hold. With it full after 330 distinct 0.88 MB tool lists a worker measured 266 MB
#: RSS (740 MB with the earlier 256-entry cache), under the manifests' 512 Mi limit; the checks'
#: own caches are bounded by entry counts, not bytes (docs/operations.md, "Memory per worker").
DEFAULT_REGISTRY_CACHE_BYTES = 64 * 2**20

_OUTCOMES: dict[str, EscalationOutcome] = {
    "answer": "answered",
    "approve": "approved",
    "edit": "edited",
    "reject": "rejected",
}


# -- request and response bodies ---------------------------------------------------------------


class ChatMessage(BaseModel):
    """One OpenAI-style message of the conversation before the call; other fields are ignored."""

    role: str = Field(description="system, user, assistant or tool (aliases such as human, ai are accepted)")
    content: str | list[Any] | None = Field(None, description="text, or a list of content blocks")
    tool_calls: list[dict[str, Any]] | None = Field(None, description="calls an assistant message proposed")
    tool_call_id: str | None = Field(None, description="the call a tool message answers")
    name: str | None = None


class ProposedCall(BaseModel):
    """The call to check, as loose as models produce it: faults become findings, not errors."""

    name: str | None = None
    args: Any = Field(default_factory=dict, description="an object, or the JSON text of one")
    id: str | None = None


class CheckRequest(BaseModel):
    tools: list[dict[str, Any]] = Field(
        description="tool descriptions in any dialect guard accepts (OpenAI, ACEBench/BFCL, ToolBench, API-Bank)"
    )
    messages: list[ChatMessage] = Field(default_factory=list, description="the conversation before the call")
    call: ProposedCall
    thread_id: str | None = Field(
        None, min_length=1, description="the conversation's id: retry budgets are counted per thread across replicas"
    )


class WarmRequest(BaseModel):
    tools: list[dict[str, Any]] = Field(description="the tool descriptions the next /v1/check will send")
    messages: list[ChatMessage] = Field(default_factory=list, description="the conversation as the model is given it")


class WarmResponse(BaseModel):
    started: bool = Field(
        description="whether a warm-up started (false: no embedding checks, nothing new to embed, or the queue is full)"
    )


class StateReport(BaseModel):
    """Whether the shared state answered; when not, what the store's fail mode decided instead."""

    degraded: bool = False
    mode: BackendErrorMode | None = None
    failed_operations: list[str] = Field(default_factory=list)


class CheckResponse(Decision):
    """The decision, plus the escalation registered when the action is ask_human."""

    escalation: Escalation | None = Field(
        None, description="the question registered for the human (absent if it could not be registered)"
    )
    escalation_refused: str | None = Field(
        None,
        description="why the question was not registered (a cap of the policy's escalation section): the call is blocked",
    )
    approved_by: str | None = Field(
        None,
        description="the escalation whose approval of exactly this call (thread, arguments, policy) this decision "
        "consumed: the call runs this once",
    )
    state: StateReport = Field(default_factory=StateReport)


class OutcomeRequest(BaseModel):
    """What happened when a tool ran: feeds the tool's circuit breaker."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    ok: bool
    error_kind: Category | None = Field(None, description="for a failure: a tool_* category (tool_timeout, ...)")
    reason: str | None = Field(None, description="the failure in words, kept with the circuit")

    @model_validator(mode="after")
    def _kind_matches_ok(self) -> OutcomeRequest:
        if self.ok and self.error_kind is not None:
            raise ValueError("error_kind is only for failures (ok=false)")
        if not self.ok and self.error_kind not in TOOL_ERROR_CATEGORIES:
            raise ValueError("a failure needs error_kind, one of the tool_* categories")
        return self


class EscalationList(BaseModel):
    escalations: list[Escalation]
    next_cursor: str | None = Field(
        None, description="pass as ?cursor= for the next page; absent on the last page"
    )


class ErrorBody(BaseModel):
    detail: str


class Health(BaseModel):
    status: str
    detail: str | None = None


_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or wrong bearer token"},
    413: {"model": ErrorBody, "description": "request body too large"},
}


# -- shared-state failures of the current request ----------------------------------------------

_failed_ops: ContextVar[list[str] | None] = ContextVar("guard_failed_state_operations", default=None)


@contextmanager
def _tracking_failures() -> Iterator[list[str]]:
    """Collect the store operations that failed while handling this request (see ``_Service``)."""
    failed: list[str] = []
    token = _failed_ops.set(failed)
    try:
        yield failed
    finally:
        _failed_ops.reset(token)


def _unavailable(failed: list[str]) -> HTTPException:
    return HTTPException(503, f"the shared state backend is unavailable ({', '.join(failed)} failed); try again")


# -- the service --------------------------------------------------------------------------------


class _Service:
    """What the endpoints do, apart from HTTP. Store answers pass through a ``ResilientStore``
    whose error hook counts the metric and notes the operation for the current request."""

    def __init__(
        self,
        policy: Policy,
        store: StateStore,
        telemetry: Telemetry,
        clock: Clock,
        retry_ttl: float,
        registry_cache_bytes: int = 0,
    ) -> None:
        self.registries = _Registries(registry_cache_bytes or DEFAULT_REGISTRY_CACHE_BYTES)
        self.policy, self.telemetry, self.clock, self.retry_ttl = policy, telemetry, clock, retry_ttl
        #: The optional LLM judge (``checks.judge``), one for every request: its cap and cache span them.
        self.judge = judge_for(None, policy)
        if isinstance(store, ResilientStore):
            hooks = _chain(store.on_error, self._backend_error)
            store = ResilientStore(store.inner, store.mode, on_error=hooks, timeout_ms=store.timeout_ms)
        else:  # a bare store (a RedisStore passed in): fail closed rather than answer 500
            store = ResilientStore(store, "fail_closed", on_error=self._backend_error, timeout_ms=policy.state.timeout_ms)

        self.store = store
        self.expiry_resolution = (
            {"action": "approve", "reason": "expired"} if policy.escalation.on_expiry.runs else EXPIRED_RESOLUTION
        )

    def _backend_error(self, operation: str, exc: Exception) -> None:
        self.telemetry.backend_error()
        failed = _failed_ops.get()
        if failed is not None:
            failed.append(operation)

    def _report(self, failed: list[str]) -> StateReport:
        return StateReport(degraded=True, mode=self.store.mode, failed_operations=failed) if failed else StateReport()

    # -- check ------------------------------------------------------------------------------------

    def check(self, request: CheckRequest, headers: Mapping[str, str]) -> CheckResponse:
        registry = self.registries(request.tools)
        call = ToolCall.from_any(request.call.model_dump())
        conversation = Conversation.from_messages([m.model_dump(exclude_none=True) for m in request.messages])
        parent = extract_context(headers)
        with (
            _tracking_failures() as failed,
            self.store.deadline(),
            self.telemetry.check_span(call.name, call.id, parent) as span,
            log_context(thread_id=request.thread_id, source="service"),
        ):
            self._apply_circuit(registry, call.name)
            state = self._budgets(request.thread_id, call, conversation)
            guard = Guard(registry, self.policy, judge=self.judge)
            decision = guard.check(call, conversation, state)
            approved_by = None
            if decision.action is Action.ASK_HUMAN and request.thread_id is not None:
                decision, approved_by = self._approved(guard, decision, conversation, state, request.thread_id)
            retry_count = state.retries_of(call.signature)
            if decision.action is Action.RETRY:
                for category in self._retry_categories(decision):
                    self.telemetry.record_retry(call.name, category)
                if request.thread_id is not None:
                    retry_count = self.store.incr_retries(request.thread_id, call.signature, self.retry_ttl).per_call
            escalation, refused = None, None
            if decision.action is Action.ASK_HUMAN:
                escalation, refused = self._open(decision, request.thread_id, registry, failed)
                if refused is not None:
                    decision = _refused(decision, refused)
            self.telemetry.record_decision(decision)
            span_decision(span, decision, retry_count)
        return CheckResponse(
            **dict(decision),
            escalation=escalation,
            escalation_refused=refused,
            approved_by=approved_by,
            state=self._report(failed),
        )

    def warm(self, request: WarmRequest) -> WarmResponse:
        """Start embedding the conversation in the background (``Guard.warm``); answers at once."""
        registry = self.registries(request.tools)
        messages = [m.model_dump(exclude_none=True) for m in request.messages]
        return WarmResponse(started=Guard(registry, self.policy, judge=False).warm(messages) is not None)

    def _approved(
        self, guard: Guard, decision: Decision, conversation: Conversation, state: GuardState, thread_id: str
    ) -> tuple[Decision, str | None]:
        """A call that would ask the human runs when a human approved (or wrote, by an edit) exactly
        it in this thread under this policy: the approval is consumed, so it runs once. Asked only
        when the approved re-check would run, so an approval is never spent on a call still held."""
        rechecked = guard.check(decision.call, conversation, state, approved=True)
        if not rechecked.action.runs:
            return decision, None
        hashes = dict.fromkeys([short_hash(decision.call_to_run.args), short_hash(decision.call.args)])
        keys = [approval_key(thread_id, decision.call.name, h, decision.policy_hash) for h in hashes]
        granted = self.store.consume_approval(keys)
        return (rechecked, granted) if granted is not None else (decision, None)

    def _apply_circuit(self, registry: ToolRegistry, tool: str | None) -> None:
        """An open circuit (or a half-open one whose probe is taken) makes the tool unavailable."""
        if tool is None or tool not in registry:
            return
        circuit = self.store.circuit(tool)
        self.telemetry.set_circuit(tool, circuit.state)
        if circuit.state == "closed":
            return
        if circuit.state == "half_open" and self.store.acquire_probe(tool):
            return
        if circuit.degraded:
            reason = f"circuit breaker open ({circuit.reason})"
        elif circuit.state == "open":
            last = f", last: {circuit.reason}" if circuit.reason else ""
            reason = f"circuit breaker open after {circuit.failures} failures{last}"
        else:
            reason = "circuit breaker half open, a probe call is already running"
        registry.set_available(tool, False, reason)

    def _budgets(self, thread_id: str | None, call: ToolCall, conversation: Conversation) -> GuardState:
        """Retries spent: the larger of what the conversation records and what the store counted
        for the thread across replicas."""
        local = GuardState.from_conversation(conversation)
        if thread_id is None:
            return local
        counts = self.store.get_retries(thread_id, call.signature)
        per_call = {**local.per_call, call.signature: max(local.retries_of(call.signature), counts.per_call)}
        thread = max(local.thread_retries, counts.per_thread)
        return GuardState(per_call=per_call, turn_retries=local.turn_retries, thread_retries=thread)

    def _retry_categories(self, decision: Decision) -> set[Category]:
        tool = decision.call.name
        return {
            f.category
            for f in decision.findings
            if f.repair is None and self.policy.action_for(f.category, tool) is Action.RETRY
        }

    def _open(
        self, decision: Decision, thread_id: str | None, registry: ToolRegistry, failed: list[str]
    ) -> tuple[Escalation | None, str | None]:
        """Register the question: the escalation, or why a cap of the policy's ``escalation``
        section refused it. Each one gets a fresh id: checking the same call again must not reopen
        a question already answered. The tool's schema goes with it, to validate an edit."""
        caps = self.policy.escalation
        now = self.clock()
        escalation_id = uuid.uuid4().hex
        spec = registry.get(decision.call.name)
        escalation = Escalation(
            id=escalation_id,
            thread_id=thread_id or "",
            payload={**payload([decision]), "escalation_id": escalation_id},
            args_hash=short_hash(decision.call_to_run.args),
            policy_hash=decision.policy_hash,
            created_at=now,
            expires_at=now + caps.ttl_seconds,
            trace_context=inject_context(),
            tool_schema=spec.parameters if spec is not None else None,
        )
        size = len(escalation.model_dump_json().encode())
        if size > caps.max_payload_bytes:
            self.telemetry.escalation_refused(decision.escalation_kind)
            return None, f"the question would take {size} bytes, over escalation.max_payload_bytes ({caps.max_payload_bytes})"
        try:
            self.store.put_escalation(
                escalation, max_pending=caps.max_pending, max_pending_per_thread=caps.max_pending_per_thread
            )
        except EscalationRefused as refused:
            self.telemetry.escalation_refused(decision.escalation_kind)
            where = " in this thread" if refused.cap == "max_pending_per_thread" else ""
            return None, f"{refused.limit} questions are already waiting for a human{where} (escalation.{refused.cap})"
        if "put_escalation" in failed:
            return None, None
        self.telemetry.escalation_opened(decision.escalation_kind)
        self._refresh_pending(failed)
        return escalation, None

    # -- outcomes ---------------------------------------------------------------------------------

    def outcome(self, report: OutcomeRequest) -> CircuitStatus:
        if report.error_kind is not None:
            self.telemetry.record_tool_error(report.tool, report.error_kind)
        reason = report.reason or (report.error_kind.value if report.error_kind else None)
        circuit = self.store.record_tool_result(report.tool, report.ok, reason)
        if (log := writer_for(self.policy.log)) is not None:
            log.outcome(ToolCall(name=report.tool), {"outcome": report.error_kind.value if report.error_kind else None})
        self.telemetry.set_circuit(report.tool, circuit.state)
        return circuit

    # -- escalations ------------------------------------------------------------------------------

    def pending(self, thread_id: str | None, limit: int = 100, cursor: str | None = None) -> EscalationList:
        """One page of the questions waiting, soonest to expire first; O(log n + limit)."""
        after = _decode_cursor(cursor)
        with _tracking_failures() as failed, self.store.deadline():
            self._expire()
            page = self.store.escalation_page(thread_id, limit=limit, after=after)
            self._refresh_pending(failed)
            if failed:
                raise _unavailable(failed)
        return EscalationList(escalations=page.escalations, next_cursor=_encode_cursor(page.next_after))

    def get(self, escalation_id: str) -> Escalation:
        """One escalation, whatever its status (pending, resolved with its answer, or expired)."""
        with _tracking_failures() as failed, self.store.deadline():
            self._expire()
            found = self.store.get_escalation(escalation_id)
            if found is None:
                raise _unavailable(failed) if failed else HTTPException(404, f"no escalation {escalation_id!r}")
        return found

    def resolve(self, escalation_id: str, answer: Answer) -> Escalation:
        with _tracking_failures() as failed, self.store.deadline():
            self._expire()
            found = self.store.get_escalation(escalation_id)
            if found is None:
                raise _unavailable(failed) if failed else HTTPException(404, f"no escalation {escalation_id!r}")
            if answer.action == "edit" and answer.args is not None:
                self._validate_edit(found, answer.args)
            with self.telemetry.resume_span(found.trace_context, escalation_id) as span:
                resolved = self.store.resolve_escalation(
                    escalation_id, answer.model_dump(mode="json", exclude_none=True), approval=self._approval(found, answer)
                )
                if resolved is None:
                    if failed:
                        raise _unavailable(failed)
                    current = self.store.get_escalation(escalation_id) or found
                    detail = f"escalation {escalation_id!r} was already {current.status}: an answer is applied once"
                    raise HTTPException(409, detail)
                span.set_attribute("guard.escalation.outcome", _OUTCOMES[answer.action])
            wait = (resolved.resolved_at or self.clock()) - resolved.created_at
            self.telemetry.escalation_closed(resolved.payload.get("kind"), _OUTCOMES[answer.action], wait)
            self._refresh_pending(failed)
        return resolved

    def _validate_edit(self, found: Escalation, args: dict[str, Any]) -> None:
        """An edit whose arguments break the tool's schema (kept with the escalation) is a 422, and
        the escalation stays pending: the guard's own argument checks, as a proposed call gets."""
        request = (found.payload.get("requests") or [{}])[0]
        tool = request.get("tool")
        if found.tool_schema is None or not isinstance(tool, str):
            return  # the tool was unknown when asked: the re-check of the edited call judges it
        spec = ToolSpec(name=tool, parameters=found.tool_schema)
        call = ToolCall(name=tool, args=args, id=request.get("tool_call_id"))
        parsed, findings = arguments.parse_arguments(call, self.policy.checks.limits, parse_json=False)
        if parsed is not None:
            context = CheckContext(
                call=call, args=parsed, spec=spec, registry=ToolRegistry([spec]),
                conversation=Conversation.from_messages([]), state=GuardState(), policy=self.policy,
            )  # fmt: skip
            findings += arguments.check(context)
        errors = [
            {
                "type": f"edit_{f.category.value}",
                "loc": ("body", "args", *_path_parts(f.path)),
                "msg": f.message,
                "input": None,  # the whole edit once per fault would make the answer quadratic
                "ctx": {"tool": tool, "path": f.path},
            }
            for f in findings
            if f.repair is None
        ][:50]
        if errors:
            raise RequestValidationError(errors)

    def _approval(self, found: Escalation, answer: Answer) -> Approval | None:
        """An approve or edit answer in a thread approves that exact call (the edited arguments for
        an edit) under the policy it was asked under, for one re-check within ``ttl_seconds``."""
        if answer.action not in ("approve", "edit") or not found.thread_id:
            return None
        args_hash = short_hash(answer.args) if answer.action == "edit" and answer.args is not None else found.args_hash
        return self._approval_of(found, args_hash)

    def _approval_of(self, found: Escalation, args_hash: str) -> Approval:
        tool = (found.payload.get("requests") or [{}])[0].get("tool")
        key = approval_key(found.thread_id, tool, args_hash, found.policy_hash)
        return Approval(key, found.id, self.policy.escalation.ttl_seconds)

    def _expire(self) -> None:
        """Expire what nobody answered in time (at most ``SWEEP_LIMIT`` per call), with the
        policy's default, before reading. An expiry that approves (``on_expiry`` runs the call)
        approves it like a human's approve."""
        approves = self.expiry_resolution["action"] == "approve"
        for e in self.store.expire_escalations(default_resolution=self.expiry_resolution):
            self.telemetry.escalation_closed(e.payload.get("kind"), "expired", (e.resolved_at or self.clock()) - e.created_at)
            if approves and e.thread_id:
                self.store.grant_approval(self._approval_of(e, e.args_hash))

    def _refresh_pending(self, failed: list[str]) -> None:
        """The pending gauge from a count the store keeps (O(log n)), never a listing."""
        before = len(failed)
        count = self.store.pending_count()
        if len(failed) == before:  # a degraded empty answer is not a count
            self.telemetry.set_pending(count)


def _refused(decision: Decision, reason: str) -> Decision:
    """A call that needs a human whose question could not be registered does not run."""
    asked = decision.question or "a human's review"
    feedback = (
        f"The call to `{decision.call.name}` was not run: it needs {asked!r}, but the question could not be "
        f"put to a human: {reason}. Do not retry it now; tell the user it is waiting on a human."
    )
    return decision.model_copy(update={"action": Action.BLOCK, "feedback": feedback})


def _encode_cursor(after: PageCursor | None) -> str | None:
    if after is None:
        return None
    return base64.urlsafe_b64encode(json.dumps(list(after)).encode()).decode().rstrip("=")


def _decode_cursor(cursor: str | None) -> PageCursor | None:
    """The page cursor, or a 422 like any malformed query parameter."""
    if cursor is None:
        return None
    try:
        expires_at, escalation_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if isinstance(expires_at, (int, float)) and isinstance(escalation_id, str) and math.isfinite(float(expires_at)):
            return float(expires_at), escalation_id
    except (ValueError, TypeError, OverflowError):  # 10**400 overflows float()
        pass
    error = {"type": "cursor", "loc": ("query", "cursor"), "msg": "not a cursor this service returned", "input": cursor}
    raise RequestValidationError([error])


def _path_parts(path: str) -> list[str]:
    """A finding's JSON path ("$.a.b[0]") as location parts."""
    return [part for part in re.split(r"[.\[\]$]+", path) if part]


def _chain(*hooks: Callable[[str, Exception], None] | None) -> Callable[[str, Exception], None]:
    def call_all(operation: str, exc: Exception) -> None:
        for hook in hooks:
            if hook is not None:
                hook(operation, exc)

    return call_all


class _Registries:
    """The request's tools, as a registry of its own (the circuit breaker may mark tools
    unavailable for this request). Agents send the same tool list with every call, so the
    normalised registry is cached, keyed by the SHA-256 of the list's canonical JSON, and copied.

    The cache is bounded in bytes, not entries (``registry_cache_bytes``): each entry counts the
    estimated memory of its registry (``_registry_bytes``); least recently used out first, and a
    list larger than the whole budget is used without being kept. Handlers run in a threadpool:
    the lock covers lookups and insertions, not the building of a registry."""

    def __init__(self, max_bytes: int) -> None:
        self.cache: LRUCache[str, tuple[ToolRegistry, int]] = LRUCache(maxsize=max_bytes, getsizeof=lambda e: e[1])
        self.lock = threading.Lock()
        self._normalised = cached(self.cache, key=_digest, lock=self.lock)(_normalised_registry)

    def __call__(self, tools: list[dict[str, Any]]) -> ToolRegistry:
        key = json.dumps(tools, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        registry, _ = self._normalised(key)
        return registry.copy()


def _registry_bytes(tools_json: str, tools: list[Any]) -> int:
    """An upper estimate of what the registry normalised from ``tools`` holds: per character of its
    JSON, per JSON value (each dict entry counts once more, for its key) and per tool, plus a fixed
    part. Fitted with tracemalloc on lists from 2 to 1000 tools and from 16 KB to 0.9 MB of JSON
    (one 0.9 MB description: 2.0 bytes per character; 1000 bare names: 530 bytes per tool; 50
    integer parameters per tool: ~41 bytes per value beyond 2 per character): it lies 1x to 2.5x above."""
    values, stack = 0, [tools]
    while stack:
        item = stack.pop()
        values += 1
        if isinstance(item, dict):
            values += len(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return 3 * len(tools_json) + 64 * values + 1024 * len(tools) + 16 * 1024


def _digest(tools_json: str) -> str:
    return hashlib.sha256(tools_json.encode("utf-8", "surrogatepass")).hexdigest()


def _normalised_registry(tools_json: str) -> tuple[ToolRegistry, int]:
    """The registry and its estimated size. A description that cannot be normalised is a 422
    naming the tool (not cached: it raises)."""
    tools = json.loads(tools_json)
    size = _registry_bytes(tools_json, tools)
    registry = ToolRegistry()
    for i, tool in enumerate(tools):
        try:
            registry.add(tool)
        except ToolSchemaError as exc:
            raise RequestValidationError(
                [
                    {
                        "type": "tool_schema",
                        "loc": ("body", "tools", i),
                        "msg": str(exc),
                        "input": tool,
                        "ctx": {"tool": exc.tool, "path": exc.path},
                    }
                ]
            ) from exc
    return registry, size


# -- HTTP ----------------------------------------------------------------------------------------

class _BearerToken:
    """ASGI middleware: ``/v1/*`` needs ``Authorization: Bearer <token>``. It runs before the body
    is read, so an unauthenticated client learns nothing about what the API would accept."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1/"):
            return await self.app(scope, receive, send)
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given.strip():
            detail = f"missing bearer token: send 'Authorization: Bearer <token>' (the service's {TOKEN_ENV})"
        elif not secrets.compare_digest(given.strip().encode("latin-1"), self.token.encode()):
            detail = "invalid bearer token"
        else:
            return await self.app(scope, receive, send)
        response = JSONResponse({"detail": detail}, status_code=401, headers={"WWW-Authenticate": "Bearer"})
        await response(scope, receive, send)


class _BodyLimit:
    """ASGI middleware: a body over ``max_bytes`` is a 413, whether its Content-Length says so or
    it streams past the limit (chunked). The body is read here, then handed on whole."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope["headers"]).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.max_bytes:
            return await self._too_large(scope, receive, send)
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                return await self._too_large(scope, receive, send)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        detail = f"request body too large: the limit is {self.max_bytes} bytes"
        await JSONResponse({"detail": detail}, status_code=413)(scope, receive, send)


def create_app(
    policy: Policy | str | Path | None = None,
    store: StateStore | None = None,
    telemetry: Telemetry | None = None,
    token: str | None = None,
    max_body_bytes: int = 1_000_000,
    *,
    state_config: StateConfig | None = None,
    clock: Clock = time.time,
    registry_cache_bytes: int | None = None,
) -> FastAPI:
    """The guard's HTTP API.

    Defaults: the policy at ``GUARD_POLICY`` (else ``Policy()``), ``make_store`` of the policy's
    ``state`` section (fail-open or fail-closed is the policy's choice),
    (Redis when ``GUARD_REDIS_URL`` is set), the token in ``GUARD_API_TOKEN`` (none: open; ``""``
    turns it off; surrounding whitespace, such as the newline of a token read from a file, is not
    part of it, so a token that is only whitespace is none). ``clock`` dates escalations: give the
    store's clock when it is not the real one. ``registry_cache_bytes`` bounds the tool-registry
    cache (default ``GUARD_REGISTRY_CACHE_BYTES``, else ``DEFAULT_REGISTRY_CACHE_BYTES``).
    """
    policy = load_policy(policy if policy is not None else os.environ.get(POLICY_ENV) or None)
    state_config = state_config or policy.state
    if telemetry is None:
        named = [t.strip() for t in os.environ.get(METRIC_TOOLS_ENV, "").split(",") if t.strip()]
        telemetry = Telemetry(known_tools=[*policy.tools, *named])
    if registry_cache_bytes is None:
        registry_cache_bytes = _env_bytes(REGISTRY_CACHE_ENV, DEFAULT_REGISTRY_CACHE_BYTES)
    service = _Service(
        policy, store or make_store(state_config), telemetry, clock, state_config.retry_ttl_seconds, registry_cache_bytes
    )
    token = configured_token(token)
    warm_measures()  # the derivation rules' libraries load at start-up, not in the first request

    app = FastAPI(
        title="guard",
        version="0.1.0",
        summary="Runtime guardrails for LLM agents that call tools: check, repair, retry, ask the human, block.",
    )
    # Declares the scheme in the OpenAPI document; _BearerToken enforces it when a token is set.
    bearer = HTTPBearer(auto_error=False, description=f"required when the service has {TOKEN_ENV} set")
    # TextCheckedRoute: NUL, lone surrogates and non-finite numbers are a 422 before any endpoint runs.
    v1 = APIRouter(prefix="/v1", dependencies=[Security(bearer)], responses=_ERRORS, route_class=TextCheckedRoute)

    @v1.post("/check", response_model=CheckResponse)
    def check(body: CheckRequest, request: Request) -> CheckResponse:
        """Decide what happens to one proposed tool call. A tool description that cannot be
        normalised is a 422 whose error (type ``tool_schema``) names the tool and the path."""
        return service.check(body, request.headers)

    @v1.post("/warm", response_model=WarmResponse)
    def warm(body: WarmRequest) -> WarmResponse:
        """Call it when you ask the model for its next step: with embedding checks on, this replica
        embeds the request and the messages in the background while the model thinks, and its
        ``/v1/check`` of the call the model proposes finds them embedded (route both to the same
        replica). Answers at once; a tool description that cannot be normalised is a 422, as for
        ``/v1/check``."""
        return service.warm(body)

    @v1.post("/outcome", response_model=CircuitStatus)
    def outcome(body: OutcomeRequest) -> CircuitStatus:
        """Report how a tool call went; feeds the tool's circuit breaker (shared by all replicas)."""
        return service.outcome(body)

    @v1.get("/escalations", response_model=EscalationList, responses={503: {"model": ErrorBody}})
    def escalations(
        thread_id: str | None = Query(None, description="only this thread's"),
        limit: int = Query(100, ge=1, le=1000, description="escalations per page"),
        cursor: str | None = Query(None, description="the previous page's next_cursor"),
    ) -> EscalationList:
        """Questions waiting for a human, soonest to expire first, a page at a time: follow
        ``next_cursor`` until it is absent."""
        return service.pending(thread_id, limit, cursor)

    @v1.get(
        "/escalations/{escalation_id}",
        response_model=Escalation,
        responses={404: {"model": ErrorBody}, 503: {"model": ErrorBody}},
    )
    def escalation(escalation_id: str) -> Escalation:
        """One escalation, pending or not: an agent polls it for the human's answer."""
        return service.get(escalation_id)

    @v1.post(
        "/escalations/{escalation_id}/resolve",
        response_model=Escalation,
        responses={404: {"model": ErrorBody}, 409: {"model": ErrorBody}, 503: {"model": ErrorBody}},
    )
    def resolve(escalation_id: str, answer: Answer) -> Escalation:
        """Answer an escalation; exactly one answer is ever applied (409 for the others). An
        ``edit`` whose arguments break the tool's schema is a 422 and leaves it pending. In a
        thread, ``approve`` or ``edit`` lets one re-check (``POST /v1/check``) of exactly that
        call (same arguments, same policy) run."""
        return service.resolve(escalation_id, answer)

    app.include_router(v1)

    @app.get("/metrics", response_class=PlainTextResponse, responses={413: _ERRORS[413]})
    def metrics() -> Response:
        """Prometheus metrics (every worker's when PROMETHEUS_MULTIPROC_DIR is set)."""
        body, content_type = service.telemetry.exposition()
        return Response(body, headers={"Content-Type": content_type})

    @app.get("/healthz", response_model=Health, responses={413: _ERRORS[413]})
    def healthz() -> Health:
        """The process is up."""
        return Health(status="ok")

    @app.get("/readyz", response_model=Health, responses={413: _ERRORS[413], 503: {"model": Health}})
    def readyz() -> Response:
        """Ready when the state backend answers."""
        if service.store.ping():
            return JSONResponse(Health(status="ready").model_dump())
        detail = "the state backend does not answer"
        return JSONResponse(Health(status="unavailable", detail=detail).model_dump(), status_code=503)

    @app.exception_handler(StarletteHTTPException)
    async def undecodable_body(request: Request, exc: StarletteHTTPException) -> Response:
        """FastAPI answers a body that is not UTF-8 with a bare 400; to a client it is malformed
        JSON like any other, so it gets the same 422. A detail that cannot be written as UTF-8
        JSON as it is (a lone surrogate) is written with U+FFFD in its place, never a 500."""
        if exc.status_code == 400 and isinstance(exc.__cause__, UnicodeDecodeError):
            message = f"the body is not UTF-8 JSON: {exc.__cause__}"
            error = {"type": "json_invalid", "loc": ["body"], "msg": message, "input": None}
            return json_response({"detail": [error]}, 422)
        try:
            return await http_exception_handler(request, exc)
        except ValueError:  # UnicodeEncodeError, or a non-finite float in the detail
            return json_response({"detail": exc.detail}, exc.status_code, getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
        """FastAPI's 422, rendered so that it never raises: an echoed ``input`` holding a lone
        surrogate or a non-finite number is written with U+FFFD or null in its place."""
        return json_response({"detail": exc.errors()}, 422)

    app.state.registries = service.registries  # the tool-registry cache, for inspection
    app.add_middleware(_BodyLimit, max_bytes=max_body_bytes)
    if token:
        app.add_middleware(_BearerToken, token=token)  # added last: runs first
    return app


def configured_token(token: str | None = None) -> str | None:
    """The bearer token the service requires: ``token``, else ``GUARD_API_TOKEN``, without the
    whitespace around it (clients strip theirs, and a token read from a file ends with a newline);
    None when nothing is left: no authentication."""
    raw = token if token is not None else os.environ.get(TOKEN_ENV, "")
    return raw.strip() or None


def _env_bytes(name: str, default: int) -> int:
    """A positive byte count from the environment (plain digits), or ``default`` when unset."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{name}={raw!r}: expected a positive number of bytes, e.g. {default}")
    return int(raw)


def app_from_env() -> FastAPI:
    """The app configured by the environment alone, tracing included: the factory ``guard serve``
    runs in each worker (``gunicorn 'guard.service:app_from_env()'`` works the same)."""
    configure_tracing_from_env()
    return create_app()


def write_openapi(path: str | Path) -> None:
    """Write the OpenAPI document (``docs/openapi.json`` is this, kept in step by a test)."""
    document = create_app().openapi()
    Path(path).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


class InsecureBindError(RuntimeError):
    """``serve`` was asked to listen beyond loopback with no token and without ``insecure``."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts local connections: ``localhost``, 127.0.0.0/8 or ::1. Any
    other name may resolve to a public address, and ``""``, ``0.0.0.0`` and ``::`` are every address."""
    host = host.strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


#: ``guard.semantic.THREADS_ENV``, read there when a worker builds its model.
_THREADS_ENV = "GUARD_SEMANTIC_THREADS"


def _worker_threads(workers: int) -> int:
    """The model's threads in each of ``workers`` worker processes: the cores shared out, at most
    ``DEFAULT_THREADS`` each (two workers' thread pools on one core make each pass wait for its
    slower half); 1 where the embedding checks are not installed (no model runs)."""
    try:
        from guard.semantic import DEFAULT_THREADS, available_cores
    except ImportError:
        return 1
    return max(1, min(DEFAULT_THREADS, available_cores() // workers))


def serve(
    host: str = "127.0.0.1",
    port: int = 8080,
    workers: int = 1,
    *,
    policy: str | Path | None = None,
    insecure: bool = False,
) -> None:
    """Run the service with uvicorn. With several workers and no ``PROMETHEUS_MULTIPROC_DIR`` a
    fresh one is made, so ``/metrics`` reports every worker (see ``guard.telemetry``).

    Without a token (``GUARD_API_TOKEN``) it only listens on a loopback address: anything else
    raises ``InsecureBindError`` unless ``insecure``. ``policy`` is validated here (a ``PolicyError``
    names the file, line and key) and given to the workers as ``GUARD_POLICY``. One log line says
    where it listens and whether ``/v1/*`` needs the token."""
    import uvicorn

    authenticated = configured_token() is not None
    where = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    if not authenticated and not insecure and not is_loopback(host):
        raise InsecureBindError(
            f"refusing to serve {where} without authentication: anyone who can reach it could use /v1/*. "
            f"Set {TOKEN_ENV} (e.g. export {TOKEN_ENV}=$(openssl rand -hex 32)), listen on a loopback "
            "address (--host 127.0.0.1), or pass --insecure to serve it open deliberately."
        )
    if policy is not None:
        load_policy(policy)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s:     %(name)s: %(message)s")
    if authenticated:
        _log.info("guard listening on %s (%d worker(s)); auth on: /v1/* needs the bearer token in %s", where, workers, TOKEN_ENV)
    else:
        _log.warning("guard listening on %s (%d worker(s)); auth OFF: /v1/* answers anyone (no %s)", where, workers, TOKEN_ENV)
    saved = {name: os.environ.get(name) for name in (MULTIPROC_ENV, POLICY_ENV, _THREADS_ENV)}
    made = None
    if workers > 1 and not os.environ.get(MULTIPROC_ENV):
        made = os.environ[MULTIPROC_ENV] = tempfile.mkdtemp(prefix="guard-metrics-")
    if workers > 1 and not os.environ.get(_THREADS_ENV):
        os.environ[_THREADS_ENV] = str(_worker_threads(workers))
    if policy is not None:
        os.environ[POLICY_ENV] = str(Path(policy).resolve())
    try:
        uvicorn.run("guard.service:app_from_env", factory=True, host=host, port=port, workers=workers)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
