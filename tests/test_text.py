"""The shared text tables and shapes: one month table, one quoted-phrase pattern."""

from __future__ import annotations

import re

import pytest

from guard import lexicon
from guard.text import quoted_pattern, quoted_text


@pytest.mark.parametrize(
    ("text", "phrases"),
    [
        ('Search for "blue train" please', ["blue train"]),
        ("Search for “blue train” please", ["blue train"]),
        ("Run `ls -la` there", ["ls -la"]),
        ("The album 'Blue Train' and 'Giant Steps'", ["Blue Train", "Giant Steps"]),
        ("Fetch the user 'john_doe's playlist", ["john_doe"]),
        ("I don't know what it's called", []),  # apostrophes inside words open nothing
    ],
)
def test_a_quoted_phrase_is_read_in_every_shape(text, phrases):
    assert [quoted_text(m) for m in quoted_pattern(200).finditer(text)] == phrases


def test_a_phrase_longer_than_the_limit_is_not_read():
    assert quoted_pattern(5).search('"far too long"') is None
    assert quoted_text(quoted_pattern(5).search('"short"')) == "short"


def test_one_month_table_knows_every_name_and_abbreviation():
    assert lexicon.MONTH_NUMBER["september"] == lexicon.MONTH_NUMBER["sept"] == lexicon.MONTH_NUMBER["sep"] == 9
    assert len(lexicon.MONTHS) == 12 and len(set(lexicon.MONTH_NUMBER.values())) == 12
    # longest first: "march" is matched whole, not as "mar"
    assert re.match(rf"(?:{lexicon.MONTH_PATTERN})", "march").group(0) == "march"
    assert re.fullmatch(rf"(?:{lexicon.WEEKDAY_PATTERN})", "wednesday")


def test_the_word_lists_share_one_core_of_grammar_words():
    for words in (lexicon.NAME_STOPWORDS, lexicon.FACTLESS_WORDS, lexicon.DESCRIPTION_STOPWORDS, lexicon.STOPWORDS):
        assert lexicon.GRAMMAR_WORDS <= words
    assert "number" in lexicon.DESCRIPTION_STOPWORDS and "number" not in lexicon.FACTLESS_WORDS


def test_the_sentences_a_tool_catalogue_repeats_are_its_boilerplate() -> None:
    from guard.text import boilerplate, without_boilerplate

    rapid = tuple(
        f'This is the subfunction for tool "{api}", you can use this tool.The description of this function is: "{what}"'
        for api, what in [("shazam", "Get top songs of an artist"), ("shazam", "List similar songs"), ("api_nba", "Get data about teams.")]
    )
    shared = boilerplate(rapid)
    assert without_boilerplate(rapid[0], shared) == '"Get top songs of an artist"'
    assert without_boilerplate(rapid[2], shared) == '"Get data about teams."'
    gorilla = tuple(f"This tool belongs to the Gorilla file system. Tool description: {what}" for what in ["List files.", "Change directory.", "Show a file's last lines."])
    assert without_boilerplate(gorilla[2], boilerplate(gorilla)) == "Show a file's last lines."
    # Everyday negatives: descriptions that share words but no sentence, two tools only, a description that is all boilerplate
    plain = ("Get the weather for a city.", "Get the news for a city.", "Book a table for a city restaurant.")
    assert boilerplate(plain) == frozenset()
    assert boilerplate(rapid[:2]) == frozenset()
    assert without_boilerplate("This tool belongs to the Gorilla file system.", boilerplate(gorilla)) == "This tool belongs to the Gorilla file system."


def test_a_description_that_lists_the_forms_a_parameter_takes():
    from guard.text import described_literal, listed_tokens

    described = "YYYY-MM-DD or relative: today, yesterday, NdaysAgo"
    assert described_literal("yesterday", described) == ("yesterday", None)
    assert described_literal("7daysAgo", described) == ("NdaysAgo", "7")
    # Everyday negatives: two words are no list ("today or later", "asc or desc"), a sentence is none
    assert list(listed_tokens("Date of the meeting, today or later")) == []
    assert list(listed_tokens("The sort order: asc or desc")) == []
    assert described_literal("today", "The day the meeting is held, today by default.") is None
