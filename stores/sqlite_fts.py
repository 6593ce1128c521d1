"""The embedded record store's lexical index: one FTS5 table beside ``memories``.

``memory_fts`` (rowid = the ``memories`` rowid) holds, for every *active* current memory, two
columns:

* ``terms`` — the analysed terms of ``stores.text_analysis`` (content plus its conversational
  context, stemmed, CJK bigrams) joined by spaces. The ``ascii`` tokenizer splits on ASCII spaces
  and punctuation only (no term has any) and keeps every non-ASCII character, so one analysed term
  is one FTS5 token.
* ``scope`` — one token for the namespace (a hash of its name) and one for the layer. When the
  index holds memories outside a search's namespaces and layers, the search names them inside the
  MATCH expression, so FTS5 ranks only the documents in scope: another tenant's matches never
  cost a recall anything. The column has weight
  0 in ``bm25()``; it adds two tokens to every document's length, a shift the contract suite's
  BM25 tolerance covers (Neo4j's Lucene query narrows by namespace the same way).

``detail=full``: ``bm25()`` reads each match's term frequencies from the index. With
``detail=none`` (0.4 and before) FTS5 re-tokenises the stored text of every match to count them:
the same scores, 2.6x slower at 10k memories (``bench.recall_speed``). An older table, or one
whose terms another analyzer version made, is re-indexed on start (``migrate``).
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from gateway.core.model.models import Layer, Memory, Status
from stores import sqlite_fts_window, text_analysis
from stores.sqlite_base import chunks, marks

log = logging.getLogger("memgate.records")

CREATE = (
    "CREATE VIRTUAL TABLE memory_fts USING fts5(terms, scope, tokenize = 'ascii', detail = full)"
)
#: MATCH expressions longer than this many terms are cut (the first terms are kept)
MAX_MATCH_TERMS = 64
#: ``index_counts``' bound: every count is exact
_ANY = 1 << 62
#: ``bm25()`` with the weights of ``terms`` and ``scope``
_BM25 = "bm25(memory_fts, 1.0, 0.0)"

INSERT = "INSERT INTO memory_fts (rowid, terms, scope) VALUES (?, ?, ?)"
DELETE = "DELETE FROM memory_fts WHERE rowid = ?"


#: merges every segment of the index into one, leaving out deleted documents' terms: FTS5 marks
#: a deletion and keeps the old terms in earlier segments until a merge (issue 33 M7)
OPTIMIZE = "INSERT INTO memory_fts (memory_fts) VALUES ('optimize')"


def purge_deleted(conn: sqlite3.Connection) -> None:
    """After an erasure: no term of an erased memory stays in ``memory_fts_data`` (with
    ``secure_delete`` the pages the merge frees are zeroed). Costs a rewrite of the index —
    erasures are rare; every other delete leaves merging to FTS5."""
    conn.execute(OPTIMIZE)


def _namespace_token(namespace: str) -> str:
    # 64 bits of a hash: a collision only admits another namespace's rows as candidates, which
    # the row filter of ``keyword_rows`` still drops
    return "n" + hashlib.blake2b(namespace.encode(), digest_size=8).hexdigest()


def _layer_token(layer: Layer | str) -> str:
    return "l" + Layer(layer).value


def document(m: Memory) -> tuple[str, str] | None:
    """The FTS5 document (terms, scope) of a current memory; None when it is not active."""
    if Status(m.status) is not Status.ACTIVE:
        return None
    terms = " ".join(text_analysis.document_terms(text_analysis.index_text(m)))
    return terms, f"{_namespace_token(m.namespace)} {_layer_token(m.layer)}"


def index(conn: sqlite3.Connection, rowid: int, doc: tuple[str, str] | None) -> None:
    """(Re)index one ``memories`` row: its old document out, ``doc`` (if any) in."""
    conn.execute(DELETE, (rowid,))
    if doc is not None:
        conn.execute(INSERT, (rowid, *doc))


def scope_of(namespaces: Sequence[str], layers: Sequence[Layer]) -> str:
    """The MATCH expression of the documents in one of ``namespaces`` and (unless empty) one of
    ``layers``."""
    scope = " OR ".join(_namespace_token(ns) for ns in dict.fromkeys(namespaces))
    expr = f"scope : ({scope})"
    if layers:
        expr += f" AND scope : ({' OR '.join(_layer_token(x) for x in dict.fromkeys(layers))})"
    return expr


def match(terms: Sequence[str], scope: str) -> str:
    """Any of ``terms``, within ``scope`` (a ``scope_of`` expression; empty: anywhere)."""
    words = "terms : (" + " OR ".join(f'"{t}"' for t in terms[:MAX_MATCH_TERMS]) + ")"
    return f"{scope} AND {words}" if scope else words


def scope_size(
    conn: sqlite3.Connection,
    stats: text_analysis.ScopeStats,
    namespaces: Sequence[str],
    layers: Sequence[Layer],
) -> int:
    """How many active memories ``namespaces`` (and ``layers``) hold, remembered for a while."""
    key = stats.key(namespaces, layers)
    cached = stats.cached(key)
    if cached is not None:
        return cached
    where = f"namespace IN ({marks(len(namespaces))}) AND status = 'active'"
    if layers:
        where += f" AND layer IN ({marks(len(layers))})"
    (size,) = conn.execute(
        f"SELECT count(*) FROM memories WHERE {where}", (*key[0], *key[1])
    ).fetchone()
    return stats.remember(key, size)


def distinctive(
    conn: sqlite3.Connection,
    terms: Sequence[str],
    scope: str,
    searched: int,
    everything: int,
    common: float,
    stats: text_analysis.ScopeStats | None = None,
    namespaces: Sequence[str] = (),
) -> list[str]:
    """``terms`` minus those in more than ``common`` (a fraction) of the ``searched`` memories
    (the active ones of the search's namespaces, all layers; ``scope``: their MATCH expression,
    empty when they are the whole index), which are searched
    like stop words: a name said in every turn of a conversation adds thousands of matches and
    nothing to the ranking (``bench.recall_eval``: R@10 +1.8 points at 0.05, and +1.3 to +1.8
    at every fraction tried from 0.05 to 0.2; ``bench.recall_speed``). The threshold is
    ``text_analysis.most_documents``, as on Neo4j. A term counted in ``namespaces`` recently (30 s)
    is not counted again (``stats``: ``ScopeStats.term_count``)."""
    most = text_analysis.most_documents(searched, common)
    if most is None:
        return list(terms)
    found: dict[str, int] = {}
    for term in terms:
        if stats is not None and (n := stats.term_count(namespaces, term, most)) is not None:
            found[term] = n
    todo = [t for t in terms if t not in found]
    if todo:
        # in how many documents of the whole index: an upper bound of the searched ones
        anywhere = index_counts(conn, todo, stats)
        shared = bool(scope) and everything > searched  # other memories share the index
        for term in todo:
            found[term] = n = anywhere.get(term, 0)
            if shared and n <= most:
                continue  # an upper bound, under the line: enough now, not a count to keep
            if shared:
                (n,) = conn.execute(
                    "SELECT count(*) FROM (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? "
                    "LIMIT ?)",
                    (f'{scope} AND terms : "{term}"', most + 1),
                ).fetchone()
                found[term] = n
            if stats is not None:
                stats.remember_term(namespaces, term, most, n)
    return [t for t in terms if found[t] <= most]


def index_counts(
    conn: sqlite3.Connection, terms: Sequence[str], stats: text_analysis.ScopeStats | None = None
) -> dict[str, int]:
    """In how many documents of the whole index each of ``terms`` is (absent: none); with
    ``stats``, a count made less than its ``term_ttl_s`` ago is not made again (``fts5vocab``
    walks a term's whole doclist: ~4 ms for one of 48k matches at 1M)."""
    found: dict[str, int] = {}
    for term in terms:
        if stats is not None and (n := stats.term_count((), term, _ANY)) is not None:
            found[term] = n
    todo = [t for t in dict.fromkeys(terms) if t not in found]
    if not todo:
        return found
    vocab = f"SELECT term, doc FROM temp.memory_fts_vocab WHERE term IN ({marks(len(todo))})"
    try:
        counted = dict(conn.execute(vocab, todo).fetchall())
    except sqlite3.OperationalError:  # the connection's first search: its view of the index
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memory_fts_vocab "
            "USING fts5vocab(main, 'memory_fts', 'row')"
        )
        counted = dict(conn.execute(vocab, todo).fetchall())
    for term in todo:
        found[term] = counted.get(term, 0)
        if stats is not None:
            stats.remember_term((), term, _ANY, found[term])
    return {t: n for t, n in found.items() if n}


def windowed(
    conn: sqlite3.Connection,
    terms: Sequence[str],
    counts: dict[str, int],
    namespaces: Sequence[str],
    whole: bool,
    stats: text_analysis.ScopeStats,
) -> dict[str, list[str]]:
    """The searched namespaces in which each of ``terms`` is in more than
    ``text_analysis.TERM_WINDOW`` memories (all layers; a term over it in none is left out):
    there the term's newest ``TERM_WINDOW`` matches are its candidates
    (``stores.sqlite_fts_window``). Judged per namespace, so a user's few memories searched
    beside a large ``global`` keep every match of their names. ``counts``: the terms' documents
    in the whole index (exact per namespace when ``whole``: one namespace is the index); other
    counts are index probes of at most ``TERM_WINDOW + 1`` matches, remembered in ``stats``."""
    bound = text_analysis.TERM_WINDOW
    found: dict[str, list[str]] = {}
    for term in terms:
        if counts.get(term, 0) <= bound:
            continue
        for ns in dict.fromkeys(namespaces):
            n = counts[term] if whole else stats.term_count((ns,), term, bound)
            if n is None:
                (n,) = conn.execute(
                    "SELECT count(*) FROM (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? "
                    "LIMIT ?)",
                    (match([term], scope_of([ns], ())), bound + 1),
                ).fetchone()
                stats.remember_term((ns,), term, bound, n)
            if n > bound:
                found.setdefault(term, []).append(ns)
    return found


def keyword_rows(
    conn: sqlite3.Connection,
    terms: Sequence[str],
    namespaces: Sequence[str],
    layers: Sequence[Layer],
    limit: int,
    columns: str,
    stats: text_analysis.ScopeStats,
    common: float = 0.0,
) -> list[tuple[tuple[Any, ...], float]]:
    """The ``limit`` best BM25 matches of the ``distinctive`` terms (all of them when
    ``common`` is 0) among the active memories of ``namespaces`` (and
    ``layers``) as (``columns`` of the ``memories`` row, raw ``bm25()``: lower is better), best
    first; equal scores go to the newer memory, then the smaller id.

    Under ``text_analysis.LEXICAL_APPROX_MIN`` searched memories, FTS5 ranks every scoped match
    (``_exact``); past it, the two steps of ``stores.sqlite_fts_window`` (``_approximate``).
    ``columns`` are read for the ``limit`` kept only (reading every column of the page cost ~2x
    more at 10k memories).
    """
    everything, _ = sqlite_fts_window.totals(conn)  # one record, at any size
    in_namespaces = scope_size(conn, stats, namespaces, ())
    if common > 0:
        # judged within the namespaces (all layers): the rule of the Neo4j adapter too
        ns_scope = scope_of(namespaces, ()) if everything > in_namespaces else ""
        terms = distinctive(
            conn, terms, ns_scope, in_namespaces, everything, common, stats, namespaces
        )
        if not terms:
            return []
    # when every document of the index is in scope, naming the scope only costs time (~1 ms at
    # 10k); a stale size can only leave another scope's rows in, which the row filter drops
    searched = in_namespaces if not layers else scope_size(conn, stats, namespaces, layers)
    scope = scope_of(namespaces, layers) if everything > searched else ""
    # the unary + keeps SQLite from scanning an index on these columns: the rows are looked up
    # by rowid
    on = f"+m.status = 'active' AND +m.namespace IN ({marks(len(namespaces))})"
    args: list[Any] = list(namespaces)
    if layers:
        on += f" AND +m.layer IN ({marks(len(layers))})"
        args.extend(Layer(v).value for v in layers)
    if searched >= text_analysis.LEXICAL_APPROX_MIN:
        whole = len(namespaces) == 1 and everything <= in_namespaces
        best = _approximate(conn, terms, namespaces, layers, scope, whole, limit, stats, on, args)
    else:
        best = _exact(conn, terms, scope, limit, on, args)
    rows: dict[int, tuple[Any, ...]] = {}
    for part in chunks([rowid for *_, rowid in best]):
        for row in conn.execute(
            f"SELECT {columns}, m.rowid FROM memories m WHERE m.rowid IN ({marks(len(part))})",
            part,
        ):
            rows[row[-1]] = row[:-1]
    return [(rows[rowid], s) for s, _, _, rowid in best if rowid in rows]


def _exact(
    conn: sqlite3.Connection,
    terms: Sequence[str],
    scope: str,
    limit: int,
    on: str,
    args: Sequence[Any],
) -> list[tuple[float, int, str, int]]:
    """(bm25, -when_at, id, rowid) of the ``limit`` best: FTS5 ranks the scoped matches and keeps
    the best ``2 x limit`` (a top-N sort), their ``memories`` rows are filtered (``on``) and
    ordered on three lean columns. A tie at the cut reads the next page."""
    # the LEFT JOIN keeps every row of the page (its length says whether more follow), with a
    # NULL id where the row is out of scope
    sql = (
        f"SELECT f.score, m.when_at, m.id, f.rowid FROM (SELECT rowid, {_BM25} AS score "
        "FROM memory_fts WHERE memory_fts MATCH ? ORDER BY score LIMIT ? OFFSET ?) f "
        f"LEFT JOIN memories m ON m.rowid = f.rowid AND {on}"
    )
    expr = match(terms, scope)
    best: list[tuple[float, int, str, int]] = []
    size, offset = max(2 * limit, 32), 0
    while True:
        page = conn.execute(sql, (expr, size, offset, *args)).fetchall()
        best.extend((s, -when_at, mid, rowid) for s, when_at, mid, rowid in page if mid is not None)
        best.sort()
        del best[limit:]
        if len(page) < size or (len(best) == limit and max(r[0] for r in page) > best[-1][0]):
            return best  # no more matches, or every later one scores worse than the last kept
        offset += size
        size *= 2


def _approximate(
    conn: sqlite3.Connection,
    terms: Sequence[str],
    namespaces: Sequence[str],
    layers: Sequence[Layer],
    scope: str,
    whole: bool,
    limit: int,
    stats: text_analysis.ScopeStats,
    on: str,
    args: Sequence[Any],
) -> list[tuple[float, int, str, int]]:
    """``_exact``'s answer in a large scope: the best candidates (``stores.sqlite_fts_window``)
    with their exact BM25, their rows read a page at a time (candidates are in scope by their
    MATCH; the row filter rarely drops one) until the rest score worse than the last kept."""
    terms = list(terms[:MAX_MATCH_TERMS])
    counts = index_counts(conn, terms, stats)
    windows = windowed(conn, terms, counts, namespaces, whole, stats)
    # a window is one namespace's: named unless that namespace is the whole index
    several = bool(scope) or len(set(namespaces)) > 1
    probes: list[sqlite_fts_window.Probe] = []
    for term in terms:
        held = windows.get(term, [])
        rest = [ns for ns in dict.fromkeys(namespaces) if ns not in held]
        if rest:
            probes.append((term, match([term], scope_of(rest, layers) if held else scope), False))
        for ns in held:
            probes.append((term, match([term], scope_of([ns], layers) if several else ""), True))
    ranked = sqlite_fts_window.ranking(
        conn, terms, probes, counts, text_analysis.TERM_WINDOW, limit
    )
    best: list[tuple[float, int, str, int]] = []
    step = 2 * limit
    for at in range(0, len(ranked), step):
        page = {rowid: score for score, rowid in ranked[at : at + step]}
        best.extend(
            (page[rowid], -when_at, mid, rowid)
            for rowid, when_at, mid in conn.execute(
                f"SELECT m.rowid, m.when_at, m.id FROM memories m WHERE {on} "
                f"AND m.rowid IN ({marks(len(page))})",
                (*args, *page),
            )
        )
        best.sort()
        more = ranked[at + step : at + step + 1]
        if len(best) >= limit and (not more or more[0][0] > best[limit - 1][0]):
            break
    return best[:limit]


def migrate(conn: sqlite3.Connection, memories: Callable[[], Iterable[tuple[int, Memory]]]) -> None:
    """(Re)build ``memory_fts`` from ``memories()`` ((rowid, memory) of the current memories)
    when it is missing, its layout is older, or another analyzer version made its terms
    (``text_analysis.ANALYZER_VERSION``, kept in ``memory_fts_meta``)."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS memory_fts_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)"
    )
    found = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'memory_fts'"
    ).fetchone()
    built = conn.execute("SELECT value FROM memory_fts_meta WHERE key = 'analyzer'").fetchone()
    version = text_analysis.ANALYZER_VERSION
    if found and found[0] == CREATE and built and built[0] == version:
        return
    started = time.monotonic()
    if found:
        log.info(
            "re-indexing the lexical search (analyzer v%s -> v%s); the gateway starts after it",
            built[0] if built else 1,
            version,
        )
        conn.execute("DROP TABLE memory_fts")
    conn.execute(CREATE)
    docs = [(r, *doc) for r, m in memories() if (doc := document(m)) is not None]
    conn.executemany(INSERT, docs)
    conn.execute("INSERT OR REPLACE INTO memory_fts_meta VALUES ('analyzer', ?)", (version,))
    if found:
        log.info("re-indexed %d memories in %.1f s", len(docs), time.monotonic() - started)
