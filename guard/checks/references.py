"""References to information the conversation never states.

Users ask for things they have not said: "a trivia fact about my favorite number", "the year Larry
requested", "the topic discussed in our meeting", "details about a specific title". A tool call
built from such a request can only be filled with an invented value, and the parameter it would go
to may well be optional (a search with no query still runs, on the wrong thing). So the preflight
asks about the reference itself, whichever parameter it is for: the user knows what they meant.

A reference is unresolved when no value follows it in its clause (a quoted phrase, a number, a code,
a proper name, "such as ...", a parenthesis): "a specific artwork (ID 1)" is resolved, "a specific
artwork" is not. Three shapes are recognised, each a phrase people write when they point at
something outside the conversation:

- an indefinite pick: "a specific / certain / particular X";
- a possession only the user knows: "my favorite X", "my local X", "my latitude";
- a pointer to another conversation: "the X (that) Larry requested", "discussed in our meeting",
  "mentioned earlier" (when nothing earlier in this conversation said it);
- with the tool known, a parameter named only by its kind: "made with an ingredient", "using its
  barcode" (``indefinite``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from guard.checks.relevance import next_part

#: "a specific title", "a certain breed of dog", "some particular city".
_PICK = re.compile(r"\b(?:a|an|some|one)\s+(?:specific|certain|particular|given)\s+((?:[\w-]+\s+){0,2}?[\w-]+)", re.IGNORECASE)
#: "my favorite number", "my local field office", "my latitude and longitude", "my research interest".
_MINE = re.compile(
    r"\bmy\s+(?:(?:favou?rite|preferred|usual|chosen|local|own|desired)\s+((?:[\w-]+\s+){0,1}?[\w-]+)"
    r"|(latitude|longitude|coordinates|location|address|zip(?:\s?code)?|postal code|(?:[\w-]+\s+)?interests?|(?:[\w-]+\s+)?standards|criteria"
    r"|(?:[\w-]+\s+)?(?:area|field|topic|subject)))\b",
    re.IGNORECASE,
)
#: What only the user can say, whichever parameter it fills: "my research area", "my standards".
_PERSONAL_TOPIC = re.compile(r"\b(?:interests?|standards|criteria|area|field|topic|subject)$", re.IGNORECASE)
#: "the year larry requested", "the word discussed in Chinese class", "the topic mentioned earlier".
_ELSEWHERE = re.compile(
    r"\bthe\s+((?:[\w-]+\s+){0,2}?[\w-]+)\s+(?:that\s+|which\s+)?(?:(?:i|we|you|he|she|they|[a-z]+|my\s+\w+|our\s+\w+|the\s+\w+)\s+)?"
    r"(?:requested|discussed|mentioned|talked about|asked (?:for|about)|chose|picked|recommended|suggested|told me about"
    r"|work|live|stayed|visited|grew up)\b",
    re.IGNORECASE,
)
#: What resolves a reference when it follows closely: a quoted phrase, a parenthesis, a number,
#: an example, or a name introduced as one ("called Nova").
_VALUE_AFTER = re.compile(r"""['"‘“(\d=]|\b(?:such as|e\.g\.|for example|like|called|named|titled)\b""", re.IGNORECASE)
#: How far after a reference its value may follow ("a specific latitude and longitude lat=48.3",
#: "a specific legal document from the Federal Register with the document number 2021-12345"),
#: within its part of the request (``relevance.next_part``: "also", "then", "and" before a new
#: verb start another request, whose values are its own).
_WINDOW_WORDS = 12
_SENTENCE_END = re.compile(r"[.?!;](?:\s|$)")


@dataclass(frozen=True)
class Reference:
    """An unresolved reference: the words as written, and the thing they point at."""

    text: str
    noun: str
    #: "my X": only the user knows it, but a tool may look it up itself (my IP address): it
    #: matters only where a parameter asks for it. False for what defines the request itself
    #: ("my research area", "my ethical standards").
    possessive: bool = False


def unresolved(text: str, earlier: bool = False) -> list[Reference]:
    """Every reference in ``text`` to a value the text does not give. ``earlier``: whether the
    user spoke before, where "the one I mentioned" may have been said (then it is not asked about)."""
    found: list[Reference] = []
    for pattern in (_PICK, _MINE) if earlier else (_PICK, _MINE, _ELSEWHERE):
        for m in pattern.finditer(text):
            noun = next((g for g in m.groups() if g), "").strip()
            if not noun or _resolved(text, m.end()):
                continue
            found.append(Reference(m.group(0).strip(), noun, pattern is _MINE and not _PERSONAL_TOPIC.search(noun)))
    return found


#: "an ingredient", "its barcode", "a UUID", "some specific URL": a thing named only by its kind.
_INDEFINITE = re.compile(r"\b(?:a|an|its|their|some|any)\s+(?:([\w-]+)\s+)?([\w-]+)", re.IGNORECASE)


def indefinite(text: str, is_parameter: Callable[[str], bool]) -> list[Reference]:
    """References that name a parameter's kind of value without giving one: "cocktails made with
    an ingredient", "a product using its barcode", "decode a UUID". ``is_parameter`` says whether
    a word names a parameter the request's tool takes (and has no value for)."""
    found = []
    for m in _INDEFINITE.finditer(text):
        noun = next((w for w in (m.group(1), m.group(2)) if w and is_parameter(w)), None)
        if noun is None or _resolved(text, m.end()):
            continue
        found.append(Reference(m.group(0).strip(), noun))
    return found


def _resolved(text: str, end: int) -> bool:
    """Whether a value follows the reference closely, within its sentence and its part of the
    request."""
    rest = text[end:]
    stop = _SENTENCE_END.search(rest)
    rest = rest[: stop.start()] if stop else rest
    window = " ".join(rest[: next_part(rest)].split()[:_WINDOW_WORDS])
    return bool(_VALUE_AFTER.search(window))
