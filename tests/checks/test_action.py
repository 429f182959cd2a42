"""Action mismatch: a tool that changes data in another way than the user asked, with a sibling that does."""

from __future__ import annotations

from typing import Any

from guard import Guard
from guard.taxonomy import Category


def tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": "Manage the restaurant menu.",
        "parameters": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]},
    }


MENU = [tool("addMenuItem"), tool("updateMenuItem"), tool("deleteMenuItem"), tool("getMenuItem")]


def categories(call: str, request: str, tools: list[dict[str, Any]] = MENU) -> list[Any]:
    decision = Guard(tools).check({"name": call, "args": {"item": "Pad Thai"}}, [("user", request)])
    return [f for f in decision.findings if f.category is Category.SUSPICIOUS_TOOL_SELECTION]


def test_updating_when_asked_to_add_is_flagged_with_the_sibling_that_adds():
    (finding,) = categories("updateMenuItem", "Please add Pad Thai to the menu")
    assert finding.rule == "action_mismatch"
    assert finding.evidence == {"better": "addMenuItem", "asked": "create", "tool_does": "update"}


def test_deleting_when_asked_what_is_on_the_menu_is_flagged():
    (finding,) = categories("deleteMenuItem", "What is Pad Thai made of on the menu?")
    assert finding.evidence["better"] == "getMenuItem"


def test_the_asked_action_a_mixed_request_or_a_read_raises_nothing():
    assert categories("addMenuItem", "Please add Pad Thai to the menu") == []
    assert categories("updateMenuItem", "Add Pad Thai, or update it if it is there") == []
    assert categories("getMenuItem", "Delete Pad Thai from the menu") == []  # a read before the delete


def test_no_sibling_for_the_asked_action_no_finding():
    assert categories("updateMenuItem", "Please add Pad Thai to the menu", [tool("updateMenuItem"), tool("getMenuItem")]) == []
    unrelated = [tool("updateMenuItem"), tool("addCustomerReview")]  # another object
    assert categories("updateMenuItem", "Please add Pad Thai to the menu", unrelated) == []
