"""Lone surrogates and NUL anywhere in otherwise valid /v1 bodies (issue 11 item 5): Hypothesis with
an alphabet schemathesis cannot send, each body sent as raw JSON bytes. Never a 5xx; a bad text is
a 422 naming it and leaves ``GET /v1/escalations`` answering."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard.service import create_app
from guard.state import MemoryStore
from guard.text_hygiene import text_problem
from tests.service.conftest import TOOLS

HOSTILE = st.text(
    alphabet=st.one_of(st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff", "\x00"]), st.characters(codec="utf-8")),
    max_size=6,
)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | HOSTILE,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(HOSTILE, inner, max_size=3),
    max_leaves=8,
)

CLIENT = TestClient(create_app(store=MemoryStore(), token=""), raise_server_exceptions=False)
BASE: dict[str, Any] = {
    "tools": TOOLS,
    "messages": [{"role": "user", "content": "What is the weather like?"}],
    "call": {"name": "get_weather", "args": {"city": "XX"}, "id": "call_1"},  # asks the human when clean
    "thread_id": "fuzz",
}


def _has_bad_text(value: Any) -> bool:
    if isinstance(value, str):
        return text_problem(value) is not None
    if isinstance(value, dict):
        return any(_has_bad_text(k) or _has_bad_text(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_bad_text(v) for v in value)
    return False


def _splice(body: Any, path: list[int], value: Any) -> Any:
    """``body`` with ``value`` put at the container reached by following ``path`` (indices modulo
    the number of children), under a new key or at the end."""
    node = body
    for step in path:
        children = list(node.values()) if isinstance(node, dict) else node if isinstance(node, list) else []
        containers = [c for c in children if isinstance(c, (dict, list))]
        if not containers:
            break
        node = containers[step % len(containers)]
    if isinstance(node, dict):
        node["k\ud800" if not node else f"x{len(node)}"] = value  # a hostile key when the object is empty
    else:
        node.append(value)
    return body


@given(path=st.lists(st.integers(0, 20), max_size=6), value=JSONISH, key=HOSTILE, where=st.sampled_from(["check", "outcome", "resolve"]))
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_lone_surrogates_and_nul_anywhere_are_a_422_never_a_500(path: list[int], value: Any, key: str, where: str) -> None:
    if where == "check":
        body, url = _splice(json.loads(json.dumps(BASE)), path, {key: value}), "/v1/check"
    elif where == "outcome":
        body, url = {"tool": key or "t", "ok": False, "error_kind": "tool_timeout", "reason": value}, "/v1/outcome"
    else:
        body, url = {"action": "answer", "text": key, "values": {key: value}}, "/v1/escalations/e-1/resolve"
    raw = json.dumps(body).encode()  # ensure_ascii: a lone surrogate becomes the escape \udXXX
    answer = CLIENT.post(url, content=raw, headers={"Content-Type": "application/json"})
    assert answer.status_code < 500, answer.text
    answer.json()  # the answer itself is JSON
    # judged as the wire carries it: two lone surrogates side by side ("\ud800\udc00") are a
    # valid pair in JSON text, which any decoder joins into one character
    if _has_bad_text(json.loads(raw)):
        assert answer.status_code == 422, answer.text
        assert answer.json()["detail"][0]["type"] in ("string_surrogate", "string_nul")
    listing = CLIENT.get("/v1/escalations")
    assert listing.status_code == 200, listing.text
