"""The optional LLM judge: a chat model asked a narrow yes/no question when a cheaper check is unsure.

Rules and embeddings decide most calls in well under a millisecond, and where their score is far
from its threshold they are right often enough that paying a model to agree is waste. Near the
threshold they are guessing. There, and only there, ``Judge`` asks any LangChain chat model one
question with a yes/no answer and a short reason, and the answer may drop the finding (or, for the
preflight's tool choice, add one). It never writes arguments: a "yes, the user gave it" lets the
call go on with the value the model proposed, it does not supply one.

"Uncertain" is read from the score each check already put in its finding's evidence, against the
policy's threshold and a band (``checks.judge.bands``):

- ``ungrounded_value`` (grounding): ``grounding.nearest``, the similarity of the closest span
  said or returned (worked out only when a judge is asked), is at least ``grounding.min_fuzzy_score / 100 - band``: a near miss ("Pariss"),
  not a value nobody said. Asked: is the value stated or clearly implied? Yes drops the finding.
- ``no_suitable_tool`` (preflight): the best tool's relevance is within ``band`` of
  ``preflight.min_relevance``, either side. Asked: can that tool serve the request? Below the
  threshold a yes drops the finding and the preflight goes on with the tool; above it a no adds
  the finding.
- ``missing_argument`` (preflight): ``evidence.mentioned``, the share of the parameter's name words
  the conversation says, is at least ``1 - band``: the user spoke of the parameter but the rules
  read no value of its kind. Asked: did the user give a value for it? Yes drops the finding.
- ``suspicious_tool_selection`` (``guard.semantic.selection_check``): the better tool's lead
  (``better_score - score``) is within ``band`` of ``semantic.selection_margin``. Asked: is the
  called tool suitable for the request? Yes drops the finding.

Only findings whose action would stop the call are asked about (a finding the policy lets run is
not worth a model call). Every question is recorded in ``Decision.judgements``: what was asked, the
answer and reason, its effect (dropped, added, kept, failed, skipped), latency and tokens (from the
model's ``usage_metadata``). A model error, a timeout or a spent call cap never raises: the cheaper
checks' verdict stands and the record says why. Calls per conversation thread are capped (the
LangGraph ``thread_id`` when the guard runs inside a graph, else the thread's opening message), and
an identical question is answered from a cache, not asked again.

The model is called outside the caller's LangChain run context, so a guarded graph streamed with
``stream_mode="messages"`` does not stream the judge's tokens as if they were the agent's.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, Field

from guard.checks import preflight as preflight_check
from guard.checks.grounding import nearest
from guard.conversation import Conversation
from guard.extras import install_hint
from guard.models import Finding, ToolCall, short_hash
from guard.policy import JudgeConfig, Policy, PolicyError
from guard.registry import ToolRegistry, ToolSpec
from guard.taxonomy import Category

NAME = "judge"

Kind = Literal["ungrounded_value", "no_suitable_tool", "missing_argument", "suspicious_tool_selection"]
#: What a judged finding became: dropped or added by an answer, kept (the answer agreed with the
#: checks), failed (error or timeout) or skipped (the thread's call cap is spent).
Effect = Literal["dropped", "added", "kept", "failed", "skipped"]

#: Whether a finding's action stops the call: only such findings are worth a question.
Matters = Callable[[Finding], bool]

_SYSTEM = (
    "You check one fact for a guardrail that watches an AI assistant's tool calls. Read the "
    "transcript and answer the question with yes or no, from the transcript alone; do not guess. "
    'Reply with JSON only: {"answer": "yes" or "no", "reason": "at most 20 words"}.'
)
#: Tags every judge run carries, so traces tell it from the agent's own model calls.
_RUN_CONFIG: dict[str, Any] = {"run_name": "guard.judge", "tags": ["guard-judge"]}
#: Threads whose call counts are remembered, and questions whose answers are (least recent dropped).
_MAX_THREADS = 10_000
_MAX_CACHED = 2_048


class Verdict(BaseModel):
    """The structured answer asked of the model."""

    answer: Literal["yes", "no"] = Field(description="yes or no")
    reason: str = Field(description="why, in at most 20 words")


@dataclass(frozen=True)
class Question:
    """One question for the judge, and the score that made the checks unsure."""

    kind: Kind
    text: str
    #: The finding the answer may drop (None when a "no" would add one).
    finding: Finding | None
    score: float
    threshold: float
    band: float


@dataclass(frozen=True)
class Answer:
    """What came back for one question: a verdict, or why there is none."""

    verdict: Verdict | None
    latency_ms: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: str | None = None
    cached: bool = False
    skipped: bool = False


class Judge:
    """Asks a LangChain chat model narrow yes/no questions, within a timeout and a call cap.

    ``model`` is a ``BaseChatModel`` or a ``"provider:model"`` string, resolved with
    ``langchain.chat_models.init_chat_model`` at first use (never at import or construction).
    ``config`` is the policy's ``checks.judge`` section: bands, cap, timeout, prices.
    """

    def __init__(self, model: Any, config: JudgeConfig | None = None) -> None:
        self.config = config if config is not None else JudgeConfig()
        self._spec = model if isinstance(model, str) else None
        self._model = None if isinstance(model, str) else model
        self._failure: Exception | None = None
        self._spent: OrderedDict[str, int] = OrderedDict()
        self._answers: OrderedDict[str, Verdict] = OrderedDict()
        self._lock = threading.Lock()
        self._resolving = threading.Lock()

    @property
    def name(self) -> str:
        """The model as the reports name it."""
        if self._spec:
            return self._spec
        named = getattr(self._model, "model_name", None) or getattr(self._model, "model", None)
        return named if isinstance(named, str) else type(self._model).__name__

    @property
    def model(self) -> Any:
        """The chat model, resolved from its ``provider:model`` spec on first use (once, whichever
        of the parallel questions gets there first)."""
        with self._resolving:
            if self._model is None:
                if self._failure is not None:
                    raise self._failure
                try:
                    self._model = resolve_model(str(self._spec))
                except (ImportError, ValueError) as exc:
                    self._failure = exc  # a missing package does not appear between two calls
                    raise
            return self._model

    # -- the reviews -------------------------------------------------------------------------

    def review_call(
        self, findings: list[Finding], call: ToolCall, conversation: Conversation, registry: ToolRegistry,
        policy: Policy, semantic: Any, matters: Matters,
    ) -> tuple[list[Finding], list[dict[str, Any]]]:
        """The findings about a proposed call after the judge's answers, and the records of them."""
        return self._drive(_call_review(self, findings, call, conversation, registry, policy, semantic, matters), conversation)

    async def areview_call(
        self, findings: list[Finding], call: ToolCall, conversation: Conversation, registry: ToolRegistry,
        policy: Policy, semantic: Any, matters: Matters,
    ) -> tuple[list[Finding], list[dict[str, Any]]]:
        """``review_call`` with the model's async call."""
        review = _call_review(self, findings, call, conversation, registry, policy, semantic, matters)
        return await self._adrive(review, conversation)

    def review_preflight(
        self, result: preflight_check.Preflight, conversation: Conversation, registry: ToolRegistry,
        policy: Policy, semantic: Any, matters: Matters,
    ) -> tuple[preflight_check.Preflight, list[dict[str, Any]]]:
        """The preflight's conclusion after the judge's answers, and the records of them."""
        return self._drive(_preflight_review(self, result, conversation, registry, policy, semantic, matters), conversation)

    async def areview_preflight(
        self, result: preflight_check.Preflight, conversation: Conversation, registry: ToolRegistry,
        policy: Policy, semantic: Any, matters: Matters,
    ) -> tuple[preflight_check.Preflight, list[dict[str, Any]]]:
        """``review_preflight`` with the model's async call."""
        review = _preflight_review(self, result, conversation, registry, policy, semantic, matters)
        return await self._adrive(review, conversation)

    # -- asking --------------------------------------------------------------------------------

    def _drive(self, review: _Review, conversation: Conversation) -> Any:
        """Run a review, answering each batch of questions it yields with sync model calls."""
        thread = _thread_key(conversation)
        try:
            questions = next(review)
            while True:
                questions = review.send(self._ask(questions, conversation, thread))
        except StopIteration as done:
            return done.value

    async def _adrive(self, review: _Review, conversation: Conversation) -> Any:
        thread = _thread_key(conversation)
        try:
            questions = next(review)
            while True:
                questions = review.send(await self._aask(questions, conversation, thread))
        except StopIteration as done:
            return done.value

    def _ask(self, questions: Sequence[Question], conversation: Conversation, thread: str) -> list[Answer]:
        """Each question answered, in parallel threads, each within the timeout."""
        plan = self._plan(questions, conversation, thread)
        workers = {i: _Worker(self._invoke, p) for i, p in enumerate(plan) if isinstance(p, _Prompt)}
        return [self._answer(p, workers[i].result(self.config.timeout_seconds)) if isinstance(p, _Prompt) else p
                for i, p in enumerate(plan)]

    async def _aask(self, questions: Sequence[Question], conversation: Conversation, thread: str) -> list[Answer]:
        plan = self._plan(questions, conversation, thread)
        outcomes = iter(await asyncio.gather(*(self._ainvoke_timed(p) for p in plan if isinstance(p, _Prompt))))
        return [self._answer(p, next(outcomes)) if isinstance(p, _Prompt) else p for p in plan]

    def _plan(self, questions: Sequence[Question], conversation: Conversation, thread: str) -> list[_Prompt | Answer]:
        """Per question, the prompt to send, or the answer it already has: from the cache (an
        identical question about the same transcript), or none once the thread's cap is spent."""
        transcript = render_transcript(conversation, self.config.max_transcript_chars)
        plan: list[_Prompt | Answer] = []
        for q in questions:
            prompt = _Prompt(q.text, transcript)
            if (cached := self._answers.get(prompt.key)) is not None:
                plan.append(Answer(cached, cached=True))
            elif self._take(thread):
                plan.append(prompt)
            else:
                cap = self.config.max_calls_per_thread
                plan.append(Answer(None, skipped=True, error=f"the judge's call cap is spent ({cap} per thread)"))
        return plan

    def _take(self, thread: str) -> bool:
        """Count one call against the thread's cap; False when the cap is spent."""
        with self._lock:
            spent = self._spent.pop(thread, 0)
            allowed = spent < self.config.max_calls_per_thread
            self._spent[thread] = spent + allowed
            while len(self._spent) > _MAX_THREADS:
                self._spent.popitem(last=False)
            return allowed

    def _answer(self, prompt: _Prompt, outcome: _Outcome) -> Answer:
        """An outcome as an answer; a verdict is cached for the same question asked again."""
        if outcome.verdict is not None:
            with self._lock:
                self._answers[prompt.key] = outcome.verdict
                while len(self._answers) > _MAX_CACHED:
                    self._answers.popitem(last=False)
        return Answer(outcome.verdict, outcome.latency_ms, outcome.input_tokens, outcome.output_tokens, outcome.error)

    def _invoke(self, prompt: _Prompt) -> _Outcome:
        """One model call, synchronously (run in a worker thread by ``_ask``)."""
        start = time.perf_counter()
        runnable, structured = self._runnable()
        return _outcome(runnable.invoke(prompt.messages, config=_RUN_CONFIG), structured, start)

    async def _ainvoke_timed(self, prompt: _Prompt) -> _Outcome:
        """One async model call within the timeout, outside the caller's run context."""
        start = time.perf_counter()
        try:
            runnable, structured = self._runnable()
            task = asyncio.get_running_loop().create_task(
                runnable.ainvoke(prompt.messages, config=_RUN_CONFIG), context=contextvars.Context()
            )
            return _outcome(await asyncio.wait_for(task, self.config.timeout_seconds), structured, start)
        except TimeoutError:
            return _Outcome.failed(f"timed out after {self.config.timeout_seconds} s", start)
        except Exception as exc:  # a judge failure never escapes the guard
            return _Outcome.failed(f"{type(exc).__name__}: {exc}", start)

    def _runnable(self) -> tuple[Any, bool]:
        """The model with structured output when it offers it, else the model itself (its reply is
        then parsed as JSON)."""
        model = self.model
        try:
            return model.with_structured_output(Verdict, include_raw=True), True
        except (NotImplementedError, AttributeError, ValueError, TypeError):
            return model, False


@dataclass(frozen=True)
class _Prompt:
    """A question with the transcript it is asked about: the messages sent, and the cache key."""

    question: str
    transcript: str

    @property
    def key(self) -> str:
        return short_hash([self.question, self.transcript])

    @property
    def messages(self) -> list[tuple[str, str]]:
        return [("system", _SYSTEM), ("human", f"Transcript:\n{self.transcript}\n\nQuestion: {self.question}")]


@dataclass(frozen=True)
class _Outcome:
    verdict: Verdict | None
    latency_ms: float
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: str | None = None

    @classmethod
    def failed(cls, error: str, start: float) -> _Outcome:
        return cls(None, (time.perf_counter() - start) * 1000, error=error[:300])


def _outcome(out: Any, structured: bool, start: float) -> _Outcome:
    """A model's reply as a verdict with its usage; an unreadable reply is a failure."""
    latency = (time.perf_counter() - start) * 1000
    raw, parsed = (out.get("raw"), out.get("parsed")) if structured and isinstance(out, dict) else (out, None)
    usage = getattr(raw, "usage_metadata", None) or {}
    tokens_in, tokens_out = usage.get("input_tokens"), usage.get("output_tokens")
    if isinstance(parsed, Verdict):
        return _Outcome(parsed, latency, tokens_in, tokens_out)
    try:
        verdict = parse_reply(_text_of(raw))
    except ValueError as exc:
        return _Outcome(None, latency, tokens_in, tokens_out, error=str(exc)[:300])
    return _Outcome(verdict, latency, tokens_in, tokens_out)


def _text_of(message: Any) -> str:
    text = getattr(message, "text", None)
    if isinstance(text, str):
        return text
    content = getattr(message, "content", message)
    return content if isinstance(content, str) else json.dumps(content, default=str)


class _Worker:
    """A model call in a daemon thread: a call that hangs past its timeout is abandoned, and never
    keeps the process from exiting. A fresh thread also leaves the caller's run context behind."""

    def __init__(self, fn: Callable[[_Prompt], _Outcome], prompt: _Prompt) -> None:
        self._done = threading.Event()
        self._outcome: _Outcome | None = None
        self._start = time.perf_counter()

        def run() -> None:
            try:
                self._outcome = fn(prompt)
            except Exception as exc:  # a judge failure never escapes the guard
                self._outcome = _Outcome.failed(f"{type(exc).__name__}: {exc}", self._start)
            finally:
                self._done.set()

        threading.Thread(target=run, name="guard-judge", daemon=True).start()

    def result(self, timeout: float) -> _Outcome:
        """The outcome, or a timeout failure ``timeout`` seconds after the call started."""
        if not self._done.wait(max(0.0, self._start + timeout - time.perf_counter())):
            return _Outcome.failed(f"timed out after {timeout} s", self._start)
        assert self._outcome is not None
        return self._outcome


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_YES_NO = re.compile(r"\s*\**\s*(yes|no)\b\W*(.*)", re.IGNORECASE | re.DOTALL)


def parse_reply(text: str) -> Verdict:
    """A plain-text reply as a verdict: the JSON asked for, else a reply that starts with yes or no."""
    if found := _JSON_OBJECT.search(text):
        try:
            data = json.loads(found.group(0))
        except ValueError:
            data = None
        if isinstance(data, dict):
            answer = data.get("answer")
            if isinstance(answer, bool):
                answer = "yes" if answer else "no"
            if isinstance(answer, str) and answer.strip().lower() in ("yes", "no"):
                return Verdict(answer=answer.strip().lower(), reason=str(data.get("reason") or "")[:300])  # type: ignore[arg-type]
    if found := _YES_NO.match(text):
        return Verdict(answer=found.group(1).lower(), reason=found.group(2).strip()[:300])  # type: ignore[arg-type]
    raise ValueError(f"the judge's reply is no yes/no answer: {text[:120]!r}")


def resolve_model(spec: str) -> Any:
    """A ``provider:model`` spec as a chat model, through ``init_chat_model``; a missing package
    is an ImportError that names it."""
    provider, _, name = spec.partition(":")
    if not provider or not name:
        raise ValueError(f"a judge model is written provider:model, got {spec!r}")
    try:
        from langchain.chat_models import init_chat_model
    except ImportError as exc:
        raise ImportError(
            f"the judge model {spec!r} is resolved with langchain's init_chat_model: {install_hint('langchain')}"
        ) from exc
    try:
        return init_chat_model(name, model_provider=provider)
    except ImportError as exc:
        raise ImportError(f"the judge model {spec!r} needs the integration package for {provider!r}: {exc}") from exc
    except Exception as exc:  # a bad provider, a missing API key: configuration, reported as such
        raise ValueError(f"cannot build the judge model {spec!r}: {type(exc).__name__}: {exc}") from exc


def judge_for(judge: Any, policy: Policy) -> Judge | None:
    """The judge a ``Guard`` uses: a ``Judge`` as given; a chat model or a ``provider:model`` spec
    wrapped with the policy's ``checks.judge`` section; else one built from that section when it
    is enabled (the model is resolved at the first question)."""
    config = policy.checks.judge
    if isinstance(judge, Judge):
        return judge
    if judge is not None:
        return Judge(judge, config)
    if not config.enabled:
        return None
    if config.model is None:
        raise PolicyError("<policy>", None, "checks.judge.model", "an enabled judge needs a model (provider:model), or pass judge= to Guard")
    return Judge(config.model, config)


def _thread_key(conversation: Conversation) -> str:
    """Whose call cap a question counts against: the LangGraph thread when the guard runs inside a
    graph, else the conversation's opening message (it does not change as the thread grows)."""
    try:
        from langgraph.config import get_config

        thread = (get_config().get("configurable") or {}).get("thread_id")
    except RuntimeError:  # not inside a runnable
        thread = None
    if thread is not None:
        return f"thread:{thread}"
    first = conversation.messages[0] if conversation.messages else None
    return "opening:" + short_hash([first.role, first.content] if first else None)


def render_transcript(conversation: Conversation, limit: int) -> str:
    """The conversation as the judge reads it, its latest ``limit`` characters.

    Since the user last spoke, the assistant's turns show only which tools it called: their words
    and arguments are the model vouching for itself (the call under review among them), and would
    let the judge find a value "stated" in the very call that invented it. Tool results stay.
    """
    lines = []
    for i, m in enumerate(conversation.messages):
        if m.role == "tool":
            lines.append(f"tool result ({m.name or 'tool'}): {m.content}")
        elif m.role == "assistant" and i > conversation.last_user_index:
            if m.tool_calls:
                lines.append("assistant called " + ", ".join(str(c.name) for c in m.tool_calls))
        elif m.role == "assistant" and m.tool_calls:
            calls = "; ".join(f"{c.name}({json.dumps(c.args, ensure_ascii=False, default=str)})" for c in m.tool_calls)
            lines.append(f"assistant: {m.content} [called {calls}]".replace(":  [", ": ["))
        elif m.content:
            lines.append(f"{m.role}: {m.content}")
    text = "\n".join(lines)
    return text if len(text) <= limit else "…" + text[-(limit - 1):]


# --- the questions --------------------------------------------------------------------------------

#: A review yields batches of questions, is sent their answers, and returns its conclusion: the
#: same review runs with sync or async model calls (``Judge._drive``, ``Judge._adrive``).
_Review = Generator[list[Question], list[Answer], Any]


def _call_review(
    judge: Judge, findings: list[Finding], call: ToolCall, conversation: Conversation, registry: ToolRegistry,
    policy: Policy, semantic: Any, matters: Matters,
) -> _Review:
    asked = {
        i: q for i, f in enumerate(findings)
        if matters(f) and (q := _call_question(f, call, conversation, registry, policy, semantic))
    }
    if not asked:
        return findings, []
    answers = yield list(asked.values())
    return _settle(judge, findings, asked, answers)


def _settle(
    judge: Judge, findings: list[Finding], asked: dict[int, Question], answers: list[Answer]
) -> tuple[list[Finding], list[dict[str, Any]]]:
    """The findings after yes/no answers about some of them (by position): a yes drops one, a no
    keeps it with the answer in its evidence; each answer recorded."""
    by_index = dict(zip(asked, answers, strict=True))
    kept: list[Finding] = []
    records: list[dict[str, Any]] = []
    for i, f in enumerate(findings):
        if i not in asked:
            kept.append(f)
            continue
        effect = _effect(by_index[i], drop_on="yes")
        records.append(_record(judge, asked[i], by_index[i], effect))
        if effect != "dropped":
            kept.append(_noted(f, by_index[i]))
    return kept, records


def _call_question(
    f: Finding, call: ToolCall, conversation: Conversation, registry: ToolRegistry, policy: Policy, semantic: Any
) -> Question | None:
    bands = policy.checks.judge.bands
    if f.category is Category.UNGROUNDED_VALUE:
        # how near a miss it was: worked out here, for the judge only, not on every ungrounded value
        score = nearest(f.value, conversation.grounding_index)["score"]
        threshold = policy.checks.grounding.min_fuzzy_score / 100
        if not isinstance(score, (int, float)) or score < threshold - bands.ungrounded_value:
            return None
        param = f.path.removeprefix("$.")
        text = (
            f"The assistant is about to call the tool `{call.name}` with `{param}` = {json.dumps(f.value, ensure_ascii=False)}. "
            "Is this value stated, or clearly implied, in the transcript (by the user, the system or a tool result)? "
            "Answer no if it would have to be guessed."
        )
        return Question("ungrounded_value", text, f, float(score), threshold, bands.ungrounded_value)
    if f.category is Category.SUSPICIOUS_TOOL_SELECTION:
        score, better_score, better = f.evidence.get("score"), f.evidence.get("better_score"), f.evidence.get("better")
        if not isinstance(score, (int, float)) or not isinstance(better_score, (int, float)):
            return None
        margin = float(getattr(semantic, "selection_margin", policy.checks.semantic.selection_margin))
        lead = float(better_score) - float(score)
        if lead > margin + bands.suspicious_tool_selection:
            return None
        text = (
            f"The assistant chose the tool {_tool_line(registry.get(call.name or ''), call.name)} for the user's request; "
            f"the tool {_tool_line(registry.get(str(better)), better)} seemed to fit better. "
            f"Is `{call.name}` a suitable tool for what the user asked{_request_of(f)}?"
        )
        return Question("suspicious_tool_selection", text, f, round(lead, 3), margin, bands.suspicious_tool_selection)
    return None


def _preflight_review(
    judge: Judge, result: preflight_check.Preflight, conversation: Conversation, registry: ToolRegistry,
    policy: Policy, semantic: Any, matters: Matters,
) -> _Review:
    records: list[dict[str, Any]] = []
    if (question := _tool_question(result, conversation, registry, policy, matters)) is not None:
        (answer,) = yield [question]
        if question.finding is not None:  # no tool reached the threshold: a yes takes the best one
            effect = _effect(answer, drop_on="yes")
            if effect == "dropped":
                result = _with_tool(result, conversation, registry, policy, semantic)
            else:
                result = replace(result, findings=[_noted(f, answer) if f is question.finding else f for f in result.findings])
        else:  # the best tool reached it: a no says no tool suits the request
            effect = "added" if answer.verdict is not None and answer.verdict.answer == "no" else _effect(answer, drop_on=None)
            if effect == "added":
                result = replace(result, tool=None, args={}, findings=[_noted(_no_tool(result, conversation, policy), answer)])
        records.append(_record(judge, question, answer, effect))
    asked = {
        i: q for i, f in enumerate(result.findings)
        if matters(f) and (q := _missing_question(f, registry, policy)) is not None
    }
    if asked:
        findings, settled = _settle(judge, result.findings, asked, (yield list(asked.values())))
        result, records = replace(result, findings=findings), records + settled
    return result, records


def _tool_question(
    result: preflight_check.Preflight, conversation: Conversation, registry: ToolRegistry, policy: Policy, matters: Matters
) -> Question | None:
    """Can the best tool serve the request, when its relevance is near ``min_relevance``?"""
    if not result.ranking:
        return None
    best = result.ranking[0]
    threshold, band = policy.checks.preflight.min_relevance, policy.checks.judge.bands.no_suitable_tool
    if abs(best.score - threshold) > band:
        return None
    finding = next((f for f in result.findings if f.category is Category.NO_SUITABLE_TOOL), None)
    if finding is not None and not matters(finding):
        return None
    if finding is None and not matters(_no_tool(result, conversation, policy)):
        return None  # a "no" would change nothing
    text = (
        f"Can the tool {_tool_line(registry.get(best.name), best.name)} serve the user's latest request: "
        f"{json.dumps(conversation.latest_request.strip(), ensure_ascii=False)}? Answer yes only if calling it would do what the user asks."
    )
    return Question("no_suitable_tool", text, finding, round(best.score, 3), threshold, band)


def _missing_question(f: Finding, registry: ToolRegistry, policy: Policy) -> Question | None:
    mentioned = f.evidence.get("mentioned")
    band = policy.checks.judge.bands.missing_argument
    if f.category is not Category.MISSING_ARGUMENT or f.check != preflight_check.NAME or not isinstance(mentioned, (int, float)):
        return None
    if mentioned < 1 - band:
        return None
    spec = registry.get(f.tool or "")
    param = f.path.removeprefix("$.").replace("[*]", "[]")
    described = _description_of(spec, f.path)
    text = (
        f"Did the user (or the system) give a value for the parameter `{param}` of the tool `{f.tool}`"
        f"{f' (described as: {described})' if described else ''}? "
        "Answer yes only if the value can be read from the transcript; no if it would have to be asked for or guessed."
    )
    return Question("missing_argument", text, f, float(mentioned), 1.0, band)


def _with_tool(
    result: preflight_check.Preflight, conversation: Conversation, registry: ToolRegistry, policy: Policy, semantic: Any
) -> preflight_check.Preflight:
    """The preflight again, with the best tool accepted at its own score: its values are then
    looked for and judged like any accepted tool's."""
    pre = policy.checks.preflight.model_copy(update={"min_relevance": result.ranking[0].score})
    relaxed = policy.model_copy(update={"checks": policy.checks.model_copy(update={"preflight": pre})})
    return preflight_check.assess(conversation, registry, relaxed, semantic)


def _no_tool(result: preflight_check.Preflight, conversation: Conversation, policy: Policy) -> Finding:
    top = result.ranking[: policy.checks.preflight.show_candidates]
    candidates = ", ".join(f"{s.name} ({s.score:.2f})" for s in top) or "none"
    return Finding(
        category=Category.NO_SUITABLE_TOOL,
        check=NAME,
        message=f"the judge found that no available tool serves the request; the closest are {candidates}",
        rule="judge",
        value=conversation.latest_request,
        evidence={"ranking": [s.as_dict() for s in top]},
    )


def _effect(answer: Answer, drop_on: Literal["yes"] | None) -> Effect:
    if answer.skipped:
        return "skipped"
    if answer.verdict is None:
        return "failed"
    return "dropped" if answer.verdict.answer == drop_on else "kept"


def _noted(f: Finding, answer: Answer) -> Finding:
    """A finding the judge answered about and kept (or added), with its answer in the evidence."""
    if answer.verdict is None:
        return f
    return f.model_copy(update={"evidence": {**f.evidence, NAME: answer.verdict.model_dump()}})


def _record(judge: Judge, q: Question, answer: Answer, effect: Effect) -> dict[str, Any]:
    """One judgement as ``Decision.judgements`` keeps it."""
    config = judge.config
    cost = None
    if (
        config.price_per_1k_input_tokens is not None and config.price_per_1k_output_tokens is not None
        and answer.input_tokens is not None and answer.output_tokens is not None
    ):
        cost = round(
            answer.input_tokens / 1000 * config.price_per_1k_input_tokens
            + answer.output_tokens / 1000 * config.price_per_1k_output_tokens, 8,
        )
    f = q.finding
    return {
        "kind": q.kind,
        "question": q.text,
        "finding": {"category": f.category.value, "path": f.path, "value": f.value, "tool": f.tool} if f else None,
        "score": q.score,
        "threshold": q.threshold,
        "band": q.band,
        "answer": answer.verdict.answer if answer.verdict else None,
        "reason": answer.verdict.reason if answer.verdict else None,
        "effect": effect,
        "model": judge.name,
        "latency_ms": round(answer.latency_ms, 3),
        "input_tokens": answer.input_tokens,
        "output_tokens": answer.output_tokens,
        "cost": cost,
        "cached": answer.cached,
        "error": answer.error,
    }


def _tool_line(spec: ToolSpec | None, name: Any) -> str:
    if spec is None:
        return f"`{name}`"
    return f"`{spec.name}` ({spec.description.strip()[:300]})" if spec.description.strip() else f"`{spec.name}`"


def _request_of(f: Finding) -> str:
    request = f.evidence.get("request")
    return f" ({json.dumps(request, ensure_ascii=False)})" if isinstance(request, str) and request.strip() else ""


def _description_of(spec: ToolSpec | None, path: str) -> str:
    """The schema description of the parameter at a dotted path ("$.stops[*].city")."""
    node: Any = spec.parameters if spec else None
    for part in path.removeprefix("$.").split("."):
        if not isinstance(node, dict):
            return ""
        name, items = part.removesuffix("[*]"), part.endswith("[*]")
        node = (node.get("properties") or {}).get(name)
        if items and isinstance(node, dict):
            node = node.get("items")
    return str(node.get("description") or "").strip()[:300] if isinstance(node, dict) else ""
