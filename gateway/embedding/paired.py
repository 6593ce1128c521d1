"""Two embedders in one vector (embedder kind ``"minilm+use"``): all-MiniLM-L6-v2 (English, the
best on our long English dialogues) beside USE multilingual v3 (Chinese, and across languages).

A text's vector is ``[√a · minilm(text) ; √(1-a) · use(text)]`` (384 + 512 = 896-d, unit
length), where ``a`` is MiniLM's share: ``STORED_SHARE`` (0.5) for every stored text, and for a
query by its language: ``ENGLISH_SHARE`` with no CJK, ``QUERY_CJK_SHARE`` (0: USE alone, MiniLM
reads Chinese poorly) for one written in CJK, in between by the share of CJK characters. The dot
product of a query and a stored text is

    √(a_q·a_d) · cos_minilm + √((1-a_q)(1-a_d)) · cos_use

so an English question meets a memory through both models, a Chinese one through USE, and one
index holds it all (no second search, no score calibration between two).
The cost: both models embed every text (USE is ~8x faster than MiniLM here, so ~+15 %), and a
vector takes 2.3x the memory of MiniLM's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gateway.core.ports.ports import Embedder

from .texts import cjk_share as text_cjk_share

ENGLISH_SHARE = 0.5
CJK_SHARE = 0.1
#: a query in Chinese leaves MiniLM out (USE alone); a stored text is always half and half
QUERY_CJK_SHARE = 0.0
STORED_SHARE = 0.5


def minilm_share(text: str, cjk_share: float = CJK_SHARE) -> float:
    """MiniLM's share of the text's vector: from ENGLISH_SHARE (no CJK) to ``cjk_share`` (all)."""
    return ENGLISH_SHARE + (cjk_share - ENGLISH_SHARE) * text_cjk_share(text)


class PairedEmbedder:
    """``Embedder`` over two embedders: a stored text half and half (``embed``), a query weighted
    by its language (``embed_queries``: English half and half, Chinese USE alone). Weighting the
    stored texts by language too made a Chinese question prefer Chinese facts in a mixed store
    (docs/BENCHMARKS-HISTORY.md, "Recall in Chinese and across languages")."""

    def __init__(self, first: Embedder, second: Embedder) -> None:
        self._first = first
        self._second = second
        self.dim = first.dim + second.dim
        #: the last part names how stored texts are weighted: vectors of another weighting are
        #: another space (a switch re-embeds them, ``core/apply/reembed.py``)
        self.name = f"{first.name}+{second.name}+stored-{STORED_SHARE}"

    def __repr__(self) -> str:
        return f"PairedEmbedder({self._first!r}, {self._second!r})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._weighted(texts, [STORED_SHARE] * len(texts))

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._weighted(texts, [minilm_share(t, QUERY_CJK_SHARE) for t in texts])

    def _weighted(self, texts: Sequence[str], shares: Sequence[float]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        share = np.array(shares, dtype=np.float32)[:, None]
        left = self._first.embed(texts) * np.sqrt(share)
        right = self._second.embed(texts) * np.sqrt(1.0 - share)
        return np.ascontiguousarray(np.hstack([left, right]), dtype=np.float32)
