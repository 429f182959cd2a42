"""Metrics and traces of the guard: every metric and span name lives here, and nowhere else.

Dashboards and alerts are written against these names, so they are defined once and the adapters
(``GuardedToolNode``, the HTTP service) only call ``Telemetry``'s methods.

Label values are bounded, because every distinct value is a time series that Prometheus keeps:
tool names outside ``known_tools`` collapse to ``"__unknown__"`` (a model inventing tool names
must not be able to grow the metrics without limit), actions and categories are the taxonomy's
enums, escalation kinds and tool-error kinds fall back to ``"other"``.

Metrics (Prometheus)::

    guard_decisions_total{tool,action,category}   one per finding category of a decision ("none" if clean)
    guard_check_duration_seconds                  histogram of Guard.check, 50 µs .. 1 s
    guard_retries_total{tool,category}            the model sent back, by what it got wrong
    guard_escalations_total{kind,outcome}         opened, answered, approved, edited, rejected, expired
    guard_escalations_pending                     gauge: questions waiting for a human
    guard_escalation_wait_seconds                 histogram: how long the human took
    guard_tool_errors_total{tool,kind}            failures reported after a tool ran
    guard_circuit_state{tool}                     gauge: 0 closed, 1 half open, 2 open
    guard_state_backend_errors_total              shared-state operations that failed (Redis down)
    guard_shadow_disagreements_total{active_action,shadow_action,category}
                                                  calls the shadow policy decided otherwise (guard.shadow)

Traces (OpenTelemetry): one ``guard.check`` span per check, a child of the current span (the
tool-execution span of an instrumented agent), carrying ``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``guard.action``, ``guard.categories``, ``guard.policy.hash`` and
``guard.retry_count``. A blocked call is an error span; a question to the human is not (asking is
the guard working). ``inject_context`` captures the trace context (W3C ``traceparent``) so that an
escalation can store it, and the answer, received later by any replica, continues the same trace
(``resume_span``).

Several worker processes (gunicorn, ``uvicorn --workers N``): each process counts in its own
memory, so one worker's ``/metrics`` would show a fraction of the truth. Set
``PROMETHEUS_MULTIPROC_DIR`` to an empty directory before the workers start; prometheus_client then
writes every worker's values to files there, and ``exposition()`` serves the sum through
``prometheus_client.multiprocess.MultiProcessCollector``. With gunicorn::

    rm -rf /tmp/guard-metrics && mkdir /tmp/guard-metrics
    PROMETHEUS_MULTIPROC_DIR=/tmp/guard-metrics \\
        gunicorn -w 4 -k uvicorn_worker.UvicornWorker 'guard.service:app_from_env()'

(a ``child_exit`` hook calling ``prometheus_client.multiprocess.mark_process_dead(worker.pid)``
drops a dead worker's gauges). ``guard serve --workers N`` sets a fresh directory itself when the
variable is unset.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Literal, get_args

from guard.extras import install_hint

try:
    from opentelemetry import propagate, trace
    from opentelemetry.context import Context
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        ConsoleSpanExporter,
        SpanExporter,
    )
    from opentelemetry.trace import Span, Status, StatusCode
    from prometheus_client import (
        CONTENT_TYPE_LATEST,
        CollectorRegistry,
        Counter,
        Gauge,
        Histogram,
        generate_latest,
    )
    from prometheus_client.multiprocess import MultiProcessCollector
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        f"guard.telemetry needs OpenTelemetry and prometheus-client ({exc.name} is missing): "
        f"{install_hint('telemetry')}"
    ) from exc

from langgraph.errors import GraphInterrupt

from guard.models import Decision
from guard.taxonomy import TOOL_ERROR_CATEGORIES, Action, Category

log = logging.getLogger(__name__)

#: The label value of every tool name that is not known in advance.
UNKNOWN_TOOL = "__unknown__"
#: The label value of an escalation kind or tool-error kind outside the known set.
OTHER = "other"

CHECK_SPAN = "guard.check"
RESUME_SPAN = "guard.escalation.resolve"

EscalationOutcome = Literal["opened", "refused", "answered", "approved", "edited", "rejected", "expired"]
CircuitState = Literal["closed", "half_open", "open"]

#: The kinds ``guard.engine`` gives an escalation, plus "mixed" for a batch of several kinds.
ESCALATION_KINDS = frozenset({"approval", "budget_exhausted", "missing_information", "tool_unavailable", "review", "mixed"})
_CLOSED_OUTCOMES = frozenset(get_args(EscalationOutcome)) - {"opened", "refused"}
#: A resume answer's action -> the escalation outcome it counts as.
_ANSWER_OUTCOMES: dict[str, EscalationOutcome] = {"answer": "answered", "approve": "approved", "edit": "edited", "reject": "rejected"}
_TOOL_ERROR_KINDS = frozenset(c.value for c in TOOL_ERROR_CATEGORIES)
_CIRCUIT_VALUES: dict[str, int] = {"closed": 0, "half_open": 1, "open": 2}

#: Guard.check takes tens of microseconds on small schemas and milliseconds on large conversations.
CHECK_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
#: Humans answer in seconds to hours (the default escalation TTL is one hour).
WAIT_BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, 21600.0, 86400.0)


class Telemetry:
    """The guard's metrics in one Prometheus registry and its spans from one tracer.

    ``registry`` defaults to a fresh ``CollectorRegistry`` (not the global one), so several guards
    or apps in one process never clash over metric names. ``tracer_provider`` defaults to the
    global one (a no-op until ``configure_tracing_from_env`` or the application sets one).
    """

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        tracer_provider: TracerProvider | None = None,
        known_tools: Iterable[str] = (),
    ) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.known_tools = frozenset(known_tools)
        provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
        self._tracer = provider.get_tracer("guard")
        r = self.registry
        self.decisions = Counter(
            "guard_decisions_total", "Guard decisions, one per finding category", ["tool", "action", "category"], registry=r
        )
        self.check_duration = Histogram(
            "guard_check_duration_seconds", "Time to check one tool call", buckets=CHECK_BUCKETS, registry=r
        )
        self.retries = Counter("guard_retries_total", "Calls sent back to the model", ["tool", "category"], registry=r)
        self.warnings = Counter(
            "guard_warnings_total", "Findings a call ran with (the policy rated them warn)", ["tool", "category"], registry=r
        )
        self.escalations = Counter(
            "guard_escalations_total", "Questions to a human, by what became of them", ["kind", "outcome"], registry=r
        )
        # Pending escalations and circuits are read from the shared store, so every worker reports
        # the same number: the most recent report is the truth, a sum over workers would not be.
        self.escalations_pending = Gauge(
            "guard_escalations_pending", "Escalations waiting for a human", registry=r, multiprocess_mode="mostrecent"
        )
        self.escalation_wait = Histogram(
            "guard_escalation_wait_seconds", "Time from a question to its answer or expiry", buckets=WAIT_BUCKETS, registry=r
        )
        self.tool_errors = Counter(
            "guard_tool_errors_total", "Tool failures reported after the call ran", ["tool", "kind"], registry=r
        )
        self.circuit_state = Gauge(
            "guard_circuit_state", "Circuit breaker per tool: 0 closed, 1 half open, 2 open", ["tool"],
            registry=r, multiprocess_mode="mostrecent",
        )
        self.backend_errors = Counter(
            "guard_state_backend_errors_total", "Shared-state operations that failed", registry=r
        )
        self.shadow_disagreements = Counter(
            "guard_shadow_disagreements_total",
            "Calls the shadow policy decided otherwise than the active one, per category of either decision",
            ["active_action", "shadow_action", "category"], registry=r,
        )

    # -- bounded label values ---------------------------------------------------------------------

    def tool_label(self, tool: str | None) -> str:
        return tool if tool in self.known_tools else UNKNOWN_TOOL

    # -- metrics ----------------------------------------------------------------------------------

    def record_decision(self, decision: Decision) -> None:
        tool, action = self.tool_label(decision.call.name), decision.action.value
        for category in [c.value for c in decision.categories] or ["none"]:
            self.decisions.labels(tool, action, category).inc()
        for warning in decision.warnings:
            self.warnings.labels(tool, warning.category.value).inc()
        self.check_duration.observe(decision.latency_ms / 1000)
        shadow = decision.shadow
        if shadow is not None and shadow.disagrees:
            for category in shadow.disagreement_categories():
                self.shadow_disagreements.labels(shadow.active_action, shadow.action, category).inc()

    def record_retry(self, tool: str | None, category: Category | str) -> None:
        self.retries.labels(self.tool_label(tool), Category(category).value).inc()

    def escalation_opened(self, kind: str | None) -> None:
        self.escalations.labels(_kind(kind), "opened").inc()

    def escalation_refused(self, kind: str | None) -> None:
        """A question not registered: over an ``escalation`` cap or its size limit."""
        self.escalations.labels(_kind(kind), "refused").inc()

    def escalation_closed(self, kind: str | None, outcome: EscalationOutcome, wait_seconds: float | None) -> None:
        """``wait_seconds`` is None where the wait is unknown (a LangGraph resume does not say when
        the question was asked); the wait histogram then has no sample for it."""
        if outcome not in _CLOSED_OUTCOMES:
            raise ValueError(f"not an outcome of a closed escalation: {outcome!r}")
        self.escalations.labels(_kind(kind), outcome).inc()
        if wait_seconds is not None:
            self.escalation_wait.observe(max(0.0, wait_seconds))

    def set_pending(self, n: int) -> None:
        self.escalations_pending.set(n)

    def record_tool_error(self, tool: str | None, kind: Category | str) -> None:
        label = str(kind.value if isinstance(kind, Category) else kind)
        if label not in _TOOL_ERROR_KINDS:
            label = OTHER
        self.tool_errors.labels(self.tool_label(tool), label).inc()

    def set_circuit(self, tool: str, state: CircuitState) -> None:
        self.circuit_state.labels(self.tool_label(tool)).set(_CIRCUIT_VALUES[state])

    def backend_error(self, *_: object) -> None:
        """Count one failed shared-state operation; fits ``ResilientStore(on_error=...)``."""
        self.backend_errors.inc()

    def exposition(self) -> tuple[bytes, str]:
        """The ``/metrics`` body and content type: this registry, or every worker's files when
        ``PROMETHEUS_MULTIPROC_DIR`` is set (see the module docstring)."""
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            registry = CollectorRegistry()
            MultiProcessCollector(registry)
            return generate_latest(registry), CONTENT_TYPE_LATEST
        return generate_latest(self.registry), CONTENT_TYPE_LATEST

    # -- adapters ---------------------------------------------------------------------------------

    def traced_check(self, check: Callable[[], Decision], tool: str | None, call_id: str | None, retry_count: int) -> Decision:
        """Run one guard check inside its ``guard.check`` span and count the decision."""
        with self.check_span(tool, call_id) as span:
            decision = check()
            span_decision(span, decision, retry_count)
        self.record_decision(decision)
        if decision.action is Action.RETRY:
            for category in decision.categories:
                self.record_retry(tool, category)
        return decision

    def observed_ask(self, ask: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
        """Wrap ``interrupt``: an escalation is opened when it pauses the graph and closed when a
        resume value comes back (LangGraph re-runs the node, so each is counted once)."""

        def wrapped(payload: dict[str, Any]) -> Any:
            payload = {**payload, "trace_context": inject_context()}
            try:
                answer = ask(payload)
            except GraphInterrupt:
                self.escalation_opened(payload.get("kind"))
                raise
            for call_id in payload.get("tool_call_ids", []):
                raw = answer.get(call_id) if isinstance(answer, dict) else None
                action = raw.get("action") if isinstance(raw, dict) else "answer"
                outcome = _ANSWER_OUTCOMES.get(str(action), "answered")
                self.escalation_closed(payload.get("kind"), outcome, None)
            return answer

        return wrapped

    # -- traces -----------------------------------------------------------------------------------

    @contextmanager
    def check_span(self, tool_name: str | None, tool_call_id: str | None, parent: Context | None = None) -> Iterator[Span]:
        """A ``guard.check`` span, the child of ``parent`` or else of the current span; set the
        decision on it with ``span_decision``."""
        attributes = {"gen_ai.tool.name": tool_name or "", "gen_ai.tool.call.id": tool_call_id or ""}
        with self._tracer.start_as_current_span(CHECK_SPAN, context=parent, attributes=attributes) as span:
            yield span

    @contextmanager
    def resume_span(self, carrier: Mapping[str, str], escalation_id: str) -> Iterator[Span]:
        """A span for the answer to an escalation, in the trace the question was raised in
        (``carrier`` is what ``inject_context`` returned then)."""
        attributes = {"guard.escalation.id": escalation_id}
        with self._tracer.start_as_current_span(RESUME_SPAN, context=extract_context(carrier), attributes=attributes) as span:
            yield span


def span_decision(span: Span, decision: Decision, retry_count: int) -> None:
    """Record a decision on its ``guard.check`` span. Only a block is an error."""
    span.set_attribute("gen_ai.tool.name", decision.call.name or "")
    span.set_attribute("gen_ai.tool.call.id", decision.call.id or "")
    span.set_attribute("guard.action", decision.action.value)
    span.set_attribute("guard.categories", [c.value for c in decision.categories])
    span.set_attribute("guard.policy.hash", decision.policy_hash)
    span.set_attribute("guard.retry_count", retry_count)
    for warning in decision.warnings:
        span.add_event(
            "guard.warning",
            {
                "guard.category": warning.category.value,
                "guard.path": warning.path,
                "guard.confidence": warning.confidence,
                "guard.message": warning.message,
            },
        )
    if decision.action is Action.BLOCK:
        span.set_status(Status(StatusCode.ERROR, _block_reason(decision)))


def _block_reason(decision: Decision) -> str:
    if decision.feedback:
        return decision.feedback.splitlines()[0]
    return "blocked: " + (", ".join(c.value for c in decision.categories) or "by the policy")


def _kind(kind: str | None) -> str:
    return kind if kind in ESCALATION_KINDS else OTHER


def inject_context() -> dict[str, str]:
    """The current trace context as W3C headers (``traceparent``, ``tracestate``, ``baggage``)."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


def extract_context(carrier: Mapping[str, str]) -> Context:
    """The trace context a carrier holds (HTTP headers, a stored escalation's ``trace_context``)."""
    return propagate.extract(carrier)


def configure_tracing_from_env(install: bool = True) -> TracerProvider | None:
    """An SDK ``TracerProvider`` exporting as the standard ``OTEL_*`` variables say, or None.

    ``OTEL_TRACES_EXPORTER`` lists exporters (``otlp``, ``console``, ``none``); unset, it is
    ``otlp`` when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``..._TRACES_ENDPOINT``) is set and ``none``
    otherwise, so an unconfigured guard sends nothing anywhere. The OTLP exporter reads its
    endpoint, headers and ``OTEL_EXPORTER_OTLP_PROTOCOL`` (``http/protobuf`` by default, or
    ``grpc``) itself; when its package is not installed it is left out with a warning.
    ``OTEL_SERVICE_NAME`` names the service (``guard`` when unset). With ``install`` the provider
    becomes the global one. None when no exporter is configured: spans then cost nothing.
    """
    env = os.environ
    endpoint_set = bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
    names = env.get("OTEL_TRACES_EXPORTER") or ("otlp" if endpoint_set else "none")
    exporters = [e for name in names.split(",") if (e := _exporter(name.strip().lower())) is not None]
    if not exporters:
        return None
    resource = Resource.create({} if env.get("OTEL_SERVICE_NAME") else {"service.name": "guard"})
    provider = TracerProvider(resource=resource)
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    if install:
        trace.set_tracer_provider(provider)
    return provider


def _exporter(name: str) -> SpanExporter | None:
    if name in ("", "none"):
        return None
    if name == "console":
        return ConsoleSpanExporter(out=sys.stdout)  # the stdout of now, not of import time
    if name != "otlp":
        log.warning("OTEL_TRACES_EXPORTER=%r is not supported (otlp, console, none): ignored", name)
        return None
    env = os.environ
    protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    try:
        if protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                OTLPSpanExporter,
            )
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
                OTLPSpanExporter,  # type: ignore[assignment]
            )
    except ImportError:
        log.warning(
            "OTLP trace export (%s) needs the exporter package: pip install opentelemetry-exporter-otlp; "
            "traces are not exported",
            protocol,
        )
        return None
    return OTLPSpanExporter()
