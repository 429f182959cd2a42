"""BFCL v4 (Berkeley Function Calling Leaderboard): the categories where the right answer is no call.

- ``irrelevance``, ``live_irrelevance``: no offered function fits the request. Through the
  preflight; the guard is right when it stops before any call (expected ``no_suitable_tool``).
- ``simple_python``, ``live_simple``: one right call. The reference agent replays the gold call
  through the node, taking the first acceptable value of each parameter (BFCL lists every acceptable
  value; an empty string means the parameter may be left out, so a first value of "" is omitted).
  Every alarm there is a false alarm.
- ``multi_turn_miss_param``, ``multi_turn_miss_func``: a conversation whose ground truth is ``[]`` at
  one turn, where the model must ask for a value the user has not given (miss_param) or notice that
  the function it needs is not offered yet (miss_func: ``missed_function`` holds it back until the
  turn named by its key). One preflight case per such turn: the conversation up to it, with the
  earlier turns' gold calls replayed as assistant calls. BFCL runs those calls in its own simulated
  backends and the data holds no results, so each earlier result is the simulated tools' stub. The
  other turns are not cases. The miss_param human knows what the next user turn says.

Scored like BFCL, on behaviour: a case counts as right when the guard stops it (no call would run),
whatever label it gives; the per-label confusion says whether it also named the reason.

Files are JSON Lines despite ``.json``. Multi-turn records name their API classes
(``involved_classes``); their function docs are ``multi_turn_func_doc/<file>`` (BFCL's own
class-to-file map below). A record whose docs are not there is skipped: the bundled
``bfcl-sample`` folder has none. Data: ``DATA_DIR/bfcl`` (BFCL's ``bfcl_eval/data``), else
``DATA_DIR/bfcl-sample``. BFCL publishes leaderboard figures, not paper tables: ``PAPER`` is empty.
"""

from __future__ import annotations

import ast
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from guard_bench import families, labels
from guard_bench.cases import Case, Expected, Human, Loaded
from guard_bench.datasets import read_jsonl, skipping
from guard_bench.metrics import ratio
from guard_bench.suites import PaperFigure

NAME = "bfcl"
IRRELEVANCE, LIVE_IRRELEVANCE = "irrelevance", "live_irrelevance"
SIMPLE, LIVE_SIMPLE = "simple_python", "live_simple"
MISS_PARAM, MISS_FUNC = "multi_turn_miss_param", "multi_turn_miss_func"
CATEGORIES = (IRRELEVANCE, LIVE_IRRELEVANCE, SIMPLE, LIVE_SIMPLE, MISS_PARAM, MISS_FUNC)
#: Metric -> the categories it is computed on (share of cases the guard stopped).
METRICS = {
    "irrelevance_acc": (IRRELEVANCE,),
    "live_irrelevance_acc": (LIVE_IRRELEVANCE,),
    "relevant_false_alarm_rate": (SIMPLE, LIVE_SIMPLE),
    "miss_param_acc": (MISS_PARAM,),
    "miss_func_acc": (MISS_FUNC,),
}
#: BFCL's ``MULTI_TURN_FUNC_DOC_FILE_MAPPING`` (bfcl_eval/constants/executable_backend_config.py).
FUNC_DOCS = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
    "WebSearchAPI": "web_search.json",
    "MemoryAPI_kv": "memory_kv.json",
    "MemoryAPI_vector": "memory_vector.json",
    "MemoryAPI_rec_sum": "memory_rec_sum.json",
}
PAPER: list[PaperFigure] = []


def _data_file(folder: Path, category: str) -> Path:
    return folder / f"BFCL_v4_{category}.json"


def _root(data_dir: Path) -> Path:
    """``bfcl`` when it holds a BFCL file, else ``bfcl-sample``."""
    for name in ("bfcl", "bfcl-sample"):
        folder = Path(data_dir) / name
        if any(_data_file(folder, c).is_file() for c in CATEGORIES):
            return folder
    return Path(data_dir) / "bfcl"


def available(data_dir: Path) -> bool:
    return any(_data_file(_root(data_dir), c).is_file() for c in CATEGORIES)


def _answers(root: Path, category: str, skipped: Counter[str]) -> dict[str, Any]:
    path = root / "possible_answer" / _data_file(root, category).name
    answers: dict[str, Any] = {}
    for a in read_jsonl(path, skipped) if path.is_file() else []:
        with skipping(skipped, f"possible_answer/{path.name}"):
            answers[a["id"]] = a["ground_truth"]
    return answers


# --- single-turn gold calls --------------------------------------------------------------------

_OMIT = object()


def first_acceptable(values: Any) -> Any:
    """The first acceptable value of a gold parameter (``_OMIT`` when it is "": leave it out).

    A dict value is itself a map of parameters to acceptable values, and so is each dict in a list.
    """
    if not isinstance(values, list) or not values:
        return values
    first = values[0]
    return _OMIT if first == "" else _resolve(first)


def _resolve(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: v for k, vs in value.items() if (v := first_acceptable(vs)) is not _OMIT}
    if isinstance(value, list) and value and all(isinstance(e, dict) for e in value):
        return [_resolve(e) for e in value]
    return value


def gold_calls(ground_truth: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``[{function: {param: [acceptable...]}}]`` -> the calls a reference agent makes."""
    calls: list[dict[str, Any]] = []
    for item in ground_truth:
        for name, params in item.items():
            args = {p: v for p, vs in params.items() if (v := first_acceptable(vs)) is not _OMIT}
            calls.append({"name": name, "args": args, "id": f"call_{len(calls)}"})
    return calls


def _messages(question: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"role": m["role"], "content": m["content"]} for turn in question for m in turn]


def _single_turn(category: str, record: dict[str, Any], truth: Any) -> Case | None:
    case = Case(id=record["id"], family=f"{NAME}:{record['id']}", suite=NAME, subset=category,
                messages=_messages(record["question"]), tools=record["function"])
    if category in (IRRELEVANCE, LIVE_IRRELEVANCE):
        case.expected = Expected(label=labels.NO_SUITABLE_TOOL)
        return case
    if not truth:
        return None
    case.calls = case.gold_calls = gold_calls(truth)
    return case


# --- multi-turn --------------------------------------------------------------------------------


def parse_call(text: str, params_of: dict[str, list[str]]) -> dict[str, Any]:
    """A gold call written as Python (``mv(source='a', destination='b')``) -> ``{name, args}``.

    Positional arguments take the function's parameter names in their documented order.
    """
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call):
        raise ValueError(f"not a call: {text!r}")
    name = ast.unparse(node.func)
    order = params_of.get(name, [])
    if len(node.args) > len(order):
        raise ValueError(f"{name}: {len(node.args)} positional arguments, {len(order)} documented parameters")
    args = {order[i]: ast.literal_eval(a) for i, a in enumerate(node.args)}
    args.update({k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg})
    return {"name": name, "args": args}


def _class_docs(classes: list[str], folder: Path) -> list[dict[str, Any]] | None:
    """The function docs of every involved class, in order; None when one is not in ``folder``."""
    docs = []
    for cls in classes:
        path = folder / FUNC_DOCS.get(cls, f"{cls}.json")
        if not path.is_file():
            return None
        docs += read_jsonl(path, Counter())  # a doc line that is no JSON: that function is not offered
    return docs


def _stub(name: str) -> str:
    """What the simulated tools answer without a recorded result (``guard_bench.tools``)."""
    return json.dumps({"status": "ok", "tool": name})


def _replayed(turn: int, calls: list[str], params_of: dict[str, list[str]]) -> list[dict[str, Any]]:
    """An earlier turn's gold calls as one assistant message and its tool results."""
    if not calls:
        return []
    parsed = [dict(parse_call(c, params_of), id=f"turn{turn}_call{i}") for i, c in enumerate(calls)]
    results = [{"role": "tool", "tool_call_id": c["id"], "name": c["name"], "content": _stub(c["name"])} for c in parsed]
    return [{"role": "assistant", "content": "", "tool_calls": parsed}, *results]


def _said(value: Any, text: str) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).lower() in text.lower()


def _asked_values(said_before: str, answer: str, next_calls: list[dict[str, Any]]) -> list[tuple[str, str, Any]]:
    """(tool, parameter, value) of the next turn's calls whose value the answer says and nobody said before."""
    return [
        (c["name"], p, v)
        for c in next_calls
        for p, v in c["args"].items()
        if _said(v, answer) and not _said(v, said_before)
    ]


def _miss_param(record: dict[str, Any], turn: int, truth: list[list[str]], params_of: dict[str, list[str]],
                messages: list[dict[str, Any]]) -> tuple[Expected, Human, dict[str, Any]]:
    questions = record["question"]
    answer = " ".join(m["content"] for m in questions[turn + 1]) if turn + 1 < len(questions) else ""
    next_calls = [parse_call(c, params_of) for c in truth[turn + 1]] if turn + 1 < len(truth) else []
    said_before = " ".join(m["content"] for m in messages if m["role"] == "user")
    found: dict[str, tuple[str, str, Any]] = {}
    for t, p, v in _asked_values(said_before, answer, next_calls):
        found.setdefault(p, (t, p, v))
    asked = list(found.values())
    expected = Expected(label=labels.MISSING_INFO, tool=asked[0][0] if asked else None,
                        params=[p for _, p, _ in asked], values=[v for _, _, v in asked])
    return expected, Human(values={p: v for _, p, v in asked}, text=answer or None), {"answer_turn": answer}


def _miss_func(held: dict[int, list[str]], turn: int) -> tuple[Expected, Human, dict[str, Any]]:
    needed = held.get(turn + 1) or [n for t, names in sorted(held.items()) if t > turn for n in names]
    tool = needed[0] if needed else None
    return Expected(label=labels.NO_SUITABLE_TOOL, tool=tool), Human(tool=tool), {"missed_function": needed}


def _multi_turn(category: str, record: dict[str, Any], truth: list[list[str]], docs_dir: Path) -> list[Case]:
    docs = _class_docs(record.get("involved_classes") or [], docs_dir)
    if docs is None:
        return []
    params_of = {d["name"]: list((d.get("parameters") or {}).get("properties") or {}) for d in docs}
    excluded = set(record.get("excluded_function") or [])
    held = {int(t): list(names) for t, names in (record.get("missed_function") or {}).items()}
    questions = record["question"]
    cases = []
    for turn, calls in enumerate(truth):
        if calls or turn >= len(questions) or not questions[turn]:
            continue
        try:
            messages = []
            for j in range(turn + 1):
                messages += _messages([questions[j]]) + (_replayed(j, truth[j], params_of) if j < turn else [])
            if category == MISS_PARAM:
                expected, human, meta = _miss_param(record, turn, truth, params_of, messages)
            else:
                expected, human, meta = _miss_func(held, turn)
        except (ValueError, SyntaxError):
            continue  # a gold call that is not a literal Python call cannot be replayed
        not_yet = {n for t, names in held.items() if t > turn for n in names}
        tools = [d for d in docs if d["name"] not in excluded | not_yet]
        cases.append(Case(id=f"{record['id']}/turn_{turn}", family=f"{NAME}:{record['id']}", suite=NAME, subset=category, messages=messages,
                          tools=tools, expected=expected, human=human, meta={"record": record["id"], "turn": turn, **meta}))
    return cases


def load(data_dir: Path) -> Loaded:
    """Every case; a record that cannot be read is skipped and counted. A record's cases (the turns
    of a multi-turn record) are one family, joined with every record that asks the same question."""
    root = _root(data_dir)
    cases: list[Case] = []
    skipped: Counter[str] = Counter()
    for category in CATEGORIES:
        path = _data_file(root, category)
        if not path.is_file():
            continue
        answers = _answers(root, category, skipped)
        for record in read_jsonl(path, skipped):
            with skipping(skipped, path.name):
                truth = answers.get(record["id"])
                if category in (MISS_PARAM, MISS_FUNC):
                    cases += _multi_turn(category, record, truth or [], root / "multi_turn_func_doc")
                elif case := _single_turn(category, record, truth):
                    cases.append(case)
    families.assign(cases)
    return Loaded(cases, skipped)


def paper_metrics(results: list[Any]) -> dict[str, float]:
    """Per metric, the share of its cases the guard stopped (only metrics with cases)."""
    by_subset: dict[str, list[Any]] = defaultdict(list)
    for r in results:
        by_subset[r.subset].append(r)
    out = {}
    for metric, subsets in METRICS.items():
        rs = [r for s in subsets for r in by_subset[s]]
        if rs:
            out[metric] = ratio(sum(r.flagged for r in rs), len(rs))
    return out
