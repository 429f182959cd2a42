"""The local engine: one process streams the logs, line by line (memory flat in the log's size)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from guard.policy import Policy
from guard.replay.core import Catalog, Diff, Replayer


def lines_of(paths: Sequence[Path]) -> Iterator[str]:
    """Every line of every file, in order, decoded leniently (a broken byte is not a crash: the
    line it sits in fails to parse and is counted)."""
    for path in paths:
        with open(path, encoding="utf-8", errors="replace", newline="\n") as f:
            yield from f


def catalog_of(paths: Sequence[Path]) -> Catalog:
    """The tool and toolset descriptions of the logs (a first pass that parses only those lines)."""
    catalog = Catalog()
    catalog.add_lines(lines_of(paths))
    return catalog


def run_local(paths: Sequence[Path], policy: Policy, baseline: Policy | None = None) -> Diff:
    replayer = Replayer(policy, catalog_of(paths), baseline)
    diff = Diff()
    for line in lines_of(paths):
        replayer.line(line, diff)
    return diff
