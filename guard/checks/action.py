"""Action mismatch: the model calls a tool that changes data in another way than the user asked.

``QueryHealthData`` and ``RecordHealthData``, ``addMenuItem`` and ``updateMenuItem``,
``ModifyRegistration`` and ``CancelRegistration`` share every word but one, so their descriptions
embed close together and a lexical ranking barely tells them apart; yet calling one for the other
adds what should have been changed, cancels what should have been moved, or changes records the
user only wanted to see. The verb is what differs, and it is plain in both the tool's name and the
user's words ("I want to record my blood pressure", "move my appointment to Friday").

Actions come in four kinds: read, create, update, delete. The check fires only when all of these
hold, so that a request that does several things, or a tool with no sibling, raises nothing:

- the called tool's name holds a verb that changes data (create, update or delete);
- the user's latest request (or, when it has no such verb, everything the user said) asks for one
  kind of action only, and another one;
- another available tool does the asked kind to the same object (its name, without the verbs,
  shares at least half the words of the shorter of the two): the tool the model should probably
  have called, unless it already ran since the user asked (that part of the request is done).

A tool that reads is never flagged: agents read before they change ("find the alarm, then delete
it"), so a read is no evidence of a wrong choice.
"""

from __future__ import annotations

import re

from guard.checks import CheckContext
from guard.checks.relevance import stem
from guard.lexicon import NOUN_LIKE_VERBS, TOOL_VERBS
from guard.models import Finding
from guard.registry import name_words, shared_first_word, ToolSpec
from guard.taxonomy import Category

NAME = "action"


def _stems(words: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words.split())


#: Verbs of each kind of action, as they start a tool's name or stand in a request.
#: ("act": sending, paying, stopping: a request that asks for one of them asks for more than a
#: read, though no tool of that kind is ever flagged here.)
_KINDS: dict[str, frozenset[str]] = {kind: _stems(" ".join(sorted(TOOL_VERBS[kind]))) for kind in ("read", "create", "update", "delete")}
_KINDS["act"] = _stems(" ".join(sorted(TOOL_VERBS["act"] - NOUN_LIKE_VERBS)))
#: Verbs of the "act" kind as often nouns ("the upload", "my order"): a verb only where a clause
#: starts or after "and", "then", "please".
_NOUN_LIKE_ACTS = frozenset(TOOL_VERBS["act"] & NOUN_LIKE_VERBS)
_BEFORE_A_VERB = frozenset({"and", "then", "please", "also", "pls", "plz", "yes", "yep", "yeah", "ok", "okay", "sure"})
#: Words that say a request reads without a verb of its own ("what is", "how many").
_QUESTION_WORDS = "what which how when where whether tell"
_QUESTIONS = _stems(_QUESTION_WORDS)
_QUESTION_WORD_SET = frozenset(_QUESTION_WORDS.split()) | {"who", "whom", "whose", "of", "about"}
_CHANGES = ("create", "update", "delete")
_WORD = re.compile(r"[a-z]+")


def check(ctx: CheckContext) -> list[Finding]:
    if ctx.spec is None:
        return []
    mine = kind_of_tool(ctx.spec)
    if mine not in _CHANGES:
        return []  # reading before changing is how agents work
    latest = ctx.conversation.latest_request
    if _CONFIRMATION.match(latest) or ((yes := _YES_AND.match(latest)) and not asked_kinds(latest[yes.end() :]) and _proposed(ctx)):
        return []  # "yes, go ahead", "Yes, charge it to the gift card": the user approved the step the assistant proposed
    asked = _asked(ctx)
    if len(asked) != 1 or mine in asked:
        return []
    (wanted,) = asked
    sibling = _sibling(ctx, wanted)
    if sibling is None or sibling.name in ctx.conversation.called_since(ctx.conversation.last_user_index):
        return []  # none, or it ran since the user asked: that part is done ("block it and send a new one")
    return [
        Finding(
            category=Category.SUSPICIOUS_TOOL_SELECTION,
            check=NAME,
            message=f"the user asks to {wanted} but {ctx.call.name!r} would {mine}; {sibling.name!r} would {wanted}",
            tool=ctx.call.name,
            rule="action_mismatch",
            evidence={"better": sibling.name, "asked": wanted, "tool_does": mine},
        )
    ]


def _verb_kind(word: str) -> str | None:
    s = stem(word)
    return next((kind for kind, verbs in _KINDS.items() if s in verbs), None)


#: Every verb of ``lexicon.TOOL_VERBS`` as written.
_VERB_WORDS = frozenset().union(*TOOL_VERBS.values())


def kind_of_tool(spec: ToolSpec) -> str | None:
    """The kind of the first verb in the tool's name ("branding_updatePressRelease": update); a
    verb as often a noun (``lexicon.NOUN_LIKE_VERBS``) before a plain verb among the first four
    words is the object ("post_search": read, "order_status_get": read)."""
    words = name_words(spec.name).split()[:8]
    kinds = [(w, _verb_kind(w)) for w in words]
    first = next((i for i, (_, k) in enumerate(kinds) if k), None)
    if first is None:
        return None
    if words[first] in NOUN_LIKE_VERBS:  # a plain verb as written, not a noun made from one ("book_reservation": book)
        later = next((k for w, k in kinds[first + 1 : 4] if k and w in _VERB_WORDS and w not in NOUN_LIKE_VERBS), None)
        if later is not None:
            return later
    return kinds[first][1]


#: A reply that approves what the assistant proposed ("yes go ahead", "ok, do it", "sure").
_CONFIRMATION = re.compile(
    r"^\W*(?:yes|yeah|yep|yup|ok|okay|sure|sounds good|go ahead|do it|please do|confirm(?:ed)?|perfect|great)\b"
    r"[\s,.!]*(?:(?:please|go ahead|do it|book it|thanks|thank you|that works|sounds good)[\s,.!]*)*$",
    re.IGNORECASE,
)
#: A reply that approves and adds a detail ("Yes, charge it to the gift card."): an approval when
#: the detail asks for no other change.
_YES_AND = re.compile(r"^\W*(?:yes|yeah|yep|yup|ok|okay|sure|confirm(?:ed)?)\b[\s,.!-]+", re.IGNORECASE)
#: An assistant's message that proposes a step and asks for the go-ahead.
_ASKS_TO_PROCEED = re.compile(
    r"\b(?:confirm|proceed|go ahead|yes/no|yes or no|shall i|should i|do you want me to|would you like me to|ok to)\b", re.IGNORECASE
)


def _proposed(ctx: CheckContext) -> bool:
    """Whether the assistant's last words before the user's reply asked to go ahead with a step."""
    messages = ctx.conversation.messages
    for m in reversed(messages[: ctx.conversation.last_user_index]):
        if m.role == "assistant" and m.content:
            return bool(_ASKS_TO_PROCEED.search(m.content[-1_000:]))
        if m.role == "user":
            return False
    return False


#: Putting something on a calendar, a list or in a cart adds an entry to it.
_PUT_ON = re.compile(r"(?<!the )(?<!a )\bput\s+(?:\w+\s+){0,4}?(?:on|in|into|onto)\s+(?:the|my|our|your|her|his|their)\s+(?:\w+\s+)?(?:calendar|schedule|agenda|diary|list|cart|basket|planner)\b", re.IGNORECASE)
#: Something put into a new thing: "pull the numbers into a new sheet", "save it as a new draft".
_INTO_NEW = re.compile(r"\b(?:into|in|to|as|on)\s+a\s+(?:brand\s+)?new\s+\w+", re.IGNORECASE)
#: Words after which a verb-like word is a noun ("her customer record", "the update", "my schedule").
_DETERMINERS = frozenset("the a an my your his her its our their this that these those each every some any".split())
#: "can I get", "could we get": a request to have something (a table, a court, a refund) as often as to see it.
_MODALS = frozenset({"can", "could", "may"})
#: "make" creates only what it makes new ("make a playlist"); "make it urgent" changes something.
_MAKES_NEW = frozenset({"a", "an", "new", "me", "us"})
#: "make it 5", "make that a table for six": what is there, changed ("make it to the station" arrives).
_MAKES_OTHER = frozenset({"it", "that", "this", "them", "those"})
#: "file a bug", "open a ticket" make one; "file the invoice", "open the report" act on what is there.
_FILES_NEW = frozenset({"a", "an", "new"})


def asked_kinds(text: str, questions: bool = True) -> set[str]:
    """The kinds of action a request asks for (read, create, update, delete, act): "what's on my
    calendar tomorrow?" reads, "add Pad Thai to the menu" creates; a question asks to read only
    with ``questions`` (an earlier topic's question asks nothing of a later request)."""
    kinds = set()
    words: list[str] = []
    for clause in _CLAUSE.split(text.lower()):
        said = _WORD.findall(clause)
        words += said
        for i, w in enumerate(said):
            kind = _verb_kind(w) if not w.endswith("ing") else None  # "invoices showing the wrong rate" asks nothing
            if w in ("file", "open") and i + 1 < len(said) and said[i + 1] in _FILES_NEW:
                kinds.add("create")  # "file a bug", "can you open a ticket": a new one, as "create" makes it
                continue
            if w == "check" and said[i + 1 : i + 2] in (["in"], ["out"]):
                continue  # "we'll check in around 11pm": arriving at a hotel or a gate, not looking something up
            if kind is None and w in _NOUN_LIKE_ACTS and (i == 0 or said[i - 1] in _BEFORE_A_VERB):
                kind = "act"  # "... and upload them as unreviewed", "please order more": a verb where a clause starts
            if w == "remind" and said[i + 1 : i + 2] in (["me"], ["us"], ["him"], ["her"], ["them"]) and said[i + 2 : i + 3] != [] and said[i + 2] not in _QUESTION_WORD_SET:
                kind = "create"  # "remind me to call mum at 7": a reminder made; "remind me what it was" asks to read
            if kind is None or _DETERMINERS & set(said[max(0, i - 2) : i]):
                continue  # a noun after "the", "her customer": no request to act
            if w == "make" and i + 1 < len(said) and said[i + 1] in _MAKES_OTHER and said[i + 2 : i + 3] != ["to"] and "new" not in said[i + 2 :]:
                kinds.add("update")  # "can you make it 5?", "make it urgent": the thing there, changed
                continue
            if w == "make" and (i + 1 >= len(said) or said[i + 1] not in _MAKES_NEW):
                continue
            if w == "set" and "up" in said[i + 1 : i + 4]:
                kind = "create"  # "set up lunch with Maya", "set me up a budget": arranges a new one
            if w == "get" and i >= 2 and said[i - 2] in _MODALS and said[i - 1] in ("i", "we"):
                continue  # "can i get court 2 tomorrow at 9": asks to have it, as often as to see it
            kinds.add(kind)
    if _PUT_ON.search(text) or _INTO_NEW.search(text):
        kinds.add("create")  # "put it on the calendar", "pull it into a new sheet": an entry or a thing added
    if questions and not kinds and _QUESTION.search(text) and {stem(w) for w in words} & _QUESTIONS:
        kinds.add("read")  # "what is ...?", "how many ...": not "it crashes when exporting"
    return kinds


_CLAUSE = re.compile(r"[,;:.!?()\n]+")
#: A question: a question mark, or a question word where a clause starts.
_QUESTION = re.compile(r"\?|(?:^|[,;:.!\n])\W*(?:(?:and|so|also|but|then|ok|okay|now)\s+)?(?:" + _QUESTION_WORDS.replace(" ", "|") + r")\b", re.IGNORECASE)


def _asked(ctx: CheckContext) -> set[str]:
    """The kinds of action the user asks for: in the latest request, else in all they said. An
    earlier question asks to read only when the latest message answers the assistant's question
    (the request goes on: "which scene?" "Morning Routine"); after an answer, it was another
    topic ("how long do I rest a steak?" then "oh btw remind me to call mum at 7")."""
    latest = asked_kinds(ctx.conversation.latest_request)
    if latest:
        return latest
    said = " ".join(m.content for m in ctx.conversation.messages if m.role == "user")
    return asked_kinds(said, questions=_assistant_asked(ctx))


def _assistant_asked(ctx: CheckContext) -> bool:
    """Whether the assistant's last words before the user's latest message asked a question."""
    for m in reversed(ctx.conversation.messages[: ctx.conversation.last_user_index]):
        if m.role == "assistant" and m.content:
            return "?" in m.content[-300:]
        if m.role == "user":
            return False
    return False


def _object_words(spec: ToolSpec, shared: frozenset[str] = frozenset()) -> set[str]:
    # a word of the "act" kind names the object here ("create_refund": the refund)
    return {s for w in name_words(spec.name).split() if len(w) > 2 and _verb_kind(w) in (None, "act") and (s := stem(w)) not in shared}


def _service_words(ctx: CheckContext) -> frozenset[str]:
    """The first name word every available tool starts with when it is no verb: the service's
    prefix ("stripe_create_refund", "stripe_update_customer"), which names no object."""
    first = shared_first_word(ctx.registry.available_names)
    return frozenset({stem(first)}) if first and _verb_kind(first) is None else frozenset()


def _sibling(ctx: CheckContext, wanted: str) -> ToolSpec | None:
    """Another available tool that does ``wanted`` to the called tool's object."""
    assert ctx.spec is not None
    shared = _service_words(ctx)
    target = _object_words(ctx.spec, shared)
    if not target:
        return None
    for name in ctx.registry.available_names:
        other = ctx.registry.get(name)
        if other is None or other.name == ctx.spec.name or kind_of_tool(other) != wanted:
            continue
        theirs = _object_words(other, shared)
        if theirs and len(target & theirs) * 2 >= min(len(target), len(theirs)):
            return other
    return None
