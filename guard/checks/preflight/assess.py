"""The preflight's steps: rank the tools, find the tools a multi-part request needs, judge each
on the parts it serves, and collect the findings."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from guard import schema as schemas
from guard.checks.arguments import excerpt, path_label
from guard.checks.preflight.parameters import _CUE_STOPWORDS, _GENERIC_CUES, _Slot, _slots
from guard.checks.preflight.reading import _read, _Text
from guard.checks.preflight.services import _compact, _unmentioned_providers
from guard.checks.preflight.values import _ASSUMED, _evidence, _values, Found, NAME
from guard.checks.references import indefinite, Reference, unresolved
from guard.checks.relevance import rank_tools, split_request, stem, ToolScore
from guard.conversation import Conversation
from guard.models import Finding
from guard.normalise import normalise_text
from guard.policy import Policy
from guard.registry import name_words, PerRegistry, ToolRegistry, ToolSpec
from guard.taxonomy import Category


@runtime_checkable
class ToolRanker(Protocol):
    """What an embedding model offers the preflight: the tools ranked for a request."""

    def rank_tools(self, request: str, registry: ToolRegistry) -> list[ToolScore]: ...


@dataclass(frozen=True)
class Preflight:
    """What the preflight concluded: the tool it would use, its ranking, values found, findings."""

    tool: str | None
    score: float
    ranking: tuple[ToolScore, ...]
    #: Values found per parameter, by dotted path ("dateRange.start"; list items as "stops[*].city").
    args: dict[str, Found] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def call_args(self) -> dict[str, Any]:
        """The values found, nested as a call's arguments (list items are left out)."""
        out: dict[str, Any] = {}
        for path, found in self.args.items():
            if "[*]" in path:
                continue
            *parents, leaf = path.split(".")
            node = out
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = found.value
        return out


def assess(
    conversation: Conversation, registry: ToolRegistry, policy: Policy, semantic: Any = None
) -> Preflight:
    """Judge a conversation against the tool list before any call is proposed. Schema patterns
    run in bounded time (``guard.schema``): together within ``checks.limits.regex_timeout_ms``."""
    with schemas.regex_budget(policy.checks.limits.regex_timeout_ms):
        return _assess(conversation, registry, policy, semantic)


def _assess(conversation: Conversation, registry: ToolRegistry, policy: Policy, semantic: Any) -> Preflight:
    if not conversation.latest_request.strip():
        return Preflight(None, 0.0, ())  # nothing asked yet: nothing to judge
    config = policy.checks.preflight
    ranking = tuple(_rank(conversation, registry, semantic))
    best = ranking[0] if ranking else None
    if best is None or best.score < config.min_relevance:
        finding = _no_tool(conversation, ranking, config.show_candidates)
        return Preflight(None, best.score if best else 0.0, ranking, findings=[finding])
    said = [_read(m.content) for m in conversation.grounding_texts]
    user = [t for t, m in zip(said, conversation.grounding_texts) if m.role == "user"]
    latest = conversation.latest_request
    vocabulary = _vocabulary(registry)
    known = vocabulary.words
    found: dict[str, Found] = {}
    findings: list[Finding] = []
    needed = _needed(conversation, registry, semantic, best.name, config.min_relevance)
    steps = split_request(latest) if len(needed) > 1 else []
    served = {p for parts in needed.values() for p in parts}
    # A part no tool serves sets the scene for all of them ("I am at lat=48.36, lon=2.37; what is
    # the nearest address?"): its values are said for every part.
    context = [p for p in steps if p not in served]
    for name, parts in needed.items():
        spec = registry.get(name)
        assert spec is not None  # only registered tools are ranked
        if parts:  # the tool serves some parts of the latest request: its values are said there
            scoped = [_read(p) for p in [*context, *parts]]
            own_said = [t for t in said if t.raw != latest] + scoped
            own_user = [t for t in user if t.raw != latest] + scoped
        else:
            own_said, own_user = said, user
        values, problems = _values(spec, own_said, own_user, known)
        problems += _named_by_kind(spec, " ".join(parts) or latest, values, problems, own_said, known)
        later = bool(parts and steps) and all(steps.index(p) > 0 for p in parts if p in steps)
        if (later or name != best.name) and any(_REFERS_BACK.search(p) for p in parts):
            # "and the sunrise times for this location": its values come from the step before,
            # whichever tool ranks first
            problems = [f for f in problems if f.category is not Category.MISSING_ARGUMENT]
        if later:
            problems = [_later_step(f) for f in problems]
        findings += problems
        if name == best.name:
            found = values
    findings += _references(conversation, registry, needed, findings)
    read = {normalise_text(str(v)) for v in [*(f.value for f in findings), *(f.span for f in found.values())] if v}
    findings += _unmentioned_providers(latest, known, vocabulary.parameters, read | vocabulary.members)
    args = {path.removeprefix("$."): f for path, f in found.items() if f.value is not None}
    return Preflight(best.name, best.score, ranking, args, findings)


#: How sure the preflight is that a value a later step of a multi-step request needs is missing:
#: an earlier step's tool result may well supply it ("find a dog breed, then show a picture of it").
LATER_STEP_CONFIDENCE = 0.6


def _later_step(finding: Finding) -> Finding:
    """A missing value of a tool that serves a later step of the request, with lower confidence."""
    if finding.category is not Category.MISSING_ARGUMENT:
        return finding
    evidence = {**finding.evidence, "later_step": True}
    return finding.model_copy(update={"confidence": min(finding.confidence, LATER_STEP_CONFIDENCE), "evidence": evidence})


def _named_by_kind(
    spec: ToolSpec, request: str, found: dict[str, Found], problems: list[Finding], said: list[_Text], known: frozenset[str]
) -> list[Finding]:
    """A finding for each parameter (required or optional) the request names only by its kind ("cocktails
    made with an ingredient", "its barcode") when the conversation gives no value for it."""
    reported = {f.path for f in problems}
    cues: dict[str, _Slot] = {}
    for slot in _slots(spec.parameters):
        if slot.path in found or slot.path in reported:
            continue
        hit = _evidence(slot, said, set(), set(), known) if not slot.required else None
        if hit is not None and hit is not _ASSUMED:
            continue
        words = name_words(slot.name).split()
        head = stem(words[-1]) if words else ""  # "deck_count" is a count, not a deck
        if head and head not in _GENERIC_CUES:
            cues.setdefault(head, slot)
    out = []
    for ref in indefinite(request, lambda w: stem(w.lower()) in cues):
        slot = cues[stem(ref.noun.lower())]
        if slot.path in reported:
            continue
        reported.add(slot.path)
        why = f"the request names {path_label(slot.path)} only as {ref.text!r}, and the conversation gives no value for it"
        out.append(_reference_finding(spec.name, slot.path, ref, why))
    return out


def _references(
    conversation: Conversation, registry: ToolRegistry, needed: dict[str, list[str]], findings: list[Finding]
) -> list[Finding]:
    """A finding per reference in the latest request to a value never stated ("my favorite
    number", "the year Larry requested"), for the tool that serves its part and the parameter its
    noun names (``$`` when none does), unless that parameter is already reported missing."""
    earlier = sum(m.role == "user" for m in conversation.messages) > 1
    reported = {(f.tool, f.path) for f in findings}
    out = []
    for ref in unresolved(conversation.latest_request, earlier):
        tool = next((n for n, parts in needed.items() if any(ref.text in p for p in parts)), next(iter(needed)))
        spec = registry.get(tool)
        assert spec is not None
        path = _parameter_for(ref.noun, spec)
        if (tool, path) in reported or (ref.possessive and path == "$"):
            continue
        reported.add((tool, path))
        out.append(_reference_finding(tool, path, ref, f"the request refers to {ref.text!r}, which the conversation never states"))
    return out


def _reference_finding(tool: str, path: str, ref: Reference, message: str) -> Finding:
    return Finding(
        category=Category.MISSING_ARGUMENT,
        check=NAME,
        message=message,
        tool=tool,
        path=path,
        rule="unresolved_reference",
        value=ref.text,
        evidence={"reference": ref.text, "noun": ref.noun},
    )


def _parameter_for(noun: str, spec: ToolSpec) -> str:
    """The parameter whose name or description shares a word with the noun; ``$`` when none does."""
    words = {stem(w) for w in normalise_text(noun).split() if w not in _CUE_STOPWORDS}
    best, best_score = "$", 0
    for slot in _slots(spec.parameters):
        score = 2 * len(words & slot.cues) + len(words & slot.units)
        if score > best_score:
            best, best_score = slot.path, score
    return best


@dataclass(frozen=True)
class _Vocabulary:
    """What a registry's tools themselves say, read once per registry content.

    ``words``: stems of every available tool's name, service and description, so that a name the
    user writes that only names a tool's service ("the Met Museum") says which tool, not what to
    ask it. The service is the ``metadata["service"]`` a tool belongs to ("metmuseum"), kept
    both as words and written together, the way service names are ("Met Museum" is "metmuseum").
    ``parameters``: stems of every parameter name. ``members``: every enum member, normalised
    ("on Spotify" picks a platform)."""

    words: frozenset[str]
    parameters: frozenset[str]
    members: frozenset[str]


def _read_vocabulary(registry: ToolRegistry) -> _Vocabulary:
    specs = [s for s in registry if s.enabled]
    services = [str(s.metadata.get("service") or "") for s in specs]
    text = " ".join([*(name_words(s.name) for s in specs), *(s.description or "" for s in specs), *map(name_words, services)])
    slots = [slot for spec in specs for slot in _slots(spec.parameters)]
    return _Vocabulary(
        words=frozenset(stem(w) for w in normalise_text(text).split()) | {_compact(t) for t in services if t},
        parameters=frozenset(c for slot in slots for c in slot.cues),
        members=frozenset(normalise_text(str(m)) for slot in slots if slot.kind == "enum" for m in slot.schema["enum"]),
    )


_vocabulary = PerRegistry(_read_vocabulary)

#: A part of a request that takes its values from an earlier part's result ("for this location",
#: "for each department name", "the same location").
_REFERS_BACK = re.compile(
    r"\b(?:this|that|these|those|the same|each|its|their|the (?:above|previous|resulting|returned))\s+[a-z]", re.IGNORECASE
)


def _needed(
    conversation: Conversation, registry: ToolRegistry, semantic: Any, best: str, floor: float
) -> dict[str, list[str]]:
    """The tools the latest request needs, each with the parts of the request it serves.

    A request made of several parts ("list the departments, and compress the image at this URL")
    may need a tool per part, and each tool's values are as necessary as the best tool's. A part's
    best tool is needed when it reaches ``floor``; its values are looked for in that part (and in
    the earlier turns), not in a part another tool serves ("the price of a coin, and the bank with
    IFSC code X": the code is no coin). ``best`` is always needed; with no part of its own it is
    judged on the whole conversation (an empty list)."""
    needed: dict[str, list[str]] = {best: []}
    parts = split_request(conversation.latest_request)
    if len(parts) < 2:
        return needed
    ranker = _ranker(semantic)
    for part in parts:
        top = next(iter(ranker(part, registry)), None)
        if top is not None and top.score >= floor:
            needed.setdefault(top.name, []).append(part)
    return needed


def _ranker(semantic: Any) -> Callable[[str, ToolRegistry], list[ToolScore]]:
    """The embedding ranking when the semantic object offers one, else the lexical one."""
    return semantic.rank_tools if isinstance(semantic, ToolRanker) else rank_tools


def _rank(conversation: Conversation, registry: ToolRegistry, semantic: Any) -> list[ToolScore]:
    """Tools ranked for the latest request and, when the user spoke before, for everything the user
    said: each tool keeps its better score. "Pop music." answers an earlier question, and is about
    the tool the whole exchange is about."""
    ranker = _ranker(semantic)
    ranking = ranker(conversation.latest_request, registry)
    users = [m.content for m in conversation.messages if m.role == "user" and m.content]
    if len(users) < 2:
        return ranking
    best = {s.name: s for s in ranker("\n".join(users), registry)}
    for s in ranking:
        if s.name not in best or s.score > best[s.name].score:
            best[s.name] = s
    return sorted(best.values(), key=lambda s: -s.score)


def _no_tool(conversation: Conversation, ranking: tuple[ToolScore, ...], shown: int) -> Finding:
    top = ranking[:shown]
    candidates = ", ".join(f"{s.name} ({s.score:.2f})" for s in top) or "none: no tool is available"
    request = excerpt(conversation.latest_request.strip()) if conversation.latest_request.strip() else "the request"
    return Finding(
        category=Category.NO_SUITABLE_TOOL,
        check=NAME,
        message=f"no available tool fits {request}; the closest are {candidates}",
        rule="min_relevance",
        value=conversation.latest_request,
        evidence={"ranking": [s.as_dict() for s in top]},
    )
