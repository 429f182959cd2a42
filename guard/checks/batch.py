"""Batch: faults of a batch of calls as a whole, which no single call shows.

Tool call ids name the calls a human answers (the resume value is keyed by them) and the
ToolMessages that answer the model. Two calls of one batch sharing an id cannot be told apart:
one approval would run both, one edit would be applied to both. Such a batch is malformed: every
call with a shared id gets feedback and none runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from guard.models import Finding, ToolCall
from guard.taxonomy import Category

NAME = "batch"


def duplicate_ids(calls: Sequence[ToolCall]) -> dict[int, Finding]:
    """A finding for each call (by position) whose id another call of the batch also has."""
    counts = Counter(c.id for c in calls if c.id)
    return {
        i: Finding(
            category=Category.MALFORMED_ARGUMENTS,
            check=NAME,
            message=(
                f"{counts[c.id]} calls of this batch share the id {c.id!r}; none of them was run. "
                "Send each call with an id of its own"
            ),
            tool=c.name,
            rule="duplicate_call_id",
            value=c.id,
        )
        for i, c in enumerate(calls)
        if c.id and counts[c.id] > 1
    }
