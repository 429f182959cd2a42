"""The decision log: one JSON line per decision, so a team can replay its own traffic offline.

Turned on by the policy's ``log`` section (off by default)::

    log:
      path: decisions.jsonl        # appended to; or otlp: true (OpenTelemetry log records)
      include_messages: true       # the conversation before each call (else its digest and length)
      redact: [password, "*token*", "$.card.number"]

Every ``Guard`` whose policy has a log writes what it decides (``check``, ``acheck``,
``preflight``, ``refuse``), so the LangGraph node, the LangChain middleware, the HTTP service and
the benchmark log the same way with no code of their own. The schema is versioned and documented in
``docs/decision-log.md``; ``guard replay`` (``guard.replay``) reads it back.

Lines are of four types:

* ``header``: the schema version, once at the top of a new file;
* ``tool``: one tool description (name, description, parameters, metadata) under its digest,
  written once per file by each writing process;
* ``toolset``: the digests of the tools a decision was made against, under the registry's digest,
  written once per file by each writing process;
* ``decision``: the call, the conversation before it (or its digest), the retries spent, the policy
  name and hash, the decision (action, categories, confidence, findings, repairs), the shadow
  policy's decision when one is set;
* ``outcome``: what happened when the call ran (matched to its decision by thread and call id).

A line is written with one ``write`` on a file opened ``O_APPEND``, so processes appending to one
file on a local file system do not interleave within a line; a tool or toolset line always comes
before the first decision of its writer that names it. The writer never raises into the guard: a
record that cannot be written is counted (``DecisionLog.errors``) and logged once.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from guard.models import canonical_json, short_hash

if TYPE_CHECKING:  # pragma: no cover
    from guard.budgets import GuardState
    from guard.conversation import Conversation, Message
    from guard.models import Decision, Finding, ToolCall
    from guard.registry import ToolRegistry, ToolSpec

_log = logging.getLogger(__name__)

#: The schema of every line; a reader refuses a major version it does not know.
SCHEMA = "guard.decision-log/1"
VERSION = 1
#: What a redacted value is replaced with.
REDACTED = "[redacted]"
#: The logger OTLP records go through (``log.otlp``).
OTLP_LOGGER = "guard.decisions"
#: Tool and toolset digests a writer remembers having written (past it, it forgets and rewrites).
_MAX_DIGESTS = 100_000


class LogConfig(BaseModel):
    """The policy's ``log`` section: where decisions are appended, and what they keep."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str | None = Field(None, description="a JSONL file decisions are appended to (created with mode 0600)")
    otlp: bool = Field(
        False, description="also emit each line as an OpenTelemetry log record (logger guard.decisions; exported when OTEL_* says so)"
    )
    include_messages: bool = Field(
        True, description="keep the conversation before each call (replay needs it); false keeps its digest and length only"
    )
    redact: tuple[str, ...] = Field(
        (),
        description="argument names (any depth, case-insensitive: 'password', '*token*') or JSON paths ('$.card.number', '$.items[*].ssn') "
        "whose values are written as '[redacted]' in calls, repairs, findings and earlier tool calls",
    )

    @property
    def enabled(self) -> bool:
        return bool(self.path) or self.otlp


# -- the context a decision is made in ---------------------------------------------------------------

_CONTEXT: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar("guard_decision_log_context", default=None)


@contextmanager
def log_context(**fields: Any) -> Iterator[None]:
    """Say what the guard cannot know itself (``thread_id``, ``source``) for the decisions made
    inside: ``with log_context(thread_id=t, source="service"): guard.check(...)``. Inside a
    LangGraph run the thread id is read from the run's config when no context gives one."""
    outer = _CONTEXT.get() or {}
    token = _CONTEXT.set({**outer, **{k: v for k, v in fields.items() if v is not None}})
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def _context() -> dict[str, Any]:
    ctx = dict(_CONTEXT.get() or {})
    if "thread_id" not in ctx:
        try:
            from langgraph.config import get_config

            thread = (get_config().get("configurable") or {}).get("thread_id")
        except Exception:  # outside a LangGraph run: no thread
            thread = None
        if thread is not None:
            ctx["thread_id"] = str(thread)
    return ctx


# -- redaction ----------------------------------------------------------------------------------------


def _glob(pattern: str) -> re.Pattern[str]:
    """``*`` any text, ``?`` one character, ``[*]`` any array index; everything else literal."""
    text = re.escape(pattern).replace(r"\[\*\]", r"\[\d+\]").replace(r"\*", ".*").replace(r"\?", ".")
    return re.compile(text + r"\Z")


class Redactor:
    """Values to hide, by argument name (any depth) or by JSON path (``fnmatch`` patterns)."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.names = [_glob(p.lower()) for p in patterns if not p.startswith("$")]
        self.paths = [_glob(p) for p in patterns if p.startswith("$")]

    def __bool__(self) -> bool:
        return bool(self.names or self.paths)

    def hides(self, path: str) -> bool:
        """Whether the value at this JSON path (``$.a.b[0]``) is hidden."""
        if any(p.match(path) for p in self.paths):
            return True
        keys = re.findall(r"\.([^.\[\]]+)", path)
        return any(n.match(k.lower()) for n in self.names for k in keys)

    def apply(self, value: Any, path: str = "$") -> tuple[Any, bool]:
        """The value with hidden parts replaced, and whether anything was."""
        if not self:
            return value, False
        if path != "$" and self.hides(path):
            return REDACTED, True
        if isinstance(value, dict):
            out, hit = {}, False
            for k, v in value.items():
                out[k], h = self.apply(v, f"{path}.{k}")
                hit |= h
            return out, hit
        if isinstance(value, list):
            items, hit = [], False
            for i, v in enumerate(value):
                item, h = self.apply(v, f"{path}[{i}]")
                items.append(item)
                hit |= h
            return items, hit
        return value, False


# -- serialising what a decision was made from ---------------------------------------------------------


def tool_entry(spec: ToolSpec) -> dict[str, Any]:
    """A tool description as logged: what the checks read of it (``guard.replay`` rebuilds it)."""
    return {"name": spec.name, "description": spec.description, "parameters": spec.parameters, "metadata": _plain(spec.metadata)}


def tool_digest(entry: Mapping[str, Any]) -> str:
    return short_hash(entry)


def message_entry(message: Message, redactor: Redactor) -> tuple[dict[str, Any], bool]:
    """A conversation message as logged; it reads back through ``Conversation.from_messages``."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    hit = False
    if message.tool_calls:
        calls = []
        for c in message.tool_calls:
            args, h = redactor.apply(c.args)
            hit |= h
            calls.append({"name": c.name, "args": args, "id": c.id})
        out["tool_calls"] = calls
    for key in ("tool_call_id", "name", "status"):
        if (v := getattr(message, key)) is not None:
            out[key] = v
    record = message.metadata.get("guard")
    if record is not None:
        out["response_metadata"] = {"guard": _plain(record)}
    return out, hit


def _plain(value: Any) -> Any:
    """JSON-safe (odd objects in tool metadata become their text)."""
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError, RecursionError):
        return str(value)


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- the writer ---------------------------------------------------------------------------------------


class _File:
    """One log file per process, shared by every ``DecisionLog`` writing to it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.written: set[str] = set()  # tool and toolset digests this process wrote
        self.fd: int | None = None
        self.pid = 0

    def write(self, text: str) -> None:
        with self.lock:
            if self.fd is None or self.pid != os.getpid():  # forked: the child writes its own descriptions
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                self.pid = os.getpid()
                self.written = set()
                if os.fstat(self.fd).st_size == 0:
                    text = json.dumps({"type": "header", "schema": SCHEMA, "v": VERSION, "time": _now_iso()}, separators=(",", ":")) + "\n" + text
            data = text.encode("utf-8", "surrogatepass")
            while data:
                n = os.write(self.fd, data)
                data = data[n:]


_FILES: dict[str, _File] = {}
_FILES_LOCK = threading.Lock()
_WRITERS: dict[LogConfig, DecisionLog] = {}


def writer_for(config: LogConfig | None) -> DecisionLog | None:
    """The process's writer for a ``log`` section (None when it is off): one per configuration,
    one open file per path."""
    if config is None or not config.enabled:
        return None
    with _FILES_LOCK:
        writer = _WRITERS.get(config)
        if writer is None:
            file = None
            if config.path:
                key = os.path.abspath(config.path)
                file = _FILES.setdefault(key, _File(Path(key)))
            writer = _WRITERS[config] = DecisionLog(config, file)
        return writer


class DecisionLog:
    """Appends decision and outcome records. Never raises: failures are counted in ``errors``."""

    def __init__(self, config: LogConfig, file: _File | None) -> None:
        self.config = config
        self.file = file
        self.redactor = Redactor(config.redact)
        self.errors = 0
        self._otlp_written: set[str] = set()
        self._toolsets: dict[str, tuple[list[dict[str, Any]], list[str]]] = {}  # registry fingerprint -> entries, digests

    # -- records -----------------------------------------------------------------------------------

    def decision(
        self,
        decision: Decision,
        *,
        conversation: Conversation,
        state: GuardState,
        registry: ToolRegistry,
        approved: bool = False,
        stage: str = "call",
        confidence: float | None = None,
        refused: Finding | None = None,
        shadow: dict[str, Any] | None = None,
    ) -> None:
        try:
            self._decision(decision, conversation, state, registry, approved, stage, confidence, refused, shadow)
        except Exception:
            self._failed("decision")

    def outcome(self, call: ToolCall, post: Mapping[str, Any]) -> None:
        """What happened when a call ran (``guard.execution``'s record: ``outcome`` is the failure's
        category, absent when the call succeeded; ``attempts``)."""
        try:
            ctx = _context()
            record = {
                "type": "outcome", "v": VERSION, "time": _now_iso(), "thread_id": ctx.get("thread_id"),
                "call_id": call.id, "tool": call.name, "outcome": post.get("outcome") or "ok",
                "outcome_action": post.get("outcome_action"), "attempts": post.get("attempts"),
            }
            self._emit([record], [])
        except Exception:
            self._failed("outcome")

    def _decision(
        self,
        decision: Decision,
        conversation: Conversation,
        state: GuardState,
        registry: ToolRegistry,
        approved: bool,
        stage: str,
        confidence: float | None,
        refused: Finding | None,
        shadow: dict[str, Any] | None,
    ) -> None:
        red = self.redactor
        ctx = _context()
        toolset, tool_lines, new_digests = self._toolset(registry)
        call = decision.call
        args, redacted = red.apply(call.args)
        messages, hit = [], False
        for m in conversation.messages:
            entry, h = message_entry(m, red)
            messages.append(entry)
            hit |= h
        redacted |= hit
        conv: dict[str, Any] = {"digest": short_hash(messages), "n": len(messages)}
        if conversation.messages or conversation.now is not None:
            conv["now"] = conversation.reference_time.isoformat()
        if self.config.include_messages:
            conv["messages"] = messages
        findings, repairs = [], []
        for f in decision.findings:
            hidden = red.hides(f.path) if red else False
            redacted |= hidden
            entry = {"category": f.category.value, "check": f.check, "path": f.path, "confidence": f.confidence,
                     "rule": f.rule, "message": REDACTED if hidden else f.message}
            if not hidden and f.value is not None:
                entry["value"] = _plain(f.value)
            findings.append(entry)
            if f.repair is not None:
                r = f.repair
                repairs.append({"kind": r.kind, "path": r.path, "before": REDACTED if hidden else _plain(r.before),
                                "after": REDACTED if hidden else _plain(r.after)})
        record: dict[str, Any] = {
            "type": "decision", "v": VERSION, "time": _now_iso(), "decision_id": decision.decision_id,
            "thread_id": ctx.get("thread_id"), "source": ctx.get("source"), "stage": stage,
            "call": {"name": call.name, "args": args, "id": call.id}, "approved": approved,
            "toolset": toolset,
            "conversation": conv,
            "state": {"per_call": state.retries_of(call.signature), "turn": state.turn_retries, "thread": state.thread_retries},
            "policy": {"name": decision.policy_name, "sha256": decision.policy_hash},
            "decision": {
                "action": decision.action.value,
                "categories": [c.value for c in decision.categories],
                "confidence": confidence,
                "findings": findings,
                "repairs": repairs,
                "escalation_kind": decision.escalation_kind,
                "missing": decision.missing,
            },
            "latency_ms": round(decision.latency_ms, 4),
        }
        if decision.repaired_call is not None:
            record["decision"]["repaired_args"] = red.apply(decision.repaired_call.args)[0]
        unavailable = {s.name: s.unavailable_reason for s in registry if not s.enabled}
        if unavailable:
            record["unavailable"] = unavailable
        if refused is not None:
            record["refused"] = {"category": refused.category.value, "check": refused.check, "message": refused.message,
                                 "rule": refused.rule, "path": refused.path, "evidence": _plain(refused.evidence)}
        if shadow is not None:
            record["shadow"] = shadow
        if redacted:
            record["redacted"] = True
        self._emit(tool_lines + [record], new_digests)

    def _toolset(self, registry: ToolRegistry) -> tuple[str, list[dict[str, Any]], list[str]]:
        """The registry's digest, and the tool and toolset lines not yet written (with their digests)."""
        digest = registry.fingerprint
        if digest not in self._toolsets:
            entries = [tool_entry(s) for s in registry]
            if len(self._toolsets) >= 1024:
                self._toolsets.pop(next(iter(self._toolsets)))
            self._toolsets[digest] = (entries, [tool_digest(e) for e in entries])
        entries, digests = self._toolsets[digest]
        written = self.file.written if self.file is not None else self._otlp_written
        lines, new = [], []
        for entry, d in zip(entries, digests, strict=True):
            if d not in written and d not in new:
                lines.append({"type": "tool", "v": VERSION, "digest": d, "tool": entry})
                new.append(d)
        if digest not in written:
            lines.append({"type": "toolset", "v": VERSION, "digest": digest, "tools": digests})
            new.append(digest)
        return digest, lines, new

    def _emit(self, records: list[dict[str, Any]], digests: list[str]) -> None:
        lines = [json.dumps(r, ensure_ascii=False, default=str, separators=(",", ":")) for r in records]
        if self.file is not None:
            self.file.write("".join(line + "\n" for line in lines))
            if len(self.file.written) > _MAX_DIGESTS:  # bounded: a description is written again, harmlessly
                self.file.written.clear()
            self.file.written.update(digests)
        if self.config.otlp:
            otlp = logging.getLogger(OTLP_LOGGER)
            for r, line in zip(records, lines, strict=True):
                otlp.info(line, extra={"guard.log.type": r["type"]})
            if len(self._otlp_written) > _MAX_DIGESTS:
                self._otlp_written.clear()
            self._otlp_written.update(digests)

    def _failed(self, what: str) -> None:
        self.errors += 1
        if self.errors == 1:
            _log.exception("guard: a %s record could not be written to the decision log (further failures are only counted)", what)


def configure_otlp_logs(install: bool = True) -> Any:
    """Export the ``guard.decisions`` logger's records over OTLP (the OpenTelemetry logs SDK with
    the exporter the standard ``OTEL_EXPORTER_OTLP_*`` variables configure). Returns the handler,
    or None when the SDK or exporter is not installed."""
    try:
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    except ImportError:
        _log.warning("log.otlp needs opentelemetry-sdk and opentelemetry-exporter-otlp-proto-grpc: decisions are not exported")
        return None
    provider = LoggerProvider()
    provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
    handler = LoggingHandler(logger_provider=provider)
    if install:
        logger = logging.getLogger(OTLP_LOGGER)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    return handler

