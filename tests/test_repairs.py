"""Deterministic repairs: each fixes one unambiguous fault, reports it, and can be switched off."""

import copy
from datetime import datetime
from typing import Any

import pytest

from guard import repairs
from guard.budgets import GuardState
from guard.checks import CheckContext, arguments
from guard.conversation import Conversation
from guard.lexicon import DATE_LANGUAGES
from guard.models import ToolCall
from guard.policy import Policy
from guard.registry import ToolRegistry, ToolSpec
from guard.taxonomy import Category


def spec_with(properties: dict[str, Any], required: list[str] | None = None, name: str = "t") -> ToolSpec:
    return ToolSpec.from_any(
        {"name": name, "parameters": {"type": "object", "properties": properties, "required": required or []}}
    )


def ctx_for(args: dict[str, Any], spec: ToolSpec | None, policy: Policy | None = None) -> CheckContext:
    return CheckContext(
        call=ToolCall(name=spec.name if spec else "t", args=args),
        args=args,
        spec=spec,
        registry=ToolRegistry([spec] if spec else []),
        conversation=Conversation.from_messages([("user", "hello")], now=datetime(2021, 9, 27, 9, 30)),
        state=GuardState(),
        policy=policy or Policy(),
    )


def repair(value: Any, schema: dict[str, Any], policy: Policy | None = None) -> tuple[Any, list[Any]]:
    """Repair one argument ``x`` with the given schema; return its new value and the findings."""
    args, findings = repairs.apply(ctx_for({"x": value}, spec_with({"x": schema}), policy))
    return args["x"], findings


# -- coerce_types ------------------------------------------------------------------------------


def test_string_number_is_coerced_to_integer_and_reported():
    value, (finding,) = repair("3", {"type": "integer"})
    assert value == 3 and isinstance(value, int)
    assert finding.category is Category.TYPE_VIOLATION and finding.check == "repairs"
    assert finding.rule == "coerce_types" and finding.path == "$.x" and finding.tool == "t"
    assert finding.repair is not None
    assert (finding.repair.kind, finding.repair.path, finding.repair.before, finding.repair.after) == (
        "coerce_types", "$.x", "3", 3)


@pytest.mark.parametrize(
    ("raw", "schema_type", "expected"),
    [
        (" 3 ", "integer", 3),
        ("3.0", "integer", 3),
        ("1,000", "integer", 1000),
        ("-7", "integer", -7),
        ("3.5", "number", 3.5),
        ("3", "number", 3),
        (3.0, "integer", 3),
        (12345, "string", "12345"),
        (2.5, "string", "2.5"),
        ("TRUE", "boolean", True),
        ("no", "boolean", False),
        ("1", "boolean", True),
        ("0", "boolean", False),
    ],
)
def test_clean_values_are_coerced(raw: Any, schema_type: str, expected: Any):
    value, findings = repair(raw, {"type": schema_type})
    assert value == expected and type(value) is type(expected)
    assert [f.rule for f in findings] == ["coerce_types"]


@pytest.mark.parametrize(
    ("raw", "schema"),
    [
        ("3 apples", {"type": "integer"}),
        ("3.5", {"type": "integer"}),
        ("1,00", {"type": "integer"}),
        ("maybe", {"type": "boolean"}),
        (True, {"type": "integer"}),
        (None, {"type": "integer"}),
        (float("nan"), {"type": "string"}),
        ("3", {"type": ["string", "integer"]}),
        ("3", {"anyOf": [{"type": "string"}, {"type": "integer"}]}),
        (3, {"type": "number"}),
        ({"a": 1}, {"type": "string"}),
    ],
)
def test_values_without_one_clean_reading_or_already_allowed_are_left_alone(raw: Any, schema: dict[str, Any]):
    value, findings = repair(raw, schema)
    assert findings == []
    assert value is raw or value == raw


def test_optional_integer_branch_is_followed():
    value, _ = repair("4", {"anyOf": [{"type": "integer"}, {"type": "null"}]})
    assert value == 4


def test_scalar_becomes_a_one_item_list_when_the_schema_wants_an_array_of_it():
    value, (finding,) = repair("Rome", {"type": "array", "items": {"type": "string"}})
    assert value == ["Rome"] and finding.rule == "coerce_types"


def test_scalar_of_another_type_is_not_wrapped():
    value, findings = repair(True, {"type": "array", "items": {"type": "string"}})
    assert value is True and findings == []


# -- enum_case ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "members", "expected"),
    [
        ("  celsius", ["Celsius", "Fahrenheit"], "Celsius"),
        ("new york", ["New_York", "Los_Angeles"], "New_York"),
        ("LOS-ANGELES", ["New_York", "Los_Angeles"], "Los_Angeles"),
    ],
)
def test_enum_value_differing_only_in_case_or_separators_is_corrected(raw: str, members: list[str], expected: str):
    value, (finding,) = repair(raw, {"type": "string", "enum": members})
    assert value == expected
    assert finding.category is Category.ENUM_VIOLATION and finding.rule == "enum_case"


def test_enum_value_matching_two_members_is_not_corrected():
    value, findings = repair("new york", {"type": "string", "enum": ["New York", "new_york"]})
    assert value == "new york" and findings == []


def test_enum_value_matching_no_member_is_not_corrected():
    value, findings = repair("kelvin", {"type": "string", "enum": ["Celsius", "Fahrenheit"]})
    assert value == "kelvin" and findings == []


# -- param_names -------------------------------------------------------------------------------

CITIES = {"from_city": {"type": "string"}, "to_city": {"type": "string"}, "city": {"type": "string"}}


@pytest.mark.parametrize("key", ["fromCity", "FromCity", "from-city", "FROM_CITY", "from_ctiy", "fromcity"])
def test_misnamed_argument_moves_to_the_declared_name(key: str):
    args, (finding,) = repairs.apply(ctx_for({key: "Paris"}, spec_with(CITIES)))
    assert args == {"from_city": "Paris"}
    assert finding.category is Category.UNEXPECTED_ARGUMENT and finding.rule == "param_names"
    assert finding.repair is not None and (finding.repair.before, finding.repair.after) == (key, "from_city")


def test_partial_name_is_not_a_match():
    args, findings = repairs.apply(ctx_for({"city_name": "Paris"}, spec_with(CITIES)))
    assert args == {"city_name": "Paris"} and findings == []


def test_name_close_to_two_declared_names_is_not_renamed():
    spec = spec_with({"date_1": {"type": "string"}, "date_2": {"type": "string"}})
    args, findings = repairs.apply(ctx_for({"date_3": "x"}, spec))
    assert args == {"date_3": "x"} and findings == []


def test_name_is_not_moved_onto_an_argument_already_present():
    args, findings = repairs.apply(ctx_for({"fromCity": "A", "from_city": "B"}, spec_with(CITIES)))
    assert args == {"fromCity": "A", "from_city": "B"} and findings == []


def test_renamed_argument_is_then_repaired_by_its_own_schema():
    spec = spec_with({"num_people": {"type": "integer"}})
    args, findings = repairs.apply(ctx_for({"numPeople": "4"}, spec))
    assert args == {"num_people": 4}
    assert [f.rule for f in findings] == ["param_names", "coerce_types"]
    assert findings[1].path == "$.num_people"


# -- date_format -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "schema", "expected"),
    [
        ("2021/09/28", {"type": "string", "description": "Date, format YYYY-MM-DD"}, "2021-09-28"),
        ("2021-9-28", {"type": "string", "description": "Date (yyyy-mm-dd)"}, "2021-09-28"),
        ("tomorrow at 2pm", {"type": "string", "format": "date-time"}, "2021-09-28T14:00:00"),
        ("tomorrow at 2pm", {"type": "string", "description": "When, as YYYY-MM-DD HH:MM:SS"}, "2021-09-28 14:00:00"),
        ("Sept 28, 2021", {"type": "string", "format": "date"}, "2021-09-28"),
        ("2021-09-28", {"type": "string", "description": "Date in MM/DD/YYYY"}, "09/28/2021"),
        ("28/09/2021", {"type": "string", "description": "Use %Y-%m-%d."}, "2021-09-28"),
        ("2:30 pm", {"type": "string", "description": "Start time HH:MM"}, "14:30"),
        ("2:30 pm", {"type": "string", "format": "time"}, "14:30:00"),
        ("2021-09-28T00:00:00", {"type": "string", "format": "date"}, "2021-09-28"),
        ("2021-09-28 14:00", {"type": "string", "description": "yyyy-MM-dd'T'HH:mm:ss"}, "2021-09-28T14:00:00"),
    ],
)
def test_dates_are_reformatted_to_the_stated_format(raw: str, schema: dict[str, Any], expected: str):
    value, (finding,) = repair(raw, schema)
    assert value == expected
    assert finding.category is Category.FORMAT_VIOLATION and finding.rule == "date_format"
    assert finding.repair is not None and finding.repair.after == expected


@pytest.mark.parametrize(
    ("raw", "schema"),
    [
        ("03/04/2021", {"type": "string", "format": "date"}),
        ("2021-09-28", {"type": "string", "format": "date-time"}),
        ("no idea", {"type": "string", "format": "date"}),
        ("2021-09-28", {"type": "string", "description": "A date"}),
        ("2021-09-28T14:00:00", {"type": "string", "format": "date"}),
        ("tomorrow at 2pm", {"type": "string", "format": "time"}),
        ("2021-09-28T14:00:00+02:00", {"type": "string", "description": "YYYY-MM-DD HH:MM:SS"}),
        # a season, a fiscal year: a span of two years is no date (it was "reformatted" to 2023-23)
        ("2023-24", {"type": "string", "description": "Season as YYYY-YY, e.g. 2022-23."}),
        ("2023/24", {"type": "string", "description": "Fiscal year, YYYY/YY"}),
        # the schema's pattern admits it: a quarter where the description shows "YYYY-MM or YYYY-Qn"
        ("2025-Q2", {"type": "string", "description": "Period, YYYY-MM or YYYY-Qn.", "pattern": r"^(\d{4}-(0[1-9]|1[0-2])|\d{4}-Q[1-4])$"}),
        ("2021-09-28", {"type": "string", "description": "Date in MM/DD/YYYY", "pattern": r"^\d{4}-\d{2}-\d{2}$"}),
        ("2pm", {"type": "string", "description": "Start time HH:MM, or 1am-12pm", "pattern": r"^(\d{2}:\d{2}|\d{1,2}[ap]m)$"}),
    ],
)
def test_dates_without_one_clear_reading_are_left_alone(raw: str, schema: dict[str, Any]):
    value, findings = repair(raw, schema)
    assert value == raw and findings == []


def test_values_already_in_format_never_reach_dateparser(monkeypatch: pytest.MonkeyPatch):
    def refuse(*_: Any) -> None:
        raise AssertionError("dateparser called")

    monkeypatch.setattr(repairs, "_dateparser", refuse)
    for raw, schema in [
        ("2021-09-28", {"type": "string", "format": "date"}),
        ("2021-09-28T14:00:00Z", {"type": "string", "format": "date-time"}),
        ("2021-09-28 14:00:00", {"type": "string", "description": "YYYY-MM-DD HH:MM:SS"}),
        ("2021/09/28", {"type": "string", "format": "date"}),
    ]:
        repair(raw, schema)


def test_dates_in_words_are_read_in_common_languages_and_never_in_every_locale(monkeypatch: pytest.MonkeyPatch):
    """dateparser left to guess the language tries every locale it knows: tens of milliseconds for a
    text that is no date at all. It is asked in English, then in the common languages."""
    for raw in ("demain à 14:00", "mañana a las 14:00"):
        value, (finding,) = repair(raw, {"type": "string", "format": "date-time"})
        assert value == "2021-09-28T14:00:00" and finding.rule == "date_format"
    import dateparser

    asked: list[Any] = []
    real = dateparser.parse

    def spy(text: str, *args: Any, languages: Any = None, **kwargs: Any) -> Any:
        asked.append(languages)
        return real(text, *args, languages=languages, **kwargs)

    monkeypatch.setattr(dateparser, "parse", spy)
    repairs._dateparser.cache_clear()
    for raw in ("none", "no idea at all", "next friday"):
        repair(raw, {"type": "string", "format": "date"})
    assert asked and all(langs and set(langs) <= set(DATE_LANGUAGES) for langs in asked)
    assert asked[0] == ["en"]


# -- parse_json --------------------------------------------------------------------------------


def test_json_text_for_an_object_is_parsed_and_its_contents_repaired():
    schema = {"type": "object", "properties": {"to": {"type": "string"}, "n": {"type": "integer"}}}
    value, findings = repair('{"to": "Rome", "n": "2"}', schema)
    assert value == {"to": "Rome", "n": 2}
    assert [(f.rule, f.path) for f in findings] == [("parse_json", "$.x"), ("coerce_types", "$.x.n")]
    assert findings[0].category is Category.TYPE_VIOLATION


def test_python_literal_text_for_an_array_is_parsed():
    value, (finding,) = repair("['a', 'b']", {"type": "array", "items": {"type": "string"}})
    assert value == ["a", "b"] and finding.rule == "parse_json"


def test_text_that_parses_to_the_wrong_type_is_not_used():
    value, findings = repair("[1, 2]", {"type": "object"})
    assert value == "[1, 2]" and findings == []


# -- nesting, copies, switches -----------------------------------------------------------------

NESTED = spec_with(
    {
        "trip": {
            "type": "object",
            "properties": {
                "stops": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"nights": {"type": "integer"},
                                                               "unit": {"enum": ["Celsius"], "type": "string"}}},
                }
            },
        }
    }
)


def test_repairs_follow_nested_objects_and_arrays_with_exact_paths():
    args = {"trip": {"stops": [{"nights": 1}, {"nights": "2", "unit": "celsius"}]}}
    original = copy.deepcopy(args)
    repaired, findings = repairs.apply(ctx_for(args, NESTED))
    assert repaired == {"trip": {"stops": [{"nights": 1}, {"nights": 2, "unit": "Celsius"}]}}
    assert [f.path for f in findings] == ["$.trip.stops[1].nights", "$.trip.stops[1].unit"]
    assert args == original  # the input is never mutated


def test_repaired_arguments_then_validate():
    spec = spec_with({"n": {"type": "integer"}, "unit": {"type": "string", "enum": ["Celsius"]}}, ["n", "unit"])
    repaired, _ = repairs.apply(ctx_for({"N": "3", "unit": "celsius"}, spec))
    assert arguments.check(ctx_for(repaired, spec)) == []


SWITCH_CASES = [
    ("coerce_types", {"x": "3"}, {"x": {"type": "integer"}}),
    ("enum_case", {"x": "celsius"}, {"x": {"type": "string", "enum": ["Celsius"]}}),
    ("param_names", {"fromCity": "A"}, {"from_city": {"type": "string"}}),
    ("date_format", {"x": "2021/09/28"}, {"x": {"type": "string", "format": "date"}}),
    ("parse_json", {"x": '{"a": 1}'}, {"x": {"type": "object"}}),
]


@pytest.mark.parametrize(("switch", "args", "properties"), SWITCH_CASES)
def test_each_repair_happens_when_on(switch: str, args: dict[str, Any], properties: dict[str, Any]):
    _, findings = repairs.apply(ctx_for(args, spec_with(properties)))
    assert [f.rule for f in findings] == [switch]


@pytest.mark.parametrize(("switch", "args", "properties"), SWITCH_CASES)
def test_each_repair_can_be_switched_off(switch: str, args: dict[str, Any], properties: dict[str, Any]):
    repaired, findings = repairs.apply(ctx_for(args, spec_with(properties), Policy(repairs={switch: False})))
    assert repaired == args and findings == []


def test_repairs_can_be_switched_off_per_tool():
    policy = Policy(tools={"t": {"repair": False}})
    repaired, findings = repairs.apply(ctx_for({"x": "3"}, spec_with({"x": {"type": "integer"}}), policy))
    assert repaired == {"x": "3"} and findings == []
    other = spec_with({"x": {"type": "integer"}}, name="other")
    assert repairs.apply(ctx_for({"x": "3"}, other, policy))[0] == {"x": 3}


def test_unknown_tool_gets_no_repairs():
    assert repairs.apply(ctx_for({"x": "3"}, None)) == ({"x": "3"}, [])


def test_odd_values_never_raise():
    schema = {"type": "integer"}
    for raw in ["\ud800", "\x00", "9" * 100, [None, {"a": []}], {"\ud800": 1}, float("inf"), "1e309"]:
        _, findings = repair(raw, schema)
        for finding in findings:
            finding.model_dump_json()


def test_a_form_the_description_quotes_is_left_as_it_is():
    schema = {"type": "string", "description": "YYYY-MM-DD or relative: 'today', 'yesterday', 'NdaysAgo'"}
    for value in ("yesterday", "7daysAgo", "today"):
        assert repair(value, schema) == (value, [])
    # everyday negatives: a relative word the description does not quote, a date in another format, the template itself with no number
    assert repair("tomorrow", schema)[0] != "tomorrow"
    assert repair("03/15/2025", schema)[0] == "2025-03-15"
    assert repair("Ndays", schema)[0] == "Ndays"  # no date at all: left alone, unreported
