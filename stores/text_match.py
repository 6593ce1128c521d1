"""Keyword matching shared by the record-store adapters: one tokeniser, one score.

Text is normalised (NFKC, case-folded) and split into runs:

* word runs (letters/digits of scripts written with spaces) become one term each;
* CJK runs (Han, kana, Hangul — scripts written without spaces) become overlapping bigrams,
  and, in indexed text only, single characters too, so a one-character query still matches.

``index_terms(content)`` is what an adapter stores per memory; ``query_terms(text)`` is what it
looks up; ``score`` is the fraction of query terms found (0..1). Adapters that store
``index_terms`` as a list (e.g. a Neo4j property) can compute the same score in their query
language: ``size([t IN $terms WHERE t IN m.terms]) / size($terms)``.

``normalise_name`` is the id of an entity node: its name, normalised and case-folded, with runs of
whitespace collapsed to one space.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator

from gateway.core.models import normalise_name

__all__ = ["STOPWORDS", "index_terms", "normalise", "normalise_name", "query_terms", "score"]

# Hiragana, Katakana, CJK Extension A, CJK Unified Ideographs, CJK Compatibility, Hangul syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKEN = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>[^\W_{_CJK}]+)")

#: Words too common to count as a match on their own (dropped from queries unless that would
#: leave nothing). Indexed text keeps them.
_STOPWORDS_TEXT = """
    a an and are as at be but by can did do does for from had has have he her his how i if in into
    is it its me my no not of on or our she so than that the their them then there these they
    this to was we were what when where which who why will with you your
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _runs(text: str) -> Iterator[tuple[bool, str]]:
    """(is_cjk, run) for every token run of the normalised text."""
    for m in _TOKEN.finditer(normalise(text)):
        if m.group("cjk"):
            yield True, m.group("cjk")
        else:
            yield False, m.group("word")


def _bigrams(run: str) -> Iterator[str]:
    for i in range(len(run) - 1):
        yield run[i : i + 2]


def index_terms(text: str) -> set[str]:
    """Terms to store for a document: words, CJK characters and CJK bigrams."""
    terms: set[str] = set()
    for cjk, run in _runs(text):
        if cjk:
            terms.update(run)
            terms.update(_bigrams(run))
        else:
            terms.add(run)
    return terms


def query_terms(text: str) -> list[str]:
    """Distinct terms to look up for a query, in order: words (minus stop words and single
    letters), CJK bigrams (a lone CJK character stands for itself). Falls back to every word
    when filtering would leave nothing."""
    kept: list[str] = []
    words: list[str] = []
    for cjk, run in _runs(text):
        if cjk:
            kept.extend(_bigrams(run) if len(run) > 1 else [run])
        else:
            words.append(run)
            if run not in STOPWORDS and (len(run) > 1 or run.isdigit()):
                kept.append(run)
    if not kept:
        kept = words
    return list(dict.fromkeys(kept))


def score(query: list[str], doc_terms: Iterable[str]) -> float:
    """Fraction of the (distinct) query terms present in the document's terms, 0..1."""
    if not query:
        return 0.0
    doc = doc_terms if isinstance(doc_terms, set | frozenset) else set(doc_terms)
    return sum(1 for t in query if t in doc) / len(query)
