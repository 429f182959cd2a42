"""Text shapes the checks share: the one way a quoted phrase is read, and the one reading of a
site named by its homepage ("GitHub's homepage").

A phrase in double quotes, curly quotes, backticks or single quotes; a single-quoted one must stand
on its own (an apostrophe inside a word opens nothing: "don't") and may be followed by a
possessive "s" ("the user 'john_doe's playlist"). Each check says how long a phrase it reads.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from functools import lru_cache

from guard.lexicon import STOPWORDS


@lru_cache(maxsize=8)
def quoted_pattern(max_chars: int) -> re.Pattern[str]:
    """Quoted phrases of 1 to ``max_chars`` characters on one line; the phrase is the one group
    that matched (``quoted_text``)."""
    n = int(max_chars)
    return re.compile(
        rf"\"([^\"\n]{{1,{n}}})\"|“([^”\n]{{1,{n}}})”|(?<![\w'])'([^'\n]{{1,{n}}})'(?![\w])"
        rf"|(?<![\w'])'([^'\n]{{1,{n}}})'(?=s\b)|`([^`\n]{{1,{n}}})`"
    )


def quoted_text(match: re.Match[str]) -> str:
    """The phrase a ``quoted_pattern`` match read, without its quotes."""
    return next(g for g in match.groups() if g is not None)


#: A site named by its homepage: "the homepage of GitHub", "GitHub's homepage", "the BBC website".
#: The name is one to three capitalised words; the site's address is the model's to write.
_NAME = r"([A-Z][\w.&-]{1,30}(?:\s+[A-Z][\w.&-]{1,30}){0,2})"
_SITE = r"(?:home\s?page|web\s?site|web\s?page|main\s+page|landing\s+page)"
_NAMED_SITE = re.compile(rf"\b(?:the\s+)?{_SITE}\s+(?:of|for)\s+(?:the\s+)?{_NAME}|\b{_NAME}(?:['’]s)?\s+{_SITE}\b")


@lru_cache(maxsize=256)  # the preflight and the derivations read the same messages
def named_sites(text: str) -> tuple[tuple[int, str], ...]:
    """The sites a text names by their homepage, as (where the name starts, the name): "GitHub"
    in "a screenshot of GitHub's homepage". Read in the first 4,096 characters."""
    found = []
    for m in _NAMED_SITE.finditer(text[:4_096]):
        group = 1 if m.group(1) else 2
        if not all(w.lower() in STOPWORDS for w in m.group(group).split()):  # "The homepage loads slowly"
            found.append((m.start(group), m.group(group)))
    return tuple(found)


#: Where a tool description's sentences end: after a full stop, a question mark or a colon, even
#: with no space before the next ("you can use this tool.The description of this function is:").
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s*(?=[\"'“]?[A-Z])|\n+")
_QUOTED_NAME = re.compile(r"\"[^\"\n]{0,60}\"|'[^'\n]{0,60}'|“[^”\n]{0,60}”")
#: How much of a description is read for its sentences, and how many sentences.
_DESCRIPTION_CHARS = 2_000
_DESCRIPTION_SENTENCES = 24


def _sentences(description: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(description[:_DESCRIPTION_CHARS], _DESCRIPTION_SENTENCES) if s.strip()]


def _sentence_key(sentence: str) -> str:
    return " ".join(_QUOTED_NAME.sub("Q", sentence).lower().split()).rstrip(".:!? ")


def boilerplate(descriptions: tuple[str, ...]) -> frozenset[str]:
    """The sentences a tool catalogue repeats in its descriptions ("This is the subfunction for
    tool "shazam", you can use this tool.", "This tool belongs to the Gorilla file system."):
    those in at least two descriptions and a third of them, compared with quoted names masked.
    They say which API a tool belongs to, not what it does."""
    if len(descriptions) < 3:
        return frozenset()
    counts: dict[str, int] = {}
    for description in descriptions:
        for key in {_sentence_key(s) for s in _sentences(description)}:
            counts[key] = counts.get(key, 0) + 1
    floor = max(2, len(descriptions) / 3)
    return frozenset(key for key, n in counts.items() if n >= floor and len(key.split()) >= 2 and key != "q")


def without_boilerplate(description: str, shared: frozenset[str]) -> str:
    """A description less the sentences its catalogue repeats (``boilerplate``); the description
    itself when every sentence is one."""
    if not shared:
        return description
    kept = [s for s in _sentences(description) if _sentence_key(s) not in shared]
    return " ".join(s.strip() for s in kept) if kept else description


#: A token a description quotes as a value the parameter takes: 'yesterday', "NdaysAgo", `latest`.
QUOTED_TOKEN = re.compile(r"""['"`]([A-Za-z0-9_:.+-]{1,40})['"`]""")


#: What separates the items of a list a description gives ("relative: today, yesterday, NdaysAgo").
_LIST_BREAK = re.compile(r"\s*(?:[,;:()|/]|\bor\b)\s*")
_LIST_TOKEN = re.compile(r"[A-Za-z0-9_]{1,40}")


def listed_tokens(description: str) -> Iterator[str]:
    """The tokens a description lists unquoted, three or more single words in a row between
    commas, "or" and colons ("YYYY-MM-DD or relative: today, yesterday, NdaysAgo" lists relative,
    today, yesterday and NdaysAgo; "the meeting's date, today or later" lists nothing)."""
    run: list[str] = []
    for item in [*_LIST_BREAK.split(description[:600]), ""]:
        if _LIST_TOKEN.fullmatch(item):
            run.append(item)
            continue
        if len(run) >= 3:
            yield from run
        run = []


def described_literal(value: str, description: str) -> tuple[str, str | None] | None:
    """Whether a description quotes ``value`` as a form the parameter takes, or lists it among
    others (``listed_tokens``): the token itself ('yesterday'), or a template whose capital N
    stands for a number ('NdaysAgo' for "7daysAgo"). The token, and the number the value puts for
    N (None for a token taken as it is)."""
    quoted = (m[1] for m in itertools.islice(QUOTED_TOKEN.finditer(description[:2_000]), 32))
    for token in itertools.chain(quoted, listed_tokens(description)):
        if token == value:
            return token, None
        if "N" in token and token != "N" and (found := re.fullmatch(re.escape(token).replace("N", r"(\d{1,6})", 1), value)):
            return token, found[1]
    return None
