"""API-Bank's formats, read the way both rebuilt suites need them, on the bundled self-made sample."""

from __future__ import annotations

from pathlib import Path

from guard_bench.datasets import api_bank

SAMPLES = Path(__file__).parents[2] / "benchmarks" / "samples"


def test_requests_are_parsed_as_python_calls_even_with_quoted_lists():
    assert api_bank.parse_request("[Wiki(keyword='Ada Lovelace')]") == {"name": "Wiki", "args": {"keyword": "Ada Lovelace"}}
    # API-Bank quotes a list that holds quotes itself: not Python, unquoted before parsing
    meeting = api_bank.parse_request("[AddMeeting(token='t', attendees='['Ann', 'Bo']')]")
    assert meeting["args"]["attendees"] == ["Ann", "Bo"]


def test_a_dialogue_keeps_earlier_requests_as_calls_with_their_results():
    messages = api_bank.parse_dialogue(
        "User: Log me in.\nAPI-Request: [GetUserToken(username='lena', password='fern42')]->{'token': 'q1'}\n"
        "AI: Done.\nGenerate API Request:\n"
    )
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    login = {"name": "GetUserToken", "args": {"username": "lena", "password": "fern42"}, "id": "api_0"}
    assert messages[1]["tool_calls"] == [login]
    assert messages[2] == {"role": "tool", "content": '{"token": "q1"}', "tool_call_id": "api_0", "name": "GetUserToken"}


def test_values_are_cast_to_the_described_types():
    hotel = {"name": "BookHotel", "input_parameters": {"room_count": {"type": "int"}, "hotel_name": {"type": "str"}}}
    assert api_bank.typed_args({"room_count": "2", "hotel_name": "Inn"}, hotel) == {"room_count": 2, "hotel_name": "Inn"}
    switch = {"name": "S", "input_parameters": {"on": {"type": "bool"}}}
    assert api_bank.typed_args({"on": "True"}, switch) == {"on": True}


def test_a_date_is_found_in_the_forms_people_write_it():
    for said in ("March 26th", "26 March", "Mar. 26", "3/26", "on 2023-03-26 at noon", "March 26, 2023"):
        assert api_bank.holds(said, "2023-03-26 12:00:00"), said
    assert not api_bank.holds("March 260", "2023-03-26")


def test_a_text_gives_a_phrase_when_it_says_all_its_content_words():
    question = "What platforms is this software compatible with?"
    assert api_bank.holds("Tell me what platforms this software is compatible with", question)
    assert not api_bank.holds("Which platforms?", question)


def test_removing_a_value_drops_the_sentences_that_say_it():
    messages = [{"role": "user", "content": "Move it to Dr. Lee. My ID is 42."}, {"role": "user", "content": "42 it is."}]
    assert api_bank.drop_value(messages, "42") == [{"role": "user", "content": "Move it to Dr. Lee."}]


def test_the_pool_ranks_apis_by_name_and_description_and_knows_look_alikes():
    pool = api_bank.ApiPool.from_records(api_bank.read_records(SAMPLES / api_bank.LEVEL1))
    assert pool.ranked("AddMeeting")[0] == "DeleteMeeting"
    assert api_bank.interchangeable(pool.apis["Wiki"], pool.apis["SearchEngine"])  # same input, unrelated names
    assert not api_bank.interchangeable(pool.apis["AddMeeting"], pool.apis["DeleteMeeting"])
