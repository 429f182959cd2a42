"""``schema.plainly_valid``: the argument check's fast path may only ever say "valid" where the
validator finds nothing; every fault, and every keyword it does not decide, is the validator's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from guard import schema as schemas
from guard.checks import arguments

CHECKER = arguments._FORMAT_CHECKER

# -- schemas and values built from the keywords the fast path reads, and a few it leaves alone ----

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(-5, 5), st.sampled_from([1.0, 2.5, 10**20, float("nan"), float("inf")]),
    st.sampled_from(["", "a", "abc", "x" * 20, "2024-01-31", "2024-02-30", "09:30:00", "a@b.co", "not mail", "USD", "1e3"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["a", "b", "c", "zz"]), inner, max_size=4)),
    max_leaves=12,
)
_types = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
_leaf_schemas = st.fixed_dictionaries(
    {},
    optional={
        "type": st.one_of(_types, st.lists(_types, min_size=1, max_size=3)),
        "enum": st.lists(_scalars, min_size=1, max_size=4),
        "format": st.sampled_from(["date", "time", "date-time", "email", "uri", "unknown-format"]),
        "pattern": st.sampled_from(["^a", "c$", "^[0-9]{4}-", "(a+)+$", "^(?=a)", "^[\\s\\S]{1,2048}$"]),
        "minimum": st.integers(-3, 3), "maximum": st.integers(-3, 3),
        "exclusiveMinimum": st.integers(-3, 3), "exclusiveMaximum": st.integers(-3, 3),
        "minLength": st.integers(0, 4), "maxLength": st.integers(0, 4),
        "minItems": st.integers(0, 3), "maxItems": st.integers(0, 3),
        "description": st.just("a parameter"), "default": _scalars,
        "const": _scalars, "uniqueItems": st.booleans(), "multipleOf": st.sampled_from([2, 0.5]),
    },
)
_schemas = st.recursive(
    _leaf_schemas,
    lambda inner: st.one_of(
        st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)},
            optional={
                "required": st.lists(st.sampled_from(["a", "b", "c"]), max_size=3, unique=True),
                "additionalProperties": st.one_of(st.booleans(), inner),
                "patternProperties": st.just({"^z": {"type": "integer"}}),
            },
        ),
        st.fixed_dictionaries({"type": st.just("array"), "items": st.one_of(inner, st.booleans())},
                              optional={"minItems": st.integers(0, 2), "prefixItems": st.just([{"type": "string"}])}),
        st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=2)}),
        st.booleans(),
    ),
    max_leaves=6,
)


@settings(max_examples=1500, deadline=None)
@given(_schemas, _values)
def test_plainly_valid_never_says_valid_where_the_validator_finds_a_fault(schema, value):
    for closed in (False, True):
        compiled = arguments.close_objects(schema) if closed else schema
        validator = schemas.validator(compiled, format_checker=CHECKER)
        if schemas.plainly_valid(compiled, value, CHECKER):
            assert list(validator.iter_errors(value)) == []


TOOL = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "e.g. Paris", "minLength": 1},
        "date": {"type": "string", "format": "date"},
        "unit": {"type": "string", "enum": ["metric", "imperial"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "maxItems": 3},
        "options": {"type": "object", "properties": {"hourly": {"type": "boolean"}}},
    },
    "required": ["city"],
}


def test_a_plain_valid_call_is_seen_without_the_validator():
    closed = arguments.close_objects(TOOL)
    call = {"city": "Paris", "date": "2024-01-31", "unit": "metric", "days": 3.0, "tags": ["rain"], "options": {"hourly": True}}
    assert schemas.plainly_valid(closed, call, CHECKER)
    assert list(schemas.validator(closed, format_checker=CHECKER).iter_errors(call)) == []


def test_every_fault_is_left_to_the_validator():
    closed = arguments.close_objects(TOOL)
    for call in (
        {},  # required
        {"city": "Paris", "extra": 1},  # closed object
        {"city": ""},  # minLength
        {"city": "Paris", "date": "2024-02-30"},  # format
        {"city": "Paris", "unit": "Metric"},  # enum
        {"city": "Paris", "days": 0},  # minimum
        {"city": "Paris", "days": True},  # a bool is no integer
        {"city": "Paris", "tags": ["Rain"]},  # pattern
        {"city": "Paris", "tags": ["a", "b", "c", "d"]},  # maxItems
        {"city": "Paris", "options": {"hourly": "yes"}},  # nested type
    ):
        assert not schemas.plainly_valid(closed, call, CHECKER), call
        assert list(schemas.validator(closed, format_checker=CHECKER).iter_errors(call)), call


def test_keywords_it_does_not_decide_go_to_the_validator():
    assert not schemas.plainly_valid({"$ref": "#/$defs/x", "$defs": {"x": {}}}, 1)
    assert not schemas.plainly_valid({"anyOf": [{"type": "string"}]}, "a")
    assert not schemas.plainly_valid({"type": "string", "pattern": "^(?=a)"}, "aaa")  # RE2 refuses it: the budgeted matcher's
    assert not schemas.plainly_valid({"type": "array", "items": {"type": "integer"}}, list(range(5000)))  # large: the budget's
    assert schemas.plainly_valid({"type": "array", "items": {"type": "integer"}}, list(range(50)))
    assert not schemas.plainly_valid({"minimum": "five"}, 3)  # a schema that makes the comparison raise: the validator's


def test_the_fast_path_reads_kinds_as_the_validators_type_checker_does():
    """``_kind`` tests Python types directly, which is right only while ``Validator`` keeps Draft
    2020-12's type checker; a validator with a checker of its own must change ``_kind`` too."""
    from jsonschema import Draft202012Validator

    assert schemas.Validator.TYPE_CHECKER is Draft202012Validator.TYPE_CHECKER
    for value, kind in ((True, None), (1, "number"), (1.5, "number"), ("x", "string"), ([], "array"), ({}, "object"), (None, None)):
        assert schemas._kind(value) == kind
