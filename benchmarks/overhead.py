"""What the guard costs per tool call: ``Guard.check`` alone, and a guarded node step against a plain
``ToolNode`` step on the same calls.

Cases: schemas of 1, 10 and 50 parameters, registries of 1 and 50 tools, conversations of 1 and 50
turns. Every call is valid and its values are stated in the conversation, so every check (schema,
placeholders, grounding, repetition) does its full work and the call runs. Prints p50/p99 in
milliseconds and the ratio of the guarded step to the plain one.

    python benchmarks/overhead.py [--iterations 300] [--json out.json] [--semantic]

With ``--semantic`` the embedding checks are on (warm model; its load time is printed apart).
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from benchmarks.metrics import percentiles
from guard.conversation import Conversation
from guard.engine import Guard
from guard.node import GuardedToolNode

WORDS = ["Berlin", "Paris", "Lisbon", "Oslo", "Madrid", "Vienna", "Prague", "Dublin", "Warsaw", "Athens"]


def make_tool(name: str, n_params: int) -> StructuredTool:
    props = {f"p{i}": {"type": "string" if i % 2 == 0 else "integer", "description": f"parameter {i}"} for i in range(n_params)}
    schema = {"type": "object", "properties": props, "required": list(props)}
    return StructuredTool.from_function(func=lambda **kw: "ok", name=name, description=f"tool {name}", args_schema=schema)


def make_args(n_params: int) -> dict[str, Any]:
    return {f"p{i}": (WORDS[i % len(WORDS)] + str(i) if i % 2 == 0 else 100 + i) for i in range(n_params)}


def make_messages(args: dict[str, Any], turns: int) -> list[Any]:
    stated = ", ".join(f"{k} is {v}" for k, v in args.items())
    messages: list[Any] = []
    for t in range(turns - 1):
        messages.append(HumanMessage(f"turn {t}: tell me something about {WORDS[t % len(WORDS)]} in {2000 + t}"))
        messages.append(AIMessage(content=f"Here is what I know about {WORDS[t % len(WORDS)]}."))
    messages.append(HumanMessage(f"Please run it: {stated}."))
    messages.append(AIMessage(content="", tool_calls=[{"name": "tool0", "args": args, "id": "call-x", "type": "tool_call"}]))
    return messages


def one_node_graph(node: Any) -> Any:
    """ToolNode runs inside a graph (it reads LangGraph's runtime); both nodes get the same one."""
    graph = StateGraph(MessagesState)
    graph.add_node("tools", node)
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile()


def timed(fn: Callable[[], Any], iterations: int) -> list[float]:
    for _ in range(min(20, iterations)):
        fn()
    gc.collect()
    out = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def run_case(n_params: int, n_tools: int, turns: int, iterations: int, policy: Any = None) -> dict[str, Any]:
    tools = [make_tool(f"tool{i}", n_params) for i in range(n_tools)]
    args = make_args(n_params)
    messages = make_messages(args, turns)
    state = {"messages": messages}
    guard = Guard(tools, policy)
    plain, guarded = one_node_graph(ToolNode(tools)), one_node_graph(GuardedToolNode(tools, guard=guard))
    call = messages[-1].tool_calls[0]
    decision = guard.check(call, messages)
    assert decision.runs, f"benchmark call must be clean, got {decision.action}: {decision.findings}"
    out = guarded.invoke(state)["messages"][-1]
    assert isinstance(out, ToolMessage) and out.status != "error", out
    check_ms = timed(lambda: guard.check(call, Conversation.from_messages(messages)), iterations)
    plain_ms = timed(lambda: plain.invoke(state), iterations)
    guarded_ms = timed(lambda: guarded.invoke(state), iterations)
    return {
        "params": n_params,
        "tools": n_tools,
        "turns": turns,
        "check_p50": percentiles(check_ms)["p50"],
        "check_p99": percentiles(check_ms)["p99"],
        "plain_p50": percentiles(plain_ms)["p50"],
        "plain_p99": percentiles(plain_ms)["p99"],
        "guarded_p50": percentiles(guarded_ms)["p50"],
        "guarded_p99": percentiles(guarded_ms)["p99"],
        "ratio_p50": percentiles(guarded_ms)["p50"] / percentiles(plain_ms)["p50"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--json", dest="json_path", help="also write the rows as JSON here")
    parser.add_argument("--semantic", action="store_true", help="with the embedding checks on (the semantic extra)")
    ns = parser.parse_args()
    policy = None
    if ns.semantic:
        from guard.policy import Policy
        from guard.semantic import semantic_for

        policy = Policy(checks={"semantic": {"enabled": True}})
        start = time.perf_counter()
        semantic_for(policy.checks.semantic)
        print(f"semantic checks on; model load {time.perf_counter() - start:.2f} s (not in the timings below)\n")
    rows = [
        run_case(p, t, turns, ns.iterations, policy)
        for p in (1, 10, 50)
        for t in (1, 50)
        for turns in (1, 50)
    ]
    header = "| params | tools | turns | check p50 | check p99 | ToolNode p50 | ToolNode p99 | guarded p50 | guarded p99 | guarded/plain p50 |"
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for r in rows:
        print(
            f"| {r['params']} | {r['tools']} | {r['turns']} | {r['check_p50']:.3f} | {r['check_p99']:.3f} | "
            f"{r['plain_p50']:.3f} | {r['plain_p99']:.3f} | {r['guarded_p50']:.3f} | {r['guarded_p99']:.3f} | {r['ratio_p50']:.2f}x |"
        )
    middle = [r for r in rows if r["params"] == 10]
    worst = max(r["check_p99"] for r in middle)
    target = 30.0 if ns.semantic else 0.5
    print(f"\ntimes in ms, {ns.iterations} iterations per cell. Target: Guard.check p99 < {target} ms for 10 parameters"
          f"{' with embeddings' if ns.semantic else ''}; worst 10-parameter check p99 = {worst:.3f} ms -> "
          f"{'met' if worst < target else 'NOT met'}")
    if ns.json_path:
        with open(ns.json_path, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
