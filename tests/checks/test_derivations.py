"""Values derived by a fixed rule from the user's words ground; values a model merely believes do not."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from guard import Guard
from guard.checks.derivations import derive
from guard.taxonomy import Category

SAID = [
    (0, "Analyse tracks from March to August. Legal updates from January 2023 to June 2023, please."),
    (1, "Pay $75 with no cost adjustment, on weekdays, near the Eiffel Tower."),
]


@pytest.mark.parametrize(
    ("value", "param", "how"),
    [
        (3, "startMonth", "march -> month 3"),
        ("2023-06-30", "endDate", "June 2023 -> 2023-06-30"),
        ("2023-01-01", "start", "January 2023 -> 2023-01-01"),
        ("Friday", "days", "weekdays -> Friday"),
        ("USD", "currency", "$ -> USD"),
        (0, "costAdjustment", "no cost -> 0"),
        (48.8584, "latitude", "coordinates of Eiffel Tower"),
    ],
)
def test_a_rule_derives_the_value_and_says_how(value: object, param: str, how: str) -> None:
    assert derive(value, param, SAID)[1] == how


@pytest.mark.parametrize(
    ("value", "param"),
    [
        (5, "startMonth"),  # May was never named
        (3, "count"),  # a month's number only for a parameter about months
        ("2023-06-15", "endDate"),  # mid-month is no bound of a named month
        ("Saturday", "days"),  # weekdays hold no Saturday
        ("EUR", "currency"),
        (1, "costAdjustment"),
        (48.8584, "distance"),
        (2009, "endDecade"),  # "the decade starting in 2000" ends when? a belief, not a rule
    ],
)
def test_no_rule_derives_what_was_not_said(value: object, param: str) -> None:
    assert derive(value, param, SAID) is None


def test_grounding_accepts_a_derived_value_and_names_the_rule() -> None:
    tool = {
        "name": "track_popularity",
        "description": "Popularity of music tracks over a span of months.",
        "parameters": {
            "type": "object",
            "properties": {"startMonth": {"type": "integer"}, "endMonth": {"type": "integer"}},
            "required": ["startMonth", "endMonth"],
        },
    }
    guard = Guard([tool])
    said = [("user", "How popular were tracks from March to August?")]
    assert guard.check({"name": "track_popularity", "args": {"startMonth": 3, "endMonth": 8}}, said).findings == []
    (finding,) = guard.check({"name": "track_popularity", "args": {"startMonth": 3, "endMonth": 9}}, said).findings
    assert finding.category is Category.UNGROUNDED_VALUE and finding.path == "$.endMonth"


def test_a_yes_or_no_as_text_answers_a_switch_the_user_named() -> None:
    said = [(0, "Run a full scan and automatically remove any threats.")]
    assert derive("yes", "autoRemove", said) == (0, "automatically -> yes")
    assert derive("yes", "sendReport", said) is None


TODAY = date(2023, 1, 1)


@pytest.mark.parametrize(
    ("value", "param", "description", "said", "how"),
    [
        ("1w", "timeFrame", "", "Analyse last week's volatility.", "last week -> 1w"),
        (7, "analysisPeriod", "Number of days to analyse.", "How was the past week?", "past week -> 7"),
        ("2028-01-01", "endDate", "", "Eclipses over the next five years?", "next five years from 2023-01-01 -> 2028-01-01"),
        ("2022-10-01", "start", "", "Sales in the past 3 months.", "past 3 months from 2023-01-01 -> 2022-10-01"),
        ("2015-01-01", "start", "", "Events from 2015 to 2025.", "2015 -> 2015-01-01"),
        ("2025-12-31", "end", "", "Events from 2015 to 2025.", "2025 -> 2025-12-31"),
        ("12-10", "date", "", "Today's date, December 10th.", "december 10 th -> 12-10"),
        ("2 times per week", "frequency", "", "Audio stimulation twice per week.", "twice per week -> 2 times per week"),
        (303, "patternId", "The pattern, e.g., 303 for 'infinite loops'.", "Look for infinite loops.",
         "infinite loops -> 303 (the description's mapping)"),
        (1.0, "speechRate", "", "A natural intonation at a standard rate.", "standard rate -> 1.0"),
        ("25-30", "age_range", "", "I'm a 26-year-old male.", "26 in 25-30"),
        ("male", "gender", "", "My grandfather is 75.", "grandfather -> male"),
        ("British", "culture", "", "Oliver from the UK.", "UK -> British"),
        ("USA", "country", "", "We live in the United States.", "United States -> USA"),
        ("New York, USA", "destination", "", "A trip to New York.", "New York with its country or region -> New York, USA"),
        ("#ADD8E6", "background", "", "A light blue background.", "light blue -> #ADD8E6"),
        ("#00FF00", "primaryColor", "", "Green as the primary color.", "green -> #00FF00"),
    ],
)
def test_a_new_rule_derives_the_value_and_says_how(value: object, param: str, description: str, said: str, how: str) -> None:
    assert derive(value, param, [(0, said)], description=description, today=TODAY) == (0, how)


@pytest.mark.parametrize(
    ("value", "param", "description", "said"),
    [
        ("2w", "timeFrame", "", "Analyse last week's volatility."),  # one week, not two
        (7, "analysisPeriod", "Number of hours.", "How was the past week?"),  # a week is 168 hours
        (7, "analysisPeriod", "", "How was the past week?"),  # no unit to count in
        ("2027-01-01", "endDate", "", "Eclipses over the next five years?"),
        ("2028-01-01", "endDate", "", "Eclipses in five years' time, or so."),  # no direction said
        ("2015-06-30", "start", "", "Events from 2015 to 2025."),  # mid-year is no bound of a year
        ("2016-01-01", "start", "", "Events from 2015 to 2025."),
        ("2015-01-01", "start", "", "Order 2015-03-02 arrived."),  # the year of a date is no year named
        ("2025-01-01", "start", "", "The current time is October 09, 2025."),  # nor is a written date's
        ("12-11", "date", "", "Today's date, December 10th."),
        ("3 times per week", "frequency", "", "Audio stimulation twice per week."),
        (304, "patternId", "The pattern, e.g., 303 for 'infinite loops'.", "Look for infinite loops."),
        (303, "patternId", "The pattern, e.g., 303 for 'infinite loops'.", "Look for spirals."),
        (1.5, "speechRate", "", "A natural intonation at a standard rate."),
        (1.0, "volume", "", "A natural intonation at a standard rate."),
        ("30-35", "age_range", "", "I'm a 26-year-old male."),
        ("female", "gender", "", "My grandfather is 75."),
        ("Spanish", "culture", "", "Oliver from the UK."),
        ("no", "answer", "", "A Norwegian friend."),  # a word before it is a code
        ("Paris, USA", "destination", "", "A trip to New York."),  # the place itself was not said
        ("New York, Boston", "destination", "", "A trip to New York."),  # nor was every other part
        ("#0000FF", "background", "", "A light blue background."),  # blue is not light blue
        ("#FF0000", "primaryColor", "", "Green as the primary color."),
    ],
)
def test_a_new_rule_derives_nothing_that_was_not_said(value: object, param: str, description: str, said: str) -> None:
    assert derive(value, param, [(0, said)], description=description, today=TODAY) is None


def test_relative_words_resolve_against_the_date_the_user_gave_as_today() -> None:
    said = [(0, "Set an alarm for 8 am tomorrow."), (1, "Today is 2021-10-13.")]
    assert derive("2021-10-14 08:00:00", "time", said, today=TODAY) == (
        1, "tomorrow 8 am from today 2021-10-13 -> 2021-10-14 08:00:00"
    )
    assert derive("2021-10-15 08:00:00", "time", said, today=TODAY) is None
    assert derive("2021-10-14 09:00:00", "time", said, today=TODAY) is None


def test_a_weekday_follows_a_date_the_user_stated() -> None:
    said = [(0, "Check in next Monday. 2022-03-14."), (1, "Check out Friday.")]
    assert derive("2022-03-18", "check_out_time", said) == (1, "friday after 2022 03 14 -> 2022-03-18")
    assert derive("2022-03-25", "check_out_time", said) is None  # the Friday of the week after
    assert derive("2022-03-17", "check_out_time", said) is None  # a Thursday nobody named


def test_a_weekday_ends_a_range_begun_on_a_date_written_any_way() -> None:
    today = date(2024, 3, 4)
    said = [(0, "Book me a room in Lisbon from March 11, checking out Friday.")]
    assert derive("2024-03-15", "check_out", said, today=today) == (0, "friday after march 11 -> 2024-03-15")
    # Everyday negatives: the weekday nobody named, a Friday a week too far, no start date at all.
    assert derive("2024-03-14", "check_out", said, today=today) is None
    assert derive("2024-03-22", "end_date", [(0, "Starting March 11 through Friday, block my calendar.")], today=today) is None
    assert derive("2024-03-15", "end_date", [(0, "Block my calendar on Friday, I'm out.")], today=today) is None


def test_a_default_the_description_states_is_the_schemas_choice() -> None:
    assert derive(1.0, "rate", [], description="Playback rate; the default is 1.0.") == (None, "the description's default 1.0")
    assert derive(2.0, "rate", [], description="Playback rate; the default is 1.0.") is None


def test_a_switch_answer_follows_the_polarity_of_the_words() -> None:
    said = [(0, "Run a full scan and automatically remove any threats.")]
    assert derive("no", "autoRemove", said) is None  # they asked for removal: "no" is not theirs
    declined = [(0, "Run a full scan but do not remove anything.")]
    assert derive("no", "autoRemove", declined) == (0, "remove -> no")
    assert derive("yes", "autoRemove", declined) is None


def test_may_is_a_month_only_where_a_date_follows() -> None:
    assert derive(5, "startMonth", [(0, "You may pick any span")]) is None
    assert derive(5, "startMonth", [(0, "From May to August")])[1] == "may -> month 5"


def test_coordinates_need_a_named_place_and_are_not_checked_against_it() -> None:
    # Only that a place was named is checked: which coordinates it has needs a gazetteer.
    assert derive(48.8584, "latitude", [(0, "Show me the weather where I am now.")]) is None
    assert derive(-33.9, "latitude", [(0, "Show me the weather near the Eiffel Tower.")])[1] == "coordinates of Eiffel Tower"


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("2024-08-14", "a hotel in Paris, 4 nights starting August 10 2024", True),
        ("2024-08-15", "a flat for two weeks from August 1 2024", True),
        ("2024-08-15", "a hotel in Paris, 4 nights starting August 10 2024", False),  # one night too many
        ("2024-08-14", "a hotel in Paris for 4 nights", False),  # no start date said
        ("2024-08-14", "a table for 4 people on August 10 2024", False),  # people are no nights
        # one night: out the next morning
        ("2024-03-03", "find me a hotel in Brussels for Saturday night, just me", True),
        ("2024-03-02", "a room near the station tonight please", True),
        # everyday negatives: a dinner on Saturday night, a night that is not the one before, a flight's departure
        ("2024-03-02", "find me a hotel in Brussels for Saturday night, just me", False),
        ("2024-03-04", "find me a hotel in Brussels for Saturday night, just me", False),
    ],
)
def test_the_end_of_a_stay_from_its_start_and_length(value, text, derived):
    assert (derive(value, "check_out", [(0, text)], today=date(2024, 3, 1)) is not None) is derived


def test_a_night_out_is_no_stay():
    # 2024-03-01 is a Friday: the day after Saturday night is a departure's day only for a stay
    assert derive("2024-03-03", "departure_date", [(0, "fly me out after Saturday night's dinner")], today=date(2024, 3, 1)) is None
    assert derive("2024-03-03", "end", [(0, "book dinner for Saturday night")], today=date(2024, 3, 1)) is None


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        ("Seville, Spain", "location", "qué tiempo hace ahora en sevilla??", True),
        ("Beijing", "origin", "帮我查一下2025年10月1日北京到上海的高铁票", True),
        ("Shanghai", "destination", "帮我查一下2025年10月1日北京到上海的高铁票", True),
        ("Mumbai", "from_city", "15 नवंबर 2025 को मुंबई से गोवा की फ्लाइट दिखाओ", True),
        ("New York City", "city", "What's the current population of the Big Apple?", True),
        ("Chicago", "city", "How far is the Windy City from Boston?", True),
        ("Osaka", "city", "大阪駅の近くでラーメン屋さん探して", True),
        # everyday negatives: another city, a city in another country, a part nobody said
        ("Madrid, Spain", "location", "qué tiempo hace ahora en sevilla??", False),
        ("Seville, Colombia", "location", "qué tiempo hace ahora en sevilla??", False),
        ("Shanghai Hongqiao Station", "destination", "帮我查一下北京到上海的高铁票", False),
        ("Seville, Old Town", "location", "qué tiempo hace ahora en sevilla??", False),
    ],
)
def test_a_city_named_in_another_language_script_or_by_a_nickname(value, param, text, derived):
    assert (derive(value, param, [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("IN", "दिल्ली का मौसम अभी कैसा है?", True),
        ("JP", "東京の天気は？", True),
        ("CN", "東京の天気は？", False),  # Tokyo is in Japan
        ("IN", "what's the weather like right now?", False),
    ],
)
def test_the_country_of_a_city_named_in_another_script(value, text, derived):
    assert (derive(value, "country_code", [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("https://github.com", "is github.com down or is it just me", True),
        ("https://www.example.org/docs/", "summarise example.org/docs for me", True),
        ("http://news.ycombinator.com", "check news.ycombinator.com please", True),
        ("https://github.com/login", "is github.com down", False),  # a path the user never wrote
        ("https://gitlab.com", "is github.com down", False),  # another host
        ("https://github.com.evil.io", "is github.com down", False),
    ],
)
def test_a_web_address_written_without_its_scheme(value, text, derived):
    assert (derive(value, "url", [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("2025-01-01", "engagement for last month. Today is 2025-02-10.", True),  # its first day
        ("2025-01-31", "engagement for last month. Today is 2025-02-10.", True),  # and its last
        ("2025-09-30", "they expect to sign by the end of this month. Today's 2025-09-08.", True),
        ("2025-06-01", "pay on the 1st of every month starting next month. Today is 2025-05-20.", True),
        ("2025-03-10", "the blender I ordered last week. Today is 2025-03-19.", True),  # last week's Monday
        ("2025-03-16", "the blender I ordered last week. Today is 2025-03-19.", True),  # and its Sunday
        ("2025-01-15", "engagement for last month. Today is 2025-02-10.", False),  # a day inside it is not said
        ("2025-09-01", "they expect to sign by the end of this month. Today's 2025-09-08.", False),  # the end, not the start
        ("2025-02-01", "engagement for the month. Today is 2025-02-10.", False),  # no month named
    ],
)
def test_the_bounds_of_a_week_month_or_year_named_from_today(value, text, derived):
    assert (derive(value, "start_date", [(0, text)], today=date(2026, 11, 27)) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "description", "derived"),
    [
        ("2025-02-01", "before", "", True),  # an exclusive bound: the day after last month
        ("2025-02-01", "end", "End of the range (exclusive).", True),
        ("2025-02-01", "end_date", "Last day to include.", False),  # an inclusive end is the 31st
        ("2025-02-01", "after", "", False),  # a lower bound
        ("2025-02-02", "before", "", False),
    ],
)
def test_an_exclusive_upper_bound_is_the_day_after_the_period(value, param, description, derived):
    said = [(0, "any invoices from acme last month? Today is 2025-02-10.")]
    assert (derive(value, param, said, description=description, today=date(2026, 11, 27)) is not None) is derived


def test_the_date_span_rules_read_a_bounded_part_of_each_message():
    """A message of thousands of "N nights starting ..." or "last month" costs no more than its
    first 4,096 characters: a span written past them is not read."""
    filler = "lorem ipsum " * 500  # 6,000 characters
    assert derive("2024-08-14", "check_out", [(0, "4 nights starting August 10 2024. " + filler)], today=date(2024, 3, 1))
    assert derive("2024-08-14", "check_out", [(0, filler + "4 nights starting August 10 2024")], today=date(2024, 3, 1)) is None
    assert derive("2025-01-31", "end", [(0, "last month. Today is 2025-02-10. " + filler)], today=date(2026, 1, 1))
    assert derive("2025-01-31", "end", [(0, "Today is 2025-02-10. " + filler + " last month")], today=date(2026, 1, 1)) is None


@pytest.mark.parametrize(
    ("value", "param", "description", "text", "derived"),
    [
        ("en", "targetLanguage", "", "Summarise the text in English.", True),
        ("pt-BR", "locale", "", "Subtitles in Brazilian Portuguese, please.", True),
        ("es", "lang", "Language code.", "Translate it into Spanish", True),
        ("deu", "language", "ISO 639-3 code.", "The German version of the page", True),
        ("fr", "targetLanguage", "", "Summarise the text in English.", False),  # another language
        ("en", "country", "", "Summarise the text in English.", False),  # the parameter takes no language
        ("it", "language", "", "Translate it, please.", False),  # "it" is a word, Italian was never named
        # named in another common language, inflected ("ins Englische") or in its own script
        ("en", "target_language", "ISO 639-1 code", 'Kannst du das bitte ins Englische übersetzen: "Die Lieferung verzögert sich."', True),
        ("en", "target", "language code", "¿Me lo traduces al inglés? 'Buenos días'", True),
        ("ja", "target_language", "", "翻译成日语：你好", True),
        ("en", "target_language", "", "이 문장을 영어로 번역해 주세요", True),
        ("en", "target_language", "", "帮我把这段话翻译成英文：我们下周三下午开会", True),  # the Traditional Chinese name, written in mainland text
        ("fr", "target_language", "", "帮我把这段话翻译成英文：我们下周三下午开会", False),
        ("zh", "target_language", "", "帮我把这段话翻译成英文：我们下周三下午开会", False),  # the text's own language is no target
        ("fr", "target_language", "", "Kannst du das bitte ins Englische übersetzen?", False),  # another language
        ("de", "target_language", "", "Lies mir die Nachricht vor, bitte.", False),  # written in German, naming none
        # a target described through its input text is still the target ("into Spanish")
        ("es", "target", "The language to use for translation of the input text", "translate the quote into Spanish", True),
        ("fr", "target", "The language to use for translation of the input text", "translate the quote into Spanish", False),
        ("de", "target", "The language to use for translation of the input text", "translate the quote into Spanish", False),
    ],
)
def test_a_language_code_for_the_language_the_user_named(value, param, description, text, derived):
    assert (derive(value, param, [(0, text)], description=description) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "description", "text", "derived"),
    [
        (1500, "meetingTime", "Time of the meeting in 24-hour format, e.g., 1400 for 2 PM.", "I have a meeting at 3 PM", True),
        ("0930", "start_time", "Start as HHMM.", "the standup starts at 9:30am", True),
        (1930, "departureTime", "Departure in 24-hour format.", "a train tonight at 7:30", True),
        (1530, "meetingTime", "Time of the meeting in 24-hour format.", "I have a meeting at 3 PM", False),  # not the time said
        (1500, "meetingTime", "Time of the meeting.", "I have a meeting at 3 PM", False),  # no clock number described
        (1500, "budget", "Amount in 24-hour format.", "I have a meeting at 3 PM", False),  # no time parameter
    ],
)
def test_a_clock_time_as_a_24_hour_number(value, param, description, text, derived):
    assert (derive(value, param, [(0, text)], description=description, today=TODAY) is not None) is derived


DAYS = {
    "name": "flu_rates",
    "description": "Flu incidence for a list of dates.",
    "parameters": {
        "type": "object",
        "properties": {
            "dates": {"type": "array", "items": {"type": "string", "format": "date"}},
            "day": {"type": "string", "format": "date"},
        },
    },
}


@pytest.mark.parametrize(
    ("args", "flagged"),
    [
        ({"dates": ["2021-05-03", "2021-05-04", "2021-05-05", "2021-05-06", "2021-05-07"]}, set()),  # every day of the span
        ({"dates": ["2021-05-03", "2021-05-05", "2021-05-07"]}, {"$.dates[1]"}),  # every other day: not the span
        ({"dates": ["2021-05-03", "2021-05-04", "2021-05-05", "2021-05-06"]}, {"$.dates[1]", "$.dates[2]", "$.dates[3]"}),  # ends short
        ({"day": "2021-05-05"}, {"$.day"}),  # one day inside the span is a choice nobody made
    ],
)
def test_the_days_between_two_stated_dates_in_a_list_of_days(args, flagged):
    said = [("user", "The dates are from May 3, 2021 to May 7, 2021.")]
    findings = Guard([DAYS]).check({"name": "flu_rates", "args": args}, said).findings
    assert {f.path for f in findings if f.category is Category.UNGROUNDED_VALUE} == flagged


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        ("2024-04-08", "from_date", "Today's 2024-04-15. News about the EU AI Act from the past week", True),  # the stated today
        ("2024-04-13", "date", "add it to my meal plan for saturday dinner. today's wed the 10th of april 2024", True),
        ("2024-04-01", "from_date", "Today's 2024-04-15. News about the EU AI Act from the past week", False),
        ("2024-04-20", "date", "add it to my meal plan for saturday dinner. today's wed the 10th of april 2024", False),
        ("2024-04-13", "date", "add it to my meal plan for saturday dinner. It's the 10 of us tonight", False),  # no date stated
        ("2024-07-05", "date", "UV index in Miami tomorow? today is july 4 2024", True),  # as people type it
        ("2024-07-03", "date", "UV index in Miami yesterdy? today is july 4 2024", True),
        ("2024-07-06", "date", "UV index in Miami tomorow? today is july 4 2024", False),
    ],
)
def test_relative_dates_from_a_today_the_user_wrote(value, param, text, derived):
    assert (derive(value, param, [(0, text)], today=date(2026, 11, 27)) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "said", "derived"),
    [
        (65, "duration_minutes", ["took me an hour and five minutes"], True),  # "an hour" is one hour
        (30, "max_total_minutes", ["done in under half an hour"], True),
        (90, "minutes", ["an hour and a half, roughly"], True),
        (60, "minutes", ["an hour and a half, roughly"], False),  # the half counts
        (30, "minutes", ["an hour and a half, roughly"], False),  # "a half" alone is no half hour
        (70, "duration_minutes", ["took me an hour and five minutes"], False),
        ("JPY", "to_currency", ["how much is 250 euros in yen these days"], True),  # a currency's last name word
        ("EUR", "from_currency", ["how much is 250 euros in yen these days"], True),
        ("AUD", "currency", ["it costs 20 dollars"], False),  # dollars are US dollars unless said otherwise
        ("CNY", "to_currency", ["how much is 250 euros in yen"], False),
        (42, "amount", ["dinner was $126 for the three of us"], True),  # a share of a stated amount
        (320000, "loan_amount", ["a $400,000 house, 30 year fixed at 6.5%", "20%"], True),  # percent in a later message
        (40, "amount", ["dinner was $126 for the three of us"], False),
        (63, "amount", ["dinner was $126 for three"], False),  # no one is said to share it
        ("LHR", "destination", ["flights from JFK to Heathrow on September 18th"], True),  # an airport's own name
        ("SEA", "destination", ["a flight to Seattle on Friday"], True),  # an airport of the city said
        ("LGW", "destination", ["flights from JFK to Heathrow on September 18th"], False),  # Gatwick was not said
        ("SEA", "team_code", ["a flight to Seattle on Friday"], False),  # the parameter takes no airport
        ("BOS", "destination", ["a flight to Seattle on Friday"], False),
        ("UME", "destination", ["Need a trip to Umeå: fly up Tuesday"], True),  # the table writes "Umea"
        ("UME", "destination", ["Need a trip to Uppsala: fly up Tuesday"], False),
    ],
)
def test_everyday_amounts_codes_and_durations(value, param, said, derived):
    assert (derive(value, param, list(enumerate(said))) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("2024-02-14", "what's on my calendar on the 14th? it's february 2024", True),
        ("2024-02-03", "book the cleaner for the 3rd, we're in Feb 2024", True),
        ("2024-02-15", "what's on my calendar on the 14th? it's february 2024", False),  # another day
        ("2024-03-14", "what's on my calendar on the 14th? it's february 2024", False),  # another month
        ("2024-02-14", "the office on the 14th floor, lease from february 2024", False),  # an ordinal of a floor
        ("2024-02-14", "what's on my calendar on the 14th?", False),  # no month stated
    ],
)
def test_a_day_of_the_month_in_the_month_the_user_stated(value, text, derived):
    assert (derive(value, "start_date", [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        (1, "Quantity", "Could you please add another pair of Nike sneakers to my cart?", True),
        (1, "quantity", "Order a large pepperoni pizza for delivery", True),
        ("1", "ticket_count", "Book me one ticket for the Friday show", True),
        (1, "quantity", "Order pizzas for the team", False),  # how many was never said
        (1, "quantity", "Add two pairs of sneakers to my cart", False),  # another number was
        (1, "quantity", "Order a pizza for the 5 of us", False),
        (1, "priority", "Open a ticket for the broken printer", False),  # no count
        (2, "quantity", "Order a large pepperoni pizza", False),
        # in a list of things each with its own count, the one asked for with "a" is one
        (1, "quantity", "add two margherita pizzas and a large caesar, no croutons on the caesar", True),
        (1, "qty", "3 shirts, one tie and two belts please", True),
        (1, "quantity", "two pizzas and a couple of cokes", False),
        (1, "quantity", "two pizzas for a party of 8", False),
        (1, "quantity", "add 2 lattes, and a few cookies", False),
    ],
)
def test_one_of_a_thing_asked_for_with_an_article(value, param, text, derived):
    assert (derive(value, param, [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "said", "derived"),
    [
        ("601233448890", "member_number", ["how many points do i have? card no. 6012 3344 8890"], True),  # digits in groups
        ("9400111899561234567890", "tracking_number", ["tracking 9400 1118 9956 1234 5678 90 showed up smashed"], True),
        ("601233448899", "member_number", ["how many points do i have? card no. 6012 3344 8890"], False),
        ("60123344", "member_number", ["card no. 6012 3344 8890, pin 1234"], False),  # part of the number is another one
        ("2025-02", "billing_period", ["whats my electricty bill for feb 2025?"], True),  # the month itself
        ("2025-03", "billing_period", ["whats my electricty bill for feb 2025?"], False),
        (2, "visits_per_day", ["someone dropping in twice a day would be enough"], True),
        (3, "sessions_per_week", ["I train three times a week"], True),
        (2, "visits_per_week", ["someone dropping in twice a day"], False),  # another period
        (3, "visits_per_day", ["someone dropping in twice a day"], False),
        (1, "limit", ["The latest pipeline on main failed. What broke?"], True),  # the one latest run
        (1, "max_results", ["when is the ISS next visible over Lisbon?"], True),
        (1, "limit", ["show me the latest episodes of the podcast"], False),  # more than one
        (1, "limit", ["show me the last 5 runs"], False),
        (1, "limit", ["list the pipelines on main"], False),
        ("2025-03-18", "date", ["the offsite is on the 18th of next month", "fyi today is 2025-02-10"], True),
        ("2025-02-18", "date", ["the offsite is on the 18th of next month", "fyi today is 2025-02-10"], False),
    ],
)
def test_numbers_in_groups_months_frequencies_and_the_latest_one(value, param, said, derived):
    assert (derive(value, param, list(enumerate(said)), today=date(2026, 11, 27)) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("18:00", "could we get 2 extra towels sent up this evening around 6?", True),  # the part of the day says pm
        ("09:00", "a laundry pickup tomorrow between nine and eleven in the morning", True),
        ("11:00", "a laundry pickup tomorrow between nine and eleven in the morning", True),
        ("14:00", "come over this afternoon at 2", True),
        ("06:00", "could we get 2 extra towels sent up this evening around 6?", False),
        ("21:00", "a laundry pickup tomorrow between nine and eleven in the morning", False),
    ],
)
def test_a_time_of_day_read_with_the_part_of_the_day(value, text, derived):
    from datetime import datetime

    from guard.normalise import mentions_datetime

    assert (mentions_datetime(value, text, datetime(2025, 11, 9)) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        ("en", "source_language", "how do I say 'Where is the nearest pharmacy?' in Japanese? the polite way", True),
        ("en", "from_lang", "Translate into French please: 'Thank you for your patience during the migration.'", True),
        ("en", "source_language", "Translate 'Wo ist die nächste Apotheke?' into English please", False),  # English is the target
        ("en", "target_language", "how do I say 'Where is the nearest pharmacy?' in Japanese?", False),  # the target is Japanese
        ("de", "source_language", "how do I say 'Where is the nearest pharmacy?' in Japanese?", False),
        # a text in a script only one common language writes in
        ("ko", "source_language", "translate '안녕하세요, 반갑습니다' into English", True),
        ("zh", "source_language", "翻译成英语：你好", True),
        ("ja", "source_language", "translate '안녕하세요' into English", False),  # Hangul is Korean
    ],
)
def test_the_source_language_of_an_english_text(value, param, text, derived):
    assert (derive(value, param, [(0, text)]) is not None) is derived


def test_a_year_is_read_in_a_bounded_part_of_each_message():
    """Every year a message writes was checked against the whole text before it: a message of
    thousands of dates took minutes (quadratic). Now the first 4,096 characters and at most 8
    years are read, each with the 40 characters before it."""
    filler = "on the 14th of february 2019 " * 300  # 8,700 characters of written dates
    assert derive("2024-01-01", "start", [(0, "events from 2024 onwards. " + filler)])
    assert derive("2024-01-01", "start", [(0, filler + "events from 2024 onwards")]) is None
    assert derive("2019-01-01", "start", [(0, filler)]) is None  # every 2019 there is the year of a date


@pytest.mark.parametrize(
    ("value", "param", "description", "text", "derived"),
    [
        (2550, "amount", "Amount in cents to refund.", "please refund $25.50 on that charge", True),  # a minor unit
        (9500, "unit_amount", "A positive integer in cents.", "forty-two hours of consulting at ninety-five dollars an hour", True),
        (2550, "amount", "Amount to refund.", "please refund $25.50 on that charge", False),  # not counted in cents
        (2551, "amount", "Amount in cents.", "please refund $25.50 on that charge", False),
        (2550, "amount", "Amount in cents.", "move 25.50 of my loyalty points", False),  # no money said
        (150000, "amount", "Amount in milliunits (1000 = 1.00 in the budget's currency).", "move 150 bucks from Dining Out", True),
        (12340, "amount_milliunits", "", "log a $12.34 coffee", True),
        # everyday negatives: cents where the unit is thousandths; thousandths of a sum nobody said; no money said
        (15000, "amount", "Amount in milliunits (1000 = 1.00).", "move 150 bucks from Dining Out", False),
        (150000, "amount", "Amount in milliunits.", "move 15 bucks from Dining Out", False),
        (150000, "amount", "Amount in milliunits.", "move 150 of my points to savings", False),
        ("usd", "currency", "Three-letter ISO code, lowercase.", "ninety-five dollars an hour", True),  # what "dollars" means
        ("GBP", "from", "Currency code.", "how much is 250 quid in yen", True),
        ("CAD", "currency", "Currency code.", "ninety-five dollars an hour", False),
        ("FR", "country_code", "", "whats the weather in lyon rn? celsius pls", True),  # the country of a city
        ("US", "country_code", "", "5 day forecast for austin tx, in fahrenheit", True),
        ("FR", "country_code", "", "have a nice day and thanks", False),  # no place is named
        ("DE", "country_code", "", "whats the weather in lyon rn?", False),
        ("FR", "language", "", "whats the weather in lyon rn?", False),  # the parameter takes no country
        ("US", "country_code", "", "ship it to 820 Elm Street, Boulder, Colorado 80302", True),  # a state needs no "in"
        ("US", "country_code", "", "a box of georgia peaches", False),  # Georgia is a state and a country
        ("India", "country", "", "current air quality in delhi?", True),  # a country's name
        ("South Korea", "country", "", "book me a hotel in busan for two nights", True),
        ("Pakistan", "country", "", "current air quality in delhi?", False),
        ("India", "country", "", "we ordered pizza for the team lunch", False),  # no place is named
        ("India", "language", "", "current air quality in delhi?", False),  # the parameter takes no country
    ],
)
def test_cents_conventional_currency_names_and_the_country_of_a_city(value, param, description, text, derived):
    assert (derive(value, param, [(0, text)], description=description) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        ("DE89370400440532013000", "to_iban", "My landlord's IBAN is DE89 3704 0044 0532 0130 00", True),  # an IBAN in groups
        ("DE89370400440532013001", "to_iban", "My landlord's IBAN is DE89 3704 0044 0532 0130 00", False),
        ("9780141439518", "isbn", "can u put a hold on ISBN 978-0-14-143951-8 at the Eastside branch", True),
        ("9780141439519", "isbn", "can u put a hold on ISBN 978-0-14-143951-8 at the Eastside branch", False),
        (1714521600, "from", "cpu on web-03 for May 1st 2024 between midnight and 6am UTC", True),  # a Unix timestamp
        (1714543200, "to", "cpu on web-03 for May 1st 2024 between midnight and 6am UTC", True),
        (1714543200000, "to", "cpu on web-03 for May 1st 2024 between midnight and 6am UTC", True),  # in milliseconds
        (1714546800, "to", "cpu on web-03 for May 1st 2024 between midnight and 6am UTC", False),  # 7am was not said
        (1714521600, "from", "cpu on web-03 for May 2nd 2024 at midnight", False),  # another day
    ],
)
def test_grouped_account_numbers_and_unix_timestamps(value, param, text, derived):
    assert (derive(value, param, [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        (20, "target_temp_c", "set the living room to 68 F and put it on heat", True),  # F alone is Fahrenheit
        (20, "target_temp_c", "set the living room to 68F", True),
        (21, "target_temp_c", "set the living room to 68 F", False),
        # degrees without a scale: a room set to 68 is in Fahrenheit (measures.bare_temperature;
        # this case was a negative before "68 degrees" read as a setting), 30 may be either
        (20, "target_temp_c", "set the living room to 68 degrees", True),
        (-1, "target_temp_c", "set the living room to 30 degrees", False),
    ],
)
def test_a_capital_f_or_c_after_a_number_is_a_temperature(value, param, text, derived):
    assert (derive(value, param, [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("2024-11-12T09:30:00+00:00", "It's 9:10am on Tuesday 12 Nov 2024 here in London. remind me in 20 min", True),
        ("2024-05-16T17:40:00-07:00", "take the laundry out in 2 hours. it's 3:40pm right now, Thursday, May 16 2024", True),
        ("2025-05-14T16:05:00Z", "silence it for the next 2 hours. It's 14:05 UTC on 2025-05-14 right now.", True),
        ("2024-11-12T09:40:00+00:00", "It's 9:10am on Tuesday 12 Nov 2024 here in London. remind me in 20 min", False),  # 30 min
        ("2024-11-12T09:30:00+00:00", "remind me in 20 min", False),  # no clock said
        ("2024-11-12T09:30:00", "we are 4 of us on Tuesday 12 Nov 2024, remind me in 20 min", False),  # "4 of us" is no clock
    ],
)
def test_a_span_of_time_from_the_clock_the_user_stated(value, text, derived):
    assert (derive(value, "remind_at", [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("+233244123456", "add contact kwame phone plus two three three two four four one two three four five six", True),
        ("+14155550199", "call me on four one five five five five zero one nine nine", True),
        ("+233244123457", "add contact kwame phone plus two three three two four four one two three four five six", False),
        ("+14155550199", "one or two of the five people at nine", False),  # no number dictated digit by digit
    ],
)
def test_a_phone_number_dictated_digit_by_digit(value, text, derived):
    assert (derive(value, "phone", [(0, text)]) is not None) is derived


def test_a_time_zone_for_a_city_written_with_its_accents():
    said = [(0, "If it's 3pm on 10 Jan 2025 in Sydney, what time is it in São Paulo?")]
    assert derive("America/Sao_Paulo", "to_timezone", said) is not None
    assert derive("America/Bogota", "to_timezone", said) is None


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        (1716297600, "from", "it's 14:20 UTC on 2024-05-21. check the metric for the last hour", True),  # back from now
        ("2024-11-12T08:40:00", "since", "It's 9:10am on Tuesday 12 Nov 2024. errors in the last 30 minutes?", True),
        ("2024-11-12T08:30:00", "since", "It's 9:10am on Tuesday 12 Nov 2024. errors in the last 30 minutes?", False),
        ("PT", "region", "I'm staying at Rua Augusta 120 in Lisbon for a few days", True),  # a geocoder's region code
        ("ES", "region", "I'm staying at Rua Augusta 120 in Lisbon for a few days", False),
    ],
)
def test_spans_back_from_the_stated_clock_and_a_region_code(value, param, text, derived):
    assert (derive(value, param, [(0, text)]) is not None) is derived


def test_ounces_of_a_liquid_asked_in_millilitres_are_fluid_ounces():
    said = [(0, "baby had a bottle 4 oz at 3:10 am")]
    assert derive(118, "amount_ml", said) is not None  # 4 US fluid ounces: 118.3 ml
    assert derive(120, "amount_ml", said) is None


def test_a_stated_time_moved_by_a_stated_length_or_into_utc_is_derived() -> None:
    today = date(2025, 8, 19)
    meeting = [(0, "Put a 45-minute 'Q3 planning' meeting on my calendar tomorrow at 2:30pm.")]
    assert derive("2025-08-20T15:15:00", "end", meeting, today=today) == (0, "45 minute after tomorrow 2 30 pm -> 2025-08-20T15:15:00")
    assert derive("15:15", "end_time", meeting, today=today) is not None
    london = [(0, "Set up a call on July 10, 2025 at 3pm London time, 90 minutes.")]
    assert derive("2025-07-10T14:00:00Z", "start_time", london, today=today)[1].startswith("Europe/London time of")
    assert derive("2025-07-10T16:30:00", "end_time", london, today=today) is not None
    # Everyday negatives: a length nobody gave, a zone nobody named, a start nobody stated.
    assert derive("2025-08-20T15:30:00", "end", meeting, today=today) is None
    assert derive("2025-07-10T19:00:00Z", "start_time", [(0, "A call on July 10, 2025 at 3pm, 90 minutes.")], today=today) is None
    assert derive("2025-08-20T15:15:00", "end", [(0, "Book a 45-minute massage for tomorrow afternoon.")], today=today) is None


def test_times_a_stated_interval_apart_from_a_stated_start_are_derived() -> None:
    said = [(0, "Remind me to take amoxicillin every 8 hours starting at 8am.")]
    assert derive("16:00", "times_of_day", said)[1] == "1 x 8 hours after at 8 am -> 16:00"
    assert derive("00:00", "times_of_day", said)[1] == "2 x 8 hours after at 8 am -> 00:00"
    # Everyday negatives: a time off the interval, an interval nobody said repeats, no start.
    assert derive("12:00", "times_of_day", said) is None
    assert derive("00:00", "times_of_day", [(0, "Take the pill at 8am; it lasts 8 hours.")]) is None
    assert derive("16:00", "times_of_day", [(0, "Remind me every 8 hours.")]) is None


def test_the_users_own_thing_a_description_names_is_said_by_my() -> None:
    described = "Calendar identifier. Use 'primary' for the user's main calendar."
    assert derive("primary", "calendarId", [(0, "Put lunch on my calendar tomorrow")], description=described) == (
        0, "my calendar -> primary (the user's main calendar, the description's mapping)")
    payer = "'me' for the current user, otherwise the friend's name."
    assert derive("me", "paid_by", [(0, "Dinner was $60, I paid.")], description=payer) is not None
    # Everyday negatives: someone else's calendar, a shared one, a payer who is not the user.
    assert derive("primary", "calendarId", [(0, "Put lunch on my husband's agenda")], description=described) is None
    assert derive("primary", "calendarId", [(0, "Add it to the team calendar")], description=described) is None
    assert derive("me", "paid_by", [(0, "Sam paid for dinner, $60.")], description=payer) is None


def test_a_name_the_user_said_with_its_place_written_before_it() -> None:
    said = [(0, "Show me the Lakers' games for the rest of this month.")]
    assert derive("Los Angeles Lakers", "team", said) == (0, "Lakers with its place -> Los Angeles Lakers")
    assert derive("Boston Celtics", "team", [(0, "Did the Celtics win last night?")]) is not None
    # Everyday negatives: another team of that city, words before the name that are no place, a name nobody said.
    assert derive("Los Angeles Clippers", "team", said) is None
    assert derive("Blue Lakers", "team", said) is None
    assert derive("Los Angeles Lakers", "team", [(0, "Show me tonight's games.")]) is None


def test_a_month_named_alone_is_its_nearest_occurrence() -> None:
    today = date(2025, 2, 20)
    said = [(0, "why was my gas bill so high in january??")]
    assert derive("2025-01", "billing_period", said, today=today) == (0, "in january (the nearest) -> 2025-01")
    assert derive("2025-03-31", "end_date", [(0, "book it for March")], today=today) is not None
    # Everyday negatives: a January two years back, "may" that is no month, a day inside the month.
    assert derive("2024-01", "billing_period", said, today=today) is None
    assert derive("2025-05", "billing_period", [(0, "you may pick any month")], today=today) is None
    assert derive("2025-01-15", "billing_period", said, today=today) is None


def test_one_thing_named_in_the_singular_is_a_quantity_of_one() -> None:
    said = [(0, "the charger showed up cracked, speaker's fine. can i get my money back for the charger?")]
    assert derive(1, "quantity", said) == (0, "the charger -> 1")
    # Everyday negatives: plural things, a count said, the thing after a plural one.
    assert derive(1, "quantity", [(0, "refund the tickets for my concert")]) is None
    assert derive(1, "quantity", [(0, "return 2 of the chargers")]) is None
    assert derive(1, "quantity", [(0, "Order pizzas for the team")]) is None


def test_a_quarter_a_slashed_date_and_a_clock_a_system_message_states() -> None:
    today = date(2025, 8, 5)
    assert derive("2025-09-30", "CloseDate", [(0, "closing at the end of this quarter")], today=today) is not None
    assert derive("2023/07/15", "mindate", [(0, "Last two years, top 20, newest first.")], today=date(2025, 7, 15)) is not None
    clock = [(0, "Current time: 2025-03-18T14:00:00Z (unix 1742306400)."), (1, "Mute monitor 8812034 for two hours.")]
    assert derive(1742313600, "end", clock) == (1, "Current time: 2025-03-18T14:00 + for two hours -> 1742313600")
    # Everyday negatives: the quarter's first day for its end, another span, a span before the clock was stated.
    assert derive("2025-07-01", "CloseDate", [(0, "closing at the end of this quarter")], today=today) is None
    assert derive(1742310000, "end", clock) is None
    assert derive(1742313600, "end", [(0, "Mute monitor 8812034 for two hours."), (1, "Current time: 2025-03-18T14:00:00Z.")]) is None


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("2026-04-13", "invoice brightline for 12 hrs consulting at 150/hr, net 30", True),
        ("2026-05-13", "Net-60 terms please", True),
        ("2026-03-29", "bill them, net 15 days", True),
        # Everyday negatives: another day, a net sum of money, a net weight.
        ("2026-04-14", "invoice them, net 30", False),
        ("2026-04-13", "we made a net 30 dollars profit", False),
        ("2026-04-13", "a net weight of 30 kg", False),
    ],
)
def test_payment_terms_fall_due_that_many_days_from_today(value, text, derived):
    assert (derive(value, "due_date", [(0, text)], today=date(2026, 3, 14)) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "derived"),
    [
        ("2025-06-12T12:00:00+01:00", "time_min", True),
        ("2025-06-12T18:00:00+01:00", "time_max", True),
        ("17:00", "latest", True),
        # Everyday negatives: another day, an hour inside the afternoon, an event's own start.
        ("2025-06-13T12:00:00+01:00", "time_min", False),
        ("2025-06-12T14:00:00+01:00", "time_min", False),
        ("2025-06-12T13:00:00+01:00", "start", False),
    ],
)
def test_a_part_of_the_day_bounds_a_window_of_time(value, param, derived):
    said = [(0, "find a 45 min slot thursday afternoon when Kenji and I are both free")]
    assert (derive(value, param, said, today=date(2025, 6, 9)) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "derived"),
    [
        ("2025-10-20T09:00:00-04:00", "remind_at", True),
        ("2025-10-20T08:00:00", "reminder_time", True),
        # Everyday negatives: another hour, another day, a parameter that is no reminder.
        ("2025-10-20T15:00:00-04:00", "remind_at", False),
        ("2025-10-21T09:00:00-04:00", "remind_at", False),
        ("2025-10-20T09:00:00-04:00", "start", False),
    ],
)
def test_a_reminder_on_a_day_said_without_a_time_goes_off_in_the_morning(value, param, derived):
    said = [(0, "hmm actually just pay the minimum for now. and remind me on the 20th to pay the rest")]
    assert (derive(value, param, said, today=date(2025, 10, 14)) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        ("2025-09", "month", "did we go over our dining out budget last month?", True),
        ("2025-11", "month", "what's the budget for next month", True),
        ("2025-09-08T00:00:00-07:00", "time_max", "find a time this weekend for apple picking", True),
        ("2025-09-06T00:00:00", "until", "anything on friday?", True),
        # Everyday negatives: another month, a month's day for a month, another midnight, an
        # event's end is no window's bound.
        ("2025-08", "month", "did we go over our dining out budget last month?", False),
        ("2025-09-09T00:00:00-07:00", "time_max", "find a time this weekend for apple picking", False),
        ("2025-09-08T00:00:00-07:00", "end", "find a time this weekend for apple picking", False),
    ],
)
def test_a_month_written_as_itself_and_a_window_that_ends_the_midnight_after(value, param, text, derived):
    today = date(2025, 10, 2) if "month" in param else date(2025, 9, 3)
    assert (derive(value, param, [(0, text)], today=today) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        (2, "adults", "back on sunday the 11th. me and my wife, economy is fine", True),
        ("2", "party_size", "a table for my husband and I at 8", True),
        (2, "guests", "it's just me and Priya this time", True),
        # Everyday negatives: three people, a parameter that counts no people, a pronoun that is no name.
        (2, "adults", "me and my wife and our son", False),
        (2, "rooms", "me and my wife", False),
        (2, "guests", "between me and you, it's fine", False),
    ],
)
def test_the_speaker_and_one_other_are_two_people(value, param, text, derived):
    assert (derive(value, param, [(0, text)]) is not None) is derived


def test_a_number_base_named_by_its_name() -> None:
    said = [(1, "Convert 255 to hexadecimal.")]
    assert derive(16, "to_base", said) == (1, "hexadecimal -> 16")
    assert derive(10, "from_base", said) is not None  # 255 is written in decimal digits
    # everyday negatives: another base, a number that is no base, no base named
    assert derive(2, "to_base", said) is None
    assert derive(16, "font_size", [(1, "set the font to hexadecimal style, 16")]) is None
    assert derive(10, "base", [(1, "what is the log of 100")]) is None


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("2025-06-03", "Quiero reservar una mesa para cuatro personas mañana a las 21:00"),
        ("2025-06-07", "Prenota per 2 da Enzo sabato sera alle 20"),
        ("2025-06-16", "Je cherche un hôtel à Lyon jusqu'au 16 juin"),
        ("2025-06-03", "Kannst du morgen früh um 8 einen Termin eintragen?"),
        ("2025-06-03", "내일 오전 9시에 알람 맞춰줘"),
        # a time of day said with it, alone or with the day
        ("09:00", "내일 오전 9시에 알람 맞춰줘"),
        ("07:30", "réveille-moi demain à 7h30"),
        ("2025-06-03T21:00:00", "Quiero reservar una mesa para cuatro personas mañana a las 21:00"),
        # the next most written languages: Indonesian, Vietnamese, Ukrainian, Thai
        ("2025-06-03", "besok di bali hujan gak?"),
        ("2025-06-03", "ngày mai Hà Nội có mưa không"),
        ("2025-06-03", "яка погода буде завтра у Львові?"),
        ("2025-06-03", "พรุ่งนี้ฝนจะตกไหม"),
    ],
)
def test_a_day_said_in_another_common_language_derives_its_date(value: str, said: str) -> None:
    found = derive(value, "date", [(1, said)], today=date(2025, 6, 2))
    assert found is not None and found[0] == 1 and value in found[1]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("2025-06-04", "Quiero reservar una mesa para mañana"),  # another day than the one said
        ("2025-06-20", "Prenota per 2 da Enzo alle 20"),  # "alle 20" is a time, not the 20th
        ("2025-06-05", "Je cherche un hôtel à Lyon"),  # "Je" is no day (jeudi)
        ("2025-06-03", "Can you book a table for four tomorrow at 8?"),  # English is the rules' own (none here: no today)
        ("12:00", "réveille-moi demain"),  # a day without a number says no time
        ("08:30", "despiértame mañana a las 7:30"),  # another time than the one said
        ("2025-06-04", "besok di bali hujan gak?"),  # tomorrow is the 3rd
        ("2025-06-03", "mau ke pantai nih, hujan gak?"),  # no day said at all
        ("2025-06-03", "hari ini hujan gak?"),  # today, not tomorrow
    ],
)
def test_a_day_in_another_language_derives_no_other_date(value: str, said: str) -> None:
    found = derive(value, "date", [(1, said)], today=date(2025, 6, 2))
    assert found is None or "tomorrow" in found[1]


def test_the_date_a_system_prompt_states_in_its_own_language_is_today() -> None:
    from guard.conversation import Conversation

    for system, day in [("Eres un asistente de reservas. Hoy es lunes 2 de junio de 2025.", date(2025, 6, 2)),
                        ("Assistente prenotazioni. Oggi è lunedì 2 giugno 2025.", date(2025, 6, 2)),
                        ("Heute ist der 3. Juni 2025.", date(2025, 6, 3)),
                        # month names of other scripts, and the day and month dotted with spaces as Czech writes them
                        ("วันที่ปัจจุบัน: 3 กรกฎาคม 2025", date(2025, 7, 3)),
                        ("Сегодня 3 июля 2025 года.", date(2025, 7, 3)),
                        ("Dnešní datum: 2. 6. 2025.", date(2025, 6, 2))]:
        assert Conversation.from_messages([("system", system), ("user", "hola")]).reference_time.date() == day
    # everyday negatives: a count of apples, numbered sections, a version are no dates
    from guard.conversation import stated_date

    assert stated_date("We packed 3 apples in 2025.", year_only=False) is None
    assert stated_date("See sections 1. 2. 3. of the contract", year_only=False) is None
    assert stated_date("Upgrade to version 2. 1. 2024 soon", year_only=False) is None
    # English dates are read as before; a stated year alone keeps today's month and day
    assert Conversation.from_messages([("system", "Today is June 2, 2025."), ("user", "hi")]).reference_time.date() == date(2025, 6, 2)


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("1Z999AA10123456784", "where's my package?? ups tracking 1z 999 aa1 01 2345 6784", True),
        ("AB12CDE34567", "plate ab12 cde 34567 was towed", True),
        ("5551234567", "call me back at 555-123-4567 please", True),
        # Everyday negatives: part of a run, another identifier, and numbers apart from each other.
        ("1Z999AA101234567", "ups tracking 1z 999 aa1 01 2345 6784", False),
        ("999AA10123456784", "ups tracking 1z 999 aa1 01 2345 6784", False),
        ("1Z999AA10123456785", "ups tracking 1z 999 aa1 01 2345 6784", False),
        ("101102", "rooms 101 and 102 are booked", False),
    ],
)
def test_an_identifier_written_in_groups_is_the_same_run_together(value: str, text: str, derived: bool) -> None:
    assert (derive(value, "tracking_number", [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "description", "derived"),
    [
        ("rear_left", "The list of doors to lock. Possible values are ['driver', 'passenger', 'rear_left', 'rear_right'].", True),
        ("closedwon", "Internal stage id: appointmentscheduled, qualifiedtobuy, contractsent, closedwon, closedlost", True),
        ("STOP", "The ignition mode of the vehicle. [Enum]: ['START', 'STOP']", True),
        ("desc", "Sort order, either asc or desc", True),
        ("high", "Priority, one of: low | medium | high", True),
        # examples are no list of choices, and a prose list without an opening word is none either
        ("MSFT", "Exchange ticker symbol, e.g. AAPL, MSFT, GOOG", False),
        ("owner", "Search deals by name, company or owner", False),
        ("or", "Sort order, either asc or desc", False),  # the list's own glue
        ("urgent", "Priority, one of: low | medium | high", False),  # not in the list
        # a description that is only its choices
        ("metric", "metric or imperial", True),
        ("all", "'real' or 'all'", True),
        ("desc", "asc | desc.", True),
        # Everyday negatives: a description in prose, a value not among the choices, a name's parts
        ("city", "The city or town where the event is held", False),
        ("kelvin", "metric or imperial", False),
        ("company", "Name, company or owner of the deal", False),
    ],
)
def test_a_choice_the_description_lists_is_the_schemas_own(value: str, description: str, derived: bool) -> None:
    assert (derive(value, "p", [(0, "lock the car, the deal is won, sort them, sure")], description=description) is not None) is derived


def test_an_items_choice_is_read_in_the_lists_own_description() -> None:
    tools = [{"name": "lockDoors", "description": "Locks the doors of the vehicle.", "parameters": {"type": "object", "properties": {
        "unlock": {"type": "boolean"},
        "door": {"type": "array", "items": {"type": "string"},
                 "description": "The doors to lock or unlock. Possible values are ['driver', 'passenger', 'rear_left', 'rear_right']."}},
        "required": ["unlock", "door"]}}]
    call = {"name": "lockDoors", "args": {"unlock": False, "door": ["driver", "passenger", "rear_left", "rear_right"]}, "id": "c1"}
    decision = Guard(tools).check(call, [{"role": "user", "content": "Before I head in, lock all the doors please."}])
    assert not [f for f in decision.findings if f.category is Category.UNGROUNDED_VALUE]
    decision = Guard(tools).check(call, [{"role": "user", "content": "Lock the driver door please."}])
    assert [f.value for f in decision.findings if f.category is Category.UNGROUNDED_VALUE] == ["passenger", "rear_left", "rear_right"]
    call["args"]["door"] = ["driver", "trunk"]  # no door the list names
    decision = Guard(tools).check(call, [{"role": "user", "content": "Before I head in, lock all the doors please."}])
    assert [f.value for f in decision.findings if f.category is Category.UNGROUNDED_VALUE] == ["trunk"]


def test_a_name_the_user_wrote_by_its_initials_in_full() -> None:
    assert derive("San Francisco", "city", [(0, "any cheap thai places near union square in SF?")]) is not None
    assert derive("Union Square, San Francisco, CA", "location", [(0, "any cheap thai places near union square in SF?")]) is not None
    assert derive("New York City", "city", [(0, "hotels in NYC next weekend")]) is not None
    assert derive("New York, NY", "location", [(0, "whats the weather gonna be like in NYC tmrw?")]) is not None
    assert derive("New Mexico", "state", [(0, "hotels in NYC next weekend")]) is None  # NM is not NY
    # Everyday negatives: initials in lower case are a word ("no"), initials nobody wrote, one word is no name of initials
    assert derive("New Orleans", "city", [(0, "no, not that one")]) is None
    assert derive("Los Angeles", "city", [(0, "hotels in SF next weekend")]) is None
    assert derive("Seattle", "city", [(0, "hotels in S next weekend")]) is None


def test_the_root_address_of_a_site_named_by_its_homepage() -> None:
    assert derive("https://github.com", "url", [(0, "could you take a screenshot of GitHub's homepage?")]) is not None
    assert derive("www.theguardian.com", "url", [(0, "get the metadata of the homepage of The Guardian")]) is not None
    assert derive("bbc.co.uk/", "site", [(0, "is the BBC website down?")]) is not None
    # Everyday negatives: another site, a page under the root nobody named, a name said without its homepage
    assert derive("https://gitlab.com", "url", [(0, "could you take a screenshot of GitHub's homepage?")]) is None
    assert derive("https://github.com/pricing", "url", [(0, "could you take a screenshot of GitHub's homepage?")]) is None
    assert derive("https://github.com", "url", [(0, "how many stars does my repo have on GitHub?")]) is None


def test_which_sites_a_text_names_by_their_homepage() -> None:
    from guard.text import named_sites

    assert [n for _, n in named_sites("a screenshot of GitHub's homepage and the website of The Guardian")] == ["GitHub", "The Guardian"]
    # Everyday negatives: a homepage of nobody named, a sentence's first word, a site in lower case
    assert named_sites("my website is down again") == ()
    assert named_sites("The homepage loads slowly") == ()
    assert named_sites("the homepage of my bakery") == ()


def test_the_speaker_alone_counts_one_person() -> None:
    said = [(0, "You are a travel assistant. Today is Tuesday, 2025-03-11.")]
    assert derive(1, "adults", said + [(1, "find me a flight wed evening from boston")]) is not None
    assert derive(1, "passengers", said + [(1, "SF to tokyo this friday, just me, economy")]) is not None
    assert derive(1, "guests", said + [(1, "I need a room in Lisbon for two nights")]) is not None
    # Everyday negatives: "us", the speaker and someone named, a number of seats, no person at all
    assert derive(1, "adults", said + [(1, "find us a flight to rome")]) is None
    assert derive(1, "adults", said + [(1, "a flight for me and my wife")]) is None
    assert derive(1, "guests", said + [(1, "a table for me and Sam")]) is None
    assert derive(1, "passengers", said + [(1, "book 3 seats for me")]) is None
    assert derive(1, "adults", said + [(1, "find a flight to rome")]) is None


def test_a_lookups_start_and_end_bound_the_part_of_the_day_named() -> None:
    from datetime import date

    said = [(0, "Today is Tuesday, 2025-03-11."), (1, "am i free fri afternoon?")]
    today = date(2025, 3, 11)
    assert derive("2025-03-14T12:00:00", "start", said, today=today, lookup=True) is not None
    assert derive("2025-03-14T18:00:00", "end", said, today=today, lookup=True) is not None
    # Everyday negatives: an event's start is one time, not a window's bound; another day; another hour
    assert derive("2025-03-14T12:00:00", "start", said, today=today) is None
    assert derive("2025-03-13T12:00:00", "start", said, today=today, lookup=True) is None
    assert derive("2025-03-14T15:00:00", "start", said, today=today, lookup=True) is None


def test_a_default_the_description_quotes() -> None:
    said = [(0, "am i free fri afternoon?")]
    assert derive("primary", "calendar_id", said, description="default 'primary'") is not None
    assert derive("primary", "calendar_id", said, description="Calendar to read (default: primary)") is not None
    # Everyday negatives: another value, an example that is no default, no description
    assert derive("work", "calendar_id", said, description="default 'primary'") is None
    assert derive("primary", "calendar_id", said, description="e.g. 'primary'") is None
    assert derive("primary", "calendar_id", said) is None


def test_a_span_of_years_written_the_other_way() -> None:
    said = [(0, "How many points per game did LeBron James average in the 2019-2020 NBA season?")]
    assert derive("2019-20", "season", said) is not None
    assert derive("2019/20", "season", said) is not None
    assert derive("1999-00", "season", [(0, "the 1999-2000 season")]) is not None
    # Everyday negatives: another span, two years said apart, a phone number's digits
    assert derive("2019-21", "season", said) is None
    assert derive("2019-20", "season", [(0, "compare the 2019 and 2020 budgets")]) is None
    assert derive("2019-20", "season", [(0, "call me at 555-2019-2020")]) is None
    # two digits each, for two years in a row: "the 22/23 season"
    assert derive("2022-2023", "season", [(0, "Haaland's Premier League numbers for the 22/23 season")]) is not None
    assert derive("2022-2023", "season", [(0, "his numbers for the 23/24 season")]) is None
    assert derive("2022-2024", "season", [(0, "his numbers for the 22/24 season")]) is None  # years apart: 22/24 says no span
    assert derive("2022-2023", "season", [(0, "call 555-22-23 after five")]) is None


def test_this_sat_is_a_saturday_and_sat_at_the_table_is_not() -> None:
    tools = [{"name": "reserve_table", "description": "Books a table.", "parameters": {"type": "object", "properties": {
        "date": {"type": "string", "description": "YYYY-MM-DD"}}, "required": ["date"]}}]

    def action(date_value: str, text: str) -> str:
        messages = [{"role": "system", "content": "Current date: Wednesday, 2024-05-08."}, {"role": "user", "content": text}]
        return Guard(tools).check({"name": "reserve_table", "args": {"date": date_value}}, messages).action.value

    assert action("2024-05-11", "book nobu malibu for 4 this sat at 8pm") == "allow"
    assert action("2024-05-11", "next sat works") == "allow"
    # Everyday negatives: "sat" as a verb, another day, the sun
    assert action("2024-05-11", "we sat at the bar for an hour") != "allow"
    assert action("2024-05-12", "book it for this sat at 8pm") != "allow"
    assert action("2024-05-12", "lunch in the sun at 1") != "allow"


@pytest.mark.parametrize(
    ("text", "param", "description", "value", "derived"),
    [
        ("Solve x² − 5x + 6 = 0.", "a", "Coefficient of x^2.", 1, True),
        ("Find the roots of x^2 + 4x - 12 = 0", "a", "Coefficient of x^2", 1, True),
        ("Solve -x^2 + 3x + 4 = 0", "a", "coefficient of the squared term", -1, True),
        # everyday negatives: a coefficient written out, a coefficient of friction, a one nobody wrote
        ("Solve 2x² + 3x = 0", "a", "Coefficient of x^2.", 1, False),
        ("What is the friction on a 5 kg block sliding on ice?", "mu", "Friction coefficient", 1, False),
        ("Solve x² − 5x + 6 = 0.", "a", "Coefficient of x^2.", -1, False),
    ],
)
def test_a_term_written_without_a_number_has_coefficient_one(text: str, param: str, description: str, value: int, derived: bool) -> None:
    assert (derive(value, param, [(0, text)], description=description) is not None) is derived


@pytest.mark.parametrize(
    ("text", "value", "derived"),
    [
        ("Profile: date of birth 1990-04-12, weight 62 kg.", 35, True),
        ("I was born on April 20, 1990.", 35, True),  # the birthday not yet come
        ("I was born on April 20, 1990.", 34, False),
        # everyday negatives: a date that is no birth, an age off by one, a birth after today
        ("Customer since 1990-04-12.", 35, False),
        ("Profile: date of birth 1990-04-12.", 36, False),
        ("Expected date of birth: 2025-12-01.", 0, False),
    ],
)
def test_an_age_is_the_full_years_since_a_stated_birth(text: str, value: int, derived: bool) -> None:
    found = derive(value, "age_years", [(0, text)], description="Age in years.", today=date(2025, 9, 1))
    assert (found is not None) is derived


@pytest.mark.parametrize(
    ("text", "value", "derived"),
    [
        ("hey whats the weather like in san fran rn?", "San Francisco", True),
        ("hey whats the weather like in san fran rn?", "San Francisco, CA", True),
        ("cheap flights to the new mex desert", "New Mexico", True),
        ("When are Man Utd's next five games?", "Manchester United", True),
        ("meet at the mtn view office", "Mountain View", True),
        ("When are Man City's next games?", "Manchester United", False),
        # everyday negatives: another city that starts the same, one word only, a clipped word another name continues
        ("weather in san fran rn?", "San Fernando", False),
        ("I love san", "San Francisco", False),
        ("a trip to san diego", "San Francisco", False),
    ],
)
def test_a_name_said_with_its_words_clipped(text: str, value: str, derived: bool) -> None:
    assert (derive(value, "location", [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("text", "value", "derived"),
    [
        ("fissami una riunione domani alle 15", "2025-09-16T15:00:00", True),
        ("me lembra amanhã às 9, por favor", "2025-09-16T09:00:00", True),
        ("reserva una mesa para mañana a las 21:30", "2025-09-16T21:30:00", True),
        # everyday negatives: noon for an hour that was said, an hour nobody said, another day
        ("fissami una riunione domani alle 15", "2025-09-16T12:00:00", False),
        ("fissami una riunione domani", "2025-09-16T15:00:00", False),
        ("fissami una riunione domani alle 15", "2025-09-17T15:00:00", False),
    ],
)
def test_a_clock_hour_after_at_in_another_language(text: str, value: str, derived: bool) -> None:
    assert (derive(value, "start", [(0, text)], today=date(2025, 9, 15)) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        (0, "max_stops", "Traveler profile: prefers nonstop flights.", True),
        (0, "max_layovers", "find flights to Lima, no layovers please", True),
        (0, "pets", "a cabin for two adults, without pets", True),
        # everyday negatives: "no more than", another noun, a count that is not none
        (0, "max_stops", "no more than 2 stops please", False),
        (0, "guests", "a non smoking room for two guests", False),
        (1, "max_stops", "Traveler profile: prefers nonstop flights.", False),
    ],
)
def test_none_of_what_a_parameter_counts(value, param, text, derived):
    assert (derive(value, param, [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("San Francisco, CA", "whats teh wether gonna be in sanfran tmrw", True),
        ("Los Angeles", "cheap eats in losang?", True),
        # everyday negatives: the words whole, a word that only starts like them, a clip of the wrong city
        ("San Jose", "sanfran trip ideas", False),
        ("San Francisco", "what's on in santa cruz", False),
        ("San Diego", "whats teh wether gonna be in sanfran tmrw", False),
    ],
)
def test_a_name_written_clipped_and_run_together(value, text, derived):
    assert (derive(value, "location", [(0, text)]) is not None) is derived


def test_the_midnight_after_a_day_named_in_another_language():
    said = [(0, "Nous sommes le mercredi 5 novembre 2025."), (1, "c'est quoi mon agenda vendredi ?")]
    assert derive("2025-11-08T00:00:00+01:00", "time_max", said, today=date(2025, 11, 5)) is not None
    # Everyday negatives: the midnight after another day; a start is no window's end
    assert derive("2025-11-09T00:00:00+01:00", "time_max", said, today=date(2025, 11, 5)) is None
    assert derive("2025-11-08T00:00:00+01:00", "time_min", said, today=date(2025, 11, 5)) is None


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        ("2025-02-01", "since", "quiero volver a pedir las cápsulas que compré el mes pasado", True),
        ("2025-02-28", "until", "quiero volver a pedir las cápsulas que compré el mes pasado", True),
        ("2025-03-01", "start_date", "先月じゃなくて今月の支出を見せて", True),
        ("2025-01-01", "start", "commandes de l'année dernière", False),  # 2024's, not 2025's
        # everyday negatives: another month, a phrase inside a longer word, a month nobody placed
        ("2025-01-01", "since", "quiero volver a pedir las cápsulas que compré el mes pasado", False),
        ("2025-03-01", "since", "la mesa pasada de moda", False),
        ("2025-02-01", "since", "compré café el martes", False),
    ],
)
def test_last_this_or_next_period_in_another_language(value, param, text, derived):
    assert (derive(value, param, [(0, text)], today=date(2025, 3, 11)) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        ("JPY", "base", "exchange rate from Japan's currency to the Swiss currency?", True),
        ("CHF", "quote", "exchange rate from Japan's currency to the Swiss currency?", True),
        ("Canberra", "city", "what's the weather like in the capital of Australia right now?", True),
        ("pt", "target_language", "translate 'good morning' into the official language of Brazil", True),
        ("fr", "target_language", "put it in a language they speak in Switzerland", True),
        # everyday negatives: another city, a currency nobody asked for, a language not Brazil's, no ask at all
        ("Sydney", "city", "what's the weather like in the capital of Australia right now?", False),
        ("EUR", "base", "exchange rate from Japan's currency to the Swiss currency?", False),
        ("es", "target_language", "translate 'good morning' into the official language of Brazil", False),
        ("AUD", "currency", "flights to Australia under 500", False),
        ("Canberra", "city", "flights to Australia under 500", False),
    ],
)
def test_the_capital_currency_or_language_of_a_named_country(value, param, text, derived):
    assert (derive(value, param, [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        (47.75, "today I spent 12.50 on lunch, 4.25 on coffee and 31 on groceries. log the total as one food expense", True),
        (32, "request half of the $64 for the concert tickets from Jake", True),
        (1250, "add them up: 400 for rent share, 600 deposit and 250 cleaning", True),
        # everyday negatives: no total asked for, a total off by one term, a date's parts are no terms
        (47.75, "today I spent 12.50 on lunch, 4.25 on coffee and 31 on groceries. log the lunch", False),
        (16.75, "today I spent 12.50 on lunch, 4.25 on coffee and 31 on groceries. log the total", False),
        (2039, "what's the total for 2024-10-05?", False),
    ],
)
def test_a_total_the_user_asked_for_and_a_share_of_an_amount(value, text, derived):
    assert (derive(value, "amount", [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "texts", "derived"),
    [
        ("19:30", ["Can you book us dinner this Saturday?", "4 of us, around 7:30."], True),
        ("18:00", ["drinks at 6 tomorrow?"], True),
        ("15:00", ["call me this afternoon at 3"], True),
        # everyday negatives: a morning meal, a time said with am, a count of people, no evening word
        ("19:30", ["breakfast for 4 around 7:30"], False),
        ("19:30", ["dinner, but the train leaves at 7:30 am"], False),
        ("16:00", ["dinner for 4 of us"], False),
        ("19:30", ["book the meeting room at 7:30"], False),
    ],
)
def test_a_time_said_without_am_or_pm_read_after_noon(value, texts, derived):
    assert (derive(value, "time", list(enumerate(texts))) is not None) is derived


def test_a_default_the_description_states_in_words_is_the_schemas_choice() -> None:
    units = "metric (Celcius), imperial (Fahrenheit) - default metric"
    assert derive("metric", "units", [(0, "weather for Saturday in Porto")], description=units) is not None
    assert derive("en", "lang", [(0, "weather in Porto")], description="Language code (default en).") is not None
    # everyday negatives: the other choice, a noun after "default" that goes on, a default of another parameter
    assert derive("imperial", "units", [(0, "weather for Saturday in Porto")], description=units) is None
    assert derive("settings", "mode", [(0, "reset it")], description="The default settings are used when empty") is None
    assert derive("fr", "lang", [(0, "weather in Porto")], description="Language code (default en).") is None


def test_the_first_day_of_a_range_whose_month_only_its_end_names() -> None:
    today = date(2025, 6, 2)
    for value, text in [("2025-07-21", "od 21. do 25. července"), ("2025-08-03", "Ich möchte vom 3. bis 7. August Urlaub nehmen"),
                        ("2025-08-03", "del 3 al 7 de agosto")]:
        found = derive(value, "start_date", [(1, text)], today=today)
        assert found is not None and "->" in found[1]
    # everyday negatives: a room number before a date, an age before it, a start after the end
    assert derive("2025-08-03", "start_date", [(1, "Zimmer 3 am 7. August")], today=today) is None
    assert derive("2025-08-30", "start_date", [(1, "Ich bin 30. 7. August")], today=today) is None
    assert derive("2025-08-09", "start_date", [(1, "vom 9. bis 7. August")], today=today) is None


def test_a_unix_time_read_in_the_time_zone_the_conversation_names() -> None:
    now = (0, "Now: Wednesday 2025-05-07 11:20 JST (Asia/Tokyo, UTC+9).")
    assert derive(1746597600, "expiration", [now, (1, "set my status to in a meeting until 3pm")], today=date(2025, 5, 7)) is not None
    assert derive(1746597600, "expiration", [(0, "It is 2025-05-07, UTC+9."), (1, "busy until 3pm")], today=date(2025, 5, 7)) is not None
    # everyday negatives: an hour later than said, no time said, no zone named (3pm UTC is another moment)
    assert derive(1746597600 + 3600, "expiration", [now, (1, "set my status to in a meeting until 3pm")], today=date(2025, 5, 7)) is None
    assert derive(1746597600, "expiration", [now, (1, "set my status to in a meeting")], today=date(2025, 5, 7)) is None
    assert derive(1746597600, "expiration", [(0, "Today is 2025-05-07."), (1, "busy until 3pm")], today=date(2025, 5, 7)) is None


def test_a_day_and_an_hour_said_in_two_phrases_of_another_language() -> None:
    said = [(1, "ich muss nächsten Dienstag morgens von Köln nach München und sollte spätestens um 13 Uhr da sein")]
    assert derive("2024-07-09T13:00:00", "arrival", said, today=date(2024, 7, 4)) is not None
    # everyday negatives: another hour, another day, an hour said as a duration
    assert derive("2024-07-09T14:00:00", "arrival", said, today=date(2024, 7, 4)) is None
    assert derive("2024-07-10T13:00:00", "arrival", said, today=date(2024, 7, 4)) is None
    assert derive("2024-07-09T08:00:00", "arrival", [(1, "nächsten Dienstag, die Fahrt dauert 8 Stunden")], today=date(2024, 7, 4)) is None


def test_the_week_of_a_day_ends_on_its_friday_or_sunday() -> None:
    said = [(1, "I'd like to take the week of May 6 off")]
    today = date(2024, 4, 22)
    assert derive("2024-05-10", "end_date", said, today=today) is not None
    assert derive("2024-05-12", "end_date", said, today=today) is not None
    # everyday negatives: a Thursday inside it, the week after it, a day said without "the week of"
    assert derive("2024-05-09", "end_date", said, today=today) is None
    assert derive("2024-05-17", "end_date", said, today=today) is None
    assert derive("2024-05-10", "end_date", [(1, "I'd like May 6 off")], today=today) is None


def test_a_form_the_description_quotes_with_its_number_said() -> None:
    described = "YYYY-MM-DD or relative: 'today', 'yesterday', 'NdaysAgo'"
    said = [(0, "pull sessions + bounce rate by country for the last 7 days")]
    assert derive("7daysAgo", "start_date", said, description=described) is not None
    assert derive("yesterday", "end_date", said, description=described) is not None
    # everyday negatives: another number, a keyword when the user named another, a template the description does not give
    assert derive("30daysAgo", "start_date", said, description=described) is None
    assert derive("yesterday", "end_date", [(0, "sessions from today only")], description=described) is None
    assert derive("7weeksAgo", "start_date", said, description=described) is None


def test_a_decade_and_a_year_written_short() -> None:
    today = date(2025, 6, 1)
    for value, text in [(1990, "sci-fi movies from the 90s"), (1999, "sci-fi movies from the 90s"),
                        (1980, "hits of the eighties"), (2024, "my payslip from jan '24")]:
        assert derive(value, "year", [(0, text)], today=today) is not None
    # everyday negatives: a year inside the decade, test scores in the 90s, a year the short form does not give
    assert derive(1995, "year", [(0, "sci-fi movies from the 90s")], today=today) is None
    assert derive(1990, "year", [(0, "I scored 90s on my tests")], today=today) is None
    assert derive(2023, "year", [(0, "my payslip from jan '24")], today=today) is None


def test_a_lookups_window_ends_on_a_day_of_the_named_period_at_an_hour_said() -> None:
    said = [(0, "Current date and time: Monday 2025-09-22 09:12. Working hours are 09:00-18:00."),
            (1, "Need a 45 min sync sometime this week, find something inside everyone's working hours")]
    today = date(2025, 9, 22)
    assert derive("2025-09-26T18:00:00-04:00", "time_max", said, today=today, lookup=True) is not None
    # everyday negatives: an hour nobody said, a day of next week, a Thursday (no bound of the week)
    assert derive("2025-09-26T17:00:00-04:00", "time_max", said, today=today, lookup=True) is None
    assert derive("2025-10-03T18:00:00-04:00", "time_max", said, today=today, lookup=True) is None
    assert derive("2025-09-25T18:00:00-04:00", "time_max", said, today=today, lookup=True) is None


def test_a_weekday_of_a_list_in_another_language_is_the_next_such_day() -> None:
    said = [(0, "Bugün: 14 Mayıs 2025, Çarşamba."), (1, "Gelecek hafta pazartesi ve salı izin almak istiyorum")]
    today = date(2025, 5, 14)
    assert derive("2025-05-20", "end_date", said, today=today) is not None
    # everyday negatives: the day after it, a week later, a weekday nobody named
    assert derive("2025-05-21", "end_date", said, today=today) is None
    assert derive("2025-05-27", "end_date", said, today=today) is None
    assert derive("2025-05-22", "end_date", said, today=today) is None


def test_a_day_of_the_month_said_by_its_number_in_the_conversations_month() -> None:
    said = [(0, "Today's date: 2025-02-06 (Thursday)."), (1, "show me everything that's gone out since the 1st")]
    assert derive("2025-02-01", "from_date", said, today=date(2025, 2, 6)) is not None
    # everyday negatives: last month's 1st, a floor number, a day nobody said
    assert derive("2025-01-01", "from_date", said, today=date(2025, 2, 6)) is None
    assert derive("2025-02-14", "date", [(1, "meet me on the 14th floor")], today=date(2025, 2, 6)) is None
    assert derive("2025-02-02", "from_date", said, today=date(2025, 2, 6)) is None


def test_a_count_back_in_the_unit_a_parameter_names() -> None:
    assert derive(1, "nights_ago", [(0, "how'd i sleep last night")]) is not None
    assert derive(3, "days_ago", [(0, "what did I eat 3 days ago")]) is not None
    # everyday negatives: two nights for last night, a unit the parameter does not count, no "ago" parameter
    assert derive(2, "nights_ago", [(0, "how'd i sleep last night")]) is None
    assert derive(1, "days_ago", [(0, "how did I sleep last night")]) is None
    assert derive(1, "nights", [(0, "how'd i sleep last night")]) is None


def test_a_time_moved_after_an_afternoon_hour_today() -> None:
    said = [(0, "Now: Wednesday 2025-06-18 11:40"), (1, "push the 3pm to 4:30")]
    today = date(2025, 6, 18)
    assert derive("2025-06-18T16:30:00-07:00", "start", said, today=today) is not None
    # everyday negatives: the morning's 4:30, tomorrow's, a 3am call moved
    assert derive("2025-06-18T04:30:00-07:00", "start", said, today=today) is None
    assert derive("2025-06-19T16:30:00-07:00", "start", said, today=today) is None
    assert derive("2025-06-18T16:30:00-07:00", "start", [(0, "Now: 2025-06-18"), (1, "push the 3am call to 4:30")], today=today) is None


def test_the_language_a_user_writes_in_when_the_identifier_is_sure_of_it() -> None:
    dutch = [(1, "Wat is het laatste nieuws over de Formule 1?")]
    assert derive("nl", "language", dutch) is not None
    # everyday negatives: English for the Dutch question, Dutch for an English one, a two-word text nobody can tell
    assert derive("en", "language", dutch) is None
    assert derive("nl", "language", [(1, "what is the latest news on formula 1?")]) is None
    assert derive("nl", "language", [(1, "Formule 1")]) is None


def test_an_english_months_name_alone_is_not_read_in_every_language_that_shares_it() -> None:
    from guard.checks.derivations import _foreign_days

    base = datetime(2023, 3, 1, 12)
    # "April" is Dutch, Swedish and Indonesian too: an English text with it is left to the English rules
    assert _foreign_days("The meeting starts on April 1, 2023 at 10:00 AM, please book it", base) == ()
    # a German text that names only "August" is still read in German, and a Dutch word of its own is enough
    assert any(when.day == 7 for _, when in _foreign_days("Ich möchte vom 3. bis 7. August Urlaub nehmen", base))
    assert _foreign_days("ik wil graag morgen een afspraak", base) != ()


def test_a_couple_of_days_is_two() -> None:
    said = [(0, "Current time: Friday 2025-05-16 10:40."), (1, "check mentions from the last couple days")]
    assert derive("2025-05-14", "since", said, today=date(2025, 5, 16), lookup=True) is not None
    assert derive("2025-05-14", "since", [(0, "Today is 2025-05-16."), (1, "anything in the past couple of days?")], today=date(2025, 5, 16), lookup=True) is not None
    # everyday negatives: three days back, a couple of friends (no unit of time), a couple of weeks for days
    assert derive("2025-05-13", "since", said, today=date(2025, 5, 16), lookup=True) is None
    assert derive("2025-05-14", "since", [(0, "Today is 2025-05-16."), (1, "a couple of friends came by")], today=date(2025, 5, 16), lookup=True) is None
    assert derive("2025-05-14", "since", [(0, "Today is 2025-05-16."), (1, "the last couple of weeks")], today=date(2025, 5, 16), lookup=True) is None


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("Art Institute of Chicago, Chicago, IL", "walking directions from union station to the art institute, chicago", True),
        ("221 Pine St, San Francisco, CA", "how much would an XL be from 221 pine st sf to SFO terminal 2?", True),
        ("Andheri Station, Mumbai", "Andheri station se Powai tak auto book kar do", True),
        ("Gare du Nord, Paris, France", "taxi from gare du nord to my hotel pls", True),
        ("Chicago, IL", "whats teh wether in chcago rn", True),
        ("Astoria, Queens, NY", "2br in astoria under 2800, I have a dog", True),  # the borough around it
        ("Powai, Mumbai", "Andheri station se Powai tak auto book kar do", True),
        # everyday negatives: a place nobody named, with a city; a city of another country than the one named; "my city";
        # a city after another city that does not hold it (a neighbour of a size, a city far away)
        ("221 Pine St, San Francisco, CA", "get me a ride to the airport", False),
        ("Brooklyn, Queens, NY", "2br in brooklyn under 2800, I have a dog", False),
        ("Springfield, Chicago", "houses for sale in springfield", False),
        ("Andheri Station, Chicago, India", "ride from Andheri station please", False),
        ("Chicago, IL", "what's the weather in my city", False),
    ],
)
def test_a_place_the_user_named_with_its_city_country_or_region(value: str, text: str, derived: bool) -> None:
    assert (derive(value, "location", [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("Chicago", "whats teh wether in chcago rn", True),
        ("Paris", "flights to Pariss next week", True),
        ("Barcelona", "hotels in barcleona", True),  # two letters swapped
        # everyday negatives: two letters off, another first letter, a name under five letters, a typo of what was said
        ("Pavia", "weather in Paris", False),
        ("Pariss", "flights to Paris next week", False),
        ("Berlin", "what's on in merlin tonight", False),
        ("Oslo", "flights to olso", False),
    ],
)
def test_a_place_the_user_misspelt_by_one_letter(value: str, text: str, derived: bool) -> None:
    assert (derive(value, "city", [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("python", 'Traceback:\n  File "/app/worker.py", line 88, in handle\nwhere do we raise that?', True),
        ("typescript", "the bug is in src/components/Cart.ts, can you find where total is computed", True),
        ("go", "search for NewServer in cmd/api/main.go", True),
        # everyday negatives: another file's language, no file named, a web address is no source file
        ("javascript", "where is slugify defined in utils/text.py", False),
        ("python", "where do we raise InsufficientBalanceError?", False),
        ("python", "search the docs on example.com for it", False),
    ],
)
def test_the_language_of_the_files_the_user_named(value: str, text: str, derived: bool) -> None:
    assert (derive(value, "language", [(0, text)]) is not None) is derived


def test_a_french_range_of_days_with_their_weekdays() -> None:
    said = [(0, "Bonjour, je voudrais poser mes congés payés du lundi 3 au vendredi 7 mars 2025 svp")]
    assert derive("2025-03-03", "start_date", said, today=date(2025, 2, 20)) is not None
    assert derive("2025-03-07", "end_date", said, today=date(2025, 2, 20)) is not None
    # everyday negatives: a day between the two ends, a start whose weekday is not the one said, another month
    assert derive("2025-03-05", "start_date", said, today=date(2025, 2, 20)) is None
    assert derive("2025-03-04", "start_date", [(0, "je serai absent du mardi 3 au vendredi 7 mars 2025")], today=date(2025, 2, 20)) is None
    assert derive("2025-04-03", "start_date", said, today=date(2025, 2, 20)) is None


def test_an_upper_bound_at_midnight_ends_before_its_day() -> None:
    said = [(0, "Today is Wednesday, 22 October 2025."), (1, "need a 45-min sync sometime next week")]
    today = date(2025, 10, 22)
    assert derive("2025-11-01T00:00:00Z", "time_max", said, today=today, lookup=True) is not None  # after the Friday
    assert derive("2025-11-03T00:00:00Z", "time_max", said, today=today, lookup=True) is not None  # after the Sunday
    # everyday negatives: a day later still, a bound at 9am of that Saturday, a plain date (a Saturday is no working day's end)
    assert derive("2025-11-04T00:00:00Z", "time_max", said, today=today, lookup=True) is None
    assert derive("2025-11-01T09:00:00Z", "time_max", said, today=today, lookup=True) is None
    assert derive("2025-11-01", "end", [(0, "Today is Wednesday, 22 October 2025."), (1, "what do I have next week")], today=today, lookup=True) is None


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        ("2024-07-01", "start_date", "revenue for Q3 2024 please", True),
        ("2024-09-30", "end_date", "revenue for Q3 2024 please", True),
        ("2023-06-30", "end", "how did the second quarter of 2023 go?", True),
        ("2025-01-01", "from", "H1 2025 signups", True),
        ("2025-09-30", "end_date", "Our fiscal year begins on April 1. Pull revenue for Q2 of this fiscal year.", True),
        ("2025-04-01", "start_date", "numbers for Q2 please", True),  # the quarter of the year today falls in
        # everyday negatives: another quarter, a quarter of a fiscal year nobody stated, a flu strain, a quarter of an hour
        ("2024-10-01", "start_date", "revenue for Q3 2024 please", False),
        ("2025-07-01", "start_date", "Pull revenue for Q2 of this fiscal year.", False),
        ("2025-01-01", "since", "any H1N1 cases reported?", False),
        ("2025-10-01", "start", "the meeting ran a quarter of an hour over", False),
    ],
)
def test_a_quarter_or_half_of_a_year_by_its_number(value: str, param: str, text: str, derived: bool) -> None:
    said = [(0, "Today is 2025-10-03."), (1, text)]
    assert (derive(value, param, said, today=date(2025, 10, 3)) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("2024-03-09T19:00:00", "напомни мне завтра в 7 вечера позвонить маме", True),
        ("2024-03-09T15:00:00", "erinnere mich morgen um 3 nachmittags an den Arzt", True),
        ("2024-03-09T09:00:00", "me lembra amanhã às 9 de ligar pra minha mãe", True),
        # everyday negatives: the morning hour when the evening was said, the evening when nothing said it, the night's 2 am
        ("2024-03-09T07:00:00", "напомни мне завтра в 7 вечера позвонить маме", False),
        ("2024-03-09T21:00:00", "me lembra amanhã às 9 de ligar pra minha mãe", False),
        ("2024-03-09T14:00:00", "разбуди меня завтра в 2 ночи", False),
    ],
)
def test_an_hour_said_with_the_afternoon_or_evening_in_another_language(value: str, text: str, derived: bool) -> None:
    said = [(0, "Today is 2024-03-08."), (1, text)]
    assert (derive(value, "remind_at", said, today=date(2024, 3, 8)) is not None) is derived


def test_a_span_from_the_stated_clock_in_another_language() -> None:
    said = [(0, "Current time: 2025-03-11 15:20 (Europe/Madrid)."), (1, "recuérdame en 2 horas llamar a mamá")]
    assert derive("2025-03-11T17:20:00+01:00", "remind_at", said, today=date(2025, 3, 11)) is not None
    # everyday negatives: three hours, two hours from noon, two hours before
    assert derive("2025-03-11T18:20:00+01:00", "remind_at", said, today=date(2025, 3, 11)) is None
    assert derive("2025-03-11T14:00:00+01:00", "remind_at", said, today=date(2025, 3, 11)) is None
    assert derive("2025-03-11T13:20:00+01:00", "remind_at", said, today=date(2025, 3, 11)) is None


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        (250, "hazme una transferencia de doscientos cincuenta euros a Lucía, concepto: alquiler marzo", True),
        (45, "Ajoute un rendez-vous de quarante-cinq minutes avec Paul demain matin", True),
        (2, "aggiungi alla lista della spesa latte e due pagnotte per favore", True),
        # everyday negatives: another number; an English text whose word is a number elsewhere ("due" is Italian for 2);
        # a number the Spanish text does not write
        (350, "hazme una transferencia de doscientos cincuenta euros a Lucía, concepto: alquiler marzo", False),
        (2, "the rent is due on friday, can you remind me the day before?", False),
        (11, "once the parcel arrives, avísame por favor cuando llegue el paquete", False),
    ],
)
def test_a_number_written_in_words_in_another_language(value: int, text: str, derived: bool) -> None:
    assert (derive(value, "amount", [(0, text)]) is not None) is derived


def test_a_day_the_user_named_moved_by_days_they_said_before_or_after_it() -> None:
    today = date(2024, 11, 27)
    said = [(0, "Today is 2024-11-27."), (1, "property tax bill is due dec 10. remind me 3 days before so I don't forget")]
    assert derive("2024-12-07", "date", said, today=today) is not None
    assert derive("2024-12-17", "return_date", [(1, "the trip starts dec 10, book the return a week after")], today=today) is not None
    # everyday negatives: two days before; three days after when "before" was said; two weeks for "a week"
    assert derive("2024-12-08", "date", said, today=today) is None
    assert derive("2024-12-13", "date", said, today=today) is None
    assert derive("2024-12-24", "return_date", [(1, "the trip starts dec 10 and lasts a week, book the return")], today=today) is None
    assert derive("2024-12-18", "return_date", [(1, "the trip starts dec 10, book the return a week after")], today=today) is None


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        (2011, "year_from", "List the movies Bong Joon-ho directed after 2010.", True),
        (99, "max_price", "wireless earbuds under 100 dollars", True),
        (4, "min_bedrooms", "a house with more than 3 bedrooms near the lake", True),
        # everyday negatives: the number itself for a strict bound; the wrong side; a bound on no parameter of bounds
        (2010, "year_from", "List the movies Bong Joon-ho directed after 2010.", False),
        (2009, "year_to", "List the movies Bong Joon-ho directed after 2010.", False),
        (2011, "year", "List the movies Bong Joon-ho directed after 2010.", False),
    ],
)
def test_a_bound_said_strictly_taken_inclusively(value: int, param: str, text: str, derived: bool) -> None:
    assert (derive(value, param, [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("2025-01-31", "quanto eu gastei com Uber em janeiro de 2025?", True),
        ("2025-01-01", "quanto eu gastei com Uber em janeiro de 2025?", True),
        ("2024-03-31", "Zeig mir den Umsatz im März 2024", True),
        # everyday negatives: another month, another year, a day inside the month
        ("2025-02-28", "quanto eu gastei com Uber em janeiro de 2025?", False),
        ("2024-01-31", "quanto eu gastei com Uber em janeiro de 2025?", False),
        ("2025-01-15", "quanto eu gastei com Uber em janeiro de 2025?", False),
    ],
)
def test_a_month_and_year_named_in_another_language_bound_a_range(value: str, text: str, derived: bool) -> None:
    assert (derive(value, "end_date", [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("PLN", "Ustaw mi budżet na jedzenie na mieście: 800 zł miesięcznie.", True),
        ("CZK", "Zaplatil jsem 450 Kč za oběd, zapiš to", True),
        ("BRL", "quanto fica R$ 30 em dólares?", True),
        # everyday negatives: a sign three countries write ("kr"), another country's currency, the sign without an amount
        ("SEK", "Det kostar 300 kr per månad", False),
        ("CZK", "Ustaw mi budżet na jedzenie na mieście: 800 zł miesięcznie.", False),
        ("PLN", "ile to kosztuje w zł?", False),
    ],
)
def test_a_currency_symbol_as_its_own_country_writes_it(value: str, text: str, derived: bool) -> None:
    assert (derive(value, "currency", [(0, text)], description="ISO 4217") is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        (3, "semitones", "Transpose this ii-V-I up a minor third: Dm7 G7 Cmaj7", True),
        (-2, "semitones", "give it to me down a whole step", True),
        (24, "shift", "take the melody up two octaves", True),  # described as semitones below
        # everyday negatives: the wrong interval, the wrong direction, an ordinal that moves nothing, a count of no semitones
        (4, "semitones", "Transpose this ii-V-I up a minor third: Dm7 G7 Cmaj7", False),
        (2, "semitones", "give it to me down a whole step", False),
        (7, "semitones", "play the fifth track again", False),
        (3, "count", "Transpose this ii-V-I up a minor third: Dm7 G7 Cmaj7", False),
    ],
)
def test_a_transposition_by_a_named_interval(value: int, param: str, text: str, derived: bool) -> None:
    description = "number of semitones to shift" if param == "shift" else "how many"
    assert (derive(value, param, [(0, text)], description=description) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        ("newer_than:2d", "query", "can you triage my unread from the last 2 days", True),
        ("7daysAgo", "start_date", "whats the bounce rate by device category, last 7 days", True),
        ("yesterday", "end_date", "whats the bounce rate by device category, last 7 days", True),
        ("now-14d", "since", "how many 500s over the past two weeks?", True),
        # everyday negatives: another count, another unit, nothing said, the end word for a start
        ("30daysAgo", "start_date", "whats the bounce rate by device category, last 7 days", False),
        ("7d", "range", "show me the errors from the last 7 hours", False),
        ("newer_than:2d", "query", "triage my unread please", False),
        ("yesterday", "start_date", "whats the bounce rate by device category, last 7 days", False),
    ],
)
def test_a_span_back_from_now_in_a_query_languages_notation(value: str, param: str, text: str, derived: bool) -> None:
    assert (derive(value, param, [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("en", "can u translate this msg from my host: 「チェックインは15時以降です。鍵は郵便受けの中にあります。」", True),
        ("en", "what does this say: ขอบคุณมากสำหรับความช่วยเหลือ", True),
        ("en", "my grandma texted me this, what does it mean? 'Ich hab dich lieb, mein Schatz'", True),
        # everyday negatives: a language nobody asked in, a question asked in another language, nothing around the pasted
        # text, a text in the language the user asks in
        ("fr", "translate this for me: 'Guten Morgen, wie geht es dir?'", False),
        ("en", "¿qué significa esto? 'thank you very much for everything'", False),
        ("en", "ขอบคุณมากสำหรับความช่วยเหลือ", False),
        ("en", "translate 'good morning everyone' please", False),
    ],
)
def test_a_translation_into_the_language_the_user_asks_in(value: str, text: str, derived: bool) -> None:
    assert (derive(value, "target_lang", [(0, text)], description="ISO 639-1") is not None) is derived


SAMPLES = {
    "name": "update_samples",
    "description": "Bulk update sample records in the lab system.",
    "parameters": {"type": "object", "properties": {"sample_ids": {"type": "array", "items": {"type": "string"}}, "status": {"type": "string"}}},
}


@pytest.mark.parametrize(
    ("said", "ids", "flagged"),
    [
        ("mark S-2291 thru S-2295 as received", ["S-2291", "S-2292", "S-2293", "S-2294", "S-2295"], set()),
        ("mark invoices INV-0098 to 0101 as received", ["INV-0098", "INV-0099", "INV-0100", "INV-0101"], set()),
        # everyday negatives: the two ends said but not as a range; a gap in the list; an item past the range's end
        ("mark S-2291 and S-2295 as received", ["S-2291", "S-2292", "S-2293", "S-2294", "S-2295"],
         {"$.sample_ids[1]", "$.sample_ids[2]", "$.sample_ids[3]"}),
        ("mark S-2291 thru S-2295 as received", ["S-2291", "S-2293", "S-2295"], {"$.sample_ids[1]"}),
        ("mark S-2291 thru S-2293 as received", ["S-2291", "S-2292", "S-2293", "S-2294"], {"$.sample_ids[1]", "$.sample_ids[3]"}),
    ],
)
def test_the_identifiers_between_two_said_as_a_range(said: str, ids: list[str], flagged: set[str]) -> None:
    findings = Guard([SAMPLES]).check({"name": "update_samples", "args": {"sample_ids": ids, "status": "received"}}, [("user", said)]).findings
    assert {f.path for f in findings if f.category is Category.UNGROUNDED_VALUE} == flagged


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        (-15.8333, "latitude", "What's the ground elevation at 15°50′S 69°20′W?", True),
        (-69.3333, "longitude", "What's the ground elevation at 15°50′S 69°20′W?", True),
        (40.4461, "lat", "meet at 40°26'46\"N 79°58'56\"W", True),
        # everyday negatives: the wrong hemisphere's sign, a longitude's number for a latitude, a temperature in degrees
        (15.8333, "latitude", "What's the ground elevation at 15°50′S 69°20′W?", False),
        (-69.3333, "latitude", "What's the ground elevation at 15°50′S 69°20′W?", False),
        (15.0, "latitude", "it is 15°C outside today", False),
    ],
)
def test_degrees_minutes_and_seconds_in_decimal_degrees(value: float, param: str, text: str, derived: bool) -> None:
    assert (derive(value, param, [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("text", "value", "derived"),
    [
        ("set a reminder every other friday at 4pm to submit my timesheet", "FREQ=WEEKLY;INTERVAL=2;BYDAY=FR", True),
        ("standup every weekday at 9:30", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", True),
        ("book club on the first monday of every month", "RRULE:FREQ=MONTHLY;BYDAY=1MO", True),
        ("pay rent on the 1st of each month", "FREQ=MONTHLY;BYMONTHDAY=1", True),
        # everyday negatives: every week for every other, another weekday, another day of the month, a count
        # nobody said, an end date the rule adds
        ("set a reminder every friday at 4pm", "FREQ=WEEKLY;INTERVAL=2;BYDAY=FR", False),
        ("set a reminder every other friday at 4pm", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TH", False),
        ("set a reminder every other friday at 4pm", "FREQ=WEEKLY;BYDAY=FR", False),
        ("pay rent on the 1st of each month", "FREQ=MONTHLY;BYMONTHDAY=15", False),
        ("water the plants every day", "FREQ=DAILY;COUNT=10", False),
        ("set a reminder every other friday", "FREQ=WEEKLY;INTERVAL=2;BYDAY=FR;UNTIL=20251231T000000Z", False),
    ],
)
def test_an_icalendar_recurrence_rule_every_part_of_which_was_said(text: str, value: str, derived: bool) -> None:
    assert (derive(value, "rrule", [(0, text)]) is not None) is derived


def test_a_recurrence_rules_order_in_the_month_as_people_write_it() -> None:
    # "1st" normalises to "1 st": the ordinals of normalise's one table
    assert derive("FREQ=MONTHLY;BYDAY=1MO", "rrule", [(0, "book club on the 1st monday of every month")]) is not None
    assert derive("FREQ=MONTHLY;BYDAY=-1FR", "rrule", [(0, "payday is the last friday of every month")]) is not None
    # everyday negatives: another order, the order on another weekday, no order said
    assert derive("FREQ=MONTHLY;BYDAY=2MO", "rrule", [(0, "book club on the 1st monday of every month")]) is None
    assert derive("FREQ=MONTHLY;BYDAY=-1TH", "rrule", [(0, "payday is the last friday of every month")]) is None
    assert derive("FREQ=MONTHLY;BYDAY=1MO", "rrule", [(0, "book club on a monday every month")]) is None


@pytest.mark.parametrize(
    ("text", "value", "param"),
    [
        ("living room lights 30%, warm white", 2700, "color_temp_kelvin"),
        ("Mach bitte das Licht im Wohnzimmer auf 30 Prozent, warmweiß", 2700, "color_temp_kelvin"),
        ("baisse la lumière du salon à 30 % et mets-la en blanc chaud stp", 3000, "colour_temperature"),
        ("kitchen lights to daylight please, I'm cooking", 6500, "kelvin"),
        ("寝室の照明を電球色にして", 2700, "ct_kelvin"),
    ],
)
def test_a_named_white_of_lighting_is_its_colour_temperature(text, value, param):
    found = derive(value, param, [(0, text)])
    assert found is not None and found[0] == 0


@pytest.mark.parametrize(
    ("text", "value", "param"),
    [
        ("living room lights warm white", 6500, "color_temp_kelvin"),  # another white than the one named
        ("make the kitchen lights cool white", 2700, "color_temp_kelvin"),
        ("make the lights white", 4000, "color_temp_kelvin"),  # a plain white names no temperature
        ("make it a bit warmer in here", 2700, "kelvin"),
        ("warm white please, 30%", 2700, "brightness"),  # no parameter in kelvin
    ],
)
def test_a_white_not_named_or_a_parameter_not_in_kelvin_derives_nothing(text, value, param):
    assert derive(value, param, [(0, text)]) is None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("which of my ec2 boxes in frankfurt are stopped?", "eu-central-1"),
        ("stop the dev instances in oregon over the weekend", "us-west-2"),
        ("spin up a box in northern virginia", "us-east-1"),
        ("deploy the bucket close to our users in Sydney", "ap-southeast-2"),
    ],
)
def test_a_cloud_region_named_for_the_place_the_user_said(text, value):
    assert derive(value, "region", [(0, text)]) is not None


@pytest.mark.parametrize(
    ("text", "value", "param"),
    [
        ("which of my ec2 boxes in frankfurt are stopped?", "eu-west-1", "region"),  # Ireland's region
        ("list the stopped ec2 boxes in oregon", "us-west-1", "region"),  # N. California's
        ("my instances in europe", "eu-central-1", "region"),  # Europe has several regions
        ("book a hotel in frankfurt", "eu-central-1", "hotel_id"),  # no parameter for regions
    ],
)
def test_a_region_for_another_place_or_a_parameter_for_no_region_derives_nothing(text, value, param):
    assert derive(value, param, [(0, text)]) is None


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("tomorrow", "add buy cat litter to my todos, high prio, due tmrw", True),  # a day as the user typed it
        ("yesterday", "what did I spend yday on coffee", True),
        # everyday negatives: another day than the one typed; "the day after tomorrow" is no tomorrow; no day said
        ("today", "add it to my todos, due tmrw", False),
        ("tomorrow", "remind me the day after tomorrow", False),
        ("tomorrow", "add buy cat litter to my todos", False),
    ],
)
def test_a_day_named_relative_to_today_as_the_user_typed_it(value: str, text: str, derived: bool) -> None:
    assert (derive(value, "due_string", [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("thai", "commande-moi un truc thaï pour ce soir", True),
        ("Sao Paulo", "voo para São Paulo amanhã cedo", True),
        ("Munchen", "zwei Tickets nach München bitte", True),
        # everyday negatives: another word; the marks of another script (Japanese) are letters; a word not said
        ("tai", "commande-moi un truc thaï", False),
        ("ramen", "ラーメン食べたい", False),
        ("thai", "un truc chinois pour ce soir", False),
    ],
)
def test_a_word_said_with_marks_written_in_plain_letters(value: str, text: str, derived: bool) -> None:
    assert (derive(value, "cuisine", [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "param", "text", "derived"),
    [
        ("application/pdf", "mime_type", "find all the PDFs in my drive with invoice in the name", True),
        ("image/jpeg", "content_type", "upload my jpgs from the trip", True),
        ("text/csv", "mime_type", "export the table as a csv", True),
        # everyday negatives: another kind of file; a kind named by no extension; no parameter for media types
        ("image/png", "mime_type", "find all the PDFs in my drive", False),
        ("application/pdf", "mime_type", "find my documents about the lease", False),
        ("application/pdf", "folder", "find all the PDFs in my drive", False),
    ],
)
def test_the_media_type_of_a_kind_of_file_named_by_its_extension(value: str, param: str, text: str, derived: bool) -> None:
    assert (derive(value, param, [(0, text)]) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("2024-11-18", "find me flights to boston on the 14th of next month, coming back the 18th", True),
        ("2024-11-18", "flights to boston on November 14th, coming back the 18th", True),
        # everyday negatives: another month; a floor, not a day; an earlier day; the day said before the month
        ("2024-12-18", "flights to boston on November 14th, coming back the 18th", False),
        ("2024-11-18", "a room on the 14th of next month, on the 18th floor", False),
        ("2024-11-12", "flights on November 14th, coming back the 12th", False),
        ("2024-11-18", "the 18th, or maybe November 14th", False),
    ],
)
def test_a_later_day_of_a_month_said_before_it_in_the_message(value: str, text: str, derived: bool) -> None:
    assert (derive(value, "return_date", [(0, text)], today=date(2024, 10, 2)) is not None) is derived


@pytest.mark.parametrize(
    ("value", "text", "derived"),
    [
        ("after:2025/06/10", "Triage my inbox from this morning pls", True),  # today, on 10 June
        ("after:2025/06/10", "anything since June 10 from Marco?", True),
        ("before:2025/06/11", "emails sent before tomorrow", True),
        # everyday negatives: another day; no day named; a date that is no date
        ("after:2025/06/09", "Triage my inbox from this morning pls", False),
        ("after:2025/06/10", "triage my inbox pls", False),
        ("after:2025/02/30", "anything since this morning?", False),
    ],
)
def test_a_search_operator_with_a_date_the_user_named(value: str, text: str, derived: bool) -> None:
    assert (derive(value, "query", [(0, text)], today=date(2025, 6, 10)) is not None) is derived
