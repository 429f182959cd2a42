"""Relevance: which registered tool a request is about, judged by the words alone."""

from __future__ import annotations

import pytest

from guard.checks import relevance
from guard.checks.relevance import rank_tools, stem, tokens
from guard.policy import Policy
from guard.registry import ToolRegistry


def tool(name: str, description: str, **params: str) -> dict:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": {p: {"type": "string", "description": d} for p, d in params.items()}},
    }


TOOLS = [
    tool("get_weather", "Current weather and forecast for a city.", city="The city to report on"),
    tool("search_flights", "Search flights between two airports on a date.", origin="Departure airport", destination="Arrival airport"),
    tool("transfer_money", "Transfer an amount of money to a bank account.", iban="The account to pay", amount="How much"),
    tool("createCalendarEvent", "Schedule a meeting in the user's calendar.", title="Meeting title", start="Start time"),
    tool("translate_text", "Translate a text into another language.", text="What to translate", target_language="Into which language"),
]
MIN_RELEVANCE = Policy().checks.preflight.min_relevance


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry(TOOLS)


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ("What's the weather going to be like in Oslo tomorrow?", "get_weather"),
        ("Find me flights from Berlin to Rome next Friday", "search_flights"),
        ("Please send 50 euros to my landlord's bank account", "transfer_money"),
        ("Schedule a meeting with Anna on Monday at 10", "createCalendarEvent"),
        ("How do you say 'good morning' in Japanese? Translate it for me", "translate_text"),
    ],
)
def test_the_tool_a_request_is_about_ranks_first(registry, request_text, expected):
    ranking = rank_tools(request_text, registry)
    assert ranking[0].name == expected
    assert ranking[0].score > ranking[1].score and ranking[0].score >= MIN_RELEVANCE


def test_every_available_tool_is_scored_in_unit_range_best_first(registry):
    ranking = rank_tools("weather forecast for Paris", registry)
    assert ranking[0].name == "get_weather" and len(ranking) == len(TOOLS)
    assert all(0.0 <= s.score <= 1.0 for s in ranking)
    assert [s.score for s in ranking] == sorted((s.score for s in ranking), reverse=True)


def test_a_score_says_which_words_matched(registry):
    best = rank_tools("I need the weather forecast", registry)[0]
    assert set(best.matched) == {"weath", "foreca"}
    assert best.as_dict() == {"tool": "get_weather", "score": round(best.score, 3), "matched": ["foreca", "weath"]}


def test_an_unrelated_request_scores_below_the_default_threshold(registry):
    assert rank_tools("Write a short poem about autumn leaves", registry)[0].score < MIN_RELEVANCE


def test_words_match_across_inflections_and_name_styles():
    assert stem("scheduling") == stem("schedules") == stem("scheduler") == stem("schedule")
    assert stem("management") == stem("managing") == stem("manager")
    assert stem("analyse") == stem("analyze")
    assert tokens("createCalendarEvent for the meetings") == ["creat", "calend", "event", "meet"]


def test_grammar_words_and_numbers_carry_no_weight(registry):
    assert tokens("Can you please do it for me 42 times?") == ["tim"]
    assert all(s.score == 0.0 for s in rank_tools("Can you please do it for me?", registry))


def test_disabled_tools_are_not_ranked(registry):
    registry.set_available("get_weather", False, "outage")
    assert "get_weather" not in [s.name for s in rank_tools("weather in Oslo", registry)]


def test_nothing_to_rank_gives_an_empty_ranking():
    assert rank_tools("weather in Oslo", ToolRegistry()) == []


def test_profiles_are_built_once_per_registry_content(monkeypatch):
    built = []
    real = relevance._profile
    monkeypatch.setattr(relevance, "_profile", lambda spec: built.append(spec.name) or real(spec))
    fresh = [tool("count_sheep", "Count sheep in a field before sleeping.", field="Which field")]
    for _ in range(3):  # a benchmark rebuilds the registry for every case
        rank_tools("count the sheep", ToolRegistry(fresh))
    assert built == ["count_sheep"]
    rank_tools("count the sheep", ToolRegistry([tool("count_sheep", "Count goats instead.")]))
    assert built == ["count_sheep", "count_sheep"]  # a changed schema is a new profile


def test_a_request_is_not_split_inside_a_quoted_value():
    from guard.checks.relevance import split_request

    agent = "'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36'"
    assert split_request(f"What browser is the user agent {agent}? Then book a flight to Rome.") == [
        f"What browser is the user agent {agent}", "Then book a flight to Rome"]
    assert split_request('Send "see you soon; bring snacks" to Ana; then call Bob') == [
        'Send "see you soon; bring snacks" to Ana', "then call Bob"]
    # outside quotes the split is as before
    assert split_request("Book a table for two; also check the weather in Rome") == [
        "Book a table for two", "also check the weather in Rome"]


def test_a_part_that_acts_on_what_an_earlier_part_found_is_a_step_of_its_own():
    from guard.checks.relevance import split_request

    assert split_request("Find a vegan chili recipe under 45 minutes, get the ingredients for 6 people, and add them all to my shopping list.") == [
        "Find a vegan chili recipe under 45 minutes, get the ingredients for 6 people", "add them all to my shopping list"]
    assert split_request("Translate this paragraph and email it to Sam") == ["Translate this paragraph", "email it to Sam"]
    # Everyday negatives: a part that only shapes the earlier one, or is too short to be a step, stays with it.
    assert split_request("Search for papers on RAG and sort them by date") == ["Search for papers on RAG and sort them by date"]
    assert split_request("Find the cheapest flight to Paris and book it") == ["Find the cheapest flight to Paris, book it"]
    assert split_request("List my open tickets and show me the oldest of them") == ["List my open tickets, show me the oldest of them"]


def test_a_comma_or_a_colon_before_any_acting_verb_starts_a_part():
    from guard.checks.relevance import split_request

    assert split_request("goodnight mode pls: lock every door, turn off all the downstairs lights") == [
        "goodnight mode pls", "lock every door", "turn off all the downstairs lights"]
    assert split_request("Deploy build 42 to staging, restart the worker pool") == ["Deploy build 42 to staging", "restart the worker pool"]
    # Everyday negatives: words that act in a tool's name but describe here, a note's label, a name.
    assert split_request("find me a hotel near the station, close to the river") == ["find me a hotel near the station, close to the river"]
    assert split_request("reminder: dentist at 3 tomorrow") == ["reminder: dentist at 3 tomorrow"]
    assert split_request("book a table for Sam, Mark and Jo, set for 7pm") == ["book a table for Sam, Mark and Jo, set for 7pm"]
