"""Placeholders: values the model wrote instead of information it does not have.

A model that lacks a user id, an e-mail or a city rarely says so: it fills the slot with
``"<user_id>"``, ``"{city}"``, ``"your_api_key"``, ``"user@example.com"``, ``"TBD"`` or the example
from the parameter's description. Such a call is syntactically valid and would run, so schema
validation cannot catch it; the right action is to ask the human for the missing value.

Patterns match the whole value (after trimming), never a substring, so "Unknown Pleasures" or
"N/A for now" pass. A value equal to the description's example is a placeholder only when the
user and system messages never mention it: a user may really live in "New York".
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from guard import schema as schemas
from guard.checks import CheckContext
from guard.checks.arguments import child_path, encodable, excerpt, path_label
from guard.checks.risk import CONFIDENCE, risk_of
from guard.models import Finding
from guard.normalise import normalise_text, parse_bool
from guard.taxonomy import Category
from guard.text import quoted_pattern, quoted_text

NAME = "placeholders"

_PLACEHOLDER_NOUNS = (
    r"name|first name|last name|full name|user ?name|e-?mail(?: address)?|address|id|key|api key|token|"
    r"password|number|phone(?: number)?|city|location|company|account|value|here"
)

_YOUR_NOUN = rf"your\s+(?:\w+\s+){{0,2}}(?:{_PLACEHOLDER_NOUNS})(?:\s+here)?"

#: Whole-value patterns, tried in order; the group name is the finding's rule.
_PATTERNS = re.compile(
    "|".join(
        rf"(?P<{rule}>{pattern})"
        for rule, pattern in (
            ("angle_brackets", r"<[^<>\n]{1,80}>"),
            ("template_hole", r"\$?\{\{?\s*[A-Za-z_][\w .-]{0,60}?\s*\}\}?"),
            ("your_value", rf"your[_-]\w[\w-]*|(?-i:YOUR(?:[ _-][A-Z0-9]+)+)|{_YOUR_NOUN}"),
            ("masked", r"(?=[^x]*x{3})[x\d\s().\-_/]+|x+@x+(?:\.x+)*\.[a-z]{2,6}"),
            ("unknown", r"unknown"),
            ("not_available", r"n/a|n\.a\."),
            ("tbd", r"tbd|tba|to be (?:determined|decided|confirmed|announced)"),
            ("todo", r"todo|fixme"),
            ("placeholder", r"placeholder"),
            ("example_email", r"[^@\s]+@example\.(?:com|org|net)"),
            ("ellipsis", r"\.{3,}|\u2026"),
        )
    ),
    re.IGNORECASE,
)
#: Rules for values that only look invented (an address at example.com, a masked number): a tool
#: that returned one shows it is real.
_LOOKS_MADE_UP = frozenset({"example_email", "masked"})
#: Longer values are sentences, not placeholders.
_MAX_PLACEHOLDER_LENGTH = 100

_EXAMPLE_INTRO = re.compile(
    r"\b(?:e\.\s?g\.?|eg\.|for example|for instance|such as|examples?\s*[:=]|ex\.)\s*[:,]?\s*", re.IGNORECASE
)
_QUOTED = quoted_pattern(60)
_EXAMPLE_END = re.compile(r"[);]|\.(?:\s|$)")
_EXAMPLE_SPLIT = re.compile(r",|\s+or\s+|\s+and\s+")
_MAX_EXAMPLE_LENGTH = 40
#: Shorter description examples are codes and options ("1w", "USD"), not invented facts.
_MIN_FACT_LENGTH = 4

#: A value to look at: the value, its schema (None: undescribed), its path, whether required.
#: (value, its schema, its path, required, the name of the innermost key it sits under)
_Node = tuple[Any, dict[str, Any] | None, str, bool, str]


def check(ctx: CheckContext) -> list[Finding]:
    """One finding per argument value that is a placeholder rather than information."""
    if not ctx.policy.checks.placeholders or not isinstance(ctx.args, dict):
        return []
    schema = ctx.spec.parameters if ctx.spec is not None else None
    tool = ctx.spec.name if ctx.spec is not None else ctx.call.name
    grounding = _Grounding(ctx)
    findings: list[Finding] = []
    stack: list[_Node] = [(ctx.args, schema, "$", False, "")]
    while stack:
        value, sub, path, required, name = stack.pop()
        if isinstance(value, dict):
            stack.extend(_children_of_object(value, sub, path))
        elif isinstance(value, list):
            stack.extend(_children_of_array(value, sub, path, name))
        else:
            hit = _placeholder(value, sub, required, grounding)
            if hit is not None:
                finding = _finding(tool, path, value, *hit)
                if hit[0] == "description_example":
                    finding = _weighed(finding, sub, name)
                findings.append(finding)
    return findings


def _weighed(finding: Finding, schema: dict[str, Any] | None, name: str) -> Finding:
    """A description's example used as the value is a placeholder for certain only where an
    invented value does harm (``guard.checks.risk``: an identifier, contact, amount...); an example
    that is one of the usual choices ("hourly", "fastest", "high") is as often what was meant."""
    risk = risk_of(name, [schema] if isinstance(schema, dict) else [], finding.value)
    confidence = risk.confidence if risk.level == "consequential" else CONFIDENCE["derivable"]
    evidence = {**finding.evidence, "risk": risk.level}
    return finding.model_copy(update={"confidence": confidence, "evidence": evidence})


def _children_of_object(value: dict[Any, Any], schema: dict[str, Any] | None, path: str) -> list[_Node]:
    """The members of an object, last first (the stack pops them in order)."""
    props = schema.get("properties") if schema else None
    props = props if isinstance(props, dict) else {}
    extra = schema.get("additionalProperties") if schema else None
    required = schema.get("required") if schema else None
    required = required if isinstance(required, list) else []
    children: list[_Node] = []
    for key, item in reversed(list(value.items())):
        sub = props.get(key) if key in props else extra
        sub = sub if isinstance(sub, dict) else None
        children.append((item, sub, child_path(path, key), key in required, str(key)))
    return children


def _children_of_array(value: list[Any], schema: dict[str, Any] | None, path: str, name: str) -> list[_Node]:
    items = schema.get("items") if schema else None
    sub = items if isinstance(items, dict) else None
    return [(item, sub, child_path(path, i), False, name) for i, item in reversed(list(enumerate(value)))]


def _placeholder(
    value: Any, schema: dict[str, Any] | None, required: bool, grounding: _Grounding
) -> tuple[str, str] | None:
    """``(rule, reason)`` when the value is a placeholder, else None."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return ("empty_required", "is empty but required") if required else None
        if _in_enum(value, schema):
            return None
        if len(text) <= _MAX_PLACEHOLDER_LENGTH:
            # A value the user or system said word for word is information, however it looks
            # (an address at example.com in a user profile, a ticket literally named "TBD"); so
            # is a made-up-looking address or number a tool returned (the account's real data),
            # though not a stand-in word ("unknown", "N/A") a result happens to hold.
            if (m := _PATTERNS.fullmatch(text)) and not grounding.mentions(text.casefold()) and not (
                m.lastgroup in _LOOKS_MADE_UP and grounding.returned(text)
            ):
                return str(m.lastgroup), "looks like a placeholder"
            if _is_type_name(text, schema):
                return "type_name", "is the name of a type, not a value"
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if schema is not None and _is_description_example(value, schema, grounding):
        return "description_example", "is the example from the parameter's description"
    return None


def stand_in_rule(text: str, schema: dict[str, Any] | None) -> str | None:
    """The rule a string matches as a whole when it stands in for a value (``<file_path>``,
    ``unknown``, ``string``), else None. Whether anyone said it is the caller's question; the
    provenance completion (``guard.checks.provenance``) shares this reading of a stand-in."""
    stripped = text.strip()
    if not stripped or len(stripped) > _MAX_PLACEHOLDER_LENGTH or _in_enum(text, schema):
        return None
    if m := _PATTERNS.fullmatch(stripped):
        return str(m.lastgroup)
    return "type_name" if _is_type_name(stripped, schema) else None


def _in_enum(value: str, schema: dict[str, Any] | None) -> bool:
    members = schema.get("enum") if schema else None
    return isinstance(members, list) and value in schemas.members(members)  # hashed: values x members otherwise


def _is_type_name(text: str, schema: dict[str, Any] | None) -> bool:
    word = text.casefold()
    if word == "string":
        return True
    declared = schema.get("type") if schema else None
    names = [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else []
    return word in names


def _is_description_example(value: Any, schema: dict[str, Any], grounding: _Grounding) -> bool:
    """The example the schema gives, unless someone in the conversation said it or it is the
    parameter's default (a model choosing the default made a choice, not a placeholder)."""
    text = str(value).strip().casefold()
    if not text or ("default" in schema and schema["default"] == value):
        return False
    if len(text) < _MIN_FACT_LENGTH or parse_bool(text) is not None:
        return False  # "1w", "yes": a choice among the options the description lists, not a fact
    description = schema.get("description")
    given = isinstance(description, str) and text in _examples_in(description)
    return (given or text in _schema_examples(schema)) and not grounding.mentions(text)


def _schema_examples(schema: dict[str, Any]) -> list[str]:
    listed = schema.get("examples")
    values = list(listed) if isinstance(listed, list) else []
    if "example" in schema:
        values.append(schema["example"])
    scalars = [v for v in values if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
    return [str(v).strip().casefold() for v in scalars]


@lru_cache(maxsize=2048)
def _examples_in(description: str) -> frozenset[str]:
    """Examples a description gives: "e.g. 'John Doe'", "for example: 12345", "such as NYC or LA"."""
    found: set[str] = set()
    for intro in _EXAMPLE_INTRO.finditer(description):
        rest = description[intro.end():]
        end = _EXAMPLE_END.search(rest)
        clause = rest[: end.start()] if end else rest
        quoted = [quoted_text(m) for m in _QUOTED.finditer(clause)]
        candidates = quoted or _EXAMPLE_SPLIT.split(clause)
        found.update(c.strip().casefold() for c in candidates if 0 < len(c.strip()) <= _MAX_EXAMPLE_LENGTH)
    return frozenset(found)


class _Grounding:
    """What the user and system said, lower-cased once and only when first asked."""

    def __init__(self, ctx: CheckContext) -> None:
        self._ctx = ctx
        self._text: str | None = None
        self._results: str | None = None

    def mentions(self, needle: str) -> bool:
        """Whether the words of ``needle`` were said, after normalisation ("response_time" was
        said as "response time"), together or, for a list written as one string ("gym,pool"),
        each of them ("the gym and pool")."""
        if self._text is None:
            said = "\n".join(m.content for m in self._ctx.conversation.grounding_texts)
            self._text = f" {normalise_text(said)} "
        words = normalise_text(needle)
        if not words:
            return False
        if f" {words} " in self._text or f" {words}s " in self._text:  # "live performances"
            return True
        parts = [normalise_text(p) for p in re.split(r"[,;|/]", needle)]
        return len(parts) > 1 and all(p and f" {p} " in self._text for p in parts)

    def returned(self, value: str) -> bool:
        """Whether an earlier tool result holds ``value`` as written (case aside); the results are
        lower-cased once per check, however many values ask."""
        if self._results is None:
            self._results = "\n".join(m.content.casefold() for m in self._ctx.conversation.tool_results if m.content)
        return value.casefold() in self._results


def _finding(tool: str | None, path: str, value: Any, rule: str, reason: str) -> Finding:
    return Finding(
        category=Category.PLACEHOLDER_VALUE,
        check=NAME,
        message=f"{path_label(path)} {reason}: {excerpt(value)}",
        tool=tool,
        path=path,
        value=encodable(value),
        rule=rule,
    )
