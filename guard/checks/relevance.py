"""Relevance: which registered tool, if any, can serve a request, judged by the words alone.

Before a model proposes anything, the preflight asks whether the tool list can serve the user at
all. This is the lexical baseline: the request's content words, normalised, stop-worded and lightly
stemmed, are looked up in each available tool's words. What a tool *does* is said by its name and
description, so those weigh most; parameter names and descriptions say what it needs and weigh
less. Words that every tool of the registry shares (a common prefix, "data") tell tools apart
poorly, so each word is weighted by its inverse document frequency over the registry.

A tool's score is the share of its own weighted name and description words the request mentions,
blended with the share of the request the tool accounts for: a short request about one tool and a
long request about one topic both score high for the tool they are about. Token profiles are built
once per registry content (``registry.fingerprint``): benchmarks rebuild registries per case and a
live agent keeps one for its lifetime, and both pay the profile cost once.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from guard.lexicon import STOPWORDS, TOOL_VERBS
from guard.normalise import normalise_text
from guard.registry import PerRegistry, ToolRegistry, ToolSpec, name_words
from guard.text import quoted_pattern

#: Weights of where a word occurs in a tool's description.
_NAME, _DESCRIPTION, _PARAM_NAME, _PARAM_DESCRIPTION = 3.0, 2.0, 1.0, 0.5
#: How much of a score comes from covering the tool's own words (the rest: covering the request).
_TOOL_SHARE = 0.5
_STEM_LENGTH = 6


@dataclass(frozen=True)
class ToolScore:
    """One tool's relevance to a request: a score in [0, 1] and the stems both share."""

    name: str
    score: float
    matched: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {"tool": self.name, "score": round(self.score, 3), "matched": list(self.matched)}


#: Endings stripped before cutting a word to its stem, longest first; the minimum stem length left.
_SUFFIXES = (
    ("ations", 4), ("ation", 4), ("ments", 4), ("ment", 4), ("ings", 4), ("ing", 4), ("ions", 4), ("ion", 4),
    ("ies", 3), ("ers", 4), ("er", 4), ("es", 3), ("ed", 4), ("s", 3),
)


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A light stem: one common ending dropped, a final "e" dropped, "z" spelt "s", cut to six letters.

    "schedules", "scheduling" and "scheduler" all become "schedu"; "manage", "manager" and
    "management" become "manag". Crude, but stems are only compared, never shown.
    """
    w = word
    for suffix, keep in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= keep and not (suffix == "s" and w.endswith(("ss", "us", "is"))):
            w = w[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    w = w[:-1] if w.endswith("e") and len(w) > 3 else w
    return w.replace("z", "s")[:_STEM_LENGTH]


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def tokens(text: str) -> list[str]:
    """Content-word stems of a text, in order: camelCase and snake_case split, numbers dropped."""
    words = normalise_text(_CAMEL.sub(" ", text)).split()
    return [stem(w) for w in words if len(w) > 1 and not w.isdigit() and w not in STOPWORDS]


@dataclass(frozen=True)
class _Profile:
    """A tool's stems with the weight of the most telling place each occurs in."""

    name: str
    weights: dict[str, float]
    #: The weighted mass of the name and description stems: what "covering the tool" means.
    core: frozenset[str]


def _profile(spec: ToolSpec) -> _Profile:
    weights: dict[str, float] = {}

    def add(text: str, weight: float) -> None:
        for t in tokens(text):
            weights[t] = max(weights.get(t, 0.0), weight)

    for pname, pschema in _parameters(spec.parameters):
        add(name_words(pname), _PARAM_NAME)
        add(str(pschema.get("description") or ""), _PARAM_DESCRIPTION)
        members = pschema.get("enum")
        if isinstance(members, list):
            add(" ".join(str(m) for m in members if isinstance(m, str)), _PARAM_DESCRIPTION)
    add(spec.description, _DESCRIPTION)
    add(name_words(spec.name), _NAME)
    core = frozenset(tokens(name_words(spec.name)) + tokens(spec.description))
    return _Profile(spec.name, weights, core)


def _parameters(schema: dict[str, object]) -> list[tuple[str, dict[str, object]]]:
    """Every named parameter, nested ones included: their names (and enum members) describe the tool too."""
    found: list[tuple[str, dict[str, object]]] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        props = node.get("properties")
        if isinstance(props, dict):
            for key, sub in props.items():
                if isinstance(sub, dict):
                    found.append((str(key), sub))
                    stack.append(sub)
        items = node.get("items")
        if isinstance(items, dict):
            stack.append(items)
    return found


@dataclass(frozen=True)
class _Index:
    """An inverted index over a registry's profiles: stem -> (tool position, core weight, weight)."""

    names: tuple[str, ...]
    core_mass: tuple[float, ...]
    postings: dict[str, tuple[tuple[int, float, float], ...]]


def _build_index(registry: ToolRegistry) -> _Index:
    profiles = [_profile(s) for s in registry if s.enabled]
    df = Counter(t for p in profiles for t in p.weights)
    n = len(profiles)
    # A smoothed IDF that stays positive when every tool shares a word (and for one-tool registries).
    idf = {t: math.log(1 + (n + 1) / c) for t, c in df.items()}
    postings: dict[str, list[tuple[int, float, float]]] = {}
    for i, p in enumerate(profiles):
        for t, w in p.weights.items():
            postings.setdefault(t, []).append((i, w * idf[t] if t in p.core else 0.0, w / _NAME))
    index = _Index(
        names=tuple(p.name for p in profiles),
        core_mass=tuple(sum(p.weights[t] * idf[t] for t in p.core) or 1.0 for p in profiles),
        postings={t: tuple(v) for t, v in postings.items()},
    )
    return index


_index = PerRegistry(_build_index)


def lexical_index(registry: ToolRegistry) -> None:
    """Build the registry's index now (once per tool set), so that no decision pays for it."""
    _index(registry)


def rank_tools(request: str, registry: ToolRegistry) -> list[ToolScore]:
    """Every available tool scored against the request, best first (ties keep registry order)."""
    index = _index(registry)
    asked = set(tokens(request))
    n = len(index.names)
    core_hit, asked_hit = [0.0] * n, [0.0] * n
    matched: list[list[str]] = [[] for _ in range(n)]
    for t in asked:
        for i, core_weight, weight in index.postings.get(t, ()):
            core_hit[i] += core_weight
            asked_hit[i] += weight
            matched[i].append(t)
    scores = [
        ToolScore(
            name,
            _TOOL_SHARE * min(1.0, core_hit[i] / index.core_mass[i])
            + (1 - _TOOL_SHARE) * min(1.0, asked_hit[i] / len(asked) if asked else 0.0),
            tuple(sorted(matched[i])),
        )
        for i, name in enumerate(index.names)
    ]
    scores.sort(key=lambda s: -s.score)
    return scores


# --- sub-requests ------------------------------------------------------------------------------

#: Verbs that start a part of their own after a comma or a colon ("..., turn off the lights";
#: "goodnight mode: lock every door"): the verbs of tools that act (``guard.lexicon.TOOL_VERBS``)
#: but those as often a noun, an adjective or a participle after a comma ("close to the station",
#: "set for 7pm", "Mark and I", "the new one", "start date").
_NOT_AFTER_A_COMMA = frozenset("new make set close start stop mark clear drop delay push change bump ack scale generate open place file "
                               "record log post draft ship snapshot backup".split())
_PART_VERBS = "|".join(sorted(
    (TOOL_VERBS["create"] | TOOL_VERBS["update"] | TOOL_VERBS["delete"] | TOOL_VERBS["act"]) - _NOT_AFTER_A_COMMA
    | {"book", "email", "e-mail", "order", "post", "share", "transfer", "save", "notify", "remind", "translate", "convert", "calculate"},
    key=lambda v: (-len(v), v),
))
#: Where a request splits into parts: a sentence end (not an abbreviation's: "U.S.", "Dr."),
#: ";", a line break, "then", "also", "additionally", and "and" before a new verb or question.
_REQUEST_SPLIT = re.compile(
    r"(?<=(?-i:[a-z0-9)\]'\"’”])[.!?])(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bSt\.)(?<!\bvs\.)(?<!\betc\.)\s+(?=[A-Z\"'‘“])"
    r"|(?<=[?!])\s+|;\s*|\n+"
    r"|,?\s+\b(?:and then|and also|then|also|as well as|in addition|additionally)\b,?\s+"
    r"|,?\s+\band\b\s+(?=(?:can|could|would|will|please|i|tell|show|give|find|get|list|provide|search|check|create|"
    r"generate|send|book|convert|translate|calculate|fetch|retrieve|look|what|how|which|who|where|when|"
    r"email|e-mail|text|message|notify|remind|reserve|schedule|order|buy|pay|transfer|post|share|save|add|put|set|"
    r"update|delete|remove|cancel|play|open|call)\b)"
    rf"|(?:,|:)\s+(?=(?:then\s+)?(?:{_PART_VERBS})\b)",
    re.IGNORECASE,
)
#: A part that acts on what an earlier part found ("add them all to my shopping list", "email it
#: to Sam") is a step of its own, though it points back.
_ACTS_ON_IT = re.compile(
    r"^(?:then\s+|and\s+|please\s+)*(?:book|reserve|email|e-mail|send|schedule|order|buy|pay|transfer|post|share|save|add|"
    r"update|delete|remove|cancel|notify|remind|translate)\b",
    re.IGNORECASE,
)
#: A part that points back at an earlier one ("sort them by name", "summaries of these papers")
#: belongs to it.
_ANAPHORA = re.compile(r"\b(?:them|it|its|those|these|both|the results?|each of|that (?:day|one|date|list))\b", re.IGNORECASE)


def _content_words(text: str) -> list[str]:
    return [w for w in normalise_text(text).split() if w not in STOPWORDS and len(w) > 1 and not w.isdigit()]


def _split_outside_quotes(request: str) -> list[str]:
    """``_REQUEST_SPLIT`` applied where no quoted phrase is cut: a user agent in quotes
    ('Mozilla/5.0 (Windows NT 10.0; Win64)') or a quoted sentence is one value, not two parts."""
    starts, ends = [], []
    for m in _QUOTED.finditer(request):
        starts.append(m.start())
        ends.append(m.end())
    pieces, start = [], 0
    for m in _REQUEST_SPLIT.finditer(request):
        i = bisect_left(starts, m.start()) - 1  # the last quoted phrase opened before the split
        if i >= 0 and m.start() < ends[i]:
            continue
        pieces.append(request[start : m.start()])
        start = m.end()
    pieces.append(request[start:])
    return pieces


_QUOTED = quoted_pattern(200)


def next_part(text: str) -> int:
    """Where the next part of a request starts in ``text`` (``_REQUEST_SPLIT``), or its length."""
    m = _REQUEST_SPLIT.search(text[:4_000])
    return m.start() if m else len(text)


def split_request(request: str, min_words: int = 2) -> list[str]:
    """The parts of a request that each ask for something: split on sentence ends, ";", "then",
    "also", "and" before a new verb or question, and a comma before an action verb ("..., book
    the first one"); a part with fewer than ``min_words`` content words, or one that points back
    ("sort them by name"), joins the part before it."""
    parts = [p.strip(" ,.?!") for p in _split_outside_quotes(request) if p and p.strip(" ,.?!")]
    out: list[str] = []
    for part in parts:
        if out and (len(_content_words(part)) < min_words or (_ANAPHORA.search(part) and not _ACTS_ON_IT.match(part))):
            out[-1] = f"{out[-1]}, {part}"
        else:
            out.append(part)
    if len(out) > 1 and len(_content_words(out[0])) < min_words:
        out[1] = f"{out[0]}, {out[1]}"
        out.pop(0)
    return out
