"""Risk: what is at stake when a value nobody stated reaches a tool.

Whether an unstated value is acceptable depends on what the parameter holds. An invented account
number, recipient, e-mail address, amount of money, password or file path sends money, mail or
data to the wrong place: such values must be stated by the user or come from a tool result. A
quantity, a score, a count or a short description is something a model may work out, convert or
summarise from what was said: when it is not found word for word, that is weak evidence of
invention. Everything else sits in between.

``risk_of`` reads the parameter's name, its schema (format, type, description) and the value, and
returns one of three levels with the reason; the grounding check turns it into the finding's
``confidence``, which a graded policy action reads (``ungrounded_value: {ask_human: 0.9, warn:
0.5}``). The word tables below are the one place these kinds are listed.
"""

from __future__ import annotations

import calendar
import itertools
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache
from typing import Any, Literal

from guard.checks.measures import in_order
from guard.checks.programs import StringPart, added_lines, python_strings
from guard.checks.relevance import stem
from guard.lexicon import (
    AFTER_NOON_WORDS, DAY_PARTS, GRAMMAR_WORDS, MONTH_NUMBER, MONTHS, PROJECT_FILES, PROJECT_FOLDERS, PROSE_CAPITALS, SEARCH_KEYWORDS, STOPWORDS, TEST_FILE, WEEKDAY_ABBREVIATIONS, WEEKDAY_SHORT, WEEKDAYS, file_languages, foreign_day_words, foreign_duration_words, foreign_month_number,
    unspaced,
)
from guard.normalise import named_days_in, normalise_text, number_key, parse_temporal, temporal_patterns
from guard.registry import name_words

Level = Literal["consequential", "ordinary", "derivable"]

#: How sure the grounding check is that an unfound value was invented, by what is at stake.
CONFIDENCE: dict[Level, float] = {"consequential": 0.95, "ordinary": 0.9, "derivable": 0.6}

#: Parameter words naming a value that identifies, authenticates, addresses, pays or locates:
#: it must be stated or come from a tool result.
_CONSEQUENTIAL_WORDS = frozenset(
    """
    id ids identifier identifiers uuid guid key token secret password passcode passphrase pin otp
    account accounts iban swift bic routing card cvv ssn passport license licence
    email emails mail phone phones mobile telephone tel fax username usernames login handle
    recipient recipients receiver payee beneficiary attendee attendees invitee invitees participant
    participants assignee owner contact contacts
    amount price cost fee fees payment salary balance budget refund deposit withdrawal
    path paths file files filename directory folder url uri link endpoint host hostname domain ip
    address wallet ticker isbn sku barcode serial
    """.split()
)
#: Parameter words naming the model's own answer to the user (a "Finish" tool's ``final_answer``),
#: when the description says it is given to the user (``_TO_THE_USER``): the agent's reply, not
#: an act on the world. Its numbers may be the model's arithmetic on what tools returned.
_REPLY_WORDS = frozenset({"answer", "response", "reply"})
_TO_THE_USER = re.compile(r"\bfinal (?:answer|response|reply)\b|\b(?:give|show|shown|return|returned|present|presented|display|displayed) (?:to )?the user\b", re.IGNORECASE)
#: JSON Schema formats of the same kinds.
_CONSEQUENTIAL_FORMATS = frozenset({"email", "idn-email", "uri", "url", "iri", "uri-reference", "uuid", "ipv4", "ipv6", "hostname", "idn-hostname"})

#: Parameter words naming a measure, a count or a rating: a model may derive, convert or estimate
#: it (a fair coin's probability), or choose it (how many decimal places to round to).
_DERIVABLE_WORDS = frozenset(
    """
    size length width height depth weight mass distance duration radius diameter area volume
    speed velocity acceleration temperature pressure energy power force frequency angle delay
    interval rate ratio percentage percent score rating level severity intensity priority scale
    factor threshold growth degree degrees limit page results lines rows entries
    line offset timeout period window seconds secs minutes mins hours days ms ttl
    probability chance odds decimals decimal precision digits rounding chars characters tokens bytes
    """.split()
)
#: Parameter words that name how many results a lookup shows when the schema bounds or defaults
#: them (``number: {default: 10, maximum: 100}``): a page size, which the model may choose.
_COUNT_WORDS = frozenset({"number", "num", "top", "tail", "head"})
#: Parameter words naming descriptive text: a summary of what was said, the user's question put
#: to a question-answering or search tool, or a message's subject and body, in the model's words.
_DESCRIPTIVE_WORDS = frozenset(
    """
    description describe details detail summary notes note comment comments reason reasons
    behavior behaviors behaviour behaviours goal goals objective objectives analysis criteria
    feedback preferences preference interests context situation concerns
    question questions query prompt instruction instructions input
    subject body message caption text title headline memo term terms keyword keywords
    statement explanation justification narrative purpose label legend request requests remark remarks step steps
    """.split()
)
#: Descriptive words that name the text itself when they end a parameter's name: an
#: ``email_subject`` is a subject, a ``message_body`` a body (a ``message_id`` stays an identifier).
_TEXT_HEADS = frozenset("subject body message text title caption content notes note description summary comment memo answer".split())
#: Parameter words naming what a created thing is called (an automation's ``name``, a sheet's
#: ``title``): the model's label for it, when the tool creates.
_LABEL_HEADS = frozenset({"name", "title", "label"})
#: Formats written after the text they name: ``content_markdown``, ``body_html``.
_TEXT_FORMATS = frozenset("markdown md html plain rich raw".split())
#: Parameter words naming a program or a formula the model writes: a shell command, code, an
#: arithmetic expression. The syntax is the model's; what it acts on must have been said.
_PROGRAM_WORDS = frozenset("command commands cmd script snippet program expression formula function equation integrand".split())
#: Names of a parameter that holds source code ("code", "python_code"; a ``zip_code`` or
#: ``stock_code`` is an identifier).
_CODE_NAMES = frozenset("code source python javascript js sql bash shell".split())
#: Words that point at something instead of saying it ("the same as last time", "that one").
_POINTER_WORDS = frozenset("same usual that this those these it one ones last previous before again above mentioned discussed earlier time thing things".split())
#: The syntax of a command, a program or a formula: an operator, a bracket, an option, a line break.
_SYNTAX = re.compile(r"[=()\[\]{}|;*/+<>$\n]|(?:^|\s)--?\w|\d\s*-\s*\d")

#: Parameter words naming a query in a tool's own language (JQL, SOQL, a search syntax): the model
#: writes the syntax, the user gives the values it searches for.
_QUERY_WORDS = frozenset({"query", "q", "jql", "soql", "sql", "cql", "kql", "lucene", "filter", "search", "expression", "where", "selector"})
#: Parameter words naming a search pattern (a regex, a glob): the model writes the syntax around
#: the words it searches for ("def slugify" for "where is slugify() defined").
_PATTERN_WORDS = frozenset({"pattern", "regex", "regexp", "glob"})
#: The syntax of a regular expression around its words ("@gmail\\.com$", "^ERROR").
_REGEX_SYNTAX = re.compile(r"[\\^$*+?|()\[\]]")
#: How a sort document says the order (MongoDB's 1 and -1, SQL's words), and the keys it sits under.
_SORT_DIRECTIONS = (1, -1, "asc", "desc", "ASC", "DESC", "ascending", "descending")
_SORT_WORDS = frozenset({"sort", "order", "orderby", "sorting", "ordering"})
#: Description words that say a parameter takes a program or an expression ("Standard 5-field cron
#: expression", "a regular expression"): its syntax is the model's.
_PROGRAM_DESCRIPTIONS = frozenset({"expression", "cron", "crontab", "regex", "regexp", "formula", "script", "syntax"})
#: What makes a value read as code rather than prose: a line break, an assignment or a call
#: ("HTTP_TIMEOUT = 60", "normalize("), a brace or a semicolon.
_CODE_SHAPE = re.compile(r"\n|[A-Za-z_][\w.]*(?:\s*=(?!=)|\()|[{};]")
#: Parameter words naming the API's own fields or sort keys: they shape an answer and carry no
#: value of the user's ("fields": ["summary", "status"], "propertyName": "email").
#: An object that states a condition on a record: its ``field`` or ``column`` names one of the API's fields.
_CONDITION_WORDS = frozenset({"filter", "filters", "where", "condition", "conditions", "criteria", "criterion", "predicate"})
_SELECTOR_WORDS = frozenset({"fields", "properties", "select", "expand", "include", "columns", "attributes", "sort"})
#: The values a query searches for: quoted phrases, and what stands after an operator.
#: A literal goes on over capitalised words ("artist:The Killers"), not over the language's own
#: keywords, written in capitals ("Amount > 100000 ORDER BY Amount DESC").
_QUERY_LITERALS = re.compile(r"'([^']{1,200})'|\"([^\"]{1,200})\"|(?:[:=~<>]|\b[Ll][Ii][Kk][Ee]\b)\s*([^\s'\")(,]+(?:\s+[A-Z][a-z][\w.]*)*)")

_IDENTIFIER_LIKE = re.compile(r"(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[A-Za-z0-9][\w.:/@#-]{2,}")
#: A time relative to now in a query language's syntax (Grafana's and Elasticsearch's "now-1h",
#: "now-7d/d", Prometheus' and Loki's "-15m", "30m"): a window, not an identifier.
_RELATIVE_TIME = re.compile(r"now(?:\s*[-+]\s*\d{1,6}\s*(?:ms|[smhdwMy]))?(?:/[smhdwMy])?|-?\d{1,6}(?:ms|[smhdwy])")
#: A quantity written with its unit ("40m", "2.5km", "90s", "15 min"): a measure, not an identifier.
_QUANTITY = re.compile(r"\d+(?:\.\d+)?\s?(?:[a-zA-Zµ°]{1,3}|min|mins|hrs|sec|secs)")
_EMAIL_LIKE = re.compile(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")
#: A spreadsheet range in A1 notation, with its sheet or not: "A1:C1", "Sheet1!B2:B20", "'Q3 plan'!A:A".
_A1_RANGE = re.compile(r"(?:(?:'[^'\n]{1,100}'|[\w ]{1,100})!)?\$?[A-Z]{1,3}\$?\d{0,7}(?::\$?[A-Z]{1,3}\$?\d{0,7})?")
#: Parameter words naming a place in a sheet.
_RANGE_WORDS = frozenset({"range", "ranges", "cell", "cells", "a1"})
#: A time window in a tool's relative syntax: "1 week ago", "now-1h", "-24h", "15m", "7d", "last 3 days".
_RELATIVE = re.compile(
    r"(?:now\s*-\s*|-|(?:last|past)\s+)?(\d{1,4})\s*(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?|weeks?|mo|months?|y|yrs?|years?)(?:\s+ago)?",
    re.IGNORECASE,
)
#: The words that name each unit of ``_RELATIVE`` in a request ("the past hour", "this week", "since yesterday").
_WINDOW_UNITS = {"s": ("second",), "m": ("minute",), "h": ("hour",), "d": ("day", "yesterday"), "w": ("week",), "mo": ("month",), "y": ("year",)}


@dataclass(frozen=True)
class Risk:
    level: Level
    reason: str

    @property
    def confidence(self) -> float:
        return CONFIDENCE[self.level]


def risk_of(
    name: str, schemas: Iterable[dict[str, Any]], value: Any, said: str = "", results: str = "", parent: str = "", lookup: bool = False,
    numbers: Collection[int | float] = frozenset(), paths: str = "", creates: bool = False, today: date | None = None, asked: str = "",
) -> Risk:
    """What is at stake if ``value`` for parameter ``name`` (described by ``schemas``) was invented;
    ``said`` is what the user and system said, ``results`` what earlier tools returned (a summary
    or a message must echo them to count as derivable: the e-mail reporting a booking);
    ``parent`` the key of the object the parameter sits in (``order_by`` for ``order_by.column``);
    ``lookup`` whether the tool only reads (its name's verb: get, search, list), whose page size
    the model may choose; ``numbers`` the numbers said or returned, as ``normalise.number_key``
    writes them (the grounding index's: "100k" gives 100000); ``paths`` the paths earlier calls
    named that the environment found (``Conversation.confirmed_paths``); ``creates`` whether the
    tool creates something (its name's verb), whose name or title the model may word; ``today``
    the conversation's date, against which a day said in words is read."""
    schemas = [s for s in schemas if isinstance(s, dict)]
    named = name_words(name).split()
    words = set(named)
    formats = {str(s.get("format")) for s in schemas if s.get("format")}
    composed = isinstance(value, str) and len(value.split()) >= 2
    head = named[-2] if len(named) > 1 and named[-1] in _TEXT_FORMATS else named[-1] if named else ""
    texts = _TEXT_HEADS | _LABEL_HEADS if creates else _TEXT_HEADS  # the name of what a tool creates is the model's label
    if composed and head in texts and _composed(value, said, results, numbers):
        return Risk("derivable", "a text the model composed from what was said or returned: every name and number in it was")
    if isinstance(value, str) and head in texts and unspaced(value) and _pieced(normalise_text(value), said, results):
        return Risk("derivable", "a text in a script without spaces, made of pieces of what was said or returned")
    if composed and words & _REPLY_WORDS and any(_TO_THE_USER.search(str(s.get("description", ""))[:500]) for s in schemas) and _replies(value, said, results):
        return Risk("derivable", "the model's answer to the user, in its own words over what was said or returned: a reply, no act on the world")
    described = set(normalise_text(" ".join(str(s.get("description", "")) for s in schemas)[:300]).split())
    program = words & _PROGRAM_WORDS or (words <= _CODE_NAMES and "code" in words) or described & _PROGRAM_DESCRIPTIONS
    if isinstance(value, str) and program and _program_grounded(value, said, results) and (
        composed or (_SYNTAX.search(value) and _operands_found(value, numbers))  # one token: "x**2", not "(2+3)*5" over unsaid numbers
    ):
        return Risk("derivable", "a command, code or formula in the model's syntax: what it names was said or returned")
    if isinstance(value, str) and words & _OPTION_PARAMS and _OPTIONS_ONLY.fullmatch(value.strip()):
        return Risk("derivable", "command-line options the model chose ('-q', '--maxfail=1'): they name nothing to act on")
    if isinstance(value, str) and _path_listed(value.strip(), said, f"{results} {paths}" if paths else results):
        return Risk("derivable", "a path joined from directories and files that were said or that tools listed")
    if isinstance(value, str) and lookup and conventional_path(value.strip(), said, results):
        return Risk("derivable", "a file read where the project's conventions put a module or test the conversation names")
    if isinstance(value, str) and "formula" in words | described and (words | described) & _CHEMISTRY_WORDS and chemical_formula(value.strip()):
        return Risk("derivable", "the chemical formula of a substance the user named: its canonical form")
    if hit := words & _CONSEQUENTIAL_WORDS:
        return Risk("consequential", f"the parameter names {sorted(hit)[0]!r}: it must be stated or come from a tool result")
    if hit := formats & _CONSEQUENTIAL_FORMATS:
        return Risk("consequential", f"the value is {sorted(hit)[0]!r}: it must be stated or come from a tool result")
    measure = (words | described) & _DERIVABLE_WORDS
    if isinstance(value, str) and measure and _QUANTITY.fullmatch(value.strip()) and not _number_stated_for(words, said):
        return Risk("derivable", "a measure with its unit (a duration, a distance) a model may compute, convert or estimate")
    if isinstance(value, str) and words & _RANGE_WORDS and _A1_RANGE.fullmatch(value.strip()):
        return Risk("derivable", "a range of cells in A1 notation, which the model works out from the layout described")
    if isinstance(value, str) and _slot_in_named_part(value.strip(), said, results, today):
        return Risk("derivable", "a time the model picked inside the part of the day the user named, on a day the conversation or a tool gave")
    if isinstance(value, str) and _window_said(value.strip(), said):
        return Risk("derivable", "a time window in the tool's relative syntax over a span of the unit the user named ('the past hour': now-1h)")
    if isinstance(value, str) and lookup and _RELATIVE_TIME.fullmatch(value.strip()):
        return Risk("derivable", "a time relative to now ('now-1h') bounding what a lookup reads: how far back the model looks")
    if isinstance(value, str) and (
        _EMAIL_LIKE.fullmatch(value.strip()) or (
            _IDENTIFIER_LIKE.fullmatch(value.strip()) and parse_temporal(value.strip()) is None and not _QUANTITY.fullmatch(value.strip())
            and not _RELATIVE_TIME.fullmatch(value.strip())
        )
    ):  # a date or time ("2024-06-16T12:00:00-07:00"), a quantity ("90s") and a time relative to now ("now-15m") are no identifiers
        return Risk("consequential", "the value looks like an identifier: it must be stated or come from a tool result")
    if composed and _CODE_SHAPE.search(value) and _program_grounded(value, said, results, edit=bool(words & _EDIT_WORDS)) and _numbers_found(added_lines(value), numbers):
        return Risk("derivable", "text in a program's syntax (code, an edit to a file): every name and number it holds was said or returned")
    sized = (lookup and words & _COUNT_WORDS and any("default" in s or "maximum" in s for s in schemas)) or (
        "count" in words and words & {"max", "maximum"}  # "max_count": a cap on what a lookup returns, not a count of things
    )
    # a parameter named by a letter ("p", "t") is what its description says ("Success probability")
    held = words | described if named and all(len(w) <= 2 for w in named) else words
    if isinstance(value, (int, float)) and not isinstance(value, bool) and (held & _DERIVABLE_WORDS or sized):
        if not _number_stated_for(words, said):
            return Risk("derivable", "a measure or rating a model may compute, convert or estimate")
        return Risk("ordinary", "the user stated another number for this parameter; a different one contradicts it")
    if composed and held & _DESCRIPTIVE_WORDS and (_echoes(value, said, results) or _composed(value, said, results, numbers)) and not points(value):
        return Risk("derivable", "descriptive text in the model's words, echoing what was said or returned")
    if isinstance(value, str) and words & _QUERY_WORDS and _literals_said(value, said, results, numbers):
        return Risk("derivable", "a query in the tool's own syntax whose values were said or returned")
    if composed and lookup and words & _QUERY_WORDS and _widens(value, said) and not points(value):
        return Risk("derivable", "a search's words: the user's own, with words the model adds to find it ('Federal Reserve' for 'the fed')")
    if isinstance(value, str) and words & _PATTERN_WORDS and (composed or _REGEX_SYNTAX.search(value)) and _echoes(value, said, results):
        return Risk("derivable", "a search pattern in the tool's syntax around words that were said or returned")
    if name.startswith("$") and isinstance(value, str) and len(value) <= 200 and (len(value.strip()) <= 3 or _echoes(value, said, results)):
        # a query document's operator ({"$options": "i"}, {"$in": ...}): the syntax is the model's
        return Risk("derivable", "an operator's argument in a query document, the model's syntax around what was said or returned")
    if value in _SORT_DIRECTIONS and not isinstance(value, bool) and (words | set(name_words(parent).split())) & _SORT_WORDS:
        return Risk("derivable", "a sort direction ({'created_at': -1} for 'the most recent'): how the answer is ordered")
    selector = words | set(name_words(parent).split()) if words & {"column", "field", "key", "property", "attribute"} else words
    if isinstance(value, str) and len(value) <= 64 and (
        selector & (_SELECTOR_WORDS | _CONDITION_WORDS if selector != words else _SELECTOR_WORDS)
        or {"order", "by"} <= selector or {"property", "name"} <= words or {"field", "name"} <= words
    ):  # "fields", "sort_by", "propertyName", "order_by.column", "dimension_filter.field"; not "field" ("field of study") nor "property_type"
        return Risk("derivable", "the name of one of the API's own fields: it shapes the answer and carries no user data")
    if isinstance(value, str) and _abbreviates(value.strip(), said, results):
        return Risk("derivable", "a code abbreviating a name that was said or returned ('AAPL' for Apple, 'NYC' for New York City)")
    if isinstance(value, str) and (qualified := _QUALIFIED.fullmatch(value.strip())) and _example_qualifier(qualified[2], schemas) and (
        _abbreviates(qualified[1], said, results) or _found(qualified[1], said, results)
    ):
        return Risk("derivable", "a code said or abbreviating a name, qualified the way the description's example is ('NVDA:NASDAQ' for 'MSFT:NASDAQ')")
    if isinstance(value, str) and lookup and _extends_a_name(value.strip(), said, results, words | described):
        return Risk("derivable", "a lookup's key that completes a name the user said ('LeBron James' for 'LeBron', 'Köln Hbf' for 'Köln')")
    if isinstance(value, str) and _unclipped(value.strip(), said):
        return Risk("derivable", "the full form of a word the user clipped ('tech': technology, 'info': information)")
    if isinstance(value, str) and asked and (moment := _temporal_value(value.strip())) is not None and _time_named(asked, moment.date, today):
        return Risk("derivable", "a date or time the model worked out from one the user named in words ('wed 2-3', 'en 2 horas', 'after school')")
    return Risk("ordinary", "a value the user would normally state")


#: Words that name a weekday or a part of a day ("wed", "evening"); "today", "tmrw" are ``normalise.named_days_in``'s.
_DAY_WORDS = frozenset(
    {*WEEKDAYS, *WEEKDAY_ABBREVIATIONS, *DAY_PARTS, *(AFTER_NOON_WORDS - {"pm"}),
     "weekend", "eod", "eow"}
)
#: A span from now, or a week or month named relative to this one: "in 2 hours", "in an hour", "next week".
_RELATIVE_SPAN = re.compile(
    r"\b(?:in|within|for)\s+(?:\d{1,3}|an?|one|two|three|four|five|six|ten|twenty|thirty|few|couple(?: of)?)\s+(?:hours?|hrs?|minutes?|mins?|days?|weeks?)\b"
    r"|\b(?:next|this|last|coming)\s+(?:week|month|weekend)\b"
)
#: A clock time: "7pm", "9:30", "14h", "2-3", "noon".
_CLOCK = re.compile(r"\b\d{1,2}(?:[:h.]\d\d)?\s*(?:[ap]\.?m\b|uhr\b|h\b|o'?clock\b)|\b\d{1,2}:\d\d\b|\b\d{1,2}\s*-\s*\d{1,2}\b|\b(?:noon|midday|midnight)\b")


def _temporal_value(value: str) -> Any:
    """The date and time a short value holds ("2025-10-15T14:00:00-04:00", "06:45"), or None."""
    return parse_temporal(value) if len(value) <= 40 and any(c.isdigit() for c in value) else None


#: A date written in full or by its day and month: "2022-05-06", "5/6", "6.5.2022", a day number
#: beside a month's name in any common language ("May 6", "6 de mayo", "3 mars").
_NUMERIC_DATE = re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[/.]\d{1,2}(?:[/.]\d{2,4})?\b|[年月]")
_DAY_NUMBER = re.compile(r"\d{1,2}(?:st|nd|rd|th|er|e|º|\.)?")


@lru_cache(maxsize=1)
def _month_words() -> frozenset[str]:
    return frozenset(MONTH_NUMBER) | frozenset(foreign_month_number())


@lru_cache(maxsize=1)
def _duration_words() -> frozenset[str]:
    return frozenset().union(*foreign_duration_words().values())


def _time_named(asked: str, day: date | None, today: date | None) -> bool:
    """Whether the user named a time (and, for a value on ``day``, a day that may be it) only in
    relative words, in any common language ("wed 2-3", "tonight at 7", "in 2 hours", "mañana a
    las 7 menos cuarto"): a value the model works out from them is no fact the user withheld.
    The words bound the day: "tomorrow" is the day after ``today``, a weekday one of the week
    either side, a span from now today or tomorrow, "next week" a fortnight either side. A date
    written in full or by its day and month is one the value must match, so where one was
    written nothing is excused; a clock time alone names no day."""
    text = asked[-4_000:].lower()
    if _NUMERIC_DATE.search(text):
        return False
    tokens = re.findall(r"[^\W_]+", text)
    months = _month_words()
    for i, token in enumerate(tokens):
        if token in months and token != "may" and any(_DAY_NUMBER.fullmatch(t) for t in tokens[max(0, i - 2) : i + 3]):
            return False  # "May 6", "6 de mayo", "le 3 mars"
    if day is None:  # a time of day: any words that name a time or a day
        return bool(_CLOCK.search(text) or set(tokens) & _DAY_WORDS or named_days_in(text) or any(set(tokens) & v for v in foreign_day_words().values()))
    if today is None:
        return False
    return any(day in allowed for allowed in _days_named(text, tokens, today))


def _days_named(text: str, tokens: list[str], today: date) -> Iterator[range | set[date]]:
    """The days relative words of a text may name, seen from ``today`` (sets, or ranges of ordinals
    as dates: ``_DayRange``)."""
    words = set(tokens)
    if exact := named_days_in(text):  # "tomorrow", "tmrw", "the day after tomorrow": normalise's one table
        yield {today + timedelta(days=n) for n in exact}
    if words & (set(WEEKDAYS) | set(WEEKDAY_ABBREVIATIONS) | {"weekend"}) or any(words & v for v in foreign_day_words().values()):
        yield _DayRange(today - timedelta(days=7), today + timedelta(days=8))  # a weekday, in this language or another
    if words & set(DAY_PARTS) or words & (AFTER_NOON_WORDS - {"pm"}) or _RELATIVE_SPAN.search(text) or any(
        a.isdigit() and b in _duration_words() for a, b in zip(tokens, tokens[1:])
    ):  # "this evening", "in 2 hours", "en 2 horas": today, or past midnight
        yield {today, today + timedelta(days=1)}
    if re.search(r"\b(?:next|this|last|coming)\s+(?:week|weekend)\b", text):
        yield _DayRange(today - timedelta(days=14), today + timedelta(days=15))


@dataclass(frozen=True)
class _DayRange:
    first: date
    end: date

    def __contains__(self, day: object) -> bool:
        return isinstance(day, date) and self.first <= day < self.end


#: Where a sentence starts in a composed text (its first word is capitalised by grammar, not as a name).
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n>]|\s[-*•#]+|^\s*(?:@\w+[\s,]+)+)\s*[\W_]*$")  # ">": after a markup tag; "@ana So sorry"
_WORD_OR_NUMBER = re.compile(r"[A-Za-z][\w'’-]*|\d+(?:[.,:]\d+)*")


#: Words that say a formula is a chemical one ("Molecular formula, e.g. H2SO4").
_CHEMISTRY_WORDS = frozenset({"chemical", "molecular", "molecule", "compound", "molar", "substance", "chemistry", "empirical"})
#: Element symbols with counts and groups in brackets; each step starts at a capital or a bracket, so
#: a match never backtracks ("A" * 59 + "!" took minutes with nested repeats).
_FORMULA = re.compile(r"(?:[A-Z][a-z]?\d{0,3}|\(|\)\d{0,3}){1,40}")
_SYMBOL = re.compile(r"[A-Z][a-z]?")


def chemical_formula(value: str) -> bool:
    """Whether a value is written as a chemical formula of real elements ("C6H12O6", "NaCl",
    "Ca(OH)2"; the elements are ``molmass``'s), not a code in capitals ("NACL": no element A)."""
    if len(value) > 60 or not _FORMULA.fullmatch(value):
        return False
    from molmass import ELEMENTS  # read only when a formula parameter needs it

    return all(symbol in ELEMENTS for symbol in _SYMBOL.findall(value))


def _facts(value: str) -> list[str]:
    """The facts of a composed text, the things in it that must have been said or returned:
    numbers (not the zeros of a time: "3:00") and names (words written with a capital inside a
    sentence, not "I")."""
    facts = []
    for m in _WORD_OR_NUMBER.finditer(value[:4_000]):
        word = m[0]
        if word[0].isdigit():  # "$1,000" is one number, as the normalised haystack writes it
            facts.extend(n for n in re.findall(r"\d+", re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", word)) if n.strip("0"))
        elif (
            word[0].isupper() and word != "I" and not word.startswith(("I'", "I’")) and word not in PROSE_CAPITALS
            and not _SENTENCE_START.search(value[max(0, m.start() - 40) : m.start()])
        ):
            facts.append(word)
    return facts


def _found(fact: str, said: str, results: str) -> bool:
    """Whether a fact was said or returned, as a whole word of the normalised text; a month or a
    weekday by any of its names ("November" for "Nov", "Fri" for "Friday")."""
    needle = normalise_text(fact)
    forms = _CALENDAR_FORMS.get(needle, (needle,))
    return needle != "" and any(f" {form} " in _normalised(said) or f" {form} " in _normalised(results) for form in forms)


#: Each name of a month or a weekday -> all the names of it.
_CALENDAR_FORMS: dict[str, tuple[str, ...]] = {
    name: names for names in (*MONTHS, *((day, *WEEKDAY_SHORT[day]) for day in WEEKDAYS)) for name in names
}
#: A clock time in a composed text ("23:00", "9:30", "8h00"): said as it is, or on a 12-hour clock ("11pm").
_CLOCK_TIME = re.compile(r"\b([01]?\d|2[0-3])[:hH]([0-5]\d)\b")


def _clock_found(m: re.Match[str], said: str, results: str) -> bool:
    hour, minutes = int(m[1]), int(m[2])
    hours = {str(hour), f"{hour:02d}", str(hour % 12 or 12)}
    return any(_found(h, said, results) for h in hours) and (minutes == 0 or _found(str(minutes), said, results))


#: How much of a text in an unspaced script ``_pieced`` reads, its longest piece, and how much of
#: what was said and returned it looks in.
_PIECED_CHARS, _PIECE, _PIECED_TEXT = 64, 12, 20_000


def _pieced(value: str, said: str, results: str = "") -> bool:
    """Whether a text in a script written without spaces ("产品团队需求评审") is made of pieces of
    two characters or more of what was said or returned ("和产品团队过一下需求评审"): the longest
    piece found at each place, covering four fifths of it at least."""
    value = value.replace(" ", "")[:_PIECED_CHARS]
    if len(value) < 2:
        return False
    said, results = said[:_PIECED_TEXT], results[-_PIECED_TEXT:]  # bounded: a piece is looked for at most 64 x 11 times
    covered = i = 0
    while i < len(value):
        j = next((j for j in range(min(len(value), i + _PIECE), i + 1, -1) if value[i:j] in said or value[i:j] in results), None)
        if j is None:
            i += 1
        else:
            covered, i = covered + j - i, j
    return 5 * covered >= 4 * len(value)


def _facts_found(value: str, said: str, results: str = "", numbers: Collection[int | float] = frozenset()) -> bool:
    """Whether a text says nothing new: every fact in it was said or returned, and it is no mere
    pointer ("the same as last time"); a number written rounded may round one of ``numbers``
    (those said or returned)."""
    if points(value):
        return False
    clocks = list(itertools.islice(_CLOCK_TIME.finditer(value[:4_000]), 16))
    if not all(_clock_found(m, said, results) for m in clocks):
        return False
    rest = _CLOCK_TIME.sub(" ", value[:4_000]) if clocks else value[:4_000]
    if numbers and _ROUNDED.search(rest):
        rest = _ROUNDED.sub(lambda m: " " if _rounds(m, numbers) else m[0], rest, count=64)
    return all(_found(f, said, results) for f in dict.fromkeys(_facts(rest)))


#: A number written rounded: after "~", "about", "roughly"... or with a scale ("713k", "4.3M").
_ROUNDED = re.compile(
    r"(?:(?P<about>~|≈|\b(?i:about|around|roughly|approximately|approx\.?|nearly|almost|over|under|some)\s)\s*)?"
    r"(?<![\w.,])(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,9}(?:\.\d+)?)"
    r"(?:\s?(?P<scale>k|K|M|bn|B|thousand|million|billion)\b)?(?![\w%])"
)
_SCALES = {"k": 1e3, "K": 1e3, "thousand": 1e3, "M": 1e6, "million": 1e6, "bn": 1e9, "B": 1e9, "billion": 1e9}


def _rounds(m: re.Match[str], numbers: Collection[int | float]) -> bool:
    """Whether a rounded number ("~713k", "about 40") is one of ``numbers`` (said or returned, as
    the grounding index read them), rounded to the digits written: 713,260 is "~713k", 38 is
    "about 40"; 705,918 is no "~713k"."""
    if not (m["about"] or m["scale"]):
        return False  # written exactly: a fact to find as it is
    number = m["number"].replace(",", "")
    written = float(number)
    if "." in number:
        half = 0.5 * 10 ** -len(number.split(".")[1])
    else:
        half = 0.5 * 10 ** (len(number) - len(number.rstrip("0"))) if number.strip("0") else 0.5
    scale = _SCALES.get(m["scale"] or "", 1.0)
    return any(x and abs(x / scale - written) <= half + 1e-9 for x in itertools.islice(numbers, 4_000))


def _composed(value: str, said: str, results: str = "", numbers: Collection[int | float] = frozenset()) -> bool:
    """Whether a message, note or title the model composed says what was said or returned, in
    its own words: every fact in it (a number, a name) was said or returned, and it repeats at
    least two of the words said or returned, one of them no name ("Quick heads-up: I'm running
    about 10 minutes behind and will join our 2pm" for "tell her I'm running about 10 min late
    to our 2pm"). A text that names something nobody said ("the invoice for March"), or only
    the recipient ("Hi John, hope you are well"), is not."""
    if not _facts_found(value, said, results, numbers):
        return False
    facts = _facts(value)
    echoed = _stems(value) & (_stems(said) | _stems(results))
    plain = echoed - {stem(f.lower()) for f in facts} - {f for f in facts if f.isdigit()}
    return len(echoed) >= 2 and bool(plain)


#: What a command or program acts on: quoted strings, paths and URLs (a "/" inside, no
#: wildcard; not a device such as /dev/null), e-mail addresses, file names ("train.py") and names
#: mixing letters and digits ("prod-use1", "sales_2024.csv"); not an option ("--max-depth=1").
#: Every run is bounded: a target may start after each dot of "a.a.a…", and an unbounded run
#: from each of them read to the end of the value (4,000 characters: 0.2 s).
_PROGRAM_TARGETS = re.compile(
    r"'([^'\n]{1,200})'|\"([^\"\n]{1,200})\"|(?<![\w-])((?:[\w.~-]{0,200}/[\w.@:~/-]{1,300})|(?:[\w.+-]{1,100}@[\w-]{1,100}\.[\w.]{1,100})"
    r"|(?=[\w.-]{0,200}\d)(?=[\w.-]{0,200}[A-Za-z])[A-Za-z][\w.-]{0,200}|[\w-]{2,200}\.[a-z][a-z0-9]{1,3}\b(?![(\w.]))"
)


#: A branch a git command creates ("git checkout -b fix/212-zulu", "git switch -c feat/x"): named by the model.
_NEW_BRANCH = re.compile(r"\bgit\s+(?:checkout\s+-[bB]|switch\s+(?:-c|--create)|branch)\s+([\w./-]{1,200})")


def _program_grounded(value: str, said: str, results: str = "", edit: bool = False) -> bool:
    """Whether a command, code or formula the model wrote acts only on what was said or returned:
    every path, URL, address, quoted string and name with digits in it was (a quoted string by
    half of its words at least). Its syntax, options and arithmetic on stated numbers are the
    model's ("84.50 * 1.18 / 3" for an 18% tip split three ways; "du -xh --max-depth=1 /var/log").
    In a Python program only the strings it acts on count (``programs.python_strings``): what it
    prints or charts, the keys it defines and the option words it passes are its own, a file it
    writes needs a directory that was said or returned, a column it reads a name built from the
    words said or returned; in code written into a file (an ``edit``: nothing runs yet) only the
    paths and addresses among its literals count (``normalize("NFKD", s)``, a test's example
    ``slugify("Crème Brûlée")`` are the program's). Words without any syntax ("that one") are no
    program."""
    if not _SYNTAX.search(value) or points(value):
        return False
    if (strings := python_strings(value)) is not None:
        return all(_python_string_grounded(s, said, results, edit) for s in strings)
    own = {m[1] for m in itertools.islice(_NEW_BRANCH.finditer(value[:4_000]), 8)}  # a branch the command makes is its own name
    for m in _PROGRAM_TARGETS.finditer(value[:4_000]):
        if m[3] is not None and (m[3] in own or m[3].removeprefix("origin/") in own):
            continue
        quoted = m[1] if m[1] is not None else m[2]
        if quoted is not None and edit and not _ADDRESS.search(quoted):
            continue  # written code in another language: its literals are the program's, as in Python's
        if quoted is None and (not re.search(r"\w", m[3]) or (edit and re.fullmatch(r"\w+", m[3]))):
            continue  # "//" opens a comment; "float64", "utf8" in written code are the language's words
        if not (_quoted_grounded(quoted, said, results) if quoted is not None else _target_grounded(m[3], said, results)):
            return False
    return True


#: Parameter words naming a command's extra arguments, and a value made of options alone (a number
#: after "=" at most: "--user=bob" names someone).
_OPTION_PARAMS = frozenset({"args", "arguments", "argv", "flags", "options", "opts"})
_OPTIONS_ONLY = re.compile(r"-{1,2}[A-Za-z][\w-]{0,30}(?:=\d{1,6})?(?:\s+-{1,2}[A-Za-z][\w-]{0,30}(?:=\d{1,6})?){0,9}")
#: Parameter words naming the new text of a file (``new_str``, ``patch``, ``diff``): code written, not run.
_EDIT_WORDS = frozenset({"new", "patch", "diff", "replacement", "insert"})
#: A separator a program joins or splits by.
_SEPARATOR = re.compile(r"[^\w\s]{1,3}\s?|_|\s+")
#: What a literal of written code reaches: a path, an address, a URL.
_ADDRESS = re.compile(r"/|@|://|\\")


def _quoted_grounded(quoted: str, said: str, results: str) -> bool:
    """A quoted string of a program: a template it prints (braces, %) is its own; a path is
    judged as a path; one word must have been said or returned as it is (a glob is syntax);
    words, by half of their stems at least."""
    if "{" in quoted or "%" in quoted or "$" in quoted:
        return True  # a template the program prints ("Final balance: ${final:,.2f}", "exit=$?"): its words are the model's
    if re.fullmatch(r"\S+", quoted):  # one word: a name, a file, a column, said as it is
        if "/" in quoted:
            return _target_grounded(quoted, said, results)
        return "*" in quoted or _found(quoted, said, results)  # a glob ('*.py') is syntax, as unquoted
    own = _stems(quoted)
    return not own or 2 * len(own & (_stems(said) | _stems(results))) >= len(own) or _found(quoted, said, results)


#: Where a program keeps its scratch files: a path under them is the program's own.
_TEMPORARY = ("/tmp/", "/var/tmp/", "~/tmp/")


def _target_grounded(target: str, said: str, results: str) -> bool:
    """A path, address or name with digits a program names: said or returned whole, by its last
    part ("train.py" of "scripts/train.py"), or by the parts of it that carry a number; a scratch
    file ("/tmp/people.csv"), or a file every project of its kind has (``lexicon.PROJECT_FILES``:
    "package.json") at the root or in a folder that was said or returned."""
    folder, _, base = target.rstrip("/").rpartition("/")
    return (
        "*" in target or target.startswith(("/dev/", *_TEMPORARY)) or _found(target, said, results)
        or _found(base, said, results) or _numbered_parts_found(target, said, results)
        or (base in PROJECT_FILES and (not folder or _found(folder, said, results)))
        or conventional_path(target, said, results)
    )


def _python_string_grounded(string: StringPart, said: str, results: str, edit: bool = False) -> bool:
    text = string.text
    if string.part == "own" or not text.strip() or _SEPARATOR.fullmatch(text):
        return True  # its own words, or a separator it joins or splits by ("_", ", ")
    if edit and string.part in ("data", "read") and not _ADDRESS.search(text):
        return True  # code written into a file acts on nothing yet: its literals are the program's (a test's example, an option)
    if string.part == "name":
        return _target_grounded(text, said, results)
    if string.part == "output":  # a file the program makes, in a folder that was said or returned, or a temporary one
        folder = text.rsplit("/", 1)[0] if "/" in text else ""
        return not folder or f"{folder}/".startswith(_TEMPORARY) or _found(folder, said, results) or _found(text, said, results)
    if string.part == "read" and re.fullmatch(r"\w{1,64}", text):  # a column or key: a name made of the words said or returned
        own = _word_stems(text.replace("_", " "))
        if own and 2 * len(own & (_word_stems(said) | _word_stems(results))) >= len(own):
            return True
    return _quoted_grounded(text, said, results)


def _operands_found(value: str, numbers: Collection[int | float]) -> bool:
    """Whether every number a one-token formula works on was said or returned (a power's exponent,
    "x**2" for "x squared", is the formula's own)."""
    operands = re.sub(r"(?:\*\*|\^)\s*\d+(?:\.\d+)?", "", value[:4_000])
    return {number_key(float(n)) for n in re.findall(r"\d+(?:\.\d+)?", operands)} <= set(numbers)


def _numbered_parts_found(name: str, said: str, results: str) -> bool:
    """Whether a dotted name's parts that carry a number were all said or returned: "sha256" of
    ``hashlib.sha256`` (the rest is a library's vocabulary); "sales_2024" of ``sales_2024.csv``
    is then still looked for as it is."""
    if "/" in name or "@" in name or "." not in name:
        return False
    numbered = [part for part in name.split(".") if any(c.isdigit() for c in part)]
    return bool(numbered) and all(_found(part, said, results) for part in numbered)


def _numbers_found(value: str, numbers: Collection[int | float]) -> bool:
    """Whether every number of two digits or more in a text is among ``numbers``, those said or
    returned in any form ("60" for "60s", "100000" for "100k")."""
    wanted = {number_key(float(n)) for n in re.findall(r"(?<![\w.])\d{2,}(?:\.\d+)?(?![\w.])", value[:4_000])}
    return wanted <= set(numbers)


_CODE = re.compile(r"[A-Z]{3,5}")


#: A code with a qualifier after a colon: a ticker and its exchange ("NVDA:NASDAQ"), a namespace and a name.
_QUALIFIED = re.compile(r"([A-Za-z0-9.^_-]{1,16}):([A-Za-z0-9_-]{1,16})")


def _example_qualifier(qualifier: str, schemas: Iterable[dict[str, Any]]) -> bool:
    """Whether a parameter's description shows a value qualified the same way ("e.g. MSFT:NASDAQ")."""
    pattern = re.compile(rf"[A-Za-z0-9.^_-]:{re.escape(qualifier)}\b")
    return any(pattern.search(str(s.get("description", ""))[:1_000]) for s in schemas)


def _abbreviates(value: str, said: str, results: str = "") -> bool:
    """Whether a code of three to five capitals abbreviates a word that was said or returned: its
    letters in order in one longer word with the same first letter ("AAPL" in "apple", "CHI" in
    "chicago", "NVDA" in "nvidia"), or the initials of consecutive words ("NYC" for "new york
    city"). A code the model gives for a named place, company or thing is its canonical form: a
    guess at worst, never a value made up from nothing. Two letters abbreviate too much to tell.
    (``measures.ticker_symbol`` grounds a ticker written with a capitalised company name outright;
    this weaker reading covers any parameter, words in lower case and tool results.)"""
    if not _CODE.fullmatch(value):
        return False
    code = value.lower()
    letters = re.sub(r"(.)\1+", r"\1", code)  # "AAPL": a doubled letter read once
    for text in (said, results):
        words = _words_of(text)
        if any(len(w) > len(letters) and in_order(letters, w) for w in words if w[0] == code[0]):
            return True
        n = len(code)
        if any("".join(w[0] for w in words[i : i + n]) == code for i in range(len(words) - n + 1) if words[i][0] == code[0]):
            return True
        if code.endswith("c") and n >= 3 and any(  # "NYC" for "new york": a city's initials with its C ("a big" is no city)
            "".join(w[0] for w in words[i : i + n - 1]) == code[:-1] and not GRAMMAR_WORDS.intersection(words[i : i + n - 1])
            for i in range(len(words) - n + 2) if words[i][0] == code[0]
        ):
            return True
    return False


def _window_said(value: str, said: str) -> bool:
    """Whether a value is a time window in a tool's relative syntax ("now-1h", "1 week ago", "24h")
    over a unit the user named ("in the past hour", "this week", "since yesterday"): how far back
    to look is the model's reading of the request, as a date computed from it would be."""
    if not said:
        return False
    if value.lower() in ("now", "now()"):  # the end of a window back from now ("the last 30 minutes")
        return bool(set(_words_of(said)) & {"now", "last", "past", "current", "currently", "latest", "recent", "recently"})
    m = _RELATIVE.fullmatch(value)
    if m is None:
        return False
    unit = m[2].lower()
    key = "mo" if unit.startswith("mo") else unit[0]
    words = set(_words_of(said))
    return any(w.startswith(name) for w in words for name in _WINDOW_UNITS[key])


#: A path of two parts or more: "src/utils/text.py", "./docs/index.md", "~/notes/todo.txt".
_PATH = re.compile(r"(?:\.{1,2}/|~/|/)?(?:[\w.-]{1,100}/){1,30}[\w.-]{1,100}/?")


def _path_listed(value: str, said: str, results: str) -> bool:
    """Whether every part of a path was said or returned as a whole word ("src", "utils",
    "text.py" from three directory listings): the path the model joined from them. A tool result
    is needed: a path made of the user's words alone ("notes/ideas.txt" for "my ideas notes") is
    no listing's."""
    if not results or len(value) > 1_000 or not _PATH.fullmatch(value):
        return False
    parts = [p for p in value.strip("/").split("/") if p not in ("", ".", "..", "~")]
    return len(parts) >= 2 and all(_found(p, said, results) for p in parts) and any(_found(p, "", results) for p in parts[-1:])


#: Parts of a path that name no file of the user's: the model's guess of a path built from them is no fact.
_GENERIC_PARTS = frozenset("file files data document documents doc docs folder dir directory path tmp temp home user users new untitled output input my".split())
_EXTENSION = re.compile(r"\.([A-Za-z][A-Za-z0-9]{0,9})$")


def conventional_path(value: str, said: str, results: str) -> bool:
    """Whether a relative path is where a project's conventions put a module or its test that the
    conversation names: every part a folder every project has (``lexicon.PROJECT_FOLDERS``: src,
    tests) or a name said or returned, the file's own name once a test affix is taken off
    ("tests/test_timeparse.py" for gauge_reader/timeparse.py, "src/pgsnap/prune.py" for pgsnap's
    prune command); its extension written in the conversation, or its language named."""
    if len(value) > 300 or not _PATH.fullmatch(value) or value.startswith(("/", "~", ".")) or "\\" in value:
        return False
    parts = value.split("/")
    ext = _EXTENSION.search(parts[-1])
    if len(parts) < 2 or ext is None or not any(p not in PROJECT_FOLDERS for p in parts[:-1]) and len(parts) > 2:
        return False
    for i, part in enumerate(parts):
        if i < len(parts) - 1 and part in PROJECT_FOLDERS:
            continue
        core = part[: ext.start()] if i == len(parts) - 1 else part
        core = TEST_FILE.fullmatch(core)[1] if TEST_FILE.fullmatch(core) else core
        if core.lower() in _GENERIC_PARTS or not _found(core, said, results):
            return False
    return _extension_seen(ext[1].lower(), said, results)


@lru_cache(maxsize=8)  # per extension and conversation: a command names many files of one kind (keys hold the texts)
def _extension_seen(ext: str, said: str, results: str) -> bool:
    """Whether a file with this extension was written in the conversation, or its language named."""
    written = re.compile(rf"\w\.{re.escape(ext)}\b", re.IGNORECASE)
    if written.search(said, 0, 20_000) or written.search(results, 0, 200_000):
        return True
    names = file_languages().get(ext, frozenset())
    return any(f" {normalise_text(name)} " in _normalised(said) or f" {normalise_text(name)} " in _normalised(results) for name in names if name.isalnum())


def _slot_in_named_part(value: str, said: str, results: str, today: date | None = None) -> bool:
    """Whether a date-time falls inside a part of the day the user named ("a free hour tomorrow
    afternoon": 15:00; ``lexicon.DAY_PARTS``, "tonight" an evening) on a day the conversation or a
    tool result gives (its ISO date written there): the slot the model picked, as the user asked
    it to; or, the conversation's date known, on a day said in words ("wednesday evening")."""
    words = set(_words_of(said))
    named = [hours for part, hours in DAY_PARTS.items() if part in words or (part == "evening" and "tonight" in words)]
    parsed = parse_temporal(value) if named and len(value) <= 40 else None  # the words first: parsing costs more
    if parsed is None or parsed.date is None or parsed.time is None:
        return False
    hour = parsed.time.hour + parsed.time.minute / 60
    inside = any(first <= hour <= end for first, end in named)
    day = f" {normalise_text(parsed.date.isoformat())} "  # the haystacks are normalised: "2026 03 13"
    if not inside:
        return False
    if day in _normalised(said) or day in _normalised(results):
        return True
    patterns = temporal_patterns(parsed.date.isoformat(), today) if today is not None else None  # "wednesday evening"
    return patterns is not None and patterns.date is not None and patterns.date.search(_normalised(said)) is not None


def _extends_a_name(value: str, said: str, results: str, kind: set[str] | frozenset[str] = frozenset()) -> bool:
    """Whether a short name (two to five words) holds a name that was said or returned, written
    with a capital, and adds no more words than it shares: a surname, the kind of place ("LeBron
    James" for "LeBron", "JFK Airport Terminal 4" for "JFK terminal 4"). A word of the parameter's
    own name or description (``kind``: "Meeting" for a ``meeting_topic``) names no one."""
    words = re.findall(r"[^\W_]+", value)
    if not 2 <= len(words) <= 5 or len(value) > 80:
        return False
    found = [w for w in words if _found(w, said, results)]
    kinds = {stem(k) for k in kind}
    named = [w for w in found if w[:1].isupper() and len(w) >= 3 and w.lower() not in STOPWORDS and stem(w.lower()) not in kinds]
    return bool(named) and len(words) - len(found) <= len(found)


def _unclipped(value: str, said: str) -> bool:
    """Whether a one-word value is the full form of a word the user clipped: a said word of four
    letters or more that starts it ("tech" for technology, "info" for information, "admin" for
    administrator, "stats" for statistics by its stem "stat"), a stopword never; three letters
    added at least, so that a misspelt name ("Pariss" for Paris) is no full form."""
    word = value.lower()
    if not re.fullmatch(r"[a-z]{5,40}", word):
        return False
    for w in set(_words_of(said)):
        for clip in {w, w[:-1] if w.endswith("s") else w}:
            if len(clip) >= 4 and clip not in STOPWORDS and len(word) >= len(clip) + 3 and word.startswith(clip):
                return True
    return False


@lru_cache(maxsize=8)
def _words_of(text: str) -> tuple[str, ...]:
    """The words of a text, lowercase, in order (cached: every value of a call reads the same text)."""
    return tuple(re.findall(r"[a-z]+", text[:1_000_000].lower()))


def points(value: str) -> bool:
    """Whether a text only points at something ("the same as last time", "that one", "as
    discussed"): words of pointing and grammar, nothing it names."""
    words = re.findall(r"[a-z]+", value.lower())
    return bool(words) and len(words) <= 8 and all(w in _POINTER_WORDS or w in STOPWORDS for w in words)


@lru_cache(maxsize=8)
@lru_cache(maxsize=8)  # the conversation in hand: every fact of every value is looked up in the same few texts
def _normalised(text: str) -> str:
    """A text as the grounding index holds it (casefolded, punctuation to spaces), padded."""
    return f" {normalise_text(text)} " if text else " "


def _literals_said(value: str, said: str, results: str = "", numbers: Collection[int | float] = frozenset()) -> bool:
    """Whether the values a query searches for ("Initech" in ``Account.Name = 'Initech'``, "The
    Killers" in ``artist:The Killers``) were mostly said or returned: half of their content-word
    stems or more, with at least one; the values the syntax defines itself ("is:unread",
    ``lexicon.SEARCH_KEYWORDS``) and windows relative to now ("newer_than:2d") aside."""
    literals = " ".join(
        _year_bound(literal, numbers) for m in _QUERY_LITERALS.finditer(value[:2_000])
        if (literal := next(g for g in m.groups() if g is not None)).lower() not in SEARCH_KEYWORDS and not _RELATIVE_TIME.fullmatch(literal)
    )  # the syntax's own values ("in:inbox", "newer_than:2d") are no one's words
    if not literals.strip() and _QUERY_LITERALS.search(value[:2_000]):
        return True
    own = _stems(literals)
    known = _stems(said) | _stems(results)
    found = {w for w in own if w in known or (w.isdigit() and int(w) in numbers)}
    return bool(own) and 2 * len(found) >= len(own)


_ISO_DAY = re.compile(r"(\d{4})-(\d\d)-(\d\d)(?:[ T]00:00(?::00)?)?")


def _year_bound(literal: str, numbers: Collection[int | float]) -> str:
    """A query's date that bounds a year the user named, as that year: "2023-01-01" and
    "2023-12-31" for "in 2023", and "2024-01-01", the end a half-open range stops before; one
    that bounds a month, as the month and its year ("2024-03-01" and "2024-04-01" for "signups
    in march 2024")."""
    m = _ISO_DAY.fullmatch(literal.strip())
    if m is None:
        return literal
    year, day = int(m[1]), (m[2], m[3])
    if day in (("01", "01"), ("12", "31")) and year in numbers:
        return str(year)
    if day == ("01", "01") and year - 1 in numbers:
        return str(year - 1)
    month = int(m[2])
    if not 1 <= month <= 12:
        return literal
    if int(m[3]) == calendar.monthrange(year, month)[1]:
        return f"{MONTHS[month - 1][0]} {year}"  # "2024-03-31": the end of March 2024
    if m[3] == "01":  # the start of its month, or the end a half-open range of the month before stops at
        before = date(year, month, 1) - timedelta(days=1)
        return f"{MONTHS[before.month - 1][0]} {before.year} {MONTHS[month - 1][0]} {year}"
    return literal


#: Words that say which end of a range a parameter bounds ("max_chars"): what it bounds is named by the others.
_BOUNDS = frozenset({"max", "maximum", "min", "minimum"})


def _number_stated_for(words: set[str], said: str) -> bool:
    """Whether a number is written within two words of one of the parameter's words ("level 5",
    "2 solar masses", "a delay of 200 ms"): then the user stated this value, and one the model
    gives instead (unconverted: grounding already reads unit conversions) contradicts it."""
    heads = [re.escape(w[:4]) for w in words if len(w) >= 3 and w not in STOPWORDS and w not in _BOUNDS]
    if not heads or not said:
        return False
    head = "(?:" + "|".join(heads) + r")\w*"
    near = rf"\b{head}\W+(?:\w+\W+){{0,2}}?\d|\d[\d.,]*\W+(?:[a-z]+\W+){{0,2}}?{head}"
    return re.search(near, said.lower()) is not None


@lru_cache(maxsize=8)  # a few conversations (bodies are capped at 1 MB), not one per call
def _stems(text: str) -> frozenset[str]:
    """Content-word stems of a text, and its numbers of two digits or more (a flight's, an
    order's: "Flight AA 2211" echoes a result that lists flight "AA 2211"); cached, since every
    unstated value of a call reads the same conversation."""
    return frozenset(stem(w) if w[0].isalpha() else w for w in re.findall(r"[a-z]{3,}|\d{2,}", text.lower()) if w not in STOPWORDS)


@lru_cache(maxsize=64)
def _word_stems(text: str) -> frozenset[str]:
    """The stems of every word of three letters or more, grammar words included ("returned" and
    "return rate" share "return", which ``_stems`` leaves out as a tool verb)."""
    return frozenset(stem(w) for w in re.findall(r"[a-z]{3,}", text[:100_000].lower()))


def _replies(value: str, said: str, results: str = "") -> bool:
    """Whether an answer to the user speaks of what was said or returned: at least two of its
    content words (by stem) were, however many words of its own it adds around them."""
    return len(_stems(value) & (_stems(said) | _stems(results))) >= 2


def _widens(value: str, said: str) -> bool:
    """Whether a search's words hold two of the content words said at least, a third of its own:
    the user's words with the ones the model adds to find it."""
    own = _stems(value)
    shared = own & _stems(said)
    return len(shared) >= 2 and 3 * len(shared) >= len(own)


def _echoes(value: str, said: str, results: str = "") -> bool:
    """Whether a summary or question in the model's words says mostly what was said or returned:
    at least half of its content words (by stem) were. A reference to something never said ("that
    one", "the same as last time") or a question the user never asked does not. Each text's stems
    are read once (cached by text), never a joined copy per value."""
    own = _stems(value)
    return bool(own) and 2 * len(own & (_stems(said) | _stems(results))) >= len(own)
