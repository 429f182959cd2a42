"""After the call: classify what the tool returned or raised, and retry transient failures.

Adapters run a tool through ``run_with_backoff`` (or its async twin). Timeouts, rate limits,
connection and server errors are retried with the policy's exponential backoff (tenacity); what
is still failing afterwards, and every non-transient failure, becomes a ToolMessage that tells the
model what happened and what to do next, with the guard's record in ``response_metadata``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.errors import GraphBubbleUp
from tenacity import AsyncRetrying, Retrying, RetryCallState, retry_if_result, stop_after_attempt, wait_exponential, wait_random

from guard.budgets import METADATA_KEY
from guard.checks.outcome import classify_exception, classify_result
from guard.escalation import Closed
from guard.models import Decision, Finding, ToolCall
from guard.policy import Policy
from guard.taxonomy import TRANSIENT_TOOL_ERRORS, Action

_ADVICE = {
    Action.RETRY: "You may call it again with corrected arguments, try another tool, or tell the user.",
    Action.ASK_HUMAN: "Ask the user how to proceed.",
    Action.BLOCK: "Do not call it again for this request; tell the user it failed.",
}


@dataclass(frozen=True)
class Attempt:
    """One execution of a tool: what came back (None when it raised) and what was wrong with it."""

    result: Any
    finding: Finding | None


def record(decision: Decision | None = None, **extra: Any) -> dict[str, Any]:
    """The guard's record kept in a ToolMessage: budgets are counted from these (``guard.budgets``)."""
    base: dict[str, Any] = {}
    if decision is not None:
        base = {
            "action": decision.action.value,
            "categories": [c.value for c in decision.categories],
            "repairs": [f.repair.model_dump(mode="json") for f in decision.findings if f.repair],
            "policy": decision.policy_name,
            "policy_hash": decision.policy_hash,
            "signature": decision.call.signature,
            "warnings": [_warning(f) for f in decision.warnings],
            "decision_id": decision.decision_id,
            "stage": "pre",
        }
    base.update(extra)
    return base


def _classify(result: Any, tool: str | None) -> Finding | None:
    if isinstance(result, ToolMessage):
        return classify_result(result.content, result.status, tool)
def _warning(finding: Finding) -> dict[str, Any]:
    """A finding the call ran with, as the record keeps it."""
    return {"category": finding.category.value, "path": finding.path, "message": finding.message, "confidence": finding.confidence}


    return None  # a Command or other control-flow object: the tool chose where to go next


def _attempt(run: Callable[[Any], Any], request: Any, tool: str | None) -> Attempt:
    try:
        result = run(request)
    except GraphBubbleUp:
        raise
    except Exception as exc:  # every tool failure is classified, none escapes the node
        return Attempt(None, classify_exception(exc, tool))
    return Attempt(result, _classify(result, tool))


async def _aattempt(run: Callable[[Any], Awaitable[Any]], request: Any, tool: str | None) -> Attempt:
    try:
        result = await run(request)
    except GraphBubbleUp:
        raise
    except Exception as exc:
        return Attempt(None, classify_exception(exc, tool))
    return Attempt(result, _classify(result, tool))


def _retry_kwargs(policy: Policy, tool: str | None) -> dict[str, Any]:
    b = policy.backoff

    def transient(a: Attempt) -> bool:
        return (
            a.finding is not None
            and a.finding.category in TRANSIENT_TOOL_ERRORS
            and policy.action_for(a.finding.category, tool) is Action.RETRY
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


OnFailure = Callable[[str | None, Finding], None]


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
) -> Any:
    """Run ``run(request)``, retrying transient failures; return the result or a failure ToolMessage.

    ``on_failure(tool, finding)`` hears of every failed attempt (metrics)."""
    tool = call.get("name")
    history: list[Attempt] = []

    def once() -> Attempt:
        history.append(_noticed(_attempt(run, request, tool), tool, on_failure))
        return history[-1]

    Retrying(sleep=sleep, **_retry_kwargs(policy, tool))(once)
    return finish(call, history, policy)


async def arun_with_backoff(
    call: dict[str, Any],
    request: Any,
    run: Callable[[Any], Awaitable[Any]],
    policy: Policy,
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    on_failure: OnFailure | None = None,
) -> Any:
    """The async twin of ``run_with_backoff``."""
    tool = call.get("name")
    history: list[Attempt] = []

    async def once() -> Attempt:
        history.append(_noticed(await _aattempt(run, request, tool), tool, on_failure))
        return history[-1]

    await AsyncRetrying(sleep=sleep, **_retry_kwargs(policy, tool))(once)
    return finish(call, history, policy)


def finish(call: dict[str, Any], history: list[Attempt], policy: Policy) -> Any:
    """The result to hand back: the tool's own message, or one that explains its failure.

    The record lists what went wrong on the way (``attempt_errors``), so a timeout that a retry
    cured still shows on the trace and in the metrics.
    """
    attempt, attempts, tool = history[-1], len(history), call.get("name")
    finding = attempt.finding
    action = policy.action_for(finding.category, tool) if finding is not None else Action.ALLOW
    post = {
        "stage": "post",
        "attempts": attempts,
        "signature": ToolCall.from_any(call).signature,
        "policy_hash": policy.sha256,
        "attempt_errors": [a.finding.category.value for a in history[:-1] if a.finding is not None],
    }
    if finding is not None:
        post.update(outcome=finding.category.value, outcome_action=action.value)
    if action.runs and attempt.result is not None:
        if isinstance(attempt.result, ToolMessage):
            attempt.result.response_metadata[METADATA_KEY] = post
        return attempt.result
    category = finding.category.value if finding is not None else "tool_error_payload"
    message = finding.message if finding is not None else "no result"
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    content = f"The tool `{tool}` failed{tries} ({category}): {message}. {_ADVICE.get(action, _ADVICE[Action.RETRY])}"
    post.update(action=action.value if not action.runs else Action.RETRY.value, categories=[category])
    return ToolMessage(
        content=content,
        name=tool,
        tool_call_id=call.get("id") or "",
        status="error",
        response_metadata={METADATA_KEY: post},
    )


def stamp(result: Any, decision: Decision | None) -> Any:
    """Merge the pre-call decision into the record the executor left on an executed call."""
    if decision is None or not isinstance(result, ToolMessage):
        return result
    post = result.response_metadata.get(METADATA_KEY) or {}
    merged = record(decision, **post)
    if "action" in post:  # the tool failed after the guard let it run: both stages' categories
        merged["categories"] = sorted(set(merged["categories"]) | {c.value for c in decision.categories})
    else:
        merged["action"] = decision.action.value
    if decision.repaired_call is not None and decision.feedback:
        merged["note"] = decision.feedback
    result.response_metadata[METADATA_KEY] = merged
    return result


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
