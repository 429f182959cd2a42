"""docker-compose.yml, the Dockerfile, .dockerignore and the files they use.

There is no Docker engine where these tests run, so the images are not built here: these tests
check what can be checked without one (every mounted file exists, the stack's pieces point at each
other, the Dockerfile has its entrypoint, healthcheck, non-root user and no torch).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib

import pytest
import yaml

from guard.policy import Policy
from tests.deploy.helpers import DASHBOARD, DEPLOY, REPO

COMPOSE = DEPLOY / "docker-compose.yml"
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"


def _compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


def _bind_mounts(service: dict) -> list[tuple[str, str]]:
    """(host path, container path) of each bind mount (named volumes excluded)."""
    mounts = []
    for volume in service.get("volumes", []):
        if isinstance(volume, dict):
            if volume.get("type") == "bind":
                mounts.append((volume["source"], volume["target"]))
            continue
        source, target = volume.split(":")[:2]
        if source.startswith((".", "/")):
            mounts.append((source, target))
    return mounts


def _env(service: dict) -> dict[str, str]:
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: str(v) for k, v in env.items()}


def test_compose_has_the_whole_stack() -> None:
    services = _compose()["services"]
    assert set(services) == {"guard", "redis", "prometheus", "grafana", "otel-collector", "jaeger"}
    assert services["redis"]["image"].startswith("redis:7")
    assert services["jaeger"]["image"].startswith("jaegertracing/all-in-one:")
    assert _env(services["jaeger"])["COLLECTOR_OTLP_ENABLED"] == "true"
    assert "16686:16686" in services["jaeger"]["ports"]
    for name, service in services.items():
        image = service.get("image", "")
        assert name == "guard" or re.search(r":[\w.-]+$", image), f"{name}: pin the image tag"


def test_guard_service_builds_the_root_dockerfile_and_is_configured() -> None:
    guard = _compose()["services"]["guard"]
    context = (COMPOSE.parent / guard["build"]["context"]).resolve()
    assert context == REPO
    assert (context / guard["build"].get("dockerfile", "Dockerfile")).resolve() == DOCKERFILE
    env = _env(guard)
    assert env["GUARD_REDIS_URL"] == "redis://redis:6379/0"
    assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector:4317"
    assert env["OTEL_SERVICE_NAME"] == "guard"
    # guard.telemetry defaults to http/protobuf (port 4318); 4317 is the collector's gRPC port
    assert env["OTEL_EXPORTER_OTLP_PROTOCOL"] == "grpc"
    mounts = {target: source for source, target in _bind_mounts(guard)}
    assert (COMPOSE.parent / mounts[env["GUARD_POLICY"]]).resolve() == DEPLOY / "policy.yaml"
    assert "8080:8080" in guard["ports"]


def test_every_mounted_file_exists() -> None:
    checked = 0
    for name, service in _compose()["services"].items():
        for source, _ in _bind_mounts(service):
            path = (COMPOSE.parent / source).resolve()
            assert path.exists(), f"{name} mounts {source}, which does not exist ({path})"
            assert REPO in path.parents, f"{name} mounts {source} from outside the repository"
            checked += 1
    assert checked >= 7


def test_prometheus_and_grafana_wiring() -> None:
    services = _compose()["services"]
    prom_mounts = {target: (COMPOSE.parent / source).resolve() for source, target in _bind_mounts(services["prometheus"])}
    config_flag = next(a for a in services["prometheus"]["command"] if a.startswith("--config.file="))
    config_path = prom_mounts[config_flag.split("=", 1)[1]]
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    for rule_file in config["rule_files"]:
        assert prom_mounts.get(rule_file) == DEPLOY / "prometheus" / "alerts.yml"

    grafana_mounts = {target: (COMPOSE.parent / source).resolve() for source, target in _bind_mounts(services["grafana"])}
    provider_file = grafana_mounts["/etc/grafana/provisioning/dashboards/guard.yml"]
    provider = yaml.safe_load(provider_file.read_text(encoding="utf-8"))["providers"][0]
    dashboards_dir = provider["options"]["path"]
    assert grafana_mounts[f"{dashboards_dir}/guard.json"] == DASHBOARD
    datasource_file = grafana_mounts["/etc/grafana/provisioning/datasources/prometheus.yml"]
    datasource = yaml.safe_load(datasource_file.read_text(encoding="utf-8"))["datasources"][0]
    assert datasource["type"] == "prometheus" and datasource["url"] == "http://prometheus:9090"
    assert json.loads(DASHBOARD.read_text(encoding="utf-8"))["panels"][1]["datasource"]["uid"] == datasource["uid"]


def test_otel_collector_pipeline_forwards_otlp_to_jaeger() -> None:
    services = _compose()["services"]
    mounts = {target: (COMPOSE.parent / source).resolve() for source, target in _bind_mounts(services["otel-collector"])}
    config_arg = next(a for a in services["otel-collector"]["command"] if a.startswith("--config="))
    config = yaml.safe_load(mounts[config_arg.split("=", 1)[1]].read_text(encoding="utf-8"))
    assert config["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"].endswith(":4317")
    pipeline = config["service"]["pipelines"]["traces"]
    assert pipeline["receivers"] == ["otlp"]
    assert "batch" in pipeline["processors"]
    for kind in ("receivers", "processors", "exporters"):
        for component in pipeline[kind]:
            assert component in config[kind], f"pipeline uses undefined {kind[:-1]} {component}"
    for extension in config["service"].get("extensions", []):
        assert extension in config["extensions"]
    (exporter,) = pipeline["exporters"]
    assert exporter.split("/")[0] == "otlp"
    assert config["exporters"][exporter]["endpoint"] == "jaeger:4317"


def _dockerfile_instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text(encoding="utf-8").replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            out.append((keyword.upper(), rest.strip()))
    return out


def test_dockerfile() -> None:
    instructions = _dockerfile_instructions()
    by_kind: dict[str, list[str]] = {}
    for keyword, rest in instructions:
        by_kind.setdefault(keyword, []).append(rest)
    assert by_kind["FROM"] == ["python:3.11-slim"]
    run = " ".join(by_kind["RUN"])
    assert re.search(r"pip install --no-cache-dir \"?\.\[service,telemetry,redis\]\"?", run), run
    assert "opentelemetry-exporter-otlp-proto-grpc" in run, "traces need the OTLP gRPC exporter"
    assert "semantic" not in run and "torch" not in run.replace("find_spec('torch')", "").replace("torch must not", "")
    assert by_kind["EXPOSE"] == ["8080"]
    (user,) = by_kind["USER"]
    assert user.split(":")[0].isdigit() and int(user.split(":")[0]) >= 1000, "run as a numeric non-root UID"
    (healthcheck,) = by_kind["HEALTHCHECK"]
    assert "urllib.request" in healthcheck and "http://127.0.0.1:8080/healthz" in healthcheck
    assert "curl" not in healthcheck
    (entrypoint,) = by_kind["ENTRYPOINT"]
    assert json.loads(entrypoint) == ["guard", "serve", "--host", "0.0.0.0", "--port", "8080"]
    # USER comes after every RUN, so nothing runs as root at run time
    order = [k for k, _ in instructions]
    assert order.index("USER") > max(i for i, k in enumerate(order) if k == "RUN")


def test_the_healthcheck_command_is_valid_python() -> None:
    (healthcheck,) = [rest for k, rest in _dockerfile_instructions() if k == "HEALTHCHECK"]
    argv = json.loads(healthcheck[healthcheck.index("CMD") + 3 :].strip())
    assert argv[:2] == ["python", "-c"]
    compile(argv[2], "<healthcheck>", "exec")
    # against a port where nothing listens it exits non-zero (so Docker marks the container unhealthy)
    probe = argv[2].replace("8080", "9")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, check=False, timeout=30).returncode != 0


def test_image_extras_do_not_pull_torch() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    pending, seen = ["service", "telemetry", "redis"], set()
    while pending:  # follow guard[...] references: what the image really installs
        extra = pending.pop()
        assert extra in extras, f"pyproject.toml has no extra {extra!r}"
        seen.add(extra)
        for requirement in extras[extra]:
            if m := re.match(r"guard\[([\w,-]+)\]", requirement):
                pending += [e for e in m.group(1).split(",") if e not in seen]
                continue
            assert not re.match(r"(torch|sentence-transformers)", requirement), f"{extra}: {requirement}"
    assert not any(re.match(r"(torch|sentence-transformers)", r) for r in project["dependencies"])
    assert "guard" in project["scripts"]


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern (Go filepath.Match plus ``**``), relative to the context root."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out)


def _ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last pattern matching the path (or one of its parents) decides."""
    parts = path.strip("/").split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for raw in patterns:
        negate = raw.startswith("!")
        regex = _pattern_regex(raw.removeprefix("!").strip("/"))
        if any(regex.fullmatch(c) for c in candidates):
            ignored = not negate
    return ignored


def test_dockerignore_keeps_local_state_out_and_the_sources_in() -> None:
    patterns = [
        line.strip() for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines() if line.strip() and not line.startswith("#")
    ]
    for entry in (".git", ".pytest_cache", ".hypothesis", ".mypy_cache", ".venv", "venv", ".benchmarks", "bench-out", "results"):
        assert _ignored(entry, patterns), f".dockerignore should exclude {entry}"
    for entry in ("tests/deploy/helpers.py", "guard/__pycache__/engine.cpython-311.pyc", "guard.egg-info", "deploy/k8s/hpa.yaml"):
        assert _ignored(entry, patterns), f".dockerignore should exclude {entry}"
    copied = [rest.split()[0] for k, rest in _dockerfile_instructions() if k == "COPY"]
    assert copied, "the Dockerfile copies nothing"
    for source in copied:
        assert (REPO / source).exists(), f"COPY {source}: no such file"
        assert not _ignored(source, patterns), f"COPY {source}, but .dockerignore excludes it"


def test_example_policy_is_valid_for_the_strict_loader() -> None:
    policy = Policy.from_yaml(DEPLOY / "policy.yaml")
    assert policy.tools["transfer_money"].requires_approval
    result = subprocess.run(
        [sys.executable, "-c", "from guard.cli import app; app(prog_name='guard')", "policy", "validate", str(DEPLOY / "policy.yaml")],
        capture_output=True,
        check=False,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert policy.sha256 in result.stdout


def test_the_image_entrypoint_command_exists() -> None:
    """The ENTRYPOINT runs `guard serve --host 0.0.0.0 --port 8080`: the CLI must have that command."""
    result = subprocess.run(
        [sys.executable, "-c", "from guard.cli import app; app(prog_name='guard')", "serve", "--help"],
        capture_output=True,
        check=False,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "--host" in result.stdout and "--port" in result.stdout


def test_compose_file_validates_with_docker_compose() -> None:
    """`docker compose config` (v2) or `docker-compose config` (Debian's v1) parses and validates the
    file without an engine; CI installs Debian's docker-compose."""
    for argv in (["docker", "compose"], ["docker-compose"]):
        probe = subprocess.run([*argv, "version"], capture_output=True, text=True, check=False) if shutil.which(argv[0]) else None
        if probe is not None and probe.returncode == 0:
            env = {**os.environ, "GUARD_API_TOKEN": "compose-config-test"}  # the file has no default token
            out = subprocess.run([*argv, "-f", str(REPO / "deploy" / "docker-compose.yml"), "config", "--quiet"],
                                 capture_output=True, text=True, check=False, timeout=60, env=env)
            assert out.returncode == 0, out.stderr
            return
    pytest.fail("no docker compose to validate deploy/docker-compose.yml: install Debian's docker-compose")
