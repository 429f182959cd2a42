"""Telemetry: the guard's metrics carry bounded labels and its spans say what was decided, in the
trace of the tool call they guard."""

from __future__ import annotations

import importlib
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from prometheus_client import CollectorRegistry

from guard.engine import Guard
from guard.models import Decision
from guard.telemetry import (
    CHECK_SPAN,
    RESUME_SPAN,
    UNKNOWN_TOOL,
    Telemetry,
    configure_tracing_from_env,
    extract_context,
    inject_context,
    span_decision,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
ASKED_ABOUT_PARIS = [("user", "What is the weather in Paris?")]


def decide(name: str, args: dict[str, Any], policy: Any = None) -> Decision:
    """A real decision of the engine about one call after the user asked about Paris."""
    return Guard(TOOLS, policy).check({"name": name, "args": args, "id": "call_1"}, ASKED_ABOUT_PARIS)


def value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


# -- metrics -----------------------------------------------------------------------------------------


def test_a_clean_decision_counts_once_with_category_none(telemetry: Telemetry, registry: CollectorRegistry) -> None:
    telemetry.record_decision(decide("get_weather", {"city": "Paris"}))
    assert value(registry, "guard_decisions_total", tool="get_weather", action="allow", category="none") == 1


def test_a_decision_counts_once_per_finding_category(telemetry: Telemetry, registry: CollectorRegistry) -> None:
    decision = decide("get_weather", {"city": "Rome", "units": "C"})
    assert {c.value for c in decision.categories} == {"ungrounded_value", "unexpected_argument"}
    telemetry.record_decision(decision)
    for category in ("ungrounded_value", "unexpected_argument"):
        assert value(registry, "guard_decisions_total", tool="get_weather", action="ask_human", category=category) == 1


def test_tool_names_not_known_in_advance_share_one_label(telemetry: Telemetry, registry: CollectorRegistry) -> None:
    for invented in ("get_wether", "weather_now", "x" * 200):
        telemetry.record_decision(decide(invented, {"city": "Paris"}))
    assert value(registry, "guard_decisions_total", tool=UNKNOWN_TOOL, action="retry", category="unknown_tool") == 3
    tools = {s.labels["tool"] for m in registry.collect() for s in m.samples if "tool" in s.labels}
    assert tools <= {"get_weather", "search_flights", UNKNOWN_TOOL}


def test_check_duration_is_observed_in_seconds(telemetry: Telemetry, registry: CollectorRegistry) -> None:
    decision = decide("get_weather", {"city": "Paris"})
    decision.latency_ms = 2.0
    telemetry.record_decision(decision)
    assert value(registry, "guard_check_duration_seconds_bucket", le="0.001") == 0
    assert value(registry, "guard_check_duration_seconds_bucket", le="0.0025") == 1
    assert value(registry, "guard_check_duration_seconds_sum") == pytest.approx(0.002)


def test_retries_count_by_tool_and_category(telemetry: Telemetry, registry: CollectorRegistry) -> None:
    telemetry.record_retry("get_weather", "missing_argument")
    telemetry.record_retry("made_up", "unknown_tool")
    assert value(registry, "guard_retries_total", tool="get_weather", category="missing_argument") == 1
    assert value(registry, "guard_retries_total", tool=UNKNOWN_TOOL, category="unknown_tool") == 1
    with pytest.raises(ValueError):
        telemetry.record_retry("get_weather", "not a category")


def test_escalations_count_by_kind_and_outcome_and_time_the_wait(telemetry: Telemetry, registry: CollectorRegistry) -> None:
    telemetry.escalation_opened("missing_information")
    telemetry.escalation_closed("missing_information", "answered", wait_seconds=42.0)
    telemetry.escalation_opened("something new")
    telemetry.escalation_closed("something new", "expired", wait_seconds=3600.0)
    telemetry.set_pending(3)
    assert value(registry, "guard_escalations_total", kind="missing_information", outcome="opened") == 1
    assert value(registry, "guard_escalations_total", kind="missing_information", outcome="answered") == 1
    assert value(registry, "guard_escalations_total", kind="other", outcome="expired") == 1
    assert value(registry, "guard_escalation_wait_seconds_bucket", le="60.0") == 1
    assert value(registry, "guard_escalation_wait_seconds_count") == 2
    assert value(registry, "guard_escalations_pending") == 3
    with pytest.raises(ValueError):
        telemetry.escalation_closed("approval", "opened", wait_seconds=1.0)  # type: ignore[arg-type]


def test_tool_errors_circuits_and_backend_errors(telemetry: Telemetry, registry: CollectorRegistry) -> None:
    telemetry.record_tool_error("search_flights", "tool_timeout")
    telemetry.record_tool_error("search_flights", "segfault")
    telemetry.set_circuit("search_flights", "open")
    telemetry.set_circuit("get_weather", "half_open")
    telemetry.set_circuit("elsewhere", "closed")
    telemetry.backend_error("incr_retries", RuntimeError("down"))
    assert value(registry, "guard_tool_errors_total", tool="search_flights", kind="tool_timeout") == 1
    assert value(registry, "guard_tool_errors_total", tool="search_flights", kind="other") == 1
    assert value(registry, "guard_circuit_state", tool="search_flights") == 2
    assert value(registry, "guard_circuit_state", tool="get_weather") == 1
    assert value(registry, "guard_circuit_state", tool=UNKNOWN_TOOL) == 0
    assert value(registry, "guard_state_backend_errors_total") == 1


def test_two_telemetries_in_one_process_do_not_clash() -> None:
    a, b = Telemetry(), Telemetry()
    a.backend_error()
    assert b.registry.get_sample_value("guard_state_backend_errors_total") == 0
    assert b"guard_state_backend_errors_total 1.0" in a.exposition()[0]


def test_multiprocess_exposition_sums_every_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    worker = textwrap.dedent(
        """
        from guard.models import Decision, ToolCall
        from guard.telemetry import Telemetry
        Telemetry(known_tools=["get_weather"]).record_decision(Decision(action="allow", call=ToolCall(name="get_weather")))
        """
    )
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    workers = [subprocess.Popen([sys.executable, "-c", worker], env=env, cwd=Path(__file__).parents[2]) for _ in range(2)]
    assert [w.wait(timeout=30) for w in workers] == [0, 0]
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    body, content_type = Telemetry().exposition()
    assert content_type.startswith("text/plain")
    assert 'guard_decisions_total{action="allow",category="none",tool="get_weather"} 2.0' in body.decode()


def test_importing_without_the_extra_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "prometheus_client", None)  # None in sys.modules: "not installed"
    monkeypatch.delitem(sys.modules, "guard.telemetry")
    from guard.extras import install_hint

    with pytest.raises(ImportError) as raised:
        importlib.import_module("guard.telemetry")
    # this project's extra as it resolves (its checkout), never PyPI's unrelated 'guard'
    assert install_hint("telemetry") in str(raised.value) and "[telemetry]" in str(raised.value)


# -- spans -------------------------------------------------------------------------------------------


def test_the_check_span_carries_the_decision(telemetry: Telemetry, spans: InMemorySpanExporter) -> None:
    decision = decide("get_weather", {"city": "Paris"})
    with telemetry.check_span("get_weather", "call_1") as span:
        span_decision(span, decision, retry_count=1)
    (finished,) = spans.get_finished_spans()
    assert finished.name == CHECK_SPAN
    assert dict(finished.attributes or {}) == {
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": "call_1",
        "guard.action": "allow",
        "guard.categories": (),
        "guard.policy.hash": decision.policy_hash,
        "guard.retry_count": 1,
    }
    assert finished.status.status_code is StatusCode.UNSET


def test_the_check_span_is_a_child_of_the_tool_execution_span(
    telemetry: Telemetry, tracer_provider: TracerProvider, spans: InMemorySpanExporter
) -> None:
    with tracer_provider.get_tracer("agent").start_as_current_span("execute_tool get_weather") as outer:
        with telemetry.check_span("get_weather", "call_1") as span:
            span_decision(span, decide("get_weather", {"city": "Paris"}), retry_count=0)
    check, tool = spans.get_finished_spans()
    assert check.parent is not None and check.parent.span_id == outer.get_span_context().span_id
    assert check.context.trace_id == tool.context.trace_id


def test_asking_the_human_is_not_an_error(telemetry: Telemetry, spans: InMemorySpanExporter) -> None:
    decision = decide("get_weather", {"city": "Rome"})
    with telemetry.check_span("get_weather", "call_1") as span:
        span_decision(span, decision, retry_count=0)
    (finished,) = spans.get_finished_spans()
    assert finished.attributes["guard.action"] == "ask_human"
    assert finished.attributes["guard.categories"] == ("ungrounded_value",)
    assert finished.status.status_code is not StatusCode.ERROR


def test_a_blocked_call_is_an_error_span_with_the_reason(telemetry: Telemetry, spans: InMemorySpanExporter) -> None:
    decision = decide("get_wether", {"city": "Paris"}, policy={"actions": {"unknown_tool": "block"}})
    with telemetry.check_span("get_wether", "call_1") as span:
        span_decision(span, decision, retry_count=0)
    (finished,) = spans.get_finished_spans()
    assert finished.status.status_code is StatusCode.ERROR
    assert "get_wether" in (finished.status.description or "")


def test_an_answer_received_later_continues_the_questions_trace(
    telemetry: Telemetry, tracer_provider: TracerProvider, spans: InMemorySpanExporter
) -> None:
    with tracer_provider.get_tracer("agent").start_as_current_span("agent turn"):
        with telemetry.check_span("get_weather", "call_1") as asked:
            carrier = inject_context()
    assert carrier["traceparent"].split("-")[2] == format(asked.get_span_context().span_id, "016x")
    restored = extract_context(carrier)
    with telemetry.check_span("get_weather", "call_1", parent=restored) as rechecked:
        pass
    with telemetry.resume_span(carrier, "esc-1"):
        pass
    resumed = next(s for s in spans.get_finished_spans() if s.name == RESUME_SPAN)
    assert resumed.context.trace_id == asked.get_span_context().trace_id
    assert resumed.parent is not None and resumed.parent.span_id == asked.get_span_context().span_id
    assert resumed.attributes["guard.escalation.id"] == "esc-1"
    assert rechecked.get_span_context().trace_id == asked.get_span_context().trace_id


# -- configuration from the environment ---------------------------------------------------------------


@pytest.fixture
def otel_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for suffix in ("TRACES_EXPORTER", "SERVICE_NAME", "EXPORTER_OTLP_ENDPOINT", "EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(f"OTEL_{suffix}", raising=False)
    return monkeypatch


def test_without_otel_settings_nothing_is_exported(otel_env: pytest.MonkeyPatch) -> None:
    assert configure_tracing_from_env(install=False) is None
    otel_env.setenv("OTEL_TRACES_EXPORTER", "none")
    assert configure_tracing_from_env(install=False) is None


def test_the_console_exporter_prints_spans_with_the_service_name(
    otel_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    otel_env.setenv("OTEL_TRACES_EXPORTER", "console")
    otel_env.setenv("OTEL_SERVICE_NAME", "guard-test")
    provider = configure_tracing_from_env(install=False)
    assert provider is not None
    with Telemetry(tracer_provider=provider).check_span("get_weather", "call_1"):
        pass
    provider.force_flush()
    out = capsys.readouterr().out
    assert '"name": "guard.check"' in out and '"service.name": "guard-test"' in out
    provider.shutdown()


def test_otlp_without_its_package_falls_back_to_none_with_a_warning(
    otel_env: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    otel_env.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")  # otlp is then the default
    otel_env.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http.trace_exporter", None)
    with caplog.at_level(logging.WARNING, logger="guard.telemetry"):
        assert configure_tracing_from_env(install=False) is None
    assert "pip install opentelemetry-exporter-otlp" in caplog.text
