"""Values a model works out from numbers the conversation already holds, tool results included.

``derivations`` reads what the user said; these rules read what the tools returned as well:

* a **total** of one field over a list a tool returned ("how much did I spend on groceries last
  month? then move that amount to checking": the sum of the four transactions' ``amount``);
* a **date-time a tool returned, moved** by a length the user said ("pull the last 6 hours for
  that sensor" after a reading stamped 14:05: the start at 08:05);
* a **year of birth** from a year and an age the conversation gives ("the 1911 census" and a
  household member "age": 28: born 1883 or 1882);
* a **percentage** the user said, taken off, added to or taken of a number the conversation holds
  ("20% off" a price a tool returned: the sale price);
* a **product** of two numbers the conversation holds (a receipt in dollars times the exchange
  rate a tool returned), for a value with decimals;
* a **multiple** the user asked for of a number the conversation holds next to the thing the
  parameter names ("Classic Banana Bread ... serves 4" then "double it": ``target_servings: 8``;
  a deployment at ``replicas: 3`` and "double its replicas": 6).

Bounded like every rule: the last eight tool results, the first 200,000 characters of each, at
most 64 lists and 2,000 items read in all.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterator
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from guard.checks import measures
from guard.checks.measures import rounds_to
from guard.lexicon import foreign_duration_words, foreign_number_words, unspaced
from guard.normalise import CLOCK_AT_WORDS, normalise_text, parse_temporal
from guard.registry import name_words

#: (index, words): where a value came from and how.
Derivation = tuple[int | None, str]

_RESULTS = 8
_READ = 200_000
_LISTS = 64
_ITEMS = 2_000


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d{1,12}(?:\.\d{1,6})?\s*", value):
        value = float(value.strip())  # float() refuses some of what \s reads as space ("0\x1f")
    return float(value) if isinstance(value, (int, float)) and math.isfinite(value) else None


def result_total(value: object, results: list[tuple[int, str]]) -> Derivation | None:
    """``amount: 375.0`` where a tool returned four transactions of -84.12, -132.55, -61.30 and
    -97.03: the sum of one numeric field over the items of a list in one tool result (two items
    or more), to the value's precision, its sign aside (money spent is returned negative)."""
    number = _number(value)
    if number is None or number == 0:
        return None
    for index, content in results[-_RESULTS:]:
        for key, count, total in _totals(content[:_READ]):
            if rounds_to(abs(number), abs(total)):
                return index, f"the sum of {count} {key} values -> {value}"
    return None


@lru_cache(maxsize=64)  # a result is read once, however many values of however many calls ask
def _totals(content: str) -> tuple[tuple[str, int, float], ...]:
    """Each numeric field's total over each list of two objects or more in a JSON tool result."""
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):
        return ()
    found = []
    for items in itertools.islice(_lists(data), _LISTS):
        rows = [item for item in items[:_ITEMS] if isinstance(item, dict)]
        if len(rows) < 2:
            continue
        for key in list(rows[0])[:32]:
            column = [None if isinstance(row.get(key), str) else _number(row.get(key)) for row in rows]
            if all(v is not None for v in column):
                found.append((str(key), len(rows), math.fsum(column)))  # type: ignore[arg-type]
    return tuple(found)


def _lists(data: Any, depth: int = 0) -> Iterator[list[Any]]:
    if depth > 6:
        return
    if isinstance(data, list):
        yield data
        for item in data[:_ITEMS]:
            if isinstance(item, (dict, list)):
                yield from _lists(item, depth + 1)
    elif isinstance(data, dict):
        for item in data.values():
            if isinstance(item, (dict, list)):
                yield from _lists(item, depth + 1)


def shifted_result_time(value: object, said: list[tuple[int, str]], results: list[tuple[int, str]]) -> Derivation | None:
    """``start: 2025-07-02T08:05:00Z`` from "pull the last 6 hours" after a reading stamped
    ``2025-07-02T14:05:00Z``: a date-time a tool returned, moved back or on by a length of time
    the user said (written as the value is: the same offset and precision)."""
    if isinstance(value, str) and _DAY.fullmatch(value.strip()):
        return _shifted_result_day(value.strip(), said, results)
    if not isinstance(value, str) or not _STAMP.fullmatch(value.strip()):
        return None
    text = value.strip()
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    for span in measures.stated_spans((words for _, words in said[-_RESULTS:]), 366 * 24 * 60):
        for moved in (moment + timedelta(minutes=span.minutes), moment - timedelta(minutes=span.minutes)):
            written = _written_like(moved, text)
            for index, content in results[-_RESULTS:]:
                if content.find(written, 0, _READ) >= 0:
                    return index, f"{written} {'-' if moved > moment else '+'} {span.words} -> {value}"
    return None


_DAY = re.compile(r"\d{4}-\d\d-\d\d")


def _shifted_result_day(value: str, said: list[tuple[int, str]], results: list[tuple[int, str]]) -> Derivation | None:
    """``date: 2024-05-21`` from "push my flight back by one day" after a reservation dated
    ``2024-05-20``: a day a tool returned, moved by a number of days or weeks the user said."""
    try:
        day = date.fromisoformat(value)
    except ValueError:
        return None
    for span in measures.stated_spans((words for _, words in said[-_RESULTS:]), 366 * 24 * 60):
        if span.minutes % (24 * 60):
            continue
        days = timedelta(days=span.minutes // (24 * 60))
        for moved in (day - days, day + days):
            for index, content in results[-_RESULTS:]:
                if content.find(moved.isoformat(), 0, _READ) >= 0:
                    return index, f"{moved.isoformat()} {'+' if moved < day else '-'} {span.words} -> {value}"
    return None


def span_end(value: object, start: object, said: list[tuple[int, str]], results: list[tuple[int, str]]) -> Derivation | None:
    """``end: 13:30`` beside ``start: 12:30`` for "lunch at 12:30, an hour": the end of a span that
    is its start plus a length the user stated (in English or in another common language's words
    for hours and minutes: "1時間", "una hora", "45 минут"), or plus the length of a returned event ("push the
    dentist to 4:30 pm" keeps its 45 minutes: two times a result gives one after the other, that
    far apart). Both are dates with times, or both times of day; at most a day apart."""
    end, begin = (parse_temporal(v) if isinstance(v, str) else None for v in (value, start))
    if end is None or begin is None or end.time is None or begin.time is None or (end.date is None) != (begin.date is None):
        return None
    day = datetime(2000, 1, 1).date()
    minutes = (datetime.combine(end.date or day, end.time) - datetime.combine(begin.date or day, begin.time)).total_seconds() / 60
    if not 0 < minutes <= 24 * 60:
        return None
    for index, text in said[-_RESULTS:]:
        if span := next((s for s in measures.stated_spans([text], 24 * 60, articles=True) if s.minutes == minutes), None):
            return index, f"{start} plus {span.words} -> {value}"
        if words := next((w for length, w in _foreign_lengths(text[:_LENGTH_READ]) if length == minutes), None):
            return index, f"{start} plus {words!r} -> {value}"  # "明日の午後3時から1時間", "durante una hora"
    for index, content in results[-_RESULTS:]:
        times = [t for t in map(_moment, itertools.islice(_STAMP.finditer(content, 0, _READ), 200)) if t is not None]
        if any(a.tzinfo == b.tzinfo and (b - a).total_seconds() == minutes * 60 for a, b in zip(times, times[1:])):
            return index, f"{start} plus the length of the returned event ({minutes:g} min) -> {value}"
    return None


def _moment(found: re.Match[str]) -> datetime | None:
    try:
        return datetime.fromisoformat(found[0].replace(" ", "T").replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:  # "2025-13-45T99:00": no moment
        return None


_STAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d)?(?:\.\d+)?(?:[zZ]|[+-]\d\d:?\d\d)?")


def _written_like(moment: datetime, like: str) -> str:
    """``moment`` written as ``like`` is: its separator, its seconds, its zone suffix."""
    sep = "T" if "T" in like else " "
    seconds = len(like) >= 19 and like[16] == ":"
    written = moment.strftime(f"%Y-%m-%d{sep}%H:%M" + (":%S" if seconds else ""))
    if like.endswith(("Z", "z")):
        return written + like[-1]
    if moment.tzinfo is not None and (m := re.search(r"[+-]\d\d:?\d\d$", like)):
        return written + m[0]
    return written


#: What a user says to ask for a multiple of something: "double it", "twice the size", "halve it".
_MULTIPLES = {"double": 2.0, "twice": 2.0, "triple": 3.0, "treble": 3.0, "quadruple": 4.0, "halve": 0.5, "half": 0.5}
_ASKED = re.compile(r"\b(" + "|".join(_MULTIPLES) + r")\b")


def asked_multiple(value: object, param: str, asked: str, said: list[tuple[int, str]], results: list[tuple[int, str]]) -> Derivation | None:
    """``target_servings: 8`` from "Double it." after "... serves 4": a multiple the latest
    request asks for (double, triple, halve) of a number the conversation holds beside a word of
    the parameter's name, right before or after it (the same first four letters: "serves 4" for
    ``servings``, ``"replicas": 3``)."""
    number = _number(value)
    if number is None or not (m := _ASKED.search(normalise_text(asked[:4_096]))):
        return None
    factor = _MULTIPLES[m[1]]
    stems = {w[:4] for w in name_words(param).split() if len(w) >= 4}
    if not stems:
        return None
    held = sorted(said + results)  # what the user and the tools said, in the conversation's order
    for index, text in reversed(held[-_RESULTS:]):
        words = normalise_text(text[:_READ // 10]).split()
        for i, word in enumerate(words[:20_000]):
            if _number(word) is None or not rounds_to(number, float(word) * factor):
                continue
            near = words[max(0, i - 1) : i] + words[i + 1 : i + 2]  # "serves 4", "4 servings", "replicas": 3
            if any(w[:4] in stems for w in near if len(w) >= 4):
                return index, f"{m[1]} {word} ({' '.join(near)}) -> {value}"
    return None


#: A percentage as people write it in the common languages: "20%", "20 %", "15 percent", "un 20 por ciento".
_PERCENT = re.compile(r"(?<![\d.,])(\d{1,3}(?:[.,]\d{1,2})?)\s?(?:%|percent\b|per cent\b|por ciento\b|pour cent\b|prozent\b|per cento\b|procent\w*)", re.IGNORECASE)
#: A number as a text or a JSON document writes it, and what follows it when it is a percentage.
_NUMBER = re.compile(r"(?<![\w.])-?\d{1,9}(?:\.\d{1,6})?(?![\w.]|\.\d)")
_PERCENT_AFTER = re.compile(r"\s?(?:%|per ?cent|por ciento|pour cent|prozent|per cento|procent)", re.IGNORECASE)
#: How many numbers the percentage rule tries as bases, and how many distinct ones the product rule
#: pairs (their square bounds its work).
_BASES, _FACTORS = 2_000, 120


@lru_cache(maxsize=8)  # the conversation in hand: every numeric value of a call reads the same numbers
def _held_numbers(held: tuple[tuple[int, str], ...]) -> tuple[tuple[int, float], ...]:
    """The numbers the conversation holds, latest message first, at most ``_BASES``, read lazily
    (a text stops being read once enough are found); a percentage's own number ("10%") is no
    amount and is left out."""
    out: list[tuple[int, float]] = []
    for index, text in reversed(held):
        for m in _NUMBER.finditer(text[:_READ]):
            if _PERCENT_AFTER.match(text, m.end()):
                continue
            out.append((index, float(m[0])))
            if len(out) >= _BASES:
                return tuple(out)
    return tuple(out)


def _held(said: list[tuple[int, str]], results: list[tuple[int, str]]) -> tuple[tuple[int, float], ...]:
    return _held_numbers(tuple(sorted(said + results)[-_RESULTS:]))


def _near(number: float) -> float:
    """How far a result may lie from a value and still round to it: checked cheaply before ``rounds_to``."""
    return 0.5 * 10 ** -measures.decimals(number) + 1e-9


def percent_applied(value: object, said: list[tuple[int, str]], results: list[tuple[int, str]]) -> Derivation | None:
    """``sale_price: "10.32"`` for "20% off" a product a tool returned at 12.90: a percentage the
    user said, taken off, added to or taken of a number the conversation holds (a price, a
    total), to the value's precision."""
    number = _number(value)
    if number is None or number == 0:
        return None
    percents = list(dict.fromkeys(float(m[1].replace(",", ".")) for _, text in said for m in itertools.islice(_PERCENT.finditer(text[:_READ // 10]), 8)))[:8]
    percents = [p for p in percents if 0 < p < 1_000]
    if not percents:
        return None
    near = _near(number)
    for index, base in _held(said, results):
        for p in percents:
            for word, result in (("less", base * (1 - p / 100)), ("plus", base * (1 + p / 100)), ("of", base * p / 100)):
                if abs(result - number) > near:
                    continue
                if number.is_integer() and not math.isclose(result, round(result), abs_tol=1e-9):
                    continue  # a whole number is no rounding of 4.6: only an exact result counts
                if rounds_to(number, result):
                    return index, f"{base:g} {word} {p:g}% -> {value}"
    return None


def product_of_held(value: object, said: list[tuple[int, str]], results: list[tuple[int, str]]) -> Derivation | None:
    """``amount_cad: 117.03`` for a receipt of USD 82.49 and a rate of 1.4187 a tool returned: the
    product (or quotient) of two numbers the conversation holds, to the value's precision; only
    for a value with decimals (a whole number is too easily some product)."""
    number = _number(value)
    if number is None or number == 0 or number.is_integer():
        return None
    found: dict[float, int] = {}
    for index, factor in _held(said, results):
        if factor not in (0.0, 1.0, -1.0):
            found.setdefault(factor, index)
            if len(found) >= _FACTORS:
                break
    factors = list(found.items())
    near = _near(number)
    for i, (a, index) in enumerate(factors):
        for b, _ in factors[i:]:
            for word, result in (("x", a * b), ("/", a / b), ("/", b / a)):
                if abs(result - number) <= near and rounds_to(number, result):
                    return index, f"{a:g} {word} {b:g} -> {value}"
    return None


#: A number of days as a conversation states it: "15 days", "2 nights", "net 30", or a returned
#: field whose name counts days or nights ("payment_terms_days": 15, "nights": 2).
_DAY_COUNTS = re.compile(
    r"\b(\d{1,3})[\s-]*(?:days?|nights?|calendar days|business days)\b|\bnet[\s-]?(\d{1,3})\b|\"\w{0,40}?(?:days?|nights?)\w{0,40}\"\s*:\s*\"?(\d{1,3})\b",
    re.IGNORECASE,
)


def day_after_sibling(value: object, siblings: dict[str, Any], said: list[tuple[int, str]], results: list[tuple[int, str]]) -> Derivation | None:
    """``due_date: "2025-05-15"`` beside ``issue_date: "2025-04-30"`` where the client's
    ``payment_terms_days`` is 15: another date of the same call, plus a number of days the
    conversation states as days ("15 days", "net 30", a field counting days)."""
    if not isinstance(value, str) or not _DAY.fullmatch(value.strip()):
        return None
    try:
        day = date.fromisoformat(value.strip())
    except ValueError:
        return None
    gaps: dict[int, str] = {}
    for key, other in itertools.islice(siblings.items(), 32):
        if isinstance(other, str) and other.strip() != value.strip() and _DAY.fullmatch(other.strip()):
            try:
                gaps.setdefault((day - date.fromisoformat(other.strip())).days, key)
            except ValueError:
                continue
    gaps = {gap: key for gap, key in gaps.items() if 0 < gap <= 366}
    if not gaps:
        return None
    for index, text in sorted(said + results)[-_RESULTS:]:
        for m in itertools.islice(_DAY_COUNTS.finditer(text[:_READ]), 64):
            days = int(next(g for g in m.groups() if g))
            if days in gaps:
                return index, f"{gaps[days]} plus {m[0].strip()} -> {value}"
    return None


#: What of a message is read for lengths of time.
_LENGTH_READ = 2_000
#: A length of time as other languages write it: a number, then a word (CLDR's words for hours
#: and minutes: "2 horas", "1時間", "30 минут", "una hora").
_FOREIGN_LENGTH = re.compile(r"(?=((?<!\d)\d{1,3}|(?<![^\W\d_])[^\W\d_]+)\s*([^\W\d_]+))")
#: The words before an hour of the clock, ending where a number starts.
_CLOCK_BEFORE = re.compile(rf"(?:^|\s)(?:{CLOCK_AT_WORDS})\s*$")
#: "One" as the common languages say it before a unit ("una hora", "eine Stunde", "один час").
_ONE = frozenset("un una uno une ein eine einen um uma een один одна одну jeden jedna jedną bir satu một".split())


def _foreign_lengths(text: str) -> Iterator[tuple[int, str]]:
    """(minutes, words) of each length of time a text says in another common language."""
    lowered = text.lower()
    for language, units in foreign_duration_words().items():
        if not any(w in lowered for w in units):
            continue
        for m in itertools.islice(_FOREIGN_LENGTH.finditer(lowered), 64):
            if _CLOCK_BEFORE.search(lowered, max(0, m.start() - 24), m.start()):
                continue  # "às 3 horas da tarde", "um 15 Uhr": an hour of the clock, no length
            minutes = units.get(m[2]) or next((u for w, u in units.items() if unspaced(w) and m[2].startswith(w)), None)
            count = int(m[1]) if m[1].isdigit() else 1 if m[1] in _ONE else foreign_number_words(language).get(m[1])
            if minutes is not None and count:
                yield count * minutes, f"{m[1]} {m[2]}"


__all__ = ["asked_multiple", "day_after_sibling", "percent_applied", "product_of_held", "result_total", "shifted_result_time"]


#: A year of an event, 1500-2099, as written.
_YEAR = re.compile(r"(?<![\d.,:/-])(1[5-9]\d\d|20\d\d)(?![\d.,:/-])")
#: An age, as a tool returns it ("age": 28) or a user says it ("aged 28", "28 years old").
_AGE = re.compile(r"\"age\"\s*:\s*\"?(\d{1,3})\b|\baged?\s+(\d{1,3})\b|\b(\d{1,3})\s*(?:years?|yrs?)[\s-]*old\b", re.IGNORECASE)


def birth_year(value: object, param: str, said: list[tuple[int, str]], results: list[tuple[int, str]]) -> Derivation | None:
    """``birth_year_approx: 1883`` where the user asks about "the 1911 census" and the household a
    tool returned lists the wife at ``"age": 28``: a year the conversation names less an age it
    gives (or a year more, the birthday not yet come), for a parameter of a year of birth."""
    number = _number(value)
    words = set(name_words(param).split())
    if number is None or number != int(number) or not words & {"birth", "born", "birthyear", "yob"}:
        return None
    texts = [*said[-_RESULTS:], *results[-_RESULTS:]]
    years = {int(m[1]) for _, text in texts for m in itertools.islice(_YEAR.finditer(text[:_READ]), 32)}
    for index, text in texts:
        for m in itertools.islice(_AGE.finditer(text[:_READ]), 64):
            age = int(next(g for g in m.groups() if g is not None))
            if age <= 120 and any(number in (year - age, year - age - 1) for year in years):
                return index, f"a year named less age {age} -> {int(number)}"
    return None
