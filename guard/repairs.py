"""Repairs: safe, deterministic fixes applied to a copy of the arguments before validation.

Many faults have exactly one sensible reading: ``"3"`` for an integer, ``"celsius"`` for the enum
member ``"Celsius"``, ``fromCity`` for the declared ``from_city``, ``"2021/09/28"`` for a
``YYYY-MM-DD`` date. Sending the model back for those costs a round trip and often a second
mistake, so the guard fixes them and reports each fix as a finding (category: the fault it fixed;
``repair``: what changed) that the policy can accept, refuse, or show to a human.

A repair is made only when the reading is unambiguous: never when the schema already allows the
value's type, never when two enum members or two parameter names fit, never for ``"3 apples"``
or an ambiguous ``03/04/2021``. Each kind can be switched off in the policy, and all of them per
tool. The walk follows the schema (properties, items, and unambiguous ``anyOf``/``oneOf``
branches), builds new containers as it goes and never mutates ``ctx.args``; subtrees the schema
does not describe are shared with the input unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from guard import schema as schemas
from guard.lexicon import DATE_LANGUAGES
from guard.text import described_literal
from guard.checks import CheckContext
from guard.checks.arguments import (
    child_path,
    conforms_to_format,
    encodable,
    excerpt,
    is_parsed,
    json_type,
    nesting_depth_exceeds,
    parse_text,
    path_label,
)
from guard.models import Finding, Repair
from guard.policy import RepairSwitches
from guard.taxonomy import Category

NAME = "repairs"


def apply(ctx: CheckContext) -> tuple[dict[str, Any], list[Finding]]:
    """The repaired arguments and one finding per repair (none when repairs are off)."""
    spec = ctx.spec
    if spec is None or not ctx.policy.repairs_allowed(spec.name) or not isinstance(ctx.args, dict):
        return ctx.args, []
    walk = _Walk(ctx, spec.name, ctx.policy.repairs)
    return walk.object(ctx.args, spec.parameters, "$"), walk.findings


@dataclass
class _Walk:
    """One pass over the arguments, collecting findings."""

    ctx: CheckContext
    tool: str
    switches: RepairSwitches
    findings: list[Finding] = field(default_factory=list)

    def report(self, category: Category, kind: str, path: str, before: Any, after: Any, message: str) -> None:
        self.findings.append(
            Finding(
                category=category,
                check=NAME,
                message=message,
                tool=self.tool,
                path=path,
                value=encodable(before),
                rule=kind,
                repair=Repair(kind=kind, path=path, before=encodable(before), after=encodable(after)),
            )
        )

    def object(self, value: dict[str, Any], schema: dict[str, Any], path: str) -> dict[str, Any]:
        props = schema.get("properties")
        props = props if isinstance(props, dict) else {}
        extra = schema.get("additionalProperties")
        out = dict(value)
        if props and self.switches.param_names and extra in (None, False):
            out = self.rename(out, props, path)
        patterns = schema.get("patternProperties")
        patterns = patterns if isinstance(patterns, dict) else {}
        for key, item in out.items():
            sub = props.get(key) if key in props else _pattern_schema(patterns, key, extra)
            if isinstance(sub, dict):
                out[key] = self.value(item, sub, child_path(path, key))
        return out

    def array(self, value: list[Any], schema: dict[str, Any], path: str) -> list[Any]:
        prefix = schema.get("prefixItems") if isinstance(schema.get("prefixItems"), list) else []
        items = schema.get("items")
        out = list(value)
        for i, item in enumerate(out):
            sub = prefix[i] if i < len(prefix) else items
            if isinstance(sub, dict):
                out[i] = self.value(item, sub, child_path(path, i))
        return out

    def value(self, value: Any, schema: dict[str, Any], path: str) -> Any:
        resolved = _resolve(schema, value)
        if resolved is None:
            return value
        if isinstance(value, str) and self.switches.parse_json:
            value = self.parse_json(value, resolved, path)
        if self.switches.coerce_types:
            value = self.coerce(value, resolved, path)
        if isinstance(value, dict):
            return self.object(value, resolved, path)
        if isinstance(value, list):
            return self.array(value, resolved, path)
        if isinstance(value, str) and self.switches.enum_case:
            value = self.enum_case(value, resolved, path)
        if isinstance(value, str) and self.switches.date_format:
            value = self.date_format(value, resolved, path)
        return value

    # -- parse_json ------------------------------------------------------------------------------

    def parse_json(self, value: str, schema: dict[str, Any], path: str) -> Any:
        types = _types(schema)
        if not types or "string" in types or not types & {"object", "array"}:
            return value
        limits = self.ctx.policy.checks.limits
        if len(value) > limits.max_bytes:
            return value
        try:
            parsed = parse_text(value)
        except RecursionError:
            return value
        if not is_parsed(parsed) or json_type(parsed) not in types:
            return value
        if nesting_depth_exceeds(parsed, limits.max_depth):
            return value
        message = f"{path_label(path)}: text parsed into an {json_type(parsed)}"
        self.report(Category.TYPE_VIOLATION, "parse_json", path, value, parsed, message)
        return parsed

    # -- coerce_types ----------------------------------------------------------------------------

    def coerce(self, value: Any, schema: dict[str, Any], path: str) -> Any:
        types = _types(schema)
        if not types or _admits(types, value):
            return value
        new = _coerced(value, types, schema)
        if new is _NO_REPAIR:
            return value
        message = f"{path_label(path)}: {excerpt(value)} converted to {json_type(new)} {excerpt(new)}"
        self.report(Category.TYPE_VIOLATION, "coerce_types", path, value, new, message)
        return new

    # -- enum_case -------------------------------------------------------------------------------

    def enum_case(self, value: str, schema: dict[str, Any], path: str) -> str:
        members = schema.get("enum")
        if not isinstance(members, list) or value in schemas.members(members):
            return value
        matches = schemas.derived(members, _enum_index).get(_enum_key(value), [])
        if len(matches) != 1:
            return value
        message = f"{path_label(path)}: {excerpt(value)} corrected to the allowed value {matches[0]!r}"
        self.report(Category.ENUM_VIOLATION, "enum_case", path, value, matches[0], message)
        return matches[0]

    # -- date_format -----------------------------------------------------------------------------

    def date_format(self, value: str, schema: dict[str, Any], path: str) -> str:
        types = _types(schema)
        if types is not None and "string" not in types:
            return value
        target = _target_format(_str_or_none(schema.get("format")), _str_or_none(schema.get("description")))
        if target is None or _matches(value, target) or _fits_pattern(value, schema):
            return value
        if described_literal(value, _str_or_none(schema.get("description")) or ""):
            return value  # "YYYY-MM-DD or relative: 'today', 'yesterday', 'NdaysAgo'": a form the API takes as it is
        parsed = _parse_when(value, self.ctx.conversation.reference_time)
        if parsed is None or not parsed.fits(target):
            return value
        new = parsed.when.strftime(target.strftime)
        if new == value:
            return value
        message = f"{path_label(path)}: {excerpt(value)} reformatted as {target.label} {new!r}"
        self.report(Category.FORMAT_VIOLATION, "date_format", path, value, new, message)
        return new

    # -- param_names -----------------------------------------------------------------------------

    def rename(self, args: dict[str, Any], props: dict[str, Any], path: str) -> dict[str, Any]:
        unknown = [k for k in args if isinstance(k, str) and k not in props]
        if not unknown:
            return args
        free = [p for p in props if p not in args]
        targets = {k: t for k in unknown if (t := _declared_name(k, free)) is not None}
        claimed = list(targets.values())
        renames = {k: t for k, t in targets.items() if claimed.count(t) == 1}
        for key, target in renames.items():
            message = f"argument {excerpt(key)} renamed to the declared parameter {target!r}"
            old_path = child_path(path, key)
            self.report(Category.UNEXPECTED_ARGUMENT, "param_names", old_path, key, target, message)
        return {renames.get(k, k): v for k, v in args.items()}


def wants_date(schema: dict[str, Any]) -> bool:
    """Whether a parameter's schema ``format`` or description asks for a date/time format."""
    return _target_format(_str_or_none(schema.get("format")), _str_or_none(schema.get("description"))) is not None


def as_schema_date(text: str, schema: dict[str, Any], reference: datetime) -> str | None:
    """``text`` ("March 20, 2023 at 6:30 AM") written in the date/time format the schema asks for,
    when the text states everything the format shows; None otherwise. Shared with the provenance
    completion, which reads dates from the user's words."""
    target = _target_format(_str_or_none(schema.get("format")), _str_or_none(schema.get("description")))
    parsed = _parse_when(text, reference) if target is not None else None
    if target is None or parsed is None or not parsed.fits(target):
        return None
    return parsed.when.strftime(target.strftime)


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# ----------------------------------------------------------------------------------------------
# Reading the schema.
# ----------------------------------------------------------------------------------------------


def _types(schema: dict[str, Any]) -> frozenset[str] | None:
    """The schema's declared types (None: any type)."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return frozenset((declared,))
    if isinstance(declared, list):
        return frozenset(t for t in declared if isinstance(t, str))
    return None


def _admits(types: frozenset[str] | None, value: Any) -> bool:
    if types is None:
        return True
    kind = json_type(value)
    return kind in types or (kind == "integer" and "number" in types)


def _resolve(schema: dict[str, Any], value: Any) -> dict[str, Any] | None:
    """The schema that describes ``value``: ``anyOf``/``oneOf`` resolved to its one fitting
    branch (merged with the outer keywords), or None when the branches leave it ambiguous."""
    branches = schema.get("anyOf", schema.get("oneOf"))
    if not isinstance(branches, list) or "type" in schema:
        return schema
    options = [b for b in branches if isinstance(b, dict)]
    fitting = [b for b in options if _admits(_types(b), value)]
    if not fitting:
        fitting = [b for b in options if _types(b) != frozenset(("null",))]
    if len(fitting) != 1:
        return None
    outer = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
    return {**outer, **fitting[0]}


# ----------------------------------------------------------------------------------------------
# coerce_types
# ----------------------------------------------------------------------------------------------

_NO_REPAIR = object()
_CLEAN_NUMBER = re.compile(r"[+-]?(?:\d+|\d{1,3}(?:,\d{3})+)(?:\.\d+)?")
_TRUE = frozenset(("true", "yes", "1"))
_FALSE = frozenset(("false", "no", "0"))


def _coerced(value: Any, types: frozenset[str], schema: dict[str, Any]) -> Any:
    """The value converted to a type the schema allows, or ``_NO_REPAIR``."""
    if isinstance(value, str):
        return _from_string(value, types, schema)
    if isinstance(value, float) and value.is_integer() and "integer" in types:
        return int(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and "string" in types:
        return _number_text(value)
    return _as_list(value, types, schema)


def _from_string(value: str, types: frozenset[str], schema: dict[str, Any]) -> Any:
    text = value.strip()
    if types & {"integer", "number"} and len(text) <= 30 and _CLEAN_NUMBER.fullmatch(text):
        number = _number(text, types)
        if number is not _NO_REPAIR:
            return number
    if "boolean" in types:
        word = text.casefold()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
    return _as_list(value, types, schema)


def _number(text: str, types: frozenset[str]) -> Any:
    try:
        number = Decimal(text.replace(",", ""))
    except InvalidOperation:
        return _NO_REPAIR
    if "integer" in types and number == number.to_integral_value():
        return int(number)
    if "number" in types:
        return int(number) if "." not in text else float(number)
    return _NO_REPAIR


def _number_text(value: int | float) -> Any:
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return _NO_REPAIR
    return str(int(value)) if value.is_integer() else repr(value)


def _as_list(value: Any, types: frozenset[str], schema: dict[str, Any]) -> Any:
    """A lone scalar where the schema wants an array of that scalar's type."""
    items = schema.get("items")
    if "array" not in types or not isinstance(items, dict) or isinstance(value, (dict, list)):
        return _NO_REPAIR
    item_types = _types(items)
    if item_types is None or value is None or not _admits(item_types, value):
        return _NO_REPAIR
    return [value]


# ----------------------------------------------------------------------------------------------
# enum_case
# ----------------------------------------------------------------------------------------------

_ENUM_SEPARATORS = re.compile(r"[\s_\-]+")


def _enum_key(text: str) -> str:
    return _ENUM_SEPARATORS.sub(" ", text.casefold()).strip()


def _enum_index(members: list[Any]) -> dict[str, list[str]]:
    """An enum's string members by their key, built once per enum (``guard.schema.derived``): an
    array of values against a long enum would otherwise cost values x members."""
    index: dict[str, list[str]] = {}
    for m in members:
        if isinstance(m, str):
            index.setdefault(_enum_key(m), []).append(m)
    return index


# ----------------------------------------------------------------------------------------------
# param_names
# ----------------------------------------------------------------------------------------------

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NAME_SEPARATORS = re.compile(r"[\s\-.]+")
_MIN_TYPO_LENGTH = 5
_MIN_NAME_SCORE = 90.0


@lru_cache(maxsize=4096)
def _name_key(name: str) -> str:
    """'fromCity', 'From-City', 'FROM_CITY' -> 'from_city'."""
    return _NAME_SEPARATORS.sub("_", _CAMEL.sub("_", name)).lower().strip("_")


def _declared_name(key: str, free: list[str]) -> str | None:
    """The one free declared name ``key`` stands for: equal after normalisation, else a near miss
    (rapidfuzz ratio >= 90, or one typo -- a single edit or swap -- in a name of 5+ characters)."""
    wanted = _name_key(key)
    if not wanted:  # "" or "__": no name at all, so it stands for none ('' became '_')
        return None
    exact = [p for p in free if _name_key(p) == wanted]
    if exact:
        return exact[0] if len(exact) == 1 else None
    close = [p for p in free if _near(wanted, _name_key(p))]
    return close[0] if len(close) == 1 else None


def _near(a: str, b: str) -> bool:
    if fuzz.ratio(a, b) >= _MIN_NAME_SCORE:
        return True
    return min(len(a), len(b)) >= _MIN_TYPO_LENGTH and OSA.distance(a, b, score_cutoff=1) <= 1


# ----------------------------------------------------------------------------------------------
# date_format
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Target:
    """A format a date string must have: as strftime, as shown to people, or a schema format."""

    strftime: str
    label: str
    schema_format: str | None = None

    @property
    def needs_time(self) -> bool:
        return any(d in self.strftime for d in ("%H", "%I", "%M", "%S"))

    @property
    def needs_date(self) -> bool:
        return any(d in self.strftime for d in ("%Y", "%y", "%m", "%d", "%b", "%B", "%j"))


_SCHEMA_FORMATS = {
    "date": _Target("%Y-%m-%d", "date (YYYY-MM-DD)", "date"),
    "date-time": _Target("%Y-%m-%dT%H:%M:%S", "date-time (YYYY-MM-DDTHH:MM:SS)", "date-time"),
    "time": _Target("%H:%M:%S", "time (HH:MM:SS)", "time"),
}

_STRFTIME_IN_TEXT = re.compile(r"%[YmdHMSyIpbBj](?:[-/:.,T ]{0,2}%[YmdHMSyIpbBj])+")
_TOKEN = r"(?:yyyy|yy|mm|dd|hh|ss)"
_TOKENS_IN_TEXT = re.compile(
    rf"(?<![a-z0-9]){_TOKEN}(?:(?:[-/:.]|\s|t)?{_TOKEN})+(?![a-z0-9:/-])(?!\.[a-z0-9])", re.IGNORECASE
)
_TOKEN_PARTS = re.compile(rf"({_TOKEN})|([-/:.\sTt])", re.IGNORECASE)
_YEAR_OR_HOUR = re.compile(r"yy|hh", re.IGNORECASE)
_TOKEN_DIRECTIVES = {"yyyy": "%Y", "yy": "%y", "dd": "%d", "hh": "%H", "ss": "%S"}


@lru_cache(maxsize=8192)  # one entry per parameter description: tools repeat, across many tool sets
def _target_format(schema_format: str | None, description: str | None) -> _Target | None:
    """The format a parameter's value must have: its schema ``format``, else one its description
    states (``YYYY-MM-DD``, ``MM/DD/YYYY HH:MM``, ``%Y-%m-%d``...)."""
    if schema_format in _SCHEMA_FORMATS:
        return _SCHEMA_FORMATS[schema_format]
    if not description:
        return None
    description = description.replace("'T'", "T")  # Java style: yyyy-MM-dd'T'HH:mm:ss
    if m := _STRFTIME_IN_TEXT.search(description):
        return _Target(m.group(0), m.group(0))
    for m in _TOKENS_IN_TEXT.finditer(description):
        shown = m.group(0)
        years = [tok for tok, _ in _TOKEN_PARTS.findall(shown) if tok.lower() in ("yyyy", "yy")]
        if len(years) > 1:
            continue  # "YYYY-YY" is a span of years (a season: 2023-24), no date's format
        if _YEAR_OR_HOUR.search(shown):
            return _Target(_tokens_to_strftime(shown), shown)
    return None


def _tokens_to_strftime(shown: str) -> str:
    """'MM/DD/YYYY HH:MM' -> '%m/%d/%Y %H:%M': MM next to a colon means minutes, else month."""
    parts = [(tok.lower(), sep) for tok, sep in _TOKEN_PARTS.findall(shown)]
    out = []
    for i, (token, sep) in enumerate(parts):
        if sep:
            out.append("T" if sep in "Tt" else sep)
        elif token == "mm":
            beside = {parts[j][1] for j in (i - 1, i + 1) if 0 <= j < len(parts)}
            out.append("%M" if ":" in beside else "%m")
        else:
            out.append(_TOKEN_DIRECTIVES[token])
    return "".join(out)


def _fits_pattern(value: str, schema: dict[str, Any]) -> bool:
    """Whether the schema's pattern admits the value as it is ("2025-Q2" where the description
    shows "YYYY-MM or YYYY-Qn"): a value the schema accepts is never reformatted. A pattern that
    cannot be decided in time admits nothing to reformat either."""
    pattern = schema.get("pattern")
    if not isinstance(pattern, str):
        return False
    try:
        return schemas.search(pattern, value)
    except schemas.RegexUndecided:
        return True


def _matches(value: str, target: _Target) -> bool:
    if target.schema_format is not None:
        return conforms_to_format(value, target.schema_format)
    try:
        return datetime.strptime(value, target.strftime).strftime(target.strftime) == value
    except ValueError:
        return False


@dataclass(frozen=True)
class _When:
    """A moment read from text, and which parts the text actually stated."""

    when: datetime
    has_date: bool
    has_time: bool

    def fits(self, target: _Target) -> bool:
        """Whether the text said everything the format shows (no invented midnight or today) and
        the format shows everything the text said (no dropped time, midnight aside, or date)."""
        says_enough = (self.has_time or not target.needs_time) and (self.has_date or not target.needs_date)
        drops_time = self.has_time and not target.needs_time and self.when.time() != time()
        drops_date = self.has_date and not target.needs_date
        return says_enough and not drops_time and not drops_date


_MAX_DATE_TEXT = 64
_YMD = re.compile(r"(\d{4})[/.](\d{1,2})[/.](\d{1,2})(.*)", re.DOTALL)
_ISO_TIME_PART = re.compile(r"\d[T ]\d|\d:\d")
_NUMERIC_DMY = re.compile(r"(\d{1,2})[/.-](\d{1,2})[/.-]\d{2,4}\b")
_AM_PM = r"(?:a\.?m\.?|p\.?m\.?)"
_TIME_IN_TEXT = re.compile(
    rf"\d:\d\d|\d\s*{_AM_PM}(?![a-z])|\b(?:noon|midnight)\b|\d\s*o'clock|[点時时]", re.IGNORECASE
)
_TIME_ONLY = re.compile(
    rf"\s*(?:at\s+)?(?:\d{{1,2}}(?::\d\d(?::\d\d)?)?\s*{_AM_PM}?|noon|midnight)\s*", re.IGNORECASE
)


def _parse_when(value: str, reference: datetime) -> _When | None:
    """A date/time read from text: ISO variants first, dateparser only when they fail.

    Numeric day/month orders that could go either way (``03/04/2021``) and ISO values with a
    UTC offset (which no target format here shows) are refused.
    """
    text = value.strip()
    if not text or len(text) > _MAX_DATE_TEXT:
        return None
    iso = _parse_iso(text)
    if iso is not None:  # with a UTC offset no target here can show, it stays as it is
        return iso if iso.when.tzinfo is None else None
    if (m := _NUMERIC_DMY.match(text)) and _ambiguous_day_month(int(m.group(1)), int(m.group(2))):
        return None
    when = _dateparser(text, reference)
    if when is None:
        return None
    return _When(when, has_date=not _TIME_ONLY.fullmatch(text), has_time=bool(_TIME_IN_TEXT.search(text)))


def _parse_iso(text: str) -> _When | None:
    """ISO 8601 (and ``2021/09/28``), or None."""
    if m := _YMD.fullmatch(text):
        text = f"{m.group(1)}-{int(m.group(2)):02d}-{int(m.group(3)):02d}{m.group(4)}"
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        pass
    else:
        has_time = len(text) > 10 and bool(_ISO_TIME_PART.search(text))
        return _When(when, has_date=True, has_time=has_time)
    try:
        moment = time.fromisoformat(text)
    except ValueError:
        return None
    return _When(datetime.combine(date.min, moment), has_date=False, has_time=True)


def _ambiguous_day_month(first: int, second: int) -> bool:
    return first != second and 1 <= first <= 12 and 1 <= second <= 12


@lru_cache(maxsize=1024)  # the same value is read again at every call of a conversation
def _dateparser(text: str, reference: datetime) -> datetime | None:
    import dateparser  # slow to import and to run: only reached for values no cheaper parse reads

    settings = {
        "RELATIVE_BASE": reference.replace(tzinfo=None),
        "PREFER_DATES_FROM": "future",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }
    # English alone first (a millisecond), then the other common languages together; never every
    # locale dateparser knows (DATE_LANGUAGES says why)
    for languages in (DATE_LANGUAGES[:1], DATE_LANGUAGES[1:]):
        try:
            when = dateparser.parse(text, settings=settings, languages=list(languages))
        except Exception:  # dateparser raises many types on odd input
            continue
        if when is not None:
            return when
    return None


def _pattern_schema(patterns: dict[str, Any], key: str, extra: Any) -> Any:
    """The schema a key outside ``properties`` is repaired by: ``additionalProperties`` only when no
    ``patternProperties`` pattern matches it (a matched key is checked by the pattern's schema, not
    by ``additionalProperties``); the pattern's schema when exactly one matches; none when several
    do, or when a pattern cannot be decided in time."""
    matched = []
    for pattern, sub in patterns.items():
        try:
            if schemas.search(str(pattern), key):
                matched.append(sub)
        except schemas.RegexUndecided:
            return None
    if not matched:
        return extra
    return matched[0] if len(matched) == 1 else None
