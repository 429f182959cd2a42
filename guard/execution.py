"""After the call: classify what the tool returned or raised, and retry transient failures.

Adapters run a tool through ``run_with_backoff`` (or its async twin) around what ``ToolNode`` (or
LangChain's tool handler) does for one call, so a tool's failure reaches the guard exactly as
``ToolNode`` shapes it: an error ToolMessage where ``handle_tool_errors`` handled it, an exception
where it did not. The guard classifies each attempt (timeout, rate limit, permission, error
payload, ...). A failure the guard classifies as transient (timeout, rate limit, connection, server
error) whose policy action is ``retry`` is tried again with the policy's exponential backoff
(tenacity), whether it came as an exception or as an error message. What the last attempt gave is
then handed back unchanged: the tool's own message (its text untouched, the guard's record added
to ``response_metadata``), or the exception re-raised, for ``handle_tool_errors`` and outer
middleware to deal with as they would without the guard. ``GraphBubbleUp`` (interrupts) is never
caught. In ``observe`` mode there is one attempt and no record: the classification only feeds the
metrics.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.errors import GraphBubbleUp
from pydantic import BaseModel, ValidationError
from pydantic.v1 import BaseModel as V1BaseModel
from pydantic.v1 import ValidationError as V1ValidationError
from tenacity import AsyncRetrying, Retrying, RetryCallState, retry_if_result, stop_after_attempt, wait_exponential, wait_random

from guard import decision_log
from guard.budgets import METADATA_KEY
from guard.checks.outcome import classify_exception, classify_result
from guard.escalation import Closed
from guard.models import Decision, Finding, ToolCall
from guard.policy import Policy
from guard.taxonomy import SCHEMA_CATEGORIES, TRANSIENT_TOOL_ERRORS, Action, Category

@dataclass(frozen=True)
class Attempt:
    """One execution of a tool: what came back (None when it raised), what it raised, and what was
    wrong with it."""

    result: Any
    finding: Finding | None
    error: Exception | None = None


def record(decision: Decision | None = None, **extra: Any) -> dict[str, Any]:
    """The guard's record kept in a ToolMessage: budgets are counted from these (``guard.budgets``)."""
    base: dict[str, Any] = {}
    if decision is not None:
        base = {
            "action": decision.action.value,
            "categories": [c.value for c in decision.categories],
            "repairs": [f.repair.model_dump(mode="json") for f in decision.findings if f.repair],
            "warnings": [_warning(f) for f in decision.warnings],
            "policy": decision.policy_name,
            "policy_hash": decision.policy_hash,
            "signature": decision.call.signature,
            "decision_id": decision.decision_id,
            "stage": "pre",
        }
    base.update(extra)
    return base


def _warning(finding: Finding) -> dict[str, Any]:
    """A finding the call ran with, as the record keeps it."""
    return {"category": finding.category.value, "path": finding.path, "message": finding.message, "confidence": finding.confidence}


def _classify(result: Any, tool: str | None) -> Finding | None:
    if isinstance(result, ToolMessage):
        return classify_result(result.content, result.status, tool)
    return None  # a Command or other control-flow object: the tool chose where to go next


def _attempt(run: Callable[[Any], Any], request: Any, tool: str | None) -> Attempt:
    try:
        result = run(request)
    except GraphBubbleUp:
        raise
    except Exception as exc:  # classified here, re-raised by ``finish`` unless a retry cures it
        return Attempt(None, classify_exception(exc, tool), exc)
    return Attempt(result, _classify(result, tool))


async def _aattempt(run: Callable[[Any], Awaitable[Any]], request: Any, tool: str | None) -> Attempt:
    try:
        result = await run(request)
    except GraphBubbleUp:
        raise
    except Exception as exc:
        return Attempt(None, classify_exception(exc, tool), exc)
    return Attempt(result, _classify(result, tool))


def _retry_kwargs(policy: Policy, tool: str | None) -> dict[str, Any]:
    b = policy.backoff

    def transient(a: Attempt) -> bool:
        return (
            a.finding is not None
            and a.finding.category in TRANSIENT_TOOL_ERRORS
            and policy.action_for(a.finding.category, tool) is Action.RETRY
            and not is_invalid_resume(a.error)
        )

    def last(state: RetryCallState) -> Attempt:
        return state.outcome.result()  # type: ignore[union-attr]

    return {
        "stop": stop_after_attempt(b.max_attempts),
        "wait": wait_exponential(multiplier=b.initial_seconds, exp_base=b.multiplier, max=b.max_seconds)
        + wait_random(0, b.jitter_seconds),
        "retry": retry_if_result(transient),
        "retry_error_callback": last,
    }


try:  # resolved once: a failed import is not cached, and this runs on every failed attempt
    from langgraph.errors import is_invalid_resume as _marked_invalid_resume
except ImportError:  # a langgraph that never marks resume errors
    _marked_invalid_resume = None


def is_invalid_resume(error: BaseException | None) -> bool:
    """A resume value that does not match an interrupt's ``response_schema``: ToolNode re-raises
    it whatever ``handle_tool_errors`` says, so the question can be answered again; never retried."""
    return error is not None and _marked_invalid_resume is not None and bool(_marked_invalid_resume(error))


OnFailure = Callable[[str | None, Finding], None]
OnOutcome = Callable[[str | None, dict[str, Any]], None]


def _noticed(attempt: Attempt, tool: str | None, on_failure: OnFailure | None) -> Attempt:
    if on_failure is not None and attempt.finding is not None:
        on_failure(tool, attempt.finding)
    return attempt


def run_with_backoff(
    call: dict[str, Any],
    request: Any,
    run: Callable[[Any], Any],
    policy: Policy,
    *,
    sleep: Callable[[float], None] = time.sleep,
    on_failure: OnFailure | None = None,
    on_outcome: OnOutcome | None = None,
    observe: bool = False,
) -> Any:
    """Run ``run(request)``, retrying transient failures; return what the last attempt returned,
    or raise what it raised.

    ``on_failure(tool, finding)`` hears of every failed attempt (metrics); ``on_outcome(tool,
    post)`` of the guard's record of the whole execution (the circuit breaker). ``observe=True``:
    one attempt, nothing added to the result."""
    tool = call.get("name")
    history: list[Attempt] = []

    def once() -> Attempt:
        history.append(_noticed(_attempt(run, request, tool), tool, on_failure))
        return history[-1]

    if observe:
        once()
    else:
        Retrying(sleep=sleep, **_retry_kwargs(policy, tool))(once)
    return finish(call, history, policy, observe=observe, on_outcome=on_outcome)


async def arun_with_backoff(
    call: dict[str, Any],
    request: Any,
    run: Callable[[Any], Awaitable[Any]],
    policy: Policy,
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    on_failure: OnFailure | None = None,
    on_outcome: OnOutcome | None = None,
    observe: bool = False,
) -> Any:
    """The async twin of ``run_with_backoff``."""
    tool = call.get("name")
    history: list[Attempt] = []

    async def once() -> Attempt:
        history.append(_noticed(await _aattempt(run, request, tool), tool, on_failure))
        return history[-1]

    if observe:
        await once()
    else:
        await AsyncRetrying(sleep=sleep, **_retry_kwargs(policy, tool))(once)
    return finish(call, history, policy, observe=observe, on_outcome=on_outcome)


def finish(
    call: dict[str, Any],
    history: list[Attempt],
    policy: Policy,
    *,
    observe: bool = False,
    on_outcome: OnOutcome | None = None,
) -> Any:
    """Hand back what the last attempt gave: its result, with the guard's record added to a
    ToolMessage (unless observing), or its exception, re-raised.

    The record lists what went wrong on the way (``attempt_errors``), so a timeout that a retry
    cured still shows on the trace and in the metrics, and says how the policy classes the last
    failure (``outcome``, ``outcome_action``). The tool's text is never rewritten.
    """
    attempt, attempts, tool = history[-1], len(history), call.get("name")
    finding = attempt.finding
    post: dict[str, Any] = {
        "stage": "post",
        "attempts": attempts,
        "signature": ToolCall.from_any(call).signature,
        "policy_hash": policy.sha256,
        "attempt_errors": [a.finding.category.value for a in history[:-1] if a.finding is not None],
    }
    if finding is not None:
        post.update(outcome=finding.category.value, outcome_action=policy.action_for(finding.category, tool).value)
    if attempt.error is not None:
        post["raised"] = type(attempt.error).__name__
    if on_outcome is not None:
        on_outcome(tool, post)
    if (log := decision_log.writer_for(policy.log)) is not None:
        log.outcome(ToolCall.from_any(call), post)
    if attempt.error is not None:
        raise attempt.error
    if not observe and isinstance(attempt.result, ToolMessage):
        attempt.result.response_metadata[METADATA_KEY] = post
    return attempt.result


def stamp(result: Any, decision: Decision | None, *, as_proposed: bool = False) -> Any:
    """Merge the pre-call decision into the record the executor left on an executed call.

    ``as_proposed``: the model's own call ran, unchanged. When, besides, the guard has nothing to
    say about it (allowed with no finding, warning, repair or judgement, one attempt, no failure)
    no record is kept: the message is ToolNode's, byte for byte. Nothing is lost by that: budgets
    and the repetition check read only records of calls the guard stopped or that failed, and the
    decision itself still reaches the span, the metrics and the decision log."""
    if decision is None or not isinstance(result, ToolMessage):
        return result
    post = result.response_metadata.get(METADATA_KEY) or {}
    merged = record(decision, **post)
    merged["action"] = decision.action.value
    if decision.repaired_call is not None and decision.feedback:
        merged["note"] = decision.feedback
    if as_proposed and not decision.judgements and _nothing_to_say(merged):
        result.response_metadata.pop(METADATA_KEY, None)
        return result
    result.response_metadata[METADATA_KEY] = merged
    return result


def _nothing_to_say(merged: dict[str, Any]) -> bool:
    """A record of a call the guard let run as it was, that ran once and did not fail."""
    return (
        merged.get("action") == Action.ALLOW.value
        and not merged.get("categories")
        and not merged.get("repairs")
        and not merged.get("warnings")
        and "note" not in merged
        and merged.get("attempts", 1) == 1
        and not merged.get("attempt_errors")
        and "outcome" not in merged
        and "raised" not in merged
    )


#: What LangGraph's ToolNode (and LangChain's tool node) refuses by itself: a tool it lacks, and
#: arguments the tool's own schema rejects.
TOOLNODE_REFUSES = SCHEMA_CATEGORIES | {Category.UNKNOWN_TOOL}


def refused_only_for(decision: Decision, *, unknown: bool) -> bool:
    """The guard sends the call back (``retry``) and for nothing but an unknown tool (``unknown``)
    or schema faults: what ToolNode would refuse too, so the guard adds nothing to ToolNode's own
    answer. A repair, a question, a block, a spent budget or any other finding is the guard's."""
    categories = set(decision.categories)
    if decision.action is not Action.RETRY or not categories or not categories <= TOOLNODE_REFUSES:
        return False
    return categories == {Category.UNKNOWN_TOOL} if unknown else Category.UNKNOWN_TOOL not in categories


def schema_rejects(tool: Any, args: Any, injected: Collection[str] = ()) -> bool:
    """Whether the tool's own argument schema (the pydantic model LangChain validates a call
    against before the tool runs) rejects these arguments; faults of the ``injected`` arguments,
    which the tool node fills in, do not count."""
    schema = getattr(tool, "tool_call_schema", None)
    if not isinstance(args, dict) or not isinstance(schema, type):
        return False
    try:
        if issubclass(schema, BaseModel):
            schema.model_validate(args)
        elif issubclass(schema, V1BaseModel):
            schema.parse_obj(args)
        else:
            return False
    except (ValidationError, V1ValidationError) as exc:
        return any(not err.get("loc") or err["loc"][0] not in injected for err in exc.errors())
    return False


def stamp_left(result: Any, decision: Decision) -> Any:
    """The record on the answer to a call left to the tool node: a call an interceptor or a
    middleware served after all ran (``allow``: it counts against no retry budget), with the
    guard's finding kept in ``categories``."""
    stamp(result, decision)
    if isinstance(result, ToolMessage) and result.status != "error":
        result.response_metadata[METADATA_KEY].update(action=Action.ALLOW.value, note="served by an interceptor")
    return result


# -- what GuardedToolNode and GuardMiddleware share ---------------------------------------------


def injected_names(injected: Any) -> frozenset[str]:
    """The argument names a tool node injects into one tool (state keys, store, runtime), from
    LangGraph's record of them (``ToolNode._injected_args[name]``, ``_get_all_injected_args``)."""
    if injected is None:
        return frozenset()
    return frozenset({*injected.state, *(n for n in (injected.store, injected.runtime) if n)})


def injected_into(tool: Any) -> frozenset[str]:
    """The arguments the tool node injects into this tool (state, store, runtime)."""
    if tool is None:
        return frozenset()
    try:
        from langgraph.prebuilt.tool_node import _get_all_injected_args
    except ImportError:  # pragma: no cover - a langgraph without it
        return frozenset()
    return injected_names(_get_all_injected_args(tool))


def for_the_guard(raw: Any, injected: Collection[str]) -> ToolCall:
    """The call as the guard judges it: without the arguments the tool node injects (``injected``),
    whose model-given values it overwrites."""
    call = ToolCall.from_any(raw)
    if not injected or not isinstance(call.args, dict) or not set(injected) & set(call.args):
        return call
    return call.model_copy(update={"args": {k: v for k, v in call.args.items() if k not in injected}})


def call_to_run(decision: Decision, proposed: dict[str, Any] | None, injected: Collection[str]) -> tuple[dict[str, Any], bool]:
    """The call to run, and whether it is the model's own: where the guard changed nothing (the
    call it judged is the call it lets run), the model's call as proposed (the arguments the tool
    node injects, which the guard does not judge, included); else the repaired or edited call."""
    call = decision.call_to_run.to_langchain()
    if proposed is not None and for_the_guard(proposed, injected).to_langchain() == call:
        return proposed, True
    return call, False


def left_to_tool_node(decision: Decision, tool: Any, injected: Collection[str]) -> bool:
    """A call the guard would send back only for what the tool node itself refuses (a tool it lacks,
    ``tool`` None; arguments the tool's own schema rejects) goes to the tool node as proposed: its
    text, ``handle_tool_errors`` and the user's interceptors deal with it (an interceptor may serve
    a tool the node lacks), and the guard's decision is recorded on the answer."""
    if tool is None:
        return refused_only_for(decision, unknown=True)
    return refused_only_for(decision, unknown=False) and schema_rejects(tool, decision.call.args, injected)


def traced_check(guard: Any, telemetry: Any, call: ToolCall, conversation: Any, state: Any) -> Decision:
    """``guard.check``, in a ``guard.check`` span with its metrics when ``telemetry`` is given."""
    if telemetry is None:
        return guard.check(call, conversation, state)
    return telemetry.traced_check(
        lambda: guard.check(call, conversation, state), call.name, call.id, state.retries_of(call.signature)
    )


def tool_errors_to(telemetry: Any) -> OnFailure:
    """The ``on_failure`` of the executors: each failed attempt counted in the telemetry's metrics."""

    def on_failure(tool: str | None, finding: Finding) -> None:
        if telemetry is not None:
            telemetry.record_tool_error(tool, finding.category)

    return on_failure


def log_observed(log: logging.Logger, decision: Decision) -> None:
    """The decision log of observe mode: what enforcing would have done, one line per call."""
    level = logging.DEBUG if decision.action is Action.ALLOW else logging.INFO
    log.log(
        level, "guard (observe): would %s call %s to %s (%s)", decision.action.value, decision.call.id,
        decision.call.name, ", ".join(c.value for c in decision.categories) or "no findings",
        extra={"guard_decision": decision.decision_id, "guard_action": decision.action.value},
    )


def observe(log: logging.Logger, decide: Callable[[], Iterable[Decision]]) -> None:
    """Observe mode: make the decisions and log them; ask no one, change nothing. A failure of the
    guard itself is logged, never raised (``GraphBubbleUp`` is LangGraph's, and passes)."""
    try:
        for decision in decide():
            log_observed(log, decision)
    except GraphBubbleUp:
        raise
    except Exception:
        log.exception("guard (observe mode): the check failed; the calls run as they would without the guard")


def without_injected(registry: Any, name: str, injected: Collection[str]) -> None:
    """Drop the arguments the tool node injects (state, store, runtime) from the tool's schema in
    the guard's registry: the model need not give them, and what it gives is overwritten."""
    spec = registry.get(name)
    if spec is None or not injected or not (set(injected) & (set(spec.properties) | set(spec.required))):
        return
    parameters = {
        **spec.parameters,
        "properties": {k: v for k, v in spec.properties.items() if k not in injected},
        "required": [r for r in spec.required if r not in injected],
    }
    registry.add(dataclasses.replace(spec, parameters=parameters))


def refused_message(decision: Decision) -> ToolMessage:
    """The answer to a call the guard did not run: the feedback, and the decision's record."""
    return ToolMessage(
        content=decision.feedback or f"The call was not run ({decision.action.value}).",
        name=decision.call.name or "",
        tool_call_id=decision.call.id or "",
        status="error",
        response_metadata={METADATA_KEY: record(decision)},
    )


def closed_message(closed: Closed) -> ToolMessage:
    """The answer to a call the human settled without running it."""
    d = closed.decision
    return ToolMessage(
        content=closed.text,
        name=d.call.name or "",
        tool_call_id=d.call.id or "",
        status="error",
        response_metadata={METADATA_KEY: record(d, action=closed.action.value, stage="human")},
    )
