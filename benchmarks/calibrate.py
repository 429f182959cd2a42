"""``guard bench calibrate``: choose the policy's thresholds on the dev split and write them down.

The thresholds in ``guard.policy`` (``checks.preflight.min_relevance``, ``checks.grounding.
min_fuzzy_score``, the embedding cut-offs under ``checks.semantic``) were first set by hand. This
module sweeps each over a grid on the **dev** split only (tuning on test would make the test
figures meaningless, so the command refuses it), scores detection of the labels the threshold
governs with the benchmark's own metrics, and keeps the best value.

The search is **coordinate-wise, one pass**: knobs are swept in ``KNOBS`` order, each over its grid
with every other value as chosen so far, and fixed before the next one is swept. It is not a joint
optimum (two knobs that trade off, such as ``relevance_floor`` and ``min_part_relevance``, are
each tuned given the other), but it is cheap and each choice is explained by one curve.

A point is scored by micro-averaged precision, recall and F1 over the knob's labels
(``guard_bench.metrics.confusion``) and the false-alarm rate on clean cases. The chosen value is the
best F1 among the points whose false-alarm rate is within ``max_false_alarms`` (when no point is,
the lowest false-alarm rate); ties go to fewer false alarms, then to the value nearest the base
policy's (no move without evidence). A knob whose labels no dev case carries is not swept: there is
nothing to choose it by.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from guard_bench import labels
from guard_bench.agents import AgentSource
from guard_bench.cases import Case
from guard_bench.execute import missing_text, select_cases
from guard_bench.metrics import confusion, false_alarm_rate, ratio
from guard_bench.report import write_json
from guard_bench.runner import CaseResult, run_cases
from guard_bench.suites import SUITES
from guard_bench.suites import suite as load_suite
from guard.policy import Policy

TOOL_PROBLEM = (labels.NO_SUITABLE_TOOL, labels.UNAVAILABLE_TOOL)


@dataclass(frozen=True)
class Knob:
    """A threshold of the policy to sweep: where it lives, the values tried, the labels it governs.

    ``semantic`` knobs are read only by the embedding checks, so they are swept only when those run.
    """

    path: str
    grid: tuple[float, ...]
    labels: tuple[str, ...]
    semantic: bool = False


#: The policy's thresholds, in sweep order: the ones that decide whether a tool suits the request
#: first (their findings stop a run before any value is judged), then value grounding, then the
#: tool-selection margin, which compares the relevance scores the earlier knobs shape. Not here:
#: ``max_span_words`` (a span length, not a cut-off: it changes what is embedded) and the judge's
#: bands (they need a chat model).
KNOBS: tuple[Knob, ...] = (
    Knob("checks.preflight.min_relevance", (0.05, 0.08, 0.10, 0.13, 0.16, 0.20, 0.25), TOOL_PROBLEM),
    Knob("checks.semantic.relevance_floor", (0.05, 0.10, 0.15, 0.20, 0.25, 0.30), (*TOOL_PROBLEM, labels.WRONG_TOOL), semantic=True),
    Knob("checks.semantic.relevance_ceiling", (0.45, 0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80), (*TOOL_PROBLEM, labels.WRONG_TOOL), semantic=True),
    Knob("checks.semantic.semantic_weight", (0.3, 0.5, 0.6, 0.7, 0.8, 0.9), (*TOOL_PROBLEM, labels.WRONG_TOOL), semantic=True),
    Knob("checks.semantic.min_part_relevance", (0.05, 0.08, 0.10, 0.13, 0.16, 0.20), TOOL_PROBLEM, semantic=True),
    Knob("checks.grounding.min_fuzzy_score", (75.0, 80.0, 85.0, 90.0, 95.0, 100.0), (labels.MISSING_INFO,)),
    Knob("checks.grounding.min_value_length", (1, 2, 3, 4), (labels.MISSING_INFO,)),
    Knob("checks.semantic.min_span_similarity", (0.60, 0.65, 0.70, 0.75, 0.80, 0.85), (labels.MISSING_INFO,), semantic=True),
    Knob("checks.semantic.min_word_similarity", (0.75, 0.80, 0.85, 0.90, 0.95), (labels.MISSING_INFO,), semantic=True),
    Knob("checks.semantic.min_inflection_similarity", (0.50, 0.55, 0.60, 0.65, 0.70), (labels.MISSING_INFO,), semantic=True),
    Knob("checks.semantic.selection_margin", (0.04, 0.06, 0.08, 0.10, 0.12, 0.15, 0.20), (labels.WRONG_TOOL,), semantic=True),
    Knob("checks.repetition.max_identical_calls", (1, 2, 3, 4), (labels.REPEATED,)),
)


@dataclass
class Point:
    """One value of one knob, scored on every dev case."""

    value: float
    precision: float
    recall: float
    f1: float
    tp: int
    fp: int
    fn: int
    false_alarm_rate: float
    paper_metrics: dict[str, dict[str, float]]
    seconds: float


@dataclass
class KnobResult:
    """One knob's sweep: its points, the value it had and the value kept, and why when it was not
    swept or the ceiling could not be met."""

    path: str
    labels: tuple[str, ...]
    base: float | None
    chosen: float | None
    points: list[Point] = field(default_factory=list)
    ceiling_met: bool = True
    note: str = ""

    @property
    def best(self) -> Point | None:
        return next((p for p in self.points if p.value == self.chosen), None)


@dataclass
class Calibration:
    """Every sweep point and the policy they led to (``policy`` is not serialised: its YAML is)."""

    suite: str
    split: str
    data_dir: str
    date: str
    semantic: bool
    max_false_alarms: float | None
    base_sha256: str
    n_cases: int
    n_clean: int
    knobs: list[KnobResult]
    policy: Policy
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if k != "policy"}
        data["policy_sha256"] = self.policy.sha256
        return data


def value_at(policy: Policy, path: str) -> Any:
    """The policy's value at a dotted path (``checks.preflight.min_relevance``)."""
    return functools.reduce(getattr, path.split("."), policy)


def with_value(policy: Policy, path: str, value: Any) -> Policy:
    """A copy of ``policy`` with one value changed, validated like a loaded policy (a value out of the
    field's range is an error, not a silent clamp)."""
    data = policy.model_dump()
    *parents, leaf = path.split(".")
    node = data
    for part in parents:
        node = node[part]
    node[leaf] = value
    return Policy.model_validate(data)


PaperMetrics = Callable[[list[CaseResult]], dict[str, float]]
#: One suite's dev results per policy, ``(suite, policy sha256) -> results``: shared by sweeps over
#: overlapping sets of suites (``guard bench transfer`` sweeps every suite but one, once per target,
#: and their first knobs try the same policies), so each suite runs once per distinct policy. The
#: caller owns it and bounds its life; the same cases must sit under a suite's name in every sweep.
SuiteRuns = dict[tuple[str, str], list[CaseResult]]


class _Evaluator:
    """Runs the dev cases under a policy, once per distinct policy (the point a knob keeps is the
    next knob's base point)."""

    def __init__(self, cases: Mapping[str, list[Case]], paper: Mapping[str, PaperMetrics], agents: AgentSource, semantic: bool,
                 runs: SuiteRuns | None = None) -> None:
        self.cases, self.paper, self.agents, self.semantic = cases, paper, agents, semantic
        self.runs = runs
        self._seen: dict[str, tuple[list[CaseResult], dict[str, dict[str, float]], float]] = {}

    def __call__(self, policy: Policy) -> tuple[list[CaseResult], dict[str, dict[str, float]], float]:
        hit = self._seen.get(policy.sha256)
        if hit is not None:
            return hit
        matcher = None
        if self.semantic:
            from guard.semantic import semantic_for  # the extra

            matcher = semantic_for(policy.checks.semantic)  # shares the model and its caches across thresholds
        start = time.perf_counter()
        results: list[CaseResult] = []
        paper: dict[str, dict[str, float]] = {}
        for name, cases in self.cases.items():
            key = (name, policy.sha256)
            rs = self.runs.get(key) if self.runs is not None else None
            if rs is None:
                rs = run_cases(cases, policy, self.agents, semantic=matcher)
                if self.runs is not None:
                    self.runs[key] = rs
            if name in self.paper:
                paper[name] = self.paper[name](rs)
            results += rs
        entry = (results, paper, time.perf_counter() - start)
        self._seen[policy.sha256] = entry
        return entry

    def retain(self, policy: Policy) -> None:
        """Forget every run but ``policy``'s: only the point a knob kept is met again."""
        self._seen = {k: v for k, v in self._seen.items() if k == policy.sha256}


def score(results: Sequence[CaseResult], governed: Sequence[str]) -> dict[str, float]:
    """Micro-averaged precision, recall and F1 over the governed labels, and their counts."""
    conf = confusion(results, governed)
    tp, fp, fn = (sum(int(c[k]) for c in conf.values()) for k in ("tp", "fp", "fn"))
    p, r = ratio(tp, tp + fp), ratio(tp, tp + fn)
    return {"precision": p, "recall": r, "f1": ratio(2 * p * r, p + r), "tp": tp, "fp": fp, "fn": fn}


def choose(points: Sequence[Point], base: float, max_false_alarms: float | None) -> tuple[Point, bool]:
    """The best-F1 point within the false-alarm ceiling (ties: fewer false alarms, then nearest the
    base value); without any point under the ceiling, the fewest false alarms. Returns the point
    and whether the ceiling was met."""
    allowed = [p for p in points if max_false_alarms is None or p.false_alarm_rate <= max_false_alarms]
    if allowed:
        return min(allowed, key=lambda p: (-p.f1, p.false_alarm_rate, abs(p.value - base))), True
    return min(points, key=lambda p: (p.false_alarm_rate, -p.f1, abs(p.value - base))), False


def sweep(
    cases: Mapping[str, list[Case]],
    base: Policy,
    knobs: Sequence[Knob] = KNOBS,
    *,
    paper: Mapping[str, PaperMetrics] | None = None,
    semantic: bool = False,
    max_false_alarms: float | None = None,
    agents: AgentSource | None = None,
    progress: Callable[[KnobResult], None] | None = None,
    runs: SuiteRuns | None = None,
) -> tuple[Policy, list[KnobResult]]:
    """Sweep ``knobs`` coordinate-wise over ``cases`` (suite name -> dev cases) from ``base``.

    Knobs marked ``semantic`` are left out unless ``semantic`` is set (without the embedding checks
    they change nothing). ``runs`` shares each suite's results across sweeps (``SuiteRuns``).
    Returns the calibrated policy and one ``KnobResult`` per knob considered.
    """
    evaluate = _Evaluator(cases, paper or {}, agents or AgentSource(), semantic, runs)
    expected = {c.expected.label for batch in cases.values() for c in batch}
    policy, out = base, []
    for knob in knobs:
        if knob.semantic and not semantic:
            continue
        current = value_at(policy, knob.path)
        result = KnobResult(knob.path, knob.labels, current, current)
        if not expected & set(knob.labels):
            result.note = f"not swept: no dev case is labelled {' or '.join(knob.labels)}"
        else:
            grid = sorted(set(knob.grid) | ({current} if current is not None else set()))
            for value in grid:
                candidate = with_value(policy, knob.path, value)
                results, paper_metrics, seconds = evaluate(candidate)
                s = score(results, knob.labels)
                result.points.append(Point(value, s["precision"], s["recall"], s["f1"], int(s["tp"]), int(s["fp"]),
                                           int(s["fn"]), false_alarm_rate(results), paper_metrics, round(seconds, 3)))
            best, result.ceiling_met = choose(result.points, current if current is not None else 0.0, max_false_alarms)
            result.chosen = best.value
            if not result.ceiling_met:
                result.note = f"no value keeps false alarms within {max_false_alarms}: the fewest were kept"
            policy = with_value(policy, knob.path, best.value)
            evaluate.retain(policy)
        out.append(result)
        if progress:
            progress(result)
    return policy, out


# --- what the command writes ----------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:g}"


def summary_lines(cal: Calibration) -> list[str]:
    """The per-knob table (chosen value, base value, dev P/R/F1 and false alarms at the choice)."""
    lines = [f"{'knob':<44} {'chosen':>7} {'base':>7}  {'P':>5} {'R':>5} {'F1':>5} {'false alarms':>12}"]
    for k in cal.knobs:
        best = k.best
        if best is None:
            lines.append(f"{k.path:<44} {_fmt(k.chosen):>7} {_fmt(k.base):>7}  {k.note}")
            continue
        lines.append(f"{k.path:<44} {_fmt(k.chosen):>7} {_fmt(k.base):>7}  {best.precision:5.3f} {best.recall:5.3f} "
                     f"{best.f1:5.3f} {best.false_alarm_rate:12.3f}" + (f"  ({k.note})" if k.note else ""))
    return lines


def policy_yaml(cal: Calibration, base_data: dict[str, Any], base_source: str, command: str) -> str:
    """The calibrated policy as YAML: the base file's own keys with the swept values set, under a
    comment header that says where every value came from. Loading it gives ``cal.policy`` exactly
    (checked: a mismatch raises ``RuntimeError``)."""
    data = yaml.safe_load(yaml.safe_dump(base_data)) or {}  # a deep copy of plain data
    for k in cal.knobs:
        if k.points:
            node = data
            *parents, leaf = k.path.split(".")
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = k.chosen
    header = [
        f"Calibrated by: {command}",
        f"suite: {cal.suite}  split: {cal.split}  data: {cal.data_dir}  date: {cal.date}",
        (f"cases: {cal.n_cases} ({cal.n_clean} clean)  embedding checks: {'on' if cal.semantic else 'off'}  "
         f"max false alarms: {_fmt(cal.max_false_alarms) if cal.max_false_alarms is not None else 'no ceiling'}"),
        f"base policy: {base_source} (sha256 {cal.base_sha256[:16]})",
        "Coordinate-wise, one pass, in this order; P/R/F1 over the labels each knob governs, false alarms on clean cases (dev):",
        *summary_lines(cal),
    ]
    if cal.semantic:
        header.append("Tuned with the embedding checks on: use with `guard bench run --semantic`, or set checks.semantic.enabled: true.")
    text = "".join(f"# {line}".rstrip() + "\n" for line in header) + yaml.safe_dump(data, sort_keys=False)
    if Policy.from_yaml_text(text).sha256 != cal.policy.sha256:
        raise RuntimeError("the written policy does not load back as the calibrated one")
    return text


def plot(cal: Calibration, path: Path) -> bool:
    """Per swept knob, its precision/recall curve and F1 and false alarms against the value, the
    choice marked. Returns False (and writes nothing) when no knob was swept."""
    swept = [k for k in cal.knobs if k.points]
    if not swept:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(swept), 2, figsize=(9, 3.2 * len(swept)), squeeze=False)
    for (pr, curve), k in zip(axes, swept):
        values = [p.value for p in k.points]
        pr.plot([p.recall for p in k.points], [p.precision for p in k.points], marker="o", label="dev points")
        spots: dict[tuple[float, float], list[float]] = {}
        for p in k.points:  # values that land on the same point share one label ("0.05-0.13")
            spots.setdefault((p.recall, p.precision), []).append(p.value)
        for (recall, precision), vs in spots.items():
            text = _fmt(vs[0]) if len(vs) == 1 else f"{_fmt(min(vs))}-{_fmt(max(vs))}"
            pr.annotate(text, (recall, precision), fontsize=7, xytext=(3, 3), textcoords="offset points")
        best = k.best
        if best is not None:
            pr.scatter([best.recall], [best.precision], s=120, facecolors="none", edgecolors="red", label=f"chosen {_fmt(best.value)}")
        pr.set_xlim(-0.02, 1.02)
        pr.set_ylim(-0.02, 1.02)
        pr.set_xlabel(f"recall ({', '.join(k.labels)})", fontsize=8)
        pr.set_ylabel("precision")
        pr.legend(fontsize=8)
        pr.set_title(f"{cal.suite}: {k.path.rsplit('.', 1)[-1]}", fontsize=9)
        curve.plot(values, [p.f1 for p in k.points], marker="o", label="F1")
        curve.plot(values, [p.false_alarm_rate for p in k.points], marker="s", label="false alarms on clean cases")
        if cal.max_false_alarms is not None:
            curve.axhline(cal.max_false_alarms, color="grey", linestyle=":", label="false-alarm ceiling")
        if best is not None:
            curve.axvline(best.value, color="red", linestyle="--", label="chosen")
        curve.set_ylim(0, 1)
        curve.set_xlabel(k.path, fontsize=8)
        curve.legend(fontsize=8)
        curve.set_title(f"{cal.suite}: F1 and false alarms (dev)", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _base_policy(path: Path | None) -> tuple[dict[str, Any], Policy, str]:
    """The base policy's own keys (what the written file keeps), the policy, and how to name it."""
    if path is None:
        return {}, Policy(), "the built-in default"
    policy = Policy.from_yaml(path)  # a PolicyError names the file, line and key
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return data, policy, str(path)


def calibrate(
    suite: str,
    data: Path,
    *,
    split: str = "dev",
    policy_path: Path | None = None,
    semantic: bool = False,
    out_policy: Path = Path("calibrated-policy.yaml"),
    out: Path = Path("bench-out/calibration"),
    limit: int | None = None,
    max_false_alarms: float | None = None,
    command: str = "guard bench calibrate",
    echo: Callable[[str], None] = print,
) -> Calibration | None:
    """The command: sweep SUITE's (or every suite's) dev cases, write the policy, ``calibration.json``
    and ``calibration.png``. Returns None when no suite had data.

    Raises ``ValueError`` for a split other than dev, ``KeyError`` for an unknown suite,
    ``PolicyError`` for an invalid base policy and ``ImportError`` when ``semantic`` is asked for
    without the extra: all before any case runs.
    """
    if split != "dev":
        raise ValueError(
            f"calibration runs on the dev split only, not {split!r}: thresholds tuned on test cases would make the "
            "test figures meaningless. Calibrate on dev, then measure the written policy with "
            "`guard bench run SUITE --split test --policy FILE`."
        )
    modules = {n: load_suite(n) for n in (list(SUITES) if suite == "all" else [suite])}
    base_data, base, base_source = _base_policy(policy_path)
    if semantic:
        from guard.semantic import semantic_for

        semantic_for(base.checks.semantic)  # load the model now: a missing extra fails before any case runs
    cases: dict[str, list[Case]] = {}
    for name, module in modules.items():
        if not module.available(data):
            echo(f"skip {name}: {missing_text(name, data)}")
            continue
        cases[name] = select_cases(module, data, split, limit)
    if not cases:
        echo("no suite had data to calibrate on")
        return None
    all_cases = [c for batch in cases.values() for c in batch]
    n_clean = sum(1 for c in all_cases if c.expected.label == labels.OK)
    echo(f"data: {data}  split: {split}  cases: {len(all_cases)} ({n_clean} clean)  base policy: {base_source} "
         f"({base.sha256[:12]})  embedding checks: {'on' if semantic else 'off'}")
    start = last = time.perf_counter()

    def report(k: KnobResult) -> None:
        nonlocal last
        now_ = time.perf_counter()
        if k.points and (best := k.best) is not None:
            echo(f"{k.path}: {len(k.points)} values in {now_ - last:.1f} s -> {_fmt(k.chosen)} (base {_fmt(k.base)}; "
                 f"F1 {best.f1:.3f}, false alarms {best.false_alarm_rate:.3f})" + (f"; {k.note}" if k.note else ""))
        else:
            echo(f"{k.path}: {k.note}")
        last = now_

    policy, knobs = sweep(cases, base, paper={n: modules[n].paper_metrics for n in cases}, semantic=semantic,
                          max_false_alarms=max_false_alarms, progress=report)
    cal = Calibration(suite, split, str(data), now(), semantic, max_false_alarms, base.sha256, len(all_cases), n_clean,
                      knobs, policy, round(time.perf_counter() - start, 1))
    text = policy_yaml(cal, base_data, base_source, command)
    out.mkdir(parents=True, exist_ok=True)
    out_policy.parent.mkdir(parents=True, exist_ok=True)
    out_policy.write_text(text, encoding="utf-8")
    write_json(out / "calibration.json", cal.to_json())
    drew = plot(cal, out / "calibration.png")
    echo("\n".join(summary_lines(cal)))
    echo(f"sweep: {cal.seconds:.1f} s; wrote {out_policy}, {out / 'calibration.json'}"
         + (f", {out / 'calibration.png'}" if drew else " (no knob was swept: no plot)"))
    return cal
