"""``guard serve`` and the deployment files never open the API by accident (issue 11 item 12): without
a token it refuses to listen beyond loopback unless ``--insecure``; it logs one line saying where
it listens and whether auth is on; a token with a trailing newline works; compose has no default
token. The servers are real processes on free ports, stopped at teardown."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from guard.service import TOKEN_ENV, is_loopback
from tests.state.helpers import free_port, healthy, stop_process_group

ROOT = Path(__file__).parents[2]
GUARD = [sys.executable, "-c", "from guard.cli import app; app(prog_name='guard')"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GUARD_", "PROMETHEUS_", "OTEL_"))}
    return {**env, "OTEL_TRACES_EXPORTER": "none", **extra}


class Served:
    def __init__(self, process: subprocess.Popen[bytes], log: Path, port: int) -> None:
        self.process, self.log, self.port = process, log, port
        self.url = f"http://127.0.0.1:{port}"

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@pytest.fixture
def start(tmp_path: Path) -> Iterator[object]:
    """``start(*args, **env)``: ``guard serve --port <free> *args`` in a process group of its own,
    answering /healthz within 30 s; every one started is stopped at teardown."""
    started: list[subprocess.Popen[bytes]] = []

    def run(*args: str, **env: str) -> Served:
        port = free_port()
        log = tmp_path / f"serve-{port}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [*GUARD, "serve", "--port", str(port), *args],
                cwd=ROOT, env=_env(**env), stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        started.append(process)
        served = Served(process, log, port)
        deadline = time.monotonic() + 30
        while not healthy(served.url):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"guard serve did not come up:\n{served.text()}")
            time.sleep(0.1)
        return served

    yield run
    for process in started:
        stop_process_group(process)


@pytest.mark.parametrize(
    ("host", "token"), [("0.0.0.0", None), ("::", " \n"), ("example.com", "")], ids=["unset", "whitespace", "empty"]
)
def test_serving_beyond_loopback_without_a_token_is_refused(host: str, token: str | None) -> None:
    port = free_port()
    env = _env() if token is None else _env(**{TOKEN_ENV: token})
    result = subprocess.run(
        [*GUARD, "serve", "--host", host, "--port", str(port)], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    assert "refusing to serve" in result.stderr and TOKEN_ENV in result.stderr and "--insecure" in result.stderr
    assert not healthy(f"http://127.0.0.1:{port}")


def test_insecure_serves_open_and_says_so(start) -> None:  # type: ignore[no-untyped-def]
    served = start("--host", "0.0.0.0", "--insecure")
    assert httpx.get(f"{served.url}/v1/escalations", timeout=10).status_code == 200
    (line,) = [line for line in served.text().splitlines() if "guard listening on" in line]
    assert f"http://0.0.0.0:{served.port}" in line and "auth OFF" in line and line.startswith("WARNING")


def test_a_token_with_a_trailing_newline_works_for_clients(start) -> None:  # type: ignore[no-untyped-def]
    """The server's copy of the token is stripped like the clients' (a token read from a file)."""
    served = start("--host", "0.0.0.0", **{TOKEN_ENV: "tok-9f2c\n"})
    assert httpx.get(f"{served.url}/v1/escalations", headers={"Authorization": "Bearer tok-9f2c"}, timeout=10).status_code == 200
    assert httpx.get(f"{served.url}/v1/escalations", timeout=10).status_code == 401
    assert httpx.get(f"{served.url}/v1/escalations", headers={"Authorization": "Bearer tok-9f2"}, timeout=10).status_code == 401
    (line,) = [line for line in served.text().splitlines() if "guard listening on" in line]
    assert "auth on" in line and "tok-9f2c" not in served.text(), "the log must never carry the token"


def test_loopback_without_a_token_is_allowed_and_logged(start, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    policy = ROOT / "deploy" / "policy.yaml"
    served = start("--policy", str(policy))
    assert httpx.get(f"{served.url}/v1/escalations", timeout=10).status_code == 200
    (line,) = [line for line in served.text().splitlines() if "guard listening on" in line]
    assert f"http://127.0.0.1:{served.port}" in line and "auth OFF" in line


def test_a_bad_policy_stops_serve_with_its_location(tmp_path: Path) -> None:
    bad = tmp_path / "policy.yaml"
    bad.write_text("bogus_key: 1\n", encoding="utf-8")
    result = subprocess.run(
        [*GUARD, "serve", "--port", str(free_port()), "--policy", str(bad)], cwd=ROOT, env=_env(),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2 and "line 1" in result.stderr and "bogus_key" in result.stderr, result.stderr


def test_serve_help_lists_its_options() -> None:
    result = subprocess.run([*GUARD, "serve", "--help"], capture_output=True, text=True, timeout=60, check=False, env=_env(COLUMNS="200"))
    assert result.returncode == 0, result.stderr
    for option in ("--host", "--port", "--workers", "--policy", "--insecure"):
        assert option in result.stdout


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True), ("localhost", True), ("LocalHost", True),
     ("0.0.0.0", False), ("::", False), ("", False), ("10.0.0.1", False), ("example.com", False),
     ("127.0.0.1.nip.io", False)],
)  # fmt: skip
def test_what_counts_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_compose_needs_a_token_from_the_environment(tmp_path: Path) -> None:
    """No fixed default token in deploy/docker-compose.yml: `config` fails until one is set."""
    argv = next(
        (a for a in (["docker", "compose"], ["docker-compose"]) if shutil.which(a[0])
         and subprocess.run([*a, "version"], capture_output=True, check=False).returncode == 0),
        None,
    )  # fmt: skip
    if argv is None:
        pytest.fail("no docker compose to validate deploy/docker-compose.yml: install Debian's docker-compose")
    compose = ["-f", str(ROOT / "deploy" / "docker-compose.yml"), "config"]
    env = {k: v for k, v in _env().items() if k != TOKEN_ENV}
    refused = subprocess.run([*argv, *compose, "--quiet"], capture_output=True, text=True, check=False, timeout=60, env=env, cwd=tmp_path)
    assert refused.returncode != 0 and "set GUARD_API_TOKEN" in refused.stderr, refused.stderr
    given = subprocess.run([*argv, *compose], capture_output=True, text=True, check=False, timeout=60, env={**env, TOKEN_ENV: "t-1"}, cwd=tmp_path)
    assert given.returncode == 0, given.stderr
    assert "GUARD_API_TOKEN: t-1" in given.stdout
