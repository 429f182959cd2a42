"""The shared state on a real Redis Cluster (3 masters, 3 replicas, see ``cluster.py``).

The budgets, circuits and escalations suites already run on the cluster (the ``redis-cluster``
backend of ``tests/state/conftest.py``). Here: the key layout (every operation's keys in one slot,
whatever the ids), the configuration path, the checkpointer (LangGraph's conformance suite and a
guard question resumed in another process), ``wait_replicas`` (Redis ``WAIT``), and the failover of
a master while the guard keeps deciding.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.base import empty_checkpoint
from redis.crc import key_slot

from guard.service import create_app
from guard.state import REDIS_URL_ENV, ResilientStore, RetryCounts, StateBackendError, StateConfig, make_store
from guard.state.base import Approval, Escalation
from guard.state.checkpoint import PlainRedisSaver, _Keys, make_checkpointer
from guard.state.redis import RedisStore, check_key_prefix, tag
from guard.telemetry import Telemetry
from tests.service.conftest import TOOLS
from tests.state.cluster import Cluster, Node, wait_for
from tests.state.helpers import CIRCUIT, free_port
from tests.state.test_checkpoint import run_half

HOSTILE = ["", "{", "}", "{}", "{a}", "%", "%7B", "a}b{c", "t1:{x}:y", "é🙂", "x" * 500, "*", "[a-z]?"]


def slots_of(keys: list[str]) -> set[int]:
    return {key_slot(k.encode()) for k in keys}


# -- the key layout -------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(a=st.text(max_size=40), b=st.text(max_size=40))
def test_a_tag_is_never_empty_never_closed_early_and_never_shared_by_two_values(a: str, b: str) -> None:
    ta = tag(a)
    assert ta.startswith("{") and ta.endswith("}") and len(ta) > 2
    assert "{" not in ta[1:-1] and "}" not in ta[1:-1]
    assert (tag(a) == tag(b)) == (a == b)


@settings(max_examples=200, deadline=None)
@given(thread=st.text(max_size=40), tool=st.text(max_size=40), ns=st.text(max_size=20), cid=st.text(max_size=20))
def test_the_keys_one_operation_touches_share_one_slot_whatever_the_ids(thread: str, tool: str, ns: str, cid: str) -> None:
    store = RedisStore("redis://127.0.0.1:1/0", key_prefix="p:")
    assert len(slots_of(list(store._circuit_keys(tool)))) == 1  # the circuit script's keys
    escalation_keys = [
        store._escalation_key(cid), store._pending_key(None), store._pending_key(thread), store._approval_key(cid),
    ]  # fmt: skip
    assert slots_of(escalation_keys) == slots_of([f"p:{{esc}}:{uuid.uuid4()}"])  # the registry's one slot
    keys = _Keys("p:", thread, ns)
    thread_keys = [keys.namespaces, keys.ids, keys.checkpoints, keys.metadata, keys.parents, keys.blobs, keys.wids]
    assert len(slots_of([*thread_keys, keys.writes(cid), _Keys("p:", thread, "other").ids])) == 1
    # one thread's retries and its checkpoints are distributed by the thread, not all in one slot
    assert slots_of([store._retries_key(thread)]) == slots_of([f"x{tag(thread)}"])


def test_a_key_prefix_with_a_brace_is_refused_everywhere() -> None:
    for prefix in ("{guard}:", "guard{", "g}"):
        with pytest.raises(ValueError, match="must not contain"):
            check_key_prefix(prefix)
        with pytest.raises(ValueError, match="must not contain"):
            RedisStore("redis://127.0.0.1:1/0", key_prefix=prefix)
        with pytest.raises(ValueError, match="must not contain"):
            PlainRedisSaver("redis://127.0.0.1:1/0", key_prefix=prefix)
        with pytest.raises(ValueError, match="must not contain"):
            StateConfig(key_prefix=prefix)


def test_hostile_ids_stay_on_one_slot_per_operation_on_the_cluster(redis_cluster: Cluster, key_prefix: str) -> None:
    """Every id below would break a naive tag ({…} inside, empty, '%'): on a cluster a split
    operation fails with CROSSSLOT, so each one working is the proof."""
    redis_cluster.wait_healthy()
    store = RedisStore(redis_cluster.url, key_prefix=key_prefix, circuit=CIRCUIT)
    now = time.time()
    for i, value in enumerate(HOSTILE):
        assert store.incr_retries(value, value, ttl_seconds=60) == RetryCounts(1, 1)
        assert store.get_retries(value, value) == RetryCounts(1, 1)
        for _ in range(3):
            store.record_tool_result(value, ok=False, reason=value)
        assert store.circuit(value).state == "open" and store.acquire_probe(value) is False
        escalation = Escalation(
            id=f"{value}#{i}", thread_id=value, payload={"q": value}, args_hash="a", policy_hash="p",
            created_at=now, expires_at=now + 60,
        )  # fmt: skip
        store.put_escalation(escalation, max_pending=100, max_pending_per_thread=1)
        assert store.pending_count(value) == 1 and store.get_escalation(escalation.id) == escalation
        resolved = store.resolve_escalation(escalation.id, {"action": "approve"}, approval=Approval(value, escalation.id, 30))
        assert resolved is not None and resolved.status == "resolved"
        assert store.consume_approval(["absent", value]) == escalation.id and store.consume_approval([value]) is None
    assert sorted(store.all_circuits()) == sorted(HOSTILE)
    with PlainRedisSaver(redis_cluster.url, key_prefix=key_prefix, ttl_seconds=60) as saver:
        for value in HOSTILE:
            config = {"configurable": {"thread_id": value, "checkpoint_ns": value}}
            stored = saver.put(config, empty_checkpoint(), {"step": 1}, {})
            saver.put_writes(stored, [("messages", value)], task_id=value)
            found = saver.get_tuple(stored)
            assert found is not None and found.pending_writes == [(value, "messages", value)]
        assert {t.config["configurable"]["thread_id"] for t in saver.list(None)} == set(HOSTILE)
        for value in HOSTILE:
            saver.delete_thread(value)
        assert list(saver.list(None)) == []
    store.close()


# -- configuration ---------------------------------------------------------------------------------------


def test_a_cluster_url_in_the_configuration_or_the_variable_selects_the_cluster(
    redis_cluster: Cluster, key_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    redis_cluster.wait_healthy()
    store = make_store(StateConfig(backend="redis", redis_url=redis_cluster.url, key_prefix=key_prefix))
    assert isinstance(store, ResilientStore) and isinstance(store.inner, RedisStore) and store.inner.cluster
    assert store.ping() and store.incr_retries("t1", "sig", ttl_seconds=60) == RetryCounts(1, 1)
    store.close()
    waiting = make_store(StateConfig(backend="redis", redis_url=redis_cluster.url, key_prefix=key_prefix, wait_replicas=1))
    assert waiting.inner.wait_replicas == 1  # type: ignore[attr-defined]
    assert waiting.incr_retries("t1", "sig", ttl_seconds=60) == RetryCounts(2, 2)  # a replica acknowledged it
    waiting.close()
    monkeypatch.setenv(REDIS_URL_ENV, redis_cluster.url)
    saver = make_checkpointer(key_prefix=key_prefix)
    assert isinstance(saver, PlainRedisSaver) and saver.cluster and saver.ping()
    saver.close()


async def test_a_url_may_name_several_nodes_and_the_first_may_be_down(redis_cluster: Cluster, key_prefix: str) -> None:
    redis_cluster.wait_healthy()
    url = f"redis+cluster://127.0.0.1:{free_port()},{redis_cluster.nodes[1].address},{redis_cluster.nodes[2].address}"
    store = RedisStore(url, key_prefix=key_prefix)
    assert store.incr_retries("t1", "sig", ttl_seconds=60) == RetryCounts(1, 1) and store.ping()
    store.close()
    saver = PlainRedisSaver(url, key_prefix=key_prefix)
    stored = saver.put({"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}, empty_checkpoint(), {"step": 1}, {})
    found = await saver.aget_tuple(stored)  # the async client too
    assert found is not None and found.metadata["step"] == 1
    await saver.aclose()
    saver.close()


def test_an_unreachable_cluster_degrades_the_store_and_refuses_the_checkpointer() -> None:
    url = f"redis+cluster://guard:s3cret@127.0.0.1:{free_port()}"
    store = make_store(StateConfig(backend="redis", redis_url=url, timeout_ms=200))  # builds without connecting
    assert store.incr_retries("t1", "sig", ttl_seconds=60).degraded and store.circuit("search").state == "open"
    assert store.ping() is False and store.errors == 2  # type: ignore[attr-defined]
    with pytest.raises(StateBackendError) as info:
        make_checkpointer(url)
    assert "redis+cluster://guard:***@127.0.0.1" in str(info.value) and "s3cret" not in str(info.value)


# -- the checkpointer (LangGraph's conformance suite on the cluster: tests/state/test_checkpoint.py) ----


def test_a_question_asked_over_the_cluster_is_answered_in_another_process(redis_cluster: Cluster, key_prefix: str) -> None:
    redis_cluster.wait_healthy()
    paused = run_half("pause", redis_cluster.url, "over-the-cluster", key_prefix)
    assert paused["interrupt"]["kind"] == "missing_information" and paused["calls"] == []
    resumed = run_half("resume", redis_cluster.url, "over-the-cluster", key_prefix)
    assert resumed["calls"] == [{"tool": "get_weather", "city": "Bergen"}]
    assert [r["action"] for r in resumed["records"]] == ["allow"] and not resumed["interrupted"]


# -- WAIT -----------------------------------------------------------------------------------------------


def test_wait_replicas_confirms_every_write_on_a_replica_or_fails_it(
    redis_cluster: Cluster, redis_server: str, key_prefix: str
) -> None:
    redis_cluster.wait_healthy()
    waiting = RedisStore(redis_cluster.url, key_prefix=key_prefix, circuit=CIRCUIT, wait_replicas=1)
    assert waiting.incr_retries("t1", "sig", ttl_seconds=60) == RetryCounts(1, 1)
    assert waiting.record_tool_result("search", ok=False).failures == 1
    now = time.time()
    waiting.put_escalation(Escalation(id="e1", thread_id="t1", payload={}, args_hash="a", policy_hash="p", created_at=now, expires_at=now + 60))
    assert waiting.resolve_escalation("e1", {"action": "approve"}, approval=Approval("k", "e1", 30)) is not None
    assert waiting.consume_approval(["k"]) == "e1"
    # each replica holds what its master acknowledged (WAIT returned 1)
    (replica,) = redis_cluster.replicas_of(redis_cluster.master_of(waiting._retries_key("t1")))
    client = replica.client()
    try:
        client.execute_command("READONLY")
        assert client.hget(waiting._retries_key("t1"), "thread") == "1"
    finally:
        client.close()
    # every master here has one replica: two never acknowledge, and a Redis without replicas none
    for url, wanted, acknowledged in ((redis_cluster.url, 2, 1), (redis_server, 1, 0)):
        store = RedisStore(url, key_prefix=key_prefix, wait_replicas=wanted, socket_timeout=0.4)
        with pytest.raises(StateBackendError, match=f"acknowledged by {acknowledged} of {wanted} replicas"):
            store.incr_retries("t2", "sig", ttl_seconds=60)
        resilient = ResilientStore(store, mode="fail_closed")
        assert resilient.incr_retries("t2", "sig", ttl_seconds=60).degraded
        store.close()
    waiting.close()


# -- failover --------------------------------------------------------------------------------------------


def replica_has(replica: Node, key: str) -> bool:
    client = replica.client()
    try:
        client.execute_command("READONLY")
        return bool(client.exists(key))
    finally:
        client.close()


def decide(client: TestClient, thread: str) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    response = client.post(
        "/v1/check",
        json={
            "tools": TOOLS,
            "messages": [{"role": "user", "content": "Find flights from Berlin to Paris."}],
            "call": {"name": "search_flights", "args": {"from_city": "Berlin", "to_city": "Paris"}, "id": "c1"},
            "thread_id": thread,
        },
    )
    assert response.status_code == 200, response.text  # the guard answers whatever the cluster does
    return response.json(), time.monotonic() - started


@pytest.mark.parametrize("how", ["kill", "pause"])
def test_a_master_fails_over_while_the_guard_keeps_deciding_fail_closed_and_recovers(
    redis_cluster: Cluster, key_prefix: str, tmp_path: Any, how: str
) -> None:
    """Kill (SIGKILL: connections refused) or pause (SIGSTOP: a hung host, every request times
    out) the master that holds the tool's circuit and the thread's budget while a guard replica
    decides calls: every decision is answered, those taken while the slots move
    are marked degraded and fail closed (the tool reads unavailable), and once the replica has
    taken over the decisions are whole again. A budget written with WAIT before the kill
    survives it; a checkpointed thread on that master cannot be read meanwhile (an error, not a
    wrong answer) and is read and written again afterwards."""
    redis_cluster.wait_healthy()
    config = StateConfig(backend="redis", redis_url=redis_cluster.url, key_prefix=key_prefix,
                         on_backend_error="fail_closed", timeout_ms=500)  # fmt: skip
    store = make_store(config)
    client = TestClient(create_app(store=store, token="", telemetry=Telemetry(known_tools=["search_flights"])))
    victim = redis_cluster.master_of(f"{key_prefix}circuit:{tag('search_flights')}")
    # a thread whose budget lives on the same master
    thread = next(t for t in (f"t{i}" for i in range(10_000)) if redis_cluster.master_of(f"{key_prefix}retries:{tag(t)}") == victim)
    # WAIT up to 2.5 s (half the socket timeout): a replica that has just resynced (after the previous run) acks late
    durable = RedisStore(redis_cluster.url, key_prefix=key_prefix, wait_replicas=1, socket_timeout=5.0)
    assert durable.incr_retries(thread, "before-the-kill", ttl_seconds=600) == RetryCounts(1, 1)  # on a replica too

    # a checkpointed thread on the same master, its checkpoint on the replica before the kill
    saver = PlainRedisSaver(redis_cluster.url, key_prefix=key_prefix, socket_timeout=0.5)
    paused = next(t for t in (f"c{i}" for i in range(10_000)) if redis_cluster.master_of(_Keys(key_prefix, t).ids) == victim)
    checkpoint = saver.put({"configurable": {"thread_id": paused, "checkpoint_ns": ""}}, empty_checkpoint(), {"step": 1}, {})
    (replica,) = redis_cluster.replicas_of(victim)
    wait_for("the checkpoint to reach the replica", lambda: replica_has(replica, _Keys(key_prefix, paused).ids), timeout=10)

    # Before the kill the guard comes to whole decisions. The first ones open the app's connections
    # to every master; on a loaded machine (CI beside a benchmark run) one of them once ran past the
    # 500 ms timeout and was degraded, which is the guard doing its job, not the failover's subject.
    decisions: list[dict[str, Any]] = []
    wait_for("a whole decision before the kill",
             lambda: not decisions.append(decide(client, thread)[0]) and decisions[-1]["state"]["degraded"] is False, timeout=15)
    assert decisions[-1]["action"] == "allow"

    timeline: list[dict[str, Any]] = []
    checkpoint_errors: list[float] = []
    killed = time.monotonic()
    victim.kill() if how == "kill" else victim.pause()
    try:
        deadline = killed + 60
        recovered_at = None
        while recovered_at is None or time.monotonic() - recovered_at < 1.0:
            if time.monotonic() > deadline:
                pytest.fail(f"no whole decision 60 s after the kill: {json.dumps(timeline[-5:])}")
            decision, seconds = decide(client, thread)
            state = decision["state"]
            timeline.append({"t": round(time.monotonic() - killed, 3), "action": decision["action"],
                             "degraded": state["degraded"], "mode": state["mode"], "ms": round(seconds * 1000, 1),
                             "failed": state["failed_operations"]})  # fmt: skip
            if state["degraded"]:
                recovered_at = None
                if not checkpoint_errors:  # the checkpointer raises meanwhile (a graph run would stop, not corrupt)
                    with pytest.raises(StateBackendError, match="failed during get_tuple"):
                        saver.get_tuple(checkpoint)
                    checkpoint_errors.append(time.monotonic() - killed)
                # fail closed: the tool's circuit reads open, so the call does not run
                assert state["mode"] == "fail_closed" and decision["action"] not in ("allow", "repair"), decision
            elif recovered_at is None:
                recovered_at = time.monotonic()
            time.sleep(0.02)  # pacing only: every wait above is a deadline
        degraded = [e for e in timeline if e["degraded"]]
        assert degraded, "the kill went unnoticed: no decision was taken without the master"
        assert timeline[-1]["action"] == "allow"
        # the slots moved: another node serves them now, and the budget written with WAIT is there
        assert redis_cluster.master_of(f"{key_prefix}retries:{tag(thread)}") != victim
        found = saver.get_tuple(checkpoint)  # replicated before the kill: still there, and writable again
        assert found is not None and found.metadata["step"] == 1
        saver.put(checkpoint, empty_checkpoint(), {"step": 2}, {})
        assert saver.get_tuple({"configurable": {"thread_id": paused, "checkpoint_ns": ""}}).metadata["step"] == 2  # type: ignore[union-attr]
        # a client unused during the failover learns the new map from its first failure (a paused
        # master times out, a dead one is retried at once): poll, with a deadline
        found_counts: list[RetryCounts] = []
        wait_for("the budget written with WAIT to be read", lambda: bool(found_counts.append(durable.get_retries(thread, "before-the-kill")) or True), timeout=10)
        survived = found_counts[-1]  # the thread's total also counts the decisions' retries
        assert survived.per_call == 1 and survived.per_thread >= 1 and not survived.degraded
        summary = {
            "decisions": len(timeline),
            "degraded": len(degraded),
            "degraded_from_s": degraded[0]["t"],
            "degraded_until_s": degraded[-1]["t"],
            "actions_while_degraded": sorted({e["action"] for e in degraded}),
            "failed_operations": sorted({op for e in degraded for op in e["failed"]}),
            "slowest_decision_ms": max(e["ms"] for e in timeline),
        }
        summary["how"] = how
        (tmp_path / "failover.json").write_text(json.dumps({"summary": summary, "timeline": timeline}, indent=1))
        print("failover:", json.dumps(summary))
    finally:
        durable.close()
        saver.close()
        store.close()
        # the old master comes back as a replica of the node that took over; later tests get a whole cluster
        victim.resume() if how == "pause" else victim.start()
        redis_cluster.wait_healthy()
    wait_for("the old master to rejoin as a replica", lambda: victim.role() == "slave")
