"""The one place that turns a JSON schema into a validator: it never fetches, never hangs.

Tool schemas come from whoever describes the tools (a service client, a dataset, an MCP server)
and the values they check come from the model; neither is trusted. Plain ``jsonschema`` would

* fetch a remote ``$ref`` (``http://127.0.0.1:…/s.json``) through its deprecated fallback, and
  block on a listener that never answers;
* run ``pattern`` and ``patternProperties`` with Python's backtracking ``re``
  (``^(a+)+$`` on 28 a's and a b holds the GIL for seconds);
* compare ``uniqueItems`` elements pairwise when they are objects (3,000 of them: seconds);
* follow a ``$ref`` loop until ``RecursionError`` and report a missing pointer as an exception.

Here every validator is built with a ``referencing.Registry`` whose ``retrieve`` refuses, so only
the schema's own ``#…`` references resolve. Regexes run under RE2 (linear time) when the pattern
compiles there, else under the ``regex`` package with a timeout (``concurrent=True``: it releases
the GIL while it matches; the timeout is measured in CPU time, so a loaded machine stretches it in
wall time). As in ECMA-262, JSON Schema's dialect, RE2's ``\\d``, ``\\w`` and ``\\s`` are ASCII
classes (Python's ``re`` takes any Unicode digit or letter). A pattern that cannot be decided
within the budget yields an ``Undecided`` validation error (a finding that says why), never a hang
or an exception. ``uniqueItems`` and ``enum`` hash each element's canonical JSON form (JSON Schema equality:
``1 == 1.0``, ``true != 1``, key order ignored). ``unevaluatedItems``/``unevaluatedProperties``
use sets rather than jsonschema's list look-ups, which are quadratic in the array length.

``schema_problem`` is what registration runs: every pattern must be one the matcher can compile
in bounded time (at most 10,000 characters), the schema must pass the meta-schema, every
``$ref``/``$dynamicRef`` must be a local reference that resolves to a subschema, and no chain of
references may come back to where it started without consuming input.

``search``/``matches``/``find`` are the bounded matchers for other code that reads schema patterns
(the preflight matches them against the conversation).

Budgets (``budget(policy.checks.limits)``, around each check, in the thread's CPU time):
``regex_timeout_ms`` (50 ms by default) bounds what one check spends on backtracking regexes
(outside a budget each evaluation gets ``REGEX_TIMEOUT_MS``); ``validation_timeout_ms`` (100 ms)
bounds the whole validation, for schemas whose branches multiply with the input's depth
(registration already refuses those that multiply through references alone): past it the
validation raises ``TooCostly``. The clock (``check_clock``) leaves out the time the thread spent
collecting garbage: a full collection of a large heap (half a second for a few million objects)
that happens to fall inside a check is the process's cost, not the schema's, and must not turn a
valid call into a ``too_costly`` retry.
"""

from __future__ import annotations

import gc
import json
import math
import numbers
import re
import reprlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from fractions import Fraction
from functools import lru_cache
from typing import Any, TypeVar

import re2
import regex
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError, ValidationError
from jsonschema.validators import extend

T = TypeVar("T")

#: The per-evaluation budget of a backtracking regex outside ``regex_budget`` (milliseconds).
REGEX_TIMEOUT_MS = 50.0

#: A pattern RE2 refuses is compiled by ``regex``, whose compile time grows with the product of
#: nested repetition counts (``((a{1000}){1000}){1000}`` does not finish): beyond this, refused.
_MAX_REPETITION_PRODUCT = 10_000
#: A schema whose references make one value be checked against more subschemas than this (the
#: expansion of allOf/anyOf/oneOf/not/if branches through shared references) is refused.
_MAX_EXPANSION = 10_000
#: Longer schema patterns are refused at registration: compiling one costs time linear in its
#: length, but not little (Python's ``re``: 1.5 s for 500,000 characters), and no tool needs one.
MAX_PATTERN_CHARS = 10_000
#: A value checked against ``format: regex`` that RE2 refuses is compiled by Python's ``re``,
#: whose compile time is linear but not small (1 MB: 1.7 s): longer ones are undecided.
_MAX_FALLBACK_REGEX_FORMAT_CHARS = 10_000


# ----------------------------------------------------------------------------------------------
# References: only the schema's own.
# ----------------------------------------------------------------------------------------------


def _refuse(uri: str) -> referencing.Resource[Any]:
    """The registry's ``retrieve``: schemas are never fetched, whatever the URI."""
    raise referencing.exceptions.NoSuchResource(ref=uri)


#: Every validator's registry: the JSON Schema meta-schemas (jsonschema adds them) and nothing else.
REGISTRY: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse)  # type: ignore[call-arg]
_SPEC = referencing.jsonschema.DRAFT202012


# ----------------------------------------------------------------------------------------------
# Bounded regular expressions.
# ----------------------------------------------------------------------------------------------


class RegexUndecided(Exception):
    """A regex that could not be evaluated within its budget (or compiled in bounded time)."""

    def __init__(self, pattern: str, reason: str) -> None:
        super().__init__(reason)
        self.pattern, self.reason = pattern, reason


class Undecided(ValidationError):
    """A validation error meaning "could not be checked", not "does not match"."""

    def __init__(self, message: str, pattern: str, reason: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.pattern, self.reason = pattern, reason


_collecting = threading.local()


def _on_collection(phase: str, info: dict[str, Any]) -> None:
    """Adds up, per thread, the CPU time spent in the garbage collector (``gc.callbacks``).

    A thread-local, not a context variable: ``ContextVar.get`` inside a collection callback
    crashes CPython 3.11.7 (segmentation fault) when collections run often enough."""
    now = time.thread_time()
    if phase == "start":
        _collecting.started = now
    else:
        _collecting.spent = getattr(_collecting, "spent", 0.0) + now - getattr(_collecting, "started", now)


gc.callbacks.append(_on_collection)


def check_clock() -> float:
    """This thread's CPU time, less what it spent collecting garbage: the clock of every budget.

    The collector runs in whichever thread allocates when a threshold is crossed, and a full
    collection costs in proportion to the whole heap, not to the check that set it off. What the
    check itself allocates is bounded by the rest of its budget, so leaving the collections out
    does not unbound it."""
    return time.thread_time() - getattr(_collecting, "spent", 0.0)


_deadline: ContextVar[float | None] = ContextVar("guard_regex_deadline", default=None)
_budget_ms: ContextVar[float] = ContextVar("guard_regex_budget_ms", default=REGEX_TIMEOUT_MS)


class TooCostly(Exception):
    """Validation ran past ``budget``'s ``validation_timeout_ms``: it was abandoned."""

    def __init__(self, ms: float) -> None:
        super().__init__(f"the arguments could not be validated within {ms:g} ms")
        self.ms = ms


#: [keyword calls until the clock is read again, the deadline (thread CPU time), the budget in ms]
_validation: ContextVar[list[float] | None] = ContextVar("guard_validation_budget", default=None)
_CLOCK_EVERY = 64


@contextmanager
def regex_budget(ms: float) -> Iterator[None]:
    """Within this block, backtracking regexes share ``ms`` milliseconds of CPU time in total."""
    deadline = _deadline.set(check_clock() + ms / 1000)
    budget = _budget_ms.set(ms)
    try:
        yield
    finally:
        _deadline.reset(deadline)
        _budget_ms.reset(budget)


@contextmanager
def budget(limits: Any) -> Iterator[None]:
    """The bounds of one check (``ArgumentLimits``: ``regex_timeout_ms``, ``validation_timeout_ms``).

    Within it regexes share the regex budget, and validation raises ``TooCostly`` once it has used
    ``validation_timeout_ms`` of the thread's CPU time: however a schema's branches multiply
    (``items`` and ``contains`` on nested arrays check each level twice: 2**depth), a check stops.
    CPU time of this thread, so neither a loaded machine nor the server's other requests count.
    Nested, the outer budget goes on. Each check that validates (the provenance completion, the
    argument check) opens its own: a call costs at most two budgets of validation."""
    if _validation.get() is not None:
        yield
        return
    ms = limits.validation_timeout_ms
    state = _validation.set([_CLOCK_EVERY, check_clock() + ms / 1000, ms])
    try:
        with regex_budget(limits.regex_timeout_ms):
            yield
    finally:
        _validation.reset(state)


_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # a refused pattern is expected, not worth a line on stderr
_RE2_OPTIONS.never_capture = True  # only "does it match" is asked: no groups to track
_CAPTURING_OPTIONS = re2.Options()
_CAPTURING_OPTIONS.log_errors = False


@lru_cache(maxsize=2048)
def _compiled(pattern: str) -> tuple[bool, Any]:
    """``(linear, compiled)``: RE2 when it accepts the pattern, else ``regex`` (backtracking).

    Raises ``RegexUndecided`` for a pattern ``regex`` cannot compile in bounded time, and
    ``re.error``/``regex.error`` for one that is no regex at all."""
    try:  # UTF-8 bytes in and out: the wrapper's str path maps every offset back (3x slower)
        return True, re2.compile(pattern.encode("utf-8"), _RE2_OPTIONS)
    except (re2.error, UnicodeError, ValueError, TypeError):
        pass
    return False, _backtracking(pattern)


@lru_cache(maxsize=512)
def _backtracking(pattern: str) -> Any:
    """The pattern under ``regex``, after checking it compiles in bounded time."""
    product = _repetition_product(pattern)
    if product > _MAX_REPETITION_PRODUCT:
        raise RegexUndecided(pattern, f"the pattern {_short(pattern)}: nested repetition counts multiply to {product}, more than "
                                      f"{_MAX_REPETITION_PRODUCT} can be compiled in bounded time")
    return regex.compile(pattern)


def _repetition_product(pattern: str) -> int:
    """The largest product of nested counted repetitions (``(a{10}){20}`` -> 200), as Python's
    own regex parser reads the pattern; unparseable patterns count as too complex."""
    from re import _parser  # type: ignore[attr-defined]  # the stdlib's parser: no regex of our own

    try:
        tree = _parser.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return _MAX_REPETITION_PRODUCT + 1
    worst = 1
    stack: list[tuple[Any, int]] = [(tree, 1)]
    while stack:
        node, factor = stack.pop()
        worst = max(worst, factor)
        items = node.data if hasattr(node, "data") else node
        for op, arg in items:
            name = str(op)
            if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                low, high, sub = arg
                count = high if high != _parser.MAXREPEAT else max(low, 1)
                stack.append((sub, factor * max(count, 1)))
            elif name == "SUBPATTERN":
                stack.append((arg[-1], factor))
            elif name == "ATOMIC_GROUP":
                stack.append((arg, factor))
            elif name in ("ASSERT", "ASSERT_NOT"):
                stack.append((arg[1], factor))
            elif name == "BRANCH":
                stack.extend((b, factor) for b in arg[1])
            elif name == "GROUPREF_EXISTS":
                stack.extend((b, factor) for b in arg[1:] if b is not None)
    return worst


def search(pattern: str, text: str) -> bool:
    """``re.search(pattern, text)`` as JSON Schema means it, in bounded time.

    Raises ``RegexUndecided`` when the (backtracking) match runs out of budget."""
    try:
        linear, compiled = _compiled(pattern)
    except (re.error, regex.error, RecursionError, OverflowError, ValueError, TypeError) as exc:
        raise RegexUndecided(pattern, f"the pattern {_short(pattern)} cannot be checked ({exc})") from None
    if linear:
        try:
            return compiled.search(text.encode("utf-8")) is not None
        except UnicodeError:  # a lone surrogate RE2 cannot encode: the backtracking engine reads it
            compiled = _backtracking(pattern)
    deadline = _deadline.get()
    seconds = _budget_ms.get() / 1000 if deadline is None else deadline - check_clock()
    if seconds <= 0:
        raise RegexUndecided(pattern, f"the pattern {_short(pattern)} could not be checked within {_budget_ms.get():g} ms")
    try:
        return compiled.search(text, timeout=seconds, concurrent=True) is not None
    except TimeoutError:
        raise RegexUndecided(pattern, f"the pattern {_short(pattern)} could not be checked within {_budget_ms.get():g} ms") from None


def matches(pattern: str, text: str) -> bool:
    """``search`` where a pattern that cannot be decided in time counts as not matching (for
    heuristics that read schemas, which must not hang and need no finding of their own)."""
    try:
        return search(pattern, text)
    except RegexUndecided:
        return False


@lru_cache(maxsize=512)
def _capturing(pattern: str) -> tuple[bool, Any]:
    """``_compiled`` for callers that want the matched text (RE2 keeps the groups)."""
    try:
        return True, re2.compile(pattern.encode("utf-8"), _CAPTURING_OPTIONS)
    except (re2.error, UnicodeError, ValueError, TypeError):
        return False, _backtracking(pattern)


def find(pattern: str, text: str, *, full: bool = False) -> str | None:
    """The text of the first match (of the whole text, with ``full``), in bounded time; None when
    there is none, or when it cannot be decided within the budget or compiled safely."""
    try:
        linear, compiled = _capturing(pattern)
    except (RegexUndecided, re.error, regex.error, RecursionError, OverflowError, ValueError, TypeError):
        return None
    if linear:
        try:
            found = (compiled.fullmatch if full else compiled.search)(text.encode("utf-8"))
            return None if found is None else found.group(0).decode("utf-8")
        except UnicodeError:
            compiled = _backtracking(pattern)
    deadline = _deadline.get()
    seconds = _budget_ms.get() / 1000 if deadline is None else deadline - check_clock()
    if seconds <= 0:
        return None
    try:
        found = (compiled.fullmatch if full else compiled.search)(text, timeout=seconds, concurrent=True)
    except TimeoutError:
        return None
    return None if found is None else found.group(0)


def pattern_problem(pattern: str) -> str | None:
    """Why a schema's pattern cannot be checked in bounded time (None when it can)."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"a pattern of {len(pattern)} characters is longer than the {MAX_PATTERN_CHARS} allowed"
    try:
        _compiled(pattern)
    except RegexUndecided as exc:
        return exc.reason
    except (re.error, regex.error, ValueError, TypeError) as exc:
        return f"invalid regular expression {pattern!r}: {exc}"
    return None


def _undecided(exc: RegexUndecided, **kwargs: Any) -> Undecided:
    return Undecided(exc.reason, exc.pattern, exc.reason, **kwargs)


def _short(pattern: str) -> str:
    return repr(pattern) if len(pattern) <= 80 else repr(pattern[:77]) + "..."


# ----------------------------------------------------------------------------------------------
# Keywords with bounded cost.
# ----------------------------------------------------------------------------------------------

_BASE = Draft202012Validator.VALIDATORS


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    try:
        if not search(pattern, instance):
            yield ValidationError(f"{instance!r} does not match {pattern!r}")
    except RegexUndecided as exc:
        yield _undecided(exc)


def _matches_any(patterns: Any, key: str) -> bool:
    return any(search(p, key) for p in patterns)


def _pattern_properties(validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            try:
                matched = search(pattern, key)
            except RegexUndecided as exc:
                yield _undecided(exc, path=[key])
                continue
            if matched:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(validator: Any, instance: Mapping[str, Any], schema: Mapping[str, Any]) -> tuple[list[str], list[Undecided]]:
    """The keys neither ``properties`` nor ``patternProperties`` cover, and the undecided ones."""
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras: list[str] = []
    undecided: list[Undecided] = []
    for key in instance:
        if key in properties:
            continue
        try:
            if patterns and _matches_any(patterns, key):
                continue
        except RegexUndecided as exc:
            undecided.append(_undecided(exc, path=[key]))
            continue
        extras.append(key)
    return extras, undecided


def _additional_properties(validator: Any, aP: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    extras, undecided = _additional(validator, instance, schema)
    yield from undecided
    if validator.is_type(aP, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], aP, path=extra)
    elif not aP and extras:
        listed = ", ".join(repr(e) for e in sorted(extras, key=str))
        verb = "was" if len(extras) == 1 else "were"
        yield ValidationError(f"Additional properties are not allowed ({listed} {verb} unexpected)")


def _lookup(validator: Any, ref: str) -> Any:
    return validator._resolver.lookup(ref)  # the resolver jsonschema itself uses for "$ref"


def _evaluated_keys(validator: Any, instance: Mapping[str, Any], schema: Any) -> set[str]:
    """The keys some keyword evaluates (jsonschema's ``find_evaluated_property_keys_by_schema``,
    with a set instead of a list and bounded pattern matches)."""
    if not isinstance(schema, dict):
        return set()
    keys: set[str] = set()
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if isinstance(ref, str):
            resolved = _lookup(validator, ref)
            evolved = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
            keys |= _evaluated_keys(evolved, instance, resolved.contents)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        keys |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        if (subschema := schema.get(keyword)) is not None:
            keys |= {k for k, v in instance.items() if next(validator.descend(v, subschema), None) is None}
    if patterns := schema.get("patternProperties"):
        for key in instance:
            try:
                if _matches_any(patterns, key):
                    keys.add(key)
            except RegexUndecided:
                keys.add(key)  # reported by patternProperties itself
    for key, subschema in (schema.get("dependentSchemas") or {}).items():
        if key in instance:
            keys |= _evaluated_keys(validator, instance, subschema)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, []):
            if next(validator.descend(instance, subschema), None) is None:
                keys |= _evaluated_keys(validator, instance, subschema)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys |= _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                keys |= _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            keys |= _evaluated_keys(validator, instance, schema["else"])
    return keys


def _unevaluated_properties(validator: Any, uP: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    try:
        evaluated = _evaluated_keys(validator, instance, schema)
    except referencing.exceptions.Unresolvable as exc:
        yield ValidationError(f"a reference cannot be resolved ({exc}); schemas are never fetched")
        return
    bad = [k for k in instance if k not in evaluated and next(validator.descend(instance[k], uP, path=k), None) is not None]
    if bad:
        listed = ", ".join(repr(k) for k in sorted(bad, key=str))
        if uP is False:
            yield ValidationError(f"Unevaluated properties are not allowed ({listed} {'was' if len(bad) == 1 else 'were'} unexpected)")
        else:
            yield ValidationError(f"Unevaluated properties are not valid under the given schema ({listed})")


def _unevaluated_items(validator: Any, uI: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "array"):
        return
    from jsonschema._utils import find_evaluated_item_indexes_by_schema  # jsonschema's own walk

    try:
        evaluated = set(find_evaluated_item_indexes_by_schema(validator, instance, schema))
    except referencing.exceptions.Unresolvable as exc:
        yield ValidationError(f"a reference cannot be resolved ({exc}); schemas are never fetched")
        return
    bad = [item for i, item in enumerate(instance) if i not in evaluated]
    if bad:
        yield ValidationError(f"Unevaluated items are not allowed ({len(bad)} unexpected)")


def canonical(value: Any) -> Any:
    """A hashable form in which two JSON values are equal exactly when JSON Schema says so:
    ``1`` and ``1.0`` are one number (Python's own ``==`` and ``hash`` agree on that), ``true``
    is no number, objects ignore key order, arrays do not."""
    kind = type(value)
    if kind is str or kind is int or kind is float or value is None:
        return value
    if kind is bool:
        return ("b", value)
    if kind is list or kind is tuple:
        return ("a", tuple([canonical(v) for v in value]))
    if kind is dict:
        try:
            pairs = sorted(value.items())  # keys are unique: values are never compared
        except TypeError:  # keys of mixed types, from a Python caller
            pairs = sorted(value.items(), key=lambda kv: repr(kv[0]))
        return ("o", tuple([(k, canonical(v)) for k, v in pairs]))
    if isinstance(value, (str, int, float)):  # subclasses (an IntEnum...): as their JSON value
        return canonical(json.loads(json.dumps(value))) if not isinstance(value, bool) else ("b", bool(value))
    return ("?", repr(value))


def _unique_items(validator: Any, uI: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if not uI or not validator.is_type(instance, "array"):
        return
    seen: dict[Any, int] = {}
    for i, item in enumerate(instance):
        key = canonical(item)
        if key in seen:
            yield ValidationError(f"items {seen[key]} and {i} are equal: the array has non-unique elements")
            return
        seen[key] = i


_DERIVED: dict[tuple[int, Any], tuple[Any, Any]] = {}
_DERIVED_SIZE = 2048


def derived(source: Any, build: Callable[[Any], T]) -> T:
    """``build(source)``, computed once per source object: for what is derived from a schema's own
    lists (an enum's members), which live as long as the schema. The cache holds the source, so an
    id is never reused while its entry stands."""
    key = (id(source), build)
    hit = _DERIVED.get(key)
    if hit is not None and hit[0] is source:
        return hit[1]  # type: ignore[no-any-return]
    value = build(source)
    if len(_DERIVED) >= _DERIVED_SIZE:
        _DERIVED.pop(next(iter(_DERIVED)), None)
    _DERIVED[key] = (source, value)
    return value


def _member_set(enum: list[Any]) -> frozenset[Any]:
    return frozenset(canonical(m) for m in enum)


def members(enum: list[Any]) -> frozenset[Any]:
    """The canonical forms of an ``enum`` list (``value in members(enum)`` by JSON Schema's equality)."""
    return derived(enum, _member_set)


def _enum(validator: Any, enum: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """``enum`` by hashing: jsonschema compares the value with every member in turn, so an array of
    10,000 values against a 10,000-member enum cost 9 s."""
    if not isinstance(enum, list):
        yield from _BASE["enum"](validator, enum, instance, schema)
        return
    try:
        known = canonical(instance) in members(enum)
    except TypeError:  # an unhashable oddity from a Python caller: jsonschema's own comparison
        yield from _BASE["enum"](validator, enum, instance, schema)
        return
    if not known:
        yield ValidationError(f"{reprlib.repr(instance)} is not one of {reprlib.repr(enum)}")


def _multiple_of(validator: Any, dB: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """jsonschema's ``multipleOf``, without the exceptions a non-finite or enormous number raises."""
    if not validator.is_type(instance, "number"):
        return
    if isinstance(instance, float) and not math.isfinite(instance):
        yield ValidationError(f"{instance!r} is not a finite number, so not a multiple of {dB}")
        return
    try:
        yield from _BASE["multipleOf"](validator, dB, instance, schema)
    except (OverflowError, ValueError, ZeroDivisionError):
        if (Fraction(instance) / Fraction(dB)).denominator != 1:
            yield ValidationError(f"{instance!r} is not a multiple of {dB}")


def _guarded_ref(keyword: str) -> Any:
    """``$ref``/``$dynamicRef`` whose failure to resolve is a validation error, not an exception
    (registration refuses such schemas; this covers schemas that never went through it)."""
    base = _BASE[keyword]

    def ref(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
        try:
            yield from base(validator, value, instance, schema)
        except referencing.exceptions.Unresolvable:
            yield ValidationError(f"the reference {value!r} cannot be resolved; schemas are never fetched")

    return ref


def _counted(keyword: Any) -> Any:
    """A keyword that reads the clock against ``budget``'s deadline every few calls."""

    def counted(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        state = _validation.get()
        if state is not None:
            state[0] -= 1
            if state[0] <= 0:
                state[0] = _CLOCK_EVERY
                if check_clock() > state[1]:
                    raise TooCostly(state[2])
        return keyword(validator, value, instance, schema)

    return counted


_KEYWORDS = {
    **_BASE,
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "unevaluatedProperties": _unevaluated_properties,
    "unevaluatedItems": _unevaluated_items,
    "uniqueItems": _unique_items,
    "enum": _enum,
    "multipleOf": _multiple_of,
    "$ref": _guarded_ref("$ref"),
    "$dynamicRef": _guarded_ref("$dynamicRef"),
}
Validator = extend(Draft202012Validator, {k: _counted(f) for k, f in _KEYWORDS.items()})


# ----------------------------------------------------------------------------------------------
# The plain case, without the validator's machinery.
# ----------------------------------------------------------------------------------------------

#: Keywords ``plainly_valid`` decides itself, exactly as the validator's keywords do.
_PLAIN_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "format", "pattern",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems",
})
#: Every other keyword the validator acts on (or that changes how it reads a schema) sends the value
#: to the validator; what it does not act on (description, default, examples, $defs...) is ignored
#: by both.
_NOT_PLAIN = frozenset(Validator.VALIDATORS) - _PLAIN_KEYWORDS | {"$schema"}
#: Subschema applications ``plainly_valid`` makes before it leaves a large value to the validator
#: (and to its time budget).
_PLAIN_NODES = 1_000
_TYPES = Validator.TYPE_CHECKER
#: The kind of value each keyword family applies to, read as Draft 2020-12's type checker reads it
#: (a bool is no number; any ``numbers.Number`` is one), by direct tests: ``Validator`` extends that
#: draft and keeps its type checker (tests/checks/test_plain_validation.py holds it to that).
def _kind(instance: Any) -> str | None:
    if isinstance(instance, str):
        return "string"
    if isinstance(instance, dict):
        return "object"
    if isinstance(instance, list):
        return "array"
    if isinstance(instance, numbers.Number) and not isinstance(instance, bool):
        return "number"
    return None


def plainly_valid(schema: Any, instance: Any, format_checker: FormatChecker | None = None) -> bool:
    """Whether ``instance`` is valid under ``schema``, where that is quick to see.

    True only when every keyword met on the way is a plain one (``type``, ``properties``,
    ``required``, ``additionalProperties``, ``items``, ``enum``, ``format``, a ``pattern`` RE2
    runs, the bounds of numbers, strings and arrays) and the value passes each, checked as this
    module's ``Validator`` checks it (its type checker, ``canonical`` enum members, the same format
    checker). False means "ask the validator", never "invalid": a fault, any other keyword (a
    reference, a combinator, ...), a backtracking pattern, a value of more than ``_PLAIN_NODES``
    subschema applications, or anything that raises. Most calls are valid against plain schemas,
    and the validator's machinery (a validator object per subschema it descends into) costs tens
    of microseconds per call, so it runs only to say what is wrong."""
    nodes = [_PLAIN_NODES]
    try:
        return _plain(schema, instance, format_checker, nodes)
    except Exception:  # whatever the validator makes of it, it is the validator's to say
        return False


def _plain(schema: Any, instance: Any, format_checker: FormatChecker | None, nodes: list[int]) -> bool:
    if schema is True:
        return True
    if not isinstance(schema, dict):
        return False
    nodes[0] -= 1
    if nodes[0] < 0 or not _NOT_PLAIN.isdisjoint(schema):
        return False
    is_type = _TYPES.is_type
    if "type" in schema:
        types = schema["type"]
        types = [types] if isinstance(types, str) else types
        if not isinstance(types, list) or not any(is_type(instance, t) for t in types):
            return False
    kind = _kind(instance)
    if "enum" in schema:
        enum = schema["enum"]
        if not isinstance(enum, list) or canonical(instance) not in members(enum):
            return False
    if "format" in schema and format_checker is not None and not format_checker.conforms(instance, schema["format"]):
        return False
    if kind == "string":
        if "pattern" in schema:
            linear, compiled = _compiled(schema["pattern"])
            if not linear or compiled.search(instance.encode("utf-8")) is None:
                return False
        if "minLength" in schema and len(instance) < schema["minLength"]:
            return False
        if "maxLength" in schema and len(instance) > schema["maxLength"]:
            return False
    elif kind == "number":
        if "minimum" in schema and instance < schema["minimum"]:
            return False
        if "maximum" in schema and instance > schema["maximum"]:
            return False
        if "exclusiveMinimum" in schema and instance <= schema["exclusiveMinimum"]:
            return False
        if "exclusiveMaximum" in schema and instance >= schema["exclusiveMaximum"]:
            return False
    elif kind == "object":
        properties = schema.get("properties", {})
        if not isinstance(properties, dict):
            return False
        for name in schema.get("required", ()):
            if name not in instance:
                return False
        for name, subschema in properties.items():
            if name in instance and not _plain(subschema, instance[name], format_checker, nodes):
                return False
        if "additionalProperties" in schema:
            extra = schema["additionalProperties"]
            extras = [key for key in instance if key not in properties]
            if is_type(extra, "object"):
                if not all(_plain(extra, instance[key], format_checker, nodes) for key in extras):
                    return False
            elif not extra and extras:
                return False
    elif kind == "array":
        if "items" in schema:
            items = schema["items"]
            if items is False:
                if instance:
                    return False
            elif not all(_plain(items, item, format_checker, nodes) for item in instance):
                return False
        if "minItems" in schema and len(instance) < schema["minItems"]:
            return False
        if "maxItems" in schema and len(instance) > schema["maxItems"]:
            return False
    return True


# ----------------------------------------------------------------------------------------------
# Formats: "regex" in bounded time.
# ----------------------------------------------------------------------------------------------


class _RegexFormatUndecided(Exception):
    pass


def _is_regex(instance: object) -> bool:
    if not isinstance(instance, str):
        return True
    try:
        re2.compile(instance.encode("utf-8"), _RE2_OPTIONS)
        return True
    except (re2.error, UnicodeError, ValueError):
        pass
    if len(instance) > _MAX_FALLBACK_REGEX_FORMAT_CHARS:
        raise _RegexFormatUndecided(
            f"a regex of {len(instance)} characters RE2 cannot read is not checked (limit "
            f"{_MAX_FALLBACK_REGEX_FORMAT_CHARS})"
        )
    try:
        re.compile(instance)
    except (RecursionError, OverflowError):
        raise _RegexFormatUndecided("the regex nests too deeply to be checked") from None
    return True


def format_checker() -> FormatChecker:
    """A new checker with Draft 2020-12's formats, ``regex`` checked in bounded time."""
    checker = FormatChecker(formats=())
    checker.checkers = dict(Draft202012Validator.FORMAT_CHECKER.checkers)
    checker.checks("regex", raises=(re.error, _RegexFormatUndecided))(_is_regex)
    return checker


def is_undecided(error: ValidationError) -> bool:
    """Whether a validation error means "could not be checked" rather than "invalid"."""
    return isinstance(error, Undecided) or isinstance(error.cause, _RegexFormatUndecided)


def undecided_reason(error: ValidationError) -> str:
    if isinstance(error, Undecided):
        return error.reason
    return str(error.cause)


# ----------------------------------------------------------------------------------------------
# Validators.
# ----------------------------------------------------------------------------------------------


def validator(
    schema: Any, *, root: Any = None, format_checker: FormatChecker | None = None
) -> Any:
    """A validator for ``schema`` that never fetches and runs in bounded time.

    ``root``: the document ``schema`` sits in, when it is a subschema (a tool's parameter):
    its ``#/$defs/…`` references then resolve against the whole tool schema."""
    schema = without_dialects(schema)
    kwargs: dict[str, Any] = {"registry": REGISTRY, "format_checker": format_checker}
    if root is not None and root is not schema:
        resource = _SPEC.create_resource(without_dialects(root))
        kwargs["_resolver"] = _combined().resolver_with_root(resource)
    return Validator(schema, **kwargs)


@lru_cache(maxsize=1)
def _combined() -> referencing.Registry[Any]:
    from jsonschema.validators import SPECIFICATIONS  # the meta-schemas, as jsonschema adds them

    return SPECIFICATIONS.combine(REGISTRY)


#: Keywords whose value is one subschema, a map of subschemas, or a list of subschemas.
_ONE = ("additionalProperties", "unevaluatedProperties", "unevaluatedItems", "items", "contains",
        "propertyNames", "not", "if", "then", "else", "additionalItems")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")


def subschemas(schema: Any) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    """Every subschema of a schema with its JSON-pointer tokens, the schema itself first."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        yield path, node
        if not isinstance(node, dict):
            continue
        for key in _ONE:
            if isinstance(node.get(key), (dict, bool)):
                stack.append(((*path, key), node[key]))
        for key in _MAP:
            if isinstance(node.get(key), dict):
                stack.extend(((*path, key, k), v) for k, v in node[key].items() if isinstance(v, (dict, bool)))
        for key in (*_LIST, "items"):
            if isinstance(node.get(key), list):
                stack.extend(((*path, key, i), v) for i, v in enumerate(node[key]) if isinstance(v, (dict, bool)))


def without_dialects(schema: Any) -> Any:
    """The schema with ``$schema`` dropped from every subschema.

    jsonschema picks a validator class by each subschema's ``$schema`` as it descends; a draft-07
    one would validate that branch with plain ``re`` and remote references. Tool schemas carry
    ``$schema`` as a label (zod writes draft-07), the 2020-12 rules apply regardless."""
    if not isinstance(schema, dict) or not any("$schema" in s for _, s in subschemas(schema) if isinstance(s, dict)):
        return schema
    return _strip(schema)


def _strip(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out = {k: v for k, v in node.items() if k != "$schema"}
    for key in _ONE:
        if isinstance(out.get(key), dict):
            out[key] = _strip(out[key])
    for key in _MAP:
        if isinstance(out.get(key), dict):
            out[key] = {k: _strip(v) for k, v in out[key].items()}
    for key in (*_LIST, "items"):
        if isinstance(out.get(key), list):
            out[key] = [_strip(v) for v in out[key]]
    return out


# ----------------------------------------------------------------------------------------------
# What registration refuses.
# ----------------------------------------------------------------------------------------------


def _pointer(path: tuple[str | int, ...]) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def schema_problem(schema: Any) -> tuple[str, str] | None:
    """``(path, problem)`` for the first reason a schema cannot be validated safely, or None.

    In order: patterns (too long, or too costly to compile), before anything compiles them; the
    2020-12 meta-schema; references (``$ref``/``$dynamicRef`` must be local,
    resolve, and land on a subschema; nested ``$id`` is refused, since it would move the base
    references resolve against); loops of references that never consume input; patterns that
    cannot be compiled in bounded time."""
    positions = list(subschemas(schema))
    for path, node in positions:
        if not isinstance(node, dict):
            continue
        located = [((*path, "pattern"), node.get("pattern"))]
        if isinstance(node.get("patternProperties"), dict):
            located += [((*path, "patternProperties", p), p) for p in node["patternProperties"]]
        for where, pattern in located:
            if isinstance(pattern, str) and (problem := pattern_problem(pattern)):
                return _pointer(where), problem
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return _pointer(tuple(exc.path)), f"invalid JSON schema: {exc.message}"
    if not isinstance(schema, dict):
        return None
    by_id = {id(node): path for path, node in positions if isinstance(node, dict)}
    stripped = without_dialects(schema)
    resolver = _combined().resolver_with_root(_SPEC.create_resource(stripped))
    if stripped is not schema:  # lookups return nodes of the stripped copy
        by_id = {id(n): p for p, n in subschemas(stripped) if isinstance(n, dict)}
    targets: dict[tuple[str | int, ...], list[tuple[str | int, ...]]] = {}
    for path, node in positions:
        if not isinstance(node, dict):
            continue
        if path and "$id" in node:
            return _pointer((*path, "$id")), "a nested $id is not supported (references resolve against the tool schema)"
        for keyword in ("$ref", "$dynamicRef"):
            ref = node.get(keyword)
            if ref is None:
                continue
            where = _pointer((*path, keyword))
            if not ref.startswith("#"):
                return where, f"{keyword} {ref!r} is not a local reference; schemas are never fetched (use '#/$defs/...')"
            try:
                target = resolver.lookup(ref).contents
            except referencing.exceptions.Unresolvable:
                return where, f"{keyword} {ref!r} points to nothing in the schema"
            if isinstance(target, bool):
                continue
            target_path = by_id.get(id(target))
            if target_path is None:
                return where, f"{keyword} {ref!r} points to something that is not a subschema"
            targets.setdefault(path, []).append(target_path)
    loop, widest = _reference_loop(positions, targets)
    if loop:
        return _pointer(loop[0]), "a loop of references that never reaches a value: " + " -> ".join(_pointer(p) for p in loop)
    if widest > _MAX_EXPANSION:
        return "$", (f"one value would be checked against more than {_MAX_EXPANSION} subschemas (references "
                     "shared by several branches of anyOf/allOf/oneOf multiply)")
    return None


_Path = tuple[str | int, ...]


def _reference_loop(
    positions: list[tuple[_Path, Any]], refs: dict[_Path, list[_Path]]
) -> tuple[list[_Path] | None, int]:
    """Over the subschemas that apply to the same instance (through references, allOf, anyOf,
    not, if/then/else…): a cycle, as the list of positions it passes (None when there is none),
    and the most subschemas one value is checked against from any position (references shared
    by several branches count once per branch: ``anyOf: [{$ref: d1}, {$ref: d1}]`` chained 20
    deep is a million checks of one value)."""
    edges: dict[tuple[str | int, ...], list[tuple[str | int, ...]]] = {}
    for path, node in positions:
        if not isinstance(node, dict):
            continue
        children = edges.setdefault(path, [])
        children += [(*path, k) for k in ("not", "if", "then", "else") if isinstance(node.get(k), (dict, bool))]
        for key in ("allOf", "anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                children += [(*path, key, i) for i, s in enumerate(node[key]) if isinstance(s, (dict, bool))]
        if isinstance(node.get("dependentSchemas"), dict):
            children += [(*path, "dependentSchemas", k) for k in node["dependentSchemas"]]
    for source, found in refs.items():
        edges.setdefault(source, []).extend(found)
    state: dict[_Path, int] = {}  # 1: on the current path, 2: done
    size: dict[_Path, int] = {}  # subschemas checked against one value from here, itself included
    for start in edges:
        if state.get(start):
            continue
        trail = [start]
        stack = [iter(edges.get(start, ()))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                done = trail.pop()
                state[done] = 2
                size[done] = min(1 + sum(size.get(c, 1) for c in edges.get(done, ())), _MAX_EXPANSION + 1)
                stack.pop()
                continue
            if state.get(nxt) == 1:
                return trail[trail.index(nxt):] + [nxt], 0
            if not state.get(nxt):
                state[nxt] = 1
                trail.append(nxt)
                stack.append(iter(edges.get(nxt, ())))
    return None, max(size.values(), default=1)


__all__ = [
    "REGEX_TIMEOUT_MS",
    "REGISTRY",
    "RegexUndecided",
    "TooCostly",
    "Undecided",
    "Validator",
    "budget",
    "canonical",
    "check_clock",
    "derived",
    "find",
    "format_checker",
    "is_undecided",
    "matches",
    "members",
    "pattern_problem",
    "regex_budget",
    "schema_problem",
    "search",
    "subschemas",
    "undecided_reason",
    "validator",
    "without_dialects",
]
