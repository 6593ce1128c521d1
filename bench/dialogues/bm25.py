"""A lexical reference retriever for the long-dialogue benchmark: BM25 over each turn plus the
turn before it (same session), with a crude suffix stemmer. No gateway involved; it shows how much
of the benchmark plain word overlap with context already solves."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

_TOKEN = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]")
_STOPWORDS = (
    "a an the and or but of to in on at for with from by is are was were be been being do does did "
    "has have had i you he she it we they me my your his her its our their this that what which who "
    "whom how when where why would could should can will just so as if about up out not no yes "
    "any all some there here them than then too very"
)
STOP = frozenset(_STOPWORDS.split())


def stem(word: str) -> str:
    for suffix in ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            return base + "y" if suffix in ("ies", "ied") else base
    return word


def tokens(text: str) -> list[str]:
    return [stem(t) for t in _TOKEN.findall(text.lower()) if t not in STOP]


class BM25:
    def __init__(self, docs: list[list[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.docs = [Counter(d) for d in docs]
        self.lens = [len(d) for d in docs]
        self.avg = sum(self.lens) / max(1, len(docs))
        df = Counter(t for d in self.docs for t in d)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.k1, self.b = k1, b

    def top(self, query: str, k: int) -> list[int]:
        q = set(tokens(query))
        scores = []
        for i, (tf, length) in enumerate(zip(self.docs, self.lens, strict=True)):
            s = 0.0
            for t in q & tf.keys():
                f = tf[t]
                s += (
                    self.idf[t]
                    * f
                    * (self.k1 + 1)
                    / (f + self.k1 * (1 - self.b + self.b * length / self.avg))
                )
            if s > 0:
                scores.append((s, i))
        scores.sort(reverse=True)
        return [i for _, i in scores[:k]]


def index_conversation(conv: dict[str, Any]) -> tuple[BM25, list[str]]:
    """Documents: each turn with the previous turn of its session; returns (index, turn ids)."""
    docs, ids = [], []
    for session in conv["sessions"]:
        prev = ""
        for turn in session["turns"]:
            text = f"{turn['speaker']}: {turn['text']}"
            docs.append(tokens(prev + " " + text))
            ids.append(turn["id"])
            prev = text
    return BM25(docs), ids
