"""Words for the model and for the human, rendered from findings at the edge.

Findings are data; this module is the one place that turns them into the feedback a model reads
before it retries (what was wrong, at which parameter, which tools exist) and the question a human
reads (which values are needed, for which tool). The texts come from the policy's templates, so a
team can reword them without touching the checks.
"""

from __future__ import annotations

import json
from typing import Any

from guard.models import Finding, ToolCall
from guard.policy import Policy
from guard.registry import ToolRegistry
from guard.taxonomy import Category

_TOOL_LIST_LIMIT = 20


def _short(value: Any, limit: int = 80) -> str:
    if isinstance(value, (list, tuple)) and len(value) > limit:
        value = list(value[:limit])  # its first `limit` members fill more than `limit` characters
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = ascii(text)[1:-1] if not text.isprintable() else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


def problem_line(finding: Finding) -> str:
    """One finding as one line of feedback: where, what, and what to do instead."""
    where = "" if finding.path == "$" else f"{finding.path[2:] if finding.path.startswith('$.') else finding.path}: "
    line = f"- {where}{finding.message}"
    if finding.repair is not None:
        line += f" (repaired: {_short(finding.repair.before)} -> {_short(finding.repair.after)})"
    evidence = finding.evidence
    if suggestions := evidence.get("suggestions"):
        line += f". Did you mean {' or '.join(f'`{s}`' for s in suggestions)}?"
    if (allowed := evidence.get("allowed")) and finding.category is Category.ENUM_VIOLATION:
        line += f". Allowed values: {_short(allowed, 200)}"
    return line


def tool_list(registry: ToolRegistry) -> str:
    names = registry.available_names
    shown = ", ".join(f"`{n}`" for n in names[:_TOOL_LIST_LIMIT])
    return shown + (f" and {len(names) - _TOOL_LIST_LIMIT} more" if len(names) > _TOOL_LIST_LIMIT else "")


#: Problems listed in one feedback: a call with thousands of bad values gets the first ones and a
#: count, not a message of megabytes (the decision's findings keep every one).
_PROBLEM_LIMIT = 20


def problem_lines(findings: list[Finding]) -> str:
    """One line per problem, the first ``_PROBLEM_LIMIT`` of them, then how many more."""
    lines = [problem_line(f) for f in findings[:_PROBLEM_LIMIT]]
    if len(findings) > _PROBLEM_LIMIT:
        lines.append(f"- ... and {len(findings) - _PROBLEM_LIMIT} more problems of the same call")
    return "\n".join(lines)


def feedback(call: ToolCall, findings: list[Finding], policy: Policy, registry: ToolRegistry) -> str:
    """Feedback for the model: the problems, and the tool list when the tool itself was wrong."""
    t = policy.templates
    text = t.feedback.format(
        tool=call.name or "(no name)",
        problems=problem_lines(findings),
        tools=tool_list(registry),
        missing=", ".join(missing_values(findings)),
        details="",
    )
    if any(f.category in (Category.UNKNOWN_TOOL, Category.UNAVAILABLE_TOOL, Category.SUSPICIOUS_TOOL_SELECTION) for f in findings):
        text += "\n" + t.tools_hint.format(tools=tool_list(registry), tool=call.name or "", problems="", missing="", details="")
    return text


def repaired_note(findings: list[Finding], policy: Policy) -> str:
    """What the guard changed before running a repaired call, for the model and the trace."""
    lines = "; ".join(problem_line(f)[2:] for f in findings if f.repair is not None)
    return policy.templates.repaired_note.format(problems=lines, tool="", tools="", missing="", details="")


def missing_values(findings: list[Finding]) -> list[str]:
    """Dotted names of the values the human must supply (``trip.to``; list items name their list)."""
    names: list[str] = []
    for f in findings:
        if not f.path.startswith("$."):
            continue
        name = _name(f.path).split("[", 1)[0]
        if name and name not in names:
            names.append(name)
    return names


def _name(path: str) -> str:
    """``$.trip.to`` -> ``trip.to``, ``$.stops[*].city`` -> ``stops[].city``; the root stays ``$``."""
    return path.removeprefix("$.").replace("[*]", "[]")


def question(call: ToolCall, findings: list[Finding], policy: Policy, registry: ToolRegistry) -> str:
    """The question for the human: which values, for which tool, and why the guard is asking."""
    t = policy.templates
    if any(f.category is Category.APPROVAL_REQUIRED for f in findings):
        return t.approval.format(tool=call.name, args=_short(call.args, 300), problems="", tools="", missing="", details="")
    if no_tool := next((f for f in findings if f.category is Category.NO_SUITABLE_TOOL), None):
        text = t.no_tool.format(request=_quoted_request(no_tool.value), tool="", problems="", missing="", details="", tools=tool_list(registry))
        return text + " " + t.tools_hint.format(tools=tool_list(registry), tool="", problems="", missing="", details="")
    missing = missing_values(findings)
    spec = registry.get(call.name)
    descriptions = []
    for name in missing:
        desc = _description(spec.parameters, name) if spec else None
        descriptions.append(f"'{name}'" + (f" ({_short(desc, 100)})" if desc else ""))
    what = ("a value for " + ", ".join(descriptions)) if descriptions else "your decision"
    details = " ".join(dict.fromkeys(_why(f) for f in findings))
    return t.question.format(tool=call.name or "(no name)", missing=what, details=details.strip(), problems="", tools=tool_list(registry))


def preflight_feedback(findings: list[Finding], policy: Policy, registry: ToolRegistry) -> str:
    """Why the preflight stops a request before any call: every problem, and the tool list when no
    tool fits."""
    text = policy.templates.preflight.format(problems=problem_lines(findings), tool="", tools="", missing="", details="")
    if any(f.category is Category.NO_SUITABLE_TOOL for f in findings):
        text += "\n" + policy.templates.tools_hint.format(tools=tool_list(registry), tool="", problems="", missing="", details="")
    return text


def _quoted_request(request: Any) -> str:
    text = " ".join(str(request or "").split())
    return f"\u201c{_short(text, 160)}\u201d" if text else "what was asked."


def _description(schema: dict[str, Any], dotted: str) -> str | None:
    """The description of a parameter by dotted name, through nested objects and list items."""
    node: Any = schema
    for part in dotted.split("."):
        while isinstance(node, dict) and "properties" not in node and isinstance(node.get("items"), dict):
            node = node["items"]
        props = node.get("properties") if isinstance(node, dict) else None
        node = props.get(part) if isinstance(props, dict) else None
    desc = node.get("description") if isinstance(node, dict) else None
    return desc if isinstance(desc, str) and desc else None


def _why(finding: Finding) -> str:
    if candidates := finding.evidence.get("candidates"):  # guard.checks.provenance: the human picks one
        return _why_alone(finding) + " It may be one of: " + ", ".join(_short(c.get("value")) for c in candidates) + "."
    return _why_alone(finding)


def _why_alone(finding: Finding) -> str:
    if finding.category is Category.MISSING_ARGUMENT:
        return f"'{_name(finding.path)}' was not given."
    if finding.category is Category.PLACEHOLDER_VALUE:
        return f"The proposed value {_short(finding.value)} is a placeholder."
    if finding.category is Category.UNGROUNDED_VALUE:
        return f"The proposed value {_short(finding.value)} is not supported by anything you said."
    return finding.message[:1].upper() + finding.message[1:] + "."
