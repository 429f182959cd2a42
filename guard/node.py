"""``GuardedToolNode``: LangGraph's ``ToolNode`` with the guard in front of every call.

Per batch (the tool calls of the latest AI message): check every call, ask the human once about all
calls that need it (``interrupt()``, resumed by tool call id), re-check the answered ones, run the
allowed and repaired calls through ``ToolNode``'s own machinery (parallel execution, injected state,
``Command`` results), retry transient failures with backoff, and answer every other call with a
ToolMessage that carries the feedback. Each ToolMessage records the decision in
``response_metadata["guard"]``; retry budgets are counted from those records, so they live in the
checkpointed thread.

Nothing runs before the interrupt, so re-running the node on resume (LangGraph's contract) cannot
execute a tool twice.

Everything else is ToolNode's: the guard wraps ToolNode's own execution of each call (``_run_one``:
the user's ``wrap_tool_call``, injection, ``handle_tool_errors``), so a tool's failure comes back
as ToolNode makes it (an error message with ToolNode's text, or the exception), after the guard's
retries of transient failures. A call the guard would send back only for what ToolNode refuses by
itself (an unknown tool, arguments the tool's schema rejects) goes to ToolNode as proposed, so
ToolNode's text and the user's interceptors apply. Under ``mode: observe`` the node checks and
records every call and then runs exactly as ToolNode.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import logging
import reprlib
from contextvars import ContextVar
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.prebuilt import ToolNode
from langgraph.types import interrupt
from pydantic import BaseModel
from pydantic.v1 import BaseModel as V1BaseModel

from guard.budgets import GuardState
from guard.conversation import Conversation
from guard.engine import Guard
from guard.escalation import settle
from guard.interrupts import BoundAsk, aasked_by_this_task, resuming
from guard.execution import (
    arun_with_backoff,
    call_to_run,
    closed_message,
    for_the_guard,
    injected_names,
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
from guard.models import Decision, ToolCall


_CIRCUIT = "circuit open"
#: ids of the calls of the batch being run that the guard left to ToolNode's own refusal
_LEFT: ContextVar[frozenset[str]] = ContextVar("guard_left_to_toolnode", default=frozenset())
_log = logging.getLogger("guard.node")


@dataclass(frozen=True)
class Plan:
    """What the guard decided for one batch, before anything runs."""

    order: list[str]
    to_run: list[Decision]
    answered: list[ToolMessage]
    #: the calls to run, in order: the model's own where the guard changed nothing (``call_to_run``)
    calls: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    #: ids of the calls that run as the model proposed them
    as_proposed: frozenset[str] = frozenset()
    #: ids of the calls left to ToolNode's own refusal (``guard.execution.left_to_tool_node``)
    left: frozenset[str] = frozenset()

    @property
    def by_id(self) -> dict[str, Decision]:
        return {str(d.call.id): d for d in self.to_run}


class GuardedToolNode(ToolNode):
    """A drop-in for ``langgraph.prebuilt.ToolNode`` that checks each call before it runs.

    ``GuardedToolNode(tools, policy, **toolnode_kwargs)`` takes ToolNode's keyword arguments
    (``name``, ``tags``, ``handle_tool_errors``, ``messages_key``, ``wrap_tool_call``,
    ``awrap_tool_call``); a user's wrappers run inside the guard's retry loop. Pass ``guard=`` to
    share one engine (and its caches) between nodes. ``telemetry`` (a ``guard.telemetry.Telemetry``)
    adds a ``guard.check`` span and metrics per call. ``store`` (a ``guard.state.StateStore``, Redis
    when several replicas run) shares a circuit breaker per tool: outcomes are recorded there, and a
    tool whose circuit is open is an unavailable tool, with the reason, on every replica.
    ``sleep``/``asleep`` replace the backoff's sleeps (tests, simulations).
    """

    def __init__(
        self,
        tools: Sequence[Any],
        policy: Any = None,
        *,
        guard: Guard | None = None,
        telemetry: Any = None,
        store: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        asleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        **toolnode_kwargs: Any,
    ) -> None:
        self.guard = guard or Guard(tools, policy)
        self.telemetry = telemetry
        self.store = store
        self._sleep, self._asleep = sleep, asleep
        # The user's wrappers and ``handle_tool_errors`` go to ToolNode unchanged: the guard wraps
        # ToolNode's whole execution of one call (``_run_one``), wrappers and error handling included.
        super().__init__(tools, **toolnode_kwargs)
        for name in self.tools_by_name:
            without_injected(self.guard.registry, name, self._injected(name))

    @property
    def observing(self) -> bool:
        """The policy's ``mode: observe``: check and record, change nothing."""
        return self.guard.policy.mode == "observe"

    def __repr__(self) -> str:
        """ToolNode's repr lists the node's attributes; the wrappers installed here are bound
        methods of this node, whose repr is this repr, so they are named instead of recursed into."""
        shown = ", ".join(
            f"{k}={v.__qualname__ if getattr(v, '__self__', None) is self else reprlib.repr(v)}"
            for k, v in self.__dict__.items()
            if k not in {"name", "func", "afunc", "config", "kwargs", "trace"}
        )
        return f"{self.get_name()}({shown})"

    # -- before the calls -----------------------------------------------------------------------

    def _plan(self, input: Any, config: RunnableConfig, asked: Callable[[], dict[str, Any] | None] | None = None) -> Plan:
        """``asked`` reads back the question this task asked before (see ``guard.interrupts``);
        the async path reads it ahead, since an async-only checkpointer refuses sync reads."""
        messages = self._messages_of(input, config)
        calls = self._calls_of(input, messages)
        self._apply_circuits(calls)
        conversation = Conversation.from_messages(messages)
        state = GuardState.from_conversation(conversation)
        decisions = self.guard.check_batch(calls, conversation, state, check=self._check)
        ask: Callable[[dict[str, Any]], Any] = BoundAsk(interrupt, asked)
        if self.telemetry is not None:
            ask = self.telemetry.observed_ask(ask)
        settled, closed = settle(self.guard, decisions, conversation, state, ask=ask)
        left = {
            id(d) for d in settled
            if not d.runs and left_to_tool_node(d, self.tools_by_name.get(d.call.name or ""), self._injected(d.call.name))
        }
        answered = [closed_message(c) for c in closed]
        answered += [refused_message(d) for d in settled if not d.runs and id(d) not in left]
        to_run = [d for d in settled if d.runs or id(d) in left]
        proposed = self._proposed_calls(input)
        runs = [call_to_run(d, proposed.get(str(d.call.id)), self._injected(d.call.name)) for d in to_run]
        return Plan(
            order=[str(c.id) for c in calls],
            to_run=to_run,
            answered=answered,
            calls=[call for call, _ in runs],
            as_proposed=frozenset(str(d.call.id) for d, (_, own) in zip(to_run, runs) if own),
            left=frozenset(str(d.call.id) for d in settled if id(d) in left),
        )

    def _injected(self, name: str | None) -> frozenset[str]:
        """The arguments ToolNode injects into this tool (state, store, runtime): the model's
        values for them are overwritten, so the guard does not judge them."""
        return injected_names(self._injected_args.get(name or ""))

    def _for_the_guard(self, raw: Any) -> ToolCall:
        return for_the_guard(raw, self._injected(ToolCall.from_any(raw).name))

    def _proposed_calls(self, input: Any) -> dict[str, dict[str, Any]]:
        """The model's own calls by id, as ToolNode reads them from its input."""
        try:
            raw = self._parse_input(input)[0]
        except ValueError:
            return {}
        return {str(c.get("id")): dict(c) for c in raw}

    def _apply_circuits(self, calls: list[ToolCall]) -> None:
        """Mark tools whose shared circuit is open (or half open with its probe taken) unavailable.
        An observing node never takes the half-open probe: it would run the call anyway."""
        if self.store is None:
            return
        registry = self.guard.registry
        for name in {c.name for c in calls if c.name in registry}:
            status = self.store.circuit(name)
            probe_taken = status.state == "half_open" and not self.observing and not self.store.acquire_probe(name)
            refused = status.state == "open" or probe_taken
            spec = registry.get(name)
            if refused:
                reason = f"{_CIRCUIT} after {status.failures} failures ({status.reason or 'failing'})"
                registry.set_available(name, False, reason)
            elif spec is not None and not spec.enabled and (spec.unavailable_reason or "").startswith(_CIRCUIT):
                registry.set_available(name, True)

    def _record_outcome(self, tool: str | None, post: dict[str, Any]) -> None:
        """Tell the shared circuit breaker how the tool's execution ended (``post``: the guard's record)."""
        if self.store is not None and tool in self.guard.registry:
            self.store.record_tool_result(tool, post.get("outcome") is None, post.get("outcome"))

    def _check(self, call: ToolCall, conversation: Conversation, state: GuardState) -> Decision:
        return traced_check(self.guard, self.telemetry, call, conversation, state)

    def _messages_of(self, input: Any, config: RunnableConfig) -> list[Any]:
        state = self._extract_state(input, config)
        if isinstance(state, list):
            return [m for m in state if not (isinstance(m, dict) and m.get("type") == "tool_call")]
        if isinstance(state, dict):
            return list(state.get(self._messages_key) or [])
        return list(getattr(state, self._messages_key, None) or [])

    def _calls_of(self, input: Any, messages: list[Any]) -> list[ToolCall]:
        if isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            return [self._for_the_guard(input["tool_call"])]
        if isinstance(input, list) and input and isinstance(input[-1], dict) and input[-1].get("type") == "tool_call":
            return [self._for_the_guard(c) for c in input]
        ai = _latest_ai(messages)
        if ai is None:
            raise ValueError("No AIMessage found in input")
        # Calls whose arguments did not parse land in invalid_tool_calls; ToolNode would leave them
        # unanswered (and the next model request would fail), the guard answers them.
        return [self._for_the_guard(c) for c in (*ai.tool_calls, *ai.invalid_tool_calls)]

    def _with_calls(self, input: Any, calls: list[dict[str, Any]]) -> Any:
        """The node input with the latest AI message's calls replaced by the ones allowed to run."""
        if isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            return {**input, "tool_call": calls[0]}
        if isinstance(input, list) and input and isinstance(input[-1], dict) and input[-1].get("type") == "tool_call":
            return calls
        if [dict(c) for c in self._parse_input(input)[0]] == calls and not _invalid_calls(input, self._messages_key):
            return input  # every call runs as proposed: ToolNode gets the very input it would have got
        messages = input if isinstance(input, list) else (
            input.get(self._messages_key) if isinstance(input, dict) else getattr(input, self._messages_key)
        )
        messages = list(messages)
        for i in range(len(messages) - 1, -1, -1):
            if isinstance(messages[i], AIMessage):
                messages[i] = messages[i].model_copy(update={"tool_calls": calls, "invalid_tool_calls": []})
                break
        if isinstance(input, list):
            return messages
        if isinstance(input, dict):
            return {**input, self._messages_key: messages}
        if isinstance(input, BaseModel):
            return input.model_copy(update={self._messages_key: messages})
        if isinstance(input, V1BaseModel):
            return input.copy(update={self._messages_key: messages})
        if dataclasses.is_dataclass(input):
            return dataclasses.replace(input, **{self._messages_key: messages})
        copied = copy.copy(input)  # any other object ToolNode reads its messages from
        setattr(copied, self._messages_key, messages)
        return copied

    # -- the calls --------------------------------------------------------------------------------

    def _run_one(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        """ToolNode's execution of one call (the user's wrapper, ``handle_tool_errors``, injection),
        with the guard's backoff around it: what ToolNode returns or raises is handed on as it is."""
        run = lambda _: super(GuardedToolNode, self)._run_one(call, *args, **kwargs)  # noqa: E731
        if str(call.get("id")) in _LEFT.get():
            return run(None)  # ToolNode refuses it: no retry, no tool outcome to count
        return run_with_backoff(
            call, None, run, self.guard.policy,
            sleep=self._sleep, on_failure=tool_errors_to(self.telemetry), on_outcome=self._record_outcome,
            observe=self.observing,
        )

    async def _arun_one(self, call: Any, *args: Any, **kwargs: Any) -> Any:
        run = lambda _: super(GuardedToolNode, self)._arun_one(call, *args, **kwargs)  # noqa: E731
        if str(call.get("id")) in _LEFT.get():
            return await run(None)
        return await arun_with_backoff(
            call, None, run, self.guard.policy,
            sleep=self._asleep, on_failure=tool_errors_to(self.telemetry), on_outcome=self._record_outcome,
            observe=self.observing,
        )

    def _observe(self, input: Any, config: RunnableConfig) -> None:
        """Observe mode: check every call and record the decisions (spans, metrics, the log), ask
        no one, change nothing. A failure of the guard itself is logged, never raised."""

        def decide() -> list[Decision]:
            messages = self._messages_of(input, config)
            calls = self._calls_of(input, messages)
            self._apply_circuits(calls)
            conversation = Conversation.from_messages(messages)
            state = GuardState.from_conversation(conversation)
            return self.guard.check_batch(calls, conversation, state, check=self._check)

        observe(_log, decide)

    def _func(self, input: Any, config: RunnableConfig, runtime: Any) -> Any:
        if self.observing:
            self._observe(input, config)
            return super()._func(input, config, runtime)
        plan = self._plan(input, config)
        ran = None
        if plan.to_run:
            token = _LEFT.set(plan.left)
            try:
                ran = super()._func(self._with_calls(input, plan.calls), config, runtime)
            finally:
                _LEFT.reset(token)
        return self._combine(plan, ran, input)

    async def _afunc(self, input: Any, config: RunnableConfig, runtime: Any) -> Any:
        if self.observing:
            self._observe(input, config)
            return await super()._afunc(input, config, runtime)
        asked = await aasked_by_this_task() if resuming() else None
        plan = self._plan(input, config, lambda: asked)
        ran = None
        if plan.to_run:
            token = _LEFT.set(plan.left)
            try:
                ran = await super()._afunc(self._with_calls(input, plan.calls), config, runtime)
            finally:
                _LEFT.reset(token)
        return self._combine(plan, ran, input)

    # -- after the calls --------------------------------------------------------------------------

    def _combine(self, plan: Plan, ran: Any, input: Any) -> Any:
        """Merge the executed calls' output with the guard's own answers, in the calls' order."""
        by_id = plan.by_id
        for msg in _tool_messages(ran):
            decision = by_id.get(msg.tool_call_id)
            if decision is not None and msg.tool_call_id in plan.left:
                stamp_left(msg, decision)
            else:
                stamp(msg, decision, as_proposed=msg.tool_call_id in plan.as_proposed)
        rank = {cid: i for i, cid in enumerate(plan.order)}
        as_list = isinstance(input, list) and not (input and isinstance(input[-1], dict))

        def ordered(msgs: list[Any]) -> list[Any]:
            return sorted(msgs, key=lambda m: rank.get(getattr(m, "tool_call_id", ""), len(rank)))

        ours = list(plan.answered)
        if not ours and ran is not None:
            return ran  # every call ran: ToolNode's output as ToolNode shaped it
        if ran is None:
            return ordered(ours) if as_list else {self._messages_key: ordered(ours)}
        if isinstance(ran, dict) and isinstance(ran.get(self._messages_key), list):
            return {**ran, self._messages_key: ordered(ran[self._messages_key] + ours)}
        if isinstance(ran, list) and all(isinstance(m, ToolMessage) for m in ran):
            return ordered(ran + ours)
        # Some tool returned a Command: LangGraph applies a list of updates in order.
        return [*ran, ours if as_list else {self._messages_key: ours}] if ours else ran


def _latest_ai(messages: list[Any]) -> AIMessage | None:
    return next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)


def _invalid_calls(input: Any, key: str) -> list[Any]:
    """The latest AI message's calls whose arguments did not parse (the guard answers them)."""
    if isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
        return []
    messages = input if isinstance(input, list) else (input.get(key) if isinstance(input, dict) else getattr(input, key, None))
    ai = _latest_ai([m for m in messages or [] if isinstance(m, AIMessage)])
    return list(ai.invalid_tool_calls) if ai is not None else []


def _tool_messages(output: Any) -> list[ToolMessage]:
    """Every ToolMessage in a ToolNode output (a list, a state update, Commands carrying updates)."""
    if output is None:
        return []
    if isinstance(output, ToolMessage):
        return [output]
    if isinstance(output, list):
        return [m for item in output for m in _tool_messages(item)]
    if isinstance(output, dict):
        return [m for v in output.values() if isinstance(v, list) for m in _tool_messages(v)]
    update = getattr(output, "update", None)
    return _tool_messages(update) if isinstance(update, (dict, list)) else []
