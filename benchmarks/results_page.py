"""``guard bench results``: regenerate ``benchmarks/RESULTS.md`` from two runs of the test split.

The page used to be written by hand, so its figures drifted from the code. Now one command runs
every available suite's test split twice through ``guard_bench.execute.run_suites`` (the code path of
``guard bench run``): rule-only into ``OUT/rule`` and with the embedding checks into
``OUT/semantic``, and renders the page from the two ``results.json`` files. Per suite, a table puts
the guard's figures (rule / semantic) beside the papers' (each suite's ``PAPER``) and the project's
targets (``TARGETS``), marked met or missed. The figures are never typed in: the only hand-written
text is the prose in ``benchmarks/results_notes.md`` (one ``## <suite>`` section per suite,
included under that suite's table), which explains the gaps the tables show.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from guard_bench.report import false_interrupt_text, fmt_ci, model_note, skipped_text, suites_of
from guard_bench.suites import SUITES, PaperFigure

HERE = Path(__file__).parent
PAGE = HERE / "RESULTS.md"
NOTES = HERE / "results_notes.md"
MODES = ("rule", "semantic")
META = "run-meta.json"


@dataclass(frozen=True)
class Target:
    """A figure the guard alone must reach on the test split: ``metric`` of ``suite``'s
    ``paper_metrics``, at least (``>=``) or at most (``<=``) ``value``."""

    suite: str
    metric: str
    op: str
    value: float

    def met(self, figure: float) -> bool:
        return figure >= self.value if self.op == ">=" else figure <= self.value


#: The issue's targets (test split, guard alone), by the metric names the suites emit.
TARGETS: tuple[Target, ...] = (
    Target("acebench", "special_incomplete_acc", ">=", 0.90),
    Target("acebench", "special_error_param_acc", ">=", 0.95),
    Target("acebench", "special_irrelevant_acc", ">=", 0.90),
    Target("acebench", "normal_false_alarm_rate", "<=", 0.03),
    Target("fail-talms", "aware_underspecified", ">=", 0.80),
    Target("fail-talms", "aware_non_replaceable", ">=", 0.90),
    Target("fail-talms", "aware_replaceable", ">=", 0.80),
    Target("fail-talms", "proceed_original", ">=", 0.95),
    Target("api-bank-ict", "replacement_f1", ">=", 0.90),
    Target("api-bank-ict", "removal_f1", ">=", 0.90),
    Target("critictool", "reflect_tool_selection", ">=", 0.60),
    Target("critictool", "reflect_tool_hallucination", ">=", 0.95),
    Target("critictool", "reflect_parameter_key", ">=", 0.95),
    Target("critictool", "reflect_parameter_value", ">=", 0.95),
    Target("critictool", "over_reflection_rate", "<=", 0.05),
    Target("tool-reflection", "detect", ">=", 0.95),
    Target("tool-reflection", "repair_at_1", ">=", 0.50),
    Target("tool-reflection-rebuilt", "detect", ">=", 0.95),  # the same protocol on API-Bank's dialogues
    Target("tool-reflection-rebuilt", "repair_at_1", ">=", 0.50),
)


# --- rendering --------------------------------------------------------------------------------------


def parse_notes(text: str) -> dict[str, str]:
    """``## <name>`` sections of the notes file, name -> body (text before the first: key "")."""
    sections: dict[str, list[str]] = {"": []}
    current = ""
    for line in text.splitlines():
        if m := re.match(r"^##\s+(.+?)\s*$", line):
            current = m.group(1)
            sections[current] = []
        else:
            sections[current].append(line)
    return {k: "\n".join(v).strip() for k, v in sections.items() if "\n".join(v).strip()}


def _mark(target: Target, value: float | None, ran: bool) -> str:
    if not ran:
        return "not run"
    if value is None:
        return "not measured"
    return "met" if target.met(value) else "**missed**"


def _papers(figures: Sequence[PaperFigure]) -> str:
    return ", ".join(f"{f.model} {f.value:.3f}" for f in figures)


def suite_table(name: str, rule: Mapping[str, Any] | None, semantic: Mapping[str, Any] | None,
                figures: Sequence[PaperFigure], semantic_ran: bool) -> list[str]:
    """One suite's section body: a line on the runs, then metric | rule | semantic | target | met? | papers."""
    lines: list[str] = []
    for mode, res in (("rule", rule), ("semantic", semantic)):
        if res is not None:
            lines.append(f"- {mode}: {res['n_cases']} cases in {res.get('n_families', '?')} families ({res['n_errors']} errors) in "
                         f"{res['seconds']:.1f} s; {false_interrupt_text(res)}; guard latency p50 {res['latency_ms']['p50']:.2f} ms, "
                         f"p99 {res['latency_ms']['p99']:.2f} ms{model_note(res)}{skipped_text(res)}")
    lines += ["", "| metric | rule [95% interval] | semantic [95% interval] | target | met (rule / semantic) | papers |",
              "|---|---|---|---|---|---|"]
    rule_m = dict((rule or {}).get("paper_metrics", {}))
    sem_m = dict((semantic or {}).get("paper_metrics", {}))
    rule_ci = dict((rule or {}).get("paper_ci95", {}))
    sem_ci = dict((semantic or {}).get("paper_ci95", {}))
    by_metric: dict[str, list[PaperFigure]] = {}
    for f in figures:
        by_metric.setdefault(f.metric, []).append(f)
    targets = [t for t in TARGETS if t.suite == name]
    metrics = [t.metric for t in targets] + [m for m in dict.fromkeys([*rule_m, *sem_m]) if m not in {t.metric for t in targets}]
    for metric in metrics:
        target = next((t for t in targets if t.metric == metric), None)
        r, s = rule_m.get(metric), sem_m.get(metric)
        if target is None:
            goal = marks = ""
        else:
            goal = f"{'≥' if target.op == '>=' else '≤'} {target.value:.2f}"
            marks = f"{_mark(target, r, rule is not None)} / {_mark(target, s, semantic_ran and semantic is not None)}"
        sem_cell = fmt_ci(s, sem_ci.get(metric)) if semantic_ran else "not run"
        if target is not None and r is None and s is None:
            lines.append(f"| {metric} | not measured | {'not measured' if semantic_ran else 'not run'} | {goal} | {marks} | |")
            continue
        lines.append(f"| {metric} | {fmt_ci(r, rule_ci.get(metric))} | {sem_cell} | {goal} | {marks} | {_papers(by_metric.get(metric, []))} |")
    # beside the recalls: after the targeted figures (or first, without targets)
    lines.insert(len(lines) - len(metrics) + len(targets), _false_interrupt_row(rule, semantic, semantic_ran))
    sources = sorted({f"{f.source}{' (rebuilt: other data, same protocol)' if f.rebuilt else ''}" for f in figures})
    if sources:
        lines += ["", "Papers' figures: " + "; ".join(sources) + "."]
    return lines


def _false_interrupt_row(rule: Mapping[str, Any] | None, semantic: Mapping[str, Any] | None, semantic_ran: bool) -> str:
    """The unified false-interrupt rate (retry, ask_human or block on a clean case) beside the
    suite's recalls, with its interval and counts."""
    def cell(res: Mapping[str, Any] | None) -> str:
        fi = (res or {}).get("false_interrupt_rate")
        return fmt_ci(fi["value"], fi) + f" ({fi['k']}/{fi['n']})" if isinstance(fi, Mapping) else "—"
    return f"| false_interrupt_rate | {cell(rule)} | {cell(semantic) if semantic_ran else 'not run'} | | | |"


def render(
    rule: Mapping[str, Any] | None,
    semantic: Mapping[str, Any] | None,
    *,
    figures: Mapping[str, Sequence[PaperFigure]],
    notes: str = "",
    command: str = "guard bench results",
    runs: Mapping[str, Mapping[str, Any]] | None = None,
    semantic_ran: bool = True,
) -> str:
    """The page, from the two runs' ``results.json`` (``semantic`` None: rule-only). ``runs``: per
    mode, what ``run-meta.json`` says (command, date, machine, wall_seconds)."""
    rule_s, sem_s = suites_of(rule), suites_of(semantic)
    sections = parse_notes(notes)
    runs = runs or {}
    first = next(iter((rule_s or sem_s).values()), None)
    policy = first["policy"] if first else {"name": "?", "sha256": "?"}
    lines = ["# Benchmark results", "",
             ("Generated by one command; do not edit by hand (the prose under each table comes from "
              "`benchmarks/results_notes.md`):"), "", "```bash", command, "```", ""]
    for mode in MODES:
        meta = runs.get(mode)
        if meta:
            lines.append(f"- {mode}: `{meta.get('command', '')}`, {meta.get('date', '?')}, wall {_duration(meta.get('wall_seconds'))}")
        elif mode == "semantic" and not semantic_ran:
            lines.append("- semantic: not run (`--no-semantic`)")
    machine = next((m["machine"] for m in runs.values() if m.get("machine")), None)
    if machine:
        lines.append(f"- machine: {machine}")
    split = (rule or semantic or {}).get("split", "test")
    lines += [f"- policy `{policy['name']}`, sha256 `{policy['sha256'][:16]}…`; split: {split}; agent: the reference agent", ""]
    if any(((run or {}).get("data") or {}).get("bundled_samples") for run in (rule, semantic)):
        from guard_bench.report import SAMPLES_BANNER

        lines[1:1] = ["", f"> {SAMPLES_BANNER}"]
    if sections.get(""):
        lines += [sections[""], ""]
    names = [n for n in SUITES if n in rule_s or n in sem_s]
    skipped = [n for n in SUITES if n not in names]
    if skipped:
        lines += [f"Not run (no data files): {', '.join(skipped)}.", ""]
    for name in names:
        lines += [f"## {name}", ""]
        lines += suite_table(name, rule_s.get(name), sem_s.get(name), figures.get(name, []), semantic_ran)
        if sections.get(name):
            lines += ["", sections[name]]
        lines.append("")
    for title, body in sections.items():
        if title and title not in names and title not in skipped:
            lines += [f"## {title}", "", body, ""]
    return "\n".join(lines).rstrip() + "\n"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "not recorded"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


# --- the command --------------------------------------------------------------------------------------


def machine_note() -> str:
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}"


def load_run(folder: Path) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """A run folder's ``results.json`` (None when absent) and its ``run-meta.json`` (when absent:
    the date of ``results.json`` and the suites' summed seconds, said to be that)."""
    results = folder / "results.json"
    if not results.is_file():
        return None, {}
    data = json.loads(results.read_text(encoding="utf-8"))
    meta_path = folder / META
    if meta_path.is_file():
        return data, json.loads(meta_path.read_text(encoding="utf-8"))
    date = datetime.fromtimestamp(results.stat().st_mtime, UTC).strftime("%Y-%m-%d %H:%M UTC")
    return data, {"command": f"(results in {folder})", "date": date, "wall_seconds": None}


def run_both(
    modules: dict[str, ModuleType],
    data: Path,
    out: Path,
    *,
    policy_path: Path | None,
    semantic: bool,
    console: Any,
) -> None:
    """The test split of every suite, rule-only into ``out/rule`` and (``semantic``) with the
    embedding checks into ``out/semantic``, each with a ``run-meta.json`` (command, date, machine,
    wall time)."""
    from guard_bench.agents import AgentSource
    from guard_bench.execute import run_suites
    from guard.policy import Policy

    policy = Policy.from_yaml(policy_path) if policy_path else Policy()
    matcher = None
    if semantic:
        from guard.semantic import semantic_for

        matcher = semantic_for(policy.checks.semantic)  # the model loads now: a missing extra fails before any run
    agents = AgentSource("reference")
    _run_dev(modules, data, out / "dev", policy, agents, console)
    for mode in MODES[: 2 if semantic else 1]:
        folder = out / mode
        argv = ["guard", "bench", "run", "all", "--split", "test", "--data-dir", str(data), "--out", str(folder)]
        argv += ["--policy", str(policy_path)] if policy_path else []
        argv += ["--semantic"] if mode == "semantic" else []
        command = shlex.join(argv)
        console.print(f"[bold]{mode}[/]: {command}")
        start = time.perf_counter()
        done = run_suites("all", modules, data, "test", policy, agents, folder, command, console=console,
                          semantic=matcher if mode == "semantic" else None)
        if done is None:
            raise FileNotFoundError(f"no suite has data files in {data}")
        meta = {"command": command, "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
                "machine": machine_note(), "wall_seconds": round(time.perf_counter() - start, 1)}
        (folder / META).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


def _run_dev(modules: dict[str, ModuleType], data: Path, folder: Path, policy: Any, agents: Any, console: Any) -> None:
    """The dev split of every suite, rule-only, into ``folder``: what the rules report and the
    learned scorer's comparison read beside the test run."""
    from guard_bench.execute import run_suites

    argv = ["guard", "bench", "run", "all", "--split", "dev", "--data-dir", str(data), "--out", str(folder)]
    console.print(f"[bold]dev[/]: {shlex.join(argv)}")
    run_suites("all", modules, data, "dev", policy, agents, folder, shlex.join(argv), console=console)


def analysis_sections(out: Path) -> list[str]:
    """The sections read from the case records: where each rule fires and the calibration of the
    findings' confidence (dev and test, rule-only), the learned scorer against the hand policy,
    and the transfer table when ``guard bench transfer all --out OUT/transfer`` has written one."""
    lines: list[str] = []
    dev, test = out / "dev", out / "rule"
    if (dev / "cases.jsonl").is_file() and (test / "cases.jsonl").is_file():
        from guard_bench import rules, scorer

        lines += ["## Rules and calibration", "",
                  f"`guard bench rules {dev} {test}` (rule-only runs of the dev and the test split).", "",
                  rules.markdown(rules.report([dev, test])), ""]
        try:
            compared = scorer.experiment(list(rules.read_cases([dev])), list(rules.read_cases([test])))
        except ImportError:  # scikit-learn is in the bench extra
            compared = None
        if compared:
            lines += ["## Learned scorer against the hand-set policy", "",
                      f"`python -m guard_bench.scorer {dev} {test}`: per suite, trained on the other suites' dev cases "
                      "(the shipped `guard/data/scorer.json` is trained on all of them; policy `scorer.enabled` turns it on).", "",
                      scorer.markdown(compared, scorer.MAX_FALSE_INTERRUPTS), ""]
    transfer = out / "transfer" / "transfer.md"
    if transfer.is_file():
        body = transfer.read_text(encoding="utf-8").strip().splitlines()
        if body and body[0].startswith("# "):
            body = body[1:]  # the section's own title stands for it
        # the table's headings sit under this page's section: one level down
        body = [f"#{line}" if line.startswith("#") else line for line in body]
        lines += ["## Transfer", "", f"`guard bench transfer all --out {transfer.parent}`:", "", *body, ""]
    return lines


def write_page(out: Path, page: Path, *, semantic: bool, command: str, notes: Path = NOTES) -> str:
    """Render ``page`` from ``out/rule`` and ``out/semantic``; returns the text written."""
    rule, rule_meta = load_run(out / "rule")
    sem, sem_meta = load_run(out / "semantic") if semantic else (None, {})
    if rule is None and sem is None:
        raise FileNotFoundError(f"no results.json under {out / 'rule'} or {out / 'semantic'}: run without --from-runs first")
    from guard_bench.suites import suite as load_suite

    figures = {n: load_suite(n).PAPER for n in SUITES}
    runs = {m: meta for m, meta in (("rule", rule_meta), ("semantic", sem_meta)) if meta}
    text = render(rule, sem, figures=figures, notes=notes.read_text(encoding="utf-8") if notes.is_file() else "",
                  command=command, runs=runs, semantic_ran=semantic)
    if extra := analysis_sections(out):
        text = text.rstrip() + "\n\n" + "\n".join(extra).rstrip() + "\n"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text, encoding="utf-8")
    return text
