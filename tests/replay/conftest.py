"""A decision log made the way a team would make one: cases of the bundled benchmark samples run
through the production graph (``guard_bench.runner``) under a policy whose ``log`` section is on."""

from __future__ import annotations

from pathlib import Path

import pytest

from guard_bench.agents import AgentSource
from guard_bench.cli import SAMPLES
from guard_bench.execute import select_cases
from guard_bench.runner import run_cases
from guard_bench.suites import suite
from guard.policy import Policy


def write_log(path: Path, suites: tuple[str, ...] = ("acebench", "api-bank-ict")) -> Path:
    policy = Policy.model_validate({"log": {"path": str(path)}})
    for name in suites:
        run_cases(select_cases(suite(name), SAMPLES, "all"), policy, AgentSource("reference"))
    return path


@pytest.fixture(scope="session")
def bench_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The log of every acebench and api-bank-ict sample case (28 cases, about 50 decisions)."""
    return write_log(tmp_path_factory.mktemp("decision-log") / "decisions.jsonl")
