"""One answer per thing said. A conversation reaches long-term memory three times
over: the turn itself (kept when its session is mined), the observation formed from it, and a
fact the observation or the extractor confirmed. A question finds any of them; the answer shows
one: the fact (what holds now) over the observation, the observation (third person, dated) over
the raw turn. The one shown takes the best rank of those it stands for, and an observation shown
for its turn quotes the turn's words in the memory block. An observation of something said in
passing ("Ryan has a mum", from a turn about his car's range) does not stand for its turn."""

from __future__ import annotations

import re

from gateway.core.model import provenance as pv
from gateway.core.model.models import Layer, Memory
from gateway.core.recall.scoring import Scored

#: a quote in the memory block is cut past this many characters
QUOTE_CHARS = 300


def said_once(scored: list[Scored]) -> list[Scored]:
    """``scored`` best first; returns it folded, best first."""
    facts = [s for s in scored if s.memory.layer is Layer.SEMANTIC]
    fact_texts = {_plain(s.memory.content) for s in facts}
    by_fact = {t: s for s in facts for t in pv.turns_of(s.memory.metadata)}
    by_observation: dict[str, Scored] = {}
    for s in scored:
        if _is(s.memory, pv.OBSERVATION_TYPE):
            turn = s.memory.metadata.get(pv.OBSERVED_TURN, "")
            if turn and turn not in by_fact and _plain(s.memory.content) not in fact_texts:
                by_observation.setdefault(turn, s)
    kept: list[Scored] = []
    for s in scored:
        mem = s.memory
        if _is(mem, pv.OBSERVATION_TYPE):
            turn = mem.metadata.get(pv.OBSERVED_TURN, "")
            if _plain(mem.content) in fact_texts or (turn and turn in by_fact):
                _lift(by_fact.get(turn), s)
                continue
            if turn and by_observation.get(turn) is not s:
                _lift(by_observation[turn], s)  # a second observation of the same turn
                continue
        elif _is(mem, pv.TURN_TYPE) and mem.metadata.get(pv.SAID_TURN):
            turn = mem.metadata[pv.SAID_TURN]
            owner = by_fact.get(turn) or by_observation.get(turn)
            if owner is not None and not _in_passing(owner.memory, mem):
                _lift(owner, s)
                if owner is by_observation.get(turn) and not owner.quote:
                    owner.quote = _quote(owner.memory, mem)
                continue
        kept.append(s)
    kept.sort(key=lambda s: s.score, reverse=True)
    return kept


#: an observation that quotes less than this share of a turn's words (of a turn this long) said
#: something in passing: the turn stays a hit of its own ("had to charge the Tesla twice on the
#: way to my mum's" is more than "Ryan has a mum")
PASSING_SHARE = 0.4
PASSING_MIN_WORDS = 8


def _in_passing(owner: Memory, turn: Memory) -> bool:
    if owner.layer is Layer.SEMANTIC or not owner.evidence:
        return False
    words = len(turn.content.split())
    return words >= PASSING_MIN_WORDS and len(owner.evidence[0].split()) < PASSING_SHARE * words


def _is(mem: Memory, type_: str) -> bool:
    return mem.layer is Layer.EPISODIC and mem.type == type_


def _lift(owner: Scored | None, folded: Scored) -> None:
    """The hit shown for others takes the best score among them."""
    if owner is not None and folded.score > owner.score:
        owner.score = folded.score
        owner.similarity = max(owner.similarity, folded.similarity)
        owner.keyword = max(owner.keyword, folded.keyword)


def _quote(observation: Memory, turn: Memory) -> str:
    """The words the observation quotes, else the turn's."""
    words = (observation.evidence[0] if observation.evidence else "") or turn.content
    return words if len(words) <= QUOTE_CHARS else words[: QUOTE_CHARS - 1] + "…"


def _plain(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.lower()).strip()
