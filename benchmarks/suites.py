"""The benchmark suites, by name, and what each suite module provides.

A suite module in ``benchmarks/datasets/`` exposes:

- ``NAME``: the suite name used on the command line;
- ``available(data_dir) -> bool``: whether its data files are in ``data_dir`` (absent: skipped);
- ``load(data_dir) -> Loaded``: every case, both splits, each with its ``family`` (its source: the
  split hashes it, ``guard_bench.families``), and ``skipped``: the records it could not read, by
  reason (a loader skips and counts a malformed record, never stops);
- ``paper_metrics(results) -> dict[str, float]``: the paper-compatible figures (fractions; a share
  of counts made with ``metrics.ratio`` keeps its counts for its Wilson interval, any other figure
  is bootstrapped over families by calling this function again);
- ``PAPER: list[PaperFigure]``: the papers' published figures to print beside ours.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from types import ModuleType

#: Suite name -> module, in the order ``all`` runs them.
SUITES: dict[str, str] = {
    "acebench": "guard_bench.datasets.acebench",
    "fail-talms": "guard_bench.datasets.fail_talms",
    "api-bank-ict": "guard_bench.datasets.api_bank_ict",
    "critictool": "guard_bench.datasets.critictool",
    "reflectool": "guard_bench.datasets.reflectool",
    "bfcl": "guard_bench.datasets.bfcl",
    "tool-reflection": "guard_bench.datasets.tool_reflection",
    "tool-reflection-rebuilt": "guard_bench.datasets.tool_reflection_rebuilt",
}


@dataclass(frozen=True)
class PaperFigure:
    """A figure a paper published, to compare with ``paper_metrics[metric]`` (both fractions)."""

    metric: str
    model: str
    value: float
    source: str
    rebuilt: bool = False


def suite(name: str) -> ModuleType:
    if name not in SUITES:
        raise KeyError(f"unknown suite {name!r}; choose from: all, {', '.join(SUITES)}")
    return import_module(SUITES[name])
