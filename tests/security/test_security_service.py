"""Hostile text at the HTTP edge (issue 11 item 5), the byte-bounded tool-registry cache (item 9) and
the token's whitespace (item 12, service side).

Lone surrogates, NUL and non-finite numbers are sent as raw JSON bytes (the escapes ``\\ud800`` and
``\\u0000``, raw CESU-8 surrogate bytes, ``NaN``, ``1e400``) over real HTTP to a uvicorn server; each is a
422 that names where, nothing is stored, and ``GET /v1/escalations`` keeps answering 200.
"""

from __future__ import annotations

import json
import threading
import time
import tracemalloc
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import HTTPException
from fastapi.exceptions import RequestValidationError
from fastapi.testclient import TestClient

from guard.registry import ToolRegistry
from guard.service import (
    DEFAULT_REGISTRY_CACHE_BYTES,
    REGISTRY_CACHE_ENV,
    TOKEN_ENV,
    _registry_bytes,
    configured_token,
    create_app,
)
from guard.state import MemoryStore
from tests.service.conftest import TOOLS, function
from tests.state.helpers import free_port

SURROGATE = "\\ud800"  # the six characters of the JSON escape, as a client writes them
NUL = "\\u0000"

#: Asks the human when clean ('XX' appears nowhere in the conversation): the original 500 needed an
#: escalation stored with the bad text in it.
ASKING = {
    "tools": TOOLS,
    "messages": [{"role": "user", "content": "What is the weather like?"}],
    "call": {"name": "get_weather", "args": {"city": "XX"}, "id": "call_1"},
    "thread_id": "thread-1",
}


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """``create_app`` (memory store, no token) under a real uvicorn server in a thread."""
    app = create_app(store=MemoryStore(), token="")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _post(url: str, body: str | bytes) -> httpx.Response:
    content = body.encode() if isinstance(body, str) else body
    return httpx.post(url, content=content, headers={"Content-Type": "application/json"}, timeout=30)


def _pending(url: str) -> list[dict[str, Any]]:
    answer = httpx.get(f"{url}/v1/escalations", timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()["escalations"]


def _with(marker: str, where: str) -> tuple[str, list[str | int]]:
    """The asking request with ``marker`` (a JSON escape) spliced into one place; the place's loc."""
    body = json.loads(json.dumps(ASKING))
    placeholder = "@@BAD@@"
    loc: list[str | int]
    if where == "call id":
        body["call"]["id"], loc = "call" + placeholder, ["body", "call", "id"]
    elif where == "argument value":
        body["call"]["args"]["city"], loc = "X" + placeholder, ["body", "call", "args", "city"]
    elif where == "argument key":  # a key is named by its parent and position, never echoed
        body["call"]["args"] = {"city": "XX", "c" + placeholder: 1}
        loc = ["body", "call", "args"]
    elif where == "thread_id":
        body["thread_id"], loc = "t" + placeholder, ["body", "thread_id"]
    elif where == "message content":
        body["messages"][0]["content"], loc = "weather" + placeholder, ["body", "messages", 0, "content"]
    elif where == "content block":
        body["messages"][0]["content"] = [{"type": "text", "text": placeholder}]
        loc = ["body", "messages", 0, "content", 0, "text"]
    elif where == "tool description":
        body["tools"] = json.loads(json.dumps(TOOLS))
        body["tools"][1]["function"]["description"] = "Weather" + placeholder
        loc = ["body", "tools", 1, "function", "description"]
    else:  # pragma: no cover - a typo in the parameters
        raise AssertionError(where)
    return json.dumps(body).replace(placeholder, marker), loc


PLACES = ["call id", "argument value", "argument key", "thread_id", "message content", "content block", "tool description"]


def test_the_clean_request_asks_the_human(served: str) -> None:
    """The control: without the bad text the same request registers an escalation."""
    before = len(_pending(served))
    answer = _post(f"{served}/v1/check", json.dumps(ASKING))
    assert answer.status_code == 200 and answer.json()["action"] == "ask_human", answer.text
    assert len(_pending(served)) == before + 1


@pytest.mark.parametrize("where", PLACES)
@pytest.mark.parametrize(("marker", "kind"), [(SURROGATE, "string_surrogate"), ("\\udfff", "string_surrogate"), (NUL, "string_nul")])
def test_bad_text_anywhere_in_a_check_is_a_422_naming_where(served: str, where: str, marker: str, kind: str) -> None:
    before = _pending(served)
    body, loc = _with(marker, where)
    answer = _post(f"{served}/v1/check", body)
    assert answer.status_code == 422, answer.text
    (error,) = answer.json()["detail"]
    assert (error["type"], error["loc"], error["input"]) == (kind, loc, None)
    assert _pending(served) == before  # nothing stored, and the listing still answers


def test_raw_surrogate_bytes_are_refused_too(served: str) -> None:
    """Python's JSON decoder lets the CESU-8 bytes of a surrogate through (``surrogatepass``)."""
    body = json.dumps(ASKING).replace("call_1", "call_\x00").encode().replace(b"\x00", b"\xed\xa0\x80")
    answer = _post(f"{served}/v1/check", body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"][0]["loc"] == ["body", "call", "id"]


def test_a_body_in_utf16_is_checked_as_well(served: str) -> None:
    body, loc = _with(SURROGATE, "call id")
    answer = _post(f"{served}/v1/check", body.encode("utf-16"))
    assert answer.status_code == 422 and answer.json()["detail"][0]["loc"] == loc, answer.text


def test_surrogate_pairs_are_text(served: str) -> None:
    """An astral character escaped as a pair (what ``json.dumps`` writes for an emoji) is accepted."""
    body = json.loads(json.dumps(ASKING))
    body["messages"][0]["content"] = "weather in Paris \U0001f600"
    body["call"]["args"]["city"] = "Paris"
    answer = _post(f"{served}/v1/check", json.dumps(body))  # ensure_ascii: \ud83d\ude00
    assert answer.status_code == 200, answer.text
    assert answer.json()["action"] == "allow"


@pytest.mark.parametrize(
    ("literal", "loc"),
    [("NaN", ["body", "call", "args", "city"]), ("-Infinity", ["body", "call", "args", "city"]), ("1e400", ["body", "call", "args", "city"])],
)
def test_non_finite_numbers_are_a_422(served: str, literal: str, loc: list[str]) -> None:
    """Python reads them as floats that no JSON answer can carry (the echo of one was a 500)."""
    body = json.dumps(ASKING).replace('"XX"', literal)
    answer = _post(f"{served}/v1/check", body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"][0]["loc"] == loc
    outcome = _post(f"{served}/v1/outcome", '{"tool": "get_weather", "ok": NaN}')
    assert outcome.status_code == 422 and outcome.json()["detail"][0]["loc"] == ["body", "ok"], outcome.text


@pytest.mark.parametrize("marker", [SURROGATE, NUL])
def test_outcome_and_resolve_bodies_are_checked(served: str, marker: str) -> None:
    outcome = _post(f"{served}/v1/outcome", '{"tool": "get_weather%s", "ok": true}' % marker)
    assert outcome.status_code == 422 and outcome.json()["detail"][0]["loc"] == ["body", "tool"], outcome.text

    asked = _post(f"{served}/v1/check", json.dumps({**ASKING, "thread_id": f"resolve-{len(marker)}"})).json()
    escalation_id = asked["escalation"]["id"]
    url = f"{served}/v1/escalations/{escalation_id}/resolve"
    for body, loc in [
        ('{"action": "answer", "text": "Paris%s"}' % marker, ["body", "text"]),
        ('{"action": "answer", "values": {"city": "Paris%s"}}' % marker, ["body", "values", "city"]),
        ('{"action": "reject%s"}' % marker, ["body", "action"]),
    ]:
        answer = _post(url, body)
        assert answer.status_code == 422, answer.text
        assert answer.json()["detail"][0]["loc"] == loc
    assert escalation_id in [e["id"] for e in _pending(served)], "a refused answer must leave it pending"
    assert _post(url, '{"action": "reject", "reason": "test"}').status_code == 200


def test_nul_in_path_and_query_parameters(served: str) -> None:
    """A percent-encoded NUL decodes to U+0000 (a percent-encoded surrogate decodes to U+FFFD)."""
    answer = httpx.get(f"{served}/v1/escalations?thread_id=a%00b", timeout=30)
    assert answer.status_code == 422 and answer.json()["detail"][0]["loc"] == ["query", "thread_id"], answer.text
    answer = httpx.post(f"{served}/v1/escalations/a%00b/resolve", json={"action": "approve"}, timeout=30)
    assert answer.status_code == 422 and answer.json()["detail"][0]["loc"] == ["path", "escalation_id"], answer.text
    answer = httpx.post(f"{served}/v1/escalations/%ED%A0%80/resolve", json={"action": "approve"}, timeout=30)
    assert answer.status_code == 404, answer.text  # U+FFFD: a text, just not an escalation


def test_a_path_parameter_with_a_surrogate_is_refused_in_process() -> None:
    """No HTTP client can put a lone surrogate in a path (percent-decoding gives U+FFFD), but an ASGI
    server may hand one over: the route checks what it is given."""
    app = create_app(store=MemoryStore(), token="")
    status, body = _asgi(app, "POST", "/v1/escalations/\ud800/resolve", b"")
    assert status == 422 and json.loads(body)["detail"][0]["loc"] == ["path", "escalation_id"], body


def _asgi(
    app: Any, method: str, path: str, query: bytes, body: bytes = b'{"action": "approve"}', auth: bytes | None = None
) -> tuple[int, bytes]:
    """One request straight through the ASGI interface, path as given (no percent-encoding)."""
    import asyncio

    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
        "path": path, "raw_path": path.encode("utf-8", "surrogatepass"), "root_path": "", "query_string": query,
        "headers": [(b"content-type", b"application/json"), (b"host", b"test")], "client": ("127.0.0.1", 1),
        "server": ("test", 80),
    }  # fmt: skip
    if auth is not None:
        scope["headers"].append((b"authorization", auth))
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


# -- the exception handlers never raise -----------------------------------------------------------


@pytest.fixture
def hostile_app() -> TestClient:
    """The app with routes that raise what an endpoint might: errors whose content JSON cannot carry."""
    app = create_app(store=MemoryStore(), token="")

    def bad_validation() -> None:
        deep: Any = "bottom"
        for _ in range(200):
            deep = [deep]
        raise RequestValidationError(
            [
                {"type": "x", "loc": ("body", "c\ud800"), "msg": "m\udfff", "input": {"k\ud800": ["v\ud800", float("nan")]}},
                {"type": "deep", "loc": ("body",), "msg": "deep", "input": deep, "ctx": {"error": ValueError("e\ud800")}},
                {"type": "bytes", "loc": ("body",), "msg": "bytes", "input": b"\xff\xfe", "ctx": {"inf": float("inf")}},
            ]
        )

    def bad_detail() -> None:
        raise HTTPException(409, detail={"why": "x\ud800", "n": float("nan")})

    app.add_api_route("/hostile/validation", bad_validation)
    app.add_api_route("/hostile/detail", bad_detail)
    return TestClient(app, raise_server_exceptions=True)  # a handler that raised would raise here


def test_the_validation_handler_renders_any_error(hostile_app: TestClient) -> None:
    answer = hostile_app.get("/hostile/validation")
    assert answer.status_code == 422
    first, deep, raw = answer.json()["detail"]
    assert first["loc"] == ["body", "c\ufffd"] and first["msg"] == "m\ufffd"
    assert first["input"] == {"k\ufffd": ["v\ufffd", None]}
    assert deep["ctx"] == {"error": "e\ufffd"}
    depth, item = 0, deep["input"]
    while isinstance(item, list):
        depth, item = depth + 1, item[0]
    assert item == "…" and depth < 200  # cut, not a RecursionError
    assert raw["input"] == "\ufffd\ufffd" and raw["ctx"] == {"inf": None}


def test_an_http_error_with_unwritable_detail_keeps_its_status(hostile_app: TestClient) -> None:
    answer = hostile_app.get("/hostile/detail")
    assert answer.status_code == 409
    assert answer.json() == {"detail": {"why": "x\ufffd", "n": None}}


# -- the tool-registry cache is bounded in bytes ----------------------------------------------------


def _tools(variant: int, n_tools: int = 20, pad: int = 400) -> list[dict[str, Any]]:
    props = {f"p{k}": {"type": "string", "description": f"parameter {k} " + "x" * pad} for k in range(8)}
    return [function(f"tool_{variant}_{t}", f"tool {t} of list {variant}", props, ["p0"]) for t in range(n_tools)]


def _check(client: TestClient, tools: list[dict[str, Any]]) -> None:
    call = {"name": tools[0]["function"]["name"], "args": {"p0": "a"}, "id": "c"}
    answer = client.post("/v1/check", json={"tools": tools, "messages": [{"role": "user", "content": "a"}], "call": call})
    assert answer.status_code == 200, answer.text


def test_the_cache_stays_within_its_byte_budget() -> None:
    budget = 3_000_000
    app = create_app(store=MemoryStore(), token="", registry_cache_bytes=budget)
    cache = app.state.registries.cache
    client = TestClient(app)
    one = json.dumps(_tools(0), sort_keys=True, separators=(",", ":"))  # ~70 KB of JSON, ~300 KB estimated
    sizes = []
    for variant in range(40):
        _check(client, _tools(variant))
        assert cache.currsize <= budget
        sizes.append(len(cache))
    assert cache.maxsize == budget
    assert 40 * _registry_bytes(one, _tools(0)) > budget, "the lists must overflow the budget for the test to mean anything"
    assert max(sizes) == sizes[-1] < 40, "entries are evicted once the budget is full"
    assert cache.currsize > budget / 2, "the cache is used, not emptied"


def test_the_same_list_is_one_entry_and_a_list_over_budget_is_used_not_kept() -> None:
    app = create_app(store=MemoryStore(), token="", registry_cache_bytes=600_000)
    cache, client = app.state.registries.cache, TestClient(app)
    for _ in range(3):
        _check(client, _tools(1))
    assert len(cache) == 1
    key = next(iter(cache))
    assert len(key) == 64, "keyed by a digest, not by the tools' JSON"
    _check(client, _tools(2, n_tools=60))  # estimated far over 600 KB: answered, not cached
    assert len(cache) == 1 and next(iter(cache)) == key


def test_concurrent_requests_keep_the_budget() -> None:
    """Handlers run in a threadpool; the lock keeps the accounting straight."""
    budget = 2_000_000
    app = create_app(store=MemoryStore(), token="", registry_cache_bytes=budget)
    cache, client = app.state.registries.cache, TestClient(app)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda v: _check(client, _tools(v % 24)), range(72)))
    assert 0 < cache.currsize <= budget
    assert cache.currsize == sum(cache.getsizeof(v) for v in cache.values())


def test_the_budget_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REGISTRY_CACHE_ENV, "12345678")
    assert create_app(store=MemoryStore(), token="").state.registries.cache.maxsize == 12345678
    monkeypatch.delenv(REGISTRY_CACHE_ENV)
    assert create_app(store=MemoryStore(), token="").state.registries.cache.maxsize == DEFAULT_REGISTRY_CACHE_BYTES
    for bad in ("64MB", "0", "-1"):
        monkeypatch.setenv(REGISTRY_CACHE_ENV, bad)
        with pytest.raises(ValueError, match=REGISTRY_CACHE_ENV):
            create_app(store=MemoryStore(), token="")


@pytest.mark.parametrize(
    "tools",
    [_tools(0, n_tools=1, pad=60_000), _tools(1, n_tools=40, pad=50), TOOLS,
     [function(f"t{i}", "", {"a": {"type": "integer"}}, []) for i in range(300)],
     [function(f"t{i}", "", {f"a{k}": {"type": "integer"} for k in range(50)}, []) for i in range(40)],
     [{"name": f"t{i}"} for i in range(500)]],
    ids=["one long tool", "40 tools", "two small tools", "300 tiny tools", "50 parameters each", "500 bare names"],
)  # fmt: skip
def test_the_size_estimate_is_above_what_a_registry_holds(tools: list[dict[str, Any]]) -> None:
    """The budget only bounds memory if each entry's estimate is at least what it really holds."""
    text = json.dumps(tools, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    tracemalloc.start()
    try:
        registry = ToolRegistry()
        for tool in json.loads(text):
            registry.add(tool)
        assert registry.fingerprint
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    estimate = _registry_bytes(text, json.loads(text))
    assert held <= estimate, f"{held} bytes held, {estimate} estimated"


# -- the token's whitespace --------------------------------------------------------------------------


@pytest.mark.parametrize("configured", ["s3cret\n", "  s3cret\r\n", "s3cret"])
def test_a_token_with_surrounding_whitespace_works(monkeypatch: pytest.MonkeyPatch, configured: str) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    for app in (create_app(store=MemoryStore(), token=configured), _env_app(monkeypatch, configured)):
        client = TestClient(app)
        assert client.get("/v1/escalations", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert client.get("/v1/escalations", headers={"Authorization": f"Bearer {configured.strip()}x"}).status_code == 401
        assert client.get("/v1/escalations").status_code == 401


def _env_app(monkeypatch: pytest.MonkeyPatch, token: str) -> Any:
    monkeypatch.setenv(TOKEN_ENV, token)
    try:
        return create_app(store=MemoryStore())
    finally:
        monkeypatch.delenv(TOKEN_ENV)


def test_a_token_of_only_whitespace_is_no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, " \n")
    assert configured_token() is None and configured_token("\t") is None
    assert TestClient(create_app(store=MemoryStore())).get("/v1/escalations").status_code == 200


def test_a_non_ascii_token_matches_its_utf8_bytes() -> None:
    """Straight through ASGI: the test client re-encodes header bytes."""
    app = create_app(store=MemoryStore(), token="clé-secrète")
    assert _asgi(app, "GET", "/v1/escalations", b"", auth="Bearer clé-secrète".encode())[0] == 200
    assert _asgi(app, "GET", "/v1/escalations", b"", auth=b"Bearer cl\xe9-secr\xe8te")[0] == 401
