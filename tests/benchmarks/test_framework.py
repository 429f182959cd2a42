"""The benchmark framework: splits, metrics against hand-computed values, the compare gate, the
simulated human, tools and agents, and the runner through the real guarded graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from typer.testing import CliRunner

from guard_bench.agents import AgentSource, ScriptedAgent, ai_turn, load_recorded
from guard_bench.cases import Case, Expected, Human, ToolError, split_of
from guard_bench.compare import compare
from guard_bench.humans import DONT_KNOW, SimulatedHuman
from guard_bench.metrics import binary, confusion, false_alarm_rate, latency, recovery
from guard_bench.runner import CaseResult, run_case
from guard_bench.tools import ToolBox
from guard.cli import app
from guard.policy import Policy

WEATHER = {"name": "get_weather", "description": "Weather in a city", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def result(label: str, predicted: list[str], **kw) -> CaseResult:
    return CaseResult(id=kw.pop("id", "x"), suite="s", subset="sub", split="test", expected={"label": label},
                      predicted=predicted, flagged=bool(predicted), **kw)


def test_split_is_a_stable_hash_of_the_id_with_about_thirty_percent_dev():
    assert split_of("special_incomplete_0") == split_of("special_incomplete_0")
    dev = sum(split_of(f"case-{i}") == "dev" for i in range(2000))
    assert 0.26 < dev / 2000 < 0.34
    assert Case(id="special_incomplete_0", suite="s", subset="x").split == split_of("special_incomplete_0")


def test_confusion_matches_hand_counts():
    rs = [
        result("missing_information", ["missing_information"]),  # tp for missing
        result("missing_information", []),  # fn for missing
        result("missing_information", ["invalid_argument"]),  # fn missing, fp invalid
        result("ok", ["missing_information"]),  # fp missing (a false alarm)
        result("ok", []),
    ]
    c = confusion(rs)
    # missing: tp 1, fn 2, fp 1 -> precision 1/2, recall 1/3, F1 = 2*(1/2)(1/3)/(1/2+1/3) = 0.4
    assert c["missing_information"] == {"n": 3, "tp": 1, "fp": 1, "fn": 2, "precision": 0.5, "recall": pytest.approx(1 / 3), "f1": pytest.approx(0.4)}
    assert c["invalid_argument"]["fp"] == 1 and c["invalid_argument"]["precision"] == 0.0
    assert false_alarm_rate(rs) == 0.5  # one of the two clean cases flagged


def test_binary_accuracy_and_f1_by_hand():
    rs = [result("a", ["x"]), result("a", []), result("ok", ["x"]), result("ok", []), result("ok", [])]
    m = binary(rs, lambda r: r.expected["label"] == "a")
    # tp 1, fn 1, fp 1, tn 2 -> acc 3/5, precision 1/2, recall 1/2, F1 1/2
    assert m == {"acc": 0.6, "f1": 0.5, "precision": 0.5, "recall": 0.5}


def test_recovery_and_latency():
    rs = [result("ok", [], recovered=True, questions=2, retries=1, latency_ms=1.0),
          result("ok", [], recovered=False, latency_ms=3.0), result("ok", [], latency_ms=2.0)]
    assert recovery(rs) == {"recovered_rate": 0.5, "n_with_gold": 2, "questions_per_case": 2 / 3, "retries_per_case": 1 / 3}
    assert latency(rs)["p50"] == 2.0


def run_json(recall: float) -> dict:
    return {"suite": "s", "categories": {"missing_information": {"precision": 0.9, "recall": recall}}, "paper_metrics": {"m": recall}}


def test_compare_flags_a_rise_of_false_interrupts_beyond_the_threshold():
    old, new = run_json(0.8), run_json(0.8)
    old["false_interrupt_rate"] = {"value": 0.05, "k": 5, "n": 100, "ci95": [0.02, 0.11]}
    new["false_interrupt_rate"] = {"value": 0.08, "k": 8, "n": 100, "ci95": [0.04, 0.15]}
    table, regressions = compare(old, new, max_drop=0.01)
    assert "| s | (clean cases) | false_interrupt_rate | 0.050 | 0.080 | +0.030 |" in table
    assert regressions == ["s false_interrupt_rate 0.050 -> 0.080"]
    assert compare(new, old, max_drop=0.01)[1] == []  # fewer interrupts is no regression


def test_compare_flags_drops_beyond_the_threshold(tmp_path: Path):
    table, regressions = compare(run_json(0.80), run_json(0.78), max_drop=0.01)
    assert "| s | missing_information | recall | 0.800 | 0.780 | -0.020 |" in table
    assert regressions == ["s missing_information recall 0.800 -> 0.780"]
    assert compare(run_json(0.80), run_json(0.795), max_drop=0.01)[1] == []
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(run_json(0.8)))
    new.write_text(json.dumps(run_json(0.7)))
    out = CliRunner().invoke(app, ["bench", "compare", str(old), str(new)])
    assert out.exit_code == 1 and "Regressions" in out.output
    assert CliRunner().invoke(app, ["bench", "compare", str(old), str(old)]).exit_code == 0


def test_simulated_human_answers_only_what_it_knows_and_counts_questions():
    human = SimulatedHuman(Human(values={"city": "Oslo"}))
    payload = {"requests": [
        {"tool_call_id": "a", "kind": "missing_information", "missing": ["city"]},
        {"tool_call_id": "b", "kind": "missing_information", "missing": ["date"]},
        {"tool_call_id": "c", "kind": "approval", "missing": []},
    ]}
    answers = human.answer(payload)
    assert answers["a"] == {"action": "answer", "values": {"city": "Oslo"}}
    assert answers["b"] == {"action": "answer", "text": DONT_KNOW}
    assert answers["c"] == {"action": "approve"}
    assert human.questions == 3 and human.answered == 2


def test_simulated_tools_inject_failures_then_answer_from_the_record():
    case = Case(id="t", suite="s", subset="x", tools=[WEATHER], tool_results={"get_weather": {"celsius": 14}},
                tool_errors=[ToolError(tool="get_weather", kind="timeout", times=1)])
    box = ToolBox.for_case(case)
    (tool,) = box.tools()
    with pytest.raises(TimeoutError):
        tool.invoke({"city": "Oslo"})
    assert json.loads(tool.invoke({"city": "Oslo"})) == {"celsius": 14}
    assert box.executed == [{"name": "get_weather", "args": {"city": "Oslo"}}] * 2


def test_scripted_agent_replays_turns_after_the_last_user_message():
    agent = ScriptedAgent(turns=[ai_turn([{"name": "get_weather", "args": {"city": "Oslo"}, "id": "c1"}])])
    first = agent.invoke([HumanMessage("hi"), AIMessage("earlier turn"), HumanMessage("weather in Oslo"), AIMessage("Got it.")])
    assert first.tool_calls[0]["args"] == {"city": "Oslo"}  # the dialogue's own AI turns are not the script's
    after_tool = agent.invoke([HumanMessage("weather in Oslo"), first, ToolMessage("14C", tool_call_id="c1")])
    assert not after_tool.tool_calls


def test_malformed_calls_become_invalid_tool_calls():
    turn = ai_turn([{"name": None, "args": {}, "id": "a"}, {"name": "t", "args": "{bad", "id": "b"}])
    assert not turn.tool_calls and [c["id"] for c in turn.invalid_tool_calls] == ["a", "b"]


def test_recorded_agent_file_and_bad_specs(tmp_path: Path):
    path = tmp_path / "rec.jsonl"
    path.write_text(json.dumps({"case_id": "c", "turns": [{"content": "", "tool_calls": [
        {"id": "1", "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]}]}) + "\n")
    assert load_recorded(path)["c"][0].tool_calls[0]["args"] == {"city": "Oslo"}
    assert AgentSource(f"recorded:{path}").model_for(Case(id="c", suite="s", subset="x"))
    with pytest.raises(ValueError, match="unknown agent"):
        AgentSource("oracle")
    with pytest.raises(ValueError, match="live:PROVIDER:MODEL"):
        AgentSource("live:openai")
    path.write_text("{not json\n")
    with pytest.raises(ValueError, match="line 1"):
        load_recorded(path)


def test_runner_scores_a_clean_call_and_an_invented_value_through_the_graph():
    clean = Case(id="clean", suite="s", subset="x", messages=[{"role": "user", "content": "Weather in Oslo?"}], tools=[WEATHER],
                 calls=[{"name": "get_weather", "args": {"city": "Oslo"}, "id": "c1"}],
                 gold_calls=[{"name": "get_weather", "args": {"city": "Oslo"}}])
    r = run_case(clean, Policy(), AgentSource())
    assert r.error is None and r.action == "allow" and not r.flagged and r.recovered and r.questions == 0
    invented = clean.model_copy(update={"id": "inv", "messages": [{"role": "user", "content": "Weather where I live?"}],
                                        "expected": Expected(label="missing_information"), "human": Human(values={"city": "Oslo"})})
    r = run_case(invented, Policy(), AgentSource())
    assert r.flagged and r.predicted == ["missing_information"] and r.missing == ["city"]
    assert r.questions == 1 and r.recovered  # the human supplied Oslo, the re-checked call ran
    assert r.latency_ms > 0


def test_a_broken_case_is_reported_not_raised():
    bad = Case(id="bad", suite="s", subset="x", tools=[{"name": "t", "parameters": {"type": "string"}}], calls=[{"name": "t", "args": {}}])
    r = run_case(bad, Policy(), AgentSource())
    assert r.error and "must describe an object" in r.error


def test_a_replay_reads_dates_against_its_pinned_clock_not_the_day_it_runs():
    """API-Bank's dialogues say only "The current year is 2023.": "tomorrow" is read against the
    runner's ``REPLAY_NOW`` (2023-03-31), so the same case decides the same on any day."""
    from guard_bench.runner import REPLAY_NOW

    book = {"name": "book_room", "description": "Book a meeting room",
            "parameters": {"type": "object", "properties": {"date": {"type": "string", "description": "YYYY-MM-DD"}}, "required": ["date"]}}
    said = [{"role": "system", "content": "The current year is 2023."}, {"role": "user", "content": "Book a room for tomorrow."}]
    tomorrow = (REPLAY_NOW.date().fromordinal(REPLAY_NOW.date().toordinal() + 1)).isoformat()
    case = Case(id="d", suite="s", subset="x", messages=said, tools=[book], calls=[{"name": "book_room", "args": {"date": tomorrow}, "id": "c1"}])
    assert run_case(case, Policy(), AgentSource()).action == "allow"
    # another day than the pinned clock's tomorrow is no reading of "tomorrow"
    other = case.model_copy(update={"id": "e", "calls": [{"name": "book_room", "args": {"date": "2023-06-02"}, "id": "c1"}]})
    assert run_case(other, Policy(), AgentSource()).flagged
