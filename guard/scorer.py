"""A learned second opinion on interrupting: the precision scorer (policy ``scorer.enabled``).

The checks' findings each come with a confidence, and the policy maps category x confidence to an
action. Measured on the benchmark's clean calls, that hand-set mapping interrupts 6-10% of correct
work. The scorer is a logistic regression over the same findings (per rule, the highest confidence
of its findings; and how many there are), trained by one command on the dev splits of every suite
(``python -m guard_bench.scorer DEV_RUN --train guard/data/scorer.json``), with its threshold set
there for at most 3% false interrupts on each suite. The weights are a small JSON file.

When enabled, a decision that would interrupt (retry, ask the human, block) only because of
findings of judgement (an unstated or placeholder value, a value or tool the preflight thinks is
missing, a doubtful tool choice) and that the scorer rates below its threshold becomes ``warn``:
the call runs and the findings are recorded, each with the score in its evidence. Structural
problems (schema violations, an unknown tool, duplicate ids, approvals, budgets) keep their
action: running such a call fails or breaks a rule. Off by default: it buys precision with
awareness, by how much per suite is in RESULTS.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources

from guard.models import Finding
from guard.taxonomy import Category

#: The categories whose interrupting action the scorer may turn into a warning.
JUDGEMENT = frozenset({
    Category.UNGROUNDED_VALUE,
    Category.PLACEHOLDER_VALUE,
    Category.MISSING_ARGUMENT,
    Category.NO_SUITABLE_TOOL,
    Category.SUSPICIOUS_TOOL_SELECTION,
})
#: Checks whose missing_argument is a judgement (the preflight's reading, provenance's), not the
#: schema's "required property absent" (the call would fail).
_JUDGING_CHECKS = frozenset({"preflight", "provenance", "grounding", "placeholders", "relevance", "action", "judge", "semantic"})


@dataclass(frozen=True)
class Scorer:
    vocabulary: tuple[str, ...]
    coefficients: tuple[float, ...]
    intercept: float
    threshold: float

    def probability(self, findings: Iterable[Finding]) -> float:
        """How likely the call is a real problem, by the findings of its decision."""
        best: dict[str, float] = {}
        count = 0
        for f in findings:
            count += 1
            key = f"{f.check or '?'}/{f.category.value}/{f.rule or '-'}"
            best[key] = max(best.get(key, 0.0), float(f.confidence))
        x = [best.get(k, 0.0) for k in self.vocabulary] + [float(count)]
        z = self.intercept + sum(w * v for w, v in zip(self.coefficients, x))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def may_warn(finding: Finding) -> bool:
    """Whether the scorer may turn this finding's interrupt into a warning."""
    if finding.category not in JUDGEMENT:
        return False
    return finding.category is not Category.MISSING_ARGUMENT or finding.check in _JUDGING_CHECKS


@cache
def shipped() -> Scorer:
    """The scorer trained on the dev splits (``guard/data/scorer.json``)."""
    data = json.loads(resources.files("guard").joinpath("data/scorer.json").read_text(encoding="utf-8"))
    if data.get("format") != "guard.scorer/1" or len(data["coefficients"]) != len(data["vocabulary"]) + 1:
        raise ValueError("guard/data/scorer.json is not a guard.scorer/1 file")
    return Scorer(tuple(data["vocabulary"]), tuple(map(float, data["coefficients"])), float(data["intercept"]), float(data["threshold"]))
