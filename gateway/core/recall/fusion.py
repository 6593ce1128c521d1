"""Fusion of the candidates of one recall into one relevance score, calibrated on data:

    relevance(m) = w_dense · max(0, cosine(query, m)) + w_lexical · bm25(m) / bm25(best)

then bounded adjustments: a dialogue turn said by the person the query names, a hit inside the period the query names, or one that dates an event
when the query asks *when*, is boosted by a fixed factor; recency, importance and confidence move
a hit by at most ``nudge`` of its relevance, so they break near ties but never push a relevant
older memory out. The weights were tuned on the dev half of ``bench/dialogues`` (conversations
1-5); weighted reciprocal rank fusion measured ~1-2 points of R@10 lower at every k tried
(docs/BENCHMARKS-HISTORY.md, "Long-dialogue recall").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from gateway.core.model.models import Layer, Memory
from gateway.core.recall import query_text


@dataclass(frozen=True, slots=True)
class FusionWeights:
    dense: float = 0.8
    lexical: float = 0.2
    #: recency + importance + confidence move a hit by at most this fraction of its relevance
    nudge: float = 0.02
    #: a hit inside the period the query names
    period_boost: float = 0.3
    #: a hit carrying a time expression, for a query that asks when
    when_boost: float = 0.3
    #: a dialogue turn by the person the query names (matched on its speaker metadata, not
    #: through the vector: ``query_text``)
    speaker_boost: float = 0.3
    #: an event found only through an entity it shares with a top hit: its cosine, discounted
    entity_discount: float = 0.9
    #: a turn that asks ("how often are you allowed to give blood?") answers a question less
    #: often than its words suggest: it echoes it. At 0.8: long dialogue R@5 64.4 → 65.2, R@10
    #: 70.2 → 70.3; update dev set look-alikes answered 0.717 → 0.75, supersede recall the same
    #: (docs/BENCHMARKS-HISTORY.md, "An update judge by meaning")
    question_turn: float = 0.8

    #: dense and lexical weights for a query written mostly in CJK when the embedder is an
    #: English model (MiniLM: its vectors of Chinese text are weak; bench memqa). A multilingual
    #: embedder reads Chinese well: its CJK queries keep the weights above.
    cjk_dense: float = 0.5
    cjk_lexical: float = 0.5
    multilingual: bool = False
    #: ... and for a query written mostly in CJK when the embedder is multilingual: every layer
    #: ranks by its cosine, as short facts do. The lexical side only meets a Chinese paraphrase
    #: through the words it shares, and relative BM25 hands its best match, however poor, the
    #: whole lexical weight: with 0.8/0.2 the gateway found the right chat turn for 56 % of
    #: Chinese questions (R@5) where the embedder alone did for 84 % (bench/multilingual_eval.py,
    #: dev people; docs/BENCHMARKS-HISTORY.md, "Chinese questions rank by the cosine"). Since
    #: Chinese names are masked in the query's vector (``cjk_names``), any lexical weight costs:
    #: 0 / 0.01 / 0.02 / 0.05 gave R@5 355.6 / 352.2 / 350.0 / 341.2 summed over the four
    #: Chinese-question rows of the dev people ("Chinese names masked")
    multilingual_cjk_dense: float = 1.0
    multilingual_cjk_lexical: float = 0.0
    #: short facts and skills (semantic, procedural layers): a few words each, so their best
    #: lexical match is mostly a name they all share, and the cosine decides. With 0.8/0.2 the
    #: gateway's top hit was right for 46 % of paraphrased questions where MiniLM alone was for
    #: 70 % (bench/multilingual_eval.py, docs/BENCHMARKS-HISTORY.md)
    fact_dense: float = 1.0
    fact_lexical: float = 0.02

    def for_query(self, query: str) -> FusionWeights:
        """These weights, or the CJK ones for a query written mostly in CJK: the embedder's
        (an English one reads it poorly, a multilingual one well)."""
        if not query_text.mostly_cjk(query):
            return self
        dense, lexical = (
            (self.multilingual_cjk_dense, self.multilingual_cjk_lexical)
            if self.multilingual
            else (self.cjk_dense, self.cjk_lexical)
        )
        return replace(self, dense=dense, lexical=lexical, fact_dense=dense, fact_lexical=lexical)

    def relevance(self, dense: float, keyword: float, fact: bool = False) -> float:
        if fact:
            return self.fact_dense * max(0.0, dense) + self.fact_lexical * keyword
        return self.dense * max(0.0, dense) + self.lexical * keyword


def adjust(
    relevance: float, recency: float, importance: float, confidence: float, nudge: float
) -> float:
    """Relevance moved by at most ``nudge`` of itself, up for a recent, important, confident
    memory and down for an old, unimportant, doubtful one (each factor in 0..1)."""
    tie = (recency + importance + confidence) / 3 - 0.5  # -0.5 .. 0.5
    return relevance * (1 + 2 * nudge * tie)


@dataclass(slots=True)
class Candidates:
    """The candidates of one recall: cosine and relative BM25 per id, and the memories loaded."""

    dense: dict[str, float] = field(default_factory=dict)  # cosine to the query
    keyword: dict[str, float] = field(default_factory=dict)  # BM25 relative to the best
    memories: dict[str, Memory] = field(default_factory=dict)
    discount: dict[str, float] = field(default_factory=dict)  # found only through an entity

    def add_similar(self, mems: Sequence[Memory], vector: np.ndarray) -> None:
        """Memories and their cosine to the query (one matrix product; one without an
        embedding, or with one of another embedder's size after a switch that has not been
        re-embedded, gets no dense relevance)."""
        self.memories.update((m.id, m) for m in mems)
        embedded = [
            m for m in mems if m.embedding is not None and m.embedding.shape == vector.shape
        ]
        if embedded:
            sims = np.stack([m.embedding for m in embedded]) @ vector  # type: ignore[misc]
            for m, sim in zip(embedded, sims.tolist(), strict=True):
                self.dense.setdefault(m.id, sim)
        for m in mems:
            self.dense.setdefault(m.id, 0.0)

    def relevance(self, f: FusionWeights) -> dict[str, float]:
        return {
            i: f.relevance(self.dense.get(i, 0.0), self.keyword.get(i, 0.0), self._fact(i))
            * self.discount.get(i, 1.0)
            for i in self.dense.keys() | self.keyword.keys()
        }

    def _fact(self, memory_id: str) -> bool:
        m = self.memories.get(memory_id)
        return m is not None and m.layer in (Layer.SEMANTIC, Layer.PROCEDURAL)
