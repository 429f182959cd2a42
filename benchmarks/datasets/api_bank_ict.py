"""Incomplete conditions (ICT), rebuilt on API-Bank level-1: can a call be made now, yes or no?

The ICT paper ("Can Tool-augmented Large Language Models be Aware of Incomplete Conditions?") takes
dialogues where a call can be made and breaks them two ways: **API replacement** (the API the
request needs is swapped, in the tool list, for a similar but irrelevant one) and **utterance
removal** (the user's words the call needs are removed). A model answers "Yes" for the original
and "No" for the manipulated dialogue; accuracy and F1 (positive class: incomplete) are reported
per manipulation, each over the originals plus that manipulation. Its data is published only on a
model hub, so this suite rebuilds the protocol on the API-Bank level-1 test set:

- **original** (expected ``ok``): the record's dialogue, API list and expected request.
- **replacement** (``<id>/replace``, expected ``no_suitable_tool``): the needed API is swapped for
  the most similar API of the pool of all level-1 APIs that is not already listed, by a TF-IDF
  cosine over name and description (``api_bank.ApiPool``). The paper drew one of the 10 nearest by
  sentence-encoder embedding and had humans drop swaps that could still serve the request; here the
  nearest wins and an API with the same inputs under an unrelated name (``Wiki`` for
  ``SearchEngine``) is passed over as possibly interchangeable.
- **removal** (``<id>/remove``, expected ``missing_information``): the first argument, in call
  order, whose value the user gave and nothing else did (no system or assistant turn, earlier call
  or result) is taken out. A text gives a value when it writes it (any case; a date also as
  "March 26th" or "3/26") or says all its content words; every user sentence that gives it is
  removed and a turn left empty is dropped. A removal that would leave the user silent is passed
  over for the next value (the paper dropped dialogues whose user utterances were all removed).
  Every value of the call the dialogue no longer holds is what was removed: ``human.values``. The
  paper had GPT-4 rewrite the dialogue and humans verify it; a dialogue whose values only a result
  holds (a token) or the user said in other words ("tomorrow", "two"), or only in their one turn,
  gets no removal variant and is counted in ``Built.skipped``.

The guard sees a call, not a question: every case replays the record's expected request through
the reference agent, so the guard judges a call whose tool is no longer registered (replacement)
or whose value nobody said any more (removal). "Can a call be made now?" is answered "no" when the
guard stops the call (``flagged``); a repaired call runs, so it counts as "yes".

Beyond the paper: records whose expected request does not fit its own API description (an
argument the API lacks, a described one left out: 16 records) are left out, as the paper kept only
tool-callable dialogues; API-Bank writes every value as a string, so requests are cast to the
described types. A variant, its original and every record of the same dialogue share a family, so
one side of the split (``guard_bench.families``); the balanced sets are approximated by all originals
of a split plus its variants.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from guard_bench import labels
from guard_bench.cases import Case, Expected, Human, Loaded
from guard_bench.datasets import api_bank, skipping
from guard_bench.metrics import binary, ratio
from guard_bench.suites import PaperFigure

NAME = "api-bank-ict"
ORIGINAL, REPLACEMENT, REMOVAL = "original", "replacement", "removal"
CALL_ID = "call_0"

_TABLE3 = "ICT (Can Tool-augmented LLMs be Aware of Incomplete Conditions?) Table 3, APIBank, 0-shot"
PAPER = [
    PaperFigure(metric, model, value, _TABLE3, rebuilt=True)
    for model, figures in {
        "GPT-4": (0.8758, 0.8730, 0.8933, 0.8927),
        "ChatGPT": (0.6777, 0.6203, 0.5594, 0.3663),
        "Claude-3-haiku": (0.6827, 0.6261, 0.6196, 0.5227),
        "Mistral-7B": (0.6925, 0.6166, 0.5232, 0.2284),
    }.items()
    for metric, value in zip(("replacement_acc", "replacement_f1", "removal_acc", "removal_f1"), figures)
]



def available(data_dir: Path) -> bool:
    return (Path(data_dir) / api_bank.LEVEL1).is_file()


def load(data_dir: Path) -> Loaded:
    return build(data_dir).loaded()


def build(data_dir: Path) -> api_bank.Built:
    """Every case; a record that cannot be read is skipped and counted (``Built.unreadable``). A
    record's cases are one family with every record of the same dialogue (``api_bank.family_of``)."""
    built = api_bank.Built()
    records = api_bank.test_records(Path(data_dir) / api_bank.LEVEL1, built.unreadable)
    pool = api_bank.ApiPool.from_records(records)
    for record in records:
        with skipping(built.unreadable, api_bank.LEVEL1.name):
            _add_record(built, record, pool)
    return built


def record_id(record: dict[str, Any]) -> str:
    """API-Bank ids repeat across files: the file name (without ``.jsonl``) makes them unique."""
    return f"{Path(record['file']).stem}/{record['id']}"


def _add_record(built: api_bank.Built, record: dict[str, Any], pool: api_bank.ApiPool) -> None:
    rid = record_id(record)
    tools = api_bank.api_descriptions(record["instruction"])
    by_name = {t["name"]: t for t in tools}
    try:
        request = api_bank.parse_request(record["expected_output"].removeprefix("API-Request:"))
    except ValueError:
        built.skip("expected request not parsed", rid)
        return
    api = by_name.get(request["name"])
    if api is None or not api_bank.fits(request["args"], api):
        built.skip("expected request does not fit its API description", rid)
        return
    call = {"name": api["name"], "args": api_bank.typed_args(request["args"], api), "id": CALL_ID}
    messages = api_bank.context_messages(record["instruction"]) + api_bank.parse_dialogue(record["input"])
    meta = {"file": record["file"], "record": record["id"]}
    family = api_bank.family_of(record["file"])
    built.cases.append(Case(id=rid, family=family, suite=NAME, subset=ORIGINAL, messages=messages, tools=tools, calls=[call],
                            gold_calls=[call], meta=meta))
    if (stand_in := replacement(api, tools, pool)) is None:
        built.skip("no replacement API", rid)
    else:
        swapped = [stand_in if t is api else t for t in tools]
        built.cases.append(Case(id=f"{rid}/replace", family=family, suite=NAME, subset=REPLACEMENT, messages=messages, tools=swapped,
                                calls=[call], expected=Expected(label=labels.NO_SUITABLE_TOOL, tool=api["name"]),
                                meta={**meta, "original": rid, "replaced_by": stand_in["name"]}))
    if (removed := removal(messages, call["args"])) is None:
        built.skip("no removable value (said by the user alone, not in their only turn)", rid)
    else:
        kept, values = removed
        built.cases.append(Case(id=f"{rid}/remove", family=family, suite=NAME, subset=REMOVAL, messages=kept, tools=tools,
                                calls=[call], gold_calls=[call],
                                expected=Expected(label=labels.MISSING_INFO, tool=api["name"], params=list(values),
                                                  values=list(values.values())),
                                human=Human(values=values), meta={**meta, "original": rid}))


def replacement(api: dict[str, Any], tools: list[dict[str, Any]], pool: api_bank.ApiPool) -> dict[str, Any] | None:
    """The pool's API most similar to ``api`` that is not listed already and not interchangeable with it."""
    listed = {t["name"] for t in tools}
    for name in pool.ranked(api["name"], exclude=listed):
        if not api_bank.interchangeable(api, pool.apis[name]):
            return pool.apis[name]
    return None


def removal(messages: list[dict[str, Any]], args: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """The dialogue without the user's words for the first value only the user said (the user must
    still say something), and every value (by parameter) the dialogue no longer holds; None when
    no value can be taken out so."""
    removals = (api_bank.drop_value(messages, v) for v in args.values() if api_bank.said_only_by_user(messages, v))
    kept = next((k for k in removals if any(m["role"] == "user" for m in k)), None)
    if kept is None:
        return None
    return kept, {p: v for p, v in args.items() if api_bank.held_by(messages, v) and not api_bank.held_by(kept, v)}


def _incomplete(result: Any) -> bool:
    return result.expected["label"] != labels.OK


def paper_metrics(results: list[Any]) -> dict[str, float]:
    """Accuracy and F1 ("incomplete" is positive) per manipulation over the originals plus its
    variants, and the share of originals the guard stopped."""
    originals = [r for r in results if r.subset == ORIGINAL]
    out: dict[str, float] = {}
    for subset in (REPLACEMENT, REMOVAL):
        scored = binary(originals + [r for r in results if r.subset == subset], _incomplete)
        out[f"{subset}_acc"], out[f"{subset}_f1"] = scored["acc"], scored["f1"]
    out["original_false_alarm_rate"] = ratio(sum(r.flagged for r in originals), len(originals))
    return out
