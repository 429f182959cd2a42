"""Agent sources: what feeds the graph's model node during a replay.

- ``reference``: replays the call a fully informed agent would make (``Case.calls``) and then stops.
  It never corrects itself, so whatever recovery happens is the guard's own (repairs, completions,
  values the human supplied).
- ``recorded:FILE``: replays recorded model turns (JSON Lines, one case a line; see
  ``load_recorded``), e.g. last week's production traffic re-run against a new policy.
- ``live:PROVIDER:MODEL``: a real chat model through ``langchain.chat_models.init_chat_model``.

The scripted sources are stateless: the turn to play is the number of turns the script already
played since the user's last message (they carry a mark), so a node re-run after an interrupt
replays exactly the same turn, and the dialogue's own earlier AI turns do not count.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from guard_bench.cases import Case

FINAL_TEXT = "(the agent stops here)"
#: Marks the turns a scripted agent played, so the dialogue's own earlier AI turns are not counted.
_MARK = "scripted_turn"


def ai_turn(calls: Sequence[dict[str, Any]], content: str = "") -> AIMessage:
    """An AI message proposing ``calls``. Calls that LangChain would reject (no name, arguments that
    are not an object) go to ``invalid_tool_calls``, where the guard still answers them."""
    valid, invalid = [], []
    for i, call in enumerate(calls):
        call_id = str(call.get("id") or f"call_{i}")
        name, args = call.get("name"), call.get("args", call.get("arguments", {}))
        if isinstance(name, str) and name and isinstance(args, dict):
            valid.append({"name": name, "args": args, "id": call_id, "type": "tool_call"})
        else:
            text = args if isinstance(args, str) else json.dumps(args, default=str)
            invalid.append({"name": name, "args": text, "id": call_id, "error": "not an object", "type": "invalid_tool_call"})
    return AIMessage(content=content, tool_calls=valid, invalid_tool_calls=invalid)


class ScriptedAgent(BaseChatModel):
    """Plays fixed turns; after the last one it answers with a short final text."""

    turns: list[AIMessage]

    @property
    def _llm_type(self) -> str:
        return "guard-benchmark-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedAgent:
        return self  # the script already holds the calls

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        last_user = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
        played = sum(1 for m in messages[last_user + 1 :] if isinstance(m, AIMessage) and m.response_metadata.get(_MARK))
        turn = self.turns[played] if played < len(self.turns) else AIMessage(content=FINAL_TEXT)
        message = turn.model_copy(deep=True)
        message.response_metadata[_MARK] = True
        return ChatResult(generations=[ChatGeneration(message=message)])


def load_recorded(path: str | Path) -> dict[str, list[AIMessage]]:
    """Recorded turns, one case a line::

        {"case_id": "acebench/normal_0", "turns": [{"content": "", "tool_calls": [{"name": "t", "args": {...}, "id": "c1"}]},
                                                   {"content": "final answer"}]}

    ``case_id`` is ``Case.id``. Each turn is an assistant message; ``tool_calls`` use LangChain's
    (``args``) or OpenAI's (``function.arguments``) shape. The guard's decision log has the same
    shape, so production traffic can be replayed against a new policy.
    """
    recorded: dict[str, list[AIMessage]] = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                turns = [_turn(t) for t in row["turns"]]
                recorded[str(row["case_id"])] = turns
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}, line {n}: not a recorded case ({exc})") from exc
    return recorded


def _turn(raw: dict[str, Any]) -> AIMessage:
    from guard.models import ToolCall

    calls = [ToolCall.from_any(c).model_dump() for c in raw.get("tool_calls") or []]
    return ai_turn(calls, content=str(raw.get("content") or ""))


class AgentSource:
    """Builds the model for each case from a spec string (``reference``, ``recorded:F``, ``live:P:M``)."""

    def __init__(self, spec: str = "reference") -> None:
        self.spec = spec
        kind, _, rest = spec.partition(":")
        if kind not in ("reference", "recorded", "live"):
            raise ValueError(f"unknown agent {spec!r}: use reference, recorded:FILE or live:PROVIDER:MODEL")
        self.kind = kind
        self._recorded = load_recorded(rest) if kind == "recorded" else {}
        if kind == "live":
            provider, _, model = rest.partition(":")
            if not provider or not model:
                raise ValueError(f"live agents are written live:PROVIDER:MODEL, got {spec!r}")
            self._provider, self._model = provider, model

    def model_for(self, case: Case) -> BaseChatModel:
        if self.kind == "reference":
            return ScriptedAgent(turns=[ai_turn(case.calls)] if case.calls else [])
        if self.kind == "recorded":
            if case.id not in self._recorded:
                raise KeyError(f"no recorded turns for case {case.id!r}")
            return ScriptedAgent(turns=self._recorded[case.id])
        from langchain.chat_models import init_chat_model

        return init_chat_model(self._model, model_provider=self._provider)
