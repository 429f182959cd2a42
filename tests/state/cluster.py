"""A throwaway Redis Cluster for the integration tests: 3 masters and 3 replicas, real redis-server
processes on free loopback ports, files in a temporary folder.

Every wait polls with a deadline and fails naming what it waited for; a missing ``redis-server`` or
``redis-cli`` fails (a skip would hide a CI that forgot to install them).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis

#: Milliseconds before a silent master is marked failed and its replica takes over. Short, so a
#: failover takes seconds; the tests only ever wait for it with deadlines.
NODE_TIMEOUT_MS = 1000
#: Bound on every wait for the cluster to (re)form.
READY_SECONDS = 60.0


def wait_for(what: str, check: Callable[[], bool], timeout: float = READY_SECONDS, every: float = 0.05) -> float:
    """Poll ``check`` until true; the seconds it took. Fails the test after ``timeout`` naming ``what``."""
    start = time.monotonic()
    while True:
        try:
            if check():
                return time.monotonic() - start
        except (redis.exceptions.RedisError, OSError, RuntimeError):  # RuntimeError: StateBackendError
            pass
        if time.monotonic() - start > timeout:
            pytest.fail(f"waited {timeout:g} s for {what}")
        time.sleep(every)


def free_ports(n: int) -> list[int]:
    """``n`` distinct loopback ports nothing listened on when asked (all held open while choosing,
    so the kernel never hands out one twice)."""
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _port(address: str) -> int:
    """The client port of a CLUSTER NODES address (``ip:port@busport``)."""
    return int(address.split("@")[0].rsplit(":", 1)[1])


def _binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} not found: install Debian's redis-server (apt-get install -y redis-server; it brings redis-cli)")
    return path


@dataclass
class Node:
    port: int
    bus_port: int
    folder: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def client(self, timeout: float = 1.0) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=timeout, socket_connect_timeout=timeout,
                           retry=None, decode_responses=True)  # fmt: skip

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [
                _binary("redis-server"), "--port", str(self.port), "--cluster-port", str(self.bus_port),
                "--bind", "127.0.0.1", "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--dir", str(self.folder),
                "--save", "", "--appendonly", "no", "--daemonize", "no",
                # the slots of a master that died are down until its replica takes over; the others keep serving
                "--cluster-require-full-coverage", "no",
                # a new replica syncs at once (the default waits 5 s for more replicas to share one transfer)
                "--repl-diskless-sync-delay", "0",
                "--logfile", str(self.folder / "redis.log"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip

    def answers(self) -> bool:
        client = self.client(0.5)
        try:
            return bool(client.ping())
        except redis.exceptions.RedisError:
            return False
        finally:
            client.close()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: the master vanishes without a word, as a crashed host does."""
        if self.alive():
            assert self.process is not None
            self.process.kill()
            self.process.wait(timeout=10)

    def pause(self) -> None:
        """SIGSTOP: the master hangs, connections open but nothing answers, as a stuck host does."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        if self.alive():
            self.resume()  # a paused process would not act on SIGTERM
            assert self.process is not None
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def role(self) -> str:
        """``master`` or ``slave``, as the node says."""
        return str(self.replication()["role"])

    def replication(self) -> dict[str, object]:
        client = self.client()
        try:
            return dict(client.info("replication"))
        finally:
            client.close()

    def info(self, section: str) -> dict[str, str]:
        client = self.client()
        try:
            text = client.execute_command("CLUSTER", "INFO") if section == "cluster" else None
        finally:
            client.close()
        return dict(line.split(":", 1) for line in str(text).splitlines() if ":" in line)


@dataclass
class Cluster:
    nodes: list[Node]
    folder: Path
    log: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The guard's cluster URL, seeded with the first node (the client discovers the others)."""
        return f"redis+cluster://{self.nodes[0].address}"

    def live(self) -> list[Node]:
        return [n for n in self.nodes if n.alive()]

    def node(self, port: int) -> Node:
        return next(n for n in self.nodes if n.port == port)

    def master_of(self, key: str) -> Node:
        """The node that serves ``key``'s slot now, as the live nodes see it."""
        for candidate in self.live():
            client = candidate.client()
            try:
                slot = int(client.execute_command("CLUSTER", "KEYSLOT", key))
                for start, end, master, *_ in client.execute_command("CLUSTER", "SLOTS"):
                    if start <= slot <= end:
                        return self.node(int(master[1]))
            except redis.exceptions.RedisError:
                continue
            finally:
                client.close()
        pytest.fail(f"no live node knows who serves {key!r}")

    def replicas_of(self, master: Node) -> list[Node]:
        """The live nodes replicating ``master`` now."""
        found = []
        for n in self.live():
            info = n.replication()
            if info.get("role") == "slave" and int(str(info.get("master_port", 0))) == master.port:
                found.append(n)
        return found

    def healthy(self) -> bool:
        """Every live node says cluster_state:ok with all 16384 slots served, the live nodes agree
        that three live masters hold the slots, and every live replica's link to its master is up
        (so a master may fail over: a replica that never synced cannot take over)."""
        live = self.live()
        if not live:
            return False
        for n in live:
            info = n.info("cluster")
            if info.get("cluster_state") != "ok" or info.get("cluster_slots_ok") != "16384":
                return False
        alive_ports = {n.port for n in live}
        for n in live:
            client = n.client()
            try:
                rows = [line.split() for line in client.execute_command("CLUSTER", "NODES").splitlines()]
                replication = client.info("replication")
            finally:
                client.close()
            serving = [r for r in rows if "master" in r[2].split(",") and len(r) > 8]
            if len(serving) != 3 or any("fail" in r[2] or _port(r[1]) not in alive_ports for r in serving):
                return False
            if replication.get("role") == "slave" and replication.get("master_link_status") != "up":
                return False
        return True

    def wait_healthy(self, timeout: float = READY_SECONDS) -> float:
        return wait_for("the cluster to report cluster_state:ok with every slot served by a live master", self.healthy, timeout)

    def stop(self) -> None:
        for n in self.nodes:
            n.stop()


def start_cluster(folder: Path, attempts: int = 3) -> Cluster:
    """Six nodes (3 masters, 3 replicas) joined by ``redis-cli --cluster create``, every slot
    served. A port taken between choosing and binding (another process won the race) restarts the
    attempt on new ports, at most ``attempts`` times."""
    cli = _binary("redis-cli")
    for attempt in range(attempts):
        ports = free_ports(12)
        nodes = [Node(ports[i], ports[i + 6], folder / f"try{attempt}" / str(ports[i])) for i in range(6)]
        for n in nodes:
            n.start()
        cluster = Cluster(nodes, folder)
        started = time.monotonic()
        while time.monotonic() - started < 15 and not all(n.answers() or not n.alive() for n in nodes):
            time.sleep(0.05)
        if not all(n.alive() and n.answers() for n in nodes):
            cluster.stop()
            continue
        created = subprocess.run(
            [cli, "--cluster", "create", *[n.address for n in nodes], "--cluster-replicas", "1", "--cluster-yes"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        if created.returncode != 0:
            cluster.stop()
            pytest.fail(f"redis-cli --cluster create failed ({created.returncode}): {created.stdout[-2000:]} {created.stderr[-2000:]}")
        # every node must know all six and agree the slots are covered
        def formed() -> bool:
            if not cluster.healthy():
                return False
            for n in nodes:
                client = n.client()
                try:
                    if len(client.execute_command("CLUSTER", "NODES").splitlines()) != 6:
                        return False
                finally:
                    client.close()
            return True

        wait_for("a new cluster's six nodes to meet and serve every slot", formed)
        return cluster
    pytest.fail(f"could not start six redis-server cluster nodes on free ports in {attempts} attempts")
