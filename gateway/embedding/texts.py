"""What the embedders read of their input texts: the one check they all make, and how much of
a text is written in CJK (the paired and e5 embedders weigh or shift a text by it)."""

from __future__ import annotations

import re
from collections.abc import Sequence

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LETTER = re.compile(r"[^\W\d_]")


def cjk_share(text: str) -> float:
    """The share of CJK characters among the text's letters (0 with no letter)."""
    letters = len(_LETTER.findall(text))
    return min(1.0, len(_CJK.findall(text)) / letters) if letters else 0.0


def text_list(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list, or a TypeError: a lone ``str`` (a sequence of characters) or an item
    that is not a string."""
    if isinstance(texts, str):
        raise TypeError("embed() takes a sequence of strings, not a single str; wrap it in a list")
    items = list(texts)
    for i, s in enumerate(items):
        if not isinstance(s, str):
            raise TypeError(f"texts[{i}] is {type(s).__name__}, expected str")
    return items
