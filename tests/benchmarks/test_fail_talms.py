"""The Fail-TaLMs loader on the bundled self-made sample: variants diffed against their originals,
recorded LLM answers joined query by query, and awareness scored the paper's way."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from guard_bench.agents import AgentSource
from guard_bench.cases import split_of
from guard_bench.datasets import fail_talms
from guard_bench.runner import CaseResult, run_cases
from guard.policy import Policy

SAMPLES = Path(__file__).parents[2] / "benchmarks" / "samples"


@pytest.fixture
def cases() -> dict:
    return {c.id: c for c in fail_talms.load(SAMPLES)}


def test_every_set_loads_with_the_label_the_dataset_gives_it(cases):
    assert fail_talms.available(SAMPLES)
    assert Counter(c.subset for c in cases.values()) == {
        "Original": 3, "Underspecified": 3, "Replaceable": 2, "Non-replaceable": 1, "No-tools": 2}
    assert {c.subset: c.expected.label for c in cases.values()} == {
        "Original": "ok", "Underspecified": "missing_information", "Replaceable": "unavailable_tool",
        "Non-replaceable": "no_suitable_tool", "No-tools": "no_suitable_tool"}
    assert all(c.uses_preflight and c.suite == "fail-talms" for c in cases.values())
    weather = cases["Original/Weather/query_1"]
    assert weather.messages == [{"role": "user", "content": "What is the forecast for Oslo for the next 5 days, and what is today's date?"}]
    assert [t["api_name"] for t in weather.tools] == ["get_forecast", "get_current_date"]
    assert cases["No-tools/Books/query_1"].tools == []


def test_an_underspecified_variant_knows_what_its_original_said(cases):
    isbn = cases["Underspecified/Books/query_1_1"]
    assert isbn.meta["original"] == "Original/Books/query_1"
    assert isbn.meta["removed"] == ["9780306406157"]
    # the value came right after "ISBN": the parameter is named
    assert isbn.expected.model_dump() == {"label": "missing_information", "params": ["isbn"], "tool": "get_book_by_isbn",
                                          "values": ["9780306406157"]}
    assert isbn.human.values == {"isbn": "9780306406157"} and isbn.human.text == "9780306406157"
    # "Oslo" is no quoted or numeric value and "5" follows no parameter's name: nothing is attributed
    town = cases["Underspecified/Weather/query_1_1"]
    assert town.meta["removed"] == ["Oslo", "5"]
    assert town.expected.params == [] and town.human.values == {} and town.human.text == "Oslo; 5"


def test_a_variant_equal_to_its_original_keeps_its_label_and_is_marked(cases):
    same = cases["Underspecified/Books/query_1_2"]
    assert same.expected.label == "missing_information"
    assert same.meta["unchanged"] is True and same.meta["removed"] == [] and same.human.text is None
    assert cases["Underspecified/Books/query_1_1"].meta["unchanged"] is False


def test_unavailable_variants_name_the_api_they_lost(cases):
    date = cases["Replaceable/Weather/query_1_1"]
    assert date.expected.tool == "get_current_date" and date.meta["removed_apis"] == ["get_current_date"]
    assert date.human.tool == "get_current_date"  # a human can stand in for a replaceable API
    translate = cases["Non-replaceable/Books/query_2_1"]
    assert translate.expected.tool == "translate_text" and translate.human.tool is None
    orphan = cases["Replaceable/Books/query_7_1"]  # no Original/Books/query_7.json: nothing to diff
    assert orphan.meta["original"] is None and orphan.expected.tool is None and orphan.expected.label == "unavailable_tool"


def test_a_value_is_attributed_only_to_one_parameter_named_just_before_it():
    tools = [{"api_name": "a", "required_parameters": [{"name": "name"}]}, {"api_name": "b", "optional_parameters": [{"name": "name"}]}]
    query = "Find authors named 'Ada Lane' please."
    (span,) = fail_talms.removed_spans(query, "Find authors please.")
    assert fail_talms.attribute(query, span, tools) == (None, "name", "Ada Lane")  # two tools share the name
    assert fail_talms.attribute(query, span, [{"api_name": "c", "required_parameters": [{"name": "title"}]}]) is None
    two = "Use 'x' and 'y' as names."
    (span,) = fail_talms.removed_spans(two, "Use them as names.")
    assert fail_talms.attribute(two, span, tools) is None  # two values: which one?


def test_recorded_answers_join_through_the_all_files_by_query_id_and_text(cases):
    book = cases["Original/Books/query_1"].meta["recorded"]
    assert book["gpt_4o"] == {"annotation": "idk", "aware": False, "pass_rate": 0, "query_id": 3}
    assert book["claude3.5_sonnet"]["aware"] is True
    # claude's record numbered 2 carries another query's text: not joined
    assert set(cases["Original/Books/query_2"].meta["recorded"]) == {"gpt_4o"}
    # a repeated record of the same query keeps the first
    assert cases["Underspecified/Weather/query_1_1"].meta["recorded"]["gpt_4o"]["annotation"] == "idk"
    # the Ask-and-Help run is kept per query, apart from the plain runs
    assert cases["Underspecified/Books/query_1_1"].meta["recorded"]["gpt_4o_aah"]["aware"] is True
    assert "gpt_4o_aah" not in fail_talms.recorded_awareness(cases["Underspecified/Books/query_1_1"].meta)
    # Replaceable counts only "idk"; No-tools asked no awareness question
    assert cases["Replaceable/Weather/query_1_1"].meta["recorded"]["claude3.5_sonnet"]["aware"] is False
    assert cases["No-tools/Books/query_1"].meta["recorded"]["gpt_4o"]["aware"] is None
    assert "recorded" not in cases["No-tools/Weather/query_1"].meta


def test_the_split_is_a_hash_of_the_family(cases):
    assert all(c.split == split_of(c.family) for c in cases.values())
    # every variant follows its original, and a No-tools query its own original
    family = cases["Original/Books/query_1"].family
    assert {c.id for c in cases.values() if c.family == family} >= {
        "Original/Books/query_1", "Underspecified/Books/query_1_1", "No-tools/Books/query_1"}


def result(case_id: str, flagged: bool = False, predicted: tuple[str, ...] = (), action: str | None = None) -> CaseResult:
    return CaseResult(id=case_id, suite="fail-talms", subset=case_id.split("/")[0], split=split_of(case_id),
                      expected={"label": "x"}, flagged=flagged, predicted=list(predicted),
                      action=action or ("ask_human" if flagged else "allow"), meta=CASES_META.get(case_id, {}))


CASES_META = {c.id: c.meta for c in fail_talms.load(SAMPLES)}


def test_paper_metrics_by_hand(cases):
    results = [
        result("Original/Books/query_1"),
        result("Original/Books/query_2", True, ["missing_information"]),
        result("Original/Weather/query_1"),
        result("Underspecified/Books/query_1_1", True, ["missing_information"]),
        result("Underspecified/Books/query_1_2"),
        result("Underspecified/Weather/query_1_1", True, ["missing_information"]),
        result("Replaceable/Weather/query_1_1", True, ["no_suitable_tool"]),
        result("Replaceable/Books/query_7_1", True, ["missing_information"], action="retry"),
        result("Non-replaceable/Books/query_2_1", True, ["no_suitable_tool"], action="block"),
        result("No-tools/Books/query_1", True, ["no_suitable_tool"]),
        result("No-tools/Weather/query_1"),
    ]
    m = fail_talms.paper_metrics(results)
    # Original: 2 of 3 proceed. Underspecified: 2 of 3 flagged. Replaceable: the retry names no tool
    # problem and asks nobody, so 1 of 2. Non-replaceable 1 of 1. No-tools 1 of 2. Unavailable: (1 + 1) / 3.
    # Recorded (sample answers.json, the paper's rule on the annotations): Original gpt_4o idk/yes/yes
    # -> 2/3, claude yes/yes -> 1 (its record 2 does not join); Underspecified gpt_4o no/yes/idk -> 2/3;
    # Replaceable gpt_4o yes/idk -> 1/2, claude "no" -> 0; Non-replaceable claude "no" -> 1.
    # recorded_guard_*: the guard's awareness on the same joined cases (here every case of the set).
    # guard_cost_<model>_original: of the Original queries the model went ahead with, the share the
    # guard interrupted: claude went ahead with Books/1 and Weather/1, neither flagged -> 0; gpt_4o
    # with Books/2 (flagged) and Weather/1 -> 1/2. model_or_guard_<model>_<set>: gpt_4o
    # Underspecified T, F (guard silent), T -> 2/3; Replaceable gpt_4o F (the guard's retry is no
    # tool problem), T -> 1/2, claude F but the guard names no suitable tool -> 1; Non-replaceable
    # claude T -> 1.
    assert m == pytest.approx({
        "guard_cost_claude3.5_sonnet_original": 0.0, "guard_cost_gpt_4o_original": 0.5,
        "model_or_guard_gpt_4o_underspecified": 2 / 3, "model_or_guard_gpt_4o_replaceable": 0.5,
        "model_or_guard_claude3.5_sonnet_replaceable": 1.0, "model_or_guard_claude3.5_sonnet_non_replaceable": 1.0,
        "proceed_original": 2 / 3, "aware_underspecified": 2 / 3, "aware_replaceable": 0.5,
        "aware_non_replaceable": 1.0, "aware_no_tools": 0.5, "aware_unavailable": 2 / 3,
        "recorded_guard_original": 2 / 3, "recorded_claude3.5_sonnet_original": 1.0, "recorded_gpt_4o_original": 2 / 3,
        "recorded_guard_underspecified": 2 / 3, "recorded_gpt_4o_underspecified": 2 / 3,
        "recorded_guard_replaceable": 0.5, "recorded_claude3.5_sonnet_replaceable": 0.0, "recorded_gpt_4o_replaceable": 0.5,
        "recorded_guard_non_replaceable": 1.0, "recorded_claude3.5_sonnet_non_replaceable": 1.0,
    })


def test_paper_figures_are_table_1_awareness():
    figures = {(f.model, f.metric): f.value for f in fail_talms.PAPER}
    assert figures[("Claude-3.5-Sonnet", "aware_underspecified")] == 0.42
    assert figures[("GPT-4o", "proceed_original")] == 1.00
    assert figures[("Llama-3.1-70B", "aware_non_replaceable")] == 0.55
    assert len(figures) == 6 * 5 and not any(f.rebuilt for f in fail_talms.PAPER)


def test_sample_queries_run_through_the_preflight_of_the_guarded_graph(cases):
    picked = [cases["Original/Weather/query_1"], cases["Underspecified/Books/query_1_1"], cases["No-tools/Books/query_1"]]
    results = run_cases(picked, Policy(), AgentSource("reference"))
    assert [r.error for r in results] == [None, None, None]
    assert all(r.action is not None for r in results)
