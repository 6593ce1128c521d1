"""Whose is it: a statement about someone *of* the person a question names — their brother,
husband, son, colleague ("Noah's brother lives in Bristol", "陈静的儿子对花生过敏") — is no
answer to a question about that person themself ("Where does Noah live?", "陈静对什么过敏？"),
however near in meaning: it ranks below by ``OTHERS_FACTOR``. Unless the question names that
someone ("Where does Noah's brother live?"). A thing of theirs is left alone: "Maya's new job is
at Google" answers "Where does Maya work?". The people are a closed class (``RELATIONS``).

The subject is read from the statement's structure (``truth/subjects.py``); semantic facts and
observations only (a turn's words are its speaker's, not a statement about a subject).
Nothing is stored: the order changes, the hits stay. Measured on the recency dev set
(bench/truth/recency-dev.json): with e5 the brother's city and the husband's job ranked first
for "Where does Noah live?" and "What is Grace's job?"; docs/BENCHMARKS-HISTORY.md, "Whose is it".
"""

from __future__ import annotations

import re

from gateway.core.model import provenance as pv
from gateway.core.model.models import Layer, Memory
from gateway.core.recall.scoring import Scored
from gateway.core.truth.relations import RELATIONS, RELATIONS_ZH
from gateway.core.truth.subjects import subject

#: a statement about someone of the person asked about keeps this share of its score
OTHERS_FACTOR = 0.8
_WORD = re.compile(r"[^\W\d_]+")
_CJK = re.compile(r"[\u3400-\u9fff]")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def _mentions(query: str, words: set[str], phrase: str) -> bool:
    """``phrase`` (lower case) is in the query: as a substring in CJK, else all its words."""
    if _CJK.search(phrase):
        return phrase in query
    return bool(phrase) and _words(phrase) <= words


def someone_elses(query: str, mem: Memory) -> bool:
    """``mem`` states something of the person the query names, not of them, and the query does
    not ask about that something."""
    if mem.layer is not Layer.SEMANTIC and mem.type != pv.OBSERVATION_TYPE:
        return False
    found = subject(mem.content)
    head, sep, tail = found.partition("'s ")
    if not sep:
        head, sep, tail = found.partition("的")
    if not sep or not head or not tail:
        return False
    words = _words(query)
    if not _mentions(query, words, head):
        return False
    if _CJK.search(tail):
        who = next((r for r in RELATIONS_ZH if tail.startswith(r)), "")
        return bool(who) and who not in query
    relation = [w for w in _WORD.findall(tail.lower()) if w in RELATIONS]
    return bool(relation) and not (set(relation) & words)


def others_below(hits: list[Scored], query: str) -> list[Scored]:
    """``hits`` with every statement of someone else's (``someone_elses``) at
    ``OTHERS_FACTOR`` of its score, re-sorted."""
    changed = False
    for h in hits:
        if someone_elses(query, h.memory):
            h.score *= OTHERS_FACTOR
            changed = True
    if changed:
        hits.sort(key=lambda h: h.score, reverse=True)
    return hits
