"""Tool specifications: every way users and datasets describe a tool, normalised to one JSON schema.

Agents describe tools as LangChain tools, plain typed functions or pydantic models; datasets use
JSON-schema dialects (OpenAI, ACEBench, BFCL with ``dict``/``float``/``tuple``/``any`` types,
ToolBench/Fail-TaLMs ``required_parameters`` lists, API-Bank ``input_parameters``). Checks should
not care which: each tool becomes a ``ToolSpec`` whose ``parameters`` is a standard JSON schema of
``type: object``. A description that cannot be normalised raises ``ToolSchemaError`` at
registration, naming the tool and the path, instead of failing later on a live call; so does one
that could not be validated safely (``guard.schema.schema_problem``): a ``$ref`` that is not local
(schemas are never fetched), one that points nowhere, a loop of references, a pattern that cannot
be compiled in bounded time.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Generic, TypeVar

from cachetools import LRUCache
from rapidfuzz import fuzz, process

from guard import schema as schemas
from guard.models import canonical_json, short_hash

V = TypeVar("V")

#: How many tools' worth of registries each per-registry derivation (``PerRegistry``) keeps: the
#: relevance index costs about 5 KB per tool (the preflight vocabulary 1.5 KB), so the default holds
#: at most about 45 MB for the largest and covers thousands of distinct tool sets (a replay of
#: ACEBench cycles through 838, 2,748 tools in all).
DERIVED_TOOLS = 8_192


class ToolSchemaError(ValueError):
    """A tool description that cannot be turned into a JSON schema."""

    def __init__(self, tool: str, path: str, problem: str) -> None:
        super().__init__(f"tool {tool!r}: {problem} at {path}")
        self.tool, self.path, self.problem = tool, path, problem


# Type names seen across the dialects, mapped to JSON-schema types (None: any type).
_TYPE_NAMES: dict[str, str | None] = {
    "string": "string", "str": "string", "text": "string", "date": "string", "datetime": "string",
    "time": "string", "email": "string", "url": "string",
    "integer": "integer", "int": "integer", "long": "integer",
    "number": "number", "float": "number", "double": "number", "decimal": "number",
    "boolean": "boolean", "bool": "boolean",
    "array": "array", "list": "array", "tuple": "array", "set": "array",
    "object": "object", "dict": "object", "map": "object", "hashmap": "object", "json": "object",
    "null": "null", "none": "null", "enum": "string",
    "any": None,
}

_SUBSCHEMA_LIST_KEYS = ("anyOf", "oneOf", "allOf", "prefixItems")


def normalise_schema(schema: Any, tool: str = "?", path: str = "$") -> dict[str, Any]:
    """Return a standard JSON schema for one parameter schema in any supported dialect."""
    if schema is None or schema == {}:
        return {}
    if not isinstance(schema, dict):
        raise ToolSchemaError(tool, path, f"a schema must be an object, got {type(schema).__name__}")
    out = dict(schema)
    if "type" in out:
        out.update(_normalise_type(out["type"], tool, path))
        if out.get("type") is None:
            del out["type"]
    if isinstance(out.get("properties"), dict):
        out["properties"] = {
            str(k): normalise_schema(v, tool, f"{path}.{k}") for k, v in out["properties"].items()
        }
        out.setdefault("type", "object")
    elif "properties" in out:
        raise ToolSchemaError(tool, f"{path}.properties", "properties must be an object")
    if "required" in out:
        req = out["required"]
        if isinstance(req, bool):  # some dialects mark a single parameter `required: true`
            out.pop("required")
        elif not isinstance(req, list) or not all(isinstance(r, str) for r in req):
            raise ToolSchemaError(tool, f"{path}.required", "required must be a list of names")
    items = out.get("items")
    if isinstance(items, dict):
        out["items"] = normalise_schema(items, tool, f"{path}[]")
    elif isinstance(items, list):  # old tuple form
        out["prefixItems"] = [normalise_schema(s, tool, f"{path}[{i}]") for i, s in enumerate(items)]
        del out["items"]
    if isinstance(out.get("additionalProperties"), dict):
        out["additionalProperties"] = normalise_schema(out["additionalProperties"], tool, f"{path}.*")
    for key in _SUBSCHEMA_LIST_KEYS:
        if isinstance(out.get(key), list):
            out[key] = [normalise_schema(s, tool, f"{path}<{key}{i}>") for i, s in enumerate(out[key])]
    if "pattern" in out:
        out["pattern"] = _normalise_pattern(out["pattern"], tool, path)
    if "enum" in out and not isinstance(out["enum"], list):
        raise ToolSchemaError(tool, f"{path}.enum", "enum must be a list")
    return out


_TYPE_ALTERNATIVES = re.compile(r"\s+or\s+|\s*\|\s*", re.IGNORECASE)


def _type_key(name: str) -> str:
    """'List[str]', 'LIST of STRINGS', 'dict[str, int]' -> the dialect-free type name."""
    key = name.strip().lower()
    if key.startswith(("list[", "list(", "array[", "tuple[", "list of", "array of")):
        return "array"
    if key.startswith(("dict[", "dict(", "object[")):
        return "object"
    return key


def _normalise_type(value: Any, tool: str, path: str) -> dict[str, Any]:
    names = value if isinstance(value, list) else [value]
    types: list[str] = []
    for name in names:
        if not isinstance(name, str):
            raise ToolSchemaError(tool, f"{path}.type", f"type must be a name, got {name!r}")
        for part in _TYPE_ALTERNATIVES.split(name):  # ToolBench writes unions as 'STRING or LIST'
            key = _type_key(part)
            if key not in _TYPE_NAMES:
                raise ToolSchemaError(tool, f"{path}.type", f"unknown type {name!r}")
            mapped = _TYPE_NAMES[key]
            if mapped is None:
                return {"type": None}
            if mapped not in types:
                types.append(mapped)
    return {"type": types[0] if len(types) == 1 else types}


_ECMA_CLASS_HYPHEN = re.compile(r"(\\[wdsWDS])-(?=[^\]])")


def _normalise_pattern(pattern: Any, tool: str, path: str) -> Any:
    """JSON Schema patterns are ECMA-262 regexes; Python's ``re`` rejects a few ECMA-isms that
    tool authors use, such as a literal hyphen after a class escape (``[\\w-\\.]``). Escape it; a
    pattern that still does not compile is reported at registration."""
    if not isinstance(pattern, str):
        raise ToolSchemaError(tool, f"{path}.pattern", "pattern must be a string")
    if len(pattern) > schemas.MAX_PATTERN_CHARS:  # refused before compiling it, which costs its length
        raise ToolSchemaError(tool, f"{path}.pattern", str(schemas.pattern_problem(pattern)))
    for candidate in (pattern, _ECMA_CLASS_HYPHEN.sub(r"\1\\-", pattern)):
        try:
            re.compile(candidate)
            return candidate
        except re.error:
            continue
    raise ToolSchemaError(tool, f"{path}.pattern", f"invalid regular expression {pattern!r}")


@dataclass(frozen=True)
class ToolSpec:
    """One registered tool: its name, description, parameter schema and availability."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    enabled: bool = True
    unavailable_reason: str | None = None
    runner: Any = field(default=None, compare=False, repr=False)
    metadata: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def properties(self) -> dict[str, Any]:
        return self.parameters.get("properties", {})

    @property
    def required(self) -> list[str]:
        return list(self.parameters.get("required", []))

    @classmethod
    def from_any(cls, tool: Any, *, name: str | None = None) -> ToolSpec:
        """Build a spec from any supported description (see the module docstring)."""
        if isinstance(tool, ToolSpec):
            if problem := _schema_problem(tool.parameters):
                raise ToolSchemaError(tool.name, problem[0], problem[1])
            return tool if name is None else replace(tool, name=name)
        if isinstance(tool, dict):
            return _from_dict(tool, name)
        return _from_python(tool, name)


def _from_dict(raw: dict[str, Any], name: str | None) -> ToolSpec:
    if raw.get("type") == "function" and isinstance(raw.get("function"), dict):
        raw = raw["function"]  # OpenAI tools list entry
    tool_name = name or raw.get("name") or raw.get("api_name")
    if not isinstance(tool_name, str) or not tool_name.strip():
        raise ToolSchemaError(str(tool_name), "$", "a tool needs a non-empty name")
    description = str(raw.get("description") or raw.get("api_description") or "")
    meta = {k: raw[k] for k in ("tool_name", "category_name", "method", "template_response") if k in raw}
    # The service a tool belongs to ("metmuseum"), which the checks read as ``metadata["service"]``:
    # given as ``service``, or in ToolBench's dialect as ``tool_name``.
    if service := raw.get("service") or raw.get("tool_name"):
        meta["service"] = service
    if "required_parameters" in raw or "optional_parameters" in raw:
        schema = _from_parameter_lists(raw, tool_name)
    elif isinstance(raw.get("input_parameters"), dict):
        schema = _from_input_parameters(raw["input_parameters"], tool_name)
        if isinstance(raw.get("output_parameters"), dict):
            meta["output_parameters"] = raw["output_parameters"]
    else:
        schema = raw.get("parameters", raw.get("input_schema", raw.get("inputSchema")))
        schema = {"type": "object", "properties": {}} if schema in (None, {}) else schema
    schema = normalise_schema(schema, tool_name)
    if schema.get("type") not in ("object", None):
        raise ToolSchemaError(tool_name, "$", f"parameters must describe an object, got {schema.get('type')!r}")
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    if problem := _schema_problem(schema):
        raise ToolSchemaError(tool_name, problem[0], problem[1])
    return ToolSpec(name=tool_name, description=description, parameters=schema, metadata=meta)


_PROBLEMS: LRUCache[str, tuple[str, str] | None] = LRUCache(maxsize=4096)
_PROBLEMS_LOCK = threading.Lock()


def _schema_problem(schema: dict[str, Any]) -> tuple[str, str] | None:
    """Where a normalised schema breaks JSON Schema itself (a bad regex, a non-list enum...) or
    could not be validated safely (a remote or dangling ``$ref``, a reference loop, a pattern that
    cannot be compiled in bounded time): ``guard.schema.schema_problem``.

    Caught at registration, because the validator would otherwise raise (or fetch, or hang) on
    every call to the tool. Cached by a digest of the content (datasets register the same tools
    thousands of times), so the cache holds 4,096 short answers, never the schemas themselves.
    """
    text = canonical_json(schema)
    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    with _PROBLEMS_LOCK:
        if key in _PROBLEMS:
            return _PROBLEMS[key]
    problem = schemas.schema_problem(json.loads(text))
    with _PROBLEMS_LOCK:
        _PROBLEMS[key] = problem
    return problem


def _from_parameter_lists(raw: dict[str, Any], tool: str) -> dict[str, Any]:
    """ToolBench / Fail-TaLMs: ``required_parameters`` and ``optional_parameters`` lists."""
    props: dict[str, Any] = {}
    required: list[str] = []
    for key, is_required in (("required_parameters", True), ("optional_parameters", False)):
        params = raw.get(key) or []
        if not isinstance(params, list):
            raise ToolSchemaError(tool, f"$.{key}", f"{key} must be a list of parameters")
        for i, param in enumerate(params):
            if not isinstance(param, dict) or not isinstance(param.get("name"), str):
                raise ToolSchemaError(tool, f"$.{key}[{i}]", "each parameter needs a name")
            prop: dict[str, Any] = {"type": param.get("type", "string")}
            if param.get("description"):
                prop["description"] = str(param["description"])
            if "default" in param and param["default"] not in ("", None):
                prop["default"] = param["default"]
            props[param["name"]] = prop
            if is_required:
                required.append(param["name"])
    return {"type": "object", "properties": props, "required": required}


def _from_input_parameters(params: dict[str, Any], tool: str) -> dict[str, Any]:
    """API-Bank: ``input_parameters`` maps names to ``{type, description}``; all are required
    unless the description says optional."""
    props: dict[str, Any] = {}
    required: list[str] = []
    for pname, p in params.items():
        if not isinstance(p, dict):
            raise ToolSchemaError(tool, f"$.input_parameters.{pname}", "each parameter must be an object")
        prop = {k: v for k, v in p.items() if k in ("type", "description", "enum", "default", "format")}
        props[pname] = prop
        if "optional" not in str(p.get("description", "")).lower():
            required.append(pname)
    return {"type": "object", "properties": props, "required": required}


def _from_python(tool: Any, name: str | None) -> ToolSpec:
    """A LangChain BaseTool, a typed function or a pydantic model, via LangChain's converter."""
    from langchain_core.utils.function_calling import convert_to_openai_tool

    try:
        fn = convert_to_openai_tool(tool)["function"]
    except Exception as exc:  # the converter raises many types for unusable objects
        label = getattr(tool, "name", None) or getattr(tool, "__name__", None) or repr(tool)
        raise ToolSchemaError(str(label), "$", f"cannot describe this object as a tool: {exc}") from exc
    spec = _from_dict(fn, name)
    runner = tool if callable(tool) or hasattr(tool, "invoke") else None
    return replace(spec, runner=runner)


_WORD_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[_\-.\s/]+")


def name_words(name: str) -> str:
    """'getWeather_forecast' -> 'get weather forecast': for fuzzy name matching."""
    return " ".join(w.lower() for w in _WORD_SPLIT.split(name) if w)


def shared_first_word(names: Iterable[str]) -> str | None:
    """The first name word every one of two or more tools starts with ("stripe" for
    ``stripe_create_refund`` and ``stripe_list_charges``): a service's prefix, or a verb they all
    share; None when they differ. The caller tells the two apart."""
    names = list(names)
    firsts = {(name_words(n).split() or [""])[0] for n in names}
    if len(names) < 2 or len(firsts) != 1:
        return None
    return next(iter(firsts)) or None


class ToolRegistry:
    """The tools an agent may call, by name."""

    def __init__(self, tools: Iterable[Any] = ()) -> None:
        self._specs: dict[str, ToolSpec] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Any, *, name: str | None = None) -> ToolSpec:
        spec = ToolSpec.from_any(tool, name=name)
        self._specs[spec.name] = spec
        self.__dict__.pop("fingerprint", None)
        self.__dict__.pop("_name_index", None)
        return spec

    def copy(self) -> ToolRegistry:
        """A registry with the same tools whose availability can change on its own; the derived
        caches (fingerprint, name index) are shared, since availability does not enter them."""
        twin = ToolRegistry()
        twin._specs = dict(self._specs)
        for cached in ("fingerprint", "_name_index"):
            if cached in self.__dict__:
                twin.__dict__[cached] = self.__dict__[cached]
        return twin

    def set_available(self, name: str, available: bool, reason: str | None = None) -> None:
        """Mark a registered tool disabled or failing (an open circuit, an outage)."""
        spec = self._specs[name]
        self._specs[name] = replace(spec, enabled=available, unavailable_reason=None if available else reason)

    def get(self, name: str | None) -> ToolSpec | None:
        return self._specs.get(name) if isinstance(name, str) else None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._specs

    def __iter__(self) -> Iterator[ToolSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    @property
    def names(self) -> list[str]:
        return list(self._specs)

    @property
    def available_names(self) -> list[str]:
        return [s.name for s in self._specs.values() if s.enabled]

    @cached_property
    def fingerprint(self) -> str:
        """Changes whenever a tool's schema changes: the key for per-registry caches."""
        return short_hash([(s.name, s.description, s.parameters) for s in self._specs.values()])

    @cached_property
    def _name_index(self) -> dict[str, str]:
        return {name_words(n): n for n in self._specs}

    def suggest(self, name: str, limit: int = 3, cutoff: float = 50.0) -> list[str]:
        """The registered, available names closest to a name that is not registered."""
        index = {k: v for k, v in self._name_index.items() if self._specs[v].enabled}
        hits = process.extract(name_words(name), list(index), scorer=fuzz.WRatio, limit=limit, score_cutoff=cutoff)
        return [index[h[0]] for h in hits]

    def runners(self) -> dict[str, Callable[..., Any]]:
        return {s.name: s.runner for s in self._specs.values() if s.runner is not None}


class PerRegistry(Generic[V]):
    """A value derived from a registry's tools, built once per registry content and availability.

    Keyed by the registry's ``fingerprint`` (a digest of its tools) and the names available, never
    by the object: benchmarks and replays build a new registry per case, a service rebuilds one
    per request, and a live agent keeps one for its lifetime; all pay the derivation once per
    distinct tool set. A guard that sees many tool sets (a replay of a log with a tool set per
    thread, a service in front of many agents) cycles through more of them than a few dozen, so
    the cache is a least-recently-used one bounded by the **tools** its values describe
    (``tools``, one unit per tool, at least one per registry): a derived value grows with the
    tools, not with the registry count. Safe to share between threads.
    """

    def __init__(self, build: Callable[[ToolRegistry], V], tools: int = DERIVED_TOOLS) -> None:
        self._build = build
        self._values: LRUCache[str, tuple[V, int]] = LRUCache(maxsize=tools, getsizeof=_derived_size)
        self._lock = threading.Lock()

    def __call__(self, registry: ToolRegistry) -> V:
        key = registry.fingerprint + ":" + ",".join(registry.available_names)
        with self._lock:
            hit = self._values.get(key)
        if hit is not None:
            return hit[0]
        value = self._build(registry)
        entry = (value, max(1, len(registry)))
        if entry[1] <= self._values.maxsize:
            with self._lock:
                self._values[key] = entry
        return value

    def clear(self) -> None:
        with self._lock:
            self._values.clear()


def _derived_size(entry: tuple[Any, int]) -> int:
    return entry[1]
