"""``SemanticGuard.match``: values said in other words are grounded, with the span; others are not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.semantic._support import require, tool

require()

from guard.conversation import Conversation
from guard.semantic import SemanticGuard, clauses
from guard.engine import Guard
from guard.taxonomy import Action, Category


def conv(*messages: tuple[str, str]) -> Conversation:
    return Conversation.from_messages([{"role": r, "content": c} for r, c in messages])


CHAT = conv(
    ("system", "You are a helpful assistant."),
    ("user", "Hi! Tomorrow I have a lot to do. Please remind me about picking up my dry cleaning."),
)


def test_a_paraphrase_is_grounded_with_the_span_named(semantic: Any) -> None:
    match = semantic.match("Pick up dry cleaning", "content", "What to be reminded of", CHAT)
    assert match is not None
    assert match.source == "user" and match.message_index == 1
    assert "dry cleaning" in match.span and "picking" in match.span
    assert semantic.min_span_similarity <= match.score < 1.0


@pytest.mark.parametrize(
    "value",
    [
        "quarterly tax filing",  # unrelated
        "Friday",  # a co-hyponym of a day that was said
        "Jane Smith",  # a name nobody said
        "2024-05-01",  # dates and numbers are never judged by embeddings
        "SM1234",  # nor identifiers
    ],
)
def test_what_was_not_said_is_not_grounded(semantic: Any, value: str) -> None:
    chat = conv(("user", "My colleague Sarah Johnson wants the report on Thursday; remind me about my dry cleaning."))
    assert semantic.match(value, "value", "", chat) is None


def test_inflections_but_not_relatives(semantic: Any) -> None:
    chat = conv(("user", "My baby has been feeling nauseous since last night; her grandfather noticed it first."))
    found = semantic.match("nausea", "symptom", "", chat)
    assert found is not None and "nauseous" in found.span
    assert semantic.match("grandchild", "relationship", "", chat) is None


def test_language_codes_are_knowledge_not_similarity(semantic: Any) -> None:
    chat = conv(("user", "Please translate 'good morning' into Spanish."))
    found = semantic.match("es", "target_language", "ISO 639-1 code", chat)
    assert found is not None and found.span == "spanish" and found.score == 1.0
    assert semantic.match("it", "target_language", "ISO 639-1 code", chat) is None


def test_tool_results_ground_values(semantic: Any) -> None:
    chat = conv(
        ("user", "What is on my list?"),
        ("assistant", ""),
        ("tool", json.dumps({"items": [{"title": "Renew the passport application", "due": "2024-06-01"}]})),
    )
    found = semantic.match("passport renewal", "title", "", chat)
    assert found is not None and found.source == "tool_result" and found.message_index == 2


def test_guard_check_lets_the_paraphrase_through(semantic: Any) -> None:
    tools = [tool("add_reminder", "Add a reminder.", ("content",), content="What to be reminded of")]
    call = {"name": "add_reminder", "args": {"content": "Pick up dry cleaning"}, "id": "c1"}
    rule_only = Guard(tools).check(call, CHAT.messages)
    # rule-only, the words echo what was said: a text the model composed, a warning, no question
    assert rule_only.action is Action.WARN and Category.UNGROUNDED_VALUE in rule_only.categories
    assert Guard(tools, semantic=semantic).check(call, CHAT.messages).action is Action.ALLOW
    invented = {"name": "add_reminder", "args": {"content": "Book a table at Luigi's"}, "id": "c2"}
    assert Guard(tools, semantic=semantic).check(invented, CHAT.messages).action is Action.ASK_HUMAN


def test_messages_are_embedded_once(semantic: Any) -> None:
    embedder = semantic.embedder
    semantic.match("Pick up dry cleaning", "content", "", CHAT)
    passes = embedder.forward_passes
    longer = Conversation.from_messages([*CHAT.messages, {"role": "user", "content": "And water the plants."}])
    semantic.match("Pick up dry cleaning", "content", "", longer)
    assert embedder.forward_passes == passes + 1  # the new message's one clause, nothing else
    semantic.match("Pick up dry cleaning", "content", "", longer)
    assert embedder.forward_passes == passes + 1


def test_match_many_batches_the_values(semantic: Any) -> None:
    found = semantic.match_many(
        [("Pick up dry cleaning", "content", ""), ("walk the dog", "content", ""), ("42", "count", "")], CHAT
    )
    assert found[0] is not None and found[1] is None and found[2] is None


@pytest.mark.parametrize("value", ["that one", "the same as last time", "as discussed", "yesterday", "this morning", "tmrw"])
def test_words_that_only_point_are_not_embedded(semantic: Any, value: str) -> None:
    # a pointer names nothing that could have been said in other words: no model pass over the
    # conversation is spent looking for it (the lexical verdict and the pointer rules judge it)
    chat = conv(("user", "Book the room I had last week again, the same as last time, for Friday."),
                ("assistant", "Which room was it? I see two bookings: the Oak room and the Birch room."))
    passes = semantic.embedder.forward_passes
    assert semantic.match_many([(value, "room", "The room to book")], chat) == [None]
    assert semantic.embedder.forward_passes == passes


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("the same room", "Could I get a room identical to the one I stayed in before?"),  # a pointer word beside a noun
        ("last-minute deals", "Any late offers for this weekend?"),
        ("this week's newsletter", "Send out the weekly bulletin, please."),
    ],
)
def test_values_with_content_beside_pointer_words_are_still_embedded(semantic: Any, value: str, said: str) -> None:
    passes = semantic.embedder.forward_passes
    semantic.match_many([(value, "subject", "What it is about")], conv(("user", said)))
    assert semantic.embedder.forward_passes > passes


def test_a_clause_said_before_in_another_message_is_not_embedded_again(semantic: Any) -> None:
    """A clause is embedded alone, so its spans are the same in any message: the assistant's "Is
    there anything else I can help you with?" ends many turns of many threads, and is embedded once."""
    embedder = semantic.embedder
    first = Conversation.from_messages([
        {"role": "user", "content": "Remind me to water the ferns."},
        {"role": "assistant", "content": "Done. Is there anything else I can help you with?"},
        {"role": "user", "content": "No, thanks."},
    ])
    assert semantic.match("water the ferns", "content", "", first) is not None
    passes = embedder.forward_passes
    second = Conversation.from_messages([
        {"role": "user", "content": "Book the dentist for Tuesday."},
        {"role": "assistant", "content": "Booked. Is there anything else I can help you with? Is there anything else I can help you with?"},
        {"role": "user", "content": "Yes: remind me to water the ferns."},
    ])
    found = semantic.match("water the ferns", "content", "", second)
    # new: the clauses of "Book the dentist for Tuesday.", "Booked." and "Yes: remind me to water the
    # ferns."; the question, said twice, was embedded with the first conversation
    assert embedder.forward_passes - passes == len(clauses("Book the dentist for Tuesday.")) + len(clauses("Booked.")) + len(
        clauses("Yes: remind me to water the ferns.")
    )
    assert found is not None and found.message_index == 2
    # the same spans as a guard that never saw the first conversation
    fresh = SemanticGuard(embedder)
    again = fresh.match("water the ferns", "content", "", second)
    assert again is not None and (again.span, again.score) == (found.span, found.score)
