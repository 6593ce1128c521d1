"""The lookups of a recall that need no query vector (lexical candidates with their memories,
the events of a period the query names), started while the query is embedded."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from gateway.core import timecues
from gateway.core.models import Layer, Memory, MemoryFilter
from gateway.core.ports import RecordStore
from gateway.core.recall_cache import RecallQuery
from gateway.core.tracing import Tracer, traced

A = TypeVar("A")
B = TypeVar("B")
#: (lexical hits with their memories and relative BM25, the events of the named period)
Early = asyncio.Future[tuple[list[tuple[Memory, float]], list[Memory]]]


def start(
    records: RecordStore,
    tracer: Tracer,
    q: RecallQuery,
    layers: tuple[Layer, ...],
    cues: timecues.Cues,
    k: int,
) -> Early:
    """Start the lookups over the long-term ``layers``, ``k`` candidates each; await the result
    (or ``cancel`` it)."""
    lexical = traced(
        tracer, "recall.keyword_search", records.keyword_memories(q.namespaces, layers, q.query, k)
    )
    start_at, end_at = q.start or cues.start, q.end or cues.end
    if Layer.EPISODIC in layers and (start_at or end_at):
        # a named period: its events are candidates even if worded differently
        flt = MemoryFilter(
            q.namespaces, (Layer.EPISODIC,), q.types, start=start_at, end=end_at, limit=k
        )
        return asyncio.ensure_future(_both(lexical, records.query(flt)))
    return asyncio.ensure_future(_both(lexical, _nothing()))


async def cancel(task: asyncio.Future[Any] | None) -> None:
    """Stop lookups whose results are no longer wanted."""
    if task is not None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def _both(first: Awaitable[A], second: Awaitable[B]) -> tuple[A, B]:
    """Two lookups side by side; if one fails, the other is cancelled."""
    a, b = asyncio.ensure_future(first), asyncio.ensure_future(second)
    try:
        await asyncio.gather(a, b)
    except BaseException:
        a.cancel()
        b.cancel()
        raise
    return a.result(), b.result()


async def _nothing() -> list[Memory]:
    return []
