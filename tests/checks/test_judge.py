"""The optional LLM judge (``guard.checks.judge``): asked only when a cheaper check is unsure, its
answer drops or adds a finding, its failures never escape the guard, its calls are capped, and what
it cost reaches the decision and the benchmark report.

No real LLM can be reached from the test machine: the judge's model here is ``RuleModel``, a test
double that answers yes or no by a rule over the question and reports ``usage_metadata`` as a
provider's model does.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from guard_bench import report
from guard_bench.agents import AgentSource
from guard_bench.datasets import tool_reflection
from guard_bench.runner import CaseResult, judge_off, run_cases
from guard_graphs import build_guarded_agent
from guard import Guard
from guard.checks.judge import Judge, parse_reply
from guard.checks.preflight import assess
from guard.conversation import Conversation
from guard.models import Finding
from guard.policy import Policy, PolicyError
from guard.taxonomy import Action, Category
from tests.support import FAST, ai_call, scripted, tool_messages

USER = "Find flights from Berlin to Paris for 2 people."
SAMPLES = Path(__file__).parents[2] / "benchmarks" / "samples"


def yes(_question: str) -> str:
    return "yes"


def no(_question: str) -> str:
    return "no"


class RuleModel(BaseChatModel):
    """A test double for the judge's chat model: ``rule(question)`` says "yes" or "no" (raising is
    the provider failing), the reply is the JSON the judge asks for, usage is reported."""

    rule: Callable[[str], str] = yes
    delay: float = 0.0
    questions: list[str] = Field(default_factory=list)
    transcripts: list[str] = Field(default_factory=list)
    async_calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "rule-judge-test-double"

    def _reply(self, messages: list[Any]) -> ChatResult:
        prompt = messages[-1].content
        transcript, _, question = prompt.rpartition("Question: ")
        self.questions.append(question)
        self.transcripts.append(transcript)
        answer = self.rule(question)
        message = AIMessage(
            content=json.dumps({"answer": answer, "reason": f"the rule said {answer}"}),
            usage_metadata={"input_tokens": len(prompt) // 4, "output_tokens": 11, "total_tokens": len(prompt) // 4 + 11},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        time.sleep(self.delay)
        return self._reply(messages)

    async def _agenerate(self, messages: list[Any], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.async_calls += 1
        await asyncio.sleep(self.delay)
        return self._reply(messages)


class StructuredRuleModel(RuleModel):
    """``RuleModel`` with structured output, the path models with tool calling take."""

    structured_calls: int = 0

    def with_structured_output(self, schema: Any, *, include_raw: bool = False, **kwargs: Any) -> Any:
        def parse(messages: Any) -> dict[str, Any]:
            self.structured_calls += 1
            raw = self.invoke(messages)
            return {"raw": raw, "parsed": schema.model_validate_json(raw.content), "parsing_error": None}

        return RunnableLambda(parse)


def failing(question: str) -> str:
    raise RuntimeError("provider is down")


def flights(to_city: str, from_city: str = "Berlin") -> dict[str, Any]:
    return {"name": "search_flights", "args": {"from_city": from_city, "to_city": to_city, "passengers": 2}, "id": "c1"}


def judged(tools: Any, model: Any, policy: dict[str, Any] | None = None, **judge: Any) -> Guard:
    """A guard whose judge is ``model``, with ``judge`` as the policy's ``checks.judge`` section."""
    policy = dict(policy or {})
    if judge:
        policy["checks"] = {**policy.get("checks", {}), "judge": judge}
    return Guard(tools, policy, judge=model)


# -- ungrounded values: asked about near misses only ----------------------------------------------


def test_a_value_far_from_anything_said_is_not_asked_about(travel_tools):
    model = RuleModel(rule=yes)
    decision = judged(travel_tools, model).check(flights("London"), [("user", USER)])
    (finding,) = decision.findings
    assert finding.category is Category.UNGROUNDED_VALUE
    assert model.questions == [] and decision.judgements == []
    assert decision.action is Action.ASK_HUMAN


def test_a_near_miss_is_asked_about_and_a_yes_drops_the_finding(travel_tools):
    call = flights("Pariss")
    assert Guard(travel_tools).check(call, [("user", USER)]).action is Action.ASK_HUMAN  # the rules alone
    model = RuleModel(rule=yes)
    decision = judged(travel_tools, model).check(call, [("user", USER)])
    assert decision.action is Action.ALLOW and decision.findings == []
    (question,) = model.questions
    assert "`to_city`" in question and '"Pariss"' in question and "search_flights" in question
    (record,) = decision.judgements
    assert record["kind"] == "ungrounded_value" and record["answer"] == "yes" and record["effect"] == "dropped"
    assert record["finding"] == {"category": "ungrounded_value", "path": "$.to_city", "value": "Pariss", "tool": "search_flights"}
    assert record["score"] == pytest.approx(0.833, abs=0.001) and record["threshold"] == 0.9 and record["band"] == 0.15
    assert record["input_tokens"] > 50 and record["output_tokens"] == 11
    assert record["latency_ms"] > 0 and record["cached"] is False and record["error"] is None
    assert record["model"] == "RuleModel" and record["cost"] is None  # no prices in the policy


def test_the_judge_does_not_see_the_call_under_review(travel_tools):
    model = RuleModel(rule=yes)
    messages = [("user", USER), ai_call("search_flights", flights("Pariss")["args"])]
    judged(travel_tools, model).check(flights("Pariss"), messages)
    (transcript,) = model.transcripts
    assert "Find flights from Berlin" in transcript and "assistant called search_flights" in transcript
    assert "Pariss" not in transcript  # only in the question: the call cannot vouch for its own value


def test_a_no_keeps_the_finding_with_the_answer_in_its_evidence(travel_tools):
    decision = judged(travel_tools, RuleModel(rule=no)).check(flights("Pariss"), [("user", USER)])
    assert decision.action is Action.ASK_HUMAN
    (finding,) = decision.findings
    assert finding.evidence["judge"] == {"answer": "no", "reason": "the rule said no"}
    assert [r["effect"] for r in decision.judgements] == ["kept"]


def test_the_band_comes_from_the_policy(travel_tools):
    model = RuleModel(rule=yes)
    decision = judged(travel_tools, model, bands={"ungrounded_value": 0.05}).check(flights("Pariss"), [("user", USER)])
    assert model.questions == [] and decision.action is Action.ASK_HUMAN  # 0.833 is not within 0.05 of 0.9


def test_a_finding_the_policy_lets_run_is_not_asked_about(travel_tools):
    model = RuleModel(rule=yes)
    guard = judged(travel_tools, model, {"actions": {"ungrounded_value": "allow"}})
    assert guard.check(flights("Pariss"), [("user", USER)]).action is Action.ALLOW
    assert model.questions == []


def test_prices_give_a_cost(travel_tools):
    decision = judged(
        travel_tools, RuleModel(rule=yes), price_per_1k_input_tokens=0.5, price_per_1k_output_tokens=2.0
    ).check(flights("Pariss"), [("user", USER)])
    (record,) = decision.judgements
    assert record["cost"] == pytest.approx(record["input_tokens"] / 1000 * 0.5 + 11 / 1000 * 2.0)


# -- failures, timeouts and the cap ------------------------------------------------------------------


def test_a_model_that_raises_leaves_the_rule_verdict_and_records_the_failure(travel_tools):
    decision = judged(travel_tools, RuleModel(rule=failing)).check(flights("Pariss"), [("user", USER)])
    assert decision.action is Action.ASK_HUMAN and [f.category for f in decision.findings] == [Category.UNGROUNDED_VALUE]
    (record,) = decision.judgements
    assert record["effect"] == "failed" and record["answer"] is None
    assert "RuntimeError" in record["error"] and "provider is down" in record["error"]


def test_a_model_that_times_out_leaves_the_rule_verdict(travel_tools):
    guard = judged(travel_tools, RuleModel(rule=yes, delay=2.0), timeout_seconds=0.05)
    start = time.perf_counter()
    decision = guard.check(flights("Pariss"), [("user", USER)])
    assert time.perf_counter() - start < 1.0
    assert decision.action is Action.ASK_HUMAN
    (record,) = decision.judgements
    assert record["effect"] == "failed" and "timed out after 0.05 s" in record["error"]
    assert record["latency_ms"] >= 50


async def test_the_async_check_times_out_too(travel_tools):
    guard = judged(travel_tools, RuleModel(rule=yes, delay=2.0), timeout_seconds=0.05)
    start = time.perf_counter()
    decision = await guard.acheck(flights("Pariss"), [("user", USER)])
    assert time.perf_counter() - start < 1.0
    assert decision.action is Action.ASK_HUMAN and decision.judgements[0]["effect"] == "failed"
    assert "timed out" in decision.judgements[0]["error"]


def test_an_unreadable_reply_is_a_failure_not_an_answer(travel_tools):
    class Rambling(RuleModel):
        def _reply(self, messages: list[Any]) -> ChatResult:
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="It depends on the airline."))])

    decision = judged(travel_tools, Rambling()).check(flights("Pariss"), [("user", USER)])
    assert decision.action is Action.ASK_HUMAN and decision.judgements[0]["effect"] == "failed"
    assert "no yes/no answer" in decision.judgements[0]["error"]


def test_an_unresolvable_model_spec_is_recorded_not_raised(travel_tools):
    guard = Guard(travel_tools, {"checks": {"judge": {"enabled": True, "model": "nosuchprovider:some-model"}}})
    assert guard.judge is not None  # built, but the model is only resolved when a question is asked
    decision = guard.check(flights("Pariss"), [("user", USER)])
    assert decision.action is Action.ASK_HUMAN
    (record,) = decision.judgements
    assert record["effect"] == "failed" and "nosuchprovider:some-model" in record["error"]


def test_the_call_cap_holds_per_thread(travel_tools):
    model = RuleModel(rule=yes)
    guard = judged(travel_tools, model, max_calls_per_thread=1)
    both = flights("Pariss", from_city="Berln")  # two near misses in one call
    decision = guard.check(both, [("user", USER)])
    assert len(model.questions) == 1
    assert sorted(r["effect"] for r in decision.judgements) == ["dropped", "skipped"]
    skipped = next(r for r in decision.judgements if r["effect"] == "skipped")
    assert "call cap is spent (1 per thread)" in skipped["error"]
    assert decision.action is Action.ASK_HUMAN  # the unasked finding stands
    guard.check(flights("Parris"), [("user", USER)])  # the same thread: no more calls
    assert len(model.questions) == 1
    guard.check(flights("Parris"), [("user", "Find flights from Berlin to Paris, please.")])  # another thread
    assert len(model.questions) == 2


def test_the_same_question_is_answered_from_the_cache(travel_tools):
    model = RuleModel(rule=yes)
    guard = judged(travel_tools, model)
    first = guard.check(flights("Pariss"), [("user", USER)])
    again = guard.check(flights("Pariss"), [("user", USER)])
    assert len(model.questions) == 1 and again.action is first.action is Action.ALLOW
    assert again.judgements[0]["cached"] is True and again.judgements[0]["input_tokens"] is None


# -- the model's interfaces --------------------------------------------------------------------------


def test_structured_output_is_used_when_the_model_offers_it(travel_tools):
    model = StructuredRuleModel(rule=yes)
    decision = judged(travel_tools, model).check(flights("Pariss"), [("user", USER)])
    assert model.structured_calls == 1 and decision.action is Action.ALLOW
    assert decision.judgements[0]["input_tokens"] > 50  # usage read from the raw message


async def test_the_async_check_awaits_the_models_async_call(travel_tools):
    model = RuleModel(rule=yes)
    decision = await judged(travel_tools, model).acheck(flights("Pariss"), [("user", USER)])
    assert model.async_calls == 1 and decision.action is Action.ALLOW
    assert decision.judgements[0]["effect"] == "dropped"


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ('{"answer": "yes", "reason": "said"}', "yes"),
        ('Sure: {"answer": "No", "reason": "not said"} hope that helps', "no"),
        ('{"answer": true, "reason": "said"}', "yes"),
        ("No, the user never named a city.", "no"),
    ],
)
def test_plain_replies_are_parsed(reply, answer):
    assert parse_reply(reply).answer == answer


def test_a_reply_with_no_answer_is_refused():
    with pytest.raises(ValueError):
        parse_reply('{"answer": "maybe"}')


# -- the preflight -------------------------------------------------------------------------------------

BOOKING = [{
    "name": "book_table",
    "description": "Book a table at a restaurant for a party on a date.",
    "parameters": {"type": "object", "properties": {
        "restaurant_id": {"type": "string", "description": "the restaurant's id"},
        "date": {"type": "string", "format": "date", "description": "day of the booking, YYYY-MM-DD"},
        "party_size": {"type": "integer", "description": "number of guests"}},
        "required": ["restaurant_id", "date", "party_size"]},
}]


def best_score(tools: Any, request: str) -> float:
    guard = Guard(tools)
    return assess(Conversation.from_messages([("user", request)]), guard.registry, guard.policy).ranking[0].score


def test_no_suitable_tool_near_the_threshold_is_asked_and_a_yes_takes_the_tool(travel_tools):
    request = "Find flights from Berlin to Paris for 2 people."
    score = best_score(travel_tools, request)
    policy = {"checks": {"preflight": {"min_relevance": score + 0.02}}}
    assert Guard(travel_tools, policy).preflight([("user", request)]).categories == [Category.NO_SUITABLE_TOOL]
    model = RuleModel(rule=yes)
    decision = judged(travel_tools, model, policy).preflight([("user", request)])
    (question,) = model.questions
    assert "`search_flights`" in question and "serve the user's latest request" in question
    assert decision.call.name == "search_flights" and Category.NO_SUITABLE_TOOL not in decision.categories
    (record,) = decision.judgements
    assert record["kind"] == "no_suitable_tool" and record["effect"] == "dropped"
    assert record["threshold"] == pytest.approx(score + 0.02) and record["score"] == pytest.approx(score, abs=0.001)


def test_no_suitable_tool_far_below_the_threshold_is_not_asked(travel_tools):
    request = "Find flights from Berlin to Paris for 2 people."
    policy = {"checks": {"preflight": {"min_relevance": min(best_score(travel_tools, request) + 0.3, 1.0)}}}
    model = RuleModel(rule=yes)
    decision = judged(travel_tools, model, policy).preflight([("user", request)])
    assert model.questions == [] and decision.categories == [Category.NO_SUITABLE_TOOL]


def test_a_tool_just_above_the_threshold_can_be_refused_by_the_judge(travel_tools):
    request = "Find flights from Berlin to Paris for 2 people."
    policy = {"checks": {"preflight": {"min_relevance": best_score(travel_tools, request) - 0.02}}}
    assert Guard(travel_tools, policy).preflight([("user", request)]).call.name == "search_flights"
    decision = judged(travel_tools, RuleModel(rule=no), policy).preflight([("user", request)])
    assert decision.call.name is None and decision.action is Action.ASK_HUMAN
    (finding,) = decision.findings
    assert finding.category is Category.NO_SUITABLE_TOOL and finding.check == "judge"
    assert finding.evidence["judge"]["answer"] == "no"
    assert [r["effect"] for r in decision.judgements] == ["added"]


def test_a_missing_value_whose_parameter_was_spoken_of_is_asked_about():
    request = "Book a table at restaurant R-17 for 4 guests on the date of our anniversary, the day after Valentine's Day."
    assert Guard(BOOKING).preflight([("user", request)]).missing == ["date"]  # the rules read no date
    model = RuleModel(rule=yes)
    decision = judged(BOOKING, model).preflight([("user", request)])
    (question,) = model.questions
    assert "`date`" in question and "day of the booking, YYYY-MM-DD" in question
    assert decision.action is Action.ALLOW and decision.findings == []
    (record,) = decision.judgements
    assert record["kind"] == "missing_argument" and record["score"] == 1.0 and record["effect"] == "dropped"


def test_a_missing_value_nobody_spoke_of_is_not_asked_about():
    model = RuleModel(rule=yes)
    decision = judged(BOOKING, model).preflight([("user", "Book a table at restaurant R-17 for 4 guests.")])
    assert model.questions == [] and decision.missing == ["date"]
    assert decision.findings[0].evidence["mentioned"] == 0.0


async def test_the_async_preflight_awaits_the_model():
    model = RuleModel(rule=no)
    request = "Book a table at restaurant R-17 for 4 guests on the date of our anniversary."
    decision = await judged(BOOKING, model).apreflight([("user", request)])
    assert model.async_calls == 1 and decision.missing == ["date"]
    assert decision.judgements[0]["effect"] == "kept"


# -- suspicious tool selection ----------------------------------------------------------------------


class SelectionStub:
    """Stands in for ``SemanticGuard``: grounds nothing, and flags every call to ``get_weather`` as
    out-ranked by ``search_flights`` by ``lead`` (the shape of ``selection_check``'s finding)."""

    selection_margin = 0.10

    def __init__(self, lead: float) -> None:
        self.lead = lead
        self.call_checks = (self.flag,)

    def match(self, value: str, param: str, description: str, conversation: Conversation) -> None:
        return None

    def flag(self, ctx: Any) -> list[Finding]:
        if ctx.call.name != "get_weather":
            return []
        return [Finding(category=Category.SUSPICIOUS_TOOL_SELECTION, check="semantic", message="out-ranked",
                        tool="get_weather", rule="selection_margin",
                        evidence={"better": "search_flights", "score": 0.30, "better_score": round(0.30 + self.lead, 3),
                                  "request": USER})]


@pytest.mark.parametrize(("lead", "asked"), [(0.12, True), (0.40, False)])
def test_a_selection_near_the_margin_is_asked_about(travel_tools, lead, asked):
    model = RuleModel(rule=yes)
    guard = Guard(travel_tools, semantic=SelectionStub(lead), judge=model)
    decision = guard.check({"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"}, [("user", USER)])
    assert bool(model.questions) is asked
    if asked:
        assert "`get_weather`" in model.questions[0] and "`search_flights`" in model.questions[0]
        assert decision.action is Action.ALLOW and decision.judgements[0]["kind"] == "suspicious_tool_selection"
        assert decision.judgements[0]["score"] == pytest.approx(lead) and decision.judgements[0]["threshold"] == 0.10
    else:
        assert decision.action is Action.RETRY and decision.judgements == []


# -- the policy --------------------------------------------------------------------------------------


def test_the_judge_is_off_by_default(travel_tools):
    assert Policy().checks.judge.enabled is False
    guard = Guard(travel_tools)
    assert guard.judge is None
    assert guard.check(flights("Pariss"), [("user", USER)]).judgements == []


@pytest.mark.parametrize(
    ("yaml_text", "key"),
    [
        ("checks:\n  judge:\n    enabled: true\n    modle: openai:gpt-4o-mini\n", "checks.judge.modle"),
        ("checks:\n  judge:\n    bands:\n      ungrounded: 0.1\n", "checks.judge.bands.ungrounded"),
        ("checks:\n  judge:\n    bands:\n      no_suitable_tool: 1.5\n", "checks.judge.bands.no_suitable_tool"),
        ("checks:\n  judge:\n    model: gpt-4o-mini\n", "checks.judge.model"),
        ("checks:\n  judge:\n    timeout_seconds: 0\n", "checks.judge.timeout_seconds"),
        ("checks:\n  judge:\n    max_calls_per_thread: -1\n", "checks.judge.max_calls_per_thread"),
    ],
)
def test_a_bad_judge_section_is_refused_with_its_key_and_line(yaml_text, key):
    with pytest.raises(PolicyError) as err:
        Policy.from_yaml_text(yaml_text, source="policy.yaml")
    assert err.value.key == key and err.value.line is not None and err.value.line >= 2


def test_an_enabled_judge_needs_a_model(travel_tools):
    with pytest.raises(PolicyError, match="checks.judge.model"):
        Guard(travel_tools, {"checks": {"judge": {"enabled": True}}})
    assert Guard(travel_tools, {"checks": {"judge": {"enabled": True}}}, judge=RuleModel()).judge is not None


def test_a_judge_section_is_read_from_yaml():
    policy = Policy.from_yaml_text(
        "checks:\n  judge:\n    enabled: true\n    model: anthropic:claude-haiku\n    bands: {missing_argument: 0.3}\n"
        "    max_calls_per_thread: 4\n    price_per_1k_input_tokens: 0.25\n"
    )
    judge = policy.checks.judge
    assert judge.enabled and judge.model == "anthropic:claude-haiku" and judge.max_calls_per_thread == 4
    assert judge.bands.missing_argument == 0.3 and judge.bands.ungrounded_value == 0.15
    assert judge_off(policy).checks.judge.enabled is False and judge_off(policy).sha256 != policy.sha256


# -- in a real LangGraph graph -------------------------------------------------------------------------


@pytest.mark.parametrize(("rule", "runs"), [(yes, True), (no, False)])
def test_a_judged_guard_in_a_guarded_graph(travel_tools, calls, rule, runs):
    model = RuleModel(rule=rule)
    guard = Guard(travel_tools, FAST, judge=model)
    agent = build_guarded_agent(
        scripted([ai_call("search_flights", {"from_city": "Berlin", "to_city": "Pariss", "passengers": 2})]),
        travel_tools, guard=guard, checkpointer=InMemorySaver(),
    )
    result = agent.invoke({"messages": [("user", USER)]}, {"configurable": {"thread_id": "t1"}})
    assert len(model.questions) == 1
    assert guard.judge._spent == {"thread:t1": 1}  # counted against the graph's thread
    if runs:
        assert calls.names() == ["search_flights"] and "__interrupt__" not in result
        assert tool_messages(result)[0].response_metadata["guard"]["action"] == "allow"
    else:
        assert calls.names() == [] and result["__interrupt__"][0].value["kind"] == "missing_information"


# -- the benchmark -----------------------------------------------------------------------------------


def test_a_judged_benchmark_run_counts_the_judges_calls_and_cost():
    # "euros" and "US dollars" derive their codes (guard.checks.measures), and a code's letters in
    # a said word starting with its letter abbreviate it (guard.checks.risk): "Fleur money" is a near miss for EUR
    unsaid = [{"role": "user", "content": "How much is 250 Fleur money in dollars?"}]
    cases = [c.model_copy(update={"messages": unsaid}) for c in tool_reflection.load(SAMPLES) if c.id == "test_sample:2"]
    policy = Policy(checks={"judge": {"price_per_1k_input_tokens": 1.0, "price_per_1k_output_tokens": 1.0}})
    judge = Judge(RuleModel(rule=no), policy.checks.judge)
    results = run_cases(cases, policy, AgentSource("reference"), judge=judge)
    plain = run_cases(cases, policy, AgentSource("reference"))
    (result,) = results
    assert result.judge and all(j["kind"] == "ungrounded_value" for j in result.judge)
    figures = report.judge_figures(results, judge.name)
    calls = [j for j in result.judge if not j["cached"]]
    assert figures["questions"] == len(result.judge) and figures["calls"] == len(calls) and figures["cases"] == 1
    assert figures["input_tokens"] == sum(j["input_tokens"] for j in calls) and figures["output_tokens"] == 11 * len(calls)
    assert figures["cost"] == pytest.approx((figures["input_tokens"] + figures["output_tokens"]) / 1000)
    assert figures["effects"]["kept"] == len(result.judge) and figures["latency_ms"]["p50"] > 0
    assert plain[0].judge == [] and report.judge_figures(plain, None) == "off"
    suite = report.suite_result("tool-reflection", "all", policy, results, {}, 1.0, judge_model=judge.name)
    suite["without_judge"] = report.without_judge(plain, {})
    text = report.markdown(suite, {}, "guard bench run tool-reflection --judge test:double")
    assert f"judge: `RuleModel`: {figures['questions']} questions in 1 cases" in text
    assert "| figure | without judge | with judge |" in text and "| false-alarm rate |" in text


def test_an_unjudged_suite_says_judge_off():
    result = CaseResult(id="x", suite="s", subset="", split="test", expected={"label": "ok"})
    suite = report.suite_result("s", "test", Policy(), [result], {}, 0.1)
    assert suite["judge"] == "off" and "judge: off." in report.markdown(suite, {}, "guard bench run s")
