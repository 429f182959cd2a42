"""The everyday sets: hand-written correct calls on which an interrupt is a false one."""

from __future__ import annotations

import pytest

from guard_bench.everyday import FOLDER, load, measure


@pytest.mark.parametrize("name", sorted(p.stem for p in FOLDER.glob("*.jsonl")))
def test_every_call_names_one_of_its_tools_with_its_required_values(name: str) -> None:
    cases = load(name)
    assert cases and len({c["id"] for c in cases}) == len(cases)
    for case in cases:
        tools = {t["name"]: t for t in case["tools"]}
        assert case["call"]["name"] in tools, case["id"]
        required = tools[case["call"]["name"]]["parameters"].get("required", [])
        assert set(required) <= set(case["call"]["args"]), case["id"]
        assert case["kind"] in ("single", "step") and case["messages"][-1]["role"] in ("user", "tool", "assistant")


def test_an_invented_value_is_counted_and_a_stated_one_is_not() -> None:
    weather = {"name": "get_weather", "description": "Current weather in a city",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
    stated = {"id": "a", "kind": "single", "tools": [weather], "messages": [{"role": "user", "content": "weather in Oslo?"}],
              "call": {"name": "get_weather", "args": {"city": "Oslo"}, "id": "c1"}}
    invented = {**stated, "id": "b", "messages": [{"role": "user", "content": "weather where I am?"}]}
    figures = measure([stated, invented])
    assert figures["single"]["interrupted"] == 1 and figures["single"]["n"] == 2
