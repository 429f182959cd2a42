"""The word tables the checks read text with, each in one place.

Months and weekdays (every name people write for them), and the lists of words that carry no
fact, each named for what it is used to ignore. The checks import these; none keeps a table of
its own kind.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

#: Per month (January first): its names, the full name first, then its abbreviations.
MONTHS: tuple[tuple[str, ...], ...] = (
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
    ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sept", "sep"),
    ("october", "oct"), ("november", "nov"), ("december", "dec"),
)
#: Every month name and abbreviation -> its number (1-12).
MONTH_NUMBER: dict[str, int] = {name: i for i, names in enumerate(MONTHS, start=1) for name in names}
#: Monday first, as ``date.weekday()`` counts.
WEEKDAYS: tuple[str, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def alternation(words: object) -> str:
    """A regex alternation of ``words``, longest first (so "march" is tried before "mar")."""
    return "|".join(sorted(words, key=lambda w: (-len(w), w)))  # type: ignore[call-overload]


#: The month names and the weekday names as regex alternations (no group, no anchors).
MONTH_PATTERN = alternation(MONTH_NUMBER)
WEEKDAY_PATTERN = alternation(WEEKDAYS)
#: Weekdays as people shorten them ("Wed 2024-10-16"), for where a weekday only precedes a date.
WEEKDAY_SHORT: dict[str, tuple[str, ...]] = {
    "monday": ("mon",), "tuesday": ("tue", "tues"), "wednesday": ("wed", "weds"), "thursday": ("thu", "thur", "thurs"),
    "friday": ("fri",), "saturday": ("sat",), "sunday": ("sun",),
}
WEEKDAY_ABBREVIATIONS: tuple[str, ...] = tuple(a for short in WEEKDAY_SHORT.values() for a in short)
WEEKDAY_OR_SHORT_PATTERN = alternation(WEEKDAYS + WEEKDAY_ABBREVIATIONS)

#: The languages a date written in words is read in (``guard.repairs``), English first. dateparser
#: left to guess the language tries every locale it knows (~140): 15-80 ms for a text that is no
#: date at all ("none"), and seconds for its first call; these are the languages most agents'
#: users write dates in (the first fifteen), then the next most written with assistants
#: (Indonesian, Vietnamese, Thai, Ukrainian, Swedish, Czech, Greek, Hebrew, Persian).
DATE_LANGUAGES: tuple[str, ...] = (
    "en", "es", "fr", "de", "it", "pt", "nl", "ru", "zh", "ja", "ko", "ar", "hi", "tr", "pl",
    "id", "vi", "th", "uk", "sv", "cs", "el", "he", "fa",
)



@lru_cache(maxsize=1)
def foreign_month_number() -> dict[str, int]:
    """Month names of the other common languages (``DATE_LANGUAGES`` but English: babel's CLDR
    tables, written and standing alone, lower-case: "junio", "juin", "märz", "czerwca", "июня",
    "กรกฎาคม"), for the date a system prompt states in its own language ("Hoy es lunes 2 de junio
    de 2025"). A table apart from ``MONTH_NUMBER``, whose English readers would take "mars" or
    "mai" for a month; read at first use (babel loads its tables then). Names of one word only
    (Chinese, Japanese and Korean write months by number: ``conversation._CJK_DATE``)."""
    names: dict[str, int] = {}
    for language in DATE_LANGUAGES[1:]:
        for name, number in _month_names(language).items():
            if name.isalpha() or all(ch.isalpha() or unicodedata.category(ch).startswith("M") for ch in name):
                names.setdefault(name, number)
    return names


@lru_cache(maxsize=None)
def _month_names(language: str) -> dict[str, int]:
    """One language's month names, written and standing alone (babel's CLDR tables), lower-case
    -> the month's number: the one reading both tables above and below are made of."""
    from babel.dates import get_month_names

    names: dict[str, int] = {}
    for context in ("format", "stand-alone"):
        for number, name in get_month_names("wide", locale=language, context=context).items():
            names.setdefault(name.lower(), number)
    return names


@lru_cache(maxsize=1)
def foreign_date_words() -> dict[str, frozenset[str]]:
    """Per other common language (``DATE_LANGUAGES`` but English), the words that say a day or a
    time in it (babel's CLDR tables): month and weekday names, "yesterday", "today", "tomorrow" and
    the days either side ("mañana", "demain", "sabato", "내일", "明天"), and its words for hours and
    minutes ("horas", "часа"). A text is read for dates in a language only when it holds one of
    them: reading every text in every language costs seconds."""
    durations = foreign_duration_words()
    return {language: frozenset().union(*_day_words(language)) | frozenset(durations.get(language, ())) for language in DATE_LANGUAGES[1:]}


@lru_cache(maxsize=1)
def foreign_day_words() -> dict[str, frozenset[str]]:
    """Per other common language, the words that name a day relative to today: weekday names and
    the days either side ("sabato", "mañana", "завтра", "明天"); no month, which names no day."""
    return {language: _day_words(language)[1] for language in DATE_LANGUAGES[1:]}


def _words(names: object) -> frozenset[str]:
    words = (w.lower() for name in names for w in str(name).replace("’", "'").split())
    # a number alone ("tháng 1": January) or a Latin word of one or two letters (Swedish "i går") is in every text
    return frozenset(w for w in words if not w.isdigit() and not (len(w) <= 2 and w.isascii()))


@lru_cache(maxsize=None)
def _day_words(language: str) -> tuple[frozenset[str], frozenset[str]]:
    """One language's month-name words, and its weekday and relative-day words."""
    from babel import Locale
    from babel.dates import get_day_names

    days = list(get_day_names("wide", locale=language).values())
    try:  # babel keeps the relative day names in its locale data only
        days += list(Locale(language)._data["date_fields"]["day"]["relative"].values())
    except (KeyError, AttributeError, TypeError):
        pass
    return _words(_month_names(language)), _words(days)


@lru_cache(maxsize=1)
def foreign_duration_words() -> dict[str, dict[str, int]]:
    """Per other common language, its words for hours and minutes (babel's CLDR unit patterns:
    "horas", "часа", "Stunden", "小时", "時間") -> the minutes each counts (60 or 1): a text that
    says "in two hours" is read for a time too, and "1時間" is an hour long."""
    from babel import Locale

    out: dict[str, dict[str, int]] = {}
    for language in DATE_LANGUAGES[1:]:
        words: dict[str, int] = {}
        try:
            patterns = Locale(language)._data["unit_patterns"]
            for unit, minutes in (("duration-hour", 60), ("duration-minute", 1)):
                for width in ("long", "short"):
                    forms = patterns.get(unit, {}).get(width) or {}
                    for f in forms.keys():
                        if isinstance(forms[f], str):
                            words.setdefault(str(forms[f]).replace("{0}", "").strip().lower(), minutes)
        except (KeyError, AttributeError, TypeError):
            pass
        out[language] = {w: m for w, m in words.items() if " " not in w and w.rstrip(".").isalpha() and (len(w) >= 3 or (unspaced(w) and len(w) >= 2))}
    return out


@lru_cache(maxsize=1)
def relative_days() -> dict[str, dict[str, int]]:
    """Per other common language, CLDR's words for the days either side of today, lowercased ->
    the offset in days ("ngày mai": 1, "พรุ่งนี้": 1, "hier": -1): read as they are, for the
    languages whose relative days dateparser does not know."""
    from babel import Locale

    out: dict[str, dict[str, int]] = {}
    for language in DATE_LANGUAGES[1:]:
        try:
            relative = Locale(language)._data["date_fields"]["day"]["relative"]
        except (KeyError, AttributeError, TypeError):
            continue
        out[language] = {phrase.lower().replace("’", "'"): offset for offset, phrase in relative.items() if offset != 0 and len(phrase) >= 2}
    return out


@lru_cache(maxsize=1)
def relative_periods() -> dict[str, tuple[int, str]]:
    """The other common languages' words for last, this and next week, month and year (CLDR's
    relative date fields through babel: "el mes pasado", "ce mois-ci", "letzten Monat", "先月",
    "지난달"), lowercased -> (-1, 0 or 1, the unit)."""
    from babel import Locale

    out: dict[str, tuple[int, str]] = {}
    for language in DATE_LANGUAGES[1:]:
        for unit in ("week", "month", "year"):
            try:
                relative = Locale(language)._data["date_fields"][unit]["relative"]
            except (KeyError, AttributeError, TypeError):
                continue
            for offset in (-1, 0, 1):
                if (phrase := relative.get(offset)) and len(phrase) >= 2:
                    out.setdefault(phrase.lower().replace("’", "'"), (offset, unit))
    return out


#: Chinese and Japanese characters (kana, Han), Korean syllables and the scripts of Southeast Asia
#: (Thai, Lao, Myanmar, Khmer): the scripts that write words without spaces around them
#: ("東京から", "서울에서", "พรุ่งนี้ฝนตกไหม"), as one character class.
UNSPACED_SCRIPT = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
_UNSPACED = re.compile(f"[{UNSPACED_SCRIPT}]+")
#: The common languages (``DATE_LANGUAGES``) that alone write in a script, most telling first:
#: Hangul is Korean, kana Japanese, Han without kana Chinese, Devanagari Hindi, Thai and Hebrew
#: their languages (Greek letters are also mathematics' symbols: "2π").
SCRIPT_LANGUAGES: tuple[tuple[str, str], ...] = (
    ("korean", "\uac00-\ud7af"), ("japanese", "\u3040-\u30ff"), ("chinese", "\u4e00-\u9fff"), ("hindi", "\u0900-\u097f"),
    ("thai", "\u0e00-\u0e7f"), ("hebrew", "\u0590-\u05ff"),
)


def unspaced(text: str) -> bool:
    """Whether a text is written only in the scripts without spaces between words (its spaces
    aside): then it is found inside a longer run of them, as a reader of that script finds it."""
    return bool(text.strip()) and all(_UNSPACED.fullmatch(part) for part in text.split())


#: Articles, the common prepositions and "and"/"or": the words every list below leaves out.
#: The hours each part of the day spans: its first hour and the hour it ends (an evening ends at
#: midnight); hours where two meet (17) belong to both.
DAY_PARTS: dict[str, tuple[int, int]] = {"morning": (5, 12), "afternoon": (12, 18), "evening": (17, 24)}
#: Words that put a time said without am or pm after noon: the afternoon or evening itself, and
#: what people do then ("dinner around 7:30", "drinks at 6").
AFTER_NOON_WORDS = frozenset({"afternoon", "evening", "tonight", "night", "dinner", "supper", "drinks", "pm"})

#: Fractions as people say them ("about a third", "two thirds of the way"): the share each names.
FRACTIONS: dict[str, float] = {
    "half": 1 / 2, "a third": 1 / 3, "one third": 1 / 3, "two thirds": 2 / 3, "a quarter": 1 / 4, "one quarter": 1 / 4,
    "three quarters": 3 / 4, "a fifth": 1 / 5, "one fifth": 1 / 5, "a tenth": 1 / 10, "one tenth": 1 / 10,
}
#: How far along something is, in words of its own ("lower the blinds halfway") and in the other
#: common languages ("à moitié", "a la mitad", "zur Hälfte", "a metà", "pela metade").
SHARE_WORDS: dict[str, float] = {
    "halfway": 1 / 2, "half way": 1 / 2, "à moitié": 1 / 2, "moitié": 1 / 2, "mi hauteur": 1 / 2, "a la mitad": 1 / 2,
    "mitad": 1 / 2, "zur hälfte": 1 / 2, "hälfte": 1 / 2, "halb": 1 / 2, "a metà": 1 / 2, "metà": 1 / 2,
    "pela metade": 1 / 2, "metade": 1 / 2, "halverwege": 1 / 2, "un quart": 1 / 4, "un cuarto": 1 / 4,
    "ein viertel": 1 / 4, "trois quarts": 3 / 4, "tres cuartos": 3 / 4, "drei viertel": 3 / 4,
}

#: The whites of lighting as lamps and smart bulbs are sold and set, and the colour temperatures
#: (kelvin) lamps sold under each name have: "warm white" is 2,700-3,000 K on a bulb's box,
#: "daylight" 5,000-6,500 K. In the common languages as their shops write them; Japanese by the
#: JIS Z 9112 classes (電球色 2,600-3,250 K ... 昼光色 5,700-7,100 K). A plain "white" or "warm" is
#: no named white.
WHITE_LIGHT_KELVIN: dict[str, tuple[int, int]] = {
    # English
    "candlelight": (1800, 2200), "warm white": (2200, 3000), "soft white": (2500, 3000), "neutral white": (3500, 4500),
    "natural white": (3500, 4500), "cool white": (4000, 5000), "cold white": (5000, 6500), "daylight": (5000, 6500),
    # German, French, Spanish, Italian, Portuguese, Dutch
    "warmweiß": (2200, 3000), "neutralweiß": (3500, 4500), "kaltweiß": (5000, 6500), "tageslichtweiß": (5000, 6500),
    "tageslicht": (5000, 6500), "blanc chaud": (2200, 3000), "blanc neutre": (3500, 4500), "blanc froid": (4000, 6500),
    "lumière du jour": (5000, 6500), "blanco cálido": (2200, 3000), "blanco neutro": (3500, 4500),
    "blanco frío": (4000, 6500), "luz día": (5000, 6500), "luz de día": (5000, 6500), "bianco caldo": (2200, 3000),
    "bianco naturale": (3500, 4500), "bianco neutro": (3500, 4500), "bianco freddo": (4000, 6500),
    "luce diurna": (5000, 6500), "branco quente": (2200, 3000), "branco neutro": (3500, 4500), "branco frio": (4000, 6500),
    "luz do dia": (5000, 6500), "warm wit": (2200, 3000), "neutraal wit": (3500, 4500), "koel wit": (4000, 5000),
    "koud wit": (5000, 6500), "daglicht": (5000, 6500),
    # Japanese (JIS), Chinese
    "電球色": (2600, 3250), "温白色": (3250, 3800), "昼白色": (4600, 5500), "昼光色": (5700, 7100),
    "暖白": (2700, 3500), "暖白光": (2700, 3500), "暖光": (2700, 3300), "冷白": (5500, 6500), "冷白光": (5500, 6500),
}

#: Musical intervals as people name them, in semitones ("up a minor third": 3, "down a whole
#: step": -2, "up an octave": 12).
INTERVAL_SEMITONES: dict[str, int] = {
    "semitone": 1, "half step": 1, "half tone": 1, "minor second": 1, "whole step": 2, "whole tone": 2, "tone": 2,
    "major second": 2, "minor third": 3, "major third": 4, "fourth": 5, "perfect fourth": 5, "tritone": 6,
    "augmented fourth": 6, "diminished fifth": 6, "fifth": 7, "perfect fifth": 7, "minor sixth": 8, "major sixth": 9,
    "minor seventh": 10, "major seventh": 11, "octave": 12,
}

#: The fractions said after a whole number and "and" ("two and a half", "one and three quarters"),
#: as a regex alternation, longest first.
AND_FRACTIONS = alternation(["a half", *FRACTIONS])


def fraction_value(phrase: str) -> float:
    """The share a fraction phrase of ``AND_FRACTIONS`` names ("a half": 0.5, "three quarters": 0.75)."""
    phrase = " ".join(phrase.casefold().split())
    return FRACTIONS[phrase] if phrase in FRACTIONS else FRACTIONS[phrase.removeprefix("a ")]

#: The files every project of a kind has at its root, which an agent reads or runs to find its way
#: around a repository without anyone naming them ("cat package.json", "pip install -r
#: requirements.txt"): manifests, lock files, build files, the readme, the ignore list.
PROJECT_FILES = frozenset(
    """
    package.json package-lock.json yarn.lock pnpm-lock.yaml tsconfig.json pyproject.toml setup.py setup.cfg
    requirements.txt requirements-dev.txt poetry.lock Pipfile tox.ini pytest.ini conftest.py Cargo.toml Cargo.lock
    go.mod go.sum pom.xml build.gradle settings.gradle Gemfile Gemfile.lock composer.json Makefile CMakeLists.txt
    Dockerfile docker-compose.yml docker-compose.yaml README.md README.rst README LICENSE CHANGELOG.md
    CONTRIBUTING.md .gitignore .editorconfig .env.example
    """.split()
)

#: The values search syntaxes define for themselves, which a query writes after an operator without
#: anyone saying them: mail folders and states (Gmail's "in:inbox is:unread has:attachment
#: category:promotions"), an issue's or a pull request's state (GitHub's "is:open is:pr").
SEARCH_KEYWORDS = frozenset(
    """
    inbox sent spam trash drafts draft unread read starred important attachment snoozed archived anywhere chats
    primary social promotions updates forums open closed merged pr issue
    """.split()
)

#: Words written with a capital that name no one in a composed text: prose abbreviations
#: ("restaurant TBD", "FYI", "DM us") and the titles a greeting puts before a name ("Bonjour
#: Madame Rivière", "Dear Mr Lee", "Hola Señora Ruiz").
PROSE_CAPITALS = frozenset(
    """
    TBD TBA TBC FYI ASAP ETA RSVP OK NB PS AM PM FAQ DM PTO OOO EOD EOW
    Mr Mrs Ms Mx Dr Prof Sir Madam Madame Mme Mademoiselle Monsieur Herr Frau Señor Señora Señorita Sr Sra Srta
    Signor Signora Sig Senhor Senhora
    """.split()
)

GRAMMAR_WORDS = frozenset("a an the to from of in on at for and or with by".split())
#: Words too common in a parameter's name to say what a value is for ("level of fluency": "of").
NAME_STOPWORDS = GRAMMAR_WORDS | {"is"}
#: Words that carry no fact: a phrase is grounded when all its other words were said.
FACTLESS_WORDS = GRAMMAR_WORDS | frozenset("into via my your our their me i we you please".split())
#: Words of a parameter's description that say nothing of its content ("the number of ...").
DESCRIPTION_STOPWORDS = GRAMMAR_WORDS | {"number", "amount"}

#: Words that say nothing about which tool is meant: grammar, politeness, and the vocabulary every
#: tool description shares ("provides ... based on the specified details").
STOPWORDS = frozenset(
    """
    a about above after again all also am an and any are as at be been before being below between both
    but by can could did do does doing done down during each etc even ever every few for from further
    had has have having he her here hers him his how i if in into is it its itself just let like ll
    may me might more most much must my myself no nor not now of off on once only or other our ours
    out over own per please re s same shall she should so some such t than that the their theirs them
    then there these they this those through to too under until up us ve very via was we were what
    when where which while who whom whose why will with within would you your yours yourself
    able across additional along already among another based certain current desired detail details
    different e eg g get give given help hi hello id ie include includes including information
    input kind know list look make many need needs new number object optional output particular
    perform possible preferred provide provided provides providing regarding related request required
    return returns see set several show specific specified specify string support supports tell
    thank thanks type use used user using value values various want wants way well whether would
    """.split()
)

#: Verbs that start a tool's name or ask for an action, by what the action does: one table for the
#: action check (read, create, update, delete) and the semantic selection check (a lookup reads; a
#: tool that makes something feeds a later step; every other kind acts). A verb may be of two
#: kinds ("create" makes and creates); the action check takes the first of read, create, update,
#: delete that holds it.
TOOL_VERBS: dict[str, frozenset[str]] = {
    "read": frozenset(
        "get query search find list retrieve fetch view show lookup look read browse check display track analyze "
        "load obtain describe geocode".split()
    ),
    "make": frozenset("generate create request upload import".split()),
    "create": frozenset("add create record register book schedule insert post submit log new generate make".split()),
    "update": frozenset(
        "update modify change edit adjust set move reschedule rename replace push postpone delay mark bump escalate fix repair amend "
        "reassign ack acknowledge resolve snooze turn switch lock unlock dim mute unmute arm disarm".split()
    ),
    "delete": frozenset("delete remove cancel drop clear erase unregister".split()),
    "act": frozenset(
        "buy close draft email file open order pay place purchase reserve send share transfer write upload refund reply "
        "respond invite assign approve reject archive publish notify subscribe unsubscribe merge deploy restart "
        "resize attach enroll renew refill ship transition scale stop start snapshot backup block return exchange fill invoice".split()
    ),
    # steps an agent takes on the way to what was asked, whatever was asked: signing in, working
    # out a number, changing directory, handing in the final answer
    "helper": frozenset("login logon signin authenticate calculate compute evaluate cd finish".split()),
}
#: Verbs of ``TOOL_VERBS`` that are as often everyday nouns ("take place", "backup required",
#: "the order"): a tool's name uses them as verbs, a request is not read as asking for them.
NOUN_LIKE_VERBS = frozenset("place file open order backup snapshot ship scale share email draft transfer refund upload post log record book return exchange issue invoice".split())


#: Folders a project keeps its code and tests in by convention, and the affixes that make a module's
#: test file ("test_prune.py", "prune_test.go", "Cart.test.tsx", "CartSpec.js", "PruneTest.java").
PROJECT_FOLDERS = frozenset("src lib libs app apps pkg cmd internal source include tests test testing spec specs __tests__ unit integration".split())
TEST_FILE = re.compile(r"(?:test_|tests_)?(.+?)(?:_test|_tests|_spec|\.test|\.spec|Test|Tests|Spec)?")


#: Words of a parameter's name that make it a window's upper bound ("time_max", "ends_at", "valid_until")
#: or its lower bound ("time_min", "since").
UPPER_BOUND_WORDS = frozenset({"end", "ends", "max", "until", "till", "to", "before", "upto", "latest", "expires", "expiry", "expiration", "through", "thru"})
LOWER_BOUND_WORDS = frozenset({"start", "starts", "min", "from", "since", "after", "earliest", "begin", "begins"})


@lru_cache(maxsize=1)
def file_languages() -> dict[str, frozenset[str]]:
    """The programming and markup languages a file's extension says it is written in, by the
    names and aliases Pygments gives them ("py": python, py3, ...; "ts": typescript, ts), casefolded.
    Pygments' own table of lexers, read without importing one."""
    from pygments.lexers._mapping import LEXERS

    table: dict[str, set[str]] = {}
    for _, name, aliases, patterns, _ in LEXERS.values():
        for pattern in patterns:
            if pattern.startswith("*.") and pattern[2:].replace("_", "").isalnum():
                table.setdefault(pattern[2:].lower(), set()).update((name.casefold(), *(a.casefold() for a in aliases)))
    return {ext: frozenset(names) for ext, names in table.items()}


@lru_cache(maxsize=None)
def foreign_number_words(language: str) -> dict[str, int]:
    """One other common language's numbers in words, 0-1,000 and the round thousands to 100,000
    ("doscientos cincuenta": 250, "quarante cinq": 45, "dos mil": 2000), normalised as
    ``guard.normalise`` writes text, by ``num2words``; empty for a language it does not write."""
    from num2words import num2words

    from guard.normalise import normalise_text

    table: dict[str, int] = {}
    for number in (*range(0, 1_001), *range(2_000, 100_001, 1_000)):
        try:
            words = normalise_text(num2words(number, lang=language))
        except Exception:  # NotImplementedError for a language it lacks, and whatever else a converter raises
            return {}
        if words and not words.isdigit():
            table.setdefault(words, number)
    return table
