"""Every problem of a policy file at once, for ``guard policy validate``.

``Policy.from_yaml`` stops at the first problem (what a service that loads a policy needs); a person
fixing a file wants them all, each with its file, line and key, and a "did you mean" for a misspelt
key or value. An empty file is valid (every default applies) but is said, since it is rarely meant.
"""

from __future__ import annotations

import difflib
import re
from collections import abc
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from guard.policy import Policy, _branch_tag, _line_of, _telling_error

_QUOTED = re.compile(r"'([^']*)'")


@dataclass(frozen=True)
class Problem:
    source: str
    line: int | None
    key: str | None
    message: str

    def __str__(self) -> str:
        where = self.source + (f", line {self.line}" if self.line else "")
        return f"{where}: {self.key + ': ' if self.key else ''}{self.message}"


@dataclass
class Checked:
    policy: Policy | None
    problems: list[Problem]
    warnings: list[str]


def check_file(path: Path) -> Checked:
    """The policy in ``path`` (None when it has a problem), every problem, and warnings."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Checked(None, [Problem(source, None, None, f"cannot read the policy file: {exc}")], [])
    return check_text(text, source)


def check_text(text: str, source: str) -> Checked:
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        message = str(exc).replace('"<unicode string>"', source).replace("<unicode string>", source)
        return Checked(None, [Problem(source, mark.line + 1 if mark else None, None, f"invalid YAML: {message}")], [])
    warnings = []
    if data is None:
        warnings.append(f"{source}: the file is empty: every default applies (guard policy show lists them)")
        data = {}
    if not isinstance(data, dict):
        return Checked(None, [Problem(source, 1, None, "a policy must be a mapping of keys to values")], warnings)
    try:
        policy = Policy.model_validate(data)
    except ValidationError as exc:
        return Checked(None, _problems(exc, root, source), warnings)
    try:
        # what from_yaml adds beyond the model (relative paths...): the same loader, so they never disagree
        Policy.from_yaml_text(text, source=source)
    except ValueError as exc:
        return Checked(None, [Problem(source, None, None, str(exc))], warnings)
    return Checked(policy, [], warnings)


def _problems(exc: ValidationError, root: Any, source: str) -> list[Problem]:
    """One problem per location (a value that may take several shapes reports the telling branch's error)."""
    by_loc: dict[tuple[Any, ...], list[Any]] = {}
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not _branch_tag(p))
        by_loc.setdefault(loc, []).append(err)
    problems = []
    for loc, errors in by_loc.items():
        err = _telling_error(errors)
        key = ".".join(str(p) for p in loc) or None
        line = _line_of(root, loc)
        if err["type"] == "extra_forbidden":
            message = f"unknown key {loc[-1]!r}" + _suggest(str(loc[-1]), _keys_at(loc[:-1]))
        elif err["type"] == "enum" and "[key]" in [str(p) for p in err["loc"]]:
            message = f"unknown name {loc[-1]!r}" + _suggest(str(loc[-1]), _QUOTED.findall(err["ctx"]["expected"]))
        elif err["type"] in ("enum", "literal_error") and isinstance(err.get("input"), str):
            expected = _QUOTED.findall(str((err.get("ctx") or {}).get("expected", "")))
            message = f"{err['msg']}, got {err['input']!r}" + _suggest(err["input"], expected)
        else:
            message = err["msg"]
        problems.append(Problem(source, line, key, message))
    return sorted(problems, key=lambda p: (p.line or 0, p.key or ""))


def _suggest(word: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _keys_at(loc: tuple[Any, ...]) -> list[str]:
    """The keys the policy model accepts at ``loc`` (a path of keys), for the did-you-mean."""
    annotation: Any = Policy
    for part in loc:
        annotation = _unwrap(annotation)
        if get_origin(annotation) in (dict, Mapping, abc.Mapping):  # {name: X}: the part is a name
            annotation = get_args(annotation)[-1]
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = annotation.model_fields.get(str(part)) or next(
                (f for f in annotation.model_fields.values() if f.alias == str(part)), None)
            if field is None:
                return []
            annotation = field.annotation
        else:
            return []
    annotation = _unwrap(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [f.alias or name for name, f in annotation.model_fields.items()]
    return []


def _unwrap(annotation: Any) -> Any:
    """``X | None`` -> X (the first model or mapping among a union's members)."""
    if get_origin(annotation) in (Union, UnionType):
        for arg in get_args(annotation):
            if get_origin(arg) in (dict, Mapping, abc.Mapping) or (isinstance(arg, type) and issubclass(arg, BaseModel)):
                return arg
    return annotation
