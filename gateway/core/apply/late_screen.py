"""The second injection screen for writes acknowledged before it judged them: a write
that does not wait is journaled (fsynced, acknowledged) with ``unscreened`` set, and the applier
asks the screen here — one call per batch — before the write is derived, stored or indexed. A
flagged write is stored quarantined (never recalled; the reviewer can release it) and audited,
exactly as if the request path had flagged it; ``Get`` tells its writer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from gateway.core.model.command_types import MemoryWrite
from gateway.core.model.control import AuditEntry, JournalEntry, ReviewItem
from gateway.core.ports.control_ports import AuditLedger, ReviewLedger
from gateway.core.ports.injection_screen import InjectionScreen


class ScreenLedger(AuditLedger, ReviewLedger, Protocol):
    """The ledger areas this module uses."""


class LateScreen:
    def __init__(self, screen: InjectionScreen, ledger: ScreenLedger) -> None:
        self._screen = screen
        self._ledger = ledger

    async def judge(
        self, items: Sequence[tuple[JournalEntry, MemoryWrite]]
    ) -> list[tuple[JournalEntry, MemoryWrite]]:
        """``items`` with every unscreened write judged: flagged ones quarantined."""
        owners: list[int] = []
        texts: list[str] = []
        for i, (_, c) in enumerate(items):
            if c.unscreened and not c.quarantined:
                fields = [c.content, *c.evidence, *c.metadata.values()]
                owners += [i] * len(fields)
                texts += fields
        if not texts:
            return list(items)
        out = list(items)
        flagged: dict[int, str] = {}
        for i, reason in zip(owners, await self._screen.find(texts), strict=True):
            if reason and i not in flagged:
                flagged[i] = reason
        for i in flagged:
            entry, c = out[i]
            out[i] = (entry, replace(c, quarantined=True))
        if flagged:
            # the review queue first: a crash between the two re-judges the batch on replay
            await self._ledger.add_review(
                [
                    ReviewItem(
                        out[i][0].write_id, out[i][1].namespace, f"quarantined: {reason}"[:200]
                    )
                    for i, reason in flagged.items()
                ]
            )
            await self._ledger.audit(
                [
                    AuditEntry(
                        out[i][0].agent_id, "quarantine", out[i][1].namespace, out[i][0].write_id,
                        reason[:200],
                    )
                    for i, reason in flagged.items()
                ]
            )  # fmt: skip
        return out
