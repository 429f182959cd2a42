"""Unresolved references: phrases that point at a value the conversation never states."""

from __future__ import annotations

import pytest

from guard.checks.references import unresolved


@pytest.mark.parametrize(
    ("text", "noun"),
    [
        ("Show me images of a specific breed of dog", "breed"),
        ("What is a trivia fact about my favorite number?", "number"),
        ("Give me the population for the year Larry requested", "year"),
        ("Define the word discussed in Chinese class earlier", "word"),
        ("List street crimes near my latitude and longitude", "latitude"),
        # Everyday negatives: the value of the next request, after a comma, "also" or "then", is not this one's
        ("Open a specific invoice, and send me the total for 2024", "invoice"),
        ("Find a certain recipe and also convert 200 grams to ounces", "recipe"),
        ("Look up a particular flight then book seat 14C", "flight"),
    ],
)
def test_a_pointer_with_no_value_after_it_is_unresolved(text: str, noun: str) -> None:
    (ref,) = unresolved(text)
    assert ref.noun == noun and ref.text in text


@pytest.mark.parametrize(
    "text",
    [
        "Details about a specific anime title (4658)",
        "A specific healthcare-related topic, such as accessibility",
        "I am at a specific latitude and longitude lat=48.357, lon=2.37",
        "Fetch a specific Star Trek book using its unique ID (BOMA0000154026)",
        "Find the book called 'Dune' in the library",
        "a specific legal document from the Federal Register with the document number 2021-12345",
    ],
)
def test_a_value_that_follows_resolves_the_reference(text: str) -> None:
    assert unresolved(text) == []


def test_a_pointer_to_an_earlier_turn_is_left_to_that_turn() -> None:
    text = "Book the hotel I mentioned"
    assert [r.noun for r in unresolved(text)] == ["hotel"]
    assert unresolved(text, earlier=True) == []  # the user spoke before: it may have been said


def test_a_possession_is_marked_so_the_preflight_can_ask_only_where_a_parameter_wants_it() -> None:
    (ref,) = unresolved("What is my favourite colour in this palette?")
    assert ref.possessive
    (pick,) = unresolved("Tell me about a certain planet")
    assert not pick.possessive


def test_a_kind_named_with_no_value_is_indefinite() -> None:
    from guard.checks.references import indefinite

    def is_parameter(word: str) -> bool:
        return word.lower() in {"barcode", "ingredient"}

    assert [r.noun for r in indefinite("Look up a product using its barcode", is_parameter)] == ["barcode"]
    assert indefinite("Look up the product with barcode 3017624010701", is_parameter) == []
    assert indefinite("Look up a product using its barcode (3017624010701)", is_parameter) == []


def test_what_defines_the_request_is_asked_about_whatever_parameter_takes_it() -> None:
    (area,) = unresolved("Recent articles related to my research area from arXiv")
    assert area.noun == "research area" and not area.possessive
    (city,) = unresolved("Train connections from Brussels to the city I work tomorrow")
    assert city.noun == "city"
