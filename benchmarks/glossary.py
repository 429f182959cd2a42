"""What the figures of a run mean: the glossary ``report.md`` ends with (only the terms it uses).

Every figure is a share of cases (0 to 1) with its 95% interval: Wilson's for a share of counts,
a bootstrap over families (cases that come from one source record or dialogue) otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Terms that hold for every suite.
GENERAL: dict[str, str] = {
    "false_interrupt_rate": "share of clean cases (nothing wrong with the call) that the guard sent back (retry), "
                            "asked the human about or blocked: the cost of the guard to a working agent",
    "(rebuilt)": "the paper's protocol rebuilt on other public data (its own data is not published or not "
                 "available): the paper's figure beside it was measured on different cases, so compare with care",
    "recovery": "of the cases with a gold call (the call a fully informed agent makes), the share whose run "
                "ended with the gold call having run, after the guard's repairs, retries and the simulated "
                "human's answers; a suite without gold calls has none",
    "precision / recall / F1": "per guard label: of the cases the guard gave the label, the share expected to "
                               "have it (precision); of the cases expected to have it, the share the guard gave "
                               "it (recall); F1 is their harmonic mean",
    "latency": "time of the guard's check per case (not the simulated tools); p99 over fewer than 100 cases is "
               "the slowest case, usually the first one (imports and compiled validators warm up)",
    "95% interval": "Wilson score interval for a share of counts; bootstrap over families otherwise; a figure "
                    "over few cases has a wide interval",
}

#: Paper-compatible figures, by exact name.
METRICS: dict[str, str] = {
    # ACEBench
    "special_incomplete_acc": "ACEBench 'special: incomplete' questions (a required value is missing) whose "
                              "guard answer says so and names the tool and every missing parameter (ACEBench's check)",
    "special_error_param_acc": "ACEBench 'special: error param' questions (the user gave a wrong value) whose "
                               "guard answer says a value is incorrect and names it",
    "special_irrelevant_acc": "ACEBench 'special: irrelevant' questions (no tool can serve them) whose guard "
                              "answer says the functions cannot solve it",
    "special_acc": "the three ACEBench special sets together",
    "normal_false_alarm_rate": "ACEBench normal questions (a correct call exists) that the guard stopped",
    # Fail-TaLMs
    "proceed_original": "Fail-TaLMs Original queries (everything needed is there) on which the guard let the call run",
    "aware_underspecified": "Fail-TaLMs Underspecified queries (a needed value was masked) that the guard caught",
    "aware_replaceable": "Fail-TaLMs Replaceable queries (a needed tool was removed, another can stand in) on "
                         "which the guard named a tool problem or asked the human (the paper counts only 'I don't know')",
    "aware_non_replaceable": "Fail-TaLMs Non-replaceable queries (a needed tool was removed, none can stand in) "
                             "that the guard flagged",
    "aware_no_tools": "Fail-TaLMs No-tools queries that the guard flagged",
    "aware_unavailable": "Replaceable and Non-replaceable together: the paper's tool-unavailable awareness",
    # ICT on API-Bank
    "replacement_acc": "ICT API replacement: accuracy of 'can the call be made now?' over the originals and "
                       "their variants whose needed API was swapped for a similar one",
    "replacement_f1": "the same, as F1 with 'incomplete' the positive class",
    "removal_acc": "ICT utterance removal: accuracy over the originals and their variants whose needed "
                   "user words were removed",
    "removal_f1": "the same, as F1 with 'incomplete' the positive class",
    "original_false_alarm_rate": "ICT originals (the call can be made) that the guard stopped",
    # CRITICTOOL
    "detect": "cases with an injected error on which the guard intervened (stopped or repaired the call); "
              "for CRITICTOOL, also no intervention on clean cases",
    "category": "CRITICTOOL: the guard's labels include the injected error's category",
    "correct_tool": "CRITICTOOL: the call that finally ran used the gold tool",
    "correct_args": "CRITICTOOL: the call that finally ran had the gold arguments",
    "retry": "CRITICTOOL external errors: the guard's backoff ran the failed call again",
    "break": "CRITICTOOL persistent errors: the failing call ran at most 1 + 3 times",
    "skip_finish_tool": "CRITICTOOL persistent errors: the guard handed over to the human (FinishAction)",
    "skip_finish_args": "CRITICTOOL persistent errors: the arguments after the skip or finish",
    "overall": "CRITICTOOL's weighted score: 0.2 reflect + 0.3 correct + 0.05 retry + 0.45 skip/finish",
    "over_reflection_rate": "CRITICTOOL clean cases on which the guard intervened",
    # ReflecTool
    "false_alarm_clean": "ReflecTool clean variants on which the guard intervened",
    # BFCL
    "irrelevance_acc": "BFCL irrelevance cases (no tool fits) on which the guard stopped the call",
    "live_irrelevance_acc": "BFCL live irrelevance cases on which the guard stopped the call",
    "relevant_false_alarm_rate": "BFCL simple and live-simple cases (a correct call exists) that the guard stopped",
    "miss_param_acc": "BFCL multi-turn missing-parameter turns on which the guard asked",
    "miss_func_acc": "BFCL multi-turn missing-function turns on which the guard stopped the call",
    # Tool-Reflection-Bench
    "repair_at_1": "faulty calls that the guard's first intervention turned into the correct call (Repair@1)",
    "false_alarm_earlier_calls": "Tool-Reflection-Bench earlier, correct calls of the trajectory that the guard stopped",
    "false_alarms_clean": "clean calls on which the guard intervened",
    "wrong_completion": "faulty calls the guard completed from the conversation with a wrong value",
    "over_completion_clean": "clean calls the guard completed although nothing was missing",
}

_SETS = r"(original|underspecified|replaceable|non_replaceable|no_tools)"
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^guard_cost_(.+)_original$"),
     "the guard wrapped around the published run of {0}: of the Fail-TaLMs Original queries that model went "
     "ahead with, the share the guard interrupted (what wrapping the model costs)"),
    (re.compile(rf"^model_or_guard_(.+?)_{_SETS}$"),
     "the guard wrapped around the published run of {0}: the Fail-TaLMs {1} queries on which the model or the "
     "guard was aware (what wrapping the model buys)"),
    (re.compile(r"^recorded_guard_(.+)$"), "Fail-TaLMs {0} queries that the published LLM runs also answered: "
                                           "the guard's awareness on exactly those"),
    (re.compile(rf"^recorded_(.+?)_{_SETS}$"),
     "the awareness that the published run of {0} recorded on the same Fail-TaLMs {1} queries (from its answers file)"),
    (re.compile(r"^reflect_(.+)$"), "CRITICTOOL: category right for the injected {0} errors (the paper's Table 16)"),
    (re.compile(r"^(detect|class|correct)_(user|assistant)$"),
     "ReflecTool, errors from the {1}: {0} (detect: the guard intervened; class: with the right category, over "
     "the detected; correct: the right call ran in the end, over the detected)"),
    (re.compile(r"^(detect|class|correct)_avg$"), "ReflecTool: {0}, the mean of the user-side and assistant-side figures"),
]


#: Names that mean something else in one suite than elsewhere.
BY_SUITE: dict[str, dict[str, str]] = {
    "tool-reflection-rebuilt": {
        "detect_user": "faulty calls whose wrong value came from the user's words, on which the guard intervened",
        "detect_result": "faulty calls whose wrong value came from a tool result, on which the guard intervened",
        "repair_at_1_user": "faulty calls whose wrong value came from the user's words that the guard's first "
                            "intervention turned into the correct call",
        "repair_at_1_result": "faulty calls whose wrong value came from a tool result that the guard's first "
                              "intervention turned into the correct call",
    },
}


def explain(term: str, suite: str | None = None) -> str | None:
    """The meaning of a figure's name (in ``suite``, where it means something of its own there), or None."""
    if suite is not None and term in BY_SUITE.get(suite, {}):
        return BY_SUITE[suite][term]
    if term in METRICS:
        return METRICS[term]
    if term in GENERAL:
        return GENERAL[term]
    for pattern, text in _PATTERNS:
        if m := pattern.match(term):
            return text.format(*m.groups())
    return None


def lines(terms: Iterable[tuple[str, str]]) -> list[str]:
    """The glossary section of ``report.md``: the general terms, then each (suite, figure) used, once;
    a name that means different things in different suites is given once per suite."""
    out = ["## Glossary", ""]
    out += [f"- **{k}**: {v}." for k, v in GENERAL.items()]
    meanings: dict[str, dict[str, list[str]]] = {}
    for suite, term in terms:
        if term in GENERAL:
            continue
        text = explain(term, suite) or "no entry here yet: see the suite's loader in benchmarks/datasets/"
        meanings.setdefault(term, {}).setdefault(text, [])
        if suite not in meanings[term][text]:
            meanings[term][text].append(suite)
    for term, by_text in meanings.items():
        for text, suites in by_text.items():
            where = f" ({', '.join(suites)})" if len(by_text) > 1 else ""
            out.append(f"- **{term}**{where}: {text}.")
    return out + [""]
