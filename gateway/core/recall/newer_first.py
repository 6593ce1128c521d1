"""Recency when undecided: two statements in an answer about the same subject
(``truth/subjects.py``) and near in meaning (their cosine at least ``COMPETE_COSINE``) that the
slots did not settle compete — the newer ranks first, and the older is shown as "earlier, as of
<its date>" (in its hit's metadata, ``provenance.EARLIER``, and in the memory block). Nothing is
superseded: both stay active, the order and the label change. A pair holds a semantic fact and a
fact or another statement that holds (an observation of kind fact or preference); turns, events
and plans never compete (ordering a user's turns or observations by time cost 2-4 points of
long-dialogue R@10 on the user's own words: each was true when it was said).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from typing import Protocol

import numpy as np

from gateway.core.model import provenance as pv
from gateway.core.model.models import Layer, Memory
from gateway.core.recall.scoring import Scored
from gateway.core.truth.subjects import USER, subject

#: how near two statements about one subject must be to compete (MiniLM cosine: an update and the
#: fact it changes sit at 0.46-0.92 on the dev sets, unrelated attributes of a person lower)
COMPETE_COSINE = 0.5
#: observations that state something that holds (not an event or a plan)
STABLE_KINDS = ("fact", "preference")


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


def statement_subject(mem: Memory, own: set[str]) -> str:
    """The subject of a memory that can compete ("" for anything else)."""
    stable = mem.metadata.get(pv.OBSERVED_KIND, "") in STABLE_KINDS
    if mem.layer is Layer.SEMANTIC or (mem.type == pv.OBSERVATION_TYPE and stable):
        found = subject(mem.content)
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
) -> list[Scored]:
    """``hits`` (best first) with every competing pair ordered newer first, the older labelled;
    a pair the ``query`` tells apart (``asks_for_the_older``) keeps its order."""
    own = owners(namespaces)
    groups: defaultdict[tuple[str, str], list[Scored]] = defaultdict(list)
    for h in hits:
        subj = statement_subject(h.memory, own)
        if subj:
            groups[(h.memory.namespace, subj)].append(h)
    pairs = [g for g in groups.values() if len(g) > 1]
    if not pairs:
        return hits
    found = await vectors(sorted({h.memory.id for g in pairs for h in g}))
    changed = False
    for group in pairs:
        group.sort(key=lambda h: h.memory.when)
        for i, older in enumerate(group):
            for newer in group[i + 1 :]:
                if not _compete(older.memory, newer.memory, found, cosine, query):
                    continue
                _label(older, newer)
                if newer.score <= older.score:
                    newer.score = older.score + 1e-6
                changed = True
    if changed:
        hits.sort(key=lambda h: h.score, reverse=True)
    return hits


def _compete(
    older: Memory, newer: Memory, vectors: dict[str, np.ndarray], cosine: float, query: str
) -> bool:
    """Whether two statements about one subject compete for the answer to ``query``."""
    a, b = vectors.get(older.id), vectors.get(newer.id)
    if a is None or b is None or newer.when <= older.when or _same(older, newer):
        return False
    if Layer.SEMANTIC not in (older.layer, newer.layer):
        return False  # two observations are two events, each true when it happened
    return float(np.dot(a, b)) >= cosine and not asks_for_the_older(query, older, newer)


def _same(a: Memory, b: Memory) -> bool:
    return a.content.strip().lower() == b.content.strip().lower()


def _label(older: Scored, newer: Scored) -> None:
    if pv.EARLIER in older.memory.metadata:
        return
    older.memory = older.memory.with_changes(
        metadata={**older.memory.metadata, pv.EARLIER: newer.memory.id}
    )
    older.earlier = True
