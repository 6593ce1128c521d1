"""Whether a newer statement changes an older one, judged by meaning rather than by a vocabulary:
a logistic head over the two statements' vectors, trained on labelled pairs that name no slot
(``bench/judge_train.py``; the pairs are ``bench/truth/judge-pairs-*.json``, written by hand by
people who never read the slot rules). It reads "Maya works at Blue Bottle" then "my first week at
the library was way calmer than pulling shots" as an update, and "Tom lives in Milan" then "Tom's
sister lives in Rome" or "Sarah drives a Mazda" then "Sarah bought a folding bike" as not.

The head belongs to one embedder (its vectors are its input): the gateway loads the head shipped
for its embedder, and with none (an embedder no head was trained for) recall keeps the structural
rule of ``recall/newer_first.py``. A verdict costs one dot product per pair on vectors the stores
already hold: no model run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def features(older: np.ndarray, newer: np.ndarray, query: np.ndarray | None = None) -> np.ndarray:
    """The head's input for pairs of unit vectors (rows of ``older`` and ``newer``, or one pair):
    what the two share (their product), where they differ (the absolute difference), which way
    (the signed difference) and their cosine; with the ``query`` they both answer, what each
    shares with it and their two cosines to it."""
    a = np.atleast_2d(np.asarray(older, dtype=np.float32))
    b = np.atleast_2d(np.asarray(newer, dtype=np.float32))
    cos = np.sum(a * b, axis=1, keepdims=True)
    parts = [a * b, np.abs(a - b), b - a, cos]
    if query is not None:
        q = np.atleast_2d(np.asarray(query, dtype=np.float32))
        qa = np.sum(q * a, axis=1, keepdims=True)
        qb = np.sum(q * b, axis=1, keepdims=True)
        parts += [q * a, q * b, qa, qb, qb - qa]
    return np.hstack(parts).astype(np.float32)


@dataclass(frozen=True)
class UpdateJudge:
    """A trained head: ``P(update) = sigmoid(features · weights + bias)``; ``threshold`` is the
    probability above which the newer statement is taken to change the older. A head trained
    with the question reads it too (``reads_query``)."""

    embedder: str
    weights: np.ndarray
    bias: float
    threshold: float
    #: the vector size the head reads (a vector of another size is never judged)
    dim: int
    #: below this probability the head overrules the structural rule (same subject, near in
    #: meaning): "Sun Yan drives a MINI" and "rides a Giant road bike at weekends" sit at cosine
    #: 0.61, and the head gives 0.04
    veto: float = 0.0

    @property
    def reads_query(self) -> bool:
        return len(self.weights) == 5 * self.dim + 4

    def fits(self, vector: np.ndarray) -> bool:
        return vector.shape[-1] == self.dim

    def probabilities(
        self, older: np.ndarray, newer: np.ndarray, query: np.ndarray | None = None
    ) -> np.ndarray:
        if self.reads_query and query is None:
            raise ValueError("this judge reads the question both statements answer")
        x = features(older, newer, query if self.reads_query else None)
        z = x @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0)))

    def probability(
        self, older: np.ndarray, newer: np.ndarray, query: np.ndarray | None = None
    ) -> float | None:
        """P(the newer statement changes the older) for ``query``, if the head reads it; None
        when it cannot judge (vectors of another size, or no question for a head that reads
        one)."""
        if not (self.fits(older) and self.fits(newer)) or (self.reads_query and query is None):
            return None
        if query is not None and not self.fits(query):
            return None
        return float(self.probabilities(older, newer, query)[0])

    def updates(
        self, older: np.ndarray, newer: np.ndarray, query: np.ndarray | None = None
    ) -> bool:
        """Whether the newer statement changes the older one (no when it cannot judge)."""
        p = self.probability(older, newer, query)
        return p is not None and p >= self.threshold
