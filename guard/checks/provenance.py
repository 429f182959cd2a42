"""Completion from provenance: a broken value filled in from where the conversation already holds it.

Models often know *where* a value is but fail to copy it: a required ``file_path`` sent as null
right after ``download_file`` returned one, a ``token`` sent as ``"<token>"`` after
``GetUserToken`` answered, ``-1`` for a colour the user named. Tool-Reflection-Bench measured that
models repair such calls themselves only 1-10% of the time at the first try. When the conversation
holds exactly one good candidate the guard completes the call itself (a repair, with the evidence:
which message, which field or words); with several it lists them, so the feedback or the question
to the human can offer them; with none it does nothing and the placeholder and argument checks
report the value as before.

A value is *broken* when a required parameter is absent, or a given one is null (where the schema
refuses null), a stand-in (``"string"``, ``"none"``, ``"<file_path>"``, ``-1``; see
``placeholders.stand_in_rule``) nobody said, or of a JSON type the schema refuses. Candidates, in
tiers (the first tier that has any decides):

1. a field of an earlier tool result (the JSON walked to any depth) whose name is the parameter's;
2. a field whose name is near it: the same words in another form, a typo (rapidfuzz), or fewer
   words that the context supplies (``id`` inside a ``user`` object, or in ``get_user``'s result,
   for ``user_id``); with an embedder (the ``semantic`` extra) ambiguous fields are ranked by the
   similarity of their path to the parameter's name and description, and when no name fits the
   best-ranked field may be taken if it stands out clearly;
3. the user's words: ``<parameter> is <value>`` (one token, or a quoted phrase), an e-mail address
   or URL for a parameter named so, a number before a word of the parameter's name or description
   ("two adults", "10 minutes").

Every candidate must validate against the parameter's schema (``guard.schema``'s validator: its
``#/$defs/…`` references resolve against the tool's schema, nothing is fetched, regexes and
keyword evaluations share the budgets of ``checks.limits`` per call) after the obvious
conversion (123 -> "123" for a string, "5" -> 5 for a number). Runs after the deterministic
repairs, on their output, so it sees ``"-1"`` where the model wrote ``-1`` for a string; a repair
it supersedes at the same path is dropped and its ``before`` kept.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz

from guard import schema as schemas
from guard.checks import CheckContext
from guard.checks.arguments import child_path, encodable, excerpt, path_label
from guard.checks.placeholders import stand_in_rule
from guard.lexicon import DESCRIPTION_STOPWORDS
from guard.models import Finding, Repair, canonical_json
from guard.normalise import normalise_text, parse_bool, parse_number
from guard.registry import name_words
from guard.repairs import as_schema_date, wants_date
from guard.taxonomy import Category
from guard.text import quoted_pattern, quoted_text

NAME = "provenance"
KIND = "from_provenance"

MISSING, NULL, SENTINEL, WRONG_TYPE = "missing", "null", "sentinel", "wrong_type"
_CATEGORY = {
    MISSING: Category.MISSING_ARGUMENT,
    NULL: Category.PLACEHOLDER_VALUE,
    SENTINEL: Category.PLACEHOLDER_VALUE,
    WRONG_TYPE: Category.TYPE_VIOLATION,
}
_REASON = {MISSING: "is required but absent", NULL: "is null", SENTINEL: "is a stand-in, not a value",
           WRONG_TYPE: "has the wrong type"}

EXACT, NEAR = "name", "near_name"
#: Stand-ins the placeholder patterns leave alone because a sentence may hold them; as a whole
#: value of a required or typed parameter they mean "I did not have it".
_STAND_IN_WORDS = frozenset({"", "none", "null", "nil", "undefined", "na", "-1", "?"})
_SENTINEL_NUMBERS = frozenset({-1})
#: rapidfuzz ratio of two names' words for a near name (a typo, a plural).
_MIN_NAME_SCORE = 90.0
#: Fields read per tool result: a result listing thousands of records is not searched further.
_MAX_FIELDS = 2000
#: Embedding ranking: the best field's cosine must reach this, and beat the next by the margin.
_MIN_SIMILARITY = 0.55
_MIN_MARGIN = 0.10
#: Candidates named in a finding's message (all of them are in its evidence).
_SHOWN = 5


@dataclass(frozen=True)
class Candidate:
    """One value the conversation offers for a parameter, and where it is."""

    value: Any
    evidence: dict[str, Any]
    label: str = ""  # the field's words, for embedding ranking

    @property
    def key(self) -> str:
        return canonical_json(self.value)

    def where(self) -> str:
        e = self.evidence
        if e["source"] == "tool_result":
            return f"field {e['field']!r} of the result of {e.get('tool') or 'a tool'} (message {e['message_index']})"
        return f"the user's words {e['span']!r} (message {e['message_index']})"


def complete(ctx: CheckContext, findings: list[Finding]) -> tuple[dict[str, Any], list[Finding]]:
    """The arguments with broken values completed, and the findings with one finding added per
    broken value that has candidates (a repair when there is exactly one). Repairs it supersedes
    are dropped from ``findings``. Nothing changes when the switch is off or nothing is found."""
    spec = ctx.spec
    if (spec is None or not isinstance(ctx.args, dict) or not ctx.policy.repairs.from_provenance
            or not ctx.policy.repairs_allowed(spec.name)):
        return ctx.args, findings
    try:
        with schemas.budget(ctx.policy.checks.limits):
            return _complete(ctx, spec, findings)
    except schemas.TooCostly:  # the argument check reports it; nothing is completed
        return ctx.args, findings


def _complete(ctx: CheckContext, spec: Any, findings: list[Finding]) -> tuple[dict[str, Any], list[Finding]]:
    earlier = {f.repair.path: f for f in findings if f.repair is not None}
    args = dict(ctx.args)
    added: list[Finding] = []
    sources = _Sources(ctx)
    for param, schema in spec.properties.items():
        if not isinstance(schema, dict) or (param not in args and param not in spec.required):
            continue
        path = child_path("$", param)
        before = earlier[path].repair.before if path in earlier else args.get(param)
        fault = _fault(param in args, args.get(param), before, schema, sources)
        if fault is None:
            continue
        candidates = sources.candidates(param, schema, spec.name)
        if not candidates or (len(candidates) == 1 and candidates[0].key == canonical_json(args.get(param))):
            continue  # nothing offered, or the repairs already made the value the one offered
        finding = _finding(spec.name, path, before, fault, candidates)
        if finding.repair is not None:
            args[param] = finding.repair.after
            if path in earlier:
                findings = [f for f in findings if f is not earlier[path]]
        added.append(finding)
    return (args, findings + added) if added else (ctx.args, findings)


# --- what is broken ---------------------------------------------------------------------------


def _validator_of(schema: dict[str, Any], root: dict[str, Any] | None) -> Any:
    """The validator of a parameter's schema; ``root`` (the tool's schema) is keyed in only when
    the parameter's schema holds a reference, so other parameters share validators across tools."""
    schema_json = canonical_json(schema)
    local = root is not None and ('"$ref"' in schema_json or '"$dynamicRef"' in schema_json)
    return _validator(schema_json, canonical_json(root) if local else None)


@lru_cache(maxsize=2048)
def _validator(schema_json: str, root_json: str | None) -> Any:
    return schemas.validator(json.loads(schema_json), root=None if root_json is None else json.loads(root_json))


def _valid(schema: dict[str, Any], value: Any, root: dict[str, Any] | None) -> bool:
    return _validator_of(schema, root).is_valid(value)


def _fault(present: bool, value: Any, before: Any, schema: dict[str, Any], sources: _Sources) -> str | None:
    """Why a parameter's value is broken, or None when it is not (or is a value nobody can
    complete better, like a null the schema allows)."""
    if not present:
        return MISSING
    root = sources.ctx.spec.parameters if sources.ctx.spec is not None else None
    for v in (before, value):
        if v is None:
            return None if _valid(schema, None, root) else NULL
        if _sentinel(v, schema, sources):
            return SENTINEL
    return WRONG_TYPE if _wrong_type(value, schema, root) or _wrong_type(before, schema, root) else None


def _wrong_type(value: Any, schema: dict[str, Any], root: dict[str, Any] | None) -> bool:
    """A JSON type the schema refuses (the model's own value: 0 where a token was due is wrong
    even after the repairs read it as "0"). A plain ``type`` is checked directly: this runs for
    every parameter of every call, and a validator pass costs ten times as much."""
    declared = schema.get("type")
    types = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else None
    if types is not None and all(t in _JSON_TYPES for t in types):
        return not any(_JSON_TYPES[t](value) for t in types)
    return any(e.validator == "type" and not e.path for e in _validator_of(schema, root).iter_errors(value))


#: JSON Schema's types as Python checks (an integral float is an integer; a bool is no number).
_JSON_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool) or isinstance(v, float) and v.is_integer(),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def _sentinel(value: Any, schema: dict[str, Any], sources: _Sources) -> bool:
    """A stand-in the schema does not offer and the user did not say."""
    if _offered(value, schema):
        return False
    if isinstance(value, str):
        text = value.strip()
        if stand_in_rule(text, schema) is None and text.casefold() not in _STAND_IN_WORDS:
            return False
        return not (text and sources.said(text))
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value in _SENTINEL_NUMBERS


def _offered(value: Any, schema: dict[str, Any]) -> bool:
    """Whether the schema names the value as a choice (default, const, enum, examples) or its
    bounds admit -1 explicitly."""
    members = [schema.get("default"), schema.get("const"), *(schema.get("enum") or []), *(schema.get("examples") or [])]
    if any(m == value and type(m) is type(value) for m in members):
        return True
    minimum = schema.get("minimum")
    return isinstance(value, (int, float)) and isinstance(minimum, (int, float)) and minimum <= value


# --- the finding ------------------------------------------------------------------------------


def _finding(tool: str, path: str, before: Any, fault: str, candidates: list[Candidate]) -> Finding:
    label = path_label(path)
    shown = {MISSING: "no value", NULL: "null"}.get(fault) or excerpt(before)
    if len(candidates) == 1:
        (c,) = candidates
        return Finding(
            category=_CATEGORY[fault], check=NAME, tool=tool, path=path, value=encodable(before), rule=fault,
            message=f"{label} {_REASON[fault]} ({shown}); completed with {excerpt(c.value)} from {c.where()}",
            evidence={"fault": fault, **c.evidence},
            repair=Repair(kind=KIND, path=path, before=encodable(before), after=encodable(c.value)),
        )
    listed = "; ".join(f"{excerpt(c.value)} ({c.where()})" for c in candidates[:_SHOWN])
    more = f"; and {len(candidates) - _SHOWN} more" if len(candidates) > _SHOWN else ""
    return Finding(
        category=_CATEGORY[fault], check=NAME, tool=tool, path=path, value=encodable(before), rule="several_candidates",
        message=f"{label} {_REASON[fault]} ({shown}); the conversation offers {len(candidates)} values: {listed}{more}",
        evidence={"fault": fault, "candidates": [{"value": encodable(c.value), **c.evidence} for c in candidates]},
    )


# --- where candidates come from ---------------------------------------------------------------


@lru_cache(maxsize=4096)
def _words(name: str) -> frozenset[str]:
    """A name's words without trailing digits or plural s ('checksum1' -> 'checksum', 'users' -> 'user')."""
    out = set()
    for w in name_words(name).split():
        w = w.rstrip("0123456789") or w
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return frozenset(out)


def name_tier(key: str, param: str, result_words: frozenset[str], call_words: frozenset[str]) -> str | None:
    """How well a result field's name stands for a parameter: ``EXACT``, ``NEAR`` or None.

    Near: the same words (``fileName``/``file_name``, ``users``/``user``), a typo, or fewer words
    that the context supplies on each side: ``id`` in ``get_user``'s result (or in a ``user``
    object) for ``user_id``; ``user_id`` for the ``id`` of ``delete_user``.
    """
    k, p = name_words(key), name_words(param)
    if k == p:
        return EXACT
    kw, pw = _words(key), _words(param)
    if kw == pw or fuzz.ratio(k, p) >= _MIN_NAME_SCORE:
        return NEAR
    if kw & pw and pw <= kw | result_words and kw <= pw | call_words:
        return NEAR
    return None


def _fields(data: Any) -> Iterator[tuple[str, str, Any, frozenset[str]]]:
    """(path, key, value, words of the enclosing keys) of every object member, in document order."""
    count = 0
    stack: list[tuple[str, Any, frozenset[str]]] = [("", data, frozenset())]
    while stack and count < _MAX_FIELDS:
        path, node, around = stack.pop()
        children: list[tuple[str, Any, frozenset[str]]] = []
        if isinstance(node, dict):
            for k, v in node.items():
                count += 1
                sub = f"{path}.{k}" if path else str(k)
                yield sub, str(k), v, around
                children.append((sub, v, around | _words(str(k))))
        elif isinstance(node, list):
            children = [(f"{path}[{i}]", v, around) for i, v in enumerate(node)]
        stack.extend(reversed(children))


def _fitting(value: Any, schema: dict[str, Any], valid: Callable[[Any], bool]) -> Any:
    """A usable candidate in the type the schema asks for, as it is or after one obvious
    conversion; None when it is empty, a stand-in, or fits the schema in no such way. ``valid`` is
    the schema's validator, fetched once per parameter: many fields may be tried."""
    if value is None or value == "" or value == [] or value == {}:
        return None
    if isinstance(value, str) and (stand_in_rule(value, schema) or value.strip().casefold() in _STAND_IN_WORDS):
        return None
    if valid(value):
        return value
    types = _types(schema)
    converted: Any = None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and "string" in types:
        converted = str(value)
    elif isinstance(value, str) and types & {"integer", "number"}:
        converted = parse_number(value)
    elif isinstance(value, str) and "boolean" in types:
        converted = parse_bool(value)
    return converted if converted is not None and valid(converted) else None


class _Sources:
    """The conversation read for candidates: tool results parsed once, the user's words once."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self._said: str | None = None
        self._root = ctx.spec.parameters if ctx.spec is not None else None

    def said(self, text: str) -> bool:
        """Whether the user or system said this value word for word (then a stand-in-looking value
        is theirs). Verbatim, not normalised: "<password>" is not said by "my password is bar"."""
        if self._said is None:
            self._said = "\n".join(m.content for m in self.ctx.conversation.grounding_texts).casefold()
        needle = text.casefold()
        return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", self._said) is not None

    def candidates(self, param: str, schema: dict[str, Any], tool: str) -> list[Candidate]:
        """The first tier of candidates that has any, one per distinct value. Without an embedder
        only fields whose names match are read: a long result has thousands of others."""
        call_words = _words(tool)

        def tier(key: str, around: frozenset[str]) -> str | None:
            return name_tier(key, param, around, call_words)

        embedded = getattr(self.ctx.semantic, "embedder", None) is not None
        fields = list(self._result_fields(schema, None if embedded else tier))
        named = [(c, t) for c, k, around in fields if (t := tier(k, around | c.evidence["_tool_words"])) is not None]
        for tier in (EXACT, NEAR):
            found = _distinct([_matched(c, tier) for c, t in named if t == tier])
            if len(found) > 1 and (best := self._embedded(param, schema, found, strict=False)):
                return [best]
            if found:
                return found
        if fields and (best := self._embedded(param, schema, _distinct([c for c, _, _ in fields]), strict=True)):
            return [best]
        for extract in (_said_for, _quoted_unused):
            if found := _distinct(list(self._user_values(param, schema, extract))):
                return found
        return []

    # -- tool results --------------------------------------------------------------------------

    def _result_fields(
        self, schema: dict[str, Any], named: Callable[[str, frozenset[str]], str | None] | None
    ) -> Iterator[tuple[Candidate, str, frozenset[str]]]:
        """Every field of every earlier successful tool result whose value fits the schema; with
        ``named``, only those it names a tier for (and then without the label an embedder reads)."""
        valid = _validator_of(schema, self._root).is_valid
        for i, msg in enumerate(self.ctx.conversation.messages):
            if msg.role != "tool" or msg.status == "error" or not isinstance(msg.data, (dict, list)):
                continue
            tool_words = _words(msg.name or "")
            for path, key, value, around in _fields(msg.data):
                if named is not None and named(key, around | tool_words) is None:
                    continue
                value = _fitting(value, schema, valid)
                if value is None:
                    continue
                evidence = {"source": "tool_result", "message_index": i, "tool_call_id": msg.tool_call_id,
                            "tool": msg.name, "field": path, "_tool_words": tool_words}
                label = "" if named is not None else name_words(path.replace("[", ".").replace("]", ""))
                yield Candidate(value, evidence, label=label), key, around

    def _embedded(self, param: str, schema: dict[str, Any], found: list[Candidate], strict: bool) -> Candidate | None:
        """The field an embedder ranks clearly first for the parameter's name and description
        (None without an embedder, or when no field stands out). ``strict``: no name matched, so
        the best field must also be similar in absolute terms."""
        embedder = getattr(self.ctx.semantic, "embedder", None)
        labels = list(dict.fromkeys(c.label for c in found if c.label))
        if embedder is None or len(labels) < (1 if strict else 2):
            return None
        import numpy as np  # an embedder means the semantic extra, and numpy with it

        query = f"{name_words(param)}: {schema.get('description') or ''}".strip(": ")
        vectors = np.asarray(embedder.encode([query, *labels]), dtype=float)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12
        scores = dict(zip(labels, (vectors[1:] @ vectors[0]).tolist()))
        ranked = sorted(found, key=lambda c: -scores.get(c.label, -1.0))
        top = scores[ranked[0].label]
        rivals = [scores[c.label] for c in ranked[1:] if c.key != ranked[0].key and c.label != ranked[0].label]
        if (strict and top < _MIN_SIMILARITY) or (rivals and top - max(rivals) < _MIN_MARGIN):
            return None
        best = ranked[0]
        return Candidate(best.value, {**best.evidence, "match": "embedding", "similarity": round(top, 3)}, best.label)

    # -- the user's words ----------------------------------------------------------------------

    def _user_values(self, param: str, schema: dict[str, Any], extract: _Extractor) -> Iterator[Candidate]:
        """Values one extractor reads for the parameter in the user's messages, in the schema's
        type (and in its date format, when it states one: "March 20 at 6:30 AM" for a
        ``%Y-%m-%d %H:%M:%S`` time; what cannot be written so is no candidate)."""
        dated = wants_date(schema)
        valid = _validator_of(schema, self._root).is_valid
        for i, msg in enumerate(self.ctx.conversation.messages):
            if msg.role != "user" or not msg.content:
                continue
            for raw, span in extract(param, schema, msg.content, self.ctx.args):
                if dated:
                    raw = as_schema_date(str(raw), schema, self.ctx.conversation.reference_time) if raw else None
                value = _fitting(raw, schema, valid)
                if value is not None:
                    yield Candidate(value, {"source": "user", "message_index": i, "span": span})


def _matched(c: Candidate, how: str | None = None) -> Candidate:
    """The candidate with internal evidence keys dropped and, for a field, how its name matched."""
    evidence = {k: v for k, v in c.evidence.items() if not k.startswith("_")}
    return Candidate(c.value, {**evidence, "match": how} if how else evidence, c.label)


def _distinct(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per value (the first place it appears), internal keys dropped."""
    seen: dict[str, Candidate] = {}
    for c in candidates:
        seen.setdefault(c.key, _matched(c))
    return list(seen.values())


# --- reading values from the user's words -----------------------------------------------------

#: (value, the words it was read from) for a parameter, from one user message; the call's other
#: arguments are passed so a phrase already used elsewhere is not offered again.
_Extractor = Callable[[str, dict[str, Any], str, dict[str, Any]], Iterator[tuple[Any, str]]]

_CONNECTOR = r"(?:\s+(?:is|was|will\s+be|would\s+be|should\s+be|to\s+be|to|of)\s+|\s*[:=]\s*|\s+-\s+)"
_QUOTED = quoted_pattern(120)
#: Where a value said after its name ends: a clause boundary. A period ends it unless it follows a
#: title ("Dr. Lee").
_CLAUSE_END = re.compile(
    r"[,;!?()]|(?<!\b(?:dr|mr|ms|st|jr))(?<!\bmrs)(?<!\bprof)\.(?=\s|$)|\s+(?:and|but|or|so|then|please|thanks?|with|for)\b|$",
    re.IGNORECASE,
)
_MAX_SAID_WORDS = 6
#: "the location is the office": the article is the sentence's, not the value's.
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_URL = re.compile(r"https?://[^\s<>\"')]+")
_EDGE_WORDS = re.compile(r"^(?:on|at|from|to|by|until|for|the)\s+|\s+(?:and|to|from|until)$", re.IGNORECASE)
_CONTENT_STOPWORDS = DESCRIPTION_STOPWORDS


@lru_cache(maxsize=1024)
def _label_pattern(param: str) -> re.Pattern[str]:
    """The parameter's name as people write it ("appointment ID", "doctor's name"), then a connector."""
    words = [re.escape(w) for w in name_words(param).split()]
    name = r"(?:'s)?[\s_-]*".join(words)
    return re.compile(rf"(?<![\w-]){name}s?{_CONNECTOR}", re.IGNORECASE)


def _said_for(param: str, schema: dict[str, Any], text: str, args: dict[str, Any]) -> Iterator[tuple[Any, str]]:
    """Values the user tied to the parameter: ``<name> is <value>`` (a quoted phrase, or up to six
    words to the end of the clause), an e-mail address or URL for a parameter named so, a number
    before a word of its name or description ("two adults") for a numeric one, and any date or
    time for one whose schema asks for a date format."""
    for m in _label_pattern(param).finditer(text):
        rest = text[m.end():]
        if q := _QUOTED.match(rest):
            yield quoted_text(q).strip().rstrip("."), text[m.start():m.end() + q.end()]
            continue
        end = _CLAUSE_END.search(rest)
        value = _ARTICLE.sub("", rest[: end.start() if end else len(rest)].strip().strip("\"'"))
        if value and len(value.split()) <= _MAX_SAID_WORDS:
            yield value, text[m.start():m.end()] + value
    words = _words(param)
    if words & {"email", "mail"}:
        yield from ((m.group(0).rstrip("."), m.group(0)) for m in _EMAIL.finditer(text))
    if words & {"url", "link", "website", "uri"}:
        yield from ((m.group(0).rstrip(".,?!"), m.group(0)) for m in _URL.finditer(text))
    if _types(schema) & {"integer", "number"}:
        description = str(schema.get("description") or "")
        yield from _counted(words | _words(" ".join(_content_words(description))), text)
    if wants_date(schema):
        yield from _dates_in(text)


def _quoted_unused(param: str, schema: dict[str, Any], text: str, args: dict[str, Any]) -> Iterator[tuple[Any, str]]:
    """For a free-text parameter (a string with no enum, format or pattern), each phrase the user
    quoted that no other argument of the call already holds: the value a model most often drops."""
    if _types(schema) != {"string"} or any(k in schema for k in ("enum", "const", "format", "pattern")) or wants_date(schema):
        return
    used = " ".join(normalise_text(str(v)) for k, v in args.items() if k != param and isinstance(v, str))
    for m in _QUOTED.finditer(text):
        phrase = quoted_text(m).strip().rstrip(".")
        if phrase and normalise_text(phrase) not in used:
            yield phrase, m.group(0)


def _dates_in(text: str) -> Iterator[tuple[str, str]]:
    """Every date or time expression dateparser finds in a text, trimmed of the prepositions around it."""
    yield from (_dates_found(text) if len(text) <= _CACHED_TEXT else _search_dates(text))


#: Messages up to this long have their dates found once (dateparser's search costs milliseconds
#: a message, and every date parameter of every call of a conversation reads the same messages).
_CACHED_TEXT = 4_000


@lru_cache(maxsize=512)
def _dates_found(text: str) -> tuple[tuple[str, str], ...]:
    return tuple(_search_dates(text))


def _search_dates(text: str) -> Iterator[tuple[str, str]]:
    from dateparser.search import (
        search_dates,  # slow to import: reached only for a broken date value
    )

    try:
        found = search_dates(text, languages=["en"]) or []
    except Exception:  # dateparser raises many types on odd input
        return
    for span, _ in found:
        yield _EDGE_WORDS.sub("", _EDGE_WORDS.sub("", span.strip())), span


def _types(schema: dict[str, Any]) -> set[str]:
    declared = schema.get("type")
    return {declared} if isinstance(declared, str) else set(declared) if isinstance(declared, list) else set()


def _content_words(description: str) -> list[str]:
    return [w for w in normalise_text(description).split() if w not in _CONTENT_STOPWORDS and not w.isdigit()]


def _counted(nouns: frozenset[str], text: str) -> Iterator[tuple[Any, str]]:
    """Numbers written before one of ``nouns`` ("two adults", "10 minutes")."""
    tokens = normalise_text(text).split()
    for i, token in enumerate(tokens[:-1]):
        number = parse_number(token)
        if number is not None and _words(tokens[i + 1]) & nouns:
            yield number, f"{token} {tokens[i + 1]}"
