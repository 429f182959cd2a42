"""Replays cases through the same guarded LangGraph graph that runs in production.

Per case: simulated tools, the case's agent source as the model, a ``Guard`` over the dataset's own
tool descriptions, ``build_guarded_agent`` with an ``InMemorySaver``, and the simulated human
answering every ``interrupt()`` until the run ends. The guard's first decision about each call under
test (or the preflight's, for cases without calls) is what awareness is scored on; what finally ran
is what recovery is scored on.
"""

from __future__ import annotations

import time
from datetime import datetime
from collections.abc import Callable, Iterable
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import BaseModel, Field

from guard_bench.agents import AgentSource, ai_turn
from guard_bench.cases import Case
from guard_bench.humans import SimulatedHuman
from guard_bench.labels import labels_of
from guard_bench.tools import ToolBox
from guard_graphs.agent import build_guarded_agent
from guard.conversation import replay_clock
from guard.engine import Guard
from guard.models import Decision, canonical_json
from guard.policy import Policy

#: Rounds of questions per case before the replay gives up (a guard that keeps asking fails the case).
MAX_ROUNDS = 6


class CaseResult(BaseModel):
    """What the guard did with one case: the basis of every metric and of ``cases.jsonl``."""

    id: str
    suite: str
    subset: str
    split: str
    #: The case's family (``Case.family``): what the bootstrap intervals resample.
    family: str = ""
    expected: dict[str, Any]
    action: str | None = None
    flagged: bool = False
    predicted: list[str] = Field(default_factory=list)
    categories: list[str] = Field(default_factory=list)
    findings: list[dict[str, Any]] = Field(default_factory=list)
    tool: str | None = None
    missing: list[str] = Field(default_factory=list)
    question: str | None = None
    feedback: str | None = None
    repaired_args: dict[str, Any] | None = None
    executed: list[dict[str, Any]] = Field(default_factory=list)
    gold_calls: list[dict[str, Any]] = Field(default_factory=list)
    recovered: bool | None = None
    questions: int = 0
    retries: int = 0
    latency_ms: float = 0.0
    #: With the embedding checks on: what the first decision cost them (model calls, texts, tokens,
    #: cache lookups and hits), and ``setup``: what building the case's guard cost (its tools).
    semantic: dict[str, Any] | None = None
    error: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    #: What the optional LLM judge was asked during the case, every decision's (``Decision.judgements``).
    judge: list[dict[str, Any]] = Field(default_factory=list)


class RecordingGuard(Guard):
    """A Guard that keeps every decision it makes, so the runner can read the first one per call,
    and, with the embedding checks on, what each decision cost them (``SemanticGuard.stats``
    deltas: model calls, texts, tokens, cache lookups and hits)."""

    def __init__(self, *args: Any, warm_turns: bool = False, **kwargs: Any) -> None:
        semantic = kwargs.get("semantic")
        before = _semantic_stats(semantic)
        super().__init__(*args, **kwargs)
        self.warm_turns = warm_turns
        self.warmups: list[dict[str, float]] = []  # each model turn's warm-up: ms, and its model counters
        self.log: list[Decision] = []
        self.semantic_costs: dict[int, dict[str, int]] = {}  # id(decision) -> counters
        self.setup_cost = _delta(before, _semantic_stats(self.semantic))  # the registry's tools, embedded once

    def check(self, *args: Any, **kwargs: Any) -> Decision:
        before = _semantic_stats(self.semantic)
        decision = super().check(*args, **kwargs)
        self._keep(decision, before)
        return decision

    def warm(self, messages: Any) -> Any:
        """Cold replays (the default) start no warm-up: every decision embeds its own new text, as
        on a new thread whose agent never warms the guard. With ``warm_turns`` the model's turn is
        taken to last until the warm-up is done (a real model's turn takes hundreds of
        milliseconds, a warm-up tens): the warm-up runs to its end, and what it cost is kept."""
        if not self.warm_turns:
            return None
        before, start = _semantic_stats(self.semantic), time.perf_counter()
        future = super().warm(messages)
        if future is not None:
            try:
                future.result(timeout=60)
            except Exception:  # a failed warm-up only means the decision embeds its own text
                pass
            self.warmups.append({"ms": (time.perf_counter() - start) * 1000, **(_delta(before, _semantic_stats(self.semantic)) or {})})
        return future

    def preflight(self, *args: Any, **kwargs: Any) -> Decision:
        before = _semantic_stats(self.semantic)
        decision = super().preflight(*args, **kwargs)
        self._keep(decision, before)
        return decision

    def _keep(self, decision: Decision, before: dict[str, int] | None) -> None:
        self.log.append(decision)
        if (cost := _delta(before, _semantic_stats(self.semantic))) is not None:
            self.semantic_costs[id(decision)] = cost


def _semantic_stats(semantic: Any) -> dict[str, int] | None:
    stats = getattr(semantic, "stats", None)
    return stats() if callable(stats) else None


def _delta(before: dict[str, int] | None, after: dict[str, int] | None) -> dict[str, int] | None:
    if before is None or after is None:
        return None
    return {k: after[k] - before.get(k, 0) for k in after}


def to_langchain(messages: Iterable[dict[str, Any]]) -> list[Any]:
    """Case messages (role/content dicts) as LangChain messages."""
    out: list[Any] = []
    for m in messages:
        role, content = m.get("role", "user"), m.get("content") or ""
        if role == "system":
            out.append(SystemMessage(content))
        elif role == "assistant":
            out.append(ai_turn(m.get("tool_calls") or [], content=content))
        elif role == "tool":
            out.append(ToolMessage(content=content, tool_call_id=str(m.get("tool_call_id") or ""), name=m.get("name"),
                                   status=m.get("status") or "success"))
        else:
            out.append(HumanMessage(content))
    return out


#: The moment every replay runs at, so that a figure does not depend on the day it is measured: a
#: conversation that states no full date of its own (API-Bank's say only "The current year is
#: 2023.") reads "tomorrow" and "12pm" against it. The date is the one API-Bank's GetToday returns
#: in its recorded dialogues.
REPLAY_NOW = datetime(2023, 3, 31, 9, 0)


def run_case(
    case: Case, policy: Policy, agents: AgentSource, semantic: Any = None, judge: Any = None, warm: bool = False
) -> CaseResult:
    """One case through the guarded graph; never raises (a crash is reported in ``error``)."""
    result = CaseResult(id=case.id, suite=case.suite, subset=case.subset, split=case.split, family=case.family,
                        expected=case.expected.model_dump(), gold_calls=case.gold_calls, meta=case.meta)
    try:
        _run(case, policy, agents, result, semantic, judge, warm)
    except Exception as exc:  # a benchmark run reports a broken case and goes on
        result.error = f"{type(exc).__name__}: {exc}"[:500]
    return result


def _run(case: Case, policy: Policy, agents: AgentSource, result: CaseResult, semantic: Any, judge: Any, warm: bool = False) -> None:
    box = ToolBox.for_case(case)
    guard = RecordingGuard(box.registry, policy, semantic=semantic, judge=judge, warm_turns=warm)
    human = SimulatedHuman(case.human)
    agent = build_guarded_agent(
        agents.model_for(case), box.tools(), guard=guard, checkpointer=InMemorySaver(), preflight=case.uses_preflight,
        sleep=lambda s: None,
    )
    config = {"configurable": {"thread_id": case.id}, "recursion_limit": 40}
    with replay_clock(REPLAY_NOW):
        state = agent.invoke({"messages": to_langchain(case.messages)}, config)
        rounds = 0
        while state.get("__interrupt__") and rounds < MAX_ROUNDS:
            rounds += 1
            state = agent.invoke(Command(resume=human.answer(state["__interrupt__"][0].value)), config)
    _score_decision(result, _first_decision(guard.log, case))
    result.executed = box.executed
    result.questions = human.questions
    result.retries = sum(
        1 for m in state.get("messages", []) if isinstance(m, ToolMessage) and m.response_metadata.get("guard", {}).get("action") == "retry"
    )
    result.latency_ms = _first_latency(guard.log, case)
    first = _first_decision(guard.log, case)
    if first is not None and id(first) in guard.semantic_costs:
        result.semantic = {**guard.semantic_costs[id(first)], "setup": guard.setup_cost,
                           "backend": getattr(getattr(semantic, "embedder", None), "backend", None),
                           "threads": getattr(getattr(semantic, "embedder", None), "threads", None)}
        if guard.warmups:  # the warm-up of the model's turn before the decision (the first turn's)
            result.semantic["warm"] = {k: round(v, 3) for k, v in guard.warmups[0].items()}
    result.judge = [j for d in guard.log for j in d.judgements]
    if case.gold_calls:
        result.recovered = bool(box.executed) and _matches(box.executed[-1], case.gold_calls)


def _first_decision(log: list[Decision], case: Case) -> Decision | None:
    """The guard's first judgement of the turn under test (the re-checks after answers come later)."""
    if case.uses_preflight:
        return next((d for d in log if d.call.id == "preflight"), None)
    ids = {str(c.get("id")) for c in case.calls}
    firsts: dict[str, Decision] = {}
    for d in log:
        if str(d.call.id) in ids:
            firsts.setdefault(str(d.call.id), d)
    if not firsts:
        return None
    return max(firsts.values(), key=lambda d: d.action.severity)


def _first_latency(log: list[Decision], case: Case) -> float:
    d = _first_decision(log, case)
    return d.latency_ms if d else 0.0


def _score_decision(result: CaseResult, decision: Decision | None) -> None:
    if decision is None:
        return
    result.action = decision.action.value
    result.flagged = not decision.action.runs
    result.categories = [c.value for c in decision.categories]
    result.findings = [f.model_dump(mode="json", include={"category", "check", "path", "value", "rule", "message", "tool", "evidence", "confidence"})
                       for f in decision.findings]
    unrepaired = [f.category for f in decision.findings if f.repair is None]
    result.predicted = sorted(labels_of(unrepaired)) if result.flagged else []
    result.tool = decision.call.name
    result.missing = decision.missing
    result.question = decision.question
    result.feedback = decision.feedback
    if decision.repaired_call is not None and isinstance(decision.repaired_call.args, dict):
        result.repaired_args = decision.repaired_call.args


def _matches(executed: dict[str, Any], gold: list[dict[str, Any]]) -> bool:
    """An executed call equals a gold call when name and canonical arguments are the same."""
    got = (executed.get("name"), canonical_json(executed.get("args") or {}))
    return any((g.get("name"), canonical_json(g.get("args") or {})) == got for g in gold)


def run_cases(
    cases: Iterable[Case],
    policy: Policy,
    agents: AgentSource,
    progress: Callable[[CaseResult], None] | None = None,
    semantic: Any = None,
    judge: Any = None,
    warm: bool = False,
) -> list[CaseResult]:
    """Every case through the graph; ``semantic`` is the embedding matcher (``guard.semantic``) or None,
    ``judge`` the optional LLM judge (``guard.checks.judge``: a ``Judge``, a chat model) or None.
    ``warm``: each model turn warms the guard and lasts until the warm-up is done
    (``RecordingGuard.warm``); by default every decision is cold."""
    from guard.checks.measures import warm as load_libraries

    load_libraries()  # the derivation rules' libraries load once here, not inside the first case's decision
    out = []
    for case in cases:
        r = run_case(case, policy, agents, semantic, judge, warm)
        out.append(r)
        if progress:
            progress(r)
    return out


def judge_off(policy: Policy) -> Policy:
    """The policy with its ``checks.judge`` section switched off: the baseline a judged run is
    reported against."""
    if not policy.checks.judge.enabled:
        return policy
    data = policy.model_dump()
    data["checks"]["judge"]["enabled"] = False
    return Policy.model_validate(data)  # validated afresh, so its sha256 is its own
