"""A recall "as of" a past time: each hit is replaced by the version of it that was true then
(from its validity, ``validity``), and a memory not yet known then is left out."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import datetime

from gateway.core.model.models import Layer, Memory
from gateway.core.recall.scoring import Scored
from gateway.core.truth import validity as vd

History = Callable[[str], Awaitable[list[Memory]]]


async def hits_as_of(hits: Sequence[Scored], when: datetime, history: History) -> list[Scored]:
    """``hits`` as they were at ``when``, in the same order. A hit whose current version was
    already valid then is kept as is; the others are looked up in their history (one read
    each, concurrently)."""

    def settled(mem: Memory) -> bool:
        start = vd.valid_from(mem) or mem.created_at
        return mem.version == 1 and start <= when

    long_term = [h for h in hits if h.memory.layer is not Layer.WORKING]
    unsure = [h.memory.id for h in long_term if not settled(h.memory)]
    chains = await asyncio.gather(*(history(i) for i in unsure))
    then = {i: vd.as_of(chain, when) for i, chain in zip(unsure, chains, strict=True)}
    out: list[Scored] = []
    for h in long_term:
        if h.memory.id not in then:
            out.append(h)
        elif (version := then[h.memory.id]) is not None:
            out.append(replace(h, memory=version))
    return out
