"""Relative time in what someone said, resolved against when they said it: "yesterday" in a turn
of 2018-05-08 is 2018-05-07, "next month" is 2018-06, "last year" 2017, "on Friday" the Friday
before a past-tense turn or after a future one, "two weeks ago" that ISO week, "last summer" the
latest summer gone, "next semester" the coming term (January-April or September-December),
"right now" (and "now" in a plan) the turn's day, "15 days till graduation" that day. Labels: a day ``YYYY-MM-DD``, a week ``YYYY-Www``, a month
``YYYY-MM``, a year ``YYYY`` (a season or a semester: its year)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from gateway.core.recall.timecues import MONTHS

_MONTHS = MONTHS
_DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUM = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a couple": 2,
    "couple": 2, "a few": 3, "few": 3,
}  # fmt: skip
FUTURE_TENSE = re.compile(
    r"\b(?:will|'ll|going to|gonna|plans?|planning|about to|hoping to|hope to)\b", re.I
)
_PAST_TENSE = re.compile(r"\b(?:was|were|did|had|went|got|came|saw|took|made|\w+ed|ago)\b", re.I)

_PATTERNS = re.compile(
    r"\b(?:(?P<dby>the day before yesterday)|(?P<yday>yesterday|last night)|"
    r"(?P<today>today|tonight|this (?:morning|afternoon|evening)|right now|(?-i:rn))|(?P<now>now)|"
    r"(?P<tmrw>tomorrow|tmrw|tmr)|"
    r"(?P<rel>last|this|next) (?P<unit>week|month|year|weekend)|"
    r"(?P<srel>last|this|next|(?:for|in|over|during) the) (?P<season>summer|winter|spring|fall|"
    r"autumn)|(?P<term>last|this|next) (?P<semester>semester|term)|"
    r"(?P<n>\d+|a couple of|a couple|couple|a few|few|an|a|one|two|three|four|five|six|seven|"
    r"eight|nine|ten) (?P<agounit>day|week|month|year)s? ago|"
    r"(?P<tilln>\d+|a couple of|a couple|a few|two|three|four|five|six|seven|eight|nine|ten) "
    r"(?P<tillunit>day|week|month|year)s? (?:till|until|left (?:till|until|before)|before) "
    r"(?:my |the |our )?[a-z]+|"
    r"in (?P<inn>\d+|a couple of|a couple|a few|an|a|one|two|three|four|five|six|seven|eight|"
    r"nine|ten) (?P<inunit>day|week|month|year)s?|"
    r"(?:(?P<wrel>last|this|next|on) )?(?P<wday>monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)|"
    r"(?P<wkend>(?:over|on|during) the weekend)|"
    r"(?P<dmonth>" + "|".join(_MONTHS) + r") (?P<dday>[12]?\d|3[01])(?:st|nd|rd|th)?|"
    r"in (?P<month>" + "|".join(_MONTHS) + r")|in (?P<year>(?:19|20)\d\d))\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class When:
    label: str  # 2018-05-07 | 2018-W18 | 2018-05 | 2018
    start: datetime  # the first instant of that period (UTC)
    future: bool
    phrase: str  # the words that said it
    words: str  # how the rewritten statement says it: "on 2018-05-07"
    kept: bool = False  # the phrase stays, the time said after it ("right now, on 2018-05-07")

    def rewrite(self, text: str) -> str:
        """``text`` with the relative phrase replaced by the resolved time."""
        return self.rewrite_from(text, 0)[0]

    def rewrite_from(self, text: str, start: int) -> tuple[str, int]:
        """``text`` with the first relative phrase past ``start`` replaced by the resolved
        time ("right now" is kept, the date said beside it), and where the replacement ends;
        the time added at the end when the phrase is not in ``text``."""
        if self.kept:
            at = text.lower().find(self.phrase.lower(), start)
            if at >= 0:
                end = at + len(self.phrase)
                return f"{text[:end]}, {self.words}{text[end:]}", end + len(self.words) + 2
        else:
            m = re.compile(
                r"(\b(?:until|till|by|before|after|since|from)\s+)?"
                + (
                    ""
                    if re.match(r"(?:on|in|during|over|for)\b", self.phrase, re.I)
                    else r"(?:\b(?:on|in|during|over|at|about|around|like|almost|roughly|"
                    r"just|for)\s+)?"
                )
                + re.escape(self.phrase),
                re.I,
            ).search(text, start)
            if m is not None:
                said = m.group(1) + _bare(self.words) if m.group(1) else self.words
                return text[: m.start()] + said + text[m.end() :], m.start() + len(said)
        out = f"{text.rstrip('.')} ({self.words})"
        return out, len(out)


def rewrite(text: str, whens: list[When]) -> str:
    """``text`` with each of its relative phrases, in order, replaced by its resolved time."""
    at = 0
    for when in whens:
        text, at = when.rewrite_from(text, at)
    return text


def _bare(words: str) -> str:
    """ "on 2018-05-30" → "2018-05-30", after "until", "before", …"""
    return re.sub(r"^(?:on|in) ", "", words)


def resolve(text: str, at: datetime) -> When | None:
    """The first time reference in ``text``, resolved against ``at``; None when there is none."""
    found = resolve_all(text, at, first=True)
    return found[0] if found else None


def resolve_all(text: str, at: datetime, first: bool = False) -> list[When]:
    """Every time reference in ``text``, in order, resolved against ``at``."""
    at = at.astimezone(UTC) if at.tzinfo else at.replace(tzinfo=UTC)
    day = at.replace(hour=0, minute=0, second=0, microsecond=0)
    future = bool(FUTURE_TENSE.search(text))
    out = []
    for m in _PATTERNS.finditer(text):
        past = bool(_PAST_TENSE.search(text, 0, m.start())) and not future
        c = _Ctx(day, future, past, m.group(0))
        when = next((read(m, c) for group, read in _READERS if m.group(group)), None)
        if when is not None:
            out.append(when)
            if first:
                break
    return out


@dataclass(frozen=True, slots=True)
class _Ctx:
    day: datetime  # the turn's day, 00:00 UTC
    future: bool  # the statement is in the future tense
    past: bool  # ... in the past tense before the phrase
    phrase: str


def _near_day(m: re.Match[str], c: _Ctx) -> When:
    if m.group("dby"):
        return _day(c.day - timedelta(days=2), False, c.phrase)
    if m.group("yday"):
        return _day(c.day - timedelta(days=1), False, c.phrase)
    if m.group("tmrw"):
        return _day(c.day + timedelta(days=1), True, c.phrase)
    when = _day(c.day, c.future, c.phrase)
    return replace(when, kept=True) if m.group("today").lower() in ("right now", "rn") else when


def _now(m: re.Match[str], c: _Ctx) -> When | None:
    """A bare "now" dates a plan ("I'm going to do homework now"), not a state ("I drink
    coffee now")."""
    return replace(_day(c.day, True, c.phrase), kept=True) if c.future else None


def _relative(m: re.Match[str], c: _Ctx) -> When:
    step = {"last": -1, "this": 0, "next": 1}[m.group("rel").lower()]
    unit, ahead = m.group("unit").lower(), step > 0 or c.future
    if unit == "week":
        return _week(c.day + timedelta(weeks=step), ahead, c.phrase)
    if unit == "weekend":
        if step < 0:
            return _weekend_of(c.day - timedelta(days=(c.day.weekday() - 5) % 7 or 7), False, c)
        saturday = c.day + timedelta(days=(5 - c.day.weekday()) % 7 + 7 * step)
        return _weekend_of(saturday, ahead, c)
    if unit == "month":
        return _month(_add_months(c.day, step), ahead, c.phrase)
    return _year(c.day.year + step, ahead, c.phrase)  # a year, or a season in it


def _shifted(c: _Ctx, n: int, unit: str) -> When:
    ahead = n > 0
    if unit == "day":
        return _day(c.day + timedelta(days=n), ahead, c.phrase)
    if unit == "week":
        return _week(c.day + timedelta(weeks=n), ahead, c.phrase)
    if unit == "month":
        return _month(_add_months(c.day, n), ahead, c.phrase)
    return _year(c.day.year + n, ahead, c.phrase)


def _ago(m: re.Match[str], c: _Ctx) -> When:
    n = _NUM.get(m.group("n").lower()) or int(m.group("n"))
    return _shifted(c, -n, m.group("agounit").lower())


def _till(m: re.Match[str], c: _Ctx) -> When:
    """ "15 days till graduation": the day (week, …) it comes, said after the phrase."""
    n = _NUM.get(m.group("tilln").lower()) or int(m.group("tilln"))
    return replace(_shifted(c, n, m.group("tillunit").lower()), kept=True)


def _in(m: re.Match[str], c: _Ctx) -> When:
    n = _NUM.get(m.group("inn").lower()) or int(m.group("inn"))
    return _shifted(c, n, m.group("inunit").lower())


def _weekday(m: re.Match[str], c: _Ctx) -> When:
    target = _DAYS.index(m.group("wday").lower())
    rel = (m.group("wrel") or "").lower()
    if rel == "next" or (rel != "last" and c.future):
        delta = (target - c.day.weekday()) % 7 or 7
        return _day(c.day + timedelta(days=delta), True, c.phrase)
    delta = (c.day.weekday() - target) % 7 or (0 if rel == "this" else 7)
    return _day(c.day - timedelta(days=delta), False, c.phrase)


def _weekend(m: re.Match[str], c: _Ctx) -> When:
    """The weekend just gone, or the coming one in a future statement: its ISO week."""
    if c.future:
        return _weekend_of(c.day + timedelta(days=(5 - c.day.weekday()) % 7), True, c)
    return _weekend_of(c.day - timedelta(days=(c.day.weekday() - 5) % 7 or 7), False, c)


def _weekend_of(saturday: datetime, future: bool, c: _Ctx) -> When:
    """A weekend: labelled by its ISO week, said as "over the weekend of <its Saturday>"."""
    week = _week(saturday, future, c.phrase)
    if saturday.weekday() != 5:  # "last weekend" on a Sunday is the day before
        saturday -= timedelta(days=(saturday.weekday() - 5) % 7)
    return When(
        week.label, week.start, future, c.phrase, f"over the weekend of {saturday:%Y-%m-%d}"
    )


_SEASON_START = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


def _season(m: re.Match[str], c: _Ctx) -> When:
    """ "last summer": the latest one begun and over; "next"/"this"/"for the" summer in a
    future statement: the coming (or current) one; "over the summer" told in the past: the
    latest begun. Labelled by its year, said as "in summer 2018"."""
    name = m.group("season").lower()
    start, month, year = _SEASON_START[name], c.day.month, c.day.year
    rel = m.group("srel").lower()
    begun = year if month >= start else year - 1
    if rel == "last":
        when = year if month >= start + 3 else year - 1
    elif rel == "next":
        when = year if month < start else year + 1
    elif rel == "this" or c.future or not c.past:  # "in the fall": the coming one
        when = year if month < start + 3 else year + 1
        when = year - 1 if start == 12 and month <= 2 else when
    else:
        when = begun
    ahead = (when, start) > (year, month)
    label = datetime(when, start, 1, tzinfo=UTC)
    return When(str(when), label, ahead, c.phrase, f"in {name} {when}")


#: the terms of a school year: January-April, May-August (summer), September-December
_TERMS = (1, 5, 9)


def _semester(m: re.Match[str], c: _Ctx) -> When:
    """ "next semester" in November 2018: the one starting January 2019 (the summer term is
    passed over: "next semester" in March is September's); labelled by its year."""
    rel, year = m.group("term").lower(), c.day.year
    now = max(t for t in _TERMS if t <= c.day.month)
    if rel == "next":
        year, start = (year + 1, 1) if now == 9 else (year, 9)
    elif rel == "last":
        year, start = (year - 1, 9) if now == 1 else (year, 1)
    else:
        start = now
    first = datetime(year, start, 1, tzinfo=UTC)
    ahead = rel == "next" or (rel == "this" and c.future)
    return When(str(year), first, ahead, c.phrase, f"in the semester starting {first:%B %Y}")


def _dated(m: re.Match[str], c: _Ctx) -> When | None:
    """ "May 30th": this year's, or next year's when already gone and not told in the past."""
    month, dd = _MONTHS.index(m.group("dmonth").lower()) + 1, int(m.group("dday"))
    gone = (month, dd) < (c.day.month, c.day.day)
    year = c.day.year + (1 if gone and not c.past else 0) - (1 if c.past and not gone else 0)
    try:
        return _day(datetime(year, month, dd, tzinfo=UTC), not c.past, c.phrase)
    except ValueError:
        return None


def _named_month(m: re.Match[str], c: _Ctx) -> When:
    month = _MONTHS.index(m.group("month").lower()) + 1
    year = c.day.year + (1 if not c.past and month < c.day.month else 0)
    year -= 1 if c.past and month > c.day.month else 0
    return _month(datetime(year, month, 1, tzinfo=UTC), not c.past, c.phrase)


def _named_year(m: re.Match[str], c: _Ctx) -> When:
    year = int(m.group("year"))
    return _year(year, year > c.day.year, c.phrase)


_READERS = (
    ("now", _now),
    ("dby", _near_day),
    ("yday", _near_day),
    ("today", _near_day),
    ("tmrw", _near_day),
    ("unit", _relative),
    ("agounit", _ago),
    ("tillunit", _till),
    ("inunit", _in),
    ("wday", _weekday),
    ("wkend", _weekend),
    ("season", _season),
    ("semester", _semester),
    ("dmonth", _dated),
    ("month", _named_month),
    ("year", _named_year),
)


def _day(d: datetime, future: bool, phrase: str) -> When:
    return When(f"{d:%Y-%m-%d}", d, future, phrase, f"on {d:%Y-%m-%d}")


def _week(d: datetime, future: bool, phrase: str) -> When:
    year, week, _ = d.isocalendar()
    monday = d - timedelta(days=d.weekday())
    return When(f"{year}-W{week:02d}", monday, future, phrase, f"in the week of {monday:%Y-%m-%d}")


def _month(d: datetime, future: bool, phrase: str) -> When:
    start = d.replace(day=1)
    return When(f"{start:%Y-%m}", start, future, phrase, f"in {start:%B %Y}")


def _year(year: int, future: bool, phrase: str) -> When:
    return When(str(year), datetime(year, 1, 1, tzinfo=UTC), future, phrase, f"in {year}")


def _add_months(d: datetime, n: int) -> datetime:
    index = d.year * 12 + d.month - 1 + n
    return d.replace(year=index // 12, month=index % 12 + 1, day=1)
