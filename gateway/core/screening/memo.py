"""Per-text memos of the recall path (time expressions, speaker checks, token estimates): the
same memories come back recall after recall, and these checks cost regex passes each time.

A memo holds the texts it has seen, so every erasure calls ``forget``: no erased content stays
in the gateway's memory once the erasure has run. Caches of texts elsewhere (the embedder's LRU,
the recall worker processes) join through ``also``.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_memos: list[Any] = []


class TextHolder(Protocol):
    """A cache of texts kept outside this module (the embedder's, the recall workers')."""

    def forget_texts(self) -> None: ...
    def texts_held(self) -> int: ...


_holders: weakref.WeakSet[Any] = weakref.WeakSet()


def also(holder: TextHolder) -> None:
    """``forget`` also empties ``holder`` (held weakly: it goes when nothing else holds it)."""
    _holders.add(holder)


def remembered(maxsize: int) -> Callable[[F], F]:
    """``functools.lru_cache(maxsize)``, registered with ``forget``."""

    def wrap(fn: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        _memos.append(cached)
        return cached  # type: ignore[return-value]

    return wrap


def forget() -> None:
    """Empty every memo and every holder given to ``also`` (after an erasure)."""
    for cached in _memos:
        cached.cache_clear()
    for holder in list(_holders):
        holder.forget_texts()


def held() -> int:
    """How many texts the memos and holders hold (tests)."""
    memos = sum(cached.cache_info().currsize for cached in _memos)
    return memos + sum(holder.texts_held() for holder in list(_holders))
