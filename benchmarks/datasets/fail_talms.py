"""Fail-TaLMs: every query through the preflight, scored as the paper scores a model's awareness.

Fail-TaLMs gives each query a tool list and no gold call. Its sets derive from the Original
("perfect") queries: Underspecified removes a value the query needed, Replaceable removes an API a
human could stand in for, Non-replaceable removes one nobody can, No-tools removes every API. The
paper asks the model "can you do this?" and counts it *aware* when it answers no/idk on a broken
query and yes on a perfect one (Table 1). The guard's counterpart is the preflight, its judgement
before any call: a flag is a "no/idk", no flag is a "yes".

Nothing in the release says what was removed, so the loader diffs each variant
(``<Set>/<Domain>/query_<n>_<k>.json``) against its original (``Original/<Domain>/query_<n>.json``):
the words missing from the query (Underspecified) become what the simulated human knows when asked,
as in the paper's Ask-and-Help; the API missing from ``api_list`` (Replaceable, Non-replaceable) is
the expected tool. A removed value is tied to a parameter only when it is one quoted or numeric
value right after that parameter's name ("device ID '08BE…'"); otherwise the parameter stays
unnamed. Some variants equal their original (35 Underspecified, 2 Non-replaceable in the release):
they keep the dataset's label and carry ``meta["unchanged"]``. Variants whose original file is
missing (20 in the release) keep their label with nothing diffed.

``outputs/<Set>/<model>_auto_eval[_qaq]/answers.json`` hold six LLMs' recorded answers (about 95
queries a set), joined through ``all_<Set>_queries.json`` (same ``query_id``, same query text; the
``all_*`` files renumber the queries, so entries are matched to the per-domain files by query and
API list). A recorded answer is aware by the paper's rule on its yes/idk/no annotation, which
reproduces Table 1 (the ``*_aware_score`` fields do not). Each case keeps the recorded awareness in
``meta["recorded"]``; ``paper_metrics`` reports each model's on the cases that were run.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from guard_bench import families, labels
from guard_bench.cases import Case, Expected, Human, Loaded
from guard_bench.datasets import READ_ERRORS, skipping
from guard_bench.metrics import ratio
from guard_bench.suites import PaperFigure
from guard.registry import name_words

NAME = "fail-talms"
ORIGINAL, UNDERSPECIFIED, REPLACEABLE, NON_REPLACEABLE, NO_TOOLS = (
    "Original", "Underspecified", "Replaceable", "Non-replaceable", "No-tools")
SETS = (ORIGINAL, UNDERSPECIFIED, REPLACEABLE, NON_REPLACEABLE, NO_TOOLS)
LABELS = {
    ORIGINAL: labels.OK,
    UNDERSPECIFIED: labels.MISSING_INFO,
    REPLACEABLE: labels.UNAVAILABLE_TOOL,
    NON_REPLACEABLE: labels.NO_SUITABLE_TOOL,
    NO_TOOLS: labels.NO_SUITABLE_TOOL,
}
#: The metric name of each set's awareness (on Original, awareness is proceeding).
METRIC = {
    ORIGINAL: "proceed_original",
    UNDERSPECIFIED: "aware_underspecified",
    REPLACEABLE: "aware_replaceable",
    NON_REPLACEABLE: "aware_non_replaceable",
    NO_TOOLS: "aware_no_tools",
}
#: The paper's rule for a recorded answer: which annotation, and which answers count as aware.
RECORDED_RULE = {
    ORIGINAL: ("tool_annotation", {"yes"}),
    UNDERSPECIFIED: ("info_annotation", {"no", "idk"}),
    REPLACEABLE: ("tool_annotation", {"idk"}),
    NON_REPLACEABLE: ("tool_annotation", {"no", "idk"}),
}
#: Labels that say "a tool is the problem": on Replaceable they, or a question, count as aware.
TOOL_PROBLEM = {labels.UNAVAILABLE_TOOL, labels.NO_SUITABLE_TOOL, labels.UNKNOWN_TOOL}

_TABLE_1 = "Fail-TaLMs Table 1 (Aware)"
_AWARE_TABLE = {  # model: proceed_original, aware_underspecified, aware_unavailable, aware_non_replaceable, aware_replaceable
    "Claude-3.5-Sonnet": (0.94, 0.42, 0.70, 0.85, 0.54),
    "GPT-4o": (1.00, 0.18, 0.06, 0.09, 0.03),
    "Qwen2-72B": (0.94, 0.08, 0.03, 0.05, 0.00),
    "Llama-3.1-8B": (1.00, 0.02, 0.02, 0.02, 0.01),
    "Llama-3.1-70B": (0.99, 0.19, 0.36, 0.55, 0.17),
    "Llama-3.1-405B": (1.00, 0.11, 0.02, 0.02, 0.02),
}
_AWARE_COLUMNS = ("proceed_original", "aware_underspecified", "aware_unavailable", "aware_non_replaceable", "aware_replaceable")
PAPER = [
    PaperFigure(metric, model, value, _TABLE_1)
    for model, values in _AWARE_TABLE.items()
    for metric, value in zip(_AWARE_COLUMNS, values)
]

_VARIANT = re.compile(r"^query_(\d+)\s*_(\d+)\.*$")
_ORIGINAL = re.compile(r"^query_(\d+)$")
_RUN = re.compile(r"^(?P<model>.+)_auto_eval(?P<aah>_qaq)?$")
_QUOTED = re.compile(r"""(?<!\w)['"‘“]([^'"‘’“”]+)['"’”](?!\w)""")
_NUMERIC = re.compile(r"(?<![\w.])[+-]?\d[\w.:/-]*")
#: Words that carry no information on their own: a removed fragment made only of them is rewording.
_FUNCTION_WORDS = frozenset(
    "a an the of in on at for to from with by and or also my me i you your it its this that these those some any "
    "can could would will please is are be".split()
)
#: Words before a removed value that may name its parameter ("... using device ID '08BE…'").
_NAME_WINDOW = 3


def _root(data_dir: Path) -> Path:
    return Path(data_dir) / "fail-talms"


def available(data_dir: Path) -> bool:
    return (_root(data_dir) / "benchmark" / ORIGINAL).is_dir()


def _record(path: Path) -> dict[str, Any]:
    """A query file holds a one-element list."""
    (record,) = json.loads(path.read_text(encoding="utf-8"))
    return record


def _query_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*/query_*.json"))


def _case_id(set_name: str, path: Path) -> str:
    return f"{set_name}/{path.parent.name}/{path.stem}"


def family_of(path: Path) -> str:
    """The source query of a file: ``<Domain>/query_<n>`` for ``query_<n>.json`` of Original and
    No-tools and for every variant ``query_<n>_<k>.json`` (variants follow their original, whether
    or not its file exists)."""
    m = _VARIANT.match(path.stem) or _ORIGINAL.match(path.stem)
    return f"{NAME}:{path.parent.name}/query_{m.group(1)}" if m else f"{NAME}:{path.parent.name}/{path.stem}"


# --- what a variant lost ------------------------------------------------------------------------


def _words(text: str) -> list[str]:
    """Whitespace-separated words with trailing punctuation split off ("ales?" -> "ales", "?")."""
    out: list[str] = []
    for word in text.split():
        core = word.rstrip("?,.!;:")
        out += [core] if core else []
        out += list(word[len(core):])
    return out


def _informative(words: list[str]) -> bool:
    return any(re.search(r"\w", w) and w.lower() not in _FUNCTION_WORDS for w in words)


def removed_spans(original: str, variant: str) -> list[tuple[int, int]]:
    """Word spans of the original that the variant deleted or replaced (not punctuation or function words alone)."""
    a, b = _words(original), _words(variant)
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    return [(i1, i2) for tag, i1, i2, _, _ in ops if tag in ("replace", "delete") and _informative(a[i1:i2])]


def _join(words: list[str]) -> str:
    return re.sub(r" ([?,.!;:])", r"\1", " ".join(words)).strip(" ?,.!;:")


def removed_words(original: str, variant: str) -> list[str]:
    """The fragments of the original query that the variant no longer says (a lone quoted value unquoted)."""
    words = _words(original)
    fragments = [_join(words[i:j]) for i, j in removed_spans(original, variant)]
    return [q.group(1) if (q := _QUOTED.fullmatch(f)) else f for f in fragments]


def _value_in(fragment: str) -> str | None:
    """The one value a fragment states: a single quoted string, else a single number-like token."""
    quoted = _QUOTED.findall(fragment)
    if quoted:
        return quoted[0] if len(quoted) == 1 else None
    numbers = _NUMERIC.findall(fragment)
    return numbers[0] if len(numbers) == 1 else None


def _stem(word: str) -> str:
    return re.sub(r"\W", "", word.lower())[:4]


def _parameters(api_list: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (api["api_name"], p["name"])
        for api in api_list
        for p in (api.get("required_parameters") or []) + (api.get("optional_parameters") or [])
    ]


def attribute(original: str, span: tuple[int, int], api_list: list[dict[str, Any]]) -> tuple[str | None, str, str] | None:
    """(tool, parameter, value) when a removed span states one value right after one parameter's name.

    The parameter's name words must all appear among the few words before the value; a name shared
    by several tools leaves the tool unknown (None). Anything less certain attributes nothing.
    """
    words = _words(original)
    i, j = span
    fragment = _join(words[i:j])
    value = _value_in(fragment)
    if value is None:
        return None
    before = {_stem(w) for w in words[max(0, i - _NAME_WINDOW):i] + fragment.split(value)[0].split()}
    hits = [(tool, p) for tool, p in _parameters(api_list) if all(_stem(w) in before for w in name_words(p).split())]
    if len({p for _, p in hits}) != 1:
        return None
    tools = {tool for tool, _ in hits}
    return (tools.pop() if len(tools) == 1 else None), hits[0][1], value


def _api_key(api: dict[str, Any]) -> tuple[str, str]:
    return str(api.get("tool_name")), str(api.get("api_name"))


def removed_apis(original: dict[str, Any], variant: dict[str, Any]) -> list[str]:
    """Names of the original's APIs that the variant's ``api_list`` no longer offers."""
    kept = {_api_key(a) for a in variant["api_list"]}
    return [a["api_name"] for a in original["api_list"] if _api_key(a) not in kept]


# --- cases ---------------------------------------------------------------------------------------


def _underspecified(original: dict[str, Any] | None, record: dict[str, Any]) -> tuple[Expected, Human, dict[str, Any]]:
    if original is None:
        return Expected(label=labels.MISSING_INFO), Human(), {"removed": []}
    spans = removed_spans(original["query"], record["query"])
    found = [a for span in spans if (a := attribute(original["query"], span, record["api_list"]))]
    tools = {tool for tool, _, _ in found}
    fragments = removed_words(original["query"], record["query"])
    expected = Expected(
        label=labels.MISSING_INFO,
        params=[p for _, p, _ in found],
        values=[v for _, _, v in found],
        tool=tools.pop() if len(tools) == 1 else None,
    )
    human = Human(values={p: v for _, p, v in found}, text="; ".join(fragments) or None)
    return expected, human, {"removed": fragments}


def _unavailable(set_name: str, original: dict[str, Any] | None, record: dict[str, Any]) -> tuple[Expected, Human, dict[str, Any]]:
    gone = removed_apis(original, record) if original is not None else []
    tool = gone[0] if gone else None
    human = Human(tool=tool) if set_name == REPLACEABLE else Human()
    return Expected(label=LABELS[set_name], tool=tool), human, {"removed_apis": gone}


def _original_of(path: Path, originals: dict[tuple[str, str], dict[str, Any]]) -> tuple[str | None, dict[str, Any] | None]:
    """The original a variant file derives from, by domain and query number (some have none)."""
    m = _VARIANT.match(path.stem)
    if not m:
        return None, None
    key = (path.parent.name, m.group(1))
    if key not in originals:
        return None, None
    return f"{ORIGINAL}/{key[0]}/query_{key[1]}", originals[key]


def _case(set_name: str, path: Path, originals: dict[tuple[str, str], dict[str, Any]]) -> Case:
    record = _checked(_record(path))
    meta: dict[str, Any] = {"domain": path.parent.name, "file": f"{set_name}/{path.parent.name}/{path.name}"}
    expected, human = Expected(label=LABELS[set_name]), Human()
    if set_name in (UNDERSPECIFIED, REPLACEABLE, NON_REPLACEABLE):
        original_id, original = _original_of(path, originals)
        meta["original"] = original_id
        meta["unchanged"] = original is not None and (original["query"], original["api_list"]) == (record["query"], record["api_list"])
        if set_name == UNDERSPECIFIED:
            expected, human, extra = _underspecified(original, record)
        else:
            expected, human, extra = _unavailable(set_name, original, record)
        meta.update(extra)
    return Case(
        id=_case_id(set_name, path), family=family_of(path), suite=NAME, subset=set_name,
        messages=[{"role": "user", "content": record["query"]}], tools=record["api_list"],
        expected=expected, human=human, meta=meta,
    )


def _originals(bench: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Original files by (domain, query number); an unreadable one is left out here and counted
    when its own case is read (set ``Original``), and its variants keep their label undiffed."""
    out = {}
    for path in _query_files(bench / ORIGINAL):
        if m := _ORIGINAL.match(path.stem):
            try:
                out[(path.parent.name, m.group(1))] = _checked(_record(path))
            except READ_ERRORS:
                continue
    return out


def _checked(record: dict[str, Any]) -> dict[str, Any]:
    """A query record with the fields every case reads, of the right types (else ValueError)."""
    if not isinstance(record.get("query"), str) or not isinstance(record.get("api_list"), list):
        raise ValueError("a query record needs a 'query' string and an 'api_list' list")
    return record


# --- recorded LLM answers -----------------------------------------------------------------------


def _content_key(record: dict[str, Any]) -> str:
    return json.dumps([record["query"], record["api_list"]], sort_keys=True, ensure_ascii=False)


def _ids_of_all_file(bench: Path, set_name: str, skipped: Counter[str]) -> dict[int, tuple[str, str]]:
    """``all_<Set>_queries.json`` query_id -> (case id, query). Identical files are matched in order."""
    all_file = bench / set_name / f"all_{set_name}_queries.json"
    if not all_file.is_file():
        return {}
    files: dict[str, list[str]] = defaultdict(list)
    for path in _query_files(bench / set_name):
        try:
            files[_content_key(_record(path))].append(_case_id(set_name, path))
        except READ_ERRORS:
            continue  # counted where its case is read
    out: dict[int, tuple[str, str]] = {}
    with skipping(skipped, all_file.name):
        entries = json.loads(all_file.read_text(encoding="utf-8"))
        for entry in entries:
            with skipping(skipped, all_file.name):
                same = files.get(_content_key(entry))
                if same:
                    out[entry["query_id"]] = (same.pop(0), entry["query"])
    return out


def recorded_aware(set_name: str, answer: dict[str, Any]) -> bool | None:
    """The paper's awareness of one recorded answer (None where the set has no awareness question)."""
    if set_name not in RECORDED_RULE:
        return None
    field, aware = RECORDED_RULE[set_name]
    annotation = answer.get(field)
    return None if annotation is None else str(annotation).strip().lower() in aware


def _recorded(root: Path, set_name: str, skipped: Counter[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Case id -> run name (``gpt_4o``, ``gpt_4o_aah``) -> the recorded answer's annotation and awareness."""
    ids = _ids_of_all_file(root / "benchmark", set_name, skipped)
    out: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for run_dir in sorted((root / "outputs" / set_name).glob("*")):
        m = _RUN.match(run_dir.name)
        if not m or not (run_dir / "answers.json").is_file():
            continue
        run = m.group("model") + ("_aah" if m.group("aah") else "")
        where = f"outputs/{set_name}/{run_dir.name}/answers.json"
        answers: list[Any] = []
        with skipping(skipped, where):
            answers = json.loads((run_dir / "answers.json").read_text(encoding="utf-8"))
        for answer in answers:
            with skipping(skipped, where):
                _add_answer(out, ids, set_name, run, answer)
    return out


def _add_answer(out: dict[str, dict[str, dict[str, Any]]], ids: dict[int, tuple[str, str]], set_name: str, run: str,
                answer: dict[str, Any]) -> None:
    case_id, query = ids.get(answer.get("query_id"), (None, None))
    if case_id is None or query != answer.get("query") or run in out[case_id]:
        return  # not joinable, or a repeated record of the same query
    field = RECORDED_RULE.get(set_name, ("", set()))[0]
    out[case_id][run] = {
        "annotation": answer.get(field), "aware": recorded_aware(set_name, answer),
        "pass_rate": answer.get("pass_rate"), "query_id": answer["query_id"],
    }


def load(data_dir: Path) -> Loaded:
    """Every query of every set; an unreadable file or answer is skipped and counted. A case's
    family is its original query (``family_of``), joined with every case that says the same words:
    the release repeats queries word for word across files."""
    root = _root(data_dir)
    bench = root / "benchmark"
    skipped: Counter[str] = Counter()
    originals = _originals(bench)
    cases = []
    for set_name in SETS:
        recorded = _recorded(root, set_name, skipped)
        for path in _query_files(bench / set_name):
            with skipping(skipped, set_name):
                case = _case(set_name, path, originals)
                if case.id in recorded:
                    case.meta["recorded"] = recorded[case.id]
                cases.append(case)
    families.assign(cases)
    return Loaded(cases, skipped)


# --- scoring -----------------------------------------------------------------------------------


def aware(result: Any) -> bool:
    """The guard's awareness on one case, the paper's way.

    Original: it lets the query proceed. Underspecified, Non-replaceable, No-tools: it flags it
    (any flag is a "no/idk"). Replaceable: the paper counts only "idk"; the guard's flag counts when
    it names a tool problem or asks the human.
    """
    if result.subset == ORIGINAL:
        return not result.flagged
    if result.subset == REPLACEABLE:
        return result.flagged and (bool(TOOL_PROBLEM & set(result.predicted)) or result.action == "ask_human")
    return bool(result.flagged)


def recorded_awareness(meta: dict[str, Any]) -> dict[str, bool]:
    """Model -> aware, from the recorded runs without a human (Table 1 is those runs)."""
    return {run: r["aware"] for run, r in (meta.get("recorded") or {}).items()
            if r["aware"] is not None and not run.endswith("_aah")}


def _slug(set_name: str) -> str:
    return set_name.lower().replace("-", "_")


def paper_metrics(results: list[Any]) -> dict[str, float]:
    by_set: dict[str, list[Any]] = defaultdict(list)
    for r in results:
        by_set[r.subset].append(r)
    out = {METRIC[s]: ratio(sum(aware(r) for r in by_set[s]), len(by_set[s])) for s in SETS if by_set[s]}
    unavailable = by_set[REPLACEABLE] + by_set[NON_REPLACEABLE]
    if unavailable:
        out["aware_unavailable"] = ratio(sum(aware(r) for r in unavailable), len(unavailable))
    for s in RECORDED_RULE:
        joined = [(r, aware_by_model) for r in by_set[s] if (aware_by_model := recorded_awareness(r.meta))]
        if not joined:
            continue
        out[f"recorded_guard_{_slug(s)}"] = ratio(sum(aware(r) for r, _ in joined), len(joined))
        for model in sorted({m for _, by_model in joined for m in by_model}):
            answers = [by_model[model] for _, by_model in joined if model in by_model]
            out[f"recorded_{model}_{_slug(s)}"] = ratio(sum(answers), len(answers))
            out.update(_on_top(s, model, [(r, by_model[model]) for r, by_model in joined if model in by_model]))
    return out


def _on_top(set_name: str, model: str, pairs: list[tuple[Any, bool]]) -> dict[str, float]:
    """The guard wrapped around a recorded model, on the queries with that model's answer.

    Original: ``guard_cost_<model>_original``, the share of queries the model went ahead with
    (aware means proceeding there) that the guard interrupted: what wrapping the model costs.
    Elsewhere: ``model_or_guard_<model>_<set>``, the share on which the model was aware or the guard
    was: what wrapping the model buys."""
    if set_name == ORIGINAL:
        proceeded = [r for r, model_aware in pairs if model_aware]
        return {f"guard_cost_{model}_original": ratio(sum(bool(r.flagged) for r in proceeded), len(proceeded))}
    return {f"model_or_guard_{model}_{_slug(set_name)}": ratio(sum(model_aware or aware(r) for r, model_aware in pairs), len(pairs))}
