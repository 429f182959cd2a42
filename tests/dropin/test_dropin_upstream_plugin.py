"""The upstream runner's policies are valid policies that mean what the README says (the runner
itself downloads, so it is not run here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from guard import Guard
from guard.policy import load_policy
from guard.taxonomy import SCHEMA_CATEGORIES, Action, Category

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "upstream"))
from guard_upstream_swap import policy_for  # noqa: E402


def test_the_schema_only_policy_enforces_argument_validation_and_unknown_tools_only():
    policy = load_policy(policy_for("enforce"))
    enforced = {c for c in Category if policy.action_for(c) is not Action.ALLOW}
    assert enforced == SCHEMA_CATEGORIES | {Category.MALFORMED_ARGUMENTS, Category.UNKNOWN_TOOL}
    assert policy.mode == "enforce" and policy.backoff.max_attempts == 1
    assert not any(policy.repairs.model_dump().values())


def test_the_schema_only_policy_lets_an_invented_value_through_and_sends_a_wrong_type_back():
    def lookup(city: str, nights: int) -> str:
        """Look a hotel up."""
        return city

    guard = Guard([lookup], policy_for("enforce"))
    said = [{"role": "user", "content": "A hotel, please."}]
    invented = guard.check({"name": "lookup", "args": {"city": "Atlantis", "nights": 2}, "id": "1"}, said)
    wrong = guard.check({"name": "lookup", "args": {"city": "Atlantis", "nights": "two"}, "id": "2"}, said)
    assert invented.action is Action.ALLOW
    assert wrong.action is Action.RETRY and Category.TYPE_VIOLATION in wrong.categories


@pytest.mark.parametrize("mode", ["observe", "default"])
def test_the_other_modes_are_valid_policies(mode):
    assert load_policy(policy_for(mode)).mode == ("observe" if mode == "observe" else "enforce")
