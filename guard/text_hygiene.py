"""Text hygiene at the HTTP edge: what the service refuses before anything is parsed into models,
stored or echoed, and how it answers errors whatever their content.

JSON lets a client write things no other part of the stack can carry: a lone UTF-16 surrogate
(``"\\ud800"``, or the raw CESU-8 bytes ``ED A0 80``, which Python's JSON decoder lets through),
NUL (``"\\u0000"``), and the non-standard ``NaN``/``Infinity`` or a number too large for a float
(``1e400``), which Python's decoder reads as non-finite floats. None of them can be written back as
UTF-8 JSON, so a request carrying them used to be stored (an escalation) and then fail every
listing with a 500. They are **rejected** (422), never replaced: a replaced call id or argument
would silently be a different call. The error names where: ``loc`` is the path of the string, key,
number or parameter at fault (a key at fault is named by its position among its parent's keys,
so the answer never echoes it), and ``input`` is ``null``.

``TextCheckedRoute`` does the check for every route of a router: path and query parameters, then
the body (keys and values, at any depth). The body is only parsed a second time when its bytes may
hold one of these (an escape of NUL or of a surrogate, raw surrogate bytes, ``NaN``, ``Infinity``, a
long run of digits or a three-digit exponent, or a body that is not UTF-8): normal traffic pays a
regular-expression scan. ``json_response`` renders any content as UTF-8 JSON without raising: it
is what the exception handlers answer with.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

#: Bytes after which a UTF-8 body may hold what ``problems_in_json`` looks for; no match, no problem.
_SUSPECT = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])|\xed[\xa0-\xbf]|NaN|Infinity|\d{200,}|\d[eE][+-]?\d{3}")
_BAD_CHAR = re.compile("[\x00\ud800-\udfff]")
_SURROGATES = re.compile("[\ud800-\udfff]")
#: How deep an echoed error input is rendered before it is cut ("…").
_ECHO_DEPTH = 32


def text_problem(text: str) -> tuple[str, str] | None:
    """(error type, message) when ``text`` holds NUL or a lone surrogate, else None."""
    found = _BAD_CHAR.search(text)
    if found is None:
        return None
    char, at = found.group(), found.start()
    if char == "\x00":
        return "string_nul", f"NUL (U+0000) at character {at} is not allowed in text"
    return (
        "string_surrogate",
        f"a lone surrogate (U+{ord(char):04X}) at character {at} is not text: send characters outside the "
        "basic plane as UTF-8, or as a \\uD8xx\\uDCxx pair",
    )


def _walk(value: Any, loc: tuple[str | int, ...]) -> Iterator[dict[str, Any]]:
    """The first problem in document order: iterative, since a parsed body can be ~1000 levels deep."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [(loc, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem is not None:
                yield _error(where, *problem)
                return
        elif isinstance(item, float):
            if not math.isfinite(item):
                yield _error(where, "number_non_finite", f"{item} is not a JSON number (NaN, Infinity or out of range)")
                return
        elif isinstance(item, dict):
            children = []
            for position, (key, child) in enumerate(item.items()):
                problem = text_problem(key)
                if problem is not None:
                    kind, message = problem
                    yield _error(where, kind, f"key number {position} of this object: {message}")
                    return
                children.append(((*where, key), child))
            stack.extend(reversed(children))
        elif isinstance(item, list):
            stack.extend(reversed([((*where, i), child) for i, child in enumerate(item)]))


def _error(loc: tuple[str | int, ...], kind: str, message: str) -> dict[str, Any]:
    return {"type": kind, "loc": loc, "msg": message, "input": None}


def problems_in_json(body: bytes) -> list[dict[str, Any]]:
    """The first NUL, lone surrogate or non-finite number in a JSON body, as a validation error
    located under ``body``; none for a body that is not JSON (the route's own parsing says so)."""
    if json.detect_encoding(body) in ("utf-8", "utf-8-sig") and _SUSPECT.search(body) is None:
        return []
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return []
    return list(_walk(document, ("body",)))


def problems_in_params(request: Request) -> list[dict[str, Any]]:
    """NUL or a lone surrogate in a path or query parameter (keys included)."""
    for name, value in request.path_params.items():
        if isinstance(value, str) and (problem := text_problem(value)):
            return [_error(("path", name), *problem)]
    for position, (name, value) in enumerate(request.query_params.multi_items()):
        if problem := text_problem(name):
            kind, message = problem
            return [_error(("query",), kind, f"query parameter number {position}'s name: {message}")]
        if problem := text_problem(value):
            return [_error(("query", name), *problem)]
    return []


class TextCheckedRoute(APIRoute):
    """An ``APIRoute`` that answers 422 for NUL, lone surrogates or non-finite numbers in its path,
    query or JSON body, before the endpoint (or the body's model) sees them."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def checked(request: Request) -> Response:
            problems = problems_in_params(request)
            if not problems:
                body = await request.body()  # cached on the request: the endpoint reads it again for free
                problems = problems_in_json(body) if body else []
            if problems:
                raise RequestValidationError(problems)
            return await handle(request)

        return checked


# -- answers that always render ----------------------------------------------------------------


def printable(value: Any, depth: int = 0) -> Any:
    """``value`` as plain JSON data that ``json.dumps(..., allow_nan=False)`` writes as UTF-8 without
    raising: surrogates become U+FFFD, non-finite floats null, bytes text, other objects their
    ``str``; beyond ``_ECHO_DEPTH`` levels the rest is "…"."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, str):
        return _SURROGATES.sub("\ufffd", value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth >= _ECHO_DEPTH:
        return "…"
    if isinstance(value, dict):
        return {printable(str(k)): printable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [printable(v, depth + 1) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return printable(bytes(value).decode("utf-8", "replace"))
    return printable(str(value))


def json_response(content: Any, status_code: int, headers: dict[str, str] | None = None) -> Response:
    """A JSON response that renders whatever ``content`` holds (see ``printable``)."""
    body = json.dumps(printable(content), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return Response(body.encode("utf-8"), status_code=status_code, headers=headers, media_type="application/json")
