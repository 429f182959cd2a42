"""Tool descriptions are checked at registration, so a broken schema fails once, clearly."""

import pytest

from guard.models import ToolCall
from guard.registry import ToolSchemaError, ToolSpec


def test_invalid_regex_in_a_schema_is_reported_at_registration():
    with pytest.raises(ToolSchemaError) as err:
        ToolSpec.from_any({"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": "string", "pattern": "[a-"}}}})
    assert err.value.tool == "t" and err.value.path == "$.a.pattern" and "regular expression" in str(err.value)


def test_a_schema_that_breaks_json_schema_is_reported_at_registration():
    with pytest.raises(ToolSchemaError, match="invalid JSON schema") as err:
        ToolSpec.from_any({"name": "t", "parameters": {"type": "object", "properties": {"n": {"type": "integer", "minimum": "five"}}}})
    assert err.value.path == "$.properties.n.minimum"


def test_unknown_type_name_is_reported_with_its_path():
    with pytest.raises(ToolSchemaError, match=r"\$\.a\.type"):
        ToolSpec.from_any({"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": "complex"}}}})


def test_openai_wire_arguments_are_parsed_not_reported():
    call = ToolCall.from_any({"id": "1", "type": "function", "function": {"name": "t", "arguments": '{"a": 1}'}})
    assert call.args == {"a": 1}
    broken = ToolCall.from_any({"id": "1", "function": {"name": "t", "arguments": '{"a": '}})
    assert broken.args == '{"a": '


def test_ecma_hyphen_after_a_class_escape_is_accepted():
    spec = ToolSpec.from_any(
        {"name": "t", "parameters": {"type": "object", "properties": {"e": {"type": "string", "pattern": r"^[\w-\.]+@x\.org$"}}}}
    )
    assert spec.properties["e"]["pattern"] == r"^[\w\-\.]+@x\.org$"


def test_every_dialect_normalises_to_one_json_schema():
    from langchain_core.tools import tool
    from pydantic import BaseModel

    @tool
    def lc_tool(city: str, days: int = 1) -> str:
        """Forecast for a city."""
        return city

    def typed(city: str, days: int = 1) -> str:
        """Forecast for a city."""
        return city

    class Model(BaseModel):
        """Forecast for a city."""

        city: str
        days: int = 1

    openai = {"type": "function", "function": {"name": "f", "description": "d", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}}
    bfcl = {"name": "f", "description": "d", "parameters": {"type": "dict", "properties": {
        "city": {"type": "string"}, "days": {"type": "float"}, "pair": {"type": "tuple", "items": {"type": "integer"}},
        "extra": {"type": "any"}}, "required": ["city"]}}
    toolbench = {"api_name": "f", "api_description": "d", "required_parameters": [{"name": "city", "type": "STRING", "description": "c"}],
                 "optional_parameters": [{"name": "days", "type": "STRING or LIST of STRINGS", "default": ""}], "template_response": {"a": "str"}}
    api_bank = {"name": "f", "description": "d", "input_parameters": {"city": {"type": "str", "description": "c"},
                "days": {"type": "int", "description": "(Optional) days"}}, "output_parameters": {"x": {"type": "list"}}}
    for raw in (lc_tool, typed, Model, openai, bfcl, toolbench, api_bank):
        spec = ToolSpec.from_any(raw)
        assert spec.parameters["type"] == "object" and "city" in spec.properties, raw
        assert spec.required == ["city"], (raw, spec.required)
    assert ToolSpec.from_any(bfcl).properties["days"]["type"] == "number"
    assert ToolSpec.from_any(bfcl).properties["pair"]["type"] == "array"
    assert "type" not in ToolSpec.from_any(bfcl).properties["extra"]
    assert ToolSpec.from_any(toolbench).properties["days"]["type"] == ["string", "array"]
    assert ToolSpec.from_any(toolbench).metadata["template_response"] == {"a": "str"}
    assert ToolSpec.from_any(lc_tool).runner is lc_tool


def test_a_description_that_is_not_a_tool_is_reported():
    with pytest.raises(ToolSchemaError, match="non-empty name"):
        ToolSpec.from_any({"description": "nameless"})
    with pytest.raises(ToolSchemaError, match="must describe an object"):
        ToolSpec.from_any({"name": "t", "parameters": {"type": "string"}})


def test_a_parameter_list_that_is_not_a_list_is_reported():
    with pytest.raises(ToolSchemaError, match="required_parameters must be a list"):
        ToolSpec.from_any({"api_name": "f", "required_parameters": 5})


def test_a_copied_registry_changes_availability_on_its_own():
    from guard.registry import ToolRegistry

    original = ToolRegistry([{"name": "a", "parameters": {"type": "object", "properties": {}}}])
    fingerprint = original.fingerprint
    twin = original.copy()
    twin.set_available("a", False, "circuit open")
    assert not twin.get("a").enabled and original.get("a").enabled
    assert twin.fingerprint == fingerprint


def test_the_service_a_tool_belongs_to_is_read_from_service_or_toolbench_tool_name():
    plain = {"name": "get_ticker", "description": "Ticker of a pair.", "parameters": {"type": "object", "properties": {}}}
    assert ToolSpec.from_any({**plain, "service": "kucoin"}).metadata["service"] == "kucoin"
    assert ToolSpec.from_any({**plain, "tool_name": "kucoin"}).metadata["service"] == "kucoin"
    assert "service" not in ToolSpec.from_any(plain).metadata
