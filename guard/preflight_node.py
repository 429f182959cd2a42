"""``PreflightNode``: the guard's preflight as the first node of a LangGraph graph.

Before the model sees a request, the node runs ``Guard.preflight``: can a tool serve the request,
with the values the user gave? Wire it in front of the model and route on its outcome::

    graph.add_node("preflight", PreflightNode(guard))
    graph.add_edge(START, "preflight")
    graph.add_conditional_edges("preflight", after_preflight, ["model", END])

``after_preflight`` routes for that usual wiring; ``PreflightNode(guard, messages_key=...,
next_node=...).route`` for any other.

What happens per action (``checks.preflight.actions``):

* ``allow``, ``repair`` and ``retry``: the run goes on to the model (there is no call to send back
  yet; the model meets the same problem and may handle it).
* ``ask_human``: one ``interrupt()`` with the same payload as the tool node's
  (``guard.escalation.payload``): kind ``missing_information`` or ``tool_unavailable``, one request
  whose ``tool_call_id`` is ``"preflight"``. Resume with ``{"preflight": {"action": "answer",
  "values": {...}}}``, ``{"preflight": {"action": "answer", "text": "..."}}`` or a bare string: the
  answer joins the conversation as a user turn and the run goes on to the model. ``approve`` goes on
  as asked; ``reject``, or an answer saying the user does not know, ends the run with a message
  saying what was missing.
* ``block``: the run ends with a message saying why.

Where the guard's record of the preflight goes. The benchmark (and any trace) must be able to read
it after the run, the model must never read it, and no extra state key may be required (the node
works with a plain ``MessagesState``). So it rides in ``response_metadata["guard"]``, which chat
model adapters do not send to the model, of the message that carries the outcome:

* the run stopped: the ``AIMessage`` the node answers the user with;
* the human answered: the ``HumanMessage`` that carries the answer;
* the run went straight on: the user's latest ``HumanMessage`` itself, re-issued under its own id
  (``add_messages`` replaces a message with the same id, so nothing is added to the thread).

``preflight_record(messages)`` returns the latest such record: action, categories, missing, tool,
findings, policy hash, decision id, ``stage="preflight"``, latency, and how the human answered.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.graph import END
from langgraph.types import interrupt

from guard.budgets import METADATA_KEY
from guard.engine import PREFLIGHT_CALL_ID, Guard
from guard.escalation import Answer, answer_text, parse_answers, payload
from guard.execution import record
from guard.interrupts import BoundAsk
from guard.models import Decision
from guard.taxonomy import Action, Category

STAGE = "preflight"


class PreflightNode:
    """A LangGraph node that judges the conversation before the model runs (see the module docstring).

    ``next_node`` is where ``route`` sends a run that goes on; ``messages_key`` is the state key of
    the messages (a dict state or an object with that attribute).
    """

    def __init__(self, guard: Guard, messages_key: str = "messages", next_node: str = "model") -> None:
        self.guard = guard
        self.messages_key = messages_key
        self.next_node = next_node

    def __call__(self, state: Any) -> dict[str, list[BaseMessage]]:
        messages = list(_messages(state, self.messages_key))
        decision = self.guard.preflight(messages)
        if decision.action is Action.ASK_HUMAN:
            return self._ask(decision, messages)
        if decision.action is Action.BLOCK:
            return self._stop(decision, decision.feedback or decision.question or "The request was stopped.")
        return self._go_on(decision, messages)

    def route(self, state: Any) -> str:
        """``END`` when the node stopped the run (its answer is the latest message), else ``next_node``."""
        return END if _stopped(_messages(state, self.messages_key)) else self.next_node

    # -- outcomes ---------------------------------------------------------------------------------

    def _ask(self, decision: Decision, messages: list[Any]) -> dict[str, list[BaseMessage]]:
        resume = BoundAsk(interrupt)(payload([decision]))  # an answer to another question is not applied
        parsed = parse_answers(resume, [PREFLIGHT_CALL_ID])
        answer = parsed.by_id.get(PREFLIGHT_CALL_ID)
        if answer is None:
            problem = parsed.errors.get(PREFLIGHT_CALL_ID, "no answer was given")
            return self._stop(decision, f"Stopped: {problem}.", resolution="unanswered")
        if answer.action == "reject":
            return self._stop(decision, f"Stopped as you asked: {answer.reason or 'no reason given'}.", resolution="rejected")
        if answer.declines:
            return self._stop(decision, _cannot_go_on(decision), resolution="declined")
        if answer.action == "approve":
            return self._go_on(decision, messages, resolution="approved")
        if answer.action == "edit":
            answer = Answer(action="answer", values=answer.args or {}, text=answer.text)
        elif not answer.values and answer.text and len(decision.missing) == 1:
            answer = Answer(action="answer", values={decision.missing[0]: answer.text})  # the one value asked for
        told = HumanMessage(content=_said(decision, answer), response_metadata={METADATA_KEY: _record(decision, "answered")})
        return {self.messages_key: [told]}

    def _stop(self, decision: Decision, text: str, resolution: str | None = None) -> dict[str, list[BaseMessage]]:
        said = AIMessage(content=text, response_metadata={METADATA_KEY: _record(decision, resolution)})
        return {self.messages_key: [said]}

    def _go_on(
        self, decision: Decision, messages: list[Any], resolution: str | None = None
    ) -> dict[str, list[BaseMessage]]:
        request = next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)
        if request is None or request.id is None:
            return {self.messages_key: []}  # nothing to carry the record: the run goes on unrecorded
        metadata = {**request.response_metadata, METADATA_KEY: _record(decision, resolution)}
        return {self.messages_key: [request.model_copy(update={"response_metadata": metadata})]}


def after_preflight(state: Any) -> str:
    """The router for the usual wiring (a ``"messages"`` key, a node named ``"model"``): ``"model"``
    when the run goes on, ``END`` when the preflight stopped it."""
    return END if _stopped(_messages(state, "messages")) else "model"


def preflight_record(messages: list[Any]) -> dict[str, Any] | None:
    """The latest preflight record in a thread's messages (see the module docstring), or None."""
    for message in reversed(messages):
        if _stage_of(message) == STAGE:
            return dict(message.response_metadata[METADATA_KEY])
    return None


def _messages(state: Any, key: str) -> list[Any]:
    if isinstance(state, dict):
        return state.get(key) or []
    return getattr(state, key, None) or []


def _stopped(messages: list[Any]) -> bool:
    last = messages[-1] if messages else None
    return isinstance(last, AIMessage) and _stage_of(last) == STAGE


def _stage_of(message: Any) -> str | None:
    guard_record = (getattr(message, "response_metadata", None) or {}).get(METADATA_KEY)
    return guard_record.get("stage") if isinstance(guard_record, dict) else None


def _record(decision: Decision, resolution: str | None) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "stage": STAGE,
        "tool": decision.call.name,
        "missing": decision.missing,
        "findings": [{"category": f.category.value, "path": f.path, "value": f.value} for f in decision.findings],
        "latency_ms": round(decision.latency_ms, 3),
    }
    if resolution is not None:
        extra["resolution"] = resolution
    return record(decision, **extra)


def _said(decision: Decision, answer: Answer) -> str:
    """The human's answer as a user turn: about the tool when there is one, else in their words."""
    if decision.call.name:
        return answer_text(decision, answer)
    return "; ".join([*(f"{k}: {v}" for k, v in answer.values.items()), *([answer.text] if answer.text else [])])


def _cannot_go_on(decision: Decision) -> str:
    if any(f.category is Category.NO_SUITABLE_TOOL for f in decision.findings):
        return "None of my tools can do this, so I have stopped here."
    wanted = ", ".join(f"'{name}'" for name in decision.missing) or "the values asked for"
    return f"I cannot go ahead without {wanted}. Tell me when you have it, and I will continue."
