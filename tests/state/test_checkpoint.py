"""Durable interrupts: ``PlainRedisSaver`` (LangGraph checkpoints on plain Redis) and ``make_checkpointer``.

Against the real redis-server of ``redis_server`` (Debian's plain 7.0: no search or JSON module), with
real LangGraph graphs: LangGraph's own checkpointer conformance suite, the sync methods the suite
does not drive, the same runs compared with ``InMemorySaver``, and a guard question asked in one
process and answered in another.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
import types
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.base import INTERRUPT, empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from guard_graphs import build_guarded_agent
from guard.state import REDIS_URL_ENV, StateBackendError
from guard.state import checkpoint as checkpoint_module
from guard.state.checkpoint import PlainRedisSaver, make_checkpointer
from tests.support import FAST, ai_call, record, scripted, tool_messages

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("durable_agent.py")
QUESTION = "What's the weather where I'm going?"


@pytest.fixture
def saver(redis_server: str, key_prefix: str) -> Any:
    with PlainRedisSaver(redis_server, key_prefix=key_prefix) as s:
        yield s


@pytest.fixture
def client(redis_server: str) -> Any:
    c = redis.Redis.from_url(redis_server)
    yield c
    c.close()


def keys_under(client: redis.Redis, prefix: str) -> list[str]:
    return sorted(k.decode() for k in client.scan_iter(match=prefix.replace("*", r"\*") + "*", count=1000))


def cfg(thread: str, ns: str = "", checkpoint_id: str | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ns}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def put_chain(saver: PlainRedisSaver, thread: str, n: int, ns: str = "", **meta: Any) -> list[dict[str, Any]]:
    """``n`` checkpoints, each the child of the previous one, channel ``count`` = step."""
    stored: list[dict[str, Any]] = []
    version = None
    for step in range(n):
        checkpoint = empty_checkpoint()
        version = saver.get_next_version(version, None)
        checkpoint["channel_values"] = {"count": step}
        checkpoint["channel_versions"] = {"count": version}
        parent = stored[-1]["configurable"]["checkpoint_id"] if stored else None
        metadata = {"source": "loop", "step": step, "parents": {}, **meta}
        stored.append(saver.put(cfg(thread, ns, parent), checkpoint, metadata, {"count": version}))
        time.sleep(0.001)  # uuid6 ids order by time
    return stored


# -- LangGraph's conformance suite ----------------------------------------------------------------


@pytest.mark.parametrize("server", ["redis", "redis-cluster"])
@pytest.mark.parametrize("ttl", [None, 60.0])
async def test_langgraph_conformance_suite(request: pytest.FixtureRequest, server: str, ttl: float | None) -> None:
    """LangGraph's own checkpointer conformance suite, on one redis-server and on the cluster."""
    conformance = pytest.importorskip(
        "langgraph.checkpoint.conformance", reason="pip install langgraph-checkpoint-conformance (dev extra)"
    )
    if server == "redis":
        url = request.getfixturevalue("redis_server")
    else:
        cluster = request.getfixturevalue("redis_cluster")
        cluster.wait_healthy()
        url = cluster.url

    @conformance.checkpointer_test(name=f"PlainRedisSaver({server}, ttl={ttl})")
    async def fresh() -> Any:
        s = PlainRedisSaver(url, key_prefix=f"conformance:{uuid.uuid4().hex[:12]}:", ttl_seconds=ttl)
        yield s
        await s.aclose()
        s.close()

    report = await conformance.validate(fresh)
    failed = {name: r.failures for name, r in report.results.items() if r.passed is False}
    assert report.passed_all_base(), failed


# -- the sync methods (the suite drives the async twins) ------------------------------------------


def test_put_then_get_latest_and_by_id_with_parent_and_values(saver: PlainRedisSaver) -> None:
    first, second = put_chain(saver, "t1", 2, user="ana")
    latest = saver.get_tuple(cfg("t1"))
    assert latest is not None and latest.config == second
    assert latest.checkpoint["channel_values"] == {"count": 1}
    assert latest.parent_config == first
    assert latest.metadata["user"] == "ana" and latest.metadata["step"] == 1
    older = saver.get_tuple(first)
    assert older is not None and older.checkpoint["channel_values"] == {"count": 0} and older.parent_config is None
    assert saver.get_tuple(cfg("t1", checkpoint_id="nope")) is None
    assert saver.get_tuple(cfg("nobody")) is None


def test_unchanged_channels_are_read_from_older_blobs(saver: PlainRedisSaver) -> None:
    """As InMemorySaver: a put stores only the channels in new_versions; the others keep their blob."""
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"a": "A1", "b": "B1"}
    checkpoint["channel_versions"] = {"a": "1", "b": "1"}
    first = saver.put(cfg("t1"), checkpoint, {"step": 0}, {"a": "1", "b": "1"})
    child = empty_checkpoint()
    child["channel_values"] = {"a": "A2", "b": "B1"}
    child["channel_versions"] = {"a": "2", "b": "1"}
    saver.put(first, child, {"step": 1}, {"a": "2"})
    assert saver.get_tuple(cfg("t1")).checkpoint["channel_values"] == {"a": "A2", "b": "B1"}


def test_list_newest_first_with_before_limit_and_filters(saver: PlainRedisSaver) -> None:
    stored = put_chain(saver, "t1", 5, user="ana")
    put_chain(saver, "t2", 2, user="bo")
    ids = [c["configurable"]["checkpoint_id"] for c in stored]
    listed = [t.config["configurable"]["checkpoint_id"] for t in saver.list(cfg("t1"))]
    assert listed == ids[::-1]
    assert [t.metadata["step"] for t in saver.list(cfg("t1"), before=stored[3])] == [2, 1, 0]
    assert [t.metadata["step"] for t in saver.list(cfg("t1"), before=stored[3], limit=2)] == [2, 1]
    assert [t.metadata["step"] for t in saver.list(cfg("t1"), filter={"step": 3})] == [3]
    assert [t.metadata["step"] for t in saver.list(cfg("t1"), filter={"user": "ana", "source": "loop"}, limit=2)] == [4, 3]
    assert list(saver.list(cfg("t1"), filter={"user": "bo"})) == []
    assert list(saver.list(cfg("t1"), limit=0)) == []
    assert [t.metadata["step"] for t in saver.list(stored[2])] == [2]  # a checkpoint_id in the config
    everyone = list(saver.list(None, filter={"user": "bo"}))
    assert {t.config["configurable"]["thread_id"] for t in everyone} == {"t2"} and len(everyone) == 2
    assert len(list(saver.list(None))) == 7


def test_namespaces_and_awkward_ids_never_meet(saver: PlainRedisSaver) -> None:
    """Thread ids and namespaces are quoted in key names: ':' '*' '[' never make two keys one."""
    put_chain(saver, "a:b", 1, tag="thread a:b")
    put_chain(saver, "a", 1, ns="b", tag="thread a, ns b")
    put_chain(saver, "a", 2, ns="parent:1|child*[x]", tag="subgraph")
    assert saver.get_tuple(cfg("a:b")).metadata["tag"] == "thread a:b"
    assert saver.get_tuple(cfg("a", "b")).metadata["tag"] == "thread a, ns b"
    assert saver.get_tuple(cfg("a", "parent:1|child*[x]")).metadata["tag"] == "subgraph"
    assert saver.get_tuple(cfg("a")) is None  # nothing in the root namespace of thread a
    every_ns = {t.config["configurable"]["checkpoint_ns"] for t in saver.list({"configurable": {"thread_id": "a"}})}
    assert every_ns == {"b", "parent:1|child*[x]"}


def test_pending_writes_ordered_idempotent_and_special_writes_replaced(saver: PlainRedisSaver) -> None:
    (stored,) = put_chain(saver, "t1", 1)
    saver.put_writes(stored, [("messages", "m0"), ("count", 1)], task_id="task-b", task_path="~__pregel_pull, model")
    saver.put_writes(stored, [("messages", "a0")], task_id="task-a", task_path="~__pregel_pull, model")
    saver.put_writes(stored, [("messages", "again"), ("count", 99)], task_id="task-b", task_path="~__pregel_pull, model")
    saver.put_writes(stored, [(INTERRUPT, {"q": 1})], task_id="task-c")
    saver.put_writes(stored, [(INTERRUPT, {"q": 2})], task_id="task-c")
    writes = saver.get_tuple(cfg("t1")).pending_writes
    assert writes == [
        ("task-c", INTERRUPT, {"q": 2}),  # no task_path sorts first; a special write is replaced
        ("task-a", "messages", "a0"),
        ("task-b", "messages", "m0"),  # a regular write is kept as first stored
        ("task-b", "count", 1),
    ]
    assert saver.get_tuple(stored).pending_writes == writes
    assert next(iter(saver.list(cfg("t1")))).pending_writes == writes


def test_delete_thread_removes_every_key_of_that_thread_only(
    saver: PlainRedisSaver, client: redis.Redis, key_prefix: str
) -> None:
    for thread in ("t1", "t2"):
        stored = put_chain(saver, thread, 3)
        put_chain(saver, thread, 1, ns="sub:1")
        saver.put_writes(stored[-1], [("messages", "x")], task_id="task")
    saver.delete_thread("t1")
    assert saver.get_tuple(cfg("t1")) is None and list(saver.list(cfg("t1"))) == []
    assert {t.config["configurable"]["thread_id"] for t in saver.list(None)} == {"t2"}
    assert keys_under(client, f"{key_prefix}thread:{{t1}}:") == []
    # namespaces; root ns: ids, checkpoints, metadata, parents, blobs, wids + 1 writes; sub ns: no writes
    assert len(keys_under(client, f"{key_prefix}thread:{{t2}}:")) == 1 + 7 + 5
    saver.delete_thread("never-there")


def test_ttl_expires_the_whole_thread_and_every_write_refreshes_it(
    redis_server: str, client: redis.Redis, key_prefix: str
) -> None:
    with PlainRedisSaver(redis_server, key_prefix=key_prefix, ttl_seconds=0.4) as saver:
        put_chain(saver, "short", 1)
        put_chain(saver, "long", 1, ns="sub:1")
        stored = put_chain(saver, "long", 1)
        saver.put_writes(stored[0], [("messages", "x")], task_id="task")
        keys = keys_under(client, f"{key_prefix}thread:{{long}}:")
        assert len(keys) == 1 + 7 + 5
        assert all(0 < client.pttl(k) <= 400 for k in keys)
        time.sleep(0.25)
        saver.put(stored[0], empty_checkpoint(), {"step": 1}, {})  # refreshes every key of "long", all namespaces
        assert all(client.pttl(k) > 300 for k in keys_under(client, f"{key_prefix}thread:{{long}}:"))
        time.sleep(0.25)  # "short" has expired, "long" has not
        assert {t.config["configurable"]["thread_id"] for t in saver.list(None)} == {"long"}
        assert saver.get_tuple(cfg("short")) is None
        assert saver.get_tuple(cfg("long", "sub:1")) is not None
        assert saver.get_tuple(cfg("long")).pending_writes == []  # the new checkpoint has none yet
        assert saver.get_tuple(stored[0]).pending_writes == [("task", "messages", "x")]
        time.sleep(0.25)
        assert list(saver.list(None)) == [] and saver.get_tuple(cfg("long")) is None
        assert keys_under(client, f"{key_prefix}thread:") == []


def test_next_version_as_in_memory_saver(saver: PlainRedisSaver) -> None:
    v1 = saver.get_next_version(None, None)
    v2 = saver.get_next_version(v1, None)
    assert v1.startswith(f"{1:032}.") and v2.startswith(f"{2:032}.") and v1 < v2
    assert saver.get_next_version(7, None).startswith(f"{8:032}.")  # type: ignore[arg-type]


def test_an_unreachable_server_is_a_backend_error() -> None:
    dead = PlainRedisSaver("redis://:secret@127.0.0.1:1/0", socket_timeout=0.2)
    with pytest.raises(StateBackendError, match=r"redis://:\*\*\*@127\.0\.0\.1:1/0 failed during get_tuple") as err:
        dead.get_tuple(cfg("t1"))
    assert "secret" not in str(err.value)
    assert dead.ping() is False


# -- real graphs ------------------------------------------------------------------------------------


def agent(travel_tools: list[Any], checkpointer: Any) -> Any:
    return build_guarded_agent(scripted([ai_call("get_weather", {"city": "Oslo"})]), travel_tools, FAST, checkpointer=checkpointer)


def history(graph: Any, config: dict[str, Any]) -> list[tuple[Any, ...]]:
    """A thread's history without the random parts (ids, timestamps)."""
    return [
        (
            s.metadata["step"],
            s.metadata["source"],
            s.next,
            [(type(m).__name__, m.content) for m in s.values.get("messages", [])],
            [i.value.get("kind") for t in s.tasks for i in t.interrupts],
        )
        for s in graph.get_state_history(config)
    ]


def test_a_guarded_run_has_the_same_history_as_with_in_memory_saver(
    travel_tools: list[Any], calls: Any, saver: PlainRedisSaver
) -> None:
    histories = []
    for checkpointer in (InMemorySaver(), saver):
        graph = agent(travel_tools, checkpointer)
        config = {"configurable": {"thread_id": "same"}}
        paused = graph.invoke({"messages": [("user", QUESTION)]}, config)
        assert paused["__interrupt__"][0].value["kind"] == "missing_information"
        graph.invoke(Command(resume={"c1": {"action": "answer", "values": {"city": "Bergen"}}}), config)
        histories.append(history(graph, config))
    assert histories[0] == histories[1] and len(histories[0]) >= 5
    assert calls.log == [("get_weather", {"city": "Bergen"})] * 2


def test_another_replica_sees_the_question_and_resumes_it(
    travel_tools: list[Any], calls: Any, redis_server: str, key_prefix: str
) -> None:
    config = {"configurable": {"thread_id": "replicas"}}
    with PlainRedisSaver(redis_server, key_prefix=key_prefix) as first:
        agent(travel_tools, first).invoke({"messages": [("user", QUESTION)]}, config)
    with PlainRedisSaver(redis_server, key_prefix=key_prefix) as second:
        graph = agent(travel_tools, second)
        state = graph.get_state(config)
        assert state.next == ("tools",) and state.tasks[0].interrupts[0].value["tool_call_ids"] == ["c1"]
        result = graph.invoke(Command(resume={"c1": {"action": "answer", "values": {"city": "Bergen"}}}), config)
    assert calls.log == [("get_weather", {"city": "Bergen"})]
    assert record(tool_messages(result)[0])["action"] == "allow"


async def test_the_async_twins_run_a_guarded_interrupt_and_resume(
    travel_tools: list[Any], calls: Any, saver: PlainRedisSaver
) -> None:
    graph = agent(travel_tools, saver)
    config = {"configurable": {"thread_id": "async"}}
    paused = await graph.ainvoke({"messages": [("user", QUESTION)]}, config)
    assert paused["__interrupt__"][0].value["requests"][0]["missing"] == ["city"]
    result = await graph.ainvoke(Command(resume={"c1": {"action": "answer", "values": {"city": "Bergen"}}}), config)
    assert calls.log == [("get_weather", {"city": "Bergen"})]
    assert [m.content for m in result["messages"] if isinstance(m, ToolMessage)] == ['{"city": "Bergen", "celsius": 14}']
    steps = [s.metadata["step"] async for s in graph.aget_state_history(config)]
    assert steps[0] >= 3 and steps == sorted(steps, reverse=True)
    await saver.adelete_thread("async")
    assert await saver.aget_tuple(config) is None
    await saver.aclose()


def run_half(mode: str, redis_server: str, thread: str, key_prefix: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), mode, redis_server, thread, key_prefix],
        check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_question_survives_the_process_and_is_answered_in_a_new_one(redis_server: str, key_prefix: str) -> None:
    paused = run_half("pause", redis_server, "restart", key_prefix)
    question = paused["interrupt"]
    assert question["type"] == "guard.escalation" and question["kind"] == "missing_information"
    assert question["tool_call_ids"] == ["c1"] and question["requests"][0]["args"] == {"city": "Oslo"}
    assert paused["calls"] == []  # nothing ran before the question; that process is gone now
    resumed = run_half("resume", redis_server, "restart", key_prefix)
    assert resumed["calls"] == [{"tool": "get_weather", "city": "Bergen"}]
    assert [r["action"] for r in resumed["records"]] == ["allow"]
    assert "Bergen" in resumed["tool_contents"][0] and not resumed["interrupted"]


# -- make_checkpointer ---------------------------------------------------------------------------------


def test_without_redis_the_checkpointer_is_in_memory(monkeypatch: pytest.MonkeyPatch, caplog: Any) -> None:
    monkeypatch.delenv(REDIS_URL_ENV, raising=False)
    with caplog.at_level(logging.INFO, logger="guard.state.checkpoint"):
        assert isinstance(make_checkpointer(), InMemorySaver)
    assert "InMemorySaver" in caplog.text


def test_a_plain_redis_gets_the_plain_saver(
    monkeypatch: pytest.MonkeyPatch, caplog: Any, redis_server: str, key_prefix: str
) -> None:
    monkeypatch.setenv(REDIS_URL_ENV, redis_server)
    with caplog.at_level(logging.INFO, logger="guard.state.checkpoint"):
        from_env = make_checkpointer(key_prefix=key_prefix, ttl_seconds=60)
    assert isinstance(from_env, PlainRedisSaver) and from_env.ttl_seconds == 60 and from_env.key_prefix == key_prefix
    assert "PlainRedisSaver" in caplog.text and "server modules: none" in caplog.text
    monkeypatch.setenv(REDIS_URL_ENV, "redis://127.0.0.1:1/0")
    explicit = make_checkpointer(redis_server)  # an argument wins over the variable
    assert isinstance(explicit, PlainRedisSaver) and explicit.ping()
    from_env.close()
    explicit.close()


def test_an_unreachable_redis_is_an_error_not_a_silent_memory_saver() -> None:
    with pytest.raises(StateBackendError, match="unreachable"):
        make_checkpointer("redis://127.0.0.1:1/0")


def test_a_server_with_the_modules_gets_langgraph_checkpoint_redis(
    monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    """Decided from MODULE LIST (no Redis Stack here: the reply and the package are stand-ins)."""

    class FakeRedisSaver:
        def __init__(self, redis_url: str, ttl: Any = None) -> None:
            self.redis_url, self.ttl, self.ready = redis_url, ttl, False

        def setup(self) -> None:
            self.ready = True

    monkeypatch.setattr(checkpoint_module, "_server_modules", lambda url: {"search", "rejson", "timeseries"})
    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.redis", types.SimpleNamespace(RedisSaver=FakeRedisSaver))
    with caplog.at_level(logging.INFO, logger="guard.state.checkpoint"):
        chosen = make_checkpointer("redis://stack:6379/0", ttl_seconds=120)
    assert isinstance(chosen, FakeRedisSaver) and chosen.ready and chosen.ttl["default_ttl"] == 2
    assert "RedisSaver" in caplog.text

    monkeypatch.setitem(sys.modules, "langgraph.checkpoint.redis", None)  # modules, but no package
    assert isinstance(make_checkpointer("redis://127.0.0.1:1/0"), PlainRedisSaver)
    monkeypatch.setattr(checkpoint_module, "_server_modules", lambda url: {"rejson"})  # JSON without search
    monkeypatch.delitem(sys.modules, "langgraph.checkpoint.redis")
    assert isinstance(make_checkpointer("redis://127.0.0.1:1/0"), PlainRedisSaver)
