"""The guarded node reports to real OpenTelemetry and Prometheus clients: a span and a decision per
call, escalations opened and answered once across the interrupt/resume, tool errors by kind."""

from __future__ import annotations

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client import CollectorRegistry

from guard_graphs import build_guarded_agent
from guard.telemetry import Telemetry
from tests.support import FAST, ai_call, scripted


def test_node_spans_and_metrics_across_an_interrupt(travel_tools, calls):
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    registry = CollectorRegistry()
    telemetry = Telemetry(registry=registry, tracer_provider=provider, known_tools=["get_weather", "search_flights"])
    agent = build_guarded_agent(
        scripted([ai_call("get_weather", {"city": "Oslo"}, "c1"), ai_call("get_wether", {"city": "Bergen"}, "c2")]),
        travel_tools, FAST, checkpointer=InMemorySaver(), telemetry=telemetry,
    )
    config = {"configurable": {"thread_id": "tel"}}
    with provider.get_tracer("app").start_as_current_span("agent run") as outer:
        result = agent.invoke({"messages": [("user", "Weather where I'm going?")]}, config)
    carrier = result["__interrupt__"][0].value["trace_context"]
    assert f"{outer.get_span_context().trace_id:032x}" in carrier["traceparent"]  # the resume can join this trace
    agent.invoke(Command(resume={"c1": {"action": "answer", "values": {"city": "Bergen"}}}), config)

    def value(name, **labels):
        return registry.get_sample_value(name, labels) or 0.0

    assert value("guard_escalations_total", kind="missing_information", outcome="opened") == 1
    assert value("guard_escalations_total", kind="missing_information", outcome="answered") == 1
    assert value("guard_decisions_total", tool="get_weather", action="ask_human", category="ungrounded_value") >= 1
    assert value("guard_decisions_total", tool="__unknown__", action="retry", category="unknown_tool") == 1
    assert value("guard_retries_total", tool="__unknown__", category="unknown_tool") == 1
    spans = [s for s in exporter.get_finished_spans() if s.name == "guard.check"]
    assert {s.attributes["guard.action"] for s in spans} >= {"ask_human", "retry"}
    assert all(s.status.is_ok or s.attributes["guard.action"] == "block" for s in spans)


def test_tool_errors_are_counted_by_kind():
    from langchain_core.tools import tool

    @tool
    def flaky(city: str) -> str:
        """Always times out."""
        raise TimeoutError("slow")

    registry = CollectorRegistry()
    telemetry = Telemetry(registry=registry, known_tools=["flaky"])
    agent = build_guarded_agent(scripted([ai_call("flaky", {"city": "Paris"})]), [flaky], FAST, telemetry=telemetry)
    agent.invoke({"messages": [("user", "Paris")]})
    assert registry.get_sample_value("guard_tool_errors_total", {"tool": "flaky", "kind": "tool_timeout"}) == 3
