"""Tool-Reflection-Bench's protocol, rebuilt on API-Bank's recorded dialogues.

Tool-Reflection-Bench (Su et al., arXiv 2509.18847; ``tool_reflection``) breaks one argument of a
correct call (a null, a sentinel, a wrong type), keeps the trajectory before it, and asks for the
corrected call: Repair@1 is the share of records whose first corrected call equals the ground truth.
Only three of its records are here, so the protocol is rebuilt on
``api-bank/lv1-lv2-samples/level-1-given-desc``, whose dialogues record every API call with its
arguments and result:

- Every recorded call that succeeded, whose API the level-1 test records describe and whose
  arguments fit the description, is a **gold call** (values cast to the described types), with the
  dialogue before it as the conversation (earlier calls as assistant tool calls, their recorded
  results as tool messages, the level-1 record's "current year" note as the system message).
- An argument is **traceable** when an earlier successful result of the dialogue holds its value
  (a ``token`` from ``GetUserToken``: subset ``faulty_result``) or a user turn says it (verbatim,
  a date as people write it, or all its content words: ``api_bank.holds``; subset ``faulty_user``).
- Each traceable argument gives one **faulty** case: the gold call with that value broken, the kind
  chosen by a ``random.Random`` seeded with the case id: ``null``; a ``sentinel`` ("string",
  "none", ``"<param>"`` or -1); or a ``wrong_type`` (true, [] or {}, or 0 for a string; never a type
  the schema accepts). Expected label: ``invalid_argument`` for a wrong type, else
  ``missing_information``.
- Each gold call also gives one **clean** case (the call as recorded, expected ``ok``), to count
  false alarms and completions nobody needed.

The simulated human knows nothing ("I don't know"), and the reference agent never corrects itself:
any repair is the guard's own, as in the paper, where the model repairs its own call.

``paper_metrics``: ``detect`` = faulty calls the guard intervened on (stopped, or repaired before
they ran); ``repair_at_1`` = faulty calls after which the call that ran equals the gold call
(canonical JSON of name and arguments); ``false_alarms_clean`` = clean calls it intervened on; the
same per source (``*_result``, ``*_user``); ``wrong_completion`` = faulty calls that ran with a
completed value other than the gold one; ``over_completion_clean`` = clean calls it completed.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from guard_bench import labels
from guard_bench.cases import Case, Expected, Loaded
from guard_bench.datasets import api_bank, skipping, tool_reflection
from guard_bench.metrics import ratio
from guard_bench.suites import PaperFigure
from guard.registry import ToolSpec

NAME = "tool-reflection-rebuilt"
CLEAN, FROM_RESULT, FROM_USER = "clean", "faulty_result", "faulty_user"
FAULTY = (FROM_RESULT, FROM_USER)
NULL, SENTINEL, WRONG_TYPE = "null", "sentinel", "wrong_type"
FAULTS = (NULL, SENTINEL, WRONG_TYPE)

PAPER = [PaperFigure(f.metric, f.model, f.value, f.source, rebuilt=True) for f in tool_reflection.PAPER]


def available(data_dir: Path) -> bool:
    return api_bank.dialogues_available(data_dir)


def load(data_dir: Path) -> Loaded:
    return build(data_dir).loaded()


def build(data_dir: Path) -> api_bank.Built:
    """Every case, one family per dialogue (``api_bank.family_of``), and what was left out (by
    reason); a dialogue or test record that cannot be read is skipped and counted (``Built.unreadable``)."""
    built = api_bank.Built()
    pool, files = api_bank.dialogues(data_dir, built.unreadable)
    for path, context in files:
        part = api_bank.Built()
        with skipping(built.unreadable, api_bank.DIALOGUES.name):
            _dialogue_cases(path, pool, context, part)
            built.cases += part.cases  # all of a dialogue's cases, or none
            for reason, ids in part.skipped.items():
                built.skipped.setdefault(reason, []).extend(ids)
    return built


def _dialogue_cases(path: Path, pool: api_bank.ApiPool, context: list[dict[str, str]], built: api_bank.Built) -> None:
    turns = api_bank.read_turns(path)
    named = path.stem.split("-level-")[0].split("-") + [t["api_name"] for t in turns if t.get("role") == "API"]
    tools = [pool.apis[n] for n in dict.fromkeys(named) if n in pool.apis]
    step = 0
    for i, turn in enumerate(turns):
        if turn.get("role") != "API" or (turn.get("result") or {}).get("exception"):
            continue
        call_id = f"{path.stem}/call{step}"
        step += 1
        api = pool.apis.get(turn["api_name"])
        if api is None:
            built.skip("called API not described", call_id)
            continue
        args = api_bank.typed_args(turn.get("param_dict") or {}, api)
        if not api_bank.fits(args, api):
            built.skip("recorded call does not fit its API description", call_id)
            continue
        messages = context + api_bank.dialogue_messages(turns[:i])
        gold = {"name": api["name"], "args": args, "id": "call_under_test"}
        common = {"suite": NAME, "family": api_bank.family_of(path.name), "messages": messages, "tools": tools, "gold_calls": [{"name": gold["name"], "args": args}],
                  "tool_results": {api["name"]: (turn.get("result") or {}).get("output")}}
        built.cases.append(Case(id=f"{call_id}/clean", subset=CLEAN, calls=[gold], expected=Expected(),
                                meta={"dialogue": path.stem, "call": call_id}, **common))
        traced = {p: source for p, v in args.items() if (source := value_source(v, messages)) is not None}
        if not traced:
            built.skip("no argument traceable to an earlier result or the user's words", call_id)
        for param, source in traced.items():
            case_id = f"{call_id}/{param}"
            fault, bad = inject(args[param], ToolSpec.from_any(api).properties.get(param) or {}, param,
                                random.Random(f"{NAME}:{case_id}"))
            label = labels.INVALID_ARGUMENT if fault == WRONG_TYPE else labels.MISSING_INFO
            built.cases.append(Case(
                id=case_id, subset=source, calls=[{**gold, "args": {**args, param: bad}}],
                expected=Expected(label=label, tool=api["name"], params=[param], values=[bad]),
                meta={"dialogue": path.stem, "call": call_id, "param": param, "fault": fault}, **common))


def value_source(value: Any, messages: list[dict[str, Any]]) -> str | None:
    """``faulty_result`` when an earlier successful result holds the value, ``faulty_user`` when
    only a user turn says it, None when neither does (values nobody gave, like most passwords for
    ``GetUserToken``, are not the faults this protocol studies)."""
    results = [m["content"] for m in messages if m["role"] == "tool" and m.get("status") != "error"]
    if any(_holds_leaf(content, value) for content in results):
        return FROM_RESULT
    if any(api_bank.holds(m["content"], value) for m in messages if m["role"] == "user"):
        return FROM_USER
    return None


def _holds_leaf(content: str, value: Any) -> bool:
    """Whether a result (JSON text, or plain text) holds the value as one of its leaves."""
    want = str(value)
    try:
        data = json.loads(content)
    except ValueError:
        return content.strip() == want
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif item is not None and str(item) == want:
            return True
    return False


def inject(value: Any, schema: dict[str, Any], param: str, rng: random.Random) -> tuple[str, Any]:
    """(fault, broken value): null, a sentinel, or a value of a type the schema refuses."""
    fault = rng.choice(FAULTS)
    if fault == NULL:
        return NULL, None
    if fault == SENTINEL:
        return SENTINEL, rng.choice(["string", "none", f"<{param}>", -1])
    declared = schema.get("type")
    wrong = [v for v in (True, [], {}, 0) if _refused(declared, v) and (v != 0 or declared == "string")]
    return WRONG_TYPE, rng.choice(wrong)


def _refused(declared: Any, value: Any) -> bool:
    kinds = {bool: "boolean", list: "array", dict: "object", int: "integer"}
    kind = kinds[type(value)]
    return declared != kind and not (kind == "integer" and declared == "number")


# -- scoring ----------------------------------------------------------------------------------------


def _completed(result: Any) -> bool:
    """Whether a provenance completion changed the call: a repair whose finding names the fault it
    completed and the source of the value (a list of several candidates names no source)."""
    return result.action == "repair" and any(
        f.get("evidence", {}).get("fault") and f.get("evidence", {}).get("source") for f in result.findings
    )


def paper_metrics(results: list[Any]) -> dict[str, float]:
    faulty = [r for r in results if r.subset in FAULTY]
    clean = [r for r in results if r.subset == CLEAN]
    out = {
        "detect": ratio(sum(tool_reflection.intervened(r) for r in faulty), len(faulty)),
        "repair_at_1": ratio(sum(bool(r.recovered) for r in faulty), len(faulty)),
        "false_alarms_clean": ratio(sum(tool_reflection.intervened(r) for r in clean), len(clean)),
    }
    for subset, suffix in ((FROM_RESULT, "result"), (FROM_USER, "user")):
        of = [r for r in faulty if r.subset == subset]
        out[f"detect_{suffix}"] = ratio(sum(tool_reflection.intervened(r) for r in of), len(of))
        out[f"repair_at_1_{suffix}"] = ratio(sum(bool(r.recovered) for r in of), len(of))
    out["wrong_completion"] = ratio(sum(_completed(r) and not r.recovered for r in faulty), len(faulty))
    out["over_completion_clean"] = ratio(sum(_completed(r) for r in clean), len(clean))
    return out

