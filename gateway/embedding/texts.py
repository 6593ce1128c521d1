"""The one check every embedder makes of its input."""

from __future__ import annotations

from collections.abc import Sequence


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
