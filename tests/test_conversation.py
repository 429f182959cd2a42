"""The conversation view: message shapes, and the date relative values resolve against."""

from datetime import datetime

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from guard.conversation import Conversation, stated_date


def test_reference_time_is_the_date_a_system_message_states():
    assert Conversation.from_messages([("system", "The current time is March 13, 2022, Sunday.")]).reference_time == datetime(2022, 3, 13)
    assert Conversation.from_messages([("system", "Today is 2021-09-27 10:00.")]).reference_time == datetime(2021, 9, 27, 10, 0)
    given = datetime(2020, 1, 1)
    assert Conversation.from_messages([("system", "Today is 2021-09-27.")], now=given).reference_time == given
    # a month's abbreviation reads as its full name; a day the month has not is no date
    assert Conversation.from_messages([("system", "Today is Sept. 3rd, 2024.")]).reference_time == datetime(2024, 9, 3)
    assert stated_date("Today is Feb 30, 2024.") is None
    # as Chinese, Japanese and Korean write a date
    assert Conversation.from_messages([("system", "今日は2025年11月5日（水）です。")]).reference_time == datetime(2025, 11, 5)
    assert stated_date("오늘은 2025년 12월 1일 월요일입니다.") == datetime(2025, 12, 1)
    assert stated_date("2025年13月5日") is None


def test_a_user_who_says_what_day_it_is_sets_the_conversations_today():
    said = Conversation.from_messages([("user", "Today is Tuesday, August 19, 2025. Book the room for tomorrow.")])
    assert said.reference_time == datetime(2025, 8, 19)
    # a system message's date comes first; a user who mentions a date without "today is" sets none
    both = Conversation.from_messages([("system", "Today is 2021-09-27."), ("user", "Today is August 19, 2025.")])
    assert both.reference_time == datetime(2021, 9, 27)
    given = datetime(2020, 1, 1)
    assert Conversation.from_messages([("user", "My flight is on August 19, 2025.")], now=given).reference_time == given
    assert Conversation.from_messages([("user", "My flight is on August 19, 2025.")]).reference_time.year >= 2026


def test_langchain_openai_and_tuple_messages_read_the_same():
    lc = Conversation.from_messages([HumanMessage("hi"), AIMessage("", tool_calls=[{"name": "t", "args": {"a": 1}, "id": "1"}]),
                                     ToolMessage("ok", tool_call_id="1", status="error")])
    raw = Conversation.from_messages([{"role": "user", "content": "hi"},
                                      {"role": "assistant", "content": "", "tool_calls": [{"id": "1", "function": {"name": "t", "arguments": '{"a": 1}'}}]},
                                      {"role": "tool", "content": "ok", "tool_call_id": "1", "status": "error"}])
    for conv in (lc, raw):
        assert [m.role for m in conv.messages] == ["user", "assistant", "tool"]
        assert conv.prior_calls[0].args == {"a": 1} and conv.result_for("1").status == "error"
    assert Conversation.from_messages([("human", "x")]).latest_request == "x"


def test_today_stated_with_a_short_weekday():
    from guard.conversation import stated_today

    assert stated_today("weather in Melbourne this weekend? today is Wed 2024-10-16") == datetime(2024, 10, 16)
    assert stated_today("It's Fri. 2024-10-18, what's on?") == datetime(2024, 10, 18)
    assert stated_today("today is wedding day") is None  # "wed" must be a word on its own


def test_the_moment_a_message_says_it_is_now():
    from datetime import datetime

    from guard.conversation import stated_now

    assert stated_now("It's 9:10am on Tuesday 12 Nov 2024 here in London.") == (datetime(2024, 11, 12, 9, 10), "It's 9:10am")
    assert stated_now("it's 3:40pm right now, Thursday, May 16 2024")[0] == datetime(2024, 5, 16, 15, 40)
    assert stated_now("It's 9:10am, remind me in 20 min") is None  # no date said
    assert stated_now("we are 4 of us, it's 4 of us on 12 Nov 2024") is None  # "4 of us" is no clock
    assert stated_now("x " * 3_000 + "It's 9:10am on Tuesday 12 Nov 2024") is None  # past the first 4,096 characters
    # a system prompt's date with its clock time
    assert stated_now("Today is Thursday, 2026-03-12, 14:05 UTC.")[0] == datetime(2026, 3, 12, 14, 5)
    assert stated_now("Current date and time: 2026-03-12T14:05:00Z")[0] == datetime(2026, 3, 12, 14, 5)
    # Everyday negatives: a date with no clock, a number after a date that is no clock, a date in another sentence's clause
    assert stated_now("Today is 2026-03-12. Book 2 seats.") is None
    assert stated_now("Today is 2026-03-12 12 people are coming") is None
    assert stated_now("The invoice of 2026-03-12, 14:05 is paid") is None


def test_today_and_now_are_read_as_people_type_them():
    from guard.conversation import stated_now, stated_today

    assert stated_today("today 2025-05-29. file a flight plan for tomorrow") == datetime(2025, 5, 29)
    assert stated_today("today’s 2025-07-08, is united 1542 on time?") == datetime(2025, 7, 8)
    assert stated_now("It's currently 2025-04-03 15:00 UTC. Show me the past 24 hours.")[0] == datetime(2025, 4, 3, 15, 0)
    # Everyday negatives: "today" before something that is no date, a year that is no clock.
    assert stated_today("today I walked 5 km") is None
    assert stated_today("today 25 people came") is None
    assert stated_now("It's 2025 and I still print my tickets") is None


def test_a_replay_clock_pins_what_a_conversation_without_a_date_is_read_against():
    from datetime import datetime

    from guard.conversation import Conversation, clock, replay_clock

    pinned = datetime(2023, 3, 31, 9, 0)
    with replay_clock(pinned):
        assert clock() == pinned
        assert Conversation.from_messages([("user", "book it for tomorrow")]).reference_time == pinned
        # "The current year is 2023." takes the pinned month and day
        assert Conversation.from_messages([("system", "The current year is 2023."), ("user", "hi")]).reference_time == pinned
        # a date the conversation states wins over the clock
        assert Conversation.from_messages([("system", "Today is 2021-09-27."), ("user", "hi")]).reference_time == datetime(2021, 9, 27)
    assert clock() != pinned  # the machine's clock again outside


def test_a_date_written_with_dots_is_day_month_year():
    from datetime import datetime

    from guard.conversation import Conversation, stated_date

    assert stated_date("Heute ist Dienstag, der 11.03.2025.") == datetime(2025, 3, 11)
    assert Conversation.from_messages([("system", "Aujourd'hui : 05.06.2025"), ("user", "demain")]).reference_time == datetime(2025, 6, 5)
    # Everyday negatives: a version number, a dotted number with more parts, a day that does not exist
    assert stated_date("Version 1.2.2025 released") is None
    assert stated_date("build v10.20.2025.1") is None
    assert stated_date("see 31.02.2025") is None


@pytest.mark.parametrize(
    ("system", "year"),
    [
        ("The current year is 2023.", 2023),
        ("Current year: 2025\nAnswer briefly.", 2025),
        ("The year is 2024. You are a helpful assistant.", 2024),
        ("We are now in the year 2026!", 2026),
        # negatives from everyday prompts: a date, a count, a model year, a season
        ("Our goal for the year is 2024 new customers.", None),
        ("Remember that the target for the year is 2000 units.", None),
        ("The customer's car: the model year is 2019.", None),
        ("We are in 2023/24 season planning.", None),
    ],
)
def test_a_system_prompt_that_states_the_year_alone_sets_the_year(system: str, year: int | None) -> None:
    from guard.conversation import replay_clock

    pinned = datetime(2022, 6, 1, 9, 0)
    with replay_clock(pinned):
        seen = Conversation.from_messages([("system", system), ("user", "hi")]).reference_time
    assert seen == (pinned if year is None else pinned.replace(year=year))


def test_a_system_message_that_says_today_is_read_for_today_not_for_its_first_date() -> None:
    said = "Health profile: date of birth 1990-04-12, weight 62 kg. Today is 2025-09-01."
    assert Conversation.from_messages([("system", said), ("user", "what's my BMR?")]).reference_time == datetime(2025, 9, 1)
    # a message with one date and no "today" still gives it
    assert Conversation.from_messages([("system", "Orders placed after 2024-03-01 ship free."), ("user", "hi")]).reference_time == datetime(2024, 3, 1)


def test_a_labelled_date_and_time_where_a_line_starts_is_now_in_any_language():
    from datetime import datetime

    from guard.conversation import stated_now

    assert stated_now("Hora local actual: 2025-03-11 15:20 (Europe/Madrid, UTC+01:00).")[0] == datetime(2025, 3, 11, 15, 20)
    assert stated_now("You help Jo.\nAktuelle Zeit: 2025-03-11T09:05")[0] == datetime(2025, 3, 11, 9, 5)
    # everyday negatives: a date and time in a sentence, after a number, a date without its time
    assert stated_now("Order placed 2025-03-11 15:20, still not shipped") is None
    assert stated_now("see ticket: 12345 at 2025-03-11 15:20") is None
    assert stated_now("Deadline: 2025-03-11") is None
