"""One loader module per dataset (see ``guard_bench.suites`` for what each exposes)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from guard.checks.arguments import json_type

#: What reading a malformed record raises (``json.JSONDecodeError`` and pydantic's
#: ``ValidationError`` are ``ValueError``s): a loader skips the record, counts it, and goes on.
READ_ERRORS = (ValueError, KeyError, TypeError, IndexError, AttributeError, SyntaxError)


@contextmanager
def skipping(skipped: Counter[str], where: str) -> Iterator[None]:
    """Run a record's reading; a ``READ_ERRORS`` error skips the record and counts it in ``skipped``
    under ``"<where>: <error type>"``."""
    try:
        yield
    except READ_ERRORS as exc:
        skipped[f"{where}: {type(exc).__name__}"] += 1


def read_jsonl(path: Path, skipped: Counter[str]) -> list[Any]:
    """The records of a JSON Lines file; a line that is no JSON is skipped and counted."""
    records = []
    with Path(path).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                with skipping(skipped, Path(path).name):
                    records.append(json.loads(line))
    return records


def value_kind(value: Any) -> str:
    """A value's JSON type, with integers and other numbers as one kind: a fault that turns 5 into
    5.0 is no type fault, one that turns 5 into "5" is."""
    kind = json_type(value)
    return "number" if kind == "integer" else kind
