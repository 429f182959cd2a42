"""Case families: every variant of one source on the same side of the dev/test split.

A benchmark's variants share their source's words: a Fail-TaLMs Underspecified query is its Original
with a value taken out, the CRITICTOOL rebuild injects errors into ACEBench and API-Bank gold calls,
ReflecTool and Tool-Reflection rebuild on API-Bank's dialogues. Splitting by case id put siblings on
both sides, so rules shaped on dev were measured on test cases they had already seen in another form.

Each loader gives a case a source key (``Case.family``: the original query, the question, the
dialogue); ``assign`` then joins every case whose user turns say the same words (normalised) into
one family with it, and names each family by its smallest key. ``Case.split`` hashes the family, so
no family and no user query straddles the split. ``split_report`` counts what the split holds.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from guard_bench.cases import Case

_NON_WORD = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """Case folded, every run of punctuation and spaces one space: "Find  books!" == "find books"."""
    return _NON_WORD.sub(" ", text.casefold()).strip()


def text_key(text: str) -> str:
    """A short stable key for a normalised text."""
    return "text:" + hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:16]


def query_text(case: Case) -> str:
    """What the user said in the case, normalised (every user turn, in order)."""
    return normalise(" ".join(str(m.get("content") or "") for m in case.messages if m.get("role") == "user"))


def assign(cases: Sequence[Case], extra_keys: Any = None) -> None:
    """Join cases into families: cases that share their loader's key, or say the same words as
    users (``query_text``), or share any key ``extra_keys(case) -> iterable`` gives, are one family.
    Each case's ``family`` becomes the smallest key of its family (deterministic: it depends on the
    data only, not on the order of the cases)."""
    parent: dict[str, str] = {}

    def find(k: str) -> str:
        parent.setdefault(k, k)
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    keys_of: list[list[str]] = []
    for case in cases:
        keys = [case.family]
        if text := query_text(case):
            keys.append(text_key(text))
        keys += list(extra_keys(case) if extra_keys else ())
        keys_of.append(keys)
        for k in keys[1:]:
            union(keys[0], k)
    for case, keys in zip(cases, keys_of):
        case.family = find(keys[0])


def straddling(cases: Iterable[Case], key: Any = query_text) -> dict[str, set[str]]:
    """Keys (default: the user's words) whose cases fall on both sides of the split: key -> splits."""
    sides: dict[str, set[str]] = defaultdict(set)
    for case in cases:
        if k := key(case):
            sides[k].add(case.split)
    return {k: s for k, s in sides.items() if len(s) > 1}


def split_report(cases: Sequence[Case]) -> dict[str, Any]:
    """Families, cases and dev share of a suite, and how many test cases say, word for word, what a
    dev case says (zero when the families hold)."""
    dev_texts = {query_text(c) for c in cases if c.split == "dev"} - {""}
    test = [c for c in cases if c.split == "test"]
    sizes = Counter(c.family for c in cases)
    families = set(sizes)
    dev_families = {c.family for c in cases if c.split == "dev"}
    return {
        "cases": len(cases),
        "families": len(families),
        "dev_cases": len(cases) - len(test),
        "test_cases": len(test),
        "dev_families": len(dev_families),
        "test_families": len(families - dev_families),
        "largest_family": max(sizes.values(), default=0),
        "test_queries_in_dev": sum(1 for c in test if query_text(c) in dev_texts),
        "straddling_families": len(straddling(cases, key=lambda c: c.family)),
    }


def report_lines(data_dir: Any, names: Iterable[str] | None = None) -> list[str]:
    """A Markdown table of ``split_report`` per suite with data in ``data_dir`` (and the records its
    loader skipped): ``python -m guard_bench.families [DATA_DIR]``."""
    from guard_bench.suites import SUITES, suite

    lines = ["| suite | cases | families | dev / test cases | largest family | test queries said in dev | skipped records |",
             "|---|---|---|---|---|---|---|"]
    for name in names or SUITES:
        module = suite(name)
        if not module.available(data_dir):
            continue
        cases = module.load(data_dir)
        r = split_report(cases)
        skipped = sum(getattr(cases, "skipped", {}).values())
        lines.append(f"| {name} | {r['cases']} | {r['families']} | {r['dev_cases']} / {r['test_cases']} | {r['largest_family']} | "
                     f"{r['test_queries_in_dev']} | {skipped} |")
    return lines


if __name__ == "__main__":  # pragma: no cover - a one-off count over a data folder
    import sys

    from guard_bench.cli import default_data_dir

    print("\n".join(report_lines(sys.argv[1] if len(sys.argv) > 1 else default_data_dir())))
