"""Helpers for the deployment tests: paths, the fixed metric names, the Prometheus binaries, PromQL.

The Prometheus tools are Debian's ``prometheus`` package (``/usr/bin/prometheus``,
``/usr/bin/promtool``). A missing binary FAILS the tests instead of skipping them: a skip would hide
a CI that forgot to install it.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "guard.json"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
PROMETHEUS_CONFIG = DEPLOY / "prometheus" / "prometheus.yml"

#: The metric families the service exposes (fixed names), by type.
METRIC_FAMILIES: dict[str, str] = {
    "guard_decisions_total": "counter",
    "guard_check_duration_seconds": "histogram",
    "guard_retries_total": "counter",
    "guard_warnings_total": "counter",
    "guard_escalations_total": "counter",
    "guard_escalations_pending": "gauge",
    "guard_escalation_wait_seconds": "histogram",
    "guard_tool_errors_total": "counter",
    "guard_circuit_state": "gauge",
    "guard_state_backend_errors_total": "counter",
    "guard_shadow_disagreements_total": "counter",
}


def exposed_names() -> set[str]:
    """The sample names a scrape carries: counters and gauges as named, histograms as _bucket/_sum/_count."""
    names: set[str] = set()
    for family, kind in METRIC_FAMILIES.items():
        if kind == "histogram":
            names |= {f"{family}_bucket", f"{family}_sum", f"{family}_count"}
        else:
            names.add(family)
    return names


def family_of(name: str) -> str:
    """The metric family a sample name belongs to (histogram suffixes stripped)."""
    for suffix in ("_bucket", "_sum", "_count"):
        base = name.removesuffix(suffix)
        if base != name and METRIC_FAMILIES.get(base) == "histogram":
            return base
    return name


INSTALL_HINT = (
    "install Debian's prometheus package, which brings /usr/bin/prometheus and /usr/bin/promtool: "
    "apt-get update && apt-get install -y prometheus (and add it to .ci/run)"
)


def require_binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"`{name}` not found on PATH: {INSTALL_HINT}", pytrace=False)
    return path


def promtool(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [require_binary("promtool"), *map(str, args)],
        capture_output=True,
        check=False,
        text=True,
        timeout=60,
        cwd=cwd,
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def load_dashboard() -> dict[str, Any]:
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def dashboard_panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    """Every panel, those nested in collapsed rows included (rows themselves excluded)."""
    out: list[dict[str, Any]] = []
    for panel in dashboard.get("panels", []):
        if panel.get("type") == "row":
            out.extend(panel.get("panels", []))
        else:
            out.append(panel)
    return out


def dashboard_exprs(dashboard: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """(panel title, expr) for every target of every panel."""
    dashboard = dashboard or load_dashboard()
    return [
        (panel["title"], target["expr"])
        for panel in dashboard_panels(dashboard)
        for target in panel.get("targets", [])
        if "expr" in target
    ]


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_NUMBER = re.compile(r"(?<![\w:])(?:0x[0-9a-fA-F]+|\d[\w.]*(?:[eE][+-]?\d+)?)")
_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool",
    "and", "or", "unless", "atan2", "inf", "nan", "start", "end",
}


def promql_metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (lexically: strings, label matchers, ranges,
    grouping clauses, numbers, functions and keywords removed). The expression's syntax itself is
    checked by promtool; this only finds the names."""
    text = _STRING.sub('""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = _GROUPING.sub(" ", text)
    text = _NUMBER.sub(" ", text)
    names: set[str] = set()
    for match in _IDENT.finditer(text):
        token = match.group(0)
        if text[match.end():].lstrip().startswith("("):
            continue  # a function or an aggregation
        if token.lower() in _KEYWORDS:
            continue
        names.add(token)
    return names
