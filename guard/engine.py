"""``Guard``: the one engine behind every adapter.

``check`` runs the checks in a fixed order (is the tool there, do the arguments parse, what can be
repaired, what is still wrong) and hands the findings to the policy, which picks the action. The
adapters (LangGraph node, LangChain middleware, HTTP service, benchmark) only carry decisions out,
so what the benchmark measures is what runs in production.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from importlib import import_module
from typing import Any, Literal

from guard import decision_log, render, scorer
from guard.budgets import GuardState
from guard.checks import CheckContext, action, arguments, availability, batch, grounding, placeholders, preflight, provenance, repetition
from guard.checks.preflight import Preflight
from guard.conversation import Conversation
from guard.models import Decision, Finding, ToolCall
from guard.policy import Policy, PolicyError, graded, load_policy
from guard.registry import ToolRegistry
from guard import repairs
from guard.taxonomy import MISSING_INFORMATION, Action, Category

Check = Callable[[CheckContext], list[Finding]]

#: The id of the call a preflight decision describes: the tool it would use, with the values found.
PREFLIGHT_CALL_ID = "preflight"

#: Checks that read the parsed, repaired arguments, in order. When two report the same path the
#: earlier one wins: a type error is fixed before asking where a value came from.
_VALUE_CHECKS: tuple[Check, ...] = (arguments.check, placeholders.check, grounding.check)


class Guard:
    """Checks proposed tool calls against a tool registry and a policy.

    ``tools`` may be a ``ToolRegistry`` or anything ``ToolRegistry`` accepts (LangChain tools, typed
    functions, pydantic models, JSON-schema descriptions). ``semantic`` is an optional paraphrase
    matcher for grounding (see ``guard.checks.grounding.ValueMatcher``); by default it is built
    from the policy's ``checks.semantic`` section when that is enabled. ``judge`` is an optional
    LLM judge for findings the cheaper checks are unsure of (``guard.checks.judge``): a ``Judge``,
    a chat model or a ``provider:model`` spec; by default built from an enabled ``checks.judge``.
    """

    def __init__(
        self, tools: Iterable[Any] | ToolRegistry = (), policy: Any = None, *, semantic: Any = None, judge: Any = None
    ) -> None:
        self.registry = tools if isinstance(tools, ToolRegistry) else ToolRegistry(tools)
        self.policy: Policy = load_policy(policy)
        if semantic is None and self.policy.checks.semantic.enabled:
            from guard.semantic import semantic_for  # the semantic extra: imported only when asked for

            semantic = semantic_for(self.policy.checks.semantic)
        self.semantic = semantic
        if callable(prepare := getattr(semantic, "prepare", None)):
            prepare(self.registry)  # the tools embedded once per registry, before any decision
        self.judge: Any = None
        if judge is not False and (judge is not None or self.policy.checks.judge.enabled):
            from guard.checks.judge import judge_for  # imported only when a judge is asked for

            self.judge = judge_for(judge, self.policy)
        self._extra_checks = {tool: [_import_check(p) for p in o.extra_checks] for tool, o in self.policy.tools.items()}
        #: The decision log of the policy's ``log`` section (None when off): every decision is appended.
        self.decision_log = decision_log.writer_for(self.policy.log)
        #: The ``shadow`` policy's guard: decides every call too, never enforced (``guard.shadow``).
        self.shadow: Guard | None = None
        if (shadow_policy := self.policy.shadow_policy) is not None:
            self.shadow = Guard(self.registry, shadow_policy, judge=False)

    def check(
        self,
        call: Any,
        messages: Any = None,
        state: GuardState | None = None,
        *,
        approved: bool = False,
    ) -> Decision:
        """Decide what happens to one proposed call, given the conversation before it.

        ``approved`` marks a call a human has already approved or edited: findings that would ask
        the human again are let through, schema faults are still reported.
        """
        start = time.perf_counter()
        call = ToolCall.from_any(call)
        conversation, state = _view(messages, state)
        findings, repaired = self._findings(call, conversation, state)
        judgements: list[dict[str, Any]] = []
        if self.judge is not None:
            findings, judgements = self.judge.review_call(
                findings, call, conversation, self.registry, self.policy, self.semantic, self._stops(call.name, approved)
            )
        return self._log_and_shadow(
            self._timed(start, self._decide(call, findings, repaired, state, approved), judgements), conversation, state, approved
        )

    def check_batch(
        self, calls: list[Any], messages: Any = None, state: GuardState | None = None, check: Callable[..., Decision] | None = None
    ) -> list[Decision]:
        """Decide every call of one batch (the tool calls of one AI message), in order.

        Faults of the batch as a whole come first: calls that share an id cannot be answered or
        approved one by one, so each gets feedback and none runs. The others go through ``check``
        (``self.check`` unless an adapter wraps it, e.g. in a span)."""
        calls = [ToolCall.from_any(c) for c in calls]
        conversation, state = _view(messages, state)
        shared = batch.duplicate_ids(calls) if self.policy.checks.duplicate_ids else {}
        check = check or self.check
        return [
            self.refuse(call, shared[i], state) if i in shared else check(call, conversation, state)
            for i, call in enumerate(calls)
        ]

    def refuse(self, call: Any, finding: Finding, state: GuardState | None = None) -> Decision:
        """The decision on a call that must not run whatever the policy says of its category (a
        batch fault such as a shared id): the policy's action when it is retry or block, else retry
        (an allow would run it, and a human's approval would be re-checked without the batch)."""
        call = ToolCall.from_any(call)
        decision = self._decide(call, [finding], None, state or GuardState(), approved=False)
        if decision.action not in (Action.RETRY, Action.BLOCK):
            feedback = render.feedback(call, [finding], self.policy, self.registry)
            decision = decision.model_copy(update={"action": Action.RETRY, "repaired_call": None, "feedback": feedback})
        if self.decision_log is not None or self.shadow is not None:
            decision = self._log_and_shadow(decision, Conversation(), state or GuardState(), False, "refuse", finding)
        return decision

    async def acheck(
        self, call: Any, messages: Any = None, state: GuardState | None = None, *, approved: bool = False
    ) -> Decision:
        """The async twin of ``check``. The rule checks take well under a millisecond, so they run
        inline rather than paying for a thread hop; only a judge's model calls are awaited."""
        if self.judge is None:
            return self.check(call, messages, state, approved=approved)
        start = time.perf_counter()
        call = ToolCall.from_any(call)
        conversation, state = _view(messages, state)
        findings, repaired = self._findings(call, conversation, state)
        findings, judgements = await self.judge.areview_call(
            findings, call, conversation, self.registry, self.policy, self.semantic, self._stops(call.name, approved)
        )
        return self._log_and_shadow(
            self._timed(start, self._decide(call, findings, repaired, state, approved), judgements), conversation, state, approved
        )

    def warm(self, messages: Any) -> Any:
        """Start embedding, in the background, what the next decision on this conversation will
        read (``SemanticGuard.warm``): call it when the model is asked for its next step, and the
        decision on the call it proposes finds the request and the messages already embedded.
        Returns the warm-up's ``concurrent.futures.Future``, or None when there is nothing to do
        (no embedding checks, everything cached). Never raises: a warm-up only saves time."""
        warm = getattr(self.semantic, "warm", None)
        if not callable(warm):
            return None
        try:
            return warm(Conversation.from_messages(messages))
        except Exception:  # a conversation the checks will refuse later; nothing was started
            return None

    def preflight(self, messages: Any, state: GuardState | None = None) -> Decision:
        """Judge the conversation against the tools before any call is proposed.

        Can a registered tool serve the user's latest request, does the conversation hold every
        value it requires, and are the values the user gave valid for its schema
        (``guard.checks.preflight``)? The decision's call names the tool the preflight would use
        (None when none fits) with the values it found, under the id ``"preflight"``; its action
        comes from ``checks.preflight.actions``, then the policy's ``actions``.
        """
        start = time.perf_counter()
        conversation, state = _view(messages, state)
        result = self._assess(conversation)
        judgements: list[dict[str, Any]] = []
        if self.judge is not None and result.ranking:
            result, judgements = self.judge.review_preflight(
                result, conversation, self.registry, self.policy, self.semantic, self._stops(result.tool, False, "preflight")
            )
        return self._log_and_shadow(self._timed(start, self._preflight_decision(result, state), judgements), conversation, state, False, "preflight")

    async def apreflight(self, messages: Any, state: GuardState | None = None) -> Decision:
        """The async twin of ``preflight``: lexical and well under a millisecond, so inline; only a
        judge's model calls are awaited."""
        if self.judge is None:
            return self.preflight(messages, state)
        start = time.perf_counter()
        conversation, state = _view(messages, state)
        result = self._assess(conversation)
        judgements: list[dict[str, Any]] = []
        if result.ranking:
            result, judgements = await self.judge.areview_preflight(
                result, conversation, self.registry, self.policy, self.semantic, self._stops(result.tool, False, "preflight")
            )
        return self._log_and_shadow(self._timed(start, self._preflight_decision(result, state), judgements), conversation, state, False, "preflight")

    def _assess(self, conversation: Conversation) -> Preflight:
        if self.policy.checks.preflight.enabled:
            return preflight.assess(conversation, self.registry, self.policy, self.semantic)
        return Preflight(None, 0.0, ())

    def _preflight_decision(self, result: Preflight, state: GuardState) -> Decision:
        call = ToolCall(name=result.tool, args=result.call_args(), id=PREFLIGHT_CALL_ID)
        return self._decide(call, result.findings, None, state, approved=False, stage="preflight")

    def _log_and_shadow(
        self,
        decision: Decision,
        conversation: Conversation,
        state: GuardState,
        approved: bool,
        stage: Literal["call", "preflight", "refuse"] = "call",
        refused: Finding | None = None,
    ) -> Decision:
        """The shadow policy's verdict on the same input (kept on ``decision.shadow``, never
        enforced), and the decision log's line. Neither can fail the check."""
        if self.shadow is None and self.decision_log is None:
            return decision
        shadow = None
        if self.shadow is not None:
            from guard.shadow import shadow_decide

            shadow = shadow_decide(self.shadow, self.registry, decision, conversation, state, approved, stage, refused)
            decision.shadow = shadow
        if self.decision_log is not None:
            self.decision_log.decision(
                decision, conversation=conversation, state=state, registry=self.registry, approved=approved, stage=stage,
                confidence=self.confidence(decision, approved, stage), refused=refused,
                shadow=shadow.summary() if shadow is not None else None,
            )
        return decision

    def confidence(self, decision: Decision, approved: bool = False, stage: str = "call") -> float | None:
        """How sure the findings that drive the action are: the highest confidence among them
        (None for a call with no finding behind its action)."""
        early = self.policy.checks.preflight.actions if stage == "preflight" else {}
        driving = [f.confidence for f in decision.findings if self._rate(f, early, decision.call.name, approved) is decision.action]
        return max(driving, default=None)

    @staticmethod
    def _timed(start: float, decision: Decision, judgements: list[dict[str, Any]]) -> Decision:
        decision.judgements = judgements
        decision.latency_ms = (time.perf_counter() - start) * 1000
        return decision

    def _stops(self, tool: str | None, approved: bool, stage: Literal["call", "preflight"] = "call") -> Callable[[Finding], bool]:
        """Whether the policy stops a call over a finding (rated as ``_decide`` rates it): the judge
        is asked only about such findings, an answer about the others would change nothing."""
        early = self.policy.checks.preflight.actions if stage == "preflight" else {}
        return lambda f: not self._rate(f, early, tool, approved).runs

    # -- checks -> findings -------------------------------------------------------------------

    def _findings(
        self, call: ToolCall, conversation: Conversation, state: GuardState
    ) -> tuple[list[Finding], ToolCall | None]:
        ctx = CheckContext(
            call=call,
            args={},
            spec=self.registry.get(call.name),
            registry=self.registry,
            conversation=conversation,
            state=state,
            policy=self.policy,
            semantic=self.semantic,
        )
        if found := availability.check(ctx):
            return found, None
        may_repair = self.policy.repairs_allowed(call.name)
        args, findings = arguments.parse_arguments(
            call, self.policy.checks.limits, parse_json=may_repair and self.policy.repairs.parse_json
        )
        if args is None:
            return findings, None
        ctx = replace(ctx, args=args)
        if may_repair:
            args, repaired = repairs.apply(ctx)
            findings += repaired
            ctx = replace(ctx, args=args)
            args, findings = provenance.complete(ctx, findings)  # after the repairs, before the value checks
            ctx = replace(ctx, args=args)
        findings += _first_per_path(self._value_checks(ctx))
        findings += repetition.check(ctx)
        findings += action.check(ctx)
        repaired_call = call.model_copy(update={"args": args}) if any(f.repair for f in findings) else None
        return findings, repaired_call

    def _value_checks(self, ctx: CheckContext) -> list[Finding]:
        checks: list[Check] = list(_VALUE_CHECKS)
        if not ctx.conversation.grounding_texts:
            # A bare check with no conversation has nothing to ground against; flagging every
            # value as invented would make ``Guard.check(call)`` useless.
            checks.remove(grounding.check)
        checks += self._extra_checks.get(ctx.call.name or "", [])
        checks += list(getattr(self.semantic, "call_checks", ()))  # e.g. suspicious tool selection
        return [f for check in checks for f in check(ctx)]

    # -- findings -> policy -> decision ---------------------------------------------------------

    def _decide(
        self,
        call: ToolCall,
        findings: list[Finding],
        repaired: ToolCall | None,
        state: GuardState,
        approved: bool,
        stage: Literal["call", "preflight"] = "call",
    ) -> Decision:
        """The policy's verdict on a call's findings. At the ``preflight`` stage no call exists
        yet: the preflight's own actions come first, and no approval is asked for."""
        policy, tool = self.policy, call.name
        early = policy.checks.preflight.actions if stage == "preflight" else {}
        rated = [(f, self._rate(f, early, tool, approved)) for f in findings]
        action = max((a for _, a in rated), key=lambda a: a.severity, default=Action.ALLOW)
        if policy.scorer.enabled and not action.runs:
            rated = _scored(rated, policy)
            action = max((a for _, a in rated), key=lambda a: a.severity, default=Action.ALLOW)
        if stage == "call" and action.runs and policy.override(tool).requires_approval and not approved:
            approval = Finding(
                category=Category.APPROVAL_REQUIRED,
                check="policy",
                message=f"the policy requires a human to approve calls to {tool!r}",
                tool=tool,
                rule="requires_approval",
            )
            action = policy.action_for(Category.APPROVAL_REQUIRED, tool)
            rated.append((approval, action))
        if action is Action.RETRY and (exhausted := self._budget_finding(call, state)):
            action = policy.action_for(Category.BUDGET_EXHAUSTED, tool)
            rated.append((exhausted, action))
        all_findings = [f for f, _ in rated]
        driving = [f for f, a in rated if a is action]
        decision = Decision(
            action=action,
            call=call,
            findings=all_findings,
            repaired_call=repaired if action is Action.REPAIR else None,
            policy_name=policy.name,
            policy_hash=policy.sha256,
            warnings=[f for f, a in rated if a is Action.WARN],
        )
        if action is Action.REPAIR:
            decision.feedback = render.repaired_note(all_findings, policy)
        elif action in (Action.RETRY, Action.BLOCK):
            problems = [f for f, a in rated if not a.runs]
            if stage == "preflight":
                decision.feedback = render.preflight_feedback(problems, policy, self.registry)
            else:
                decision.feedback = render.feedback(call, problems, policy, self.registry)
        elif action is Action.ASK_HUMAN:
            decision.missing = render.missing_values([f for f in driving if f.category in MISSING_INFORMATION])
            decision.question = render.question(call, driving, policy, self.registry)
            decision.escalation_kind = _escalation_kind(driving)
            decision.repaired_call = repaired
        return decision

    def _rate(self, finding: Finding, early: dict[Category, Any], tool: str | None, approved: bool) -> Action:
        """The action for one finding: the preflight's own rule first (at that stage), graded by
        the finding's confidence like the policy's."""
        if finding.category in early:
            return graded(early[finding.category], finding.confidence)
        return self._action_of(finding, tool, approved)

    def _action_of(self, finding: Finding, tool: str | None, approved: bool) -> Action:
        if finding.repair is not None:
            return Action.REPAIR
        action = self.policy.action_for(finding.category, tool, finding.confidence)
        if approved and action is Action.ASK_HUMAN:
            return Action.ALLOW  # the human has seen this call and let it through
        return action

    def _budget_finding(self, call: ToolCall, state: GuardState) -> Finding | None:
        b = self.policy.budgets
        spent = {
            "per_call": (state.retries_of(call.signature), b.per_call),
            "per_turn": (state.turn_retries, b.per_turn),
            "per_thread": (state.thread_retries, b.per_thread),
        }
        over = {k: v for k, v in spent.items() if v[0] >= v[1]}
        if not over:
            return None
        which = ", ".join(f"{k} {used}/{limit}" for k, (used, limit) in over.items())
        return Finding(
            category=Category.BUDGET_EXHAUSTED,
            check="budgets",
            message=f"the retry budget is spent ({which})",
            tool=call.name,
            rule=next(iter(over)),
            evidence={k: {"used": used, "limit": limit} for k, (used, limit) in over.items()},
        )


def _view(messages: Any, state: GuardState | None) -> tuple[Conversation, GuardState]:
    """What every entry point reads: the conversation view and the retries spent."""
    conversation = messages if isinstance(messages, Conversation) else Conversation.from_messages(messages)
    return conversation, state if state is not None else GuardState.from_conversation(conversation)


def _scored(rated: list[tuple[Finding, Action]], policy: Policy) -> list[tuple[Finding, Action]]:
    """The learned scorer's second opinion (``guard.scorer``): when every interrupting finding is
    one of judgement and the scorer rates the decision's findings below its threshold, those
    findings warn instead, with the score in their evidence."""
    interrupting = [f for f, a in rated if not a.runs]
    if not interrupting or not all(scorer.may_warn(f) for f in interrupting):
        return rated
    model = scorer.shipped()
    threshold = model.threshold if policy.scorer.threshold is None else policy.scorer.threshold
    p = model.probability(f for f, _ in rated)
    if p >= threshold:
        return rated
    note = {"scorer": round(p, 4), "scorer_threshold": threshold}
    return [(f.model_copy(update={"evidence": {**f.evidence, **note}}), Action.WARN) if not a.runs else (f, a) for f, a in rated]


def _escalation_kind(findings: list[Finding]) -> str:
    categories = {f.category for f in findings}
    if Category.APPROVAL_REQUIRED in categories:
        return "approval"
    if Category.BUDGET_EXHAUSTED in categories:
        return "budget_exhausted"
    if categories & MISSING_INFORMATION:
        return "missing_information"
    if categories & {Category.NO_SUITABLE_TOOL, Category.UNAVAILABLE_TOOL, Category.UNKNOWN_TOOL}:
        return "tool_unavailable"
    return "review"


def _first_per_path(findings: list[Finding]) -> list[Finding]:
    seen: set[str] = set()
    kept = []
    for f in findings:
        if f.path in seen and f.repair is None:
            continue
        seen.add(f.path)
        kept.append(f)
    return kept


def _import_check(path: str) -> Check:
    """Resolve a per-tool extra check named ``package.module:function`` at start-up, not mid-call."""
    module, _, name = path.partition(":")
    try:
        fn = getattr(import_module(module), name or "check")
    except (ImportError, AttributeError, ValueError) as exc:
        raise PolicyError("<policy>", None, "tools.*.extra_checks", f"cannot import check {path!r}: {exc}") from exc
    if not callable(fn):
        raise PolicyError("<policy>", None, "tools.*.extra_checks", f"{path!r} is not callable")
    return fn
