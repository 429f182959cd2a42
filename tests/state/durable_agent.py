"""One half of a guarded agent run, in its own process, checkpointed in Redis by ``PlainRedisSaver``.

    python tests/state/durable_agent.py pause  REDIS_URL THREAD_ID KEY_PREFIX
    python tests/state/durable_agent.py resume REDIS_URL THREAD_ID KEY_PREFIX

``pause`` asks "What's the weather where I'm going?"; the scripted model calls
get_weather(city="Oslo"), a value nobody said, so the guard asks the human and the run stops at the
interrupt. It prints ``{"interrupt": <payload>, "calls": [...]}`` as JSON and exits. ``resume``, in a
fresh process (another replica), answers ``{"c1": {"action": "answer", "values": {"city": "Bergen"}}}``
and prints the tools that ran, the guard's records and the final message. The model
(``guard_bench.agents.ScriptedAgent``) picks its turn from the messages, so both processes agree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command

from guard_bench.agents import ScriptedAgent
from guard_graphs import build_guarded_agent
from guard.state.checkpoint import PlainRedisSaver
from tests.support import FAST, ai_call

QUESTION = "What's the weather where I'm going?"
ANSWER = {"c1": {"action": "answer", "values": {"city": "Bergen"}}}


def main(mode: str, url: str, thread_id: str, key_prefix: str) -> dict[str, Any]:
    calls: list[dict[str, Any]] = []

    @tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        calls.append({"tool": "get_weather", "city": city})
        return json.dumps({"city": city, "celsius": 14})

    saver = PlainRedisSaver(url, key_prefix=key_prefix)
    model = ScriptedAgent(turns=[ai_call("get_weather", {"city": "Oslo"})])
    agent = build_guarded_agent(model, [get_weather], FAST, checkpointer=saver)
    config = {"configurable": {"thread_id": thread_id}}
    if mode == "pause":
        result = agent.invoke({"messages": [("user", QUESTION)]}, config)
        return {"interrupt": result["__interrupt__"][0].value, "calls": calls}
    result = agent.invoke(Command(resume=ANSWER), config)
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    return {
        "calls": calls,
        "records": [m.response_metadata.get("guard", {}) for m in tool_messages],
        "tool_contents": [m.content for m in tool_messages],
        "final": result["messages"][-1].content,
        "interrupted": bool(result.get("__interrupt__")),
    }


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] not in ("pause", "resume"):
        sys.exit(__doc__)
    print(json.dumps(main(*sys.argv[1:]), default=str))
