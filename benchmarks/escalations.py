"""What opening and answering an escalation costs as the backlog of pending ones grows.

For each store (memory; Redis, a throwaway ``redis-server`` on a free 127.0.0.1 port) and each
backlog (by default 100 and 1,500 escalations already pending, each holding a realistic question),
the service (``create_app``, through Starlette's TestClient, in process) answers ``--samples``
``POST /v1/check`` requests whose call asks the human, so each registers one more escalation, then
``--samples`` ``POST /v1/escalations/{id}/resolve``. Prints the median and mean milliseconds per
request. Escalation create/resolve should cost the same at either backlog.

    python -m guard_bench.escalations [--backlogs 100 1500] [--samples 100]
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid
from collections.abc import Sequence
from typing import Any

from fastapi.testclient import TestClient
from prometheus_client import CollectorRegistry

from guard_bench.throughput import RedisServer
from guard.policy import Policy
from guard.service import create_app
from guard.state import Escalation, MemoryStore, ResilientStore, StateStore
from guard.telemetry import Telemetry

TOOL = {
    "type": "function",
    "function": {
        "name": "search_flights",
        "description": "Search flights from one city to another.",
        "parameters": {
            "type": "object",
            "properties": {"from_city": {"type": "string"}, "to_city": {"type": "string"}, "passengers": {"type": "integer"}},
            "required": ["from_city", "to_city"],
        },
    },
}
USER = "Find flights from Berlin to Paris for two people."
#: Asks the human: the user never said Rome.
ASKING = {"from_city": "Rome", "to_city": "Paris", "passengers": 2}
POLICY = Policy.model_validate({"escalation": {"max_pending": 1_000_000, "max_pending_per_thread": 1_000_000}})


def check_body(thread_id: str) -> dict[str, Any]:
    return {
        "tools": [TOOL],
        "messages": [{"role": "user", "content": USER}],
        "call": {"name": "search_flights", "args": ASKING, "id": "call_1"},
        "thread_id": thread_id,
    }


def make_store(kind: str, redis_url: str | None) -> StateStore:
    if kind == "memory":
        return ResilientStore(MemoryStore(), "fail_closed")
    from guard.state.redis import RedisStore

    return ResilientStore(RedisStore(redis_url or "", key_prefix=f"bench:{uuid.uuid4().hex[:8]}:"), "fail_closed")


def ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:7.2f} / {statistics.mean(samples) * 1000:7.2f}"


def measure(kind: str, backlog: int, samples: int, redis_url: str | None) -> tuple[list[float], list[float]]:
    store = make_store(kind, redis_url)
    client = TestClient(create_app(POLICY, store, Telemetry(CollectorRegistry(), known_tools=["search_flights"]), token=""))
    template = client.post("/v1/check", json=check_body("template")).json()["escalation"]
    assert template is not None, "the benchmark's call must register an escalation"
    for i in range(backlog - 1):  # the backlog, as the service stores it (one already is)
        store.put_escalation(Escalation.model_validate({**template, "id": uuid.uuid4().hex, "thread_id": f"old-{i}"}))
    opened, ids = [], []
    for i in range(samples):
        start = time.perf_counter()
        escalation = client.post("/v1/check", json=check_body(f"new-{i}")).json()["escalation"]
        opened.append(time.perf_counter() - start)
        ids.append(escalation["id"])
    answered = []
    for eid in ids:
        start = time.perf_counter()
        response = client.post(f"/v1/escalations/{eid}/resolve", json={"action": "reject", "reason": "bench"})
        answered.append(time.perf_counter() - start)
        assert response.status_code == 200, response.text
    store.close()
    return opened, answered


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backlogs", type=int, nargs="+", default=[100, 1500])
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--stores", nargs="+", default=["memory", "redis"], choices=["memory", "redis"])
    args = parser.parse_args(argv)
    redis = RedisServer() if "redis" in args.stores else None
    try:
        print("| store | pending before | open: ms median / mean | resolve: ms median / mean |")
        print("|---|---:|---:|---:|")
        for kind in args.stores:
            for backlog in args.backlogs:
                opened, answered = measure(kind, backlog, args.samples, redis.url if redis else None)
                print(f"| {kind} | {backlog} | {ms(opened)} | {ms(answered)} |", flush=True)
    finally:
        if redis is not None:
            redis.stop()


if __name__ == "__main__":
    main()
