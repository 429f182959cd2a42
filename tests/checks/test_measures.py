"""Conversions of what the user said (quantities, units, currencies, time zones, periods a year)
ground; a value the words do not convert to stays ungrounded. The negatives are everyday requests."""

from __future__ import annotations

from datetime import date

import pytest

from guard import Guard
from guard.checks.derivations import derive
from guard.checks.measures import quantities, rounds_to
from guard.normalise import numbers_in
from guard.taxonomy import Category


def said(*texts: str) -> list[tuple[int, str]]:
    return list(enumerate(texts))


@pytest.mark.parametrize(
    ("text", "value", "param", "description"),
    [
        ("I'm 5 feet 10 inches tall.", 177.8, "height_cm", ""),
        ("I weigh 160 pounds.", 72.57, "weight", "Weight in kilograms"),
        ("I weigh 160 pounds.", 73, "weight_kg", ""),
        ("the field 2 meters from a point charge of 1 nC", 1e-09, "charge", "The charge in Coulombs"),
        ("2 moles in a 10 liter container", 0.01, "volume", "Volume in cubic meters"),
        ("Water boils at 100°C.", 212, "temperature", "Temperature in Fahrenheit"),
        ("a run of ninety minutes", 1.5, "duration_hours", ""),
        ("a recipe that takes under an hour and a half", 90, "max_total_time_minutes", ""),
        ("two and a half miles", 4.02, "distance_km", ""),
        ("Set the hallway thermostat to 60°F.", 15.5, "target_c", ""),  # a thermostat's half-degree step
        ("a drive at 60 mph", 96.56, "speed", "Speed in km/h"),
        ("the field 30 cm from a 2 µC point charge", 2e-06, "charge", "Charge in coulombs."),  # "point" is no unit after µC
    ],
)
def test_a_quantity_converted_to_the_parameters_unit_is_derived(text: str, value: float, param: str, description: str) -> None:
    derived = derive(value, param, said(text), description=description)
    assert derived is not None and derived[0] == 0


@pytest.mark.parametrize(
    ("text", "value", "param", "description"),
    [
        ("I'm 5 feet 10 inches tall.", 180, "height_cm", ""),  # a belief about the height, not a conversion
        ("Pack a 2 kg bag for the trip.", 3, "weight", "Weight in pounds"),  # 2 kg is 4.4 lb
        ("Meet me at 5 in the lobby.", 12.7, "length_cm", ""),  # "in" is a word before it is an inch
        ("Buy 7 apples and 3 pears.", 14, "count", ""),  # no unit: nothing to convert
        ("The recipe needs 250 grams of flour.", 0, "sugar_grams", ""),  # 0 rounds nothing but 0
        ("a recipe that takes under an hour and a half", 60, "max_total_time_minutes", ""),  # the half counts
        ("two and a half miles", 2.5, "distance_km", ""),  # 2.5 miles is 4.02 km
        ("She is one and a half", 18, "age_months", ""),  # no unit after the half
        ("Set the hallway thermostat to 60°F.", 16.5, "target_c", ""),  # 15.56 is no 16.5
        ("I weigh 160 pounds.", 72.5, "weight_kg", ""),  # the half step is a temperature's only (72.57)
        ("a 2 µC point charge", 2e-06 * 0.000352778, "charge", "Charge in coulombs."),  # µC times a typographic point
        ("we won by a 3 point margin", 0.0010583, "margin_m", ""),  # points are no length here
        ("cut a 12 point font", 0.004233, "size_m", ""),
    ],
)
def test_a_number_the_words_do_not_convert_to_is_not_derived(text: str, value: float, param: str, description: str) -> None:
    assert derive(value, param, said(text), description=description) is None


@pytest.mark.parametrize(
    ("text", "value", "derived"),
    [
        ("a circle with a radius of 7 centimeters", "cm", True),
        ("two cups of cooked rice", "cup", True),
        ("a sphere with a radius of 3 meters", "m", True),
        ("a circle with a radius of 7 centimeters", "mm", False),  # another unit
        ("Wait 5 min before you start.", "m", False),  # a minute, not a metre
        ("Send it to 3 people", "p", False),  # no quantity with a unit was said
        ("350 K in fahrenheit?", "degF", True),  # the unit asked for
        ("how far is it from here to the lake, in miles", "mi", True),
        ("350 K in fahrenheit?", "degC", False),
        ("pick the second one", "s", False),  # "second" is no unit asked for
        ("how far is it from here to the lake", "km", False),
    ],
)
def test_a_unit_is_derived_from_a_quantity_written_another_way(text: str, value: str, derived: bool) -> None:
    assert (derive(value, "unit", said(text)) is not None) is derived


@pytest.mark.parametrize(
    ("text", "value", "derived"),
    [
        ("Convert 100 US dollars to euros.", "USD", True),
        ("Convert 100 US dollars to euros.", "EUR", True),
        ("How much is 5,000 Japanese yen?", "JPY", True),
        ("Convert 20 dollars to euros.", "USD", True),  # "dollars" as English speakers mean it
        ("Convert 20 dollars to euros.", "CAD", False),  # Canadian dollars were not said
        ("Convert 100 US dollars to euros.", "GBP", False),
        ("I paid 30 pounds for it.", "GBP", True),  # pounds sterling, as English speakers mean it
        ("I paid 30 pounds for it.", "EGP", False),  # Egyptian pounds were not said
        # in other languages, and inside a run of characters without spaces
        ("帮我把100美元换算成人民币", "USD", True),
        ("帮我把100美元换算成人民币", "CNY", True),
        ("Quanto são 200 reais em euros?", "BRL", True),
        ("Wie viel sind 50 US-Dollar in Euro?", "USD", True),
        # everyday negatives: a dollar two countries call theirs, a coffee, yen nobody said
        ("¿Cuántos dólares son 100 euros?", "CAD", False),
        ("Un café americano y 3 euros de propina", "USD", False),
        ("帮我把100美元换算成人民币", "JPY", False),
        # "dollars" as people mean them in other languages too: US dollars
        ("100ドルって今何円？", "USD", True),
        ("¿Cuántos dólares son 100 euros?", "USD", True),
        ("Quanto fanno 20 dollari in euro?", "USD", True),
        # everyday negatives: yuan written 元 (a unit many currencies share), pesos, the yen of the same question
        ("这个100元", "USD", False),
        ("¿Cuántos pesos son 100 euros?", "USD", False),
        ("100ドルって今何円？", "CAD", False),
        # a name's plural from five ("гривень") and its head word in the next most written languages
        ("Скільки буде 1200 гривень в євро?", "UAH", True),
        ("berapa 500 ribu rupiah dalam dolar?", "IDR", True),
        # everyday negatives: the country's initials in "доллар США", the euro of the same question, hryvnias for roubles
        ("Сколько стоит билет в США?", "USD", False),
        ("Скільки буде 1200 гривень в євро?", "PLN", False),
        ("Сколько это в рублях?", "UAH", False),
    ],
)
def test_a_currency_code_is_derived_from_its_name(text: str, value: str, derived: bool) -> None:
    assert (derive(value, "currency", said(text)) is not None) is derived


@pytest.mark.parametrize(
    ("text", "value", "derived"),
    [
        ("What time is it in Tokyo right now?", "Asia/Tokyo", True),
        ("Schedule it for 9am New York time.", "America/New_York", True),
        ("What time is it in Paris?", "Europe/London", False),
        ("What time is it in Tokyo right now?", "Asia/Seoul", False),
        ("What time is it here?", "America/Chicago", False),
    ],
)
def test_a_time_zone_is_derived_from_its_city(text: str, value: str, derived: bool) -> None:
    assert (derive(value, "timezone", said(text)) is not None) is derived


@pytest.mark.parametrize(
    ("text", "value", "param", "derived"),
    [
        ("$10,000 at 5% for 3 years, compounded monthly", 12, "compounds_per_year", True),
        ("interest paid quarterly", 4, "compounding_frequency", True),
        ("I save every week", 52, "periods", True),
        ("compounded monthly", 4, "compounds_per_year", False),  # quarterly was never said
        ("I pay my rent monthly for 12 months", 12, "year", False),  # a year is no count of periods
        ("a monthly subscription", 12, "quantity", False),
    ],
)
def test_periods_a_year_are_derived_from_a_frequency(text: str, value: int, param: str, derived: bool) -> None:
    assert (derive(value, param, said(text)) is not None) is derived


def test_compound_quantities_add_up_and_grammar_words_are_no_units() -> None:
    read = {(round(q.magnitude, 3), str(q.unit)) for q in quantities("He is 6 feet 2 inches and carries a 20 kg pack at 3 km/h.")}
    assert {(6.0, "foot"), (20.0, "kilogram"), (3.0, "kilometer / hour"), (6.167, "foot")} <= read
    assert not quantities("Give me a minute to look at it in a second.")  # no number before the words
    assert rounds_to(72.57, 72.5748) and rounds_to(73, 72.5748) and rounds_to(72.6, 72.5748) and not rounds_to(72.5, 72.5748) and not rounds_to(0, 0.003)


def test_the_guard_lets_a_converted_value_through_and_asks_about_an_invented_one() -> None:
    tool = {
        "name": "bmi",
        "description": "Body mass index.",
        "parameters": {
            "type": "object",
            "properties": {"height_cm": {"type": "number"}, "weight_kg": {"type": "number"}},
            "required": ["height_cm", "weight_kg"],
        },
    }
    guard = Guard([tool])
    asked = [{"role": "user", "content": "My BMI? I'm 5 feet 10 inches and weigh 160 pounds."}]
    assert guard.check({"name": "bmi", "args": {"height_cm": 177.8, "weight_kg": 72.57}, "id": "c1"}, asked).action.value == "allow"
    invented = guard.check({"name": "bmi", "args": {"height_cm": 177.8, "weight_kg": 80}, "id": "c1"}, asked)
    assert [(f.category, f.path) for f in invented.findings] == [(Category.UNGROUNDED_VALUE, "$.weight_kg")]


@pytest.mark.parametrize(
    ("text", "value", "param", "derived"),
    [
        ("Rotate the wheel by 2π radians.", 6.2832, "angle", True),
        ("What is 15% of 80?", 12, "amount", True),
        ("Use 3/4 of the dough.", 0.75, "fraction", True),
        ("Split half of 10 apples.", 5, "count", True),
        ("Meet me on 3/4/2024.", 0.75, "fraction", False),  # a date, not a fraction
        ("Read pages 5-10 tonight.", -5, "offset", False),  # a range, not a subtraction
        ("Buy 12 apples and 3 pears.", 15, "count", False),  # a sum nobody wrote
    ],
)
def test_arithmetic_the_user_wrote_is_derived(text: str, value: float, param: str, derived: bool) -> None:
    assert (derive(value, param, said(text)) is not None) is derived


@pytest.mark.parametrize(
    ("text", "param", "derived"),
    [
        ("A car starts from rest and speeds up at 3 m/s^2.", "initial_velocity", True),
        ("The ball is dropped from rest.", "speed", True),
        ("A car moves at 3 m/s.", "initial_velocity", False),  # moving: its speed was not said to be 0
        ("Let the dough rest for an hour.", "speed", False),  # resting dough is no body at rest
        ("The train is at rest in the station.", "delay_minutes", False),  # not a speed
    ],
)
def test_a_body_at_rest_has_no_speed(text: str, param: str, derived: bool) -> None:
    assert (derive(0, param, said(text)) is not None) is derived


@pytest.mark.parametrize(
    ("text", "derived"),
    [("Sales from 2015 to 2025", True), ("I live at flat number 2015.", False), ("Book room 2015 for me.", False), ("Track order #2015.", False)],
)
def test_a_labelled_number_is_no_year(text: str, derived: bool) -> None:
    assert (derive("2015-01-01", "start_date", said(text)) is not None) is derived


@pytest.mark.parametrize(
    ("text", "value", "derived"),
    [
        ("What's the weather in San Francisco?", "San Francisco, CA", True),
        ("Find restaurants near Times Square.", "Times Square, New York", True),
        ("Hotels in Sydney for two nights", "Sydney, NSW, Australia", True),
        ("What's the weather in Seattle?", "Boston, MA", False),  # another place
        ("Find a plumber in Springfield.", "Main St, Springfield, IL", False),  # a street nobody said
        ("What's the weather in Portland?", "Portland, XY", False),  # no state has that code
    ],
)
def test_a_place_the_user_named_may_gain_its_state_or_region(text: str, value: str, derived: bool) -> None:
    assert (derive(value, "location", said(text)) is not None) is derived


@pytest.mark.parametrize(
    ("text", "value", "today", "derived"),
    [
        ("How many days from Christmas 2024 to the end of January?", "2024-12-25", None, True),
        ("Any fireworks on Independence Day?", "2025-07-04", date(2025, 3, 1), True),
        ("Book a table for Thanksgiving 2024.", "2024-11-28", None, True),
        ("Book a table for Christmas 2024.", "2024-12-24", None, False),  # Christmas Eve is no public holiday here
        ("Christmas 2024 and New Year's Day 2025", "2025-12-25", None, False),  # the year said is another Christmas's
        ("Any fireworks on Independence Day?", "2025-07-04", date(2024, 3, 1), False),  # no year said: this year's
    ],
)
def test_a_public_holiday_named_is_its_date(text: str, value: str, today: date | None, derived: bool) -> None:
    assert (derive(value, "date", said(text), today=today) is not None) is derived


@pytest.mark.parametrize(
    ("text", "value", "derived"),
    [
        ("Schedule a meeting next Monday at 10am. Today is Wednesday, May 7, 2025.", "2025-05-12T10:00:00", True),
        ("Wake me at 8 am tomorrow. Today is 2021-10-13.", "2021-10-14 08:00:00", True),
        ("Schedule a meeting next Monday at 10am. Today is Wednesday, May 7, 2025.", "2025-05-13T10:00:00", False),
        ("Schedule it next Monday at 10am. Today is my birthday, May 7, 2025.", "2025-05-12T10:00:00", False),  # not what today is
    ],
)
def test_relative_days_resolve_against_the_today_the_user_states(text: str, value: str, derived: bool) -> None:
    assert (derive(value, "start", said(text)) is not None) is derived


@pytest.mark.parametrize(
    ("text", "value", "param", "derived"),
    [
        ("I make $4,000 a month.", 48000, "annual_income", True),
        ("We spend 150 per week on food.", 600, "monthly_budget", False),  # 150 x 52 / 12 is 650, not 600
        ("We spend 150 per week on food.", 650, "monthly_budget", True),
        ("I make $4,000 a month.", 4000, "annual_income", False),  # a month's pay is no year's
        ("Rent is 1200 a month.", 14400, "deposit", False),  # the parameter names no period
    ],
)
def test_an_amount_per_period_is_derived_in_the_parameters_period(text: str, value: float, param: str, derived: bool) -> None:
    assert (derive(value, param, said(text)) is not None) is derived


@pytest.mark.parametrize(
    ("text", "value", "derived"),
    [
        ("What's the state tax in New York?", "NY", True),
        ("Take-home pay on $85,000 in California?", "CA", True),
        ("Take-home pay on $85,000 in California?", "NV", False),
        ("I live in York, England.", "NY", False),  # "york" is not "new york"
        ("Ship it by Monday.", "MO", False),  # no region was named
        # the state of a city the user named after "from", "to", "in"
        ("how much to ship a 5 lb box from denver to boston?", "CO", True),
        ("how much to ship a 5 lb box from denver to boston?", "MA", True),
        ("how much to ship a 5 lb box from denver to boston?", "CA", False),
        ("Denver omelette recipe please", "CO", False),  # no place cue: a dish
        ("send it to my sister in law", "CO", False),
    ],
)
def test_a_region_code_is_derived_from_its_name(text: str, value: str, derived: bool) -> None:
    assert (derive(value, "state", said(text)) is not None) is derived


@pytest.mark.parametrize(
    ("text", "value", "derived"),
    [
        ("text (415) 555-0199 saying 'home in 5'", "+14155550199", True),
        ("Call me at +44 20 7946 0958.", "+442079460958", True),
        ("text (415) 555-0199 saying 'home in 5'", "+14155550198", False),  # one digit off is another phone
        ("My order number is 4155550199.", "+442079460958", False),
        ("Call the office.", "+14155550199", False),
    ],
)
def test_a_phone_number_is_derived_in_another_format(text: str, value: str, derived: bool) -> None:
    assert (derive(value, "phone_number", said(text)) is not None) is derived


def test_numbers_with_a_thousands_suffix_and_operators_in_words() -> None:
    assert 20000 in numbers_in("a 20k car loan at 4.9%") and 3_000_000_000 in numbers_in("a 3bn budget")
    assert derive(7, "capacity", said("room for 3 plus 4 people")) is not None
    assert derive(8, "capacity", said("room for 3 plus 4 people")) is None
    assert derive("2024-01-15", "date", said("Did they win yesterday? Today's Jan 16, 2024.")) is not None
    assert derive("2024-10-04", "date", said("it's wednesday oct 2 2024, remind me this Friday")) is not None


_FIRST_USE_IN_THREADS = r"""
import threading
from guard.checks.derivations import derive

S = [(0, "Weather in New York, CA? 5 feet 10 inches, 100 US dollars, Tokyo, Christmas 2024, 2π, (415) 555-0199")]
CALLS = [("NY", "state"), (177.8, "height_cm"), ("USD", "currency"), ("Asia/Tokyo", "timezone"),
         ("2024-12-25", "date"), (6.2832, "angle"), ("+14155550199", "phone"), ("New York, NY", "location")]
errors, start = [], threading.Barrier(16)

def run(i):
    start.wait()
    value, param = CALLS[i % len(CALLS)]
    try:
        if derive(value, param, S) is None:
            errors.append(f"{param} not derived")
    except Exception as exc:
        errors.append(repr(exc))

threads = [threading.Thread(target=run, args=(i,)) for i in range(16)]
for t in threads: t.start()
for t in threads: t.join()
print(errors or "ok")
"""


def test_the_libraries_load_once_when_threads_first_use_them_together() -> None:
    """LangGraph runs a turn's tool calls in threads, so the rules' first uses can come at once: in
    a fresh interpreter (no table loaded yet) 16 threads use every rule at the same moment, and
    each derives its value. (The failure seen in LangChain's suite, pycountry half imported after
    a first import inside a test, is avoided by importing the small libraries with the module;
    this test did not reproduce it before.)"""
    import subprocess
    import sys

    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", _FIRST_USE_IN_THREADS], capture_output=True, text=True, timeout=120)
        assert out.stdout.strip() == "ok", out.stdout + out.stderr[-2000:]


def test_a_rule_that_raises_derives_nothing_and_the_next_rule_still_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from guard.checks import derivations

    def broken(value: object, ctx: object) -> None:
        raise RuntimeError("a library that could not load")

    monkeypatch.setattr(derivations, "_RULES", (broken, *derivations._RULES))
    assert derive("USD", "currency", said("Convert 100 US dollars to euros.")) is not None
    monkeypatch.setattr(derivations, "_RULES", (broken,))
    assert derive("USD", "currency", said("Convert 100 US dollars to euros.")) is None


def test_a_hostile_message_or_description_is_read_only_to_a_bound() -> None:
    """A 600 KB message of quantities and a 100 KB description on five parameters took 86 s a
    check: the rules read a message's first 4,096 characters and a description's first 64 words."""
    filler = "widgets " * 100
    assert derive(72574.8, "weight", said("I weigh 160 pounds."), description="Weight in grams") is not None
    assert derive(72574.8, "weight", said("I weigh 160 pounds."), description=filler + "in grams") is None
    assert derive(72.57, "weight_kg", said("x" * 5_000 + " I weigh 160 pounds.")) is None
    assert derive(72.57, "weight_kg", said("I weigh 160 pounds. " + "x" * 5_000)) is not None


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        (320_000, "House is $400k, I'm putting $80k down.", True),  # what is left to borrow
        (250, "I paid 150 for the room and 100 for food", True),  # what it comes to
        (330_000, "House is $400k, I'm putting $80k down.", False),
        (1_994, "in 2024 I had 30 guests", False),  # a year is no amount
        (20, "I paid 150 for the room and 130 for food", False),  # too small to tell from chance
    ],
)
def test_the_difference_or_sum_of_two_stated_amounts(value, text, derived):
    assert (derive(value, "amount", [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        (20, "target_celsius", "Set the thermostat to 68 degrees Fahrenheit in heating mode.", True),  # "in" is no inch
        (24.14, "weekly_km", "About 15 miles a week.", True),  # "a" is no year
        (384_000, "loan_amount", "a $480,000 house if I put 20% down", True),  # an amount less a percentage of it
        (390_000, "loan_amount", "a $480,000 house if I put 20% down", False),
        (96_000, "down_payment", "my monthly payment on a 480k place if I put 20% down?", True),  # the percentage of it
        (96_000, "down_payment", "a 480k place, 25% down", False),  # another percentage
        (4_800, "tip", "a $480 dinner, we want to leave 10%", False),  # 48 is 10%; 4,800 is no share of it
        (500, "deposit", "I earn 20% more than last year", False),  # no amount to take it of
        (2_125, "budget", "in 2024 prices rose 5%", False),  # a year is no amount to take a percentage of
        (600, "total", "I have 500 points. A 20% bonus applies tomorrow", True),  # one message: 500 + 20%
        (600, "total", "I have 500 points", False),  # a percentage from no message is no derivation
        ("US-CA", "jurisdiction", "California appellate decisions", True),  # the full ISO 3166-2 code
        ("US-TX", "jurisdiction", "California appellate decisions", False),
    ],
)
def test_units_after_a_quantity_percentages_of_amounts_and_full_region_codes(value, param, text, derived):
    assert (derive(value, param, [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("text", "value", "param", "derived"),
    [
        ("What are Apple, Microsoft and Nvidia trading at?", "AAPL", "symbols", True),
        ("What are Apple, Microsoft and Nvidia trading at?", "NVDA", "symbols", True),
        ("Buy 10 shares of Tesla at $180 or lower.", "TSLA", "symbol", True),
        ("How is Bank of America doing today?", "BAC", "ticker", True),
        # Everyday negatives: a company nobody named, letters out of order, a parameter that is no ticker.
        ("Buy 10 shares of Tesla at $180 or lower.", "GOOG", "symbol", False),
        ("Buy 10 shares of Tesla at $180 or lower.", "TLSA", "symbol", False),
        ("Open an account at Apple Bank.", "AAPL", "account_code", False),
        # who writes no capitals writes names without them; one who does, capitalises names
        ("cuánto está la acción de tesla hoy", "TSLA", "ticker", True),
        ("cuánto está la acción de tesla hoy", "TSLA", "account_code", False),
        ("how are the stocks doing today", "SDT", "ticker", False),  # no word starts so
        ("How is the market doing, should I sell some shares?", "SELL", "ticker", False),  # a word, not a name
    ],
)
def test_a_ticker_comes_from_the_letters_of_a_company_the_user_named(text: str, value: str, param: str, derived: bool) -> None:
    assert (derive(value, param, said(text)) is not None) is derived


def test_an_amount_split_between_listed_people_is_each_ones_share() -> None:
    assert derive("42.00", "owed", said("Dinner at Luigi's, $126 total, split equally between me, Sam and Priya.")) is not None
    assert derive(42, "owed", said("Dinner was $126, split it with Sam and Priya.")) is not None  # the speaker and two more
    # Everyday negatives: two people between them, nobody split anything, a share of another amount.
    assert derive(42, "owed", said("Dinner was $126, split between Sam and Priya.")) is None
    assert derive(42, "owed", said("Dinner was $126 with Sam and Priya, I'll pay it all.")) is None
    assert derive(40, "owed", said("Dinner was $126, split between me, Sam and Priya.")) is None



def test_a_us_zone_named_by_its_region_after_a_clock_time() -> None:
    assert derive("America/New_York", "timezone", said("schedule it next tuesday at 9am eastern")) is not None
    assert derive("America/Los_Angeles", "timezone", said("call at 3pm pacific time")) is not None
    # Everyday negatives: another region's zone, "eastern" and "pacific" that name no time.
    assert derive("America/Chicago", "timezone", said("schedule it next tuesday at 9am eastern")) is None
    assert derive("America/New_York", "timezone", said("book the eastern office")) is None
    assert derive("America/Los_Angeles", "timezone", said("a cruise on the pacific ocean")) is None


def test_sides_written_with_x_and_one_unit() -> None:
    assert [(q.magnitude, str(q.unit)) for q in quantities("a 12 lb box, 18x12x10 inches")][1:] == [(18.0, "inch"), (12.0, "inch"), (10.0, "inch")]
    assert derive(45.72, "length_cm", said("a box, 18x12x10 inches")) is not None
    # Everyday negatives: a size with no unit, a multiplier, a side nobody wrote.
    assert quantities("a 2x4 from the lumber yard") == ()
    assert quantities("take it 3x a day") == ()
    assert derive(50.8, "length_cm", said("a box, 18x12x10 inches")) is None


def test_a_change_is_the_later_amount_less_the_earlier() -> None:
    text = "cycle count at bin A-14-03: system says 120 of SKU WH-88231 but we counted 113. fix it"
    assert derive(-7, "quantity_delta", said(text)) == (0, "113 - 120 -> -7")
    # Everyday negatives: the change the wrong way round, a count that is no change, a sum.
    assert derive(7, "quantity_delta", said(text)) is None
    assert derive(-7, "quantity", said(text)) is None
    assert derive(233, "quantity_delta", said(text)) is None


def test_a_bare_thermostat_setting_in_the_other_scale() -> None:
    assert derive(20, "setpoint_c", said("turn the upstairs thermostat to 68 and switch it to heat")) is not None
    assert derive(68, "setpoint_f", said("set the heat to 20")) is not None
    # Everyday negatives: a setting that is no temperature, another number, a time.
    assert derive(20, "setpoint_c", said("set the volume to 68")) is None
    assert derive(19, "setpoint_c", said("turn the thermostat to 68")) is None
    assert derive(20, "setpoint_c", said("turn the thermostat up at 68 minutes past")) is None


def test_degrees_without_a_scale_in_the_scale_people_there_use() -> None:
    assert derive(21, "target_temp_c", said("can u make the living room 70 degrees? its freezing")) is not None
    assert derive(20, "target_temp_c", said("set it to 68°")) is not None
    assert derive(22, "target_temp_c", said("turn the heat up to 72 degrees")) is not None
    # Everyday negatives: an angle, a scale that was said, another number.
    assert derive(21, "target_temp_c", said("rotate the camera 70 degrees")) is None
    assert derive(21, "target_temp_c", said("it was 70 degrees celsius in the oven")) is None
    assert derive(21, "target_temp_c", said("turn it 70 degrees to the left")) is None
    assert derive(24, "target_temp_c", said("make it 70 degrees")) is None


def test_a_setting_moved_to_a_bare_number_for_a_temperature_parameter() -> None:
    assert derive(20, "setpoint_c", said("Can you bump the 3rd floor east conference rooms down to 68? People are roasting")) is not None
    assert derive(22, "setpoint_c", said("crank the office up to 72 please")) is not None
    # Everyday negatives: a number of people, a time, a setting in the parameter's own scale.
    assert derive(20, "setpoint_c", said("bump the booking to 68 people")) is None
    assert derive(20, "setpoint_c", said("move the cleaning to 6:30")) is None
    assert derive(20, "setpoint_c", said("set the office to 68 pm")) is None


def test_the_country_of_a_city_after_a_postal_code() -> None:
    assert derive("US", "country", said("ship from 60614 (Chicago) to Toronto")) is not None
    # Everyday negatives: another country, a city named without a cue, a number that is no code.
    assert derive("CA", "country", said("ship from 60614 (Chicago)")) is None
    assert derive("US", "country", said("I sold 3 chicago pizzas")) is None
    assert derive("FR", "country", said("ship from 60614 (Chicago)")) is None


def test_the_country_of_a_city_in_a_list_shared_by_several_countries_or_with_its_state() -> None:
    assert derive("CN", "country", said("compare air quality in Delhi and Beijing")) is not None
    assert derive("DE", "origin_country", said("how much to send a 3kg box from berlin to vienna?")) is not None
    assert derive("US", "country", said("pickup from 1200 Industrial Pkwy, Dayton OH 45402")) is not None
    # Everyday negatives: a city named without a cue, another country, a state code that is a word.
    assert derive("FR", "country", said("I love lyon techno")) is None
    assert derive("JP", "country", said("compare air quality in Delhi and Beijing")) is None
    assert derive("US", "country", said("we drove past dayton yesterday")) is None


def test_a_quantity_written_as_text_with_its_unit() -> None:
    assert derive("2 lb", "quantity", said("ok add to groceries: 2 lbs chicken thighs, a dozen eggs")) is not None
    assert derive("1 kg", "amount", said("1000 grams of flour please")) is not None
    # Everyday negatives: another amount, another kind of unit, a number with no unit.
    assert derive("3 lb", "quantity", said("2 lbs chicken thighs")) is None
    assert derive("2 l", "quantity", said("2 lbs chicken thighs")) is None
    assert derive("12", "quantity", said("2 lbs chicken thighs")) is None


def test_an_airport_by_its_name_with_its_code_in_brackets() -> None:
    assert derive("Chicago O'Hare (ORD)", "location", said("Home airport: ORD.", "I need to be in Seattle Thursday")) is not None
    assert derive("Seattle-Tacoma (SEA)", "location", said("I need to be in Seattle for a conference")) is not None
    assert derive("San Francisco International Airport (SFO)", "dropoff", said("get me an uber XL from here to SFO")) is not None
    # Everyday negatives: an airport nobody named, a name that is not the airport's, no code.
    assert derive("Portland International (PDX)", "location", said("I need to be in Seattle for a conference")) is None
    assert derive("Seattle Center (SEA)", "location", said("I need to be in Seattle for a conference")) is None
    assert derive("Seattle-Tacoma", "location", said("I need to be in Seattle for a conference")) is None


def test_an_airport_the_user_named_written_as_an_airport() -> None:
    assert derive("JFK Airport", "dropoff", said("get me a car from 350 5th Ave to JFK")) is not None
    assert derive("Heathrow Airport", "destination", said("a cab to heathrow at 6 please")) is not None
    assert derive("O'Hare International Airport", "dropoff", said("drop me at o'hare")) is not None
    # Everyday negatives: an airport nobody named, a city's name with "Airport" added, a code in lower case that is a word
    assert derive("JFK Airport", "dropoff", said("get me a car to the airport")) is None
    assert derive("Seattle Airport", "dropoff", said("a cab in seattle")) is None
    assert derive("Leeds Bradford Airport", "destination", said("we fly out next week")) is None


def test_a_count_of_things_times_a_quantity_of_each() -> None:
    assert derive(400, "dose_mg", said("just took 2 ibuprofen, the 200mg ones. log it pls")) is not None
    assert derive(15, "weight_kg", said("ship 3 bags of 5 kg")) is not None
    assert derive(7.5, "weight_kg", said("three boxes, 2.5 kg each")) is not None
    # Everyday negatives: a time is no count, another count, no count at all.
    assert derive(400, "dose_mg", said("I took 200mg at 2 pm")) is None
    assert derive(400, "dose_mg", said("took 200mg, felt better after 2 hours")) is None
    assert derive(400, "dose_mg", said("took 3 ibuprofen, the 200mg ones")) is None
    assert derive(400, "dose_mg", said("took 200mg")) is None


def test_a_count_times_a_stated_price_and_millions_after_a_money_sign() -> None:
    assert derive(500, "revenue", said("Log today's order: Redwood Cafe bought 40 units at $12.50 each.")) is not None
    listed = said("Items: 'Consulting hour' (ItemRef 9, $120.00).", "Invoice them for 3 consulting hours.")
    assert derive(360.0, "Amount", listed) is not None
    assert derive(360, "amount", said("Invoice them for 3 hours at $120")) is not None  # hours paid at a rate are counted
    assert 1200000 in numbers_in("Create an opportunity for Globex, $1.2M, closing this quarter.")
    # Everyday negatives: another product, a wall of 1.2 m is no money, a price nobody multiplied.
    assert derive(480, "revenue", said("Redwood Cafe bought 40 units at $12.50 each.")) is None
    assert 1200000 not in numbers_in("a 1.2m wall")
    assert derive(240, "Amount", said("Invoice them for consulting at $120.00 an hour.")) is None


def test_a_physical_constant_the_parameter_names() -> None:
    assert derive(9.81, "gravity", said("how fast is a stone going after falling 45 m?")) is not None
    assert derive(299792458, "speed_of_light", said("how long does light take from the sun?")) is not None
    assert derive(6.022e23, "avogadro", said("how many molecules in 2 moles of water?")) is not None
    # Everyday negatives: another number for gravity, a constant the parameter does not name, a speed that is no constant
    assert derive(12.5, "gravity", said("how fast is a stone going after falling 45 m?")) is None
    assert derive(9.81, "height", said("how fast is a stone going after falling from a cliff?")) is None
    assert derive(120, "speed", said("set the fan speed")) is None


def test_a_fraction_the_user_said_as_a_share_of_a_hundred() -> None:
    assert derive(33, "brightness", said("dim the living room lights to about a third"), description="0-100") is not None
    assert derive(50, "volume_percent", said("turn it down to half")) is not None
    assert derive(75, "level", said("charge it to three quarters"), description="Charge level in percent") is not None
    # Everyday negatives: no scale of a hundred, another share, no fraction said
    assert derive(33, "brightness", said("dim the living room lights to about a third"), description="Lux") is None
    assert derive(40, "brightness", said("dim the living room lights to about a third"), description="0-100") is None
    assert derive(33, "brightness", said("dim the living room lights"), description="0-100") is None
    # a share in words of its own or another language, a scale said by its ends
    assert derive(50, "position", said("lower the bedroom blinds halfway"), description="0 = closed, 100 = open") is not None
    assert derive(50, "position", said("Baisse les volets de la chambre à moitié stp"), description="0-100") is not None
    assert derive(50, "discount_percent", said("everything in the window is half off")) is not None
    # Everyday negatives: a half that is no share of the scale (a time, a duration, a count)
    assert derive(50, "volume_percent", said("wake me at half past six")) is None
    assert derive(50, "volume_percent", said("lower it for half an hour")) is None
    assert derive(50, "discount_percent", said("half of the shirts are on sale")) is None


def test_a_lookups_language_is_the_one_the_user_writes_in() -> None:
    assert derive("ja", "lang", said("明日の東京の天気は？傘いるかな"), description="Response language, ISO 639-1") is not None
    assert derive("en", "language", said("anything new on the EU AI Act today?")) is not None
    # Everyday negatives: the language to translate into, another language than the user's, a text in no known script
    assert derive("en", "target_language", said("translate 'bonjour' please, I want to know what it says")) is None
    assert derive("ja", "lang", said("what's the weather in tokyo tomorrow?"), description="Response language") is None
    assert derive("ko", "lang", said("明日の東京の天気は？")) is None


def test_a_height_in_feet_and_inches_written_with_marks() -> None:
    assert [(q.magnitude, str(q.unit)) for q in quantities("5'11 in cm?")] == [(71.0, "inch")]
    assert derive(180.34, "height_cm", said('I\'m 5\' 11" tall')) is not None
    assert derive(188, "height", said("he's 6′2″"), description="Height in centimetres") is not None
    # Everyday negatives: the minutes and seconds of a coordinate, a song's length, a quote mark
    assert quantities("meet at 40°26'46\"N 79°58'56\"W") == ()
    assert quantities("a 3'45\" song") == ()
    assert quantities("rock 'n' roll since the '90s") == ()


def test_a_number_in_the_unit_its_conversion_sibling_names() -> None:
    tools = [{"name": "convert_units", "description": "Converts a value between units.", "parameters": {"type": "object", "properties": {
        "value": {"type": "number"}, "from_unit": {"type": "string"}, "to_unit": {"type": "string"}}, "required": ["value", "from_unit", "to_unit"]}}]
    said_ = [{"role": "user", "content": "5'11 in cm?"}]
    assert Guard(tools).check({"name": "convert_units", "args": {"value": 71, "from_unit": "in", "to_unit": "cm"}}, said_).action.value == "allow"
    # Everyday negatives: the number read in another unit, a number nobody said, another height
    assert Guard(tools).check({"name": "convert_units", "args": {"value": 71, "from_unit": "cm", "to_unit": "in"}}, said_).action.value != "allow"
    assert Guard(tools).check({"name": "convert_units", "args": {"value": 72, "from_unit": "in", "to_unit": "cm"}}, said_).action.value != "allow"
    assert Guard(tools).check({"name": "convert_units", "args": {"value": 71, "from_unit": "in", "to_unit": "cm"}}, [{"role": "user", "content": "5'10 in cm?"}]).action.value != "allow"


def test_a_country_named_in_another_language() -> None:
    assert derive("Brazil", "country", said("Qual era la popolazione del Brasile nel 2015?")) is not None
    assert derive("DE", "country_code", said("Wie ist das Wetter in Deutschland?")) is not None
    assert derive("Japan", "country", said("日本の人口は？")) is not None
    assert derive("Morocco", "country", said("des vacances au Maroc cet été")) is not None
    # Everyday negatives: a word that only starts like a name, another country, a name in nobody's words
    assert derive("Brazil", "country", said("I like brass instruments")) is None
    assert derive("Portugal", "country", said("Qual era la popolazione del Brasile nel 2015?")) is None
    assert derive("Germany", "country", said("the weather in Atlanta")) is None


def test_the_country_of_a_city_written_as_a_name_in_any_language() -> None:
    assert derive("FR", "country_code", said("quel temps fera-t-il à Lyon demain ?")) is not None
    assert derive("ES", "country", said("¿qué tiempo hará mañana en Sevilla?")) is not None
    # Everyday negatives: a city's name as a word at the start of a sentence, in lower case
    # without a cue, and a country the city is not in
    assert derive("FR", "country_code", said("Nice to meet you")) is None
    assert derive("FR", "country_code", said("have a nice day")) is None
    assert derive("DE", "country_code", said("quel temps fera-t-il à Lyon demain ?")) is None


def test_the_language_a_user_writes_in_is_identified() -> None:
    from guard.checks.measures import identified_language

    assert identified_language("quel temps fera-t-il à Lyon demain ?") == "fr"
    assert identified_language("quanto tá o dólar hoje em reais?") == "pt"
    assert derive("fr", "lang", said("quel temps fera-t-il à Lyon demain ?"), description="Language of the summary (ISO 639-1)") is not None
    # Everyday negatives: too few words to say, a number and units, the language to translate into
    assert identified_language("Berlin") is None
    assert identified_language("5'11 in cm?") is None
    assert derive("fr", "target_language", said("traduis « bonjour tout le monde » en anglais s'il te plaît")) is None


def test_an_airport_named_for_the_city_it_serves() -> None:
    assert derive("YUL", "destination", said("a weekend in Montreal, flying from Boston"), description="IATA airport or city code.") is not None
    assert derive("YUL", "destination", said("fly me to Montréal"), description="IATA airport code") is not None
    # Everyday negatives: another city, the city without an airport parameter, a code of another airport
    assert derive("YUL", "destination", said("a weekend in Toronto"), description="IATA airport code") is None
    assert derive("YUL", "notes", said("a weekend in Montreal")) is None
    assert derive("YYZ", "destination", said("fly me to Montreal"), description="IATA airport code") is None


@pytest.mark.parametrize(
    ("text", "magnitude", "unit"),
    [
        ("how fast after a quarter of a minute?", 0.25, "minute"),
        ("it took three quarters of an hour", 0.75, "hour"),
        ("what will it be worth after a decade?", 1, "decennium"),
        ("over two decades", 2, "decennium"),
        ("in a century", 1, "century"),
    ],
)
def test_a_share_of_a_unit_and_a_decade_are_quantities(text: str, magnitude: float, unit: str) -> None:
    assert any(q.magnitude == magnitude and str(q.unit) == unit for q in quantities(text))


def test_an_article_alone_and_a_share_of_no_unit_are_no_quantity() -> None:
    # everyday negatives: "give me a minute", a quarter of a pizza, half of the class
    assert quantities("give me a minute, I'll check") == ()
    assert quantities("a quarter of a pizza is left") == ()
    assert quantities("half of the class was late") == ()


@pytest.mark.parametrize(
    ("param", "value", "derived"),
    [
        ("rate_per_period", 0.005, True),
        ("periods", 60, True),
        ("monthly_rate", 0.5, True),  # in percent, as the user wrote the yearly one
        # everyday negatives: a wrong division, years not multiplied out, a parameter that is no period
        ("rate_per_period", 0.004, False),
        ("periods", 50, False),
        ("age", 60, False),
    ],
)
def test_a_yearly_rate_and_years_over_the_periods_a_year_the_user_named(param: str, value: float, derived: bool) -> None:
    text = "I save $200 at the end of every month for 5 years in an account paying 6% per year compounded monthly."
    assert (derive(value, param, said(text)) is not None) is derived


def test_no_period_conversion_without_a_frequency() -> None:
    assert derive(60, "periods", said("I save $200 a year for 5 years at 6% per year.")) is None  # one period a year: no 60


@pytest.mark.parametrize(
    ("text", "value", "param", "derived"),
    [
        ("A 4.5 m beam, E = 200 GPa, I = 8.36×10⁻⁵ m⁴", 8360, "second_moment_cm4", True),
        ("green light, a wavelength of 5.3 x 10^-7 m", 530, "wavelength_nm", True),
        ("a flat of 450 square feet", 41.8, "area_m2", True),
        # everyday negatives: a power of ten off, a board's sides (no power), another quantity's number
        ("A 4.5 m beam, E = 200 GPa, I = 8.36×10⁻⁵ m⁴", 836, "second_moment_cm4", False),
        ("cut me a 18x100 inches board", 1.8e-99, "length_in", False),
        ("a flat of 450 square feet", 450, "area_m2", False),
    ],
)
def test_scientific_notation_and_powers_as_written_by_hand(text: str, value: float, param: str, derived: bool) -> None:
    assert (derive(value, param, said(text)) is not None) is derived


def test_a_whole_number_and_a_fraction_of_a_unit() -> None:
    assert [(q.magnitude, str(q.unit)) for q in quantities("about two and a quarter cups of flour")] == [(2.25, "cup")]
    assert (2.75, "hour") in [(q.magnitude, str(q.unit)) for q in quantities("the drive is 2 hours and three quarters")]
    # everyday negatives: a fraction of one unit alone, "half and half", a fraction after no number
    assert 1.25 not in [q.magnitude for q in quantities("add a quarter cup of milk")]
    assert not quantities("a splash of half and half")
    assert 0.25 not in [q.magnitude for q in quantities("and a quarter of the cake went")]


def test_warm_loads_what_a_first_decision_would_otherwise_pay_for():
    """``measures.warm`` (a server's start-up, a benchmark's first line) builds the tables rules
    read on first use, so that no request pays for them: the currency symbols of each country,
    number words in the common languages, dateparser's data for each language it is asked about.
    Run in a new process: in this one, other tests have loaded them already."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from guard.checks import measures\n"
        "from guard import lexicon\n"
        "assert 'dateparser.search' not in sys.modules and lexicon.foreign_number_words.cache_info().currsize == 0\n"
        "measures.warm()\n"
        "assert lexicon.foreign_number_words.cache_info().currsize == len(lexicon.foreign_duration_words())\n"
        "from dateparser.languages.loader import default_loader\n"
        "loaded = set(default_loader._loaded_languages)\n"
        "assert set(lexicon.foreign_date_words()) <= loaded, set(lexicon.foreign_date_words()) - loaded\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
