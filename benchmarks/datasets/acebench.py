"""ACEBench (English): the special cases through the preflight, the normal cases' gold calls through the node.

Special cases have no call: the guard must say, before any call, that a required value is missing
(incomplete), that a value the user gave breaks the schema (error_param), or that no tool can help
(irrelevant). They are scored as the paper scores a model's answer (Figure 27): the guard's decision
is rendered as the expected sentence and checked by case-sensitive substring. The normal cases'
gold calls are replayed by the reference agent: every alarm there is a false alarm.

Files are JSON Lines despite ``.json``; answers join on ``id`` in ``possible_answer/``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from guard_bench import families, labels
from guard_bench.cases import Case, Expected, Loaded
from guard_bench.datasets import read_jsonl, skipping
from guard_bench.metrics import ratio
from guard_bench.suites import PaperFigure
from guard.taxonomy import SCHEMA_CATEGORIES

NAME = "acebench"
SPECIAL = ("special_incomplete", "special_error_param", "special_irrelevant")
MISSING = "Missing necessary parameters"
INCORRECT = "There is incorrect value"
IRRELEVANT = "Due to the limitations of the function, I cannot solve this problem."

PAPER = [
    PaperFigure("special_acc", "GPT-4o", 0.930, "ACEBench Table 2 (zh+en)"),
    PaperFigure("special_acc", "GPT-4-Turbo", 0.867, "ACEBench Table 2 (zh+en)"),
    PaperFigure("special_acc", "Claude-3.5-Sonnet", 0.774, "ACEBench Table 2 (zh+en)"),
    PaperFigure("special_acc", "Qwen2.5-7B", 0.470, "ACEBench Table 2 (zh+en)"),
    PaperFigure("special_incomplete_acc", "Qwen2.5-7B", 0.26, "ACEBench Table 3"),
    PaperFigure("special_error_param_acc", "Qwen2.5-7B", 0.36, "ACEBench Table 3"),
    PaperFigure("special_irrelevant_acc", "Qwen2.5-7B", 0.79, "ACEBench Table 3"),
    PaperFigure("special_incomplete_acc", "Llama-3.1-8B", 0.29, "ACEBench Table 3"),
    PaperFigure("special_error_param_acc", "Llama-3.1-8B", 0.20, "ACEBench Table 3"),
    PaperFigure("special_irrelevant_acc", "Llama-3.1-8B", 0.14, "ACEBench Table 3"),
]

_TURN = re.compile(r"^(user|system|assistant):\s?", re.IGNORECASE)


def _root(data_dir: Path) -> Path:
    return Path(data_dir) / "acebench" / "data_en"


def available(data_dir: Path) -> bool:
    return (_root(data_dir) / "data_special_incomplete.json").is_file()


def parse_question(question: str) -> list[dict[str, str]]:
    """'user: ...\\nsystem: ...' -> role/content messages (a line without a prefix continues the turn)."""
    messages: list[dict[str, str]] = []
    for line in question.splitlines():
        if m := _TURN.match(line):
            role = m.group(1).lower()
            messages.append({"role": "assistant" if role == "system" else role, "content": line[m.end():]})
        elif messages and line.strip():
            messages[-1]["content"] += "\n" + line
    return [m for m in messages if m["content"].strip()] or [{"role": "user", "content": question}]


def _context(record: dict[str, Any]) -> list[dict[str, str]]:
    """The record's time and user profile, as the system context the model saw."""
    context = []
    if record.get("time"):
        context.append({"role": "system", "content": str(record["time"])})
    if record.get("profile"):
        context.append({"role": "system", "content": "User profile: " + json.dumps(record["profile"], ensure_ascii=False)})
    return context


_REPEAT_SUFFIX = re.compile(r"_\d+$")


def gold_calls(ground_truth: Any, tool_names: set[str]) -> list[dict[str, Any]]:
    """``{tool: {args}}`` or a list of them -> calls with ids.

    A JSON object cannot hold one key twice, so ACEBench writes a second call of the same tool as
    ``name_1``; the suffix is dropped when only the bare name is a tool.
    """
    items = ground_truth if isinstance(ground_truth, list) else [ground_truth]
    calls = []
    for item in items:
        for name, args in item.items():
            if name not in tool_names and (bare := _REPEAT_SUFFIX.sub("", name)) in tool_names:
                name = bare
            calls.append({"name": name, "args": args, "id": f"call_{len(calls)}"})
    return calls


def _expected(subset: str, truth: Any) -> Expected:
    if subset == "special_incomplete":
        (tool, params), = truth.items()
        return Expected(label=labels.MISSING_INFO, tool=tool, params=list(params))
    if subset == "special_error_param":
        return Expected(label=labels.INVALID_ARGUMENT, params=list(truth), values=[v for vs in truth.values() for v in vs])
    return Expected(label=labels.NO_SUITABLE_TOOL)


def load(data_dir: Path) -> Loaded:
    """Every case; a record that cannot be read is skipped and counted (``Loaded.skipped``). A case's
    family is its question text, normalised: ACEBench repeats questions across its sets (7 of the
    50 irrelevant questions are normal questions word for word)."""
    root = _root(data_dir)
    cases: list[Case] = []
    skipped: Counter[str] = Counter()
    for path in sorted(root.glob("data_*.json")):
        subset = path.stem.removeprefix("data_")
        if subset.startswith("agent_"):
            continue  # multi-step tasks against a simulated environment: not a guard replay
        answers: dict[str, Any] = {}
        if (root / "possible_answer" / path.name).is_file():
            for a in read_jsonl(root / "possible_answer" / path.name, skipped):
                with skipping(skipped, f"possible_answer/{path.name}"):
                    answers[a["id"]] = a["ground_truth"]
        for record in read_jsonl(path, skipped):
            with skipping(skipped, path.name):
                if case := _record_case(subset, record, answers.get(record["id"])):
                    cases.append(case)
    families.assign(cases)
    return Loaded(cases, skipped)


def _record_case(subset: str, record: dict[str, Any], truth: Any) -> Case | None:
    messages = _context(record) + parse_question(record["question"])
    family = families.text_key(record["question"])
    if subset in SPECIAL:
        return Case(id=record["id"], family=family, suite=NAME, subset=subset, messages=messages, tools=record["function"],
                    expected=_expected(subset, truth))
    if truth is None:
        return None
    calls = gold_calls(truth, {t.get("name") for t in record["function"]})
    return Case(id=record["id"], family=family, suite=NAME, subset="normal", messages=messages, tools=record["function"],
                calls=calls, gold_calls=calls, meta={"file": subset})


def render(result: Any) -> str:
    """The guard's judgement as the sentence ACEBench expects from a model."""
    findings = result.findings
    wrong = [f for f in findings if f["category"] in {c.value for c in SCHEMA_CATEGORIES} and f["category"] != "missing_argument"]
    if wrong:
        values = ", ".join(str(f["value"]) for f in wrong)
        keys = ", ".join(f["path"].removeprefix("$.") for f in wrong)
        return f"{INCORRECT} ({values}) for the parameters ({keys}) in the conversation history."
    if labels.NO_SUITABLE_TOOL in result.predicted or labels.UNAVAILABLE_TOOL in result.predicted:
        return IRRELEVANT  # no tool fits: the values a wrong tool would miss are beside the point
    if labels.MISSING_INFO in result.predicted:
        return f"{MISSING} ({', '.join(result.missing)}) for the api ({result.tool})"
    return ""


def correct(result: Any) -> bool:
    """The paper's check: phrase and every required piece present, case-sensitive."""
    text, exp = render(result), result.expected
    if result.subset == "special_error_param":
        return INCORRECT in text and all(str(v) in text for v in exp["values"])
    if result.subset == "special_incomplete":
        return MISSING in text and exp["tool"] in text and all(p in text for p in exp["params"])
    return IRRELEVANT in text


def paper_metrics(results: list[Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    special = [r for r in results if r.subset in SPECIAL]
    for subset in SPECIAL:
        rs = [r for r in special if r.subset == subset]
        out[f"{subset}_acc"] = ratio(sum(correct(r) for r in rs), len(rs))
    out["special_acc"] = ratio(sum(correct(r) for r in special), len(special))
    normal = [r for r in results if r.subset == "normal"]
    out["normal_false_alarm_rate"] = ratio(sum(r.flagged for r in normal), len(normal))
    return out
