"""Decisions per second and latency of the guard as a service: ``POST /v1/check`` over real HTTP,
and the same decision in process, each with the in-memory and the Redis state store.

* ``http``: uvicorn serves ``create_app()`` (one worker, in its own process, on a free loopback
  port); 1, 2, 4 and 8 client threads, each with its own keep-alive ``httpx.Client``, post requests
  back to back and parse the decisions.
* ``in-process``: what ``/v1/check`` does per decision without HTTP, minus building the request's
  tool registry (an in-process adapter holds one ``Guard``): parse the conversation and the call,
  read the tool's circuit and the thread's retry counts from the store (through a
  ``ResilientStore``, as the service does), merge them with the conversation's, ``Guard.check``.

The request is an agent's realistic one: 10 registered tools of 10 parameters, a 10-turn
conversation (two earlier tool calls with results), a valid call whose values the user stated, and
a ``thread_id`` so the retry budgets are read from the store. Each request carries a fresh
reference number in the user's latest message, so the per-message caches see one new message per
decision, as they do in a live conversation. Every decision must be ``allow``.

Redis is a throwaway ``redis-server`` started on a free 127.0.0.1 port and stopped at the end.
Each cell runs ``--requests`` decisions or ``--seconds``, whichever comes first, after a short
warm-up. Prints a Markdown table and two verdicts:

* Redis adds under 1 ms p99 per decision (in-process, 1 client: Redis p99 minus memory p99);
* the service holds >= 500 decisions/s (best ``http`` throughput).

    python benchmarks/throughput.py [--requests 4000] [--seconds 5] [--clients 1 2 4 8] [--json rows.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from guard_bench.metrics import percentiles
from guard.budgets import GuardState
from guard.conversation import Conversation
from guard.engine import Guard
from guard.models import ToolCall
from guard.state import MemoryStore, ResilientStore, StateConfig, StateStore

STORES = ("memory", "redis")
MODES = ("in-process", "http")
LATENCY_TARGET_MS = 1.0
THROUGHPUT_TARGET = 500.0
NONCE = "@@NONCE@@"

# -- the request --------------------------------------------------------------------------------

_TOOLS: list[tuple[str, str, list[tuple[str, dict[str, Any], Any]]]] = []
_CITIES = ["Berlin", "Paris", "Lisbon", "Oslo", "Madrid", "Vienna", "Prague", "Dublin", "Warsaw", "Athens"]
_TOPICS = ["flights", "hotels", "cars", "trains", "weather", "restaurants", "museums", "events", "visas", "insurance"]


def _param(i: int, tool: int) -> tuple[str, dict[str, Any], Any]:
    """Parameter ``i`` of tool ``tool``: a mix of the types agents' tools take, with the value the
    benchmark call passes (always one the user states)."""
    kind = i % 5
    if kind == 0:
        return f"city_{i}", {"type": "string", "description": f"a city ({i})"}, _CITIES[(i + tool) % len(_CITIES)]
    if kind == 1:
        return f"count_{i}", {"type": "integer", "minimum": 0, "description": f"how many ({i})"}, 10 + i + tool
    if kind == 2:
        levels = ["economy", "premium", "business", "first"]
        return f"class_{i}", {"type": "string", "enum": levels, "description": "travel class"}, levels[(i + tool) % 4]
    if kind == 3:
        return f"budget_{i}", {"type": "number", "description": f"budget in euros ({i})"}, 250.5 + i
    return f"name_{i}", {"type": "string", "description": f"a person's name ({i})"}, f"Alex{i}Smith"


def tool_specs(n_tools: int = 10, n_params: int = 10) -> list[dict[str, Any]]:
    """OpenAI tool entries, as an agent sends them."""
    out = []
    for t in range(n_tools):
        params = [_param(i, t) for i in range(n_params)]
        out.append(
            {
                "type": "function",
                "function": {
                    "name": f"search_{_TOPICS[t % len(_TOPICS)]}",
                    "description": f"Search {_TOPICS[t % len(_TOPICS)]} matching the traveller's wishes.",
                    "parameters": {
                        "type": "object",
                        "properties": {name: schema for name, schema, _ in params},
                        "required": [name for name, _, _ in params],
                    },
                },
            }
        )
    return out


def call_args(tool: int = 3, n_params: int = 10) -> dict[str, Any]:
    return {name: value for name, _, value in (_param(i, tool) for i in range(n_params))}


def conversation(args: dict[str, Any], turns: int = 10) -> list[dict[str, Any]]:
    """A ``turns``-turn OpenAI-style conversation: small talk, two earlier tool calls with their
    results, and the user's latest message stating every value of the call (plus ``NONCE``)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a travel assistant. Today is 2025-06-02."}]
    for t in range(turns - 1):
        city = _CITIES[t % len(_CITIES)]
        messages.append({"role": "user", "content": f"Turn {t}: what do you know about {_TOPICS[t % 10]} in {city}?"})
        if t in (3, 6):
            prior = {"city_0": city, "count_1": t + 1}
            call_id = f"call_prior_{t}"
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"id": call_id, "type": "function",
                         "function": {"name": "search_weather", "arguments": json.dumps(prior)}}
                    ],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "content": f"{city}: sunny, 24 degrees."})
        messages.append({"role": "assistant", "content": f"{city} is lovely for {_TOPICS[t % 10]} in June."})
    stated = ", ".join(f"{k} is {v}" for k, v in args.items())
    messages.append({"role": "user", "content": f"Please search hotels now (ref {NONCE}): {stated}."})
    return messages


@dataclass(frozen=True)
class Request:
    tools: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    call: dict[str, Any]

    def messages_for(self, nonce: int) -> list[dict[str, Any]]:
        last = self.messages[-1]
        return [*self.messages[:-1], {**last, "content": last["content"].replace(NONCE, str(nonce))}]

    def body_parts(self, thread_id: str) -> tuple[bytes, bytes]:
        """The JSON body split around the nonce: ``head + str(n).encode() + tail``."""
        body = json.dumps({"tools": self.tools, "messages": self.messages, "call": self.call, "thread_id": thread_id})
        head, tail = body.split(NONCE)
        return head.encode(), tail.encode()


def make_request() -> Request:
    args = call_args()
    return Request(tool_specs(), conversation(args), {"name": "search_hotels", "args": args, "id": "call_bench"})


# -- cells ----------------------------------------------------------------------------------------

_nonces = itertools.count(1)


@dataclass
class Cell:
    mode: str
    store: str
    clients: int
    decisions: int
    seconds: float
    p50_ms: float
    p99_ms: float
    errors: int

    @property
    def per_second(self) -> float:
        return self.decisions / self.seconds if self.seconds > 0 else 0.0

    def row(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "store": self.store,
            "clients": self.clients,
            "decisions": self.decisions,
            "seconds": round(self.seconds, 3),
            "decisions_per_s": round(self.per_second, 1),
            "p50_ms": round(self.p50_ms, 3),
            "p99_ms": round(self.p99_ms, 3),
            "errors": self.errors,
        }


def run_cell(
    mode: str,
    store: str,
    clients: int,
    make_worker: Callable[[int], Callable[[], bool]],
    requests: int,
    seconds: float,
    warmup: int,
) -> Cell:
    """``clients`` threads, each calling its worker (one decision; True when it is the expected
    one) back to back, until ``requests`` decisions are done or ``seconds`` have passed."""
    workers = [make_worker(c) for c in range(clients)]
    for worker in workers:  # warm-up: connections open, caches and the server's code paths hot
        for _ in range(max(1, warmup // clients)):
            worker()
    tickets = itertools.count()
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors = [0] * clients
    barrier = threading.Barrier(clients + 1)
    deadline = [0.0]

    def loop(c: int) -> None:
        worker, out = workers[c], latencies[c]
        perf = time.perf_counter
        barrier.wait()
        while next(tickets) < requests:
            start = perf()
            try:
                ok = worker()
            except (httpx.HTTPError, ValueError, KeyError):  # a dropped connection, a body not JSON: an error
                ok = False
            end = perf()
            out.append((end - start) * 1000)
            if not ok:
                errors[c] += 1
            if end >= deadline[0]:
                break

    threads = [threading.Thread(target=loop, args=(c,), daemon=True) for c in range(clients)]
    for t in threads:
        t.start()
    start = time.perf_counter()
    deadline[0] = start + seconds
    barrier.wait()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    merged = [x for part in latencies for x in part]
    return Cell(mode, store, clients, len(merged), elapsed, percentiles(merged)["p50"], percentiles(merged)["p99"], sum(errors))


# -- in process -----------------------------------------------------------------------------------


def in_process_worker(guard: Guard, store: StateStore, request: Request, run_id: str) -> Callable[[int], Callable[[], bool]]:
    """One decision as ``_Service.check`` makes it, with the registry built once."""

    def make(client: int) -> Callable[[], bool]:
        thread_id = f"bench-{run_id}-inproc-{client}"

        def decide() -> bool:
            call = ToolCall.from_any(request.call)
            conv = Conversation.from_messages(request.messages_for(next(_nonces)))
            circuit = store.circuit(call.name)  # the service's _apply_circuit
            if circuit.state != "closed":
                return False
            local = GuardState.from_conversation(conv)  # the service's _budgets
            counts = store.get_retries(thread_id, call.signature)
            per_call = {**local.per_call, call.signature: max(local.retries_of(call.signature), counts.per_call)}
            state = GuardState(per_call=per_call, turn_retries=local.turn_retries,
                               thread_retries=max(local.thread_retries, counts.per_thread))
            return guard.check(call, conv, state).action.value == "allow"

        return decide

    return make


# -- over HTTP ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until(ready: Callable[[], bool], process: subprocess.Popen[bytes], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with code {process.returncode} before answering")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not answer within {timeout:.0f} s")
        time.sleep(0.05)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class RedisServer:
    """A throwaway redis-server on a free 127.0.0.1 port, no persistence."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server not found: install Debian's redis-server (apt-get install -y redis-server)")
        port = free_port()
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_until(self._answers, self.process, f"redis-server on port {port}", timeout=10)
        except BaseException:
            self.stop()
            raise

    def _answers(self) -> bool:
        import redis

        client = redis.Redis.from_url(self.url, socket_timeout=0.5, socket_connect_timeout=0.5)
        try:
            return bool(client.ping())
        except redis.exceptions.ConnectionError:
            return False
        finally:
            client.close()

    def stop(self) -> None:
        _stop(self.process)


def make_store(kind: str, redis_url: str | None, key_prefix: str) -> StateStore:
    """The store as the service holds it: wrapped in a ``ResilientStore`` (fail closed)."""
    if kind == "memory":
        return ResilientStore(MemoryStore(), "fail_closed")
    from guard.state.redis import RedisStore

    return ResilientStore(RedisStore(redis_url or "", key_prefix=key_prefix), "fail_closed")


def serve(port: int, store: str, redis_url: str | None, key_prefix: str, access_log: bool) -> None:
    """The server process: ``create_app()`` with the chosen store, one uvicorn worker."""
    import uvicorn

    from guard.service import create_app

    if store == "redis":
        config = StateConfig(backend="redis", redis_url=redis_url, key_prefix=key_prefix)
        app = create_app(token="", state_config=config)
    else:
        os.environ.pop("GUARD_REDIS_URL", None)
        app = create_app(token="", state_config=StateConfig())
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=access_log)


class Service:
    """``create_app()`` under uvicorn in a child process on a free loopback port."""

    def __init__(self, store: str, redis_url: str | None, key_prefix: str, access_log: bool) -> None:
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        env = {k: v for k, v in os.environ.items() if k not in ("GUARD_REDIS_URL", "GUARD_API_TOKEN", "GUARD_POLICY")}
        command = [sys.executable, os.path.abspath(__file__), "--_serve", str(port), "--_store", store,
                   "--_key-prefix", key_prefix]
        if redis_url:
            command += ["--_redis-url", redis_url]
        if access_log:
            command.append("--access-log")
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
        try:
            _wait_until(self._ready, self.process, f"the guard service on port {port}")
        except BaseException:
            self.stop()
            raise

    def _ready(self) -> bool:
        try:
            return httpx.get(f"{self.base}/readyz", timeout=0.5).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        _stop(self.process)


def http_worker(base: str, request: Request, run_id: str, clients_out: list[httpx.Client]) -> Callable[[int], Callable[[], bool]]:
    def make(client: int) -> Callable[[], bool]:
        http = httpx.Client(base_url=base, timeout=10.0, limits=httpx.Limits(max_connections=1, max_keepalive_connections=1))
        clients_out.append(http)
        head, tail = request.body_parts(f"bench-{run_id}-http-{client}")
        headers = {"Content-Type": "application/json"}

        def decide() -> bool:
            response = http.post("/v1/check", content=head + str(next(_nonces)).encode() + tail, headers=headers)
            return response.status_code == 200 and response.json()["action"] == "allow"

        return decide

    return make


# -- the run --------------------------------------------------------------------------------------


def check_request(request: Request) -> None:
    """The benchmark request must be a clean one: every check does its full work and allows it."""
    decision = Guard(request.tools, None).check(request.call, request.messages_for(0))
    if decision.action.value != "allow":
        raise RuntimeError(f"benchmark call must be allowed, got {decision.action.value}: {decision.findings}")


def run(
    requests: int,
    seconds: float,
    clients: Sequence[int],
    stores: Sequence[str] = STORES,
    modes: Sequence[str] = MODES,
    warmup: int = 200,
    access_log: bool = False,
) -> list[Cell]:
    request = make_request()
    check_request(request)
    run_id = uuid.uuid4().hex[:8]
    redis_server = RedisServer() if "redis" in stores else None
    cells: list[Cell] = []
    try:
        redis_url = redis_server.url if redis_server else None
        for store_kind in stores:
            prefix = f"bench:{run_id}:{store_kind}:"
            if "in-process" in modes:
                store = make_store(store_kind, redis_url, prefix + "inproc:")
                guard = Guard(request.tools, None)
                try:
                    for n in clients:
                        cell = run_cell("in-process", store_kind, n, in_process_worker(guard, store, request, run_id),
                                        requests, seconds, warmup)
                        cells.append(cell)
                        _progress(cell)
                finally:
                    store.close()
            if "http" in modes:
                service = Service(store_kind, redis_url, prefix + "http:", access_log)
                try:
                    for n in clients:
                        opened: list[httpx.Client] = []
                        try:
                            cell = run_cell("http", store_kind, n, http_worker(service.base, request, run_id, opened),
                                            requests, seconds, warmup)
                        finally:
                            for http in opened:
                                http.close()
                        cells.append(cell)
                        _progress(cell)
                finally:
                    service.stop()
    finally:
        if redis_server is not None:
            redis_server.stop()
    return cells


def _progress(cell: Cell) -> None:
    print(f"  {cell.mode} / {cell.store} / {cell.clients} clients: {cell.per_second:.0f}/s", file=sys.stderr, flush=True)


def table(cells: Sequence[Cell]) -> str:
    lines = ["| mode | store | clients | decisions/s | p50 ms | p99 ms | decisions | errors |", "|---|---|---|---|---|---|---|---|"]
    for c in cells:
        lines.append(f"| {c.mode} | {c.store} | {c.clients} | {c.per_second:.0f} | {c.p50_ms:.3f} | {c.p99_ms:.3f} | "
                     f"{c.decisions} | {c.errors} |")
    return "\n".join(lines)


def verdicts(cells: Sequence[Cell]) -> list[str]:
    out = []
    one = {c.store: c for c in cells if c.mode == "in-process" and c.clients == 1}
    if "memory" in one and "redis" in one:
        added = one["redis"].p99_ms - one["memory"].p99_ms
        met = added < LATENCY_TARGET_MS
        out.append(f"Redis adds under 1 ms p99 per decision: {'MET' if met else 'NOT MET'} (in-process, 1 client: "
                   f"p99 {one['redis'].p99_ms:.3f} ms with Redis vs {one['memory'].p99_ms:.3f} ms in memory, "
                   f"+{added:.3f} ms)")
    else:
        out.append("Redis adds under 1 ms p99 per decision: not measured (needs in-process cells of both stores at 1 client)")
    http = [c for c in cells if c.mode == "http"]
    if http:
        best = max(http, key=lambda c: c.per_second)
        met = best.per_second >= THROUGHPUT_TARGET
        out.append(f"the service holds >= 500 decisions/s on this {os.cpu_count()}-core machine: "
                   f"{'MET' if met else 'NOT MET'} (best POST /v1/check: {best.per_second:.0f}/s, "
                   f"{best.store} store, {best.clients} clients, p99 {best.p99_ms:.3f} ms)")
    else:
        out.append("the service holds >= 500 decisions/s: not measured (no http cells)")
    return out


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000, help="decisions per cell at most (default 4000)")
    parser.add_argument("--seconds", type=float, default=5.0, help="seconds per cell at most (default 5)")
    parser.add_argument("--warmup", type=int, default=200, help="decisions before each cell, not timed (default 200)")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4, 8], help="concurrent clients (default 1 2 4 8)")
    parser.add_argument("--stores", nargs="+", choices=STORES, default=list(STORES))
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--access-log", action="store_true", help="let uvicorn write its access log (to /dev/null)")
    parser.add_argument("--json", dest="json_path", help="also write the rows as JSON here")
    # The server child process (see Service).
    parser.add_argument("--_serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--_store", choices=STORES, default="memory", help=argparse.SUPPRESS)
    parser.add_argument("--_redis-url", help=argparse.SUPPRESS)
    parser.add_argument("--_key-prefix", default="guard:", help=argparse.SUPPRESS)
    ns = parser.parse_args(argv)
    if ns._serve is not None:
        serve(ns._serve, ns._store, ns._redis_url, ns._key_prefix, ns.access_log)
        return []

    started = time.perf_counter()
    cells = run(ns.requests, ns.seconds, ns.clients, ns.stores, ns.modes, ns.warmup, ns.access_log)
    rows = [c.row() for c in cells]
    print(table(cells))
    print(f"\nat most {ns.requests} decisions or {ns.seconds:g} s per cell after {ns.warmup} warm-up decisions; "
          f"10 tools x 10 parameters, 10-turn conversation, thread_id set; uvicorn 1 worker; "
          f"{os.cpu_count()} CPUs; {time.perf_counter() - started:.0f} s in all")
    for line in verdicts(cells):
        print(line)
    if ns.json_path:
        with open(ns.json_path, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)
    return rows


if __name__ == "__main__":
    main()
