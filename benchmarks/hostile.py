"""Time ``Guard.check`` on hostile tool schemas and arguments (``python benchmarks/hostile.py``).

Each row is one request an attacker controls (the tool schema, the arguments, or both): a
catastrophic pattern, a pattern only a backtracking engine can run, uniqueItems over thousands of
objects, keys matched against a catastrophic patternProperties, a remote ``$ref`` to a loopback
listener (refused at registration: the time is the registration's, and the listener counts the
connections it got), a ``$ref`` loop, branches that multiply (through shared references: refused
at registration; with the input's depth: stopped by the step budget), a long enum, and deep
nesting (as JSON text, the way a model sends it).
It prints the median and worst wall time of a few runs per row, the median CPU time (what the
regex budget counts: on a loaded machine wall time stretches) and the outcome; the target is a
worst below 100 ms.
"""

from __future__ import annotations

import socket
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: the repository root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from guard import Guard  # noqa: E402
from guard.policy import Policy  # noqa: E402
from guard.registry import ToolRegistry, ToolSchemaError  # noqa: E402

RUNS = 5
TARGET_MS = 100.0


def _tool(parameters: dict[str, Any]) -> dict[str, Any]:
    return {"name": "lookup", "description": "Look a code up.", "parameters": parameters}


def _one(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {name: schema}, "required": [name]}


def _checked(parameters: dict[str, Any], args: Any) -> Callable[[], str]:
    guard = Guard([_tool(parameters)])

    def run() -> str:
        decision = guard.check({"name": "lookup", "args": args, "id": "c1"})
        rules = sorted({f.rule or "" for f in decision.findings if f.check == "arguments"})
        return f"{decision.action.value}: {', '.join(rules) or 'no schema finding'}"

    return run


def _refused(parameters: dict[str, Any]) -> Callable[[], str]:
    def run() -> str:
        try:
            ToolRegistry([_tool(parameters)])
        except ToolSchemaError as exc:
            return f"ToolSchemaError at {exc.path}"
        return "registered (!)"

    return run


def _nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def _fanned(levels: int) -> dict[str, Any]:
    """Each level an anyOf of two references to the next: 2**levels checks of one value."""
    defs = {f"d{i}": {"anyOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]} for i in range(levels)}
    return {"type": "object", "$defs": {**defs, f"d{levels}": {"type": "integer"}}, "properties": {"x": {"$ref": "#/$defs/d0"}}}


def _doubled() -> dict[str, Any]:
    """Arrays whose items are checked by ``items`` and again by ``contains``: 2**depth checks."""
    node = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"$ref": "#/$defs/n"}, "contains": {"$ref": "#/$defs/n"}}]}
    return {"type": "object", "$defs": {"n": node}, "properties": {"v": {"$ref": "#/$defs/n"}}}


def _listener() -> tuple[socket.socket, Callable[[], int]]:
    """A loopback listener that never accepts: a connection attempt would sit in its backlog."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)

    def connections() -> int:
        count = 0
        while True:
            try:
                conn, _ = sock.accept()
            except BlockingIOError:
                return count
            conn.close()
            count += 1

    return sock, connections


def rows() -> list[tuple[str, Callable[[], str]]]:
    """The requests; a label ending in ``*`` is stopped by the validation budget by design (it is
    held to ``checks.limits.validation_timeout_ms`` of checking, not to the target)."""
    evil = {"type": "string", "pattern": "^(a+)+$"}
    backref = {"type": "string", "pattern": r"^(a|aa)+\1$"}
    objects = [{"id": i, "tags": ["x", i], "meta": {"a": i}} for i in range(3000)]
    sock, connections = _listener()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/s.json"
    remote = _refused(_one("code", {"$ref": url}))

    def remote_counted() -> str:
        outcome = remote()
        return f"{outcome}; {connections()} connections"

    looped = {"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
              "properties": {"x": {"$ref": "#/$defs/a"}}}
    return [
        ("pattern ^(a+)+$, 34 chars", _checked(_one("code", evil), {"code": "a" * 33 + "b"})),
        ("pattern ^(a+)+$, 10,000 chars", _checked(_one("code", evil), {"code": "a" * 9_999 + "b"})),
        ("backreference pattern, 41 chars (regex, timed out)", _checked(_one("code", backref), {"code": "a" * 40 + "b"})),
        ("50 values x backreference pattern", _checked(_one("codes", {"type": "array", "items": backref}),
                                                       {"codes": ["a" * 40 + "b"] * 50})),
        ("patternProperties ^(a+)+$, 1,000 keys of 30 chars", _checked(
            _one("tags", {"type": "object", "patternProperties": {"^(a+)+$": {}}, "additionalProperties": False}),
            {"tags": {"a" * 28 + f"b{i}": i for i in range(1000)}})),
        ("uniqueItems, 3,000 objects", _checked(_one("rows", {"type": "array", "uniqueItems": True}), {"rows": objects})),
        ("$ref to a loopback URL (registration)", remote_counted),
        ("$ref loop (registration)", _refused(looped)),
        ("10,000 values x 10,000-member enum, all wrong *", _checked(
            _one("xs", {"type": "array", "items": {"enum": [f"m{i}" for i in range(10_000)]}}), {"xs": ["zz"] * 10_000})),
        ("anyOf over shared $refs, 20 deep (registration)", _refused(_fanned(20))),
        ("items + contains on arrays 30 deep *", _checked(_doubled(), {"v": _nested(30)})),
        ("nesting 30 deep", _checked(_one("v", {}), {"v": _nested(30)})),
        ("nesting 100,000 deep (JSON text)", _checked(_one("v", {}), '{"v": ' + "[" * 100_000 + "]" * 100_000 + "}")),
    ]


def main() -> int:
    table = []
    for label, run in rows():
        times, cpu = [], []
        for _ in range(RUNS):
            start, start_cpu = time.perf_counter(), time.process_time()
            outcome = run()
            times.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - start_cpu) * 1000)
        table.append((label, statistics.median(times), max(times), statistics.median(cpu), outcome))
    width = max(len(r[0]) for r in table)
    print(f"{'request':<{width}} | median ms | worst ms | CPU ms | outcome")
    print(f"{'-' * width}-|-----------|----------|--------|--------")
    for label, median, worst, cpu_ms, outcome in table:
        print(f"{label:<{width}} | {median:9.2f} | {worst:8.2f} | {cpu_ms:6.2f} | {outcome}")
    held = [r for r in table if not r[0].endswith("*")]
    slowest = max(held, key=lambda r: r[2])  # by worst wall time
    budgeted = max((r for r in table if r[0].endswith("*")), key=lambda r: r[2])
    print(f"\nworst: {slowest[2]:.1f} ms ({slowest[0]}); target < {TARGET_MS:.0f} ms: {'met' if slowest[2] < TARGET_MS else 'MISSED'}")
    print(f"* stopped by the validation budget ({Policy().checks.limits.validation_timeout_ms:g} ms of CPU time for the "
          f"checking itself): worst {budgeted[2]:.1f} ms ({budgeted[0]})")
    return 0 if slowest[2] < TARGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
