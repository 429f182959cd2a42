"""Simulated tools: no live API is ever called during a replay.

Each tool of a case becomes a LangChain ``StructuredTool`` with the dataset's own (normalised) schema.
Its result comes from the case's recorded responses (API-Bank), the tool's ``template_response``
(Fail-TaLMs), or a small stub; an injector makes the first calls fail with a timeout, a rate limit, a
permission error, an exhausted quota, a dropped connection, a server error or an error payload, for
the tool-error cases. Every execution is logged: recovery is scored on what actually ran.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tools import StructuredTool

from guard_bench.cases import Case, ToolError
from guard.registry import ToolRegistry, ToolSpec


class HTTPStatusError(Exception):
    """What an HTTP client raises for an error status; the guard classifies it by ``status_code``."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code


def _failure(kind: str, tool: str) -> Exception | dict[str, Any]:
    """The exception (or error payload) an injected failure of ``kind`` produces."""
    return {
        "timeout": TimeoutError(f"{tool}: request timed out after 30 s"),
        "rate_limit": HTTPStatusError(429, f"{tool}: 429 Too Many Requests"),
        "permission": PermissionError(f"{tool}: 403 permission denied"),
        "quota": HTTPStatusError(402, f"{tool}: monthly quota exceeded"),
        "connection": ConnectionError(f"{tool}: connection refused"),
        "server_error": HTTPStatusError(503, f"{tool}: 503 service unavailable"),
        "error_payload": {"error": f"{tool}: invalid request"},
    }[kind]


@dataclass
class ToolBox:
    """The simulated tools of one case and the log of what ran."""

    case: Case
    registry: ToolRegistry
    executed: list[dict[str, Any]] = field(default_factory=list)
    _failures_left: dict[str, list[ToolError]] = field(default_factory=dict)

    @classmethod
    def for_case(cls, case: Case) -> ToolBox:
        registry = ToolRegistry(case.tools)
        box = cls(case=case, registry=registry)
        for err in case.tool_errors:
            box._failures_left.setdefault(err.tool, []).append(err.model_copy())
        return box

    def tools(self) -> list[StructuredTool]:
        return [self._tool(spec) for spec in self.registry]

    def _tool(self, spec: ToolSpec) -> StructuredTool:
        def run(**kwargs: Any) -> str:
            return self._respond(spec, kwargs)

        return StructuredTool.from_function(
            func=run, name=spec.name, description=spec.description or spec.name, args_schema=spec.parameters
        )

    def _respond(self, spec: ToolSpec, args: dict[str, Any]) -> str:
        self.executed.append({"name": spec.name, "args": args})
        pending = self._failures_left.get(spec.name) or []
        if pending:
            err = pending[0]
            err.times -= 1
            if err.times <= 0:
                pending.pop(0)
            failure = _failure(err.kind, spec.name)
            if isinstance(failure, Exception):
                raise failure
            return json.dumps(failure)
        return json.dumps(self._result(spec, args), ensure_ascii=False, default=str)

    def _result(self, spec: ToolSpec, args: dict[str, Any]) -> Any:
        recorded = self.case.tool_results.get(spec.name)
        if recorded is not None:
            return recorded
        if "template_response" in spec.metadata:
            return spec.metadata["template_response"]
        return {"status": "ok", "tool": spec.name}
