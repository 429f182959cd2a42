"""Grounding: every argument value is traced to the schema, the conversation or a tool result."""

import json
from datetime import datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard import Guard
from guard.budgets import GuardState
from guard.checks import CheckContext, grounding, repetition
from guard.checks.grounding import GroundingMatch
from guard.conversation import Conversation
from guard.models import ToolCall
from guard.policy import Policy
from guard.registry import ToolRegistry, ToolSpec
from guard.taxonomy import Category

NOW = datetime(2021, 9, 27, 10)

PARAMETERS = {
    "type": "object",
    "properties": {
        "from_city": {"type": "string", "description": "departure city"},
        "to_city": {"type": "string", "description": "arrival city"},
        "when": {"type": "string"},
        "count": {"type": "integer"},
        "minutes": {"type": "integer"},
        "ratio": {"type": "number"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "currency": {"type": "string", "default": "EUR"},
        "sort": {"type": "string", "examples": ["price", "duration"]},
        "direct": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "trip": {
            "type": "object",
            "properties": {"legs": {"type": "array", "items": {"type": "object", "properties": {"city": {"type": "string"}}}}},
        },
        "hotel_id": {"type": "integer"},
        "hotel": {"type": "string"},
        "recipient": {"type": "string", "description": "who receives the contract"},
        "query": {"type": "string"},
        "note": {"type": "string"},
    },
}


def context(args: Any, messages: list[Any], policy: Policy | None = None, semantic: Any = None) -> CheckContext:
    spec = ToolSpec.from_any({"name": "t", "parameters": PARAMETERS})
    return CheckContext(
        call=ToolCall(name="t", args=args, id="c9"),
        args=args,
        spec=spec,
        registry=ToolRegistry([spec]),
        conversation=Conversation.from_messages(messages, now=NOW),
        state=GuardState(),
        policy=policy or Policy(),
        semantic=semantic,
    )


def findings(args: dict[str, Any], messages: list[Any], **kw: Any) -> list[str]:
    return [f.path for f in grounding.check(context(args, messages, **kw))]


def sources(args: dict[str, Any], messages: list[Any], **kw: Any) -> dict[str, GroundingMatch | None]:
    return {path: match for path, _, match in grounding.trace(context(args, messages, **kw))}


SEARCH = {"role": "assistant", "content": "", "tool_calls": [{"name": "search", "args": {}, "id": "c1"}]}


def result(content: Any) -> dict[str, Any]:
    return {"role": "tool", "content": json.dumps(content), "tool_call_id": "c1"}


# --- what grounds a value --------------------------------------------------------------------


def test_value_said_by_the_user_is_grounded_despite_case_and_punctuation():
    assert findings({"from_city": "new-york"}, [("user", "Flights from New York, please.")]) == []


def test_value_from_a_system_message_is_grounded():
    match = sources({"from_city": "Paris"}, [("system", "The user lives in Paris."), ("user", "book it")])["$.from_city"]
    assert match.source == "system" and match.message_index == 0


def test_invented_value_is_flagged_with_its_path_and_what_was_searched():
    ctx = context({"from_city": "Berlin", "to_city": "Rome"}, [("user", "I want to fly to Rome")])
    [finding] = grounding.check(ctx)
    assert finding.category is Category.UNGROUNDED_VALUE
    assert finding.check == "grounding" and finding.rule == "ungrounded" and finding.tool == "t"
    assert finding.path == "$.from_city" and finding.value == "Berlin"
    assert finding.message == "'from_city' = 'Berlin' appears nowhere in the conversation or earlier tool results"
    assert finding.evidence["searched"] == {"messages": 1, "tool_results": 0}
    assert grounding.nearest("Berlin", ctx.conversation.grounding_index)["score"] < 0.5  # no near miss
    assert grounding.nearest("Rom", ctx.conversation.grounding_index) == {"score": 1.0, "span": "rom"}  # in "rome"


def test_invented_value_deep_in_nested_arguments_is_flagged_at_its_path():
    args = {"trip": {"legs": [{"city": "Rome"}, {"city": "Oslo"}]}}
    assert findings(args, [("user", "a trip to Rome")]) == ["$.trip.legs[1].city"]


def test_each_list_item_is_traced_on_its_own():
    assert findings({"tags": ["red", "green", "blue"]}, [("user", "only red and blue ones")]) == ["$.tags[1]"]


def test_a_short_word_is_grounded_by_its_plural():
    # too short for the fuzzy match, still found as the plural the user said
    assert findings({"tags": ["bug"]}, [("user", "in acme/api find open bugs nobody's assigned to")]) == []
    assert findings({"tags": ["cat", "box"]}, [("user", "photos of my cats in boxes")]) == []
    # Everyday negatives: another word that starts the same, a word inside another, a stopword.
    assert findings({"tags": ["bug"]}, [("user", "find the open bus routes")]) == ["$.tags[0]"]
    assert findings({"tags": ["bug"]}, [("user", "he debugs the app")]) == ["$.tags[0]"]
    assert findings({"tags": ["car"]}, [("user", "take care of it")]) == ["$.tags[0]"]


def test_a_word_is_grounded_by_its_singular_or_plural():
    assert findings({"exclude": ["peanuts"]}, [("system", "User profile: severe peanut allergy.")]) == []
    assert findings({"fruit": ["berry"]}, [("user", "a smoothie with berries")]) == []
    assert findings({"items": ["boxes"]}, [("user", "order one more box")]) == []
    # Everyday negatives: a word that starts the same, another nut, a verb form
    assert findings({"items": ["boxes"]}, [("user", "watch the boxing match")]) == ["$.items[0]"]
    assert findings({"exclude": ["almonds"]}, [("user", "I have a peanut allergy")]) == ["$.exclude[0]"]
    assert findings({"tags": ["tickets"]}, [("user", "the ticketing desk")]) == ["$.tags[0]"]


def test_words_the_user_typed_clipped_ground_the_whole_words():
    assert findings({"query": "introduction to statistics"}, [("user", "enroll me in intro stats for next term")]) == []
    assert findings({"query": "calculus exam information"}, [("user", "need info on the calc exam")]) == []
    # Everyday negatives: a clipped word that is another word's start, a word nobody said, a single word.
    assert findings({"query": "introduction to physics"}, [("user", "enroll me in intro stats")]) == ["$.query"]
    assert findings({"query": "modern art museum"}, [("user", "the mod museum")]) == ["$.query"]  # "art" was not said
    assert findings({"recipient": "information desk"}, [("user", "send it to the info desk")]) == ["$.recipient"]  # a recipient is matched strictly
    assert findings({"query": "information"}, [("user", "the info desk")]) == ["$.query"]


def test_number_written_in_words_grounds_digits():
    assert findings({"count": 25}, [("user", "for twenty five people")]) == []


def test_number_with_thousands_separator_grounds_the_plain_number():
    assert findings({"count": 1000}, [("user", "a budget of 1,000 euros")]) == []


def test_numeric_string_is_compared_as_a_number():
    assert findings({"note": "12"}, [("user", "a dozen eggs")]) == []


def test_quantity_in_another_unit_grounds_the_converted_number():
    assert findings({"minutes": 120}, [("user", "it takes 2 hours")]) == []


def test_percent_grounds_the_fraction():
    assert findings({"ratio": 0.5}, [("user", "give them 50% off")]) == []


def test_number_that_was_never_mentioned_is_flagged():
    assert findings({"count": 7}, [("user", "for 2 people")]) == ["$.count"]


def test_relative_date_and_time_ground_an_iso_datetime():
    match = sources({"when": "2021-09-28 14:00:00"}, [("user", "Book it for tomorrow at 2pm")])["$.when"]
    assert match.source == "user" and match.span == "tomorrow at 2 pm"


def test_datetime_whose_time_was_never_said_is_flagged():
    assert findings({"when": "2021-09-28 16:00:00"}, [("user", "tomorrow at 2pm")]) == ["$.when"]


def test_date_one_digit_off_is_not_fuzzily_grounded():
    assert findings({"when": "2021-09-29"}, [("user", "on 2021-09-28")]) == ["$.when"]


def test_code_one_digit_off_is_not_fuzzily_grounded():
    assert findings({"note": "order 12346"}, [("user", "where is order 12345?")]) == ["$.note"]


def test_small_misspelling_of_a_long_word_is_grounded_fuzzily():
    match = sources({"hotel": "Grand Budapest Hotell"}, [("user", "the Grand Budapest Hotel please")])["$.hotel"]
    assert match.source == "user" and 0.9 <= match.score < 1.0


def test_phrase_whose_words_were_all_said_in_another_order_is_grounded():
    assert findings({"query": "New York flights"}, [("user", "show me flights to new york")]) == []


def test_phrase_with_a_word_nobody_said_is_flagged():
    assert findings({"query": "cheap Boston flights"}, [("user", "show me flights to new york")]) == ["$.query"]


def test_value_from_earlier_tool_result_is_grounded():
    messages = [("user", "find me a hotel"), SEARCH, result({"hotels": [{"id": 98765, "name": "Zürich Inn"}]})]
    traced = sources({"hotel_id": 98765, "hotel": "Zürich Inn"}, messages)
    assert traced["$.hotel_id"] == GroundingMatch("tool_result", 2, "98765", 1.0)
    assert traced["$.hotel"].source == "tool_result" and traced["$.hotel"].span == "zürich inn"


def test_json_escaped_text_in_a_tool_result_grounds_the_unescaped_value():
    messages = [SEARCH, {"role": "tool", "content": '{"name": "Z\\u00fcrich Inn"}', "tool_call_id": "c1"}]
    assert findings({"hotel": "Zürich Inn"}, messages) == []


def test_what_an_assistant_said_grounds_nothing():
    assert findings({"from_city": "Berlin"}, [("user", "hi"), ("assistant", "Shall I book Berlin?")]) == ["$.from_city"]


def test_user_message_is_preferred_to_a_tool_result():
    messages = [("user", "Oslo please"), SEARCH, result({"city": "Oslo"})]
    assert sources({"from_city": "Oslo"}, messages)["$.from_city"].source == "user"


def test_schema_default_enum_and_examples_ground_values():
    traced = sources({"currency": "eur", "unit": "Celsius", "sort": "price"}, [("user", "hi")])
    assert {p: m.span for p, m in traced.items()} == {"$.currency": "default", "$.unit": "enum", "$.sort": "examples"}
    assert all(m.source == "schema" and m.message_index is None for m in traced.values())


def test_booleans_are_choices_the_schema_offers():
    assert sources({"direct": False}, [])["$.direct"] == GroundingMatch("schema", None, "boolean", 1.0)


def test_boolean_written_as_text_for_a_boolean_parameter_is_a_choice_too():
    assert findings({"direct": "yes"}, []) == []


# --- what is skipped -------------------------------------------------------------------------


def test_empty_and_missing_values_are_not_traced():
    args = {"note": "  ", "tags": [], "trip": {}, "hotel": None, "query": "?!"}
    assert grounding.trace(context(args, [])) == []


def test_ignored_parameters_and_short_strings_are_not_traced():
    policy = Policy.model_validate({"checks": {"grounding": {"ignore_params": ["note"], "min_value_length": 3}}})
    assert findings({"note": "invented", "hotel": "ab", "query": "xyz"}, [], policy=policy) == ["$.query"]


def test_a_consequential_value_is_traced_at_any_length_and_matched_strictly():
    """Loosened matching (a lower fuzzy score, short strings skipped) applies to ordinary values; an
    identifier, recipient, contact or amount is still traced when short, and a near miss of it is
    another value, not a match (guard.checks.risk)."""
    loose = Policy.model_validate({"checks": {"grounding": {"min_fuzzy_score": 80, "min_value_length": 4}}})
    said = [{"role": "user", "content": "Send the contract to Johanna Schmidt and book the Grand Hotel Bellevue."}]
    # partial ratios: "johanna smith" 84.6, "grand hotl belvu" 87.5, "johanna schmitt" 93.3
    assert findings({"recipient": "Johanna Smith"}, said, policy=loose) == ["$.recipient"]  # another person
    assert findings({"hotel": "Grand Hotl Belvu"}, said, policy=loose) == []  # ordinary: the loose score holds
    assert findings({"recipient": "Johanna Schmitt"}, said, policy=loose) == []  # above the consequential floor (90)
    stricter = Policy.model_validate({"checks": {"grounding": {"consequential_min_fuzzy_score": 95}}})
    assert findings({"recipient": "Johanna Schmitt"}, said, policy=stricter) == ["$.recipient"]
    # short strings: skipped when ordinary, traced when consequential
    assert findings({"hotel": "Ibs", "recipient": "Al"}, said, policy=loose) == ["$.recipient"]
    # by default (90 and 90, every length) the ordinary near miss is a finding as before
    assert findings({"hotel": "Grand Hotl Belvu", "recipient": "Johanna Smith"}, said) == ["$.hotel", "$.recipient"]


def test_disabled_check_and_unknown_tool_report_nothing():
    policy = Policy.model_validate({"checks": {"grounding": {"enabled": False}}})
    assert findings({"from_city": "Berlin"}, [], policy=policy) == []
    ctx = context({"from_city": "Berlin"}, [])
    assert grounding.check(CheckContext(**{**ctx.__dict__, "spec": None})) == []


# --- the seam and the trace ------------------------------------------------------------------


class Paraphrases:
    """A fake semantic matcher that knows one nickname (one GeoNames does not list: "the Big
    Apple" is a name of New York City there, grounded without a matcher)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str, str]] = []

    def match(self, value: str, param: str, description: str, conversation: Conversation) -> GroundingMatch | None:
        self.asked.append((value, param, description))
        for i, msg in enumerate(conversation.messages):
            if value == "Los Angeles" and "the City of Angels" in msg.content:
                return GroundingMatch("user", i, "the City of Angels", 0.83)
        return None


def test_paraphrase_matcher_grounds_what_lexical_matching_cannot():
    matcher = Paraphrases()
    messages = [("user", "I'm flying to the City of Angels")]
    traced = sources({"to_city": "Los Angeles", "from_city": "Berlin"}, messages, semantic=matcher)
    assert traced["$.to_city"] == GroundingMatch("user", 0, "the City of Angels", 0.83)
    assert traced["$.from_city"] is None
    assert matcher.asked == [("Los Angeles", "to_city", "arrival city"), ("Berlin", "from_city", "departure city")]


def test_paraphrase_matcher_is_not_asked_about_lexically_grounded_values():
    matcher = Paraphrases()
    assert findings({"to_city": "Rome"}, [("user", "to Rome")], semantic=matcher) == []
    assert matcher.asked == []


def test_trace_names_the_source_message_and_span_of_every_value():
    messages = [
        ("system", "Prices are in EUR."),
        ("user", "Two tickets to Lisbon for next Monday"),
        SEARCH,
        result({"flights": [{"id": "TP1234"}]}),
    ]
    args = {"to_city": "Lisbon", "count": 2, "when": "2021-10-04", "note": "TP1234", "direct": True, "from_city": "Faro"}
    assert grounding.trace(context(args, messages)) == [
        ("$.to_city", "Lisbon", GroundingMatch("user", 1, "lisbon", 1.0)),
        ("$.count", 2, GroundingMatch("user", 1, "two", 1.0)),
        ("$.when", "2021-10-04", GroundingMatch("user", 1, "next monday", 1.0)),
        ("$.note", "TP1234", GroundingMatch("tool_result", 3, "tp 1234", 1.0)),
        ("$.direct", True, GroundingMatch("schema", None, "boolean", 1.0)),
        ("$.from_city", "Faro", None),
    ]


def test_a_growing_conversation_gets_a_fresh_index():
    first = context({"from_city": "Oslo"}, [("user", "hello")])
    assert grounding.check(first)
    later = context({"from_city": "Oslo"}, [("user", "hello"), ("user", "from Oslo")])
    assert grounding.check(later) == []


# --- robustness ------------------------------------------------------------------------------

#: Lone surrogates, combining marks, ligatures, circled digits, NUL, bidi overrides, İ and ß
#: (which casefold to longer strings), mixed with digits and punctuation.
odd_text = st.text(alphabet=st.sampled_from("\ud800\udfff\u0301\ufb01\u2460\x00\u202e\u0130\u00df a1.:-%"), max_size=12)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(exclude_categories=()), max_size=30),
    odd_text,
    st.sampled_from(["2021-09-28", "2021-09-28 14:00:00", "14:00", "twenty five", "1,000", "50%", "yes"]),
)
json_ish = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
texts = st.text(alphabet=st.characters(exclude_categories=()), max_size=60) | odd_text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    args=st.dictionaries(st.sampled_from([*PARAMETERS["properties"], "extra"]) | st.text(max_size=5), json_ish, max_size=6),
    said=texts,
    returned=texts | json_ish.map(lambda v: json.dumps(v, allow_nan=True)),
)
def test_random_arguments_never_make_the_checks_raise(args, said, returned):
    messages = [
        ("user", said),
        {"role": "assistant", "content": "", "tool_calls": [{"name": "t", "args": args, "id": "c1"}]},
        {"role": "tool", "content": returned, "tool_call_id": "c1", "status": "error"},
    ]
    ctx = context(args, messages)
    assert isinstance(grounding.check(ctx), list)
    assert isinstance(repetition.check(ctx), list)


def test_thousands_separators_do_not_split_numbers_in_text():
    assert grounding.check(context({"query": "50000-100000"}, [("user", "incomes of 50,000-100,000 please")])) == []


def test_day_boundary_times_need_only_their_date():
    said = [("user", "records from October 1st to October 31st, 2025")]
    assert grounding.check(context({"when": "2025-10-31T23:59:59Z"}, said)) == []
    assert grounding.check(context({"when": "2025-10-31T15:30:00"}, said)) != []


def test_the_end_of_a_range_takes_the_month_said_once():
    assert grounding.check(context({"when": "2021-10-16"}, [("user", "book a room from October 14th to 16th")])) == []


def test_earlier_assistant_turns_ground_but_the_current_one_does_not():
    earlier = [("user", "create the template"), ("assistant", "Created: its id is tpl_12345."), ("user", "now show its metrics")]
    assert grounding.check(context({"query": "tpl_12345"}, earlier)) == []
    current = [("user", "show the metrics of my template"), ("assistant", "I will use tpl_12345.")]
    (finding,) = grounding.check(context({"query": "tpl_12345"}, current))
    assert finding.category is Category.UNGROUNDED_VALUE


def test_a_batching_matcher_gets_all_unmatched_values_in_one_call():
    class Batching:
        def __init__(self):
            self.batches = []

        def match_many(self, items, conversation):
            self.batches.append([value for value, _, _ in items])
            return [GroundingMatch("user", 0, value, 0.9) if value == "the City of Angels" else None for value, _, _ in items]

    matcher = Batching()
    ctx = context({"from_city": "Berlin", "to_city": "the City of Angels", "hotel": "Hilton"}, [("user", "from Berlin to Los Angeles")], semantic=matcher)
    (finding,) = grounding.check(ctx)
    assert matcher.batches == [["the City of Angels", "Hilton"]]  # Berlin was grounded lexically: not asked
    assert finding.path == "$.hotel"


def test_a_derivation_reads_the_parameters_description_and_the_conversations_date():
    """"minutes" counts in minutes (its name), so "an hour" derives 60; "when" reaches the date a
    week after the conversation's own date (NOW), and not a day later."""
    said = [("user", "Remind me an hour before, and again in the next week.")]
    match = sources({"minutes": 60}, said)["$.minutes"]
    assert match is not None and match.source == "derived" and match.span == "an hour -> 60"
    week_later = (NOW + timedelta(weeks=1)).date().isoformat()
    assert findings({"when": week_later}, said) == []
    assert findings({"when": (NOW + timedelta(weeks=1, days=1)).date().isoformat()}, said) == ["$.when"]
    assert findings({"minutes": 61}, said) == ["$.minutes"]


def _ungrounded(tool: dict[str, Any], args: dict[str, Any], said: str) -> list[str]:
    from guard import Guard

    decision = Guard([tool]).check({"name": tool["name"], "args": args, "id": "c1"}, [{"role": "user", "content": said}])
    return [f.path for f in decision.findings if f.category.value == "ungrounded_value"]


def test_an_items_place_in_its_list_numbers_it_in_a_field_that_orders_them() -> None:
    signer = {"type": "object", "properties": {"name": {"type": "string"}, "email": {"type": "string"}, "routingOrder": {"type": "integer"}}}
    tool = {"name": "send_envelope", "description": "Send for signature.",
            "parameters": {"type": "object", "properties": {"signers": {"type": "array", "items": signer}}}}
    said = "tenant Priya Nair priya@example.com signs first, then me, Sam Okafor sam@example.com"
    signers = [{"name": "Priya Nair", "email": "priya@example.com", "routingOrder": 1}, {"name": "Sam Okafor", "email": "sam@example.com", "routingOrder": 2}]
    assert _ungrounded(tool, {"signers": signers}, said) == []
    # Everyday negatives: a number off the item's place, a field that does not order the items.
    signers[1]["routingOrder"] = 5
    assert _ungrounded(tool, {"signers": signers}, said) == ["$.signers[1].routingOrder"]
    signers[1]["routingOrder"] = 2
    signers[0]["routingOrder"] = 3  # the first signer numbered third: no place in the list says so
    assert _ungrounded(tool, {"signers": signers}, said) == ["$.signers[0].routingOrder"]
    signer["properties"]["seats"] = {"type": "integer"}
    assert _ungrounded(tool, {"signers": [{"name": "Priya Nair", "email": "priya@example.com", "seats": 2}]}, said) == ["$.signers[0].seats"]


def test_a_number_is_converted_to_the_unit_its_sibling_field_names() -> None:
    item = {"type": "object", "properties": {"food_name": {"type": "string"}, "quantity": {"type": "number"},
                                                "unit": {"type": "string", "enum": ["g", "ml", "cup", "plate"]}}}
    tool = {"name": "log_meal", "description": "Log foods.", "parameters": {"type": "object", "properties": {"items": {"type": "array", "items": item}}}}
    said = "log lunch: 6 oz grilled chicken breast"
    assert _ungrounded(tool, {"items": [{"food_name": "grilled chicken breast", "quantity": 170, "unit": "g"}]}, said) == []
    # Everyday negatives: the number in another unit than its sibling says, a sibling that is no unit.
    assert _ungrounded(tool, {"items": [{"food_name": "grilled chicken breast", "quantity": 170, "unit": "ml"}]}, said) == ["$.items[0].quantity"]
    assert _ungrounded(tool, {"items": [{"food_name": "grilled chicken breast", "quantity": 170, "unit": "plate"}]}, said) == ["$.items[0].quantity"]


def test_what_the_tools_description_says_of_a_parameter_reads_as_its_description():
    from guard import Guard

    def decide(description: str, args: dict[str, Any], said: str) -> list[str]:
        props = {k: {"type": "integer" if isinstance(v, int) else "string"} for k, v in args.items()}
        tool = {"name": "refunds_create", "description": description, "parameters": {"type": "object", "properties": props}}
        return [f.path for f in Guard([tool]).check({"name": "refunds_create", "args": args, "id": "1"}, [("user", said)]).findings]

    cents = "Refund a charge. amount is in the smallest currency unit (cents); omit for a full refund."
    assert decide(cents, {"amount": 1250}, "refund her the $12.50 difference") == []
    airport = "Search rental cars. pickup_location: IATA airport code or address. Times are local."
    assert decide(airport, {"pickup_location": "DEN"}, "rent a compact at Denver airport") == []
    # Everyday negatives: a description that says it of another parameter, or says nothing of it,
    # and another airport.
    assert decide("Refund a charge. fee is in cents.", {"amount": 1250}, "refund her the $12.50 difference") == ["$.amount"]
    assert decide("Refund a charge.", {"amount": 1250}, "refund her the $12.50 difference") == ["$.amount"]
    assert decide(airport, {"pickup_location": "LAX"}, "rent a compact at Denver airport") == ["$.pickup_location"]


def test_a_value_in_a_script_without_spaces_is_found_inside_a_longer_run() -> None:
    tool = {"name": "search_trains", "description": "Search trains.", "parameters": {"type": "object", "properties": {
        "origin": {"type": "string"}, "destination": {"type": "string"}}}}
    said = "明日、東京から新大阪までの新幹線を調べて。"
    assert _ungrounded(tool, {"origin": "東京", "destination": "新大阪"}, said) == []
    assert _ungrounded(tool, {"origin": "서울", "destination": "부산"}, "서울에서 부산까지 기차 찾아줘") == []
    # Everyday negatives: a place nobody wrote, in either script, and one character alone
    assert _ungrounded(tool, {"origin": "東京", "destination": "京都"}, said) == ["$.destination"]
    assert _ungrounded(tool, {"origin": "서울", "destination": "부산"}, "서울에서 대구까지 기차 찾아줘") == ["$.destination"]
    assert _ungrounded(tool, {"origin": "東京", "destination": "大"}, said) == ["$.destination"]


def test_an_end_is_its_start_plus_the_length_stated_or_the_length_the_event_had() -> None:
    from guard import Guard

    event = {"type": "object", "properties": {"title": {"type": "string"}, "start": {"type": "string"}, "end": {"type": "string"}}}
    tool = {"name": "create_event", "description": "Create an event.", "parameters": event}

    def flagged(args: dict[str, Any], messages: list[dict[str, Any]]) -> list[str]:
        decision = Guard([tool]).check({"name": "create_event", "args": args, "id": "c9"}, messages)
        return [f.path for f in decision.findings if f.category.value == "ungrounded_value"]

    today = {"role": "system", "content": "Today is Wednesday, June 11, 2025."}
    ask = {"role": "user", "content": "Put lunch with Priya on my calendar next Tuesday at 12:30, an hour."}
    assert flagged({"title": "Lunch with Priya", "start": "2025-06-17T12:30:00", "end": "2025-06-17T13:30:00"}, [today, ask]) == []
    longer = {"role": "user", "content": "Put lunch with Priya on my calendar next Tuesday at 12:30 for 1.5 hours."}
    assert flagged({"title": "Lunch with Priya", "start": "2025-06-17T12:30:00", "end": "2025-06-17T14:00:00"}, [today, longer]) == []
    # Everyday negatives: another length than the one said; no length said; an end before its start
    assert flagged({"title": "Lunch with Priya", "start": "2025-06-17T12:30:00", "end": "2025-06-17T14:00:00"}, [today, ask]) == ["$.end"]
    plain = {"role": "user", "content": "Put lunch with Priya on my calendar next Tuesday at 12:30."}
    assert flagged({"title": "Lunch with Priya", "start": "2025-06-17T12:30:00", "end": "2025-06-17T13:30:00"}, [today, plain]) == ["$.end"]
    assert flagged({"title": "Lunch with Priya", "start": "2025-06-17T12:30:00", "end": "2025-06-17T11:30:00"}, [today, ask]) == ["$.end"]
    # moved: the end keeps the length the returned event had
    moved = [
        {"role": "system", "content": "Today is 2025-04-16."},
        {"role": "user", "content": "what's on this afternoon"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "l1", "name": "create_event", "args": {"title": "x"}}]},
        {"role": "tool", "tool_call_id": "l1", "content": '[{"title": "Dentist", "start": "2025-04-16T15:00:00-05:00", "end": "2025-04-16T15:45:00-05:00"}]'},
        {"role": "user", "content": "they called, push the dentist to 4:30 pm"},
    ]
    assert flagged({"title": "Dentist", "start": "2025-04-16T16:30:00-05:00", "end": "2025-04-16T17:15:00-05:00"}, moved) == []
    assert flagged({"title": "Dentist", "start": "2025-04-16T16:30:00-05:00", "end": "2025-04-16T17:30:00-05:00"}, moved) == ["$.end"]


def test_a_code_another_tool_lists_for_a_parameter_of_the_same_name_is_the_apis_own():
    def tool(name: str, card: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "parameters": {"type": "object", "properties": {"discount_card": card, "note": {"type": "string"}}}}

    tools = [tool("search_journeys", {"type": "string", "enum": ["NONE", "BC25_2", "BC50_2"]}), tool("get_offers", {"type": "string"})]
    said = [("user", "2nd class, I have a BahnCard 25")]
    assert Guard(tools).check({"name": "get_offers", "args": {"discount_card": "BC25_2"}}, said).action.value == "allow"
    # everyday negatives: a code no tool lists, a listed code under another parameter's name, no tool lists any
    assert Guard(tools).check({"name": "get_offers", "args": {"discount_card": "BC75_2"}}, said).action.value != "allow"
    assert Guard(tools).check({"name": "get_offers", "args": {"note": "BC25_2"}}, said).action.value != "allow"
    assert Guard(tools[1:]).check({"name": "get_offers", "args": {"discount_card": "BC25_2"}}, said).action.value != "allow"


def _report_tool(description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {"name": "run_report", "description": description, "parameters": {"type": "object", "properties": properties}}


def test_a_parameter_without_a_description_reads_what_the_tool_says_of_its_head_noun():
    tool = _report_tool(
        "Run a report. Dates accept YYYY-MM-DD or relative values like 'today', 'yesterday', 'NdaysAgo'.",
        {"start_date": {"type": "string"}, "end_date": {"type": "string"}, "metric": {"type": "string"}},
    )
    said = [("user", "bounce rate for /pricing, last 30 days")]
    decision = Guard([tool]).check({"name": "run_report", "args": {"start_date": "30daysAgo", "end_date": "today"}}, said)
    assert not [f for f in decision.findings if f.category is Category.UNGROUNDED_VALUE]
    # everyday negatives: a number nobody said for N; a parameter whose head the description does not name; a keyword
    # the description gives as an example of a value ("e.g. 'primary'") with no template among its forms
    flagged = Guard([tool]).check({"name": "run_report", "args": {"start_date": "90daysAgo"}}, said)
    assert [f.value for f in flagged.findings if f.category is Category.UNGROUNDED_VALUE] == ["90daysAgo"]
    flagged = Guard([tool]).check({"name": "run_report", "args": {"metric": "today"}}, said)
    assert [f.value for f in flagged.findings if f.category is Category.UNGROUNDED_VALUE] == ["today"]
    calendars = _report_tool("List events. Calendars are named, e.g. 'primary', 'work', 'family'.", {"calendar": {"type": "string"}})
    flagged = Guard([calendars]).check({"name": "run_report", "args": {"calendar": "family"}}, [("user", "what's on tomorrow?")])
    assert [f.value for f in flagged.findings if f.category is Category.UNGROUNDED_VALUE] == ["family"]


def test_a_default_in_a_description_ends_its_sentence_before_the_tools_words_are_added():
    tool = {
        "name": "list_messages",
        "description": "Lists messages in a folder, newest first.",
        "parameters": {"type": "object", "properties": {"folder": {"type": "string", "description": "Folder/label name. Default INBOX"}}},
    }
    decision = Guard([tool]).check({"name": "list_messages", "args": {"folder": "INBOX"}}, [("user", "triage my unread pls")])
    assert not [f for f in decision.findings if f.category is Category.UNGROUNDED_VALUE]
    # everyday negative: another folder than the default
    decision = Guard([tool]).check({"name": "list_messages", "args": {"folder": "Receipts"}}, [("user", "triage my unread pls")])
    assert [f.value for f in decision.findings if f.category is Category.UNGROUNDED_VALUE] == ["Receipts"]


def test_a_bound_at_the_edge_of_a_day_the_user_named_is_that_day():
    """A date-time at a day's edge is its date (``normalise.Temporal``), for every rule that reads dates."""
    tool = {"name": "create_discount", "description": "Create a discount code.", "parameters": {"type": "object", "properties": {
        "ends_at": {"type": "string"}, "starts_at": {"type": "string"}}}}
    said = [("system", "Today is 2025-03-14."), ("user", "15% off from monday thru end of march")]
    decision = Guard([tool]).check({"name": "create_discount", "args": {"ends_at": "2025-03-31T23:59:59-07:00"}}, said)
    assert not [f for f in decision.findings if f.category is Category.UNGROUNDED_VALUE]
    # everyday negatives: the end of another day; the end of a day inside the month; an end at an hour nobody said
    for args in ({"ends_at": "2025-03-30T23:59:59-07:00"}, {"ends_at": "2025-03-15T23:59:59"}, {"ends_at": "2025-03-31T18:00:00"}):
        decision = Guard([tool]).check({"name": "create_discount", "args": args}, said)
        assert [f.value for f in decision.findings if f.category is Category.UNGROUNDED_VALUE] == list(args.values())


def test_a_weekday_or_month_written_short_grounds_its_full_name():
    tool = {"name": "add_task", "description": "Add a task.", "parameters": {"type": "object", "properties": {
        "due_string": {"type": "string", "description": "Natural-language due date"}}}}
    for said, value in (("add renew passport to Personal, p1, due next fri", "next friday"), ("book the trip for sept", "September")):
        decision = Guard([tool]).check({"name": "add_task", "args": {"due_string": value}}, [("user", said)])
        assert not [f for f in decision.findings if f.category is Category.UNGROUNDED_VALUE], value
    # everyday negatives: another weekday, another month, "fri" is no short form of "fridge"
    for said, value in (("due next fri", "next monday"), ("book the trip for sept", "October"), ("clean the fri shelf", "fridge")):
        decision = Guard([tool]).check({"name": "add_task", "args": {"due_string": value}}, [("user", said)])
        assert [f.value for f in decision.findings if f.category is Category.UNGROUNDED_VALUE] == [value]
