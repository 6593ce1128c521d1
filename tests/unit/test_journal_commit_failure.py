"""The SQLite journal's commit loop outlives a failed commit (a disk I/O error, a full disk at
the WAL write): the callers of that group hear UNAVAILABLE (nothing was acknowledged), and the
next appends commit as usual. Before, the loop ended: those callers and every later write hung
until the gateway restarted."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from gateway.core.model.commands import MemoryWrite
from gateway.core.model.control import NewEntry
from gateway.core.model.errors import BackendUnavailable
from gateway.core.model.models import Layer
from stores.sqlite_journal import SqliteJournal


def _e(wid: str) -> NewEntry:
    return NewEntry(wid, "a", "", MemoryWrite("user/u", Layer.SEMANTIC, wid))


async def test_a_failed_commit_fails_its_callers_and_the_next_append_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = SqliteJournal(tmp_path / "j.db")
    await journal.start()
    try:
        real_write = journal._db.write
        failures = [BackendUnavailable("sqlite", "journal: disk I/O error")]

        async def write(fn: Any) -> Any:
            if failures:
                raise failures.pop()
            return await real_write(fn)

        monkeypatch.setattr(journal._db, "write", write)
        with pytest.raises(BackendUnavailable, match="disk I/O error"):
            await asyncio.wait_for(journal.append([_e("w1")]), timeout=5)
        accepted = await asyncio.wait_for(journal.append([_e("w2")]), timeout=5)
        assert [a.write_id for a in accepted] == ["w2"]
        assert [e.write_id for e in await journal.pending(10)] == ["w2"]  # w1 was never taken
    finally:
        await journal.close()
