"""Issue 11, items 8, 10 and 11, over HTTP: the escalation API pages and caps, answers one
escalation by id, refuses an edit that breaks the tool's schema, lets an approved call run exactly
once (bound to thread, arguments and policy, across replicas), never lists every escalation to
keep its gauge, and stays within its deadline when Redis hangs (SIGSTOP).

Real parts: the FastAPI app (through Starlette's TestClient, and under uvicorn on a loopback port
where time matters), real redis-servers for the replicas.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from guard.policy import Policy
from guard.service import create_app
from guard.state import MemoryStore, StateConfig, make_store
from guard.telemetry import Telemetry
from tests.service.conftest import TOOLS
from tests.state.helpers import FakeClock, RedisServer, free_port

USER = "Find flights from Berlin to Paris, and what is the weather in Paris?"
CLEAN = {"from_city": "Berlin", "to_city": "Paris"}
SWAPPED = {"from_city": "Paris", "to_city": "Berlin"}  # as grounded as CLEAN, different arguments
INVENTED_FROM = {"from_city": "Rome", "to_city": "Paris"}  # ask_human: the user never said Rome
APPROVAL = {"tools": {"search_flights": {"requires_approval": True}}}


def body(args: dict[str, Any], thread_id: str | None = "t1", name: str = "search_flights") -> dict[str, Any]:
    request: dict[str, Any] = {
        "tools": TOOLS,
        "messages": [{"role": "user", "content": USER}],
        "call": {"name": name, "args": args, "id": "call_1"},
    }
    if thread_id is not None:
        request["thread_id"] = thread_id
    return request


def app(policy: dict[str, Any] | None = None, clock: FakeClock | None = None, **kwargs: Any) -> TestClient:
    kwargs.setdefault("store", MemoryStore(clock=clock) if clock else MemoryStore())
    kwargs.setdefault("telemetry", Telemetry(known_tools=["search_flights"]))
    extra = {"clock": clock} if clock else {}
    return TestClient(create_app(Policy.model_validate(policy or {}), token="", **kwargs, **extra))


def replica(url: str, key_prefix: str, policy: dict[str, Any] | None = None, **state: Any) -> TestClient:
    """One guard replica over a shared Redis, its store built as a deployment builds it."""
    config = StateConfig(backend="redis", redis_url=url, key_prefix=key_prefix, **state)
    return app(policy, store=make_store(config))


def ask(client: TestClient, args: dict[str, Any] = INVENTED_FROM, thread_id: str | None = "t1") -> dict[str, Any]:
    decision = client.post("/v1/check", json=body(args, thread_id)).json()
    assert decision["action"] == "ask_human", decision
    return decision["escalation"]


# -- one escalation by id, and pages ------------------------------------------------------------------


def test_an_escalation_is_read_by_id_pending_then_with_its_answer() -> None:
    client = app()
    escalation = ask(client)
    assert client.get(f"/v1/escalations/{escalation['id']}").json() == escalation
    answer = {"action": "answer", "values": {"from_city": "Berlin"}}
    client.post(f"/v1/escalations/{escalation['id']}/resolve", json=answer)
    read = client.get(f"/v1/escalations/{escalation['id']}").json()
    assert read["status"] == "resolved" and read["resolution"] == answer
    missing = client.get("/v1/escalations/nope")
    assert missing.status_code == 404 and "nope" in missing.json()["detail"]


def test_walking_next_cursor_lists_every_pending_escalation_once(clock: FakeClock) -> None:
    client = app({"escalation": {"max_pending_per_thread": 50}}, clock)
    opened = []
    for i in range(23):
        opened.append(ask(client, thread_id=f"t{i % 2}")["id"])
        clock.advance(i % 3)  # some share an expiry, some do not
    seen: list[str] = []
    order: list[tuple[float, str]] = []
    params: dict[str, Any] = {"limit": 5}
    pages = 0
    while True:
        page = client.get("/v1/escalations", params=params).json()
        seen += [e["id"] for e in page["escalations"]]
        order += [(e["expires_at"], e["id"]) for e in page["escalations"]]
        pages += 1
        if page["next_cursor"] is None:
            break
        params["cursor"] = page["next_cursor"]
    assert sorted(seen) == sorted(opened) and len(seen) == 23 and pages == 5
    assert order == sorted(order)  # soonest to expire first, ties by id
    t1 = client.get("/v1/escalations", params={"thread_id": "t1", "limit": 100}).json()
    assert sorted(e["id"] for e in t1["escalations"]) == sorted(opened[1::2]) and t1["next_cursor"] is None


def test_a_cursor_the_service_did_not_issue_and_a_limit_out_of_range_are_422() -> None:
    client = app()
    assert client.get("/v1/escalations", params={"cursor": "not-a-cursor"}).status_code == 422
    assert client.get("/v1/escalations", params={"limit": 0}).status_code == 422
    assert client.get("/v1/escalations", params={"limit": 1001}).status_code == 422


# -- caps -----------------------------------------------------------------------------------------------


def test_over_the_per_thread_cap_the_call_is_blocked_and_says_why() -> None:
    client = app({"escalation": {"max_pending_per_thread": 2}})
    ask(client)
    ask(client)
    third = client.post("/v1/check", json=body(INVENTED_FROM)).json()
    assert third["action"] == "block" and third["escalation"] is None
    assert "max_pending_per_thread" in third["escalation_refused"]
    assert "not run" in third["feedback"] and "could not be put to a human" in third["feedback"]
    assert len(client.get("/v1/escalations", params={"thread_id": "t1"}).json()["escalations"]) == 2
    ask(client, thread_id="t2")  # another thread still has room


def test_over_the_global_cap_no_thread_gets_a_new_question() -> None:
    client = app({"escalation": {"max_pending": 3}})
    for i in range(3):
        ask(client, thread_id=f"t{i}")
    refused = client.post("/v1/check", json=body(INVENTED_FROM, "t9")).json()
    assert refused["action"] == "block" and "escalation.max_pending" in refused["escalation_refused"]


def test_a_question_over_the_byte_cap_is_not_stored() -> None:
    client = app({"escalation": {"max_payload_bytes": 4096}})
    huge = {"from_city": "Rome" + " via nowhere" * 2000, "to_city": "Paris"}
    decision = client.post("/v1/check", json=body(huge)).json()
    assert decision["action"] == "block" and decision["escalation"] is None
    assert "over escalation.max_payload_bytes (4096)" in decision["escalation_refused"]
    assert client.get("/v1/escalations").json()["escalations"] == []
    ask(client)  # a question of ordinary size is registered


# -- edits are validated against the tool's schema -------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "error_type"),
    [
        ({"to_city": "Paris"}, "edit_missing_argument"),
        ({"from_city": "Berlin", "to_city": "Paris", "passengers": "many"}, "edit_type_violation"),
        ({"from_city": "Berlin", "to_city": "Paris", "seat": "12A"}, "edit_unexpected_argument"),
    ],
)
def test_an_edit_that_breaks_the_schema_is_422_and_the_question_stays_open(args: dict[str, Any], error_type: str) -> None:
    client = app()
    escalation = ask(client)
    response = client.post(f"/v1/escalations/{escalation['id']}/resolve", json={"action": "edit", "args": args})
    assert response.status_code == 422
    assert error_type in [e["type"] for e in response.json()["detail"]]
    assert client.get(f"/v1/escalations/{escalation['id']}").json()["status"] == "pending"
    fixed = client.post(f"/v1/escalations/{escalation['id']}/resolve", json={"action": "edit", "args": CLEAN})
    assert fixed.status_code == 200 and fixed.json()["status"] == "resolved"


# -- approval over HTTP: bound to thread, arguments and policy, consumed once ------------------------------


def test_an_approved_call_runs_once_and_then_asks_again() -> None:
    client = app(APPROVAL)
    escalation = ask(client, CLEAN)
    assert escalation["payload"]["kind"] == "approval"
    assert client.post("/v1/check", json=body(CLEAN)).json()["action"] == "ask_human"  # not yet answered
    client.post(f"/v1/escalations/{escalation['id']}/resolve", json={"action": "approve"})

    ran = client.post("/v1/check", json=body(CLEAN)).json()
    assert ran["action"] == "allow" and ran["approved_by"] == escalation["id"] and ran["escalation"] is None
    again = client.post("/v1/check", json=body(CLEAN)).json()
    assert again["action"] == "ask_human" and again["approved_by"] is None
    assert again["escalation"]["id"] != escalation["id"]


def test_an_approval_does_not_run_other_arguments_another_thread_or_a_call_without_thread() -> None:
    client = app(APPROVAL)
    escalation = ask(client, CLEAN)
    client.post(f"/v1/escalations/{escalation['id']}/resolve", json={"action": "approve"})
    assert client.post("/v1/check", json=body(SWAPPED)).json()["action"] == "ask_human"
    assert client.post("/v1/check", json=body(CLEAN, "t2")).json()["action"] == "ask_human"
    assert client.post("/v1/check", json=body(CLEAN, None)).json()["action"] == "ask_human"
    assert client.post("/v1/check", json=body(CLEAN)).json()["approved_by"] == escalation["id"]  # still there


def test_an_edit_approves_the_edited_arguments_not_the_proposed_ones() -> None:
    client = app(APPROVAL)
    escalation = ask(client, CLEAN)
    client.post(f"/v1/escalations/{escalation['id']}/resolve", json={"action": "edit", "args": SWAPPED})
    assert client.post("/v1/check", json=body(CLEAN)).json()["action"] == "ask_human"
    ran = client.post("/v1/check", json=body(SWAPPED)).json()
    assert ran["action"] == "allow" and ran["approved_by"] == escalation["id"]


def test_an_approval_under_one_policy_does_not_run_under_another(redis_server: str, key_prefix: str) -> None:
    old = replica(redis_server, key_prefix, APPROVAL)
    new = replica(redis_server, key_prefix, {**APPROVAL, "name": "changed"})
    escalation = ask(old, CLEAN)
    assert new.post(f"/v1/escalations/{escalation['id']}/resolve", json={"action": "approve"}).status_code == 200
    assert new.post("/v1/check", json=body(CLEAN)).json()["action"] == "ask_human"
    ran = old.post("/v1/check", json=body(CLEAN)).json()
    assert ran["action"] == "allow" and ran["approved_by"] == escalation["id"]


def test_replicas_racing_to_recheck_an_approved_call_run_it_once(redis_server: str, key_prefix: str) -> None:
    replicas = [replica(redis_server, key_prefix, APPROVAL) for _ in range(2)]
    escalation = ask(replicas[0], CLEAN)
    replicas[1].post(f"/v1/escalations/{escalation['id']}/resolve", json={"action": "approve"})
    barrier = threading.Barrier(8)
    actions: list[str] = []

    def recheck(client: TestClient) -> None:
        barrier.wait()
        actions.append(client.post("/v1/check", json=body(CLEAN)).json()["action"])

    threads = [threading.Thread(target=recheck, args=(replicas[i % 2],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(actions) == ["allow"] + ["ask_human"] * 7


def test_an_expiry_that_runs_the_call_approves_it_once(clock: FakeClock) -> None:
    client = app({**APPROVAL, "escalation": {"ttl_seconds": 60, "on_expiry": "allow"}}, clock)
    escalation = ask(client, CLEAN)
    clock.advance(61)
    assert client.get("/v1/escalations").json()["escalations"] == []  # the sweep
    ran = client.post("/v1/check", json=body(CLEAN)).json()
    assert ran["action"] == "allow" and ran["approved_by"] == escalation["id"]
    assert client.post("/v1/check", json=body(CLEAN)).json()["action"] == "ask_human"


# -- the gauge is kept from a count, never from a listing --------------------------------------------------


class CountingStore(MemoryStore):
    """A MemoryStore that records which of its escalation operations the service calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []


def _recording(name: str) -> Any:
    def method(self: CountingStore, *args: Any, **kwargs: Any) -> Any:
        self.calls.append(name)
        return getattr(MemoryStore, name)(self, *args, **kwargs)

    return method


for _name in (
    "put_escalation", "get_escalation", "escalation_page", "pending_escalations", "pending_count",
    "resolve_escalation", "expire_escalations", "consume_approval", "grant_approval",
):  # fmt: skip
    setattr(CountingStore, _name, _recording(_name))


def test_opening_and_answering_make_the_same_store_calls_at_5_and_500_pending() -> None:
    store = CountingStore()
    client = app({"escalation": {"max_pending_per_thread": 1000}}, store=store)
    seen = {}
    opened = 0
    for backlog in (5, 500):
        while opened < backlog:
            ask(client, thread_id=f"t{opened}")
            opened += 1
        store.calls.clear()
        escalation = ask(client, thread_id="new")
        client.post(f"/v1/escalations/{escalation['id']}/resolve", json={"action": "reject"})
        seen[backlog] = list(store.calls)
        opened += 1
    assert seen[5] == seen[500]
    assert "escalation_page" not in seen[500] and "pending_escalations" not in seen[500]
    assert seen[500].count("pending_count") == 2  # the gauge after the open and after the answer


# -- a hung Redis (SIGSTOP), over real HTTP -------------------------------------------------------------


@contextmanager
def served(application: FastAPI) -> Iterator[str]:
    """The app under uvicorn on a loopback port, in a thread; stopped at the end."""
    server = uvicorn.Server(uvicorn.Config(application, host="127.0.0.1", port=free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("uvicorn did not start within 10 s")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def paused(server: RedisServer) -> Iterator[None]:
    os.kill(server.process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(server.process.pid, signal.SIGCONT)


def test_with_redis_hung_a_check_ends_within_its_budget_and_readiness_within_half_a_second(
    doomed_redis: RedisServer, key_prefix: str
) -> None:
    policy = Policy.model_validate({"state": {"timeout_ms": 200}})
    config = StateConfig(backend="redis", redis_url=doomed_redis.url, key_prefix=key_prefix, timeout_ms=200)
    application = create_app(policy, make_store(config), Telemetry(known_tools=["search_flights"]), token="")
    with served(application) as url, httpx.Client(base_url=url, timeout=30) as http:
        assert http.post("/v1/check", json=body(CLEAN)).json()["state"]["degraded"] is False
        assert http.get("/readyz").status_code == 200
        with paused(doomed_redis):
            start = time.monotonic()
            response = http.post("/v1/check", json=body(INVENTED_FROM))
            took = time.monotonic() - start
            assert response.status_code == 200 and response.json()["state"]["degraded"] is True
            assert took < 2.0, f"a check took {took:.2f} s with timeout_ms=200"  # a bound; it was ~6 s

            start = time.monotonic()
            ready = http.get("/readyz")
            assert ready.status_code == 503 and time.monotonic() - start < 1.0

            start = time.monotonic()
            listing = http.get("/v1/escalations")
            assert listing.status_code == 503 and time.monotonic() - start < 2.0
        assert http.get("/readyz").status_code == 200  # resumed
