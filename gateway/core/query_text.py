"""How a recall query is read: the text its dense vector is computed from (proper names masked)
and whether it names a given person (the speaker of a dialogue turn).

MiniLM places a question that names a person next to every sentence that names the same person,
whatever it says, so a name in the query vector pulls in the named person's small talk and
pushes out the turn that answers. Names are matched where they are exact instead: lexically
(BM25 over the turn, its context and its speaker) and through the turn's speaker metadata
(``fusion.FusionWeights.speaker_boost``). Measured on ``bench/dialogues`` (docs/BENCHMARKS.md).
"""

from __future__ import annotations

import re

# A capitalised word that does not start the question (after a word, a comma... and a space),
# with its possessive: "What job did Elena's sister get?" -> "What job did their sister get?".
_NAME = re.compile(r"(?<=[\w,;:] )([A-Z][a-z]+)(['\u2019]s)?\b")


def dense_text(query: str) -> str:
    """The query with the proper names inside it replaced by "they"/"their"."""
    return _NAME.sub(lambda m: "their" if m.group(2) else "they", query)


def names(query: str, person: str) -> bool:
    """Whether ``query`` names ``person`` (as a whole word, case as written)."""
    return bool(person) and re.search(rf"(?<!\w){re.escape(person)}(?!\w)", query) is not None
