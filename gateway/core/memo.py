"""Per-text memos of the recall path (time expressions, speaker checks, token estimates): the
same memories come back recall after recall, and these checks cost regex passes each time.

A memo holds the texts it has seen, so every erasure calls ``forget``: no erased content stays
in the gateway's memory once the erasure has run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_memos: list[Any] = []


def remembered(maxsize: int) -> Callable[[F], F]:
    """``functools.lru_cache(maxsize)``, registered with ``forget``."""

    def wrap(fn: F) -> F:
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        _memos.append(cached)
        return cached  # type: ignore[return-value]

    return wrap


def forget() -> None:
    """Empty every memo (after an erasure)."""
    for cached in _memos:
        cached.cache_clear()


def held() -> int:
    """How many texts the memos hold (tests)."""
    return sum(cached.cache_info().currsize for cached in _memos)
