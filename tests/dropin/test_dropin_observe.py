"""Observe mode: the guard checks and records every call and changes nothing.

The same scripted graph runs once with LangGraph's ``ToolNode`` and once with ``GuardedToolNode``
under ``mode: observe``; the resulting messages must be the same, field for field (only the ids
LangGraph draws at random differ), in the cases the enforcing guard would step in: an unknown
tool, wrong-typed arguments, an invented value, a failing tool, an exception that leaves the node.
The decisions are recorded all the same (metrics, spans).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from guard import GuardedToolNode
from guard.middleware import GuardMiddleware
from guard.telemetry import Telemetry
from tests.support import scripted

OBSERVE = {"mode": "observe", "backoff": {"initial_seconds": 0, "max_seconds": 0, "jitter_seconds": 0}}


def make_tools(log: list[str]) -> list[Any]:
    @tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        log.append(f"get_weather:{city}")
        return f"sunny in {city}"

    @tool
    def book_room(hotel: str, nights: int) -> str:
        """Book a hotel room for a number of nights."""
        log.append(f"book_room:{hotel}")
        return f"booked {hotel} for {nights}"

    @tool
    def flaky(city: str) -> str:
        """A service that times out."""
        log.append(f"flaky:{city}")
        raise TimeoutError("upstream took too long")

    @tool
    def broken(city: str) -> str:
        """A service with a bug."""
        log.append(f"broken:{city}")
        raise ValueError("bug in the service")

    return [get_weather, book_room, flaky, broken]


def batch(*calls: tuple[str, dict[str, Any], str]) -> list[Any]:
    ai = AIMessage(content="", tool_calls=[{"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in calls])
    return [HumanMessage("What's the weather in Paris? Book me the Ritz for two nights."), ai]


#: Each case: the enforcing guard would refuse, repair, ask or retry at least one call of it.
CASES = {
    "unknown tool": batch(("get_wether", {"city": "Paris"}, "c1")),
    "wrong type and a repairable value": batch(("book_room", {"hotel": "Ritz", "nights": "two"}, "c1"),
                                               ("book_room", {"hotel": "Ritz", "nights": "2"}, "c2")),
    "invented value": batch(("get_weather", {"city": "Atlantis"}, "c1")),
    "missing argument": batch(("book_room", {"hotel": "Ritz"}, "c1")),
    "transient failure": batch(("flaky", {"city": "Paris"}, "c1"), ("get_weather", {"city": "Paris"}, "c2")),
}


def graph_of(node: Any) -> Any:
    graph = StateGraph(MessagesState)
    graph.add_node("tools", node)
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile()


def fields(messages: list[Any]) -> list[dict[str, Any]]:
    """Every field of every message but the id, which LangGraph draws at random."""
    return [{"type": type(m).__name__, **m.model_dump(exclude={"id"})} for m in messages]


def run_both(messages: list[Any], **node_kwargs: Any) -> tuple[Any, Any, list[str], list[str], Telemetry]:
    plain_log: list[str] = []
    guarded_log: list[str] = []
    telemetry = Telemetry(known_tools=["get_weather", "book_room", "flaky", "broken"])
    plain = graph_of(ToolNode(make_tools(plain_log), **node_kwargs))
    guarded = graph_of(GuardedToolNode(make_tools(guarded_log), OBSERVE, telemetry=telemetry, **node_kwargs))
    return plain, guarded, plain_log, guarded_log, telemetry


def tool_errors(telemetry: Telemetry) -> float:
    return sum(
        s.value for metric in telemetry.registry.collect() for s in metric.samples if s.name == "guard_tool_errors_total"
    )


def decisions(telemetry: Telemetry) -> dict[tuple[str, str], float]:
    return {
        (s.labels["action"], s.labels["category"]): s.value
        for metric in telemetry.registry.collect()
        for s in metric.samples
        if s.name == "guard_decisions_total"
    }


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("handle_tool_errors", [True, "the tool failed"])
def test_observe_mode_leaves_every_message_as_toolnode_makes_it(case, handle_tool_errors):
    plain, guarded, plain_log, guarded_log, telemetry = run_both(CASES[case], handle_tool_errors=handle_tool_errors)
    expected = plain.invoke({"messages": CASES[case]})["messages"]
    got = guarded.invoke({"messages": CASES[case]})["messages"]
    assert fields(got) == fields(expected)
    assert sorted(guarded_log) == sorted(plain_log)  # the same tools ran (in parallel), as often: no retry, no refusal
    assert all("guard" not in m.response_metadata for m in got if isinstance(m, ToolMessage))
    # what the enforcing guard would have done is on record: a refusal, repair or question
    # before the call, or a tool failure after it (which it would have retried)
    assert sum(v for (action, _), v in decisions(telemetry).items() if action != "allow") + tool_errors(telemetry) >= 1


async def test_observe_mode_async_is_the_same_as_toolnode():
    messages = CASES["wrong type and a repairable value"]
    plain, guarded, *_ = run_both(messages, handle_tool_errors=True)
    expected = (await plain.ainvoke({"messages": messages}))["messages"]
    got = (await guarded.ainvoke({"messages": messages}))["messages"]
    assert fields(got) == fields(expected)


@pytest.mark.parametrize("handle_tool_errors", [False, (TypeError,)])
def test_observe_mode_lets_the_same_exception_leave_the_node(handle_tool_errors):
    messages = batch(("broken", {"city": "Paris"}, "c1"))
    plain, guarded, plain_log, guarded_log, _ = run_both(messages, handle_tool_errors=handle_tool_errors)
    with pytest.raises(ValueError, match="bug in the service"):
        plain.invoke({"messages": messages})
    with pytest.raises(ValueError, match="bug in the service"):
        guarded.invoke({"messages": messages})
    assert guarded_log == plain_log == ["broken:Paris"]


def test_observe_mode_records_what_enforcing_would_have_done():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry = Telemetry(tracer_provider=provider, known_tools=["get_weather"])
    node = GuardedToolNode(make_tools([]), OBSERVE, telemetry=telemetry, handle_tool_errors=True)
    graph_of(node).invoke({"messages": CASES["unknown tool"]})
    assert decisions(telemetry)[("retry", "unknown_tool")] == 1
    (span,) = exporter.get_finished_spans()
    assert span.name == "guard.check" and span.attributes["guard.action"] == "retry"


class PassThrough(AgentMiddleware):
    """What the guard is compared with: a middleware in the same slot that changes nothing."""

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        return handler(request)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        return await handler(request)


def bindable(script: list[AIMessage]) -> Any:
    model = scripted(script)
    object.__setattr__(model, "bind_tools", lambda tools, **kw: model)
    return model


@pytest.mark.parametrize("case", sorted(CASES))
def test_observe_middleware_leaves_the_agent_as_it_is(case):
    script = [CASES[case][-1]]
    runs = []
    for middleware in (PassThrough(), GuardMiddleware(OBSERVE)):
        log: list[str] = []
        agent = create_agent(bindable(script), make_tools(log), middleware=[middleware])
        try:
            outcome: Any = fields(agent.invoke({"messages": [CASES[case][0]]})["messages"])
        except Exception as exc:  # create_agent's tool node lets a TimeoutError out: so must the guard
            outcome = repr(exc)
        runs.append((outcome, sorted(log)))  # parallel calls run in any order
    assert runs[1] == runs[0]
