"""Issue 11, item 13: a parameter name is text, not a regex; a node's repr ends; a stated year on
29 February (or one no calendar holds) never raises."""

from __future__ import annotations

from datetime import datetime

import pytest
from langchain_core.tools import tool

from guard import Guard, GuardedToolNode
from guard.checks.derivations import derive
from guard.conversation import Conversation, _in_year


@pytest.mark.parametrize("name", ["a+*b", "cost(usd", "rate[", "x**", "price\\"])
def test_a_parameter_name_with_regex_syntax_is_read_as_text(name):
    assert derive(0, name, [(0, f"there is no {name} at all")]) is not None
    assert derive(0, name, [(0, "nothing to see here")]) is None


def test_regex_syntax_in_a_parameter_name_never_breaks_a_check():
    tools = [{"name": "adjust", "description": "Adjust a price.",
              "parameters": {"type": "object", "properties": {"cost(usd": {"type": "number"}, "a+*b": {"type": "number"}}}}]
    decision = Guard(tools).check({"name": "adjust", "args": {"cost(usd": 0, "a+*b": 0}, "id": "c1"},
                                  [{"role": "user", "content": "Adjust it: no cost, no a+*b."}])
    assert decision.action.value in {"allow", "ask_human", "retry", "repair", "block"}
    assert not any(f.category.value == "malformed_arguments" for f in decision.findings)


def test_the_node_repr_ends_and_names_its_wrappers():
    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return city

    def wrapper(request, execute):
        return execute(request)

    node = GuardedToolNode([lookup], wrap_tool_call=wrapper)
    node.own_wrapper = node._run_one  # a bound method of the node, whose repr is this repr
    text = repr(node)
    assert "GuardedToolNode._run_one" in text and "wrapper" in text and len(text) < 5000


@pytest.mark.parametrize(
    ("now", "year", "expected"),
    [
        (datetime(2024, 2, 29, 9, 30), 2023, datetime(2023, 2, 28, 9, 30)),
        (datetime(2024, 2, 29, 9, 30), 2020, datetime(2020, 2, 29, 9, 30)),
        (datetime(2025, 7, 1), 2023, datetime(2023, 7, 1)),
        (datetime(2025, 7, 1), 0, None),
    ],
)
def test_a_stated_year_keeps_today_where_the_calendar_allows(now, year, expected):
    assert _in_year(now, year) == expected


def test_a_year_no_calendar_holds_states_no_date():
    conversation = Conversation.from_messages([{"role": "system", "content": "The current year is 0000."}])
    assert isinstance(conversation.reference_time, datetime)


@pytest.mark.parametrize("name", ["auto(remove", "x+*y", "on[off"])
def test_a_switch_named_with_regex_syntax_is_read_as_text(name):
    assert derive("yes", name, [(0, f"please {name} everything")]) is not None
    assert derive("yes", name, [(0, "nothing to see here")]) is None


@pytest.mark.parametrize("depth", [900, 5000, 20000])
def test_arguments_nested_thousands_deep_as_python_objects_are_malformed_never_an_exception(depth):
    """JSON text that deep was already refused as too deep; a Python dict made the conversion's
    fallback repr() recurse as deep and RecursionError escaped Guard.check."""
    nested: dict = {}
    inner = nested
    for _ in range(depth):
        inner["a"] = {}
        inner = inner["a"]
    tools = [{"name": "t", "description": "A tool.", "parameters": {"type": "object", "properties": {"a": {"type": "object"}}}}]
    decision = Guard(tools).check({"name": "t", "args": nested, "id": "c1"})
    assert decision.action.value == "retry"
    assert [f.category.value for f in decision.findings] == ["malformed_arguments"]


def test_feedback_lists_the_first_problems_and_counts_the_rest():
    tools = [{"name": "lookup", "description": "Look numbers up.",
              "parameters": {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}}}}}]
    decision = Guard(tools).check({"name": "lookup", "args": {"xs": ["a"] * 300}, "id": "c1"})
    assert len(decision.findings) == 300  # every fault is kept on the decision
    assert decision.feedback.count("must be integer") == 20
    assert decision.feedback.endswith("... and 280 more problems of the same call")


@pytest.mark.parametrize("after", [[10**400, "x"], [float("nan"), "x"], [float("inf"), "x"]])
def test_a_forged_page_cursor_is_a_422_never_a_500(after):
    import base64
    import json

    from fastapi.testclient import TestClient

    from guard.service import create_app
    from guard.state import MemoryStore

    cursor = base64.urlsafe_b64encode(json.dumps(after).encode()).decode()
    answer = TestClient(create_app(store=MemoryStore(), token="")).get("/v1/escalations", params={"cursor": cursor})
    assert answer.status_code == 422 and answer.json()["detail"][0]["type"] == "cursor"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # every digit of a long run started a scientific-notation match that read the run to its
        # end: 20,000 digits took 19 s
        ({"amount": 7.5}, "1" * 20_000 + " 10"),
        # every dot of "a.a.a…" started a program target read to the value's end (4,000 characters
        # a value: 0.2 s each)
        ({"commands": ["ls -la " + "a." * 2_000 + str(i) for i in range(12)]}, "list the files"),
    ],
    ids=["digits", "dots"],
)
def test_number_and_program_readers_take_linear_time(args, message):
    import time

    tools = [{"name": "run", "description": "Run a command or record an amount.",
              "parameters": {"type": "object", "properties": {"amount": {"type": "number"},
                                                             "commands": {"type": "array", "items": {"type": "string"}}}}}]
    start = time.thread_time()
    decision = Guard(tools).check({"name": "run", "args": args, "id": "c1"}, [{"role": "user", "content": message}])
    assert time.thread_time() - start < 1.0
    assert decision.action.value in {"allow", "warn", "ask_human", "retry"}


def test_choice_lists_code_numbers_and_event_lengths_are_read_in_bounded_time():
    import time

    listed = "Possible values are [" + ", ".join(f"'v{i}'" for i in range(5_000)) + "]. " + "one of: a, " * 2_000
    tools = [{"name": "edit", "description": "Edit a file and book a slot.", "parameters": {"type": "object", "properties": {
        "new_str": {"type": "string"}, "mode": {"type": "string", "description": listed},
        "start": {"type": "string"}, "end": {"type": "string"}}}}]
    args = {"new_str": "x = 10\n" + " + ".join(str(10 + i) for i in range(2_000)), "mode": "v4999",
            "start": "2025-06-17T12:30:00", "end": "2025-06-17T13:30:00"}
    events = " ".join(f"2025-06-{1 + i % 28:02d}T{i % 24:02d}:00:00" for i in range(5_000))
    messages = [{"role": "user", "content": "12 " * 5_000},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "name": "edit", "args": {}}]},
                {"role": "tool", "tool_call_id": "t1", "content": events},
                {"role": "user", "content": "book it at 12:30 and apply the edit"}]
    Guard(tools).check({"name": "edit", "args": {"start": "2025-06-17T12:30:00"}, "id": "c0"}, [{"role": "user", "content": "mañana a las 9, 2 km"}])
    start = time.thread_time()  # the unit and date readers' one-time loading (~2 s) done above
    decision = Guard(tools).check({"name": "edit", "args": args, "id": "c1"}, messages)
    assert time.thread_time() - start < 2.0
    assert decision.action.value in {"allow", "warn", "ask_human", "retry"}
