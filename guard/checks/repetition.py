"""Repetition: the same call again, after it failed or too many times.

An agent stuck in a loop repeats a call with identical arguments: after a failure, hoping for a
different answer, or after a success, having lost track of the answer it already has. Either way
the step is wasted (and often a paid request), and the model needs to be told what it is doing.

Calls are compared by ``ToolCall.signature`` (name plus canonical arguments). Only earlier calls
that already have a result count: the other calls of the current AI message are checked alongside
this one and none of them has run yet. A result failed when its status is "error" or when the
guard's record on it (``response_metadata["guard"]``) shows the guard stopped the call.
"""

from __future__ import annotations

import json
from typing import Any

from guard.budgets import METADATA_KEY
from guard.checks import CheckContext
from guard.conversation import Message
from guard.models import Finding, ToolCall
from guard.taxonomy import Action, Category

NAME = "repetition"

_RAN = frozenset(a.value for a in Action if a.runs)
_EXCERPT_CHARS = 200


def check(ctx: CheckContext) -> list[Finding]:
    signature = ToolCall(name=ctx.call.name, args=ctx.args).signature
    results = _earlier_results(ctx, signature)
    if not results:
        return []
    findings = []
    last = results[-1]
    if _failed(last):
        findings.append(_after_failure(ctx, last))
    successes = sum(not _failed(r) for r in results)
    if successes >= ctx.policy.checks.repetition.max_identical_calls:
        findings.append(_loop(ctx, successes))
    return findings


def _earlier_results(ctx: CheckContext, signature: str) -> list[Message]:
    """The results of earlier calls identical to this one, oldest first."""
    conversation = ctx.conversation
    found = []
    for call in conversation.prior_calls:
        if call.name != ctx.call.name or (call.id is not None and call.id == ctx.call.id):
            continue  # the name test first: hashing arguments costs more
        if ToolCall(name=call.name, args=_parsed(call.args)).signature != signature:
            continue
        result = conversation.result_for(call.id)
        if result is not None:
            found.append(result)
    return found


def _parsed(args: Any) -> Any:
    """Arguments as the checks see them: a JSON string is compared by what it encodes."""
    if not isinstance(args, str):
        return args
    try:
        return json.loads(args)
    except (ValueError, RecursionError):
        return args


def _guard_action(result: Message) -> str | None:
    record = result.metadata.get(METADATA_KEY)
    return record.get("action") if isinstance(record, dict) else None


def _failed(result: Message) -> bool:
    action = _guard_action(result)
    return result.status == "error" or (action is not None and action not in _RAN)


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _EXCERPT_CHARS else flat[: _EXCERPT_CHARS - 1] + "…"


def _after_failure(ctx: CheckContext, result: Message) -> Finding:
    excerpt = _excerpt(result.content)
    return Finding(
        category=Category.REPEATED_CALL,
        check=NAME,
        message=f"this exact call already failed: {excerpt}; change the arguments or the tool",
        tool=ctx.call.name,
        value=ctx.call.name,
        rule="repeated_after_failure",
        evidence={"previous_result": excerpt, "previous_action": _guard_action(result)},
    )


def _loop(ctx: CheckContext, count: int) -> Finding:
    return Finding(
        category=Category.REPEATED_CALL,
        check=NAME,
        message=(
            f"this exact call already ran {count} times with the same arguments; "
            "use its earlier results or change the arguments"
        ),
        tool=ctx.call.name,
        value=ctx.call.name,
        rule="identical_loop",
        evidence={"count": count},
    )
