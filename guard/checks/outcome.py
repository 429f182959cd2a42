"""Outcome: classify what a tool returned or raised, after it ran.

The classification decides whether the same call is worth repeating after a pause (timeouts, rate
limits, connection and server errors) or must be escalated (permissions, quotas, not found, error
payloads). Exceptions are classified by type, then by HTTP status where the exception carries one,
then by the words of the message; results by their status and by error fields in their payload.
"""

from __future__ import annotations

import json
import re
from typing import Any

from guard.models import Finding
from guard.taxonomy import Category

NAME = "outcome"

_BY_TYPE: tuple[tuple[type[BaseException], Category], ...] = (
    (TimeoutError, Category.TOOL_TIMEOUT),
    (PermissionError, Category.TOOL_PERMISSION),
    (FileNotFoundError, Category.TOOL_NOT_FOUND),
    (ConnectionError, Category.TOOL_CONNECTION),
)

_BY_STATUS: tuple[tuple[range, Category], ...] = (
    (range(401, 402), Category.TOOL_PERMISSION),
    (range(403, 404), Category.TOOL_PERMISSION),
    (range(404, 405), Category.TOOL_NOT_FOUND),
    (range(408, 409), Category.TOOL_TIMEOUT),
    (range(429, 430), Category.TOOL_RATE_LIMITED),
    (range(504, 505), Category.TOOL_TIMEOUT),
    (range(500, 600), Category.TOOL_SERVER_ERROR),
)

# Order matters: the first pattern that matches the text wins.
_BY_WORDS: tuple[tuple[re.Pattern[str], Category], ...] = tuple(
    (re.compile(p, re.IGNORECASE), c)
    for p, c in (
        (r"rate[ _-]?limit|too many requests|\b429\b|throttl", Category.TOOL_RATE_LIMITED),
        (r"quota|insufficient (credit|balance)|billing", Category.TOOL_QUOTA),
        (r"time[d ]?\s?out|deadline exceeded|\b504\b|\b408\b", Category.TOOL_TIMEOUT),
        (r"permission|forbidden|unauthori[sz]ed|access denied|not allowed|\b40[13]\b", Category.TOOL_PERMISSION),
        (r"connection (error|refused|reset|aborted)|could not connect|network (error|unreachable)|"
         r"name resolution|dns", Category.TOOL_CONNECTION),
        (r"not found|no such|does not exist|\b404\b", Category.TOOL_NOT_FOUND),
        (r"internal server error|service unavailable|bad gateway|\b50[0-3]\b|server error", Category.TOOL_SERVER_ERROR),
    )
)

_EMPTY = ("", "[]", "{}", "null", "none")
_ERROR_KEYS = ("error", "errors", "exception", "error_message", "errorMessage")


def _status_code(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        for attr in ("status_code", "status", "code"):
            value = getattr(holder, attr, None)
            if isinstance(value, int) and 100 <= value < 600:
                return value
    return None


def _by_words(text: str) -> Category | None:
    for pattern, category in _BY_WORDS:
        if pattern.search(text):
            return category
    return None


def classify_exception(exc: BaseException, tool: str | None) -> Finding:
    """Every exception a tool raises becomes exactly one tool-error finding."""
    text = f"{type(exc).__name__}: {exc}"
    category = next((c for t, c in _BY_TYPE if isinstance(exc, t)), None)
    status = _status_code(exc)
    if category is None and status is not None:
        category = next((c for r, c in _BY_STATUS if status in r), None)
    category = category or _by_words(text) or Category.TOOL_ERROR_PAYLOAD
    return Finding(
        category=category,
        check=NAME,
        message=f"the tool raised {text[:500]}",
        tool=tool,
        rule="exception",
        value=type(exc).__name__,
        evidence={"status_code": status} if status is not None else {},
    )


def _error_field(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    for key in _ERROR_KEYS:
        value = data.get(key)
        if value not in (None, "", [], {}, False):
            return value if isinstance(value, str) else json.dumps(value, default=str)
    status = data.get("status")
    if isinstance(status, str) and status.lower() in ("error", "failed", "failure"):
        return str(data.get("message") or status)
    return None


def classify_result(content: Any, status: str | None, tool: str | None) -> Finding | None:
    """A result that reports a failure, or is empty, gives a finding; a good result gives None."""
    text = content if isinstance(content, str) else json.dumps(content, default=str)
    if status == "error":
        return Finding(
            category=_by_words(text) or Category.TOOL_ERROR_PAYLOAD,
            check=NAME,
            message=f"the tool reported an error: {text[:500]}",
            tool=tool,
            rule="error_status",
        )
    try:
        data = json.loads(text) if isinstance(content, str) else content
    except ValueError:
        data = None
    if (error := _error_field(data)) is not None:
        return Finding(
            category=_by_words(error) or Category.TOOL_ERROR_PAYLOAD,
            check=NAME,
            message=f"the tool returned an error payload: {error[:500]}",
            tool=tool,
            rule="error_payload",
        )
    if text.strip().lower() in _EMPTY:
        return Finding(
            category=Category.TOOL_EMPTY_RESULT,
            check=NAME,
            message="the tool returned an empty result",
            tool=tool,
            rule="empty",
        )
    return None


def reports_failure(content: str, status: str | None = None) -> bool:
    """Whether a tool result says the call failed: what ``classify_result`` finds (an error
    status, an error payload, nothing returned), or a plain-text reply that opens with a failure
    ("Error: no such directory", "404 Not Found")."""
    if classify_result(content, status, None) is not None:
        return True
    head = content[:200].lstrip()
    return not head.startswith(("{", "[")) and (_FAILURE_OPENING.match(head) is not None or _by_words(head) is not None)


_FAILURE_OPENING = re.compile(r"(?:error|exception|traceback|fatal)\b", re.IGNORECASE)
