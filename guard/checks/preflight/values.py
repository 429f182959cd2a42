"""The values a conversation gives a tool: a value meant for a parameter that its schema rejects
(wrong values), and evidence of each required value's kind (missing values)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from guard import schema as schemas
from guard.checks.arguments import conforms_to_format, excerpt, path_label
from guard.checks.derivations import is_country
from guard.checks.measures import is_region
from guard.checks.preflight.parameters import CITY_WORDS, COUNTRY_WORDS, REGION_WORDS, _cue_stems, _NAMED, _NUMERIC, _Slot, _slots, _type, _UNIT, _UNTOLD
from guard.checks.preflight.reading import _Mention, _Text
from guard.checks.relevance import stem
from guard.lexicon import STOPWORDS
from guard.models import Finding
from guard.normalise import normalise_text, numbers_in, parse_number, parse_temporal
from guard.registry import ToolSpec, name_words
from guard.taxonomy import Category


NAME = "preflight"


@dataclass(frozen=True)
class Found:
    """A value read from the conversation for one parameter, and the words it was read from."""

    value: Any
    span: str


#: What ``_evidence`` returns for a value whose presence cannot be told from the words.
_ASSUMED = Found(None, "")


def _values(
    spec: ToolSpec, said: list[_Text], user: list[_Text], known: frozenset[str]
) -> tuple[dict[str, Found], list[Finding]]:
    """The values the conversation gives one tool, and the findings on wrong or missing ones."""
    slots = list(_slots(spec.parameters))
    found, findings, named = _wrong_values(spec, slots, user)
    findings += _missing_values(spec, slots, said, found, findings, named, known)
    return found, findings


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
                hit = _kind_of_object(spec, slot, said, known)
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
    if slot.kind in _NUMERIC and mention.kind != "number" and not any(c.isdigit() for c in mention.text):
        return False  # a quantity is written with digits or as a number word, never as "john_doe"
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
    if kind == "place":
        return _place_evidence(slot, texts, taken, others)
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
    cues = {cue for cue in slot.cues if cue not in _GENERIC_NOUNS}
    for text in texts:
        for m in _BEFORE_NOUN.finditer(text.raw):
            word, noun = m.group(1).lower(), m.group(2).lower()
            if stem(noun) not in cues or word in STOPWORDS or word in _REQUEST_WORDS or word in _VAGUE or stem(word) in known | slot.cues:
                continue
            if parse_number(word) is not None:
                continue  # "one breed", "two styles": how many, not which
            if not _VAGUE.intersection(text.raw[max(0, m.start() - 40) : m.start()].lower().split()[-2:]):
                return Found(None, m.group(0))
    return None


#: How much of a parameter's description is read for what it is a kind of.
_READ_DESCRIPTION = 300

#: Parameter names that ask which kind of the tool's things ("games_by_category": a category).
_KIND_PARAMS = frozenset(
    {"category", "categories", "type", "types", "kind", "kinds", "genre", "genres", "style", "styles", "class", "breed", "breeds", "species"}
)

#: What a kind parameter's description says it is a kind of ("The breed of dog image": dogs).
_KIND_OF = re.compile(r"\b(?:" + "|".join(sorted(_KIND_PARAMS)) + r")\s+of\s+(?:the\s+|an?\s+)?([a-z]{3,})", re.IGNORECASE)


def _kind_of_object(spec: ToolSpec, slot: _Slot, texts: list[_Text], known: frozenset[str]) -> Found | None:
    """A kind of what the tool deals in, said right before the noun its name gives them: for
    ``games_by_category``'s category, "free-to-play *shooter* games"; for ``restaurants_by_type``,
    "*Italian* restaurants". Not a word that only points at, ranks or counts them ("some",
    "popular", "two games"), nor one of the tools' own words."""
    words = name_words(slot.name).split()
    if not words or words[-1] not in _KIND_PARAMS:
        return None
    nouns = {stem(w) for w in name_words(spec.name).split()
             if w not in words and w not in STOPWORDS and w not in _REQUEST_WORDS and len(w) > 2}
    described = slot.schema.get("description")
    if isinstance(described, str) and (of := _KIND_OF.search(described[:_READ_DESCRIPTION])):
        nouns.add(stem(of.group(1).lower()))  # "The breed of dog image to retrieve": a retriever dog
    for text in texts:
        for m in _BEFORE_NOUN.finditer(text.raw):
            word, noun = m.group(1).lower(), m.group(2).lower()
            if stem(noun) not in nouns or stem(word) in nouns or word in STOPWORDS or word in _REQUEST_WORDS or word in _VAGUE:
                continue
            parts = [w for w in word.split("-") if w and w not in STOPWORDS]
            if any(stem(w) in known or w in _RANKING for w in parts) or parse_number(word) is not None:
                continue  # "free-to-play games" for a tool of free games: no kind of them
            return Found(None, m.group(0))
    return None


#: Words before a noun that rank or rate things without saying which kind ("popular games").
_RANKING = frozenset("popular famous trending good great nice cool cheap expensive free interesting fun classic".split())


#: A word introduced as what the request is about ("quotes about leadership", "related to machine
#: learning", "specialize in ales").
_TOPIC = re.compile(
    r"\b(?:about|related to|regarding|concerning|speciali[sz]\w* in|discussing|featuring|named|called|titled)"
    r"\s+(?:(?:the|a|an|some|all)\s+)?([a-z][a-z-]{2,})",
    re.IGNORECASE,
)

#: A word right before a noun: when the noun is the parameter's own ("a *pixel-art* style", "*jazz*
#: genre"), the word is its value.
_BEFORE_NOUN = re.compile(r"(?<![\w'-])([A-Za-z][\w-]*)\s+(?=([A-Za-z]+)\b)")

#: Head nouns a word before names a kind of, not a value of ("first name", "user ID", "file type").
_GENERIC_NOUNS = frozenset({"name", "id", "type", "number", "code", "value", "key", "data", "info", "text", "string", "list", "item"})
#: Words before a noun that point at a value without giving it, or only rank it ("my favorite
#: artist", "specific first names", "the main characters").
_VAGUE = frozenset(
    """my our your his her their favorite favourite preferred usual own specific certain particular some any which what
    first last random main key major primary top best important relevant other another different various several many few all
    each every single""".split()
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


def _place_evidence(slot: _Slot, texts: list[_Text], taken: set[str], others: set[str]) -> Found | None:
    """A place for a place parameter, by what it names (``pycountry``). A country parameter is
    given by a country the user named, a state or region parameter by a state, province or
    region; both are implied by a place named without them ("Los Angeles": its country and state
    are given), and neither takes the place away from a city parameter. A city parameter takes the
    first place not yet taken that is no country ("Paris" is both a city and a French region); any
    other place parameter (a destination, a location) the first place not yet taken."""
    words = set(name_words(slot.name).split())
    role = "country" if words & COUNTRY_WORDS else "region" if words & REGION_WORDS else "city" if words & CITY_WORDS else "place"
    named = [m for t in texts for m in t.mentions if _is_place(m)]
    places = [m for m in named if m.text not in others]

    def names(m: _Mention) -> str:
        return "country" if is_country(m.text) else "region" if is_region(m.text) else "place"

    if role in ("country", "region"):
        m = next((m for m in places if names(m) == role), None)
        if m is not None:
            return Found(m.text, m.text)
        # a place named for another parameter ("the state of Texas") still implies its country
        implied = next((m for m in named if names(m) == "place" or (role == "country" and names(m) == "region")), None)
        return Found(None, implied.text) if implied is not None else None
    free = [m for m in places if m.text not in taken]
    if role == "city":
        free = [m for m in free if names(m) != "country"]
    if not free:
        return None
    taken.add(free[0].text)  # "from Berlin to Paris": the next place is another value
    return Found(free[0].text, free[0].text)


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
