"""A question refused at an escalation cap is counted (guard_escalations_total{outcome="refused"}),
so a flood of questions shows on the dashboard, not only as blocked calls."""

from __future__ import annotations

from fastapi.testclient import TestClient
from prometheus_client import CollectorRegistry

from guard.service import create_app
from guard.state import MemoryStore
from guard.telemetry import Telemetry
from tests.service.conftest import TOOLS


def test_questions_over_the_per_thread_cap_are_blocked_and_counted_as_refused():
    registry = CollectorRegistry()
    policy = {"escalation": {"max_pending_per_thread": 2}}
    client = TestClient(create_app(policy, store=MemoryStore(), telemetry=Telemetry(registry), token=""))
    body = {"tools": TOOLS, "messages": [{"role": "user", "content": "What is the weather like?"}],
            "call": {"name": "get_weather", "args": {"city": "Atlantis"}, "id": "c1"}, "thread_id": "flood"}
    answers = [client.post("/v1/check", json=body).json() for _ in range(4)]
    assert [a["action"] for a in answers] == ["ask_human", "ask_human", "block", "block"]
    assert answers[2]["escalation"] is None and "max_pending_per_thread" in answers[2]["escalation_refused"]

    def count(outcome: str) -> float | None:
        return registry.get_sample_value("guard_escalations_total", {"kind": "missing_information", "outcome": outcome})

    assert count("opened") == 2.0 and count("refused") == 2.0
