"""Shadow policies: a candidate policy decides every live call beside the active one.

The active policy names the candidate (``shadow: candidate.yaml``). Every call the node, the
middleware or the service checks is decided by both: the active decision is enforced, the
candidate's is kept on ``Decision.shadow`` (never in a payload or a response), written to the
decision log's line (``shadow``) and counted where the two disagree:
``guard_shadow_disagreements_total{active_action,shadow_action,category}`` (``guard.telemetry``).
A failure of the candidate is logged and recorded as its ``error``; it never touches the active
decision.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from guard.taxonomy import Category

if TYPE_CHECKING:  # pragma: no cover
    from guard.budgets import GuardState
    from guard.conversation import Conversation
    from guard.engine import Guard
    from guard.models import Decision, Finding
    from guard.registry import ToolRegistry

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ShadowDecision:
    """The candidate policy's verdict on one call."""

    policy_name: str
    policy_hash: str
    action: str | None
    categories: tuple[str, ...] = ()
    error: str | None = None
    active_action: str = ""
    active_categories: tuple[str, ...] = field(default=())

    @property
    def disagrees(self) -> bool:
        return self.action is not None and self.action != self.active_action

    def disagreement_categories(self) -> list[str]:
        """The categories a disagreement is counted under: those of either decision, or "none"."""
        return sorted(set(self.categories) | set(self.active_categories)) or ["none"]

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"policy": {"name": self.policy_name, "sha256": self.policy_hash}, "action": self.action,
                               "categories": list(self.categories)}
        if self.error:
            out["error"] = self.error
        return out


def shadow_decide(
    shadow: Guard,
    registry: ToolRegistry,
    active: Decision,
    conversation: Conversation,
    state: GuardState,
    approved: bool,
    stage: str,
    refused: Finding | None = None,
) -> ShadowDecision:
    """The candidate's decision on the call ``active`` decided, from the same input."""
    policy = shadow.policy
    base = {"policy_name": policy.name, "policy_hash": policy.sha256, "active_action": active.action.value,
            "active_categories": tuple(c.value for c in active.categories)}
    try:
        shadow.registry = registry  # the active guard's registry, availability included
        if stage == "preflight":
            decision = shadow.preflight(conversation, state)
        elif stage == "refuse" and refused is not None:
            decision = shadow.refuse(active.call, refused, state)
        else:
            decision = shadow.check(active.call, conversation, state, approved=approved)
    except Exception as exc:  # the candidate is on trial: its failure is recorded, never raised
        _log.exception("guard: the shadow policy %r failed on a call; the active decision stands", policy.name)
        return ShadowDecision(action=None, error=f"{type(exc).__name__}: {exc}"[:300], **base)
    return ShadowDecision(action=decision.action.value, categories=tuple(Category(c).value for c in decision.categories), **base)
