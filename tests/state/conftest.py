"""The state tests run each behavioural test on three backends: in memory, one real redis-server,
and a real Redis Cluster of 3 masters and 3 replicas (started once for the session, on first use)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from guard.state import MemoryStore, StateStore
from guard.state.redis import RedisStore
from tests.state.cluster import Cluster, start_cluster
from tests.state.helpers import CIRCUIT, FakeClock


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Six redis-server processes joined into one cluster; stopped at the end of the session."""
    cluster = start_cluster(Path(tmp_path_factory.mktemp("redis-cluster")))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(params=["memory", "redis", "redis-cluster"])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def peers(
    request: pytest.FixtureRequest, backend: str, clock: FakeClock, key_prefix: str
) -> Iterator[tuple[StateStore, StateStore]]:
    """Two handles on the same state, as two replicas would hold: the same MemoryStore twice, or
    two RedisStores with their own connections to one server or to the cluster."""
    if backend == "memory":
        store = MemoryStore(circuit=CIRCUIT, clock=clock)
        yield store, store
        return
    if backend == "redis-cluster":
        cluster: Cluster = request.getfixturevalue("redis_cluster")
        cluster.wait_healthy()
        url = cluster.url
    else:
        url = request.getfixturevalue("redis_server")
    a, b = (RedisStore(url, key_prefix=key_prefix, circuit=CIRCUIT, clock=clock) for _ in range(2))
    yield a, b
    a.close()
    b.close()
