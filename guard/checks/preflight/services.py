"""Services a request names as where to act ("on Kucoin", "via OKX") that no tool mentions."""

from __future__ import annotations

import re

from guard.checks.preflight.reading import _CALENDAR_WORDS, _NEXT_WORD
from guard.checks.preflight.values import _REQUEST_WORDS, NAME
from guard.checks.relevance import stem
from guard.lexicon import STOPWORDS
from guard.models import Finding
from guard.normalise import normalise_text
from guard.taxonomy import Category


#: A service named as where the request is to be done: "on Kucoin", "using Robohash", "via OKX",
#: "use the databases "DrugBank" and ...", "from the NBP service" (after a bare "from" a name is as often what is asked about: "quotes
#: from Breaking Bad").
_PROVIDER = re.compile(
    r"\b(?:on|using|via|through)\s+(?:the\s+)?((?:[A-Z][\w.&'’-]*)(?:\s+(?:[A-Z][\w.&'’-]*))*)"
    r"|\bfrom\s+(?:the\s+)?((?:[A-Z][\w.&'’-]*)(?:\s+(?:[A-Z][\w.&'’-]*))*)(?='s)?\s+(?:API|service|database|website|site|platform|exchange)\b"
    r"|\buse\s+(?:the\s+)?(?:databases?|APIs?|services?|platforms?|websites?|sites?)\s+[\"“']?([A-Z][\w.&'’-]*(?:\s+[A-Z][\w.&'’-]*)*)"
)


def _unmentioned_providers(request: str, known: frozenset[str], params: frozenset[str], values: frozenset[str]) -> list[Finding]:
    """A finding for each service the request names ("the best ask price on Kucoin") that no
    available tool's name or description mentions: embeddings score "Kucoin" close to any
    exchange's API, yet a tool for another exchange cannot serve it. A name that a parameter's
    name follows or ends is a value for it ("using the SRTM dataset", "on Binance Smart Chain"),
    as is one in ``values``: an enum member, or a value the preflight read or rejected."""
    out = []
    for m in _PROVIDER.finditer(request):
        following = _NEXT_WORD.match(request, m.end())
        tail = [*normalise_text(m.group(0)).split()[-1:], *([following.group(1).lower()] if following else [])]
        if any(stem(w) in params for w in tail):
            continue
        if m.group(0).lower().startswith("on") and following and _is_topic_word(request, m.end(), following.group(1)):
            continue  # "articles on AI safety", "news on Tesla earnings": what is asked about, not where
        name = re.split(r"[.'’]\s|'s\b|’s\b", next(g for g in m.groups() if g))[0].rstrip(".'’")
        words = [w for w in normalise_text(name).split() if w not in STOPWORDS]
        if not words or words[0] in _CALENDAR_WORDS or name.split()[0] in ("I", "I'm", "I'd"):
            continue
        if any(stem(w) in known for w in words) or _compact(name) in known or normalise_text(name) in values:
            continue  # a tool's own service, or a value some parameter takes ("on Spotify")
        out.append(
            Finding(
                category=Category.NO_SUITABLE_TOOL,
                check=NAME,
                message=f"the request names {name!r}, which no available tool mentions",
                rule="unmentioned_provider",
                value=name,
                evidence={"provider": name},
            )
        )
    return out


def _is_topic_word(text: str, at: int, word: str) -> bool:
    """Whether the word right after a name ("AI *safety*") makes the name part of a topic: a
    lower-case content word, written straight after it, that is no word of asking or of time."""
    return text[at : at + 1] == " " and word.islower() and word not in STOPWORDS and word not in _REQUEST_WORDS


def _compact(name: str) -> str:
    """A name written together, lower-case: "Met Museum", "MetMuseum" and "met_museum" agree."""
    return re.sub(r"[^a-z0-9]", "", name.lower())
