"""The session's working window as recall candidates: its turns (instructions, task, dialogue)
as memories of the working layer, embedded, so recall ranks them beside long-term memories."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import numpy as np

from gateway.core.model.models import Layer, Memory, Turn, Zone
from gateway.core.ports.ports import WorkingStore

#: the window's zones recall searches (scratch is the agent's own notes: not recalled)
ZONES = (Zone.INSTRUCTIONS, Zone.TASK, Zone.DIALOGUE)


async def window_memories(
    working: WorkingStore,
    embed: Callable[[list[str]], Awaitable[np.ndarray]],
    namespaces: Sequence[str],
    session_id: str,
) -> list[Memory]:
    """The turns of ``session_id``'s window in each namespace, with their embeddings."""
    mems: list[Memory] = []
    for ns in namespaces:
        window = await working.window(ns, session_id)
        turns: list[Turn] = [t for z in ZONES for t in window.get(z, [])]
        if not turns:
            continue
        vectors = await embed([t.content for t in turns])
        for turn, tv in zip(turns, vectors, strict=True):
            mems.append(
                Memory(
                    id=turn.id,
                    namespace=ns,
                    layer=Layer.WORKING,
                    content=turn.content,
                    type=f"turn:{turn.zone.value}",
                    importance=0.5,
                    source_session=session_id,
                    created_at=turn.at,
                    updated_at=turn.at,
                    metadata={"role": turn.role, **turn.metadata},
                    embedding=np.asarray(tv, dtype=np.float32),
                )
            )
    return mems
