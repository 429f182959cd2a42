"""Reading a message once: its words (as stems, with positions), the value-like stretches in it
(numbers, codes, quoted phrases, proper names, e-mails, addresses, ``key=value``), and the dates
and times it asks for."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

from guard.checks.preflight.parameters import _CONTEXT, _CUE_WINDOW, _NAMED, _NUMERIC, _Slot, _UNIT
from guard.checks.relevance import stem
from guard.lexicon import MONTH_PATTERN, STOPWORDS, WEEKDAY_PATTERN
from guard.normalise import normalise_text, numbers_in, parse_number
from guard.text import named_sites, quoted_pattern, quoted_text


_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")

#: A quoted phrase; a single-quoted one may be followed by a possessive "s" ("the user 'john_doe's playlist").
_QUOTED = quoted_pattern(200)
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
_MONTHS = MONTH_PATTERN
_WEEKDAYS = WEEKDAY_PATTERN

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
    rf"\b(?:{_WEEKDAYS}|today|tonight|tom+or+ow|yesterd?a?y|now|asap|immediately)\b"
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
#: A possessive right after a value, its closing quote included ("'john_doe's", "Maria's").
_POSSESSIVE = re.compile(r"[\"'’”]?['’]s\b")
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
        if not numeric and _POSSESSIVE.match(self.raw, end):
            after = []  # "john_doe's playlist": the value owns the thing, it is not the thing's key
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
    sites = [_Mention(name, start, "url") for start, name in named_sites(text)]  # "GitHub's homepage": its address is the model's to write
    mentions = sorted([*quoted, *_tokens(text, quoted_spans, spans), *_number_words(text), *sites], key=lambda m: m.start)
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
        inner = quoted_text(m).strip()
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
