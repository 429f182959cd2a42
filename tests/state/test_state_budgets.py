"""Retry budgets in the shared store: counted per call signature and per thread, shared by
replicas, atomic under concurrency, forgotten a TTL after the thread's last retry."""

from __future__ import annotations

import threading
import time

from guard.state import RetryCounts, StateStore
from tests.state.helpers import FakeClock


def test_an_unseen_thread_has_spent_no_retries(store: StateStore) -> None:
    assert store.get_retries("t1", "search:abc") == RetryCounts(0, 0)


def test_each_retry_counts_once_for_its_signature_and_once_for_its_thread(store: StateStore) -> None:
    assert store.incr_retries("t1", "search:abc", ttl_seconds=60) == RetryCounts(1, 1)
    assert store.incr_retries("t1", "search:abc", ttl_seconds=60) == RetryCounts(2, 2)
    assert store.incr_retries("t1", "weather:def", ttl_seconds=60) == RetryCounts(1, 3)
    assert store.get_retries("t1", "search:abc") == RetryCounts(2, 3)
    assert store.get_retries("t2", "search:abc") == RetryCounts(0, 0)


def test_replicas_share_one_budget(peers: tuple[StateStore, StateStore]) -> None:
    a, b = peers
    a.incr_retries("t1", "sig", ttl_seconds=60)
    assert b.incr_retries("t1", "sig", ttl_seconds=60) == RetryCounts(2, 2)
    assert a.get_retries("t1", "sig") == RetryCounts(2, 2)


def test_concurrent_retries_from_two_replicas_are_all_counted(peers: tuple[StateStore, StateStore]) -> None:
    def spend(s: StateStore) -> None:
        for _ in range(25):
            s.incr_retries("t1", "sig", ttl_seconds=60)

    threads = [threading.Thread(target=spend, args=(peers[i % 2],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peers[1].get_retries("t1", "sig") == RetryCounts(200, 200)


def test_retry_counts_expire_ttl_after_the_last_retry(backend: str, store: StateStore, clock: FakeClock) -> None:
    """The memory store follows its clock; Redis expires keys in real time (a short real TTL)."""

    def elapse(seconds: float) -> None:
        clock.advance(seconds)
        if backend != "memory":
            time.sleep(seconds)

    store.incr_retries("t1", "sig", ttl_seconds=0.4)
    elapse(0.25)
    assert store.incr_retries("t1", "sig", ttl_seconds=0.4) == RetryCounts(2, 2)  # refreshes the TTL
    elapse(0.25)
    assert store.get_retries("t1", "sig") == RetryCounts(2, 2)
    elapse(0.3)
    assert store.get_retries("t1", "sig") == RetryCounts(0, 0)
    assert store.incr_retries("t1", "sig", ttl_seconds=0.4) == RetryCounts(1, 1)
