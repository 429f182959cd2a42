"""Benchmark labels: the guard's finding categories grouped the way the papers score them.

A dataset says "a value was missing"; the guard may say ``missing_argument`` (no value),
``placeholder_value`` or ``ungrounded_value`` (the model filled in something nobody said). All three
notice the same gap, so they score as one label. The grouping lives here, once, for every suite.
"""

from __future__ import annotations

from collections.abc import Iterable

from guard.taxonomy import MISSING_INFORMATION, SCHEMA_CATEGORIES, TOOL_ERROR_CATEGORIES, Category

OK = "ok"
MISSING_INFO = "missing_information"
INVALID_ARGUMENT = "invalid_argument"
UNKNOWN_TOOL = "unknown_tool"
UNAVAILABLE_TOOL = "unavailable_tool"
NO_SUITABLE_TOOL = "no_suitable_tool"
WRONG_TOOL = "suspicious_tool_selection"
REPEATED = "repeated_call"
TOOL_ERROR = "tool_error"
OTHER = "other"

LABELS = (MISSING_INFO, INVALID_ARGUMENT, UNKNOWN_TOOL, UNAVAILABLE_TOOL, NO_SUITABLE_TOOL, WRONG_TOOL, REPEATED, TOOL_ERROR)


def label_of(category: Category | str) -> str:
    """The benchmark label a finding category counts towards."""
    c = Category(category)
    if c in MISSING_INFORMATION:
        return MISSING_INFO
    if c in SCHEMA_CATEGORIES or c is Category.MALFORMED_ARGUMENTS:
        return INVALID_ARGUMENT
    if c in TOOL_ERROR_CATEGORIES:
        return TOOL_ERROR
    direct = {
        Category.UNKNOWN_TOOL: UNKNOWN_TOOL,
        Category.UNAVAILABLE_TOOL: UNAVAILABLE_TOOL,
        Category.NO_SUITABLE_TOOL: NO_SUITABLE_TOOL,
        Category.SUSPICIOUS_TOOL_SELECTION: WRONG_TOOL,
        Category.REPEATED_CALL: REPEATED,
    }
    return direct.get(c, OTHER)


def labels_of(categories: Iterable[Category | str]) -> set[str]:
    return {label_of(c) for c in categories}


#: Every error class named by the five papers, mapped to the guard's category.
#: Keys are (paper, the paper's class name); see docs/taxonomy.md for the rendered table. The
#: benchmark's dialect: the runtime taxonomy (``guard.taxonomy``) knows nothing of the papers.
PAPER_CATEGORIES: dict[tuple[str, str], Category | None] = {
    # CRITICTOOL (internal and external errors)
    ("CRITICTOOL", "tool selection error"): Category.SUSPICIOUS_TOOL_SELECTION,
    ("CRITICTOOL", "tool hallucination error"): Category.UNKNOWN_TOOL,
    ("CRITICTOOL", "parameters key error (missing key)"): Category.MISSING_ARGUMENT,
    ("CRITICTOOL", "parameters key error (extra key)"): Category.UNEXPECTED_ARGUMENT,
    ("CRITICTOOL", "parameters value error (format)"): Category.TYPE_VIOLATION,
    ("CRITICTOOL", "parameters value error (content)"): Category.UNGROUNDED_VALUE,
    ("CRITICTOOL", "rate limit"): Category.TOOL_RATE_LIMITED,
    ("CRITICTOOL", "permission denied"): Category.TOOL_PERMISSION,
    ("CRITICTOOL", "quota exceeded"): Category.TOOL_QUOTA,
    ("CRITICTOOL", "timeout"): Category.TOOL_TIMEOUT,
    ("CRITICTOOL", "connection error"): Category.TOOL_CONNECTION,
    # ReflecTool-Bench
    ("ReflecTool-Bench", "parameter mismatch"): Category.TYPE_VIOLATION,
    ("ReflecTool-Bench", "missing required parameter"): Category.MISSING_ARGUMENT,
    ("ReflecTool-Bench", "incorrect tool selection"): Category.SUSPICIOUS_TOOL_SELECTION,
    ("ReflecTool-Bench", "ambiguous reference"): Category.UNGROUNDED_VALUE,
    ("ReflecTool-Bench", "over-specification"): Category.UNEXPECTED_ARGUMENT,
    ("ReflecTool-Bench", "under-specification"): Category.MISSING_ARGUMENT,
    # ACEBench special
    ("ACEBench", "incomplete (missing necessary parameters)"): Category.MISSING_ARGUMENT,
    ("ACEBench", "error_param (pattern)"): Category.PATTERN_VIOLATION,
    ("ACEBench", "error_param (enum)"): Category.ENUM_VIOLATION,
    ("ACEBench", "error_param (length, minimum, maximum)"): Category.RANGE_VIOLATION,
    ("ACEBench", "error_param (format)"): Category.FORMAT_VIOLATION,
    ("ACEBench", "irrelevant (no tool can solve it)"): Category.NO_SUITABLE_TOOL,
    # Fail-TaLMs
    ("Fail-TaLMs", "under-specified query"): Category.MISSING_ARGUMENT,
    ("Fail-TaLMs", "unavailable tool, replaceable"): Category.UNAVAILABLE_TOOL,
    ("Fail-TaLMs", "unavailable tool, non-replaceable"): Category.NO_SUITABLE_TOOL,
    ("Fail-TaLMs", "no tools"): Category.NO_SUITABLE_TOOL,
    # Incomplete conditions (ICT)
    ("ICT", "API replacement"): Category.NO_SUITABLE_TOOL,
    ("ICT", "utterance removal"): Category.MISSING_ARGUMENT,
}
