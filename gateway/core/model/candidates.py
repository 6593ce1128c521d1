"""What memory formation works with (seed 000 §3.4, §5.1–5.2): candidate facts an extractor
found in a session's turns — each with a normalised key, the quoted words and the turn ids they
came from — and the provenance every formed memory carries."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from gateway.core.model.models import Turn

FACT_TYPES = ("preference", "attribute", "constraint")
#: metadata of a formed memory lives under this reserved prefix (callers cannot write it)
PROVENANCE_PREFIX = "memgate.formed."
SESSION = PROVENANCE_PREFIX + "session"  # the session whose turns formed this version
SESSIONS = PROVENANCE_PREFIX + "sessions"  # every session that confirmed it
TURNS = PROVENANCE_PREFIX + "evidence_turns"  # turn ids of the quoted words
EXTRACTOR = PROVENANCE_PREFIX + "extractor"  # name/version of the extractor
CONFIDENCE = PROVENANCE_PREFIX + "confidence"
KEY = PROVENANCE_PREFIX + "key"
VALUE = PROVENANCE_PREFIX + "value"
REASON = PROVENANCE_PREFIX + "reason"  # two-sessions | explicit | correction
TRIGGER = PROVENANCE_PREFIX + "trigger"  # what ran the extraction: end-session, idle, every-n
_KEY = re.compile(r"^[^\W_A-Z][\w]*(?:\.[^\W_A-Z][\w]*){1,3}$")


def fact_key(*parts: str) -> str:
    """A normalised fact key, e.g. ``fact_key("user", "diet")`` → ``user.diet``."""
    return ".".join(slug(p) for p in parts if slug(p))


def slug(text: str) -> str:
    """Lower-case letters, digits and ``_`` (CJK kept as is), at most 40 chars."""
    out = re.sub(r"[^\w]+", "_", text.strip().lower()).strip("_")
    return out[:40]


def valid_key(key: str) -> bool:
    return bool(_KEY.match(key)) and len(key) <= 120


def normalise_value(value: str) -> str:
    """How two values are compared: case, spacing and a leading article do not count."""
    v = re.sub(r"\s+", " ", value.strip().lower()).strip(" .,!?;:。，！？；：\"'“”")
    return re.sub(r"^(?:a|an|the|my)\s+", "", v)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One candidate fact. ``statement`` is the readable fact; ``quote`` the user's own words
    (a span of the turns ``turn_ids``)."""

    key: str
    value: str
    statement: str
    type: str
    confidence: float
    quote: str
    turn_ids: tuple[str, ...]
    extractor: str
    explicit: bool = False  # "remember …" / "记住…" / "以后都…": promoted at once
    correction: bool = False  # "actually, …" / "不是…而是…"
    importance: float = 0.6

    @property
    def pending_key(self) -> str:
        """What two sessions must both yield to confirm it: the key and the value."""
        return pending_key(self.key, self.value)


OBSERVATION_TYPES = ("event", "plan", "preference", "fact")


@dataclass(frozen=True, slots=True)
class Observation:
    """One informative statement a speaker made, in the third person with their name and any
    relative time resolved (``when``: 2018-05-07 | 2018-W18 | 2018-05 | 2018, '' when none was
    said); ``event_time`` is that time, or the turn's. ``stable`` ones (facts, preferences) may
    become semantic memories; every one is an episodic event."""

    text: str
    type: str  # one of OBSERVATION_TYPES
    stable: bool
    when: str
    event_time: datetime
    turn_ids: tuple[str, ...]
    quote: str
    confidence: float
    entities: list[str] = field(default_factory=list)
    speaker: str = ""


@dataclass(frozen=True, slots=True)
class SessionTurns:
    """A session's turns not yet mined, as recorded for formation (positions ``after``+1 ..
    ``upto``)."""

    namespace: str
    session_id: str
    after: int
    upto: int
    turns: list[Turn] = field(default_factory=list)


#: per session, the ids of the last this many mined turns are remembered (then dropped with the
#: session's transcript by erasure), so a turn recorded again after it was mined stores nothing
FORMED_IDS_KEPT = 4096


@dataclass(frozen=True, slots=True)
class DueSession:
    """A session with turns waiting to be mined, and why it is due."""

    namespace: str
    session_id: str
    upto: int
    new_turns: int
    idle: bool


def quote_in(turns: list[Turn] | tuple[Turn, ...], quote: str) -> tuple[str, ...]:
    """The ids of the turns that contain ``quote`` (spacing and case aside); () when none does."""
    q = _squash(quote)
    if not q:
        return ()
    return tuple(t.id for t in turns if q in _squash(t.content))


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


#: pending-fact keys of formed candidates start with this (``Facts`` keys are plain text)
PENDING_PREFIX = "formed:"


def pending_key(key: str, value: str) -> str:
    return f"{PENDING_PREFIX}{key}={normalise_value(value)}"


def key_of_pending(pending: str) -> str:
    """The memory's fact key of a pending-fact key (the key itself when not a formed one)."""
    if pending.startswith(PENDING_PREFIX):
        return pending[len(PENDING_PREFIX) :].split("=", 1)[0]
    return pending


def evidence_item(turn_ids: tuple[str, ...] | list[str], quote: str) -> str:
    """One pending-fact evidence entry of a formed candidate: its turn ids, a tab, the quote."""
    return f"{','.join(turn_ids)}\t{quote}"


def split_evidence(item: str) -> tuple[list[str], str]:
    """(turn ids, quote) of an ``evidence_item``; ([], item) for plain evidence text."""
    if "\t" not in item:
        return [], item
    ids, quote = item.split("\t", 1)
    return [i for i in ids.split(",") if i], quote
