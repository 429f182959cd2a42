"""Grounding: every argument value must come from somewhere.

A value a model passes to a tool should come from the tool's schema (a default, an allowed member,
an example), from what the user or the system said, or from an earlier tool result. A value from
nowhere (a city nobody named, an id no tool returned) is the fault benchmarks call "parameter
value error (content)" or "ambiguous reference", and it is silent: the call is well formed, runs,
and does the wrong thing. Such a value is reported, so the policy can ask the human for it.

Every leaf of the arguments is traced, in order, to the schema, a user or system message, an
earlier tool result, or an optional paraphrase matcher (the ``ValueMatcher`` seam). Matching is
lexical after normalisation (``guard.normalise``): exact words, numbers in digits, words or other
units, dates in the forms people write them, all content words of a phrase, and a fuzzy partial
match for words (never for digits: "order 12346" must not ground "order 12345").

This runs on every proposed call, so text is processed once per message (cached by role and
content, so a conversation that grows by a turn only processes the new turn) and joined once per
conversation into an index (``Conversation.grounding_index``); a call only searches prepared
strings.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from functools import cached_property, lru_cache
from typing import Any, Protocol

from rapidfuzz import fuzz

from guard.checks import CheckContext
from guard.checks.computed import asked_multiple, birth_year, day_after_sibling, percent_applied, product_of_held, result_total, shifted_result_time, span_end
from guard.checks.derivations import date_value, derive
from guard.checks.measures import unit_field
from guard.checks.action import kind_of_tool
from guard.checks.risk import risk_of
from guard.conversation import Conversation
from guard.lexicon import FACTLESS_WORDS, MONTHS, WEEKDAY_SHORT, unspaced
from guard.models import Finding
from guard.normalise import (
    TemporalPatterns,
    normalise_text,
    number_key,
    numbers_in,
    parse_bool,
    parse_number,
    temporal_patterns,
)
from guard.registry import PerRegistry, ToolRegistry, name_words
from guard.taxonomy import Category

NAME = "grounding"

#: Words that carry no fact: a phrase is grounded when all its other words were said.
_STOPWORDS = FACTLESS_WORDS
#: Joins the normalised pieces of the index; exact matches cannot cross it.
_SEP = " \n "
_SCHEMA_KEYWORDS = ("default", "const", "enum", "examples", "example")
_WORD_CHAR = re.compile(r"[^\W_]")


@dataclass(frozen=True)
class GroundingMatch:
    """Where one value came from.

    ``source`` is "schema", "user", "system", "tool_result" or a matcher's own label;
    ``message_index`` the message's position in the conversation (None for the schema); ``span``
    the matched words (normalised), or the schema keyword; ``score`` 1.0 for an exact match, else
    the fuzzy or semantic similarity in [0, 1].
    """

    source: str
    message_index: int | None
    span: str
    score: float


@dataclass(frozen=True)
class SemanticSkip:
    """What a paraphrase matcher answers for a value it did not judge because embedding it would
    have taken longer than its latency budget (``checks.semantic.budget_ms``): the lexical verdict
    stands, and the finding's evidence says why (``reason``)."""

    reason: str


class ValueMatcher(Protocol):
    """A paraphrase matcher ("the Big Apple" for "New York"), asked only when lexical grounding
    fails. ``param`` is the nearest parameter name, ``description`` its schema description."""

    def match(
        self, value: str, param: str, description: str, conversation: Conversation
    ) -> GroundingMatch | None: ...


# --- the index --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Extract:
    """What one message contributes: normalised text, the numbers it mentions, its words."""

    text: str
    numbers: dict[int | float, str]
    tokens: frozenset[str]


@lru_cache(maxsize=4096)
def _extract(role: str, content: str) -> _Extract:
    pieces = _json_pieces(content) if role == "tool" else None
    texts, leaf_numbers = pieces if pieces is not None else ([content], [])
    numbers: dict[int | float, str] = {}
    for number in leaf_numbers:
        numbers.setdefault(number_key(number), str(number))
    for piece in texts:
        for key, surface in numbers_in(piece).items():
            numbers.setdefault(key, surface)
    text = _SEP.join(s for s in map(normalise_text, texts) if s)
    return _Extract(text=text, numbers=numbers, tokens=frozenset(text.split()))


def _json_pieces(content: str) -> tuple[list[str], list[int | float]] | None:
    """The keys and string leaves, and the number leaves, of a JSON tool result; None if no JSON.

    Searching leaves rather than the raw text finds values that JSON escaped ("Z\\u00fcrich").
    """
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):
        return None
    texts: list[str] = []
    numbers: list[int | float] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            texts.extend(str(k) for k in item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            texts.append(item)
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            numbers.append(item)
    return texts, numbers


@dataclass(frozen=True)
class _Group:
    """Messages of one kind of source, joined into one string searched in one pass."""

    roles: tuple[str, ...]
    indices: tuple[int, ...]
    extracts: tuple[_Extract, ...]
    haystack: str
    starts: tuple[int, ...]

    @classmethod
    def build(cls, items: list[tuple[int, str, _Extract]]) -> _Group:
        starts: list[int] = []
        offset = 1
        for _, _, extract in items:
            starts.append(offset)
            offset += len(extract.text) + len(_SEP)
        return cls(
            roles=tuple(role for _, role, _ in items),
            indices=tuple(i for i, _, _ in items),
            extracts=tuple(e for _, _, e in items),
            haystack=" " + _SEP.join(e.text for _, _, e in items) + " ",
            starts=tuple(starts),
        )

    def match(self, source: int, span: str, score: float = 1.0) -> GroundingMatch:
        role = self.roles[source]
        return GroundingMatch("tool_result" if role == "tool" else role, self.indices[source], span, score)

    def match_at(self, offset: int, span: str, score: float = 1.0) -> GroundingMatch:
        """The match for a position in the haystack."""
        return self.match(max(bisect_right(self.starts, offset) - 1, 0), span, score)


@dataclass(frozen=True)
class GroundingIndex:
    """What a conversation offers to ground values: said (user and system) and tool results."""

    said: _Group
    results: _Group
    today: date

    @property
    def searched(self) -> dict[str, int]:
        return {"messages": len(self.said.indices), "tool_results": len(self.results.indices)}

    @cached_property
    def numbers(self) -> frozenset[int | float]:
        """Every number said or returned, in each form it may be read in (``number_key``): what the
        messages' extracts already hold, gathered once for the risk readings."""
        return frozenset(key for group in (self.said, self.results) for extract in group.extracts for key in extract.numbers)


def build_index(conversation: Conversation) -> GroundingIndex:
    """Build a conversation's index; use ``conversation.grounding_index``, which caches it."""
    said: list[tuple[int, str, _Extract]] = []
    results: list[tuple[int, str, _Extract]] = []
    grounding = {id(m) for m in conversation.grounding_texts}
    for i, msg in enumerate(conversation.messages):
        if msg.role == "tool":
            results.append((i, msg.role, _extract(msg.role, msg.content)))
        elif id(msg) in grounding:
            said.append((i, msg.role, _extract(msg.role, msg.content)))
    return GroundingIndex(_Group.build(said), _Group.build(results), conversation.reference_time.date())


# --- the arguments ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Leaf:
    """One scalar in the arguments, with the schemas that describe it."""

    path: str
    value: Any
    name: str
    schemas: tuple[dict[str, Any], ...]
    inherited: tuple[Any, ...]  # the parent array's default items


def _leaves(args: Any, schema: dict[str, Any], ignored: frozenset[str]) -> Iterator[_Leaf]:
    """Every scalar in the arguments, depth first in argument order; ignored keys are skipped."""
    stack: list[tuple[str, Any, str, tuple[dict[str, Any], ...], tuple[Any, ...]]] = [
        ("$", args, "$", _options(schema), ())
    ]
    while stack:
        path, value, name, schemas, inherited = stack.pop()
        if isinstance(value, dict):
            children = [
                (f"{path}.{k}", v, str(k), _property(schemas, str(k)), ())
                for k, v in value.items()
                if str(k) not in ignored
            ]
        elif isinstance(value, list):
            defaults = tuple(x for s in schemas if isinstance(s.get("default"), list) for x in s["default"])
            children = [(f"{path}[{i}]", v, name, _item(schemas, i), defaults) for i, v in enumerate(value)]
        else:
            yield _Leaf(path, value, name, schemas, inherited)
            continue
        stack.extend(reversed(children))


#: Name words of a field that numbers the items of a list in their order ("routingOrder", "step").
_ORDER_WORDS = frozenset({"order", "position", "sequence", "seq", "rank", "step", "index"})
_PATH_PART = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]")


def _numbered(leaf: _Leaf) -> str | None:
    """``signers[1].routingOrder: 2``: an item's place in its list, counted from 1 (or 0), in a
    field whose name says it orders the items: the order the user listed them in."""
    m = re.search(r"\[(\d+)\]\.[^.\[\]]+$", leaf.path)
    if m is None or isinstance(leaf.value, bool) or not isinstance(leaf.value, int) or not _ORDER_WORDS & set(name_words(leaf.name).split()):
        return None
    place = int(m[1])
    return f"item {place + 1} of the list, in the order given" if leaf.value in (place, place + 1) else None


def _siblings(args: Any, path: str) -> dict[str, Any] | None:
    """The object a leaf sits in (its siblings by key); None when it sits in a list or nowhere."""
    node = args
    for key, item in _PATH_PART.findall(path)[:-1]:
        try:
            node = node[int(item)] if item else node[key]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
    return node if isinstance(node, dict) else None


#: Name words of a field that holds a unit, and of one that holds the unit to convert into.
_UNIT_WORDS = frozenset({"unit", "units", "uom"})
_TARGET_UNIT_WORDS = frozenset({"to", "target", "into", "output", "dest", "destination", "desired", "result"})


def _sibling_unit(args: Any, path: str) -> str | None:
    """The unit a number's sibling field names (``{"quantity": 170, "unit": "g"}``: grams;
    ``{"value": 71, "from_unit": "in", "to_unit": "cm"}``: inches), in words a unit reader knows;
    None without one."""
    if (node := _siblings(args, path)) is None:
        return None
    fields = [(k, set(name_words(k).split())) for k, v in node.items() if isinstance(v, str) and isinstance(k, str) and len(k) <= 40]
    # "unit", or a conversion's "from_unit" (the number is in it), never its "to_unit"
    units = [k for k, words in fields if words & _UNIT_WORDS and not words & _TARGET_UNIT_WORDS]
    written = node[units[0]] if units else None
    unit = unit_field(written) if written else None
    return str(unit) if unit is not None else None


#: Name words of the field that ends a span of time, and of the one that starts it.
_END_WORDS = frozenset({"end", "ends", "until", "finish", "stop", "to"})
_START_WORDS = frozenset({"start", "starts", "begin", "begins", "from"})


def _span_start(leaf: _Leaf, args: Any) -> str | None:
    """The value of the one sibling field that starts the span a leaf ends (``start`` beside
    ``end``); None for a leaf that ends nothing, or none or several starts."""
    if not isinstance(leaf.value, str) or not _END_WORDS & set(name_words(leaf.name).split()) or (node := _siblings(args, leaf.path)) is None:
        return None
    starts = [v for k, v in node.items() if isinstance(v, str) and _START_WORDS & set(name_words(str(k)).split())]
    return starts[0] if len(starts) == 1 else None


def _parent_key(path: str) -> str:
    """The key of the object a leaf sits in: ``order_by`` for ``$.order_by.column``, ``sort`` for
    ``$.sort[0].field``; "" at the top."""
    keys = [key for key, _ in _PATH_PART.findall(path) if key]
    return keys[-2] if len(keys) >= 2 else ""


def _options(schema: Any) -> tuple[dict[str, Any], ...]:
    """A schema and the alternatives it lists (anyOf, oneOf, allOf), flattened."""
    if not isinstance(schema, dict) or not schema:
        return ()
    found = [schema]
    for key in ("anyOf", "oneOf", "allOf"):
        subs = schema.get(key)
        if isinstance(subs, list):
            found.extend(o for sub in subs for o in _options(sub))
    return tuple(found)


def _property(schemas: tuple[dict[str, Any], ...], key: str) -> tuple[dict[str, Any], ...]:
    found: list[dict[str, Any]] = []
    for s in schemas:
        props = s.get("properties")
        if isinstance(props, dict) and key in props:
            found.extend(_options(props[key]))
        else:
            found.extend(_options(s.get("additionalProperties")))
    return tuple(found)


def _item(schemas: tuple[dict[str, Any], ...], index: int) -> tuple[dict[str, Any], ...]:
    found: list[dict[str, Any]] = []
    for s in schemas:
        prefix = s.get("prefixItems")
        if isinstance(prefix, list) and index < len(prefix):
            found.extend(_options(prefix[index]))
        else:
            found.extend(_options(s.get("items")))
    if not any(f.get("description") for f in found) and (said := next((s["description"] for s in schemas if s.get("description")), None)):
        found.append({"description": said})  # "The list of doors to lock. Possible values are [...]" describes each item
    return tuple(found)


def _checked(value: Any, min_length: int) -> bool:
    """Whether a leaf carries a fact to trace: not None, not a string that is empty, too short,
    or only punctuation."""
    if value is None:
        return False
    if isinstance(value, (bool, int, float)):
        return True
    text = value.strip() if isinstance(value, str) else str(value)
    return len(text) >= max(min_length, 1) and _WORD_CHAR.search(text) is not None


# --- matching ---------------------------------------------------------------------------------


def _from_schema(leaf: _Leaf) -> GroundingMatch | None:
    """Booleans are choices the schema offers, not facts; so are its defaults and members."""
    if isinstance(leaf.value, bool) or (
        isinstance(leaf.value, str) and _is_boolean(leaf.schemas) and parse_bool(leaf.value) is not None
    ):
        return GroundingMatch("schema", None, "boolean", 1.0)
    for schema in leaf.schemas:
        for keyword in _SCHEMA_KEYWORDS:
            if keyword in schema and any(_same(leaf.value, m) for m in _members(keyword, schema[keyword])):
                return GroundingMatch("schema", None, keyword, 1.0)
    if any(_same(leaf.value, m) for m in leaf.inherited):
        return GroundingMatch("schema", None, "default", 1.0)
    return None


def _read_members(registry: ToolRegistry) -> dict[str, frozenset[str]]:
    """Per parameter name, the members of every ``enum`` a tool of the registry gives a parameter
    of that name (normalised text): the API's own codes ("BC25_2"), which another of its tools
    takes under the same name without listing them again."""
    members: dict[str, set[str]] = {}
    for spec in registry:
        for name, schema in spec.properties.items():
            if isinstance(schema, dict) and isinstance(schema.get("enum"), list):
                members.setdefault(name, set()).update(normalise_text(m) for m in schema["enum"][:256] if isinstance(m, str))
    return {name: frozenset(found - {""}) for name, found in members.items()}


_registry_members = PerRegistry(_read_members)


def _is_boolean(schemas: tuple[dict[str, Any], ...]) -> bool:
    """Whether a parameter takes booleans: then "yes" or "off" is a boolean written as text."""
    for s in schemas:
        types = s.get("type")
        if types == "boolean" or (isinstance(types, list) and "boolean" in types):
            return True
    return False


def _members(keyword: str, value: Any) -> list[Any]:
    if keyword in ("enum", "examples") and isinstance(value, list):
        return value
    return [value]


def _same(value: Any, member: Any) -> bool:
    """Equal after normalisation: numbers by value, anything else by normalised text."""
    if isinstance(member, bool) or not isinstance(member, (str, int, float)):
        return False
    if isinstance(value, (int, float)) and isinstance(member, (int, float)):
        return number_key(value) == number_key(member)
    return normalise_text(str(value)) == normalise_text(str(member))


@dataclass(frozen=True)
class _Probe:
    """A value prepared for searching: each way it may appear in a text."""

    text: str
    number: int | float | None
    temporal: TemporalPatterns | None
    words: frozenset[str] | None
    fuzzy: bool
    inflected: tuple[str, ...] = ()


@lru_cache(maxsize=4096, typed=True)
def _probe(value: str | int | float, today: date) -> _Probe:
    """Prepared once per value: the same values recur in the calls of every agent step."""
    if not isinstance(value, str):
        finite = not isinstance(value, float) or math.isfinite(value)
        return _Probe(normalise_text(str(value)), number_key(value) if finite else None, None, None, False)
    text = normalise_text(value)
    temporal = temporal_patterns(value.strip(), today)
    tokens = text.split()
    content = frozenset(tokens) - _STOPWORDS
    has_digits = any(c.isdigit() for c in text)
    return _Probe(
        text=text,
        number=_plain_number(value) if has_digits else None,
        temporal=temporal,
        words=content if len(tokens) > 1 and content else None,
        fuzzy=len(text) >= 4 and not has_digits,
        # a word is found in its plural or its singular ("labels: ['bug']" from "open bugs",
        # "exclude: ['peanuts']" from "a peanut allergy")
        inflected=(*_inflections(text), *_SHORT_FORMS.get(text, ())) if len(text) >= 3 and text.isalpha() and text not in _STOPWORDS else (),
    )


def _inflections(word: str) -> tuple[str, ...]:
    """The plural and singular forms a word may be said in: "bug" -> "bugs", "peanuts" ->
    "peanut", "berries" -> "berry", "boxes" -> "box"."""
    forms = [f"{word}s", f"{word}es"]
    if word.endswith("ies") and len(word) >= 5:
        forms.append(f"{word[:-3]}y")
    elif word.endswith("es") and len(word) >= 5 and word[-3] in "sxzh":
        forms.append(word[:-2])
    elif word.endswith("s") and not word.endswith("ss") and len(word) >= 4:
        forms.append(word[:-1])
    if word.endswith("y") and len(word) >= 4:
        forms.append(f"{word[:-1]}ies")
    return tuple(forms)


def _plain_number(value: str) -> int | float | None:
    """A string that is just a number ("1,000", "25"), but not a code with leading zeros ("007")."""
    stripped = value.strip().lstrip("+-")
    if len(stripped) > 1 and stripped[0] == "0" and stripped[1].isdigit():
        return None
    number = parse_number(value)
    return None if number is None else number_key(number)


def _search(probe: _Probe, group: _Group, cutoff: float, strict: bool = False) -> GroundingMatch | None:
    """Find a value in one group: number, exact words, date/time, all content words, fuzzy."""
    if not group.indices:
        return None
    if probe.number is not None:
        for i, extract in enumerate(group.extracts):
            if (surface := extract.numbers.get(probe.number)) is not None:
                return group.match(i, surface)
    hay = group.haystack
    if probe.text and (pos := hay.find(f" {probe.text} ")) >= 0:
        return group.match_at(pos + 1, probe.text)
    for form in probe.inflected:
        if (pos := hay.find(f" {form} ")) >= 0:
            return group.match_at(pos + 1, form)
    if len(probe.text) > 1 and unspaced(probe.text) and (pos := hay.find(probe.text)) >= 0:
        return group.match_at(pos, probe.text)  # "東京" in "東京から新大阪まで": no spaces mark the words
    if probe.temporal is not None and (found := probe.temporal.search(hay)):
        return group.match_at(found[0].start(), " ".join(m.group(0) for m in found))
    if probe.words is not None:
        for i, extract in enumerate(group.extracts):
            if probe.words <= extract.tokens:
                return group.match(i, " ".join(w for w in probe.text.split() if w in probe.words))
        for i, extract in enumerate(group.extracts):
            if not strict and all(w in extract.tokens or _clipped(w, extract.tokens) for w in probe.words):
                return group.match(i, " ".join(w for w in probe.text.split() if w in probe.words), _CLIPPED_SCORE / 100)
    if probe.fuzzy:
        hit = fuzz.partial_ratio_alignment(probe.text, hay, score_cutoff=cutoff)
        if hit is not None:
            span = hay[hit.dest_start : hit.dest_end]
            start = hit.dest_start + len(span) - len(span.lstrip())
            return group.match_at(start, span.strip(), hit.score / 100)
    return None


#: How sure a match of clipped words is: less than a strict search asks for.
_CLIPPED_SCORE = 85.0


#: A weekday's or a month's name -> the short forms people write it in ("friday": fri; "september": sept, sep).
_SHORT_FORMS: dict[str, tuple[str, ...]] = {
    **{day: forms for day, forms in WEEKDAY_SHORT.items()},
    **{names[0]: names[1:] for names in MONTHS if len(names) > 1},
}


def _clipped(word: str, tokens: frozenset[str]) -> bool:
    """Whether a message says ``word`` clipped, as people type it: its first four letters or more
    ("intro stats" for "introduction to statistics", "info", "calc"), with a plural s or not.
    For free text only (a strict search, for an identifier, contact or amount, asks for more); a
    clipped form that is a word of its own ("cart") reads as the longer word ("cartography") too."""
    if any(short in tokens for short in _SHORT_FORMS.get(word, ())):
        return True  # "due next fri": next friday
    if len(word) < 6 or not word.isalpha():
        return False
    return any(word[:n] in tokens or f"{word[:n]}s" in tokens for n in range(4, len(word) - 1))


#: A sentence or a clause of a description: what it says of one parameter.
_SENTENCES = re.compile(r"[^.;\n]+(?:\([^)]{0,80}\))?[^.;\n]*")


@lru_cache(maxsize=1_024)
def described_in_tool(description: str, param: str, plural: bool = False) -> str:
    """What a tool's description says of one parameter, where the parameter itself has no
    description of its own to say it ("Refund a charge. amount is in the smallest currency unit
    (cents)", "pickup_location: IATA airport code or address"): the sentences that name it, at
    most 300 characters; with ``plural``, its plural too (a parameter's head noun: "Dates accept
    'today' or 'NdaysAgo'" for ``start_date``)."""
    description = description[:4_000]
    if len(param) < 2 or param.casefold() not in description.casefold():
        return ""
    name = re.compile(rf"(?<![\w-]){re.escape(param)}s?(?![\w-])" if plural else rf"(?<![\w-]){re.escape(param)}(?![\w-])", re.IGNORECASE)
    said = [m[0].strip() for m in itertools.islice(_SENTENCES.finditer(description), 64) if name.search(m[0])]
    return " ".join(said)[:300]


def _told(description: str, param: str, own: str) -> str:
    """What the tool's description says of a parameter: of it by name, or, when the parameter
    has no description of its own, of its head noun ("Dates accept ..." for ``start_date``)."""
    if told := described_in_tool(description, param):
        return told
    head = name_words(param).split()[-1:]
    return described_in_tool(description, head[0], plural=True) if not own and head and len(head[0]) >= 4 else ""


def _consequential(leaf: _Leaf, index: GroundingIndex) -> bool:
    """Whether an invented value here does harm (``guard.checks.risk``): an identifier, contact,
    amount or path is traced at any length and matched strictly."""
    return risk_of(leaf.name, leaf.schemas, leaf.value, index.said.haystack).level == "consequential"


def _ground_lexically(leaf: _Leaf, index: GroundingIndex, ctx: CheckContext) -> GroundingMatch | None:
    if match := _from_schema(leaf):
        return match
    if isinstance(leaf.value, str) and normalise_text(leaf.value) in _registry_members(ctx.registry).get(leaf.name, ()):
        return GroundingMatch("schema", None, "enum of another tool", 1.0)
    value = leaf.value if isinstance(leaf.value, (str, int, float)) else str(leaf.value)
    probe = _probe(value, index.today)
    config = ctx.policy.checks.grounding
    strict = max(config.min_fuzzy_score, config.consequential_min_fuzzy_score)
    for group in (index.said, index.results):
        match = _search(probe, group, config.min_fuzzy_score)
        if match is not None and match.score * 100 < strict and _consequential(leaf, index):
            match = _search(probe, group, strict, strict=True)  # an identifier, contact or amount: a near miss is another value
        if match is not None:
            return match
    description = next((str(s["description"]) for s in leaf.schemas if s.get("description")), "")
    if ctx.spec is not None and (told := _told(ctx.spec.description, leaf.name, description)):
        # "amount is in the smallest currency unit (cents)"; a sentence of its own ("Default INBOX." not "Default INBOX Lists")
        description = f"{description.rstrip()}{'' if not description.strip() or description.rstrip()[-1] in '.;:!?' else '.'} {told}".strip()
    if numbered := _numbered(leaf):
        return GroundingMatch("derived", None, numbered, 1.0)
    if (start := _span_start(leaf, ctx.args)) and (length := span_end(leaf.value, start, ctx.conversation.said_texts, ctx.conversation.tool_texts)):
        return GroundingMatch("computed", length[0], length[1], 1.0)
    if unit := _sibling_unit(ctx.args, leaf.path):
        description = f"{description} (in {unit})"  # "quantity": 170 beside "unit": "g"
    lookup = ctx.spec is not None and kind_of_tool(ctx.spec) == "read"
    if derived := derive(leaf.value, leaf.name, ctx.conversation.said_texts, description=description, today=index.today, lookup=lookup):
        return GroundingMatch("derived", derived[0], derived[1], 1.0)
    conversation = ctx.conversation
    said, results = conversation.said_texts, conversation.tool_texts
    if results and (total := result_total(leaf.value, results) or shifted_result_time(leaf.value, said, results)):
        return GroundingMatch("computed", total[0], total[1], 1.0)
    if born := birth_year(leaf.value, leaf.name, said, results):
        return GroundingMatch("computed", born[0], born[1], 1.0)
    if conversation.latest_request and (multiple := asked_multiple(leaf.value, leaf.name, conversation.latest_request, said, results)):
        return GroundingMatch("computed", multiple[0], multiple[1], 1.0)
    if applied := percent_applied(leaf.value, said, results) or product_of_held(leaf.value, said, results):
        return GroundingMatch("computed", applied[0], applied[1], 1.0)
    if (siblings := _siblings(ctx.args, leaf.path)) and (later := day_after_sibling(leaf.value, siblings, said, results)):
        return GroundingMatch("computed", later[0], later[1], 1.0)
    return None


def _ground_semantically(leaves: list[_Leaf], ctx: CheckContext) -> list[GroundingMatch | SemanticSkip | None]:
    """The paraphrase matcher for the leaves nothing said word for word: in one batch when the
    matcher can (one model pass for all of them instead of one each)."""
    items = [
        (str(leaf.value), leaf.name, next((str(s["description"]) for s in leaf.schemas if s.get("description")), ""))
        for leaf in leaves
    ]
    if hasattr(ctx.semantic, "match_many"):
        return list(ctx.semantic.match_many(items, ctx.conversation))
    return [ctx.semantic.match(value, name, description, ctx.conversation) for value, name, description in items]


# --- the check --------------------------------------------------------------------------------


def trace(ctx: CheckContext) -> list[tuple[str, Any, GroundingMatch | None]]:
    """(path, value, where it came from or None) for every leaf the check looks at.

    Leaves it skips (ignored parameters, None, strings that are empty, too short or only
    punctuation) are not listed.
    """
    return [(leaf.path, leaf.value, match if isinstance(match, GroundingMatch) else None) for leaf, match in _traced(ctx)]


def _traced(ctx: CheckContext) -> list[tuple[_Leaf, GroundingMatch | SemanticSkip | None]]:
    config = ctx.policy.checks.grounding
    if not config.enabled or ctx.spec is None:
        return []
    index: GroundingIndex = ctx.conversation.grounding_index
    leaves = [
        leaf for leaf in _leaves(ctx.args, ctx.spec.parameters, frozenset(config.ignore_params))
        if _checked(leaf.value, config.min_value_length) or (_checked(leaf.value, 1) and _consequential(leaf, index))
    ]
    matches: list[GroundingMatch | SemanticSkip | None] = [_ground_lexically(leaf, index, ctx) for leaf in leaves]
    _days_between(leaves, matches)
    _items_between(leaves, matches, ctx.conversation.said_texts)
    unmatched = [i for i, m in enumerate(matches) if m is None]
    if unmatched and ctx.semantic is not None:
        for i, match in zip(unmatched, _ground_semantically([leaves[i] for i in unmatched], ctx)):
            matches[i] = match
    return list(zip(leaves, matches))


_ITEM = re.compile(r"^(.*)\[(\d+)\]$")


def _days_between(leaves: list[_Leaf], matches: list[GroundingMatch | SemanticSkip | None]) -> None:
    """A list of every day from one stated date to another ("the dates are May 3 to May 9" ->
    ``["2021-05-03", ..., "2021-05-09"]``): the days between the two ends are derived, when the
    list holds each day once, in order, and its first and last days are grounded."""
    lists: dict[str, list[tuple[int, int, date]]] = {}
    for i, leaf in enumerate(leaves):
        if (m := _ITEM.match(leaf.path)) and (day := date_value(leaf.value)) is not None:
            lists.setdefault(m[1], []).append((int(m[2]), i, day))
    for items in lists.values():
        items.sort()
        if len(items) < 3 or [n for n, _, _ in items] != list(range(len(items))):
            continue
        days = [d for _, _, d in items]
        if any((b - a).days != 1 for a, b in zip(days, days[1:])):
            continue
        first, last = matches[items[0][1]], matches[items[-1][1]]
        if not isinstance(first, GroundingMatch) or not isinstance(last, GroundingMatch):
            continue
        span = f"every day from {first.span} to {last.span}"
        for _, i, _ in items[1:-1]:
            if matches[i] is None:
                matches[i] = GroundingMatch("derived", last.message_index, span, 1.0)


#: An identifier that ends in a number ("S-2291", "INV-0042", "row 7"): its stem and its number.
_NUMBERED = re.compile(r"(.*?)(\d{1,9})")
#: Words and signs between the two ends of a range ("S-2291 thru S-2295", "rows 3 to 7").
_RANGE_JOIN = r"\s*(?:-|–|—|\.\.\.?|to|thru|through|until|till)\s*"


def _items_between(leaves: list[_Leaf], matches: list[GroundingMatch | SemanticSkip | None], said: Sequence[tuple[int, str]]) -> None:
    """A list of every identifier from one stated to another ("mark S-2291 thru S-2295 as received"
    -> ``["S-2291", ..., "S-2295"]``): the items between the two ends are derived, when the list
    holds each number once, in order and without a gap, and a message said its first and last
    items as a range (the last written whole or by its number alone: "INV-0098 to 0101")."""
    lists: dict[str, list[tuple[int, int, str, str]]] = {}
    for i, leaf in enumerate(leaves):
        if (m := _ITEM.match(leaf.path)) and isinstance(leaf.value, str) and (n := _NUMBERED.fullmatch(leaf.value.strip())):
            lists.setdefault(m[1], []).append((int(m[2]), i, n[1], n[2]))
    for items in lists.values():
        items.sort()
        if len(items) < 3 or [k for k, _, _, _ in items] != list(range(len(items))) or len({stem for _, _, stem, _ in items}) != 1:
            continue
        numbers = [int(number) for _, _, _, number in items]
        if any(b - a != 1 for a, b in zip(numbers, numbers[1:])) or len({len(n) for _, _, _, n in items}) != 1:
            continue
        stem, start, end = items[0][2], items[0][3], items[-1][3]
        said_range = re.compile(rf"(?<!\w){re.escape(stem + start)}{_RANGE_JOIN}(?:{re.escape(stem)})?{end}(?!\d)", re.IGNORECASE)
        where = next((index for index, text in said if said_range.search(text[:20_000])), None)
        if where is None:
            continue
        span = f"every item from {stem}{start} to {stem}{end}"
        for _, i, _, _ in items:
            if matches[i] is None:  # the last one too, when the range wrote it by its number alone
                matches[i] = GroundingMatch("derived", where, span, 1.0)


def check(ctx: CheckContext) -> list[Finding]:
    """An ungrounded-value finding per leaf nothing grounds, its confidence set by what is at
    stake if the value was invented (``guard.checks.risk``)."""
    entries = [(leaf, match) for leaf, match in _traced(ctx) if not isinstance(match, GroundingMatch)]
    if not entries:
        return []
    index = ctx.conversation.grounding_index
    searched = index.searched
    findings = []
    kind = kind_of_tool(ctx.spec) if ctx.spec is not None else None
    asked = " ".join(m.content[-4_000:] for m in ctx.conversation.messages[-40:] if m.role == "user")
    for leaf, skipped in entries:
        risk = risk_of(
            leaf.name, leaf.schemas, leaf.value, index.said.haystack, index.results.haystack,
            parent=_parent_key(leaf.path), lookup=kind == "read", numbers=index.numbers, paths=ctx.conversation.confirmed_paths,
            creates=kind == "create" and "." not in leaf.path.removeprefix("$."),  # the created thing's own name, not a part's
            today=index.today, asked=asked,
        )
        evidence = {"searched": searched, "risk": risk.level, "risk_reason": risk.reason}
        if isinstance(skipped, SemanticSkip):
            evidence["semantic"] = skipped.reason  # the embedding check was over its latency budget
        findings.append(
            Finding(
                category=Category.UNGROUNDED_VALUE,
                check=NAME,
                message=f"{leaf.path.removeprefix('$.')!r} = {leaf.value!r} appears nowhere in the conversation "
                "or earlier tool results",
                tool=ctx.call.name,
                path=leaf.path,
                value=leaf.value,
                rule="ungrounded",
                evidence=evidence,
                confidence=risk.confidence,
            )
        )
    return findings


def nearest(value: Any, index: GroundingIndex) -> dict[str, Any]:
    """The closest stretch of what was said or returned to a value nothing grounded, and its
    similarity in [0, 1] (rapidfuzz partial ratio, digits included). How near a miss was is what
    tells a typo or variant ("Pariss") from a value nobody said: the optional judge
    (``guard.checks.judge``) is asked only about near misses."""
    text = normalise_text(str(value))
    score, span = 0.0, ""
    for group in (index.said, index.results):
        if text and group.indices and (hit := fuzz.partial_ratio_alignment(text, group.haystack)) is not None:
            if hit.score / 100 > score:
                score, span = hit.score / 100, group.haystack[hit.dest_start : hit.dest_end].strip()
    return {"score": round(score, 3), "span": span}
