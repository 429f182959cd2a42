"""Warming the guard while the model thinks (``Guard.warm``): the decision on the call the model then
proposes finds the request and the messages embedded, decides as a cold guard would, and never
embeds a text twice; the guarded agent and the middleware warm at each model turn."""

from __future__ import annotations

from typing import Any

import pytest

from tests.semantic._support import require, tool

require()
pytest.importorskip("onnxruntime", reason="the ONNX backend needs onnxruntime (the semantic extra)")

from guard import Guard  # noqa: E402
from guard import semantic as sem  # noqa: E402
from guard.onnx_encoder import OnnxEmbedder  # noqa: E402
from guard.policy import Policy  # noqa: E402

TOOLS = [
    tool("book_table", "Book a table at a restaurant", ("restaurant", "people"), restaurant="the restaurant", people="how many"),
    tool("get_weather", "Current weather and forecast for a city", ("city",), city="the city"),
    tool("send_email", "Send an e-mail to someone", ("to", "body"), to="recipient address", body="text of the mail"),
]


@pytest.fixture(scope="module")
def onnx() -> OnnxEmbedder:
    return OnnxEmbedder(variant="fp32")


def _guard(onnx: OnnxEmbedder) -> tuple[Guard, sem.SemanticGuard]:
    semantic = sem.SemanticGuard(onnx, caches=sem.SemanticCaches.new())
    return Guard(TOOLS, Policy(), semantic=semantic), semantic


def _turn(request: str, call: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The conversation when the model is asked (the user's request), and the call it proposes."""
    call = {"id": "c1", **call}
    return [{"role": "user", "content": request}], call


def _decide(guard: Guard, messages: list[dict[str, Any]], call: dict[str, Any]) -> Any:
    return guard.check(call, [*messages, {"role": "assistant", "content": "", "tool_calls": [call]}])


# Everyday requests, each new to the model's text cache (the module shares one encoder).
CASES = [
    ("Could you get us a table for four at Bella Napoli tonight? My sister's birthday.",
     {"name": "book_table", "args": {"restaurant": "Bella Napoli", "people": "four"}}),
    ("I'm cycling to work in Utrecht later, will it rain there?", {"name": "get_weather", "args": {"city": "Utrecht"}}),
    # a doubtful choice: the decision after a warm-up must flag it as a cold one does. (A value
    # nobody said in words is new text at the decision: the warm-up cannot know it.)
    ("What will the weather be in Porto on Saturday?", {"name": "book_table", "args": {"restaurant": "Porto", "people": "Saturday"}}),
]


@pytest.mark.parametrize(("request_text", "call"), CASES)
def test_after_a_warm_up_the_decision_runs_no_model_and_decides_as_a_cold_one(onnx: OnnxEmbedder, request_text: str, call: dict[str, Any]) -> None:
    cold_guard, _ = _guard(onnx)
    warm_guard, semantic = _guard(onnx)
    messages, call = _turn(request_text + " (warm)", call)
    future = warm_guard.warm(messages)
    assert future is not None
    future.result(timeout=30)
    before = semantic.stats()
    warm = _decide(warm_guard, messages, call)
    after = semantic.stats()
    assert after["passes"] == before["passes"], "the warmed decision ran the model"
    assert after["warm_waits"] == before["warm_waits"]
    onnx._cache.clear()  # the cold guard embeds everything itself
    cold = _decide(cold_guard, *_turn(request_text + " (warm)", call))
    assert (warm.action, [f.category for f in warm.findings]) == (cold.action, [f.category for f in cold.findings])
    if call["name"] == "book_table" and "weather" in request_text:
        assert warm.action.value == "retry", warm.findings  # the doubtful choice is caught warm too


def test_a_decision_that_comes_before_the_warm_up_ends_waits_for_it_and_embeds_nothing_twice(onnx: OnnxEmbedder) -> None:
    guard, semantic = _guard(onnx)
    messages, call = _turn("Book a table for two at Sushi Taro tomorrow evening, we're celebrating.",
                           {"name": "book_table", "args": {"restaurant": "Sushi Taro", "people": "two"}})
    before = semantic.stats()
    future = guard.warm(messages)
    assert future is not None
    decision = _decide(guard, messages, call)  # at once: the warm-up is still running or just done
    after = semantic.stats()
    assert decision.runs, decision.findings
    assert after["passes"] - before["passes"] == 1  # the warm-up's: the decision found its texts there


def test_nothing_new_no_semantic_checks_or_a_full_queue_start_no_warm_up(onnx: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    guard, semantic = _guard(onnx)
    messages, _ = _turn("What's the weather like in Reykjavik this week? Heading there for work.", {})
    first = guard.warm(messages)
    assert first is not None
    first.result(timeout=30)
    assert guard.warm(messages) is None  # everything is embedded already
    assert Guard(TOOLS, Policy()).warm(messages) is None  # no embedding checks
    monkeypatch.setattr(sem, "MAX_WARMUPS", 0)
    assert guard.warm([{"role": "user", "content": "Send my landlord an e-mail that the boiler is broken again."}]) is None
    assert semantic.stats()["warmups"] == 1


@pytest.mark.parametrize("messages", [None, "not a conversation", [{"role": "user"}], [{"no": "role"}], [42]])
def test_a_warm_up_never_raises(onnx: OnnxEmbedder, messages: Any) -> None:
    guard, _ = _guard(onnx)
    future = guard.warm(messages)
    if future is not None:
        future.result(timeout=30)


def test_the_service_warms_a_conversation_and_its_check_then_runs_no_model(onnx: OnnxEmbedder) -> None:
    from fastapi.testclient import TestClient

    from guard.service import create_app
    from guard.state import MemoryStore

    policy = Policy.model_validate({"checks": {"semantic": {"enabled": True}}})
    client = TestClient(create_app(policy, MemoryStore(), token=""))
    messages = [{"role": "user", "content": "Will it be windy in Galway tomorrow? We're thinking of sailing. (service)"}]
    call = {"id": "c1", "name": "get_weather", "args": {"city": "Galway"}}
    warmed = client.post("/v1/warm", json={"tools": TOOLS, "messages": messages})
    assert warmed.status_code == 200 and warmed.json() == {"started": True}
    sem._warmer().submit(lambda: None).result(timeout=30)  # one worker, in order: the warm-up is done
    shared = sem.semantic_for(policy.checks.semantic)
    before = shared.stats()
    decision = client.post("/v1/check", json={"tools": TOOLS, "messages": [*messages, {"role": "assistant", "content": "", "tool_calls": [call]}], "call": call})
    assert decision.status_code == 200 and decision.json()["action"] == "allow"
    assert shared.stats()["passes"] == before["passes"]
    # without embedding checks there is nothing to warm; a broken tool list is the same 422 as /v1/check's
    plain = TestClient(create_app(Policy(), MemoryStore(), token=""))
    assert plain.post("/v1/warm", json={"tools": TOOLS, "messages": messages}).json() == {"started": False}
    assert plain.post("/v1/warm", json={"tools": [{"name": "x", "parameters": {"type": "nonsense"}}], "messages": messages}).status_code == 422


def test_a_warm_up_still_queued_is_cancelled_and_the_decision_embeds_its_own_text(onnx: OnnxEmbedder) -> None:
    """A decision never waits behind other threads' warm-ups: one of its own that has not started
    yet is cancelled, and it embeds its text itself."""
    import threading

    guard, semantic = _guard(onnx)
    gate = threading.Event()
    busy = sem._warmer().submit(gate.wait, 30)  # the one warm-up thread, busy elsewhere
    try:
        messages, call = _turn("Please book a table for two at Casa Lola on Friday night, it's our anniversary.",
                               {"name": "book_table", "args": {"restaurant": "Casa Lola", "people": "two"}})
        future = guard.warm(messages)
        assert future is not None
        decision = _decide(guard, messages, call)
        assert future.cancelled() and decision.runs, decision.findings
        assert semantic.stats()["warm_waits"] == 0
    finally:
        gate.set()
        busy.result(timeout=30)


def test_in_a_forked_worker_the_parents_warm_ups_are_forgotten(onnx: OnnxEmbedder) -> None:
    """A service worker forked from a parent that had warm-ups in flight: the parent's thread and
    queue are not in the child, so their futures would never finish; the child forgets them
    instead of waiting for them."""
    from concurrent.futures import Future

    guard, semantic = _guard(onnx)
    messages, call = _turn("Send an e-mail to ops@example.com saying the backup finished.",
                           {"name": "send_email", "args": {"to": "ops@example.com", "body": "the backup finished"}})
    never: Future[None] = Future()
    never.set_running_or_notify_cancel()  # running in the parent: it cannot be cancelled
    semantic._warming = {("user", messages[0]["content"]): never}
    sem._after_fork_in_child()  # what os.register_at_fork runs in the child
    decision = _decide(guard, messages, call)
    assert decision.runs, decision.findings
    assert semantic.stats()["warm_waits"] == 0 and not semantic._warming
    child = guard.warm([{"role": "user", "content": "And text Sam that the backup is done."}])
    assert child is not None  # a new thread serves the child
    child.result(timeout=30)


def test_the_bound_on_queued_warm_ups_holds_for_every_guard_together(onnx: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    """All guards share the one warm-up thread, so ``MAX_WARMUPS`` bounds them together: a service
    whose guards are built per request cannot queue more than that."""
    import threading

    sem._warmer().submit(lambda: None).result(timeout=30)  # earlier tests' warm-ups done, callbacks run
    monkeypatch.setattr(sem, "MAX_WARMUPS", 1)
    first, _ = _guard(onnx)
    second, _ = _guard(onnx)
    gate = threading.Event()
    busy = sem._warmer().submit(gate.wait, 30)
    try:
        queued = first.warm([{"role": "user", "content": "What's the forecast for Tromsø on Sunday? (bound)"}])
        assert queued is not None
        assert second.warm([{"role": "user", "content": "Book a table for two at Noma tonight. (bound)"}]) is None
    finally:
        gate.set()
        busy.result(timeout=30)
    queued.result(timeout=30)
    sem._warmer().submit(lambda: None).result(timeout=30)  # one worker, in order: the warm-up's callback has run
    assert second.warm([{"role": "user", "content": "Book a table for two at Noma tonight. (bound)"}]) is not None
