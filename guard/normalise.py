"""Value normalisation: the forms in which one value can appear in what people and tools wrote.

Grounding asks "does this argument value appear in the conversation?". The answer must not depend
on case, compatibility characters, punctuation, "two" versus "2", "2 hours" versus 120 minutes or
"tomorrow at 2pm" versus "2021-09-28 14:00:00". Texts are reduced once per message (numbers with
their units, a normalised form); a date or time value is rendered into the surface forms a person
would write and those are searched for in the normalised text. That is far cheaper than parsing
every message with a date parser, which costs a millisecond or more per call. Nothing here raises
on odd input (lone surrogates, huge numbers, invalid dates): such input simply matches nothing.
"""

from __future__ import annotations

import calendar
import itertools
import re
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime, time
from functools import lru_cache

from guard.lexicon import AND_FRACTIONS, DAY_PARTS, MONTHS, WEEKDAY_OR_SHORT_PATTERN, WEEKDAY_SHORT, WEEKDAYS, alternation, fraction_value

# --- text -------------------------------------------------------------------------------------

def _mark_ranges() -> str:
    """The combining marks of the Basic Multilingual Plane (Unicode categories Mn, Mc, Me) as the
    ranges of a character class."""
    ranges: list[str] = []
    first = None
    for code in range(0x300, 0x10001):
        mark = code < 0x10000 and unicodedata.category(chr(code)).startswith("M")
        if mark and first is None:
            first = code
        elif not mark and first is not None:
            ranges.append(f"{chr(first)}-{chr(code - 1)}")
            first = None
    return "".join(ranges)


#: Combining marks: the vowel signs of Devanagari, Thai or Bengali belong to the word they sit in
#: ("डॉलर", "พรุ่งนี้"), though Python's ``\w`` leaves them out.
_MARKS = _mark_ranges()
#: A word: a run of letters with the marks they carry (letters first, so each run splits one way).
WORD = rf"[^\W\d_]+(?:[{_MARKS}]+[^\W\d_]*)*"
#: Runs of digits or words: everything else (punctuation, space, "_") separates them.
_TOKEN = re.compile(rf"\d+|{WORD}")


#: A dash between the two ends of a range of hours or of days ("2-3pm", "21–25 July"): read "to",
#: as the dash is said, so that the range's start lines up with its end's am, pm or month.
_RANGE_DASH = re.compile(
    rf"(?<=\d)\s*[-\u2013\u2014]\s*(?=\d{{1,2}}(?::\d\d)?\s*(?:[ap]\.?m\b|(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{alternation(m for names in MONTHS for m in names)})\b))"
)
#: A thousands separator: "50,000" is one number, not "50" and "000".
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
#: A dot between thousands, as most of Europe writes an amount of money: "1.400 €", "€ 2.500.000",
#: "1.400 euros" (without the money, "1.400" may be one and four tenths).
_DOT_THOUSANDS = re.compile(r"(?<=\d)\.(?=\d{3}(?:\.\d{3})*(?!\d)\s?(?:€|eur\b|euros?\b|zł|kč|kr\b|₺|tl\b|₫|vnd\b|r\$))|(?<=€\d)\.(?=\d{3}(?!\d))|(?<=€ \d)\.(?=\d{3}(?!\d))")


def normalise_text(s: str) -> str:
    """Casefold, NFKC, punctuation to spaces, whitespace collapsed to single spaces.

    Digits and letters are also split apart ("2pm" -> "2 pm", "28th" -> "28 th", "3km" -> "3 km")
    so that the written variants of numbers, units and times line up token for token; thousands
    separators are dropped first ("50,000-100,000" -> "50000 100000").

    Short texts (argument values, enum members, parameter names: the same few thousand in every
    call of every tool set) are cached; long ones (messages, descriptions) are not kept.
    """
    if type(s) is str and len(s) <= _SHORT_TEXT:
        return _normalise_short(s)
    return _normalise(s)


#: The longest text ``normalise_text`` caches, and how many it keeps (at most a few MB).
_SHORT_TEXT = 128
_SHORT_TEXTS = 16_384


def _normalise(s: str) -> str:
    s = spaced_fractions(s.replace("♭", "b"))  # "B♭" is the note "Bb" (a sharp is punctuation either way: "F♯", "F#")
    return " ".join(_TOKEN.findall(_RANGE_DASH.sub(" to ", _THOUSANDS.sub("", _DOT_THOUSANDS.sub("", unicodedata.normalize("NFKC", s).casefold())))))


@lru_cache(maxsize=256)
def unmarked(text: str) -> str:
    """A text without the marks its letters carry ("thaï" -> "thai", "Umeå" -> "Umea"): how an
    API or a table written in plain letters writes a name said with its accents. Only for
    comparing with a text in plain letters: in other scripts marks are letters (Japanese が)."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


#: The fractions Unicode writes in one character ("½", "¾", "⅛").
_VULGAR = re.compile("[\u00bc-\u00be\u2150-\u215e]")


def spaced_fractions(text: str) -> str:
    """One-character fractions written out apart from a number before them: "2½" -> "2 1/2"
    (NFKC alone writes "21⁄2": one number run into the next)."""
    if not _VULGAR.search(text):
        return text
    return _VULGAR.sub(lambda m: " " + unicodedata.normalize("NFKC", m[0]).replace("\u2044", "/"), text)


_normalise_short = lru_cache(maxsize=_SHORT_TEXTS)(_normalise)


# --- numbers ----------------------------------------------------------------------------------

_SMALL = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SMALL_VALUES = {w: i for i, w in enumerate(_SMALL)}
_TENS_VALUES = {w: 10 * i for i, w in enumerate(_TENS) if w != "_"}
_SCALES = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_MULTIPLIERS = {"hundred": 100, "dozen": 12}
_NUMBER_WORDS = {**_SMALL_VALUES, **_TENS_VALUES}
_SCALE_WORDS = {**_MULTIPLIERS, **_SCALES}
#: Scales written as a letter after the digits ("20k", "3bn"); "m" is metres as often as millions.
_SCALE_SUFFIXES = {"k": 1_000, "mn": 1_000_000, "bn": 1_000_000_000}
#: Signs written before a sum of money, after which "M" and "B" are millions and billions.
_MONEY_SIGNS = frozenset("$€£¥₹")
_PERCENT = frozenset({"%", "percent", "pct"})

#: Units by dimension, as factors to the dimension's base unit (seconds, metres, grams, litres).
_UNIT_TABLE: dict[str, dict[tuple[str, ...], float]] = {
    "time": {
        ("s", "sec", "secs", "second", "seconds"): 1,
        ("min", "mins", "minute", "minutes"): 60,
        ("h", "hr", "hrs", "hour", "hours"): 3_600,
        ("day", "days"): 86_400,
        ("wk", "wks", "week", "weeks"): 604_800,
    },
    "length": {
        ("mm", "millimetre", "millimetres", "millimeter", "millimeters"): 0.001,
        ("cm", "centimetre", "centimetres", "centimeter", "centimeters"): 0.01,
        ("m", "metre", "metres", "meter", "meters"): 1,
        ("km", "kilometre", "kilometres", "kilometer", "kilometers"): 1_000,
        ("mi", "mile", "miles"): 1_609.344,
    },
    "mass": {
        ("mg", "milligram", "milligrams"): 0.001,
        ("g", "gram", "grams"): 1,
        ("kg", "kilo", "kilos", "kilogram", "kilograms"): 1_000,
    },
    "volume": {
        ("ml", "millilitre", "millilitres", "milliliter", "milliliters"): 0.001,
        ("l", "litre", "litres", "liter", "liters"): 1,
    },
}
_UNITS: dict[str, tuple[str, float]] = {
    name: (dimension, factor)
    for dimension, units in _UNIT_TABLE.items()
    for names, factor in units.items()
    for name in names
}
_FACTORS: dict[str, frozenset[float]] = {
    dimension: frozenset(units.values()) for dimension, units in _UNIT_TABLE.items()
}

#: Words that make the number after them negative ("minus 40", "negative 3"), unless a number
#: stands before them ("40 minus 3" subtracts).
_SAID_NEGATIVE = re.compile(r"(\S*)\s*\b(?:minus|negative)\s+$")


def _said_negative(before: str) -> bool:
    """Whether the text just before a number makes it negative ("minus 40", not "40 minus 3")."""
    m = _SAID_NEGATIVE.search(before)
    return m is not None and not (m[1][-1:].isdigit() or m[1] in _NUMBER_WORDS)


_DIGITS = re.compile(
    r"(?<![\d.,])(?:(?<![\w-])(?P<sign>-))?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,300}(?:\.\d+)?)(?!\d)"
    r"(?:\s*(?P<suffix>%|[^\W\d_]+))?"
)
#: A range whose end carries the scale or percent both numbers take ("150-180k", "5-10%").
_SHARED_SUFFIX = re.compile(r"(?<![\d.,])(\d{1,6}(?:\.\d+)?)\s*[-\u2013]\s*\$?(\d{1,6}(?:\.\d+)?)\s*(k|mn|bn|%|thousand|million|billion|percent)(?![^\W\d_])")
#: A cheap test that lets most keys and words skip the full scan.
_NUMBERISH = re.compile(
    r"\d|\b(?:" + "|".join([*_SMALL, *_TENS[2:], *_SCALES, *_MULTIPLIERS]) + r")\b"
)
_WHOLE_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")


def number_key(x: int | float) -> int | float:
    """The form numbers are compared in: integral values as ints, others rounded to 9 places."""
    if isinstance(x, int):
        return x
    if x.is_integer():
        return int(x)
    return round(x, 9)


def parse_number(s: str) -> int | float | None:
    """The number a whole string writes, in digits ("1,000", "-3.5") or words ("twenty five",
    "a dozen"); None when the string is anything else. "50%" is 50: see ``numbers_in`` for the
    readings a percent or a unit adds."""
    folded = unicodedata.normalize("NFKC", s).casefold().strip()
    if _WHOLE_NUMBER.fullmatch(folded):
        return _digits_value(folded.lstrip("+"))
    tokens = normalise_text(folded).split()
    parsed = _parse_words(tokens, 0)
    if parsed is not None and parsed[0] == len(tokens):
        return parsed[1]
    return None


def numbers_in(text: str) -> dict[int | float, str]:
    """Every number a text mentions, keyed by ``number_key``, with the words that mentioned it.

    Percentages give the number and the fraction ("50%" -> 50 and 0.5); a quantity with a unit
    gives its value in every unit of the same dimension ("2 hours" -> 2, 120 minutes, 7200
    seconds; "3 km" -> 3000 m); "2 million" gives 2000000.
    """
    found: dict[int | float, str] = {}
    folded = _DOT_THOUSANDS.sub("", unicodedata.normalize("NFKC", spaced_fractions(text)).casefold())
    if not _NUMBERISH.search(folded):
        return found
    for m in _DIGITS.finditer(folded):
        value = _digits_value(m.group("num"))
        if value is None:
            continue
        if m.group("sign") or _said_negative(folded[max(0, m.start() - 40) : m.start()]):
            value = -value  # "-40", "minus 40", "negative 3.5"
        suffix = m.group("suffix")
        if suffix in ("m", "b") and folded[max(0, m.start() - 1) : m.start()] in _MONEY_SIGNS:
            suffix = {"m": "mn", "b": "bn"}[suffix]  # "$1.2M": a sum of money in millions, not metres
        surface = folded[m.start() : m.end() if _qualifies(suffix) else m.end("num")]
        _add_readings(found, value, suffix, surface)
    for m in _SHARED_SUFFIX.finditer(folded):  # "150-180k": the range's start is 150k too
        if (value := _digits_value(m[1])) is not None:
            _add_readings(found, value, m[3], m[1] + (f" {m[3]}" if len(m[3]) > 2 else m[3]))
    powers = superscript_powers(text[:1_000_000]) if "10" in text else ""
    for m in itertools.islice(SCIENTIFIC.finditer(powers), 64):  # "1 × 10⁻⁴", "6.02 x 10^23", "3*10**-9"
        if (mantissa := _digits_value(m[1])) is not None and abs(exponent := int(m[2])) <= 308:
            _add_readings(found, mantissa * 10.0**exponent, None, m[0].casefold())
    if "/" in folded:
        for m in itertools.islice(_FRACTION.finditer(folded), 16):  # "2 1/4 cups": 2.25, "3/4 inch": 0.75
            top, bottom = int(m["top"]), int(m["bottom"])
            if 0 < top < bottom <= 16 and (m["whole"] or m["unit"]):
                value = int(m["whole"] or 0) + top / bottom
                _add_readings(found, round(value, 6), m["unit"], m[0].strip() if _qualifies(m["unit"]) else m[0][: m.end("bottom") - m.start()].strip())
    tokens = normalise_text(folded).split()
    i = 0
    while i < len(tokens):
        parsed = _parse_words(tokens, i)
        if parsed is None:
            i += 1
            continue
        end, value = parsed
        suffix = tokens[end] if end < len(tokens) else None
        if i > 0 and _said_negative(" ".join(tokens[max(0, i - 2) : i]) + " "):
            value = -value  # "minus forty degrees", not "fifty minus forty"
        _add_readings(found, value, suffix, " ".join(tokens[i : end + _qualifies(suffix)]))
        i = end
    for m in itertools.islice(_AND_A_FRACTION.finditer(" ".join(tokens)) if " and " in folded else (), 16):  # "two and a quarter cups": 2.25
        whole = int(m[1]) if m[1].isdigit() else _NUMBER_WORDS[m[1]]
        share = fraction_value(m[2])
        suffix = m[3]
        _add_readings(found, whole + share, suffix, m[0] if _qualifies(suffix) else m[0][: m.end(2) - m.start()])
    return found


#: A fraction written with a slash, after a whole number ("2 1/4", "2-1/2") or before a word (a
#: unit: "3/4 inch", "1/2 cup"); a date's "3/4" with no word after it is none.
_FRACTION = re.compile(
    r"(?<![\d.,/])(?:(?P<whole>\d{1,6})(?:\s+|-))?(?P<top>\d{1,2})/(?P<bottom>\d{1,2})(?![\d/])(?:\s*(?P<unit>[^\W\d_]+))?"
)
#: A whole number and a fraction ("two and a quarter", "3 and a half", "one and three quarters"),
#: normalised, with the word after it (a unit).
_AND_A_FRACTION = re.compile(
    rf"(?<!\S)(\d{{1,6}}|{'|'.join(_NUMBER_WORDS)}) and ({AND_FRACTIONS})(?!\S)(?: (\S+))?"
)


#: A number in scientific notation: a mantissa times ten to a power, as people type it.
#: It starts where a run of digits starts (from any digit, a long run took quadratic time: 20,000
#: digits, 19 s) and reads a mantissa of at most 30 digits and a bounded run of spaces.
#: Superscripts first read as powers (``superscript_powers``).
SCIENTIFIC = re.compile(r"(?<![\d.])(\d{1,30}(?:\.\d{1,30})?)[ \t]{0,3}[×xX*·][ \t]{0,3}10[ \t]{0,3}(?:\^|\*\*)[ \t]{0,3}\(?(-?\d{1,3})\)?")
#: Superscript digits ("10⁻⁴", "m⁴"), read as a power: "^-4".
_SUPERSCRIPTS = re.compile("[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_SUPERSCRIPT_DIGITS = str.maketrans("⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹", "-+0123456789")


def superscript_powers(text: str) -> str:
    """Superscript powers written with a caret: "10⁻⁴" -> "10^-4", "m⁴" -> "m^4"."""
    return _SUPERSCRIPTS.sub(lambda m: "^" + m[0].translate(_SUPERSCRIPT_DIGITS), text)


def _qualifies(suffix: str | None) -> bool:
    """Whether the word after a number changes what it means (a percent, scale or unit)."""
    return suffix in _PERCENT or suffix in _SCALES or suffix in _SCALE_SUFFIXES or suffix in _UNITS or suffix in _MULTIPLIERS


def _digits_value(num: str) -> int | float | None:
    clean = num.replace(",", "")
    try:
        return float(clean) if "." in clean else int(clean)
    except ValueError:  # more digits than int() accepts
        return None


def _add_readings(found: dict[int | float, str], value: int | float, suffix: str | None, surface: str) -> None:
    """Record a number and what its suffix (percent, scale word, unit) makes of it."""
    readings: list[int | float] = [value]
    if suffix in _PERCENT:
        readings.append(value / 100)
    elif suffix in _SCALES:
        readings = [value * _SCALES[suffix]]
    elif suffix in _SCALE_SUFFIXES:
        readings = [value * _SCALE_SUFFIXES[suffix]]
    elif suffix in _MULTIPLIERS and isinstance(value, int):
        readings.append(value * _MULTIPLIERS[suffix])  # "3 dozen" eggs: 36 of them, in 3 dozens
    elif suffix in _UNITS:
        dimension, factor = _UNITS[suffix]
        readings.extend(value * factor / other for other in _FACTORS[dimension])
    for reading in readings:
        found.setdefault(number_key(reading), surface)


def _parse_words(tokens: list[str], start: int) -> tuple[int, int] | None:
    """Read a number written in words from ``tokens[start:]``: (end index, value), or None.

    Number words must follow English order ("twenty five", "one hundred and five"), so a list of
    numbers ("two three") reads as separate numbers.
    """
    total = current = 0
    last = None  # the kind of the previous number word: "small", "tens" or "scale"
    i = start
    if i + 1 < len(tokens) and tokens[i] in ("a", "an") and tokens[i + 1] in _SCALE_WORDS:
        current, last, i = 1, "small", i + 1  # "a dozen", "a hundred"
    while i < len(tokens):
        word = tokens[i]
        if word in _SMALL_VALUES and (last in (None, "scale") or (last == "tens" and _SMALL_VALUES[word] < 10)):
            current += _SMALL_VALUES[word]
            last = "small"
        elif word in _TENS_VALUES and last in (None, "scale"):
            current += _TENS_VALUES[word]
            last = "tens"
        elif word in _MULTIPLIERS and last in ("small", "tens"):
            current *= _MULTIPLIERS[word]
            last = "scale"
        elif word in _SCALES and last is not None:
            total, current = total + current * _SCALES[word], 0
            last = "scale"
        elif not (word == "and" and last == "scale" and i + 1 < len(tokens) and tokens[i + 1] in _NUMBER_WORDS):
            break
        i += 1
    if last is None:
        return None
    return i, total + current


def number_words(n: int) -> str:
    """English words for 0 <= n < 100 ("twenty one"), the inverse of ``parse_number``."""
    if n < 20:
        return _SMALL[n]
    tens, unit = divmod(n, 10)
    return _TENS[tens] + (f" {_SMALL[unit]}" if unit else "")


# --- booleans ---------------------------------------------------------------------------------

_TRUE = frozenset({"yes", "y", "true", "t", "enable", "enabled", "on", "1"})
_FALSE = frozenset({"no", "n", "false", "f", "disable", "disabled", "off", "0"})


def parse_bool(s: str) -> bool | None:
    """True for "yes/true/enable/on", False for "no/false/disable/off", else None."""
    word = normalise_text(s)
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    return None


# --- dates and times --------------------------------------------------------------------------

_ISO_VALUE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[ t](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?",
    re.ASCII | re.IGNORECASE,
)
_SLASHED_DATE = re.compile(r"\d{4}/\d{2}/\d{2}(?![\d/])")
_TIME_VALUE = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?", re.ASCII)

_MONTHS = MONTHS
_DAY_BOUNDARIES = (time(0), time(23, 59), time(23, 59, 59))
_WEEKDAYS = WEEKDAYS
_NAMED_DAYS = {
    -2: r"(?:the )?day before yesterday",
    -1: r"(?<!before )yesterd?a?y|yday|last ni(?:gh)?te?",  # "yday", "last nite" as people type them
    0: r"(?<!leave )(?<!leaving )(?<!excluding )(?<!exclude )(?<!without )(?<!not including )(?<!except )(?<!except for )today(?! out)"
       r"|tonight|this (?:morning|afternoon|evening)",  # not "leave today out": a range that ends yesterday
    1: r"(?<!after )(?:tom+or+ow|tmrw|tmr|2morrow)",  # "tomorrow", and as people type it: "tomorow", "tommorow", "tmrw"
    2: r"(?:the )?day after tom+or+ow",
}


_NAMED_DAY = re.compile("|".join(f"(?:{p})" for p in _NAMED_DAYS.values()), re.IGNORECASE)


_NAMED_DAY_EACH = {offset: re.compile(rf"\b(?:{pattern})\b", re.IGNORECASE) for offset, pattern in _NAMED_DAYS.items()}


def named_days_in(text: str) -> frozenset[int]:
    """The days a text names relative to today, as offsets from it ("remind me tomorrow": {1};
    "yday or today": {-1, 0}), in its first 4,000 characters."""
    text = text[:4_000]
    return frozenset(offset for offset, pattern in _NAMED_DAY_EACH.items() if pattern.search(text))


def named_day(value: str) -> bool:
    """Whether a text is a day named relative to today and nothing else ("yesterday", "tmrw",
    "this morning"): a date that only the conversation's date resolves."""
    return _NAMED_DAY.fullmatch(value.strip()) is not None


@dataclass(frozen=True)
class Temporal:
    """A date and/or time value. A day-boundary time next to a date (00:00:00, 23:59:59) is
    dropped: it is how date-only values and "until the end of that day" are written as datetimes,
    and nobody says "at midnight" to mean "that day"."""

    date: date | None
    time: time | None


def parse_temporal(value: str) -> Temporal | None:
    """Read "2021-09-28", "2021-09-28 14:00:00", "2021-09-28T14:00" or "14:00"; else None."""
    s = value.strip()
    if _SLASHED_DATE.match(s):
        s = s[:10].replace("/", "-") + s[10:]  # "2023/07/15": the same date, as some APIs write it
    try:
        if m := _ISO_VALUE.fullmatch(s):
            day = date(int(m[1]), int(m[2]), int(m[3]))
            at = time(int(m[4]), int(m[5]), int(m[6] or 0)) if m[4] else None
            return Temporal(day, None if at in _DAY_BOUNDARIES else at)
        if m := _TIME_VALUE.fullmatch(s):
            return Temporal(None, time(int(m[1]), int(m[2]), int(m[3] or 0)))
    except ValueError:  # 2021-02-30, 25:00
        return None
    return None


@dataclass(frozen=True)
class TemporalPatterns:
    """Regexes for the ways people write one date and one time, over normalised text."""

    date: re.Pattern[str] | None
    time: re.Pattern[str] | None

    def search(self, normalised: str) -> list[re.Match[str]] | None:
        """The mentions of the date and of the time, or None unless every part is mentioned."""
        found = []
        for pattern in (self.date, self.time):
            if pattern is None:
                continue
            m = pattern.search(normalised)
            if m is None:
                return None
            found.append(m)
        return found


@lru_cache(maxsize=1024)
def temporal_patterns(value: str, today: date) -> TemporalPatterns | None:
    """Patterns for a date/time value, with relative words ("tomorrow", "next monday") resolved
    against ``today``; None when the value is no date or time."""
    parsed = parse_temporal(value)
    if parsed is None:
        return None
    return TemporalPatterns(
        date=_compile(_date_forms(parsed.date, today)) if parsed.date else None,
        time=_compile(_time_forms(parsed.time)) if parsed.time else None,
    )


def mentions_datetime(value: str, text: str, reference: datetime) -> str | None:
    """Whether ``text`` mentions the date/time ``value`` (relative to ``reference``): the words
    that do, else None."""
    patterns = temporal_patterns(value, reference.date())
    if patterns is None:
        return None
    found = patterns.search(normalise_text(text))
    return " ".join(m.group(0) for m in found) if found else None


def _compile(forms: list[str]) -> re.Pattern[str]:
    return re.compile(r"(?<!\S)(?:" + "|".join(forms) + r")(?!\S)")


#: The days of a month after each day, as an alternation: the end of a range that starts on it.
_LATER_DAYS = {day: "|".join(str(later) for later in range(31, day, -1)) or "(?!)" for day in range(1, 32)}


def _date_forms(d: date, today: date) -> list[str]:
    day = rf"0?{d.day}(?: (?:st|nd|rd|th))?"
    month_names = "(?:" + "|".join(_MONTHS[d.month - 1]) + ")"
    month = rf"0?{d.month}"
    # A following year must be this one; a following number that is no year is fine.
    numeric_year = rf"(?: (?:{d.year}|{d.year % 100:02d})|(?! \d))"
    named_year = rf"(?: {d.year}|(?! \d{{4}}(?!\S)))"
    forms = [
        rf"{d.year} {month} 0?{d.day}",
        rf"{month_names} (?:the )?{day}{named_year}",
        rf"{day} (?:of )?{month_names}{named_year}",
        rf"0?{d.day} {month}{numeric_year}",
        rf"{month} 0?{d.day}{numeric_year}",
        # the end of a range whose month was said once: "October 14th to 16th", "Dec 23-27 2024"
        rf"{month_names} \d{{1,2}}(?: (?:st|nd|rd|th))? (?:(?:to|and|through|until|till) )?(?:the )?{day}{named_year}",
        # the start of a range whose month is said after its end: "from the 21st to the 25th of July", "21-25 July"
        rf"{day}(?= (?:to|and|through|until|till) (?:the )?(?:{_LATER_DAYS[d.day]})(?: (?:st|nd|rd|th))? (?:of )?{month_names}{named_year})",
        # Chinese, Japanese, Korean: "2025年11月6日", "11月6日", "12월 2일" (normalised: "11 月 6 日")
        rf"(?:{d.year} (?:年|년) )?{month} (?:月|월) 0?{d.day}(?= (?:日|일|号))",
    ]
    return forms + _weekday_of_month(d, today) + _relative_forms(d, today)


#: The nth weekday of a month as said, normalised ("the 1st monday", "the second friday").
ORDINALS = {1: "first|1 st", 2: "second|2 nd", 3: "third|3 rd", 4: "fourth|4 th", 5: "fifth|5 th"}


def _weekday_of_month(d: date, today: date) -> list[str]:
    """"the 2nd friday of next month", "the last Monday in May": the day as the nth (or last) of
    its weekday in a month named, or in this or next month."""
    weekday = _WEEKDAYS[d.weekday()]
    nth = [ORDINALS[(d.day - 1) // 7 + 1]] + (["last"] if d.day + 7 > calendar.monthrange(d.year, d.month)[1] else [])
    months = ["(?:" + "|".join(_MONTHS[d.month - 1]) + rf")(?: {d.year})?"]
    if today.year * 12 + today.month + 1 == d.year * 12 + d.month:
        months.append("next month")
    if (today.year, today.month) == (d.year, d.month):
        months.append("this month")
    return [rf"(?:the )?(?:{'|'.join(nth)}) {weekday} (?:of|in) (?:the )?(?:{'|'.join(months)})"]


def _weekday_forms(index: int) -> str:
    """A weekday's name and the ways people shorten it ("wed", "thurs", "fri"); not "the sun", nor
    "sat" as a verb ("sat on the sofa"), unless a word that names a day stands before it ("this
    sat at 8pm")."""
    name = _WEEKDAYS[index]
    sat = r"(?:(?<=this )|(?<=next )|(?<=on )|(?<=coming ))sat|sat(?! (?:on|down|in|at|there|by|with|up|back)(?!\S))"
    short = [rf"(?<!the ){a}" if a == "sun" else sat if a == "sat" else a for a in WEEKDAY_SHORT[name]]
    return "(?:" + "|".join([name, *short]) + ")"


def _relative_forms(d: date, today: date) -> list[str]:
    delta = (d - today).days
    weekday = _weekday_forms(d.weekday())
    forms = [_NAMED_DAYS[delta]] if delta in _NAMED_DAYS else []
    if 0 <= delta <= 7:
        forms.append(rf"(?<!last ){weekday}")
    if 1 <= delta <= 13:
        forms.append(rf"next {weekday}")
    if 1 <= delta <= 31:
        forms.append(rf"in (?:{delta}|{number_words(delta)}) days?")
    if -31 <= delta <= -1:
        forms.append(rf"(?:{-delta}|{number_words(-delta)}) days? ago")
    if delta and delta % 7 == 0 and abs(delta) <= 28:
        weeks = abs(delta) // 7
        count = rf"(?:{weeks}|{number_words(weeks)}{'|a' if weeks == 1 else ''})"
        forms.append(rf"{count} (?:weeks?|wks?) ago" if delta < 0 else rf"in {count} (?:weeks?|wks?)(?: time)?|{count} (?:weeks?|wks?) from (?:today|now)")
    if delta in (8, 15):  # "a week from tomorrow", "two weeks from tomorrow"
        forms.append(rf"(?:{'a|one' if delta == 8 else 'two|2'}) weeks? from tom+or+ow")
    if delta == -1:  # the last day of a range that leaves today out: "the last 7 days, leave today out"
        forms.append(r"(?:leav(?:e|ing)|excluding|exclude|without|not including|except(?: for)?) today(?: out)?")
    if abs(delta) == 14:  # "in a fortnight", "a fortnight ago"
        forms.append(r"(?:in )?a fortnight(?: from (?:today|now)| time)?(?! ago)" if delta > 0 else r"a fortnight ago")
    if -7 <= delta <= -1:
        forms.append(rf"last {weekday}")
    if 0 <= delta <= 31:
        forms.append(rf"the 0?{d.day} (?:st|nd|rd|th)(?! of (?:next|last|the next|the last) month)")  # "the 24th": the next such day of the month
        # a range of such days without "the": "20th to 23rd", "from 20th till 23rd"
        forms.append(rf"0?{d.day} (?:st|nd|rd|th)(?= (?:to|until|till|through|thru) 0?\d{{1,2}} (?:st|nd|rd|th)(?!\S))(?! of (?:next|last) month)")
        forms.append(rf"(?<=\d (?:st|nd|rd|th) )(?:to|until|till|through|thru) 0?{d.day} (?:st|nd|rd|th)(?! of (?:next|last|the next|the last) month)")
    # "the 23rd of this month", "from 23 until 27 of next month": a day of this or next month,
    # the month said once after a range
    month = "this|the" if (d.year, d.month) == (today.year, today.month) else "next" if today.year * 12 + today.month + 1 == d.year * 12 + d.month else None
    if month:
        day = rf"0?{d.day}(?: (?:st|nd|rd|th))?"
        later = r"(?:the )?\d{1,2}(?: (?:st|nd|rd|th))?"
        forms.append(rf"(?:the )?{day} of (?:{month}) month|(?:the )?{day}(?= (?:to|until|till|through|and) {later} of (?:{month}) month(?!\S))")
    if d.weekday() >= 5 and 0 <= delta <= 6:
        forms.append(r"(?:this|the) weekend")  # its Saturday and its Sunday
    if d.weekday() >= 5 and 1 <= delta <= 13:
        forms.append(r"next weekend")
    return forms


#: The words that name the part of the day an hour falls in, so that "6" with them is 6 pm.
_PART_OF = rf"(?:(?:in the|this|tomorrow|tmrw|at|on|{WEEKDAY_OR_SHORT_PATTERN}) )?"
_PART_WORDS = {"morning": rf"{_PART_OF}morning", "afternoon": rf"{_PART_OF}afternoon", "evening": rf"tonight|{_PART_OF}(?:evening|night)"}
#: The part each hour falls in (``lexicon.DAY_PARTS``; 17 is an evening's).
_DAY_PART = {h: _PART_WORDS[part] for part, (first, end) in DAY_PARTS.items() for h in range(first, end)}
#: The parts of the day a range may end in at each hour: a morning "9 to 12", an afternoon "2 to 5"
#: or "1 to 6", an evening "7 to 11".
_RANGE_END_PART = {h: "|".join(_PART_WORDS[part] for part, (first, end) in DAY_PARTS.items() if first < h <= end) or "(?!)" for h in range(24)}


#: Words for "at", "around", "by" or "from" before a clock hour in the common languages, and the
#: words for the hour after it ("vers 8h", "um 13 Uhr", "alle 20 ore", "o 9 godz", "lúc 7 giờ").
CLOCK_AT_WORDS = "at|around|about|by|from|until|till|à|vers|um|gegen|ab|bis|alle|verso|às|las|hacia|om|rond|tegen|o|około|в|к|до|saat|jam|lúc|kl|klockan"
_HOUR_WORDS = "h|hr|uhr|heures?|ore|horas?|uur|godz|godzina|час|часа|часов|giờ|saat"
#: Words after a number that make it no hour ("around 2 miles", "at 10 percent").
_OTHER_UNITS = "miles?|km|kilometers?|meters?|minutes?|mins?|hours?|days?|weeks?|percent|people|persons|kg|lbs?|pounds|dollars|euros"
#: How a clock time a quarter or half from the hour is said.
_QUARTERS = {15: "quarter (?:past|after)", 30: "half past", 45: "quarter (?:to|of|till)"}


def _time_forms(t: time) -> list[str]:
    h12 = t.hour % 12 or 12
    meridiem, other = ("am", "pm") if t.hour < 12 else ("pm", "am")
    says = rf"(?:{meridiem}|{meridiem[0]} m)"
    not_other = rf"(?! (?:{other}|{other[0]} m)(?!\S))"
    seconds = rf" {t.second:02d}" if t.second else ""
    forms = [
        rf"0?{t.hour} {t.minute:02d}{seconds}{not_other}",
        rf"0?{h12} {t.minute:02d}{seconds} {says}",
        rf"0?{t.hour} h {t.minute:02d}",
    ]
    minutes = f" {t.minute:02d}" if t.minute else ""
    # the start of a range whose end says am or pm: "from 8 to 11am", "2-3pm" (normalised "2 to 3
    # pm"), "from 2:00 to 3:30 PM" (on the hour, with its zeros or without)
    start = rf"{h12}{minutes or '(?: 00)?'}"
    forms.append(rf"{start}(?= (?:to|until|till) \d{{1,2}}(?: \d\d)? {says}(?!\S))")
    forms.append(rf"(?<=between ){start}(?= and \d{{1,2}}(?: \d\d)? {says}(?!\S))")  # "between 1 and 5pm"
    if (part := _DAY_PART.get(t.hour)) and not t.second:
        # the part of the day says am or pm: "tonight at 7:30", "this evening around 6", "between
        # nine and eleven in the morning"
        hour = rf"(?:{h12}|{number_words(h12)})"
        forms += [
            rf"(?:{part}) (?:(?:at|around|about|by|from|like) )?{hour}{minutes}{not_other}",
            # "tmrw afternoon for her shots? around 2", "saturday morning, like 10": a few words between
            rf"(?:{part})(?: \S+){{1,8}}? (?:at|around|about|like) {hour}{minutes}{not_other}(?! (?:\S+ )?(?:{_OTHER_UNITS}))",
            rf"{hour}{minutes}(?: o clock)?(?= (?:{part}))",
            rf"{hour}{minutes}(?= (?:to|until|till|and) \S+(?: \S+)? (?:{part})(?!\S))",
            # the end of a range after the part of the day: "friday afternoon 2 to 5", "this morning from 9 till 12"
            rf"(?:{_RANGE_END_PART[t.hour]})(?: \S+){{0,3}}? (?:from |between )?\d{{1,2}}(?: \d\d)? (?:to|until|till|and) {hour}{minutes}{not_other}(?! (?:\S+ )?(?:{_OTHER_UNITS}))",
        ]
    if t.minute in _QUARTERS and not t.second:
        # "quarter to seven", "half past 6 pm", "a quarter after nine": the hour they count from
        said_hour = (h12 % 12 + 1) if t.minute == 45 else h12
        hour = rf"(?:{said_hour}|{number_words(said_hour)})"
        part = _DAY_PART.get(t.hour, "")
        others = "|".join(p for p in dict.fromkeys(_DAY_PART.values()) if p != part)
        forms.append(rf"(?:a )?{_QUARTERS[t.minute]} {hour}(?: {says}| o clock)?{not_other}(?! (?:{others})(?!\S))")
        if t.minute == 30:
            # "tomorrow half 3", "half seven": half past, as it is said in Britain; not "half 3 cups"
            forms.append(rf"(?<!in )(?<!by )half {hour}(?: {says})?{not_other}(?! (?:{_OTHER_UNITS}|of|times|cups?|an?|the)(?!\S))(?! (?:{others})(?!\S))")
    if not t.second:
        # "pickup 0400 tmrw", "it's 0600 UTC": four digits, as a 24-hour clock writes them; without
        # a leading zero only with the clock's own words ("1400 hrs"), for 1400 may be a year
        hhmm = rf"{t.hour:02d}{t.minute:02d}"
        forms.append(rf"{hhmm}(?= (?:hrs?|hours|utc|gmt|z|zulu|local)(?!\S))" if t.hour >= 10 else rf"{hhmm}(?! \d)")
    if t.minute == 0 and not t.second:
        hour = rf"(?:{h12}|{number_words(h12)})"  # "at ten am", "at 10"
        forms += [rf"{hour} {says}", rf"{t.hour:02d} h", rf"{hour} o clock", rf"at {hour}(?: {says})?(?! \d\d)(?! (?:past|to|after|of|till) ){not_other}"]  # not "at ten past nine"
        forms += {0: ["midnight"], 12: ["noon", "midday", "noon ?ish", "lunchtime"]}.get(t.hour, [])  # "pick up tomorrow noonish"
        # the hour and the word for it after "at" or "around", in the common languages: "vers 8h", "um 13 Uhr", "alle 20 ore"
        forms.append(rf"(?:{CLOCK_AT_WORDS}) 0?{t.hour} (?:{_HOUR_WORDS})")
    if not t.second:
        forms += _cjk_time_forms(t)
    return forms


#: The words after an hour and a minute in Chinese, Japanese and Korean ("9時", "9点", "9시";
#: "30分", "30분"), and those before an afternoon hour ("午後3時", "下午3点", "오후 3시").
_CJK_HOUR, _CJK_MINUTE, _CJK_AFTERNOON = "(?:時|时|点|點|시)", "(?:分|분)", "(?:午後|下午|오후) "


def _cjk_time_forms(t: time) -> list[str]:
    """A time as Chinese, Japanese and Korean write it, normalised ("朝9時以降" -> "朝 9 時以降"):
    the hour before its word, the minutes after it ("9 時 30 分"), an afternoon hour after its
    word ("午後 3 時" for 15:00, never 03:00), or the hour of a 24-hour clock ("15 時")."""
    minutes = rf" {_CJK_HOUR} 0?{t.minute}(?= {_CJK_MINUTE})" if t.minute else rf"(?= {_CJK_HOUR})(?! {_CJK_HOUR} \d)"
    hours = [rf"(?<!{_CJK_AFTERNOON})0?{t.hour}{minutes}"]
    if t.hour > 12:
        hours.append(rf"(?<={_CJK_AFTERNOON}){t.hour - 12}{minutes}")
        # the end of an afternoon range, the afternoon said once before its start: "下午3点到4点"
        hours.append(rf"(?<={_CJK_AFTERNOON})\d{{1,2}} {_CJK_HOUR}\S{{0,3}} {t.hour - 12}{minutes}")
    return hours
