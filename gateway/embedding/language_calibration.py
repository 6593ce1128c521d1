"""One space for two languages: a model's vectors centred, and a query's score against a text of
the other language shifted by a constant, inside the vectors themselves (no change to the
index or the recall core).

A multilingual model puts a text's language in its vector: multilingual-e5-small scores an
unrelated Chinese fact 0.09 closer to a Chinese question than an unrelated English one, so in
a store holding both, every fact in the question's language comes first (R@5 50 on
``bench/multilingual_eval.py``'s mixed store). Two fixes, each a constant fitted once on the
dev people's texts (``python -m bench.language_calibration``; never on the held-out people):

* **Centring**: the mean vector of the dev texts (both languages) is subtracted and the rest
  renormalised. e5's cosines all sit in 0.7–0.95; centred they spread like MiniLM's (unrelated
  ~0, the nearest other fact of the same person at most ~0.7), so ``dedup_threshold`` keeps
  its meaning.
* **Language shift**: ``shift[q][d]`` is how much lower an unrelated text in language ``d``
  scores against a question in language ``q`` than one in the question's own language (mean
  centred cosine over unrelated pairs); it is added back to every such pair.

A stored text's vector is ``[c ; ε·(1-z) ; ε·z]`` and a query's ``[c ; s_en/ε ; s_zh/ε]``,
where ``c`` is the centred unit vector, ``z`` the share of CJK among the text's letters and
``s_d = (1-z_q)·shift[en][d] + z_q·shift[zh][d]``, so that

    query · text = c_q · c_t + (1-z_t)·s_en + z_t·s_zh

exactly the shifted score, in one inner product. Two stored texts meet at ``c·c' + ε²`` or
less (ε = 0.01: at most 1e-4 off their cosine).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .texts import cjk_share

EPSILON = 0.01
LANGUAGES = ("en", "zh")


@dataclass(frozen=True, slots=True)
class Calibration:
    """The two fitted constants and the name of the set they were fitted on."""

    mean: np.ndarray  # (dim,) float32
    #: shift[q][d]: added to a question in language q meeting a text in language d
    shift: dict[str, dict[str, float]]
    version: str

    @classmethod
    def load(cls, path: Path) -> Calibration:
        raw = json.loads(path.read_text())
        shift = {q: {d: float(raw["shift"][q][d]) for d in LANGUAGES} for q in LANGUAGES}
        return cls(np.asarray(raw["mean"], dtype=np.float32), shift, str(raw["version"]))

    def save(self, path: Path) -> None:
        path.write_text(
            json.dumps(
                {
                    "version": self.version,
                    "shift": self.shift,
                    "mean": [round(float(x), 7) for x in self.mean],
                },
                indent=1,
            )
            + "\n"
        )

    @property
    def dim(self) -> int:
        """The size of a calibrated vector: the model's and the two language slots."""
        return int(self.mean.shape[0]) + len(LANGUAGES)

    def centred(self, vectors: np.ndarray) -> np.ndarray:
        out = np.asarray(vectors, dtype=np.float32) - self.mean
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    def stored(self, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """Vectors of stored texts: centred, then ``ε·(1-z), ε·z``."""
        z = np.array([cjk_share(t) for t in texts], dtype=np.float32)[:, None]
        tail = EPSILON * np.hstack([1.0 - z, z])
        return np.ascontiguousarray(np.hstack([self.centred(vectors), tail]), dtype=np.float32)

    def queries(self, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """Vectors of queries: centred, then each language's shift over ε, mixed by ``z``."""
        z = np.array([cjk_share(t) for t in texts], dtype=np.float32)[:, None]
        table = np.array([[self.shift[q][d] for d in LANGUAGES] for q in LANGUAGES])
        tail = (np.hstack([1.0 - z, z]) @ table) / EPSILON
        return np.ascontiguousarray(np.hstack([self.centred(vectors), tail]), dtype=np.float32)


def fit(
    docs: Sequence[tuple[np.ndarray, str, str]],
    queries: Sequence[tuple[np.ndarray, str, str, set[int]]],
    version: str,
) -> Calibration:
    """Fit on raw model vectors: ``docs`` (vector, language, group), ``queries`` (vector,
    language, group, the indexes of the docs that answer it). The shift is measured on the
    unrelated pairs within a group (one person's store, as recall meets them)."""
    every = np.array([d[0] for d in docs] + [q[0] for q in queries], dtype=np.float32)
    mean = every.mean(axis=0)
    probe = Calibration(mean, {q: dict.fromkeys(LANGUAGES, 0.0) for q in LANGUAGES}, version)
    dv = probe.centred(np.array([d[0] for d in docs]))
    qv = probe.centred(np.array([q[0] for q in queries]))
    sims = qv @ dv.T
    sums = {(q, d): [0.0, 0] for q in LANGUAGES for d in LANGUAGES}
    for i, (_, ql, group, answers) in enumerate(queries):
        for j, (_, dl, doc_group) in enumerate(docs):
            if doc_group == group and j not in answers:
                acc = sums[(ql, dl)]
                acc[0] += float(sims[i, j])
                acc[1] += 1
    means = {k: total / max(n, 1) for k, (total, n) in sums.items()}
    shift = {q: {d: round(means[(q, q)] - means[(q, d)], 6) for d in LANGUAGES} for q in LANGUAGES}
    return Calibration(mean.astype(np.float32), shift, version)
