"""ReflecTool-Bench, rebuilt on API-Bank's multi-turn dialogues: is the proposed call wrong, why, and
does the run end with the right call?

ReflecTool-Bench ("Do LLMs Catch Their Own Mistakes? A Comprehensive Benchmark for Reflective Tool Use LLMs", Liu et al.) injects five tool-use errors into clean dialogues, each once from
the user's side (the user's words are changed; the assistant cooperates) and once from the
assistant's side (the user is clear; the call is wrong): parameter mismatch, missing required
parameter, incorrect tool selection, ambiguous reference, over/under-specification. One clean and
ten erroneous variants per scenario; the critic says Correct/Incorrect (detection, per side), names
the error (classification, over the cases it flagged) and proposes the fix (correction: exact match
with the ground-truth call, over the cases it flagged). Its data is not published, so this suite
rebuilds the protocol on ``api-bank/lv1-lv2-samples/level-1-given-desc``:

- A scenario is one dialogue up to its last recorded API call, which is the gold call (cast to
  the described types: API-Bank records every value as a string). Earlier calls and their recorded
  results stay in the conversation; the API descriptions come from the level-1 test records, which
  describe every API the dialogues call.
- The tool list is the APIs the dialogue names (its file name) or calls, plus a **distractor**: of
  all level-1 APIs, the most similar to the gold API (TF-IDF over name and description) whose
  required inputs the gold arguments cover, so a wrong-tool call can be made with the same
  arguments. Every variant of a dialogue offers the same tools.
- **User side**: the user's words are changed, and the call carries what the user then said, or
  omits what they no longer said (the cooperative assistant of the paper's injection prompt).
  **Assistant side**: the words are kept, and the call is corrupted.

The errors (user side / assistant side -> expected label):

- parameter_mismatch: a date the user gave becomes "yesterday", a number words ("two") / a boolean
  becomes "yes", a number words, a date "yesterday", a digit string a number -> invalid_argument;
- missing_required_parameter: the user's sentences giving a required value are removed / a
  required argument is dropped -> missing_information;
- incorrect_tool_selection: a word of the gold API's name the user said becomes the distractor's
  ("modify" -> "cancel") / the distractor is called -> suspicious_tool_selection;
- ambiguous_reference: a value the user gave becomes "it", "that one", "my last booking"... / the
  call's value becomes such a reference -> missing_information;
- over_under_specification: an unsupported detail is added (invalid_argument) or, when the API has
  optional parameters (only ``Translate`` here), an optional value is left out (missing_information).

Choices are seeded by the dialogue and variant (``random.Random``), so the suite is the same on
every run. A user-side edit must take the value out of the whole dialogue (it was the user's alone)
and, for replacements, leave every other value as it was; when no argument allows that the variant
is not built and is counted in ``Built.skipped``. The simulated human knows the gold values and the
gold tool.

Scoring, as the paper's Table 1 (Critique): detection per side, over the erroneous cases, and a
guard **detects** when it stops the call or repairs it (a repair says the call was wrong and fixes
it); classification is right when the expected label is among the labels of the guard's findings;
correction is the runner's ``recovered`` (the last executed call equals the gold call); both over
the detected cases, averaged over the two sides as the paper's "Avg" columns. Clean variants give
the false-alarm rate. The paper's critic reads a finished dialogue; here the guard judges the call
before it runs, in the live graph, and the human it asks is simulated.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from guard_bench import labels
from guard_bench.cases import Case, Expected, Human, Loaded
from guard_bench.datasets import api_bank, skipping
from guard_bench.metrics import ratio
from guard_bench.suites import PaperFigure
from guard.normalise import number_words
from guard.registry import ToolSpec, name_words

NAME = "reflectool"
CLEAN, USER, ASSISTANT = "clean", "user", "assistant"
MISMATCH, MISSING, TOOL, AMBIGUOUS, SPECIFICATION = (
    "parameter_mismatch", "missing_required_parameter", "incorrect_tool_selection", "ambiguous_reference",
    "over_under_specification",
)
CALL_ID = "call_0"

#: What a user says instead of a value only they can resolve.
REFERENCES = ("it", "that one", "my last booking", "the same as last time")
#: Unsupported details: (field, value, how the user asks for it).
EXTRAS = (
    ("priority", "high", "Please treat it as high priority."),
    ("notes", "as discussed", "Add a note: as discussed."),
    ("send_confirmation", True, "And send me a confirmation."),
)

_TABLE1 = "ReflecTool-Bench (Liu et al., Do LLMs Catch Their Own Mistakes?) Table 1, Critique task"
PAPER = [
    PaperFigure(metric, model, value, _TABLE1, rebuilt=True)
    for model, figures in {
        "o4-mini": (0.9192, 0.8730, 0.8961, 0.1975, 0.7861),
        # The table's Class "Avg" cell for Claude Opus repeats its User figure; this is the mean.
        "Claude Opus": (0.9753, 0.8788, 0.9271, 0.1575, 0.7872),
        "Llama-3.1-8B": (0.9469, 0.8646, 0.9058, 0.1621, 0.7488),
        "Qwen2.5-7B": (0.8235, 0.5966, 0.7101, 0.1795, 0.7401),
    }.items()
    for metric, value in zip(("detect_user", "detect_assistant", "detect_avg", "correct_avg", "class_avg"), figures)
]

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Dialogue:
    """A scenario: the conversation before the gold call, the tools, the gold call and its result."""

    id: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    api: dict[str, Any]
    gold: dict[str, Any]
    wrong: dict[str, Any]
    result: Any

    @property
    def args(self) -> dict[str, Any]:
        return self.gold["args"]

    def user_params(self) -> list[str]:
        """Arguments whose value only the user's words give."""
        return [p for p, v in self.args.items() if api_bank.said_only_by_user(self.messages, v)]


@dataclass(frozen=True)
class Injection:
    messages: list[dict[str, Any]]
    call: dict[str, Any]
    expected: Expected
    human: Human



def available(data_dir: Path) -> bool:
    return api_bank.dialogues_available(data_dir)


def load(data_dir: Path) -> Loaded:
    return build(data_dir).loaded()


def build(data_dir: Path) -> api_bank.Built:
    """Every scenario's clean and injected cases, one family per dialogue (``api_bank.family_of``);
    a dialogue or test record that cannot be read is skipped and counted (``Built.unreadable``)."""
    built = api_bank.Built()
    pool, files = api_bank.dialogues(data_dir, built.unreadable)
    for path, context in files:
        with skipping(built.unreadable, api_bank.DIALOGUES.name):
            _dialogue(built, read_dialogue(path, pool, context), path)
    return built


def _dialogue(built: api_bank.Built, dialogue: Dialogue | str, path: Path) -> None:
    if isinstance(dialogue, str):
        built.skip(dialogue, path.stem)
        return
    made = [_case(dialogue, CLEAN, "clean", Injection(dialogue.messages, dialogue.gold, Expected(), Human()))]
    for (side, error), inject in INJECTORS.items():
        variant = f"{dialogue.id}/{side}/{error}"
        injection = inject(dialogue, random.Random(f"{NAME}:{variant}"))
        if injection is None:
            built.skip(f"{side} {error}: cannot be injected", variant)
        else:
            made.append(_case(dialogue, side, error, injection))
    built.cases += made  # all of a dialogue's cases, or none


def _case(d: Dialogue, side: str, error: str, injection: Injection) -> Case:
    case_id = f"{d.id}/{CLEAN}" if side == CLEAN else f"{d.id}/{side}/{error}"
    return Case(id=case_id, family=api_bank.family_of(d.id), suite=NAME, subset=side, messages=injection.messages, tools=d.tools, calls=[injection.call],
                expected=injection.expected, gold_calls=[d.gold], human=injection.human,
                tool_results={d.gold["name"]: d.result}, meta={"dialogue": d.id, "error": error})


# --- reading a dialogue -----------------------------------------------------------------------


def read_dialogue(path: Path, pool: api_bank.ApiPool, context: list[dict[str, str]]) -> Dialogue | str:
    """The scenario of one dialogue file, or why there is none."""
    turns = api_bank.read_turns(path)
    calls = [i for i, t in enumerate(turns) if t.get("role") == "API" and not (t.get("result") or {}).get("exception")]
    if not calls:
        return "no recorded call without an exception"
    last = turns[calls[-1]]
    api = pool.apis.get(last["api_name"])
    if api is None:
        return "called API not described"
    args = api_bank.typed_args(last.get("param_dict") or {}, api)
    if not api_bank.fits(args, api):
        return "recorded call does not fit its API description"
    named = path.stem.split("-level-")[0].split("-") + [t["api_name"] for t in turns if t.get("role") == "API"]
    tools = [pool.apis[n] for n in dict.fromkeys(named) if n in pool.apis]
    wrong = distractor(api, args, pool)
    if wrong["name"] not in {t["name"] for t in tools}:
        tools.append(wrong)
    return Dialogue(id=path.stem, messages=context + api_bank.dialogue_messages(turns[: calls[-1]]), tools=tools, api=api,
                    gold={"name": api["name"], "args": args, "id": CALL_ID}, wrong=wrong,
                    result=(last.get("result") or {}).get("output"))


def distractor(api: dict[str, Any], args: dict[str, Any], pool: api_bank.ApiPool) -> dict[str, Any]:
    """The most similar other API whose required inputs the gold arguments cover (the first similar
    one when none does), never one that may be the same service under another name."""
    ranked = [pool.apis[n] for n in pool.ranked(api["name"]) if not api_bank.interchangeable(api, pool.apis[n])]
    covered = [a for a in ranked if a.get("input_parameters") and set(ToolSpec.from_any(a).required) <= set(args)]
    return (covered or ranked)[0]


# --- injections -------------------------------------------------------------------------------

Injector = Callable[[Dialogue, random.Random], Injection | None]
T = TypeVar("T")


def _call(d: Dialogue, args: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    return {"name": name or d.gold["name"], "args": args, "id": CALL_ID}


def _wrong_call(d: Dialogue) -> dict[str, Any]:
    params = d.wrong.get("input_parameters") or {}
    return _call(d, {k: v for k, v in d.args.items() if k in params}, d.wrong["name"])


def _shuffled(items: list[T], rng: random.Random) -> list[T]:
    out = list(items)
    rng.shuffle(out)
    return out


def _values_kept(d: Dialogue, messages: list[dict[str, Any]], changed: str | None = None) -> bool:
    """After a user-side edit: the changed argument's value is nowhere, every other value as available as before."""
    if changed is not None and api_bank.held_by(messages, d.args[changed]):
        return False
    return all(bool(api_bank.held_by(messages, v)) == bool(api_bank.held_by(d.messages, v))
               for p, v in d.args.items() if p != changed)


def _user_replaced(
    d: Dialogue, rng: random.Random, words_for: Callable[[str], str | None]
) -> tuple[str, str, list[dict[str, Any]]] | None:
    """The first (seeded order) user-given argument whose words can be replaced by ``words_for(param)``
    without touching another value: (param, new words, messages)."""
    for p in _shuffled(d.user_params(), rng):
        words = words_for(p)
        if words is None:
            continue
        messages = api_bank.replace_value(d.messages, d.args[p], words)
        if _values_kept(d, messages, p):
            return p, words, messages
    return None


def _user_dropped(d: Dialogue, rng: random.Random, params: list[str]) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The user's sentences giving one of ``params`` (seeded order) removed, the user still speaking:
    (every value the dialogue lost, by parameter; messages)."""
    for p in _shuffled([p for p in d.user_params() if p in params], rng):
        messages = api_bank.drop_value(d.messages, d.args[p])
        if any(m["role"] == "user" for m in messages):
            lost = {q: v for q, v in d.args.items() if api_bank.held_by(d.messages, v) and not api_bank.held_by(messages, v)}
            return lost, messages
    return None


def _mismatch_words(value: Any, declared: str) -> str | int | None:
    """A value of the wrong type: "yes" for a boolean, words for a number, "yesterday" for a date,
    a number for a string of digits."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and 0 <= value < 100:
        return number_words(value)
    if isinstance(value, str) and _ISO_DATE.match(value):
        return "yesterday"
    if isinstance(value, str) and value.isdigit() and declared == "string":
        return int(value)
    return None


def _declared(d: Dialogue, param: str) -> str:
    return str(ToolSpec.from_any(d.api).properties.get(param, {}).get("type", ""))


def _mismatched(d: Dialogue, messages: list[dict[str, Any]], p: str, wrong: Any) -> Injection:
    return Injection(messages, _call(d, {**d.args, p: wrong}),
                     Expected(label=labels.INVALID_ARGUMENT, tool=d.gold["name"], params=[p], values=[wrong]),
                     Human(values={p: d.args[p]}))


def mismatch_user(d: Dialogue, rng: random.Random) -> Injection | None:
    def words(p: str) -> str | None:
        wrong = _mismatch_words(d.args[p], _declared(d, p))
        return wrong if isinstance(wrong, str) else None

    found = _user_replaced(d, rng, words)
    return _mismatched(d, found[2], found[0], found[1]) if found else None


def mismatch_assistant(d: Dialogue, rng: random.Random) -> Injection | None:
    options = {p: w for p in d.args if (w := _mismatch_words(d.args[p], _declared(d, p))) is not None}
    if not options:
        return None
    p = rng.choice(sorted(options))
    return _mismatched(d, d.messages, p, options[p])


def _missing(d: Dialogue, messages: list[dict[str, Any]], omitted: dict[str, Any]) -> Injection:
    return Injection(messages, _call(d, {k: v for k, v in d.args.items() if k not in omitted}),
                     Expected(label=labels.MISSING_INFO, tool=d.gold["name"], params=list(omitted)), Human(values=omitted))


def missing_user(d: Dialogue, rng: random.Random) -> Injection | None:
    found = _user_dropped(d, rng, ToolSpec.from_any(d.api).required)
    return _missing(d, found[1], found[0]) if found else None


def missing_assistant(d: Dialogue, rng: random.Random) -> Injection | None:
    required = [p for p in ToolSpec.from_any(d.api).required if p in d.args]
    if not required:
        return None
    p = rng.choice(required)
    return _missing(d, d.messages, {p: d.args[p]})


def _tool(d: Dialogue, messages: list[dict[str, Any]]) -> Injection:
    return Injection(messages, _wrong_call(d), Expected(label=labels.WRONG_TOOL, tool=d.gold["name"]), Human(tool=d.gold["name"]))


def tool_user(d: Dialogue, rng: random.Random) -> Injection | None:
    """The user says a word of the distractor's name where they said the gold API's ("cancel" for "modify")."""
    pairs = [(g, w) for g, w in zip(name_words(d.gold["name"]).split(), name_words(d.wrong["name"]).split()) if g != w]
    for said, meant in _shuffled(pairs, rng):
        word = re.compile(rf"(?<!\w){re.escape(said)}(?:s|es|d|ed|ing)?(?!\w)", re.IGNORECASE)
        messages = [{**m, "content": word.sub(meant, m["content"])} if m["role"] == "user" else m for m in d.messages]
        if messages != d.messages and _values_kept(d, messages):
            return _tool(d, messages)
    return None


def tool_assistant(d: Dialogue, rng: random.Random) -> Injection:
    return _tool(d, d.messages)


def _ambiguous(d: Dialogue, messages: list[dict[str, Any]], p: str, reference: str) -> Injection:
    return Injection(messages, _call(d, {**d.args, p: reference}),
                     Expected(label=labels.MISSING_INFO, tool=d.gold["name"], params=[p], values=[reference]),
                     Human(values={p: d.args[p]}))


def ambiguous_user(d: Dialogue, rng: random.Random) -> Injection | None:
    reference = rng.choice(REFERENCES)
    found = _user_replaced(d, rng, lambda p: reference if isinstance(d.args[p], str) else None)
    return _ambiguous(d, found[2], found[0], reference) if found else None


def ambiguous_assistant(d: Dialogue, rng: random.Random) -> Injection | None:
    params = [p for p, v in d.args.items() if isinstance(v, str)]
    if not params:
        return None
    return _ambiguous(d, d.messages, rng.choice(params), rng.choice(REFERENCES))


def _extra(d: Dialogue, rng: random.Random) -> tuple[str, Any, str]:
    known = set(ToolSpec.from_any(d.api).properties)
    return rng.choice([e for e in EXTRAS if e[0] not in known])


def _over(d: Dialogue, messages: list[dict[str, Any]], extra: tuple[str, Any, str]) -> Injection:
    name, value, _ = extra
    return Injection(messages, _call(d, {**d.args, name: value}),
                     Expected(label=labels.INVALID_ARGUMENT, tool=d.gold["name"], params=[name], values=[value]), Human())


def _said_last(messages: list[dict[str, Any]], sentence: str) -> list[dict[str, Any]]:
    """``sentence`` added to the user's last turn."""
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")
    return [{**m, "content": f"{m['content']} {sentence}"} if i == last else m for i, m in enumerate(messages)]


def _optional(d: Dialogue) -> list[str]:
    return [p for p in api_bank.optional_params(d.api) if p in d.args]


def specification_user(d: Dialogue, rng: random.Random) -> Injection | None:
    """Under-specified when the user can leave out an optional value, else over-specified."""
    if found := _user_dropped(d, rng, _optional(d)):
        return _missing(d, found[1], found[0])
    if not any(m["role"] == "user" for m in d.messages):
        return None
    extra = _extra(d, rng)
    return _over(d, _said_last(d.messages, extra[2]), extra)


def specification_assistant(d: Dialogue, rng: random.Random) -> Injection:
    """Under-specified when the call has an optional value to drop, else over-specified."""
    if optional := _optional(d):
        p = rng.choice(optional)
        return _missing(d, d.messages, {p: d.args[p]})
    return _over(d, d.messages, _extra(d, rng))


INJECTORS: dict[tuple[str, str], Injector] = {
    (USER, MISMATCH): mismatch_user,
    (ASSISTANT, MISMATCH): mismatch_assistant,
    (USER, MISSING): missing_user,
    (ASSISTANT, MISSING): missing_assistant,
    (USER, TOOL): tool_user,
    (ASSISTANT, TOOL): tool_assistant,
    (USER, AMBIGUOUS): ambiguous_user,
    (ASSISTANT, AMBIGUOUS): ambiguous_assistant,
    (USER, SPECIFICATION): specification_user,
    (ASSISTANT, SPECIFICATION): specification_assistant,
}


# --- scoring ----------------------------------------------------------------------------------


def detected(result: Any) -> bool:
    """The guard said the call was wrong: it stopped it, or repaired it."""
    return bool(result.flagged) or result.action == "repair"


def classified(result: Any) -> bool:
    """The expected label is among the labels of the guard's findings (repaired ones included)."""
    found = set(result.predicted) if result.flagged else labels.labels_of(result.categories)
    return result.expected["label"] in found


def paper_metrics(results: list[Any]) -> dict[str, float]:
    """Detection per side over the erroneous cases; classification and correction over the detected
    ones; each averaged over the two sides; false alarms on the clean variants."""
    out: dict[str, float] = {}
    for side in (USER, ASSISTANT):
        erroneous = [r for r in results if r.subset == side]
        caught = [r for r in erroneous if detected(r)]
        out[f"detect_{side}"] = ratio(len(caught), len(erroneous))
        out[f"class_{side}"] = ratio(sum(classified(r) for r in caught), len(caught))
        out[f"correct_{side}"] = ratio(sum(bool(r.recovered) for r in caught), len(caught))
    for metric in ("detect", "class", "correct"):
        out[f"{metric}_avg"] = (out[f"{metric}_{USER}"] + out[f"{metric}_{ASSISTANT}"]) / 2
    clean = [r for r in results if r.subset == CLEAN]
    out["false_alarm_clean"] = ratio(sum(detected(r) for r in clean), len(clean))
    return out
