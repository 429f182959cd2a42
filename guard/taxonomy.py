"""The one taxonomy of findings and actions.

Every check emits findings in these categories; the policy maps categories to actions. The papers
behind the benchmark name their own error classes; ``guard_bench.labels.PAPER_CATEGORIES`` maps each
of them to a category (the table is rendered in ``docs/taxonomy.md``).
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
