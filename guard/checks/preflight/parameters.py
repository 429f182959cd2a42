"""What a tool's parameters take: each leaf parameter (a slot) with its kind of value (a
number, a date, an id, a place, an enum, free text), its name words and its description's words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from guard import schema as schemas
from guard.checks.relevance import stem
from guard.lexicon import NAME_STOPWORDS, STOPWORDS
from guard.normalise import normalise_text
from guard.registry import name_words


#: Parameter name words too general to be named by themselves ("a list of", "some data").
_GENERIC_CUES = frozenset(stem(w) for w in "name type data list info value text result format query key mode option page limit count size".split())

#: Name words that make a string parameter an identifier (it needs a code, a name or a number), a
#: place (a proper name), a date, coordinates (numbers or a place) or a web address.
_ID_WORDS = frozenset({"id", "ids", "identifier", "code", "serial", "sku", "isbn", "ssn", "iban", "uuid"})
_PLACE_WORDS = frozenset({"city", "country", "town", "nation", "destination"})

#: Words that name a place-like parameter, which is a place when its description says so.
_WHERE_WORDS = frozenset({"location", "region", "place", "area", "origin", "departure", "arrival", "address", "state"})
_PLACE_DESCRIPTION = re.compile(
    r"\b(?:city|cities|country|countries|district|geographic(?:al)?|town|province|state (?:code|name|abbreviation)|u\.?s\.? state)\b",
    re.IGNORECASE,
)

#: What a place parameter names, by its name's words: a country, a state or region within one, or
#: a place (a city, an address) that implies both.
COUNTRY_WORDS = frozenset({"country", "nation"})
REGION_WORDS = frozenset({"state", "province", "county", "region"})
CITY_WORDS = frozenset({"city", "town"})
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
_CUE_STOPWORDS = NAME_STOPWORDS


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


#: Mention kinds that may be meant for a parameter of each kind.
_NUMERIC = ("number", "coordinate")

#: Kinds of value whose presence cannot be told from the words: assumed given.
_UNTOLD = ("boolean", "text")
