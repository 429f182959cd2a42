"""Arguments: turn what the model sent into an object, then validate it against the tool's schema.

Models send arguments as dicts, as JSON text, as Python-literal text (single quotes, ``True``),
as lists or as numbers; some send megabytes or nesting deep enough to crash a recursive parser.
``parse_arguments`` turns every such input into either an object or one MALFORMED_ARGUMENTS
finding, and never raises. ``check`` then validates the object with JSON Schema Draft 2020-12 and
reports one finding per fault with its exact JSON path, so the feedback (and a benchmark) can say
*which* argument is wrong and how.

Two deliberate departures from plain JSON Schema:

* Dataset schemas rarely say ``additionalProperties: false``, yet an invented argument is a real
  fault (CRITICTOOL's "extra key"). With ``checks.unexpected_arguments`` on, an object schema that
  declares properties and leaves ``additionalProperties`` unset is validated as closed.
* ``date-time`` and ``time`` accept values without a UTC offset ("2021-09-28T14:00:00"), as the
  tools in the datasets do; otherwise the result would depend on whether the optional
  ``rfc3339-validator`` package happens to be installed.

Validators come from ``guard.schema`` (never a network fetch, regexes and ``uniqueItems`` in
bounded time) and are compiled once per schema object and cached, so a valid call costs one pass
of ``iter_errors`` and nothing else. A pattern that cannot be decided within
``checks.limits.regex_timeout_ms`` is a PATTERN_VIOLATION finding with rule ``pattern_timeout``
that says so; arguments that cannot be validated within ``checks.limits.validation_timeout_ms``
(a schema whose branches multiply with the input's depth) are MALFORMED_ARGUMENTS with rule
``too_costly``.
"""

from __future__ import annotations

import ast
import json
import re
import reprlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, time
from typing import Any

from cachetools import LRUCache
from jsonschema.exceptions import ValidationError, best_match

from guard import schema as schemas
from guard.checks import CheckContext
from guard.models import Finding, Repair, ToolCall
from guard.policy import ArgumentLimits
from guard.taxonomy import Category

NAME = "arguments"

# ----------------------------------------------------------------------------------------------
# Helpers shared with the repairs and placeholder checks: paths, excerpts, encodable values.
# ----------------------------------------------------------------------------------------------

_SIMPLE_KEY = re.compile(r"[^.\[\]\"'\s][^.\[\]\"']*")

_REPR = reprlib.Repr()
_REPR.maxstring = 60
_REPR.maxother = 60
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 5
_REPR.maxlevel = 3


def json_path(parts: Iterable[str | int]) -> str:
    """``["trip", "stops", 0, "city"]`` -> ``$.trip.stops[0].city``.

    Keys that would make the path ambiguous or unprintable (dots, brackets, quotes, control
    characters, lone surrogates) are written as ``["..."]`` with ASCII escapes.
    """
    return "$" + "".join(child_path("", part) for part in parts)


def child_path(parent: str, part: str | int) -> str:
    """The path of one key or index under ``parent``."""
    if isinstance(part, int) and not isinstance(part, bool):
        return f"{parent}[{part}]"
    key = str(part)
    if _SIMPLE_KEY.fullmatch(key) and key.isprintable():
        return f"{parent}.{key}"
    return f"{parent}[{json.dumps(key)}]"


def excerpt(value: Any) -> str:
    """A short, printable, always-encodable rendering of any value for messages."""
    try:
        text = _REPR.repr(value)
    except Exception:  # a hostile __repr__ must not break a check
        text = f"<{type(value).__name__}>"
    return text if _is_utf8(text) else ascii(text)


def encodable(value: Any) -> Any:
    """``value`` itself when it can be written as UTF-8 JSON, else a copy with lone surrogates
    replaced (or, for values JSON cannot hold at all, a short excerpt).

    Findings travel as JSON; a lone surrogate in one would make serialising the decision fail.
    """
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value if _is_utf8(value) else value.encode("utf-8", "replace").decode("utf-8")
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return excerpt(value)
    if _is_utf8(text):
        return value
    return json.loads(text.encode("utf-8", "replace").decode("utf-8"))


def _is_utf8(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def json_type(value: Any) -> str:
    """The JSON-schema type name of a Python value (``True`` is boolean, not integer)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


_NOT_PARSED = object()
#: ``ast.literal_eval`` is far slower than ``json.loads`` and recursive: it gets shorter texts.
_LITERAL_MAX_CHARS = 100_000


def parse_text(text: str, max_chars: int = _LITERAL_MAX_CHARS) -> Any:
    """A string parsed as JSON, else as a Python literal; ``_NOT_PARSED`` when neither works.

    The result only holds JSON types (tuples become lists); anything else counts as unparsed.
    ``RecursionError`` propagates so callers can report nesting rather than syntax.
    """
    try:
        return json.loads(text)
    except ValueError:
        pass
    if len(text) > max_chars:
        return _NOT_PARSED
    try:
        return json.loads(json.dumps(ast.literal_eval(text.strip())))
    except Exception:  # SyntaxError, ValueError, MemoryError, RecursionError, TypeError...
        return _NOT_PARSED


def is_parsed(value: Any) -> bool:
    return value is not _NOT_PARSED


def nesting_depth_exceeds(value: Any, max_depth: int) -> bool:
    """Whether objects/arrays nest deeper than ``max_depth`` (measured without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)] if isinstance(value, (dict, list, tuple)) else []
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list, tuple)))
    return False


# ----------------------------------------------------------------------------------------------
# Parsing the raw arguments.
# ----------------------------------------------------------------------------------------------


def parse_arguments(
    call: ToolCall, limits: ArgumentLimits, *, parse_json: bool = True
) -> tuple[dict[str, Any] | None, list[Finding]]:
    """The call's arguments as a dict, or None and one MALFORMED_ARGUMENTS finding.

    A JSON (or Python-literal) string that holds an object is accepted when ``parse_json`` is on,
    and reported as a ``parse_json`` repair so the policy can treat it like any other repair.
    """
    raw = call.args
    tool = call.name if isinstance(call.name, str) else None
    try:
        args = _as_object(raw, limits, parse_json)
    except _Malformed as problem:
        return None, [problem.finding(tool)]
    if not isinstance(raw, str) or not args:
        return args, []
    repaired = Finding(
        category=Category.MALFORMED_ARGUMENTS,
        check=NAME,
        message="arguments were sent as text; parsed into an object",
        tool=tool,
        path="$",
        value=excerpt(raw),
        rule="parse_json",
        repair=Repair(kind="parse_json", path="$", before=excerpt(raw), after=encodable(args)),
    )
    return args, [repaired]


class _Malformed(Exception):
    """Why arguments cannot be used: becomes the one finding ``parse_arguments`` returns."""

    def __init__(self, rule: str, message: str, raw: Any) -> None:
        super().__init__(message)
        self.rule, self.message, self.raw = rule, message, raw

    def finding(self, tool: str | None) -> Finding:
        return Finding(
            category=Category.MALFORMED_ARGUMENTS,
            check=NAME,
            message=f"{self.message}: {excerpt(self.raw)}",
            tool=tool,
            path="$",
            value=excerpt(self.raw),
            rule=self.rule,
        )


def _as_object(raw: Any, limits: ArgumentLimits, parse_json: bool) -> dict[str, Any]:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    if isinstance(raw, str):
        raw = _parsed_text(raw, limits, parse_json)
    elif not isinstance(raw, dict):
        raise _Malformed("not_an_object", f"arguments must be an object, got {json_type(raw)}", raw)
    _check_limits(raw, limits)
    return raw


def _parsed_text(raw: str, limits: ArgumentLimits, parse_json: bool) -> dict[str, Any]:
    if len(raw) > limits.max_bytes or len(raw.encode("utf-8", "surrogatepass")) > limits.max_bytes:
        raise _Malformed("too_large", f"arguments are larger than {limits.max_bytes} bytes", raw)
    if not parse_json:
        raise _Malformed("not_an_object", "arguments must be an object, got a string", raw)
    try:
        parsed = parse_text(raw, min(limits.max_bytes, _LITERAL_MAX_CHARS))
    except RecursionError:
        raise _Malformed("too_deep", f"arguments nest deeper than {limits.max_depth} levels", raw) from None
    if not is_parsed(parsed):
        raise _Malformed("json_parse", "arguments are not valid JSON", raw)
    if not isinstance(parsed, dict):
        message = f"arguments must be an object, got text that parses to {json_type(parsed)}"
        raise _Malformed("not_an_object", message, raw)
    return parsed


def _check_limits(args: dict[str, Any], limits: ArgumentLimits) -> None:
    if nesting_depth_exceeds(args, limits.max_depth):
        raise _Malformed("too_deep", f"arguments nest deeper than {limits.max_depth} levels", args)
    try:
        text = json.dumps(args, ensure_ascii=False)
    except (TypeError, ValueError) as exc:  # sets, bytes, objects, cycles: not what a model sends
        raise _Malformed("not_json", f"arguments hold values JSON cannot represent ({exc})", args) from None
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_bytes:
        raise _Malformed("too_large", f"arguments are larger than {limits.max_bytes} bytes", args)
    if not _is_utf8(text):  # a lone surrogate: no tool can receive it, and no human could have said it
        raise _Malformed("invalid_unicode", "arguments hold text that is not valid Unicode (a lone surrogate)", args)


# ----------------------------------------------------------------------------------------------
# Formats: offset-free date-times and times are accepted (see the module docstring).
# ----------------------------------------------------------------------------------------------

_TZ = r"(?:[Zz]|[+-]\d{2}:?\d{2})?"
_TIME = r"\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
_DATE_TIME_RE = re.compile(rf"\d{{4}}-\d{{2}}-\d{{2}}[Tt ]{_TIME}{_TZ}")
_TIME_RE = re.compile(rf"{_TIME}{_TZ}")


def _is_date_time(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    return bool(_DATE_TIME_RE.fullmatch(instance)) and bool(datetime.fromisoformat(instance.upper()))


def _is_time(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    return bool(_TIME_RE.fullmatch(instance)) and bool(time.fromisoformat(instance.upper()))


_FORMAT_CHECKER = schemas.format_checker()
_FORMAT_CHECKER.checks("date-time", raises=ValueError)(_is_date_time)
_FORMAT_CHECKER.checks("time", raises=ValueError)(_is_time)


def conforms_to_format(value: Any, fmt: str) -> bool:
    """Whether a value passes the same format check the validator applies."""
    return _FORMAT_CHECKER.conforms(value, fmt)


# ----------------------------------------------------------------------------------------------
# Compiled validators, cached per schema object.
# ----------------------------------------------------------------------------------------------

#: What the compiled validators may hold at once, estimated in bytes: each entry keeps its schema
#: (and a closed copy) alive, so a count alone would let a few huge schemas exhaust a worker.
CACHE_BYTES = 64 * 1024 * 1024
_ENTRY_OVERHEAD = 16 * 1024


def _entry_size(entry: tuple[dict[str, Any], Any, int]) -> int:
    return entry[2]


_cache: LRUCache[tuple[int, bool], tuple[dict[str, Any], Any, int]] = LRUCache(maxsize=CACHE_BYTES, getsizeof=_entry_size)
_cache_lock = threading.Lock()

#: An object schema with these keywords takes properties from elsewhere: it is never closed.
_OPEN_KEYWORDS = (
    "allOf", "anyOf", "oneOf", "$ref", "$dynamicRef", "if", "dependentSchemas", "unevaluatedProperties"
)


def _validator(schema: dict[str, Any], closed: bool) -> Any:
    """The compiled validator for a schema object; the cache holds the schema, so ids stay unique."""
    key = (id(schema), closed)
    with _cache_lock:
        hit = _cache.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    compiled = close_objects(schema) if closed else schema
    validator = schemas.validator(compiled, format_checker=_FORMAT_CHECKER)
    # the schema and its closed copy, as JSON text takes them, a few times over for the objects
    size = 4 * len(json.dumps(schema, default=str)) * (2 if closed else 1) + _ENTRY_OVERHEAD
    if size <= CACHE_BYTES:
        with _cache_lock:
            _cache[key] = (schema, validator, size)
    return validator


def close_objects(schema: Any) -> Any:
    """A copy of a schema where object schemas that declare properties forbid other keys.

    Only objects reached through ``properties``, ``items``, ``prefixItems`` and
    ``additionalProperties`` are closed: closing the branches of ``anyOf``/``allOf`` would
    reject objects whose properties are split across branches.
    """
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    props = out.get("properties")
    if isinstance(props, dict):
        out["properties"] = {k: close_objects(v) for k, v in props.items()}
        if props and "additionalProperties" not in out and not any(k in out for k in _OPEN_KEYWORDS):
            out["additionalProperties"] = False
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = close_objects(out[key])
    if isinstance(out.get("prefixItems"), list):
        out["prefixItems"] = [close_objects(s) for s in out["prefixItems"]]
    return out


# ----------------------------------------------------------------------------------------------
# Validation.
# ----------------------------------------------------------------------------------------------

_RANGE_PHRASES = {
    "minimum": "must be at least {}",
    "maximum": "must be at most {}",
    "exclusiveMinimum": "must be greater than {}",
    "exclusiveMaximum": "must be less than {}",
    "minLength": "must be at least {} characters long",
    "maxLength": "must be at most {} characters long",
    "minItems": "must have at least {} items",
    "maxItems": "must have at most {} items",
    "uniqueItems": "must not repeat items",
    "multipleOf": "must be a multiple of {}",
    "minProperties": "must have at least {} properties",
    "maxProperties": "must have at most {} properties",
}

_CATEGORY_BY_KEYWORD = {
    "required": Category.MISSING_ARGUMENT,
    "additionalProperties": Category.UNEXPECTED_ARGUMENT,
    "unevaluatedProperties": Category.UNEXPECTED_ARGUMENT,
    "type": Category.TYPE_VIOLATION,
    "enum": Category.ENUM_VIOLATION,
    "const": Category.ENUM_VIOLATION,
    "pattern": Category.PATTERN_VIOLATION,
    "format": Category.FORMAT_VIOLATION,
    **{k: Category.RANGE_VIOLATION for k in _RANGE_PHRASES},
}

#: When several faults share a path, the lowest rank (the most specific) is the one reported.
_RANK = {
    Category.MISSING_ARGUMENT: 0,
    Category.TYPE_VIOLATION: 1,
    Category.ENUM_VIOLATION: 2,
    Category.FORMAT_VIOLATION: 3,
    Category.PATTERN_VIOLATION: 4,
    Category.RANGE_VIOLATION: 5,
    Category.UNEXPECTED_ARGUMENT: 6,
}
_GENERIC_RANK = 7


def check(ctx: CheckContext) -> list[Finding]:
    """One finding per schema fault in ``ctx.args``, each at its exact JSON path."""
    spec = ctx.spec
    if spec is None:
        return []
    validator = _validator(spec.parameters, ctx.policy.checks.unexpected_arguments)
    if schemas.plainly_valid(validator.schema, ctx.args, validator.format_checker):
        return []  # the common case, seen without the validator's machinery: no fault to report
    best: dict[str, tuple[int, Finding]] = {}
    try:
        with schemas.budget(ctx.policy.checks.limits):
            for error in validator.iter_errors(ctx.args):
                for finding in _findings(error, spec.parameters, spec.name):
                    rank = _rank(finding)
                    if finding.path not in best or rank < best[finding.path][0]:
                        best[finding.path] = (rank, finding)
    except schemas.TooCostly as exc:
        return [_Malformed("too_costly", str(exc), ctx.args).finding(spec.name)]
    except RecursionError:
        return [_Malformed("too_deep", "arguments nest too deeply to validate", ctx.args).finding(spec.name)]
    return [finding for _, finding in best.values()]


def _rank(finding: Finding) -> int:
    if finding.category is Category.TYPE_VIOLATION and finding.rule != "type":
        return _GENERIC_RANK  # anyOf, oneOf, not...: the least specific
    return _RANK[finding.category]


def _findings(error: ValidationError, root: dict[str, Any], tool: str) -> Iterator[Finding]:
    keyword = str(error.validator)
    parts = list(error.absolute_path)
    path = json_path(parts)
    if schemas.is_undecided(error):
        yield _undecided(error, keyword, path, tool)
    elif keyword == "required":
        yield from _missing(error, parts, tool)
    elif keyword in ("additionalProperties", "unevaluatedProperties"):
        yield from _unexpected(error, parts, tool)
    elif error.instance is None and _is_required_property(root, error.absolute_schema_path):
        message = f"{path_label(path)} is required but was null"
        yield _finding(Category.MISSING_ARGUMENT, tool, path, None, "required", message)
    else:
        yield _value_finding(error, keyword, path, tool)


def _finding(
    category: Category,
    tool: str,
    path: str,
    value: Any,
    rule: str,
    message: str,
    evidence: dict[str, Any] | None = None,
) -> Finding:
    return Finding(
        category=category,
        check=NAME,
        message=message,
        tool=tool,
        path=path,
        value=encodable(value),
        rule=rule,
        evidence=evidence or {},
    )


def path_label(path: str) -> str:
    """How a path is named in messages: ``'trip.to'``, or "the arguments" for the root."""
    if path == "$":
        return "the arguments"
    return repr(path[2:]) if path.startswith("$.") else path


def _missing(error: ValidationError, parts: list[Any], tool: str) -> Iterator[Finding]:
    instance = error.instance if isinstance(error.instance, dict) else {}
    required = error.validator_value if isinstance(error.validator_value, list) else []
    for name in required:
        if name not in instance:
            path = json_path([*parts, name])
            message = f"{path_label(path)} is required"
            yield _finding(Category.MISSING_ARGUMENT, tool, path, None, "required", message)


def _unexpected(error: ValidationError, parts: list[Any], tool: str) -> Iterator[Finding]:
    keyword = str(error.validator)
    instance = error.instance if isinstance(error.instance, dict) else {}
    schema = error.schema if isinstance(error.schema, dict) else {}
    declared = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    patterns = [p for p in schema.get("patternProperties", {}) if isinstance(p, str)]
    extras = [k for k in instance if k not in declared and not _matches(patterns, str(k))]
    owner = f"tool {tool!r}" if not parts else path_label(json_path(parts))
    evidence = {"allowed": list(declared)}
    if not extras:  # properties evaluated elsewhere (allOf, $ref): report the object itself
        message = f"{owner} has arguments the schema does not allow"
        yield _finding(Category.UNEXPECTED_ARGUMENT, tool, json_path(parts), instance, keyword, message)
    for key in extras:
        path = json_path([*parts, key])
        message = f"{excerpt(key)} is not a {'parameter' if not parts else 'property'} of {owner}"
        yield _finding(Category.UNEXPECTED_ARGUMENT, tool, path, instance[key], keyword, message, evidence)


def _matches(patterns: list[str], key: str) -> bool:
    """Whether a key fits one of the patterns (one that cannot be decided counts as fitting: the
    validator has reported it already)."""
    for pattern in patterns:
        try:
            if schemas.search(pattern, key):
                return True
        except schemas.RegexUndecided:
            return True
    return False


def _undecided(error: ValidationError, keyword: str, path: str, tool: str) -> Finding:
    """A value whose pattern (or ``regex`` format) could not be checked in bounded time."""
    reason = schemas.undecided_reason(error)
    message = f"{path_label(path)} was not checked: {reason}"
    evidence: dict[str, Any] = {"reason": reason}
    if isinstance(error, schemas.Undecided):
        evidence["pattern"] = error.pattern
    category = Category.FORMAT_VIOLATION if keyword == "format" else Category.PATTERN_VIOLATION
    rule = "format_timeout" if keyword == "format" else "pattern_timeout"
    return _finding(category, tool, path, error.instance, rule, message, evidence)


def _is_required_property(root: dict[str, Any], schema_path: Sequence[Any]) -> bool:
    """Whether a fault's schema path ends at ``properties/<name>/<keyword>`` with name required."""
    steps = list(schema_path)
    if len(steps) < 3 or steps[-3] != "properties":
        return False
    parent: Any = root
    for step in steps[:-3]:
        try:
            parent = parent[step]
        except (KeyError, IndexError, TypeError):
            return False
    required = parent.get("required") if isinstance(parent, dict) else None
    return isinstance(required, list) and steps[-2] in required


def _value_finding(error: ValidationError, keyword: str, path: str, tool: str) -> Finding:
    value, expected, label = error.instance, error.validator_value, path_label(path)
    got = f"got {json_type(value)} {excerpt(value)}" if value is not None else "got null"
    evidence: dict[str, Any] = {}
    if keyword == "type":
        message = f"{label} must be {' or '.join(map(str, _listed(expected)))}, {got}"
    elif keyword in ("enum", "const"):
        allowed = expected if keyword == "enum" else [expected]
        # once per enum, not per value: an array of bad values against a long enum is values x members
        evidence = {"allowed": schemas.derived(expected, encodable) if keyword == "enum" else encodable(allowed)}
        message = f"{label} must be one of {excerpt(allowed)}, {got}"
    elif keyword == "pattern":
        evidence = {"pattern": expected}
        message = f"{label} must match the pattern {expected!r}, {got}"
    elif keyword == "format":
        evidence = {"format": expected}
        message = f"{label} must be a valid {expected}, {got}"
    elif keyword in _RANGE_PHRASES:
        evidence = {keyword: expected}
        message = f"{label} {_RANGE_PHRASES[keyword].format(expected)}, {got}"
    else:
        message = _generic_message(error, label)
    category = _CATEGORY_BY_KEYWORD.get(keyword, Category.TYPE_VIOLATION)
    return _finding(category, tool, path, value, keyword, message, evidence)


def _generic_message(error: ValidationError, label: str) -> str:
    """anyOf/oneOf/allOf/not and rarer keywords: the most relevant sub-error, shortened."""
    if error.validator in ("anyOf", "oneOf") and error.context:
        # A branch of the value's own type that failed on something else says most.
        fitting = [e for e in error.context if e.validator != "type" or e.relative_path]
        if fitting:
            text = f"{label} matches none of the allowed schemas: {best_match(fitting).message}"
        else:
            types = [str(t) for e in error.context for t in _listed(e.validator_value)]
            text = f"{label} must be {' or '.join(dict.fromkeys(types))}, got {json_type(error.instance)}"
    else:
        text = f"{label} is invalid: {error.message}"
    text = text if len(text) <= 240 else text[:237] + "..."
    return text if _is_utf8(text) else ascii(text)


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]
