"""What both replay engines share: reading a decision log's lines, re-deciding, and the diff.

Everything here works one line at a time on plain Python objects, so the local engine (one process
streaming the files) and the Ray engine (actors fed batches of lines by Ray Data) run the same code
and give the same ``diff.json``: the ``Diff`` is a sum of per-line contributions, merged in any
order to the same result (examples are the ones with the smallest keys, never the first seen).

A line is hostile input: one that is not JSON, not an object, of an unknown schema version, or a
decision whose fields do not hold what the schema says is counted under ``skipped`` and passed
over; a guard failure while re-deciding is counted too (``skipped.error``). Nothing raises.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from guard.budgets import GuardState
from guard.conversation import Conversation
from guard.decision_log import VERSION
from guard.engine import Guard
from guard.models import Decision, Finding, ToolCall, canonical_json
from guard.policy import Policy
from guard.registry import ToolRegistry, ToolSpec
from guard.taxonomy import Action, Category

try:  # a faster parser when installed (the replay extra); the standard one otherwise
    import orjson

    def _loads(text: str) -> Any:
        return orjson.loads(text)
except ImportError:  # pragma: no cover
    def _loads(text: str) -> Any:
        return json.loads(text)

#: Examples kept per change (old action -> new action).
EXAMPLES_PER_CHANGE = 5
#: The action that interrupts the run to ask a human.
INTERRUPT = Action.ASK_HUMAN.value
#: The tool label of a call to a tool its toolset does not hold (names a model invents are unbounded).
UNKNOWN_TOOL = "__unknown__"
#: Lines the writer starts so: its tool, toolset and outcome records, which a replay only counts (by type).
COUNTED_ONLY = ('{"type":"tool","v":1,', '{"type":"toolset","v":1,', '{"type":"outcome","v":1,')
#: Registries (and guards) kept, by toolset.
CACHE_SIZE = 4096


def replay_policy(policy: Policy) -> Policy:
    """The policy as replay runs it: it writes no decision log and runs no shadow of its own."""
    return policy.model_copy(update={"log": None, "shadow": None})


# -- the catalog of tool descriptions ---------------------------------------------------------------


def catalog_candidate(text: str) -> bool:
    """A cheap test: could this line be a ``tool`` or ``toolset`` record? (The writer puts ``type``
    first; a line written otherwise is still read, it only costs a parse.)"""
    head = text[:96]
    return '"tool' in head or '"type"' not in head


def catalog_entry(text: str) -> tuple[str, str, Any] | None:
    """``(kind, digest, payload)`` of a tool or toolset line, else None (never raises)."""
    try:
        record = _loads(text)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("v", VERSION) != VERSION:
        return None
    kind, digest = record.get("type"), record.get("digest")
    if not isinstance(digest, str):
        return None
    if kind == "tool" and isinstance(record.get("tool"), dict):
        return "tool", digest, record["tool"]
    if kind == "toolset" and isinstance(record.get("tools"), list) and all(isinstance(t, str) for t in record["tools"]):
        return "toolset", digest, record["tools"]
    return None


class Catalog:
    """Every tool and toolset description of the logs being replayed (small: one entry per
    distinct tool, whatever the log's length), and the registries built from them."""

    def __init__(self, tools: Mapping[str, Any] | None = None, toolsets: Mapping[str, list[str]] | None = None) -> None:
        self.tools: dict[str, Any] = dict(tools or {})
        self.toolsets: dict[str, list[str]] = dict(toolsets or {})
        self._registries: OrderedDict[str, ToolRegistry | None] = OrderedDict()

    def add(self, entry: tuple[str, str, Any] | None) -> None:
        if entry is None:
            return
        kind, digest, payload = entry
        (self.tools if kind == "tool" else self.toolsets).setdefault(digest, payload)

    def add_lines(self, lines: Iterable[str]) -> None:
        """Add the tool and toolset lines among ``lines``. A writer writes each description once
        per file and process, so a log of many files (or restarts) repeats them: a line read
        before is not parsed again (it would change nothing: a digest's first description
        stays). Only lines that gave an entry are remembered, so this pass holds at most the
        catalog's own text, whatever the log's length."""
        read: set[str] = set()
        for line in lines:
            if catalog_candidate(line) and line not in read:
                entry = catalog_entry(line)
                if entry is not None:
                    read.add(line)
                    self.add(entry)

    def to_json(self) -> dict[str, Any]:
        return {"tools": self.tools, "toolsets": self.toolsets}

    def registry(self, toolset: str) -> ToolRegistry | None:
        """The registry a toolset describes (None when it is not in the logs or will not load)."""
        if toolset in self._registries:
            self._registries.move_to_end(toolset)
            return self._registries[toolset]
        registry: ToolRegistry | None = None
        digests = self.toolsets.get(toolset)
        if digests is not None and all(d in self.tools for d in digests):
            try:
                registry = ToolRegistry(_spec(self.tools[d]) for d in digests)
            except Exception:  # a description that does not register (hostile or damaged)
                registry = None
        self._registries[toolset] = registry
        if len(self._registries) > CACHE_SIZE:
            self._registries.popitem(last=False)
        return registry


def _spec(entry: Mapping[str, Any]) -> ToolSpec:
    return ToolSpec(
        name=str(entry["name"]), description=str(entry.get("description") or ""), parameters=dict(entry["parameters"]),
        metadata=dict(entry.get("metadata") or {}),
    )


# -- the diff ---------------------------------------------------------------------------------------


def _counts() -> dict[str, int]:
    return {"decisions": 0, "changed": 0, "newly_interrupted": 0, "no_longer_interrupted": 0}


class Diff:
    """The comparison of old and new decisions, summed line by line; ``merge`` is associative and
    commutative, so any split of the log gives the same result."""

    def __init__(self) -> None:
        self.totals = _counts()
        self.confusion: dict[str, dict[str, int]] = {}
        self.per_category: dict[str, dict[str, int]] = {}
        self.per_tool: dict[str, dict[str, int]] = {}
        self.categories_changed = 0
        self.redacted = 0
        self.records: dict[str, int] = {}
        self.skipped: dict[str, int] = {}
        self.examples: dict[str, dict[str, dict[str, Any]]] = {}  # "old->new" -> key -> example

    # -- adding ----------------------------------------------------------------------------------

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def saw(self, kind: str) -> None:
        self.records[kind] = self.records.get(kind, 0) + 1

    def add(
        self, old: Mapping[str, Any], new: Mapping[str, Any], tool: str, example: Callable[[], tuple[str, dict[str, Any]]]
    ) -> None:
        """Count one decision; ``example`` gives the change's example and its key (only called for
        a change: most decisions do not change, and building one costs)."""
        old_action, new_action = old["action"], new["action"]
        delta = {
            "decisions": 1,
            "changed": int(old_action != new_action),
            "newly_interrupted": int(new_action == INTERRUPT and old_action != INTERRUPT),
            "no_longer_interrupted": int(old_action == INTERRUPT and new_action != INTERRUPT),
        }
        _bump(self.totals, delta)
        row = self.confusion.setdefault(old_action, {})
        row[new_action] = row.get(new_action, 0) + 1
        for category in sorted(set(old["categories"]) | set(new["categories"])) or ["none"]:
            _bump(self.per_category.setdefault(category, _counts()), delta)
        _bump(self.per_tool.setdefault(tool, _counts()), delta)
        if set(old["categories"]) != set(new["categories"]):
            self.categories_changed += 1
        if delta["changed"]:
            key, shown = example()
            self._example(f"{old_action}->{new_action}", key, shown)

    def _example(self, change: str, key: str, example: dict[str, Any]) -> None:
        kept = self.examples.setdefault(change, {})
        if key in kept or (len(kept) >= EXAMPLES_PER_CHANGE and key > max(kept)):
            return
        kept[key] = example
        if len(kept) > EXAMPLES_PER_CHANGE:
            del kept[max(kept)]

    # -- merging and writing -----------------------------------------------------------------------

    def merge(self, other: Diff) -> Diff:
        _bump(self.totals, other.totals)
        for old, row in other.confusion.items():
            mine = self.confusion.setdefault(old, {})
            for new, n in row.items():
                mine[new] = mine.get(new, 0) + n
        for table, theirs in ((self.per_category, other.per_category), (self.per_tool, other.per_tool)):
            for k, v in theirs.items():
                _bump(table.setdefault(k, _counts()), v)
        self.categories_changed += other.categories_changed
        self.redacted += other.redacted
        for mine_c, theirs_c in ((self.records, other.records), (self.skipped, other.skipped)):
            for k, n in theirs_c.items():
                mine_c[k] = mine_c.get(k, 0) + n
        for change, kept in other.examples.items():
            for key, example in kept.items():
                self._example(change, key, example)
        return self

    def state(self) -> dict[str, Any]:
        """Everything, as JSON-safe data (what a Ray actor hands back)."""
        return {
            "totals": self.totals, "confusion": self.confusion, "per_category": self.per_category, "per_tool": self.per_tool,
            "categories_changed": self.categories_changed, "redacted": self.redacted, "records": self.records,
            "skipped": self.skipped, "examples": self.examples,
        }

    @classmethod
    def from_state(cls, data: Mapping[str, Any]) -> Diff:
        diff = cls()
        for name, value in data.items():
            setattr(diff, name, value)
        return diff

    def report(self, meta: Mapping[str, Any]) -> dict[str, Any]:
        """``diff.json``: the same for the same logs and policies, whichever engine ran."""
        n = self.totals["decisions"]
        return {
            "schema": "guard.replay-diff/1",
            **meta,
            "decisions": n,
            "changed": self.totals["changed"],
            "newly_interrupted": self.totals["newly_interrupted"],
            "no_longer_interrupted": self.totals["no_longer_interrupted"],
            "rates": {k: (self.totals[k] / n if n else 0.0) for k in ("changed", "newly_interrupted", "no_longer_interrupted")},
            "categories_changed": self.categories_changed,
            "confusion": {o: dict(sorted(r.items())) for o, r in sorted(self.confusion.items())},
            "per_category": dict(sorted(self.per_category.items())),
            "per_tool": dict(sorted(self.per_tool.items())),
            "examples": {c: [kept[k] for k in sorted(kept)] for c, kept in sorted(self.examples.items())},
            "records": dict(sorted(self.records.items())),
            "skipped": dict(sorted(self.skipped.items())),
            "redacted": self.redacted,
        }


def _bump(into: dict[str, int], delta: Mapping[str, int]) -> None:
    for k, v in delta.items():
        into[k] = into.get(k, 0) + v


# -- re-deciding --------------------------------------------------------------------------------------


class InvalidRecord(ValueError):
    """A decision line whose fields do not hold what the schema says."""


class Replayer:
    """Re-decides logged calls under a new policy (and, with ``baseline``, under the old one too)."""

    def __init__(self, policy: Policy, catalog: Catalog, baseline: Policy | None = None) -> None:
        self.policy = replay_policy(policy)
        self.baseline = replay_policy(baseline) if baseline is not None else None
        self.catalog = catalog
        self._guards: OrderedDict[tuple[str, str], tuple[Guard, Guard | None] | None] = OrderedDict()

    def line(self, text: str, diff: Diff) -> None:
        """Add one log line to ``diff`` (a non-decision line is only counted)."""
        text = text.strip()
        if not text:
            return
        if text.startswith(COUNTED_ONLY):  # the writer's own tool, toolset and outcome lines: no need to parse
            diff.saw(text[9:text.index('"', 9)])
            return
        try:
            record = _loads(text)
        except ValueError:
            diff.skip("malformed_json")
            return
        if not isinstance(record, dict):
            diff.skip("not_an_object")
            return
        kind = record.get("type")
        if record.get("v", VERSION) != VERSION:
            diff.skip("unsupported_version")
            return
        if kind != "decision":
            diff.saw(kind if kind in ("header", "tool", "toolset", "outcome") else "other")
            return
        diff.saw("decision")
        try:
            self._decision(record, text, diff)
        except InvalidRecord:
            diff.skip("invalid_record")
        except Exception:  # the guard failed on this input: counted, the replay goes on
            diff.skip("error")

    def _guards_for(self, toolset: str, unavailable: Mapping[str, Any]) -> tuple[Guard, Guard | None] | None:
        key = (toolset, canonical_json(unavailable) if unavailable else "")
        if key in self._guards:
            self._guards.move_to_end(key)
            return self._guards[key]
        registry = self.catalog.registry(toolset)
        guards = None
        if registry is not None:
            if unavailable:
                registry = registry.copy()
                for name, reason in unavailable.items():
                    if name in registry:
                        registry.set_available(name, False, reason if isinstance(reason, str) else None)
            guards = (Guard(registry, self.policy, judge=False),
                      Guard(registry, self.baseline, judge=False) if self.baseline is not None else None)
        self._guards[key] = guards
        if len(self._guards) > CACHE_SIZE:
            self._guards.popitem(last=False)
        return guards

    def _decision(self, record: dict[str, Any], text: str, diff: Diff) -> None:
        call_data, toolset, conv = record.get("call"), record.get("toolset"), record.get("conversation") or {}
        logged = record.get("decision")
        stage = record.get("stage", "call")
        if not isinstance(call_data, dict) or not isinstance(toolset, str) or not isinstance(logged, dict) or not isinstance(conv, dict):
            raise InvalidRecord
        if stage not in ("call", "preflight", "refuse"):
            raise InvalidRecord
        unavailable = record.get("unavailable") or {}
        if not isinstance(unavailable, dict):
            raise InvalidRecord
        guards = self._guards_for(toolset, unavailable)
        if guards is None:
            diff.skip("unknown_toolset")
            return
        messages = conv.get("messages")
        if messages is None and conv.get("n", 0):
            diff.skip("no_messages")  # the log kept only the conversation's digest: nothing to re-decide on
            return
        if messages is not None and not (isinstance(messages, list) and all(isinstance(m, dict) for m in messages)):
            raise InvalidRecord
        now = _time(conv.get("now"))
        conversation = Conversation.from_messages(messages or [], now=now)
        call = ToolCall.from_any(call_data)
        state = _state(record.get("state"), call)
        approved = record.get("approved") is True
        refused = _finding(record.get("refused")) if stage == "refuse" else None
        if stage == "refuse" and refused is None:
            raise InvalidRecord
        new = _redecide(guards[0], stage, call, conversation, state, approved, refused)
        if guards[1] is not None:
            old_decision = _redecide(guards[1], stage, call, conversation, state, approved, refused)
            old = {"action": old_decision.action.value, "categories": [c.value for c in old_decision.categories]}
        else:
            old = _logged(logged)
        new_summary = {"action": new.action.value, "categories": [c.value for c in new.categories]}
        if record.get("redacted") is True:
            diff.redacted += 1
        registry = guards[0].registry
        tool = call.name if call.name in registry else UNKNOWN_TOOL

        def example() -> tuple[str, dict[str, Any]]:
            key = str(record.get("decision_id") or "") + ":" + canonical_json(call_data)[:200]
            return key, {
                "decision_id": record.get("decision_id"), "thread_id": record.get("thread_id"), "time": record.get("time"),
                "stage": stage, "tool": call.name, "call_id": call.id, "args": _clip(call.args),
                "old": old, "new": {**new_summary, **_said(new)},
            }

        diff.add(old, new_summary, tool, example)


def _redecide(
    guard: Guard, stage: str, call: ToolCall, conversation: Conversation, state: GuardState, approved: bool, refused: Finding | None
) -> Decision:
    if stage == "preflight":
        return guard.preflight(conversation, state)
    if stage == "refuse" and refused is not None:
        return guard.refuse(call, refused, state)
    return guard.check(call, conversation, state, approved=approved)


def _logged(logged: Mapping[str, Any]) -> dict[str, Any]:
    action, categories = logged.get("action"), logged.get("categories") or []
    try:
        action = Action(action).value
        categories = sorted({Category(c).value for c in categories})
    except (ValueError, TypeError) as exc:
        raise InvalidRecord from exc
    return {"action": action, "categories": categories}


def _time(value: Any) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(str(value))
    except ValueError as exc:
        raise InvalidRecord from exc


def _state(value: Any, call: ToolCall) -> GuardState:
    if value is None:
        return GuardState()
    if not isinstance(value, dict):
        raise InvalidRecord
    numbers = [value.get(k, 0) for k in ("per_call", "turn", "thread")]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers):
        raise InvalidRecord
    per_call, turn, thread = numbers
    return GuardState(per_call={call.signature: per_call} if per_call else {}, turn_retries=turn, thread_retries=thread)


def _finding(value: Any) -> Finding | None:
    if not isinstance(value, dict):
        return None
    try:
        return Finding.model_validate({k: value[k] for k in ("category", "check", "message", "rule", "path", "evidence") if k in value})
    except Exception:
        return None


def _said(decision: Decision) -> dict[str, Any]:
    text = decision.question or decision.feedback
    return {"said": text[:400]} if text else {}


def _clip(args: Any) -> Any:
    """Arguments as shown in an example: whole when small, else their first 1,000 characters of JSON."""
    text = canonical_json(args)
    return args if len(text) <= 1000 else text[:1000] + "…"
