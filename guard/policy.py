"""The policy: which action each category of finding gets, budgets, backoff, per-tool overrides.

A policy is data a team reviews and versions like code, so it is a strict pydantic model loaded from
YAML: an unknown or misspelt key is an error naming the key, the file and the line, never silently
ignored. Its ``sha256`` is carried by every decision, so a trace says which policy made it.
"""

from __future__ import annotations

import hashlib
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from guard.decision_log import LogConfig
from guard.models import canonical_json
from guard.state.config import StateConfig
from guard.taxonomy import Action, Category

DEFAULT_ACTIONS: dict[Category, Action | dict[Action, float]] = {
    Category.UNKNOWN_TOOL: Action.RETRY,
    Category.UNAVAILABLE_TOOL: Action.RETRY,
    Category.NO_SUITABLE_TOOL: Action.ASK_HUMAN,
    # a doubtful choice of tool that may be a step of a plan (a lookup, a precondition) is a warning
    # (guard.semantic._selection_confidence: 0.6); a confusion of two tools or a delete is retried
    Category.SUSPICIOUS_TOOL_SELECTION: {Action.RETRY: 0.9, Action.WARN: 0.5},
    Category.MISSING_ARGUMENT: Action.RETRY,
    Category.UNEXPECTED_ARGUMENT: Action.RETRY,
    Category.TYPE_VIOLATION: Action.RETRY,
    Category.ENUM_VIOLATION: Action.RETRY,
    Category.PATTERN_VIOLATION: Action.RETRY,
    Category.FORMAT_VIOLATION: Action.RETRY,
    Category.RANGE_VIOLATION: Action.RETRY,
    Category.MALFORMED_ARGUMENTS: Action.RETRY,
    # a description's example used as a value is certain only where an invented value does harm
    # (guard.checks.placeholders._weighed: 0.95 then, 0.6 for the usual choices such as "hourly")
    Category.PLACEHOLDER_VALUE: {Action.ASK_HUMAN: 0.9, Action.WARN: 0.5},
    # graded by what is at stake (guard.checks.risk): an unstated identifier, recipient, amount or
    # ordinary value is asked about; a measure or rating a model may have derived is a warning
    Category.UNGROUNDED_VALUE: {Action.ASK_HUMAN: 0.9, Action.WARN: 0.5},
    Category.REPEATED_CALL: Action.RETRY,
    Category.BUDGET_EXHAUSTED: Action.ASK_HUMAN,
    Category.APPROVAL_REQUIRED: Action.ASK_HUMAN,
    Category.TOOL_TIMEOUT: Action.RETRY,
    Category.TOOL_RATE_LIMITED: Action.RETRY,
    Category.TOOL_CONNECTION: Action.RETRY,
    Category.TOOL_SERVER_ERROR: Action.RETRY,
    Category.TOOL_PERMISSION: Action.BLOCK,
    Category.TOOL_QUOTA: Action.BLOCK,
    Category.TOOL_NOT_FOUND: Action.RETRY,
    Category.TOOL_ERROR_PAYLOAD: Action.RETRY,
    Category.TOOL_EMPTY_RESULT: Action.ALLOW,
}


#: An action graded by the finding's confidence: ``{ask_human: 0.9, warn: 0.5}`` asks the human
#: from 0.9 up, warns from 0.5 up, and allows below. The most severe action whose floor the
#: confidence reaches wins.
GradedAction = dict[Action, Annotated[float, Field(ge=0.0, le=1.0)]]
ActionRule = Action | GradedAction


def graded(rule: ActionRule, confidence: float) -> Action:
    """The action a rule gives a finding of this confidence."""
    if isinstance(rule, Action):
        return rule
    reached = [action for action, floor in rule.items() if confidence >= floor]
    return max(reached, key=lambda a: a.severity, default=Action.ALLOW)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RepairSwitches(_Strict):
    """Each deterministic repair can be switched off."""

    coerce_types: bool = True
    enum_case: bool = True
    param_names: bool = True
    date_format: bool = True
    parse_json: bool = True
    from_provenance: bool = Field(
        True,
        description="complete a null, stand-in or wrong-typed value from the one candidate an earlier tool result or the user's words hold (guard.checks.provenance)",
    )


class Budgets(_Strict):
    """How many times the model may be sent back before the human is asked (or the call blocked)."""

    per_call: int = Field(2, ge=0, description="retries of one call signature (tool + arguments)")
    per_turn: int = Field(5, ge=0, description="retries since the user last spoke")
    per_thread: int = Field(20, ge=0, description="retries in the whole thread")
    on_exhausted: Action = Field(Action.ASK_HUMAN, description="the action once a budget is spent (unless actions.budget_exhausted says otherwise)")
    max_questions_per_call: int = Field(2, ge=1, description="questions to the human about one call")


class Backoff(_Strict):
    """Retries of transient tool failures (timeouts, rate limits) with exponential backoff."""

    max_attempts: int = Field(3, ge=1, description="attempts in all, the first included")
    initial_seconds: float = Field(0.2, ge=0)
    multiplier: float = Field(2.0, ge=1)
    max_seconds: float = Field(5.0, ge=0)
    jitter_seconds: float = Field(0.1, ge=0)


class GroundingConfig(_Strict):
    """What the grounding check traces, and how loosely a value may match its source."""

    enabled: bool = True
    min_fuzzy_score: float = Field(
        90.0, ge=0, le=100,
        description="rapidfuzz partial ratio for a match; a consequential value (guard.checks.risk: an identifier, "
        "contact, amount, path) needs at least consequential_min_fuzzy_score",
    )
    consequential_min_fuzzy_score: float = Field(
        90.0, ge=0, le=100, description="the partial ratio a consequential value needs: a near miss of an account number is another account",
    )
    min_value_length: int = Field(
        1, ge=0, description="shorter strings are not checked, unless the value is consequential (an id, a PIN, an amount)",
    )
    ignore_params: list[str] = Field(default_factory=list)


class RepetitionConfig(_Strict):
    max_identical_calls: int = Field(2, ge=1, description="identical successful calls allowed per thread")


class ArgumentLimits(_Strict):
    """Bounds on what a model may send as arguments: beyond them the call is malformed, not parsed."""

    max_bytes: int = Field(1_000_000, ge=1, description="size of the arguments' JSON text")
    max_depth: int = Field(32, ge=1, description="nesting of objects and arrays")
    regex_timeout_ms: float = Field(
        50.0, gt=0, le=10_000, description="CPU time one check may spend on schema regexes RE2 cannot run"
    )
    validation_timeout_ms: float = Field(
        100.0, gt=0, le=60_000, description="CPU time one check may spend validating against the schema"
    )


class PreflightConfig(_Strict):
    """The preflight (``Guard.preflight``): the conversation judged against the tools before any call.

    There is no proposed call to send back, so each finding's action says what happens to the run:
    ``allow`` (and ``repair``, ``retry``) let the model go on, ``ask_human`` asks the user,
    ``block`` ends the run with the reason. Categories not listed take the policy's ``actions``.
    """

    enabled: bool = True
    min_relevance: float = Field(
        default=0.13, ge=0, le=1, description="below this lexical score of the best tool, no tool suits the request"
    )
    show_candidates: int = Field(default=3, ge=0, description="best-scoring tools named when none suits the request")
    actions: dict[Category, ActionRule] = Field(
        default_factory=lambda: {
            Category.NO_SUITABLE_TOOL: Action.ASK_HUMAN,
            # graded ({ask_human: 0.9, warn: 0.5}) it would warn about the values of a later step of
            # a multi-step request (confidence 0.6): on Fail-TaLMs dev that halves false interrupts
            # there (30 -> 21 of 189) but loses a third of the underspecified requests (0.53 -> 0.37)
            Category.MISSING_ARGUMENT: Action.ASK_HUMAN,
            Category.TYPE_VIOLATION: Action.ASK_HUMAN,
            Category.ENUM_VIOLATION: Action.ASK_HUMAN,
            Category.PATTERN_VIOLATION: Action.ASK_HUMAN,
            Category.FORMAT_VIOLATION: Action.ASK_HUMAN,
            Category.RANGE_VIOLATION: Action.ASK_HUMAN,
        },
        description="category -> action for preflight findings (the values the user gave are wrong or missing: the user can fix them)",
    )


class SemanticConfig(_Strict):
    """Embedding checks (the ``semantic`` extra): paraphrase grounding, tool ranking, suspicious tool
    selection. Off unless enabled; the thresholds were chosen on the benchmark's dev splits."""

    enabled: bool = False
    model: str | None = Field(None, description="a sentence-transformers model path; default: the packaged all-MiniLM-L6-v2")
    min_span_similarity: float = Field(0.70, ge=0, le=1, description="a value grounds on a span at least this similar")
    min_word_similarity: float = Field(0.85, ge=0, le=1)
    min_inflection_similarity: float = Field(0.60, ge=0, le=1)
    max_span_words: int = Field(6, ge=1)
    relevance_floor: float = Field(0.15, ge=0, le=1)
    relevance_ceiling: float = Field(0.60, ge=0, le=1)
    semantic_weight: float = Field(0.7, ge=0, le=1, description="weight of the embedding score against the lexical one")
    min_part_relevance: float | None = Field(0.13, ge=0, le=1, description="every part of a request must reach this")
    selection: bool = Field(True, description="flag a called tool clearly out-ranked by another one")
    selection_margin: float = Field(0.10, ge=0, le=1)
    selection_floor: float = Field(
        0.30, ge=0, le=1,
        description="a lookup is flagged only when the better tool itself fits the request part this well (blended "
        "score): a lookup led by a tool that fits the part weakly is most often a step before the act",
    )
    code_table: bool = Field(True, description="ISO language and currency codes ground their names")
    backend: Literal["onnx", "onnx-int8", "torch"] | None = Field(
        None,
        description="how the model runs: onnx (onnxruntime, fp32: torch's numbers), onnx-int8 (quantised: faster, "
        "cosines within ~0.03), torch; default: $GUARD_SEMANTIC_BACKEND, else with onnxruntime installed onnx-int8 on "
        "a CPU with 8-bit dot-product instructions (x86 VNNI, Arm dot product) and onnx on any other",
    )
    threads: int | None = Field(
        None, ge=1, le=64,
        description="onnxruntime intra-op threads for the model; default: 2 where the process may run on two cores or "
        "more, else 1 (a long pass, a dialogue of 300 tokens, runs ~1.5x faster on two; the threads never spin, so a "
        "busy core costs little); pin 1 where service workers fill every core (docs/semantic-latency.md)",
    )
    budget_ms: float | None = Field(
        None, gt=0,
        description="latency budget of one embedding check: when the model's estimated cost for the new text is over "
        "it, the check gives the lexical verdict and says so in the finding's evidence; none by default",
    )


class JudgeBands(_Strict):
    """How close to its threshold a cheaper check's score must be for the judge to be asked.

    Each band is read against the score the check put in its finding (``guard.checks.judge``):
    far from the threshold the check is trusted and no model is called.
    """

    ungrounded_value: float = Field(
        default=0.15, ge=0, le=1,
        description="asked when the closest span's similarity (evidence.nearest.score) is at least grounding.min_fuzzy_score/100 minus this",
    )
    no_suitable_tool: float = Field(
        default=0.05, ge=0, le=1, description="asked when the best tool's relevance is within this of preflight.min_relevance, either side"
    )
    missing_argument: float = Field(
        default=0.5, ge=0, le=1,
        description="asked when the share of the parameter's name words said (evidence.mentioned) is at least 1 minus this",
    )
    suspicious_tool_selection: float = Field(
        default=0.05, ge=0, le=1, description="asked when the better tool's lead is within this of semantic.selection_margin"
    )


class JudgeConfig(_Strict):
    """An LLM judge (any LangChain chat model) for what neither rules nor embeddings decide: asked
    a yes/no question only when a cheaper check's score falls within its band. Off by default."""

    enabled: bool = False
    model: str | None = Field(
        default=None, pattern=r"^[^:\s]+:\S+$", description="provider:model for langchain's init_chat_model, resolved at first use"
    )
    bands: JudgeBands = JudgeBands()
    max_calls_per_thread: int = Field(default=10, ge=0, description="model calls per conversation thread; beyond it the checks' verdict stands")
    timeout_seconds: float = Field(default=10.0, gt=0, description="per model call; on timeout the checks' verdict stands")
    max_transcript_chars: int = Field(default=6000, ge=200, description="the latest part of the conversation shown to the judge")
    price_per_1k_input_tokens: float | None = Field(default=None, ge=0, description="for the cost figure; none: no cost reported")
    price_per_1k_output_tokens: float | None = Field(default=None, ge=0)


class ChecksConfig(_Strict):
    limits: ArgumentLimits = ArgumentLimits()
    placeholders: bool = True
    grounding: GroundingConfig = GroundingConfig()
    repetition: RepetitionConfig = RepetitionConfig()
    unexpected_arguments: bool = True
    duplicate_ids: bool = Field(
        True,
        description="refuse every call of a batch whose tool-call id another call of it shares (answers and approvals are "
        "keyed by id); off: they are decided one by one, as ToolNode runs them, and an answer keyed by that id applies to each",
    )
    preflight: PreflightConfig = PreflightConfig()
    semantic: SemanticConfig = SemanticConfig()
    judge: JudgeConfig = JudgeConfig()


class ToolOverride(_Strict):
    """Per-tool policy: approval, no repairs, stricter or looser actions, extra checks."""

    requires_approval: bool = False
    repair: bool = True
    disabled: bool = False
    actions: dict[Category, ActionRule] = Field(default_factory=dict)
    extra_checks: list[str] = Field(default_factory=list)


class Templates(_Strict):
    """Texts rendered at the edge. Fields: {tool}, {problems}, {tools}, {missing}, {details};
    ``no_tool`` also gets {request}, the user's request it found no tool for."""

    feedback: str = "The call to `{tool}` was not run.\n{problems}"
    tools_hint: str = "Available tools: {tools}."
    question: str = "To run `{tool}` I need {missing}. {details}"
    approval: str = "Approve the call to `{tool}` with {args}?"
    repaired_note: str = "Guard repaired the call before running it: {problems}"
    preflight: str = "The request cannot go ahead as it stands.\n{problems}"
    no_tool: str = "No available tool can do this: {request} Which tool should I use, or what should I do instead?"


class EscalationConfig(_Strict):
    """Questions registered for a human (the HTTP service): how long they wait, and how many and
    how large may wait at once. Over a cap the question is not registered and the call is blocked
    with the reason (the response's ``escalation_refused``): a flood of questions, or one of
    megabytes, cannot exhaust the shared state."""

    ttl_seconds: float = Field(3600.0, gt=0)
    on_expiry: Action = Action.BLOCK
    max_pending: int = Field(10_000, ge=1, description="escalations pending at once across all threads")
    max_pending_per_thread: int = Field(20, ge=1, description="escalations pending at once in one thread")
    max_payload_bytes: int = Field(
        262_144, ge=1024, description="size of one escalation as stored (question, arguments, findings, tool schema)"
    )


class ScorerConfig(_Strict):
    """The learned precision scorer (``guard.scorer``): off by default."""

    enabled: bool = Field(
        False,
        description="an interrupt driven only by findings of judgement (unstated, placeholder or missing values, doubtful tool "
        "choice) that the scorer rates below its threshold becomes warn",
    )
    threshold: float | None = Field(
        None, ge=0, le=1, description="the scorer's threshold (default: the one trained with it, for <= 3% false interrupts on dev)"
    )


class Policy(_Strict):
    """A complete guard policy. Every field has a safe default, so ``Policy()`` is usable."""

    name: str = "default"
    mode: Literal["enforce", "observe"] = Field(
        "enforce",
        description="observe: every check runs and every decision is recorded (spans, metrics), but the "
        "node or middleware behaves exactly as the plain ToolNode or agent would: no refusal, repair, "
        "retry, question or added metadata",
    )
    actions: dict[Category, ActionRule] = Field(
        default_factory=dict,
        description="an action per category, or actions graded by the finding's confidence "
        "({ask_human: 0.9, warn: 0.5}: ask from 0.9, warn from 0.5, allow below)",
    )
    repairs: RepairSwitches = RepairSwitches()
    budgets: Budgets = Budgets()
    backoff: Backoff = Backoff()
    checks: ChecksConfig = ChecksConfig()
    scorer: ScorerConfig = ScorerConfig()
    tools: dict[str, ToolOverride] = Field(default_factory=dict)
    templates: Templates = Templates()
    escalation: EscalationConfig = EscalationConfig()
    state: StateConfig = Field(
        default_factory=StateConfig,
        description="shared state: backend, and fail_open or fail_closed when it is unreachable",
    )
    log: LogConfig | None = Field(
        None, description="the decision log (guard.decision_log, docs/decision-log.md): one JSON line per decision; off when absent"
    )
    shadow: str | None = Field(
        None,
        description="a candidate policy file (relative to this one) that decides every call too: its decision is logged "
        "and counted (guard_shadow_disagreements_total), never enforced",
    )

    @cached_property
    def sha256(self) -> str:
        """Version hash of what decides: every decision carries it. ``log`` and ``shadow`` change
        what is recorded, never a decision, so they are left out (a pending question survives them)."""
        data = self.model_dump(mode="json", exclude={"log", "shadow"})
        return hashlib.sha256(canonical_json(data).encode()).hexdigest()

    @cached_property
    def shadow_policy(self) -> Policy | None:
        """The ``shadow`` policy, loaded once (its own ``log`` and ``shadow`` are not used)."""
        if not self.shadow:
            return None
        return Policy.from_yaml(self.shadow).model_copy(update={"log": None, "shadow": None})

    def action_for(self, category: Category, tool: str | None = None, confidence: float = 1.0) -> Action:
        """The action for a finding of ``category`` about ``tool`` with this ``confidence``."""
        return graded(self.rule_for(category, tool), confidence)

    def rule_for(self, category: Category, tool: str | None = None) -> ActionRule:
        """The rule for ``category`` as written: an action, or actions graded by confidence."""
        override = self.tools.get(tool or "")
        if override and category in override.actions:
            return override.actions[category]
        if category is Category.BUDGET_EXHAUSTED and category not in self.actions:
            return self.budgets.on_exhausted
        return self.actions.get(category, DEFAULT_ACTIONS[category])

    def override(self, tool: str | None) -> ToolOverride:
        return self.tools.get(tool or "") or ToolOverride()

    def repairs_allowed(self, tool: str | None) -> bool:
        return self.override(tool).repair

    @classmethod
    def from_yaml(cls, path: str | Path) -> Policy:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise PolicyError(str(path), None, None, f"cannot read the policy file: {exc}") from exc
        policy = cls.from_yaml_text(text, source=str(path))
        if policy.shadow and not Path(policy.shadow).is_absolute():  # relative to this file, not to the working directory
            policy = policy.model_copy(update={"shadow": str(path.parent / policy.shadow)})
        return policy

    @classmethod
    def from_yaml_text(cls, text: str, source: str = "<string>") -> Policy:
        try:
            root = yaml.compose(text)
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark else None
            text = str(exc).replace('"<unicode string>"', source).replace("<unicode string>", source)
            raise PolicyError(source, line, None, f"invalid YAML: {text}") from exc
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise PolicyError(source, 1, None, "a policy must be a mapping of keys to values")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            err = _telling_error(exc.errors())
            loc = tuple(p for p in err["loc"] if not _branch_tag(p))
            key = ".".join(str(p) for p in loc) or None
            line = _line_of(root, loc)
            if err["type"] == "extra_forbidden":
                message = f"unknown key {loc[-1]!r}"
            else:
                message = err["msg"]
            raise PolicyError(source, line, key, message) from exc


def _branch_tag(part: Any) -> bool:
    """A union branch pydantic names in an error's location (``str-enum[Action]``): not a key."""
    return isinstance(part, str) and "[" in part


def _telling_error(errors: list[Any]) -> Any:
    """The error to report. Where a value may be one of several shapes (an action, or actions
    graded by confidence), the error of the branch whose shape the value has tells what is wrong;
    "should be an action" said of a mapping does not."""
    def mismatched_shape(err: Any) -> bool:
        branch = next((p for p in err["loc"] if _branch_tag(p)), None)
        return branch is not None and isinstance(err.get("input"), (dict, list)) and err["loc"][-1] == branch

    return next((e for e in errors if not mismatched_shape(e)), errors[0])


class PolicyError(ValueError):
    """An invalid policy: says which file, which line and which key."""

    def __init__(self, source: str, line: int | None, key: str | None, message: str) -> None:
        where = source + (f", line {line}" if line else "")
        what = f"{key}: " if key else ""
        super().__init__(f"{where}: {what}{message}")
        self.source, self.line, self.key, self.message = source, line, key, message


def _line_of(node: Any, loc: tuple[Any, ...]) -> int | None:
    """Walk the YAML node tree along a pydantic error location to the line of the offending key."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if key_node.value == str(part):
                    line, node = key_node.start_mark.line + 1, value_node
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def load_policy(source: str | Path | Policy | dict[str, Any] | None) -> Policy:
    """Accept what users pass around: nothing, a Policy, a dict, or a YAML path."""
    if source is None:
        return Policy()
    if isinstance(source, Policy):
        return source
    if isinstance(source, dict):
        return Policy.model_validate(source)
    return Policy.from_yaml(source)
