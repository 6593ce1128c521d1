"""The lexical search of a large namespace on the embedded store: BM25 that does not score every
match.

FTS5's ``bm25()`` costs ~10-20 us a match (each reads the document's size and its term
positions), and in a namespace of 1M dialogue turns a query term under the common-term line
(``text_analysis.most_documents``: 5%) can have 50,000 matches: 120-260 ms a recall
(``python -m bench.vector_scale onens``). So, once a query term is in more than
``text_analysis.TERM_WINDOW`` memories of a searched namespace (never below ~40k memories a
namespace: the common-term line stops a term first), the search runs in two steps:

1. **Candidates** without ``bm25()``: every match of the terms under the window, and in each
   namespace where a term is over it, that term's newest ``TERM_WINDOW`` matches (FTS5 reads a
   doclist newest first and stops there); each candidate ranked by the sum of the idf of the
   terms it matched (rowids only: ~1 us a match, summed by SQLite).
2. **Exact BM25 of the best** ``candidates(limit)``: FTS5's own formula (k1 = 1.2, b = 0.75, the
   idf of the whole index, the row's size in tokens against the average) computed here from the
   stored terms of those rows, their ``memory_fts_docsize`` and the index's totals, so a
   candidate scores what ``bm25()`` gives it (``tests/contract``: equal to 1e-9).

What it gives up, past the window only: an old memory that matches nothing but a frequent term
of its namespace is not a candidate (its newer matches are), and the candidates are cut by the
idf sum before the exact scores are known.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Sequence
from typing import Any

from stores.sqlite_base import chunks, marks

#: BM25 constants of FTS5's ``bm25()``
K1 = 1.2
B = 0.75


def candidates(limit: int) -> int:
    """How many of the best candidates by idf sum get their exact BM25."""
    return max(4 * limit, 128)


def varints(blob: bytes) -> list[int]:
    """The SQLite varints of an FTS5 record (``%_data`` averages, ``%_docsize`` sizes)."""
    out: list[int] = []
    i = 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def totals(conn: sqlite3.Connection) -> tuple[int, float]:
    """(rows of the index, average row size in tokens, every column) as ``bm25()`` reads them."""
    row = conn.execute("SELECT block FROM memory_fts_data WHERE id = 1").fetchone()
    if row is None:
        return 0, 0.0
    counts = varints(row[0])
    if not counts:  # an index that never held a row
        return 0, 0.0
    rows = counts[0]
    return rows, (sum(counts[1:]) / rows if rows else 0.0)


def idf(rows: int, hits: int) -> float:
    """A term's idf as ``bm25()`` computes it (``hits``: rows holding it in the index)."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0.0 else 1e-6


#: one term's candidates: (term, its MATCH expression in some namespaces, whether they are its
#: newest ``window`` matches there or all of them)
Probe = tuple[str, str, bool]


def ranking(
    conn: sqlite3.Connection,
    terms: Sequence[str],
    probes: Sequence[Probe],
    counts: dict[str, int],
    window: int,
    limit: int,
) -> list[tuple[float, int]]:
    """(raw BM25 as ``bm25()`` gives it: negative, lower is better; rowid) of the best
    ``candidates(limit)`` rows, best first, over the candidates of ``probes``
    (``stores.sqlite_fts`` writes their MATCH expressions). ``counts``: each term's rows in the
    whole index."""
    rows, avgdl = totals(conn)
    weights = {t: idf(rows, counts.get(t, 0)) for t in terms}
    parts: list[str] = []
    params: list[Any] = []
    for term, expr, newest in probes:
        if newest:
            parts.append(
                "SELECT rowid, ? AS s FROM (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? "
                "ORDER BY rowid DESC LIMIT ?)"
            )
            params.extend((weights[term], expr, window))
        else:
            parts.append("SELECT rowid, ? AS s FROM memory_fts WHERE memory_fts MATCH ?")
            params.extend((weights[term], expr))
    best = conn.execute(
        f"SELECT rowid FROM ({' UNION ALL '.join(parts)}) GROUP BY rowid "
        "ORDER BY sum(s) DESC, rowid DESC LIMIT ?",
        (*params, candidates(limit)),
    ).fetchall()
    scored: list[tuple[float, int]] = []
    for part in chunks([r for (r,) in best]):
        for rowid, text, size in conn.execute(
            # the index's own tables: FTS5's content (c0: ``terms``) and sizes, by rowid
            "SELECT c.id, c.c0, d.sz FROM memory_fts_content c JOIN memory_fts_docsize d "
            f"ON d.id = c.id WHERE c.id IN ({marks(len(part))})",
            part,
        ):
            scored.append((bm25(text, sum(varints(size)), terms, weights, avgdl), rowid))
    scored.sort()
    return scored


def bm25(
    text: str, length: int, terms: Sequence[str], weights: dict[str, float], avgdl: float
) -> float:
    """FTS5's ``bm25(memory_fts, 1.0, 0.0)`` of one row: ``text`` its ``terms`` column,
    ``length`` its size in tokens (every column)."""
    said: dict[str, int] = {}
    for word in text.split():
        said[word] = said.get(word, 0) + 1
    norm = K1 * (1 - B + B * length / avgdl) if avgdl else K1
    score = 0.0
    for term in terms:
        f = said.get(term, 0)
        score += weights[term] * (f * (K1 + 1.0)) / (f + norm)
    return -score
