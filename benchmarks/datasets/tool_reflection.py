"""Tool-Reflection-Bench: catch the faulty last call of a trajectory before it runs, and repair it.

Tool-Reflection-Bench (Su et al., arXiv 2509.18847) perturbs correct tool-calling trajectories (a
wrong-typed, sentinel or null argument; swapped, missing or redundant calls), keeps everything up to
the first faulty call and its error response, and asks the model to reflect and issue the corrected
call: Repair@N is the share of records where one of N attempts matches the ground-truth call exactly
(name and every argument). For the guard, the faulty call is the call under test, to be caught
before it runs; what finally runs after the guard's own repairs and completions is the repair.

Records are JSON Lines (``DATA_DIR/tool-reflection/*.jsonl``, else ``DATA_DIR/tool-reflection-sample``):
``messages`` = a system prompt holding the tools as JSON lines inside ``<tools>...</tools>``, the
user's request, assistant turns with ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` in
their content, and tool results as user turns that start ``Tool response:``; the last assistant call
is faulty and its response is an error. ``ground_truth`` = a ``<reflect>`` text and the corrected
``<tool_call>``. Records carry no id: a case is named by file and line (``test_qwen_1000:17``), as
the paper's evaluation script numbers them.

Per record:

- ``faulty_call``: the conversation before the faulty call (the system prompt dropped: its tools go
  to ``Case.tools``; earlier calls as assistant tool calls, their responses as tool messages), the
  faulty call, and the corrected call as gold. The expected label says what the fault is where
  the two calls tell it: a call identical to an earlier one -> ``repeated_call``; a key missing or a
  null value -> ``missing_information``; a value of another JSON type -> ``invalid_argument``; a
  sentinel of the right type (-1, "", "N/A", "unknown", "<file_path>") -> ``missing_information``;
  an undeclared extra key -> ``invalid_argument``; anything else (another tool, a swapped order, a
  wrong value of the right type) -> ``other``: the guard should stop the call, for any reason.
  The simulated human knows nothing ("I don't know"), so any repair is the guard's own.
- ``earlier_call`` (``<id>/earlier/<k>``): each earlier call of the trajectory, with the conversation
  before it, expected ``ok``: the calls the perturbation left intact, to measure false alarms.

``paper_metrics``: ``detect`` = faulty calls the guard intervened on (stopped, or repaired before
they ran); ``repair_at_1`` = faulty calls after which the call that ran equals the ground truth
(canonical JSON of name and arguments: the guard acts once, so its Repair@1 is compared with the
models' Repair@1 and Repair@5); ``false_alarm_earlier_calls`` = earlier calls it intervened on.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from guard_bench import families, labels
from guard_bench.cases import Case, Expected, Loaded
from guard_bench.datasets import skipping, value_kind
from guard_bench.metrics import ratio
from guard_bench.suites import PaperFigure

NAME = "tool-reflection"
FOLDERS = ("tool-reflection", "tool-reflection-sample")
FAULTY, EARLIER = "faulty_call", "earlier_call"
TOOL_RESPONSE = "Tool response:"

_SOURCE = "Tool-Reflection-Bench (arXiv 2509.18847), README results table"
PAPER = [
    PaperFigure("repair_at_1", "Qwen2.5-7B (base, Repair@1)", 0.024, _SOURCE),
    PaperFigure("repair_at_1", "Llama-3.1-8B (base, Repair@1)", 0.007, _SOURCE),
    PaperFigure("repair_at_1", "Qwen3-4B (base, Repair@1)", 0.096, _SOURCE),
    PaperFigure("repair_at_1", "Llama-3.1-8B (trained, Repair@1)", 0.047, _SOURCE),
    PaperFigure("repair_at_1", "Llama-3.1-8B (trained, Repair@5, best 8B)", 0.264, _SOURCE),
]

_TOOLS = re.compile(r"<tools>(.*?)</tools>", re.DOTALL)
_TOOL_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)
_SENTINEL_TEXT = re.compile(r"^\s*(|n/?a|none|null|nil|unknown|undefined|tbd|todo|placeholder|\?+|x{3,}|<[^<>]*>|\{[^{}]*\})\s*$",
                            re.IGNORECASE)
_SENTINEL_NUMBERS = frozenset({-1, -999, 999999})


def _folder(data_dir: Path) -> Path | None:
    return next((Path(data_dir) / f for f in FOLDERS if any((Path(data_dir) / f).glob("*.jsonl"))), None)


def available(data_dir: Path) -> bool:
    return _folder(data_dir) is not None


def load(data_dir: Path) -> Loaded:
    """Every record's cases. A record that cannot be read (a line that is no JSON, a ``<tool_call>``
    block that is no JSON object, in the trajectory or the ground truth) is skipped and counted in
    ``Loaded.skipped``. A record's cases are one family, joined with records whose user says the
    same words (perturbations of one trajectory)."""
    folder = _folder(data_dir)
    if folder is None:
        return Loaded()
    cases: list[Case] = []
    skipped: Counter[str] = Counter()
    for path in sorted(folder.glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    with skipping(skipped, path.name):
                        cases += record_cases(f"{path.stem}:{n}", json.loads(line))
    families.assign(cases)
    return Loaded(cases, skipped)


# -- reading a record ------------------------------------------------------------------------------


def tools_of(system_prompt: str) -> list[dict[str, Any]]:
    """The tool descriptions inside ``<tools>...</tools>``, one JSON object a line (the prompt names
    the empty tags "<tools></tools>" before it opens the real block)."""
    return [json.loads(line) for block in _TOOLS.findall(system_prompt) for line in block.splitlines() if line.strip()]


def tool_calls_in(content: str) -> list[dict[str, Any]]:
    """Every ``<tool_call>{...}</tool_call>`` of an assistant turn as ``{"name", "args"}``."""
    calls = []
    for raw in _TOOL_CALL.findall(content):
        call = json.loads(raw)
        if not isinstance(call, dict):
            raise ValueError(f"a <tool_call> block that is no JSON object: {raw[:80]!r}")
        calls.append({"name": call.get("name"), "args": call.get("arguments", call.get("parameters", {}))})
    return calls


def conversation(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Record turns -> case messages: tool calls with ids ``call_<turn>_<j>``, "Tool response:" turns
    as tool messages answering them (one item each when the response lists one per call)."""
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        role, content = m.get("role"), str(m.get("content") or "")
        if role == "system":
            continue
        if role == "assistant" and (calls := tool_calls_in(content)):
            pending = [{**c, "id": f"call_{i}_{j}"} for j, c in enumerate(calls)]
            out.append({"role": "assistant", "content": _TOOL_CALL.sub("", content).strip(), "tool_calls": pending})
        elif role == "user" and content.startswith(TOOL_RESPONSE) and pending:
            out += _responses(content.removeprefix(TOOL_RESPONSE).strip(), pending)
            pending = []
        else:
            out.append({"role": "assistant" if role == "assistant" else "user", "content": content})
    return out


def _responses(text: str, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    try:
        items = json.loads(text)
    except ValueError:
        items = None
    split = isinstance(items, list) and len(items) == len(calls) and len(calls) > 1
    return [{"role": "tool", "content": json.dumps(items[j], ensure_ascii=False) if split else text,
             "tool_call_id": c["id"], "name": c["name"]} for j, c in enumerate(calls)]


def record_cases(record_id: str, record: dict[str, Any]) -> list[Case]:
    """The faulty-call case of one record and one case per earlier call."""
    messages = conversation(record["messages"])
    tools = next((tools_of(str(m.get("content") or "")) for m in record["messages"] if m.get("role") == "system"), [])
    turns = [i for i, m in enumerate(messages) if m.get("tool_calls")]
    if not turns:
        return []
    *earlier, last = turns
    faulty = messages[last]["tool_calls"]
    gold = tool_calls_in(str(record.get("ground_truth") or ""))
    prior = messages[:last]
    cases = [Case(id=record_id, family=f"{NAME}:{record_id}", suite=NAME, subset=FAULTY, messages=prior, tools=tools, calls=faulty,
                  expected=expected_for(faulty[0], gold[0] if gold else None, prior, tools),
                  gold_calls=gold, meta={"record": record_id, "reflect": _reflection(record)})]
    for k, i in enumerate(earlier):
        calls = messages[i]["tool_calls"]
        cases.append(Case(id=f"{record_id}/earlier/{k}", family=f"{NAME}:{record_id}", suite=NAME, subset=EARLIER, messages=messages[:i], tools=tools,
                          calls=calls, gold_calls=[{"name": c["name"], "args": c["args"]} for c in calls],
                          meta={"record": record_id, "step": k}))
    return cases


def _reflection(record: dict[str, Any]) -> str:
    m = re.search(r"<reflect>(.*?)</reflect>", str(record.get("ground_truth") or ""), re.DOTALL)
    return m.group(1).strip() if m else ""


# -- what the fault is ------------------------------------------------------------------------------



def is_sentinel(value: Any) -> bool:
    """A stand-in for a value nobody knew: -1, "", "N/A", "unknown", "<file_path>", "{id}"."""
    if isinstance(value, str):
        return bool(_SENTINEL_TEXT.match(value))
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value in _SENTINEL_NUMBERS


def expected_for(faulty: dict[str, Any], gold: dict[str, Any] | None, prior: list[dict[str, Any]],
                 tools: list[dict[str, Any]]) -> Expected:
    """The label the faulty call deserves, told from the call against the corrected one (see the
    module docstring for the order of the rules)."""
    name, got = faulty["name"], faulty["args"] if isinstance(faulty["args"], dict) else {}
    earlier = [(c["name"], c["args"]) for m in prior for c in m.get("tool_calls") or []]
    if (name, faulty["args"]) in earlier:
        return Expected(label=labels.REPEATED, tool=name)
    if gold is None or gold["name"] != name or not isinstance(gold["args"], dict):
        return Expected(label=labels.OTHER, tool=name)
    want = gold["args"]
    if missing := [k for k in want if k not in got or (got[k] is None and want[k] is not None)]:
        return Expected(label=labels.MISSING_INFO, tool=name, params=missing, values=[got.get(k) for k in missing])
    changed = [k for k in want if got[k] != want[k]]
    if retyped := [k for k in changed if value_kind(got[k]) != value_kind(want[k])]:
        return Expected(label=labels.INVALID_ARGUMENT, tool=name, params=retyped, values=[got[k] for k in retyped])
    if sentinels := [k for k in changed if is_sentinel(got[k])]:
        return Expected(label=labels.MISSING_INFO, tool=name, params=sentinels, values=[got[k] for k in sentinels])
    if extra := [k for k in got if k not in want]:
        return Expected(label=labels.INVALID_ARGUMENT, tool=name, params=extra, values=[got[k] for k in extra])
    return Expected(label=labels.OTHER, tool=name, params=changed)


# -- scoring ----------------------------------------------------------------------------------------


def intervened(result: Any) -> bool:
    """The guard did not let the call run as proposed: it stopped it, or repaired it first."""
    return bool(result.flagged or result.action == "repair")


def paper_metrics(results: list[Any]) -> dict[str, float]:
    faulty = [r for r in results if r.subset == FAULTY]
    earlier = [r for r in results if r.subset == EARLIER]
    return {
        "detect": ratio(sum(intervened(r) for r in faulty), len(faulty)),
        "repair_at_1": ratio(sum(bool(r.recovered) for r in faulty), len(faulty)),
        "false_alarm_earlier_calls": ratio(sum(intervened(r) for r in earlier), len(earlier)),
    }
