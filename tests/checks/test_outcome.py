"""Classifying what a tool raised or returned."""

import json

import pytest

from guard.checks.outcome import classify_exception, classify_result
from guard.taxonomy import Category


class HTTPError(Exception):
    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


@pytest.mark.parametrize(
    ("exc", "category"),
    [
        (TimeoutError("read timed out"), Category.TOOL_TIMEOUT),
        (PermissionError("no"), Category.TOOL_PERMISSION),
        (ConnectionError("reset"), Category.TOOL_CONNECTION),
        (FileNotFoundError("x"), Category.TOOL_NOT_FOUND),
        (HTTPError(429), Category.TOOL_RATE_LIMITED),
        (HTTPError(403), Category.TOOL_PERMISSION),
        (HTTPError(503), Category.TOOL_SERVER_ERROR),
        (RuntimeError("Rate limit exceeded, retry later"), Category.TOOL_RATE_LIMITED),
        (RuntimeError("Monthly quota exceeded"), Category.TOOL_QUOTA),
        (ValueError("date must be in the future"), Category.TOOL_ERROR_PAYLOAD),
    ],
)
def test_exceptions_are_classified_by_type_status_then_words(exc, category):
    finding = classify_exception(exc, "t")
    assert finding.category is category
    assert finding.tool == "t"
    assert type(exc).__name__ in finding.message


def test_error_payload_in_a_successful_result_is_a_failure():
    finding = classify_result(json.dumps({"exception": "Token is invalid"}), "success", "t")
    assert finding is not None and finding.category is Category.TOOL_ERROR_PAYLOAD
    assert "Token is invalid" in finding.message


def test_error_status_is_classified_by_its_text():
    finding = classify_result("Error: TimeoutError('took too long')", "error", "t")
    assert finding.category is Category.TOOL_TIMEOUT


def test_empty_result_is_reported():
    assert classify_result("[]", "success", "t").category is Category.TOOL_EMPTY_RESULT


def test_good_result_gives_no_finding():
    assert classify_result('{"temperature": 7, "error": null}', "success", "t") is None


def test_a_result_that_reports_a_failure_in_any_shape() -> None:
    from guard.checks.outcome import reports_failure

    assert reports_failure("Error: no such directory")
    assert reports_failure('{"error": "path not found"}')
    assert reports_failure("listing", status="error")
    assert reports_failure("404 Not Found")
    # Everyday negatives: a JSON listing, a plain listing, a file named after an error
    assert not reports_failure('{"entries": ["cli.py", "not_found.html"]}')
    assert not reports_failure("README.md\nsrc\ntests")
    assert not reports_failure("error_handlers.py\nmain.py")
