"""How a recall query is read: the text its dense vector is computed from (proper names masked)
and whether it names a given person (the speaker of a dialogue turn).

MiniLM places a question that names a person next to every sentence that names the same person,
whatever it says, so a name in the query vector pulls in the named person's small talk and
pushes out the turn that answers. Names are matched where they are exact instead: lexically
(BM25 over the turn, its context and its speaker) and through the turn's speaker metadata
(``fusion.FusionWeights.speaker_boost``). Measured on ``bench/dialogues`` (docs/BENCHMARKS-HISTORY.md).
"""

from __future__ import annotations

import re

from gateway.core.screening import memo
from gateway.core.truth import cjk_names

# A word that does not start the question (after a word, a comma... and a space), with its
# possessive: "What job did Elena's sister get?" -> "What job did their sister get?".
_WORD = re.compile(r"(?<=[\w,;:] )([^\W\d_]+)(['\u2019]s)?\b")
#: after these a capitalised word is a place or a title more often than a person: kept
_PLACE_WORDS = frozenset(
    ["in", "to", "at", "from", "near", "of", "for", "about", "on", "with", "by", "into"]
)


def dense_text(query: str) -> str:
    """The query with the names of people in it replaced by "they"/"their": capitalised words
    (any script with case: "Tomás", "Lucía") that do not start it or follow a preposition; and
    Chinese names by "他" (``cjk_names``)."""
    if _CJK.search(query):
        query = cjk_names.masked(query)

    def mask(m: re.Match[str]) -> str:
        word = m.group(1)
        if not (len(word) > 1 and word[0].isupper() and all(c.islower() for c in word[1:])):
            return m.group(0)
        before = query[: m.start()].split()
        if before and before[-1].lower() in _PLACE_WORDS:
            return m.group(0)
        return "their" if m.group(2) else "they"

    return _WORD.sub(mask, query)


_CJK_RANGES = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK = re.compile(f"[{_CJK_RANGES}]")
#: a letter or digit of a script that separates its words (not CJK)
_SPACED_WORD_CHAR = f"[^\\W{_CJK_RANGES}]"


@memo.remembered(4096)
def names(query: str, person: str) -> bool:
    """Whether ``query`` names ``person``, case as written: a name in a script that separates
    words as a whole word of that script ("Leo", not "Leona"; a CJK character next to it is a
    boundary: "Alice在哪里工作？"); a name in CJK, which has no word boundaries, as a substring
    ("陈静的家在哪？"). Remembered: one recall asks it of every candidate, for the same two or
    three speakers."""
    if not person:
        return False
    before = "" if _CJK.match(person[0]) else f"(?<!{_SPACED_WORD_CHAR})"
    after = "" if _CJK.match(person[-1]) else f"(?!{_SPACED_WORD_CHAR})"
    return re.search(f"{before}{re.escape(person)}{after}", query) is not None


def mostly_cjk(query: str) -> bool:
    """At least half of the query's letters are Chinese, Japanese or Korean (an English
    embedding model reads such a query poorly: ``fusion.FusionWeights.for_query``)."""
    letters = sum(1 for c in query if c.isalpha())
    return letters > 0 and 2 * len(_CJK.findall(query)) >= letters
