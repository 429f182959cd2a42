"""Issue 11 item 9, the rest of it: caches in the checks are bounded in bytes or hold no schema, so
many distinct large tool schemas cannot grow a worker without bound."""

from __future__ import annotations

from cachetools import LRUCache

from guard import Guard, registry
from guard.checks import arguments


def big_tool(i: int, fields: int = 200) -> dict:
    props = {f"field_{i}_{k}": {"type": "string", "description": "x" * 200} for k in range(fields)}
    return {"name": f"tool_{i}", "description": "A tool.", "parameters": {"type": "object", "properties": props}}


def test_the_registration_cache_keeps_digests_and_answers_not_schemas():
    for i in range(5):
        Guard([big_tool(i)])
    keys = list(registry._PROBLEMS.keys())
    assert keys and all(isinstance(k, str) and len(k) == 64 for k in keys)
    assert all(v is None or isinstance(v, tuple) for v in registry._PROBLEMS.values())


def test_compiled_validators_stay_within_their_byte_budget(monkeypatch):
    small = LRUCache(maxsize=2_000_000, getsizeof=arguments._entry_size)
    monkeypatch.setattr(arguments, "_cache", small)
    for i in range(40):  # each schema is ~50 KB of JSON: 40 of them would not fit
        guard = Guard([big_tool(i)])
        decision = guard.check({"name": f"tool_{i}", "args": {f"field_{i}_0": "a"}, "id": "c"})
        assert not [f for f in decision.findings if f.check == "arguments"]
        assert small.currsize <= small.maxsize
    assert 0 < len(small) < 40
