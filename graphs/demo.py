"""An offline demo of the guard in a real LangGraph agent, driven by a scripted chat model.

The script shows the five behaviours a user should see on day one: a call with bad arguments is
repaired, a hallucinated tool gets feedback and is retried, a call with an invented value pauses for
the human and the answer resumes it, and a flaky tool is retried with backoff. ``guard demo``
prints the trace; ``run_demo()`` returns it for tests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from guard_graphs.agent import build_guarded_agent

SYSTEM = "You are a travel assistant. Today is 2021-09-27."
USER = "I'm Ada Lovelace. Find me a flight from Berlin to Paris tomorrow for 2 people, book the first one, and tell me the weather in Paris."
HUMAN_ANSWER = {"email": "ada@analytical-engines.org"}


def make_tools() -> list[Any]:
    """Three simulated travel tools; ``get_weather`` times out on its first call."""
    weather_calls = {"n": 0}

    @tool
    def search_flights(from_city: str, to_city: str, date: str, passengers: int) -> str:
        """Search flights between two cities on a date (format YYYY-MM-DD) for a number of passengers."""
        return json.dumps([{"flight_id": "LH1234", "from": from_city, "to": to_city, "date": date, "seats": passengers}])

    @tool
    def book_flight(flight_id: str, passenger_name: str, email: str) -> str:
        """Book a flight for a passenger; the confirmation goes to the email address."""
        return json.dumps({"booking": "BK-001", "flight_id": flight_id, "passenger": passenger_name, "email": email})

    @tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        weather_calls["n"] += 1
        if weather_calls["n"] == 1:
            raise TimeoutError("weather service did not answer within 2 s")
        return json.dumps({"city": city, "forecast": "light rain", "celsius": 14})

    return [search_flights, book_flight, get_weather]


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}])


def script() -> list[AIMessage]:
    """What the scripted model says, turn by turn."""
    return [
        _call("search_flights", {"fromCity": "Berlin", "to_city": "Paris", "date": "2021-09-28", "passengers": "2"}, "c1"),
        _call("book_flight_ticket", {"flight_id": "LH1234", "passenger_name": "Ada Lovelace"}, "c2"),
        _call("book_flight", {"flight_id": "LH1234", "passenger_name": "Ada Lovelace", "email": "ada.lovelace@gmail.com"}, "c3"),
        _call("get_weather", {"city": "Paris"}, "c4"),
        AIMessage(content="Booked LH1234 for tomorrow (BK-001); Paris: light rain, 14 °C."),
    ]


@dataclass
class Step:
    """One line of the demo trace."""

    kind: str  # "user", "model", "guard", "tool", "interrupt", "resume", "answer"
    text: str
    data: dict[str, Any] = field(default_factory=dict)


def run_demo(policy: Any = None) -> list[Step]:
    """Run the scripted agent to the end, answering the interrupt as a human would."""
    model = GenericFakeChatModel(messages=iter(script()))
    policy = policy or {"backoff": {"initial_seconds": 0.05, "jitter_seconds": 0}}
    agent = build_guarded_agent(model, make_tools(), policy, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "demo"}}
    steps = [Step("user", USER)]
    payload: Any = {"messages": [("system", SYSTEM), ("user", USER)]}
    while payload is not None:
        pending = None
        for update in agent.stream(payload, config, stream_mode="updates"):
            for node, value in update.items():
                if node == "__interrupt__":
                    pending = value[0].value
                    steps.append(Step("interrupt", pending["requests"][0]["question"], pending))
                else:
                    steps.extend(_describe(node, value))
        payload = None
        if pending is not None:
            answers = {cid: {"action": "answer", "values": HUMAN_ANSWER} for cid in pending["tool_call_ids"]}
            steps.append(Step("resume", json.dumps(answers), answers))
            payload = Command(resume=answers)
    return steps


def _describe(node: str, value: Any) -> list[Step]:
    steps = []
    for msg in (value or {}).get("messages", []):
        if isinstance(msg, AIMessage) and msg.tool_calls:
            for c in msg.tool_calls:
                steps.append(Step("model", f"{c['name']}({json.dumps(c['args'])})", dict(c)))
        elif isinstance(msg, AIMessage):
            steps.append(Step("answer", str(msg.content)))
        elif isinstance(msg, ToolMessage):
            rec = msg.response_metadata.get("guard", {})
            steps.append(Step("guard", _guard_line(rec), rec))
            steps.append(Step("tool", f"{msg.name} -> {_shorten(str(msg.content), 160)}", {"status": msg.status}))
    return steps


def _shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, with "…" when something was cut."""
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def _guard_line(rec: dict[str, Any]) -> str:
    parts = [rec.get("action", "allow")]
    if rec.get("categories"):
        parts.append("[" + ", ".join(rec["categories"]) + "]")
    for r in rec.get("repairs", []):
        parts.append(f"{r['kind']} {r['path']}: {r['before']!r} -> {r['after']!r}")
    if rec.get("attempts", 1) > 1:
        parts.append(f"after {rec['attempts']} attempts ({', '.join(rec.get('attempt_errors', []))} on the way)")
    return " ".join(parts)


def print_demo(steps: list[Step]) -> None:
    """Render the trace readably in the terminal (rich)."""
    from rich.console import Console
    from rich.table import Table

    styles = {"user": "bold", "model": "cyan", "guard": "magenta", "tool": "green", "interrupt": "yellow",
              "resume": "yellow", "answer": "bold green"}
    table = Table(title="guard demo: a scripted agent, guarded", show_lines=False)
    table.add_column("step", style="dim")
    table.add_column("what")
    for s in steps:
        table.add_row(s.kind, f"[{styles.get(s.kind, '')}]{_escape(s.text)}[/]")
    Console().print(table)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
