"""The learned precision scorer: its arithmetic, the shipped weights, and how the engine uses it."""

from __future__ import annotations

import math

import pytest

from guard import Guard
from guard.models import Finding
from guard.scorer import Scorer, may_warn, shipped
from guard.taxonomy import Action, Category
from tests.test_engine import CONVO, TOOLS

INVENTED = {"name": "search_flights", "args": {"from_city": "Berlin", "to_city": "Rome"}, "id": "1"}  # Rome: never said
BAD_TYPE = {"name": "search_flights", "args": {"from_city": "Berlin", "to_city": "Paris", "passengers": 0}, "id": "1"}


def finding(category: Category, check: str, rule: str, confidence: float = 1.0) -> Finding:
    return Finding(category=category, check=check, message="m", rule=rule, confidence=confidence)


def test_the_probability_is_the_logistic_of_the_weighted_rule_confidences():
    model = Scorer(("grounding/ungrounded_value/ungrounded",), (2.0, 0.5), -1.0, 0.5)
    one = [finding(Category.UNGROUNDED_VALUE, "grounding", "ungrounded", 0.9)]
    assert model.probability(one) == pytest.approx(1 / (1 + math.exp(-(-1.0 + 2.0 * 0.9 + 0.5 * 1))))
    # the highest confidence of a rule counts once; every finding counts in the total
    two = one + [finding(Category.UNGROUNDED_VALUE, "grounding", "ungrounded", 0.6)]
    assert model.probability(two) == pytest.approx(1 / (1 + math.exp(-(-1.0 + 2.0 * 0.9 + 0.5 * 2))))
    assert model.probability([]) == pytest.approx(1 / (1 + math.exp(1.0)))


def test_the_shipped_weights_load_and_fit_their_vocabulary():
    model = shipped()
    assert len(model.coefficients) == len(model.vocabulary) + 1 and 0 < model.threshold < 1
    assert "grounding/ungrounded_value/ungrounded" in model.vocabulary


def test_only_findings_of_judgement_may_be_turned_into_warnings():
    assert may_warn(finding(Category.UNGROUNDED_VALUE, "grounding", "ungrounded"))
    assert may_warn(finding(Category.MISSING_ARGUMENT, "preflight", "required"))
    assert not may_warn(finding(Category.MISSING_ARGUMENT, "arguments", "required"))  # the schema's: the call would fail
    assert not may_warn(finding(Category.TYPE_VIOLATION, "arguments", "type"))
    assert not may_warn(finding(Category.UNKNOWN_TOOL, "availability", "registered"))


def test_off_by_default_the_policy_decides_alone():
    assert Guard(TOOLS).check(INVENTED, CONVO).action is Action.ASK_HUMAN


def test_below_its_threshold_an_interrupt_of_judgement_becomes_a_warning_with_the_score():
    d = Guard(TOOLS, {"scorer": {"enabled": True, "threshold": 1.0}}).check(INVENTED, CONVO)
    assert d.action is Action.WARN and d.action.runs
    (warned,) = d.warnings
    assert warned.category is Category.UNGROUNDED_VALUE and 0 < warned.evidence["scorer"] < 1 and warned.evidence["scorer_threshold"] == 1.0


def test_at_or_above_its_threshold_the_interrupt_stands():
    assert Guard(TOOLS, {"scorer": {"enabled": True, "threshold": 0.0}}).check(INVENTED, CONVO).action is Action.ASK_HUMAN


def test_a_structural_fault_is_never_warned_through():
    d = Guard(TOOLS, {"scorer": {"enabled": True, "threshold": 1.0}}).check(BAD_TYPE, CONVO)
    assert d.action is Action.RETRY and Category.RANGE_VIOLATION in d.categories
