"""Values derived from what the user said by a fixed conversion, read with well-kept libraries.

A model that hears "5 feet 10 inches" and fills ``height_cm: 177.8``, hears "a charge of 1 nC" and
fills ``charge: 1e-09`` (coulombs), hears "7 centimeters" and fills ``unit: "cm"``, hears "100 US
dollars" and fills ``"USD"``, hears "in Tokyo" and fills ``timezone: "Asia/Tokyo"`` or hears
"compounded monthly" and fills ``compounds_per_year: 12`` has invented nothing: each value is what
the user said, in the form the tool wants. Asking the human about them is a false alarm.

* Quantities and units are read by ``pint`` (every unit, prefix and plural it knows, compound
  lengths such as "5 feet 10 inches", temperatures). A number is derived when it is a quantity the
  user said, converted to a unit the parameter's name or description names, or to SI base units,
  and rounded to the value's own precision. A unit written as a value is derived when it is the
  unit of a quantity the user said, written another way.
* Currency codes from their names as CLDR writes them (``babel``: "euros", "US dollars",
  "Japanese yen"); a name that fits several currencies ("dollars") derives none.
* IANA time zones (``zoneinfo``, with the ``tzdata`` package) from the city they are named for.
* States, provinces and regions (``pycountry``'s ISO 3166-2 subdivisions), which a place the user
  named may gain after a comma ("San Francisco" -> "San Francisco, CA"; see ``derivations``).
* Periods a year from the adverb that names them ("monthly" 12, "quarterly" 4), for a parameter
  that counts per year or compounding periods.
* Amounts per period in another period ("$4,000 a month" -> 48,000 a year), region codes from
  their names ("New York" -> "NY", ``pycountry``), phone numbers in another format
  ("(415) 555-0199" -> "+14155550199", ``phonenumbers``).
* Public holidays by name ("Christmas 2024" -> 2024-12-25; ``holidays``, the English-speaking
  countries' tables), in a year the user said or the conversation's own.
* Arithmetic the user wrote ("2π", "3/4", "15% of 80", "half of 10"), worked out by
  ``simpleeval``.

The small libraries are imported with this module, in the importing thread: imported lazily, the
first use came inside LangGraph's tool threads, and once inside a test that had patched imports,
which left ``pycountry`` half imported for the rest of the process. ``pint`` (a third of a second)
and every table load on first use, under one lock (``warm`` loads them up front). What a value's digits leave open stays open: "the Earth's radius"
or "a standard deck" need world knowledge, and remain ungrounded; a ticker is checked only for
being written with the letters of a company the user named ("Tesla" -> TSLA), not against a listing.
"""

from __future__ import annotations

import itertools
import math
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import cache, lru_cache, wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import babel
import babel.numbers
import holidays
import phonenumbers
import pycountry
import simpleeval

from guard.checks.places import country_said, warm as _warm_places
from guard.lexicon import AND_FRACTIONS, DATE_LANGUAGES, FRACTIONS, SCRIPT_LANGUAGES, SHARE_WORDS, STOPWORDS, fraction_value, unspaced
from guard.normalise import SCIENTIFIC, normalise_text, number_words, numbers_in, parse_number, superscript_powers, unmarked
from guard.text import quoted_pattern, quoted_text

if TYPE_CHECKING:
    from guard.checks.derivations import Context, Derivation

#: Held while a library loads or a table is built. LangGraph runs a turn's tool calls in threads:
#: two first uses at once imported pycountry twice, and one of them saw the module half made
#: ("partially initialized module 'pycountry' has no attribute 'db'").
_LOADING = threading.RLock()
T = TypeVar("T")


def _once(build: Callable[[], T]) -> Callable[[], T]:
    """``build`` run once, under ``_LOADING``; its result kept."""
    cached = cache(build)

    @wraps(build)
    def loaded() -> T:
        with _LOADING:
            return cached()

    return loaded


# --- quantities ---------------------------------------------------------------------------------


@_once
def _registry() -> Any:
    import pint  # a third of a second: only when a rule needs it

    registry = pint.UnitRegistry(autoconvert_offset_to_baseunit=True)
    registry.define("decennium = 10 * year")  # pint's "decade" is a ratio of frequencies; people's is ten years
    return registry


#: How people write temperatures and superscripts, in the forms pint reads.
_SPELLED = (
    (re.compile(r"°\s*c\b|\bdeg(?:rees?)?\s+c(?:elsius|entigrade)?\b", re.IGNORECASE), "degC"),
    (re.compile(r"°\s*f\b|\bdeg(?:rees?)?\s+f(?:ahrenheit)?\b", re.IGNORECASE), "degF"),
    (re.compile(r"\bdeg(?:rees?)?\s+k(?:elvin)?\b", re.IGNORECASE), "kelvin"),
    (re.compile(r"^decades?$", re.IGNORECASE), "decennium"),
    # "68 F", "20C": a capital F or C alone after a number is a temperature, not farads or coulombs
    (re.compile(r"^F$"), "degF"),
    (re.compile(r"^C$"), "degC"),
)
_SUPERSCRIPTS = str.maketrans({"·": "*", "µ": "u", "μ": "u"})
#: Scientific notation as people write it by hand after a number: "8.36×10⁻⁵", "6.02 x 10^23",
#: "1.6*10**-19" (``normalise.SCIENTIFIC`` reads it).
_TIMES_TEN = r"[ \t]{0,3}[×xX*·][ \t]{0,3}10(?:[ \t]{0,3}(?:\^|\*\*)[ \t]{0,3}-?\d{1,3}|[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3})"
#: A number (digits, or one or two words) and the one to three words after it, where its unit is.
_NUMBER = rf"(?<![\w.])(-?\d+(?:,\d{{3}})*(?:\.\d+)?(?:[eE][-+]?\d+|{_TIMES_TEN})?)"
_QUANTITY = re.compile(_NUMBER + r"\s*-?\s*((?:[^\W\d_]|[°])[\w/^*°.-]*(?:\s+(?:per\s+)?[^\W\d_][\w/^]*){0,2})")
_WORD = re.compile(r"[^\W\d_]+")
#: Two or three sides written with "x" and one unit after the last: "18x12x10 inches", "40 × 30 cm".
_DIMENSIONS = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*[x×]\s*(\d+(?:\.\d+)?)(?:\s*[x×]\s*(\d+(?:\.\d+)?))?\s*([^\W\d_][\w.]*(?:\s+[^\W\d_]+)?)")
_NUMBER_WORD = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|hundred|dozen|half|an?)\b",
    re.IGNORECASE,
)
#: Words that count one of a unit, or half of one: "an hour", "a mile", "half an hour".
_ARTICLES = {"a": 1, "an": 1, "half a": 0.5, "half an": 0.5}
#: A whole number and a fraction of a unit, said the two ways people say it: "an hour and a
#: half", "two and a half miles", "1 and a quarter cups" (``lexicon.AND_FRACTIONS``).
_SPACED_FRACTIONS = AND_FRACTIONS.replace(" ", r"\s+")
_AND_A_FRACTION = re.compile(
    rf"\b(an?|one|two|three|four|five|six|seven|eight|nine|ten|\d{{1,3}})(?:\s+([^\W\d_]+))?\s+and\s+({_SPACED_FRACTIONS})(?:\s+([^\W\d_]+))?",
    re.IGNORECASE,
)
#: A share of one unit: "a quarter of a minute", "three quarters of an hour", "half of a mile".
_SHARE_OF = re.compile(rf"\b({'|'.join(sorted(FRACTIONS, key=len, reverse=True))})\s+of\s+an?\s+([^\W\d_]+)", re.IGNORECASE)
#: Units that are themselves a count of a smaller one, so "a decade" is always ten years (where
#: "a minute", "a second" are often no amount: "give me a minute").
_MULTIPLE_UNIT = re.compile(r"(?:decade|century|centuries|fortnight|millennium|millennia)s?$", re.IGNORECASE)
#: A height in feet and inches written with marks: 5'11, 5' 11", 6′2″ (not the minutes and seconds
#: of an angle, 40°26'46"; the inches under 12).
_FEET_INCHES = re.compile(r"(?<![\w.°'′’])(\d)\s*['′’]\s*(\d{1,2}(?:\.\d+)?)\s*(?:\"|″|”|'')?(?![\w'′’.])")
#: Between two parts of one compound quantity ("5 feet 10 inches", "2 hours and 30 minutes").
_JOINED = re.compile(r"^\s*(?:,|and|,\s*and)?\s*$")
#: How much of a message the rules read (its start), and how many words of a parameter's
#: description: bounds on the time a hostile message or schema can cost (a 600 KB message of
#: quantities and a 100 KB description on five parameters took 86 s a check before).
_CACHED_TEXT = 4_096
_DESCRIBED_WORDS = 64


@dataclass(frozen=True)
class Quantity:
    """A quantity the user said: its magnitude, pint unit, the words and where they end."""

    magnitude: float
    unit: Any
    words: str
    start: int
    end: int


@lru_cache(maxsize=4_096)
def unit_of(words: str) -> Any | None:
    """The pint unit ``words`` name ("centimeters", "m/s^2", "degrees Fahrenheit"), or None for
    anything else, including the grammar words pint also reads as units ("a" is a year, "at" an
    atmosphere, "in" an inch, "as" an attosecond)."""
    text = superscript_powers(words.strip()).translate(_SUPERSCRIPTS).rstrip(".")
    for pattern, name in _SPELLED:
        text = pattern.sub(name, text)
    if not text or len(text) > 40 or text.casefold() in STOPWORDS or text.casefold() in _NOT_UNITS:
        return None
    registry = _registry()
    for candidate in dict.fromkeys((text, text.casefold())):
        try:
            unit = registry.parse_units(candidate)
        except Exception:  # pint raises a dozen kinds for text that is no unit
            continue
        if not unit.dimensionless or "bit" in str(unit) or "byte" in str(unit):
            return unit
    return None


def unit_field(text: str) -> Any | None:
    """The pint unit a unit field's value names ("g", "ml", "cup", "lb"): as ``unit_of``, but a
    field holds a unit, so a letter alone is one ("g" is grams, not a word)."""
    if not text or len(text) > 20:
        return None
    try:
        unit = _registry().parse_units(text.strip())
    except Exception:  # no unit pint knows
        return None
    return None if unit.dimensionless else unit


#: Words pint reads as units that people write for something else ("5 g" is grams, but "the
#: 5 are"?): the area "are", the "point", "tex", "barn", "mil".
_NOT_UNITS = frozenset({"are", "point", "points", "tex", "barn", "barns", "mil", "pt", "min.", "rad", "sr", "one"})


def quantities(text: str, articles: bool = False) -> tuple[Quantity, ...]:
    """Every quantity with a unit that ``text`` says, longest reading of each unit first, then
    each run of quantities of one kind ("5 feet 10 inches") added up as one more. An article
    alone ("give me a minute") counts only with ``articles`` (an event's length: "at 12:30, an hour")."""
    return _quantities(text[:_CACHED_TEXT], articles)


@lru_cache(maxsize=512)
def _quantities(text: str, articles: bool) -> tuple[Quantity, ...]:
    return _read_quantities(text, articles)


def _read_quantities(text: str, keep_articles: bool = False) -> tuple[Quantity, ...]:
    found: list[Quantity] = []
    for m in _QUANTITY.finditer(text):
        number = _float(m[1].replace(",", ""))
        if number is not None and (q := _with_unit(number, m[2], m.start(), m.start(2))):
            found.append(q)
    for m in itertools.islice(_DIMENSIONS.finditer(text), 16):  # "18x12x10 inches": each side in inches
        numbers = [n for n in m.group(1, 2, 3) if n]
        q = _with_unit(float(numbers[-1]), m[4], m.start(3) if m[3] else m.start(2), m.start(4))
        if q is not None:
            found += [Quantity(float(n), q.unit, f"{n} {m[4].split()[0]}", m.start(), m.end()) for n in numbers]
    for m in itertools.islice(_FEET_INCHES.finditer(text), 16):  # 5'11: 71 inches
        if float(m[2]) < 12:
            found.append(Quantity(int(m[1]) * 12 + float(m[2]), _registry().inch, m[0], m.start(), m.end()))
    halves = []
    for m in itertools.islice(_AND_A_FRACTION.finditer(text), 16):
        number = 1 if m[1].casefold() in ("a", "an") else parse_number(m[1].casefold())
        unit = next((u for w in (m[2], m[4]) if w and (u := unit_of(w)) is not None), None)
        if isinstance(number, (int, float)) and unit is not None:
            halves.append(Quantity(number + fraction_value(m[3]), unit, m[0], m.start(), m.end()))
    words = list(_WORD.finditer(text)) if _NUMBER_WORD.search(text) else []
    articles: set[int] = set()  # "an hour": one only as part of a compound ("an hour and five minutes")
    i = 0
    while i < len(words):
        for n in (2, 1):  # "twenty five", "half an", then "two", "an"
            said = " ".join(w[0].casefold() for w in words[i : i + n])
            number = _ARTICLES.get(said, parse_number(said)) if i + n < len(words) else None
            if number is not None:
                unit_words = words[i + n : i + n + 3]

                q = _with_unit(float(number), text[unit_words[0].start() : unit_words[-1].end()], words[i].start(), unit_words[0].start())
                if q is not None:
                    found.append(q)
                    if said in ("a", "an"):
                        articles.add(q.start)
                break
        i += 1
    for m in itertools.islice(_SHARE_OF.finditer(text), 16):  # "a quarter of a minute": 0.25 minutes
        q = _with_unit(FRACTIONS[m[1].casefold()], m[2], m.start(), m.start(2))
        if q is not None:
            halves.append(Quantity(q.magnitude, q.unit, m[0], m.start(), q.end))
    found.sort(key=lambda q: q.start)
    compounds = _compounds(found, text)
    # "give me a minute", "in a second": an article alone says no amount anyone would convert,
    # but "a decade" is ten years wherever it is said
    return (*(q for q in found if keep_articles or q.start not in articles or _MULTIPLE_UNIT.match(q.words.split(" ", 1)[-1])), *compounds, *halves)


def _with_unit(number: float, words: str, start: int, unit_start: int) -> Quantity | None:
    """The quantity of ``number`` in the longest leading run of ``words`` that names a unit."""
    parts = words.split()
    for n in range(len(parts), 0, -1):
        if n > 1 and any((w.casefold() in STOPWORDS and w.casefold() != "per") or w.casefold() in _NOT_UNITS for w in parts[:n]):
            continue  # "68 degrees Fahrenheit in heating mode": "in" is no inch, "15 miles a week" no year, "2 µC point charge" no µC·point
        unit = unit_of(" ".join(parts[:n]))
        if unit is not None:
            end = unit_start + len(" ".join(parts[:n]))
            return Quantity(number, unit, f"{number:g} {' '.join(parts[:n])}", start, end)
    return None


def _compounds(found: list[Quantity], text: str) -> list[Quantity]:
    """Runs of quantities of one kind, said one after the other: their sum, in the first's unit."""
    sums: list[Quantity] = []
    i = 0
    while i < len(found):
        run = [found[i]]
        while (
            i + len(run) < len(found)
            and (nxt := found[i + len(run)]).unit.dimensionality == run[0].unit.dimensionality
            and nxt.unit != run[-1].unit
            and _JOINED.match(text[run[-1].end : nxt.start])
        ):
            run.append(nxt)
        if len(run) > 1:
            try:
                total = sum((_registry().Quantity(q.magnitude, q.unit).to(run[0].unit).magnitude for q in run[1:]), run[0].magnitude)
            except Exception:
                total = None
            if total is not None:
                sums.append(Quantity(total, run[0].unit, " ".join(q.words for q in run), run[0].start, run[-1].end))
        i += len(run)
    return sums


def _float(s: str) -> float | None:
    if m := SCIENTIFIC.fullmatch(superscript_powers(s.removeprefix("-"))):  # "8.36×10⁻⁵", "6.02 x 10^23": mantissa times ten to the power
        s = f"{'-' if s.startswith('-') else ''}{m[1]}e{m[2]}"
    try:
        number = float(s)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def decimals(value: float | int) -> int:
    """How many decimal places a value is written with (72.57: 2, 1e-09: 9, 300: 0)."""
    try:
        exponent = Decimal(repr(value)).normalize().as_tuple().exponent
    except (InvalidOperation, ValueError):
        return 0
    return max(0, -exponent) if isinstance(exponent, int) else 0


def rounds_to(value: float | int, exact: float) -> bool:
    """Whether ``value`` is ``exact`` written to the value's own precision (72.57 for 72.5748;
    0 is never a rounding of anything but 0)."""
    if not math.isfinite(exact):
        return False
    if math.isclose(value, exact, rel_tol=1e-9, abs_tol=1e-15):
        return True
    if value == 0 or exact == 0 or (value > 0) != (exact > 0):
        return False
    digits = decimals(value)
    return digits <= 15 and round(exact, digits) == round(float(value), digits)


def _targets(ctx: Context) -> list[Any]:
    """The units a parameter's name or description names ("height_cm", "Weight in kilograms")."""
    return _named_units(tuple(ctx.words), ctx.description[:_DESCRIBED_WORDS * 16])


@lru_cache(maxsize=1_024)
def _named_units(name_words: tuple[str, ...], description: str) -> list[Any]:
    units: list[Any] = []
    words = [w for w in name_words[:_DESCRIBED_WORDS] if w not in STOPWORDS]
    # "target_temp_c", "target_c": degrees Celsius, not the speed of light; "f" no farad; "cm4",
    # "area_m2": a unit to a power, as names write it
    words = [{"c": "degC", "f": "degF"}.get(w, re.sub(r"^([a-z]{1,3})([234])$", r"\1^\2", w)) for w in words]
    described = [w for w in re.findall(r"[^\W\d_][\w/^²³]*", description) if len(w) > 1 and w.casefold() not in STOPWORDS]
    described = described[:_DESCRIBED_WORDS]
    for group in (words, described):
        for n in (2, 1):
            for i in range(len(group) - n + 1):
                if (unit := unit_of(" ".join(group[i : i + n]))) is not None and unit not in units:
                    units.append(unit)
    return units


def _conversions(q: Quantity, targets: Iterable[Any]) -> Iterable[tuple[float, str]]:
    registry = _registry()
    quantity = registry.Quantity(q.magnitude, q.unit)
    for target in targets:
        if q.unit == registry.ounce and target.dimensionality == registry.liter.dimensionality:
            # "a 4 oz bottle" of a liquid, asked in ml: fluid ounces
            yield registry.Quantity(q.magnitude, registry.fluid_ounce).to(target).magnitude, f"{target:~}"
        elif target.dimensionality == q.unit.dimensionality:
            try:
                yield quantity.to(target).magnitude, f"{target:~}"
            except Exception:
                continue
    try:
        base = quantity.to_base_units()
        yield base.magnitude, f"{base.units:~}"
    except Exception:
        return


def _said_quantities(ctx: Context) -> Iterable[tuple[int, Quantity]]:
    for index, text in ctx.said:
        for q in quantities(text):
            yield index, q


def converted_quantity(value: object, ctx: Context) -> Derivation | None:
    """``height_cm: 177.8`` from "5 feet 10 inches", ``charge: 1e-09`` from "1 nC": a quantity
    the user said, in the unit the parameter names (or in SI base units), to the value's precision."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    said = list(_said_quantities(ctx))
    if not said:
        return None
    targets = _targets(ctx)
    for index, q in said:
        for converted, unit in _conversions(q, targets):
            if rounds_to(value, converted) or (_temperature(q.unit) and _to_a_half(value, converted)):
                return index, f"{q.words} -> {value} {unit}"
    return None


def quantity_text(value: object, ctx: Context) -> Derivation | None:
    """``quantity: "2 lb"`` from "2 lbs chicken thighs", ``"1 kg"`` from "1000 grams of flour": a
    quantity written as text with its unit, which the user said (in that unit or another)."""
    if not isinstance(value, str) or not 2 <= len(value.strip()) <= 32 or not any(c.isdigit() for c in value):
        return None
    own = quantities(value.strip())
    if len(own) != 1 or own[0].start > 0 or own[0].end < len(value.strip()) - 1:
        return None  # the whole value is one quantity
    for index, q in _said_quantities(ctx):
        if (converted := in_unit(q, own[0].unit)) is not None and rounds_to(own[0].magnitude, converted):
            return index, f"{q.words} -> {value}"
    return None


def count_times_quantity(value: object, ctx: Context) -> Derivation | None:
    """``dose_mg: 400`` from "just took 2 ibuprofen, the 200mg ones", ``weight_kg: 15`` from "3
    bags of 5 kg": a count of things times a quantity of each that one message states, in the
    unit the parameter names."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        return None
    targets = _targets(ctx)
    if not targets:
        return None
    targets = [t for t in targets if not _temperature(t)]  # no sum of temperatures
    for index, text in ctx.said[-_AMOUNT_MESSAGES:]:
        said = quantities(text[:_CACHED_TEXT])[:8]
        counts = list(itertools.islice(_counts(text[:_CACHED_TEXT], things=True), 12)) if said else []
        for q in said:
            for start, n in counts:
                if q.start <= start < q.end:
                    continue  # the quantity's own number
                for target in targets:
                    if (each := in_unit(q, target)) is not None and rounds_to(value, n * each):
                        return index, f"{n:g} x {q.words} -> {value} {target:~}"
    return None


#: A thermostat or temperature setting written as a bare number: "turn the thermostat to 68".
#: "make the living room 70 degrees", "it's 68° in here": degrees said without a scale.
_BARE_DEGREES = re.compile(r"\b(\d{1,3}(?:\.\d)?)\s*(?:degrees|degree|degs|deg|°)(?![a-z])(?!\s*(?:c|f|celsius|fahrenheit|centigrade|kelvin|k)\b)(?!\s*(?:angle|turn|rotation|tilt|to the (?:left|right))s?\b)", re.IGNORECASE)
#: A setting moved to a bare number, for a parameter that holds a temperature: "bump the east
#: conference rooms down to 68".
_SET_TO = re.compile(
    r"\b(?:set|bump|turn|crank|drop|lower|raise|put|keep|bring|make|change|adjust)\b"
    r"(?:(?!\b(?:volume|brightness|speed|fan|timer|alarm|price|budget|limit|zoom|font|size|level|count|number|quantity|page|rate|humidity)\b)[^.?!\n]){0,60}?"
    r"\b(?:(?:down|up|back) )?(?:to|at)\s+(\d{1,3}(?:\.\d)?)\b"
    r"(?![.:]\d)(?!\s*(?:°|%|deg|degrees|percent|[cfk]\b|min|minutes|hours?|pm|am|people|persons|guests|users|items|st|nd|rd|th)\b)",
    re.IGNORECASE,
)
#: Words before degrees that make them an angle ("rotate the camera 70 degrees").
_ANGLE_WORDS = re.compile(r"\b(?:rotat\w*|tilt\w*|angle\w*|spin\w*|incline\w*|slope\w*|pan|lean\w*)\b", re.IGNORECASE)
_BARE_SETTING = re.compile(r"\b(?:thermostat|temperature|temp|heat|heating|cooling|a/?c|degrees)\b[^.?!\n]{0,40}?\b(?:to|at)\s+(\d{1,3}(?:\.\d)?)\b(?!\s*(?:°|%|deg|degrees|percent|[cfk]\b|min|minutes|hours?|pm|am))", re.IGNORECASE)


def bare_temperature(value: object, ctx: Context) -> Derivation | None:
    """``setpoint_c: 20`` from "turn the thermostat to 68", "bump the conference rooms down to 68"
    or "make it 68 degrees": a temperature setting said as a bare number, or in degrees without a
    scale, in the scale people there use (68 is Fahrenheit: no room is set to 68 °C), written in
    the parameter's scale, to the value's precision or a thermostat's half degree."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    scales = [t for t in _targets(ctx) if _temperature(t)]
    if not scales:
        return None  # every numeric value of every call comes here: no text is read for the others
    registry = _registry()
    for index, text in ctx.said:
        found = itertools.chain(*(pattern.finditer(text[:_CACHED_TEXT]) for pattern in (_BARE_SETTING, _BARE_DEGREES, _SET_TO)))
        for m in itertools.islice(found, 16):
            if _ANGLE_WORDS.search(text, max(0, m.start() - 40), m.start()):
                continue
            said = float(m[1])
            for target in scales:
                # the other scale than the parameter's: Fahrenheit for a number a room in Celsius never is
                source = registry.degF if said >= 45 and target != registry.degF else registry.degC if said <= 35 and target == registry.degF else None
                if source is None:
                    continue
                exact = registry.Quantity(said, source).to(target).magnitude
                if rounds_to(value, exact) or _to_a_half(value, exact):
                    return index, f"{m[1]} ({source:~}) -> {value} {target:~}"
    return None


def _temperature(unit: Any) -> bool:
    return unit.dimensionality == _registry().kelvin.dimensionality


def _to_a_half(value: float | int, exact: float) -> bool:
    """``value`` is ``exact`` to the nearest half (15.5 for 60 °F, 15.56 °C: a thermostat's step)."""
    return float(value) * 2 == round(float(value) * 2) and round(exact * 2) / 2 == value


def unit_symbol(value: object, ctx: Context) -> Derivation | None:
    """``unit: "cm"`` from "7 centimeters": the unit of a quantity the user said, written as the
    tool wants it (a symbol for a name, a name for a symbol, singular for plural)."""
    if not isinstance(value, str) or not 0 < len(value.strip()) <= 24:
        return None
    unit = unit_of(value)
    if unit is None:
        return None
    for index, q in _said_quantities(ctx):
        if q.unit == unit:
            return index, f"{q.words} -> {value}"
    for index, text in ctx.normalised:  # a unit asked for: "350 K in fahrenheit", "convert it to miles"
        words = text[:_CACHED_TEXT].split()
        for i in range(1, len(words)):
            if words[i - 1] in _UNIT_CUES and len(words[i]) >= 3 and words[i].isalpha() and unit_of(words[i]) == unit:
                return index, f"{words[i - 1]} {words[i]} -> {value}"
    return None


#: Words that put the unit a value is wanted in after them.
_UNIT_CUES = frozenset({"in", "into", "to", "degrees"})


# --- currencies ----------------------------------------------------------------------------------


#: Which word of a currency's name is its head noun, by language: the last in English ("Japanese
#: yen", "українських гривень"), the first where the adjective follows ("reais brasileiros",
#: "rupiah Indonesia"); none where the words are not split by spaces or the order varies.
_NAME_HEAD: dict[str, int | None] = {
    "en": -1, "es": 0, "fr": 0, "it": 0, "pt": 0, "de": -1, "nl": -1, "ru": -1, "uk": -1, "cs": -1, "sv": -1, "tr": -1,
    "pl": 0, "id": 0, "vi": 0,
}
#: The counts a currency's name is read at: the singular, the plural, and the plural many
#: languages use from five ("5 гривень", "5 złotych").
_NAME_COUNTS = (None, 1, 2, 5)


@_once
def _currency_names() -> dict[str, str]:
    """Every English name CLDR gives a currency, singular and plural, normalised -> its code, the
    names of the currencies in use today in the other common languages ("美元", "reais
    brasileiros", "US-Dollar"), and the head word of a name when no other currency in use today
    has it ("yen", "euros", "baht", "reais"); a name two currencies share ("dollars", "pounds",
    "rupees", "dólares") is left out."""
    names: dict[str, set[str]] = {}
    heads: dict[str, set[str]] = {}
    english = babel.Locale("en")
    tender = {c for t in english.territories for c in babel.numbers.get_territory_currencies(t, tender=True)}
    for language in DATE_LANGUAGES:
        for code in english.currencies if language == "en" else tender:
            for form in {babel.numbers.get_currency_name(code, count, locale=language) for count in _NAME_COUNTS}:
                name = normalise_text(form)
                names.setdefault(name, set()).add(code)
                if code in tender and len(name.split()) > 1 and (head := _NAME_HEAD.get(language)) is not None:
                    if not form.split()[head].isupper():  # "доллар США": the country's initials, no name of the currency
                        heads.setdefault(name.split()[head], set()).add(code)
    for head, codes in heads.items():
        if len(codes) == 1 and head not in names:
            names[head] = codes
    return {name: next(iter(codes)) for name, codes in names.items() if len(codes) == 1 and name}


#: What English speakers mean by the names many currencies share (CLDR leaves them out as
#: ambiguous): "dollars" and "bucks" are US dollars, "pounds" and "quid" pounds sterling.
_CONVENTIONAL_CURRENCIES = {"dollar": "USD", "dollars": "USD", "buck": "USD", "bucks": "USD",
                            "pound": "GBP", "pounds": "GBP", "quid": "GBP", "sterling": "GBP"}


#: The partitions of AWS anyone may use: the commercial regions and China's.
_PUBLIC_CLOUD_PARTITIONS = ("aws", "aws-cn")


@_once
def cloud_regions() -> dict[str, tuple[str, ...]]:
    """Each AWS region's code -> the place its name says, as people say it ("eu-central-1":
    Frankfurt, "us-west-2": Oregon, "us-east-1": N. Virginia, Northern Virginia, Virginia), from
    botocore's own table of endpoints; a region named for no place ("Canada (Central)") has none."""
    from botocore.loaders import Loader

    out: dict[str, tuple[str, ...]] = {}
    for partition in Loader().load_data("endpoints").get("partitions", ()):
        if partition.get("partition") not in _PUBLIC_CLOUD_PARTITIONS:
            continue
        for code, region in partition.get("regions", {}).items():
            m = re.search(r"\(([^()]+)\)", str(region.get("description") or ""))
            place = m[1].strip() if m else ""
            if not place or place.casefold() in ("central", "east", "west", "north", "south"):
                continue
            forms = [place]
            if place.startswith("N. "):  # "N. Virginia", "N. California"
                forms += [f"Northern {place[3:]}", place[3:]]
            out[code] = tuple(forms)
    return out


@_once
def currency_symbols() -> dict[str, str]:
    """A currency sign written before an amount -> its ISO 4217 code, from CLDR's English symbols
    (``babel``): "$" USD, "€" EUR, "£" GBP, "¥" JPY, "₹" INR, "₩" KRW and the other one-character
    signs only one currency has."""
    from babel import Locale

    signs: dict[str, set[str]] = {}
    for code in Locale("en").currencies:
        sign = babel.numbers.get_currency_symbol(code, "en")
        if len(sign) == 1 and not sign.isalnum() and code != "XXX":
            signs.setdefault(sign, set()).add(code)
    return {sign: codes.pop() for sign, codes in signs.items() if len(codes) == 1}


@_once
def home_currency_symbols() -> dict[str, str]:
    """A currency's symbol as its own country writes it (CLDR, in the country's first official
    language: "zł" PLN, "Kč" CZK, "Rp" IDR, "R$" BRL, "₺" TRY) -> its ISO 4217 code, where no other
    country writes that symbol for its own currency ("kr" is Swedish, Norwegian and Danish; "$"
    and "£" are many countries'). A symbol of one letter ("K", "元") is no sign of one currency."""
    from babel.languages import get_official_languages

    signs: dict[str, set[str]] = {}
    for territory in babel.Locale("en").territories:
        if not territory.isalpha():
            continue  # "001", "150": regions, no country
        currencies = babel.numbers.get_territory_currencies(territory, tender=True)
        languages = get_official_languages(territory, de_facto=True)
        if not currencies or not languages:
            continue
        try:
            sign = babel.numbers.get_currency_symbol(currencies[0], f"{languages[0]}_{territory}")
        except babel.UnknownLocaleError:  # a country with no CLDR locale of its language
            continue
        if sign != currencies[0] and not (len(sign) == 1 and sign.isalpha()):
            signs.setdefault(sign, set()).add(currencies[0])
    return {sign: codes.pop() for sign, codes in signs.items() if len(codes) == 1}


#: The currency people mean by a name many share, in every language, and another currency of that
#: name: "dollars" are US dollars unless said otherwise (the Canadian dollar shares the word).
#: ("Pounds" are sterling in English only: "جنيه" is first the Egyptian pound.)
_MEANT_BY_SHARED_NAME = {"USD": "CAD"}


@_once
def _conventional_currencies() -> dict[str, str]:
    """What "dollars" mean in each common language, as in English: the words of CLDR's names that
    the US and the Canadian dollar share, singular and plural ("dólares", "dollari", "ドル",
    "달러", "доллар"). A shared word of one character of an unspaced script is a unit of many
    currencies (元), no name; pieces of a word the normalised text splits (Devanagari's vowel
    signs) are no words."""
    found = dict(_CONVENTIONAL_CURRENCIES)
    for language in DATE_LANGUAGES:
        for meant, other in _MEANT_BY_SHARED_NAME.items():
            for count in _NAME_COUNTS:
                mine = normalise_text(babel.numbers.get_currency_name(meant, count, locale=language))
                theirs = normalise_text(babel.numbers.get_currency_name(other, count, locale=language))
                for word in theirs.split():
                    if (len(word) >= 3 and word in mine.split()) or (unspaced(word) and len(word) >= 2 and word in mine):
                        found.setdefault(word, meant)
    return found


def currency_names(code: str) -> list[str]:
    """The normalised names a currency code is said by: CLDR's, the last word of one when no other
    currency in use ends so, and what people mean by "dollars" or "pounds" in the common languages."""
    code = code.strip().upper()
    return [name for name, c in [*_currency_names().items(), *_conventional_currencies().items()] if c == code]


def currency_name(value: object, ctx: Context) -> Derivation | None:
    """``"EUR"`` from "in euros", ``"USD"`` from "100 US dollars" or "twenty bucks": an ISO 4217
    code for the currency the user named."""
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z]{3}", value.strip()):
        return None
    names = currency_names(value)
    for index, text in ctx.normalised:
        for name in names:
            if f" {name} " in text or (unspaced(name) and name in text):  # "100美元换算成人民币": inside a run
                return index, f"{name} -> {value}"
    return None


# --- minor currency units ------------------------------------------------------------------------

#: A description or name that says an amount is counted in a currency's minor unit (Stripe's
#: "amount in cents", "the smallest currency unit"), or in thousandths of a unit (YNAB's
#: "milliunits (1000 = 1.00)"), with how many of them make one unit.
_MINOR_UNIT = re.compile(r"\b(?:cents?|pence|smallest currency unit|minor units?|lowest denomination)\b", re.IGNORECASE)
_MILLI_UNIT = re.compile(r"\bmilli-?units?\b|\bthousandths\b|\b1,?000 = 1(?:\.0+)?\b", re.IGNORECASE)
_MONEY = re.compile(r"[$€£¥]\s*\d|\d\s*(?:[$€£¥]|usd|eur|gbp|dollars?|euros?|pounds?|bucks?|quid)\b|\b(?:dollars?|euros?|pounds?|bucks?)\b", re.IGNORECASE)


def minor_units(value: object, ctx: Context) -> Derivation | None:
    """``amount: 2550`` from "refund $25.50", where the amount is counted in cents, ``amount:
    150000`` from "move 150 bucks" in milliunits: a sum of money the user said, times 100 or 1000."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    described = " ".join(ctx.words) + " " + ctx.description[:300]
    scale, unit = (1000, "milliunits") if _MILLI_UNIT.search(described) else (100, "cents") if _MINOR_UNIT.search(described) else (0, "")
    if not scale:
        return None
    for index, text in ctx.said:
        text = text[:_CACHED_TEXT]
        if not _MONEY.search(text):
            continue
        for number, written in numbers_in(text).items():
            if isinstance(number, (int, float)) and abs(number * scale - value) < 0.5:
                return index, f"{written} -> {value} ({unit})"
    return None


# --- languages -----------------------------------------------------------------------------------

#: A language code or tag as tools take them: "en", "eng", "pt-BR", "zh_Hans", "es-419".
_LANGUAGE_TAG = re.compile(r"([A-Za-z]{2,3})(?:[-_]([A-Za-z]{4}|[A-Za-z]{2}|\d{3}))?")
#: Words of a parameter's name or description that say it takes a language.
_LANGUAGE_WORDS = frozenset({"lang", "language", "languages", "locale", "locales", "dialect", "tongue"})


@lru_cache(maxsize=1024)
def language_names(tag: str) -> frozenset[str]:
    """The English names (CLDR, ``babel``; ISO 639-3 codes through ``pycountry``) of the language a
    code or tag stands for, normalised: "en" -> english; "pt-BR" -> brazilian portuguese,
    portuguese brazil, portuguese (a model writes "en-US" for "English"). Empty for no language."""
    m = _LANGUAGE_TAG.fullmatch(tag.strip())
    if m is None:
        return frozenset()
    base, sub = m[1].lower(), m[2]
    if len(base) == 3 and (lang := pycountry.languages.get(alpha_3=base)) is not None:
        base = getattr(lang, "alpha_2", base)
    table = babel.Locale("en").languages
    names = {table[base]} if base in table else set()
    if names and sub:
        sub = sub.title() if len(sub) == 4 else sub.upper()
        if f"{base}_{sub}" in table:
            names.add(table[f"{base}_{sub}"])
        try:
            names.add(babel.Locale.parse(f"{base}_{sub}").get_display_name("en") or "")
        except (ValueError, babel.UnknownLocaleError):
            pass
    return frozenset(n for n in map(normalise_text, names) if n)


@lru_cache(maxsize=1024)
def foreign_language_names(tag: str) -> re.Pattern[str] | None:
    """How the other common languages (``DATE_LANGUAGES``) name the language of a code, as a
    pattern over normalised text: "Englisch" and its inflections ("ins Englische"), "inglés",
    "anglais", "英語", "영어". None for no language."""
    m = _LANGUAGE_TAG.fullmatch(tag.strip())
    if m is None or not language_names(tag):
        return None
    base = m[1].lower()
    if len(base) == 3 and (lang := pycountry.languages.get(alpha_3=base)) is not None:
        base = getattr(lang, "alpha_2", base)
    # Traditional Chinese names too ("英文" beside "英语"): both are written in mainland text
    names = {normalise_text(babel.Locale.parse(language).languages.get(base, "")) for language in (*DATE_LANGUAGES[1:], "zh_Hant")} - {""}
    spaced = sorted(re.escape(n) for n in names if not unspaced(n))  # a word between spaces, inflected ("englische")
    inside = sorted(re.escape(n) for n in names if unspaced(n))  # inside a run of characters ("英語に")
    parts = ([rf" (?:{'|'.join(spaced)})[a-z]{{0,2}} "] if spaced else []) + (["|".join(inside)] if inside else [])
    return re.compile("|".join(parts)) if parts else None


def language_code(value: object, ctx: Context) -> Derivation | None:
    """``targetLanguage: "en"`` from "in English" or "ins Englische", ``"pt-BR"`` from "Brazilian
    Portuguese", ``"ko"`` for the text to translate written in Hangul: the code of a language
    the user named (in English or another common language), or the one the text is written in,
    for a parameter that takes languages."""
    if not isinstance(value, str) or len(value) > 12:
        return None
    words = set(ctx.words) | set(normalise_text(ctx.description[:300]).split())
    if not words & _LANGUAGE_WORDS:
        return None
    names = language_names(value)
    # the parameter's own name decides ("target", described as "the language ... of the input text")
    source = bool(set(ctx.words) & _SOURCE_WORDS) or (bool(words & _SOURCE_WORDS) and not set(ctx.words) & _TARGET_WORDS)
    for index, text in ctx.normalised:
        for name in names:
            if f" {name} " in text and not (source and f" into {name} " in text):  # "into English": the target
                return index, f"{name} -> {value}"
    if names and not source and (foreign := foreign_language_names(value)) is not None:
        for index, text in ctx.normalised:
            if found := foreign.search(text):
                return index, f"{found[0].strip()} -> {value}"
    if source and ctx.said and (written := _written_in(ctx.said[-1][1])) and written in {n.split()[0] for n in names}:
        return ctx.said[-1][0], f"the text is in {written.title()} -> {value}"  # what to translate from
    if not source and not words & _TARGET_WORDS and ctx.said and (written := _written_in(ctx.said[-1][1], whole=True)) in {n.split()[0] for n in names}:
        # a search's, a forecast's or a reply's language: the one the user writes in
        return ctx.said[-1][0], f"the user writes in {str(written).title()} -> {value}"
    if not source and words & _TARGET_WORDS and ctx.said and (asked := _asked_in(ctx.said[-1][1])) in {n.split()[0] for n in names}:
        # "what does this say: ขอบคุณมาก": a text in another language, translated into the one the user asks in
        return ctx.said[-1][0], f"the user asks in {str(asked).title()} about a text in another language -> {value}"
    return None


#: The text a message quotes or pastes in another script: quoted phrases (any quotes, corner
#: brackets and guillemets too), and runs of letters outside the Latin alphabet.
_PASTED = re.compile(r"[「『«„“\"]([^「『«„」』»“”\"\n]{1,2000})[」』»“”\"]|(?:[^\W\d_A-Za-z\u00c0-\u024f\u1e00-\u1eff]+[\s\d.,!?、。，！？]*)+")


def _asked_in(message: str) -> str | None:
    """The language a message asks in about a text it quotes or pastes in another language ("can
    u translate this msg from my host: 「チェックインは15時以降です」": English), when both are
    known and differ; None otherwise (nothing pasted, or nothing around it to read)."""
    message = message[:_CACHED_TEXT]
    quoted = " ".join(quoted_text(m) for m in _QUOTE.finditer(message))
    own = _QUOTE.sub(" ", message)
    pasted = " ".join([quoted, *(m[0] for m in _PASTED.finditer(own))])
    own = _PASTED.sub(" ", own)
    if not pasted.strip() or len(_WORD.findall(own)) < _IDENTIFIED_WORDS:
        return None
    asked, written = _written_in(own, whole=True), _written_in(pasted, whole=True)
    return asked if asked is not None and written is not None and asked != written else None


_SCRIPTS = tuple((language, re.compile(f"[{chars}]")) for language, chars in SCRIPT_LANGUAGES)


def _written_in(message: str, whole: bool = False) -> str | None:
    """The language of the text to translate (the message's quoted phrase, or else the message):
    another language when the identifier is sure of it ("Wat is het laatste nieuws over de
    Formule 1?" is Dutch, though "is" and "over" are English words too), English when a fifth of
    its words are English function words, or the language its script belongs to alone (Hangul:
    Korean; kana: Japanese; Han without kana: Chinese; Devanagari: Hindi); None when none says.
    ``whole``: the message itself, whatever it quotes."""
    quoted = None if whole else _QUOTE.search(message[:_CACHED_TEXT])
    text = quoted_text(quoted) if quoted else message[:_CACHED_TEXT]
    code = identified_language(text)
    if code is not None and code != "en":
        return normalise_text(babel.Locale("en").languages[code])
    if _english(text):
        return "english"
    if found := next((language for language, script in _SCRIPTS if script.search(text)), None):
        return found
    return "english" if code == "en" else None


#: How sure the language identifier must be, and how many words it needs, to name a language.
_IDENTIFIED = 0.9
_IDENTIFIED_WORDS = 3


@_once
def _language_identifier() -> Any:
    """``py3langid``'s classifier (langid.py's model), restricted to the common languages
    (``DATE_LANGUAGES``), with probabilities; loaded once (under a second)."""
    import py3langid
    from py3langid.langid import LanguageIdentifier

    model = Path(py3langid.__file__).parent / "data" / "model.npz.xz"
    identifier = LanguageIdentifier.from_modelpath(str(model), norm_probs=True)
    identifier.set_languages(list(DATE_LANGUAGES))
    return identifier


@lru_cache(maxsize=1024)
def identified_language(text: str) -> str | None:
    """The language a text of three words or more is written in ("quel temps fera-t-il à Lyon
    demain ?": "fr"), when the identifier is sure of it; None otherwise ("5'11 in cm?")."""
    text = text[:_CACHED_TEXT]
    if len(_WORD.findall(text)) < _IDENTIFIED_WORDS:
        return None
    code, probability = _language_identifier().classify(text)
    return code if probability >= _IDENTIFIED else None


#: Words of a parameter's name that say it takes the language something is written in.
_SOURCE_WORDS = frozenset({"source", "src", "from", "input", "original", "detected"})
#: Words that say a parameter takes the language to translate into: never the one the user writes in.
_TARGET_WORDS = frozenset({"target", "to", "into", "dest", "destination", "translate", "translation", "translated"})
_QUOTE = quoted_pattern(400)


def _english(text: str) -> bool:
    """Whether a text is English: a fifth of its words or more are English function words
    ("where is the nearest")."""
    words = re.findall(r"[^\W\d_]+", text.casefold())
    return len(words) >= 3 and 5 * sum(w in STOPWORDS for w in words) >= len(words)


# --- airports ------------------------------------------------------------------------------------

#: Words of a parameter's name or description that say it takes an airport.
_AIRPORT_WORDS = frozenset({"airport", "airports", "iata", "origin", "destination", "departure", "arrival", "from", "to", "dest", "orig"})
#: Words of airport names that say what they are, not which one.
_AIRPORT_KINDS = frozenset(
    "airport international regional municipal national county field airfield aerodrome airbase base air intl".split()
)


@_once
def _airport_table() -> dict[str, dict[str, Any]]:
    """IATA code -> the airport's record (``airportsdata``: about 8,000), loaded once for the
    airport and the country rules."""
    import airportsdata

    return dict(airportsdata.load("IATA"))


@_once
def _airports() -> dict[str, frozenset[str]]:
    """IATA code -> the normalised names a traveller calls the airport by (``airportsdata``): its
    city ("seattle"), the city its name starts with before a dash ("montreal" for YUL, in
    Dorval), and its own name without its city and its kind ("heathrow", "john f kennedy", and
    that name's last word when it is a long one: "kennedy")."""
    table: dict[str, frozenset[str]] = {}
    for code, airport in _airport_table().items():
        city = normalise_text(airport.get("city") or "")
        own = [w for w in normalise_text(airport.get("name") or "").split() if w not in _AIRPORT_KINDS and w not in city.split()]
        names = {city} if city else set()
        # the city an airport outside it is named for, before a dash: "Montréal-Pierre Elliott
        # Trudeau" (in Dorval), "Dallas-Fort Worth", "Baltimore/Washington"
        served = normalise_text(re.split(r"\s*[-/–]\s*", airport.get("name") or "", maxsplit=1)[0])
        if served != normalise_text(airport.get("name") or "") and len(served) >= 4 and served not in _AIRPORT_KINDS:
            names.add(served)
        if own and not all(w in STOPWORDS for w in own):
            names.add(" ".join(own))
            if len(own[-1]) >= 5:
                names.add(own[-1])
        table[code] = frozenset(names | {_folded(n) for n in names})  # "montréal", and "montreal" as people type it
    return table


def code_said(code: str, said: Iterable[tuple[int, str]], suffix: str = "") -> int | None:
    """Where a code was written as it is, not inside a word ("ORD", "UK"; ``suffix`` a regex the
    code may be followed by: "C?" for "NYC"): the message index, in each message's first 4,096
    characters."""
    pattern = re.compile(rf"(?<![A-Za-z]){re.escape(code)}{suffix}(?![A-Za-z])")
    return next((i for i, text in said if pattern.search(text[:_CACHED_TEXT])), None)


def airport_code(value: object, ctx: Context) -> Derivation | None:
    """``destination: "LHR"`` from "to Heathrow", ``"SEA"`` from "flights to Seattle": the IATA
    code of an airport the user named, or of one in the city the user named, for a parameter
    that takes airports."""
    if not isinstance(value, str) or not re.fullmatch(r"[A-Z]{3}", value.strip()):
        return None
    words = set(ctx.words) | set(normalise_text(ctx.description[:300]).split())
    if not words & _AIRPORT_WORDS:
        return None
    for index, text in ctx.normalised:
        plain = unmarked(text[:_CACHED_TEXT]) if not text.isascii() else text  # the table writes "Umea" for Umeå
        for name in _airports().get(value.strip(), ()):
            if f" {name} " in text or f" {name} " in plain:
                return index, f"{name} -> {value}"
    return None


#: A place written with an airport's code in brackets: "Chicago O'Hare (ORD)", "Seattle-Tacoma (SEA)".
_NAMED_AIRPORT = re.compile(r"^\s*(.{3,80}?)\s*\(([A-Z]{3})\)\s*$")


def airport_name(value: object, ctx: Context) -> Derivation | None:
    """``location: "Chicago O'Hare (ORD)"`` where the user said ORD, or flies from Chicago: an
    airport written by its name (or its city's) with its IATA code in brackets, where the code
    or the city was said: every word besides the code is a word of the airport's name or city."""
    if not isinstance(value, str) or (m := _NAMED_AIRPORT.match(value)) is None:
        return None
    airport = _airport_table().get(m[2])
    if airport is None:
        return None
    city = normalise_text(airport.get("city") or "")
    known = set(normalise_text(f"{airport.get('name') or ''} {city}").split()) | _AIRPORT_KINDS | {"intl", "airport"}
    if not set(normalise_text(m[1]).split()) <= known:
        return None
    if (index := code_said(m[2], ctx.said)) is not None:
        return index, f"{m[2]} -> {value}"
    for index, text in ctx.normalised:
        if city and f" {city} " in text:
            return index, f"{city} ({m[2]}) -> {value}"
    return None


def airport_written(value: object, ctx: Context) -> Derivation | None:
    """``dropoff: "JFK Airport"`` where the user said JFK, ``"Heathrow Airport"`` for "a cab to
    heathrow": an airport the user named by its code or its own name, written with the words that
    say it is an airport ("Airport", "International")."""
    if not isinstance(value, str) or len(value) > 80:
        return None
    words = normalise_text(value).split()
    rest = [w for w in words if w not in _AIRPORT_KINDS]
    if not rest or len(rest) == len(words):
        return None
    code = value.split()[0] if len(rest) == 1 and re.fullmatch(r"[A-Z]{3}", value.split()[0]) else None
    if code is not None and code in _airport_table():
        found = code_said(code, ctx.said)
        return (found, f"{code} -> {value}") if found is not None else None
    name = " ".join(rest)
    if name not in _airport_names():
        return None
    for index, text in ctx.normalised:
        if f" {name} " in text:
            return index, f"{name} -> {value}"
    return None


@_once
def _airport_names() -> frozenset[str]:
    """Every name a traveller calls an airport by (``_airports``), its city's aside: "heathrow",
    "john f kennedy", "o hare"."""
    cities = {normalise_text(a.get("city") or "") for a in _airport_table().values()}
    return frozenset(n for names in _airports().values() for n in names if n not in cities)


# --- the country of a place -----------------------------------------------------------------------


@_once
def _place_countries() -> dict[str, tuple[frozenset[str], bool]]:
    """Normalised names of cities (``airportsdata``: the cities airports serve) and of states,
    provinces and regions (``pycountry``) -> the ISO 3166-1 alpha-2 codes of the countries a place
    of that name is in ("berlin": Germany, and a town in New Hampshire) and whether the name is a
    region's."""
    found: dict[str, set[str]] = {}
    regions: set[str] = set()
    for airport in _airport_table().values():
        if (city := normalise_text(airport.get("city") or "")) and airport.get("country"):
            found.setdefault(city, set()).add(airport["country"])
    for sub in pycountry.subdivisions:
        name = normalise_text(sub.name)
        found.setdefault(name, set()).add(sub.country_code)
        regions.add(name)
    countries = _country_names()  # "Georgia" is a state and a country: it says neither
    return {name: (frozenset(c), name in regions) for name, c in found.items()
            if len(name) >= 4 and name not in STOPWORDS and name not in countries}


def country_of_place(value: object, ctx: Context) -> Derivation | None:
    """``country_code: "FR"`` from "the weather in lyon", ``"US"`` from "austin tx", ``country:
    "India"`` from "air quality in delhi": the country (its code or its name) of a city or a state
    the user named, for a parameter that takes a country. A city is named after
    "in", "to", "from" (or in a list after one: "in Delhi and Beijing") or with its state's code
    ("Dayton OH 45402"); a name places in several countries share gives any of them."""
    if not isinstance(value, str) or not {"country", "region"} & set(ctx.words):
        return None  # a geocoder's "region" is a country code too
    country = country_named(value.strip())
    if country is None:
        return None
    places = _place_countries()
    raw = dict(ctx.said)
    for index, text in ctx.normalised:
        words = text[:_CACHED_TEXT].split()
        for n in (3, 2, 1):
            for i in range(1, len(words) - n + 1):
                name = " ".join(words[i : i + n])
                # a city is named after "in", "to", "for" ("the weather in lyon": "a nice day" names
                # none), or written as a name inside a sentence in any language ("à Lyon demain");
                # a state or region by its name alone ("Boulder, Colorado 80302")
                codes, region = places.get(name, (frozenset(), False))
                if country.alpha_2 in codes and (
                    region or _cued(words, i, places) or _with_state(words, i + n, country.alpha_2) or _named_inside(raw.get(index, ""), name)
                ):
                    return index, f"{words[i - 1]} {name} -> {value}"
    if found := country_said(country.alpha_2, ctx.said):  # "दिल्ली का मौसम": a city in another script
        return found[0], f"{found[1]} -> {value}"
    return None


def _named_inside(text: str, name: str) -> bool:
    """Whether a message writes a place's name capitalised inside a sentence ("quel temps à Lyon
    demain", not "Nice to meet you")."""
    words = r"\W+".join(re.escape(w.title()) for w in name.split())
    return re.search(rf"[^\W\d_][\s,]+{words}(?![\w-])", text[:_CACHED_TEXT]) is not None


def country_named(value: str) -> Any:
    """The country a value names: its ISO 3166-1 code ("FR", "fra") or its name ("India", "South
    Korea"; ``pycountry``'s names, common and official)."""
    if re.fullmatch(r"[A-Za-z]{2,3}", value):
        return pycountry.countries.get(alpha_2=value.upper()) or pycountry.countries.get(alpha_3=value.upper())
    if len(value) > 40 or normalise_text(value) not in _country_names():
        return None
    try:
        return pycountry.countries.lookup(value)
    except LookupError:
        return None


def _cued(words: list[str], i: int, places: dict[str, tuple[frozenset[str], bool]], depth: int = 0) -> bool:
    """Whether the place starting at word ``i`` is named after a cue ("in", "from"; "from 60614
    (Chicago)": a postal code between) or in a list of places after one ("in delhi and beijing",
    "to rome florence and venice")."""
    before = words[i - 1] if i >= 1 else ""
    if before in _PLACE_CUES or (before.isdigit() and i >= 2 and words[i - 2] in _PLACE_CUES):
        return True
    end = i - 1 if before in ("and", "or") else i  # the listed place before ends here
    return depth < 4 and any(
        end - n >= 1 and " ".join(words[end - n : end]) in places and _cued(words, end - n, places, depth + 1) for n in (1, 2, 3)
    )


def _with_state(words: list[str], after: int, country: str) -> bool:
    """Whether the place before word ``after`` is written with its state's or province's code in
    ``country`` ("dayton oh 45402", "austin tx", "halifax ns")."""
    return after < len(words) and len(code := words[after]) == 2 and pycountry.subdivisions.get(code=f"{country}-{code.upper()}") is not None


#: Words that put a place after them.
_PLACE_CUES = frozenset({"in", "at", "to", "from", "near", "for", "around", "of", "visiting", "into", "via", "outside"})


# --- regions -------------------------------------------------------------------------------------


@_once
def _regions() -> tuple[frozenset[str], frozenset[str]]:
    """ISO 3166-2 subdivisions (``pycountry``): their codes without the country ("CA", "NSW") and
    their names, normalised ("california", "new south wales")."""
    codes, names = set(), set()
    for sub in pycountry.subdivisions:
        codes.add(sub.code.split("-", 1)[1])
        names.add(normalise_text(sub.name))
    return frozenset(codes), frozenset(names)


@_once
def _region_names() -> dict[str, frozenset[str]]:
    """Subdivision code (without the country) -> the normalised names of the regions it codes."""
    names: dict[str, set[str]] = {}
    for sub in pycountry.subdivisions:
        names.setdefault(sub.code.split("-", 1)[1], set()).add(normalise_text(sub.name))
    return {code: frozenset(n) for code, n in names.items()}


def region_code(value: object, ctx: Context) -> Derivation | None:
    """``state: "NY"`` from "in New York", ``"CA"`` or ``"US-CA"`` from "California": the ISO
    3166-2 code of a state, province or region the user named (a code two regions share counts
    for both)."""
    if not isinstance(value, str) or not (m := re.fullmatch(r"(?:([A-Z]{2})-)?([A-Z0-9]{1,3})", value.strip())):
        return None
    if m[1]:  # "US-CA": the full ISO 3166-2 code, country first
        sub = pycountry.subdivisions.get(code=value.strip())
        names = frozenset({normalise_text(sub.name)}) if sub is not None else frozenset()
    else:
        names = _region_names().get(value.strip(), frozenset())
    for index, text in ctx.normalised:
        for name in names:
            if f" {name} " in text:
                return index, f"{name} -> {value}"
    return _region_of_city(value.strip(), names, ctx)


@_once
def _city_regions() -> dict[str, frozenset[str]]:
    """Normalised city (``airportsdata``: the cities airports serve) -> the normalised names of the
    states, provinces or regions a city of that name is in ("denver": colorado)."""
    found: dict[str, set[str]] = {}
    for airport in _airport_table().values():
        if (city := normalise_text(airport.get("city") or "")) and (subd := normalise_text(airport.get("subd") or "")):
            found.setdefault(city, set()).add(subd)
    return {city: frozenset(s) for city, s in found.items() if len(city) >= 4 and city not in STOPWORDS}


def _region_of_city(value: str, names: frozenset[str], ctx: Context) -> Derivation | None:
    """``state: "CO"`` from "from denver to boston": the region of a city the user named after a
    cue ("in", "from", "to", or in a list after one), as ``country_of_place`` reads cities."""
    if not names or not {"state", "province", "region"} & set(ctx.words):
        return None
    cities, places = _city_regions(), _place_countries()
    for index, text in ctx.normalised:
        words = text[:_CACHED_TEXT].split()
        for n in (3, 2, 1):
            for i in range(1, len(words) - n + 1):
                city = " ".join(words[i : i + n])
                if cities.get(city, frozenset()) & names and _cued(words, i, places):
                    return index, f"{words[i - 1]} {city} -> {value}"
    return None


def is_place(part: str) -> bool:
    """Whether ``part`` names a city an airport serves, a state or region, or a country ("Los
    Angeles", "Bavaria", "France")."""
    return normalise_text(part) in _city_names() or is_region(part) or is_country(part)


@_once
def _city_names() -> frozenset[str]:
    """Every city an airport serves, normalised (``airportsdata``), one country's or several."""
    return frozenset(city for airport in _airport_table().values() if (city := normalise_text(airport.get("city") or "")))


def is_region(part: str) -> bool:
    """Whether ``part`` names a state, province or region: "CA", "NY", "California", "Bavaria".
    A code counts only in capitals ("IN" is Indiana, "in" is a word)."""
    text = part.strip()
    codes, names = _regions()
    if 1 < len(text) <= 3 and text.isalnum() and text.isupper():
        return text in codes
    return normalise_text(text) in names


@_once
def _country_names() -> frozenset[str]:
    """Every country's names (``pycountry``: name, common and official names), normalised."""
    names = set()
    for c in pycountry.countries:
        for field in ("name", "common_name", "official_name"):
            if (n := getattr(c, field, None)) is not None:
                names.add(normalise_text(n))
    return frozenset(names)


@_once
def _localised_countries() -> dict[str, str]:
    """Normalised names of countries in the other common languages (``DATE_LANGUAGES``; CLDR through
    ``babel``: "brasile", "allemagne", "ブラジル") -> the ISO 3166-1 alpha-2 code; a name two
    countries share in some language names neither."""
    found: dict[str, set[str]] = {}
    for language in DATE_LANGUAGES:
        for code, name in babel.Locale(language).territories.items():
            if len(code) == 2 and code.isalpha() and (n := normalise_text(name)):
                found.setdefault(n, set()).add(code)
    return {name: next(iter(codes)) for name, codes in found.items() if len(codes) == 1}


def country_code(value: str) -> str | None:
    """The ISO 3166-1 alpha-2 code of the country a value names: its code ("FR", "fra"), its
    name in English (``pycountry``) or in another common language ("Brasile")."""
    country = country_named(value.strip())
    if country is not None:
        return country.alpha_2
    code = _localised_countries().get(normalise_text(value)) if len(value) <= 60 else None
    return code if code is not None and pycountry.countries.get(alpha_2=code) is not None else None


@lru_cache(maxsize=512)
def country_forms(code: str) -> tuple[str, ...]:
    """Every form of one country by its alpha-2 code: the English names (``pycountry``: name,
    common and official), the codes, and its names in the other common languages (``babel``)."""
    country = pycountry.countries.get(alpha_2=code)
    if country is None:
        return ()
    forms = [n for field in ("name", "common_name", "official_name") if (n := getattr(country, field, None))]
    forms += [country.alpha_2, country.alpha_3]
    forms += [name for language in DATE_LANGUAGES[1:] if (name := babel.Locale(language).territories.get(code))]
    return tuple(dict.fromkeys(forms))


def is_country(part: str) -> bool:
    """Whether ``part`` names a country: "France", "South Korea", or its ISO code in capitals
    ("US", "DEU")."""
    text = part.strip()
    if 1 < len(text) <= 3 and text.isalpha() and text.isupper():
        return pycountry.countries.get(alpha_2=text) is not None or pycountry.countries.get(alpha_3=text) is not None
    return normalise_text(text) in _country_names()


# --- amounts per period ---------------------------------------------------------------------------

#: Periods a year, by the words that name a period.
_PERIOD_OF = {"day": 365, "daily": 365, "week": 52, "weekly": 52, "month": 12, "monthly": 12, "quarter": 4, "quarterly": 4,
              "year": 1, "yearly": 1, "annual": 1, "annually": 1, "annum": 1}
_PER_PERIOD = re.compile(
    r"(?<![\w.])[$€£]?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*(k\b)?\s*(?:[a-z]+\s+)?"
    r"(?:a|an|per|each|every|/)\s*(day|week|month|quarter|year)\b",
    re.IGNORECASE,
)


def per_period(value: object, ctx: Context) -> Derivation | None:
    """``annual_income: 48000`` from "$4,000 a month": an amount the user gave per day, week,
    month, quarter or year, in the period the parameter names."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    target = next((_PERIOD_OF[w] for w in ctx.words if w in _PERIOD_OF), None)
    if target is None:
        return None
    for index, text in ctx.said:
        for m in _PER_PERIOD.finditer(text[:_CACHED_TEXT]):
            amount = float(m[1].replace(",", "") + (f".{m[2]}" if m[2] else "")) * (1000 if m[3] else 1)
            said = _PERIOD_OF[m[4].lower()]
            if said != target and rounds_to(value, amount * said / target):
                return index, f"{m[0].strip()} -> {value} per {ctx.param}"
    return None


# --- phone numbers ---------------------------------------------------------------------------------


@_once
def _phonenumbers() -> Any:
    phonenumbers.parse("+14155550199", None)  # its metadata loads on first use
    return phonenumbers


def phone_number(value: object, ctx: Context) -> Derivation | None:
    """``phone: "+14155550199"`` from "(415) 555-0199": a phone number the user gave, in another
    format (E.164, national); read by ``phonenumbers`` in the value's own country."""
    if not isinstance(value, str) or sum(c.isdigit() for c in value) < 7:
        return None
    _phonenumbers()

    try:
        number = phonenumbers.parse(value, None if value.strip().startswith("+") else "US")
    except phonenumbers.NumberParseException:
        return None
    region = phonenumbers.region_code_for_number(number) or "US"
    for index, text in ctx.said:
        for raw, code, national in _phones_in(_digits_spelled(text[:_CACHED_TEXT]), region):
            if (code, national) == (number.country_code, number.national_number):
                return index, f"{raw} -> {value}"
    return None


_DIGIT_WORDS = {number_words(d): str(d) for d in range(10)} | {"oh": "0", "plus": "+"}
#: Five or more digits spelt out one by one ("plus two three three two four four ..."), as a
#: number is dictated.
_SPELLED_DIGITS = re.compile(r"\b(?:(?:" + "|".join(_DIGIT_WORDS) + r")[\s,-]+){4,}(?:" + "|".join(_DIGIT_WORDS) + r")\b", re.IGNORECASE)


def _digits_spelled(text: str) -> str:
    """A text with its dictated numbers written in digits ("plus two three three" -> "+233")."""
    return _SPELLED_DIGITS.sub(lambda m: "".join(_DIGIT_WORDS[w.lower()] for w in re.findall(r"[a-z]+", m.group(0), re.IGNORECASE)), text)


@lru_cache(maxsize=512)
def _phones_in(text: str, region: str) -> tuple[tuple[str, int, int], ...]:
    """The phone numbers a text writes, read as in ``region``: (as written, country code, national number)."""
    matcher = phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.POSSIBLE)
    return tuple((m.raw_string, m.number.country_code, m.number.national_number) for m in matcher)


# --- holidays -------------------------------------------------------------------------------------

#: Whose public holidays name days people say by name (English names; ``holidays``' tables).
_HOLIDAY_COUNTRIES = ("US", "GB", "CA", "AU")
_HOLIDAY_FILLER = frozenset({"day", "s", "observed", "the"})


def _holidays_of(year: int) -> dict[Any, tuple[str, ...]]:
    with _LOADING:
        return _holiday_table(year)


@lru_cache(maxsize=32)
def _holiday_table(year: int) -> dict[Any, tuple[str, ...]]:
    """Every public holiday of ``year`` -> the words of its names ("christmas", "new year"): built
    once a year (about 20 ms for the four tables), not once a date."""
    names: dict[Any, set[str]] = {}
    for country in _HOLIDAY_COUNTRIES:
        try:
            table = holidays.country_holidays(country, years=year)
        except Exception:  # a year the tables do not cover
            continue
        for day, name in table.items():
            for part in str(name).split(";"):
                words = [w for w in normalise_text(part).split() if w not in _HOLIDAY_FILLER]
                if words:
                    names.setdefault(day, set()).add(" ".join(words))
    return {day: tuple(sorted(n)) for day, n in names.items()}


def _holiday_names(day: Any) -> tuple[str, ...]:
    """The words of each public holiday on ``day`` ("christmas", "new year", "thanksgiving")."""
    return _holidays_of(day.year).get(day, ()) if 1 <= day.year <= 9999 else ()


def holiday(value: object, ctx: Context) -> Derivation | None:
    """``date: "2024-12-25"`` from "on Christmas 2024", ``2025-07-04`` from "Independence Day"
    (said in 2025): a public holiday the user named, in the year they said or the conversation's."""
    from guard.checks.derivations import date_value

    day = date_value(value) if isinstance(value, str) else None
    if day is None:
        return None
    this_year = ctx.today is not None and ctx.today.year == day.year
    for name in _holiday_names(day):
        said = re.compile(rf" (?:(\d{{4}}) )?{re.escape(name)}(?: day)?(?: (?:of |in )?(\d{{4}}))?(?= )")
        for index, text in ctx.normalised:
            for m in said.finditer(text):
                year = m[1] or m[2]
                if (year is None and this_year) or year == str(day.year):
                    return index, f"{m[0].strip()} -> {day.isoformat()}"
    return None


# --- ticker symbols ----------------------------------------------------------------------------

_TICKER_WORDS = frozenset({"ticker", "tickers", "symbol", "symbols"})
_TICKER = re.compile(r"[A-Z]{2,5}(?:\.[A-Z])?")
#: A name as written: one to three capitalised words ("Apple", "Bank of America", "Coca-Cola").
_CAPITALISED_NAME = re.compile(r"\b[A-Z][\w&'-]*(?:\s+(?:of\s+|&\s+)?[A-Z][\w&'-]*){0,2}")


def ticker_symbol(value: object, ctx: Context) -> Derivation | None:
    """``symbol: "TSLA"`` from "10 shares of Tesla", ``AAPL`` from "Apple": a ticker written with
    letters of a company's name the user wrote (capitalised), in their order and from its first
    letter, for a parameter named a ticker or a symbol. Which ticker a company has needs a market's
    listing; this checks only that the user named a company the letters can come from."""
    if not isinstance(value, str) or not _TICKER.fullmatch(value.strip()) or not _TICKER_WORDS & set(ctx.words):
        return None
    letters = re.sub(r"(.)\1", r"\1", value.strip().replace(".", "").lower())  # "AAPL": Apple's A, doubled
    for index, text in ctx.said:
        text = text[:_CACHED_TEXT]
        if not any(c.isupper() for c in text):  # "cuánto está la acción de tesla hoy": who writes no capitals writes names without them
            for word in itertools.islice(re.findall(r"[^\W\d_]{3,}", text), 256):
                if word[0] == letters[0] and word not in STOPWORDS and len(word) >= len(letters) and in_order(letters, word):
                    return index, f"{word} -> {value}"
            continue
        for m in itertools.islice(_CAPITALISED_NAME.finditer(text), 64):
            words = m[0].split()
            for written in (" ".join(words[i:j]) for i in range(len(words)) if words[i][:1].isupper() for j in range(len(words), i, -1)):
                name = re.sub(r"[^a-z]", "", written.lower())
                if name[:1] == letters[0] and len(name) >= len(letters) and in_order(letters, name):
                    return index, f"{written} -> {value}"
    return None


def in_order(letters: str, word: str) -> bool:
    """Whether ``letters`` are letters of ``word`` in their order."""
    rest = iter(word)
    return all(c in rest for c in letters)


# --- time zones ----------------------------------------------------------------------------------


@_once
def installed_zones() -> frozenset[str]:
    """The IANA time zone names the installed database holds."""
    import zoneinfo

    try:
        return frozenset(zoneinfo.available_timezones())
    except Exception:  # no time-zone database at all: nothing derives
        return frozenset()


def time_zone(value: object, ctx: Context) -> Derivation | None:
    """``timezone: "Asia/Tokyo"`` from "in Tokyo": the IANA zone named for a city the user named."""
    if not isinstance(value, str) or "/" not in value or value.strip() not in installed_zones():
        return None
    city = _folded(normalise_text(value.strip().rsplit("/", 1)[1].replace("_", " ")))
    if not city:
        return None
    for index, text in ctx.normalised:
        if f" {city} " in _folded(text[:_CACHED_TEXT]):  # "São Paulo" for America/Sao_Paulo
            return index, f"{city} -> {value}"
    for word, zone in _region_zones():  # "9am eastern": US/Eastern, the zone America/New_York keeps
        if _same_clock(zone, value.strip()):
            said = re.compile(rf"(?:\d|am|pm) {word}(?!\S)|(?<!\S){word} (?:time|standard|daylight)(?!\S)")
            for index, text in ctx.normalised:  # after a clock time, or before "time": no "eastern office"
                if said.search(text[:_CACHED_TEXT]):
                    return index, f"{word} ({zone}) -> {value}"
    return None


@_once
def _region_zones() -> tuple[tuple[str, str], ...]:
    """The zones people name by their region ("eastern", "pacific", "atlantic"): tzdata's
    ``US/...`` and ``Canada/...`` names, with the word that names each."""
    return tuple((normalise_text(name.split("/", 1)[1].replace("_", " ")), name)
                 for name in sorted(installed_zones()) if name.startswith(("US/", "Canada/")))


@lru_cache(maxsize=256)
def _same_clock(a: str, b: str) -> bool:
    """Whether two zones keep the same clock through this year and the next (US/Eastern and
    America/New_York): the same UTC offset at the start of every month."""
    import zoneinfo
    from datetime import datetime, timezone

    try:
        za, zb = zoneinfo.ZoneInfo(a), zoneinfo.ZoneInfo(b)
    except Exception:
        return False
    year = datetime.now(timezone.utc).year
    moments = [datetime(y, m, 1, 12, tzinfo=timezone.utc) for y in (year, year + 1) for m in range(1, 13)]
    moments += [datetime(year, m, 15, 12, tzinfo=timezone.utc) for m in (3, 11)]  # the weeks clocks change
    return all(t.astimezone(za).utcoffset() == t.astimezone(zb).utcoffset() for t in moments)


def zones_named(text: str) -> list[Any]:
    """The time zones a normalised text names: an IANA name ("america/new_york") or the city one
    is named for ("london time", "in são paulo"); at most eight, in the order of the zone table."""
    import zoneinfo

    folded = f" {_folded(text[:_CACHED_TEXT]).replace('/', ' ').replace('_', ' ')} "
    found = []
    for name, city in _zone_cities():
        if f" {city} " in folded:
            try:
                found.append(zoneinfo.ZoneInfo(name))
            except Exception:  # a name the database lists but cannot load
                continue
            if len(found) == 8:
                break
    return found


@_once
def _zone_cities() -> tuple[tuple[str, str], ...]:
    """Each IANA zone of a city ("Europe/London") and its city's words ("london")."""
    return tuple(
        (name, city)
        for name in sorted(installed_zones())
        if "/" in name and not name.startswith("Etc/") and (city := _folded(normalise_text(name.rsplit("/", 1)[1].replace("_", " "))))
    )


@dataclass(frozen=True)
class Span:
    """A length of time a message states, in whole minutes, and whether "every" comes before it."""

    minutes: int
    words: str
    every: bool


def stated_spans(texts: Iterable[str], max_minutes: int, limit: int = 16, articles: bool = False) -> list[Span]:
    """The lengths of time the texts state ("a 45-minute meeting", "every 8 hours", "the last 6
    hours"; "an hour" with ``articles``), in whole minutes from 1 to ``max_minutes``; at most
    ``limit``, eight a text."""
    found: list[Span] = []
    for text in texts:
        for q in itertools.islice(quantities(text, articles), 8):
            minutes = in_unit(q, "minute")
            if minutes is not None and 1 <= minutes <= max_minutes and float(minutes).is_integer():
                found.append(Span(int(minutes), q.words, text[: q.start].rstrip().lower().endswith("every")))
    return found[:limit]


def in_unit(q: Quantity, unit: Any) -> float | None:
    """A quantity's magnitude in ``unit`` (a name or a pint unit: "1.5 hour" in minutes: 90.0);
    None across kinds."""
    try:
        return float(_registry().Quantity(q.magnitude, q.unit).to(unit).magnitude)
    except Exception:  # another kind of quantity
        return None


def _folded(text: str) -> str:
    """A text without its accents ("são paulo" -> "sao paulo")."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


# --- periods a year ---------------------------------------------------------------------------------

#: Adverbs of frequency -> how many periods they make in a year.
_PER_YEAR = {
    "daily": 365, "weekly": 52, "biweekly": 26, "fortnightly": 26, "monthly": 12, "bimonthly": 6,
    "quarterly": 4, "semiannually": 2, "biannually": 2, "annually": 1, "yearly": 1,
}
_PER_YEAR_PATTERN = re.compile(r"\b(" + "|".join(_PER_YEAR) + r"|semi annually|semi-annually|every (?:day|week|month|quarter|year))\b")
_EVERY = {"every day": 365, "every week": 52, "every month": 12, "every quarter": 4, "every year": 1}
#: Words of a parameter that counts periods in a year ("compounds_per_year", "compounding frequency").
_PERIOD_WORDS = frozenset({"compound", "compounds", "compounding", "compounded", "frequency", "periods"})
_PER_YEAR_PHRASE = re.compile(r"\b(?:per|a|each|every) year\b")


def periods_per_year(value: object, ctx: Context) -> Derivation | None:
    """``compounds_per_year: 12`` from "compounded monthly": the periods a year that a frequency
    adverb names, for a parameter that counts periods a year."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value not in set(_PER_YEAR.values()):
        return None
    described = normalise_text(ctx.description)
    if not (_PERIOD_WORDS & {*ctx.words, *described.split()} or _PER_YEAR_PHRASE.search(f"{' '.join(ctx.words)} {described}")):
        return None
    for index, text in ctx.normalised:
        for m in _PER_YEAR_PATTERN.finditer(text):
            word = m[1].replace("-", " ")
            count = _EVERY.get(word) or _PER_YEAR.get(word.replace(" ", ""))
            if count == value:
                return index, f"{word} -> {value} a year"
    return None


#: A rate a year ("6% per year", "4.5% annual interest", "an APR of 7%") and a number of years ("for 5 years").
_YEARLY_RATE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:%|percent)\s*(?:(?:a|per|each)\s+year|annual|annually|yearly|apr|p\.?a\.?)|\b(?:apr|annual rate)\s+(?:of\s+)?(\d+(?:\.\d+)?)\s*(?:%|percent)", re.IGNORECASE)
_YEARS = re.compile(r"(\d+(?:\.\d+)?)\s*years?\b", re.IGNORECASE)
_PER_PERIOD_PARAMS = frozenset({"period", "periods", "periodic", "monthly", "payment", "payments", "installments", "nper"})


def per_compounding_period(value: object, ctx: Context) -> Derivation | None:
    """``rate_per_period: 0.005`` and ``periods: 60`` from "$200 every month for 5 years at 6% per
    year compounded monthly": a yearly rate divided, or a number of years multiplied, by the
    periods a year the user named, for a parameter that counts or rates periods."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not _PER_PERIOD_PARAMS & set(ctx.words):
        return None
    for (index, text), (_, raw) in zip(ctx.normalised, ctx.said):
        counts = {c for m in _PER_YEAR_PATTERN.finditer(text) if (c := _EVERY.get(m[1].replace("-", " ")) or _PER_YEAR.get(m[1].replace("-", "")))}
        for count in counts - {1}:
            if "rate" in ctx.words:
                for m in _YEARLY_RATE.finditer(raw[:_CACHED_TEXT]):
                    rate = float(m[1] or m[2])
                    if rounds_to(value, rate / 100 / count) or rounds_to(value, rate / count):
                        return index, f"{rate:g}% a year over {count} periods -> {value}"
            elif isinstance(value, int) or float(value).is_integer():
                for m in _YEARS.finditer(raw[:_CACHED_TEXT]):
                    if math.isclose(float(m[1]) * count, value):
                        return index, f"{m[0]} of {count} periods -> {value}"
    return None


# --- arithmetic on stated numbers -----------------------------------------------------------------

#: Expressions people write in running text: "2π", "3/4", "12 x 3", "2^10", "15% of 80", "half of 10".
_EXPRESSION = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:\*\s*)?(?:π|pi\b)"
    r"|(?<![\w./-])(\d+(?:\.\d+)?(?:(?:\s*[+*/^×÷x]\s*|\s+-\s+)\d+(?:\.\d+)?)+)(?![\w./-])"
    r"|(?<![\w.])(\d+(?:\.\d+)?)\s*%\s+of\s+(\d+(?:\.\d+)?)"
    r"|\b(half|a third|a quarter|twice|double|triple)\s+(?:of\s+)?(?:(?:the|my|our|your|that|this)\s+)?[$€£¥₹]?\s?(\d+(?:\.\d+)?)"
    r"|(?<![\w.])(π)",
    re.IGNORECASE,
)
_FACTORS = {"half": 0.5, "a third": 1 / 3, "a quarter": 0.25, "twice": 2, "double": 2, "triple": 3}


@_once
def _evaluator() -> Any:
    evaluator = simpleeval.SimpleEval()
    evaluator.names = {"pi": math.pi}
    return evaluator


def _evaluated(m: re.Match[str]) -> float | None:
    """The value of one expression ``_EXPRESSION`` found, by ``simpleeval`` (no names but pi, no
    calls, bounded powers); None when it is no arithmetic (a plain number, a date "3/4/2024")."""
    if m[1] is not None:
        text = f"{m[1]} * pi"
    elif m[2] is not None:
        text = m[2].replace("×", "*").replace("÷", "/").replace("^", "**").replace("x", "*").replace("X", "*")
    elif m[3] is not None:
        text = f"{m[3]} / 100 * {m[4]}"
    elif m[5] is not None:
        return _FACTORS[m[5].lower()] * float(m[6])
    else:
        return math.pi
    try:
        result = _evaluator().eval(text)
    except Exception:  # simpleeval refuses huge powers, division by zero, ...
        return None
    return float(result) if isinstance(result, (int, float)) and math.isfinite(result) else None


#: Operators written as words ("3 plus 4", "45 divided by 3").
_WORD_OPERATORS = (
    (re.compile(r"\s+plus\s+", re.IGNORECASE), " + "), (re.compile(r"\s+minus\s+", re.IGNORECASE), " - "),
    (re.compile(r"\s+(?:times|multiplied by)\s+", re.IGNORECASE), " * "), (re.compile(r"\s+divided by\s+", re.IGNORECASE), " / "),
)


@lru_cache(maxsize=512)
def _expressions(text: str) -> tuple[tuple[str, float], ...]:
    found = []
    text = text[:_CACHED_TEXT]
    for pattern, operator in _WORD_OPERATORS:
        text = pattern.sub(operator, text)
    for m in _EXPRESSION.finditer(text):
        if (value := _evaluated(m)) is not None:
            found.append((m[0].strip(), value))
    if _TOTAL.search(text) and 2 <= len(terms := [float(t.replace(",", "")) for t in _TERMS.findall(text)[:24]]) <= 12:
        found.append(("the total of " + " + ".join(f"{t:g}" for t in terms), math.fsum(terms)))
    return tuple(found)


#: A message that asks for a total ("log the total", "how much altogether", "add them up").
_TOTAL = re.compile(r"\b(?:total|in all|altogether|combined|sum|add (?:them|these|those|it all) up)\b", re.IGNORECASE)
#: The amounts a total adds: numbers in digits, not part of a date, a time, a code or a range's
#: bound ("12.50", "$4.25", "31"; not "2024-10-05", "10:30", "A320").
_TERMS = re.compile(r"(?<![\w.:/-])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\w:/-]|\.\d)")


def arithmetic(value: object, ctx: Context) -> Derivation | None:
    """``angle: 6.2832`` from "2π", ``amount: 12`` from "15% of 80": a number worked out from an
    expression the user wrote, to the value's precision."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    for index, text in ctx.said:
        for written, result in _expressions(text):
            if rounds_to(value, result):
                return index, f"{written} -> {value}"
    return None


_YEARISH = re.compile(r"^(?:1[89]|20)\d\d$")


@lru_cache(maxsize=512)
def _amounts(text: str) -> tuple[tuple[str, float], ...]:
    """The amounts a message states (100 or more, years aside), at most 12 of them."""
    found = [(w, float(v)) for v, w in numbers_in(text[:_CACHED_TEXT]).items()
             if isinstance(v, (int, float)) and abs(v) >= 100 and not _YEARISH.fullmatch(w.strip())]
    return tuple(found[:12])


_PERCENTS = re.compile(r"(?<![\w.])(\d{1,2}(?:\.\d+)?)\s*(?:%|percent\b)")


#: A price: a sum of money after its sign ("$12.50", "€ 9").
_PRICE = re.compile(r"[$€£¥₹]\s?(\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d{1,7}(?:\.\d{1,2})?)(?![\d.,]*\s*[kmb]\b)", re.IGNORECASE)
#: A count of things: a whole number from 2 to 1,000 before a word, in digits or words ("40 units", "3 consulting hours").
_COUNT = re.compile(r"(?<![\w.$€£¥₹,])(\d{1,4}|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+(?=[a-z])", re.IGNORECASE)


#: Words after a number that make it no count of things ("at 2 pm", "after 2 hours", "2 times").
_NO_COUNT = re.compile(r"\s*(?:am|pm|a\.m|p\.m|o'?clock|h|hrs?|hours?|mins?|minutes?|secs?|seconds?|days?|weeks?|months?|years?|times|x|%|percent)\b", re.IGNORECASE)


def _counts(text: str, things: bool = False) -> Iterable[tuple[int, float]]:
    """The counts a text states, with where each starts: "40 units", "three bags", "3 hours" (a
    count of hours a rate is paid for); with ``things``, counts of things only (not "at 2 pm",
    "after 2 hours": ``_NO_COUNT``)."""
    for m in _COUNT.finditer(text):
        n = parse_number(m[1].lower()) if not m[1].isdigit() else int(m[1])
        if isinstance(n, (int, float)) and 2 <= n <= 1_000 and not (things and _NO_COUNT.match(text, m.end(1))):
            yield m.start(), float(n)


#: How many share an amount: "the three of us", "split four ways", "between 5 friends".
_SHARERS = re.compile(
    r"\b([a-z]+|\d{1,2})\s+(?:of us|of them|of you|ways|people|persons|friends|guests|roommates|colleagues)\b", re.IGNORECASE
)
#: Who share an amount, named in a list: "split equally between me, Sam and Priya" (three),
#: "split it with Sam and Priya" (the speaker and two more).
_LISTED_SHARERS = re.compile(
    r"\b(?:split|divide|divided|share|shared)\b[^.;\n]{0,40}?\b(between|among|amongst|with)\s+"
    r"((?:[^\W\d_]+\s*,\s*){0,10}[^\W\d_]+\s*,?\s+and\s+[^\W\d_]+)",
    re.IGNORECASE,
)
#: Parameter words that name a change between two amounts: its sign says which way.
_CHANGE_WORDS = frozenset({"delta", "difference", "diff", "change", "adjustment", "variance", "offset"})
#: How many of the latest messages the amount rules read together.
_AMOUNT_MESSAGES = 8


def difference_or_sum(value: object, ctx: Context) -> Derivation | None:
    """``loan_amount: 320000`` from "the house is $400k, I'm putting $80k down": the difference or
    the sum of two amounts one message states (each 100 or more, no year); an amount less or more
    a percentage of it the conversation states ("a $480,000 house" ... "20% down": 384000), or that
    percentage of it (the down payment itself: 96000); an
    amount shared by a number of people the conversation states ("dinner was $126 for the three
    of us": 42); a count of things times a price the conversation states ("40 units at $12.50
    each": 500). To the value's precision. What is left, what it comes to, what each one owes."""
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,12}(?:\.\d{1,6})?", value.strip()):
        value = float(value)  # "42.00" where the schema wants a decimal string
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 < abs(value):
        return None
    said = ctx.said[-_AMOUNT_MESSAGES:]
    if abs(value) >= 10:  # "40 units at $12.50 each": 500; "3 consulting hours" at a listed $120.00: 360
        prices = [(index, m[0], float(m[1].replace(",", ""))) for index, text in said
                  for m in itertools.islice(_PRICE.finditer(text[:_CACHED_TEXT]), 12)]
        counts = {n for _, text in said for _, n in itertools.islice(_counts(text[:_CACHED_TEXT]), 12)}
        for index, wp, price in prices:
            for n in counts:
                if rounds_to(value, n * price):
                    return index, f"{n:g} x {wp.strip()} -> {value}"
    amounts = [(index, w, a) for index, text in said for w, a in _amounts(text)]
    if not amounts:
        return None
    percents = {float(m[1]) for _, text in said for m in itertools.islice(_PERCENTS.finditer(text[:_CACHED_TEXT]), 8)}
    for p in percents:
        for index, wa, a in amounts:
            for result, sign in ((a * (1 - p / 100), "-"), (a * (1 + p / 100), "+"), (a * p / 100, "x")):
                if abs(value) >= 100 and rounds_to(value, result):
                    return index, f"{wa} {sign} {p:g}% -> {value}"
    sharers = {n for _, text in said for m in itertools.islice(_SHARERS.finditer(text[:_CACHED_TEXT]), 8)
               if isinstance(n := parse_number(m[1]), (int, float)) and 2 <= n <= 50}
    sharers |= {len(re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", m[2].strip())) + (m[1].lower() == "with")
                for _, text in said for m in itertools.islice(_LISTED_SHARERS.finditer(text[:_CACHED_TEXT]), 8)}
    for n in sharers:
        for index, wa, a in amounts:
            if rounds_to(value, a / n):
                return index, f"{wa} / {n:g} -> {value}"
    change = bool(_CHANGE_WORDS & set(ctx.words))
    if abs(value) < 100 and not change:
        return None
    for index, text in said:
        here = _amounts(text)
        if change:  # "quantity_delta": -7 from "the system says 120 but we counted 113": the later less the earlier
            for i, (wa, a) in enumerate(here):
                for wb, b in here[i + 1 :]:
                    if a != b and rounds_to(value, b - a):
                        return index, f"{wb} - {wa} -> {value}"
            continue  # a change has a sign: no sum, and no difference the other way round
        for i, (wa, a) in enumerate(here):
            for wb, b in here[i + 1 :]:
                if a == b:
                    continue
                for result, sign in ((a + b, "+"), (abs(a - b), "-")):
                    if rounds_to(value, result):
                        return index, f"{wa} {sign} {wb} -> {value}"
    return None


def warm() -> None:
    """Load what the rules read on first use (pint's registry, CLDR currency names, ISO 3166-2,
    the time zones, this year's holidays, phonenumbers' metadata, the currency symbols of each
    country, number words in the common languages and dateparser's readers of them): two to four
    seconds, once per process. A server calls it at start-up so that no request pays for it;
    ``Guard`` itself stays lazy."""
    from datetime import date, datetime

    from dateparser.search import search_dates

    from guard.lexicon import foreign_date_words, foreign_duration_words, foreign_number_words

    _phonenumbers()
    _registry()
    _currency_names()
    _conventional_currencies()
    currency_symbols()
    _regions()
    _region_names()
    _country_names()
    _airports()
    _place_countries()
    _warm_places()
    installed_zones()
    _holidays_of(date.today().year)
    _language_identifier()
    home_currency_symbols()
    for language in foreign_duration_words():
        foreign_number_words(language)
    _localised_countries()
    cloud_regions()
    for language, words in foreign_date_words().items():  # dateparser loads a language's data at its first search in it
        search_dates(f"{min(words)} 3", languages=[language], settings={"RELATIVE_BASE": datetime(2000, 1, 1)})


@_once
def _physical_constants() -> dict[str, tuple[tuple[str, float], ...]]:
    """Word -> the physical constants whose name (or an alias of four letters or more) has it, with
    their SI value: pint's own table of constants (``constants_en.txt``: "gravity" -> standard
    gravity, "light" -> speed of light), read once."""
    from importlib.resources import files

    units = _registry()
    found: dict[str, list[tuple[str, float]]] = {}
    for line in (files("pint") / "constants_en.txt").read_text(encoding="utf-8").splitlines():
        names = [n.strip() for n in line.split("#")[0].split("=")]
        if len(names) < 2 or not re.fullmatch(r"[a-z_]+", names[0]):
            continue
        try:
            value = float(units.Quantity(1, names[0]).to_base_units().magnitude)
        except Exception:  # a definition pint cannot evaluate alone: no constant to compare with
            continue
        for name in [names[0], *(n for n in names[2:] if len(n) >= 4 and re.fullmatch(r"[a-z_]+", n))]:
            for word in set(name.split("_")):
                if len(word) >= 4:
                    found.setdefault(word, []).append((name.replace("_", " "), value))
    return {w: tuple(c) for w, c in found.items()}


def physical_constant(value: object, ctx: Context) -> Derivation | None:
    """``gravity: 9.81``, ``speed_of_light: 3e8``: a physical constant the parameter names (every
    word of the parameter's name is a word of the constant's), to the value's precision; a
    well-known constant is no fact the user must state."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value or not math.isfinite(value):
        return None
    words = {w for w in ctx.words if len(w) >= 4}
    if not words:
        return None
    table = _physical_constants()
    for name, constant in table.get(sorted(words)[0], ()):  # every word of the parameter is in the name
        if words <= set(normalise_text(name).split()) and _to_significant_digits(value, constant):
            return None, f"{name} -> {value}"
    return None


def _to_significant_digits(value: float | int, exact: float) -> bool:
    """Whether ``value`` is ``exact`` to the value's own significant digits (6.022e23 for
    6.02214076e23, 9.81 for 9.80665)."""
    mantissa = f"{float(value):e}".split("e")[0].rstrip("0").replace("-", "").replace(".", "")
    return rounds_to(value, exact) or float(f"{exact:.{max(len(mantissa), 1)}g}") == float(value)


#: A description that says a value is a share of 100: "0-100", "0 = closed, 100 = open",
#: "percent", "%".
_PERCENT_SCALE = re.compile(r"\b0\s*(?:-|–|to)\s*100\b|\b0\s*=.{1,40}\b100\s*=|\bpercent(?:age)?\b|%", re.IGNORECASE)
#: What follows a fraction when it is no share of the scale: "half past six", "half an hour",
#: "half of the shirts" ("half off" and "half price" are a share: 50% off).
_NO_SHARE_AFTER = re.compile(r"(?:past|an?|hours?|of|time)\b")
#: The words for a share, normalised: ``lexicon.FRACTIONS`` and ``SHARE_WORDS`` ("halfway", "à moitié").
_SHARES = tuple((normalise_text(w), share) for w, share in (*FRACTIONS.items(), *SHARE_WORDS.items()))


def fraction_of_scale(value: object, ctx: Context) -> Derivation | None:
    """``brightness: 33`` (0-100) from "dim it to about a third", ``volume: 50`` from "half
    volume", ``position: 50`` from "lower the blinds halfway" or "à moitié": a fraction the user
    said, as a share of 100, to the nearest whole number or so."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 100:
        return None
    if not (_PERCENT_SCALE.search(ctx.description[:300]) or {"percent", "percentage", "pct"} & set(ctx.words)):
        return None
    for index, text in ctx.normalised:
        for said, share in _SHARES:
            if abs(value - 100 * share) > 1 or (at := text.find(f" {said} ", 0, _CACHED_TEXT)) < 0:
                continue
            if not _NO_SHARE_AFTER.match(text, at + len(said) + 2):
                return index, f"{said} -> {value}"
    return None


RULES = (
    converted_quantity, bare_temperature, unit_symbol, currency_name, minor_units, language_code, airport_code, airport_name, airport_written, ticker_symbol, country_of_place, region_code, time_zone, periods_per_year, per_period, per_compounding_period, arithmetic,
    difference_or_sum, count_times_quantity, quantity_text, holiday, phone_number, physical_constant, fraction_of_scale,
)
