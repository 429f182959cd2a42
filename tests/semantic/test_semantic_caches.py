"""Guards built from policy sections that differ only in thresholds share the model and every
threshold-free cache, so a calibration sweep embeds each message once, not once per value."""

from __future__ import annotations

from tests.semantic._support import require

require()

from guard.conversation import Conversation
from guard.policy import SemanticConfig
from guard.semantic import semantic_for

CHAT = Conversation.from_messages([{"role": "user", "content": "Remind me tomorrow about picking up my dry cleaning."}])


def test_a_changed_threshold_starts_warm_and_a_changed_span_length_does_not_share_spans():
    first = semantic_for(SemanticConfig(min_span_similarity=0.70))
    second = semantic_for(SemanticConfig(min_span_similarity=0.95, selection_margin=0.2))
    assert first is not second and first.embedder is second.embedder
    assert first._spans is second._spans and first._tools is second._tools and first._lexical is second._lexical
    assert first.match("Pick up dry cleaning", "content", "", CHAT) is not None
    passes = second.embedder.forward_passes
    assert second.match("Pick up dry cleaning", "content", "", CHAT) is None  # its own, stricter threshold
    assert second.embedder.forward_passes == passes  # but nothing was embedded again
    assert semantic_for(SemanticConfig(max_span_words=3))._spans is not first._spans  # other spans, other cache
