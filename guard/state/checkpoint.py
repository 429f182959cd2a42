"""Durable LangGraph checkpoints, so a guard question (an ``interrupt()``) survives a restart.

``make_checkpointer()`` picks the checkpointer: ``InMemorySaver`` when no Redis is configured; with a
Redis URL (argument or ``GUARD_REDIS_URL``), ``langgraph-checkpoint-redis``'s ``RedisSaver`` when it
is installed *and* the server has the search and JSON modules it needs (Redis Stack, Redis 8), else
``PlainRedisSaver``, which needs nothing but plain Redis commands (Debian's redis-server 7.0 has no
modules: ``RedisSaver.setup()`` fails there on ``FT.INFO``, an unknown command).

``PlainRedisSaver`` stores what ``InMemorySaver`` stores, in the same layout: the checkpoint without
its channel values and the metadata (each ``serde.dumps_typed``), the parent id, one blob per
(channel, version), and the pending writes per checkpoint. Keys, all under ``key_prefix`` and then
``thread:{<t>}:``, where ``<t>`` is the percent-quoted thread id (``%`` for the empty one) and the
braces make it the key's Redis Cluster hash tag: every key of a thread lives in one slot. Thread
ids, namespaces and channel names are percent-quoted, so ``:`` only ever separates and no value
holds a brace:

* ``{threads}``: sorted set of thread ids (score: expiry in ms, ``+inf`` without a TTL), for
  ``list(None)``; the one key outside the threads' slots;
* ``thread:{<t>}:namespaces``: set of the thread's checkpoint namespaces (quoted);
* ``thread:{<t>}:ns:<ns>:ids``: sorted set of checkpoint ids, all score 0, read in lexical order
  (checkpoint ids are uuid6 strings, ordered by time, as ``InMemorySaver`` orders them);
* ``thread:{<t>}:ns:<ns>:checkpoints`` / ``metadata`` / ``parents``: hashes by checkpoint id;
* ``thread:{<t>}:ns:<ns>:blobs``: hash ``<channel>:<version>`` -> blob;
* ``thread:{<t>}:ns:<ns>:writes:<checkpoint id>``: hash ``<task>:<idx>`` -> write, and
  ``thread:{<t>}:ns:<ns>:wids``: set of the checkpoint ids that have writes.

Every write to a thread is one MULTI/EXEC transaction; reads of several keys are one too, so a
reader never sees half a checkpoint. ``delete_thread`` and the TTL refresh are Lua scripts (atomic,
one round trip) over the thread's slot. The ``{threads}`` registry is written in the same
transaction on a single Redis; on a Redis Cluster (a ``redis+cluster://`` URL) it may live on
another master, so it is written in a command of its own: registered before a thread's first
write, unregistered after its deletion, so ``list(None)`` may see a thread with nothing left in
it, never miss one that has checkpoints. With ``ttl_seconds`` every key of a thread expires that
long after the thread's last write (each ``put``/``put_writes`` refreshes the whole thread, all
namespaces and writes included, so a thread never loses part of its history).

The sync methods use ``redis.Redis`` (``redis.cluster.RedisCluster`` for a cluster), the async
twins ``redis.asyncio.Redis`` (``redis.asyncio.cluster.RedisCluster``), one client per event loop;
both share the command sequences below, written once as generators of batches. The layout changed
when the hash tags came in (``thread:t1:`` before): checkpoints written by an earlier version are
not read; see docs/operations.md for the upgrade.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import threading
from collections.abc import AsyncIterator, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Self
from urllib.parse import quote, unquote

import redis
import redis.asyncio as aredis
import redis.asyncio.cluster as aredis_cluster
import redis.cluster
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    SerializerProtocol,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.memory import InMemorySaver
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.retry import Retry

from guard.state import REDIS_URL_ENV
from guard.state.base import StateBackendError
from guard.state.redis import (
    REDIS_ERRORS,
    acluster_client,
    check_key_prefix,
    cluster_client,
    is_cluster_url,
    node_of,
    arefresh_slots,
    redact_url,
    refresh_slots,
)

logger = logging.getLogger(__name__)

DEFAULT_KEY_PREFIX = "guard:checkpoint:"
#: Checkpoints fetched per round trip while listing.
_CHUNK = 100
_NS_KEYS = ("ids", "checkpoints", "metadata", "parents", "blobs", "wids")

# KEYS: namespaces set. ARGV: thread key base.
_DELETE = """
for _, ns in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local base = ARGV[1] .. 'ns:' .. ns .. ':'
  for _, id in ipairs(redis.call('SMEMBERS', base .. 'wids')) do
    redis.call('DEL', base .. 'writes:' .. id)
  end
  redis.call('DEL', base .. 'ids', base .. 'checkpoints', base .. 'metadata', base .. 'parents', base .. 'blobs', base .. 'wids')
end
redis.call('DEL', KEYS[1])
return 1
"""

# KEYS: threads zset. ARGV: thread id, ttl (ms). Registers the thread until its keys expire.
_REGISTER = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return 1
"""

# KEYS: namespaces set. ARGV: thread key base, ttl (ms).
_TOUCH = """
local ttl = tonumber(ARGV[2])
redis.call('PEXPIRE', KEYS[1], ttl)
for _, ns in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local base = ARGV[1] .. 'ns:' .. ns .. ':'
  for _, id in ipairs(redis.call('SMEMBERS', base .. 'wids')) do
    redis.call('PEXPIRE', base .. 'writes:' .. id, ttl)
  end
  for _, name in ipairs({'ids', 'checkpoints', 'metadata', 'parents', 'blobs', 'wids'}) do
    redis.call('PEXPIRE', base .. name, ttl)
  end
end
return 1
"""


#: Cluster errors after which a batch is sent again, once the slot map is re-read.
_MOVED_OR_GONE = (
    redis.exceptions.ConnectionError,
    redis.exceptions.ClusterError,
    redis.exceptions.AskError,
    redis.exceptions.TryAgainError,
    redis.exceptions.SlotNotCoveredError,
)


def _first_key(batch: _Batch) -> str | None:
    """The thread key a batch's commands touch first (None for a keyless one, ``TIME``)."""
    for command in batch.commands:
        if command[0] in ("EVAL", "EVALSHA"):
            return str(command[3]) if int(command[2]) > 0 else None
        if len(command) > 1:
            return str(command[1])
    return None


@dataclass
class _Batch:
    """Redis commands sent in one round trip (a MULTI/EXEC transaction when ``atomic``), all on one
    thread's keys (one cluster slot), and ``registry`` commands on the ``{threads}`` registry:
    in the same transaction on a single Redis; on a cluster, their own round trip, before the
    thread's commands (``registry_first``) or after. Only the thread's commands' replies are sent
    back."""

    commands: list[tuple[Any, ...]] = field(default_factory=list)
    atomic: bool = True
    registry: list[tuple[Any, ...]] = field(default_factory=list)
    registry_first: bool = True

    def add(self, *command: Any) -> _Batch:
        self.commands.append(command)
        return self


#: A sequence of Redis round trips: yields batches (and is sent their replies) and, for ``list``,
#: the tuples it found; returns its result.
_Steps = Generator[Any, Any, Any]


def _q(text: str) -> str:
    return quote(text, safe="")


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _pack(typed: tuple[str, bytes]) -> bytes:
    kind, data = typed
    return kind.encode() + b"\x00" + data


def _unpack(raw: bytes) -> tuple[str, bytes]:
    kind, _, data = raw.partition(b"\x00")
    return kind.decode(), data


def _blob_field(channel: str, version: Any) -> str:
    return f"{_q(channel)}:{version}"


def _threads_key(prefix: str) -> str:
    return f"{prefix}{{threads}}"


class _Keys:
    """Key names of one thread (and one of its namespaces): all share the thread's hash tag."""

    def __init__(self, prefix: str, thread_id: str, checkpoint_ns: str = "") -> None:
        self.threads = _threads_key(prefix)
        # quoted, the id holds no brace; '%' alone (never a quoted string) for the empty id, as
        # an empty '{}' is no hash tag at all
        self.thread = f"{prefix}thread:{{{_q(thread_id) or '%'}}}:"
        self.namespaces = f"{self.thread}namespaces"
        self.ns_member = _q(checkpoint_ns)
        self.ns = f"{self.thread}ns:{self.ns_member}:"
        self.ids, self.checkpoints, self.metadata = f"{self.ns}ids", f"{self.ns}checkpoints", f"{self.ns}metadata"
        self.parents, self.blobs, self.wids = f"{self.ns}parents", f"{self.ns}blobs", f"{self.ns}wids"

    def writes(self, checkpoint_id: str) -> str:
        return f"{self.ns}writes:{checkpoint_id}"


class PlainRedisSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer on plain Redis (no modules), shared by every replica.

    ``PlainRedisSaver(url, key_prefix=..., ttl_seconds=None)``; ``ttl_seconds`` makes a thread's keys
    expire that long after its last write. A Redis failure raises ``StateBackendError`` (the URL in
    the message has its password hidden).
    """

    def __init__(
        self,
        url: str,
        *,
        key_prefix: str = DEFAULT_KEY_PREFIX,
        ttl_seconds: float | None = None,
        socket_timeout: float = 5.0,
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(serde=serde)
        if ttl_seconds is not None and ttl_seconds <= 0:
            raise ValueError(f"ttl_seconds must be positive, got {ttl_seconds!r}")
        self.key_prefix = check_key_prefix(key_prefix)
        self.ttl_seconds = ttl_seconds
        self.url = redact_url(url)
        self.cluster = is_cluster_url(url)
        self._url = url
        self._client_kwargs: dict[str, Any] = {
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": socket_timeout,
            "decode_responses": False,
        }
        self._lock = threading.Lock()
        # One immediate retry (a pooled connection gone stale after a Redis restart), then fail. A
        # cluster client reads the slot map when built, so it is built on first use.
        self._sync: redis.Redis | redis.cluster.RedisCluster | None = (
            None if self.cluster else redis.Redis.from_url(url, retry=Retry(NoBackoff(), 1), **self._client_kwargs)
        )
        self._aclients: dict[asyncio.AbstractEventLoop, aredis.Redis | aredis_cluster.RedisCluster] = {}

    @classmethod
    def from_conn_string(cls, url: str, **kwargs: Any) -> PlainRedisSaver:
        """Same as the constructor; named like the other LangGraph savers' factory."""
        return cls(url, **kwargs)

    # -- lifecycle ----------------------------------------------------------------------------------

    @property
    def _client(self) -> redis.Redis | redis.cluster.RedisCluster:
        with self._lock:
            if self._sync is None:
                self._sync = cluster_client(self._url, **self._client_kwargs)
            return self._sync

    def close(self) -> None:
        with self._lock:
            client = self._sync
            if self.cluster:
                self._sync = None
        if client is not None:
            client.close()

    async def aclose(self) -> None:
        client = self._aclients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
        self.close()

    def ping(self) -> bool:
        """True when the server answers; False (never an exception) when it cannot be reached."""
        try:
            return bool(self._client.ping())
        except REDIS_ERRORS:
            return False

    # -- running batches ----------------------------------------------------------------------------

    def _aclient(self) -> aredis.Redis | aredis_cluster.RedisCluster:
        """The async client of the running event loop (redis.asyncio connections belong to one loop)."""
        loop = asyncio.get_running_loop()
        client = self._aclients.get(loop)
        if client is None:
            for old in [lp for lp in self._aclients if lp.is_closed()]:
                del self._aclients[old]
            client: aredis.Redis | aredis_cluster.RedisCluster
            if self.cluster:
                client = acluster_client(self._url, **self._client_kwargs)
            else:
                client = aredis.Redis.from_url(self._url, retry=AsyncRetry(NoBackoff(), 1), **self._client_kwargs)
            self._aclients[loop] = client
        return client

    def _error(self, operation: str, exc: Exception) -> StateBackendError:
        return StateBackendError(f"Redis checkpointer {self.url} failed during {operation}: {exc}")

    def _rounds(self, batch: _Batch) -> list[tuple[list[tuple[Any, ...]], bool]]:
        """The round trips of a batch (commands, transaction?): one on a single Redis; on a
        cluster the registry's apart, since it may live on another master."""
        if not self.cluster:
            return [(batch.registry + batch.commands, batch.atomic)]
        rounds = [(batch.commands, batch.atomic)]
        if batch.registry:
            rounds.insert(0 if batch.registry_first else 1, (batch.registry, False))
        return rounds

    def _replies(self, batch: _Batch, replies: list[list[Any]]) -> list[Any]:
        if not self.cluster:
            return replies[0][len(batch.registry) :]
        return replies[1 if batch.registry and batch.registry_first else 0]

    def _retry(self, exc: Exception, attempt: int, moved: bool) -> bool:
        """Whether a failed batch is sent once more: on a cluster, once the slot map is re-read
        (redis-py does not re-read it after a failed transaction), after a connection error or a
        redirection, or after a timeout when the map now sends the batch elsewhere (the master
        hung and its replica took over); a timeout on a node that still serves the slot is not
        retried (a hung node would cost twice the budget). A write sent twice writes the same values."""
        return self.cluster and attempt == 0 and (moved or isinstance(exc, _MOVED_OR_GONE))

    def _execute(self, batch: _Batch, operation: str) -> list[Any]:
        if not batch.commands:
            return []
        key = _first_key(batch)
        for attempt in range(2):
            before = node_of(self._sync, key) if self.cluster else None
            try:
                replies = []
                for commands, atomic in self._rounds(batch):
                    pipe = self._client.pipeline(transaction=atomic)
                    for command in commands:
                        pipe.execute_command(*command)
                    replies.append(pipe.execute())
                return self._replies(batch, replies)
            except REDIS_ERRORS as exc:
                moved = False
                if self.cluster and self._sync is not None:
                    refresh_slots(self._sync, key)
                    moved = node_of(self._sync, key) != before
                if not self._retry(exc, attempt, moved):
                    raise self._error(operation, exc) from exc
        raise AssertionError("unreachable")

    async def _aexecute(self, batch: _Batch, operation: str) -> list[Any]:
        if not batch.commands:
            return []
        key = _first_key(batch)
        for attempt in range(2):
            before = node_of(self._aclients.get(asyncio.get_running_loop()), key) if self.cluster else None
            try:
                replies = []
                client = self._aclient()
                if isinstance(client, aredis_cluster.RedisCluster):
                    # read the slot map first (idempotent): a transaction on a client not yet
                    # initialized leaves a connection behind that its aclose() then fails on
                    await client.initialize()
                for commands, atomic in self._rounds(batch):
                    pipe = client.pipeline(transaction=atomic)
                    for command in commands:
                        pipe.execute_command(*command)
                    replies.append(await pipe.execute())
                return self._replies(batch, replies)
            except REDIS_ERRORS as exc:
                client = self._aclients.get(asyncio.get_running_loop())
                moved = False
                if isinstance(client, aredis_cluster.RedisCluster):
                    await arefresh_slots(client, key)
                    moved = node_of(client, key) != before
                if not self._retry(exc, attempt, moved):
                    raise self._error(operation, exc) from exc
        raise AssertionError("unreachable")

    def _run(self, steps: _Steps, operation: str) -> Any:
        try:
            item = next(steps)
            while True:
                item = steps.send(self._execute(item, operation))
        except StopIteration as done:
            return done.value

    async def _arun(self, steps: _Steps, operation: str) -> Any:
        try:
            item = next(steps)
            while True:
                item = steps.send(await self._aexecute(item, operation))
        except StopIteration as done:
            return done.value

    def _iterate(self, steps: _Steps, operation: str) -> Iterator[CheckpointTuple]:
        try:
            item = next(steps)
            while True:
                if isinstance(item, _Batch):
                    item = steps.send(self._execute(item, operation))
                else:
                    yield item
                    item = next(steps)
        except StopIteration:
            return

    async def _aiterate(self, steps: _Steps, operation: str) -> AsyncIterator[CheckpointTuple]:
        try:
            item = next(steps)
            while True:
                if isinstance(item, _Batch):
                    item = steps.send(await self._aexecute(item, operation))
                else:
                    yield item
                    item = next(steps)
        except StopIteration:
            return

    # -- the command sequences ----------------------------------------------------------------------

    def _touch(self, batch: _Batch, keys: _Keys, thread_id: str) -> None:
        """Register the thread (and, with a TTL, push back the expiry of all its keys)."""
        if self.ttl_seconds is None:
            batch.registry.append(("ZADD", keys.threads, "+inf", thread_id))
        else:
            ttl_ms = max(1, int(self.ttl_seconds * 1000))
            batch.registry.append(("EVAL", _REGISTER, 1, keys.threads, thread_id, ttl_ms))
            batch.add("EVAL", _TOUCH, 1, keys.namespaces, keys.thread, ttl_ms)

    def _put_steps(
        self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions
    ) -> _Steps:
        thread_id = str(config["configurable"]["thread_id"])
        checkpoint_ns = config["configurable"].get("checkpoint_ns", "")
        keys = _Keys(self.key_prefix, thread_id, checkpoint_ns)
        c = checkpoint.copy()
        values: dict[str, Any] = c.pop("channel_values")  # type: ignore[misc]
        blobs = {
            _blob_field(k, v): _pack(self.serde.dumps_typed(values[k]) if k in values else ("empty", b""))
            for k, v in new_versions.items()
        }
        checkpoint_id = checkpoint["id"]
        parent = config["configurable"].get("checkpoint_id") or ""
        batch = _Batch()
        if blobs:
            batch.add("HSET", keys.blobs, *[part for item in blobs.items() for part in item])
        batch.add("HSET", keys.checkpoints, checkpoint_id, _pack(self.serde.dumps_typed(c)))
        batch.add("HSET", keys.metadata, checkpoint_id, _pack(self.serde.dumps_typed(get_checkpoint_metadata(config, metadata))))
        batch.add("HSET", keys.parents, checkpoint_id, parent)
        batch.add("ZADD", keys.ids, 0, checkpoint_id)
        batch.add("SADD", keys.namespaces, keys.ns_member)
        self._touch(batch, keys, thread_id)
        yield batch
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id}}

    def _put_writes_steps(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str
    ) -> _Steps:
        thread_id = str(config["configurable"]["thread_id"])
        keys = _Keys(self.key_prefix, thread_id, config["configurable"].get("checkpoint_ns", ""))
        checkpoint_id = config["configurable"]["checkpoint_id"]
        key = keys.writes(checkpoint_id)
        batch = _Batch()
        for idx, (channel, value) in enumerate(writes):
            widx = WRITES_IDX_MAP.get(channel, idx)
            kind, data = self.serde.dumps_typed(value)
            record = json.dumps([task_id, channel, kind, task_path]).encode() + b"\n" + data
            # As InMemorySaver: a regular write is kept as first stored; a special one (error,
            # interrupt, resume, scheduled) replaces the previous one.
            batch.add("HSETNX" if widx >= 0 else "HSET", key, f"{_q(task_id)}:{widx}", record)
        if not batch.commands:
            return None
        batch.add("SADD", keys.wids, checkpoint_id)
        batch.add("SADD", keys.namespaces, keys.ns_member)
        self._touch(batch, keys, thread_id)
        yield batch
        return None

    def _delete_steps(self, thread_id: str) -> _Steps:
        keys = _Keys(self.key_prefix, str(thread_id))
        batch = _Batch(registry=[("ZREM", keys.threads, str(thread_id))], registry_first=False)
        yield batch.add("EVAL", _DELETE, 1, keys.namespaces, keys.thread)

    def _load_steps(self, thread_id: str, checkpoint_ns: str, ids: list[str]) -> _Steps:
        """The tuples of the checkpoints ``ids`` (those that exist), in that order."""
        if not ids:
            return []
        keys = _Keys(self.key_prefix, thread_id, checkpoint_ns)
        batch = _Batch()
        batch.add("HMGET", keys.checkpoints, *ids)
        batch.add("HMGET", keys.metadata, *ids)
        batch.add("HMGET", keys.parents, *ids)
        for checkpoint_id in ids:
            batch.add("HGETALL", keys.writes(checkpoint_id))
        checkpoints, metadatas, parents, *writes = yield batch
        found = []
        for i, checkpoint_id in enumerate(ids):
            if checkpoints[i] is None:
                continue
            checkpoint: Checkpoint = self.serde.loads_typed(_unpack(checkpoints[i]))
            found.append((checkpoint_id, checkpoint, metadatas[i], parents[i], writes[i]))
        fields = sorted({_blob_field(k, v) for _, cp, *_ in found for k, v in cp["channel_versions"].items()})
        blobs: dict[str, bytes] = {}
        if fields:
            (raw,) = yield _Batch(atomic=False).add("HMGET", keys.blobs, *fields)
            blobs = {f: b for f, b in zip(fields, raw, strict=True) if b is not None}
        return [self._tuple(thread_id, checkpoint_ns, *row, blobs) for row in found]

    def _tuple(
        self,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        checkpoint: Checkpoint,
        metadata: bytes | None,
        parent: bytes | None,
        writes: dict[bytes, bytes],
        blobs: dict[str, bytes],
    ) -> CheckpointTuple:
        values: dict[str, Any] = {}
        for channel, version in checkpoint["channel_versions"].items():
            blob = blobs.get(_blob_field(channel, version))
            if blob is None:
                continue
            typed = _unpack(blob)
            if typed[0] != "empty":
                values[channel] = self.serde.loads_typed(typed)
        pending = []
        for name, record in writes.items():
            header, _, data = record.partition(b"\n")
            task_id, channel, kind, task_path = json.loads(header)
            idx = int(_s(name).rsplit(":", 1)[1])
            pending.append((writes_sort_key(task_path, task_id, idx), (task_id, channel, (kind, data))))
        pending.sort(key=lambda item: item[0])
        parent_id = _s(parent) if parent else None

        def configured(cid: str) -> RunnableConfig:
            return {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": cid}}

        return CheckpointTuple(
            config=configured(checkpoint_id),
            checkpoint={**checkpoint, "channel_values": values},
            metadata=self.serde.loads_typed(_unpack(metadata)) if metadata is not None else {},
            parent_config=configured(parent_id) if parent_id else None,
            pending_writes=[(tid, ch, self.serde.loads_typed(v)) for _, (tid, ch, v) in pending],
        )

    def _get_steps(self, config: RunnableConfig) -> _Steps:
        thread_id = str(config["configurable"]["thread_id"])
        checkpoint_ns = config["configurable"].get("checkpoint_ns", "")
        checkpoint_id = get_checkpoint_id(config)
        if not checkpoint_id:
            keys = _Keys(self.key_prefix, thread_id, checkpoint_ns)
            (latest,) = yield _Batch(atomic=False).add("ZREVRANGEBYLEX", keys.ids, "+", "-", "LIMIT", 0, 1)
            if not latest:
                return None
            checkpoint_id = _s(latest[0])
        found = yield from self._load_steps(thread_id, checkpoint_ns, [checkpoint_id])
        return found[0] if found else None

    def _list_steps(
        self,
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> _Steps:
        if limit is not None and limit <= 0:
            return None
        if config:
            threads = [str(config["configurable"]["thread_id"])]
        else:
            ((seconds, micros),) = yield _Batch(atomic=False).add("TIME")
            now_ms = int(seconds) * 1000 + int(micros) // 1000
            (members,) = yield _Batch(atomic=False).add("ZRANGEBYSCORE", _threads_key(self.key_prefix), f"({now_ms}", "+inf")
            threads = sorted(_s(m) for m in members)
        wanted_ns = config["configurable"].get("checkpoint_ns") if config else None
        wanted_id = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        remaining = limit
        for thread_id in threads:
            if wanted_ns is not None:
                namespaces = [wanted_ns]
            else:
                (members,) = yield _Batch(atomic=False).add("SMEMBERS", _Keys(self.key_prefix, thread_id).namespaces)
                namespaces = sorted(unquote(_s(m)) for m in members)
            for checkpoint_ns in namespaces:
                keys = _Keys(self.key_prefix, thread_id, checkpoint_ns)
                if wanted_id:
                    if before_id and wanted_id >= before_id:
                        continue
                    low = high = f"[{wanted_id}"
                else:
                    low, high = "-", (f"({before_id}" if before_id else "+")
                command: tuple[Any, ...] = ("ZREVRANGEBYLEX", keys.ids, high, low)
                if remaining is not None and not filter:
                    command += ("LIMIT", 0, remaining)
                (raw_ids,) = yield _Batch(atomic=False).add(*command)
                ids = [_s(i) for i in raw_ids]
                for start in range(0, len(ids), _CHUNK):
                    chunk = ids[start : start + _CHUNK]
                    if filter:
                        (metas,) = yield _Batch(atomic=False).add("HMGET", keys.metadata, *chunk)
                        chunk = [cid for cid, m in zip(chunk, metas, strict=True) if m is not None and self._matches(m, filter)]
                    for found in (yield from self._load_steps(thread_id, checkpoint_ns, chunk)):
                        yield found
                        if remaining is not None:
                            remaining -= 1
                            if remaining <= 0:
                                return None
        return None

    def _matches(self, raw_metadata: bytes, filter: dict[str, Any]) -> bool:
        metadata = self.serde.loads_typed(_unpack(raw_metadata))
        return all(value == metadata.get(key) for key, value in filter.items())

    # -- BaseCheckpointSaver --------------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names (its ``checkpoint_id``), or the thread's latest."""
        return self._run(self._get_steps(config), "get_tuple")

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first (per thread and namespace), filtered on metadata equality."""
        return self._iterate(self._list_steps(config, filter, before, limit), "list")

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self._run(self._put_steps(config, checkpoint, metadata, new_versions), "put")

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._run(self._put_writes_steps(config, writes, task_id, task_path), "put_writes")

    def delete_thread(self, thread_id: str) -> None:
        self._run(self._delete_steps(thread_id), "delete_thread")

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._arun(self._get_steps(config), "get_tuple")

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        async for item in self._aiterate(self._list_steps(config, filter, before, limit), "list"):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self._arun(self._put_steps(config, checkpoint, metadata, new_versions), "put")

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._arun(self._put_writes_steps(config, writes, task_id, task_path), "put_writes")

    async def adelete_thread(self, thread_id: str) -> None:
        await self._arun(self._delete_steps(thread_id), "delete_thread")

    def get_next_version(self, current: str | None, channel: None) -> str:
        """As ``InMemorySaver``: ``{counter:032}.{random:016}``, increasing and unique per put."""
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"


# -- choosing a checkpointer ------------------------------------------------------------------------


def _server_modules(url: str) -> set[str]:
    """Lower-cased names of the modules the server reports (empty when MODULE LIST is refused)."""
    client = redis.Redis.from_url(url, socket_timeout=5.0, socket_connect_timeout=5.0)
    try:
        modules = client.module_list()
    except redis.exceptions.ResponseError:
        return set()  # unknown or denied (ACLs, managed services): assume none
    except redis.exceptions.RedisError as exc:
        raise StateBackendError(f"Redis checkpointer {redact_url(url)} unreachable: {exc}") from exc
    finally:
        client.close()
    names = set()
    for module in modules or []:
        entry = module if isinstance(module, dict) else dict(zip(module[::2], module[1::2], strict=False))
        name = entry.get(b"name", entry.get("name"))
        if name is not None:
            names.add(_s(name).lower())
    return names


def _stack_ready(modules: set[str]) -> bool:
    return bool(modules & {"search", "searchlight"}) and bool(modules & {"rejson", "json"})


def make_checkpointer(
    url: str | None = None,
    *,
    key_prefix: str = DEFAULT_KEY_PREFIX,
    ttl_seconds: float | None = None,
) -> BaseCheckpointSaver:
    """The LangGraph checkpointer for this deployment.

    No ``url`` and no ``GUARD_REDIS_URL``: ``InMemorySaver()`` (interrupts live as long as the
    process). With a URL: ``langgraph.checkpoint.redis.RedisSaver`` (``setup()`` called) when that
    package is installed and the server reports the search and JSON modules; otherwise
    ``PlainRedisSaver(url, key_prefix=..., ttl_seconds=...)``. The choice is logged at INFO. A
    server that cannot be reached raises ``StateBackendError``: durable interrupts were asked for,
    so there is no silent fallback to memory.

    A Redis Cluster URL (``redis+cluster://`` or ``rediss+cluster://``) always gives a
    ``PlainRedisSaver`` on the cluster: ``RedisSaver`` accepts a cluster client only when built by
    hand, needs the search and JSON modules on every node, and is not tested here on one.
    """
    url = url or os.environ.get(REDIS_URL_ENV) or None
    if url is None:
        logger.info("checkpointer: InMemorySaver (no %s): interrupts do not survive a restart", REDIS_URL_ENV)
        return InMemorySaver()
    if is_cluster_url(url):
        saver = PlainRedisSaver(url, key_prefix=key_prefix, ttl_seconds=ttl_seconds)
        try:
            saver._client.ping()  # a cluster client reads the slot map when built: fail here, not mid-run
        except (redis.exceptions.RedisError, redis.exceptions.RedisClusterException) as exc:
            saver.close()
            raise StateBackendError(f"Redis checkpointer {redact_url(url)} unreachable: {exc}") from exc
        logger.info(
            "checkpointer: PlainRedisSaver on the Redis Cluster at %s (key prefix %r, ttl %s)",
            redact_url(url),
            key_prefix,
            "none" if ttl_seconds is None else f"{ttl_seconds} s",
        )
        return saver
    modules = _server_modules(url)
    if _stack_ready(modules):
        try:
            # optional dependency: langgraph-checkpoint-redis
            from langgraph.checkpoint.redis import RedisSaver  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            logger.info(
                "checkpointer: the server at %s has the search and JSON modules but langgraph-checkpoint-redis "
                "is not installed; using PlainRedisSaver",
                redact_url(url),
            )
        else:
            ttl = {"default_ttl": ttl_seconds / 60, "refresh_on_read": True} if ttl_seconds else None
            saver = RedisSaver(redis_url=url, ttl=ttl)
            saver.setup()
            logger.info("checkpointer: langgraph-checkpoint-redis RedisSaver at %s", redact_url(url))
            return saver
    logger.info(
        "checkpointer: PlainRedisSaver at %s (key prefix %r, ttl %s; server modules: %s)",
        redact_url(url),
        key_prefix,
        "none" if ttl_seconds is None else f"{ttl_seconds} s",
        ", ".join(sorted(modules)) or "none",
    )
    return PlainRedisSaver(url, key_prefix=key_prefix, ttl_seconds=ttl_seconds)


__all__ = ["DEFAULT_KEY_PREFIX", "PlainRedisSaver", "make_checkpointer"]
