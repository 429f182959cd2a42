"""CRITICTOOL: the published-format loader on the bundled sample, the injector that rebuilds the
error classes on gold calls, and the paper's scoring mapped onto the guard."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from guard_bench.agents import AgentSource
from guard_bench.cases import split_of
from guard_bench.datasets import acebench, critictool
from guard_bench.datasets.critictool import Gold, Pool
from guard_bench.runner import CaseResult, run_cases
from guard.policy import Policy

SAMPLES = Path(__file__).parents[2] / "benchmarks" / "samples"
PUBLISHED = "published/internal_error/base_data_wo_cot"

FORECAST = {"name": "get_forecast", "description": "The weather forecast of a city for the next days.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                           "required": ["city", "days"]}}
CURRENT = {"name": "get_current_weather", "description": "The weather in a city right now.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
LOAN = {"name": "loan_payment", "description": "Monthly payment of a loan.",
        "parameters": {"type": "object", "properties": {"principal": {"type": "number"}}, "required": ["principal"]}}


def gold(tools: list[dict], name: str, args: dict, text: str = "What is the weather in Oslo for 2 days?") -> Gold:
    return Gold(id=f"test/{name}", source="test", messages=[{"role": "user", "content": text}], tools=tools,
                call={"name": name, "args": args})


@pytest.fixture(scope="module")
def cases() -> dict[str, critictool.Case]:
    return {c.id: c for c in critictool.load(SAMPLES)}


# -- the published format ------------------------------------------------------------------------


def test_published_cases_one_per_sample_with_an_action(cases):
    published = [c for c in cases.values() if c.meta["origin"] == "published"]
    assert Counter(c.subset for c in published) == {
        "published_clean": 1, "published_tool_select_error": 1, "published_tool_hallucination_error": 1,
        "published_parameters_key_error": 1, "published_parameters_value_error": 2, "published_external_persistent": 2}
    assert f"{PUBLISHED}/6" not in cases  # a prompt with no action yet has no call to judge
    assert all(c.split == split_of(c.family) for c in published)


def test_the_call_under_test_is_the_last_action_and_the_tools_come_from_the_system_prompt(cases):
    clean = cases[f"{PUBLISHED}/0"]
    assert [t["name"] for t in clean.tools][:2] == ["NoteBook.create_note", "NoteBook.search_notes"]
    assert clean.messages == [{"role": "user", "content": "Make a note titled 'Groceries' that says 'eggs, milk, bread'."}]
    assert clean.calls == [{"name": "NoteBook.create_note", "args": {"title": "Groceries", "content": "eggs, milk, bread"},
                            "id": "call_0"}]
    assert clean.expected.label == "ok" and clean.gold_calls == [{"name": "NoteBook.create_note", "args": clean.calls[0]["args"]}]
    assert clean.meta["next_action"]["name"] == "FinishAction"
    trajectory = cases[f"{PUBLISHED}/5"]  # one earlier step: the search, answered by its result
    assert [m["role"] for m in trajectory.messages] == ["user", "assistant", "tool"]
    assert trajectory.messages[2]["tool_call_id"] == trajectory.messages[1]["tool_calls"][0]["id"] == "call_0"
    assert trajectory.calls[0]["id"] == "call_1"


def test_published_labels_come_from_the_error_type_and_the_gold_action(cases):
    def expected(key: str) -> dict:
        return cases[f"{PUBLISHED}/{key}"].expected.model_dump(exclude_defaults=True)

    assert expected("1") == {"label": "suspicious_tool_selection", "tool": "WeatherAPI.get_current"}
    assert expected("2") == {"label": "unknown_tool", "tool": "NoteBook.find_notes"}
    # args written as a Python dict string are read with ast.literal_eval
    assert cases[f"{PUBLISHED}/3"].calls[0]["args"] == {"title": "Dentist appointment"}
    assert expected("3") == {"label": "missing_information", "tool": "Calendar.add_event", "params": ["date"]}
    assert expected("4")["label"] == "invalid_argument" and expected("4")["values"] == ["three"]  # wrong type
    assert expected("5")["label"] == "missing_information" and expected("5")["values"] == ["2024-07-20"]  # wrong content
    key_error = cases[f"{PUBLISHED}/3"]
    assert key_error.gold_calls == [{"name": "Calendar.add_event", "args": {"title": "Dentist appointment", "date": "2024-05-14"}}]
    assert key_error.human.values == {"title": "Dentist appointment", "date": "2024-05-14"}


def test_published_external_errors_persist_and_the_next_action_is_the_gold(cases):
    permission = cases["published/external_error/base_data_wo_cot/0"]
    assert [(e.kind, e.times) for e in permission.tool_errors] == [("permission", 3)]
    assert permission.gold_calls == [{"name": "WeatherAPI.get_current", "args": {"city": "Porto"}}]  # skip to it
    rate_limited = cases["published/external_error/base_data_wo_cot/1"]
    assert [(e.kind, e.times) for e in rate_limited.tool_errors] == [("rate_limit", 3)]
    assert rate_limited.gold_calls == []  # the next action is FinishAction: stop and ask the user
    assert rate_limited.expected.label == "tool_error"


def test_parse_action_and_tool_list():
    assert critictool.parse_action('```json\n{"thought": "t", "name": "a", "args": "{\'x\': 1}"}\n```') == {"name": "a", "args": {"x": 1}}
    assert critictool.parse_action('{"name": "FinishAction", "args": "{done}"}') == {"name": "FinishAction", "args": "{done}"}
    assert critictool.parse_action("no action here") is None
    prompt = "You can call the following tools:\n\n[{'name': 'a', 'description': 'd'}]\n\nTo use a tool, reply in JSON."
    assert critictool.tool_list(prompt) == [{"name": "a", "description": "d"}]
    assert critictool.external_kind("ERROR: Maximum quota exceeded for this month") == "quota"
    assert critictool.external_kind("upstream hiccup") == "server_error"


# -- the rebuilt cases ----------------------------------------------------------------------------


def test_every_gold_call_gives_one_clean_case_and_its_injected_variants(cases):
    rebuilt = [c for c in cases.values() if c.meta["origin"] == "rebuilt"]
    by_gold: dict[str, list] = {}
    for c in rebuilt:
        by_gold.setdefault(c.meta["gold_call"], []).append(c)
    ace_calls = sum(len(c.calls) for c in acebench.load(SAMPLES) if c.subset == "normal")
    assert sum(g.startswith("acebench/") for g in by_gold) == ace_calls
    for gold_id, variants in by_gold.items():
        (clean,) = [c for c in variants if c.subset == "rebuilt_clean"]
        assert clean.expected.label == "ok" and [{"name": c["name"], "args": c["args"]} for c in clean.calls] == clean.gold_calls
        assert 1 <= len(variants) - 1 <= critictool.INJECTED_PER_CALL
        assert all(v.id == f"rebuilt/{gold_id}/{v.meta['variant']}" for v in variants)
        assert all(v.human.values == clean.gold_calls[0]["args"] for v in variants)  # the user knows their request
    labels = {"rebuilt_tool_select_error": {"suspicious_tool_selection"}, "rebuilt_tool_hallucination_error": {"unknown_tool"},
              "rebuilt_parameters_key_error": {"missing_information", "invalid_argument"},
              "rebuilt_parameters_value_error": {"missing_information", "invalid_argument"},
              "rebuilt_external_persistent": {"tool_error"}, "rebuilt_external_transient": {"tool_error"}, "rebuilt_clean": {"ok"}}
    assert all(c.expected.label in labels[c.subset] for c in rebuilt)
    assert [c.id for c in critictool.load(SAMPLES)] == list(cases)  # seeded: the same cases every time


def test_selection_takes_the_most_similar_listed_tool_the_gold_values_fit():
    g = gold([FORECAST, CURRENT, LOAN], "get_forecast", {"city": "Oslo", "days": 2})
    made = critictool.inject_selection(g, Pool.of([g]), random.Random(0))
    assert made.call == {"name": "get_current_weather", "args": {"city": "Oslo"}}
    assert made.expected.label == "suspicious_tool_selection" and made.gold == [g.call]
    assert made.tools == g.tools  # an existing tool of the list


def test_selection_adds_a_similar_pool_tool_when_the_list_has_one_tool():
    g = gold([FORECAST], "get_forecast", {"city": "Oslo", "days": 2})
    other = gold([CURRENT], "get_current_weather", {"city": "Rome"}, "Weather in Rome?")
    made = critictool.inject_selection(g, Pool.of([g, other]), random.Random(0))
    assert made.call["name"] == "get_current_weather" and made.tools == [FORECAST, CURRENT]
    assert made.detail["added_to_list"] is True
    alone = gold([LOAN], "loan_payment", {"principal": 1000})
    assert critictool.inject_selection(alone, Pool.of([alone, g]), random.Random(0)) is None  # nothing fits


def test_hallucinated_names_are_plausible_and_never_registered():
    taken = {"getForecast", "getForecasts", "fetchForecast"}
    for seed in range(20):
        name = critictool.hallucinated_name("getForecast", taken, random.Random(seed))
        assert name not in taken and "Forecast" in name
    g = gold([FORECAST], "get_forecast", {"city": "Oslo", "days": 2})
    made = critictool.inject_hallucination(g, Pool.of([g]), random.Random(1))
    assert made.expected.label == "unknown_tool" and made.call["name"] != "get_forecast"
    assert made.call["args"] == g.call["args"]


def test_key_errors_drop_a_required_key_or_add_an_undeclared_one():
    g = gold([FORECAST], "get_forecast", {"city": "Oslo", "days": 2})
    made = {m.detail.get("missing") or m.detail.get("extra"): m
            for m in (critictool.inject_key(g, Pool.of([g]), random.Random(s)) for s in range(30))}
    dropped = made["city"]
    assert dropped.call["args"] == {"days": 2}
    assert dropped.expected.model_dump(exclude_defaults=True) == {"label": "missing_information", "tool": "get_forecast", "params": ["city"]}
    extra = next(m for k, m in made.items() if k not in ("city", "days"))
    (key,) = set(extra.call["args"]) - {"city", "days"}
    assert extra.expected.label == "invalid_argument" and extra.expected.params == [key]


def test_value_errors_break_the_type_or_put_in_a_valid_value_nobody_said():
    flag = {"name": "set_alarm", "description": "Set an alarm.", "parameters": {
        "type": "object", "properties": {"loud": {"type": "boolean"}}, "required": ["loud"]}}
    g = gold([flag], "set_alarm", {"loud": True}, "Set a loud alarm.")
    typed = critictool.inject_value(g, Pool.of([g]), random.Random(0))
    assert typed.call["args"] == {"loud": "yes"} and typed.expected.label == "invalid_argument"
    free = {"name": "lookup", "description": "Look a city up.", "parameters": {
        "type": "object", "properties": {"city": {}}, "required": ["city"]}}  # any type: no type error possible
    g1 = gold([free], "lookup", {"city": "Oslo"}, "Look up Oslo.")
    g2 = gold([free], "lookup", {"city": "Lima"}, "Look up Lima.")
    content = critictool.inject_value(g1, Pool.of([g1, g2]), random.Random(0))
    assert content.call["args"] == {"city": "Lima"}  # another gold call's value, never said here
    assert content.expected.model_dump(exclude_defaults=True) == {
        "label": "missing_information", "tool": "lookup", "params": ["city"], "values": ["Lima"]}


def test_external_errors_fail_once_when_transient_and_persist_otherwise():
    g = gold([CURRENT], "get_current_weather", {"city": "Oslo"})
    made = {m.detail["kind"]: m for m in (critictool.inject_external(g, Pool.of([g]), random.Random(s)) for s in range(40))}
    assert set(made) == set(critictool.EXTERNAL_KINDS)
    for kind, m in made.items():
        assert m.call == g.call and m.expected.label == "tool_error"
        (err,) = m.tool_errors
        assert (err.kind, err.times) == (kind, critictool.EXTERNAL_KINDS[kind])
    assert made["timeout"].kind == "external_transient" and made["timeout"].gold == [g.call]  # the retry must succeed
    assert made["permission"].kind == "external_persistent" and made["permission"].gold == []  # FinishAction


# -- scoring --------------------------------------------------------------------------------------


def result(subset: str, label: str = "ok", **kw) -> CaseResult:
    return CaseResult(id=kw.pop("id", subset), suite="critictool", subset=subset, split="test",
                      expected={"label": label}, **kw)


READ = {"name": "read_file", "args": {"path": "/a"}}
NEXT = {"name": "get_current", "args": {"city": "Porto"}}
GOLD = {"name": "get_forecast", "args": {"city": "New York", "days": 3}}


def test_args_score_counts_keys_strictly_and_values_after_normalisation():
    assert critictool.args_score({"city": "new-york", "days": 3}, {"city": "New York", "days": 3}) == 1.0
    assert critictool.args_score({"city": "New York", "days": 4}, {"city": "New York", "days": 3}) == 0.5
    assert critictool.args_score({"city": "New York"}, {"city": "New York", "days": 3}) == 0.0  # missing key
    assert critictool.args_score({"city": "NY", "days": 3, "x": 1}, {"city": "NY", "days": 3}) == 0.0  # extra key
    assert critictool.args_score({"on": 1}, {"on": True}) == 0.0


def test_paper_metrics_by_hand():
    results = [
        result("rebuilt_clean", action="allow"),  # detect
        result("rebuilt_clean", action="ask_human", flagged=True, predicted=["missing_information"]),  # over-reflection
        result("rebuilt_tool_select_error", "suspicious_tool_selection", action="allow",
               executed=[{"name": "get_current", "args": {"city": "New York"}}], gold_calls=[GOLD]),  # missed, wrong tool ran
        result("rebuilt_tool_hallucination_error", "unknown_tool", action="retry", flagged=True, predicted=["unknown_tool"],
               gold_calls=[GOLD]),  # caught, nothing ran
        result("rebuilt_parameters_key_error", "missing_information", action="ask_human", flagged=True,
               predicted=["missing_information"], executed=[GOLD], gold_calls=[GOLD]),  # caught, the human completed it
        result("rebuilt_parameters_value_error", "invalid_argument", action="repair", categories=["type_violation"],
               executed=[{"name": "get_forecast", "args": {"city": "new york", "days": 4}}], gold_calls=[GOLD]),  # repaired, half right
        result("rebuilt_external_transient", "tool_error", action="allow", tool="read_file", executed=[READ, READ],
               gold_calls=[READ]),  # retried
        result("rebuilt_external_persistent", "tool_error", action="allow", tool="read_file", executed=[READ] * 3),  # retried, no finish
        result("rebuilt_external_persistent", "tool_error", action="allow", tool="read_file", executed=[READ],
               questions=1),  # no retry, finish
        result("published_external_persistent", "tool_error", action="allow", tool="read_file", executed=[READ, NEXT],
               gold_calls=[NEXT]),  # no retry, skipped to the next sub-task
    ]
    m = critictool.paper_metrics(results)
    # internal: detect = clean ok, (clean flagged no), selection no, hallucination, key, value (repair) = 4/6
    assert m["detect"] == pytest.approx(4 / 6)
    # injected (4): category = hallucination, key, value = 3/4; tool = key, value = 2/4; args = (0+0+1+0.5)/4
    assert (m["category"], m["correct_tool"], m["correct_args"]) == (0.75, 0.5, 0.375)
    # external (4): retried = transient (2 runs), persistent 3 runs = 2/4; persistent (3): all ran <= 4 times
    assert (m["retry"], m["break"]) == (0.5, 1.0)
    # finish/skip: 0 (no question), 1 (asked), 1 (next call ran, args equal) -> 2/3 each
    assert m["skip_finish_tool"] == pytest.approx(2 / 3) and m["skip_finish_args"] == pytest.approx(2 / 3)
    # 0.2*(4/6+0.75)/2 + 0.3*(0.5+0.375)/2 + 0.05*0.5 + 0.45*(1+2/3+2/3)/3 = 0.1416667+0.13125+0.025+0.35
    assert m["overall"] == pytest.approx(0.6479167, abs=1e-6)
    assert (m["reflect_tool_selection"], m["reflect_tool_hallucination"], m["reflect_parameter_key"],
            m["reflect_parameter_value"]) == (0.0, 1.0, 1.0, 1.0)
    assert m["over_reflection_rate"] == 0.5


def test_overall_reproduces_table_2_from_its_own_columns():
    for model, row in critictool._TABLE_2.items():
        columns = {k: v / 100 for k, v in zip(critictool._TABLE_2_METRICS, row)}
        assert critictool.overall(columns) == pytest.approx(columns["overall"], abs=0.003), model


# -- end to end -----------------------------------------------------------------------------------


def test_sample_cases_through_the_guarded_graph(cases):
    chosen = [cases[f"{PUBLISHED}/2"], cases[f"{PUBLISHED}/5"],
              next(c for c in cases.values() if c.subset == "rebuilt_external_transient")]
    hallucinated, after_a_step, transient = run_cases(chosen, Policy(), AgentSource("reference"))
    assert not any(r.error for r in (hallucinated, after_a_step, transient))
    assert hallucinated.flagged and "unknown_tool" in hallucinated.predicted and hallucinated.executed == []
    assert after_a_step.action is not None  # the call after an earlier step and its result reaches the guard
    assert len(transient.executed) == 2 and transient.recovered  # the backoff's second attempt succeeds
