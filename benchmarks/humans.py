"""The simulated human who answers the guard's ``interrupt()`` questions during a replay.

Like Fail-TaLMs' Ask-and-Help: it answers only what it knows (the value removed from the query, the
original API, a recorded reply) and says "I don't know" otherwise. Every question is counted, because
a guard that asks about everything is as useless as one that asks about nothing.
"""

from __future__ import annotations

from typing import Any

from guard_bench.cases import Human

DONT_KNOW = "I don't know."


class SimulatedHuman:
    def __init__(self, knows: Human) -> None:
        self.knows = knows
        self._replies = list(knows.replies)
        self.questions = 0
        self.answered = 0

    def answer(self, payload: dict[str, Any]) -> dict[str, Any]:
        """A resume value keyed by tool call id, one answer per request in the payload."""
        return {str(r["tool_call_id"]): self._answer_one(r) for r in payload.get("requests", [])}

    def _answer_one(self, request: dict[str, Any]) -> dict[str, Any]:
        self.questions += 1
        kind = request.get("kind")
        if kind == "approval":
            self.answered += 1
            return {"action": "approve"}
        values = {m: v for m in request.get("missing") or [] if (v := self._value(m)) is not None}
        if values:
            self.answered += 1
            return {"action": "answer", "values": values}
        if kind == "tool_unavailable" and self.knows.tool:
            self.answered += 1
            return {"action": "answer", "text": f"Use {self.knows.tool} for that."}
        if text := (self._replies.pop(0) if self._replies else self.knows.text):
            self.answered += 1
            return {"action": "answer", "text": text}
        return {"action": "answer", "text": DONT_KNOW}

    def _value(self, name: str) -> Any:
        if name in self.knows.values:
            return self.knows.values[name]
        leaf = name.rsplit(".", 1)[-1]
        return self.knows.values.get(leaf)
