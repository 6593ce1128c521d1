"""Model summaries of working-memory overflow, off the request path (seed 000 §3.2, 004 §3.3).
When a dialogue overflows, the turn lane puts the extractive summary in the task zone at once (so
AppendTurn never waits for a model) and journals a ``SummariseOverflow`` job; the formation lane
asks the configured summariser (a model) and swaps its summary in for the extractive one. A
failing model leaves the extractive summary; a summary that was erased or trimmed meanwhile is
not brought back."""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Sequence

from gateway.core.journal.write_path import WritePath
from gateway.core.model.commands import SummariseOverflow
from gateway.core.model.control import JournalEntry, NewEntry
from gateway.core.model.errors import MemgateError
from gateway.core.model.models import Turn, Zone
from gateway.core.ports.ports import Summariser, WorkingStore
from gateway.core.writing.working import SUMMARY_PREFIX, SUMMARY_ROLE, TASK_ZONE_MAX

log = logging.getLogger("memgate.working")

#: the identity the jobs are journaled under
SUMMARY_AGENT = "memgate.summariser"


class OverflowSummaries:
    def __init__(
        self, store: WorkingStore, write_path: WritePath, summariser: Summariser, budget: int
    ) -> None:
        self._store = store
        self._write_path = write_path
        self._summariser = summariser
        self._budget = budget

    async def schedule(
        self, namespace: str, session_id: str, summary_id: str, turns: list[Turn]
    ) -> None:
        """Journal the job (not waiting for it). Runs on the turn lane: a failure to journal is
        logged, never raised — the extractive summary is already in place."""
        cmd = SummariseOverflow(
            namespace, session_id, summary_id, tuple((t.id, t.role, t.content) for t in turns)
        )
        key = hashlib.sha256(f"{namespace}\n{session_id}\n{summary_id}".encode()).hexdigest()
        entry = NewEntry(uuid.uuid4().hex, SUMMARY_AGENT, f"summarise:{key[:40]}", cmd)
        try:
            await self._write_path.commit([entry], wait=False, action="summarise")
        except MemgateError as exc:
            log.warning("overflow of %s/%s not sent to %s: %s", namespace, session_id,
                        self._summariser.name, exc.message)  # fmt: skip

    async def apply(self, entries: Sequence[JournalEntry]) -> None:
        for entry in entries:
            if isinstance(entry.command, SummariseOverflow):
                await self._run(entry.command)

    async def _run(self, job: SummariseOverflow) -> None:
        task = (await self._store.window(job.namespace, job.session_id, [Zone.TASK])).get(
            Zone.TASK, []
        )
        replacement = f"{job.summary_id}:{self._summariser.name}"
        ids = {t.id for t in task}
        if job.summary_id not in ids:
            return  # already replaced (a replay), or erased / trimmed since: nothing to do
        turns = [Turn(i, role, content) for i, role, content in job.turns]
        try:
            summary = await self._summariser.summarise(turns, self._budget)
        except Exception:  # noqa: BLE001 - a failing model leaves the extractive summary
            log.warning("%s failed; the extractive summary stays", self._summariser.name)
            return
        turn = Turn(replacement, SUMMARY_ROLE, f"{SUMMARY_PREFIX} {summary}", Zone.TASK)
        await self._store.append(job.namespace, job.session_id, [turn], max_len=TASK_ZONE_MAX)
        await self._store.remove_turns(job.namespace, job.session_id, [job.summary_id])
