"""Values derived by a fixed rule from the user's words ground; values a model merely believes do not."""

from __future__ import annotations

import pytest

from guard import Guard
from guard.checks.derivations import derive
from guard.taxonomy import Category

SAID = [
    (0, "Analyse tracks from March to August. Legal updates from January 2023 to June 2023, please."),
    (1, "Pay $75 with no cost adjustment, on weekdays, near the Eiffel Tower."),
]


@pytest.mark.parametrize(
    ("value", "param", "how"),
    [
        (3, "startMonth", "march -> month 3"),
        ("2023-06-30", "endDate", "June 2023 -> 2023-06-30"),
        ("2023-01-01", "start", "January 2023 -> 2023-01-01"),
        ("Friday", "days", "weekdays -> Friday"),
        ("USD", "currency", "$ -> USD"),
        (0, "costAdjustment", "no cost -> 0"),
        (48.8584, "latitude", "coordinates of Eiffel Tower"),
    ],
)
def test_a_rule_derives_the_value_and_says_how(value: object, param: str, how: str) -> None:
    assert derive(value, param, SAID)[1] == how


@pytest.mark.parametrize(
    ("value", "param"),
    [
        (5, "startMonth"),  # May was never named
        (3, "count"),  # a month's number only for a parameter about months
        ("2023-06-15", "endDate"),  # mid-month is no bound of a named month
        ("Saturday", "days"),  # weekdays hold no Saturday
        ("EUR", "currency"),
        (1, "costAdjustment"),
        (48.8584, "distance"),
        (2009, "endDecade"),  # "the decade starting in 2000" ends when? a belief, not a rule
    ],
)
def test_no_rule_derives_what_was_not_said(value: object, param: str) -> None:
    assert derive(value, param, SAID) is None


def test_grounding_accepts_a_derived_value_and_names_the_rule() -> None:
    tool = {
        "name": "track_popularity",
        "description": "Popularity of music tracks over a span of months.",
        "parameters": {
            "type": "object",
            "properties": {"startMonth": {"type": "integer"}, "endMonth": {"type": "integer"}},
            "required": ["startMonth", "endMonth"],
        },
    }
    guard = Guard([tool])
    said = [("user", "How popular were tracks from March to August?")]
    assert guard.check({"name": "track_popularity", "args": {"startMonth": 3, "endMonth": 8}}, said).findings == []
    (finding,) = guard.check({"name": "track_popularity", "args": {"startMonth": 3, "endMonth": 9}}, said).findings
    assert finding.category is Category.UNGROUNDED_VALUE and finding.path == "$.endMonth"


def test_a_yes_or_no_as_text_answers_a_switch_the_user_named() -> None:
    said = [(0, "Run a full scan and automatically remove any threats.")]
    assert derive("yes", "autoRemove", said) == (0, "automatically -> yes")
    assert derive("yes", "sendReport", said) is None
