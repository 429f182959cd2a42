"""Hostile tool schemas and arguments: schemas never reach the network, regexes are time-bounded,
every keyword costs at most linear time, and a schema that cannot be validated safely is refused
at registration (``ToolSchemaError``; HTTP 422) instead of failing on a live call."""

from __future__ import annotations

import gc
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fastapi.testclient import TestClient

from guard import Guard, schema
from guard.budgets import GuardState
from guard.checks import CheckContext, arguments, provenance
from guard.conversation import Conversation
from guard.models import ToolCall
from guard.policy import Policy
from guard.registry import ToolRegistry, ToolSchemaError, ToolSpec
from guard.service import create_app
from guard.taxonomy import Category


class Listener:
    """A real TCP server on 127.0.0.1 that counts the connections it accepts. ``answer``: reply
    with a JSON schema (what a fetch would get); otherwise hold every connection open, silent."""

    def __init__(self, answer: bool = True) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.answer = answer
        self.connections = 0
        self.held: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/s.json"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            if self.answer:
                body = b'{"type": "string", "const": "LEAKED-FROM-THE-NETWORK"}'
                conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\n\r\n" + body)
                conn.close()
            else:
                self.held.append(conn)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for conn in self.held:
            conn.close()
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


@pytest.fixture
def silent_listener() -> Iterator[Listener]:
    server = Listener(answer=False)
    yield server
    server.close()


def tool(parameters: dict[str, Any], name: str = "lookup") -> dict[str, Any]:
    return {"name": name, "description": "Look a code up.", "parameters": parameters}


def remote(url: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"code": {"$ref": url}}, "required": ["code"]}


def unregistered_context(parameters: dict[str, Any], args: dict[str, Any], messages: list[Any] = ()) -> CheckContext:
    """A context whose spec never went through registration: what the validators themselves do."""
    spec = ToolSpec(name="lookup", parameters=parameters)
    return CheckContext(
        call=ToolCall(name="lookup", args=args, id="c1"), args=args, spec=spec, registry=ToolRegistry(),
        conversation=Conversation.from_messages(list(messages)), state=GuardState(), policy=Policy(),
    )


# -- 1. $ref never reaches the network ---------------------------------------------------------


def test_a_remote_ref_is_refused_at_registration_without_a_connection(listener: Listener) -> None:
    with pytest.raises(ToolSchemaError) as caught:
        ToolRegistry().add(tool(remote(listener.url)))
    assert caught.value.path == "$.properties.code.$ref" and "never fetched" in caught.value.problem
    with pytest.raises(ToolSchemaError):
        Guard([tool(remote(listener.url))])
    with pytest.raises(ToolSchemaError):  # a ToolSpec handed over as it is goes through the same check
        ToolRegistry([ToolSpec(name="lookup", parameters=remote(listener.url))])
    assert listener.connections == 0


@pytest.mark.parametrize("parameters", [
    # a relative reference under a remote $id resolves to the listener's URL
    lambda url: {"$id": url, "type": "object", "properties": {"code": {"$ref": "other.json"}}},
    # a nested $id moves the base that '#' resolves against
    lambda url: {"type": "object", "properties": {"code": {"$id": url, "$ref": "#/$defs/x"}}},
    lambda url: {"type": "object", "properties": {"code": {"$dynamicRef": url}}},
    lambda url: {"type": "object", "properties": {"code": {"items": {"allOf": [{"$ref": url}]}}}},
])
def test_id_tricks_and_nested_refs_are_refused_too(listener: Listener, parameters: Any) -> None:
    with pytest.raises(ToolSchemaError):
        ToolRegistry([tool(parameters(listener.url))])
    assert listener.connections == 0


def test_the_validators_themselves_never_fetch(listener: Listener) -> None:
    """Defence in depth: a schema that skipped registration still cannot make a check connect,
    through the argument check or through the provenance completion."""
    parameters = remote(listener.url)
    messages = [("user", "the code is ABC"),
                {"role": "assistant", "content": "", "tool_calls": [{"name": "codes", "args": {}, "id": "r1"}]},
                {"role": "tool", "content": '{"code": "XYZ"}', "tool_call_id": "r1", "name": "codes"}]
    ctx = unregistered_context(parameters, {"code": "<code>"}, messages)
    (finding,) = arguments.check(ctx)
    assert "cannot be resolved" in finding.message and "LEAKED" not in finding.message
    completed, added = provenance.complete(ctx, [])
    assert "LEAKED" not in repr((completed, added))
    assert listener.connections == 0


def test_the_service_answers_422_without_a_connection(listener: Listener) -> None:
    client = TestClient(create_app(token=""))
    body = {"tools": [{"type": "function", "function": tool(remote(listener.url))}],
            "messages": [{"role": "user", "content": "look up ABC"}],
            "call": {"name": "lookup", "args": {"code": "ABC"}, "id": "call_1"}}
    response = client.post("/v1/check", json=body)
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["type"] == "tool_schema" and error["ctx"]["path"] == "$.properties.code.$ref"
    assert "LEAKED" not in response.text
    assert listener.connections == 0


def test_a_listener_that_never_answers_cannot_hold_a_request(silent_listener: Listener) -> None:
    client = TestClient(create_app(token=""))
    body = {"tools": [{"type": "function", "function": tool(remote(silent_listener.url))}],
            "call": {"name": "lookup", "args": {"code": "ABC"}, "id": "call_1"}}
    start = time.perf_counter()
    assert client.post("/v1/check", json=body).status_code == 422
    ctx = unregistered_context(remote(silent_listener.url), {"code": "ABC"})
    assert arguments.check(ctx) and provenance.complete(ctx, []) is not None
    assert time.perf_counter() - start < 5.0  # wall clock: a hang would cost no CPU time
    assert silent_listener.connections == 0


# -- 3. references that loop or point nowhere --------------------------------------------------


@pytest.mark.parametrize(("parameters", "path", "words"), [
    ({"type": "object", "properties": {"x": {"$ref": "#/properties/nowhere"}}}, "$.properties.x.$ref", "points to nothing"),
    ({"type": "object", "properties": {"x": {"$ref": "#/$defs/nowhere"}}}, "$.properties.x.$ref", "points to nothing"),
    ({"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
      "properties": {"x": {"$ref": "#/$defs/a"}}}, None, "loop of references"),
    ({"type": "object", "allOf": [{"$ref": "#"}]}, "$", "loop of references"),
    ({"type": "object", "properties": {"x": {"not": {"$ref": "#/properties/x"}}}}, None, "loop of references"),
    ({"type": "object", "properties": {"x": {"const": {"pattern": "^(a+)+$"}}, "y": {"$ref": "#/properties/x/const"}}},
     "$.properties.y.$ref", "not a subschema"),
])
def test_loops_and_dangling_pointers_are_schema_errors(parameters: dict[str, Any], path: str | None, words: str) -> None:
    with pytest.raises(ToolSchemaError) as caught:
        ToolRegistry([tool(parameters)])
    assert words in caught.value.problem
    if path is not None:
        assert caught.value.path == path


def test_the_service_turns_a_loop_into_a_422() -> None:
    looped = {"type": "object", "$defs": {"a": {"$ref": "#/$defs/a"}}, "properties": {"x": {"$ref": "#/$defs/a"}}}
    body = {"tools": [tool(looped)], "call": {"name": "lookup", "args": {"x": 1}, "id": "call_1"}}
    response = TestClient(create_app(token="")).post("/v1/check", json=body)
    assert response.status_code == 422 and response.json()["detail"][0]["type"] == "tool_schema"


ADDRESSES = {
    "type": "object",
    "$defs": {
        "address": {"type": "object", "properties": {"city": {"type": "string", "pattern": "^[A-Z]"}}, "required": ["city"]},
        "node": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#/$defs/node"}}]},
    },
    "properties": {"home": {"$ref": "#/$defs/address"}, "work": {"$ref": "#/properties/home"}, "tree": {"$ref": "#/$defs/node"}},
    "required": ["home"],
}


def test_local_refs_and_recursion_that_consumes_input_still_validate() -> None:
    guard = Guard([tool(ADDRESSES)])
    good = {"home": {"city": "Oslo"}, "work": {"city": "Bergen"}, "tree": ["a", ["b", ["c"]]]}
    assert [f for f in guard.check({"name": "lookup", "args": good, "id": "c1"}).findings if f.check == "arguments"] == []
    bad = {"home": {"city": "oslo"}, "work": {}, "tree": ["a", [1]]}
    found = {(f.path, f.category) for f in guard.check({"name": "lookup", "args": bad, "id": "c1"}).findings
             if f.check == "arguments"}
    assert ("$.home.city", Category.PATTERN_VIOLATION) in found
    assert ("$.work.city", Category.MISSING_ARGUMENT) in found
    assert any(path.startswith("$.tree") for path, _ in found)


def test_provenance_resolves_a_parameters_local_ref_against_the_tool_schema() -> None:
    parameters = {"type": "object", "$defs": {"id": {"type": "integer"}}, "properties": {"user_id": {"$ref": "#/$defs/id"}},
                  "required": ["user_id"]}
    messages = [("user", "delete that user"),
                {"role": "assistant", "content": "", "tool_calls": [{"name": "find_user", "args": {}, "id": "r1"}]},
                {"role": "tool", "content": '{"user_id": 4711}', "tool_call_id": "r1", "name": "find_user"}]
    decision = Guard([tool(parameters, "delete_user")]).check({"name": "delete_user", "args": {}, "id": "c1"}, messages)
    assert decision.call_to_run is not None and decision.call_to_run.args == {"user_id": 4711}


# -- 2. patterns in bounded time ---------------------------------------------------------------

EVIL = "^(a+)+$"
CODE = {"type": "object", "properties": {"code": {"type": "string", "pattern": EVIL}}, "required": ["code"]}


def pattern_findings(parameters: dict[str, Any], args: dict[str, Any], policy: Policy | None = None) -> list[Any]:
    decision = Guard([tool(parameters)], policy).check({"name": "lookup", "args": args, "id": "c1"})
    return [f for f in decision.findings if f.check == "arguments"]


@pytest.mark.parametrize("length", [34, 10_000])
def test_a_catastrophic_pattern_runs_in_linear_time(length: int) -> None:
    start = time.thread_time()
    (finding,) = pattern_findings(CODE, {"code": "a" * length + "b"})
    assert time.thread_time() - start < 1.0
    assert finding.category is Category.PATTERN_VIOLATION and finding.rule == "pattern"
    assert pattern_findings(CODE, {"code": "a" * length}) == []


def test_a_pattern_only_backtracking_can_run_is_cut_off_with_a_finding_that_says_why() -> None:
    backref = {"type": "object", "properties": {"code": {"type": "string", "pattern": r"^(a|aa)+\1$"}}}
    policy = Policy.model_validate({"checks": {"limits": {"regex_timeout_ms": 30}}})
    start = time.thread_time()
    (finding,) = pattern_findings(backref, {"code": "a" * 40 + "b"}, policy)
    assert time.thread_time() - start < 1.0
    assert finding.category is Category.PATTERN_VIOLATION and finding.rule == "pattern_timeout"
    assert "could not be checked within 30 ms" in finding.message and finding.evidence["pattern"] == r"^(a|aa)+\1$"


def test_the_budget_is_shared_by_every_value_of_one_call() -> None:
    many = {"type": "object", "properties": {"codes": {"type": "array", "items": {"type": "string", "pattern": r"^(a|aa)+\1$"}}}}
    start = time.thread_time()
    found = pattern_findings(many, {"codes": ["a" * 40 + "b"] * 50})
    assert time.thread_time() - start < 1.0  # 50 values, one 50 ms budget
    assert len(found) == 50 and {f.rule for f in found} == {"pattern_timeout"}


def test_ordinary_and_backreference_patterns_still_decide() -> None:
    iata = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}}
    assert pattern_findings(iata, {"code": "OSL"}) == []
    (finding,) = pattern_findings(iata, {"code": "Oslo"})
    assert finding.rule == "pattern" and finding.path == "$.code"
    search = {"type": "object", "properties": {"code": {"type": "string", "pattern": "[0-9]"}}}  # search, not fullmatch
    assert pattern_findings(search, {"code": "gate 7 please"}) == []
    twice = {"type": "object", "properties": {"code": {"type": "string", "pattern": r"^(a)\1$"}}}  # RE2 cannot: regex runs it
    assert pattern_findings(twice, {"code": "aa"}) == []
    (finding,) = pattern_findings(twice, {"code": "ab"})
    assert finding.rule == "pattern"


def test_pattern_properties_and_additional_properties_are_bounded_on_keys() -> None:
    keyed = {"type": "object", "properties": {"tags": {"type": "object", "patternProperties": {EVIL: {"type": "integer"}},
                                                       "additionalProperties": False}}}
    start = time.thread_time()
    found = pattern_findings(keyed, {"tags": {"a" * 5000 + "b": 1, "aaa": "x"}})
    assert time.thread_time() - start < 1.0
    assert {(f.path, f.category) for f in found} == {
        (arguments.json_path(["tags", "a" * 5000 + "b"]), Category.UNEXPECTED_ARGUMENT),
        ("$.tags.aaa", Category.TYPE_VIOLATION),
    }


def test_the_preflight_reads_patterns_against_the_conversation_in_bounded_time() -> None:
    """The preflight matches a parameter's pattern against the user's words (is a code said?):
    with ``^(a+)+$`` and 'aaa…ab' Python's re took 4.9 s for 24 a's, doubling with each one."""
    guard = Guard([tool(CODE)])
    start = time.thread_time()
    decision = guard.preflight([("user", "look up the product code " + "a" * 40 + "b please")])
    assert time.thread_time() - start < 1.0
    assert [f.category for f in decision.findings] == [Category.MISSING_ARGUMENT]
    said = guard.preflight([("user", "look up the product code aaaa please")])
    assert said.call is not None and said.call.args == {"code": "aaaa"}


def test_a_pattern_too_costly_to_compile_is_refused_at_registration() -> None:
    nested = {"type": "object", "properties": {"code": {"type": "string", "pattern": r"((a{1000}){1000}){1000}\1"}}}
    start = time.thread_time()
    with pytest.raises(ToolSchemaError) as caught:
        ToolRegistry([tool(nested)])
    assert time.thread_time() - start < 1.0
    assert caught.value.path == "$.properties.code.pattern" and "bounded time" in caught.value.problem


def test_a_pattern_too_long_to_compile_cheaply_is_refused_before_it_is_compiled() -> None:
    long = "(?:ab|cd)" * 50_000
    for parameters, path in (
        ({"type": "object", "properties": {"code": {"type": "string", "pattern": long}}}, "$.code.pattern"),
        ({"type": "object", "properties": {"tags": {"type": "object", "patternProperties": {long: {}}}}},
         f"$.properties.tags.patternProperties.{long}"),
    ):
        start = time.thread_time()
        with pytest.raises(ToolSchemaError) as caught:
            ToolRegistry([tool(parameters)])
        assert time.thread_time() - start < 0.3  # compiling it would take about 1.5 s
        assert caught.value.path == path and "longer than the 10000 allowed" in caught.value.problem


def test_the_regex_format_is_bounded_too() -> None:
    formatted = {"type": "object", "properties": {"expr": {"type": "string", "format": "regex"}}}
    assert pattern_findings(formatted, {"expr": r"^(a)\1$"}) == []
    (bad,) = pattern_findings(formatted, {"expr": "(("})
    assert bad.category is Category.FORMAT_VIOLATION and bad.rule == "format"
    start = time.thread_time()
    (long,) = pattern_findings(formatted, {"expr": r"(a)\1" * 20_000})
    assert time.thread_time() - start < 1.0
    assert long.rule == "format_timeout" and "not checked" in long.message


# -- 4. uniqueItems and other keywords on large input ------------------------------------------

UNIQUE = {"type": "object", "properties": {"rows": {"type": "array", "uniqueItems": True}}}


def test_unique_items_on_thousands_of_objects_is_fast_and_right() -> None:
    rows = [{"id": i, "tags": ["x", i], "meta": {"a": i, "b": None}} for i in range(3000)]
    start = time.thread_time()
    assert pattern_findings(UNIQUE, {"rows": rows}) == []
    (dup,) = pattern_findings(UNIQUE, {"rows": [*rows, {"meta": {"b": None, "a": 7}, "tags": ["x", 7.0], "id": 7}]})
    assert time.thread_time() - start < 2.5
    assert dup.rule == "uniqueItems" and dup.category is Category.RANGE_VIOLATION


@pytest.mark.parametrize(("rows", "unique"), [
    ([1, 1.0], False),
    ([{"a": 1, "b": 2}, {"b": 2, "a": 1}], False),
    ([[1, 2], [1, 2.0]], False),
    ([True, 1], True),
    ([False, 0, None, "", [], {}], True),
    ([[1, 2], [2, 1]], True),
    ([{"a": True}, {"a": 1}], True),
])
def test_unique_items_follows_json_schema_equality(rows: list[Any], unique: bool) -> None:
    assert (pattern_findings(UNIQUE, {"rows": rows}) == []) is unique


def test_non_finite_and_huge_numbers_do_not_make_multiple_of_raise() -> None:
    half = {"type": "object", "properties": {"n": {"type": "number", "multipleOf": 0.5}}}
    for value in (float("nan"), float("inf"), -float("inf")):
        (finding,) = pattern_findings(half, {"n": value})
        assert finding.rule == "multipleOf"
    assert pattern_findings(half, {"n": 10**400}) == []
    fifths = {"type": "object", "properties": {"n": {"type": "number", "multipleOf": 2.5}}}  # 10**400 / 2.5 overflows a float
    assert pattern_findings(fifths, {"n": 10**400}) == []
    (finding,) = pattern_findings(fifths, {"n": 10**400 + 1})
    assert finding.rule == "multipleOf"


def seconds(run: Any) -> float:
    """The best of three CPU times, without the garbage collector (its passes depend on the heap
    the rest of the test session left, not on the keyword)."""
    best = float("inf")
    gc.disable()
    try:
        for _ in range(3):
            start = time.thread_time()
            run()
            best = min(best, time.thread_time() - start)
    finally:
        gc.enable()
    return best


@pytest.mark.parametrize(("subschema", "instance"), [
    ({"type": "array", "prefixItems": [{}], "items": {"type": "integer"}, "unevaluatedItems": False}, lambda n: list(range(n))),
    ({"type": "object", "patternProperties": {"^k": {}}, "unevaluatedProperties": False}, lambda n: {f"k{i}": i for i in range(n)}),
    ({"type": "array", "uniqueItems": True}, lambda n: [{"id": i, "tags": [i]} for i in range(n)]),
    ({"type": "object", "patternProperties": {EVIL: {}}, "additionalProperties": {}}, lambda n: {f"{'a' * 20}{i}": i for i in range(n)}),
    ({"type": "array", "items": {"enum": [f"m{i}" for i in range(8_000)]}}, lambda n: [f"m{i}" for i in range(n)]),
])
def test_keywords_cost_linear_time(subschema: dict[str, Any], instance: Any) -> None:
    """Four times the input costs about four times the time (quadratic would be sixteen)."""
    validator = schema.validator(subschema)
    small, large = instance(1_000), instance(4_000)
    assert validator.is_valid(small) and validator.is_valid(large)
    assert seconds(lambda: validator.is_valid(large)) < 10 * seconds(lambda: validator.is_valid(small)) + 0.02


def test_many_values_against_a_long_enum_cost_values_plus_members() -> None:
    """The validator, the enum_case repair, the placeholder check and the feedback each compared
    every value with every member: 1,000 bad values against 10,000 members took 5.9 s."""
    long_enum = {"type": "object", "properties": {"xs": {"type": "array", "items": {"enum": [f"m{i}" for i in range(10_000)] + ["New York"]}}}}
    guard = Guard([tool(long_enum)])
    start = schema.check_clock()
    assert [f for f in guard.check({"name": "lookup", "args": {"xs": ["m9999"] * 5_000}, "id": "c1"}).findings if f.check == "arguments"] == []
    bad = guard.check({"name": "lookup", "args": {"xs": ["zz"] * 500}, "id": "c1"})
    assert schema.check_clock() - start < 2.0
    assert len(bad.findings) == 500 and {f.category for f in bad.findings} == {Category.ENUM_VIOLATION}
    assert bad.findings[0].evidence["allowed"][:2] == ["m0", "m1"]
    repaired = guard.check({"name": "lookup", "args": {"xs": ["new_york", "M7"]}, "id": "c1"})
    assert repaired.call_to_run is not None and repaired.call_to_run.args == {"xs": ["New York", "m7"]}


def slow_collection(seconds: float) -> Iterator[None]:
    """Within the block, the next garbage collection spins ``seconds`` of CPU as it starts (a
    full collection of a large heap: half a second for a few million objects)."""
    pending = [True]

    def spin(phase: str, info: dict[str, Any]) -> None:  # runs inside the collection
        if phase == "start" and pending:
            pending.clear()
            until = time.thread_time() + seconds
            while time.thread_time() < until:
                pass

    gc.callbacks.append(spin)
    try:
        yield
    finally:
        gc.callbacks.remove(spin)
    assert not pending, "no collection happened"


def test_a_slow_garbage_collection_inside_a_check_is_not_the_schemas_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    """A full collection of a large heap fell inside the check above once, in CI, and its 500 enum
    findings became one ``too_costly`` retry. Here a 300 ms collection is set off in the middle of
    the validation (when the enum keyword reads its first value); the budget (100 ms) does not
    count it, and the call gets its 500 findings."""
    long_enum = {"type": "object", "properties": {"xs": {"type": "array", "items": {"enum": [f"m{i}" for i in range(1_000)]}}}}
    guard = Guard([tool(long_enum)])
    canonical, collected = schema.canonical, []

    def collecting(value: Any) -> Any:
        budget = schema._validation.get()
        if budget is not None and id(budget) not in collected:  # once in each check's budget
            collected.append(id(budget))
            with contextmanager(slow_collection)(0.3):
                gc.collect()
        return canonical(value)

    monkeypatch.setattr(schema, "canonical", collecting)
    checked = guard.check({"name": "lookup", "args": {"xs": ["zz"] * 500}, "id": "c1"})
    assert collected, "no collection was set off inside a validation"
    assert len(checked.findings) == 500 and {f.rule for f in checked.findings} == {"enum"}


def test_the_budget_still_counts_the_checks_own_work() -> None:
    """Leaving collections out does not stop the clock: a 300 ms collection moves it by nothing,
    150 ms of the check's own CPU inside a 100 ms budget is past it."""
    with schema.budget(Policy().checks.limits):
        state = schema._validation.get()
        assert state is not None
        before = schema.check_clock()
        with contextmanager(slow_collection)(0.3):
            gc.collect()
        assert schema.check_clock() - before < 0.1 < 0.3
        until = time.thread_time() + 0.15
        while time.thread_time() < until:
            pass
        assert schema.check_clock() > state[1]


def test_unevaluated_keywords_still_find_what_is_unevaluated() -> None:
    props = {"type": "object", "properties": {"m": {"type": "object", "patternProperties": {"^k": {"type": "integer"}},
                                                    "unevaluatedProperties": False}}}
    (extra,) = pattern_findings(props, {"m": {"k1": 1, "other": 2}})
    assert extra.category is Category.UNEXPECTED_ARGUMENT and extra.path == "$.m.other"
    items = {"type": "object", "properties": {"xs": {"type": "array", "prefixItems": [{"type": "integer"}], "unevaluatedItems": False}}}
    assert pattern_findings(items, {"xs": [1]}) == []
    (extra,) = pattern_findings(items, {"xs": [1, 2]})
    assert extra.path == "$.xs"


def fanned(levels: int) -> dict[str, Any]:
    defs = {f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]} for i in range(levels)}
    return {"type": "object", "$defs": {**defs, f"d{levels}": {"type": "integer"}}, "properties": {"x": {"$ref": "#/$defs/d0"}}}


def test_branches_that_multiply_through_shared_references_are_refused_at_registration() -> None:
    """Eighteen such levels took 27 s to check one string; six (63 checks, about 10 ms) are fine.
    (Eight, 255 checks with every branch failing, took 32 ms and now and then over 100 ms of thread
    CPU: within reach of the validation budget, whose finding then replaces the anyOf one.)"""
    assert pattern_findings(fanned(6), {"x": 3}) == []
    (finding,) = pattern_findings(fanned(6), {"x": "s"})
    assert finding.path == "$.x"
    start = time.thread_time()
    with pytest.raises(ToolSchemaError) as caught:
        ToolRegistry([tool(fanned(40))])
    assert time.thread_time() - start < 1.0 and "more than 10000 subschemas" in caught.value.problem


def test_branches_that_multiply_with_the_inputs_depth_stop_at_the_validation_budget() -> None:
    """``items`` and ``contains`` check each level's item twice: 2**depth checks (depth 18: 14 s)."""
    node = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#/$defs/n"}, "contains": {"$ref": "#/$defs/n"}}]}
    doubled = {"type": "object", "$defs": {"n": node}, "properties": {"v": {"$ref": "#/$defs/n"}}}
    value: Any = "x"
    for _ in range(30):
        value = [value]
    policy = Policy.model_validate({"checks": {"limits": {"validation_timeout_ms": 40}}})
    start = time.thread_time()
    (finding,) = pattern_findings(doubled, {"v": value}, policy)
    assert time.thread_time() - start < 1.0
    assert finding.category is Category.MALFORMED_ARGUMENTS and finding.rule == "too_costly"
    assert "could not be validated within 40 ms" in finding.message
    shallow: Any = ["x"]
    assert pattern_findings(doubled, {"v": [shallow, "y"]}, policy) == []


def test_a_nested_draft_07_dialect_cannot_switch_the_validator_back_to_plain_re() -> None:
    dialect = {"type": "object", "$schema": "http://json-schema.org/draft-07/schema#",
               "properties": {"code": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string", "pattern": EVIL}}}
    start = time.thread_time()
    (finding,) = pattern_findings(dialect, {"code": "a" * 40 + "b"})
    assert time.thread_time() - start < 1.0 and finding.rule == "pattern"
