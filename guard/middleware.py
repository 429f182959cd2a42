"""``GuardMiddleware``: the guard as a LangChain ``AgentMiddleware`` for ``create_agent``.

``create_agent(model, tools, middleware=[GuardMiddleware(policy)])`` routes every tool call through
``wrap_tool_call``: the same engine checks it, a call that needs the human pauses the agent with
``interrupt()`` (LangChain wraps each call separately, so this asks once per call), an allowed or
repaired call runs with the guard's backoff, and anything else is answered with the feedback.
What the handler returns is handed back with its text unchanged, and what it raises (after the
guard's retries of transient failures) propagates to the outer middleware and the agent, as it would
without the guard. Under ``mode: observe`` every call is checked and recorded and nothing else
changes. Needs the ``langchain`` extra.
"""

from __future__ import annotations

import asyncio
import logging
import time
from os import PathLike
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.types import interrupt

from guard.budgets import GuardState
from guard.conversation import Conversation
from guard.engine import Guard
from guard.checks.batch import duplicate_ids
from guard.escalation import settle
from guard.interrupts import BoundAsk, aasked_by_this_task, resuming
from guard.execution import (
    arun_with_backoff,
    call_to_run,
    closed_message,
    for_the_guard,
    injected_into,
    left_to_tool_node,
    observe,
    refused_message,
    run_with_backoff,
    stamp,
    stamp_left,
    tool_errors_to,
    traced_check,
    without_injected,
)
from guard.models import Decision, Finding, ToolCall
from guard.policy import Policy, load_policy
from guard.registry import ToolRegistry

_log = logging.getLogger("guard.middleware")


class GuardMiddleware(AgentMiddleware):
    """Guards each tool call of a LangChain agent.

    ``tools`` defaults to the agent's own tools, read from the first request; pass them (or a
    ``guard``) to check against a registry of your own. The policy (a path, a dict or a
    ``Policy``) is loaded at construction; a path given inside a running event loop (an async app
    building its agent) is read at the first ``awrap_tool_call`` in a worker thread, so the file is
    never read on the event loop. ``telemetry`` (a
    ``guard.telemetry.Telemetry``) adds a ``guard.check`` span and metrics per call.
    """

    def __init__(
        self,
        policy: Any = None,
        *,
        tools: Any = None,
        guard: Guard | None = None,
        telemetry: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        asleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__()
        self._policy_source = policy
        self._policy: Policy | None = guard.policy if guard is not None else None
        if self._policy is None and not (isinstance(policy, (str, PathLike)) and _on_an_event_loop()):
            self._policy = load_policy(policy)
        # Built inside a coroutine (an async app making its agent), a policy file is read at the
        # first awrap_tool_call, in a worker thread: never a blocking read on the event loop.
        self._guard = guard or (Guard(tools, self._policy) if tools is not None and self._policy is not None else None)
        self._tools = tools
        self._injected_of: dict[int, tuple[Any, frozenset[str]]] = {}  # id(tool) -> (tool, names)
        self._reviewed_guard: tuple[Guard, Guard] | None = None
        self.telemetry = telemetry
        self._sleep, self._asleep = sleep, asleep

    @property
    def observing(self) -> bool:
        """The policy's ``mode: observe``: check and record, change nothing."""
        return self.policy.mode == "observe"

    @property
    def policy(self) -> Policy:
        """The policy, read now if it was not read yet (``apolicy`` reads it off the event loop)."""
        if self._policy is None:
            self._policy = load_policy(self._policy_source)
        return self._policy

    async def apolicy(self) -> Policy:
        if self._policy is None:
            self._policy = await asyncio.to_thread(load_policy, self._policy_source)
        return self._policy

    def guard_for(self, request: Any) -> Guard:
        """The engine, built from the agent's tools the first time they are seen."""
        if self._guard is None:
            tools = list(getattr(request.runtime, "tools", None) or ([request.tool] if request.tool else []))
            if self._tools is not None:
                self._guard = Guard(self._tools, self.policy)
            else:
                self._guard = Guard(ToolRegistry(tools), self.policy)
        return self._guard

    def _judge(self, request: Any) -> tuple[Guard, Decision, Conversation, GuardState]:
        """The guard's decision on the call, before anyone is asked (what observe mode records)."""
        guard = self.guard_for(request)
        tool = getattr(request, "tool", None)
        injected = self._injected(tool)
        if tool is not None and getattr(tool, "name", None):
            if tool.name not in guard.registry:
                guard.registry.add(tool)  # a runtime tool (added by wrap_model_call or an interceptor)
            without_injected(guard.registry, tool.name, injected)
        state = request.state
        messages = state.get("messages", []) if isinstance(state, dict) else getattr(state, "messages", [])
        conversation = Conversation.from_messages(messages)
        budgets = GuardState.from_conversation(conversation)
        call = for_the_guard(request.tool_call, injected)
        if _rewritten_outside(messages, request.tool_call):
            guard = self._reviewed(guard)
        shared = _shared_id(messages, request.tool_call) if guard.policy.checks.duplicate_ids else None
        if shared is not None:
            return guard, guard.refuse(call, shared, budgets), conversation, budgets
        return guard, traced_check(guard, self.telemetry, call, conversation, budgets), conversation, budgets

    def _decide(
        self, request: Any, asked: Callable[[], dict[str, Any] | None] | None = None
    ) -> tuple[Guard, Decision | ToolMessage, bool]:
        """The decision to run the call (and whether it is left to the tool node's own refusal),
        or the message that answers it. ``asked`` reads back the question this task asked before
        (``guard.interrupts``)."""
        guard, decision, conversation, budgets = self._judge(request)
        settled, closed = settle(guard, [decision], conversation, budgets, ask=BoundAsk(interrupt, asked))
        if closed:
            return guard, closed_message(closed[0]), False
        decision = settled[0]
        if decision.runs:
            return guard, decision, False
        tool = getattr(request, "tool", None)
        if left_to_tool_node(decision, tool, self._injected(tool)):
            return guard, decision, True  # an interceptor may serve it; else the tool node answers
        return guard, refused_message(decision), False

    def _reviewed(self, guard: Guard) -> Guard:
        """The engine for a call an outer middleware rewrote (a human reviewer's edit in LangChain's
        ``HumanInTheLoopMiddleware``, in either interrupt mode): its arguments are still checked
        against the tool's schema, but an argument the reviewer added, or a value only the reviewer
        stated, is the reviewer's choice, not the model's invention."""
        if self._reviewed_guard is None or self._reviewed_guard[0] is not guard:
            data = guard.policy.model_dump()
            data["checks"].update(unexpected_arguments=False, placeholders=False)
            data["checks"]["grounding"]["enabled"] = False
            self._reviewed_guard = (guard, Guard(guard.registry, type(guard.policy).model_validate(data)))
        return self._reviewed_guard[1]

    def _injected(self, tool: Any) -> frozenset[str]:
        """The arguments the tool node injects into this tool, worked out once per tool."""
        if tool is None:
            return frozenset()
        cached = self._injected_of.get(id(tool))
        if cached is None or cached[0] is not tool:
            if len(self._injected_of) >= 1024:  # tools made afresh per request: keep the cache bounded
                self._injected_of.clear()
            cached = self._injected_of[id(tool)] = (tool, injected_into(tool))
        return cached[1]

    def _observe(self, request: Any) -> None:
        """Observe mode: check and record the call; a failure of the guard itself is only logged."""
        observe(_log, lambda: [self._judge(request)[1]])

    def _warm(self, request: Any) -> None:
        """Before the model's turn: the guard (once built, at the first tool call) starts embedding
        the request and the messages (``Guard.warm``), so its decision on the call the model
        proposes finds them cached. Nothing else changes: the model request goes on as it came."""
        if self._guard is not None and self._guard.semantic is not None:
            self._guard.warm(getattr(request, "messages", None) or [])

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        self._warm(request)
        return handler(request)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        self._warm(request)
        return await handler(request)

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        on_failure = tool_errors_to(self.telemetry)
        if self.observing:
            self._observe(request)
            return run_with_backoff(request.tool_call, request, handler, self.policy, on_failure=on_failure, observe=True)
        guard, outcome, left = self._decide(request)
        if isinstance(outcome, ToolMessage):
            return outcome
        if left:
            return stamp_left(handler(request), outcome)
        call, request, own = self._to_run(outcome, request)
        result = run_with_backoff(call, request, handler, guard.policy, sleep=self._sleep, on_failure=on_failure)
        return stamp(result, outcome, as_proposed=own)

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        await self.apolicy()
        on_failure = tool_errors_to(self.telemetry)
        if self.observing:
            self._observe(request)
            return await arun_with_backoff(request.tool_call, request, handler, self.policy, on_failure=on_failure, observe=True)
        asked = await aasked_by_this_task() if resuming() else None
        guard, outcome, left = self._decide(request, lambda: asked)
        if isinstance(outcome, ToolMessage):
            return outcome
        if left:
            return stamp_left(await handler(request), outcome)
        call, request, own = self._to_run(outcome, request)
        result = await arun_with_backoff(call, request, handler, guard.policy, sleep=self._asleep, on_failure=on_failure)
        return stamp(result, outcome, as_proposed=own)

    def _to_run(self, decision: Decision, request: Any) -> tuple[dict[str, Any], Any, bool]:
        """The call to run, its request, and whether it is the model's own (``call_to_run``)."""
        call, own = call_to_run(decision, request.tool_call, self._injected(getattr(request, "tool", None)))
        return call, (request if own else request.override(tool_call=call)), own


def _rewritten_outside(messages: list[Any], call: Any) -> bool:
    """Whether the call the guard is handed differs from the one the model proposed under its id
    (an outer middleware rewrote it: LangChain's ``HumanInTheLoopMiddleware`` applies a reviewer's
    edit in its ``wrap_tool_call`` and keeps the model's call in the message)."""
    this = ToolCall.from_any(call)
    for message in reversed(messages):
        proposed = getattr(message, "tool_calls", None) or (message.get("tool_calls") if isinstance(message, dict) else None)
        for raw in proposed or ():
            original = ToolCall.from_any(raw)
            if original.id == this.id:
                return (original.name, original.args) != (this.name, this.args)
    return False


def _on_an_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _shared_id(messages: list[Any], call: Any) -> Finding | None:
    """The duplicate-id finding when another call of this call's batch (the latest AI message
    that proposed it) has the same id: LangChain wraps each call alone, so the batch is read here."""
    this = ToolCall.from_any(call).id
    if this is None:
        return None
    for message in reversed(messages):
        proposed = getattr(message, "tool_calls", None) or (message.get("tool_calls") if isinstance(message, dict) else None)
        ids = [str(c.get("id")) if isinstance(c, dict) and c.get("id") is not None else None for c in proposed or []]
        if this not in ids:
            continue
        if ids.count(this) < 2:  # the common case: no copy of the arguments is made
            return None
        calls = [ToolCall.from_any(c) for c in proposed]
        return next((f for i, f in duplicate_ids(calls).items() if calls[i].id == this), None)
    return None
