"""The one taxonomy of findings and actions.

Every check emits findings in these categories; the policy maps categories to actions. The five
papers behind the benchmark each name their own error classes; ``PAPER_CATEGORIES`` maps every one
of them here so a benchmark label and a runtime finding speak the same language (the table is
rendered in ``docs/taxonomy.md``).
"""

from __future__ import annotations

from enum import StrEnum


class Category(StrEnum):
    """What is wrong with a tool call (or with its outcome)."""

    UNKNOWN_TOOL = "unknown_tool"
    UNAVAILABLE_TOOL = "unavailable_tool"
    NO_SUITABLE_TOOL = "no_suitable_tool"
    SUSPICIOUS_TOOL_SELECTION = "suspicious_tool_selection"
    MISSING_ARGUMENT = "missing_argument"
    UNEXPECTED_ARGUMENT = "unexpected_argument"
    TYPE_VIOLATION = "type_violation"
    ENUM_VIOLATION = "enum_violation"
    PATTERN_VIOLATION = "pattern_violation"
    FORMAT_VIOLATION = "format_violation"
    RANGE_VIOLATION = "range_violation"
    MALFORMED_ARGUMENTS = "malformed_arguments"
    PLACEHOLDER_VALUE = "placeholder_value"
    UNGROUNDED_VALUE = "ungrounded_value"
    REPEATED_CALL = "repeated_call"
    BUDGET_EXHAUSTED = "budget_exhausted"
    APPROVAL_REQUIRED = "approval_required"
    TOOL_TIMEOUT = "tool_timeout"
    TOOL_RATE_LIMITED = "tool_rate_limited"
    TOOL_CONNECTION = "tool_connection"
    TOOL_PERMISSION = "tool_permission"
    TOOL_QUOTA = "tool_quota"
    TOOL_NOT_FOUND = "tool_not_found"
    TOOL_SERVER_ERROR = "tool_server_error"
    TOOL_ERROR_PAYLOAD = "tool_error_payload"
    TOOL_EMPTY_RESULT = "tool_empty_result"


#: Argument faults found by JSON-schema validation: each names a JSON path in the call.
SCHEMA_CATEGORIES = frozenset(
    {
        Category.MISSING_ARGUMENT,
        Category.UNEXPECTED_ARGUMENT,
        Category.TYPE_VIOLATION,
        Category.ENUM_VIOLATION,
        Category.PATTERN_VIOLATION,
        Category.FORMAT_VIOLATION,
        Category.RANGE_VIOLATION,
    }
)

#: Failures reported after the tool ran.
TOOL_ERROR_CATEGORIES = frozenset(c for c in Category if c.value.startswith("tool_"))

#: Tool failures worth the same call again after a pause (the rest are escalated).
TRANSIENT_TOOL_ERRORS = frozenset(
    {
        Category.TOOL_TIMEOUT,
        Category.TOOL_RATE_LIMITED,
        Category.TOOL_CONNECTION,
        Category.TOOL_SERVER_ERROR,
    }
)

#: Categories that mean "the information needed is not in the conversation": the human has it.
MISSING_INFORMATION = frozenset(
    {Category.MISSING_ARGUMENT, Category.PLACEHOLDER_VALUE, Category.UNGROUNDED_VALUE}
)


class Action(StrEnum):
    """What happens to a call. Ordered by severity: the most severe finding wins.

    ``warn`` runs the call as proposed and records the finding (the decision's ``warnings``, the
    ToolMessage record, a span event, ``guard_warnings_total``): for findings too unsure to stop
    correct work, still worth seeing on a dashboard."""

    ALLOW = "allow"
    WARN = "warn"
    REPAIR = "repair"
    RETRY = "retry"
    ASK_HUMAN = "ask_human"
    BLOCK = "block"

    @property
    def severity(self) -> int:
        return _SEVERITY[self]

    @property
    def runs(self) -> bool:
        """Whether a call with this action is executed."""
        return self in (Action.ALLOW, Action.WARN, Action.REPAIR)


_SEVERITY = {a: i for i, a in enumerate(Action)}


#: Every error class named by the five papers, mapped to the guard's category.
#: Keys are (paper, the paper's class name); see docs/taxonomy.md for the rendered table.
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
