"""What the guard costs per tool call: ``Guard.check`` alone, and a guarded node step against a plain
``ToolNode`` step on the same calls.

Cases: schemas of 1, 10 and 50 parameters, registries of 1 and 50 tools, conversations of 1 and 50
turns. Every call is valid and its values are stated in the conversation, so every check (schema,
placeholders, grounding, repetition) does its full work and the call runs. Prints p50/p99 in
milliseconds and the ratio of the guarded step to the plain one.

    python benchmarks/overhead.py [--iterations 300] [--json out.json] [--semantic]

With ``--semantic`` the embedding checks are on (its load time is printed apart) and a second
table follows: one tool call whose string values are said word for word (``stated``), in other words
(``paraphrased``: only the paraphrase matcher grounds them) or nowhere (``unsaid``: it looks and
finds nothing), in conversations of 1 and 50 turns, with warm caches (the same thread checked again)
and, with ``--cold``, cold ones (every iteration a new thread: its messages never seen, as the first
call of a production thread; the tools stay embedded, once per registry). Per case: decision
latency, model passes per decision and the cache hit rate (counts, so they do not depend on the
machine's load), and the process's resident memory with the model loaded.

    python benchmarks/overhead.py --semantic --cold [--backend onnx|onnx-int8|torch] [--budget-ms 25]
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

from guard_bench.metrics import percentiles
from guard.conversation import Conversation
from guard.engine import Guard
from guard.node import GuardedToolNode

#: Values said in other words, and where (``paraphrased``), for the semantic cases.
PARAPHRASES = [
    ("title", "Pick up dry cleaning", "Remind me that I am picking up my dry cleaning after work."),
    ("goal", "increase brand awareness", "The campaign is about increasing brand awareness in Europe."),
    ("symptom", "nausea", "Since this morning I have been feeling nauseous."),
]
UNSAID = [("title", "Renew the car insurance"), ("goal", "reduce churn"), ("symptom", "migraine")]
FILLER = [
    "What is the weather like in {city} this week?",
    "The {city} office opens at nine; the meeting notes are in the shared folder.",
    "Could you summarise the last report about {city} for me?",
]

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


def semantic_tool() -> StructuredTool:
    props = {name: {"type": "string", "description": f"the {name}"} for name, _, _ in PARAPHRASES}
    schema = {"type": "object", "properties": props, "required": list(props)}
    return StructuredTool.from_function(func=lambda **kw: "ok", name="note", description="Save a note with a title, goal and symptom",
                                        args_schema=schema)


def semantic_messages(kind: str, turns: int, salt: str) -> tuple[list[Any], dict[str, Any]]:
    """A conversation of ``turns`` user turns ending in a call whose values are ``kind``: stated,
    paraphrased or unsaid. ``salt`` makes every message new text (a new thread, cold caches)."""
    if kind == "unsaid":
        args = {name: value for name, value in UNSAID}
        said = ["Please save a note for me."]
    else:
        args = {name: value for name, value, _ in PARAPHRASES}
        said = [f"Please note: {value}." for _, value, _ in PARAPHRASES] if kind == "stated" else [s for _, _, s in PARAPHRASES]
    messages: list[Any] = []
    for t in range(turns - 1):
        city = WORDS[t % len(WORDS)]
        messages.append(HumanMessage(FILLER[t % len(FILLER)].format(city=city) + salt))
        messages.append(AIMessage(content=f"Here is what I know about {city}.{salt}"))
    messages.append(HumanMessage(" ".join(said) + " Save it as a note." + salt))
    messages.append(AIMessage(content="", tool_calls=[{"name": "note", "args": args, "id": "call-n", "type": "tool_call"}]))
    return messages, args


def run_semantic_case(kind: str, turns: int, cold: bool, iterations: int, policy: Any) -> dict[str, Any]:
    guard = Guard([semantic_tool()], policy)
    semantic = guard.semantic
    times, passes, lookups, hits = [], [], 0, 0
    warm_messages, _ = semantic_messages(kind, turns, "")
    for i in range(iterations + 5):
        messages = semantic_messages(kind, turns, f" (thread {i})")[0] if cold else warm_messages
        call = messages[-1].tool_calls[0]
        conversation = Conversation.from_messages(messages[:-1])
        before = semantic.stats()
        start = time.perf_counter()
        guard.check(call, conversation)
        elapsed = (time.perf_counter() - start) * 1000
        after = semantic.stats()
        if i < 5:  # warm-up: the first calls load lazily what a served process loads once
            continue
        times.append(elapsed)
        passes.append(after["passes"] - before["passes"])
        lookups += after["lookups"] - before["lookups"]
        hits += after["hits"] - before["hits"]
    p = percentiles(times)
    return {"kind": kind, "turns": turns, "caches": "cold" if cold else "warm", "check_p50": p["p50"], "check_p99": p["p99"],
            "passes_per_decision": sum(passes) / len(passes), "cache_hit_rate": hits / lookups if lookups else None}


def rss_mib() -> float:
    """This process's resident memory (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:")) / 1024
    except (OSError, StopIteration, ValueError):
        return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--json", dest="json_path", help="also write the rows as JSON here")
    parser.add_argument("--semantic", action="store_true", help="with the embedding checks on (the semantic extra)")
    parser.add_argument("--cold", action="store_true", help="with --semantic: also every iteration a new thread (cold caches)")
    parser.add_argument("--backend", choices=("onnx", "onnx-int8", "torch"), help="with --semantic: checks.semantic.backend")
    parser.add_argument("--budget-ms", type=float, help="with --semantic: checks.semantic.budget_ms")
    parser.add_argument("--semantic-only", action="store_true", help="with --semantic: only the semantic table")
    ns = parser.parse_args()
    policy = None
    semantic_rows: list[dict[str, Any]] = []
    if ns.semantic:
        from guard.policy import Policy
        from guard.semantic import semantic_for

        rss = rss_mib()
        config: dict[str, Any] = {"enabled": True, "backend": ns.backend, "budget_ms": ns.budget_ms}
        policy = Policy(checks={"semantic": config})
        start = time.perf_counter()
        semantic = semantic_for(policy.checks.semantic)
        load = time.perf_counter() - start
        backend = getattr(semantic.embedder, "variant", None) or type(semantic.embedder).__name__
        print(f"semantic checks on ({backend}); model load {load:.2f} s (not in the timings below); "
              f"resident memory {rss:.0f} MiB before, {rss_mib():.0f} MiB after (per worker process: the model loads once per process)\n")
        semantic_rows = [
            run_semantic_case(kind, turns, cold, ns.iterations, policy)
            for cold in ((False, True) if ns.cold else (False,))
            for kind in ("stated", "paraphrased", "unsaid")
            for turns in (1, 50)
        ]
        print("| values | turns | caches | check p50 | check p99 | model passes per decision | cache hit rate |")
        print("|---|---|---|---|---|---|---|")
        for r in semantic_rows:
            rate = "-" if r["cache_hit_rate"] is None else f"{r['cache_hit_rate']:.2f}"
            print(f"| {r['kind']} | {r['turns']} | {r['caches']} | {r['check_p50']:.3f} | {r['check_p99']:.3f} | "
                  f"{r['passes_per_decision']:.2f} | {rate} |")
        worst = max(r["check_p99"] for r in semantic_rows)
        print(f"\nGuard.check with embeddings, ms, {ns.iterations} iterations per row; worst p99 {worst:.3f} ms; resident memory "
              f"{rss_mib():.0f} MiB\n")
        if ns.semantic_only:
            if ns.json_path:
                with open(ns.json_path, "w", encoding="utf-8") as fh:
                    json.dump({"semantic": semantic_rows, "model_load_s": load}, fh, indent=2)
            return
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
            json.dump({"rows": rows, "semantic": semantic_rows} if semantic_rows else rows, fh, indent=2)


if __name__ == "__main__":
    main()
