"""Backend time of one guarded store call, as opposed to its wall time: what a circuit breaker
judges a backend by. An adapter that knows when the backend itself was working (the SQLite worker
thread once it holds the connection; Neo4j's own result timings) reports it here; queueing for
our own threads, locks, connection pool or event loop is then not counted against the backend."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager


class BackendTime:
    """Milliseconds the backend spent on one store call; None until an adapter reports."""

    __slots__ = ("ms",)

    def __init__(self) -> None:
        self.ms: float | None = None

    def add(self, ms: float) -> None:
        self.ms = ms if self.ms is None else self.ms + ms


_CURRENT: contextvars.ContextVar[BackendTime | None] = contextvars.ContextVar(
    "memgate_backend_time", default=None
)


@contextmanager
def measuring() -> Iterator[BackendTime]:
    """Collects what the adapters report during the ``with`` block (of this task)."""
    timing = BackendTime()
    token = _CURRENT.set(timing)
    try:
        yield timing
    finally:
        _CURRENT.reset(token)


def current() -> BackendTime | None:
    """The collector of the store call in progress in this task, if a breaker set one."""
    return _CURRENT.get()


def report(ms: float) -> None:
    timing = _CURRENT.get()
    if timing is not None:
        timing.add(ms)
