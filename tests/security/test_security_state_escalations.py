"""Issue 11, items 8 and 10, in the state stores: escalations cost the same whatever the backlog,
are paged with a cursor, are capped atomically, expire in bounded sweeps, carry approvals consumed
once; and a decision's state operations share one deadline, so a hung Redis (SIGSTOP) costs about
``timeout_ms``, not a timeout per operation.

Both backends run every store test: the MemoryStore (one handle twice) and two RedisStores on the
session's real redis-server (two replicas). Cost is asserted structurally (commands Redis ran,
escalations the memory store copied), never on wall-clock time: ``benchmarks/escalations.py``
measures the time.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
import redis

import guard.state.memory as memory_module
from guard.state import (
    Approval,
    Escalation,
    EscalationRefused,
    MemoryStore,
    ResilientStore,
    StateStore,
)
from guard.state.base import approval_key
from guard.state.redis import RedisStore
from tests.state.helpers import CIRCUIT, FakeClock, RedisServer

T = TypeVar("T")


def escalation(clock: FakeClock, eid: str, thread_id: str = "t1", ttl: float = 60, size: int = 0) -> Escalation:
    return Escalation(
        id=eid,
        thread_id=thread_id,
        payload={"type": "guard.escalation", "requests": [{"tool": "transfer_money", "args": {"memo": "x" * size}}]},
        args_hash="a1b2",
        policy_hash="p3d4",
        created_at=clock.now,
        expires_at=clock.now + ttl,
    )


def race(n: int, stores: tuple[StateStore, StateStore], work: Callable[[StateStore, int], T]) -> list[T | Exception]:
    """``work`` in ``n`` threads released together, alternating replicas; exceptions are results."""
    barrier = threading.Barrier(n)
    results: list[T | Exception] = []
    lock = threading.Lock()

    def run(i: int) -> None:
        barrier.wait()
        try:
            result: T | Exception = work(stores[i % 2], i)
        except Exception as exc:  # noqa: BLE001 - a refusal is an outcome here
            result = exc
        with lock:
            results.append(result)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


# -- cost independent of the backlog --------------------------------------------------------------


def _redis_commands(client: redis.Redis, work: Callable[[], Any]) -> dict[str, int]:
    """Commands the server ran (scripts' commands included) during ``work``, by name."""
    client.config_resetstat()
    work()
    stats = client.info("commandstats")
    return {name: int(row["calls"]) for name, row in stats.items() if name not in ("cmdstat_config", "cmdstat_info")}


def test_redis_runs_the_same_commands_to_open_count_page_and_resolve_at_10_and_2000_pending(
    doomed_redis: RedisServer, clock: FakeClock
) -> None:
    store = RedisStore(doomed_redis.url, circuit=CIRCUIT, clock=clock)
    raw = redis.Redis.from_url(doomed_redis.url, decode_responses=True)
    seen: dict[int, dict[str, int]] = {}

    def one_round(eid: str) -> None:
        store.put_escalation(escalation(clock, eid, ttl=30), max_pending=10_000, max_pending_per_thread=5_000)
        store.pending_count()
        store.escalation_page(limit=10)
        store.resolve_escalation(eid, {"action": "approve"})

    one_round("warm-up")  # the scripts loaded once
    filled = 0
    for backlog in (10, 2000):
        while filled < backlog:
            store.put_escalation(escalation(clock, f"old-{filled:05d}", thread_id=f"t{filled % 7}", ttl=120))
            filled += 1
        seen[backlog] = _redis_commands(raw, lambda n=backlog: one_round(f"new-{n}"))
    assert seen[10] == seen[2000]
    assert sum(seen[2000].values()) < 50  # a handful of commands, not one per pending escalation
    store.close()


def test_the_memory_store_copies_only_the_escalations_it_stores_or_returns(
    monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    store = MemoryStore(clock=clock)
    copies: list[str] = []
    original = memory_module._copy

    def counting(e: Escalation) -> Escalation:
        copies.append(e.id)
        return original(e)

    monkeypatch.setattr(memory_module, "_copy", counting)
    counts: dict[int, int] = {}
    filled = 0
    for backlog in (10, 2000):
        while filled < backlog:
            store.put_escalation(escalation(clock, f"old-{filled:05d}", ttl=120, size=1000))
            filled += 1
        copies.clear()
        store.put_escalation(escalation(clock, f"new-{backlog}", ttl=30), max_pending=10_000, max_pending_per_thread=5_000)
        assert store.pending_count() == backlog + 1
        store.resolve_escalation(f"new-{backlog}", {"action": "approve"})
        store.expire_escalations()
        counts[backlog] = len(copies)
    assert counts == {10: 2, 2000: 2}  # the one put in, the one resolved handed out


# -- paging -----------------------------------------------------------------------------------------


def test_walking_the_pages_returns_every_pending_escalation_once_in_order(store: StateStore, clock: FakeClock) -> None:
    # Ties on expiry (a fake clock) and distinct expiries, over three threads.
    for i in range(60):
        store.put_escalation(escalation(clock, f"e{i:03d}", thread_id=f"t{i % 3}", ttl=60 + (i % 4)))
    expected = sorted((60 + (i % 4), f"e{i:03d}") for i in range(60))
    walked, after, pages = [], None, 0
    while True:
        page = store.escalation_page(limit=7, after=after)
        walked += [(e.expires_at - clock.now, e.id) for e in page.escalations]
        pages += 1
        if page.next_after is None:
            break
        after = page.next_after
    assert walked == expected and pages == 9
    t1 = [e.id for e in store.pending_escalations("t1")]
    assert t1 == [eid for _, eid in expected if int(eid[1:]) % 3 == 1]


def test_escalations_resolved_while_paging_are_neither_repeated_nor_cause_omissions(store: StateStore, clock: FakeClock) -> None:
    for i in range(30):
        store.put_escalation(escalation(clock, f"e{i:02d}", ttl=60))
    first = store.escalation_page(limit=10)
    assert [e.id for e in first.escalations] == [f"e{i:02d}" for i in range(10)]
    # The cursor's own escalation and some after it are answered before the next page is asked.
    for eid in ("e09", "e10", "e15"):
        assert store.resolve_escalation(eid, {"action": "reject"}) is not None
    rest, after = [], first.next_after
    while after is not None:
        page = store.escalation_page(limit=10, after=after)
        rest += [e.id for e in page.escalations]
        after = page.next_after
    assert rest == [f"e{i:02d}" for i in range(10, 30) if i not in (10, 15)]


def test_expired_escalations_are_not_listed_or_counted_before_the_sweep(store: StateStore, clock: FakeClock) -> None:
    store.put_escalation(escalation(clock, "soon", ttl=10))
    store.put_escalation(escalation(clock, "late", ttl=100))
    clock.advance(10)
    assert [e.id for e in store.escalation_page().escalations] == ["late"]
    assert store.pending_count() == 1 and store.pending_count("t1") == 1 and store.pending_count("t9") == 0


# -- caps -------------------------------------------------------------------------------------------


def test_a_thread_over_its_cap_is_refused_and_gets_room_when_one_is_answered_or_expires(store: StateStore, clock: FakeClock) -> None:
    caps = {"max_pending": 100, "max_pending_per_thread": 2}
    store.put_escalation(escalation(clock, "a", ttl=10), **caps)
    store.put_escalation(escalation(clock, "b", ttl=100), **caps)
    with pytest.raises(EscalationRefused) as refused:
        store.put_escalation(escalation(clock, "c"), **caps)
    assert (refused.value.cap, refused.value.limit) == ("max_pending_per_thread", 2)
    assert store.get_escalation("c") is None
    store.put_escalation(escalation(clock, "other", thread_id="t2"), **caps)  # another thread has room
    store.put_escalation(escalation(clock, "b", ttl=100), **caps)  # replacing a pending one takes no room
    store.resolve_escalation("b", {"action": "reject"})
    store.put_escalation(escalation(clock, "c"), **caps)
    clock.advance(10)  # "a" expired, even unswept
    store.put_escalation(escalation(clock, "d"), **caps)
    assert store.pending_count("t1") == 2


def test_the_global_cap_counts_every_thread(store: StateStore, clock: FakeClock) -> None:
    for i in range(3):
        store.put_escalation(escalation(clock, f"e{i}", thread_id=f"t{i}"), max_pending=3)
    with pytest.raises(EscalationRefused, match="max_pending"):
        store.put_escalation(escalation(clock, "e3", thread_id="t3"), max_pending=3)
    assert store.pending_count() == 3


def test_a_cap_holds_when_replicas_open_escalations_at_once(peers: tuple[StateStore, StateStore], clock: FakeClock) -> None:
    results = race(16, peers, lambda s, i: s.put_escalation(escalation(clock, f"e{i}"), max_pending_per_thread=5))
    refused = [r for r in results if isinstance(r, EscalationRefused)]
    assert len(refused) == 11 and peers[1].pending_count("t1") == 5


# -- bounded expiry ---------------------------------------------------------------------------------


def test_a_sweep_expires_at_most_its_limit_and_the_next_takes_the_rest(store: StateStore, clock: FakeClock) -> None:
    for i in range(25):
        store.put_escalation(escalation(clock, f"e{i:02d}", ttl=10 + i))
    clock.advance(100)
    batches = [store.expire_escalations(limit=10) for _ in range(4)]
    assert [len(b) for b in batches] == [10, 10, 5, 0]
    assert [e.id for b in batches for e in b] == [f"e{i:02d}" for i in range(25)]  # soonest first


# -- approvals --------------------------------------------------------------------------------------


def test_an_approval_granted_by_the_resolution_is_consumed_once(peers: tuple[StateStore, StateStore], clock: FakeClock) -> None:
    key = approval_key("t1", "transfer_money", "a1b2", "p3d4")
    peers[0].put_escalation(escalation(clock, "esc"))
    assert peers[1].consume_approval([key]) is None  # nothing granted before the answer
    assert peers[1].resolve_escalation("esc", {"action": "approve"}, approval=Approval(key, "esc", 60)) is not None
    results = race(12, peers, lambda s, i: s.consume_approval([approval_key("t1", "x", "y", "z"), key]))
    assert results.count("esc") == 1 and results.count(None) == 11


def test_a_losing_resolver_grants_nothing_and_an_approval_lapses(store: StateStore, clock: FakeClock) -> None:
    key = approval_key("t1", "transfer_money", "a1b2", "p3d4")
    store.put_escalation(escalation(clock, "esc"))
    store.resolve_escalation("esc", {"action": "reject"})
    assert store.resolve_escalation("esc", {"action": "approve"}, approval=Approval(key, "esc", 60)) is None
    assert store.consume_approval([key]) is None
    store.grant_approval(Approval(key, "esc", 30))
    clock.advance(31)
    if isinstance(store, RedisStore):  # Redis expires keys on its own clock: the key carries the TTL
        raw = redis.Redis.from_url(store.url)
        assert 0 < raw.pttl(store._approval_key(key)) <= 30_000
    else:
        assert store.consume_approval([key]) is None


# -- deadlines under a hung Redis ------------------------------------------------------------------


@pytest.fixture
def paused(doomed_redis: RedisServer) -> Iterator[Callable[[], None]]:
    """Call it to SIGSTOP the test's redis-server; it is resumed (SIGCONT) at teardown whatever happens."""
    stopped = []

    def pause() -> None:
        os.kill(doomed_redis.process.pid, signal.SIGSTOP)
        stopped.append(True)

    try:
        yield pause
    finally:
        if stopped:
            os.kill(doomed_redis.process.pid, signal.SIGCONT)


def test_a_decisions_operations_share_one_deadline_when_redis_hangs(
    doomed_redis: RedisServer, paused: Callable[[], None], clock: FakeClock
) -> None:
    failed: list[str] = []
    store = ResilientStore(
        RedisStore(doomed_redis.url, circuit=CIRCUIT, socket_timeout=0.2, clock=clock),
        mode="fail_closed",
        on_error=lambda op, exc: failed.append(op),
        timeout_ms=200,
    )
    store.circuit("search")  # connected
    paused()
    start = time.monotonic()
    with store.deadline():
        assert store.circuit("search").degraded is True
        assert store.get_retries("t1", "sig").degraded is True
        assert store.incr_retries("t1", "sig", 60).degraded is True
        store.put_escalation(escalation(clock, "e"))
        assert store.consume_approval(["k"]) is None
        assert store.pending_count() == 0
    took = time.monotonic() - start
    assert took < 1.0, f"six operations on a hung Redis took {took:.2f} s"  # a bound, not a speed target
    assert failed == ["circuit", "get_retries", "incr_retries", "put_escalation", "consume_approval", "pending_count"]


def test_readiness_answers_false_within_half_a_second_while_redis_hangs(
    doomed_redis: RedisServer, paused: Callable[[], None]
) -> None:
    store = ResilientStore(RedisStore(doomed_redis.url, circuit=CIRCUIT, socket_timeout=5.0), timeout_ms=5000)
    assert store.ping() is True
    paused()
    for _ in range(2):  # on the pooled connection, then on a fresh one
        start = time.monotonic()
        assert store.ping() is False
        assert time.monotonic() - start < 0.5


def test_time_spent_between_operations_does_not_spend_the_state_budget(doomed_redis: RedisServer) -> None:
    failed: list[str] = []
    store = ResilientStore(
        RedisStore(doomed_redis.url, circuit=CIRCUIT, socket_timeout=0.1),
        on_error=lambda op, exc: failed.append(op),
        timeout_ms=100,
    )
    with store.deadline():
        assert store.circuit("search").degraded is False
        time.sleep(0.3)  # a slow check (a judge's model call) between two operations
        assert store.get_retries("t1", "sig").degraded is False
    assert failed == []
