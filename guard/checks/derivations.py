"""Values a model derives, by a fixed rule, from words the user said.

Grounding asks where a value came from. Some values appear nowhere word for word, yet follow from
what was said by a rule anyone would apply the same way: ``startMonth: 3`` from "from March",
``2023-06-30`` from "to June 2023", ``["Monday", ..., "Friday"]`` from "on weekdays", ``"USD"``
from "$75", ``costAdjustment: 0`` from "with no cost adjustment", ``autoRemove: "yes"`` from
"automatically remove", coordinates looked up for a place the user named, and the further rules
below (durations, ranges of dates, countries, colours, descriptions that map a value to words). Asking the human about them would be a false alarm, so grounding accepts
them here, after its literal search fails and before any paraphrase matcher, and says which words derived each one and how (grounding reports it as a match whose source is
"derived").

Conversions read with libraries (quantities and units with ``pint``, currency names with
``babel``, time zones with ``zoneinfo``, periods a year) live in ``guard.checks.measures`` and run
after the rules here.

Only rules that need no outside knowledge beyond a calendar, small tables of names (currency
symbols, countries, colours) and the fact that a named place has coordinates: a value derived from
what the model merely believes ("the decade starting in 2000" ends in 2009? "young adults" are
18-35? a meeting lasts an hour?) still counts as invented.
"""

from __future__ import annotations

import calendar
import itertools
import mimetypes
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from datetime import date, datetime, time, timedelta, timezone, tzinfo

from dateutil.relativedelta import relativedelta
from rapidfuzz import process
from rapidfuzz.distance import OSA

from guard.checks import measures, places
from guard.checks.relevance import stem
from guard.conversation import clock as reference_clock, stated_date, stated_now, stated_today
from guard.lexicon import (
    AFTER_NOON_WORDS, DATE_LANGUAGES, INTERVAL_SEMITONES, LOWER_BOUND_WORDS, MONTH_NUMBER, MONTHS, STOPWORDS, UPPER_BOUND_WORDS, WEEKDAY_OR_SHORT_PATTERN, WEEKDAY_SHORT, WEEKDAYS, WHITE_LIGHT_KELVIN, file_languages, foreign_date_words, foreign_duration_words,
    foreign_month_number, foreign_number_words, relative_days, relative_periods, unspaced,
)
from guard.normalise import (
    WORD,
    named_day,
    named_days_in,
    normalise_text,
    unmarked,
    number_words,
    numbers_in,
    ORDINALS,
    parse_number,
    parse_temporal,
    temporal_patterns,
)
from guard.registry import name_words
from guard.text import QUOTED_TOKEN, described_literal, named_sites

#: The user and system messages, as written, with their index in the conversation.
Said = list[tuple[int, str]]
#: Which message derived a value (None: the schema's own words), and how ("march -> month 3").
Derivation = tuple[int | None, str]

_MONTHS = MONTH_NUMBER
_WEEKDAYS = list(WEEKDAYS)
_DAY_GROUPS = {"weekday": _WEEKDAYS[:5], "weekdays": _WEEKDAYS[:5], "weekend": _WEEKDAYS[5:], "weekends": _WEEKDAYS[5:]}
_MONTH_YEAR = re.compile(r"\b(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?,?\s+(\d{4})\b", re.IGNORECASE)
_ISO_PREFIX = re.compile(r"\d{4}-\d{2}-\d{2}(?:$|[T ])")
_ISO_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")
_COORDINATE_NAMES = frozenset({"lat", "latitude", "lng", "lon", "long", "longitude"})


@dataclass(frozen=True)
class Context:
    """What a rule may read besides the value: the parameter's name and description, what was
    said, and the conversation's date (relative phrases such as "the next five years")."""

    param: str
    said: Said
    description: str = ""
    today: date | None = None
    #: Whether the tool only reads (its name's verb: get, list, search): its ``start`` and ``end``
    #: bound a window to look in, not an event's times.
    lookup: bool = False

    @cached_property
    def words(self) -> list[str]:
        """The parameter name's words ("autoRemove": auto, remove)."""
        return name_words(self.param).split()

    @cached_property
    def normalised(self) -> list[tuple[int, str]]:
        """What was said, normalised (``guard.normalise``) and padded for whole-word searches:
        read once per message, however many values and rules look."""
        return [(index, _padded(text)) for index, text in self.said]


@lru_cache(maxsize=32)  # the messages of the conversation in hand: every value of a call reads them
def _padded(text: str) -> str:
    return f" {normalise_text(text)} "


def derive(
    value: object, param: str, said: Said, *, description: str = "", today: date | None = None, lookup: bool = False
) -> Derivation | None:
    """The rule and words that derive ``value`` for parameter ``param`` (described by
    ``description``) from what was ``said`` on ``today``, for a tool that only reads (``lookup``)
    or not; None when no rule does."""
    ctx = Context(param, said, description, today, lookup)
    for rule in _RULES:
        try:
            match = rule(value, ctx)
        except Exception:  # a rule that cannot read this value derives nothing: the value stays ungrounded
            continue
        if match is not None:
            return match
    return None


def _month_number(value: object, ctx: Context) -> Derivation | None:
    """``startMonth: 3`` from "March": a month's number for a parameter named for months."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 12 or "month" not in ctx.param.lower():
        return None
    for index, text in ctx.said:
        for m in re.finditer(r"[a-z]+", text.lower()):
            word = m[0]
            if _MONTHS.get(word) == value and (word != "may" or re.match(r"\s+(?:\d|to\b|-)", text[m.end():])):
                return index, f"{word} -> month {value}"  # "may" is a month only before a day, a year or a range
    return None


def _foreign_month_year(month: int, year: int, ctx: Context) -> tuple[int, str] | None:
    """Where a month and its year were named in another common language ("janeiro de 2025",
    "März 2024", "septiembre del 2023"; ``lexicon.foreign_month_number``): its name, then the
    year within two words."""
    names = foreign_month_number()
    for index, text in ctx.normalised:
        tokens = text[:_READ].split()
        for i, token in enumerate(tokens):
            if names.get(token) == month and str(year) in tokens[i + 1 : i + 4]:
                return index, " ".join(tokens[i : tokens.index(str(year), i + 1) + 1])
    return None


def _month_bounds(value: object, ctx: Context) -> Derivation | None:
    """``2023-01-01`` / ``2023-06-30`` from "January 2023 to June 2023": a named month's first or
    last day, as a range's start or end; ``2025-02`` from "feb 2025": the month itself."""
    # a date, or a date-time at a day's edge ("2025-03-31T23:59:59-07:00": ``Temporal`` drops the time)
    parsed = parse_temporal(value) if isinstance(value, str) and len(value) <= 40 else None
    if parsed is not None and parsed.date is not None and parsed.time is None and _ISO_PREFIX.match(value):
        year, month, day = parsed.date.year, parsed.date.month, parsed.date.day
    elif isinstance(value, str) and (m := _ISO_MONTH.match(value)) is not None:
        year, month, day = int(m[1]), int(m[2]), 1
    else:
        return None
    if not 1 <= month <= 12 or day not in (1, calendar.monthrange(year, month)[1]):
        return None
    for index, text in ctx.said:
        for found in itertools.islice(_MONTH_YEAR.finditer(text[:_READ]), _MAX_SPANS):
            if _MONTHS[found[1].lower()] == month and int(found[2]) == year:
                return index, f"{found[0]} -> {value}"
    if (named := _foreign_month_year(month, year, ctx)) is not None:
        return named[0], f"{named[1]} -> {value}"
    if ctx.today is None or not _nearest_years(month, ctx.today) & {year}:
        return None
    for index, text in ctx.said:  # "my gas bill in january" (said in February 2025): January 2025
        for found in itertools.islice(_MONTH_ALONE.finditer(text[:_READ]), _MAX_SPANS):
            name = found[2].lower()
            if _MONTHS[name] == month and (name != "may" or found[1]):
                return index, f"{found[0].strip()} (the nearest) -> {value}"
    return None


#: A month named without a year: "in january", "for March", "last may".
_MONTH_ALONE = re.compile(
    r"\b(?:(in|for|of|during|last|this|next|since|until|by) )?(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b(?!\.?,?\s+\d)",
    re.IGNORECASE,
)


def _nearest_years(month: int, today: date) -> set[int]:
    """The years of the month's occurrences nearest to ``today``: the last one and the next one."""
    if month == today.month:
        return {today.year}
    return {today.year if month < today.month else today.year - 1, today.year if month > today.month else today.year + 1}


def _day_group(value: object, ctx: Context) -> Derivation | None:
    """"Monday" ... "Friday" from "weekdays", "Saturday" from "weekends"."""
    if not isinstance(value, str) or value.strip().lower() not in _WEEKDAYS:
        return None
    day = value.strip().lower()
    for index, text in ctx.said:
        for word in re.findall(r"[a-z]+", text.lower()):
            if day in _DAY_GROUPS.get(word, ()):
                return index, f"{word} -> {value}"
    return None


def _currency_code(value: object, ctx: Context) -> Derivation | None:
    """``"USD"`` from "$75": the code of a currency symbol written before an amount; ``"PLN"``
    from "800 zł", ``"IDR"`` from "Rp 50.000": a currency's symbol as its own country writes it,
    beside an amount (``measures.home_currency_symbols``)."""
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z]{3}", value.strip()):
        return None
    code = value.strip().upper()
    for index, text in ctx.said:
        for symbol, symbol_code in measures.currency_symbols().items():
            if symbol_code == code and re.search(re.escape(symbol) + r"\s?\d", text[:_READ]):
                return index, f"{symbol} -> {value}"
    homes = [symbol for symbol, symbol_code in measures.home_currency_symbols().items() if symbol_code == code]
    for index, text in ctx.said:
        for symbol in homes:
            sign = re.escape(symbol)
            if re.search(rf"(?<!\w){sign}\s?\d|\d\s?{sign}(?!\w)", text[:_READ]):
                return index, f"{symbol} -> {value}"
    return None


#: A move by a musical interval: its direction, a count ("two whole steps"), the interval's name
#: (``lexicon.INTERVAL_SEMITONES``, plural or not).
_INTERVAL_MOVE = re.compile(
    r"\b(up|down|raise[ds]?|lower(?:ed|s)?|by)\s+(?:(?:a|an|one)\s+|(\d+|two|three|four)\s+)?"
    rf"({'|'.join(sorted(map(re.escape, INTERVAL_SEMITONES), key=len, reverse=True))})s?\b"
)


def _interval_semitones(value: object, ctx: Context) -> Derivation | None:
    """``semitones: 3`` from "up a minor third", ``-2`` from "down a whole step", ``24`` from "up
    two octaves": a transposition by a named interval, for a parameter counted in semitones; down
    or lower is negative. An interval named without a direction ("the fifth track") moves nothing."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    if "semitone" not in f"{ctx.param} {ctx.description}".lower() and "semitones" not in ctx.words:
        return None
    for index, text in ctx.normalised:
        for m in _INTERVAL_MOVE.finditer(text[:_READ]):
            count = parse_number(m[2]) if m[2] else 1
            steps = count * INTERVAL_SEMITONES[m[3]]
            if m[1].startswith(("down", "lower")):
                steps = -steps
            if value == steps or (m[1] == "by" and value == -steps):
                return index, f"{m[0].strip()} -> {value} semitones"
    return None


def _none_is_zero(value: object, ctx: Context) -> Derivation | None:
    """``costAdjustment: 0`` from "no cost adjustment": "no" before the parameter's own words."""
    if value != 0 or isinstance(value, bool):
        return None
    words = [w for w in ctx.words if len(w) > 2]
    if not words:
        return None
    for index, text in ctx.said:
        lowered = text.lower()
        for word in words:
            if hit := re.search(rf"\b(?:no|zero|without(?: any)?)\s+(?:\w+\s+)?{re.escape(word[:5])}\w*", lowered):
                return index, f"{hit[0]} -> 0"
    return None


def _grouped_digits(value: object, ctx: Context) -> Derivation | None:
    """``member_number: "601233448890"`` from "card no. 6012 3344 8890", ``"DE8937040044..."``
    from "IBAN DE89 3704 0044 ...", ``"1Z999AA10123456784"`` from "ups tracking 1z 999 aa1 01 2345
    6784": an identifier the user wrote in groups (a card, an account, a tracking number), run
    together and, for its letters, in capitals. At least four of its characters are digits."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z0-9]{6,40}", target := value.strip()):
        return None
    if sum(c.isdigit() for c in target) < 4:
        return None
    target = target.upper()
    for index, text in ctx.said:
        text = text[:_READ]
        tokens = list(itertools.islice(_ALNUM.finditer(text), _MAX_TOKENS))
        for i, first in enumerate(tokens):
            joined, j = first.group(0).upper(), i
            if not target.startswith(joined) or _continues(text, tokens, i - 1, i):
                continue  # a whole run of groups, not its middle ("3344 8890" of "6012 3344 8890")
            while len(joined) < len(target) and j + 1 < len(tokens) and text[tokens[j].end() : tokens[j + 1].start()] in _GROUP_GAPS:
                j += 1
                joined += tokens[j].group(0).upper()
                if not target.startswith(joined):
                    break
            if j > i and joined == target and not _continues(text, tokens, j, j + 1):
                return index, f"{text[first.start() : tokens[j].end()]} -> {value}"
    return None


def _continues(text: str, tokens: list[re.Match[str]], a: int, b: int) -> bool:
    """Whether tokens ``a`` and ``b`` are groups of one run: next to each other across one space,
    dot or hyphen, and ``b`` (or ``a``) holds a digit (a word before or after the groups is no
    group: "tracking 1z 999 ...")."""
    if a < 0 or b >= len(tokens) or text[tokens[a].end() : tokens[b].start()] not in _GROUP_GAPS:
        return False
    return any(c.isdigit() for c in tokens[a].group(0)) and any(c.isdigit() for c in tokens[b].group(0))


_ALNUM = re.compile(r"[A-Za-z0-9]+")
#: What may stand between the groups of one identifier: one space, dot or hyphen.
_GROUP_GAPS = frozenset({" ", ".", "-"})
_MAX_TOKENS = 2_000


#: Parameter words that count things: one of them is what "a", "an" or "another" asks for.
_COUNT_WORDS = frozenset({"quantity", "qty", "count", "copies", "units", "pieces", "items", "tickets", "seats", "rooms"})
_ONE_THING = re.compile(r"\b(?:a|an|another|one|single)\s+(?:pair\s+of\s+|single\s+)?[a-z]", re.IGNORECASE)
#: One thing in a list beside others counted: "two pizzas and a large caesar", "3 shirts, one tie".
_LISTED_ONE = re.compile(r"(?:,|\band|\bplus)\s+(?:a|an|one|another)\s+(?!(?:few|couple|lot|bit|number|dozen|pair|total)\b)[a-z]", re.IGNORECASE)


def _plural(word: str) -> bool:
    """Whether a word reads as a plural noun ("pizzas", "tickets"; not "glass", "it's", "bus")."""
    word = word.strip(".,;:!?'\"()").lower()
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "'s", "’s"))


_THE_THING = re.compile(r"\b(?:the|my|this|that)\s+([a-z]{3,})\b(?!\s+(?:of|and)\b)", re.IGNORECASE)
_CARDINAL = re.compile(
    r"(?<![\w.:/-])\d+(?![\w.:/-])|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|dozen|couple|several|few|some|all)\b",
    re.IGNORECASE,
)


#: Parameter words that cap how many results a lookup returns.
_LIMIT_WORDS = frozenset({"limit", "max", "top", "size", "results", "page", "per", "n", "first", "last"})
#: The one latest, next or earliest of something ("the latest pipeline", "when is it next visible").
_ONLY_ONE = re.compile(r"\b(?:latest|last|most recent|newest|next|earliest|oldest|previous|upcoming)\s+([a-z]+)", re.IGNORECASE)


def _one_item(value: object, ctx: Context) -> Derivation | None:
    """``quantity: 1`` from "add another pair of sneakers to my cart": one of a thing asked for
    with "a", "an", "another" or "one"; ``limit: 1`` from "the latest pipeline on main failed": the
    one latest, next or last thing. Only when the latest request says no other number at all."""
    if value not in (1, "1") or isinstance(value, bool) or not ctx.said:
        return None
    words = set(ctx.words)
    counts, limits = bool(_COUNT_WORDS & words), bool(_LIMIT_WORDS & words)
    if not counts and not limits:
        return None
    index, text = ctx.said[-1]
    text = text[:_READ]
    if _CARDINAL.search(text):
        # "add two margherita pizzas and a large caesar": in a list of things each with its own
        # count, the one asked for with "a" is one
        if counts and (one := _LISTED_ONE.search(text)) is not None:
            return index, f"{one.group(0)[:-1].strip()} -> 1"
        return None
    if counts and (one := _ONE_THING.search(text)) is not None:
        return index, f"{one.group(0)[:-1].strip()} -> 1"
    if counts and (one := _THE_THING.search(text)) and not _plural(one[1]) and not any(map(_plural, text[: one.start()].split())):
        return index, f"{one.group(0)} -> 1"  # "money back for the charger": the first thing named is one
    if limits:
        for one in itertools.islice(_ONLY_ONE.finditer(text), _MAX_SPANS):
            noun = one[1].lower()
            if not (noun.endswith("s") and not noun.endswith("ss")):  # "the latest episodes": more than one
                return index, f"{one.group(0)} -> 1"
    return None


_YES_NO = frozenset({"yes", "no", "true", "false", "on", "off", "enabled", "disabled"})


def _switch(value: object, ctx: Context) -> Derivation | None:
    """``autoRemove: "yes"`` from "automatically remove any threats": a yes/no written as text for a
    parameter the user's words name (the answer to a switch they mentioned)."""
    if not isinstance(value, str) or value.strip().lower() not in _YES_NO:
        return None
    words = [w for w in ctx.words if len(w) > 3]
    negative = value.strip().lower() in _NO
    for index, text in ctx.said:
        lowered = text.lower()
        for word in words:
            for hit in re.finditer(rf"\b{re.escape(word[:5])}\w*", lowered):
                if bool(_NEGATED.search(lowered[: hit.start()])) == negative:  # "do not remove" is a "no"
                    return index, f"{hit[0]} -> {value}"
    return None


_NO = frozenset({"no", "false", "off", "disabled"})
#: A negation within the three words before a switch's word.
_NEGATED = re.compile(r"\b(?:no|not|never|don't|dont|do not|without)(?:\s+\S+){0,2}\s*$")


def _coordinates(value: object, ctx: Context) -> Derivation | None:
    """A latitude or longitude for a place the user named ("the Eiffel Tower", "Athens"): looked
    up, not invented. Which coordinates a place has is not judged here."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    if not _COORDINATE_NAMES & set(ctx.words):
        return None
    for index, text in ctx.said:
        for name in _CAPITALISED.finditer(text):
            before = text[: name.start()].rstrip()
            first = name[0].split()[0].lower()
            if before and before[-1] not in ".!?:" and first not in _MONTHS and first not in _WEEKDAYS:
                return index, f"coordinates of {name[0]}"
    return None


#: A latitude or longitude in degrees, minutes and seconds with its hemisphere ("15°50′S",
#: "69° 20' W", "40°26'46\"N"); the minutes and seconds may be left out.
_DEGREES = re.compile(
    r"(\d{1,3}(?:\.\d+)?)\s*°\s*(?:(\d{1,2}(?:\.\d+)?)\s*['′’]\s*)?(?:(\d{1,2}(?:\.\d+)?)\s*(?:[\"″”]|'')\s*)?([NSEW])(?![^\W\d_])"
)


def _degrees_minutes(value: object, ctx: Context) -> Derivation | None:
    """``latitude: -15.8333`` from "15°50′S", ``longitude: -69.3333`` from "69°20′W": a latitude
    or longitude the user wrote in degrees, minutes and seconds, in decimal degrees (south and
    west negative), to the value's precision."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    words = set(ctx.words)
    latitude, longitude = bool(words & {"lat", "latitude"}), bool(words & {"lng", "lon", "long", "longitude"})
    if not latitude and not longitude:
        return None
    for index, text in ctx.said:
        for m in itertools.islice(_DEGREES.finditer(text[:_READ]), 16):
            hemisphere = m[4]
            if (hemisphere in "NS" and not latitude) or (hemisphere in "EW" and not longitude):
                continue
            degrees = float(m[1]) + float(m[2] or 0) / 60 + float(m[3] or 0) / 3600
            if measures.rounds_to(value, -degrees if hemisphere in "SW" else degrees):
                return index, f"{m[0].strip()} -> {value}"
    return None


def _said_phrase(phrase: str, ctx: Context) -> int | None:
    """The index of the first message that says ``phrase`` as whole words (normalised)."""
    words = normalise_text(phrase)
    if not words:
        return None
    return next((index for index, text in ctx.normalised if f" {words} " in text), None)


# --- durations and ranges of dates ------------------------------------------------------------

#: Calendar units, the short codes a duration is written with ("1w", "3m", "24h"), and their size
#: in seconds (fixed units) or months (calendar units); a day and a month do not convert.
_UNITS: dict[str, tuple[tuple[str, ...], str, int]] = {
    "second": (("s", "sec", "secs", "second", "seconds"), "seconds", 1),
    "minute": (("min", "m", "minute", "minutes"), "seconds", 60),
    "hour": (("h", "hr", "hrs", "hour", "hours"), "seconds", 3_600),
    "day": (("d", "day", "days"), "seconds", 86_400),
    "week": (("w", "wk", "week", "weeks"), "seconds", 604_800),
    "month": (("m", "mo", "mon", "month", "months"), "months", 1),
    "quarter": (("q", "quarter", "quarters"), "months", 3),
    "year": (("y", "yr", "year", "years"), "months", 12),
}
_STEPS = {"day": relativedelta(days=1), "week": relativedelta(weeks=1), "month": relativedelta(months=1),
          "quarter": relativedelta(months=3), "year": relativedelta(years=1)}
_FORWARD = frozenset({"next", "coming", "following", "upcoming"})
_BACKWARD = frozenset({"last", "past", "previous", "prior"})
#: Words that make a bare unit one of it: "last week", "a month", "per day".
_ONE = frozenset({"a", "an", "one", "this", "per", "every", "each"}) | _FORWARD | _BACKWARD
_QUANTITY = re.compile(r"(?:\b(\w+) )?\b(\w+) (" + "|".join(_UNITS) + r")s?\b")
_COMPACT = re.compile(r"^\s*(\d+)\s*([a-z]+)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class _Quantity:
    """"the next five years": 5 years, forward (+1), backward (-1) or neither (0)."""

    amount: int
    unit: str
    direction: int
    surface: str


def _quantities(text: str) -> tuple[_Quantity, ...]:
    """Every amount of a calendar unit a normalised text names ("last week" is 1 week back), in
    its first ``_READ`` characters; read once per text, however many values ask."""
    return _calendar_quantities(text[:_READ])


#: "a couple of days", "the last couple weeks": two of them, as people count.
_COUPLE = re.compile(r"(?<= )(?:a )?couple (?:of )?(?=(?:" + "|".join(_UNITS) + r")s? )")


@lru_cache(maxsize=256)
def _calendar_quantities(text: str) -> tuple[_Quantity, ...]:
    found = []
    text = _COUPLE.sub("2 ", text) if "couple" in text else text
    for m in _QUANTITY.finditer(text):
        before, word, unit = m[1], m[2], m[3]
        if word in _ONE:
            amount, lead = 1, word
        elif (number := parse_number(word)) is not None and float(number).is_integer() and number > 0:
            amount, lead = int(number), before
        else:
            continue
        if text.startswith(" and a half ", m.end()) or text.startswith("s and a half ", m.end()):
            continue  # "an hour and a half" is no hour (measures reads the half)
        direction = 1 if lead in _FORWARD else -1 if lead in _BACKWARD else 0
        start = m.start(1) if direction and lead == before else m.start(2)
        found.append(_Quantity(amount, unit, direction, text[start : m.end()]))
    return tuple(found)


def _duration(value: object, ctx: Context) -> Derivation | None:
    """``timeFrame: "1w"`` from "last week", ``analysisPeriod: 7`` (days) from "the past week": an
    amount of time the user named, as a short code or in the unit the parameter counts in."""
    compact = _COMPACT.match(value) if isinstance(value, str) else None
    target = _counted_unit(ctx) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if compact is None and target is None:
        return None
    for index, text in ctx.normalised:
        for q in _quantities(text):
            if (
                compact is not None and q.amount == int(compact[1]) and compact[2].lower() in _UNITS[q.unit][0]
            ) or (target is not None and _converted(q, target) == value):
                return index, f"{q.surface} -> {value}"
    return None


def _counted_unit(ctx: Context) -> str | None:
    """The calendar unit a numeric parameter counts in, from its name or description ("days")."""
    for word in ctx.words + normalise_text(ctx.description).split():
        for unit, (codes, _, _) in _UNITS.items():
            if len(word) > 2 and word in codes:
                return unit
    return None


def _converted(quantity: _Quantity, target: str) -> float | None:
    """A quantity in another unit of the same kind (1 week in days: 7); None across kinds."""
    _, kind, size = _UNITS[quantity.unit]
    _, target_kind, target_size = _UNITS[target]
    return quantity.amount * size / target_size if kind == target_kind else None


def _relative_range(value: object, ctx: Context) -> Derivation | None:
    """``endDate: 2028-01-01`` from "over the next five years" on 2023-01-01: the date that an
    amount of time forward (or back, "the past 3 months") from the conversation's date, or from a
    date the user gave as today, reaches."""
    day = date_value(value)
    if day is None:
        return None
    for today in _todays(ctx):
        for index, text in ctx.normalised:
            for q in _quantities(text):
                if q.direction and q.unit in _STEPS and today + q.direction * q.amount * _STEPS[q.unit] == day:
                    return index, f"{q.surface} from {today.isoformat()} -> {day.isoformat()}"
    return None


def date_value(value: object) -> date | None:
    """The day a date value names ("2028-01-01", "2022-04-15T00:00:00"); None for a time of day."""
    parsed = parse_temporal(value) if isinstance(value, str) else None
    return parsed.date if parsed is not None and parsed.time is None else None


#: What comes before the year of a written date ("October 09, 2025"): that year names a day, not a year.
_WRITTEN_DATE_END = re.compile(r"(?:\d{1,2}(?:st|nd|rd|th)?|" + "|".join(_MONTHS) + r")\.?,?\s*$", re.IGNORECASE)


#: A noun that labels the number after it ("flat number 2023", "room 2023", "order #2023"): an
#: identifier, not a year.
_LABELLED = re.compile(
    r"(?:\b(?:number|no|num|nr|flat|apartment|apt|room|unit|suite|house|floor|order|account|invoice|ticket|flight|"
    r"bus|route|line|gate|seat|platform|page|chapter|item|model|version|code|pin|zip|id|extension|ext)\.?|#)\s*$",
    re.IGNORECASE,
)


def _year_bounds(value: object, ctx: Context) -> Derivation | None:
    """``2015-01-01`` / ``2025-12-31`` from "from 2015 to 2025": a named year's first or last day
    (a year named on its own, not the year of a date such as "October 09, 2025")."""
    day = date_value(value)
    if day is None or (day.month, day.day) not in ((1, 1), (12, 31)):
        return None
    year = re.compile(rf"(?<![\d/.:-]){day.year}(?![\d/:-]|\.\d|\s*(?:am|pm)\b)", re.IGNORECASE)
    for index, text in ctx.said:
        text = text[:_READ]
        for m in itertools.islice(year.finditer(text), _MAX_SPANS):
            before = text[max(0, m.start() - _LOOK_BACK) : m.start()]  # what stands right before it, not the whole text again
            if not _WRITTEN_DATE_END.search(before) and not _LABELLED.search(before):
                return index, f"{day.year} -> {day.isoformat()}"
    return None


#: A decade as people say it: "the 90s", "the 1990s", "the '90s", "the nineties" (normalised text).
_DECADE = re.compile(r" (?:the |in the |from the )(?:(1[89]|20)?([0-9])0 s|(twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties)) ")
_DECADE_WORDS = {"twenties": 2, "thirties": 3, "forties": 4, "fifties": 5, "sixties": 6, "seventies": 7, "eighties": 8, "nineties": 9}
#: A year written with an apostrophe and two digits: "jan '24", "summer of ’19".
_SHORT_YEAR = re.compile(r"(?<![\w'’])['’](\d\d)(?![\w'’])")


def _decade_or_short_year(value: object, ctx: Context) -> Derivation | None:
    """``release_year_from: 1990`` / ``release_year_to: 1999`` from "movies from the 90s": a
    decade's first or last year (of the last hundred years when the century is not said; a
    decade's first or last day too); ``year: 2024`` from "jan '24": a year written short."""
    day = date_value(value)
    year = day.year if day is not None else value if isinstance(value, int) and not isinstance(value, bool) else None
    if year is None or not 1800 <= year <= 2199:
        return None
    for index, text in ctx.normalised:
        for m in itertools.islice(_DECADE.finditer(text[:_READ]), 8):
            digit = int(m[2]) if m[2] is not None else _DECADE_WORDS[m[3]]
            century = int(m[1]) * 100 if m[1] else (ctx.today.year if ctx.today else date.today().year) // 100 * 100
            first = century + 10 * digit
            if not m[1] and first > (ctx.today.year if ctx.today else date.today().year):
                first -= 100  # "the 90s" said in 2025: the 1990s
            bounds = {first: (1, 1), first + 9: (12, 31)}
            if year in bounds and (day is None or (day.month, day.day) == bounds[year]):
                return index, f"{m[0].strip()} -> {value}"
    if day is None:
        for index, text in ctx.said:
            if any(2000 + int(m[1]) == year or 1900 + int(m[1]) == year for m in _SHORT_YEAR.finditer(text[:_READ])):
                return index, f"'{year % 100:02d} -> {year}"
    return None


#: How far before a year the date and label patterns look ("October 09, ", "flat number ").
_LOOK_BACK = 40


#: Two years joined as people write a season, a school or a fiscal year: "2019-20", "2019/2020",
#: "2019–20", "2019 to 2020".
_YEAR_SPAN = re.compile(r"(?<![\d/.:-])((?:19|20)\d\d)\s*(?:-|–|/|\bto\b|\bthrough\b)\s*(\d\d(?:\d\d)?)(?![\d/:-]|\.\d)")


def _year_span_of(m: re.Match[str]) -> tuple[int, int] | None:
    """The first and last year of a span "2019-20" (2019, 2020), "1999-00" (1999, 2000); None when
    the second is no later year within a century."""
    first, second = int(m[1]), int(m[2])
    if len(m[2]) == 2:
        second += first - first % 100 + (100 if second <= first % 100 else 0)
    return (first, second) if first < second < first + 100 else None


#: A span of two years in a row written with two digits each, as a season is: "the 22/23 season".
_SHORT_YEAR_SPAN = re.compile(r"(?<![\d/.:-])(\d\d)\s*(?:/|-|–)\s*(\d\d)(?![\d/:-]|\.\d)")


def _year_span(value: object, ctx: Context) -> Derivation | None:
    """``season: "2019-20"`` from "the 2019-2020 season", ``"2019/2020"`` from "FY 2019-20",
    ``"2022-2023"`` from "the 22/23 season": the same span of years the user said, written the
    other way (two digits each only for two years in a row)."""
    m = _YEAR_SPAN.fullmatch(value.strip()) if isinstance(value, str) and len(value) <= 16 else None
    if m is None or (span := _year_span_of(m)) is None:
        return None
    short = (span[0] % 100, span[1] % 100) if span[1] == span[0] + 1 else None
    for index, text in ctx.said:
        for found in itertools.islice(_YEAR_SPAN.finditer(text[:_READ]), _MAX_SPANS):
            if _year_span_of(found) == span:
                return index, f"{found[0]} -> {value}"
        for found in itertools.islice(_SHORT_YEAR_SPAN.finditer(text[:_READ]) if short else (), _MAX_SPANS):
            if (int(found[1]), int(found[2])) == short:
                return index, f"{found[0]} -> {value}"
    return None


_MONTH_DAY = re.compile(r"^(\d{1,2})-(\d{1,2})$")


def _month_day(value: object, ctx: Context) -> Derivation | None:
    """``date: "12-10"`` from "December 10th": a month and day (MM-DD, no year) the user named."""
    m = _MONTH_DAY.match(value.strip()) if isinstance(value, str) else None
    if m is None or not 1 <= int(m[1]) <= 12 or not 1 <= int(m[2]) <= 31:
        return None
    month, day = int(m[1]), int(m[2])
    names = "|".join(name for name, number in _MONTHS.items() if number == month)
    said_day = rf"0?{day}(?: (?:st|nd|rd|th))?"
    pattern = re.compile(rf" (?:(?:{names}) (?:the )?{said_day}|{said_day} (?:of )?(?:{names})) ")
    for index, text in ctx.normalised:
        if found := pattern.search(text):
            return index, f"{found[0].strip()} -> {value}"
    return None




def _stated_today(value: object, ctx: Context) -> Derivation | None:
    """``2021-10-14 08:00:00`` from "8 am tomorrow. Today is 2021-10-13.": relative words resolved
    against the date the user gave as today, when it is not the conversation's own date."""
    if not isinstance(value, str):
        return None
    said = " \n ".join(text for _, text in ctx.normalised)
    for index, text in ctx.said:
        if (stated := stated_today(text)) is None:
            continue
        anchor = stated.date()
        patterns = temporal_patterns(value.strip(), anchor)
        if patterns is not None and (found := patterns.search(said)):
            return index, f"{' '.join(f[0] for f in found)} from today {anchor.isoformat()} -> {value}"
    return None


def _later_day_of_a_said_month(value: object, ctx: Context) -> Derivation | None:
    """``return_date: 2024-11-18`` from "on the 14th of next month, coming back the 18th", or from
    "November 14th, back the 18th": a day said by its number alone after an earlier day of a
    month in the same message, a later day of that month (its year the next such month from
    the conversation's date)."""
    day = date_value(value)
    if day is None or not (todays := _todays(ctx)):
        return None
    names = "|".join(MONTHS[day.month - 1])
    months = [rf"(?:{names})"]
    if any(((t + relativedelta(months=1)).year, (t + relativedelta(months=1)).month) == (day.year, day.month) for t in todays):
        months.append("of next month")
    if any((t.year, t.month) == (day.year, day.month) for t in todays):
        months.append("this month")
    if not any(t <= day < t + relativedelta(months=12) for t in todays):
        return None  # the next such month: within a year of the conversation's date
    earlier = "|".join(str(d) for d in range(1, day.day))
    if not earlier:
        return None
    month = "|".join(months)
    pattern = re.compile(
        rf"(?: (?:{month}) (?:the )?0?(?:{earlier})(?: (?:st|nd|rd|th))?| (?:the )?0?(?:{earlier})(?: (?:st|nd|rd|th))? (?:of )?(?:{month}))"
        rf"(?: \S+){{0,8}}? the 0?{day.day}(?: (?:st|nd|rd|th))? "
    )
    for index, text in ctx.normalised:
        if (found := pattern.search(text[:_READ])) is None:
            continue
        after = text[found.end() :].split(maxsplit=1)
        if after and after[0] not in STOPWORDS and after[0] not in MONTH_NUMBER and not after[0].isdigit():
            continue  # "the 18th floor": an ordinal of something else
        return index, f"{found.group(0).strip()} -> {value}"
    return None


def _day_of_stated_month(value: object, ctx: Context) -> Derivation | None:
    """``2024-02-14`` from "what's on my calendar on the 14th? it's february 2024": a day of the
    month said by its number, in the month and year the conversation states, or in the
    conversation's own month (the next one for a day already past)."""
    day = date_value(value)
    if day is None:
        return None
    for today in _todays(ctx):
        ahead = today + relativedelta(months=1)
        if (ahead.year, ahead.month) == (day.year, day.month):
            nth = re.compile(rf" the 0?{day.day} (?:st|nd|rd|th) of next month ")
            for index, text in ctx.normalised:
                if found := nth.search(text[:_READ]):
                    return index, f"{found.group(0).strip()} from {today.isoformat()} -> {value}"
    month = "(?:" + "|".join(MONTHS[day.month - 1]) + ")"
    ordinal = re.compile(rf" the 0?{day.day} (?:st|nd|rd|th) ")
    stated = re.compile(rf" {month} (?:of )?{day.year} ")
    texts = [(index, text[:_READ]) for index, text in ctx.normalised]
    # the month stated, or the conversation's own: "since the 1st" on 6 February; "on the 3rd", past the 3rd, next month's
    current = ctx.today is not None and (
        (day.year, day.month) == (ctx.today.year, ctx.today.month)
        or (day.day < ctx.today.day and (day.year, day.month) == ((ctx.today + relativedelta(months=1)).year, (ctx.today + relativedelta(months=1)).month))
    )
    if not current and not any(stated.search(text) for _, text in texts):
        return None
    for index, text in texts:
        for found in itertools.islice(ordinal.finditer(text), _MAX_SPANS):
            after = text[found.end() :].split(maxsplit=1)
            if after and after[0] not in STOPWORDS and after[0] not in MONTH_NUMBER:
                continue  # "the 14th floor": an ordinal of something else
            return index, f"{found.group(0).strip()} of {day.strftime('%B %Y').lower()} -> {value}"
    return None


_TIMES_A = re.compile(r"\b(once|twice|thrice|[a-z]+ times|\d{1,2} times|\d{1,2}x)\s+(?:a|an|per|each|every)\s+(day|week|month|year|hour)\b", re.IGNORECASE)
_HOW_OFTEN = {"once": 1, "twice": 2, "thrice": 3}
_PERIOD_WORDS = {"day": {"day", "daily", "days"}, "week": {"week", "weekly", "weeks"}, "month": {"month", "monthly", "months"},
                 "year": {"year", "yearly", "annual", "annually", "years"}, "hour": {"hour", "hourly", "hours"}}


def _times_per_period(value: object, ctx: Context) -> Derivation | None:
    """``visits_per_day: 2`` from "dropping in twice a day": how many times in a period the user
    said, for a parameter whose name counts per that period."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 99:
        return None
    words = set(ctx.words)
    for index, text in ctx.said:
        for found in itertools.islice(_TIMES_A.finditer(text[:_READ]), _MAX_SPANS):
            said = found[1].lower()
            count = _HOW_OFTEN.get(said) or parse_number(said.removesuffix(" times").removesuffix("x"))
            if count == value and words & _PERIOD_WORDS[found[2].lower()]:
                return index, f"{found.group(0)} -> {value}"
    return None


def _epoch_seconds(value: object, ctx: Context) -> Derivation | None:
    """``from: 1714521600`` from "May 1st 2024 ... midnight UTC": a Unix timestamp (seconds, or
    milliseconds) of a date and time the user said, read as UTC; or read in a time zone the
    conversation names ("Asia/Tokyo", "UTC+9"), the day said or today and the time said
    (``expiration`` "until 3pm" on a Wednesday in Tokyo)."""
    if isinstance(value, str) and re.fullmatch(r"\d{10}|\d{13}", value.strip()):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    seconds = value / 1000 if 10**12 <= value < 10**13 else value
    if not 10**9 <= seconds < 4 * 10**9:
        return None
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    patterns = temporal_patterns(moment.strftime("%Y-%m-%dT%H:%M:%S"), moment.date())
    if patterns is None or patterns.date is None:
        return None
    for index, text in ctx.normalised:
        text = text[:_READ]
        if not (day := patterns.date.search(text)):
            continue
        if patterns.time is None:  # midnight: the start of the day said
            return index, f"{day.group(0).strip()} 00:00 UTC -> {value}"
        if clock := patterns.time.search(text):
            return index, f"{day.group(0).strip()} {clock.group(0).strip()} UTC -> {value}"
    for name, zone in _zones_named(ctx):
        local = datetime.fromtimestamp(seconds, tz=zone).replace(tzinfo=None)
        patterns = temporal_patterns(local.strftime("%Y-%m-%dT%H:%M:%S"), ctx.today or local.date())
        if patterns is None or patterns.date is None or patterns.time is None:
            continue
        said_day = local.date() == ctx.today or any(patterns.date.search(text[:_READ]) for _, text in ctx.normalised)
        clock = next(((i, m) for i, text in ctx.normalised if (m := patterns.time.search(text[:_READ]))), None)
        if said_day and clock is not None:
            return clock[0], f"{clock[1].group(0).strip()} {local:%Y-%m-%d} {name} -> {value}"
    return None


#: A time zone a conversation names: an IANA name ("Asia/Tokyo"), or an offset from UTC ("UTC+9",
#: "GMT-05:00").
_ZONE_NAMED = re.compile(r"\b([A-Z][a-z]+(?:/[A-Z][A-Za-z_-]+){1,2})\b|\b(?:UTC|GMT)\s?([+-]\d{1,2})(?::?(\d\d))?\b")


def _zones_named(ctx: Context) -> list[tuple[str, tzinfo]]:
    """The time zones the conversation names, in the order said (at most four)."""
    from zoneinfo import ZoneInfo

    zones: dict[str, tzinfo] = {}
    for _, text in ctx.said:
        for m in itertools.islice(_ZONE_NAMED.finditer(text[:_READ]), 8):
            try:
                if m[1]:
                    if m[1] in measures.installed_zones():  # a name the database holds: nothing else is looked up on disk
                        zones.setdefault(m[1], ZoneInfo(m[1]))
                elif -14 <= int(m[2]) <= 14:
                    hours = int(m[2])
                    zones.setdefault(m[0], timezone(timedelta(hours=hours, minutes=int(m[3] or 0) * (1 if hours >= 0 else -1))))
            except (ValueError, KeyError, OSError):  # no such zone
                continue
    return list(zones.items())[:4]


#: A span of time from now: "in 20 min", "in 2 hours", "for the next 2 hours", "45 minutes from now".
_FROM_NOW = re.compile(
    r"\b(?:in|for|for the next|within)\s+(\d{1,3}|an?|[a-z]+)\s*(min(?:ute)?s?|h(?:ou)?rs?|hours?)\b"
    r"|\b(\d{1,3})\s*(min(?:ute)?s?|h(?:ou)?rs?|hours?)\s+from now\b"
    r"|\b(?:the\s+)?(?:last|past|previous)\s+(?:(\d{1,3}|[a-z]+)\s+)?(min(?:ute)?s?|h(?:ou)?rs?|hours?)\b",  # back from now
    re.IGNORECASE,
)


def _from_stated_now(value: object, ctx: Context) -> Derivation | None:
    """``remind_at: 2024-11-12T09:30`` from "It's 9:10am on Tuesday 12 Nov 2024 ... remind me in
    20 min": a span of time from the clock time and the date the user said it is now (the time
    zone offset the model writes is not judged)."""
    if isinstance(value, int) and not isinstance(value, bool) and 10**9 <= value < 4 * 10**9:  # a Unix timestamp
        target = datetime.fromtimestamp(value, tz=timezone.utc).replace(tzinfo=None)
    else:
        parsed = parse_temporal(value.strip()) if isinstance(value, str) else None
        if parsed is None or parsed.date is None or parsed.time is None:
            return None
        target = datetime.combine(parsed.date, parsed.time)
    # the clock one message states (a system message's "Current time: ..."), the span any message
    # from it on asks for ("mute it for two hours")
    nows = [(index, stated) for index, text in ctx.said if (stated := stated_now(text)) is not None]
    if not nows:
        return None
    start, (now, clock) = nows[-1]
    for index, text in [(i, t) for i, t in ctx.said if i >= start][-_MAX_SPANS:]:
        for span in itertools.islice(_FROM_NOW.finditer(text[:_READ]), _MAX_SPANS):
            amount, unit = next((span[i], span[i + 1]) for i in (1, 3, 5) if span[i + 1])
            count = 1 if not amount or amount.lower() in ("a", "an", "the") else parse_number(amount)
            if not isinstance(count, (int, float)):
                continue
            step = relativedelta(minutes=count) if unit.lower().startswith("m") else relativedelta(hours=count)
            back = span[5] is not None or span[6] is not None
            if (now - step if back else now + step) == target:
                return index, f"{clock} {'-' if back else '+'} {span.group(0).strip()} -> {value}"
    # the same in another common language ("recuérdame en 2 horas"), read by dateparser from that clock
    for index, text in [(i, t) for i, t in ctx.said if i >= start][-_FOREIGN_MESSAGES:]:
        for span, when in _foreign_days(text[:_FOREIGN_READ], now.replace(second=0, microsecond=0)):
            if when == target and any(c.isdigit() for c in span):
                return index, f"{clock} + {span!r} -> {value}"
    return None


#: A media type as APIs take it ("application/pdf", "image/jpeg").
_MEDIA_TYPE = re.compile(r"[a-z]+/[a-z0-9][a-z0-9.+-]{0,80}")


def _media_type(value: object, ctx: Context) -> Derivation | None:
    """``mime_type: "application/pdf"`` from "find all the PDFs", ``"image/jpeg"`` from "my jpgs":
    the media type of a kind of file the user named by its extension (Python's ``mimetypes``
    table), for a parameter named or described as a MIME or content type."""
    if not isinstance(value, str) or not _MEDIA_TYPE.fullmatch(value.strip().lower()):
        return None
    if not ({"mime", "mimetype", "media", "content"} & set(ctx.words) or re.search(r"\bmime\b|\bmedia type\b|\bcontent[ -]type\b", ctx.description[:300], re.I)):
        return None
    for extension in mimetypes.guess_all_extensions(value.strip().lower()):
        said = (f" {extension[1:]} ", f" {extension[1:]}s ")  # "a csv", "the PDFs"
        if (index := next((i for i, text in ctx.normalised if any(w in text for w in said)), None)) is not None:
            return index, f"{extension[1:]} -> {value}"
    return None


def _written_without_marks(value: object, ctx: Context) -> Derivation | None:
    """``cuisine: "thai"`` from "un truc thaï", ``city: "Sao Paulo"`` from "São Paulo": words the
    user wrote with accents or other marks, written in plain letters as an API wants them. Only
    for a value in plain ASCII: stripping marks from other scripts (Japanese が) changes letters."""
    if not isinstance(value, str) or not 2 <= len(value) <= 60 or not value.isascii() or not any(c.isalpha() for c in value):
        return None
    words = normalise_text(value)
    return next(((index, f"{value} (said with its marks)") for index, text in ctx.normalised
                 if not text.isascii() and f" {words} " in unmarked(text[:_READ])), None)


def _named_day_as_typed(value: object, ctx: Context) -> Derivation | None:
    """``due_string: "tomorrow"`` from "due tmrw", ``day: "yesterday"`` from "spent yday": a day named
    relative to today, written as the user typed it otherwise ("tmrw", "tommorow", "yday"); the
    same day, whatever the conversation's date (``normalise.named_days_in``)."""
    if not isinstance(value, str) or len(value) > 40 or not named_day(value) or not (days := named_days_in(value)):
        return None
    return next(((index, f"{value} (the same day as said)") for index, text in ctx.said if days <= named_days_in(text)), None)


def _day_in_another_language(value: object, ctx: Context) -> Derivation | None:
    """``date: 2025-06-03`` from "una mesa para mañana" or "prenotare per sabato" on 2 June 2025,
    ``time: "09:00"`` from "내일 오전 9시" or "demain à 9h": a day or a time of day the user wrote
    in another common language (``guard.lexicon.DATE_LANGUAGES``; English is read by the rules
    above), read by dateparser against the conversation's date, the nearest such day ahead. A
    span of one or two letters ("Je") is no date; a span without a number says no time."""
    parsed = parse_temporal(value) if isinstance(value, str) else None
    if parsed is None or ctx.today is None:
        return None
    base = datetime.combine(ctx.today, datetime.min.time()).replace(hour=12)
    for index, text in ctx.said[-_FOREIGN_MESSAGES:]:
        for span, when in _foreign_days(text[:_FOREIGN_READ], base):
            if _counts_hours(span):
                continue  # "en 2 horas" from noon: a span from now, read against the clock a message states (``_from_stated_now``)
            if parsed.time is None and when.date() == parsed.date:
                return index, f"{span!r} -> {value}"
            timed = parsed.time is not None and any(c.isdigit() for c in span)
            if timed and when.time() == parsed.time and parsed.date in (None, when.date()):
                return index, f"{span!r} -> {value}"
            if parsed.time is not None and parsed.date == when.date() and (clock := _clock_said(parsed.time, ctx)):
                return index, f"{span!r}, {clock!r} -> {value}"  # the day in one phrase, the hour in another ("nächsten Dienstag ... um 13 Uhr")
    return None


@lru_cache(maxsize=1)
def _hour_words() -> frozenset[str]:
    return frozenset().union(*foreign_duration_words().values())


def _counts_hours(span: str) -> bool:
    """Whether a span dateparser read counts hours or minutes ("en 2 horas", "через 30 минут")."""
    words = _hour_words()
    return any(w in words for w in re.findall(rf"{WORD}", span.lower())) or any(w in span for w in words if unspaced(w))


def _clock_said(moment: time, ctx: Context) -> str | None:
    """The words of a message that say a time of day (``normalise``'s time forms: "13 uhr", "à 8h")."""
    patterns = temporal_patterns(moment.strftime("%H:%M"), ctx.today)
    if patterns is None or patterns.time is None:
        return None
    return next((m.group(0).strip() for _, text in ctx.normalised[-_FOREIGN_MESSAGES:] if (m := patterns.time.search(text[:_READ]))), None)


@lru_cache(maxsize=256)
def _foreign_days(text: str, base: datetime) -> tuple[tuple[str, datetime], ...]:
    from dateparser.search import search_dates  # slow to import: reached only for a date nothing else grounds

    days: list[tuple[str, datetime]] = []
    lowered = text.lower().replace("’", "'")
    words = set(re.findall(rf"{WORD}(?:'{WORD})?", lowered))
    for language, vocabulary in foreign_date_words().items():  # one at a time: asked for several, dateparser settles on one
        hits = [w for w in vocabulary if w in words or (unspaced(w) and w in lowered)]
        if not hits:
            continue  # no word of that language's days: nothing to read
        if all(w in MONTH_NUMBER for w in hits) and measures.identified_language(text) != language:
            continue  # "April", "August" alone: English months, which the English rules read, unless the text is Dutch or German
        try:
            found = search_dates(text, languages=[language], settings={"RELATIVE_BASE": base, "PREFER_DATES_FROM": "future"}) or []
        except Exception:  # dateparser raises many types on odd input
            found = []
        later = _later_day_periods(language)
        read = [(span, _past_noon(text, span, _at_hour(span, when), later)) for span, when in found if _names_a_day(span)]
        read += [start for span, when in read if (start := _range_start(text, span, when, _weekday_names(language))) is not None]
        # a weekday of a list dateparser read only the first of ("pazartesi ve salı"): the next such day
        read += [(name, base + timedelta(days=(number - base.weekday() - 1) % 7 + 1)) for name, number in _weekday_names(language).items()
                 if _holds_phrase(lowered, name) and not any(name in span.lower() for span, _ in read)]
        # the days either side of today as CLDR writes them, where dateparser does not know them ("ngày mai", "พรุ่งนี้")
        read += [(phrase, base + timedelta(days=offset)) for phrase, offset in relative_days().get(language, {}).items()
                 if not any(phrase in span.lower() for span, _ in read) and _holds_phrase(lowered, phrase)]
        days += read
    return tuple(dict.fromkeys(days))


#: The start of a range of days said before its end, with at most one short word between
#: ("od 21. do 25. července", "del 3 al 7 de agosto", "vom 3. bis 7. August"), ending a text; its
#: weekday may stand before it ("du lundi 3 au vendredi 7 mars").
_RANGE_START = re.compile(r"(?:([^\W\d_]+)\s+)?(?<![\d.])(\d{1,2})\.?\s*(?:[-\u2013]|\s[^\W\d_]{1,4})\s*$")
#: A day's span that starts with its weekday's name ("vendredi 7 mars 2025").
_WEEKDAY_FIRST = re.compile(r"([^\W\d_]+),?\s+\d")


def _range_start(text: str, span: str, when: datetime, weekdays: dict[str, int]) -> tuple[str, datetime] | None:
    """The first day of a range whose month only its last day names: the day said just before a
    day dateparser read, earlier in the same month; a weekday named with either day must be its own."""
    at = text.find(span)
    lead = _WEEKDAY_FIRST.match(span)
    if at <= 0 or not (span[:1].isdigit() or (lead and lead[1].lower() in weekdays)):
        return None
    if (m := _RANGE_START.search(text[max(0, at - 32) : at])) is None:
        return None
    first = int(m[2])
    if not 1 <= first < when.day:
        return None
    start = when.replace(day=first)
    if m[1] and m[1].lower() in weekdays and weekdays[m[1].lower()] != start.weekday():
        return None  # "du mardi 3 au ...": the 3rd is no Tuesday
    return f"{m[0].strip()} {span}", start


@lru_cache(maxsize=None)
def _later_day_periods(language: str) -> tuple[str, ...]:
    """One language's words for the afternoon and the evening and for "pm", lowercased (babel's
    CLDR day periods: "вечера", "de la tarde", "nachmittags", "du soir"); the night is left out
    ("в 2 ночи" is 2 am)."""
    from babel import Locale

    try:
        periods = Locale.parse(language).day_periods
    except Exception:  # an unknown locale names no periods
        return ()
    words = {
        name.lower().replace("’", "'") for context in ("format", "stand-alone") for width in ("wide", "abbreviated")
        for key, name in periods.get(context, {}).get(width, {}).items() if key.startswith(("afternoon", "evening")) or key == "pm"
    }
    return tuple(sorted(w for w in words if len(w.strip(".")) >= 2))


def _past_noon(text: str, span: str, when: datetime, periods: tuple[str, ...]) -> datetime:
    """A clock hour of 1-11 read in a span, moved past noon when the span or the words right after
    it name the afternoon or the evening ("завтра в 7 вечера": 19:00, "domani alle 3 del pomeriggio")."""
    if not periods or not 1 <= when.hour <= 11 or not any(c.isdigit() for c in span) or (at := text.find(span)) < 0:
        return when
    window = text[at : at + len(span) + 24].lower().replace("’", "'")
    return when + timedelta(hours=12) if any(_holds_phrase(window, p) for p in periods) else when


@lru_cache(maxsize=None)
def _weekday_names(language: str) -> dict[str, int]:
    """One language's weekday names, lowercased (babel's CLDR tables, wide, written and standing
    alone) -> Monday 0 ... Sunday 6; names of three letters or fewer ("di", "ma") left out."""
    from babel.dates import get_day_names

    names: dict[str, int] = {}
    for context in ("format", "stand-alone"):
        for number, name in get_day_names("wide", context=context, locale=language).items():
            if len(name) > 3:
                names.setdefault(name.lower(), number)
    return names


def _holds_phrase(lowered: str, phrase: str) -> bool:
    """Whether a lowercased text holds a phrase: inside a run of a script written without spaces,
    as a word of its own elsewhere."""
    if unspaced(phrase):
        return phrase in lowered
    return re.search(rf"(?<!\w){re.escape(phrase)}(?!\w)", lowered) is not None


#: A clock hour after the word for "at" in the common languages, ending a span dateparser read
#: as a day: "domani alle 15", "amanhã às 9", "mañana a las 8", "morgen um 7", "demain à 9".
_AT_HOUR = re.compile(r"\b(?:alle|all'|a las|a la|às|as|à|um|om|в|saat)\s*(\d{1,2})(?:[:.h](\d\d))?\s*(?:uhr|h|ore|horas?|heures?)?(?:\s+[^\W\d_]{1,3})?$", re.IGNORECASE)


def _at_hour(span: str, when: datetime) -> datetime:
    """The day dateparser read, at the hour the span ends with when dateparser left it out (it
    reads "domani alle 15" as tomorrow at noon)."""
    m = _AT_HOUR.search(span.strip())
    if m is None or int(m[1]) > 23 or int(m[2] or 0) > 59:
        return when
    return when.replace(hour=int(m[1]), minute=int(m[2] or 0), second=0, microsecond=0)


#: Each of the last messages a day in another language is looked for in, and how much of each:
#: dateparser reads a text once per language (~14 times), so both are bounded.
_FOREIGN_MESSAGES, _FOREIGN_READ = 4, 512
_GLUE_WORDS = frozenset("per de a à á le la el il um am an on at alle às ao por para pour op te den der".split())


def _names_a_day(span: str) -> bool:
    """Whether a span dateparser read has a word besides numbers and prepositions ("sabato", "16
    mai", "mañana a las 21:00", "내일"), not a number or a two-letter word read as a day ("20",
    "per 2", "Je")."""
    return any(w.lower() not in _GLUE_WORDS and (len(w) > 2 or unspaced(w)) for w in re.findall(r"[^\W\d_]+", span))


#: A parameter description that says its number is a clock time ("1400 for 2 PM", "HHMM").
_CLOCK_NUMBER = re.compile(r"\b(?:24[- ]?hour|hhmm|military time)\b|\b\d{3,4} for \d{1,2} ?[ap]\.?m\b", re.IGNORECASE)


def _clock_number(value: object, ctx: Context) -> Derivation | None:
    """``meetingTime: 1500`` from "a meeting at 3 PM": a clock time the user said, as the number
    of a 24-hour clock (hours times 100 plus minutes), for a parameter whose name says it is a time
    and whose description says it is written so."""
    if isinstance(value, str) and re.fullmatch(r"\d{3,4}", value.strip()):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 2359 or value % 100 > 59:
        return None
    if not {"time", "hour", "clock"} & set(ctx.words) or not _CLOCK_NUMBER.search(ctx.description[:300]):
        return None
    clock = f"{value // 100:02d}:{value % 100:02d}"
    patterns = temporal_patterns(clock, ctx.today or reference_clock().date())
    if patterns is None or patterns.time is None:
        return None
    for index, text in ctx.normalised:
        if found := patterns.time.search(text[:_READ]):
            return index, f"{found.group(0).strip()} -> {value}"
    return None


#: What the date-span rules read of a message (its first characters) and how many spans of it.
_READ = 4_096
_MAX_SPANS = 8

_PERIOD_PHRASE = re.compile(
    r" (?:(last|previous|this|current|next|coming) |(?:the )?(end|start|beginning) of (?:this|the) )(week|month|quarter|year)s? "
)


def _todays(ctx: Context) -> list[date]:
    """The conversation's date and any date the user stated as today."""
    found = [ctx.today] if ctx.today is not None else []
    for _, text in ctx.said:
        if (stated := stated_today(text[:_READ])) is not None and stated.date() not in found:
            found.append(stated.date())
    return found


def _period_bounds(today: date, which: str, unit: str) -> tuple[date, ...]:
    """The first and last day (and, for a week, its Friday) of the week, month, quarter or year that
    ``which`` (last, this, next) names, seen from ``today``."""
    step = {"last": -1, "previous": -1, "next": 1, "coming": 1}.get(which, 0)
    if unit == "week":
        monday = today - relativedelta(days=today.weekday()) + relativedelta(weeks=step)
        return monday, monday + relativedelta(days=4), monday + relativedelta(days=6)
    if unit == "month":
        first = today.replace(day=1) + relativedelta(months=step)
        return first, first + relativedelta(months=1, days=-1)
    if unit == "quarter":  # calendar quarters: January, April, July, October
        first = date(today.year, 3 * ((today.month - 1) // 3) + 1, 1) + relativedelta(months=3 * step)
        return first, first + relativedelta(months=3, days=-1)
    first = date(today.year + step, 1, 1)
    return first, date(first.year, 12, 31)


def _calendar_period(value: object, ctx: Context) -> Derivation | None:
    """``start_date: 2025-01-01`` / ``end_date: 2025-01-31`` from "last month" on 2025-02-10:
    the first or last day of the week, month or year the user named relative to today (the
    conversation's date, or the one they stated); "the end of this month" is its last day."""
    day = date_value(value)
    month = _ISO_MONTH.fullmatch(value.strip()) if isinstance(value, str) and day is None else None
    if month is not None and 1 <= int(month[2]) <= 12:
        day = date(int(month[1]), int(month[2]), 1)  # "month: 2025-09" from "last month": the month itself
    midnight = isinstance(value, str) and _AT_MIDNIGHT.search(value.strip()) is not None
    if day is None and isinstance(value, str) and (parsed := parse_temporal(value)) is not None and parsed.date and parsed.time:
        if parsed.time.replace(second=0) in (time(0, 0), time(23, 59)) or _clock_said(parsed.time, ctx):
            day = parsed.date  # "sometime this week", within working hours "09:00-18:00": its Friday at 18:00
    if day is None:
        return None
    todays = _todays(ctx)[:4]
    # an upper bound at midnight ("time_max": "2025-11-01T00:00:00Z" for next week's working days) ends before that day starts
    exclusive = month is None and (_exclusive_end(ctx) or (midnight and bool(UPPER_BOUND_WORDS & set(ctx.words))))
    # the latest messages first, a few spans in all (not a few a message)
    spans = ((index, m[0], m[1] or "this", m[2], m[3]) for index, text in reversed(ctx.normalised) for m in _PERIOD_PHRASE.finditer(text[:_READ]))
    for index, words, which, edge, unit in itertools.islice(itertools.chain(spans, _foreign_periods(ctx)), _MAX_SPANS):
        for today in todays:
            bounds = _period_bounds(today, which, unit)
            allowed = bounds[-1:] if edge == "end" else bounds[:1] if edge else bounds
            if month is not None:
                allowed = bounds[:1] if unit == "month" and not edge else ()
            elif exclusive and edge != "start":
                allowed = (*allowed, *(b + relativedelta(days=1) for b in bounds[1:]))  # "before": the day after the period (or its Friday)
            if day in allowed:
                return index, f"{words.strip()} from {today.isoformat()} -> {day.isoformat()}"
    return None


#: A quarter or a half of a year by its number ("Q3 2024", "q2 of this fiscal year", "the second
#: quarter of 2023", "H1 2025", "the first half"), in normalised text ("q 3 2024"), with the words after it.
_PART_OF_YEAR = re.compile(r" (?:(q|h) ([1-4])|(first|1st|second|2nd|third|3rd|fourth|4th) (quarter|half))((?: [\w]+){0,5})")
_ORDINAL = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
#: Where a conversation says its fiscal year starts: "our fiscal year begins on April 1", "FY starts in July".
_FISCAL_START = re.compile(rf" (?:fiscal|financial|fy)(?: year)? (?:begins|starts|runs from|begin|start|commences)(?: on| in)? ({'|'.join(MONTH_NUMBER)}) ")


def _part_of_year(value: object, ctx: Context) -> Derivation | None:
    """``start_date: 2024-07-01`` / ``end_date: 2024-09-30`` from "Q3 2024", or from "Q2 of this
    fiscal year" where the conversation says the fiscal year begins on April 1: the first or last
    day of a quarter or half of a year named by its number; without a year, of the (fiscal) year
    today falls in, or the last or next one. A fiscal year named by a year may start in it or
    end in it. An upper bound at midnight may be the day after."""
    day = date_value(value)
    if day is None:
        return None
    todays = _todays(ctx)[:4]
    starts = [1] + [MONTH_NUMBER[m[1]] for _, text in ctx.normalised for m in itertools.islice(_FISCAL_START.finditer(text[:_READ]), 2)][:2]
    exclusive = _exclusive_end(ctx) or (isinstance(value, str) and _AT_MIDNIGHT.search(value.strip()) is not None and bool(UPPER_BOUND_WORDS & set(ctx.words)))
    for index, text in ctx.normalised:
        for m in itertools.islice(_PART_OF_YEAR.finditer(text[:_READ]), _MAX_SPANS):
            size = 3 if (m[1] or "") == "q" or m[4] == "quarter" else 6
            number = int(m[2]) if m[2] else _ORDINAL[m[3]]
            rest = m[5].split()
            year = next((int(w) for w in rest if re.fullmatch(r"(?:19|20)\d\d", w)), None)
            if year is None and len(rest) >= 2 and rest[0] in ("fy", "of") and re.fullmatch(r"\d\d", rest[-1] if rest[0] == "fy" else rest[1]):
                year = 2000 + int(rest[1])  # "q3 fy 25"
            if (size == 6 and number > 2) or (m[1] == "h" and year is None and not {"fiscal", "year", "fy"} & set(rest)):
                continue  # "H1N1", "the third half"
            shift = -1 if {"last", "previous"} & set(rest[:3]) else 1 if "next" in rest[:3] else 0
            for start in dict.fromkeys(starts):
                years = {year, year - 1} if year is not None and start != 1 else {year} if year is not None else {
                    (t.year if t.month >= start else t.year - 1) + shift for t in todays
                }
                for fiscal_year in years:
                    first = date(fiscal_year, start, 1) + relativedelta(months=size * (number - 1))
                    last = first + relativedelta(months=size, days=-1)
                    if day in (first, last) or (exclusive and day == last + timedelta(days=1)):
                        return index, f"{m[0].strip()} -> {first.isoformat()} to {last.isoformat()}"
    return None


#: "the week of May 6", "week of the 14th": a week named by one of its days.
_WEEK_OF = re.compile(r" (?:the )?week of (?:the )?((?:\S+ ){1,4})")


#: The units a parameter counts back in ("nights_ago", "days_ago"), and the words that say one of
#: them back or none: "last night" is one night ago, "yesterday" one day, "tonight" none.
_AGO_UNITS = {"night": ("night", "nights"), "day": ("day", "days"), "week": ("week", "weeks"), "month": ("month", "months"), "hour": ("hour", "hours")}
_ONE_BACK = {"night": " last night ", "day": " yesterday ", "week": " last week ", "month": " last month ", "hour": " last hour "}
_NONE_BACK = {"night": " tonight ", "day": " today ", "week": " this week ", "month": " this month ", "hour": " this hour "}


def _units_ago(value: object, ctx: Context) -> Derivation | None:
    """``nights_ago: 1`` from "how'd I sleep last night", ``days_ago: 3`` from "3 days ago": a
    count back in the unit the parameter names."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 366 or "ago" not in ctx.words:
        return None
    unit = next((u for u, forms in _AGO_UNITS.items() if set(forms) & set(ctx.words)), None)
    if unit is None:
        return None
    said = {1: [_ONE_BACK[unit]], 0: [_NONE_BACK[unit]]}.get(value, []) + [f" {value} {form} ago " for form in _AGO_UNITS[unit]]
    if value in range(2, 13):
        said += [f" {number_words(value)} {form} ago " for form in _AGO_UNITS[unit]]
    return next(((index, f"{phrase.strip()} -> {value}") for index, text in ctx.normalised for phrase in said if phrase in text), None)


#: A span back from now as query languages and APIs write it: "7d", "now-24h", "-2w",
#: "newer_than:2d" (an operator before it), "7daysAgo" (Google Analytics).
_SPAN_TOKEN = re.compile(r"(?:[a-z_]+:|now-|-)?(\d{1,4})\s*([a-z]+?)(?:ago)?", re.IGNORECASE)


def _span_token(value: object, ctx: Context) -> Derivation | None:
    """``query: "newer_than:2d"`` or ``start_date: "7daysAgo"`` from "the last 2 days" / "last 7
    days", ``since: "now-14d"`` from "the past two weeks": a span back from now in a query
    language's or an API's own notation, whose count and unit the user said; and the end of such
    a span, ``end_date: "yesterday"`` or ``"today"``."""
    if not isinstance(value, str):
        return None
    if value.strip().lower() in ("today", "yesterday", "now") and set(ctx.words) & UPPER_BOUND_WORDS:
        for index, text in ctx.normalised:
            if m := re.search(r" (?:last|past|previous) (?:\d+ |[a-z]+ )?(?:days?|weeks?|months?|hours?) ", text[:_READ]):
                return index, f"the end of {m[0].strip()!r} -> {value}"
        return None
    m = _SPAN_TOKEN.fullmatch(value.strip())
    # its unit by the codes of ``_UNITS`` ("m" is minutes in metrics, months in mail: both)
    units = [unit for unit, (codes, _, _) in _UNITS.items() if m is not None and m[2].lower() in codes]
    if m is None or not units:
        return None
    count = int(m[1])
    said: list[tuple[int, str]] = []
    for unit in units:
        said.append((count, unit))
        _, kind, size = _UNITS[unit]
        # the same span in a larger unit it makes a whole number of: 14 days said as "2 weeks"
        said += [(count * size // other_size, other) for other, (_, other_kind, other_size) in _UNITS.items()
                 if other_kind == kind and other_size > size and (count * size) % other_size == 0]
    for index, text in ctx.normalised:
        for n, unit in said:
            numbers = [str(n)] + ([number_words(n)] if n <= 99 else []) + (["a", "one", "last", "past"] if n == 1 else [])
            if any(f" {number} {unit}{'s' if n != 1 else ''} " in text for number in numbers):
                return index, f"{n} {unit}{'s' if n != 1 else ''} -> {value}"
    return None


#: A search operator that bounds a query by a date, as mail and issue trackers write it:
#: "after:2025/06/10", "before:2025-06-01", "since:2025-06-10".
_DATE_OPERATOR = re.compile(r"(after|before|since|until|newer|older):(\d{4})[/-](\d{1,2})[/-](\d{1,2})", re.IGNORECASE)


def _date_operator(value: object, ctx: Context) -> Derivation | None:
    """``query: "after:2025/06/10"`` from "my inbox from this morning" on 10 June 2025, or from
    "anything since June 10": a search operator with a date the user named, in its notation."""
    m = _DATE_OPERATOR.fullmatch(value.strip()) if isinstance(value, str) else None
    if m is None:
        return None
    try:
        day = date(int(m[2]), int(m[3]), int(m[4]))
    except ValueError:
        return None
    for today in _todays(ctx) or [None]:
        patterns = temporal_patterns(day.isoformat(), today) if today is not None else None
        for index, text in ctx.normalised:
            if today is not None and (day - today).days in named_days_in(text):
                return index, f"{m[1]}: the day named -> {value}"
            if patterns is not None and patterns.date is not None and (found := patterns.date.search(text[:_READ])):
                return index, f"{found[0].strip()} -> {value}"
    return None


def _week_of(value: object, ctx: Context) -> Derivation | None:
    """``end_date: 2024-05-10`` from "the week of May 6": the first day, the Friday or the Sunday
    of the week a day the user named falls in."""
    day = date_value(value)
    if day is None:
        return None
    monday = day - timedelta(days=day.weekday())
    for index, text in ctx.normalised:
        for m in itertools.islice(_WEEK_OF.finditer(text[:_READ]), 4):
            for named in (monday + timedelta(days=i) for i in range(7)):
                patterns = temporal_patterns(named.isoformat(), ctx.today or named)
                if patterns is not None and patterns.date is not None and patterns.date.search(m[1]) and day in _period_bounds(named, "this", "week"):
                    return index, f"{m[0].strip()} -> {day.isoformat()}"
    return None


_OFFSET_WORDS = {-1: "last", 0: "this", 1: "next"}


def _foreign_periods(ctx: Context) -> Iterable[tuple[int, str, str, None, str]]:
    """Last, this or next week, month or year said in another common language ("el mes pasado",
    "先月"; ``lexicon.relative_periods``), as the English phrases are read."""
    phrases, pattern = relative_periods(), _foreign_period_pattern()
    for index, text in reversed(ctx.said):
        for m in itertools.islice(pattern.finditer(text[:_READ].lower().replace("’", "'")), _MAX_SPANS):
            offset, unit = phrases[m[0]]
            yield index, m[0], _OFFSET_WORDS[offset], None, unit


@lru_cache(maxsize=1)
def _foreign_period_pattern() -> re.Pattern[str]:
    """Every phrase of ``lexicon.relative_periods`` in one pattern, longest first; a phrase of a
    spaced script as whole words ("la mesa pasada" holds no "mes pasado")."""
    phrases = sorted(relative_periods(), key=len, reverse=True)
    return re.compile("|".join(re.escape(p) if unspaced(p) else rf"(?<![^\W\d_]){re.escape(p)}(?![^\W\d_])" for p in phrases))


#: A timestamp at the very start of its day ("2025-11-01T00:00:00Z").
_AT_MIDNIGHT = re.compile(r"\d[T ]00:00(?::00(?:\.0+)?)?(?:Z|[+-]\d\d:?\d\d)?$")


def _exclusive_end(ctx: Context) -> bool:
    """Whether a parameter is an upper bound that leaves its day out: named "before" (a search's
    ``before: 2024-05-01`` for "last month" in April), or described as exclusive."""
    return "before" in ctx.words or bool(re.search(r"\bexclusive\b", ctx.description, re.IGNORECASE))


_WEB_ADDRESS = re.compile(r"^https?://(?:www\.)?([^\s/?#@]+\.[a-z]{2,}(?:[/?#]\S*)?)$", re.IGNORECASE)
_SCHEME = re.compile(r"^(?:https?://)?(?:www\.)?", re.IGNORECASE)


def _web_address(value: object, ctx: Context) -> Derivation | None:
    """``url: "https://github.com"`` from "is github.com down": a web address the user wrote
    without its scheme or "www.", written in full (the same host and path, nothing added)."""
    if not isinstance(value, str) or (m := _WEB_ADDRESS.match(value.strip())) is None:
        return None
    bare = m[1].rstrip("/").lower()
    for index, text in ctx.said:
        for token in text[:_READ].split():
            written = _SCHEME.sub("", token.strip("'\"()<>[]").rstrip(".,;:!?")).rstrip("/").lower()
            if written == bare:
                return index, f"{token} -> {value}"
    return None


#: The root of a site: "https://github.com", "www.bbc.co.uk/", "theguardian.com".
_SITE_ROOT = re.compile(r"^(?:https?://)?(?:www\.)?([a-z0-9-]{2,63})\.(?:[a-z]{2,12}|co\.[a-z]{2}|com\.[a-z]{2})/?$", re.IGNORECASE)


def _site_root(value: object, ctx: Context) -> Derivation | None:
    """``url: "https://github.com"`` from "a screenshot of GitHub's homepage": the root address of
    a site the user named by its homepage (``text.named_sites``), its name run together as the
    host's ("The Guardian": theguardian.com)."""
    if not isinstance(value, str) or (m := _SITE_ROOT.match(value.strip())) is None:
        return None
    host = m[1].lower()
    for index, text in ctx.said:
        for _, name in named_sites(text):
            if re.sub(r"[^a-z0-9]", "", name.lower()) in (host, host.replace("-", "")):
                return index, f"{name}'s homepage -> {value}"
    return None


_NIGHTS = re.compile(r" (\d{1,2}|an?|" + "|".join(number_words(n) for n in range(1, 31)) + r") (nights?|days?|weeks?) (before|prior|earlier|ahead)?")


def _shifted_time(value: object, ctx: Context) -> Derivation | None:
    """``end: 2025-08-20T15:15:00`` from "a 45-minute meeting tomorrow at 2:30pm"; ``start_time:
    2025-07-10T14:00:00Z`` from "July 10, 2025 at 3pm London time": a date-time the user stated,
    moved by a length of time they stated (where something they gave a start and a length ends),
    or a stated local time written in UTC from the zone of a city or an IANA zone they named."""
    if not isinstance(value, str) or (parsed := parse_temporal(value.strip())) is None or parsed.time is None:
        return None
    at = datetime.combine(parsed.date or date(2000, 1, 1), parsed.time)
    said = " \n ".join(text[:_READ] for _, text in ctx.normalised[-_MAX_SPANS:])
    starts: list[tuple[datetime, str]] = []
    for span in measures.stated_spans((text for _, text in ctx.said[-_MAX_SPANS:]), 14 * 24 * 60):
        # "every 8 hours starting at 8am": each time of the day the interval comes round again
        times = 24 * 60 // span.minutes if span.every else 1
        starts += [(at - timedelta(minutes=k * span.minutes), f"{k} x {span.words} after" if times > 1 else f"{span.words} after")
                   for k in range(1, min(times, 24) + 1)]
    if parsed.date is not None and (moment := _aware(value)) is not None:
        starts += [(moment.astimezone(zone).replace(tzinfo=None), f"{zone.key} time of") for zone in measures.zones_named(said)]
    today = ctx.today or date.min
    for start, how in starts[:_MAX_STARTS]:
        written = start.isoformat(timespec="seconds") if parsed.date else start.time().isoformat(timespec="seconds")
        patterns = temporal_patterns(written, today)
        if patterns is not None and (found := patterns.search(said)):
            index = next((i for i, text in reversed(ctx.normalised) if found[-1][0] in text), ctx.normalised[-1][0])
            return index, f"{how} {' '.join(m[0].strip() for m in found)} -> {value}"
    return None


#: How many moved start times one value is checked against (each is a pattern search).
_MAX_STARTS = 32


def _aware(value: str) -> datetime | None:
    """A date-time value with its UTC offset ("...Z", "+02:00"); None without one."""
    try:
        moment = datetime.fromisoformat(value.strip().replace("z", "Z"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _stay_end(value: object, ctx: Context) -> Derivation | None:
    """``check_out: 2024-08-14`` from "4 nights starting August 10 2024": the end of a stay or a
    span of days, weeks the user gave with its start (a date they wrote, in any form); a span
    said "before" a date reaches back from it ("due dec 10, remind me 3 days before": Dec 7)."""
    day = date_value(value)
    if day is None or ctx.today is None:
        return None
    said = " \n ".join(text[:_READ] for _, text in ctx.normalised[-_MAX_SPANS:])
    spans = ((index, m) for index, text in reversed(ctx.normalised) for m in _NIGHTS.finditer(text[:_READ]))
    for index, m in itertools.islice(spans, _MAX_SPANS):  # the latest messages first, a few spans in all
        n = 1 if m[1] in ("a", "an") else int(m[1]) if m[1].isdigit() else parse_number(m[1])
        if not isinstance(n, (int, float)) or not 1 <= n <= 60:
            continue
        span = relativedelta(days=int(n) * (7 if m[2].startswith("week") else 1))
        start = day + span if m[3] else day - span  # "3 days before" Dec 10 is Dec 7: the date said is after the value
        patterns = temporal_patterns(start.isoformat(), ctx.today)
        if patterns is not None and (found := patterns.search(said)):
            return index, f"{m[1]} {m[2]} {m[3] or 'from'} {found[0][0]} -> {day.isoformat()}"
    if _STAY_WORDS & set(ctx.words) and (patterns := temporal_patterns((day - relativedelta(days=1)).isoformat(), ctx.today)) is not None:
        # "a hotel for Saturday night", "a room tonight": one night, out the next morning
        for index, text in reversed(ctx.normalised):
            for m in itertools.islice(patterns.date.finditer(text[:_READ]) if patterns.date else (), _MAX_SPANS):
                if m[0].endswith("tonight") or text[m.end() : m.end() + 6] == " night":
                    return index, f"{m[0]} night -> {day.isoformat()}"
    return None


#: Parameter words for the day a stay ends.
_STAY_WORDS = frozenset({"checkout", "out"})  # check_out, checkOut, checkout_date; not a flight's departure


#: Where a part of the day begins and ends, as a search window is written ("Thursday afternoon":
#: 12:00 to 17:00 or 18:00).
_DAY_PART_BOUNDS = {
    "morning": ((6, 0), (8, 0), (9, 0), (12, 0)),
    "afternoon": ((12, 0), (13, 0), (17, 0), (18, 0)),
    "evening": ((17, 0), (18, 0), (21, 0), (22, 0), (23, 59)),
}
#: Parameter words that name the bound of a window of time (not "start": an event starts at one time).
_BOUND_WORDS = frozenset({"min", "max", "from", "to", "after", "before", "since", "until", "earliest", "latest", "window"})


def _day_part_bound(value: object, ctx: Context) -> Derivation | None:
    """``time_min: 2025-06-12T12:00:00+01:00`` and ``time_max: ...T18:00:00+01:00`` from "a slot
    thursday afternoon": the start or the end of a part of the day the user named, for a parameter
    that bounds a window of time (a lookup's ``start`` and ``end`` too), on a day they named (or
    with no day)."""
    bounds = _BOUND_WORDS | ({"start", "end"} if ctx.lookup else set())
    if not isinstance(value, str) or not bounds & set(ctx.words) or (parsed := parse_temporal(value.strip())) is None:
        return None
    said = " \n ".join(text[:_READ] for _, text in ctx.normalised[-_MAX_SPANS:])
    midnight = parsed.time is None and re.search(r"\d[T ]00:00(?::00)?(?!:\d\d?[1-9])", value) is not None  # read as a date alone
    if parsed.date is not None and midnight and _BOUND_WORDS & set(ctx.words) & UPPER_BOUND_WORDS:
        # a window's end written as the midnight after its last day ("this weekend": until Monday 00:00)
        before = parsed.date - timedelta(days=1)
        patterns = temporal_patterns(before.isoformat(), ctx.today or before)
        if patterns is not None and (found := patterns.search(said)):
            return None, f"the midnight after {found[0][0]} -> {value}"
        if foreign := _day_in_another_language(before.isoformat(), ctx):  # "c'est quoi mon agenda vendredi ?"
            return foreign[0], f"the midnight after {foreign[1]}"
    if parsed.time is None or parsed.time.second:
        return None
    for part, bounds in _DAY_PART_BOUNDS.items():
        if (parsed.time.hour, parsed.time.minute) not in bounds or not re.search(rf"(?<!\S){part}s?(?!\S)", said):
            continue
        if parsed.date is None:
            return None, f"{part} -> {value}"
        patterns = temporal_patterns(parsed.date.isoformat(), ctx.today or parsed.date)
        if patterns is not None and (found := patterns.search(said)):
            return None, f"{found[0][0]} {part} -> {value}"
    return None


#: Parameter words that count people.
_PEOPLE_WORDS = frozenset({"adults", "adult", "guests", "guest", "people", "persons", "party", "travelers", "travellers", "passengers", "pax", "diners", "attendees"})
_RELATIONS = r"(?:wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|spouse|friend|mum|mom|mother|dad|father|son|daughter|sister|brother|colleague|boss|roommate|flatmate)"
#: Two people: the speaker and one other ("me and my wife", "my husband and I", "me and Sam").
_TWO_OF_US = re.compile(
    rf"\b(?:me|i|myself) and (?:my {_RELATIONS}|(?-i:[A-Z][a-z]+))\b(?! and\b)(?!, \w+ and\b)|\bmy {_RELATIONS} and (?:me|i|myself)\b",
    re.IGNORECASE,
)


def _two_of_us(value: object, ctx: Context) -> Derivation | None:
    """``adults: 2`` from "me and my wife, economy is fine": the speaker and one other person they
    named, for a parameter that counts people."""
    if value not in (2, "2") or isinstance(value, bool) or not _PEOPLE_WORDS & set(ctx.words):
        return None
    for index, text in reversed(ctx.said[-_MAX_SPANS:]):
        if m := _TWO_OF_US.search(text[:_READ]):
            return index, f"{m[0]} -> 2"
    return None


#: A request for the speaker alone: "just me", "only me", "by myself", "solo", or a trip, a booking or a
#: table "for me"/"find me" with nobody else and no number of people in it.
_JUST_ME = re.compile(r"\b(?:just|only) (?:me|myself|1|one)\b|\bby myself\b|\b(?:travell?ing )?solo\b|\bon my own\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|myself|i'm|i’m|im)\b", re.IGNORECASE)
_OTHERS = re.compile(
    rf"\b(?:we|us|our|ourselves|family|kids?|children|group|team|friends?|colleagues|together|{'|'.join(sorted(_PEOPLE_WORDS))}|{_RELATIONS}s?)\b"
    rf"|\b(?:two|three|four|five|six|seven|eight|nine|ten|\d+) (?:of|tickets|seats|rooms|{'|'.join(sorted(_PEOPLE_WORDS))})\b"
    r"|\b(?:and|with|plus) (?-i:[A-Z][a-z]+)\b",
    re.IGNORECASE,
)


def _just_me(value: object, ctx: Context) -> Derivation | None:
    """``adults: 1`` from "find me a flight wed evening from boston" or "just me, economy": the
    speaker alone, for a parameter that counts people, when the user's words name nobody else
    and no number of people."""
    if value not in (1, "1") or isinstance(value, bool) or not _PEOPLE_WORDS & set(ctx.words):
        return None
    users = ctx.said[-_MAX_SPANS:]
    if any(_OTHERS.search(text[:_READ]) for _, text in users if not _JUST_ME.search(text[:_READ])):
        return None
    for index, text in reversed(users):
        if m := _JUST_ME.search(text[:_READ]):
            return index, f"{m[0]} -> 1"
    index, latest = users[-1] if users else (None, "")
    if m := _FIRST_PERSON.search(latest[:_READ]):  # the request itself is the speaker's own ("find me a flight")
        return index, f"{m[0]} -> 1"
    return None


#: Parameter words of when a reminder or a notification goes off.
_REMINDER_WORDS = frozenset({"remind", "reminder", "notify", "notification", "alert", "alarm"})


def _reminder_default(value: object, ctx: Context) -> Derivation | None:
    """``remind_at: 2025-10-20T09:00:00-04:00`` from "remind me on the 20th to pay the rest": a
    reminder on a day the user named without a time, set at the morning hour reminder apps use
    (8 or 9 am)."""
    if not isinstance(value, str) or not _REMINDER_WORDS & set(ctx.words) or (parsed := parse_temporal(value.strip())) is None:
        return None
    if parsed.date is None or parsed.time is None or (parsed.time.hour, parsed.time.minute, parsed.time.second) not in ((8, 0, 0), (9, 0, 0)):
        return None
    patterns = temporal_patterns(parsed.date.isoformat(), ctx.today or parsed.date)
    for index, text in reversed(ctx.normalised[-_MAX_SPANS:]):
        if patterns is not None and (found := patterns.search(text[:_READ])):
            return index, f"{found[0][0]} at the morning default -> {value}"
    return None


#: Payment terms: "net 30", "net-60", "Net 15 days": due that many days after the invoice.
_NET_TERMS = re.compile(r"(?<![a-z])net (\d{1,3})(?: days?)?(?! (?:dollars|euros|pounds|percent|kg|lbs?|profit|income|loss|weight)(?!\S))(?!\S)")


def _payment_terms(value: object, ctx: Context) -> Derivation | None:
    """``due_date: 2026-04-13`` from "invoice brightline ..., net 30" on 2026-03-14: the day
    payment terms the user stated fall due, counted from today."""
    day = date_value(value)
    if day is None or ctx.today is None:
        return None
    for index, text in reversed(ctx.normalised[-_MAX_SPANS:]):
        for m in itertools.islice(_NET_TERMS.finditer(text[:_READ]), 4):
            if ctx.today + timedelta(days=int(m[1])) == day:
                return index, f"{m[0]} from today -> {day.isoformat()}"
    return None


def _weekday_after_date(value: object, ctx: Context) -> Derivation | None:
    """``check_out: 2024-03-15`` from "check in on March 11 ... out Friday": the weekday the user
    named, in the six days after a date they stated in any form (the end of a stay, a trip or a
    range that began on that date)."""
    day = date_value(value)
    if day is None:
        return None
    weekday = _WEEKDAYS[day.weekday()]
    named = [index for index, words in ctx.normalised if f" {weekday} " in words]
    if not named:
        return None
    said = " \n ".join(text[:_READ] for _, text in ctx.normalised[-_MAX_SPANS:])
    today = ctx.today or date.min  # without a today, only dates written out can start the range
    for back in range(1, 7):
        patterns = temporal_patterns((day - timedelta(days=back)).isoformat(), today)
        if patterns is not None and (found := patterns.search(said)) and weekday not in found[0][0]:
            return named[-1], f"{weekday} after {found[0][0].strip()} -> {day.isoformat()}"
    return None


_FREQUENCY_WORDS = {"1": "once", "one": "once", "2": "twice", "two": "twice", "3": "thrice", "three": "thrice"}
_TIMES = re.compile(r"\b(1|one|2|two|3|three) times?\b")


def _frequency(value: object, ctx: Context) -> Derivation | None:
    """``"2 times per week"`` from "twice per week": "once", "twice", "thrice" written as counts."""
    if not isinstance(value, str):
        return None
    text = normalise_text(value)
    rewritten = _TIMES.sub(lambda m: _FREQUENCY_WORDS[m[1]], text)
    if rewritten == text:
        return None
    if (index := _said_phrase(rewritten, ctx)) is not None:
        return index, f"{rewritten} -> {value}"
    return None


#: What the user says for each repetition of an iCalendar rule (RFC 5545 ``FREQ``), normalised.
_FREQ_SAID = {
    "DAILY": r"daily|every day|each day|every (?:morning|evening|night)",
    "WEEKLY": rf"weekly|biweekly|fortnightly|(?:every|each) (?:other |second |\d+ |two |three )?(?:week|wk|{WEEKDAY_OR_SHORT_PATTERN}|weekday)",
    "MONTHLY": r"monthly|(?:every|each) (?:other |second |\d+ |two |three )?month",
    "YEARLY": r"yearly|annually|(?:every|each) (?:other |\d+ |two )?year",
}
#: ``INTERVAL`` as said: every other week or day is 2.
_INTERVAL_SAID = {2: r"every (?:other|second|2|two)\b|biweekly|fortnightly", 3: r"every (?:3|three|third)\b"}
_RRULE_DAYS = dict(zip(("MO", "TU", "WE", "TH", "FR", "SA", "SU"), WEEKDAYS))


def _recurrence_rule(value: object, ctx: Context) -> Derivation | None:
    """``rrule: "FREQ=WEEKLY;INTERVAL=2;BYDAY=FR"`` from "every other friday": an iCalendar
    recurrence rule (RFC 5545) every part of which the user said: how often, the interval, the
    weekdays (by name, or "weekdays"), their order in the month ("the first monday"), the day of
    the month and the count. A rule with any other part (``UNTIL``, ``BYHOUR``...) is not judged here."""
    if not isinstance(value, str) or not 0 < len(value) <= 200 or "FREQ=" not in value.upper():
        return None
    try:
        parts = dict(part.split("=", 1) for part in value.strip().upper().removeprefix("RRULE:").split(";") if part)
    except ValueError:
        return None
    if not set(parts) <= {"FREQ", "INTERVAL", "BYDAY", "BYMONTHDAY", "COUNT", "WKST"} or parts.get("FREQ") not in _FREQ_SAID:
        return None
    for index, text in ctx.normalised:
        said = text[:_READ]
        if not re.search(rf" (?:{_FREQ_SAID[parts['FREQ']]})s? ", said):
            continue
        interval = int(parts.get("INTERVAL", "1")) if parts.get("INTERVAL", "1").isdigit() else None
        if interval is None or (interval > 1 and not re.search(_INTERVAL_SAID.get(interval, rf"every {interval}\b"), said)):
            continue
        if interval == 1 and re.search(_INTERVAL_SAID[2], said):
            continue  # "every other friday" is no weekly rule
        days = [d for d in parts.get("BYDAY", "").split(",") if d]
        if not all(_rrule_day_said(d, said) for d in days):
            continue
        if (day := parts.get("BYMONTHDAY")) is not None and not (
            day.isdigit() and re.search(rf" (?:the {int(day)}(?: (?:st|nd|rd|th))?|{int(day)} (?:st|nd|rd|th)) ", said)
        ):
            continue  # the day of the month as a date says it ("the 1st", "on the 15")
        if (count := parts.get("COUNT")) and f" {count} " not in said and f" {number_words(int(count)) if count.isdigit() else count} " not in said:
            continue
        if parts.get("WKST", "MO") not in ("MO", "SU"):
            continue
        return index, f"every part said -> {value}"
    return None


def _rrule_day_said(day: str, said: str) -> bool:
    """Whether an RRULE ``BYDAY`` entry ("FR", "1MO", "-1FR") was said: its weekday by name or
    short form, or among "weekdays"/"weekends", with its order in the month when it has one."""
    m = re.fullmatch(r"([+-]?\d)?(MO|TU|WE|TH|FR|SA|SU)", day)
    if m is None:
        return False
    name = _RRULE_DAYS[m[2]]
    forms = "|".join((name, *WEEKDAY_SHORT[name]))
    if m[1]:
        order = "last" if int(m[1]) == -1 else ORDINALS.get(int(m[1]))
        return order is not None and re.search(rf" (?:{order}) (?:{forms})s? ", said) is not None
    group = "weekdays|every weekday|workdays" if m[2] not in ("SA", "SU") else "weekends|every weekend"
    return re.search(rf" (?:{forms})s? ", said) is not None or re.search(rf" (?:{group}) ", said) is not None


# --- what a description says a value means ----------------------------------------------------

_DESCRIBED_MEANING = re.compile(
    r"""['"]?([\w.#+-]+)['"]?\s+(?:for|means|=)\s+(?:['"]([^'"]{2,40})['"]|((?:[^.,;:)'"]|'s\b){2,40}))"""
)
#: A meaning that is the user's own thing ("the user's main calendar", "the current user"): said
#: when the user says "my calendar" (or, for the user alone, "me", "I", "my").
_USERS_OWN = re.compile(r"^(?:the )?(?:current |authenticated |signed in |logged in )?user(?: s)?(?: (?:own|main|default|primary))?((?: \w+)*)$")
#: A default a description states: "default is 1.0", "defaults to 'primary'", "default: 5", and a
#: default word ending the clause ("- default metric"; not "the default settings are used").
_DESCRIBED_DEFAULT = re.compile(
    r"""\bdefaults?(?:\s+value)?(?:(?:\s*(?:is|to|of|:|=)\s*['"]?|\s*['"])([^\s'",;)]+)|\s+([^\s'",;)]+)(?=\s*(?:$|[.,;)])))""", re.IGNORECASE
)


def _described_meaning(value: object, ctx: Context) -> Derivation | None:
    """``patternId: 303`` when the description says "e.g., 303 for 'infinite loops'" and the user
    asked about infinite loops: the schema itself maps the words to the value."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    wanted = str(value).strip().casefold()
    for m in _DESCRIBED_MEANING.finditer(ctx.description):
        meaning = m[2] or m[3]
        if m[1].casefold() != wanted:
            continue
        if (index := _said_phrase(meaning, ctx)) is not None:
            return index, f"{meaning.strip()} -> {value} (the description's mapping)"
        if own := _USERS_OWN.match(normalise_text(meaning)):
            said = [f" my {noun} " for noun in own[1].split()[-1:]] or [" me ", " i ", " my "]
            for index, text in ctx.normalised:
                if words := next((p for p in said if p in text), None):
                    return index, f"{words.strip()} -> {value} ({meaning.strip()}, the description's mapping)"
    return None


#: Where a description starts listing the values a parameter takes: "Possible values are [...]",
#: "one of: a, b, c", "either X or Y"; or, with a colon, "[Enum]: [...]", "Internal stage id: a, b, c".
#: Examples ("e.g. AAPL, MSFT") are no such list: a value copied from them is still looked for.
_CHOICES_INTRO = re.compile(
    r"\b(?:(?:(?:possible|allowed|valid|supported|accepted|available|permitted)\s+(?:values|options|choices|types|modes|ids?)"
    r"(?:\s+(?:are|is|include|includes))?|(?:must\s+be\s+)?one\s+of(?:\s+the\s+following)?|either)\s*:?"
    r"|(?:enum|options|choices|ids?|values|types|modes|kinds|statuses|stages?)\]?\s*:)\s*",
    re.IGNORECASE,
)
_CHOICE_ITEM = r"""['"`]?([\w.+-]{1,40})['"`]?"""
_CHOICE_NEXT = rf"\s*(?:,\s*(?:or|and)\b|,|\||/|\bor\b)\s*{_CHOICE_ITEM}"
_CHOICE_LIST = re.compile(rf"[\[(]?\s*{_CHOICE_ITEM}((?:{_CHOICE_NEXT}){{1,40}})")
#: A description that only lists a few lowercase alternatives: "metric or imperial", "asc | desc".
_ALTERNATIVES = re.compile(r"""['"`]?[a-z][\w-]{0,20}['"`]?(?:\s*(?:\bor\b|\||/)\s*['"`]?[a-z][\w-]{0,20}['"`]?){1,5}""")


def _described_choice(value: object, ctx: Context) -> Derivation | None:
    """``door: ["driver", "passenger", "rear_left", "rear_right"]`` when the description says
    "Possible values are ['driver', 'passenger', 'rear_left', 'rear_right']", ``dealstage:
    "closedwon"`` for "Internal stage id: appointmentscheduled, ..., closedwon": a choice the
    schema offers in prose instead of ``enum``, which is no fact the user must state, unless the
    user named another of the choices ("ship it express": "Overnight" contradicts it)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or not ctx.description:
        return None
    wanted = str(value).strip().casefold()
    for intro in itertools.islice(_CHOICES_INTRO.finditer(ctx.description[:2_000]), 8):
        if (found := _CHOICE_LIST.match(ctx.description, intro.end())) is None:
            continue
        items = [found[1], *re.findall(_CHOICE_NEXT, found[2])]
        if not any(item.casefold() == wanted for item in items):
            continue
        named = {item.casefold() for item in items if len(item) > 2 for _, text in ctx.normalised if f" {normalise_text(item)} " in text}
        if named and wanted not in named:
            return None  # the user named another of the choices: this one contradicts it
        return None, f"one of the values the description lists ({', '.join(items[:6])}{', ...' if len(items) > 6 else ''})"
    # a description that is only the list of its choices: "metric or imperial", "'real' or 'all'"
    whole = _ALTERNATIVES.fullmatch(ctx.description.strip().rstrip("."))
    choices = {w.strip("'\"`").casefold() for w in re.split(r"\s*(?:\bor\b|\||/)\s*", whole[0])} if whole else set()
    if wanted in choices:
        said = {c for c in choices for _, text in ctx.normalised if f" {normalise_text(c)} " in text}
        if said and wanted not in said:
            return None  # the user named another of them
        return None, f"one of the values the description gives ({whole[0]})"
    return None


def _described_form(value: object, ctx: Context) -> Derivation | None:
    """``start_date: "7daysAgo"`` for "the last 7 days" when the description says "YYYY-MM-DD or
    relative: 'today', 'yesterday', 'NdaysAgo'": a form the API takes that the description
    quotes, its number said by the user; a quoted keyword alone ('yesterday') is a choice the
    schema offers, no fact, when the description lists three forms at least (not an example,
    "e.g. 'primary'", nor a value for a meaning, "use 'primary' for the main calendar"), unless
    the user named another of them."""
    if not isinstance(value, str) or not ctx.description or len(value) > 40:
        return None
    found = described_literal(value.strip(), ctx.description)
    if found is None:
        return None
    token, number = found
    if number is not None:  # a template: its number must have been said
        said = f" {int(number)} "
        return next(((index, f"{number} -> {value} (the description's {token!r})") for index, text in ctx.normalised if said in text), None)
    quoted = list(itertools.islice(QUOTED_TOKEN.finditer(ctx.description[:2_000]), 32))
    at = next(m.start() for m in quoted if m[1] == token)
    template = any(m[1] != "N" and _TEMPLATE_N.search(m[1]) for m in quoted)  # 'NdaysAgo', not 'NONE'

    if len(quoted) < 3 or (_EXAMPLE_OR_USE.search(ctx.description[max(0, at - 40) : at]) and not template):
        # an example ("e.g. 'primary'"), or a value for a meaning ("use 'primary' for the main one"); a list
        # with a template in it ("like 'today', 'yesterday', 'NdaysAgo'") lists the API's forms, not values
        return None
    others = {m[1] for m in quoted} - {token}
    if any(f" {normalise_text(o)} " in text for o in others if "N" not in o for _, text in ctx.normalised):
        return None  # the user named another of the forms
    return None, f"one of the forms the description lists ({token!r})"


#: The N of a template ('NdaysAgo', 'N_weeks'): a capital N outside a word in capitals.
_TEMPLATE_N = re.compile(r"(?<![A-Z])N(?![A-Z])")
_EXAMPLE_OR_USE = re.compile(r"\b(?:e\.?g|i\.?e|for example|for instance|such as|like|use|pass|set|means?)\b", re.IGNORECASE)


def _described_default(value: object, ctx: Context) -> Derivation | None:
    """``speechRate: 1.0`` when the description says "default is 1.0": the default a schema
    states in words rather than in ``default`` (a choice the schema offers, not a fact)."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    for m in _DESCRIBED_DEFAULT.finditer(ctx.description):
        stated = (m[1] or m[2]).rstrip(".")
        number = parse_number(stated)
        same = (
            number is not None and float(number) == float(value)
            if isinstance(value, (int, float))
            else stated.casefold() == str(value).strip().casefold()
        )
        if same:
            return None, f"the description's default {stated}"
    return None


_RATE_PARAMS = frozenset({"rate", "speed", "pace", "tempo", "multiplier"})
_STANDARD_RATE = re.compile(r" (?:normal|standard|regular|default|usual|original) (?:speed|rate|pace|tempo) ")


def _phrase_fixes(value: object, ctx: Context, fixed: int, params: frozenset[str], phrase: re.Pattern[str]) -> Derivation | None:
    """``value`` is ``fixed``, for a parameter named with one of ``params``, when a message says ``phrase``."""
    if isinstance(value, bool) or value != fixed or not params & set(ctx.words):
        return None
    for index, text in ctx.normalised:
        if found := phrase.search(text):
            return index, f"{found[0].strip()} -> {value}"
    return None


def _standard_rate(value: object, ctx: Context) -> Derivation | None:
    """``speechRate: 1.0`` from "at a standard rate": a speed multiplier at its normal value."""
    return _phrase_fixes(value, ctx, 1, _RATE_PARAMS, _STANDARD_RATE)


_AT_REST = re.compile(r" (?:from|at) rest | from a standstill | stationary | standing still ")
_SPEED_PARAMS = frozenset({"velocity", "speed", "v0", "u"})


def _at_rest(value: object, ctx: Context) -> Derivation | None:
    """``initial_velocity: 0`` from "starts from rest": a body at rest has no speed."""
    return _phrase_fixes(value, ctx, 0, _SPEED_PARAMS, _AT_REST)


#: A term of a written polynomial with no number before its variable: "x²", "x^2", "- x", "y =".
_BARE_TERM = re.compile(r"(?:^|(?<=[\s=(+\-−]))([-−]?)\s*[a-z](?:\s*(?:\^|\*\*)\s*\d|[²³]|(?=\s*[+\-−=)]))")


def _implicit_coefficient(value: object, ctx: Context) -> Derivation | None:
    """``a: 1`` for "x² − 5x + 6 = 0": the coefficient a term is written without is one (minus
    one after a minus sign), for a parameter its name or description calls a coefficient."""
    if isinstance(value, bool) or value not in (1, -1) or "coefficient" not in f"{' '.join(ctx.words)} {ctx.description[:200].lower()}":
        return None
    for index, text in ctx.said:
        if not re.search(r"[=+\-−]", text[:2_000]):
            continue  # no equation or sum written: no term to read
        for m in itertools.islice(_BARE_TERM.finditer(text[:2_000]), 32):
            if (-1 if m[1] else 1) == value:
                return index, f"{m[0].strip()} -> coefficient {value}"
    return None


#: Where a message gives someone's date of birth: "date of birth 1990-04-12", "born on 12 April 1990", "DOB: …".
_BIRTH = re.compile(r"\b(?:date of birth|birth ?date|birthday|born(?: on| in)?|dob)\b\W{0,3}([^;\n]{6,40})", re.IGNORECASE)


def _age_from_birth(value: object, ctx: Context) -> Derivation | None:
    """``age: 35`` from "date of birth 1990-04-12" on 2025-09-01: the full years since a birth date
    a message gives, on the conversation's date."""
    if isinstance(value, bool) or not isinstance(value, int) or "age" not in ctx.words or ctx.today is None:
        return None
    for index, text in ctx.said:
        for m in itertools.islice(_BIRTH.finditer(text[:4_000]), 8):
            stated = stated_date(m[1], year_only=False)
            born = stated.date() if stated is not None else None
            if born is not None and born < ctx.today:
                years = ctx.today.year - born.year - ((ctx.today.month, ctx.today.day) < (born.month, born.day))
                if years == value:
                    return index, f"born {born.isoformat()}, on {ctx.today.isoformat()} -> {value} years"
    return None


#: Number bases by the names people give them.
_BASES: dict[str, int] = {"binary": 2, "octal": 8, "decimal": 10, "hexadecimal": 16, "hex": 16}
_BASE_PARAMS = frozenset({"base", "radix"})


def _number_base(value: object, ctx: Context) -> Derivation | None:
    """``to_base: 16`` from "convert 255 to hexadecimal": a base named by its name; and
    ``from_base: 10`` for a number written in decimal digits ("255") when another base is named."""
    if isinstance(value, bool) or not isinstance(value, int) or not _BASE_PARAMS & set(ctx.words):
        return None
    for index, text in ctx.normalised:
        named = [(word, base) for word, base in _BASES.items() if f" {word} " in text]
        for word, base in named:
            if base == value:
                return index, f"{word} -> {value}"
        if value == 10 and named and re.search(r" \d+ ", text):
            return index, f"a number in decimal digits, converted to {named[0][0]} -> {value}"
    return None


_RANGE = re.compile(r"^\s*(\d+)\s*[-\u2013]\s*(\d+)\s*$")


def _bracket(value: object, ctx: Context) -> Derivation | None:
    """``age_range: "25-30"`` from "a 26-year-old": the bracket that holds a number the user
    gave, for a parameter that takes a range."""
    m = _RANGE.match(value) if isinstance(value, str) else None
    if m is None or "range" not in ctx.words or int(m[1]) >= int(m[2]):
        return None
    low, high = int(m[1]), int(m[2])
    for index, text in ctx.said:
        for number in numbers_in(text):
            if low <= number <= high:
                return index, f"{number} in {value}"
    return None


# --- people, places, colours ------------------------------------------------------------------

_MALE = frozenset(
    ["he", "him", "his", "himself", "man", "men", "boy", "boys", "male", "father", "dad", "daddy", "grandfather", "grandpa", "son", "grandson", "brother", "husband", "uncle", "nephew", "boyfriend", "mr", "sir", "gentleman"]
)
_FEMALE = frozenset(
    ["she", "her", "hers", "herself", "woman", "women", "girl", "girls", "female", "mother", "mom", "mum", "mommy", "grandmother", "grandma", "daughter", "granddaughter", "sister", "wife", "aunt", "niece", "girlfriend", "mrs", "ms", "miss", "madam", "lady"]
)
_GENDERS = {"male": _MALE, "man": _MALE, "m": _MALE, "female": _FEMALE, "woman": _FEMALE, "f": _FEMALE}


def _gender(value: object, ctx: Context) -> Derivation | None:
    """``gender: "male"`` from "my grandfather ... he": the gender the user's words give a person."""
    if not isinstance(value, str) or not {"gender", "sex"} & set(ctx.words):
        return None
    words = _GENDERS.get(value.strip().casefold())
    if words is None:
        return None
    for index, text in ctx.normalised:
        if found := words & set(text.split()):
            return index, f"{min(found)} -> {value}"
    return None


#: The forms of the most-mentioned countries that no library gives: demonyms ("British") and
#: everyday names ("America", "Holland"), with their ISO 3166 codes to join them to ``pycountry``'s
#: and ``babel``'s names (``_country_forms``). Two- and three-letter codes count as said only in
#: capitals ("US", not "us").
_COUNTRIES: tuple[tuple[str, ...], ...] = (
    ("United States", "United States of America", "America", "American", "U.S.", "U.S.A.", "US", "USA"),
    ("United Kingdom", "Great Britain", "Britain", "British", "UK", "GB", "GBR"),
    ("Canada", "Canadian", "CA", "CAN"), ("Mexico", "Mexican", "MX", "MEX"), ("Brazil", "Brazilian", "BR", "BRA"),
    ("Argentina", "Argentine", "Argentinian", "AR", "ARG"), ("Chile", "Chilean", "CL", "CHL"),
    ("Colombia", "Colombian", "CO", "COL"), ("Peru", "Peruvian", "PE", "PER"), ("France", "French", "FR", "FRA"),
    ("Germany", "German", "DE", "DEU"), ("Spain", "Spanish", "ES", "ESP"), ("Italy", "Italian", "IT", "ITA"),
    ("Portugal", "Portuguese", "PT", "PRT"), ("Netherlands", "Holland", "Dutch", "NL", "NLD"),
    ("Belgium", "Belgian", "BE", "BEL"), ("Switzerland", "Swiss", "CH", "CHE"), ("Austria", "Austrian", "AT", "AUT"),
    ("Sweden", "Swedish", "SE", "SWE"), ("Norway", "Norwegian", "NO", "NOR"), ("Denmark", "Danish", "DK", "DNK"),
    ("Finland", "Finnish", "FI", "FIN"), ("Ireland", "Irish", "IE", "IRL"), ("Poland", "Polish", "PL", "POL"),
    ("Greece", "Greek", "GR", "GRC"), ("Turkey", "Türkiye", "Turkish", "TR", "TUR"),
    ("Russia", "Russian Federation", "Russian", "RU", "RUS"), ("Ukraine", "Ukrainian", "UA", "UKR"),
    ("China", "Chinese", "CN", "CHN"), ("Japan", "Japanese", "JP", "JPN"),
    ("South Korea", "Korea", "Korean", "KR", "KOR"), ("India", "Indian", "IN", "IND"),
    ("Pakistan", "Pakistani", "PK", "PAK"), ("Bangladesh", "Bangladeshi", "BD", "BGD"),
    ("Indonesia", "Indonesian", "ID", "IDN"), ("Vietnam", "Viet Nam", "Vietnamese", "VN", "VNM"),
    ("Thailand", "Thai", "TH", "THA"), ("Philippines", "Filipino", "Philippine", "PH", "PHL"),
    ("Malaysia", "Malaysian", "MY", "MYS"), ("Singapore", "Singaporean", "SG", "SGP"),
    ("Australia", "Australian", "AU", "AUS"), ("New Zealand", "New Zealander", "NZ", "NZL"),
    ("South Africa", "South African", "ZA", "ZAF"), ("Nigeria", "Nigerian", "NG", "NGA"),
    ("Egypt", "Egyptian", "EG", "EGY"), ("Kenya", "Kenyan", "KE", "KEN"), ("Saudi Arabia", "Saudi", "SA", "SAU"),
    ("United Arab Emirates", "Emirati", "UAE", "AE", "ARE"), ("Israel", "Israeli", "IL", "ISR"),
    ("Iran", "Iranian", "IR", "IRN"),
)
_COUNTRY_OF = {normalise_text(form): forms for forms in _COUNTRIES for form in forms}


#: Parameter words that say a lower-case two- or three-letter value is a code.
_CODE_PARAMS = frozenset({"country", "nation", "region", "code", "lang", "language", "locale", "culture", "nationality"})


def _is_code(value: str) -> bool:
    return len(value.strip()) <= 3 and value.strip().isalpha()


def _country_said(forms: tuple[str, ...], ctx: Context) -> tuple[int, str] | None:
    """Where the user named a country in any of its forms: (message index, the form)."""
    for form in forms:
        if _is_code(form) and form.isupper():
            found = measures.code_said(form, ctx.said)
        elif unspaced(form):  # "日本の人口": a name inside a run of characters
            found = next((i for i, text in ctx.said if form in text[:_READ]), None)
        else:
            found = _said_phrase(form, ctx)
        if found is not None:
            return found, form
    return None


def _country_forms(value: str) -> tuple[str, ...]:
    """Every form of the country a value names: the table's (demonyms, everyday names such as
    "Holland"), and its names and codes in ``pycountry`` and in the other common languages
    (``measures.country_forms``: "Brasile" for Brazil)."""
    forms = _COUNTRY_OF.get(normalise_text(value), ())
    code = next((f for f in forms if len(f) == 2 and f.isupper()), None) or measures.country_code(value)
    return tuple(dict.fromkeys((*forms, *(measures.country_forms(code) if code else ()))))


def _country(value: object, ctx: Context) -> Derivation | None:
    """``culture: "British"`` from "from the UK", ``country: "USA"`` from "the United States",
    ``country: "Brazil"`` from "la popolazione del Brasile": a country's name, demonym or code
    for a country the user named in another form or language."""
    if not isinstance(value, str) or len(value) > 60:
        return None
    forms = _country_forms(value)
    if not forms or (_is_code(value) and not value.isupper() and not _CODE_PARAMS & set(ctx.words)):
        return None  # "in", "it", "no" are words before they are codes
    if (said := _country_said(forms, ctx)) is None:
        return None
    return said[0], f"{said[1]} -> {value}"


def _cloud_region(value: object, ctx: Context) -> Derivation | None:
    """``region: "eu-central-1"`` from "my ec2 boxes in frankfurt", ``"us-west-2"`` from "in
    oregon": the code of the cloud region named for the place the user said
    (``measures.cloud_regions``: AWS's own table), for a parameter named or described as a region."""
    if not isinstance(value, str) or len(value) > 30 or not ("region" in ctx.words or "region" in ctx.description[:300].lower()):
        return None
    for place in measures.cloud_regions().get(value.strip().lower(), ()):
        phrase = normalise_text(place)
        if (index := next((i for i, text in ctx.normalised if _holds_phrase(text, phrase)), None)) is not None:
            return index, f"{place} -> {value}"
    return None


def _place_with_country(value: object, ctx: Context) -> Derivation | None:
    """``destination: "New York, USA"`` from "a trip to New York", ``location: "San Francisco,
    CA"`` from "in San Francisco", ``pickup: "Andheri Station, Mumbai"`` from "Andheri station se
    ...", ``location: "Astoria, Queens, NY"`` from "2br in astoria": a place the user named, with
    its country, its state, province or region (``measures.is_region``), its city (``places``: a
    city of that country, when one is named) or the larger city or borough around it
    (``places.encloses``) added after a comma. The first part must have been said (its words in
    one message, or one word misspelt: "chcago"); every part other than a country, region or
    city too."""
    if not isinstance(value, str) or "," not in value or len(value) > 160:
        return None
    parts = [p.strip() for p in value.split(",") if p.strip()]
    if not 2 <= len(parts) <= 5:
        return None
    said = [(p, _place_part_said(p, ctx)) for p in parts]
    named = [index for p, index in said if index is not None and normalise_text(p) not in _COUNTRY_OF]
    if not named:
        return None
    # a country named beside the city; "CA" and "IN" are states as often as countries, and say neither
    countries = {c.alpha_2 for p, _ in said if (c := measures.country_named(p)) is not None and not (len(p) <= 3 and measures.is_region(p))}
    head_cities = places.city_ids(parts[0]) if len(parts[0]) <= 60 else frozenset()
    if head_cities and countries and not any(places.country_of(c) in countries for c in head_cities):
        return None  # "Seville, Colombia": a city of another country than the one written after it
    # a city after the place, when the place is no city itself ("Andheri Station, Mumbai"; not "New York, Boston")
    in_city = said[0][1] is not None and not head_cities
    for i, (p, index) in enumerate(said):
        if index is None and not _qualifies_place(p) and not (in_city and _city_of(p, countries)) and not _holds_before(p, parts[:i]):
            return None
    return named[0], f"{parts[0]} with its country or region -> {value}"


def _holds_before(part: str, before: list[str]) -> bool:
    """Whether a part names a city that holds a place named before it: the borough or city of a
    neighbourhood ("Astoria, Queens, NY", "Powai, Mumbai", "Shibuya, Tokyo"; ``places.encloses``)."""
    return part[:1].isupper() and any(places.encloses(part, earlier) for earlier in before)


def _place_part_said(part: str, ctx: Context) -> int | None:
    """Where a part of a place's name was said: as written, by its initials, clipped, as its words
    in one message ("the art institute, chicago" for "Art Institute of Chicago") or misspelt."""
    for said in (_said_phrase, _said_by_initials, _said_clipped, _said_in_words):
        if (index := said(part, ctx)) is not None:
            return index
    return _said_misspelt(part, ctx) if _known_place(part) else None


def _known_place(name: str) -> bool:
    """Whether a name is a city's (GeoNames) or a country's: a spelling a user's typo may be corrected to."""
    return len(name) <= 60 and (bool(places.city_ids(name)) or is_country(name))


def _said_in_words(phrase: str, ctx: Context) -> int | None:
    """The first message that says every content word of a name of two words or more, in any
    order and with other words between ("union station" and "chicago" for "Union Station,
    Chicago" are read part by part; this reads "Art Institute of Chicago" in "the art institute,
    chicago")."""
    words = [w for w in normalise_text(phrase).split() if w not in STOPWORDS][:8]
    if len(words) < 2:
        return None
    return next((index for index, text in ctx.normalised if all(f" {w} " in text for w in words)), None)


def _said_misspelt(name: str, ctx: Context) -> int | None:
    """Where the user wrote a one-word name of five letters or more with one letter wrong,
    missing, added, or two swapped, its first letter right ("chcago" for Chicago, "Pariss")."""
    word = normalise_text(name)
    if len(word) < 5 or not word.isalpha():
        return None
    for index, text in ctx.normalised:
        tokens = [t for t in text[: _READ * 4].split() if t[:1] == word[:1] and abs(len(t) - len(word)) <= 1]
        if tokens and process.extractOne(word, tokens, scorer=OSA.distance, score_cutoff=1) is not None:
            return index
    return None


def _city_of(part: str, countries: set[str]) -> bool:
    """Whether ``part`` names a city (GeoNames, 15,000 people or more), of one of ``countries``
    when any are named beside it ("Mumbai, India"; not "Mumbai, USA")."""
    if not part[:1].isupper() or len(part) > 60 or not (cities := places.city_ids(part)):
        return False
    return not countries or any(places.country_of(c) in countries for c in cities)


#: A file's extension, as a path, a traceback or a diff names the file ("/app/worker.py", "App.tsx").
_FILE_EXTENSION = re.compile(r"(?<=[\w-])\.([A-Za-z][A-Za-z0-9_+]{0,9})(?![\w.])")


def _language_of_files(value: object, ctx: Context) -> Derivation | None:
    """``language: "python"`` for a traceback through "/app/worker.py": the programming language
    of files the user named, by their extension (``lexicon.file_languages``)."""
    if not isinstance(value, str) or not {"language", "lang"} & set(ctx.words) or not 1 <= len(value) <= 30:
        return None
    wanted, languages = value.strip().casefold(), file_languages()
    for index, text in ctx.said:
        for m in itertools.islice(_FILE_EXTENSION.finditer(text[: _READ * 8]), 64):
            if wanted in languages.get(m[1].lower(), ()):
                return index, f"a {m[0]} file -> {value}"
    return None


#: A strict bound as people say it, and which way it leaves its number out.
_ABOVE = r"(?:after|more than|over|above|greater than|later than|newer than|older than)"
_BELOW = r"(?:before|less than|under|below|fewer than|earlier than|younger than)"


def _strict_bound(value: object, ctx: Context) -> Derivation | None:
    """``year_from: 2011`` from "movies he directed after 2010", ``max_price: 99`` from "under
    100", ``min_bedrooms: 4`` from "more than 3 bedrooms": a whole-number bound the user said
    strictly, for a parameter that takes it inclusively (a lower bound the next number, an
    upper bound the one before)."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    words = set(ctx.words)
    if words & (LOWER_BOUND_WORDS | {"minimum", "least"}):
        said, how = value - 1, _ABOVE
    elif words & (UPPER_BOUND_WORDS | {"maximum", "most"}):
        said, how = value + 1, _BELOW
    else:
        return None
    pattern = re.compile(rf" {how} {said} ")
    return next(((index, f"{m[0].strip()} -> {value}") for index, text in ctx.normalised if (m := pattern.search(text[: _READ * 4]))), None)


def _number_in_words_of_another_language(value: object, ctx: Context) -> Derivation | None:
    """``importe: 250`` from "una transferencia de doscientos cincuenta euros": a number the user
    wrote in words in the language the identifier is sure the message is written in
    (``lexicon.foreign_number_words``); English words are read with the digits."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 100_000 or value != int(value):
        return None
    for index, text in ctx.said[-_FOREIGN_MESSAGES:]:
        if (words := _foreign_numbers_in(text[:_FOREIGN_READ]).get(int(value))) is not None:
            return index, f"{words} -> {value}"
    return None


@lru_cache(maxsize=256)  # read once per message, however many values ask
def _foreign_numbers_in(text: str) -> dict[int, str]:
    """The numbers a message writes in words of the language it is written in, when the
    identifier is sure of that language and it is not English: number -> the words. A one-word
    number that is an English word too ("once") is left out."""
    language = measures.identified_language(text)
    if language is None or language == "en" or language not in DATE_LANGUAGES:
        return {}
    table, found = foreign_number_words(language), {}
    tokens = normalise_text(text).split()
    for i in range(len(tokens)):
        for n in (4, 3, 2, 1):
            words = " ".join(tokens[i : i + n])
            if (number := table.get(words)) is not None and (n > 1 or (len(words) > 2 and words not in STOPWORDS)):
                found.setdefault(number, words)
                break
    return found


def _misspelt_place(value: object, ctx: Context) -> Derivation | None:
    """``city: "Chicago"`` from "wether in chcago", ``"Paris"`` from "Pariss": a city or country
    the user misspelt by one letter, spelt right (never a misspelling of what the user wrote)."""
    if not isinstance(value, str) or not value[:1].isupper() or len(value) > 40 or not _known_place(value):
        return None
    if (index := _said_misspelt(value, ctx)) is None:
        return None
    return index, f"misspelt -> {value}"


def _city_named_otherwise(value: object, ctx: Context) -> Derivation | None:
    """``location: "Seville, Spain"`` from "qué tiempo hace en sevilla", ``origin: "Beijing"``
    from "北京到上海的高铁", ``city: "New York City"`` from "the Big Apple": a city the user named in
    another language, another script or by a nickname (``places``: GeoNames' names), as the API
    wants it written; a country after a comma must be that city's, any other part said."""
    if not isinstance(value, str) or not 2 <= len(value) <= 80:
        return None
    parts = [p.strip() for p in value.split(",") if p.strip()]
    if not parts or (found := places.named_otherwise(parts[0], ctx.said)) is None:
        return None
    index, words, cities = found
    countries = {places.country_of(c) for c in cities}
    for part in parts[1:]:
        country = measures.country_named(part.strip())
        if country is not None and country.alpha_2 not in countries:
            return None  # "Seville, Colombia": another country's
        if country is None and not measures.is_region(part) and _said_phrase(part, ctx) is None:
            return None
    return index, f"{words} -> {value}"


def _none_of(value: object, ctx: Context) -> Derivation | None:
    """``max_stops: 0`` from "I prefer nonstop flights", ``layovers: 0`` from "no layovers",
    ``pets: 0`` from "without pets": none of what the parameter counts, said with "non", "no",
    "without" or "zero" before its name."""
    if value != 0 or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    nouns = {stem(w) for w in ctx.words if len(w) >= 4}
    for index, text in ctx.normalised:
        for m in itertools.islice(_NONE_OF.finditer(text[:_READ]), _MAX_SPANS):
            if stem(m[1]) in nouns:
                return index, f"{m[0].strip()} -> {value}"
    return None


#: "non-stop", "nonstop", "no layovers", "without pets", "zero fees" (the normalised text).
_NONE_OF = re.compile(r"\b(?:non ?|no |without |zero )([a-z]{4,})\b")


def _of_a_named_country(value: object, ctx: Context) -> Derivation | None:
    """``base: "JPY"`` from "Japan's currency", ``city: "Canberra"`` from "the capital of
    Australia", ``target_language: "pt"`` from "the official language of Brazil": the currency,
    the capital or a language of a country the user named, when they asked for one of those
    (GeoNames' country table, ``places.country_facts``)."""
    if not isinstance(value, str) or not 2 <= len(value.strip()) <= 60:
        return None
    said = " ".join(text[:_READ] for _, text in ctx.normalised[-_MAX_SPANS:])
    asked = {kind for kind, words in _COUNTRY_FACT_WORDS.items() if any(f" {w}" in said for w in words)}
    if not asked:
        return None
    text = value.strip()
    capitals, currencies, languages = _country_facts_index()
    codes: set[str] = set()
    if "capital" in asked:
        codes |= capitals.get(normalise_text(text), set())
    if "currency" in asked and len(text) == 3:
        codes |= currencies.get(text.upper(), set())
    if "language" in asked and (language := _language_of(text)) is not None:
        codes |= languages.get(language, set())
    for code in sorted(codes):
        if (found := _country_said(_country_forms(code), ctx)) is not None:
            return found[0], f"{found[1]} -> {value}"
    return None


#: What a user says to ask for a country's capital, currency or language.
_COUNTRY_FACT_WORDS = {"capital": ("capital",), "currency": ("currency", "currencies", "money"),
                       "language": ("language", "languages", "speak", "spoken")}


def _language_of(value: str) -> str | None:
    """The ISO 639 code a value gives a language by: itself ("pt", "pt-BR") or its English name
    ("Portuguese"; CLDR's)."""
    if re.fullmatch(r"[a-z]{2,3}(?:[-_][A-Za-z]{2,4})?", value):
        return re.split(r"[-_]", value)[0]
    return _english_language_names().get(value.strip().lower())


@lru_cache(maxsize=1)
def _english_language_names() -> dict[str, str]:
    from babel import Locale

    return {name.lower(): code for code, name in Locale("en").languages.items() if "_" not in code}


@lru_cache(maxsize=1)
def _country_facts_index() -> tuple[dict[str, set[str]], dict[str, set[str]], dict[str, set[str]]]:
    """Capital (normalised), currency code and official language -> the countries that have it."""
    capitals: dict[str, set[str]] = {}
    currencies: dict[str, set[str]] = {}
    languages: dict[str, set[str]] = {}
    for code in places.country_codes():
        capital, currency, spoken = places.country_facts(code)
        if capital:
            capitals.setdefault(normalise_text(capital), set()).add(code)
        if currency:
            currencies.setdefault(currency, set()).add(code)
        for language in spoken:
            languages.setdefault(language, set()).add(code)
    return capitals, currencies, languages


def _after_noon(value: object, ctx: Context) -> Derivation | None:
    """``time: "19:30"`` from "dinner for 4, around 7:30": a time of day the user said without am
    or pm, read after noon where the conversation speaks of the afternoon or evening or of what
    people do then, or says pm of another hour (``lexicon.AFTER_NOON_WORDS``: "push the 3pm to
    4:30"); with a date, the conversation's own day ("start" today at 16:30)."""
    parsed = parse_temporal(value) if isinstance(value, str) and len(value) <= 32 else None
    if parsed is None or parsed.time is None or not 13 <= parsed.time.hour <= 23:
        return None
    if parsed.date is not None and parsed.date != ctx.today:
        return None
    hour, minute = parsed.time.hour - 12, parsed.time.minute
    said = rf"(?<![\d:.]){hour}:{minute:02d}" if minute else rf"(?:\b(?:at|around|by|for|about|to|until|till|or)\s+){hour}(?::00)?"
    pattern = re.compile(said + r"(?![\d:])(?!\s*(?:a\.?m\b|p\.?m\b|o'?clock in the morning|h\b|hours?\b|minutes?\b|people\b|of us\b))", re.IGNORECASE)
    if not any(AFTER_NOON_WORDS.intersection(text.split()) for _, text in ctx.normalised[-_MAX_SPANS:]):
        return None  # "pm" among them: "push the 3pm to 4:30"
    for index, text in reversed(ctx.said[-_MAX_SPANS:]):
        if (m := pattern.search(text[:_READ])) is not None:
            return index, f"{m[0].strip()} after noon -> {value}"
    return None


def _said_by_initials(name: str, ctx: Context) -> int | None:
    """Where the user wrote a name of two to four capitalised words by its initials, in capitals
    ("SF" for San Francisco, "LA" for Los Angeles, "NYC" for New York City, and for New York: a
    city's initials with a C after them): the message index."""
    words = name.split()
    if not 2 <= len(words) <= 4 or not all(w[:1].isupper() and w.isalpha() for w in words):
        return None
    return measures.code_said("".join(w[0] for w in words), ctx.said, suffix="C?")  # "NYC" names New York (City), as "SLC" Salt Lake


def _initials_expanded(value: object, ctx: Context) -> Derivation | None:
    """``city: "San Francisco"`` from "thai food in SF", ``"New York City"`` from "NYC", or from
    "san fran": a name the user wrote by its initials or with its words clipped, in full."""
    if not isinstance(value, str):
        return None
    if (index := _said_by_initials(value.strip(), ctx)) is not None:
        return index, f"{''.join(w[0] for w in value.split())} -> {value}"
    if (index := _said_clipped(value.strip(), ctx)) is not None:
        return index, f"clipped -> {value}"
    return None


def _said_clipped(name: str, ctx: Context) -> int | None:
    """Where the user wrote a name of two to four capitalised words with some clipped or
    abbreviated, in order ("san fran" for San Francisco, "Man Utd" for Manchester United; as
    many words as the name has): each said word the start of the name's word, or its first letter
    and more of its letters in order, three letters at least, one of them shortened."""
    words = name.split()
    if not 2 <= len(words) <= 4 or not all(w[:1].isupper() and w.isalpha() for w in words):
        return None
    lowered = [w.lower() for w in words]
    for index, text in ctx.normalised:
        tokens = text[:_READ].split()
        for i in range(len(tokens) - len(lowered) + 1):
            said = tokens[i : i + len(lowered)]
            if said[0][:1] != lowered[0][:1]:
                continue
            if all(c == w or _shortens(c, w) for w, c in zip(lowered, said)) and said != lowered:
                return index
        if any(t[:1] == lowered[0][:1] and _run_together(t, lowered) for t in tokens):
            return index  # "sanfran": the clipped words written as one
    return None


def _run_together(token: str, words: list[str]) -> bool:
    """Whether a said word is the starts of ``words`` written together, three letters or more of
    each and one of them clipped ("sanfran" for San Francisco), never the words whole ("newyork"
    is a spelling, read elsewhere)."""
    if token == "".join(words) or len(token) < 3 * len(words):
        return False

    def split(rest: str, left: list[str]) -> bool:
        if not left:
            return not rest
        word = left[0]
        return any(word.startswith(rest[:n]) and split(rest[n:], left[1:]) for n in range(min(len(word), len(rest)), 2, -1))

    return split(token, words)


def _shortens(said: str, word: str) -> bool:
    """Whether a said word shortens ``word``: its start ("fran"), or its first letter and more of
    its consonants in order ("utd" for united, "mtn" for mountain), three letters at least, no stopword."""
    if len(said) < 3 or len(said) >= len(word) or said in STOPWORDS or said[0] != word[0]:
        return False
    if word.startswith(said):
        return True
    if any(ch in "aeiou" for ch in said[1:]):
        return False  # an abbreviation keeps the consonants ("utd", "mtn", "intl")
    rest = iter(word[1:])
    return all(ch in rest for ch in said[1:])


def _place_before_name(value: object, ctx: Context) -> Derivation | None:
    """``team: "Los Angeles Lakers"`` from "the Lakers' games", ``"Boston Celtics"`` from "the
    Celtics": a capitalised name the user said, with the place it is named for written before it
    in full (a team's, a university's, a branch's official name). Which place needs world
    knowledge: only that the added words name a place is checked."""
    if not isinstance(value, str) or not 2 <= len(words := value.split()) <= 6:
        return None
    for cut in range(1, len(words)):
        place, name = " ".join(words[:cut]), " ".join(words[cut:])
        if name[:1].isupper() and len(name) > 2 and measures.is_place(place) and (index := _said_phrase(name, ctx)) is not None:
            return index, f"{name} with its place -> {value}"
    return None


def is_country(part: str) -> bool:
    """Whether ``part`` names a country: its name, a common short form or demonym ("UK",
    "America"), or its ISO code in capitals."""
    text = part.strip()
    return measures.is_country(text) or (normalise_text(text) in _COUNTRY_OF and (not _is_code(text) or text.isupper()))


def _qualifies_place(part: str) -> bool:
    return is_country(part) or measures.is_region(part)


#: CSS named colours (CSS Color Module Level 4) that people say, as hex; "green" is also the
#: pure #00FF00 that colour pickers call green (CSS names that one "lime"). A colour said by name
#: and given as hex is the same fact written as a code.
_COLOURS: dict[str, tuple[str, ...]] = {
    "black": ("000000",), "white": ("ffffff",), "red": ("ff0000",), "green": ("008000", "00ff00"),
    "blue": ("0000ff",), "yellow": ("ffff00",), "orange": ("ffa500",), "purple": ("800080",),
    "pink": ("ffc0cb",), "brown": ("a52a2a",), "gray": ("808080",), "grey": ("808080",), "silver": ("c0c0c0",),
    "navy": ("000080",), "navy blue": ("000080",), "teal": ("008080",), "maroon": ("800000",), "olive": ("808000",),
    "lime": ("00ff00",), "aqua": ("00ffff",), "cyan": ("00ffff",), "magenta": ("ff00ff",), "fuchsia": ("ff00ff",),
    "gold": ("ffd700",), "beige": ("f5f5dc",), "violet": ("ee82ee",), "indigo": ("4b0082",),
    "turquoise": ("40e0d0",), "coral": ("ff7f50",), "salmon": ("fa8072",), "lavender": ("e6e6fa",),
    "light blue": ("add8e6",), "dark blue": ("00008b",), "sky blue": ("87ceeb",), "light green": ("90ee90",),
    "dark green": ("006400",), "light gray": ("d3d3d3",), "light grey": ("d3d3d3",), "dark gray": ("a9a9a9",),
    "dark grey": ("a9a9a9",), "dark red": ("8b0000",), "crimson": ("dc143c",), "khaki": ("f0e68c",),
    "ivory": ("fffff0",), "tan": ("d2b48c",), "chocolate": ("d2691e",),
}
#: A colour word after one of these names another colour ("light blue" is not "blue").
_SHADES = frozenset(["light", "dark", "sky", "navy", "pale", "deep", "bright", "royal", "baby", "hot", "lime", "sea", "forest", "olive"])
_HEX = re.compile(r"^#([0-9a-f]{6}|[0-9a-f]{3})$", re.IGNORECASE)


def _colour_hex(value: object, ctx: Context) -> Derivation | None:
    """``background: "#ADD8E6"`` from "light blue background": a colour the user named, as hex."""
    m = _HEX.match(value.strip()) if isinstance(value, str) else None
    if m is None:
        return None
    code = m[1].lower() if len(m[1]) == 6 else "".join(c * 2 for c in m[1].lower())
    for name, codes in _COLOURS.items():
        if code not in codes:
            continue
        for index, text in ctx.normalised:
            if _names_colour(text.split(), name):
                return index, f"{name} -> {value}"
    return None



#: A parameter's or description's words that say it holds a colour temperature in kelvin.
_KELVIN = re.compile(r"\bkelvin\b|\bcolou?r[\s_-]*temp|\bcct\b|(?<![a-z])\d?k\b.*\btemp", re.IGNORECASE)


def _named_white(value: object, ctx: Context) -> Derivation | None:
    """``color_temp_kelvin: 2700`` from "lights to 30%, warm white", "warmweiß", "blanc chaud":
    a white of lighting the user named by its name (``lexicon.WHITE_LIGHT_KELVIN``), as a colour
    temperature within what lamps sold under that name have, for a parameter in kelvin."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 1000 <= value <= 10_000:
        return None
    if not (_KELVIN.search(ctx.param.replace("_", " ")) or _KELVIN.search(ctx.description[:300])):
        return None
    for name, (low, high) in WHITE_LIGHT_KELVIN.items():
        if low <= value <= high:
            phrase = normalise_text(name)
            if (index := next((i for i, text in ctx.normalised if _holds_phrase(text, phrase)), None)) is not None:
                return index, f"{name} -> {value} K"
    return None


def _names_colour(words: list[str], name: str) -> bool:
    """Whether normalised words name a colour: "light blue" or "lightblue"; "blue" on its own,
    not as part of "light blue"."""
    parts = name.split()
    if len(parts) > 1 and name.replace(" ", "") in words:
        return True
    return any(
        words[i : i + len(parts)] == parts and (len(parts) > 1 or i == 0 or words[i - 1] not in _SHADES)
        for i in range(len(words))
    )

_RULES: tuple[Callable[[object, Context], Derivation | None], ...] = (
    _month_number,
    _month_bounds,
    _day_group,
    _currency_code,
    _interval_semitones,
    _none_is_zero,
    _one_item,
    _grouped_digits,
    _times_per_period,
    _switch,
    _coordinates,
    _degrees_minutes,
    _duration,
    _relative_range,
    _year_bounds,
    _decade_or_short_year,
    _year_span,
    _month_day,
    _stated_today,
    _day_of_stated_month,
    _later_day_of_a_said_month,
    _clock_number,
    _epoch_seconds,
    _from_stated_now,
    _named_day_as_typed,
    _written_without_marks,
    _media_type,
    _day_in_another_language,
    _calendar_period,
    _part_of_year,
    _week_of,
    _units_ago,
    _span_token,
    _date_operator,
    _stay_end,
    _payment_terms,
    _day_part_bound,
    _reminder_default,
    _two_of_us,
    _just_me,
    _shifted_time,
    _web_address,
    _weekday_after_date,
    _frequency,
    _recurrence_rule,
    _described_meaning,
    _described_choice,
    _described_form,
    _described_default,
    _standard_rate,
    _at_rest,
    _number_base,
    _implicit_coefficient,
    _age_from_birth,
    _bracket,
    _gender,
    _country,
    _cloud_region,
    _place_with_country,
    _city_named_otherwise,
    _misspelt_place,
    _strict_bound,
    _number_in_words_of_another_language,
    _language_of_files,
    _none_of,
    _after_noon,
    _of_a_named_country,
    _initials_expanded,
    _site_root,
    _place_before_name,
    _colour_hex,
    _named_white,
    *measures.RULES,
)
