"""A switch of embedder re-embeds what is stored, so recall never compares vectors of two models.
At start, before the vector index is filled: the ledger records which vector space the stored
embeddings are in (the model, whatever runtime computes it: MiniLM on ONNX, int8 or numpy is one
space); when the configured embedder's differs, every stored vector is computed again from its
text, with progress in the log. A store that never recorded one (written before this existed)
only re-embeds the vectors whose size does not fit the embedder."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from gateway.core.apply import dialogue
from gateway.core.apply.derive import dialogue_text
from gateway.core.model.models import Memory, Status, VectorItem
from gateway.core.ports.control_ports import SettingsLedger
from gateway.core.ports.ports import Embedder, RecordStore

log = logging.getLogger("memgate.reembed")

SETTING_KEY = "embedder.space"
BATCH = 256
#: a long re-embedding says how far it got every this many memories
PROGRESS_EVERY = 5_000


def vector_space(embedder_name: str) -> str:
    """The model part of an embedder's name: ``all-MiniLM-L6-v2:onnx-int8`` and
    ``all-MiniLM-L6-v2:numpy`` give the same vectors (cosine >= 0.99), so one space."""
    return "+".join(part.split(":")[0] for part in embedder_name.split("+"))


def text_of(mem: Memory, context_dense: bool) -> str:
    """The text a memory's vector is computed from (as the applier does)."""
    if context_dense and mem.context:
        return dialogue_text(mem)
    return dialogue.said(mem.layer, mem.source_session, mem.content, mem.metadata)


class Reembedder:
    def __init__(
        self,
        *,
        records: RecordStore,
        embedder: Embedder,
        ledger: SettingsLedger,
        context_dense: bool,
    ) -> None:
        self._records = records
        self._embedder = embedder
        self._ledger = ledger
        self._context_dense = context_dense
        self._space = vector_space(embedder.name)

    async def check(self) -> str:
        """``"same"``: the stored vectors are this embedder's; ``"switched"``: another's (all are
        re-embedded before the index is filled); ``"unknown"``: nothing recorded yet (the index
        is rebuilt once, and vectors of another size re-embedded)."""
        recorded = await self._ledger.get_setting(SETTING_KEY)
        if not recorded:
            return "unknown"
        same = recorded.get("space") == self._space and recorded.get("dim") == self._embedder.dim
        if not same:
            log.warning(
                "the stored vectors are %s's, the embedder is %s: every stored memory is "
                "embedded again before recall starts (progress follows); to keep the old "
                "vectors instead, start with the embedder that wrote them (setting 'embedder', "
                "flag --embedder)",
                recorded.get("space"),
                self._space,
            )
        return "same" if same else "switched"

    async def stored_ids(self) -> list[str]:
        ids: list[str] = []
        async for batch in self._records.iter_vectors(2000):
            ids.extend(item.id for item in batch)
        return ids

    async def reembed(self, ids: Sequence[str]) -> list[VectorItem]:
        """Compute the vectors of ``ids`` again from their texts and store them; returns them
        as index items."""
        if ids:
            log.warning("re-embedding %d stored memories with %s", len(ids), self._space)
        out: list[VectorItem] = []
        for start in range(0, len(ids), BATCH):
            mems = await self._records.get(ids[start : start + BATCH], embeddings=False)
            texts = [text_of(m, self._context_dense) for m in mems.values()]
            vectors: Any = await asyncio.to_thread(self._embedder.embed, texts) if texts else []
            await self._records.set_embeddings(list(zip(mems, vectors, strict=True)))
            out.extend(
                VectorItem(m.id, m.namespace, m.layer, v)
                for m, v in zip(mems.values(), vectors, strict=True)
                if m.status is Status.ACTIVE
            )
            done = start + len(mems)
            if done // PROGRESS_EVERY != start // PROGRESS_EVERY:
                log.info("re-embedding: %d of %d memories", done, len(ids))
        return out

    async def remember(self) -> None:
        """Record that the stored vectors are now this embedder's."""
        value = {"space": self._space, "dim": self._embedder.dim, "name": self._embedder.name}
        await self._ledger.put_setting(SETTING_KEY, value)
