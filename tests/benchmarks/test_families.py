"""Case families: no source straddles the dev/test split, in any suite, on the bundled samples.

Each suite's source relation is read here from what the loader records about a case (its file,
dialogue, record, gold call), independently of ``Case.family``, so the test fails if a loader forgets
to give its variants their source's family. The user's words are checked too: no test case says,
word for word, what a dev case says.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guard_bench.cases import Case, split_of
from guard_bench.datasets import fail_talms
from guard_bench.families import assign, normalise, query_text, report_lines, split_report, straddling, text_key
from guard_bench.suites import SUITES, suite

SAMPLES = Path(__file__).resolve().parents[2] / "benchmarks" / "samples"


def _source(name: str, case: Case) -> str:
    """The source a case derives from, by the loader's own records (not by ``Case.family``)."""
    meta = case.meta
    if name == "acebench":
        return query_text(case)
    if name == "fail-talms":
        return fail_talms.family_of(Path(meta["file"]))
    if name == "api-bank-ict":
        return Path(meta["file"]).stem
    if name == "critictool":
        if meta.get("origin") != "rebuilt":
            return case.id
        gold = meta["gold_call"]  # acebench/<case id>/<call id> or api-bank/<file>#<id>
        return gold.split("#")[0].removeprefix("api-bank/").removesuffix(".jsonl") if gold.startswith("api-bank/") else gold.rsplit("/", 1)[0]
    if name in ("reflectool", "tool-reflection-rebuilt"):
        return meta["dialogue"]
    return str(meta.get("record") or case.id)  # bfcl, tool-reflection


@pytest.mark.parametrize("name", list(SUITES))
def test_no_source_and_no_user_query_straddles_the_split_on_the_samples(name):
    module = suite(name)
    assert module.available(SAMPLES)
    cases = module.load(SAMPLES)
    assert cases, name
    assert straddling(cases, key=lambda c: c.family) == {}
    assert straddling(cases, key=lambda c: _source(name, c)) == {}
    assert straddling(cases) == {}  # the user's words
    report = split_report(cases)
    assert report["test_queries_in_dev"] == 0 and report["straddling_families"] == 0
    assert report["families"] <= report["cases"] and all(c.split == split_of(c.family) for c in cases)


def test_critictool_sources_are_on_the_same_side_as_in_their_own_suite():
    """A gold call's source has one family in every suite built on it, so calibrating on one suite's
    dev split never sees a test case of another in another form."""
    by_suite = {n: {c.id: c for c in suite(n).load(SAMPLES)} for n in ("acebench", "api-bank-ict", "critictool")}
    rebuilt = [c for c in by_suite["critictool"].values() if c.meta.get("origin") == "rebuilt"]
    from_acebench = [c for c in rebuilt if c.meta["source"] == "acebench"]
    from_api_bank = [c for c in rebuilt if c.meta["source"] == "api-bank"]
    assert from_acebench and from_api_bank
    for c in from_acebench:
        source = by_suite["acebench"][c.meta["gold_call"].split("/")[1]]
        assert c.split == source.split
    ict_family = {Path(c.meta["file"]).stem: c.family for c in by_suite["api-bank-ict"].values()}
    for c in from_api_bank:
        assert c.split == split_of(ict_family[_source("critictool", c)])


def case(case_id: str, text: str, family: str = "") -> Case:
    return Case(id=case_id, family=family, suite="s", subset="x", messages=[{"role": "user", "content": text}])


def test_assign_joins_shared_keys_and_identical_words_whatever_the_order():
    cases = [case("a", "Find books by Tolkien", family="src:1"), case("b", "find books, by  TOLKIEN!"),
             case("c", "Weather in Oslo", family="src:1"), case("d", "Something else")]
    assign(cases)
    assert cases[0].family == cases[1].family == cases[2].family != cases[3].family
    again = [case("d", "Something else"), case("c", "Weather in Oslo", family="src:1"),
             case("b", "find books, by  TOLKIEN!"), case("a", "Find books by Tolkien", family="src:1")]
    assign(again)
    assert {c.id: c.family for c in again} == {c.id: c.family for c in cases}
    assert case("z", "x").family == "z"  # unset: the id
    assert normalise("Find  books!") == "find books" and text_key("A b") == text_key("a, B")


def test_split_report_counts_test_queries_said_in_dev():
    # ids whose hashes put the same words on both sides, as the id split did
    dev_id = next(f"d{i}" for i in range(100) if split_of(f"d{i}") == "dev")
    test_id = next(f"t{i}" for i in range(100) if split_of(f"t{i}") == "test")
    leaky = [case(dev_id, "same words"), case(test_id, "same words")]
    assert split_report(leaky)["test_queries_in_dev"] == 1 and straddling(leaky)
    assign(leaky)
    assert split_report(leaky)["test_queries_in_dev"] == 0 and not straddling(leaky)


def test_the_report_table_has_a_row_per_suite_with_no_query_in_both_splits():
    lines = report_lines(SAMPLES)
    rows = {line.split(" | ")[0].strip("| "): line.strip("|").split(" | ") for line in lines[2:]}
    assert set(rows) == set(SUITES)
    assert all(cells[5].strip() == "0" and cells[6].strip() == "0" for cells in rows.values())
