"""A hint from the recall pipeline to the vector index: whether a search is the host's only
recall in flight.

A one-query scan of a large partition runs about twice as fast spread over the host's cores
(``stores/faiss_index.py``, BLAS), but only when those cores are idle: beside other recalls'
embeddings the spread scan waits for a busy core (8 concurrent clients at 10k memories: -15%
recalls/s). The engine knows how many recalls are in flight; the index only sees one query.
A context variable carries the fact from one to the other through every wrapper (breaker,
replication) without widening the ``VectorIndex`` contract: a store that ignores it is correct.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_ALONE: ContextVar[bool] = ContextVar("memgate_scan_alone", default=False)


def alone() -> bool:
    """True when the current search belongs to the only recall in flight."""
    return _ALONE.get()


@contextlib.contextmanager
def searching(is_alone: bool) -> Iterator[None]:
    """Searches inside the block see ``alone() == is_alone``."""
    token = _ALONE.set(is_alone)
    try:
        yield
    finally:
        _ALONE.reset(token)
