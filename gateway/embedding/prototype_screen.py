"""The embedder as the second injection screen (issue 33 M5; docs/SECURITY.md "Quarantined:
prompt injection"): a text is an injection when its cosine similarity to the nearest known
attack reaches a threshold.

The known attacks are the tuning half of ``bench/injection/corpus.py``, embedded with the
screen's encoder and shipped per encoder (``PROTOTYPE_FILES``: float32, one unit row per attack);
the ``.json`` beside each holds the threshold, chosen on the tuning half only (the 98th
percentile of the tuning benign texts' scores: a 2 % false-positive budget), and the name of the
embedder the rows come from. With ``injection_embedder = "e5-multilingual"`` the screen uses the
gateway's own default encoder: a text the screen embeds is one the apply lane finds in the shared
cache, and no second model is loaded. ``python -m bench.injection.ship_prototypes --embedder …`` writes a pair;
``tests/unit/test_prototype_screen.py`` checks they still match the corpus."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gateway.core.ports.ports import Embedder

#: the encoders the screen has prototypes for (``injection_embedder``) and their files
PROTOTYPE_FILES = {
    "e5-multilingual": Path(__file__).with_name("injection_prototypes_e5.npy"),
    "use-multilingual": Path(__file__).with_name("injection_prototypes.npy"),
}
#: the default encoder of the screen (``injection_embedder``)
EMBEDDER_KIND = "use-multilingual"
REASON = "similar to a known attack"
#: what reads as a sentence: two words apart, or any Thai, CJK, kana or Hangul character (they
#: write without spaces). A lone token — an id, a key, a hash, base64 — is not judged: its
#: nearest attack is as likely the corpus's base64 attacks as anything (a random 32-digit hex
#: id reached the threshold 43 times in 200), and the rules decode base64 and hex themselves.
_SENTENCE = re.compile(r"\S\s+\S|[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def judged(text: str) -> bool:
    """Whether the screen judges ``text`` at all (it reads as a sentence)."""
    return _SENTENCE.search(text) is not None


@dataclass(frozen=True, slots=True)
class Prototypes:
    vectors: np.ndarray  # float32 (n, dim), rows L2-normalised
    threshold: float  # a score at or above it is an injection
    embedder: str  # the name of the embedder the rows come from (name/version)


def load_prototypes(kind: str = EMBEDDER_KIND) -> Prototypes:
    """The shipped prototypes of encoder ``kind`` and their threshold."""
    path = PROTOTYPE_FILES[kind]
    meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    vectors = np.load(path, allow_pickle=False).astype(np.float32, copy=False)
    if vectors.ndim != 2 or vectors.shape[0] != meta["count"]:
        raise ValueError(
            f"{path.name} holds {vectors.shape}, its settings say {meta['count']} rows"
        )
    return Prototypes(vectors, float(meta["threshold"]), str(meta["embedder"]))


class PrototypeScreen:
    """``InjectionScreen``: every text of a request that reads as a sentence (``judged``)
    embedded in one call (on a worker thread: the encoder holds the GIL while it tokenises),
    scored against the prototypes."""

    def __init__(self, *, embedder: Embedder, prototypes: Prototypes) -> None:
        if embedder.name != prototypes.embedder or embedder.dim != prototypes.vectors.shape[1]:
            raise ValueError(
                f"the injection prototypes come from {prototypes.embedder} "
                f"({prototypes.vectors.shape[1]}-d), the embedder is {embedder.name} "
                f"({embedder.dim}-d): regenerate them (python -m bench.injection.ship_prototypes)"
            )
        self._embedder = embedder
        self._prototypes = prototypes

    @property
    def threshold(self) -> float:
        return self._prototypes.threshold

    def scores(self, texts: Sequence[str]) -> np.ndarray:
        """Each text's cosine similarity to its nearest prototype (float32, in order)."""
        if not texts:
            return np.empty(0, dtype=np.float32)
        vectors = np.asarray(self._embedder.embed(list(texts)), dtype=np.float32)
        return (vectors @ self._prototypes.vectors.T).max(axis=1)

    async def find(self, texts: Sequence[str]) -> list[str]:
        out = [""] * len(texts)
        wanted = [i for i, t in enumerate(texts) if judged(t)]
        if not wanted:
            return out
        scores = await asyncio.to_thread(self.scores, [texts[i] for i in wanted])
        for i, score in zip(wanted, scores, strict=True):
            if score >= self._prototypes.threshold:
                out[i] = f"{REASON}, score {score:.2f}"
        return out
