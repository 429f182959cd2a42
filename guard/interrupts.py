"""Questions to the human through LangGraph's ``interrupt()``, bound to what was asked.

LangGraph hands a resume value to whichever ``interrupt()`` runs next; it never compares the value
with the question it answers. A node re-runs on resume, so if the thread's state changed between
the question and the answer (``graph.update_state`` rewrote the proposed call's arguments, or a
new policy was deployed), a plain ``interrupt()`` would apply "approve" to a call nobody saw.

``BoundAsk`` closes that gap. An answer is applied only when the question it answers was asked by
this very task (same checkpoint, so same state) and equals, escalation id for escalation id (which
hashes every call id, the arguments hash of each call and the policy hash), the question the node
would ask now. Any other answer is discarded and the question is asked again: the checked call, as
it now stands, gets a fresh ``interrupt()``.

The question actually asked is read back from the checkpointer (the task's pending interrupt
write), so nothing depends on the client echoing hashes. Each question carries ``ask``: its index
among this task's interrupts and the indices of answers discarded so far, which keeps a replayed
node (LangGraph re-runs it from the top on every resume) deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.types import interrupt

Ask = Callable[[dict[str, Any]], Any]

_INTERRUPT_WRITE = "__interrupt__"
#: The task's latest interrupt is not a guard question (a tool asked its own).
_OTHERS: dict[str, Any] = {"type": "other"}


class BoundAsk:
    """An ``ask`` for ``guard.escalation.settle`` whose answers are bound to the question asked.

    One instance per node execution. ``reader`` returns the question this task last asked (the
    value of its pending interrupt) or None; by default it is read from the graph's checkpointer.
    """

    def __init__(self, ask: Ask = interrupt, reader: Callable[[], dict[str, Any] | None] | None = None) -> None:
        self._ask, self._reader = ask, reader or asked_by_this_task
        self._index = 0
        self._discarded: list[int] = []
        self._asked: dict[str, Any] | None | bool = False  # False: not read yet

    def __call__(self, question: dict[str, Any]) -> Any:
        while True:
            index = self._index
            self._index += 1
            answer = self._ask({**question, "ask": {"index": index, "discarded": list(self._discarded)}})
            if self._bound(index, question):
                return answer
            self._discarded.append(index)

    def _bound(self, index: int, question: dict[str, Any]) -> bool:
        """Whether the answer at ``index`` answers ``question`` as this task asked it."""
        if self._asked is False:
            self._asked = self._reader()
        asked = self._asked
        if asked is _OTHERS:
            # this task's latest question is someone else's (the tool's own interrupt after the
            # guard let it run): the guard's questions were asked and answered earlier in this
            # same task, on the same state, so their answers stand
            return True
        if not isinstance(asked, dict) or not isinstance(asked.get("ask"), dict):
            return False  # this task asked nothing: the answer was meant for another question
        last = asked["ask"].get("index")
        if index in (asked["ask"].get("discarded") or ()):
            return False  # discarded when it arrived; a replay must discard it again
        if isinstance(last, int) and index < last:
            return True  # answered and applied in an earlier run of this task (same state)
        return index == last and asked.get("escalation_id") == question.get("escalation_id")


def asked_by_this_task() -> dict[str, Any] | None:
    """The question the running task last asked, from the checkpoint it runs on (None outside a
    graph, without a checkpointer, or when this task asked nothing)."""
    found = _locate()
    if found is None:
        return None
    saver, config, task_id = found
    return _question(saver.get_tuple(config), task_id)


async def aasked_by_this_task() -> dict[str, Any] | None:
    """The async twin of ``asked_by_this_task`` (async-only checkpointers refuse sync reads)."""
    found = _locate()
    if found is None:
        return None
    saver, config, task_id = found
    return _question(await saver.aget_tuple(config), task_id)


def resuming() -> bool:
    """Whether the running task was started by a ``Command(resume=...)``."""
    return bool(_configurable().get("__pregel_resuming"))


def _configurable() -> dict[str, Any]:
    from langgraph.config import get_config

    try:
        return dict(get_config().get("configurable", {}))
    except RuntimeError:  # not inside a runnable context
        return {}


def _locate() -> tuple[Any, dict[str, Any], str] | None:
    """The checkpointer, the config of the checkpoint the running task belongs to, and its task id."""
    conf = _configurable()
    saver, task_id = conf.get("__pregel_checkpointer"), conf.get("__pregel_task_id")
    if saver is None or task_id is None or not hasattr(saver, "get_tuple"):
        return None
    graph_ns = str(conf.get("checkpoint_ns") or "").rpartition("|")[0]
    config: dict[str, Any] = {"thread_id": conf.get("thread_id"), "checkpoint_ns": graph_ns}
    if checkpoint_id := (conf.get("checkpoint_map") or {}).get(graph_ns) or conf.get("checkpoint_id"):
        config["checkpoint_id"] = checkpoint_id
    return saver, {"configurable": config}, str(task_id)


def _question(saved: Any, task_id: str) -> dict[str, Any] | None:
    """The guard question among the task's pending interrupt writes of a checkpoint tuple;
    ``_OTHERS`` when the task's latest interrupt is not the guard's; None when it asked nothing."""
    others = False
    for write in getattr(saved, "pending_writes", None) or []:
        if write[0] == task_id and write[1] == _INTERRUPT_WRITE:
            interrupts = write[2] if isinstance(write[2], (list, tuple)) else [write[2]]
            for item in interrupts:
                value = getattr(item, "value", item)
                if isinstance(value, dict) and value.get("type") == "guard.escalation":
                    return value
                others = True
    return _OTHERS if others else None
