"""The data that flows through the guard: a call, the findings about it, and the decision.

Findings are data (category, JSON path, value, rule, evidence), never pre-rendered strings, so a
benchmark can score them and an adapter can render them for a model or a human. Everything here is
JSON-serialisable because decisions travel through ``interrupt()`` payloads, checkpointers,
HTTP responses and logs.
"""

from __future__ import annotations

import hashlib
import json
import reprlib
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from guard.taxonomy import Action, Category


#: ``json.dumps`` builds an encoder per call when given options; these are built once (same output).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
_JSONABLE = json.JSONEncoder(default=repr)


def canonical_json(value: Any) -> str:
    """A stable text form for hashing and comparing arguments (sorted keys, no spaces)."""
    return _CANONICAL.encode(value)


def short_hash(value: Any) -> str:
    """A 16-hex-digit digest of a value's canonical JSON."""
    return hashlib.sha256(canonical_json(value).encode("utf-8", "surrogatepass")).hexdigest()[:16]


class ToolCall(BaseModel):
    """A proposed tool call, as loose as models produce them.

    ``name`` may be missing and ``args`` may be anything (a dict, a JSON string, a list): the
    checks turn every such fault into a finding instead of an exception.
    """

    model_config = ConfigDict(frozen=True)

    name: str | None = None
    args: Any = Field(default_factory=dict)
    id: str | None = None

    @classmethod
    def from_any(cls, raw: Any) -> ToolCall:
        """Accept a LangChain tool-call dict, an OpenAI ``{"function": {...}}`` dict, or a ToolCall.

        Never raises: a value that is no call at all becomes a call with no name, whose
        arguments hold the raw value for the malformed-arguments check to report.
        """
        if isinstance(raw, ToolCall):
            return raw
        if not isinstance(raw, dict):
            return cls(name=None, args=_jsonable(raw), id=None)
        if isinstance(raw.get("function"), dict):  # OpenAI wire format
            fn = raw["function"]
            args = fn.get("arguments", {})
            if isinstance(args, str):  # the wire format is always a JSON string: not a model fault
                try:
                    args = json.loads(args)
                except ValueError:
                    pass  # left as text: the arguments check reports it as malformed
            return cls(name=_as_name(fn.get("name")), args=_jsonable(args), id=_as_id(raw.get("id")))
        args = raw.get("args", raw.get("arguments", raw.get("parameters", {})))
        return cls(name=_as_name(raw.get("name")), args=_jsonable(args), id=_as_id(raw.get("id")))

    @property
    def signature(self) -> str:
        """Identity of the call for budgets and repetition: name plus canonical arguments."""
        return f"{self.name}:{short_hash(self.args)}"

    def to_langchain(self) -> dict[str, Any]:
        return {"name": self.name or "", "args": self.args, "id": self.id, "type": "tool_call"}


def _as_name(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _as_id(value: Any) -> str | None:
    return None if value is None else str(value)


def _jsonable(value: Any) -> Any:
    """Round-trip through JSON so odd objects (sets, bytes, classes) cannot break hashing later."""
    try:
        return json.loads(_JSONABLE.encode(value))
    except (TypeError, ValueError, RecursionError):
        # reprlib's repr is bounded in depth and length: a value nested thousands deep, whose
        # plain repr would recurse as deep, becomes short text the arguments check reports
        return reprlib.repr(value)


class Repair(BaseModel):
    """A deterministic fix applied to a call: what it was, what it became, and which rule did it."""

    model_config = ConfigDict(frozen=True)

    kind: str
    path: str
    before: Any = None
    after: Any = None


class Finding(BaseModel):
    """One fact about a call that the policy must decide on."""

    model_config = ConfigDict(frozen=True)

    category: Category
    check: str
    message: str
    tool: str | None = None
    path: str = "$"
    value: Any = None
    rule: str | None = None
    evidence: dict[str, Any] = Field(default_factory=dict)
    repair: Repair | None = None
    confidence: float = Field(
        1.0,
        ge=0.0,
        le=1.0,
        description="how sure the check is that this is a fault; a graded policy action reads it",
    )

    @property
    def param(self) -> str | None:
        """The top-level parameter the path starts with, if any."""
        if not self.path.startswith("$.") or len(self.path) < 3:
            return None
        head = self.path[2:]
        for sep in (".", "["):
            head = head.split(sep, 1)[0]
        return head or None


class Decision(BaseModel):
    """What the guard decided about one call, and everything an adapter needs to carry it out."""

    action: Action
    call: ToolCall
    findings: list[Finding] = Field(default_factory=list)
    repaired_call: ToolCall | None = None
    feedback: str | None = None
    question: str | None = None
    missing: list[str] = Field(default_factory=list)
    escalation_kind: str | None = None
    policy_name: str = "default"
    policy_hash: str = ""
    latency_ms: float = 0.0
    judgements: list[dict[str, Any]] = Field(
        default_factory=list,
        description="what the optional LLM judge was asked and answered (guard.checks.judge), with its effect, "
        "latency and tokens; a finding it dropped is kept here",
    )
    decision_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    warnings: list[Finding] = Field(
        default_factory=list,
        description="the findings the policy rated warn: the call runs, and they are recorded",
    )
    #: The shadow policy's verdict on the same call (``guard.shadow.ShadowDecision``), never enforced;
    #: private, so it is in no payload, response or checkpoint.
    _shadow: Any = PrivateAttr(default=None)

    @property
    def shadow(self) -> Any:
        return self._shadow

    @shadow.setter
    def shadow(self, value: Any) -> None:
        self._shadow = value

    @property
    def call_to_run(self) -> ToolCall:
        """The call an adapter executes when the action lets it run."""
        return self.repaired_call or self.call

    @property
    def categories(self) -> list[Category]:
        return sorted({f.category for f in self.findings})

    @property
    def runs(self) -> bool:
        return self.action.runs
