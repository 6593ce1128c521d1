"""Two embedders in one vector (embedder kind ``"minilm+use"``): all-MiniLM-L6-v2 (English, the
best on our long English dialogues) beside USE multilingual v3 (Chinese, and across languages).

A text's vector is ``[√a · minilm(text) ; √(1-a) · use(text)]`` (384 + 512 = 896-d, unit
length), where ``a`` is MiniLM's share for that text's language: ``ENGLISH_SHARE`` for a text
with no CJK, ``CJK_SHARE`` for one written mostly in CJK (MiniLM reads Chinese poorly), in
between by the share of CJK characters. The dot product of two such vectors is

    √(a_q·a_d) · cos_minilm + √((1-a_q)(1-a_d)) · cos_use

so an English question meets an English memory through both models, a Chinese one mostly
through USE, and one index holds it all (no second search, no score calibration between two).
The cost: both models embed every text (USE is ~8x faster than MiniLM here, so ~+15 %), and a
vector takes 2.3x the memory of MiniLM's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from gateway.core.ports.ports import Embedder

ENGLISH_SHARE = 0.5
CJK_SHARE = 0.1
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LETTER = re.compile(r"[^\W\d_]")


def minilm_share(text: str) -> float:
    """MiniLM's share of the text's vector: from ENGLISH_SHARE (no CJK) to CJK_SHARE (all)."""
    letters = len(_LETTER.findall(text))
    if not letters:
        return ENGLISH_SHARE
    cjk = len(_CJK.findall(text)) / letters
    return ENGLISH_SHARE + (CJK_SHARE - ENGLISH_SHARE) * min(1.0, cjk)


class PairedEmbedder:
    """``Embedder`` over two embedders, weighted per text by its language."""

    def __init__(self, first: Embedder, second: Embedder) -> None:
        self._first = first
        self._second = second
        self.dim = first.dim + second.dim
        self.name = f"{first.name}+{second.name}"

    def __repr__(self) -> str:
        return f"PairedEmbedder({self._first!r}, {self._second!r})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dim), dtype=np.float32)
        share = np.array([minilm_share(t) for t in texts], dtype=np.float32)[:, None]
        left = self._first.embed(texts) * np.sqrt(share)
        right = self._second.embed(texts) * np.sqrt(1.0 - share)
        return np.ascontiguousarray(np.hstack([left, right]), dtype=np.float32)
