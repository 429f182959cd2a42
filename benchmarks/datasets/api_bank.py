"""API-Bank's formats, read once for the two suites rebuilt on it (``api_bank_ict``, ``reflectool``).

- ``test-data/level-1-api.json``: a JSON array (the datasets README says JSON Lines; both are read)
  of ``{file, id, instruction, input, expected_output}``. The instruction holds the API
  descriptions, one JSON object a line after "API descriptions:", and "The current year is 2023.";
  the input is the dialogue ("User: ...", "AI: ...", "API-Request: [Api(k='v')]->result"); the
  expected output is one request in Python call syntax, parsed with ``ast`` and never evaluated.
- ``lv1-lv2-samples/level-1-given-desc/*.jsonl``: one dialogue a file, one turn a line: ``User`` and
  ``AI`` turns with ``text``, ``API`` turns with ``api_name``, ``param_dict`` and the recorded ``result``.

Also shared by both suites: API-Bank writes every value as a string ("2" rooms, "True"), so calls
are cast to the described types; a lexical similarity between APIs (name and description); and
where a user said a value, including dates in the forms people write them ("March 26th" for
2023-03-26), so a manipulation can take the value out of the dialogue and check it is gone.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from guard_bench import families
from guard_bench.cases import Case, Loaded
from guard_bench.datasets import read_jsonl, skipping
from guard.registry import ToolSpec, name_words

LEVEL1 = Path("api-bank") / "test-data" / "level-1-api.json"
DIALOGUES = Path("api-bank") / "lv1-lv2-samples" / "level-1-given-desc"

_DESCRIPTIONS = "API descriptions:"
_YEAR_NOTE = re.compile(r"The current year is \d{4}\.")
_TURN = re.compile(r"^(User|AI|API-Request):\s?(.*)$")
_REQUEST_LINE = re.compile(r"^(\[.*\])->(.*)$", re.DOTALL)
#: API-Bank quotes list values that hold quotes themselves ("attendees='['Ann', 'Bo']'").
_QUOTED_LIST = re.compile(r"'(\[.*?\])'(?=\s*[,)])")


# --- records and dialogues --------------------------------------------------------------------


def read_records(path: Path, skipped: Counter[str] | None = None) -> list[dict[str, Any]]:
    """The level-1 test records: a JSON array, or JSON Lines as the datasets README describes (a
    line that is no JSON is skipped and counted in ``skipped``)."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except ValueError:
        return read_jsonl(path, skipped if skipped is not None else Counter())
    return data if isinstance(data, list) else [data]


_RECORD_FIELDS = ("file", "instruction", "input", "expected_output")


def test_records(path: Path, skipped: Counter[str]) -> list[dict[str, Any]]:
    """The level-1 test records that can be read: an object with the string fields every suite
    reads and API descriptions that parse; any other record is skipped and counted in ``skipped``."""
    out = []
    for record in read_records(path, skipped):
        with skipping(skipped, path.name):
            if not isinstance(record, dict) or not all(isinstance(record.get(k), str) for k in _RECORD_FIELDS):
                raise ValueError(f"a level-1 record needs the string fields {', '.join(_RECORD_FIELDS)}")
            if not all(isinstance(a.get("name"), str) for a in api_descriptions(record["instruction"])):
                raise ValueError("an API description without a name")
            out.append(record)
    return out


def family_of(dialogue_file: str) -> str:
    """The family of every case made from one recorded dialogue (``AddAgenda-level-1-1.jsonl``):
    the level-1 test records of a dialogue and the suites rebuilt on it share it, so a dialogue is
    on one side of the split in every suite."""
    return f"api-bank:{Path(dialogue_file).stem}"


def read_turns(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def api_descriptions(instruction: str) -> list[dict[str, Any]]:
    _, _, tail = instruction.partition(_DESCRIPTIONS)
    return [json.loads(line) for line in tail.splitlines() if line.strip().startswith("{")]


def context_messages(instruction: str) -> list[dict[str, str]]:
    """The instruction's clock ("The current year is 2023."), as the system context the model saw."""
    return [{"role": "system", "content": m.group(0)} for m in _YEAR_NOTE.finditer(instruction)][:1]


def parse_request(text: str) -> dict[str, Any]:
    """``[Api(k='v', ...)]`` -> ``{"name": "Api", "args": {...}}``; ValueError if it is no single call."""
    source = text.strip()
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError:
        try:
            tree = ast.parse(_QUOTED_LIST.sub(r"\1", source), mode="eval").body
        except SyntaxError as exc:
            raise ValueError(f"not a request: {text!r}") from exc
    if isinstance(tree, ast.List) and len(tree.elts) == 1:
        tree = tree.elts[0]
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name) and not tree.args):
        raise ValueError(f"not a single call with keyword arguments: {text!r}")
    return {"name": tree.func.id, "args": {k.arg: ast.literal_eval(k.value) for k in tree.keywords}}


def parse_dialogue(text: str) -> list[dict[str, Any]]:
    """A level-1 input as role/content messages; an earlier "API-Request: [...]->result" line becomes
    an assistant tool call and its tool result. Stops at "Generate API Request:"."""
    messages: list[dict[str, Any]] = []
    for line in text.splitlines():
        if line.startswith("Generate API Request"):
            break
        m = _TURN.match(line)
        if m is None:
            if messages and line.strip():
                messages[-1]["content"] += "\n" + line
            continue
        kind, rest = m.groups()
        if kind == "API-Request":
            messages += _request_turns(rest, f"api_{sum(1 for x in messages if x['role'] == 'tool')}")
        else:
            messages.append({"role": "user" if kind == "User" else "assistant", "content": rest})
    return messages


def _request_turns(line: str, call_id: str) -> list[dict[str, Any]]:
    m = _REQUEST_LINE.match(line)
    try:
        call = parse_request(m.group(1)) if m else None
    except ValueError:
        call = None
    if call is None or m is None:
        return [{"role": "assistant", "content": f"API-Request: {line}"}]
    return [
        {"role": "assistant", "content": "", "tool_calls": [{**call, "id": call_id}]},
        {"role": "tool", "content": result_text(m.group(2)), "tool_call_id": call_id, "name": call["name"]},
    ]


def result_text(raw: str) -> str:
    """A recorded result ("{'token': 'a1'}") as JSON when it is a Python literal, else as written."""
    try:
        return json.dumps(ast.literal_eval(raw.strip()), ensure_ascii=False)
    except (ValueError, SyntaxError, TypeError):
        return raw.strip()


def dialogue_messages(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Dialogue turns (``User``/``AI``/``API``) as case messages: an ``API`` turn becomes an
    assistant tool call (id ``api_<n>``) and its recorded result a tool message (JSON text; an
    exception as an error result)."""
    out: list[dict[str, Any]] = []
    for turn in turns:
        if turn["role"] == "API":
            call_id = f"api_{sum(1 for m in out if m['role'] == 'tool')}"
            result = turn.get("result") or {}
            error = result.get("exception")
            out.append({"role": "assistant", "content": "",
                        "tool_calls": [{"name": turn["api_name"], "args": turn.get("param_dict") or {}, "id": call_id}]})
            out.append({"role": "tool", "content": _result_content(error or result.get("output")),
                        "tool_call_id": call_id, "name": turn["api_name"], **({"status": "error"} if error else {})})
        else:
            out.append({"role": "user" if turn["role"] == "User" else "assistant", "content": str(turn.get("text") or "")})
    return out


def _result_content(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


# --- calls against descriptions ---------------------------------------------------------------


def typed_args(args: dict[str, Any], api: dict[str, Any]) -> dict[str, Any]:
    """Values cast to the described ``input_parameters`` types ("2" -> 2 for an int, "True" -> True)."""
    params = api.get("input_parameters") or {}
    return {k: _cast(v, str((params.get(k) or {}).get("type", ""))) for k, v in args.items()}


def _cast(value: Any, declared: str) -> Any:
    if not isinstance(value, str):
        return value
    kind = declared.lower()
    try:
        if kind == "int":
            return int(value)
        if kind == "float":
            return float(value)
        if kind == "bool" and value.lower() in ("true", "false"):
            return value.lower() == "true"
        if kind.startswith("list") and value.lstrip().startswith("["):
            return list(ast.literal_eval(value))
    except (ValueError, SyntaxError):
        pass
    return value


def fits(args: dict[str, Any], api: dict[str, Any]) -> bool:
    """Whether a call's argument names are the API's own: none unknown, every required one given."""
    spec = ToolSpec.from_any(api)
    return set(args) <= set(spec.properties) and set(spec.required) <= set(args)


def optional_params(api: dict[str, Any]) -> list[str]:
    spec = ToolSpec.from_any(api)
    return [p for p in spec.properties if p not in spec.required]


# --- the pool of APIs and their similarity ----------------------------------------------------

_STOPWORDS = frozenset("a an the this that api for of to and or in on by is are given with from it its".split())


def _words(api: dict[str, Any]) -> list[str]:
    text = f"{name_words(api['name'])} {api.get('description') or ''}".lower()
    return [w for w in re.findall(r"[a-z]+", text) if w not in _STOPWORDS]


class ApiPool:
    """Every API described in the level-1 records, with a TF-IDF cosine over name and description.

    The ICT paper embedded name+description with a sentence encoder (SimCSE); a lexical score keeps
    the rebuild deterministic and offline.
    """

    def __init__(self, apis: Iterable[dict[str, Any]]) -> None:
        self.apis: dict[str, dict[str, Any]] = {}
        for api in apis:
            self.apis.setdefault(api["name"], api)
        docs = {name: Counter(_words(api)) for name, api in self.apis.items()}
        df = Counter(w for doc in docs.values() for w in doc)
        idf = {w: math.log((1 + len(docs)) / (1 + n)) + 1 for w, n in df.items()}
        self._vectors = {name: _unit({w: tf * idf[w] for w, tf in doc.items()}) for name, doc in docs.items()}

    @classmethod
    def from_records(cls, records: Iterable[dict[str, Any]]) -> ApiPool:
        return cls(api for r in records for api in api_descriptions(r["instruction"]))

    def similarity(self, a: str, b: str) -> float:
        va, vb = self._vectors[a], self._vectors[b]
        return sum(w * vb.get(t, 0.0) for t, w in va.items())

    def ranked(self, name: str, exclude: Iterable[str] = ()) -> list[str]:
        """Other APIs, most similar first (ties by name)."""
        skip = set(exclude) | {name}
        return sorted((n for n in self.apis if n not in skip), key=lambda n: (-self.similarity(name, n), n))


def _unit(vector: dict[str, float]) -> dict[str, float]:
    norm = math.sqrt(sum(w * w for w in vector.values())) or 1.0
    return {t: w / norm for t, w in vector.items()}


def interchangeable(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Same inputs under names that share no word (``Wiki``/``SearchEngine``, both ``keyword``): the
    other API may well serve the request, so it is no fair stand-in for "no suitable tool"."""
    same_inputs = set(a.get("input_parameters") or {}) == set(b.get("input_parameters") or {})
    return same_inputs and not set(name_words(a["name"]).split()) & set(name_words(b["name"]).split())


# --- where a value was said -------------------------------------------------------------------

_MONTHS = ("january february march april may june july august september october november december").split()
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
_ORDINAL = r"(?:st|nd|rd|th)?"
#: A period after these ends no sentence.
_ABBREVIATIONS = frozenset("dr mr mrs ms st jr prof no vs".split())
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_WORD = re.compile(r"\w+")


@lru_cache(maxsize=4096)
def _pattern(text: str) -> re.Pattern[str]:
    forms = [r"\s+".join(map(re.escape, text.split()))]
    if m := _ISO_DATE.match(text):
        year, month, day = m.group(1), int(m.group(2)), int(m.group(3))
        if 1 <= month <= 12:
            name = _MONTHS[month - 1]
            names, said_year = rf"(?:{name}|{name[:3]}\.?)", rf"(?:,?\s+{year})?"
            forms += [re.escape(m.group(0)), rf"{names}\s+(?:the\s+)?0?{day}{_ORDINAL}{said_year}",
                      rf"0?{day}{_ORDINAL}\s+(?:of\s+)?{names}{said_year}", rf"0?{month}/0?{day}(?:/\d{{2,4}})?"]
    return re.compile(r"(?<!\w)(?:" + "|".join(forms) + r")(?!\w)", re.IGNORECASE)


def value_pattern(value: Any) -> re.Pattern[str] | None:
    """How a value is written: verbatim (any case), and a date or date-time also as its ISO date,
    "March 26th" (", 2023"), "26 March", "Mar. 26" or "3/26". None for values that are not scalars
    (lists, booleans) or are empty."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)) or not str(value).strip():
        return None
    return _pattern(str(value).strip())


def holds(text: str, value: Any) -> bool:
    """Whether a text gives the value: written as above, or all its content words said ("what
    platforms is this software compatible with" holds "What platforms is it compatible with?")."""
    pattern = value_pattern(value)
    if pattern is None:
        return False
    if pattern.search(text):
        return True
    words = {w for w in _WORD.findall(str(value).lower()) if w not in _STOPWORDS}
    return bool(words) and words <= set(_WORD.findall(text.lower()))


def message_text(message: dict[str, Any]) -> str:
    """A message's text and the arguments of its tool calls."""
    text = str(message.get("content") or "")
    if message.get("tool_calls"):
        text += " " + json.dumps([c.get("args") for c in message["tool_calls"]], ensure_ascii=False)
    return text


def held_by(messages: list[dict[str, Any]], value: Any) -> list[dict[str, Any]]:
    return [m for m in messages if holds(message_text(m), value)]


def said_only_by_user(messages: list[dict[str, Any]], value: Any) -> bool:
    """The value is in some user turn and in nothing else (no system or assistant turn, call or result)."""
    said = held_by(messages, value)
    return bool(said) and all(m["role"] == "user" for m in said)


def sentences(text: str) -> list[str]:
    """Sentences, split after . ! ? unless the word before the period is an abbreviation ("Dr.")."""
    out, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        before = _WORD.findall(text[start:m.start()])
        if m.group(0) == "." and before and before[-1].lower() in _ABBREVIATIONS:
            continue
        out.append(text[start:m.end()].strip())
        start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


def drop_value(messages: list[dict[str, Any]], value: Any) -> list[dict[str, Any]]:
    """The user's sentences that give the value removed; a user turn left empty is dropped."""
    out = []
    for m in messages:
        if m["role"] == "user" and holds(m["content"], value):
            kept = " ".join(s for s in sentences(m["content"]) if not holds(s, value))
            if not kept:
                continue
            m = {**m, "content": kept}
        out.append(m)
    return out


def replace_value(messages: list[dict[str, Any]], value: Any, words: str) -> list[dict[str, Any]]:
    """The user's words for the value (as written, see ``value_pattern``) replaced by ``words``."""
    pattern = value_pattern(value)
    if pattern is None:
        return messages
    return [{**m, "content": pattern.sub(words, m["content"])} if m["role"] == "user" else m for m in messages]


@dataclass
class Built:
    """The cases a rebuild made, what it could not build, by reason (ids), and the records it could
    not read at all (``unreadable``: reason -> count, the ``skipped_records`` of a run)."""

    cases: list[Case] = field(default_factory=list)
    skipped: dict[str, list[str]] = field(default_factory=dict)
    unreadable: Counter[str] = field(default_factory=Counter)

    def skip(self, reason: str, case_id: str) -> None:
        self.skipped.setdefault(reason, []).append(case_id)

    def loaded(self) -> Loaded:
        """The cases, joined into families (``guard_bench.families.assign``), with the unreadable count."""
        families.assign(self.cases)
        return Loaded(self.cases, self.unreadable)


def dialogues_available(data_dir: Path) -> bool:
    """Whether the API descriptions and the recorded level-1 dialogues are both in ``data_dir``."""
    return (Path(data_dir) / LEVEL1).is_file() and (Path(data_dir) / DIALOGUES).is_dir()


def dialogues(data_dir: Path, skipped: Counter[str]) -> tuple[ApiPool, Iterator[tuple[Path, list[dict[str, str]]]]]:
    """The API pool, and each recorded dialogue file with the context messages (the API
    descriptions its test record gives), for the suites rebuilt on API-Bank's dialogues. A test
    record that cannot be read is left out of both and counted in ``skipped``."""
    records = test_records(Path(data_dir) / LEVEL1, skipped)
    context = {Path(r["file"]).stem: context_messages(r["instruction"]) for r in records}
    paths = sorted((Path(data_dir) / DIALOGUES).glob("*.jsonl"))
    return ApiPool.from_records(records), ((p, context.get(p.stem, [])) for p in paths)
