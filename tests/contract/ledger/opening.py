"""What the ledger's area suites share: a ledger factory's type, and a ledger opened for the
length of a block. A suite types its ledger as the one area port it checks, so an adapter that
implements only some areas can be checked area by area."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Protocol, TypeVar

from gateway.core.ports.control_ports import Ledger


class Opens(Protocol):
    """What the suites need of any adapter besides its area: it opens and closes."""

    async def start(self) -> None: ...
    async def close(self) -> None: ...


#: a factory of ledgers over one store: a second call is the same ledger reopened (a restart),
#: or another replica's view of it (Redis)
MakeLedger = Callable[[], Ledger]

S = TypeVar("S", bound=Opens)


@asynccontextmanager
async def opened(make: Callable[[], S]) -> AsyncIterator[S]:
    """A ledger from ``make``, started, and closed when the block ends."""
    store = make()
    await store.start()
    try:
        yield store
    finally:
        await store.close()
