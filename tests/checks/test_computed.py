"""Values worked out from numbers the conversation holds, tool results included: a total over a
returned list, a multiple the user asked for. The negatives are everyday requests."""

from __future__ import annotations

import json

from guard import Guard
from guard.checks.computed import asked_multiple, birth_year, day_after_sibling, result_total
from guard.taxonomy import Category

SPENT = json.dumps({"transactions": [{"merchant": "Trader Joe's", "amount": -84.12}, {"merchant": "Costco", "amount": -132.55},
                                     {"merchant": "Safeway", "amount": -61.3}, {"merchant": "Whole Foods", "amount": -97.03}]})


def test_a_total_of_one_field_over_a_returned_list() -> None:
    assert result_total(375.0, [(2, SPENT)]) == (2, "the sum of 4 amount values -> 375.0")
    assert result_total("375.00", [(2, SPENT)]) is not None
    # Everyday negatives: one item's amount alone is no total, another sum, a list of one.
    assert result_total(84.12, [(2, SPENT)]) is None
    assert result_total(400.0, [(2, SPENT)]) is None
    assert result_total(84.12, [(2, json.dumps({"transactions": [{"amount": -84.12}]}))]) is None
    assert result_total(1.0, [(2, "not json at all")]) is None


def test_a_multiple_the_user_asked_for_of_a_number_beside_the_parameters_thing() -> None:
    held = [(1, "Classic Banana Bread (recipe_id: rcp_40112) serves 4. Ingredients: 3 ripe bananas, 1 egg.")]
    assert asked_multiple(8, "target_servings", "Double it please.", held, []) == (1, "double 4 (serves ingredients) -> 8")
    replicas = [(3, json.dumps({"name": "web", "replicas": 3}))]
    assert asked_multiple(6, "replicas", "double its replicas", [], replicas) is not None
    # Everyday negatives: nothing was asked to double, a number beside another thing (bananas), another factor.
    assert asked_multiple(8, "target_servings", "Make it for my family please.", held, []) is None
    assert asked_multiple(6, "target_servings", "Double it please.", held, []) is None
    assert asked_multiple(12, "target_servings", "Double it please.", held, []) is None


def test_a_transfer_of_the_total_a_tool_returned_is_not_asked_about() -> None:
    tools = [{"name": "get_transactions", "description": "List transactions.", "parameters": {"type": "object", "properties": {}}},
             {"name": "transfer", "description": "Move money between accounts.",
              "parameters": {"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]}}]
    messages = [{"role": "user", "content": "How much did I spend on groceries last month? Move that amount to checking."},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "get_transactions", "args": {}}]},
                {"role": "tool", "tool_call_id": "c1", "name": "get_transactions", "content": SPENT}]
    guard = Guard(tools)
    ok = guard.check({"name": "transfer", "args": {"amount": 375.0}, "id": "c2"}, messages)
    assert not [f for f in ok.findings if f.category is Category.UNGROUNDED_VALUE]
    made_up = guard.check({"name": "transfer", "args": {"amount": 500.0}, "id": "c2"}, messages)
    assert [f for f in made_up.findings if f.category is Category.UNGROUNDED_VALUE]


def test_a_returned_time_moved_by_a_length_the_user_said() -> None:
    from guard.checks.computed import shifted_result_time

    readings = [(3, json.dumps({"readings": [{"device_id": "snr-0x7a2", "value": 6.4, "ts": "2025-07-02T14:05:00Z"}]}))]
    said = [(4, "ok pull the last 6 hours for that one")]
    assert shifted_result_time("2025-07-02T08:05:00Z", said, readings) == (3, "2025-07-02T14:05:00Z - 6 hours -> 2025-07-02T08:05:00Z")
    # Everyday negatives: a length nobody said, a time written without the result's zone, no length at all.
    assert shifted_result_time("2025-07-02T09:05:00Z", said, readings) is None
    assert shifted_result_time("2025-07-02T08:05:00+02:00", said, readings) is None
    assert shifted_result_time("2025-07-02T08:05:00Z", [(4, "ok pull the history for that one")], readings) is None


def test_a_year_of_birth_from_a_year_and_an_age_the_conversation_gives() -> None:
    said = [(0, "can you find Patrick Sheehan in the 1911 Irish census, born about 1880? add his wife and kids")]
    household = [(2, json.dumps({"members": [{"name": "Margaret Sheehan", "age": 28}, {"name": "John Sheehan", "age": 5}]}))]
    assert birth_year(1883, "birth_year_approx", said, household) is not None
    assert birth_year(1906, "birthYear", said, household) is not None
    assert birth_year(1962, "year_of_birth", [(0, "I'm 62 years old, it's 2024")], []) is not None
    # Everyday negatives: a year no age gives, a parameter of another year, an age alone.
    assert birth_year(1890, "birth_year_approx", said, household) is None
    assert birth_year(1883, "census_year", said, household) is None
    assert birth_year(1883, "birth_year", [(0, "she is 28")], []) is None



def test_a_returned_day_moved_by_days_the_user_said() -> None:
    from guard.checks.computed import shifted_result_time

    reservation = [(3, json.dumps({"flights": [{"flight_number": "HAT083", "date": "2024-05-20"}]}))]
    said = [(1, "I need to push my Seattle flight back by one day.")]
    assert shifted_result_time("2024-05-21", said, reservation) == (3, "2024-05-20 + 1 day -> 2024-05-21")
    assert shifted_result_time("2024-05-27", [(1, "move it one week later")], reservation) is not None
    # Everyday negatives: two days nobody said, hours are no days, no shift said at all
    assert shifted_result_time("2024-05-22", said, reservation) is None
    assert shifted_result_time("2024-05-21", [(1, "push the flight back by 3 hours")], reservation) is None
    assert shifted_result_time("2024-05-21", [(1, "what time is my flight?")], reservation) is None


def test_a_number_with_a_control_character_as_its_space_is_read_not_raised() -> None:
    # found by the random-arguments test: \s reads "\x1f" as space, float() refused it
    from guard.checks.computed import _number

    assert _number("0\x1f") == 0.0 and _number(" 12.5\t") == 12.5 and _number("12a") is None


def test_a_percentage_the_user_said_applied_to_a_number_the_conversation_holds() -> None:
    from guard.checks.computed import percent_applied

    said = [(0, "quiero poner un 20% de descuento en todos los aceites de oliva")]
    results = [(2, '[{"id": 1184, "regular_price": "12.90"}, {"id": 1185, "regular_price": "18.50"}]')]
    assert percent_applied("10.32", said, results) is not None
    assert percent_applied(14.8, said, results) is not None
    assert percent_applied(2.58, said, results) is not None  # the discount itself
    # everyday negatives: another discount, no percentage said, a whole number near a result but not it
    assert percent_applied("10.53", said, results) is None
    assert percent_applied("10.32", [(0, "put the olive oils on sale")], results) is None
    assert percent_applied(10, said, results) is None  # 12.90 less 20% is 10.32, not 10


def test_a_percentage_is_no_base_of_itself() -> None:
    from guard.checks.computed import percent_applied

    assert percent_applied(1, [(0, "add another pair to my cart, I usually get 10% off")], []) is None


def test_a_product_of_two_numbers_the_conversation_holds() -> None:
    from guard.checks.computed import product_of_held

    said = [(0, "log the Adobe receipt, it was USD 82.49, in CAD please")]
    results = [(2, '{"pair": "USDCAD", "rate": 1.4187, "date": "2025-04-03"}')]
    assert product_of_held(117.03, said, results) is not None
    assert product_of_held(58.14, said, results) is not None  # the other way: 82.49 / 1.4187
    # everyday negatives: a made-up amount, a whole number, nothing returned to multiply by
    assert product_of_held(117.31, said, results) is None
    assert product_of_held(117, said, results) is None
    assert product_of_held(117.03, said, []) is None


def test_the_numbers_held_are_read_lazily_and_bounded() -> None:
    from guard.checks import computed

    huge = " ".join(str(n) for n in range(100_000))
    held = computed._held_numbers(((1, huge), (2, "a 15% tip on 40")))
    assert len(held) == computed._BASES
    assert held[0] == (2, 40.0)  # the latest message first; its percentage is no amount
    assert (2, 15.0) not in held


def test_a_date_that_is_another_date_of_the_call_plus_days_the_conversation_states() -> None:
    terms = [(3, json.dumps({"clients": [{"client_id": "cli_0193", "payment_terms_days": 15}]}))]
    siblings = {"issue_date": "2025-04-30", "due_date": "2025-05-15"}
    assert day_after_sibling("2025-05-15", siblings, [], terms) is not None
    assert day_after_sibling("2025-06-29", {"check_in": "2025-06-15"}, [(0, "two weeks, so 14 days from the 15th")], []) is not None
    assert day_after_sibling("2025-05-30", {"invoice_date": "2025-04-30"}, [(0, "bill them, net 30 as usual")], []) is not None
    # everyday negatives: a gap no number of days gives; fifteen of something else; no other date in the call
    assert day_after_sibling("2025-05-20", siblings | {"due_date": "2025-05-20"}, [], terms) is None
    assert day_after_sibling("2025-05-15", siblings, [(0, "invoice them for the 15 hours of design work")], []) is None
    assert day_after_sibling("2025-05-15", {"due_date": "2025-05-15"}, [], terms) is None


def test_a_stay_that_ends_the_nights_the_booking_holds_after_its_new_start() -> None:
    booking = [(2, json.dumps({"reservations": [{"check_in": "2025-12-20", "check_out": "2025-12-22", "nights": 2}]}))]
    assert day_after_sibling("2025-12-23", {"check_in": "2025-12-21"}, [], booking) is not None
    assert day_after_sibling("2025-12-24", {"check_in": "2025-12-21"}, [(0, "move it to the 21st, 3 nights please")], []) is not None
    # everyday negatives: a night more than the booking holds; nights of something else than a count; no start in the call
    assert day_after_sibling("2025-12-24", {"check_in": "2025-12-21"}, [], booking) is None
    assert day_after_sibling("2025-12-23", {"check_in": "2025-12-21"}, [(0, "we had two late nights at the office")], []) is None
    assert day_after_sibling("2025-12-23", {"room": "HNR-02"}, [], booking) is None


def test_the_end_of_a_span_whose_length_is_said_in_another_language() -> None:
    from guard.checks.computed import span_end

    start = "2025-03-14T15:00:00+09:00"
    assert span_end("2025-03-14T16:00:00+09:00", start, [(1, "明日の午後3時から1時間、田中さんとの打ち合わせを入れて")], []) is not None
    assert span_end("2025-03-14T16:00:00+09:00", start, [(1, "mañana a las 3 de la tarde, durante una hora")], []) is not None
    assert span_end("2025-03-14T15:45:00+09:00", start, [(1, "встреча завтра в 15:00 на 45 минут")], []) is not None
    # Everyday negatives: another length than the one said, no length at all, an hour of the day is no length.
    assert span_end("2025-03-14T17:00:00+09:00", start, [(1, "明日の午後3時から1時間、田中さんとの打ち合わせを入れて")], []) is None
    assert span_end("2025-03-14T16:00:00+09:00", start, [(1, "mañana a las 3 de la tarde, con Ana")], []) is None
    assert span_end("2025-03-14T18:00:00+09:00", start, [(1, "reunião amanhã às 3 horas da tarde")], []) is None
