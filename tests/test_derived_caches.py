"""Caches of what is derived from tools and short texts: keyed by content, least recently used out,
bounded by what they describe, and never a different answer from the uncached one."""

from __future__ import annotations

from guard.normalise import _normalise, normalise_text
from guard.registry import PerRegistry, ToolRegistry
from guard.replay.core import Catalog


def _registry(i: int, tools: int = 2) -> ToolRegistry:
    return ToolRegistry(
        {"name": f"tool_{i}_{j}", "description": f"does thing {i} {j}", "parameters": {"type": "object", "properties": {}}}
        for j in range(tools)
    )


def test_a_derivation_is_kept_per_tool_set_across_many_tool_sets():
    built: list[str] = []
    derive = PerRegistry(lambda r: built.append(r.fingerprint) or len(r))
    registries = [_registry(i) for i in range(500)]  # far more tool sets than the old 64 slots
    for _ in range(3):
        for registry in registries:
            assert derive(registry) == 2
    assert len(built) == 500  # once each, however the tool sets cycle


def test_a_new_registry_object_with_the_same_tools_shares_the_derivation():
    built: list[int] = []
    derive = PerRegistry(lambda r: built.append(1) or object())
    assert derive(_registry(7)) is derive(_registry(7))
    assert len(built) == 1


def test_availability_is_part_of_the_key():
    derive = PerRegistry(lambda r: tuple(r.available_names))
    registry = _registry(1)
    assert derive(registry) == ("tool_1_0", "tool_1_1")
    twin = registry.copy()
    twin.set_available("tool_1_0", False, "circuit open")
    assert derive(twin) == ("tool_1_1",)
    assert derive(registry) == ("tool_1_0", "tool_1_1")


def test_the_cache_is_bounded_by_tools_and_drops_the_least_recently_used():
    built: list[str] = []
    derive = PerRegistry(lambda r: built.append(r.fingerprint) or r.fingerprint, tools=10)
    a, b, c = _registry(1, 4), _registry(2, 4), _registry(3, 4)
    derive(a), derive(b)
    derive(a)  # a is now the most recently used
    derive(c)  # 12 tools > 10: b goes, not a
    assert built == [a.fingerprint, b.fingerprint, c.fingerprint]
    derive(a)
    assert len(built) == 3
    derive(b)
    assert len(built) == 4
    huge = _registry(4, 11)  # larger than the whole budget: derived, not kept
    derive(huge), derive(huge)
    assert built.count(huge.fingerprint) == 2


def test_normalised_short_texts_are_cached_and_the_same():
    for text in ("2pm", "Zürich", "50,000-100,000", "ＦＵＬＬ width", "x" * 128, "y" * 129, ""):
        assert normalise_text(text) == _normalise(text)
    assert normalise_text("New  York!") == "new york"


def test_the_catalog_pass_parses_a_repeated_tool_line_once(monkeypatch):
    from guard.replay import core

    parsed: list[str] = []
    real = core.catalog_entry
    monkeypatch.setattr(core, "catalog_entry", lambda line: parsed.append(line) or real(line))
    tool = '{"type":"tool","v":1,"digest":"aaaa","tool":{"name":"t","parameters":{"type":"object"}}}\n'
    toolset = '{"type":"toolset","v":1,"digest":"ssss","tools":["aaaa"]}\n'
    other = '{"type":"tool","v":1,"digest":"aaaa","tool":{"name":"changed","parameters":{"type":"object"}}}\n'
    catalog = Catalog()
    catalog.add_lines([tool, toolset, "not json\n", tool, toolset, other, "not json\n"])
    assert parsed == [tool, toolset, "not json\n", other, "not json\n"]  # a malformed line is not remembered
    assert catalog.tools == {"aaaa": {"name": "t", "parameters": {"type": "object"}}}  # the first description stays
    assert catalog.toolsets == {"ssss": ["aaaa"]}
