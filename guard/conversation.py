"""The view of a conversation that the checks read.

Adapters hand over messages in whatever shape their framework uses (LangChain messages, OpenAI
dicts, ``("user", "text")`` tuples); this module turns them into one small immutable view with what
the checks need: the texts that can ground a value, earlier tool calls and their results, and the
reference time that relative dates ("tomorrow at 2pm") resolve against.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import MAXYEAR, MINYEAR, datetime
from functools import cached_property, lru_cache
from typing import Any, Literal

from guard.lexicon import MONTH_NUMBER, MONTH_PATTERN, WEEKDAY_OR_SHORT_PATTERN, foreign_month_number
from guard.models import ToolCall
from guard.normalise import WORD

Role = Literal["system", "user", "assistant", "tool"]

_ROLE_ALIASES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "tool": "tool",
    "function": "tool",
}


@dataclass(frozen=True)
class Message:
    """One turn, reduced to what the checks look at."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    status: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @cached_property
    def data(self) -> Any:
        """A tool result's content parsed as JSON when it is JSON, else the text itself."""
        try:
            return json.loads(self.content)
        except (TypeError, ValueError):
            return self.content


def _content_text(content: Any) -> str:
    """LangChain content may be a list of blocks; keep the text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    if isinstance(content, (dict, int, float, bool)):
        return json.dumps(content, ensure_ascii=False, default=str)
    return str(content)


def to_message(raw: Any) -> Message:
    """Convert one framework message into a ``Message``. Unknown shapes become user text."""
    if isinstance(raw, Message):
        return raw
    if isinstance(raw, tuple) and len(raw) == 2:
        role, content = raw
        return Message(role=_ROLE_ALIASES.get(str(role).lower(), "user"), content=_content_text(content))
    if isinstance(raw, dict):
        fields, kind = raw, raw.get("role", raw.get("type", "user"))
    elif isinstance(getattr(raw, "type", None), str):  # a LangChain BaseMessage
        # Read the pydantic fields directly: pydantic's attribute fallback for fields a message
        # type lacks (``tool_calls`` on a HumanMessage) costs more than the rest of the conversion.
        fields, kind = vars(raw), raw.type
    else:
        return Message(role="user", content=_content_text(raw))
    return Message(
        role=_ROLE_ALIASES.get(str(kind).lower(), "user"),
        content=_content_text(fields.get("content")),
        tool_calls=tuple(ToolCall.from_any(c) for c in fields.get("tool_calls") or ()),
        tool_call_id=fields.get("tool_call_id"),
        name=fields.get("name"),
        status=fields.get("status"),
        metadata=dict(fields.get("response_metadata") or {}),
    )


_DATE_IN_TEXT = re.compile(
    r"\b(\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?)\b"
)
_MONTH_DATE_IN_TEXT = re.compile(
    rf"\b({MONTH_PATTERN})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b",
    re.IGNORECASE,
)
#: The day before the month: "the 10th of april 2024", "10 April, 2024".
_DAY_MONTH_IN_TEXT = re.compile(
    rf"\b(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({MONTH_PATTERN})\.?,?\s+(\d{{4}})\b",
    re.IGNORECASE,
)
#: The year alone, as a system prompt says it: "The current year is 2023.", "Current year: 2025",
#: "The year is 2024.", "We are in 2025." (today's month and day in that year). Not a year that
#: begins a date ("2023-12-31") or counts something ("the target for the year is 2000 units").
_YEAR_IN_TEXT = re.compile(
    r"\b(?:(?:current|present)\s+year\s*(?:is|:|=)|the\s+year\s+is(?:\s+now)?|we\s+are\s+(?:now\s+)?in(?:\s+the\s+year)?)"
    r"\s+(\d{4})(?![\d/.-]?\d)(?![ \t]*[^\W\d_])",
    re.IGNORECASE,
)
#: A day, a month and a year with dots between, as Europe writes them: "11.03.2025", and with a
#: space after each dot as Czech and Slovak do: "2. 6. 2025" (with slashes the order is ambiguous,
#: with dots it is not).
_DOTTED_DATE = re.compile(r"(?<![\d.\w])(?<!version )(?<!release )(\d{1,2})\. ?(\d{1,2})\. ?(\d{4})(?![\d.]\d)", re.IGNORECASE)

#: The clock a replay runs on (``replay_clock``); None: the machine's.
_REPLAY_NOW: ContextVar[datetime | None] = ContextVar("guard_replay_now", default=None)


def clock() -> datetime:
    """Now: the replay's pinned moment when one is set (``replay_clock``), else the machine's.
    What a conversation that states no date of its own is read against."""
    return _REPLAY_NOW.get() or datetime.now()


@contextmanager
def replay_clock(now: datetime | None) -> Iterator[None]:
    """Decide as if it were ``now`` (None: the machine's clock), in this context and the ones it
    starts: a replay of old traffic or a benchmark reads "tomorrow" in a conversation that states
    no date the same whatever day it runs."""
    token = _REPLAY_NOW.set(now)
    try:
        yield
    finally:
        _REPLAY_NOW.reset(token)


def stated_date(text: str, year_only: bool = True) -> datetime | None:
    """A date a system message states: ISO ("2021-09-27 10:00") or written ("March 13, 2022");
    with ``year_only``, "The current year is 2023." too (today's month and day in that year, by
    ``clock``: not for the cached readers)."""
    if m := _DATE_IN_TEXT.search(text):
        try:
            return datetime.fromisoformat(m.group(1).replace(" ", "T"))
        except ValueError:
            pass
    if m := _MONTH_DATE_IN_TEXT.search(text):
        try:
            return datetime(int(m.group(3)), MONTH_NUMBER[m.group(1).lower()], int(m.group(2)))
        except ValueError:
            pass
    if m := _DAY_MONTH_IN_TEXT.search(text):
        try:
            return datetime(int(m.group(3)), MONTH_NUMBER[m.group(2).lower()], int(m.group(1)))
        except ValueError:
            pass
    if found := _foreign_date(text):
        return found
    if m := _DOTTED_DATE.search(text):
        try:
            return datetime(int(m.group(3)), int(m.group(2)), int(m.group(1)))
        except ValueError:
            pass
    if m := _CJK_DATE.search(text):
        try:
            return datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            pass
    if year_only and (m := _YEAR_IN_TEXT.search(text)):
        return _in_year(clock(), int(m.group(1)))
    return None


#: A day, a month's name and a year as the other common languages write them: "2 de junio de
#: 2025", "14 juin 2025", "3. Juni 2025", "2 de junho de 2025" (month names: ``foreign_month_number``).
_FOREIGN_DATE = re.compile(rf"\b(\d{{1,2}})\.?\s+(?:de\s+)?({WORD})\.?,?\s+(?:de\s+)?(\d{{4}})\b")


#: A date as Chinese, Japanese and Korean write it: "2025年11月5日", "2025년 12월 1일".
_CJK_DATE = re.compile(r"(\d{4})\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})\s*[日일]")


def _foreign_date(text: str) -> datetime | None:
    for m in _FOREIGN_DATE.finditer(text[:4_096]):
        month = foreign_month_number().get(m.group(2).lower()) if len(m.group(2)) <= 20 else None
        if month is not None:
            try:
                return datetime(int(m.group(3)), month, int(m.group(1)))
            except ValueError:
                continue
    return None


#: "Today is 2021-10-13", "today's date is Wednesday, May 7, 2025", "it's Jan 16, 2024": the day a
#: message says it is.
_TODAY_IS = re.compile(
    rf"\b(?:today(?:'s date)?(?:\s+is|['’]s|:|(?=\s+\d{{4}}-\d\d-\d\d\b))|it['’]s|it is)\s+(?:(?:{WEEKDAY_OR_SHORT_PATTERN})\.?,?\s+)?([^.;!?\n]{{6,40}})",
    re.IGNORECASE,
)


#: The time of day a message says it is now: "it's 9:10am", "it's 14:05 UTC", "the time is 3:40 pm".
_NOW_IS = re.compile(
    r"\b(?:it'?s|it is|now is|time is|right now|current time:?|time now:?)\s+(?:(?:about|now|currently)\s+)?(?:\d{4}-\d\d-\d\d[ t])?(\d{1,2})(?::(\d{2}))?\s*([ap]\.?m\.?)?"
    r"(?!\s*(?:of|days?|weeks?|months?|years?|people)\b)",
    re.IGNORECASE,
)

#: A date with its clock time where a message gives today's date: "Today is Thursday, 2026-03-12,
#: 14:05 UTC", "Current date and time: 2026-03-12T14:05:00Z" (the minutes are needed: a bare
#: number after a date is no clock).
_DATED_NOW = re.compile(
    r"\b(?:today is|current date(?: and time)?:?|date and time:?|the date is)\s+(?:[A-Za-z]+,?\s+)?\d{4}-\d\d-\d\d(?:,\s*|\s+|t)(\d{1,2}):(\d{2})(?::\d\d)?\s*([ap]\.?m\.?)?",
    re.IGNORECASE,
)


#: A labelled date and clock time where a line starts, in any language: "Hora local actual:
#: 2025-03-11 15:20", "Aktuelle Zeit: 2025-03-11T15:20" (a system prompt's field for now).
_LABELLED_NOW = re.compile(r"(?m)^[^\W\d][^\d:\n]{0,40}:\s*\d{4}-\d\d-\d\d[ tT](\d{1,2}):(\d{2})(?::\d\d)?()(?![\d:])")


@lru_cache(maxsize=64)
def stated_now(text: str) -> tuple[datetime, str] | None:
    """The moment a message says it is now, with the words that say its time: a clock time
    ("it's 9:10am", "it's 14:05 UTC") and a date written in the same message ("on Tuesday 12
    Nov 2024"), or a date and time a line gives after a label in any language ("Hora local
    actual: 2025-03-11 15:20"); None when either is missing. Read in the message's first 4,096 characters."""
    text = text[:4_096]
    if (
        (said := _NOW_IS.search(text)) is None and (said := _DATED_NOW.search(text)) is None and (said := _LABELLED_NOW.search(text)) is None
    ) or (day := stated_date(text, year_only=False)) is None:
        return None
    hour, minute, half = int(said[1]), int(said[2] or 0), (said[3] or "").lower()[:1]
    if hour > 23 or minute > 59 or (half and not 1 <= hour <= 12):
        return None
    hour = hour % 12 + (12 if half == "p" else 0) if half else hour
    return day.replace(hour=hour, minute=minute, second=0, microsecond=0), said.group(0).strip()


@lru_cache(maxsize=64)  # read once per message, however many values and rules ask
def stated_today(text: str) -> datetime | None:
    """The date a message gives as today ("Today is Wednesday, May 7, 2025."), or None: the one
    reading of "today is ..." (a system message's date is ``Conversation.reference_time``)."""
    for m in itertools.islice(_TODAY_IS.finditer(text), 16):  # a message says it once, not thousands of times
        head = m.group(1).lstrip()
        if (_DATE_IN_TEXT.match(head) or _MONTH_DATE_IN_TEXT.match(head) or _DAY_MONTH_IN_TEXT.match(head)) and (
            stated := stated_date(head, year_only=False)
        ) is not None:
            return stated
    return None


def _in_year(now: datetime, year: int) -> datetime | None:
    """Today's month and day in a stated year; 29 February becomes the 28th in a common year, and a
    year ``datetime`` cannot hold (0000) states no date."""
    if not MINYEAR <= year <= MAXYEAR:
        return None
    try:
        return now.replace(year=year)
    except ValueError:  # 29 February in a year that has none
        return now.replace(year=year, day=28)


@dataclass(frozen=True)
class Conversation:
    """An immutable view of the messages before the call being checked."""

    messages: tuple[Message, ...] = ()
    now: datetime | None = None

    @classmethod
    def from_messages(cls, messages: Any, now: datetime | None = None) -> Conversation:
        if messages is None:
            messages = ()
        if isinstance(messages, (str, dict)) or not hasattr(messages, "__iter__"):
            messages = [messages]
        return cls(messages=tuple(to_message(m) for m in messages), now=now)

    @cached_property
    def reference_time(self) -> datetime:
        """The 'now' relative dates resolve against: given, else stated in a system message, else
        the date a user message says today is.

        Datasets replay old dialogues ("tomorrow" meant 2021-09-28 in API-Bank), so the clock of
        the machine is only the last resort.
        """
        if self.now is not None:
            return self.now
        for msg in self.messages:
            if msg.role != "system":
                continue
            # "today is ..." over the first date the message gives ("date of birth 1990-04-12. Today is 2025-09-01.")
            if (stated := stated_today(msg.content) or stated_date(msg.content)) is not None:
                return stated
        for msg in reversed(self.messages):  # the user's own "Today is Tuesday, August 19, 2025."
            if msg.role == "user" and (stated := stated_today(msg.content)) is not None:
                return stated
        return clock()

    @cached_property
    def grounding_texts(self) -> tuple[Message, ...]:
        """Messages whose words can ground a value: what the user and the system said, and what
        the assistant said in earlier turns, which the user has seen and answered (often a tool
        result relayed in words: "your booking id is BK-1"). The assistant's words since the
        user's last message ground nothing: that is the model vouching for itself."""
        return tuple(
            m for i, m in enumerate(self.messages)
            if m.content and (m.role in ("user", "system") or (m.role == "assistant" and i < self.last_user_index))
        )

    @cached_property
    def said_texts(self) -> list[tuple[int, str]]:
        """``grounding_texts`` as written, each with its index in ``messages``."""
        grounding = {id(m) for m in self.grounding_texts}
        return [(i, m.content) for i, m in enumerate(self.messages) if id(m) in grounding]

    @cached_property
    def tool_results(self) -> tuple[Message, ...]:
        return tuple(m for m in self.messages if m.role == "tool")

    @cached_property
    def tool_texts(self) -> list[tuple[int, str]]:
        """Each tool result's text with its index in ``messages`` (as ``said_texts``)."""
        return [(i, m.content) for i, m in enumerate(self.messages) if m.role == "tool" and m.content]

    @cached_property
    def prior_calls(self) -> tuple[ToolCall, ...]:
        return tuple(c for m in self.messages if m.role == "assistant" for c in m.tool_calls)

    @cached_property
    def confirmed_paths(self) -> str:
        """The paths earlier calls named whose results came back without an error ("src/wordcount"
        for a ``list_dir`` that listed it): the environment found them, so a path joined from one
        and an entry its result listed is no guess. One text, for the grounding's path reading."""
        from guard.checks.outcome import reports_failure  # the one reading of a failed result

        found = []
        for call in self.prior_calls[-32:]:
            result = self.result_for(call.id)
            if result is None or reports_failure(result.content, result.status):
                continue
            found += [v for v in call.args.values() if isinstance(v, str) and "/" in v and len(v) <= 1_000 and "://" not in v]
        return " ".join(found)

    @cached_property
    def grounding_index(self) -> Any:
        """The grounding check's search index (``guard.checks.grounding.GroundingIndex``), built
        once per conversation from per-message extracts that are cached across conversations."""
        from guard.checks.grounding import build_index

        return build_index(self)

    def result_for(self, call_id: str | None) -> Message | None:
        """The tool message that answered a call, matched by id."""
        if call_id is None:
            return None
        for msg in self.tool_results:
            if msg.tool_call_id == call_id:
                return msg
        return None

    @cached_property
    def last_user_index(self) -> int:
        for i in range(len(self.messages) - 1, -1, -1):
            if self.messages[i].role == "user":
                return i
        return -1

    def called_since(self, index: int) -> set[str]:
        """The names of the tools called after message ``index`` (since the user last spoke:
        ``last_user_index``)."""
        return {call.name for m in self.messages[index + 1 :] for call in m.tool_calls}

    @cached_property
    def latest_request(self) -> str:
        """The user's latest words: what the current tool calls are meant to serve."""
        return self.messages[self.last_user_index].content if self.last_user_index >= 0 else ""
