"""Shared fixtures: small travel tools whose executions are logged, so tests can prove what ran, and
the real redis-server (one for the session, or one of a test's own to kill), fresh key prefixes and
a fake clock that the state, service and checkpoint tests share."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.tools import tool

from guard.state import MemoryStore, StateStore
from guard.state.redis import RedisStore
from tests.state.cluster import Cluster, start_cluster
from tests.state.helpers import CIRCUIT, FakeClock, RedisServer, start_redis


@pytest.fixture(autouse=True)
def _hypothesis_prints_falsifying_examples(request: pytest.FixtureRequest) -> Iterator[None]:
    """Property tests print the example that failed.

    schemathesis (which the service's OpenAPI tests import) swaps Hypothesis' printer, process-wide
    and for good, for one that prints nothing, for its own speed: every other property test then
    reports ``Falsifying example: test(args=, ...)`` with the values blank. Tests of modules that
    do not use schemathesis get Hypothesis' own printer back while they run."""
    import hypothesis.core
    from hypothesis.vendor import pretty

    if "schemathesis" in vars(request.module) or hypothesis.core.RepresentationPrinter is pretty.RepresentationPrinter:
        yield
        return
    swapped = hypothesis.core.RepresentationPrinter
    hypothesis.core.RepresentationPrinter = pretty.RepresentationPrinter  # type: ignore[misc]
    try:
        yield
    finally:
        hypothesis.core.RepresentationPrinter = swapped  # type: ignore[misc]


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    server = start_redis()
    yield server.url
    server.stop()


@pytest.fixture
def doomed_redis() -> Iterator[RedisServer]:
    """A redis-server of the test's own, for tests that kill it; stopped at teardown whatever happens."""
    server = start_redis()
    yield server
    server.stop()


@pytest.fixture
def key_prefix() -> str:
    """Keys of one test never meet another's on the shared server."""
    return f"test:{uuid.uuid4().hex[:12]}:"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


class Calls:
    """Counts tool executions, so tests can prove a call did or did not run."""

    def __init__(self) -> None:
        self.log: list[tuple[str, dict[str, Any]]] = []

    def names(self) -> list[str]:
        return [n for n, _ in self.log]


@pytest.fixture
def calls() -> Calls:
    return Calls()


@pytest.fixture
def travel_tools(calls: Calls) -> list[Any]:
    @tool
    def search_flights(from_city: str, to_city: str, passengers: int = 1) -> str:
        """Search flights from one city to another for a number of passengers."""
        calls.log.append(("search_flights", {"from_city": from_city, "to_city": to_city, "passengers": passengers}))
        return json.dumps([{"flight_id": "LH1", "from": from_city, "to": to_city}])

    @tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        calls.log.append(("get_weather", {"city": city}))
        return json.dumps({"city": city, "celsius": 14})

    @tool
    def transfer_money(to_account: str, amount: float) -> str:
        """Transfer an amount of money to an account."""
        calls.log.append(("transfer_money", {"to_account": to_account, "amount": amount}))
        return "ok"

    return [search_flights, get_weather, transfer_money]


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Six redis-server processes joined into one cluster (3 masters, 3 replicas), started at first
    use and stopped at the end of the session."""
    cluster = start_cluster(tmp_path_factory.mktemp("redis-cluster"))
    try:
        yield cluster
    finally:
        cluster.stop()


# Stores of each backend (over the session's real Redis, or its real cluster) so that one
# behavioural test runs against each: the state tests and the security tests share them; the state
# tests add the cluster to ``backend`` (tests/state/conftest.py).
@pytest.fixture(params=["memory", "redis"])
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


@pytest.fixture
def store(peers: tuple[StateStore, StateStore]) -> StateStore:
    return peers[0]
