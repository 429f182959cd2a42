"""The Grafana dashboard: valid JSON, every query valid PromQL (checked by promtool), only the
service's fixed metric names, and the panels operations asked for."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.deploy.helpers import (
    DEPLOY,
    METRIC_FAMILIES,
    dashboard_exprs,
    dashboard_panels,
    exposed_names,
    family_of,
    load_dashboard,
    promql_metric_names,
    promtool,
)


def _check_as_recording_rules(exprs: list[str], tmp_path: Path) -> tuple[int, str]:
    """promtool parses every expression of a rules file: each expr becomes a recording rule."""
    rules = {"groups": [{"name": "dashboard", "rules": [{"record": f"dashboard:expr_{i}", "expr": e} for i, e in enumerate(exprs)]}]}
    path = tmp_path / "dashboard_rules.yml"
    path.write_text(yaml.safe_dump(rules, sort_keys=False), encoding="utf-8")
    result = promtool("check", "rules", path)
    return result.returncode, result.stdout + result.stderr


def test_dashboard_is_a_grafana_dashboard() -> None:
    dashboard = load_dashboard()
    assert dashboard["title"] and dashboard["uid"]
    assert 36 <= dashboard["schemaVersion"] <= 41
    panels = dashboard_panels(dashboard)
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    datasource = yaml.safe_load((DEPLOY / "grafana/provisioning/datasources/prometheus.yml").read_text(encoding="utf-8"))
    uid = datasource["datasources"][0]["uid"]
    for panel in panels:
        assert {"h", "w", "x", "y"} <= set(panel["gridPos"]), panel["title"]
        assert panel["targets"], f"{panel['title']}: no query"
        assert panel["datasource"] == {"type": "prometheus", "uid": uid}, panel["title"]
        for target in panel["targets"]:
            assert target["expr"].strip() and target["refId"]


def test_every_expr_is_valid_promql(tmp_path: Path) -> None:
    exprs = [expr for _, expr in dashboard_exprs()]
    assert len(exprs) >= 10
    code, output = _check_as_recording_rules(exprs, tmp_path)
    assert code == 0, output
    assert f"SUCCESS: {len(exprs)} rules found" in output, output


def test_promtool_rejects_invalid_promql(tmp_path: Path) -> None:
    """The check above is a real parse: a broken expression fails it."""
    code, output = _check_as_recording_rules(["sum(rate(guard_decisions_total[5m])"], tmp_path)
    assert code != 0, output


def test_dashboard_queries_only_the_services_metrics_and_all_of_them() -> None:
    used = set().union(*(promql_metric_names(expr) for _, expr in dashboard_exprs()))
    assert used <= exposed_names(), f"metrics the service does not expose: {sorted(used - exposed_names())}"
    assert {family_of(name) for name in used} == set(METRIC_FAMILIES)


def test_required_panels() -> None:
    panels = {title: expr for title, expr in dashboard_exprs()}
    joined = {title: " ".join(e for t, e in dashboard_exprs() if t == title) for title in panels}

    def panel_with(*needles: str) -> str:
        for title, exprs in joined.items():
            if all(n in exprs for n in needles):
                return title
        pytest.fail(f"no panel queries {needles}")

    panel_with("sum by (action) (rate(guard_decisions_total")
    panel_with("sum by (category) (rate(guard_decisions_total")
    panel_with("guard_escalations_pending")
    panel_with("histogram_quantile(0.5,", "histogram_quantile(0.99,", "guard_escalation_wait_seconds_bucket")
    panel_with("histogram_quantile(0.5,", "histogram_quantile(0.99,", "guard_check_duration_seconds_bucket")
    panel_with("rate(guard_retries_total")
    panel_with("sum by (kind) (rate(guard_tool_errors_total")
    panel_with("by (tool) (guard_circuit_state)")
    panel_with("rate(guard_state_backend_errors_total")
    panel_with("sum by (active_action, shadow_action) (rate(guard_shadow_disagreements_total")


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        ('sum by (le) (rate(guard_check_duration_seconds_bucket{job="guard"}[5m]))', {"guard_check_duration_seconds_bucket"}),
        ("histogram_quantile(0.99, sum by (le) (rate(a_bucket[1h30m] offset 5m)))", {"a_bucket"}),
        ("sum(rate(x_total[5m])) / clamp_min(sum(rate(y_total[5m])), 1e-9) > bool 0.2", {"x_total", "y_total"}),
        ('max(up{job="guard"}) without (instance) and on (tool) z', {"up", "z"}),
    ],
)
def test_metric_name_extraction(expr: str, names: set[str]) -> None:
    assert promql_metric_names(expr) == names
