"""Recency when undecided: two statements in an answer about the same person
(``truth/subjects.py``) compete when the newer changes the older — the newer ranks first, and the
older is shown as "earlier, as of <its date>" (in its hit's metadata, ``provenance.EARLIER``, and
in the memory block). Nothing is superseded: both stay active, the order and the label change.

What changes what is judged by meaning when the embedder has a trained head
(``truth/judge.py``: the two statements' vectors and the question's): above its threshold a pair
competes; the structural rule — the same subject ("Omar's team meeting") and a cosine of at least
``COMPETE_COSINE`` — also makes one compete unless the head is sure it does not (its veto);
without a head the rule alone decides. A statement is a semantic fact, an observation that holds (kind fact or preference) or,
as the newer of a pair only, a turn the user said: "I've been at the library a week now" outranks
an older note that they work at a café. Turns never compete with turns, nor observations with
observations: each was true when it was said (ordering a user's turns or observations by time cost
2-4 points of long-dialogue R@10 on the user's own words).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol

import numpy as np

from gateway.core.model import provenance as pv
from gateway.core.model.models import Layer, Memory
from gateway.core.recall.scoring import Scored
from gateway.core.truth.judge import UpdateJudge
from gateway.core.truth.same_person import UNREAD, subjects_meet, turn_meets
from gateway.core.truth.subjects import USER, subject

#: how near two statements with the same subject must be to compete when no judge is loaded
#: (MiniLM cosine: an update and the fact it changes sit at 0.46-0.92 on the dev sets)
COMPETE_COSINE = 0.5
#: statements dated closer than this are of one moment ("A batch of notes about Sam"): neither
#: changes the other (a correction said in a chat comes minutes later at least)
SAME_TIME = timedelta(seconds=30)
#: observations that state something that holds (not an event or a plan)
STABLE_KINDS = ("fact", "preference")
#: metadata keys of a turn's speaker and role (``formation/transcript.py``)
_SPEAKER, _ROLE = "speaker", "role"


class Vectors(Protocol):
    async def __call__(self, ids: list[str]) -> dict[str, np.ndarray]: ...


def owners(namespaces: Iterable[str]) -> set[str]:
    """The names a user namespace's own user goes by: ``user/maya-1f3`` → ``maya-1f3``, ``maya``."""
    names = set()
    for ns in namespaces:
        kind, _, rest = ns.partition("/")
        if kind == "user" and rest:
            first = rest.split("/")[0].lower()
            names |= {first, first.replace("_", "-").split("-")[0].split(".")[0].split("@")[0]}
    return {n for n in names if n}


def users_turn(mem: Memory, own: set[str]) -> bool:
    """A dialogue turn the namespace's own user said."""
    if mem.layer is not Layer.EPISODIC or not mem.source_session:
        return False
    speaker = mem.metadata.get(_SPEAKER, "").strip().lower()
    return mem.metadata.get(_ROLE, "") == "user" or (bool(speaker) and speaker in own)


def _turn_text(mem: Memory) -> str:
    speaker = mem.metadata.get(_SPEAKER, "").strip()
    text = mem.content.strip()
    return text[len(speaker) + 1 :].strip() if speaker and text.startswith(f"{speaker}:") else text


def statement_subject(mem: Memory, own: set[str]) -> str:
    """The subject of a memory that can compete ("" for anything else): a user's turn with no
    subject of its own ("finally off nights, on the day roster") is about its speaker."""
    stable = mem.metadata.get(pv.OBSERVED_KIND, "") in STABLE_KINDS
    if mem.layer is Layer.SEMANTIC or (mem.type == pv.OBSERVATION_TYPE and stable):
        found = subject(mem.content) or UNREAD
    elif users_turn(mem, own):
        found = subject(_turn_text(mem), USER) or USER
    else:
        return ""
    head, sep, tail = found.partition("'s ")
    if not sep:
        head, sep, tail = found.partition("的")
    if head in own:
        head = USER
    return f"{head}{sep}{tail}" if found else ""


_TOKEN = re.compile(r"[A-Za-z0-9]+")
_DIGITS = re.compile(r"[0-9]")


def _values(text: str) -> set[str]:
    """What a statement names as a value, lower-cased: numbers and capitalised words after its
    first one ("Berlin", "ThinkPad", "3", "14th")."""
    words = _TOKEN.findall(text)
    return {
        w.lower() for i, w in enumerate(words) if _DIGITS.search(w) or (i > 0 and w[:1].isupper())
    }


def asks_for_the_older(query: str, older: Memory, newer: Memory) -> bool:
    """The question names a value only the older statement has ("Fact number *3*", "is Maya
    still at *Blue Bottle*?"): it asks for that one, and the newer is no answer to it. Words of
    the attribute ("What is Tara *training* for?") do not count: questions reuse them."""
    named = {w.lower() for w in _TOKEN.findall(query)}
    return bool(named & (_values(older.content) - _values(newer.content)))


async def newer_first(
    hits: list[Scored],
    namespaces: Iterable[str],
    vectors: Vectors,
    cosine: float = COMPETE_COSINE,
    query: str = "",
    judge: UpdateJudge | None = None,
    query_vector: np.ndarray | None = None,
) -> list[Scored]:
    """``hits`` (best first) with every competing pair ordered newer first, the older labelled;
    a pair the ``query`` tells apart (``asks_for_the_older``) keeps its order."""
    own = owners(namespaces)
    by_ns: defaultdict[str, list[tuple[Scored, str]]] = defaultdict(list)
    for h in hits:
        subj = statement_subject(h.memory, own)
        if subj:
            by_ns[h.memory.namespace].append((h, subj))
    groups = [g for g in by_ns.values() if len(g) > 1]
    if not groups:
        return hits
    found = await vectors(sorted({h.memory.id for g in groups for h, _ in g}))
    judged = _Judged(own, found, cosine, query, judge, query_vector)
    changed = False
    for group in groups:
        group.sort(key=lambda g: g[0].memory.when)
        for i, (older, s_old) in enumerate(group):
            for newer, s_new in group[i + 1 :]:
                if not judged.compete(older.memory, s_old, newer.memory, s_new):
                    continue
                _label(older, newer)
                if newer.score <= older.score:
                    newer.score = older.score + 1e-6
                changed = True
    if changed:
        hits.sort(key=lambda h: h.score, reverse=True)
    return hits


@dataclass(frozen=True, slots=True)
class _Judged:
    """What decides whether two statements of one recall compete."""

    own: set[str]
    vectors: dict[str, np.ndarray]
    cosine: float
    query: str
    judge: UpdateJudge | None
    query_vector: np.ndarray | None

    def compete(self, older: Memory, s_old: str, newer: Memory, s_new: str) -> bool:
        a, b = self.vectors.get(older.id), self.vectors.get(newer.id)
        if a is None or b is None or not _kinds_compete(older, newer, self.own):
            return False
        if asks_for_the_older(self.query, older, newer):
            return False
        said = users_turn(newer, self.own)
        if said:
            meet = turn_meets(s_old, _turn_text(newer))
        else:
            meet = subjects_meet(s_old, s_new, (older.content, newer.content), self.own)
        if not meet:
            return False
        judge = self.judge
        p = judge.probability(a, b, self.query_vector) if judge is not None else None
        if judge is not None and p is not None and p >= judge.threshold:
            return True
        # the structural rule (a user's turn is left to the judge), unless the judge is sure
        # they do not compete
        ruled = not said and float(np.dot(a, b)) >= self.cosine
        return ruled and (judge is None or p is None or p >= judge.veto)


def _kinds_compete(older: Memory, newer: Memory, own: set[str]) -> bool:
    """A semantic fact is one of the two; a user's turn only as the newer; never the same text;
    never two written within ``SAME_TIME`` of each other (a batch of notes: neither is newer)."""
    if newer.when - older.when < SAME_TIME or _same(older, newer) or users_turn(older, own):
        return False
    return Layer.SEMANTIC in (older.layer, newer.layer)


def _same(a: Memory, b: Memory) -> bool:
    return a.content.strip().lower() == b.content.strip().lower()


def _label(older: Scored, newer: Scored) -> None:
    if pv.EARLIER in older.memory.metadata:
        return
    older.memory = older.memory.with_changes(
        metadata={**older.memory.metadata, pv.EARLIER: newer.memory.id}
    )
    older.earlier = True
