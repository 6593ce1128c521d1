"""Time cues in a recall query: the period it is about ("in May 2023", "last week", "上个月"),
whether it asks *when* something happened, and whether it asks for the current state ("now").

``cues(query, now)`` is pure. The recaller turns a period into candidates from that period and a
boost for hits inside it, and a *when* question into a boost for hits that carry a time
expression (the turn that dates the event, rather than a later undated mention of it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from gateway.core.screening import memo

#: month names, lower case, January first (also read by the observer's time references)
MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTH = "|".join([*MONTHS, *(m[:3] for m in MONTHS)])

_MONTH_YEAR = re.compile(rf"\b(?:in\s+)?({_MONTH})\.?\s+(\d{{4}})\b", re.IGNORECASE)
_IN_MONTH = re.compile(rf"\bin\s+({_MONTH})\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:in|during)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_CN_MONTH_YEAR = re.compile(r"((?:19|20)\d\d)年(\d{1,2})月")
_RELATIVE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\byesterday\b|昨天", re.IGNORECASE), "yesterday"),
    (re.compile(r"\blast\s+week\b|上周|上个?星期", re.IGNORECASE), "last_week"),
    (re.compile(r"\blast\s+month\b|上个?月", re.IGNORECASE), "last_month"),
    (re.compile(r"\blast\s+year\b|去年", re.IGNORECASE), "last_year"),
    (re.compile(r"\bthis\s+week\b|这周|本周", re.IGNORECASE), "this_week"),
    (re.compile(r"\bthis\s+month\b|这个月|本月", re.IGNORECASE), "this_month"),
)
_AGO = re.compile(r"\b(\d+|a|one|two|three|four|five|six)\s+(day|week|month)s?\s+ago\b", re.I)
_NUMBERS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}

_WHEN = re.compile(
    r"^\s*when\b|\bwhat\s+(?:date|day|month|year|time)\b|\bhow\s+long\s+ago\b|"
    r"\bwhich\s+happened\s+first\b|什么时候|哪天|哪一天|几月|哪年",
    re.IGNORECASE,
)
_LATEST = re.compile(
    r"\b(?:now|currently|current|these\s+days|at\s+the\s+moment|latest|still)\b|现在|目前|最近",
    re.IGNORECASE,
)

#: A time expression in a memory's text: the words that date an event.
TIME_EXPRESSION = re.compile(
    rf"\b(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|couple\s+of)\s+"
    r"(?:days?|weeks?|months?|years?)\s+(?:ago|from\s+now|later|before|after)\b|"
    r"\b(?:in|for)\s+(?:\d+|a|an|one|two|three|four|five|six|a\s+few|a\s+couple\s+of)\s+"
    r"(?:days?|weeks?|months?)\b|"
    r"\b(?:last|next|this|past)\s+(?:night|week|weekend|month|year|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|spring|summer|autumn|fall|winter)\b|"
    r"\b(?:yesterday|tomorrow|tonight|today|earlier\s+this\s+\w+)\b|"
    rf"\b(?:{_MONTH})\s+\d{{1,2}}\b|\b\d{{1,2}}\s+(?:{_MONTH})\b|\b(?:19|20)\d\d\b|"
    r"昨天|前天|明天|上周|下周|上个月|下个月|去年|明年|周末|\d+月|\d+号|\d+日|几天前|两周前|一周前",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Cues:
    start: datetime | None = None  # the period the query names: start <= when < end
    end: datetime | None = None
    asks_when: bool = False
    asks_latest: bool = False

    @property
    def period(self) -> bool:
        return self.start is not None or self.end is not None


def _month(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def _day(at: datetime) -> datetime:
    return at.replace(hour=0, minute=0, second=0, microsecond=0)


def _relative(kind: str, now: datetime) -> tuple[datetime, datetime]:
    today = _day(now)
    week = today - timedelta(days=today.weekday())
    if kind == "yesterday":
        return today - timedelta(days=1), today
    if kind == "last_week":
        return week - timedelta(days=7), week
    if kind == "this_week":
        return week, week + timedelta(days=7)
    if kind == "last_month":
        first = today.replace(day=1)
        return _month(*((first.year, first.month - 1) if first.month > 1 else (first.year - 1, 12)))
    if kind == "this_month":
        return _month(today.year, today.month)
    return datetime(now.year - 1, 1, 1, tzinfo=UTC), datetime(now.year, 1, 1, tzinfo=UTC)


def _period(query: str, now: datetime) -> tuple[datetime | None, datetime | None]:
    if m := _MONTH_YEAR.search(query):
        return _month(int(m[2]), _month_number(m[1]))
    if (m := _CN_MONTH_YEAR.search(query)) and 1 <= int(m[2]) <= 12:
        return _month(int(m[1]), int(m[2]))
    if m := _YEAR.search(query):
        year = int(m[1])
        return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)
    if m := _IN_MONTH.search(query):  # "in May": the last May up to now
        month = _month_number(m[1])
        return _month(now.year if month <= now.month else now.year - 1, month)
    if m := _AGO.search(query):
        n = int(m[1]) if m[1].isdigit() else _NUMBERS[m[1].lower()]
        days = {"day": 1, "week": 7, "month": 30}[m[2].lower()] * n
        centre = _day(now) - timedelta(days=days)
        slack = timedelta(days=max(1, days // 4))
        return centre - slack, centre + slack + timedelta(days=1)
    for pattern, kind in _RELATIVE:
        if pattern.search(query):
            return _relative(kind, now)
    return None, None


def _month_number(name: str) -> int:
    return [m[:3] for m in MONTHS].index(name[:3].lower()) + 1


def cues(query: str, now: datetime) -> Cues:
    start, end = _period(query, now)
    return Cues(start, end, bool(_WHEN.search(query)), bool(_LATEST.search(query)))


@memo.remembered(8192)
def dated(text: str) -> bool:
    """Whether ``text`` carries a time expression ("two weeks ago", "next month", "May 3").
    Remembered per text: a "when" recall asks it of every candidate, and the same turns come back
    recall after recall (the regex was ~19% of a recall's own CPU)."""
    return TIME_EXPRESSION.search(text) is not None
