"""Preflight: before any call is proposed, can a tool serve the request with the values given?

``Guard.check`` judges a call a model proposed. Some failures show earlier, in the conversation and
the tool list alone: no tool does what the user asks, the user has not said a value the tool cannot
run without, or the user said a value the tool's schema rejects. Caught before the model runs, they
cost no round trip, and the model gets no chance to invent the missing value or quietly "fix" the
wrong one.

``assess`` works in these steps, all lexical:

1. **Relevance.** ``relevance.rank_tools`` scores every available tool against the user's latest
   request and against everything the user said, and keeps each tool's better score ("Asian
   cuisine, please" answers an earlier question). Below ``checks.preflight.min_relevance`` there
   is no suitable tool.
2. **Wrong values.** For the best tool's constrained parameters (pattern, format, enum, length,
   bounds), a value the user wrote that is meant for a parameter is validated against its schema,
   and one that breaks it is reported with the user's text verbatim. A value is meant for a
   parameter when the parameter's words stand right before it ("my email is ...", "ID 123ABC", "a
   principal amount of -1000", "250 square feet"), or when it is the one leftover value of the
   parameter's shape and no other parameter could take it.
3. **Missing values.** Every required parameter (nested required properties of required objects
   and of the items of required lists included) needs evidence of its kind in what the user and
   the system said: a number for a number, a date for a date, an ``@`` for an e-mail, a code, name
   or number for an id, a named member for an enum, a proper name for a city, and for free text a
   quoted phrase, a code, a name that is not just a tool's service ("BoardGameGeek"), or a word
   introduced as the topic ("related to dragons"). A required object that requires nothing of its
   own is valid as ``{}`` yet serves no one empty: it needs evidence for any one of its leaves.
   Booleans are assumed given.
4. **Several tools.** A request made of parts ("list the departments; also compress the image")
   may need a tool per part: each part's best tool is judged too, on the words of its own part
   (and the earlier turns), unless its part takes its values from an earlier step ("for this
   location").
5. **Unresolved references** (``guard.checks.references``): "my favorite number", "a specific
   breed", "the year Larry requested" point at a value never stated, whichever parameter (required
   or optional) it would fill.
6. **Unmentioned services.** A service the request names as where to act ("on Kucoin", "via OKX")
   that no tool's name, service or description mentions, and that is no parameter's value: the
   tool for it is missing, however close the remaining tools embed.

The embedding seam: ``semantic`` may offer ``rank_tools(request, registry)`` (``ToolRanker``); its
ranking then replaces the lexical one, and nothing else changes.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any, Protocol, runtime_checkable

from guard import schema as schemas
from guard.checks.arguments import conforms_to_format, excerpt, path_label
from guard.checks.references import Reference, indefinite, unresolved
from guard.checks.relevance import STOPWORDS, ToolScore, rank_tools, split_request, stem
from guard.conversation import Conversation
from guard.models import Finding
from guard.normalise import normalise_text, numbers_in, parse_number, parse_temporal
from guard.policy import Policy
from guard.registry import PerRegistry, ToolRegistry, ToolSpec, name_words
from guard.taxonomy import Category

NAME = "preflight"


@runtime_checkable
class ToolRanker(Protocol):
    """What an embedding model offers the preflight: the tools ranked for a request."""

    def rank_tools(self, request: str, registry: ToolRegistry) -> list[ToolScore]: ...


@dataclass(frozen=True)
class Found:
    """A value read from the conversation for one parameter, and the words it was read from."""

    value: Any
    span: str


#: What ``_evidence`` returns for a value whose presence cannot be told from the words.
_ASSUMED = Found(None, "")


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


#: A service named as where the request is to be done: "on Kucoin", "using Robohash", "via OKX",
#: "use the databases "DrugBank" and ...", "from the NBP service" (after a bare "from" a name is as often what is asked about: "quotes
#: from Breaking Bad").
_PROVIDER = re.compile(
    r"\b(?:on|using|via|through)\s+(?:the\s+)?((?:[A-Z][\w.&'’-]*)(?:\s+(?:[A-Z][\w.&'’-]*))*)"
    r"|\bfrom\s+(?:the\s+)?((?:[A-Z][\w.&'’-]*)(?:\s+(?:[A-Z][\w.&'’-]*))*)(?='s)?\s+(?:API|service|database|website|site|platform|exchange)\b"
    r"|\buse\s+(?:the\s+)?(?:databases?|APIs?|services?|platforms?|websites?|sites?)\s+[\"“']?([A-Z][\w.&'’-]*(?:\s+[A-Z][\w.&'’-]*)*)"
)


def _unmentioned_providers(request: str, known: frozenset[str], params: frozenset[str], values: frozenset[str]) -> list[Finding]:
    """A finding for each service the request names ("the best ask price on Kucoin") that no
    available tool's name or description mentions: embeddings score "Kucoin" close to any
    exchange's API, yet a tool for another exchange cannot serve it. A name that a parameter's
    name follows or ends is a value for it ("using the SRTM dataset", "on Binance Smart Chain"),
    as is one in ``values``: an enum member, or a value the preflight read or rejected."""
    out = []
    for m in _PROVIDER.finditer(request):
        following = _NEXT_WORD.match(request, m.end())
        tail = [*normalise_text(m.group(0)).split()[-1:], *([following.group(1).lower()] if following else [])]
        if any(stem(w) in params for w in tail):
            continue
        if m.group(0).lower().startswith("on") and following and _is_topic_word(request, m.end(), following.group(1)):
            continue  # "articles on AI safety", "news on Tesla earnings": what is asked about, not where
        name = re.split(r"[.'’]\s|'s\b|’s\b", next(g for g in m.groups() if g))[0].rstrip(".'’")
        words = [w for w in normalise_text(name).split() if w not in STOPWORDS]
        if not words or words[0] in _CALENDAR_WORDS or name.split()[0] in ("I", "I'm", "I'd"):
            continue
        if any(stem(w) in known for w in words) or _compact(name) in known or normalise_text(name) in values:
            continue  # a tool's own service, or a value some parameter takes ("on Spotify")
        out.append(
            Finding(
                category=Category.NO_SUITABLE_TOOL,
                check=NAME,
                message=f"the request names {name!r}, which no available tool mentions",
                rule="unmentioned_provider",
                value=name,
                evidence={"provider": name},
            )
        )
    return out


def _is_topic_word(text: str, at: int, word: str) -> bool:
    """Whether the word right after a name ("AI *safety*") makes the name part of a topic: a
    lower-case content word, written straight after it, that is no word of asking or of time."""
    return text[at : at + 1] == " " and word.islower() and word not in STOPWORDS and word not in _REQUEST_WORDS


#: Parameter name words too general to be named by themselves ("a list of", "some data").
_GENERIC_CUES = frozenset(stem(w) for w in "name type data list info value text result format query key mode option page limit count size".split())


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


def _values(
    spec: ToolSpec, said: list[_Text], user: list[_Text], known: frozenset[str]
) -> tuple[dict[str, Found], list[Finding]]:
    """The values the conversation gives one tool, and the findings on wrong or missing ones."""
    slots = list(_slots(spec.parameters))
    found, findings, named = _wrong_values(spec, slots, user)
    findings += _missing_values(spec, slots, said, found, findings, named, known)
    return found, findings


@dataclass(frozen=True)
class _Vocabulary:
    """What a registry's tools themselves say, read once per registry content.

    ``words``: stems of every available tool's name, service and description, so that a name the
    user writes that only names a tool's service ("the Met Museum") says which tool, not what to
    ask it. The service is the ToolBench-style ``tool_name`` a tool belongs to ("metmuseum"), kept
    both as words and written together, the way service names are ("Met Museum" is "metmuseum").
    ``parameters``: stems of every parameter name. ``members``: every enum member, normalised
    ("on Spotify" picks a platform)."""

    words: frozenset[str]
    parameters: frozenset[str]
    members: frozenset[str]


def _read_vocabulary(registry: ToolRegistry) -> _Vocabulary:
    specs = [s for s in registry if s.enabled]
    services = [str(s.metadata.get("tool_name") or "") for s in specs]
    text = " ".join([*(name_words(s.name) for s in specs), *(s.description or "" for s in specs), *map(name_words, services)])
    slots = [slot for spec in specs for slot in _slots(spec.parameters)]
    return _Vocabulary(
        words=frozenset(stem(w) for w in normalise_text(text).split()) | {_compact(t) for t in services if t},
        parameters=frozenset(c for slot in slots for c in slot.cues),
        members=frozenset(normalise_text(str(m)) for slot in slots if slot.kind == "enum" for m in slot.schema["enum"]),
    )


_vocabulary = PerRegistry(_read_vocabulary)


def _compact(name: str) -> str:
    """A name written together, lower-case: "Met Museum", "MetMuseum" and "met_museum" agree."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


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


def _missing_values(
    spec: ToolSpec,
    slots: list[_Slot],
    said: list[_Text],
    found: dict[str, Found],
    wrong: list[Finding],
    named: dict[str, list[_Mention]],
    known: frozenset[str] = frozenset(),
) -> list[Finding]:
    """A finding per required value (or required group) with no evidence; values found are added
    to ``found``. ``known``: the words of the tools themselves (``_Vocabulary.words``)."""
    judged = set(found) | {f.path for f in wrong}
    taken = {f.span for f in found.values()}
    given_groups = {s.group for s in slots if s.group and s.path in judged}
    findings = []
    for slot in slots:
        if slot.path in judged or not (slot.required or slot.group):
            continue
        if own := named.get(slot.path):  # "employee ID 12345": the value its words name
            hit: Found | None = Found(_value(slot, own[0]), own[0].text)
        else:  # a value named for another parameter is no evidence of this one (an id no quantity)
            others = {m.text for path, ms in named.items() if path != slot.path and _counts(slots, path, slot) for m in ms}
            hit = _evidence(slot, said, taken, others, known)
        if hit is None:
            if slot.required:
                findings.append(_missing(spec, slot.path, slot.kind, slot.schema, said))
        elif hit is not _ASSUMED:
            found[slot.path] = hit
            if slot.group:
                given_groups.add(slot.group)
    told = {s.group for s in slots if s.group and s.kind not in _UNTOLD}
    for group in dict.fromkeys(s.group for s in slots if s.group in told and s.group not in given_groups):
        findings.append(_missing(spec, str(group), "group", {}, said))
    return findings


def _counts(slots: list[_Slot], path: str, slot: _Slot) -> bool:
    """Whether a value named for the parameter at ``path`` is thereby unavailable to ``slot``: a
    number named for a quantity ("a budget of $5000") may still be the only number a loose
    parameter has to go on; one named for an identifier ("employee ID 12345") is no quantity."""
    if slot.kind not in _NUMERIC:
        return True
    return next((s.kind not in _NUMERIC for s in slots if s.path == path), True)


# --- relevance --------------------------------------------------------------------------------


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


# --- the parameters -----------------------------------------------------------------------------

#: Name words that make a string parameter an identifier (it needs a code, a name or a number), a
#: place (a proper name), a date, coordinates (numbers or a place) or a web address.
_ID_WORDS = frozenset({"id", "ids", "identifier", "code", "serial", "sku", "isbn", "ssn", "iban", "uuid"})
_PLACE_WORDS = frozenset({"city", "country", "town", "nation", "destination"})
#: Words that name a place-like parameter, which is a place when its description says so.
_WHERE_WORDS = frozenset({"location", "region", "place", "area", "origin", "departure", "arrival", "address"})
_PLACE_DESCRIPTION = re.compile(r"\b(?:city|cities|country|countries|district|geographic(?:al)?|town|province)\b", re.IGNORECASE)
_DATE_WORDS = frozenset({"date", "day", "birthday", "deadline"})
_COORDINATE_WORDS = frozenset({"latitude", "longitude", "lat", "lng", "lon", "long"})
_URL_WORDS = frozenset({"url", "uri", "link", "website", "webpage"})


@dataclass(frozen=True)
class _Slot:
    """One leaf parameter: where it is, its schema, whether the call cannot run without it."""

    path: str
    name: str
    schema: dict[str, Any]
    required: bool
    kind: str
    #: Whether the parameter is a list of such values (one value of its kind may stand for all).
    array: bool
    #: Stems of the parameter's name words: written right before a value, they say what it is for.
    cues: frozenset[str]
    #: Stems of the enclosing object's name: they tie a value to it ("budget of 3000" is
    #: ``budget.amount``) without saying which of its parameters it is.
    context: frozenset[str]
    #: Stems of its description: a unit after a number ("250 square feet") says what it measures.
    units: frozenset[str]
    #: The path of the required object (or list) with no required content of its own that this
    #: leaf belongs to: the object is given when any of its leaves is.
    group: str | None = None

    @property
    def constrained(self) -> bool:
        return any(k in self.schema for k in _CONSTRAINTS)


_CONSTRAINTS = ("pattern", "format", "enum", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
#: How many words before a value may name the parameter it is for.
_CUE_WINDOW = 4
#: How plainly words tie a value to a parameter (``_Text.cue``), weakest first.
_CONTEXT, _UNIT, _NAMED = 1, 2, 3
#: Name words too common to say what a value is for ("level of fluency": "of").
_CUE_STOPWORDS = frozenset({"a", "an", "and", "at", "by", "for", "from", "in", "is", "of", "on", "or", "the", "to", "with"})


def _slots(schema: dict[str, Any]) -> Iterator[_Slot]:
    """Every leaf of a tool's parameters, with ``required`` true only along required paths.

    A required object (or list of objects) that requires nothing of its own is valid as ``{}``,
    yet a call with it empty serves no one: its leaves form a group, given when any one of them is.
    """
    #: (schema, path, required, group, the object's own name)
    stack: list[tuple[dict[str, Any], str, bool, str | None, str]] = [(schema, "$", True, None, "")]
    while stack:
        node, path, required, group, owner = stack.pop()
        props: dict[str, Any] = node["properties"] if isinstance(node.get("properties"), dict) else {}
        needed = set(node.get("required") or ())
        if required and path != "$" and not needed:
            required, group = False, path
        children = []
        for key, sub in props.items():
            if not isinstance(sub, dict):
                continue
            child, child_required = f"{path}.{key}", required and key in needed
            items = sub.get("items")
            if isinstance(sub.get("properties"), dict):
                children.append((sub, child, child_required, group, key))
            elif isinstance(items, dict) and isinstance(items.get("properties"), dict):
                children.append((items, f"{child}[*]", child_required, group, key))
            else:
                if isinstance(items, dict) and _type(sub) == "array":
                    leaf, array = {"description": sub.get("description", ""), **items}, True
                else:
                    leaf, array = sub, False
                yield _slot(child, key, leaf, child_required, array, group, owner)
        stack.extend(reversed(children))


def _slot(
    path: str, name: str, schema: dict[str, Any], required: bool, array: bool, group: str | None, owner: str
) -> _Slot:
    description = str(schema.get("description") or "")
    return _Slot(
        path=path,
        name=name,
        schema=schema,
        required=required,
        kind=_kind(name, schema, description),
        array=array,
        cues=_cue_stems(name),
        context=_cue_stems(owner) if owner else frozenset(),
        units=frozenset(stem(w) for w in normalise_text(description).split() if len(w) > 1 and w not in STOPWORDS),
        group=group,
    )


def _cue_stems(name: str) -> frozenset[str]:
    return frozenset(stem(w) for w in name_words(name).split() if w not in _CUE_STOPWORDS)


def _type(schema: dict[str, Any]) -> str | None:
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), None)
    return t if isinstance(t, str) else None


#: Quoted examples in a description: "(e.g., 'A1')", "such as 'D10'".
_EXAMPLE = re.compile(r"(?:e\.g\.|for example|such as)[^'\"()]{0,20}['\"]([^'\"]{1,40})['\"]", re.IGNORECASE)
_SAMPLES = {"date": "2024-01-31", "time": "09:30", "email": "a.b@example.com"}
_NAME_SAMPLES = ("Paris", "New York", "paris")
#: A pattern that lists the words it accepts ("^(walking|cycling)$"): a choice, not a code.
_LITERALS = re.compile(r"\^?\(?[\w .-]+(?:\|[\w .-]+)+\)?\$?")


def _kind(name: str, schema: dict[str, Any], description: str) -> str:
    """What kind of value a parameter takes, which says what evidence of it looks like."""
    if isinstance(schema.get("enum"), list):
        return "enum"
    t = _type(schema)
    if t == "boolean":
        return "boolean"
    if t in ("integer", "number"):
        # Coordinates are looked up from a place's name as readily as they are typed.
        return "coordinate" if _COORDINATE_WORDS & set(name_words(name).split()) else "number"
    if t not in ("string", None):
        return "text"
    fmt = schema.get("format")
    if fmt in ("date", "date-time"):
        return "date"
    if fmt in ("time", "email", "uri", "url"):
        return {"uri": "url"}.get(fmt, fmt)
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and not any(schemas.matches(pattern, name) for name in _NAME_SAMPLES):
        fitting = [kind for kind, sample in _SAMPLES.items() if schemas.matches(pattern, sample)]
        if len(fitting) == 1:
            return fitting[0]
        if not fitting and not _LITERALS.fullmatch(pattern):
            return "id"  # a pattern no plain name fits asks for a code
    words = name_words(name).split()
    lowered = description.lower()
    if "yyyy" in lowered or "iso 8601" in lowered or (words and words[-1] in _DATE_WORDS):
        return "date"
    if "hh:mm" in lowered:
        return "time"
    if "email" in words or "e-mail" in lowered or "email address" in lowered:
        return "email"
    if _URL_WORDS & set(words):
        return "url"
    if (words and words[-1] in _ID_WORDS) or lowered.startswith(("unique identifier", "identifier")):
        return "id"
    examples = [m.group(1) for m in _EXAMPLE.finditer(description)]
    if examples and all(any(c.isdigit() for c in e) and " " not in e for e in examples):
        return "id"  # its examples are codes ("e.g., 'A1'"): so is its value
    if _PLACE_WORDS & set(words) or (_PLACE_DESCRIPTION.search(description) and _WHERE_WORDS & set(words)):
        return "place"
    return "text"


# --- what the conversation says ------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
#: A quoted phrase; a single-quoted one may be followed by a possessive "s" ("the user 'john_doe's playlist").
_QUOTED = re.compile(r"\"([^\"\n]{1,200})\"|“([^”\n]{1,200})”|(?<![\w'])'([^'\n]{1,200})'(?![\w])|(?<![\w'])'([^'\n]{1,200})'(?=s\b)|`([^`\n]{1,200})`")
_TOKEN = re.compile(r"\S+")
_EDGE = "\"'“”‘’`()[]{}<>.,;:!?\u3002\uff0c"
_EMAIL = re.compile(r"^[^\s@]+@[^\s@]+$")
_URL = re.compile(r"^(?:https?://|www\.)\S+$|^[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|edu|gov|co|de|uk|fr|app|dev)(?:/\S*)?$", re.IGNORECASE)
#: A number, with a currency before it or a unit after it ("$5000", "70kg", "28-year-old", "5%").
_NUMBER = re.compile(
    r"^[-+]?[$€£¥]?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?"
    r"(?:%|°[CFNSEW]?|[a-z]{1,8}|[KMGT]B|[kMG]?Hz|mAh|-[a-z]+(?:-[a-z]+)*)?$"
)
_TIME = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?|\b\d{1,2}\s*[ap]\.?m\.?(?![a-z])|\b(?:noon|midnight|o'clock)\b", re.IGNORECASE)
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
#: Capitalised words that name no service ("on August 4", "from Monday").
_CALENDAR_WORDS = frozenset(_MONTHS.split("|")) | frozenset(_WEEKDAYS.split("|"))
_PERIODS = "days?|weeks?|months?|years?|quarters?|decades?|weekends?|hours?|" + _WEEKDAYS
#: Dates written out: ISO, numeric, a month's name with its day and year (either order).
_CALENDAR_DATE = re.compile(
    rf"\b\d{{4}}-\d{{1,2}}-\d{{1,2}}\b|\b\d{{1,2}}[/.]\d{{1,2}}[/.]\d{{2,4}}\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\b(?:,?\s+\d{{4}})?"
    rf"|\b(?:{_MONTHS})\b\.?(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?(?:,?\s+\d{{4}})?",
    re.IGNORECASE,
)
#: Dates said relative to now, and years: a date the assistant can work out.
_RELATIVE_DATE = re.compile(
    rf"\b(?:{_WEEKDAYS}|today|tonight|tomorrow|yesterday|now|asap|immediately)\b"
    rf"|\b(?:next|this|last|coming|past|previous|following|upcoming|current)\s+(?:\w+\s+)?(?:{_PERIODS})\b"
    rf"|\bin\s+\w+\s+(?:{_PERIODS})\b|\b(?:{_PERIODS})\s+(?:ago|from\s+now)\b"
    rf"|\b(?:1[89]|20)\d{{2}}s?\b|\bright\s+(?:now|away)\b",
    re.IGNORECASE,
)
#: A date or time written as one token ("2023-01-01", "8:30"): a value of its own, maybe malformed.
_STAMP = re.compile(r"\d{1,4}[-/.:]\d{1,2}(?:[-/.:T ]\d{1,4})*")
#: "The current time is", "today is", "it is now": the clock, stated.
_CLOCK_STATED = re.compile(r"\b(?:current (?:time|date)|today|now|date today)\s*(?:is|:)\s*", re.IGNORECASE)
_SENTENCE_STOP = re.compile(r"[.!?\u3002](?=\s|$)|\n")
_BREAK = re.compile(r"[,;!?](?=\s|$)|\.(?=\s|$)|\b(?:and|or|but)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?:\u3002]\s*$")
_ONE_UNIT = re.compile(r"\b(?:a|an|one|next|this|per|each|every)\s+(second|minute|hour|day|week|month|year)\b")


@dataclass(frozen=True)
class _Mention:
    """A value-like stretch of one message: a number, a code, a quoted string, a proper name."""

    text: str
    start: int
    kind: str  # number | code | quoted | name | email | url
    number: int | float | None = None
    #: A number with a unit or a counted noun ("120 euros", "70kg", "5%"): a quantity, no code.
    counted: bool = False


@dataclass(frozen=True)
class _Text:
    """One message read once: its words (as stems, with positions), value-like mentions, dates."""

    raw: str
    normalised: str
    #: Where clauses break: commas, full stops, "and", "or".
    breaks: tuple[int, ...]
    positions: tuple[int, ...]
    stems: tuple[str, ...]
    mentions: tuple[_Mention, ...]
    dates: tuple[str, ...]
    times: tuple[str, ...]

    @cached_property
    def stem_set(self) -> frozenset[str]:
        return frozenset(self.stems) | {w for w in self.normalised.split() if w.isdigit()}

    @cached_property
    def quantities(self) -> frozenset[int | float]:
        """Every number the text states, in every unit of its dimension ("a week" is one week)."""
        return frozenset(numbers_in(_ONE_UNIT.sub(r"1 \1", self.normalised)))

    def cue(self, mention: _Mention, slot: _Slot) -> tuple[int, int]:
        """How plainly the text ties a mention to a parameter, as (level, closeness).

        ``_NAMED``: the parameter's words stand just before the mention ("a principal amount of
        -1000"), or just after a number ("10 meters in length"); ``_UNIT``: a unit from the
        parameter's description follows a number ("250 square feet"); ``_CONTEXT``: only the
        enclosing object's words stand before it ("budget of 3000"); 0: nothing ties them. Words
        reach only within their clause: a comma, an "and" or another value ends their reach.
        """
        start, end = mention.start, mention.start + len(mention.text)
        bounds = self._bounds(slot, mention)
        since = max((b for b in bounds if b <= start), default=-1)
        until = min((b for b in bounds if b >= end), default=len(self.raw))
        at = bisect_left(self.positions, start)
        before = [self.stems[i] for i in range(max(0, at - _CUE_WINDOW), at) if self.positions[i] >= since]
        numeric = mention.kind == "number" and slot.kind in _NUMERIC
        after = [self.stems[i] for i in range(bisect_left(self.positions, end), len(self.stems)) if self.positions[i] < until]
        # After a number, its unit or noun ("10 meters in length"); after anything else, one word
        # naming its kind ("the SRTM dataset", "a Hilton hotel").
        after = after[: _CUE_WINDOW - 1] if numeric else after[:1]
        # A word after a value that is no number names it less plainly than one before it:
        # "my VR device with ID 12345" is about the device whose ID is 12345.
        lag = 0 if numeric else 1
        near = [(d, w) for d, w in enumerate(reversed(before))] + [(d + lag, w) for d, w in enumerate(after)]
        if named := [d for d, w in near if w in slot.cues]:
            return _NAMED, _CUE_WINDOW - min(named)
        unit = stem(re.sub(r"^[-+$€£¥\d.,%]+", "", mention.text.lower()).strip("-"))
        if numeric and slot.units & ({*after[:1], unit} - {""}):
            return _UNIT, 0
        if slot.context & set(before):
            return _CONTEXT, 0
        return 0, 0

    def _bounds(self, slot: _Slot, mention: _Mention) -> list[int]:
        """Where the reach of words ends: clause breaks, and the other values (but for the
        parameter's own name written as a word, "ID")."""
        values = [
            p
            for m in self.mentions
            if m is not mention and stem(m.text.lower()) not in slot.cues
            for p in (m.start, m.start + len(m.text))
        ]
        return [*self.breaks, *values]


@lru_cache(maxsize=2048)
def _read(text: str) -> _Text:
    """Read a message once; the same system prompt and user turns recur on every step."""
    words = list(_WORD.finditer(text))
    quoted, quoted_spans = _quoted(text)
    dates, times, spans = _dates_and_times(text)
    mentions = sorted([*quoted, *_tokens(text, quoted_spans, spans), *_number_words(text)], key=lambda m: m.start)
    return _Text(
        raw=text,
        normalised=normalise_text(text),
        breaks=tuple(m.start() for m in _BREAK.finditer(text)),
        positions=tuple(w.start() for w in words),
        stems=tuple(stem(w.group(0).lower().replace("’", "'").split("'")[0]) for w in words),
        mentions=tuple(replace(m, counted=_is_counted(m, text)) if m.kind == "number" else m for m in mentions),
        dates=dates,
        times=times,
    )


def _quoted(text: str) -> tuple[list[_Mention], list[tuple[int, int]]]:
    """Quoted values: a quoted e-mail, number or code is still one; the rest are quoted phrases."""
    mentions, spans = [], []
    for m in _QUOTED.finditer(text):
        inner = next(g for g in m.groups() if g is not None).strip()
        spans.append((m.start(), m.end()))
        typed = None if any(c.isspace() for c in inner) else _classify(inner, m.start() + 1, False)
        mentions.append(typed or _Mention(inner, m.start() + 1, "quoted", parse_number(inner)))
    return mentions, spans


@dataclass(frozen=True)
class _Spans:
    """Where dates and times are written: the parts of a written date or a time are no numbers of
    their own ("15th" in "April 15th"), and no word of any date is a name ("Monday", "March")."""

    parts: list[tuple[int, int]]
    words: list[tuple[int, int]]


def _dates_and_times(text: str) -> tuple[tuple[str, ...], tuple[str, ...], _Spans]:
    """The dates and the times a text asks for.

    A month on its own ("in July") is a period, not a date: a trip in July has no dates yet. The
    clock ("The current time is October 21, 2023") is what relative dates are read against, not a
    date anyone asked for.
    """
    calendar = list(_CALENDAR_DATE.finditer(text))
    relative = list(_RELATIVE_DATE.finditer(text))
    clock = list(_TIME.finditer(text))
    stated = [(m.end(), _sentence_end(text, m.end())) for m in _CLOCK_STATED.finditer(text)]

    def asked(m: re.Match[str]) -> bool:
        return not any(a <= m.start() < b for a, b in stated)

    dates = [m for m in (*calendar, *relative) if asked(m) and (m.re is _RELATIVE_DATE or any(c.isdigit() for c in m.group(0)))]
    spans = _Spans(
        parts=[(m.start(), m.end()) for m in (*calendar, *clock)],
        words=[(m.start(), m.end()) for m in (*calendar, *relative, *clock)],
    )
    ordered = sorted(dates, key=lambda m: m.start())
    return tuple(m.group(0) for m in ordered), tuple(m.group(0) for m in clock if asked(m)), spans


def _tokens(text: str, quoted: list[tuple[int, int]], dated: _Spans) -> list[_Mention]:
    """Value-like tokens outside quotes: numbers, codes, e-mails, addresses, and proper names (runs
    of capitalised words that do not start a sentence: "New York City")."""
    mentions: list[_Mention] = []
    name: list[tuple[int, int]] = []

    def flush() -> None:
        if name:
            mentions.append(_Mention(text[name[0][0] : name[-1][1]], name[0][0], "name"))
            name.clear()

    sentence_start = True
    for m in _TOKEN.finditer(text):
        raw = m.group(0)
        core = raw.strip(_EDGE)
        start = m.start() + raw.find(core) if core else m.start()
        first, sentence_start = sentence_start, bool(_SENTENCE_END.search(raw))
        if not core or any(a <= start < b for a, b in quoted):
            flush()
            continue
        if pair := _KEY_VALUE.fullmatch(core):  # "lat=48.357", "page:2": the value after its key
            core, start = pair.group(1), start + pair.start(1)
        mention = _classify(core, start, in_date=any(a <= start < b for a, b in dated.parts))
        in_date = any(a <= start < b for a, b in dated.words)
        if mention is None and not in_date and core[:1].isupper() and not first and core.split("'")[0].split("’")[0] != "I":
            name.append((start, start + len(core)))
            if core != raw.lstrip(_EDGE):  # "Paris," ends the name
                flush()
            continue
        flush()
        if mention is not None:
            mentions.append(mention)
    flush()
    return mentions


#: A value written after its key: "lat=48.357", "north=52.52", "page:2" (no URL, clock or ratio:
#: the value holds no further "=", ":" or "/").
_KEY_VALUE = re.compile(r"[A-Za-z_][\w-]*[=:]([^\s=:/]+)")


def _sentence_end(text: str, start: int) -> int:
    stop = _SENTENCE_STOP.search(text, start)
    return stop.start() if stop else len(text)


_NEXT_WORD = re.compile(r"\s*([^\W\d_]+)")


def _is_counted(mention: _Mention, text: str) -> bool:
    if not mention.text[-1:].isdigit() or not mention.text[:1].lstrip("+-").isdigit():
        return True  # "70kg", "5%", "$5000", "28-year-old"
    following = _NEXT_WORD.match(text, mention.start + len(mention.text))
    return following is not None and following.group(1).lower() not in STOPWORDS


def _classify(core: str, start: int, in_date: bool) -> _Mention | None:
    """What a single token is, when it is value-like at all."""
    if _EMAIL.match(core):
        return _Mention(core, start, "email")
    if _URL.match(core):
        return _Mention(core, start, "url")
    m = _NUMBER.match(core)
    if m and not in_date:
        number = float(m.group(1).replace(",", "") + "." + m.group(2)) if m.group(2) else int(m.group(1).replace(",", ""))
        return _Mention(core, start, "number", -number if core.startswith("-") else number)
    has_digit = any(c.isdigit() for c in core)
    if in_date and not _STAMP.fullmatch(core) and (has_digit or core.isalpha()):
        return None  # a part of a date in words ("15th" in "April 15th")
    odd = any(not c.isalnum() and c not in "'’-" for c in core)
    if has_digit or odd or (len(core) > 1 and core.isupper() and core.isalpha()):
        return _Mention(core, start, "code")
    return None


_NUMBER_WORD = re.compile(
    r"\b(?:(?:a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|"
    r"thousand|million|dozen|and)[\s-]+)*(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|"
    r"eighty|ninety|hundred|thousand|million|dozen)\b",
    re.IGNORECASE,
)


_LEADING_AND = re.compile(r"^(?:and[\s-]+)+", re.IGNORECASE)


def _number_words(text: str) -> Iterator[_Mention]:
    for m in _NUMBER_WORD.finditer(text):
        lead = _LEADING_AND.match(m.group(0))  # "an affirmation and two quotes": the number is "two"
        words = m.group(0)[lead.end() :] if lead else m.group(0)
        value = parse_number(words.replace("-", " "))
        if value is not None:
            yield _Mention(words, m.start() + (lead.end() if lead else 0), "number", value)


# --- wrong values -----------------------------------------------------------------------------

#: Mention kinds that may be meant for a parameter of each kind.
_NUMERIC = ("number", "coordinate")
#: Kinds of value whose presence cannot be told from the words: assumed given.
_UNTOLD = ("boolean", "text")
_SHAPES = {
    "number": {"number", "code", "quoted"},
    "coordinate": {"number", "code", "quoted"},
    "enum": {"name", "quoted", "code", "number"},
    "date": {"code", "quoted", "number"},
    "time": {"code", "quoted", "number"},
    "email": {"email", "code", "quoted"},
    "url": {"url", "code", "quoted"},
    "id": {"code", "quoted", "number", "name"},
    "place": {"name", "quoted", "code"},
    "text": {"name", "quoted", "code", "number"},
}
#: A minimum length beyond a short phrase asks for composed text (a summary, feedback), which the
#: assistant writes from what the user said: the user's words are material, not the value.
_COMPOSED_TEXT_LENGTH = 20


def _wrong_values(
    spec: ToolSpec, slots: list[_Slot], texts: list[_Text]
) -> tuple[dict[str, Found], list[Finding], dict[str, list[_Mention]]]:
    """Values the user gave for constrained parameters: those that fit, and findings for those that
    break the schema; and, for every parameter, the values its own words name.

    A value is meant for a parameter when the parameter's words stand right before it. A value
    tied to no parameter that fits one exactly is taken as its value. The required parameters
    still without a value then take the values nothing claimed, when the two match one for one
    in number and shape, in the order both are written ("from Beijing321 to Chaoyang").
    """
    found: dict[str, Found] = {}
    findings: list[Finding] = []
    judged: set[str] = set()
    for slot in slots:
        if slot.kind == "enum" and (member := _enum_member(slot, texts)) is not None:
            found[slot.path] = member
            judged.add(slot.path)
    # Each mention goes to the parameter whose words stand nearest before it.
    claimed: set[tuple[int, int]] = set()
    meant: dict[str, list[tuple[tuple[int, int], _Mention]]] = {}
    named_for: dict[str, list[tuple[int, _Mention]]] = {}
    members = {normalise_text(str(f.value)) for f in found.values()}
    for i, text in enumerate(texts):
        for mention in text.mentions:
            if normalise_text(mention.text) in members:
                claimed.add((i, mention.start))  # an enum member, already some parameter's value
                continue
            cues = [(text.cue(mention, s), s) for s in slots if _may_be(s, mention)]
            best = max(cues, key=lambda c: c[0], default=None)
            if best is None or best[0][0] == 0:
                continue
            claimed.add((i, mention.start))
            if best[0][0] >= _UNIT:
                meant.setdefault(best[1].path, []).append((best[0], mention))
            if best[0][0] == _NAMED:
                named_for.setdefault(best[1].path, []).append((best[0][1], mention))
    for slot in slots:
        if not slot.constrained or slot.path in judged:
            continue
        for _, mention in sorted(meant.get(slot.path, ()), key=lambda c: (-c[0][0], -c[0][1])):
            fault = _fault(slot, mention)
            if fault is None:
                found[slot.path] = Found(_value(slot, mention), mention.text)
            elif fault:
                findings.append(_wrong(spec, slot, mention, fault))
            if fault != "":
                judged.add(slot.path)
                break
    open_slots = [s for s in slots if s.constrained and s.path not in judged]
    loose = [(i, m) for i, t in enumerate(texts) for m in t.mentions if (i, m.start) not in claimed]
    for slot in list(open_slots):
        fitting = next(((i, m) for i, m in loose if _may_be(slot, m) and _fits_kind(slot, m) and _fault(slot, m) is None), None)
        if fitting is not None:
            found[slot.path] = Found(_value(slot, fitting[1]), fitting[1].text)
            loose.remove(fitting)
            open_slots.remove(slot)
    waiting = [s for s in open_slots if s.required and not s.array]
    # A required parameter with no value yet, that no constraint guards, could take a leftover
    # value as well: then it is not clear which one the value was meant for.
    rivals = [s for s in slots if s.required and not s.constrained and s.path not in meant and s.path not in found]
    for kind in dict.fromkeys(s.kind for s in waiting):
        group = [s for s in waiting if s.kind == kind]
        shaped = [m for _, m in loose if _may_be(group[0], m) and _fits_kind(group[0], m)]
        if len(shaped) != len(group) or any(_may_be(r, m) and _fits_kind(r, m) for r in rivals for m in shaped):
            continue
        for slot, mention in zip(group, shaped):
            if fault := _fault(slot, mention):
                findings.append(_wrong(spec, slot, mention, fault))
    # the most plainly named first ("ID 12345" before the "VR" of "VR device")
    return found, findings, {path: [m for _, m in sorted(ms, key=lambda c: -c[0])] for path, ms in named_for.items()}


def _may_be(slot: _Slot, mention: _Mention) -> bool:
    """Whether a mention has a shape the parameter's kind could take at all: an enum of words is
    never given as a number, nor an enum of codes as a plain word, nor a code as a quantity."""
    if mention.kind not in _SHAPES.get(slot.kind, ()) or stem(mention.text.lower()) in slot.cues:
        return False  # the parameter's own name written as a word ("ID") is not its value
    if slot.kind == "enum":
        numeric = any(any(c.isdigit() for c in str(m)) for m in slot.schema["enum"])
        digits = any(c.isdigit() for c in mention.text)
        return digits if numeric else not digits and mention.kind != "number"
    return slot.kind in _NUMERIC or not mention.counted


def _fits_kind(slot: _Slot, mention: _Mention) -> bool:
    """Whether an uncued mention has the shape its parameter's kind expects: numbers for numbers,
    digits for a date or time, a name for a place, a code for an id, names for an enum of names."""
    if slot.kind in _NUMERIC:
        return mention.kind == "number"
    if slot.kind in ("date", "time"):
        return any(c.isdigit() for c in mention.text)
    if slot.kind == "email":
        return "@" in mention.text
    if slot.kind == "enum":
        members = [m for m in slot.schema["enum"] if isinstance(m, str)]
        return mention.kind in ("name", "quoted") and bool(members) and any(not m.islower() for m in members)
    if slot.kind == "place":
        return _is_place(mention)
    if slot.kind == "id":
        return _is_code(mention)
    return mention.kind != "number"


def _value(slot: _Slot, mention: _Mention) -> Any:
    if slot.kind in _NUMERIC and mention.number is not None:
        return mention.number
    if slot.kind == "enum":
        return next((m for m in slot.schema["enum"] if _same(m, mention.text)), mention.text)
    return mention.text


def _same(member: Any, text: str) -> bool:
    return normalise_text(str(member)) == normalise_text(text)


def _fault(slot: _Slot, mention: _Mention) -> str | None:
    """The schema keyword the mention breaks; None when it fits; "" when it says nothing either way
    (a date written in words for a date pattern: the assistant formats it)."""
    schema = slot.schema
    if slot.kind in _NUMERIC:
        if mention.number is None:
            return "type"
        return _bounds(schema, mention.number)
    text = mention.text
    if slot.kind == "enum":
        members = schema["enum"]
        return None if any(_same(m, text) for m in members) else "enum"
    if slot.kind in ("date", "time"):
        if bool(_CLOCK.match(text.strip())) != (slot.kind == "time"):
            return ""  # a time of day says nothing about a date, nor a date about a time
        forms = _temporal_forms(text)
        if forms is None:
            return "format" if "format" in schema else "pattern" if "pattern" in schema else ""
        if not forms:
            return ""
        return None if any(_string_fault(schema, f) is None for f in forms) else _string_fault(schema, forms[0])
    return _string_fault(schema, text)


def _string_fault(schema: dict[str, Any], text: str) -> str | None:
    fmt = schema.get("format")
    if isinstance(fmt, str) and not conforms_to_format(text, fmt):
        return "format"
    pattern = schema.get("pattern")
    try:
        if isinstance(pattern, str) and not schemas.search(pattern, text):
            return "pattern"
    except schemas.RegexUndecided:
        pass  # not decided in time: no fault is claimed
    min_length = schema.get("minLength")
    if isinstance(min_length, int) and len(text) < min_length <= _COMPOSED_TEXT_LENGTH:
        return "minLength"
    max_length = schema.get("maxLength")
    if isinstance(max_length, int) and len(text) > max_length:
        return "maxLength"
    return None


def _bounds(schema: dict[str, Any], number: float) -> str | None:
    checks = (
        ("minimum", lambda b: number < b),
        ("maximum", lambda b: number > b),
        ("exclusiveMinimum", lambda b: number <= b),
        ("exclusiveMaximum", lambda b: number >= b),
    )
    for keyword, breaks in checks:
        bound = schema.get(keyword)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool) and breaks(bound):
            return keyword
    if _type(schema) == "integer" and isinstance(number, float) and not number.is_integer():
        return "type"
    return None


_DATE_MEMBER = re.compile(r"\d{4}(?:-\d{2}){0,2}")
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")


def _temporal_forms(text: str) -> list[str] | None:
    """The ways an assistant could write a date or time the user wrote: [] when it is a date or
    time in words (formatting it is the assistant's job), None when it is no valid date or time."""
    stripped = text.strip()
    if m := _CLOCK.match(stripped):
        hour, minute, second = int(m[1]), int(m[2]), int(m[3] or 0)
        if hour > 23 or minute > 59 or second > 59:
            return None
        return [f"{hour:02d}:{minute:02d}", f"{hour:02d}:{minute:02d}:{second:02d}", stripped]
    parsed = parse_temporal(stripped)
    if parsed is not None:
        return [stripped]
    if re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}.*", stripped):
        return None  # a date-shaped value that is no date (2023-02-30)
    return []


# --- missing values -------------------------------------------------------------------------------


def _evidence(slot: _Slot, texts: list[_Text], taken: set[str], others: set[str], known: frozenset[str] = frozenset()) -> Found | None:
    """Evidence that the conversation gives a value of the parameter's kind; None when it does not.

    Free text and booleans are assumed given (``_ASSUMED``, see the module docstring). A value
    named for another parameter (``others``: "employee ID 12345") is no evidence of this one; nor
    is a code or name already taken as another's value ("AES" for an algorithm), and one taken here
    joins ``taken``, so parameters of one kind take values in written order.
    """
    kind = slot.kind
    pattern = slot.schema.get("pattern")
    if isinstance(pattern, str) and kind != "enum" and (hit := _pattern_in(pattern, texts)) is not None:
        return Found(hit, hit)
    if kind == "text":
        return _text_evidence(slot, texts, taken, others, known)
    if kind in _UNTOLD:
        return _ASSUMED
    if kind == "enum":
        member = _enum_member(slot, texts)
        # A list of choices is often given as "all of them"; a choice of dates by any date ("last
        # month" is one of them, once worked out).
        if member is None and (slot.array or _dates_only(slot.schema["enum"]) and any(t.dates for t in texts)):
            return _ASSUMED
        return member
    for text in texts:
        if kind == "date" and (text.dates or text.times):
            written = (text.dates or text.times)[0]
            return Found(written, written)
        if kind == "time" and text.times:
            return Found(text.times[0], text.times[0])
        for m in text.mentions:
            if m.text in others:
                continue
            if kind in _NUMERIC and m.kind == "number" and m.number is not None:
                if _bounds(slot.schema, m.number) is None:
                    return Found(m.number, m.text)  # one number may serve several parameters
            elif m.text in taken:
                continue
            elif kind == m.kind or (kind == "id" and _is_code(m)) or (kind in ("place", "coordinate") and _is_place(m)):
                if kind == "coordinate":
                    return Found(None, m.text)  # the place to look the coordinates up for
                taken.add(m.text)  # "from Berlin to Paris": the next place is another value
                return Found(m.text, m.text)
    return None


def _text_evidence(slot: _Slot, texts: list[_Text], taken: set[str], others: set[str], known: frozenset[str]) -> Found | None:
    """Evidence of a free-text value: a quoted phrase, a code, an address, a proper name that is
    not just the name of a tool's service, or a word no tool's name or description explains
    ("breweries that specialize in *ales*", "a *pixel-art* avatar"): what the user asks about.
    None when the conversation holds nothing of the kind."""
    for text in texts:
        for m in text.mentions:
            if m.text in others or m.text in taken or (m.kind == "number" and m.counted):
                continue
            if m.kind == "name" and {stem(w) for w in normalise_text(m.text).split()} <= known:
                continue  # "Kraken": the name of a tool's own service
            return Found(m.text, m.text)
    for text in texts:
        for m in _TOPIC.finditer(text.raw):
            word = m.group(1).lower()
            if word not in STOPWORDS and word not in _REQUEST_WORDS and stem(word) not in known | slot.cues:
                return Found(None, m.group(0))
    return None


#: A word introduced as what the request is about ("quotes about leadership", "related to machine
#: learning", "specialize in ales").
_TOPIC = re.compile(
    r"\b(?:about|related to|regarding|concerning|speciali[sz]\w* in|discussing|featuring|named|called|titled)"
    r"\s+(?:(?:the|a|an|some|all)\s+)?([a-z][a-z-]{2,})",
    re.IGNORECASE,
)
#: Words of asking, not of what is asked about.
_REQUEST_WORDS = frozenset(
    """
    want wants need needs like know tell show give provide find get fetch list help looking look
    interested information info data details detailed also additionally please thanks thank using
    use make sure something anything everything specific particular certain latest recent current
    new some information available currently today tomorrow yesterday
    """.split()
)


def _pattern_in(pattern: str, texts: list[_Text]) -> str | None:
    """Words of the conversation that fit the parameter's pattern by themselves."""
    inner = r"(?:" + pattern.removeprefix("^").removesuffix("$") + r")"
    # a mention is matched whole, so it needs no lookaround and RE2 (linear, no budget) takes it;
    # only the search in running text needs the lookbehind that sends it to the timed engine
    unanchored = r"(?<![\w-])" + inner + r"(?![\w-])"
    for text in texts:  # bounded: a match that cannot be decided in time is no match
        for mention in text.mentions:
            if schemas.find(inner, mention.text, full=True) is not None:
                return mention.text
        if (hit := schemas.find(unanchored, text.raw)) is not None:
            return hit
    return None


def _dates_only(members: list[Any]) -> bool:
    return all(isinstance(m, str) and _DATE_MEMBER.fullmatch(m) for m in members)


def _is_place(mention: _Mention) -> bool:
    """A place as people write one: a proper name, a quoted name, an abbreviation ("USA")."""
    return mention.kind in ("name", "quoted") or (mention.kind == "code" and mention.text.isalpha())


def _is_code(mention: _Mention) -> bool:
    """An identifier as people write one: a code ("SM1234"), a quoted value, a name, a number."""
    return mention.kind in ("code", "quoted", "email", "name") or (mention.kind == "number" and mention.text.isdigit())


def _enum_member(slot: _Slot, texts: list[_Text]) -> Found | None:
    """An enum member the conversation names: as written, by its words' stems, by its quantity
    ("48 hours" names "48h", "next week" names "1-week") or as a clock time ("7 am" names "07:00")."""
    for member in slot.schema["enum"]:
        if not isinstance(member, (str, int, float)) or isinstance(member, bool):
            continue
        words = normalise_text(str(member))
        if not words:
            continue
        member_stems = {stem(w) for w in words.split()}
        quantity = set(numbers_in(words)) if any(c.isdigit() for c in words) else set()
        for text in texts:
            if (
                f" {words} " in f" {text.normalised} "
                or member_stems <= text.stem_set
                or (quantity and quantity <= text.quantities)
                or _same_clock(str(member), text)
            ):
                return Found(member, str(member))
    return None


def _same_clock(member: str, text: _Text) -> bool:
    """"07:00" is named by "7:00 am" or "7am"."""
    m = _CLOCK.match(member)
    if not m:
        return False
    hour, minute = int(m[1]), int(m[2])
    for written in text.times:
        w = written.lower().replace(".", "")
        t = re.match(r"(\d{1,2})(?::(\d{2}))?\s*([ap]m)?", w)
        if not t:
            continue
        h = int(t[1]) % 12 + (12 if t[3] == "pm" else 0) if t[3] else int(t[1])
        if h == hour and int(t[2] or 0) == minute:
            return True
    return False


# --- findings ---------------------------------------------------------------------------------

_NOUNS = {
    "number": "number",
    "coordinate": "coordinate or place",
    "date": "date",
    "time": "time",
    "email": "e-mail address",
    "url": "web address",
    "id": "identifier",
    "place": "place name",
    "enum": "choice",
}

_CATEGORY = {
    "type": Category.TYPE_VIOLATION,
    "enum": Category.ENUM_VIOLATION,
    "pattern": Category.PATTERN_VIOLATION,
    "format": Category.FORMAT_VIOLATION,
}


def _missing(spec: ToolSpec, path: str, kind: str, schema: dict[str, Any], said: list[_Text]) -> Finding:
    label = path_label(path.replace("[*]", "[]"))
    evidence: dict[str, Any] = {"kind": kind, "mentioned": _mentioned(path, said)}
    if kind == "group":
        message = f"{label} is required by {spec.name!r} and the conversation gives none of its values"
    else:
        message = f"{label} is required by {spec.name!r} and the conversation gives no {_NOUNS.get(kind, 'value')} for it"
    if kind == "enum":
        evidence["allowed"] = schema["enum"]
    return Finding(
        category=Category.MISSING_ARGUMENT,
        check=NAME,
        message=message,
        tool=spec.name,
        path=path,
        rule="required",
        evidence=evidence,
    )


def _mentioned(path: str, said: list[_Text]) -> float:
    """The share of a parameter's name words (as stems) found in what was said. A "missing" value
    whose parameter the user spoke of ("the date I told you") is a near miss of the rules, one
    nobody spoke of is plainly missing: the optional judge (``guard.checks.judge``) is asked only
    about near misses."""
    cues = _cue_stems(path.rsplit(".", 1)[-1].removesuffix("[*]"))
    if not cues:
        return 0.0
    words = frozenset().union(*(t.stem_set for t in said))
    return round(len(cues & words) / len(cues), 3)


def _wrong(spec: ToolSpec, slot: _Slot, mention: _Mention, keyword: str) -> Finding:
    category = _CATEGORY.get(keyword, Category.RANGE_VIOLATION)
    expected = slot.schema.get(keyword)
    rule_text = {
        "type": f"must be {_type(slot.schema)}",
        "enum": f"must be one of {excerpt(expected)}",
        "pattern": f"must match {expected!r}",
        "format": f"must be a valid {expected}",
        "minimum": f"must be at least {expected}",
        "maximum": f"must be at most {expected}",
        "exclusiveMinimum": f"must be greater than {expected}",
        "exclusiveMaximum": f"must be less than {expected}",
        "minLength": f"must be at least {expected} characters long",
        "maxLength": f"must be at most {expected} characters long",
    }[keyword]
    evidence: dict[str, Any] = {"written": mention.text}
    if keyword == "enum":
        evidence["allowed"] = expected
    elif keyword in ("pattern", "format"):
        evidence[keyword] = expected
    return Finding(
        category=category,
        check=NAME,
        message=f"{path_label(slot.path.replace('[*]', '[]'))} {rule_text}, but the user gave {mention.text!r}",
        tool=spec.name,
        path=slot.path,
        value=mention.text,
        rule=keyword,
        evidence=evidence,
    )

