"""The taxonomy document stays in step with the code."""

from pathlib import Path

from guard.policy import DEFAULT_ACTIONS
from guard_bench.labels import PAPER_CATEGORIES
from guard.taxonomy import Category

DOC = (Path(__file__).parents[1] / "docs" / "taxonomy.md").read_text()


def test_every_category_has_a_default_action_and_a_row():
    for category in Category:
        assert category in DEFAULT_ACTIONS
        assert f"| `{category.value}` |" in DOC


def test_every_paper_class_is_mapped_in_the_doc():
    for (paper, name), category in PAPER_CATEGORIES.items():
        assert f"| {paper} | {name} | `{category.value}` |" in DOC
    assert {p for p, _ in PAPER_CATEGORIES} == {"CRITICTOOL", "ReflecTool-Bench", "ACEBench", "Fail-TaLMs", "ICT"}
