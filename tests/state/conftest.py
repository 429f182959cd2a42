"""The state tests run each behavioural test on three backends: in memory, one real redis-server,
and a real Redis Cluster of 3 masters and 3 replicas (``redis_cluster`` in tests/conftest.py,
started once for the session, on first use); ``peers`` (tests/conftest.py) builds the stores."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["memory", "redis", "redis-cluster"])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param
