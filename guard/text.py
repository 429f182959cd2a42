"""Text shapes the checks share: the one way a quoted phrase is read.

A phrase in double quotes, curly quotes, backticks or single quotes; a single-quoted one must stand
on its own (an apostrophe inside a word opens nothing: "don't") and may be followed by a
possessive "s" ("the user 'john_doe's playlist"). Each check says how long a phrase it reads.
"""

from __future__ import annotations

import re
from functools import lru_cache


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
