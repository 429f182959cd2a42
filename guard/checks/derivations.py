"""Values a model derives, by a fixed rule, from words the user said.

Grounding asks where a value came from. Some values appear nowhere word for word, yet follow from
what was said by a rule anyone would apply the same way: ``startMonth: 3`` from "from March",
``2023-06-30`` from "to June 2023", ``["Monday", ..., "Friday"]`` from "on weekdays", ``"USD"``
from "$75", ``costAdjustment: 0`` from "with no cost adjustment", ``autoRemove: "yes"`` from
"automatically remove", and coordinates looked up for a
place the user named. Asking the human about them would be a false alarm, so grounding accepts
them here, after its literal search fails and before any paraphrase matcher, and says which words derived each one and how (grounding reports it as a match whose source is
"derived").

Only rules that need no outside knowledge beyond a calendar, a currency symbol table and the
fact that a named place has coordinates: a value derived from what the model merely believes
("the decade starting in 2000" ends in 2009? "young adults" are 18-35?) still counts as invented.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import date

#: The user and system messages, as written, with their index in the conversation.
Said = list[tuple[int, str]]
#: Which message derived a value, and how ("march -> month 3").
Derivation = tuple[int, str]

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_WEEKDAYS = [d.lower() for d in calendar.day_name]
_DAY_GROUPS = {"weekday": _WEEKDAYS[:5], "weekdays": _WEEKDAYS[:5], "weekend": _WEEKDAYS[5:], "weekends": _WEEKDAYS[5:]}
_CURRENCY_SYMBOLS = {"$": "usd", "€": "eur", "£": "gbp", "¥": "jpy", "₹": "inr", "₩": "krw", "₽": "rub"}
_MONTH_YEAR = re.compile(r"\b(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?,?\s+(\d{4})\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)*")
_COORDINATE_NAMES = frozenset({"lat", "latitude", "lng", "lon", "long", "longitude"})


def derive(value: object, param: str, said: Said) -> Derivation | None:
    """The rule and words that derive ``value`` for parameter ``param``; None when no rule does."""
    for rule in _RULES:
        if (match := rule(value, param, said)) is not None:
            return match
    return None


def _month_number(value: object, param: str, said: Said) -> Derivation | None:
    """``startMonth: 3`` from "March": a month's number for a parameter named for months."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 12 or "month" not in param.lower():
        return None
    for index, text in said:
        for word in re.findall(r"[a-z]+", text.lower()):
            if _MONTHS.get(word) == value:
                return index, f"{word} -> month {value}"
    return None


def _month_bounds(value: object, param: str, said: Said) -> Derivation | None:
    """``2023-01-01`` / ``2023-06-30`` from "January 2023 to June 2023": a named month's first or
    last day, as a range's start or end."""
    m = _ISO_DATE.match(value) if isinstance(value, str) else None
    if m is None:
        return None
    year, month, day = int(m[1]), int(m[2]), int(m[3])
    if not 1 <= month <= 12 or day not in (1, calendar.monthrange(year, month)[1]):
        return None
    for index, text in said:
        for found in _MONTH_YEAR.finditer(text):
            if _MONTHS[found[1].lower()] == month and int(found[2]) == year:
                return index, f"{found[0]} -> {date(year, month, day).isoformat()}"
    return None


def _day_group(value: object, param: str, said: Said) -> Derivation | None:
    """"Monday" ... "Friday" from "weekdays", "Saturday" from "weekends"."""
    if not isinstance(value, str) or value.strip().lower() not in _WEEKDAYS:
        return None
    day = value.strip().lower()
    for index, text in said:
        for word in re.findall(r"[a-z]+", text.lower()):
            if day in _DAY_GROUPS.get(word, ()):
                return index, f"{word} -> {value}"
    return None


def _currency_code(value: object, param: str, said: Said) -> Derivation | None:
    """``"USD"`` from "$75": the code of a currency symbol written before an amount."""
    if not isinstance(value, str):
        return None
    code = value.strip().lower()
    for index, text in said:
        for symbol, symbol_code in _CURRENCY_SYMBOLS.items():
            if symbol_code == code and re.search(re.escape(symbol) + r"\s?\d", text):
                return index, f"{symbol} -> {value}"
    return None


def _none_is_zero(value: object, param: str, said: Said) -> Derivation | None:
    """``costAdjustment: 0`` from "no cost adjustment": "no" before the parameter's own words."""
    if value != 0 or isinstance(value, bool):
        return None
    words = [w for w in _param_words(param) if len(w) > 2]
    if not words:
        return None
    for index, text in said:
        lowered = text.lower()
        for word in words:
            if hit := re.search(rf"\b(?:no|zero|without(?: any)?)\s+(?:\w+\s+)?{word[:5]}\w*", lowered):
                return index, f"{hit[0]} -> 0"
    return None


_YES_NO = frozenset({"yes", "no", "true", "false", "on", "off", "enabled", "disabled"})


def _switch(value: object, param: str, said: Said) -> Derivation | None:
    """``autoRemove: "yes"`` from "automatically remove any threats": a yes/no written as text for a
    parameter the user's words name (the answer to a switch they mentioned)."""
    if not isinstance(value, str) or value.strip().lower() not in _YES_NO:
        return None
    words = [w for w in _param_words(param) if len(w) > 3]
    for index, text in said:
        lowered = text.lower()
        for word in words:
            if hit := re.search(rf"\b{word[:5]}\w*", lowered):
                return index, f"{hit[0]} -> {value}"
    return None


def _param_words(param: str) -> list[str]:
    return re.findall(r"[a-z]+", re.sub(r"(?<=[a-z])(?=[A-Z])", " ", param).lower())


def _coordinates(value: object, param: str, said: Said) -> Derivation | None:
    """A latitude or longitude for a place the user named ("the Eiffel Tower", "Athens"): looked
    up, not invented. Which coordinates a place has is not judged here."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    if not _COORDINATE_NAMES & set(_param_words(param)):
        return None
    for index, text in said:
        for name in _CAPITALISED.finditer(text):
            before = text[: name.start()].rstrip()
            first = name[0].split()[0].lower()
            if before and before[-1] not in ".!?:" and first not in _MONTHS and first not in _WEEKDAYS:
                return index, f"coordinates of {name[0]}"
    return None


_RULES: tuple[Callable[[object, str, Said], Derivation | None], ...] = (
    _month_number,
    _month_bounds,
    _day_group,
    _currency_code,
    _none_is_zero,
    _switch,
    _coordinates,
)
