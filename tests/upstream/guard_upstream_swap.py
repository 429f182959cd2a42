"""A pytest plugin that puts the guard inside LangGraph's and LangChain's own test suites.

Loaded by ``tests/upstream/run.py`` (``-p guard_upstream_swap``) before the upstream conftest and
test modules are imported. ``GUARD_UPSTREAM_SUITE`` says which suite runs, ``GUARD_UPSTREAM_MODE``
what is swapped in:

- ``control``: LangGraph's ``ToolNode`` as it is; for LangChain, a pass-through ``wrap_tool_call``
  middleware appended to every ``create_agent`` (the slot the guard takes, so structural
  differences such as an added middleware node are not counted against the guard);
- ``observe``: ``GuardedToolNode`` / ``GuardMiddleware`` with the default checks and ``mode: observe``;
- ``enforce``: the schema-only enforcing policy (``schema_only_policy``);
- ``default``: the default policy, enforcing.

The LangChain middleware gets its policy as a path (``GUARD_UPSTREAM_POLICY``), the way users pass
it, so loading the file is part of what is tested.
"""

from __future__ import annotations

import os
from typing import Any

import yaml

SUITE = os.environ.get("GUARD_UPSTREAM_SUITE", "langgraph")
MODE = os.environ.get("GUARD_UPSTREAM_MODE", "control")


def schema_only_policy() -> dict[str, Any]:
    """Every check off but schema validation (arguments against the tool's schema, malformed
    arguments, unknown tools: these keep their default action, send the model back), every other
    category allowed, no repairs, no backoff retries, budgets out of reach. The batch check (calls
    that share an id) is a check of its own, off here; it is on by default."""
    from guard.taxonomy import SCHEMA_CATEGORIES, Category

    enforced = SCHEMA_CATEGORIES | {Category.MALFORMED_ARGUMENTS, Category.UNKNOWN_TOOL}
    return {
        "name": "schema-only",
        "actions": {c.value: "allow" for c in Category if c not in enforced},
        "repairs": dict.fromkeys(
            ("coerce_types", "enum_case", "param_names", "date_format", "parse_json", "from_provenance"), False
        ),
        "budgets": {"per_call": 1000, "per_turn": 1000, "per_thread": 1000},
        "backoff": {"max_attempts": 1},
        "checks": {
            "placeholders": False,
            "duplicate_ids": False,
            "grounding": {"enabled": False},
            "repetition": {"max_identical_calls": 1000},
            "preflight": {"enabled": False},
            "semantic": {"enabled": False},
            "judge": {"enabled": False},
        },
    }


def policy_for(mode: str) -> dict[str, Any]:
    if mode == "observe":
        return {"name": "observe", "mode": "observe"}
    if mode == "enforce":
        return schema_only_policy()
    if mode == "default":
        return {}
    raise ValueError(f"unknown GUARD_UPSTREAM_MODE {mode!r}")


def _swap_tool_node(policy: dict[str, Any]) -> None:
    import langgraph.prebuilt
    import langgraph.prebuilt.chat_agent_executor
    import langgraph.prebuilt.tool_node

    from guard.node import GuardedToolNode

    class ToolNode(GuardedToolNode):  # the name upstream snapshots and reprs show
        def __init__(self, tools: Any, **kwargs: Any) -> None:
            super().__init__(tools, policy, **kwargs)

    ToolNode.__qualname__ = "ToolNode"
    for module in (langgraph.prebuilt, langgraph.prebuilt.tool_node, langgraph.prebuilt.chat_agent_executor):
        module.ToolNode = ToolNode  # type: ignore[attr-defined]


def _append_middleware(make: Any) -> None:
    import langchain.agents
    import langchain.agents.factory

    original = langchain.agents.factory.create_agent

    def create_agent(*args: Any, middleware: Any = (), **kwargs: Any) -> Any:
        return original(*args, middleware=[*middleware, make()], **kwargs)

    create_agent.__wrapped__ = original  # type: ignore[attr-defined]
    langchain.agents.create_agent = create_agent  # type: ignore[assignment]
    langchain.agents.factory.create_agent = create_agent  # type: ignore[assignment]


#: what the guard decided during the running test, other than a clean allow ("action[categories]")
_DECIDED: list[str] = []


def _record_decisions() -> None:
    """Note every decision the guard makes (``Guard.check``, ``Guard.refuse``), so that each failing
    test is listed with what the guard did in it (``run.py --list``)."""
    from guard.engine import Guard

    def noted(method: Any) -> Any:
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            decision = method(self, *args, **kwargs)
            if decision.action.value != "allow" or decision.categories:
                cats = ",".join(c.value for c in decision.categories)
                seen = f"{decision.action.value}[{cats}]"
                if seen not in _DECIDED:
                    _DECIDED.append(seen)
            return decision

        wrapper.__wrapped__ = method  # type: ignore[attr-defined]
        return wrapper

    Guard.check = noted(Guard.check)  # type: ignore[method-assign]
    Guard.refuse = noted(Guard.refuse)  # type: ignore[method-assign]


def pytest_runtest_setup(item: Any) -> None:
    _DECIDED.clear()


def pytest_runtest_makereport(item: Any, call: Any) -> None:
    """The decisions go into the JUnit report as the test's ``guard_decisions`` property."""
    if call.when == "teardown" and _DECIDED:
        item.user_properties.append(("guard_decisions", " ".join(_DECIDED)))


def pytest_configure(config: Any) -> None:
    if MODE != "control":
        _record_decisions()
    if SUITE == "langgraph":
        if MODE != "control":
            _swap_tool_node(policy_for(MODE))
        return
    if SUITE != "langchain":
        raise ValueError(f"unknown GUARD_UPSTREAM_SUITE {SUITE!r}")
    from langchain.agents.middleware import AgentMiddleware

    if MODE == "control":

        class PassThroughMiddleware(AgentMiddleware):
            def wrap_tool_call(self, request: Any, handler: Any) -> Any:
                return handler(request)

            async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
                return await handler(request)

        _append_middleware(PassThroughMiddleware)
        return
    from guard.middleware import GuardMiddleware

    path = os.environ["GUARD_UPSTREAM_POLICY"]
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(policy_for(MODE), f)
    _append_middleware(lambda: GuardMiddleware(path))
