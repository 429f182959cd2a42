"""Shared state in Redis, so that every guard replica sees the same budgets, circuits and escalations.

Each operation is atomic on the server, one Lua script (retry counts, circuits, probes, escalation
transitions) or one command, so two replicas can never both open a circuit from a stale read or
both apply an answer; it costs one round trip (a tool result on a cluster two: the ``{circuits}`` list first).

**Keys** (all under ``key_prefix``). Each carries a Redis Cluster hash tag, the part in ``{...}``,
chosen so that every transaction and script touches one slot only: on a single Redis the tags are
just part of the name; on a cluster (a ``redis+cluster://`` URL) they keep each operation on the
one master that serves its slot. A tag holds the thread id or tool name with ``%``, ``{`` and ``}``
percent-escaped (``%`` alone for the empty string), so no value can end a tag early or pick its slot.

* ``retries:{<thread>}``: hash, field ``thread`` (all retries) and ``call:<signature>``; expires
  ``ttl_seconds`` after the thread's last retry. One slot per thread.
* ``circuit:{<tool>}``: hash ``failures``, ``opened_at``, ``reason``; ``probes:{<tool>}``: probes in
  flight, expiring after ``reset_seconds``. One slot per tool. ``{circuits}``: set of tool names,
  added to (``SADD``) by the circuit's script on a single Redis, and on a cluster (another slot) in a
  command of its own before it, so a tool is listed by ``all_circuits`` from its first result on.
* The escalation registry, one slot, tag ``{esc}``: the cap on pending escalations is global and
  checked in the script that registers one, and answering one moves it out of the global pending
  set in the same step as it changes its status, so these keys must sit together (their traffic is
  one operation per question put to a human):

  * ``{esc}:escalation:<id>``: hash holding the escalation as put (``record``, JSON) and its
    mutable part (``status``, ``resolution`` JSON, ``resolved_at``) as separate fields, so the
    scripts change status without decoding and re-encoding the payload (Lua's cjson would round
    floats to 14 digits and turn ``[]`` into ``{}``); kept ``retention_seconds`` past its expiry
    or its resolution, so records vanish even when no replica sweeps;
  * ``{esc}:pending`` and ``{esc}:pending:<thread>``: sorted sets of pending ids by expiry (ties by
    id, Redis's own order), so registering, resolving, counting (``ZCOUNT``) and a page (``ZRANK``
    of the cursor, then ``ZRANGE``) cost O(log n) whatever the backlog; the caps on pending
    escalations are checked in the same script that registers one;
  * ``{esc}:approval:<key>``: the escalation id whose approval of one exact call
    (``approval_key``) a re-check may consume once (``GETDEL``); set by the resolving script,
    expiring with its TTL.

Circuit times come from the calling replica's clock (injectable); budget and probe expiry use the
server's. The layout changed when the tags came in (before, ``retries:t1``, ``circuit:search``,
``escalation:<id>``… without tags): state written by an earlier version is not read; see
docs/operations.md for the upgrade.

**Redis Cluster** (``redis+cluster://node[,node…]``): redis-py's ``RedisCluster``, built on first
use, retrying a refused connection once and a timeout never (a hung master costs a decision its
budget, not twice), re-reading the slot map after a failure, so a failover heals without a
restart. ``wait_replicas`` sends ``WAIT`` after each write (see ``RedisStore._write``) for what
asynchronous replication would otherwise lose on a failover.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis
import redis.asyncio.cluster
import redis.cluster
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.retry import Retry

from guard.state.base import (
    EXPIRED_RESOLUTION,
    SWEEP_LIMIT,
    Approval,
    CircuitStatus,
    Clock,
    Escalation,
    EscalationPage,
    EscalationRefused,
    PageCursor,
    RetryCounts,
    StateBackendError,
    StateStore,
    circuit_status,
)
from guard.state.config import CircuitConfig, check_key_prefix
from guard.state.memory import DEFAULT_RETENTION_SECONDS

# KEYS: the thread's retries hash. ARGV: call field, ttl (ms). The counts after one more retry.
_INCR = """
local per_call = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
local per_thread = redis.call('HINCRBY', KEYS[1], 'thread', 1)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {per_call, per_thread}
"""

# KEYS: circuit hash, probes key (one slot: the tool's). ARGV: ok, reason, now, threshold, reset_seconds.
_RECORD = """
if ARGV[1] == '1' then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('HSET', KEYS[1], 'failures', 0)
  return {'0', '', ''}
end
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
redis.call('HSET', KEYS[1], 'reason', ARGV[2])
local opened = redis.call('HGET', KEYS[1], 'opened_at')
local reopen = opened and tonumber(ARGV[3]) >= tonumber(opened) + tonumber(ARGV[5])
if reopen or (not opened and failures >= tonumber(ARGV[4])) then
  redis.call('HSET', KEYS[1], 'opened_at', ARGV[3])
  redis.call('DEL', KEYS[2])
  opened = ARGV[3]
end
return {tostring(failures), opened or '', ARGV[2]}
"""
# On a single Redis the tool is listed in the same script (KEYS[3]: the {circuits} set, ARGV[6]: the
# tool): one round trip per tool result; on a cluster that set sits on another slot.
_RECORD_LISTED = "redis.call('SADD', KEYS[3], ARGV[6])\n" + _RECORD


# KEYS: circuit hash, probes key. ARGV: now, reset_seconds, max probes, probe ttl (ms).
_ACQUIRE = """
local opened = redis.call('HGET', KEYS[1], 'opened_at')
if not opened then return 1 end
if tonumber(ARGV[1]) < tonumber(opened) + tonumber(ARGV[2]) then return 0 end
if tonumber(redis.call('GET', KEYS[2]) or '0') >= tonumber(ARGV[3]) then return 0 end
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
"""

# KEYS: escalation hash, pending set, thread's pending set. ARGV: now, id, thread id, expires_at,
# status, record JSON, resolution JSON or '', resolved_at or '', keep (ms), max pending (-1: none),
# max pending in the thread (-1: none), per-thread pending prefix.
_PUT = """
local old_status = redis.call('HGET', KEYS[1], 'status')
if ARGV[5] == 'pending' and old_status ~= 'pending' then
  local live = '(' .. ARGV[1]
  if tonumber(ARGV[10]) >= 0 and redis.call('ZCOUNT', KEYS[2], live, '+inf') >= tonumber(ARGV[10]) then
    return 'max_pending'
  end
  if tonumber(ARGV[11]) >= 0 and redis.call('ZCOUNT', KEYS[3], live, '+inf') >= tonumber(ARGV[11]) then
    return 'max_pending_per_thread'
  end
end
if old_status == 'pending' then
  redis.call('ZREM', KEYS[2], ARGV[2])
  redis.call('ZREM', ARGV[12] .. redis.call('HGET', KEYS[1], 'thread_id'), ARGV[2])
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'id', ARGV[2], 'thread_id', ARGV[3], 'expires_at', ARGV[4], 'status', ARGV[5], 'record', ARGV[6])
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'resolution', ARGV[7]) end
if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'resolved_at', ARGV[8]) end
if ARGV[5] == 'pending' then
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[2])
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[2])
end
redis.call('PEXPIRE', KEYS[1], ARGV[9])
return 'stored'
"""

# KEYS: pending set. ARGV: now, cursor's expires_at or '', cursor's id, limit.
# Entries after the cursor (or all not yet expired), at most limit, as id, score pairs.
_PAGE = """
local now, limit = tonumber(ARGV[1]), tonumber(ARGV[4])
if ARGV[2] == '' or tonumber(ARGV[2]) <= now then
  return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', 0, limit)
end
local score = redis.call('ZSCORE', KEYS[1], ARGV[3])
if score and tonumber(score) == tonumber(ARGV[2]) then
  local rank = redis.call('ZRANK', KEYS[1], ARGV[3])
  return redis.call('ZRANGE', KEYS[1], rank + 1, rank + limit, 'WITHSCORES')
end
-- the cursor's escalation is no longer pending: its ties by score, then what follows
local out = {}
local ties = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], ARGV[2])
for _, id in ipairs(ties) do
  if id > ARGV[3] and #out < 2 * limit then
    table.insert(out, id)
    table.insert(out, ARGV[2])
  end
end
local rest = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[2], '+inf', 'WITHSCORES', 'LIMIT', 0, limit - #out / 2)
for _, v in ipairs(rest) do table.insert(out, v) end
return out
"""

# KEYS: escalation hash, pending set, approval key or the hash again. ARGV: now, resolution JSON,
# per-thread pending prefix, retention (ms), approval's escalation id ('' : none), approval TTL (ms).
_RESOLVE = """
if redis.call('HGET', KEYS[1], 'status') ~= 'pending' then return false end
if tonumber(ARGV[1]) >= tonumber(redis.call('HGET', KEYS[1], 'expires_at')) then return false end
local id = redis.call('HGET', KEYS[1], 'id')
redis.call('HSET', KEYS[1], 'status', 'resolved', 'resolution', ARGV[2], 'resolved_at', ARGV[1])
redis.call('ZREM', KEYS[2], id)
redis.call('ZREM', ARGV[3] .. redis.call('HGET', KEYS[1], 'thread_id'), id)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if ARGV[5] ~= '' then redis.call('SET', KEYS[3], ARGV[5], 'PX', ARGV[6]) end
return redis.call('HGETALL', KEYS[1])
"""

# KEYS: approval keys. The first one held, taken.
_CONSUME = """
for _, key in ipairs(KEYS) do
  local held = redis.call('GETDEL', key)
  if held then return held end
end
return false
"""

# KEYS: pending set. ARGV: now, resolution JSON, per-thread pending prefix, escalation prefix, retention (ms), limit.
_EXPIRE = """
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[6]))) do
  local key = ARGV[4] .. id
  redis.call('ZREM', KEYS[1], id)
  if redis.call('HGET', key, 'status') == 'pending' then
    redis.call('ZREM', ARGV[3] .. redis.call('HGET', key, 'thread_id'), id)
    redis.call('HSET', key, 'status', 'expired', 'resolution', ARGV[2], 'resolved_at', ARGV[1])
    redis.call('PEXPIRE', key, ARGV[5])
    table.insert(out, redis.call('HGETALL', key))
  end
end
return out
"""


#: URL schemes that name a Redis Cluster (any node of it; the client discovers the rest), and the
#: plain scheme redis-py is given.
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}

#: The hash tag of the escalation registry (escalations, pending sets, approvals): one slot.
ESCALATION_TAG = "{esc}"
#: The key of the set of tools with a circuit.
CIRCUITS_KEY = "{circuits}"


def is_cluster_url(url: str) -> bool:
    """Whether ``url`` names a Redis Cluster (``redis+cluster://`` or ``rediss+cluster://``)."""
    return urlsplit(url).scheme.lower() in CLUSTER_SCHEMES


def plain_url(url: str) -> str:
    """A cluster URL as redis-py's ``RedisCluster.from_url`` takes it (plain scheme, the first
    node only: see ``seed_nodes``); other URLs unchanged."""
    parts = urlsplit(url)
    scheme = CLUSTER_SCHEMES.get(parts.scheme.lower())
    if scheme is None:
        return url
    userinfo, at, hosts = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(scheme=scheme, netloc=f"{userinfo}{at}{hosts.split(',')[0]}"))


def seed_nodes(url: str) -> list[tuple[str, int]]:
    """The nodes a cluster URL names after the first (``redis+cluster://h1:6379,h2:6379,h3:6379``):
    redis-py reads the slot map from the first that answers, so a client can start while one of
    them is down."""
    hosts = urlsplit(url).netloc.rpartition("@")[2].split(",")[1:]
    seeds = []
    for host in filter(None, (h.strip() for h in hosts)):
        name, colon, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
        if not colon or not port.isdigit():
            name, port = host, "6379"
        seeds.append((name.strip("[]"), int(port)))
    return seeds


def tag(value: str) -> str:
    """``value`` as a Redis Cluster hash tag: ``{value}`` with ``%``, ``{`` and ``}`` escaped, so a
    hostile value can neither close the tag early nor collide with another; ``{%}`` for the empty
    string (an empty ``{}`` is no tag at all: Redis would hash the whole key)."""
    escaped = value.replace("%", "%25").replace("{", "%7B").replace("}", "%7D")
    return "{" + (escaped or "%") + "}"


class _FailFastCluster(redis.cluster.RedisCluster):
    """redis-py's cluster client, except that a timeout is not retried: a hung node would cost
    twice the budget (as on a single Redis, only a connection error is retried)."""

    ERRORS_ALLOW_RETRY = (
        redis.exceptions.ConnectionError,
        redis.exceptions.ClusterDownError,
        redis.exceptions.SlotNotCoveredError,
    )


class _AsyncFailFastCluster(redis.asyncio.cluster.RedisCluster):
    """The async twin of ``_FailFastCluster``."""

    ERRORS_ALLOW_RETRY = _FailFastCluster.ERRORS_ALLOW_RETRY


def cluster_client(url: str, retries: int = 1, **kwargs: Any) -> redis.cluster.RedisCluster:
    """A ``RedisCluster`` for a cluster URL, failing fast: ``retries`` immediate retries of a
    connection error (after which redis-py has re-read the slot map), none of a timeout, no
    back-off sleeps. It connects at once (it reads the slot map), so callers build it when first
    needed."""
    seeds = [redis.cluster.ClusterNode(host, port) for host, port in seed_nodes(url)]
    return _FailFastCluster.from_url(plain_url(url), retry=Retry(NoBackoff(), retries), startup_nodes=seeds, **kwargs)


def acluster_client(url: str, **kwargs: Any) -> redis.asyncio.cluster.RedisCluster:
    """``cluster_client``'s async twin (one connection retry, no timeout retried); it reads the
    slot map at its first command or ``initialize()``."""
    seeds = [redis.asyncio.cluster.ClusterNode(host, port) for host, port in seed_nodes(url)]
    return _AsyncFailFastCluster.from_url(plain_url(url), retry=AsyncRetry(NoBackoff(), 1), startup_nodes=seeds, **kwargs)


#: What a Redis (Cluster) client raises when the backend fails.
REDIS_ERRORS = (redis.exceptions.RedisError, redis.exceptions.RedisClusterException)


def node_of(client: Any, key: str | None) -> str | None:
    """The name of the node a cluster client would send ``key`` to now (None if unknown)."""
    try:
        return None if key is None else str(client.get_node_from_key(key).name)
    except (*REDIS_ERRORS, LookupError, AttributeError):
        return None


def refresh_slots(client: Any, key: str | None = None) -> None:
    """Re-read a cluster client's slot map after a failure on ``key`` (best effort: it may fail too).

    redis-py does so itself after a connection error or a timeout of a single command, but not
    after one in a transaction, nor for a command sent to a node's own connection: without this a
    client whose master died would keep asking it after its replica took over. The node that
    served ``key`` is asked last (a hung one would cost a timeout more)."""
    try:
        client.nodes_manager.initialize(last_failed_node_name=node_of(client, key))
    except REDIS_ERRORS:
        pass


async def arefresh_slots(client: Any, key: str | None = None) -> None:
    """``refresh_slots`` for redis-py's asyncio cluster client."""
    try:
        await client.nodes_manager.initialize(last_failed_node_name=node_of(client, key))
    except REDIS_ERRORS:
        pass


def redact_url(url: str) -> str:
    """The URL with any password replaced by ``***``, fit for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


class RedisStore(StateStore):
    """State shared through one Redis server, or a Redis Cluster when ``url`` is a
    ``redis+cluster://`` (or ``rediss+cluster://``) URL naming any node of it; every failure to
    reach it raises ``StateBackendError``. ``key_prefix`` must not contain ``{`` or ``}``."""

    def __init__(
        self,
        url: str,
        *,
        key_prefix: str = "guard:",
        circuit: CircuitConfig | None = None,
        clock: Clock = time.time,
        retention_seconds: float = DEFAULT_RETENTION_SECONDS,
        socket_timeout: float = 1.0,
        ping_timeout: float = 0.2,
        wait_replicas: int = 0,
        wait_timeout: float | None = None,
    ) -> None:
        if wait_replicas < 0:
            raise ValueError(f"wait_replicas must be >= 0, got {wait_replicas}")
        self.circuit_config = circuit or CircuitConfig()
        self.wait_replicas = wait_replicas
        # WAIT's own timeout, inside the socket timeout so the server answers (with a count) first
        self._wait_ms = _ms(socket_timeout / 2 if wait_timeout is None else wait_timeout)
        self.url = redact_url(url)
        self.cluster = is_cluster_url(url)
        self._url = url
        self._clock = clock
        self._p = check_key_prefix(key_prefix)
        self._esc = f"{key_prefix}{ESCALATION_TAG}:"
        self._retention_ms = _ms(retention_seconds)
        self._socket_timeout, self._ping_timeout = socket_timeout, ping_timeout
        self._lock = threading.Lock()
        self._client: redis.Redis | redis.cluster.RedisCluster | None = None
        self._probe_client: redis.Redis | redis.cluster.RedisCluster | None = None
        if not self.cluster:
            self._connect()  # redis-py connects lazily: nothing is sent yet

    def _connect(self) -> redis.Redis | redis.cluster.RedisCluster:
        """The command client, built on first use: a cluster client reads the slot map when built,
        so it is built where a failure becomes a ``StateBackendError``, not in the constructor."""
        with self._lock:
            if self._client is not None:
                return self._client
            timeout = self._socket_timeout
            client: redis.Redis | redis.cluster.RedisCluster
            if self.cluster:
                client = cluster_client(
                    self._url, socket_timeout=timeout, socket_connect_timeout=timeout, decode_responses=True
                )
            else:
                # One immediate retry of a connection error (a pooled connection gone stale after a
                # Redis restart), then fail fast: redis-py's default backs off for seconds, which a
                # guard on the request path cannot afford. A timeout is not retried: a hung server
                # would cost twice the budget. A write retried after its reply was lost errs on the
                # safe side: a retry or failure counted twice, or a resolution reported as lost
                # (None) rather than applied twice.
                client = redis.Redis.from_url(
                    self._url,
                    socket_timeout=timeout,
                    socket_connect_timeout=timeout,
                    retry=Retry(NoBackoff(), 1, supported_errors=(redis.exceptions.ConnectionError,)),
                    decode_responses=True,
                )
            self._incr = client.register_script(_INCR)
            self._record = client.register_script(_RECORD)
            self._record_listed = client.register_script(_RECORD_LISTED)
            self._acquire = client.register_script(_ACQUIRE)
            self._put = client.register_script(_PUT)
            self._page = client.register_script(_PAGE)
            self._resolve = client.register_script(_RESOLVE)
            self._consume = client.register_script(_CONSUME)
            self._expire = client.register_script(_EXPIRE)
            self._client = client
            return client

    @property
    def _r(self) -> redis.Redis | redis.cluster.RedisCluster:
        return self._client if self._client is not None else self._connect()

    def _probe(self) -> redis.Redis | redis.cluster.RedisCluster:
        """Readiness has its own connections with a short timeout and no retry, so a probe answers
        within about 2 x ping_timeout whatever the server does, and never waits behind a request."""
        with self._lock:
            if self._probe_client is None:
                t = self._ping_timeout
                if self.cluster:
                    self._probe_client = cluster_client(
                        self._url, retries=0, socket_timeout=t, socket_connect_timeout=t, decode_responses=True
                    )
                else:
                    self._probe_client = redis.Redis.from_url(
                        self._url, socket_timeout=t, socket_connect_timeout=t, retry=Retry(NoBackoff(), 0), decode_responses=True
                    )
            return self._probe_client

    @contextmanager
    def _backend(self, operation: str, refresh: bool = False, key: str | None = None) -> Iterator[None]:
        """Redis errors become ``StateBackendError``. With ``refresh`` (a pipeline, or a command
        sent to a node's own connection, around ``key``), a cluster client re-reads its slot map
        after one (``refresh_slots``); single commands and scripts leave that to redis-py."""
        try:
            self._r  # a cluster client is built (and reads the slot map) on first use
            yield
        except REDIS_ERRORS as exc:
            if refresh and self.cluster and self._client is not None:
                refresh_slots(self._client, key)
            raise StateBackendError(f"Redis state backend {self.url} failed during {operation}: {exc}") from exc

    def _write(self, key: str, command: Callable[[Any], Any]) -> Any:
        """Run a write (``command(client)``, one script or command touching ``key``'s slot) and,
        with ``wait_replicas``, ``WAIT`` on the same connection until that many replicas have it.
        Fewer within the wait timeout is a failure (``StateBackendError``), although the master
        applied the write: it is not yet safe from a failover, and the caller answers as for an
        outage (a budget read as spent, an answer reported lost), never as if it were."""
        if not self.wait_replicas:
            return command(self._r)
        client: Any = self._r
        if self.cluster:  # WAIT names no key: send both to the node that serves the key's slot
            client = client.get_redis_connection(client.get_node_from_key(key))
        pipe = client.pipeline(transaction=False)
        command(pipe)
        pipe.execute_command("WAIT", self.wait_replicas, self._wait_ms)
        try:
            reply, acknowledged = pipe.execute()
        except REDIS_ERRORS:
            if self.cluster:
                refresh_slots(self._r, key)
            raise
        if int(acknowledged) < self.wait_replicas:
            raise redis.exceptions.RedisError(
                f"written on the master but acknowledged by {acknowledged} of {self.wait_replicas} replicas "
                f"within {self._wait_ms} ms (WAIT)"
            )
        return reply

    # Keys (see the module's docstring)
    def _retries_key(self, thread_id: str) -> str:
        return f"{self._p}retries:{tag(thread_id)}"

    def _circuit_keys(self, tool: str) -> tuple[str, str]:
        t = tag(tool)
        return f"{self._p}circuit:{t}", f"{self._p}probes:{t}"

    def _escalation_key(self, escalation_id: str) -> str:
        return f"{self._esc}escalation:{escalation_id}"

    def _approval_key(self, key: str) -> str:
        return f"{self._esc}approval:{key}"

    # Retry budgets
    def incr_retries(self, thread_id: str, signature: str, ttl_seconds: float) -> RetryCounts:
        key = self._retries_key(thread_id)
        args = [f"call:{signature}", _ms(ttl_seconds)]
        with self._backend("incr_retries"):
            per_call, per_thread = self._write(key, lambda c: self._incr(keys=[key], args=args, client=c))
        return RetryCounts(int(per_call), int(per_thread))

    def get_retries(self, thread_id: str, signature: str) -> RetryCounts:
        with self._backend("get_retries"):
            per_call, per_thread = self._r.hmget(self._retries_key(thread_id), [f"call:{signature}", "thread"])
        return RetryCounts(int(per_call or 0), int(per_thread or 0))

    # Circuit breakers
    def record_tool_result(self, tool: str, ok: bool, reason: str | None = None) -> CircuitStatus:
        now = self._clock()
        cfg = self.circuit_config
        keys = list(self._circuit_keys(tool))
        args = [int(ok), reason or "", now, cfg.failure_threshold, cfg.reset_seconds]
        circuits = f"{self._p}{CIRCUITS_KEY}"
        with self._backend("record_tool_result"):
            if self.cluster:  # listed first, in a command of its own (another slot): a tool with a circuit is listed
                self._r.sadd(circuits, tool)
                record = self._record
            else:
                record, keys, args = self._record_listed, [*keys, circuits], [*args, tool]
            failures, opened_at, stored_reason = self._write(keys[0], lambda c: record(keys=keys, args=args, client=c))
        return circuit_status(tool, int(failures), _float(opened_at), stored_reason or None, now, cfg)

    def circuit(self, tool: str) -> CircuitStatus:
        with self._backend("circuit"):
            fields = self._r.hgetall(self._circuit_keys(tool)[0])
        return self._status(tool, fields, self._clock())

    def acquire_probe(self, tool: str) -> bool:
        cfg = self.circuit_config
        keys = list(self._circuit_keys(tool))
        args = [self._clock(), cfg.reset_seconds, cfg.half_open_max_probes, _ms(cfg.reset_seconds)]
        with self._backend("acquire_probe"):
            return bool(self._write(keys[0], lambda c: self._acquire(keys=keys, args=args, client=c)))

    def all_circuits(self) -> dict[str, CircuitStatus]:
        with self._backend("all_circuits", refresh=True):
            tools = sorted(self._r.smembers(f"{self._p}{CIRCUITS_KEY}"))
            pipe = self._r.pipeline(transaction=False)
            for tool in tools:
                pipe.hgetall(self._circuit_keys(tool)[0])
            rows = pipe.execute()
        now = self._clock()
        return {tool: self._status(tool, fields, now) for tool, fields in zip(tools, rows, strict=True)}

    def _status(self, tool: str, fields: dict[str, str], now: float) -> CircuitStatus:
        failures = int(fields.get("failures") or 0)
        opened_at = _float(fields.get("opened_at"))
        return circuit_status(tool, failures, opened_at, fields.get("reason") or None, now, self.circuit_config)

    # Escalations
    def _pending_key(self, thread_id: str | None) -> str:
        return f"{self._esc}pending" + ("" if thread_id is None else f":{thread_id}")

    def put_escalation(
        self, escalation: Escalation, *, max_pending: int | None = None, max_pending_per_thread: int | None = None
    ) -> None:
        e = escalation
        now = self._clock()
        # Pending: kept until retention after its expiry, even if no replica ever sweeps it.
        remaining = e.expires_at - now if e.status == "pending" else 0.0
        keep_ms = self._retention_ms + (_ms(remaining) if remaining > 0 else 0)
        per_thread = max_pending_per_thread if max_pending_per_thread is not None and e.thread_id else -1
        keys = [self._escalation_key(e.id), self._pending_key(None), self._pending_key(e.thread_id)]
        args = [
            repr(now), e.id, e.thread_id, repr(e.expires_at), e.status, e.model_dump_json(),
            "" if e.resolution is None else json.dumps(e.resolution),
            "" if e.resolved_at is None else repr(e.resolved_at),
            keep_ms, -1 if max_pending is None else max_pending, per_thread, f"{self._esc}pending:",
        ]  # fmt: skip
        with self._backend("put_escalation"):
            outcome = self._write(keys[0], lambda c: self._put(keys=keys, args=args, client=c))
        if outcome == "max_pending":
            raise EscalationRefused("max_pending", max_pending or 0)
        if outcome == "max_pending_per_thread":
            raise EscalationRefused("max_pending_per_thread", max_pending_per_thread or 0)

    def get_escalation(self, escalation_id: str) -> Escalation | None:
        with self._backend("get_escalation"):
            fields = self._r.hgetall(self._escalation_key(escalation_id))
        return _escalation(fields) if fields else None

    def escalation_page(
        self, thread_id: str | None = None, *, limit: int = 100, after: PageCursor | None = None
    ) -> EscalationPage:
        args = [repr(self._clock()), "" if after is None else repr(after[0]), "" if after is None else after[1], limit + 1]
        with self._backend("escalation_page", refresh=True, key=self._pending_key(thread_id)):
            flat = self._page(keys=[self._pending_key(thread_id)], args=args)
            entries = [(float(score), eid) for eid, score in zip(flat[::2], flat[1::2], strict=True)]
            pipe = self._r.pipeline(transaction=False)
            for _, eid in entries[:limit]:
                pipe.hgetall(self._escalation_key(eid))
            rows = pipe.execute() if entries else []
        # An escalation resolved between the two round trips is left out (it is no longer pending).
        found = (_escalation(fields) for fields in rows if fields)
        escalations = [e for e in found if e.status == "pending"]
        return EscalationPage(escalations, entries[limit - 1] if len(entries) > limit else None)

    def pending_count(self, thread_id: str | None = None) -> int:
        with self._backend("pending_count"):
            return int(self._r.zcount(self._pending_key(thread_id), f"({self._clock()!r}", "+inf"))

    def resolve_escalation(
        self, escalation_id: str, resolution: dict[str, Any], *, approval: Approval | None = None
    ) -> Escalation | None:
        key = self._escalation_key(escalation_id)
        keys = [key, self._pending_key(None), key if approval is None else self._approval_key(approval.key)]
        args = [
            self._clock(), json.dumps(resolution), f"{self._esc}pending:", self._retention_ms,
            "" if approval is None else approval.escalation_id, 1 if approval is None else _ms(approval.ttl_seconds),
        ]  # fmt: skip
        with self._backend("resolve_escalation"):
            flat = self._write(key, lambda c: self._resolve(keys=keys, args=args, client=c))
        return _escalation(_pairs(flat)) if flat else None

    def expire_escalations(
        self, now: float | None = None, *, default_resolution: dict[str, Any] | None = None, limit: int = SWEEP_LIMIT
    ) -> list[Escalation]:
        resolution = EXPIRED_RESOLUTION if default_resolution is None else default_resolution
        args = [
            self._clock() if now is None else now,
            json.dumps(resolution),
            f"{self._esc}pending:",
            f"{self._esc}escalation:",
            self._retention_ms,
            limit,
        ]
        with self._backend("expire_escalations"):
            pending = self._pending_key(None)
            rows = self._write(pending, lambda c: self._expire(keys=[pending], args=args, client=c))
        return [_escalation(_pairs(flat)) for flat in rows]

    # Approvals
    def grant_approval(self, approval: Approval) -> None:
        with self._backend("grant_approval"):
            key = self._approval_key(approval.key)
            self._write(key, lambda c: c.set(key, approval.escalation_id, px=_ms(approval.ttl_seconds)))

    def consume_approval(self, keys: list[str]) -> str | None:
        if not keys:
            return None
        with self._backend("consume_approval"):
            names = [self._approval_key(k) for k in keys]
            held = self._write(names[0], lambda c: self._consume(keys=names, args=[], client=c))
        return held or None

    # Lifecycle
    def ping(self) -> bool:
        """True when the server answers within the ping timeout; False (never an exception) otherwise."""
        try:
            return bool(self._probe().ping())
        except REDIS_ERRORS:
            return False

    def close(self) -> None:
        with self._lock:
            clients, self._client, self._probe_client = [self._client, self._probe_client], None, None
        for client in clients:
            if client is not None:
                client.close()


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def _float(value: str | None) -> float | None:
    return float(value) if value else None


def _pairs(flat: list[str]) -> dict[str, str]:
    return dict(zip(flat[::2], flat[1::2], strict=True))


def _escalation(fields: dict[str, str]) -> Escalation:
    data = json.loads(fields["record"])
    data["status"] = fields["status"]
    data["resolution"] = json.loads(fields["resolution"]) if "resolution" in fields else None
    data["resolved_at"] = _float(fields.get("resolved_at"))
    return Escalation.model_validate(data)
