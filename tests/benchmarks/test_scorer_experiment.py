"""guard_bench.scorer: the learned scorer against the hand policy, and the shipped weights' training."""

from __future__ import annotations

import json
from typing import Any

from guard_bench.scorer import experiment, features, main, train

GOOD = {"category": "ungrounded_value", "check": "grounding", "rule": "ungrounded", "confidence": 0.9}
NOISY = {"category": "placeholder_value", "check": "placeholders", "rule": "description_example", "confidence": 0.9}


def case(suite: str, split: str, label: str, flagged: bool, *findings: dict[str, Any]) -> dict[str, Any]:
    return {"suite": suite, "split": split, "expected": {"label": label}, "flagged": flagged, "findings": list(findings)}


def cases(split: str) -> list[dict[str, Any]]:
    out = []
    for suite in ("a", "b", "c"):
        # a rule that fires on problems, and a noisy one the hand policy also interrupts on, on clean calls
        out += [case(suite, split, "missing_information", True, GOOD) for _ in range(10)]
        out += [case(suite, split, "ok", True, NOISY) for _ in range(5)]
        out += [case(suite, split, "ok", False) for _ in range(30)]
    return out


def test_features_are_the_highest_confidence_per_rule_and_the_count():
    vocabulary = ["grounding/ungrounded_value/ungrounded", "placeholders/placeholder_value/description_example"]
    assert features(case("a", "dev", "ok", True, GOOD, {**GOOD, "confidence": 0.6}), vocabulary) == [0.9, 0.0, 2.0]


def test_the_learned_scorer_drops_what_the_noisy_rule_interrupts_and_keeps_what_the_good_one_catches():
    result = experiment(cases("dev"), cases("test"))
    assert set(result) == {"a", "b", "c"}
    for r in result.values():
        assert r["hand"]["false_interrupts"]["k"] == 5 and r["hand"]["awareness"]["value"] == 1.0
        assert r["learned"]["false_interrupts"]["k"] == 0 and r["learned"]["awareness"]["value"] == 1.0


def test_training_writes_weights_the_runtime_reads(tmp_path):
    weights = train(cases("dev"))
    assert weights["format"] == "guard.scorer/1" and len(weights["coefficients"]) == len(weights["vocabulary"]) + 1
    assert weights["trained_on"]["cases_per_suite"] == {"a": 45, "b": 45, "c": 45}
    run = tmp_path / "dev"
    run.mkdir()
    (run / "cases.jsonl").write_text("\n".join(json.dumps(c) for c in cases("dev")), encoding="utf-8")
    out = tmp_path / "scorer.json"
    assert main([str(run), "--train", str(out)]) == 0
    assert json.loads(out.read_text())["vocabulary"] == weights["vocabulary"]
