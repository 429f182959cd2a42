"""CRITICTOOL: the published format, and the protocol rebuilt by injecting errors into gold calls.

CRITICTOOL (Huang et al., EMNLP 2025) cuts a tool-calling trajectory after step k, where step k may
hold an error, and scores what the model does at step k+1. Internal errors are the model's own: a
wrong but existing tool (selection), a tool that does not exist (hallucination), a missing or extra
key, a value of the wrong type or content. External errors come from the environment (rate limit,
permission, quota, timeout, connection): while the agent repeats the failed call it gets the same
error again, up to three times, and should then retry no more and skip to the next sub-task or stop
and ask the user. Error-free trajectories are scored too: critiquing a correct step is
over-reflection. For the guard, step k is the call it checks before it runs.

Two sources of cases, told apart by ``Case.meta["origin"]`` and the subset prefix:

- ``published_*``: the released files (``DATA_DIR/critictool/**/*.json``, a dict by sample id with
  ``query_prompt``, ``ground_truth``, ``error_type``). The call under test is the last assistant
  action of ``query_prompt``; the messages before it are the context. No copy is available here, so
  only the bundled self-made sample exercises this path.
- ``rebuilt_*``: every gold call of ACEBench normal and of API-Bank level-1 gives one clean case
  (expected ``ok``) and ``INJECTED_PER_CALL`` injected ones, chosen and built by a
  ``random.Random`` seeded with the gold call's (or the case's) id, so the set never changes:

  - tool selection -> ``suspicious_tool_selection``: another tool of the same list, the most
    lexically similar one whose schema the gold arguments can fill (a list of one tool gets the most
    similar tool of the source's pool added); the arguments stay valid, as in the paper's silent
    errors.
  - tool hallucination -> ``unknown_tool``: the real name mutated (a verb swapped for a synonym, a
    word added, a plural), never a registered name.
  - parameter key -> ``missing_information`` (a required key dropped) or ``invalid_argument`` (an
    option the schema does not declare added).
  - parameter value -> ``invalid_argument`` (the value in a type the schema refuses: ``"5"`` for 5,
    ``"yes"`` for true, a JSON string for an object) or ``missing_information`` (a schema-valid
    value nobody said: the same key's value from another gold call, or a shifted number).
  - external -> ``tool_error``: the gold call is proposed and the simulated tool fails
    (``Case.tool_errors``). Rate limits and timeouts are transient (``times=1``: the guard's backoff
    cures them; subset ``*_external_transient``); lost connections, permissions and quotas persist
    (``times=3``, the paper's three repeats; ``*_external_persistent``). A single gold call has no
    next sub-task, so the right move after a persistent failure is the paper's ``FinishAction``:
    stop and ask the user.

  The simulated human knows the gold call (the user knows what they asked for): asked for a value
  it gives the gold one, asked about the tool it names the gold tool.

Scoring (``paper_metrics``) follows the paper's evaluators (appendix C.4), mapped onto the guard:

- ``detect``: over clean and injected internal cases, the guard intervened (stopped the call, or
  repaired it: a repair is a critique plus a correction) exactly when an error was injected.
  ``over_reflection_rate``: share of clean cases it intervened on.
- ``category``: the guard's labels (unrepaired findings when it stopped the call, all findings when
  it repaired it) include the expected one; ``reflect_<type>`` is the same per error type (Table 16).
- ``correct_tool`` / ``correct_args``: the call that finally ran, after repairs and the human's
  answers, against the gold call. A missing or extra key scores 0; values match exactly after
  normalisation (case, spaces and ``,./-_*^`` ignored, as ACEBench does). The paper compares free
  text with SBERT similarity (all-mpnet-base-v2); no model runs here, so a paraphrase scores 0.
- ``retry`` (all external cases): the guard's backoff ran the failed call again.
- ``break`` (persistent cases): the failing call ran at most 1 + 3 times (the paper's limit).
- ``skip_finish_tool`` (persistent cases): the guard handed over to the human (``FinishAction``; a
  question before the call counts too, as an immediate ``FinishAction`` does in the paper) or the
  next sub-task's call ran (skip). ``skip_finish_args``: the next call's arguments, or, for a
  finish, the same as the tool score (a finish carries no arguments, as in the paper's finish mode).
  The reference agent never moves on to a next sub-task by itself, so skip/finish measures whether
  the guard itself ends the loop by asking the human.
- ``overall`` = 0.2 reflect + 0.3 correct + 0.05 retry + 0.45 skip/finish, each group the mean of its
  columns (reflect: detect, category; correct: tool, args; skip/finish: break, tool, args). This
  reading reproduces Table 2's overall scores within 0.3 points.
"""

from __future__ import annotations

import ast
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from guard_bench import families, labels
from guard_bench.cases import Case, Expected, Human, Loaded, ToolError
from guard_bench.datasets import acebench, api_bank, skipping, value_kind
from guard_bench.metrics import ratio
from guard_bench.suites import PaperFigure
from guard.normalise import normalise_text
from guard.schema import validator
from guard.registry import ToolRegistry, name_words

NAME = "critictool"

SELECTION, HALLUCINATION, KEY, VALUE = (
    "tool_select_error", "tool_hallucination_error", "parameters_key_error", "parameters_value_error")
ERROR_TYPES = (SELECTION, HALLUCINATION, KEY, VALUE)
CLEAN, EXTERNAL = "clean", "external"
PERSISTENT, TRANSIENT = "external_persistent", "external_transient"
FINISH = "FinishAction"

#: Repeats of a failed call the paper allows before the agent must leave the loop.
RETRY_LIMIT = 3
TRANSIENT_TIMES, PERSISTENT_TIMES = 1, RETRY_LIMIT
#: External error kinds and how many executions fail: once (a retry cures it) or persistently.
EXTERNAL_KINDS: dict[str, int] = {"rate_limit": TRANSIENT_TIMES, "timeout": TRANSIENT_TIMES,
                                  "connection": PERSISTENT_TIMES, "permission": PERSISTENT_TIMES,
                                  "quota": PERSISTENT_TIMES}
#: Tools of the pool (the most similar first) tried for a selection error when the list has one tool.
POOL_CANDIDATES = 10
#: Injected variants per gold call (besides the clean one); keeps the suite replaying in seconds.
INJECTED_PER_CALL = 1

_TABLE_2_METRICS = ("detect", "category", "correct_tool", "correct_args", "retry", "break",
                    "skip_finish_tool", "skip_finish_args", "overall")
_TABLE_2 = {  # CRITICTOOL Table 2, in percent, in the order of _TABLE_2_METRICS
    "GPT-4o": (78.71, 69.70, 86.05, 80.25, 20.99, 92.08, 53.66, 42.67, 69.01),
    "Claude-3.5": (81.59, 55.70, 84.89, 77.63, 38.22, 56.27, 22.06, 26.48, 55.83),
    "Qwen2.5-72B": (86.14, 52.81, 82.59, 77.60, 36.91, 91.75, 52.71, 30.03, 65.70),
    "Llama-3.1-8B": (83.77, 68.09, 78.26, 69.11, 50.94, 73.58, 25.00, 22.10, 58.04),
}
_TABLE_16_GPT4O = {"reflect_tool_selection": 23.42, "reflect_tool_hallucination": 97.72,
                   "reflect_parameter_key": 79.65, "reflect_parameter_value": 86.17}
PAPER = [
    *(PaperFigure(metric, model, value / 100, "CRITICTOOL Table 2", rebuilt=True)
      for model, row in _TABLE_2.items() for metric, value in zip(_TABLE_2_METRICS, row)),
    *(PaperFigure(metric, "GPT-4o", value / 100, "CRITICTOOL Table 16", rebuilt=True)
      for metric, value in _TABLE_16_GPT4O.items()),
]

_REFLECT_METRIC = {SELECTION: "reflect_tool_selection", HALLUCINATION: "reflect_tool_hallucination",
                   KEY: "reflect_parameter_key", VALUE: "reflect_parameter_value"}


def _published_root(data_dir: Path) -> Path:
    return Path(data_dir) / "critictool"


def available(data_dir: Path) -> bool:
    return (any(_published_root(data_dir).rglob("*.json"))
            or any((Path(data_dir) / "acebench" / "data_en").glob("data_normal_*.json"))
            or (Path(data_dir) / api_bank.LEVEL1).is_file())


def load(data_dir: Path) -> Loaded:
    """The published cases and the rebuilt ones; a record that cannot be read (here, or in the
    ACEBench and API-Bank files the rebuild reads) is skipped and counted. A rebuilt case's family
    is its gold call's source (the ACEBench question's family, the API-Bank dialogue), so a source
    is on the same side of the split here as in its own suite; a published case's is its record."""
    skipped: Counter[str] = Counter()
    cases = _published(data_dir, skipped) + _rebuilt(data_dir, skipped)
    families.assign(cases)
    return Loaded(cases, skipped)


# -- the published format ----------------------------------------------------------------------


def tool_list(system_prompt: str) -> list[dict[str, Any]]:
    """The tools CRITICTOOL lists in its system prompt, between the first '[' and '\\nTo use a tool'."""
    text = system_prompt[system_prompt.find("["):system_prompt.find("\nTo use a tool")]
    try:
        return json.loads(text)
    except ValueError:
        return ast.literal_eval(text)


def _literal(text: str) -> Any:
    """A JSON or Python literal (CRITICTOOL writes both); never ``eval``."""
    try:
        return json.loads(text)
    except ValueError:
        return ast.literal_eval(text)


def parse_action(content: Any) -> dict[str, Any] | None:
    """An assistant turn ``{"name": ..., "args": ...}`` (maybe fenced, maybe with a thought) -> a call."""
    if isinstance(content, str):
        text = content[content.find("{"):content.rfind("}") + 1]
        try:
            content = _literal(text)
        except (ValueError, SyntaxError):
            return None
    if not isinstance(content, dict) or not isinstance(content.get("name"), str):
        return None
    args = content.get("args", {})
    if isinstance(args, str) and content["name"] != FINISH:
        try:
            args = _literal(args)
        except (ValueError, SyntaxError):
            pass  # left as text: the guard sees malformed arguments
    return {"name": content["name"], "args": args}


@dataclass(frozen=True)
class _Trajectory:
    """A ``query_prompt`` split at the call under test: the context, the call, and what it returned."""

    messages: list[dict[str, Any]]
    call: dict[str, Any]
    response: str


def _trajectory(query_prompt: list[dict[str, Any]]) -> _Trajectory | None:
    """Chat messages -> context + last action. The system prompt (instructions and the tool list,
    which goes to ``Case.tools``) is left out; ``function`` turns answer the action before them."""
    messages: list[dict[str, Any]] = []
    last: tuple[int, dict[str, Any]] | None = None
    for m in query_prompt[1:]:
        role, content = m.get("role"), m.get("content") or ""
        action = parse_action(content) if role == "assistant" else None
        if action is not None and action["name"] != FINISH:
            call = {**action, "id": f"call_{sum(1 for x in messages if x.get('tool_calls'))}"}
            last = (len(messages), call)
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif role == "function" and last is not None:
            call = last[1]
            messages.append({"role": "tool", "content": str(content), "tool_call_id": call["id"], "name": call["name"]})
        else:
            messages.append({"role": "assistant" if role == "assistant" else "user", "content": str(content)})
    if last is None:
        return None
    index, call = last
    after = messages[index + 1:]
    response = after[0]["content"] if after and after[0]["role"] == "tool" else ""
    return _Trajectory(messages[:index], call, response)


_EXTERNAL_WORDS = (
    ("rate_limit", re.compile(r"rate.?limit|too many requests|\b429\b", re.IGNORECASE)),
    ("quota", re.compile(r"quota", re.IGNORECASE)),
    ("permission", re.compile(r"permission|forbidden|unauthori[sz]ed|access denied|\b40[13]\b", re.IGNORECASE)),
    ("timeout", re.compile(r"time.?out|timed out", re.IGNORECASE)),
    ("connection", re.compile(r"connect|network|unreachable", re.IGNORECASE)),
)


def external_kind(response: str) -> str:
    """The kind of environment error a recorded tool response reports (unrecognised: a server error)."""
    return next((kind for kind, words in _EXTERNAL_WORDS if words.search(response)), "server_error")


def _published(data_dir: Path, skipped: Counter[str]) -> list[Case]:
    root = _published_root(data_dir)
    cases = []
    for path in sorted(root.rglob("*.json")):
        stem = path.relative_to(root).with_suffix("").as_posix()
        records: dict[str, Any] = {}
        with skipping(skipped, path.name), path.open(encoding="utf-8") as fh:
            records = dict(json.load(fh))
        for key, record in records.items():
            with skipping(skipped, path.name):
                if case := _published_case(f"published/{stem}/{key}", stem, record):
                    cases.append(case)
    return cases


def _published_case(case_id: str, file: str, record: dict[str, Any]) -> Case | None:
    prompt = record["query_prompt"]
    trajectory = _trajectory(prompt)
    if trajectory is None:
        return None  # nothing proposed yet: no call for the guard to judge
    call, truth = trajectory.call, record["ground_truth"]
    meta: dict[str, Any] = {"origin": "published", "file": file}
    if isinstance(truth, list):
        next_action = parse_action(truth[1]) if len(truth) > 1 else None
        injection = _Injection(PERSISTENT, call, Expected(label=labels.TOOL_ERROR, tool=call["name"]),
                               tool_errors=[ToolError(tool=call["name"], kind=external_kind(trajectory.response),
                                                      times=PERSISTENT_TIMES)],
                               gold=[] if next_action is None or next_action["name"] == FINISH else [next_action])
        meta["next_action"] = next_action
    elif error := record.get("error_type"):
        gold = parse_action(truth)
        injection = _Injection(error, call, _published_expected(error, call, gold or {}), gold=[gold] if gold else [])
    else:
        injection = _Injection(CLEAN, call, Expected(), gold=[call])
        meta["next_action"] = parse_action(truth)
    meant = injection.gold[0] if injection.kind in ERROR_TYPES and injection.gold else call
    return Case(id=case_id, suite=NAME, subset=f"published_{injection.kind}", messages=trajectory.messages,
                tools=tool_list(prompt[0]["content"]), calls=[call], expected=injection.expected,
                gold_calls=[{"name": g["name"], "args": g["args"]} for g in injection.gold],
                human=_human(meant), tool_errors=injection.tool_errors,
                meta={**meta, "error_type": record.get("error_type") or "", "detail": injection.detail})


def _published_expected(error: str, call: dict[str, Any], gold: dict[str, Any]) -> Expected:
    """The label a released error case calls for, told from the faulty action against the gold one."""
    if error == SELECTION:
        return Expected(label=labels.WRONG_TOOL, tool=call["name"])
    if error == HALLUCINATION:
        return Expected(label=labels.UNKNOWN_TOOL, tool=call["name"])
    got = call["args"] if isinstance(call["args"], dict) else {}
    want = gold.get("args") if isinstance(gold.get("args"), dict) else {}
    if error == KEY:
        if missing := [k for k in want if k not in got]:
            return Expected(label=labels.MISSING_INFO, tool=call["name"], params=missing)
        return Expected(label=labels.INVALID_ARGUMENT, tool=call["name"], params=[k for k in got if k not in want])
    changed = [k for k in want if k in got and got[k] != want[k]]
    retyped = [k for k in changed if value_kind(got[k]) != value_kind(want[k])]
    label = labels.INVALID_ARGUMENT if retyped else labels.MISSING_INFO
    params = retyped or changed
    return Expected(label=label, tool=call["name"], params=params, values=[got[k] for k in params])


# -- the rebuilt protocol: gold calls of ACEBench and API-Bank -----------------------------------


@dataclass(frozen=True)
class Gold:
    """One gold call and the conversation and tools it was made in."""

    id: str
    source: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    call: dict[str, Any]
    family: str = ""


@dataclass
class _Injection:
    """What an injector made: the call proposed, the truth about it, and what the case needs."""

    kind: str
    call: dict[str, Any]
    expected: Expected
    gold: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    tool_errors: list[ToolError] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class Pool:
    """What one source offers an injector: every tool, and every gold value by key."""

    tools: list[dict[str, Any]]
    values: dict[str, list[Any]]

    @classmethod
    def of(cls, golds: list[Gold]) -> Pool:
        tools: dict[str, dict[str, Any]] = {}
        values: dict[str, list[Any]] = {}
        for g in golds:
            for t in g.tools:
                tools.setdefault(t["name"], t)
            for k, v in g.call["args"].items():
                if v not in values.setdefault(k, []):
                    values[k].append(v)
        return cls(list(tools.values()), values)


def _rebuilt(data_dir: Path, skipped: Counter[str]) -> list[Case]:
    cases = []
    for golds in (_acebench_golds(data_dir, skipped), _api_bank_golds(data_dir, skipped)):
        golds = [g for g in golds if any(t["name"] == g.call["name"] for t in g.tools)]
        pool = Pool.of(golds)
        for gold in golds:
            cases += variants(gold, pool)
    return cases


def _acebench_golds(data_dir: Path, skipped: Counter[str]) -> list[Gold]:
    loaded = acebench.load(data_dir)
    skipped.update({f"acebench/{reason}": n for reason, n in loaded.skipped.items()})
    return [Gold(id=f"acebench/{c.id}/{call['id']}", source="acebench", messages=c.messages, tools=c.tools,
                 call={"name": call["name"], "args": call["args"]}, family=c.family)
            for c in loaded if c.subset == "normal" for call in c.calls
            if isinstance(call["args"], dict)]


def _api_bank_golds(data_dir: Path, skipped: Counter[str]) -> list[Gold]:
    """Level-1 expected requests, typed as described; left out: the requests that do not parse (quotes
    nested in quotes) or do not fit their own API description."""
    path = Path(data_dir) / api_bank.LEVEL1
    if not path.is_file():
        return []
    golds = []
    for record in api_bank.test_records(path, skipped):
        with skipping(skipped, path.name):
            if gold := _api_bank_gold(record):
                golds.append(gold)
    return golds


def _api_bank_gold(record: dict[str, Any]) -> Gold | None:
    apis = api_bank.api_descriptions(record["instruction"])
    try:
        call = api_bank.parse_request(record["expected_output"].removeprefix("API-Request:"))
    except ValueError:
        return None
    api = next((a for a in apis if a["name"] == call["name"]), None)
    if api is None or not api_bank.fits(call["args"], api):
        return None
    messages = api_bank.context_messages(record["instruction"]) + api_bank.parse_dialogue(record["input"])
    return Gold(id=f"api-bank/{record['file']}#{record['id']}", source="api-bank", messages=messages,
                tools=apis, call={"name": call["name"], "args": api_bank.typed_args(call["args"], api)},
                family=api_bank.family_of(record["file"]))


# -- the injector ---------------------------------------------------------------------------------


def variants(gold: Gold, pool: Pool) -> list[Case]:
    """The clean case of a gold call and its injected ones: the first ``INJECTED_PER_CALL`` error
    classes that apply to the call, tool selection first (it fits fewer than one gold call in ten, and
    the paper finds it the hardest to notice), the others in an order seeded by the call's id."""
    rng = random.Random(gold.id)
    order = [SELECTION, *rng.sample([k for k in INJECTORS if k != SELECTION], len(INJECTORS) - 1)]
    made = [_case(gold, _Injection(CLEAN, gold.call, Expected(), gold=[gold.call]))]
    for kind in order:
        if len(made) > INJECTED_PER_CALL:
            break
        if injection := INJECTORS[kind](gold, pool, random.Random(f"{gold.id}/{kind}")):
            made.append(_case(gold, injection))
    return made


def _case(gold: Gold, injection: _Injection) -> Case:
    variant = EXTERNAL if injection.kind in (PERSISTENT, TRANSIENT) else injection.kind
    return Case(
        id=f"rebuilt/{gold.id}/{variant}", family=gold.family, suite=NAME, subset=f"rebuilt_{injection.kind}", messages=gold.messages,
        tools=injection.tools or gold.tools, calls=[{**injection.call, "id": "call_k"}], expected=injection.expected,
        gold_calls=injection.gold, human=_human(gold.call), tool_errors=injection.tool_errors,
        meta={"origin": "rebuilt", "source": gold.source, "gold_call": gold.id, "variant": variant,
              "detail": injection.detail},
    )


def _human(gold: dict[str, Any]) -> Human:
    """The user knows what they asked for: the gold call's values and tool."""
    args = gold.get("args")
    return Human(values=dict(args) if isinstance(args, dict) else {}, tool=gold.get("name"))


def _schema(tool: dict[str, Any]) -> dict[str, Any]:
    """A tool's parameters as a JSON schema (shared, do not mutate)."""
    return _schema_of(json.dumps(tool, sort_keys=True))


@cache
def _schema_of(tool_json: str) -> dict[str, Any]:
    return next(iter(ToolRegistry([json.loads(tool_json)]))).parameters


def _valid(schema: dict[str, Any], value: Any) -> bool:
    return validator(schema).is_valid(value)


def _tool_of(gold: Gold) -> dict[str, Any]:
    return next(t for t in gold.tools if t["name"] == gold.call["name"])


def _similarity(a: dict[str, Any], b: dict[str, Any]) -> float:
    def words(t: dict[str, Any]) -> str:
        return f"{name_words(t['name'])} {t.get('description') or ''}"

    return fuzz.token_set_ratio(words(a), words(b))


def _fit(args: dict[str, Any], tool: dict[str, Any]) -> dict[str, Any] | None:
    """The gold values re-addressed to another tool: keys it declares kept, each other required key
    filled with a gold value of a similar name that its schema accepts ('user_name' for 'username');
    None when the tool cannot be filled validly or would get none of the gold values."""
    schema = _schema(tool)
    props = schema.get("properties") or {}
    out = {k: v for k, v in args.items() if k in props}
    spare = {k: v for k, v in args.items() if k not in props}
    for key in schema.get("required") or []:
        if key in out:
            continue
        near = next((k for k, v in spare.items()
                     if fuzz.ratio(name_words(k), name_words(key)) >= 70 and _valid(props.get(key) or {}, v)), None)
        if near is None:
            return None
        out[key] = spare.pop(near)
    return out if (out or not args) and _valid(schema, out) else None


def inject_selection(gold: Gold, pool: Pool, rng: random.Random) -> _Injection | None:
    """The most similar other tool of the list that the gold values fit; for a list of one tool, the
    most similar fitting one of the ``POOL_CANDIDATES`` nearest tools of the pool, added to the list."""
    right = _tool_of(gold)
    listed = {t["name"] for t in gold.tools}
    others = [t for t in gold.tools if t["name"] != right["name"]]
    nearest = sorted(others or [t for t in pool.tools if t["name"] not in listed],
                     key=lambda t: (-_similarity(t, right), rng.random()))
    for tool in nearest if others else nearest[:POOL_CANDIDATES]:
        args = _fit(gold.call["args"], tool)
        if args is not None:
            tools = gold.tools if tool["name"] in listed else [*gold.tools, tool]
            return _Injection(SELECTION, {"name": tool["name"], "args": args},
                              Expected(label=labels.WRONG_TOOL, tool=tool["name"]), gold=[gold.call], tools=tools,
                              detail={"wrong_tool": tool["name"], "added_to_list": tool["name"] not in listed})
    return None


_SYNONYMS = {"get": "fetch", "fetch": "get", "search": "find", "find": "search", "query": "lookup",
             "create": "make", "add": "create", "delete": "remove", "remove": "delete", "update": "modify",
             "modify": "update", "calculate": "compute", "check": "verify", "list": "show", "set": "configure",
             "book": "reserve", "send": "post", "record": "log", "analyze": "evaluate", "generate": "build"}
_SEGMENT = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+|[^A-Za-z\d]+")


def hallucinated_name(name: str, taken: set[str], rng: random.Random) -> str:
    """A plausible name that is not registered: a synonym swapped in, a word added, or a plural."""
    segments = _SEGMENT.findall(name)
    words = [i for i, s in enumerate(segments) if s.isalpha()]
    snake = "_" in name or name.islower()

    def swap() -> str | None:
        hits = [i for i in words if segments[i].lower() in _SYNONYMS]
        if not hits:
            return None
        i = rng.choice(hits)
        new = _SYNONYMS[segments[i].lower()]
        new = new.capitalize() if segments[i][0].isupper() else new
        return "".join(segments[:i] + [new] + segments[i + 1:])

    def add() -> str:
        word = rng.choice(("info", "details", "data", "v2"))
        return f"{name}_{word}" if snake else name + word.capitalize()

    def plural() -> str | None:
        return name + "s" if words and not segments[words[-1]].endswith("s") else None

    strategies: list[Callable[[], str | None]] = [swap, add, plural]
    rng.shuffle(strategies)
    for strategy in strategies:
        if (new := strategy()) and new not in taken:
            return new
    return f"{name}_v2" if f"{name}_v2" not in taken else f"{name}_{rng.randrange(3, 99)}"


def inject_hallucination(gold: Gold, pool: Pool, rng: random.Random) -> _Injection:
    taken = {t["name"] for t in gold.tools} | {t["name"] for t in pool.tools}
    name = hallucinated_name(gold.call["name"], taken, rng)
    return _Injection(HALLUCINATION, {"name": name, "args": gold.call["args"]},
                      Expected(label=labels.UNKNOWN_TOOL, tool=name), gold=[gold.call], detail={"hallucinated": name})


#: Options a model may invent; each is added only where the schema declares nothing like it.
_EXTRA_KEYS: dict[str, Any] = {"verbose": True, "include_metadata": True, "max_results": 10, "response_format": "json",
                               "priority": "high", "debug_mode": False}


def inject_key(gold: Gold, pool: Pool, rng: random.Random) -> _Injection | None:
    """A required key dropped (the value goes missing), or an undeclared option added."""
    schema, args, name = _schema(_tool_of(gold)), gold.call["args"], gold.call["name"]
    required = [k for k in schema.get("required") or [] if k in args]
    declared = [name_words(k) for k in schema.get("properties") or {}]
    extras = [k for k in _EXTRA_KEYS if k not in args and all(fuzz.ratio(name_words(k), d) < 60 for d in declared)]
    options = {how: keys for how, keys in (("missing", required), ("extra", extras)) if keys}
    if not options:
        return None
    how = rng.choice(sorted(options))
    key = rng.choice(options[how])
    if how == "missing":
        call = {"name": name, "args": {k: v for k, v in args.items() if k != key}}
        expected = Expected(label=labels.MISSING_INFO, tool=name, params=[key])
    else:
        call = {"name": name, "args": {**args, key: _EXTRA_KEYS[key]}}
        expected = Expected(label=labels.INVALID_ARGUMENT, tool=name, params=[key], values=[_EXTRA_KEYS[key]])
    return _Injection(KEY, call, expected, gold=[gold.call], detail={how: key})



def _retyped(value: Any) -> Any:
    """The same value in the type a model slips into: '5' for 5, 'yes' for true, text for a list."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return ", ".join(map(str, value)) if all(not isinstance(v, (list, dict)) for v in value) else json.dumps(value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return None


def _said(value: Any, gold: Gold) -> bool:
    """Whether a value's words occur in the conversation."""
    text = normalise_text(" ".join(str(m.get("content") or "") for m in gold.messages))
    needle = normalise_text(str(value))
    return bool(needle) and f" {needle} " in f" {text} "


def _ungrounded(key: str, value: Any, schema: dict[str, Any], gold: Gold, pool: Pool, rng: random.Random) -> Any:
    """A schema-valid value for ``key`` that nobody said: another gold call's value, or a shifted number."""
    if isinstance(value, str):
        candidates = [v for v in pool.values.get(key, []) if isinstance(v, str) and normalise_text(v) != normalise_text(value)]
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        candidates = [value * 2 + 1, value + 7, value * 3 + 2, value + 13] if value else [17, 23]
    else:
        return None
    fitting = [v for v in candidates if _valid(schema, v) and not _said(v, gold)]
    return rng.choice(fitting) if fitting else None


def inject_value(gold: Gold, pool: Pool, rng: random.Random) -> _Injection | None:
    """One value in a type its schema refuses, or replaced by a valid value nobody said."""
    props, args, name = _schema(_tool_of(gold)).get("properties") or {}, gold.call["args"], gold.call["name"]
    options: dict[str, list[tuple[str, Any]]] = {}
    for key, value in args.items():
        schema = props.get(key) or {}
        wrong = _retyped(value)
        if wrong is not None and not _valid(schema, wrong):
            options.setdefault("type", []).append((key, wrong))
        other = _ungrounded(key, value, schema, gold, pool, rng)
        if other is not None:
            options.setdefault("content", []).append((key, other))
    if not options:
        return None
    how = rng.choice(sorted(options))
    key, bad = rng.choice(options[how])
    label = labels.INVALID_ARGUMENT if how == "type" else labels.MISSING_INFO
    return _Injection(VALUE, {"name": name, "args": {**args, key: bad}},
                      Expected(label=label, tool=name, params=[key], values=[bad]), gold=[gold.call],
                      detail={how: key})


def inject_external(gold: Gold, pool: Pool, rng: random.Random) -> _Injection:
    """The gold call, failing in the environment: transient kinds once, persistent kinds three times."""
    kind = rng.choice(sorted(EXTERNAL_KINDS))
    times = EXTERNAL_KINDS[kind]
    name = gold.call["name"]
    transient = times == TRANSIENT_TIMES
    return _Injection(TRANSIENT if transient else PERSISTENT, gold.call, Expected(label=labels.TOOL_ERROR, tool=name),
                      gold=[gold.call] if transient else [], tool_errors=[ToolError(tool=name, kind=kind, times=times)],
                      detail={"kind": kind, "times": times, "next_action": None if transient else FINISH})


Injector = Callable[[Gold, Pool, random.Random], "_Injection | None"]
INJECTORS: dict[str, Injector] = {SELECTION: inject_selection, HALLUCINATION: inject_hallucination, KEY: inject_key,
                                  VALUE: inject_value, EXTERNAL: inject_external}


# -- scoring --------------------------------------------------------------------------------------


def kind_of(result: Any) -> str:
    """``published_parameters_key_error`` -> ``parameters_key_error``."""
    return result.subset.split("_", 1)[1]


def intervened(result: Any) -> bool:
    """The guard critiqued the call: it stopped it, or repaired it before it ran."""
    return bool(result.flagged or result.action == "repair")


def reported_labels(result: Any) -> set[str]:
    if result.flagged:
        return set(result.predicted)
    if result.action == "repair":
        return labels.labels_of(result.categories)
    return set()


def _normalised(value: Any) -> Any:
    if isinstance(value, str):
        return re.sub(r"[\s,./\-_*^]", "", value.casefold())
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, list):
        return [_normalised(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalised(v) for k, v in value.items()}
    return value


def args_score(got: Any, want: Any) -> float:
    """The paper's Correct-Args with exact matching: a missing or extra key scores 0, else the share
    of parameters whose values match after normalisation."""
    if not isinstance(got, dict) or not isinstance(want, dict) or set(got) != set(want):
        return 0.0
    if not want:
        return 1.0
    return sum(_normalised(got[k]) == _normalised(want[k]) for k in want) / len(want)


def _ran(result: Any) -> dict[str, Any] | None:
    return result.executed[-1] if result.executed else None


def _correct_tool(result: Any) -> bool:
    ran = _ran(result)
    return bool(ran and result.gold_calls and ran["name"] == result.gold_calls[0]["name"])


def _correct_args(result: Any) -> float:
    return args_score(_ran(result)["args"], result.gold_calls[0]["args"]) if _correct_tool(result) else 0.0


def _runs_of_failed_call(result: Any) -> int:
    """How many times in a row the call under test ran (the first run and the backoff's repeats)."""
    runs = list(_leading(result.executed))
    return len(runs) if runs and runs[0]["name"] == result.tool else 0


def _leading(executed: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for e in executed:
        if e != executed[0]:
            return
        yield e


def _finish(result: Any) -> tuple[float, float]:
    """Skip/finish tool and args scores of a persistent failure: the human was asked (finish), or the
    next sub-task's call ran (skip)."""
    escalated = result.questions > 0
    if result.gold_calls and _correct_tool(result):
        return 1.0, _correct_args(result)
    return float(escalated), float(escalated)


def overall(m: dict[str, float]) -> float:
    """0.2 reflect + 0.3 correct + 0.05 retry + 0.45 skip/finish, each group the mean of its columns."""
    return (0.2 * (m["detect"] + m["category"]) / 2 + 0.3 * (m["correct_tool"] + m["correct_args"]) / 2
            + 0.05 * m["retry"] + 0.45 * (m["break"] + m["skip_finish_tool"] + m["skip_finish_args"]) / 3)


def paper_metrics(results: list[Any]) -> dict[str, float]:
    internal = [r for r in results if kind_of(r) in (CLEAN, *ERROR_TYPES)]
    injected = [r for r in internal if kind_of(r) != CLEAN]
    clean = [r for r in internal if kind_of(r) == CLEAN]
    external = [r for r in results if kind_of(r) in (PERSISTENT, TRANSIENT)]
    persistent = [r for r in external if kind_of(r) == PERSISTENT]
    finishes = [_finish(r) for r in persistent]

    def caught(r: Any) -> bool:
        return r.expected["label"] in reported_labels(r)

    out = {
        "detect": ratio(sum(intervened(r) == (kind_of(r) != CLEAN) for r in internal), len(internal)),
        "category": ratio(sum(caught(r) for r in injected), len(injected)),
        "correct_tool": ratio(sum(_correct_tool(r) for r in injected), len(injected)),
        "correct_args": ratio(sum(_correct_args(r) for r in injected), len(injected)),
        "retry": ratio(sum(_runs_of_failed_call(r) >= 2 for r in external), len(external)),
        "break": ratio(sum(_runs_of_failed_call(r) <= 1 + RETRY_LIMIT for r in persistent), len(persistent)),
        "skip_finish_tool": ratio(sum(t for t, _ in finishes), len(finishes)),
        "skip_finish_args": ratio(sum(a for _, a in finishes), len(finishes)),
    }
    out["overall"] = overall(out)
    for error, metric in _REFLECT_METRIC.items():
        of_type = [r for r in injected if kind_of(r) == error]
        out[metric] = ratio(sum(caught(r) for r in of_type), len(of_type))
    out["over_reflection_rate"] = ratio(sum(intervened(r) for r in clean), len(clean))
    return out
