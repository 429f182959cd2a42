"""The upstream runner's policies are valid policies that mean what the README says, and its pytest
plugin swaps the guard in and reports its decisions (the runner itself downloads, so it is not run
here)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from guard import Guard
from guard.policy import load_policy
from guard.taxonomy import SCHEMA_CATEGORIES, Action, Category

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "upstream"))
from guard_upstream_swap import policy_for  # noqa: E402


def test_the_schema_only_policy_enforces_argument_validation_and_unknown_tools_only():
    policy = load_policy(policy_for("enforce"))
    enforced = {c for c in Category if policy.action_for(c) is not Action.ALLOW}
    assert enforced == SCHEMA_CATEGORIES | {Category.MALFORMED_ARGUMENTS, Category.UNKNOWN_TOOL}
    assert policy.mode == "enforce" and policy.backoff.max_attempts == 1
    assert not any(policy.repairs.model_dump().values())


def test_the_schema_only_policy_lets_an_invented_value_through_and_sends_a_wrong_type_back():
    def lookup(city: str, nights: int) -> str:
        """Look a hotel up."""
        return city

    guard = Guard([lookup], policy_for("enforce"))
    said = [{"role": "user", "content": "A hotel, please."}]
    invented = guard.check({"name": "lookup", "args": {"city": "Atlantis", "nights": 2}, "id": "1"}, said)
    wrong = guard.check({"name": "lookup", "args": {"city": "Atlantis", "nights": "two"}, "id": "2"}, said)
    assert invented.action is Action.ALLOW
    assert wrong.action is Action.RETRY and Category.TYPE_VIOLATION in wrong.categories


@pytest.mark.parametrize("mode", ["observe", "default"])
def test_the_other_modes_are_valid_policies(mode):
    assert load_policy(policy_for(mode)).mode == ("observe" if mode == "observe" else "enforce")


UPSTREAM = Path(__file__).resolve().parents[1] / "upstream"


def _runner() -> Any:
    spec = importlib.util.spec_from_file_location("guard_upstream_run", UPSTREAM / "run.py")
    module = sys.modules.get(spec.name)
    if module is None:
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
    return module


def test_the_plugin_swaps_the_guard_in_and_the_report_says_what_it_decided(tmp_path):
    """The swap plugin in a real pytest run (what the runner does to LangGraph's tests, here on a
    test module of our own): ToolNode is the guard, and each test's decisions reach the JUnit
    report, from which the runner lists them."""
    (tmp_path / "test_upstream_like.py").write_text(textwrap.dedent('''
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
        from langchain_core.tools import tool
        from langgraph.graph import END, START, MessagesState, StateGraph
        from langgraph.prebuilt import ToolNode

        @tool
        def add(a: int, b: int) -> str:
            """Add two numbers."""
            return str(a + b)

        def run(calls):
            graph = StateGraph(MessagesState)
            graph.add_node("tools", ToolNode([add]))
            graph.add_edge(START, "tools")
            graph.add_edge("tools", END)
            out = graph.compile().invoke({"messages": [HumanMessage("Add 1 and 2."), AIMessage("", tool_calls=calls)]})
            return [m for m in out["messages"] if isinstance(m, ToolMessage)]

        def test_a_clean_call_runs_as_in_toolnode():
            (msg,) = run([{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"}])
            assert type(ToolNode([add])).__mro__[1].__name__ == "GuardedToolNode"
            assert msg.content == "3" and msg.response_metadata == {}

        def test_two_calls_with_one_id_run_as_in_toolnode():
            call = {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"}
            assert [m.content for m in run([call, call])] == ["3", "3"]
    '''))
    def run_mode(mode):
        report = tmp_path / f"report-{mode}.xml"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(p for p in (str(UPSTREAM), os.environ.get("PYTHONPATH")) if p),
            "GUARD_UPSTREAM_SUITE": "langgraph",
            "GUARD_UPSTREAM_MODE": mode,
        }
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "guard_upstream_swap", "-p", "no:cacheprovider", "-o", "addopts=",
             "--rootdir", str(tmp_path), "--junitxml", str(report), str(tmp_path / "test_upstream_like.py")],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
        )
        assert report.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
        return _runner().junit(report)

    # schema-only: the batch check on shared ids is off, so both tests pass as on ToolNode
    enforce = run_mode("enforce")
    assert (enforce.passed, enforce.failed) == (2, set())
    # the default policy refuses a batch whose calls share an id, and the report names the decision
    default = run_mode("default")
    assert default.passed == 1
    (failed,) = default.failed
    assert failed.endswith("::test_two_calls_with_one_id_run_as_in_toolnode")
    assert default.decisions == {failed: "retry[malformed_arguments]"}
