"""A benchmark case: one conversation, the tools on offer, the agent turn under test, and the truth.

Every dataset loader turns its records into ``Case`` objects; everything downstream (agents, the
simulated human and tools, the graph, the metrics) reads only this shape, so a team's own recorded
traces can be scored the same way as the public datasets.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Split = Literal["dev", "test"]

#: Share of cases in the dev split (the rest is test). Rules and thresholds are tuned on dev only.
DEV_PERCENT = 30


def split_of(family: str) -> Split:
    """The fixed split of a case family, by a hash of its key (``Case.family``): never by position,
    so it survives reordering, and never by case id, so every variant of one source lands on the
    same side (a variant in test whose sibling is in dev measures memory, not generalisation)."""
    bucket = int(hashlib.sha256(family.encode("utf-8")).hexdigest()[:8], 16) % 100
    return "dev" if bucket < DEV_PERCENT else "test"


class Expected(BaseModel):
    """What a perfect guard concludes about the case.

    ``label`` is ``"ok"`` (nothing wrong: the call should run) or a benchmark label
    (``guard_bench.labels``); ``params``, ``tool`` and ``values`` say what the label is about.
    """

    model_config = ConfigDict(extra="forbid")

    label: str = "ok"
    params: list[str] = Field(default_factory=list)
    tool: str | None = None
    values: list[Any] = Field(default_factory=list)


class Human(BaseModel):
    """What the simulated human knows, and may tell when asked (Fail-TaLMs' Ask-and-Help)."""

    model_config = ConfigDict(extra="forbid")

    values: dict[str, Any] = Field(default_factory=dict)
    tool: str | None = None
    text: str | None = None
    replies: list[str] = Field(default_factory=list)


class ToolError(BaseModel):
    """A failure injected into a simulated tool: the first ``times`` calls fail with ``kind``."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    kind: Literal["timeout", "rate_limit", "permission", "quota", "connection", "server_error", "error_payload"]
    times: int = 1


class Case(BaseModel):
    """One replayable case.

    ``family`` names the source the case derives from (a Fail-TaLMs original query, an ACEBench
    question, an API-Bank dialogue...); the split hashes it, so all of a source's variants share a
    side. Loaders set it (``guard_bench.families.assign`` also joins cases whose user turns say the
    same words); left empty it is the case id.
    """

    model_config = ConfigDict(extra="forbid")

    id: str
    family: str = ""
    suite: str
    subset: str
    messages: list[dict[str, Any]] = Field(default_factory=list)
    tools: list[dict[str, Any]] = Field(default_factory=list)
    calls: list[dict[str, Any]] = Field(default_factory=list)
    expected: Expected = Field(default_factory=Expected)
    gold_calls: list[dict[str, Any]] = Field(default_factory=list)
    human: Human = Field(default_factory=Human)
    tool_results: dict[str, Any] = Field(default_factory=dict)
    tool_errors: list[ToolError] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _family_defaults_to_id(self) -> Case:
        if not self.family:
            self.family = self.id
        return self

    @property
    def split(self) -> Split:
        return split_of(self.family)

    @property
    def uses_preflight(self) -> bool:
        """A case with no proposed call is judged before any call, by the preflight."""
        return not self.calls


class Loaded(list[Case]):
    """A loader's cases and what it could not read: ``skipped`` counts unreadable records by reason
    (a loader skips a record it cannot parse and goes on; it never stops)."""

    def __init__(self, cases: Iterable[Case] = (), skipped: Counter[str] | dict[str, int] | None = None) -> None:
        super().__init__(cases)
        self.skipped: Counter[str] = Counter(skipped or {})

    def total_skipped(self) -> int:
        return sum(self.skipped.values())
