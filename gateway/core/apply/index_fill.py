"""Filling a vector index from the durable records: at start-up (``core/usecases/runtime.py``), in a
recall worker (``gateway/recall_workers/worker.py``) and when a replica fell behind the index
change stream (``stores/redis_changes.py``)."""

from __future__ import annotations

import logging

from gateway.core.ports.ports import RecordStore, VectorIndex

log = logging.getLogger("memgate.index_fill")

#: a long fill says how far it got every this many vectors
PROGRESS_EVERY = 50_000


async def fill_index(
    records: RecordStore, index: VectorIndex, dim: int, misfits: list[str] | None = None
) -> tuple[int, int]:
    """Empty ``index`` and fill it with every vector the records hold (an index loaded on
    demand is only emptied: it reads the records itself); returns (indexed,
    skipped). Skipped: embeddings of another size than ``dim``, written under an earlier
    embedder; the index would refuse them, and with them every vector after. Their ids go to
    ``misfits`` when given (the runtime re-embeds them: ``core/apply/reembed.py``)."""
    await index.reset()
    if index.on_demand():  # a cache over the records: it loads what a search needs, when needed
        return 0, 0
    n = skipped = 0
    async for batch in records.iter_vectors(2000):
        fit = [item for item in batch if item.vector.shape == (dim,)]
        skipped += len(batch) - len(fit)
        if misfits is not None and len(fit) < len(batch):
            misfits.extend(item.id for item in batch if item.vector.shape != (dim,))
        await index.upsert(fit)
        n += len(fit)
        if n // PROGRESS_EVERY != (n - len(fit)) // PROGRESS_EVERY:
            log.info("rebuilding the vector index from the records: %d vectors so far", n)
    if skipped and misfits is None:
        log.warning(
            "%d records have embeddings of another size than %d: not indexed (written under "
            "another embedder: recall finds them by their words only)",
            skipped,
            dim,
        )
    return n, skipped
