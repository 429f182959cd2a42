"""Value normalisation: texts, numbers, units, booleans, dates and times."""

from datetime import datetime

import pytest

from guard.normalise import (
    mentions_datetime,
    named_day,
    normalise_text,
    number_key,
    number_words,
    numbers_in,
    parse_bool,
    parse_number,
    parse_temporal,
)

NOW = datetime(2021, 9, 27, 10)  # a Monday


def test_text_is_casefolded_compatibility_normalised_and_stripped_of_punctuation():
    assert normalise_text("  New-York,   NEW_york!! ") == "new york new york"
    assert normalise_text("Straße ﬁle") == "strasse file"
    assert normalise_text("ＡＢＣ １２３") == "abc 123"


def test_digits_and_letters_are_split_so_written_variants_line_up():
    assert normalise_text("2pm") == normalise_text("2 pm") == "2 pm"
    assert normalise_text("28th") == "28 th"
    assert normalise_text("LH1007") == "lh 1007"


def test_a_word_keeps_the_vowel_signs_it_carries():
    # Devanagari, Thai and Bengali write vowels as combining marks inside the word
    assert normalise_text("डॉलर मुंबई") == "डॉलर मुंबई"
    assert normalise_text("พรุ่งนี้ เย็น") == "พรุ่งนี้ เย็น"
    # everyday negatives: accents are composed first, marks never start a word, digits still split
    assert normalise_text("Crème brûlée at 8pm") == "crème brûlée at 8 pm"
    assert normalise_text("\u0301x") == "x"
    assert normalise_text("मुंबई2024") == "मुंबई 2024"


def test_a_dash_between_the_ends_of_a_range_of_hours_or_days_reads_to():
    assert normalise_text("2-3pm") == "2 to 3 pm"
    assert normalise_text("21–25 July") == "21 to 25 july"
    # everyday negatives: a date, a page range and a phone number keep their dash a separator
    assert normalise_text("2025-05-20") == "2025 05 20"
    assert normalise_text("pages 10-12") == "pages 10 12"
    assert normalise_text("call 555-1234") == "call 555 1234"


def test_an_amount_of_money_with_dots_between_thousands():
    from guard.normalise import numbers_in

    assert normalise_text("máximo 1.400 € al mes") == "máximo 1400 al mes"
    assert 2_500_000 in numbers_in("presupuesto 2.500.000 €")
    assert 2_500 in numbers_in("vadesiz hesabıma 2.500 TL aktar") and 45_000 in numbers_in("một tô phở 45.000₫")
    assert 2.5 in numbers_in("2.5 TL")  # no thousands: a decimal point
    # everyday negatives: a version, a ratio and a decimal without money keep their dot a decimal point
    assert 1.4 in numbers_in("version 1.400 released")
    assert 1.4 in numbers_in("a ratio of 1.400 to 1")
    assert 1400 not in numbers_in("the ratio was 1.400")


def test_text_of_only_punctuation_normalises_to_nothing():
    assert normalise_text("?!… --") == ""


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("two", 2),
        ("twenty five", 25),
        ("Twenty-five", 25),
        ("a dozen", 12),
        ("one hundred and five", 105),
        ("two thousand three hundred", 2300),
        ("1,000", 1000),
        ("3.5", 3.5),
        ("-4", -4),
        ("+7", 7),
    ],
)
def test_a_whole_string_parses_as_a_number_in_digits_or_words(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["", "two apples", "007x", "hello", "1,00", "9" * 5000])
def test_a_string_that_is_not_just_a_number_parses_as_none(text):
    assert parse_number(text) is None


def test_numbers_in_text_are_found_in_digits_and_words():
    found = numbers_in("Book two rooms for 1,000 euros, 3.5 stars, for twenty five guests")
    assert {2, 1000, 3.5, 25} <= set(found)
    assert found[25] == "twenty five"
    assert found[1000] == "1,000"


def test_a_list_of_number_words_reads_as_separate_numbers():
    assert set(numbers_in("pick two three")) == {2, 3}


def test_percent_gives_the_number_and_the_fraction():
    assert {50, 0.5} <= set(numbers_in("a 50% discount"))
    assert {50, 0.5} <= set(numbers_in("fifty percent off"))


@pytest.mark.parametrize(
    ("text", "readings"),
    [
        ("2 hours", {2, 120, 7200}),
        ("two hours", {2, 120, 7200}),
        ("3 km", {3, 3000}),
        ("1.5 kg", {1.5, 1500}),
        ("500 ml", {500, 0.5}),
        ("2 million", {2_000_000}),
    ],
)
def test_a_quantity_with_a_unit_grounds_its_value_in_every_unit_of_its_dimension(text, readings):
    assert readings <= set(numbers_in(text))


def test_dashes_inside_dates_are_not_minus_signs():
    found = numbers_in("on 2021-09-28, at -5 degrees")
    assert {2021, 9, 28, -5} <= set(found)
    assert -9 not in found


def test_number_keys_compare_ints_and_integral_floats_alike():
    assert number_key(3.0) == number_key(3) and isinstance(number_key(3.0), int)
    assert number_key(0.1 + 0.2) == number_key(0.3)


def test_number_words_render_small_numbers():
    assert [number_words(n) for n in (3, 15, 20, 31)] == ["three", "fifteen", "twenty", "thirty one"]


@pytest.mark.parametrize("word", ["yes", "TRUE", "enable", "On", "enabled"])
def test_yes_true_enable_on_are_true(word):
    assert parse_bool(word) is True


@pytest.mark.parametrize("word", ["no", "False", "disable", "OFF"])
def test_no_false_disable_off_are_false(word):
    assert parse_bool(word) is False


def test_other_words_are_no_boolean():
    assert parse_bool("maybe") is None


@pytest.mark.parametrize(
    "value", ["2021-09-28", "2021-09-28 14:00:00", "2021-09-28T14:00", "2021-09-28T14:00:00Z", "14:00"]
)
def test_iso_dates_datetimes_and_times_are_temporal_values(value):
    assert parse_temporal(value) is not None


@pytest.mark.parametrize("value", ["2021-02-30", "25:00", "Berlin", "2021", "14"])
def test_invalid_or_partial_dates_are_not_temporal_values(value):
    assert parse_temporal(value) is None


def test_a_midnight_time_next_to_a_date_means_the_date_alone():
    assert parse_temporal("2021-09-28 00:00:00").time is None


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("2021-09-28 14:00:00", "tomorrow at 2pm"),
        ("2021-09-28T14:00", "Can we meet tomorrow at 14:00?"),
        ("2021-09-28", "see you 2021-09-28"),
        ("2021-09-27", "today"),
        ("2021-09-29", "the day after tomorrow"),
        ("2021-10-04", "next Monday"),
        ("2021-09-30", "on Thursday"),
        ("2021-09-30", "in three days"),
        ("2021-09-28", "September 28"),
        ("2021-09-28", "Sep 28th"),
        ("2021-09-28", "the 28th of September"),
        ("2021-09-28", "28/09/2021"),
        ("2021-09-28", "9/28"),
        ("14:00", "at 2 pm"),
        ("14:00", "2 p.m."),
        ("14:00", "14:00"),
        ("14:30", "half an hour after 2:30pm? no, 2:30 PM"),
        ("12:00", "at noon"),
        ("06:45", "wake me at quarter to seven"),
        ("18:30", "half past six in the evening"),
        ("09:15", "a quarter past nine am"),
        ("2021-09-20", "what did I spend a week ago"),
        ("2021-09-24", "the order I placed 3 days ago"),
        ("2021-10-11", "in two weeks"),
        ("2021-10-11", "follow up in 2 wks"),
        ("2021-10-04", "ping me 1 wk from now"),
        ("14:00", "can my cat come in tmrw afternoon for her shots? around 2 if possible"),
        ("10:00", "can i see the pier one saturday morning, like 10?"),
        ("04:00", "pickup appt 0400 tmrw"),
        ("2021-09-28", "pickup appt 0400 tmrw"),
        ("14:00", "meet at 1400 hrs"),
        ("2021-10-08", "leaving the 2nd friday of next month"),
        ("2021-10-25", "the last Monday in October"),
        ("2021-09-26", "did arsenal win yday?"),
        ("13:00", "schedule a pickup tmrw between 1 and 5pm"),
        ("17:00", "block friday afternoon 2 to 5 for focus time"),
        ("2021-09-29", "a flight wed evening from boston"),
        ("2021-09-30", "put dentist on my cal thurs 3pm"),
        ("2021-10-01", "am i free fri afternoon?"),
        ("2021-10-02", "brunch sat?"),
        ("2021-09-28", "hotels in lisbon 28th to 30th"),
        ("2021-09-30", "hotels in lisbon 28th to 30th"),
        ("12:00", "keep tomorrow morning from 9 till 12 free"),
        ("23:00", "the party is saturday evening 7 until 11"),
        ("15:30", "put the dentist in for tomorrow half 3"),
        ("19:30", "table for two, half seven tonight"),
        ("2021-09-23", "holiday from 23 until 27 of this month please"),
        ("2021-09-30", "holiday from 23 until 30 of this month please"),
        ("2021-10-05", "the 5th of next month"),
        ("2021-10-11", "need a hotel in Kyoto in a fortnight, 3 nights"),
        ("2021-09-13", "we met a fortnight ago"),
        ("12:00", "pick up tomorrow noonish"),
        ("10:00", "set up a thing on my calendar thursday at ten am for an hour"),
        ("2021-09-26", "signups per day over the last 7 days? leave today out, it's partial"),
        ("2021-09-26", "the past week, not including today"),
        ("20:00", "book somewhere good for thai tomorrow at 8, 4 people"),
        ("2021-10-05", "anniversary dinner a week from tomorrow!!"),
        # Chinese, Japanese, Korean: the date with its characters, the hour before its word
        ("2021-10-15", "10月15日に京都へ行きたい"),
        ("2021-12-02", "2021년 12월 2일 회의"),
        ("09:00", "朝9時以降で"),
        ("15:00", "明天下午3点开会"),
        ("09:30", "내일 9시 30분에"),
        ("21:00", "21時に"),
    ],
)
def test_a_text_mentions_a_date_or_time_in_the_forms_people_write(value, text):
    assert mentions_datetime(value, text, NOW) is not None


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("2021-09-28", "the day after tomorrow"),
        ("2021-09-28", "today"),
        ("2021-09-28", "28/09/1999"),
        ("2021-09-28 14:00:00", "tomorrow"),
        ("2021-09-28 14:00:00", "tomorrow at 2 am"),
        ("02:00", "2:00 pm"),
        ("2021-09-28", "September 29"),
        ("07:45", "wake me at quarter to seven"),
        ("06:30", "half past six in the evening"),
        ("18:45", "a quarter to seven in the morning"),
        ("2021-09-21", "what did I spend a week ago"),
        ("2021-10-04", "two weeks ago"),
        ("02:00", "tmrw afternoon around 2"),
        ("14:00", "this afternoon I ran around 2 miles"),
        ("20:23", "back in 2023 we met"),
        ("14:00", "a map from 1400 AD"),
        ("2021-10-15", "leaving the 2nd friday of next month"),
        ("2021-10-18", "the last Monday in October"),
        ("2021-09-25", "did we win yday?"),
        ("03:00", "午後3時に"),  # the afternoon's 3
        ("09:00", "9時30分"),  # half past
        ("2021-10-15", "10月16日に"),
        ("01:00", "buy 1 and meet at 5pm"),
        ("13:00", "between 1 and 5 people"),
        # everyday negatives: a range in another unit, a morning's range is no afternoon's end, a count
        ("17:00", "this afternoon I ran 2 to 5 miles"),
        # everyday negatives: the sun, "sat" as a verb, fries, a range of numbers that are no days
        ("2021-10-03", "will the sun be out"),
        ("2021-10-02", "I sat on the sofa all day"),
        ("2021-10-01", "fries with that"),
        ("2021-09-28", "rooms 28 to 30"),
        ("17:00", "friday morning 2 to 5"),
        ("17:00", "in the afternoon 2 to 5 people came"),
        ("03:30", "cut it in half 3 times"),
        ("03:30", "add half 3 cups of flour"),
        ("07:30", "half seven tonight"),
        ("2021-10-23", "holiday from 23 until 27 of this month"),
        ("2021-09-23", "23 of them came this month"),
        ("2021-10-10", "in a fortnight"),
        ("2021-10-11", "a fortnight ago"),
        ("00:00", "tomorrow noonish"),
        ("2021-09-27", "the last 7 days, leave today out"),
        ("2021-09-25", "the last 7 days, leave today out"),
        ("2021-09-26", "today's numbers, nothing left out"),
        ("20:00", "tomorrow at 8:30, 4 people"),
        ("2021-10-04", "anniversary dinner a week from tomorrow!!"),
        ("2021-10-05", "a week from today"),
        ("2021-10-05", "two weeks from tomorrow"),
        ("20:00", "table at 8 15 people"),
        ("10:00", "meet at ten past nine"),
        ("10:00", "at 10 to 6"),
        ("22:00", "at ten am"),
        ("12:00", "the afternoon show"),
        ("2021-10-11", "every fortnight"),
        ("2021-09-27", "yday was fine"),
        ("2021-10-11", "the 2 wks before the launch were hectic"),
        ("2021-10-12", "follow up in 2 wks"),
        ("2021-10-11", "I wk out 2 days a week"),
    ],
)
def test_a_text_about_another_date_or_time_does_not_mention_it(value, text):
    assert mentions_datetime(value, text, NOW) is None


def test_the_matched_words_are_returned():
    assert mentions_datetime("2021-09-28 14:00:00", "tomorrow at 2pm", NOW) == "tomorrow at 2 pm"


@pytest.mark.parametrize(
    ("value", "text", "said"),
    [
        ("2024-10-15", "did the Lakers win last night?", True),  # yesterday, as people say it
        ("2024-10-19", "weather for this weekend", True),  # its Saturday
        ("2024-10-20", "weather for the weekend", True),  # and its Sunday
        ("2024-10-18", "weather for this weekend", False),  # Friday is no weekend day
        ("2024-10-14", "everything since last monday", True),
        ("2024-10-21", "everything since last monday", False),  # a Monday to come is not "last"
        ("2024-10-14", "the night before last night", False),
    ],
)
def test_relative_days_people_say(value, text, said):
    from guard.normalise import mentions_datetime

    assert (mentions_datetime(value, text, datetime(2024, 10, 16)) is not None) is said  # a Wednesday


@pytest.mark.parametrize(
    ("value", "text", "said"),
    [
        ("19:30", "a table for 4 tonight at 7:30", True),  # tonight: the evening's 7:30
        ("08:00", "on my calendar from 8 to 11am", True),  # a range's start takes its end's am
        ("20:00", "on my calendar from 8 to 11am", False),
        ("21:00", "a table for 4 tonight at 7:30", False),
        ("2024-12-27", "file vacation Dec 23-27 2024", True),  # a range's end, the month said once
        ("2024-12-25", "file vacation Dec 23-27 2024", False),  # a day inside it is not said
        # a range's start before its end's pm or month: "2-3pm", "21–25 July", the afternoon said once in Chinese
        ("14:00", "a 1:1 with Priya this Thursday 2-3pm", True),
        ("14:00", "Can we meet Wednesday, November 20 from 2:00 to 3:30 PM ET?", True),  # on the hour, with its zeros
        ("14:00", "Can we meet Wednesday from 2:00 to 3:30 AM?", False),
        ("2024-07-21", "leave from the 21st to the 25th of July", True),
        ("2024-07-21", "leave 21–25 July please", True),
        ("15:00", "2025年5月20日下午3点到4点", True),
        ("16:00", "2025年5月20日下午3点到4点", True),
        # everyday negatives: a party's size before the hour, a day count before a date, a later start
        ("14:00", "a table for 2, 3pm on Thursday", False),
        ("2024-07-12", "a table for 12 on 25 July", False),
        ("2024-07-27", "leave 21–25 July please", False),
        # the hour and its word after "at" or "around" in other languages
        ("08:00", "un train Paris → Lyon, départ vers 8h", True),
        ("13:00", "spätestens um 13 Uhr da sein", True),
        # everyday negatives: hours of a duration, a shift's length, an hour without "at"
        ("08:00", "the battery lasts 8h", False),
        ("08:00", "in 8h please", False),
        ("13:00", "die Fahrt dauert 13 Uhr?", False),
    ],
)
def test_times_and_ranges_people_write(value, text, said):
    from guard.normalise import mentions_datetime

    assert (mentions_datetime(value, text, datetime(2024, 5, 10)) is not None) is said


def test_a_range_shares_its_ends_scale():
    from guard.normalise import numbers_in

    assert {150_000, 180_000} <= set(numbers_in("salary 150-180k USD"))
    assert {2_000_000, 3_000_000} <= set(numbers_in("between 2-3 million people"))
    assert 0.05 in numbers_in("a 5-10% discount")
    assert set(numbers_in("pages 5-10 please")) == {5, 10}  # no scale, nothing added
    assert 150_000 not in numbers_in("150 or 180k")  # not a range


def test_the_nth_of_this_month():
    from guard.normalise import mentions_datetime

    assert mentions_datetime("2024-10-24", "the 24th at 9:15, same month", datetime(2024, 10, 8)) is not None
    assert mentions_datetime("2024-10-24", "book for 24 people", datetime(2024, 10, 8)) is None  # a count is no day


def test_numbers_in_scientific_notation():
    from guard.normalise import number_key

    assert number_key(0.0001) in numbers_in("[H+] = 1 × 10⁻⁴ M")
    assert number_key(6.02e23) in numbers_in("6.02 x 10^23 atoms")
    assert number_key(3e-9) in numbers_in("a charge of 3*10**-9 C")
    # a product of two numbers is no power of ten
    assert number_key(2e10) not in numbers_in("I have 2 x 10 boxes") and number_key(4e10) not in numbers_in("a 4 x 10 room")


@pytest.mark.parametrize(
    ("text", "number", "present"),
    [
        ("What's minus forty degrees Fahrenheit in Kelvin?", -40, True),
        ("it is minus 12 outside", -12, True),
        ("a balance of negative 3.5", -3.5, True),
        # everyday negatives: a subtraction, in words or digits, and the word alone
        ("what is 40 minus 3", -3, False),
        ("fifty minus forty", -40, False),
        ("press the minus key twice", -2, False),
    ],
)
def test_a_number_said_with_minus_is_negative(text: str, number: float, present: bool) -> None:
    assert (number_key(number) in numbers_in(text)) is present


@pytest.mark.parametrize("text", ["yesterday", "Tomorrow", " tmrw ", "this morning", "the day after tomorrow", "tonight"])
def test_a_day_named_relative_to_today(text: str) -> None:
    assert named_day(text)


@pytest.mark.parametrize("text", ["yesterday's report", "today's special", "the day before the meeting", "morning run"])
def test_words_about_a_named_day_are_not_one(text: str) -> None:
    assert not named_day(text)


@pytest.mark.parametrize(("text", "value"), [("3 dozen cupcakes", 36), ("2 dozen eggs", 24), ("5 hundred people", 500)])
def test_a_count_of_dozens_or_hundreds_is_the_number_it_makes(text, value):
    found = numbers_in(text)
    assert value in found and int(text.split()[0]) in found  # and the count itself


@pytest.mark.parametrize("text", ["room 12, dozens of people", "12 hundredths", "a dozen roses and 3 tulips"])
def test_everyday_numbers_beside_dozen_words_are_not_multiplied(text):
    assert 36 not in numbers_in(text) and 1200 not in numbers_in(text)


def test_last_nite_as_people_type_it_is_yesterday():
    assert mentions_datetime("2024-01-15", "yo who won the lakers game last nite", datetime(2024, 1, 16, 9))
    assert not mentions_datetime("2024-01-15", "yo who won the lakers game tonite", datetime(2024, 1, 16, 9))
    assert not mentions_datetime("2024-01-15", "the last knight of the round table", datetime(2024, 1, 16, 9))


def test_the_days_a_text_names_relative_to_today():
    from guard.normalise import named_days_in

    assert named_days_in("remind me tmrw at 9") == {1}
    assert named_days_in("the day after tomorrow works") == {2}
    assert named_days_in("tonight, or yday if you can") == {0, -1}
    # everyday negatives: a weekday, a date, a word that holds "today" in it
    assert named_days_in("see you on friday") == frozenset()
    assert named_days_in("due 2025-03-10") == frozenset()
    assert named_days_in("todays_report.csv is attached") == frozenset()


@pytest.mark.parametrize(
    ("text", "value", "read"),
    [
        ("how many grams is two and a quarter cups of flour", 2.25, True),
        ("the flight is 2 and a half hours", 2.5, True),
        ("one and three quarters teaspoons of salt", 1.75, True),
        # everyday negatives: a fraction alone, "half and half", a whole number and another fraction
        ("add a quarter cup of milk", 1.25, False),
        ("a splash of half and half", 0.5, False),
        ("how many grams is two and a quarter cups of flour", 2.5, False),
    ],
)
def test_a_whole_number_and_a_fraction(text: str, value: float, read: bool) -> None:
    from guard.normalise import numbers_in

    assert (value in numbers_in(text)) is read


def test_a_flat_written_as_its_sign_is_the_note_people_type_with_a_b() -> None:
    assert normalise_text("What notes are in B♭ Lydian?") == "what notes are in bb lydian"
    # everyday negatives: the natural note stays itself; a sharp and its sign read alike; no sign, no change
    assert normalise_text("B Lydian") == "b lydian"
    assert normalise_text("F♯ minor") == normalise_text("F# minor") == "f minor"
    assert normalise_text("bebop in Bb") == "bebop in bb"


def test_fractions_written_with_a_slash_or_in_one_character():
    assert numbers_in("how much is 2 1/4 cups of flour")[2.25] == "2 1/4"
    assert 2.5 in numbers_in("a 2-1/2 inch pipe") and 0.75 in numbers_in("a 3/4 inch drill bit")
    assert 2.5 in numbers_in("2½ cups of milk") and 0.5 in numbers_in("½ tsp salt")
    # "2½" is no 21 (NFKC alone writes "21⁄2"), to the numbers nor to the words
    assert 21 not in numbers_in("2½ cups of milk") and normalise_text("2½ cups") == "2 1 2 cups"
    # Everyday negatives: a date, a season, a screen's ratio (more on top than below) read no fraction
    assert 0.75 not in numbers_in("let's meet on 3/4")
    assert not {v for v in numbers_in("the 2024/25 season") if isinstance(v, float)}
    assert 16 / 9 not in numbers_in("a 16/9 screen") and round(16 / 9, 6) not in numbers_in("a 16/9 screen")
