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

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from guard.checks.relevance import stem
from guard.lexicon import STOPWORDS
from guard.normalise import parse_temporal
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
#: JSON Schema formats of the same kinds.
_CONSEQUENTIAL_FORMATS = frozenset({"email", "idn-email", "uri", "url", "iri", "uri-reference", "uuid", "ipv4", "ipv6", "hostname", "idn-hostname"})

#: Parameter words naming a measure, a count or a rating: a model may derive, convert or estimate it.
_DERIVABLE_WORDS = frozenset(
    """
    size length width height depth weight mass distance duration radius diameter area volume
    speed velocity acceleration temperature pressure energy power force frequency angle delay
    interval rate ratio percentage percent score rating level severity intensity priority scale
    factor threshold growth degree degrees limit page results
    """.split()
)
#: Parameter words naming descriptive text: a summary of what was said, the user's question put
#: to a question-answering or search tool, or a message's subject and body, in the model's words.
_DESCRIPTIVE_WORDS = frozenset(
    """
    description describe details detail summary notes note comment comments reason reasons
    behavior behaviors behaviour behaviours goal goals objective objectives analysis criteria
    feedback preferences preference interests context situation concerns
    question questions query prompt instruction instructions
    subject body message caption text title headline memo term terms keyword keywords
    statement explanation justification narrative purpose label legend
    """.split()
)

#: Parameter words naming a query in a tool's own language (JQL, SOQL, a search syntax): the model
#: writes the syntax, the user gives the values it searches for.
_QUERY_WORDS = frozenset({"query", "q", "jql", "soql", "sql", "cql", "kql", "lucene", "filter", "search", "expression", "where"})
#: Parameter words naming the API's own fields or sort keys: they shape an answer and carry no
#: value of the user's ("fields": ["summary", "status"], "propertyName": "email").
_SELECTOR_WORDS = frozenset({"fields", "properties", "select", "expand", "include", "columns", "attributes", "sort"})
#: The values a query searches for: quoted phrases, and what stands after an operator.
_QUERY_LITERALS = re.compile(r"'([^']{1,200})'|\"([^\"]{1,200})\"|(?:[:=~<>]|\blike\b)\s*([^\s'\")(,]+(?:\s+[A-Z][\w.]*)*)", re.IGNORECASE)

_IDENTIFIER_LIKE = re.compile(r"(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[A-Za-z0-9][\w.:/@#-]{2,}")
_EMAIL_LIKE = re.compile(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")


@dataclass(frozen=True)
class Risk:
    level: Level
    reason: str

    @property
    def confidence(self) -> float:
        return CONFIDENCE[self.level]


def risk_of(name: str, schemas: Iterable[dict[str, Any]], value: Any, said: str = "", results: str = "", parent: str = "") -> Risk:
    """What is at stake if ``value`` for parameter ``name`` (described by ``schemas``) was invented;
    ``said`` is what the user and system said, ``results`` what earlier tools returned (a summary
    or a message must echo them to count as derivable: the e-mail reporting a booking);
    ``parent`` the key of the object the parameter sits in (``order_by`` for ``order_by.column``)."""
    schemas = [s for s in schemas if isinstance(s, dict)]
    words = set(name_words(name).split())
    formats = {str(s.get("format")) for s in schemas if s.get("format")}
    if hit := words & _CONSEQUENTIAL_WORDS:
        return Risk("consequential", f"the parameter names {sorted(hit)[0]!r}: it must be stated or come from a tool result")
    if hit := formats & _CONSEQUENTIAL_FORMATS:
        return Risk("consequential", f"the value is {sorted(hit)[0]!r}: it must be stated or come from a tool result")
    if isinstance(value, str) and (
        _EMAIL_LIKE.fullmatch(value.strip()) or (_IDENTIFIER_LIKE.fullmatch(value.strip()) and parse_temporal(value.strip()) is None)
    ):  # a date or time ("2024-06-16T12:00:00-07:00") is no identifier
        return Risk("consequential", "the value looks like an identifier: it must be stated or come from a tool result")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and words & _DERIVABLE_WORDS:
        if not _number_stated_for(words, said):
            return Risk("derivable", "a measure or rating a model may compute, convert or estimate")
        return Risk("ordinary", "the user stated another number for this parameter; a different one contradicts it")
    if isinstance(value, str) and len(value.split()) >= 2 and words & _DESCRIPTIVE_WORDS and _echoes(value, said, results):
        return Risk("derivable", "descriptive text in the model's words, echoing what was said or returned")
    if isinstance(value, str) and words & _QUERY_WORDS and _literals_said(value, said, results):
        return Risk("derivable", "a query in the tool's own syntax whose values were said or returned")
    selector = words | set(name_words(parent).split()) if words & {"column", "field", "key", "property", "attribute"} else words
    if isinstance(value, str) and len(value) <= 64 and (
        selector & _SELECTOR_WORDS or {"order", "by"} <= selector or {"property", "name"} <= words or {"field", "name"} <= words
    ):  # "fields", "sort_by", "propertyName", "order_by.column"; not "field" ("field of study") nor "property_type"
        return Risk("derivable", "the name of one of the API's own fields: it shapes the answer and carries no user data")
    return Risk("ordinary", "a value the user would normally state")


def _literals_said(value: str, said: str, results: str = "") -> bool:
    """Whether the values a query searches for ("Initech" in ``Account.Name = 'Initech'``, "The
    Killers" in ``artist:The Killers``) were mostly said or returned: half of their content-word
    stems or more, with at least one."""
    literals = " ".join(next(g for g in m.groups() if g is not None) for m in _QUERY_LITERALS.finditer(value[:2_000]))
    own = _stems(literals)
    return bool(own) and 2 * len(own & (_stems(said) | _stems(results))) >= len(own)


def _number_stated_for(words: set[str], said: str) -> bool:
    """Whether a number is written within two words of one of the parameter's words ("level 5",
    "2 solar masses", "a delay of 200 ms"): then the user stated this value, and one the model
    gives instead (unconverted: grounding already reads unit conversions) contradicts it."""
    heads = [re.escape(w[:4]) for w in words if len(w) >= 3 and w not in STOPWORDS]
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


def _echoes(value: str, said: str, results: str = "") -> bool:
    """Whether a summary or question in the model's words says mostly what was said or returned:
    at least half of its content words (by stem) were. A reference to something never said ("that
    one", "the same as last time") or a question the user never asked does not. Each text's stems
    are read once (cached by text), never a joined copy per value."""
    own = _stems(value)
    return bool(own) and 2 * len(own & (_stems(said) | _stems(results))) >= len(own)
