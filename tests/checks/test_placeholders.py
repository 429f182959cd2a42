"""Placeholder values: what a model writes when it lacks the information."""

from datetime import datetime
from typing import Any

import pytest

from guard.budgets import GuardState
from guard.checks import CheckContext, placeholders
from guard.conversation import Conversation
from guard.models import ToolCall
from guard.policy import Policy
from guard.registry import ToolRegistry, ToolSpec
from guard.taxonomy import Category

SPEC = ToolSpec.from_any(
    {
        "name": "send",
        "parameters": {
            "type": "object",
            "properties": {
                "to": {"type": "string"},
                "name": {"type": "string", "description": "Full name, e.g. 'John Doe'"},
                "zip": {"type": "integer", "description": "Postal code, for example: 12345"},
                "city": {"type": "string", "description": "A city such as Springfield or LA"},
                "status": {"type": "string", "enum": ["unknown", "active"]},
                "note": {"type": "string"},
                "recipients": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"email": {"type": "string"}}},
                },
            },
            "required": ["to"],
        },
    }
)


def check(args: dict[str, Any], user: str = "Please send it", policy: Policy | None = None) -> list[Any]:
    ctx = CheckContext(
        call=ToolCall(name="send", args=args),
        args=args,
        spec=SPEC,
        registry=ToolRegistry([SPEC]),
        conversation=Conversation.from_messages([("system", "You are helpful."), ("user", user)],
                                                now=datetime(2021, 9, 27)),
        state=GuardState(),
        policy=policy or Policy(),
    )
    return placeholders.check(ctx)


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ("<user_id>", "angle_brackets"),
        ("<file_path>", "angle_brackets"),
        ("{city}", "template_hole"),
        ("{{recipient}}", "template_hole"),
        ("your_api_key", "your_value"),
        ("YOUR EMAIL", "your_value"),
        ("your email address", "your_value"),
        ("xxx", "masked"),
        ("XXXX", "masked"),
        ("xxx-xxx", "masked"),
        ("555-XXX-XXXX", "masked"),
        ("unknown", "unknown"),
        (" Unknown ", "unknown"),
        ("N/A", "not_available"),
        ("TBD", "tbd"),
        ("TODO", "todo"),
        ("placeholder", "placeholder"),
        ("user@example.com", "example_email"),
        ("...", "ellipsis"),
        ("string", "type_name"),
    ],
)
def test_placeholder_values_are_flagged_with_the_pattern_that_matched(value: str, rule: str):
    (finding,) = check({"to": value})
    assert finding.category is Category.PLACEHOLDER_VALUE and finding.check == "placeholders"
    assert finding.rule == rule and finding.path == "$.to" and finding.value == value
    assert finding.tool == "send"


@pytest.mark.parametrize(
    "value",
    [
        "Unknown Pleasures",
        "The venue is N/A for now",
        "TBD Records Ltd",
        "Your Song",
        "ann@mail.org",
        "Bob",
        "0x1234",
        "<b>bold</b> text",
        '{"a": 1}',
        "strings",
        "a" * 300,
    ],
)
def test_ordinary_values_are_not_flagged(value: str):
    assert check({"to": value}) == []


def test_nested_placeholders_have_exact_paths():
    findings = check({"to": "Ann", "recipients": [{"email": "ann@mail.org"}, {"email": "<email>"}]})
    assert [(f.path, f.rule) for f in findings] == [("$.recipients[1].email", "angle_brackets")]


def test_empty_required_value_is_flagged_but_empty_optional_is_not():
    (finding,) = check({"to": "  ", "note": ""})
    assert finding.path == "$.to" and finding.rule == "empty_required"


def test_enum_member_is_never_a_placeholder():
    assert check({"to": "Ann", "status": "unknown"}) == []


@pytest.mark.parametrize(("param", "value"), [("name", "John Doe"), ("zip", 12345), ("city", "Springfield")])
def test_description_example_is_flagged_when_nobody_said_it(param: str, value: Any):
    (finding,) = check({"to": "Ann", param: value})
    assert finding.rule == "description_example" and finding.path == f"$.{param}"


def test_description_example_the_user_did_say_is_not_flagged():
    assert check({"to": "Ann", "city": "Springfield"}, user="Send it to my office in springfield") == []


def test_short_codes_and_yes_no_from_the_description_are_choices_not_placeholders():
    assert check({"to": "Ann", "city": "LA"}) == []


def test_check_can_be_switched_off():
    assert check({"to": "<user_id>"}, policy=Policy(checks={"placeholders": False})) == []


def test_odd_strings_never_raise():
    findings = check({"to": "<\ud800>", "note": "\x00\x1b", "recipients": [{"email": "\udfff"}]})
    for finding in findings:
        finding.model_dump_json()


def test_schema_examples_count_as_examples_but_the_default_does_not():
    spec = ToolSpec.from_any({"name": "t", "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "examples": ["Springfield"]},
        "size": {"type": "integer", "description": "Page size, e.g. 10", "default": 10},
    }}})
    ctx = CheckContext(
        call=ToolCall(name="t", args={}), args={"city": "Springfield", "size": 10}, spec=spec,
        registry=ToolRegistry([spec]), conversation=Conversation.from_messages([("user", "hi")]),
        state=GuardState(), policy=Policy(),
    )
    assert [(f.path, f.rule) for f in placeholders.check(ctx)] == [("$.city", "description_example")]


def test_a_description_example_the_user_asked_for_item_by_item_is_no_placeholder():
    from guard import Guard

    tool = {
        "name": "check_facilities",
        "description": "Check hotel facilities.",
        "parameters": {
            "type": "object",
            "properties": {"facilityList": {"type": "string", "description": "Facilities, comma separated, e.g., 'gym,pool'"}},
            "required": ["facilityList"],
        },
    }
    guard = Guard([tool])
    asked = [("user", "Are the gym and pool available?")]
    assert guard.check({"name": "check_facilities", "args": {"facilityList": "gym,pool"}}, asked).findings == []
    (finding,) = guard.check({"name": "check_facilities", "args": {"facilityList": "gym,pool"}}, [("user", "Is the gym open?")]).findings
    assert finding.rule == "description_example"


def test_a_description_example_the_user_said_in_the_plural_is_no_placeholder():
    assert check({"city": "Springfield"}, user="Compare the Springfields of the US") == []
    (finding,) = check({"city": "Springfield"}, user="Compare the cities of the US")
    assert finding.rule == "description_example"


def _after_tool(args: dict[str, Any], result: str) -> list[Any]:
    messages = [
        {"role": "user", "content": "Email me the report"},
        {"role": "assistant", "content": "", "tool_calls": [{"name": "get_profile", "args": {}, "id": "p1"}]},
        {"role": "tool", "content": result, "tool_call_id": "p1"},
    ]
    ctx = CheckContext(
        call=ToolCall(name="send", args=args), args=args, spec=SPEC, registry=ToolRegistry([SPEC]),
        conversation=Conversation.from_messages(messages), state=GuardState(), policy=Policy(),
    )
    return placeholders.check(ctx)


def test_an_address_a_tool_returned_is_real_data_however_it_looks():
    # the account's profile holds a test address: the model copied it, it invented nothing
    assert _after_tool({"to": "dana@example.com"}, '{"name": "Dana", "email": "dana@example.com"}') == []
    # another address at example.com than the one returned is still made up
    assert [f.rule for f in _after_tool({"to": "user@example.com"}, '{"email": "dana@example.com"}')] == ["example_email"]


def test_a_stand_in_word_a_tool_result_holds_is_still_a_stand_in():
    # a result saying its status is "unknown" does not make "unknown" a recipient
    assert [f.rule for f in _after_tool({"to": "unknown"}, '{"status": "unknown"}')] == ["unknown"]
