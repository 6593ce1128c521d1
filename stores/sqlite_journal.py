"""The durable write journal: every acknowledged write is in here, synced to disk, before the
caller hears back. SQLite in WAL mode with synchronous=FULL gives an fsync per commit; concurrent
appends are grouped into one commit (group commit) so throughput does not pay one fsync per write.

Erasure: ``erase_pending`` drops the payload of entries not applied yet, and every erasure
truncates the WAL; with ``secure_delete`` on, a dropped payload (also one dropped by
``mark_applied``) leaves no copy in the database file.

Idempotency lives here too: (agent, idempotency key) is unique, so a retried write returns the
write id it got the first time and is stored once.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import os
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from gateway.core.model import commands
from gateway.core.model.control import Accepted, EntryState, JournalEntry, NewEntry, readable
from gateway.core.model.errors import Conflict, FailedPrecondition
from stores.sqlite_base import SqliteDb, chunks, marks

_SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    write_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    idem_key TEXT,
    digest TEXT NOT NULL,
    payload TEXT,            -- NULL once applied (the row stays for idempotency)
    applied INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    applied_at REAL,
    error TEXT               -- set when the entry could never be applied (applied=2)
);
CREATE UNIQUE INDEX IF NOT EXISTS journal_idem ON journal(agent_id, idem_key)
    WHERE idem_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS journal_pending ON journal(applied, seq);
"""


class SqliteJournal:
    """``Journal`` over one SQLite file (WAL, synchronous=FULL), one gateway per data dir."""

    shared = False  # one gateway per data dir: only this process applies it
    idle_poll_s = 1.0  # appends wake the lanes directly; this is a safety net

    def __init__(self, path: Path) -> None:
        self._path = path
        self._db = SqliteDb(path, _SCHEMA, "journal", synchronous="FULL")
        self._queue: asyncio.Queue[tuple[list[NewEntry], asyncio.Future[list[Accepted]]]] | None
        self._queue = None
        self._committer: asyncio.Task[None] | None = None
        self._lockfile: IO[str] | None = None
        #: entries acknowledged but not applied yet (kept in memory for back-pressure checks)
        self.pending_count = 0

    async def start(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._lockfile = _exclusive(self._path.with_suffix(".lock"))
        await self._db.start()
        self.pending_count = await self._db.read(
            lambda c: c.execute("SELECT COUNT(*) FROM journal WHERE applied=0").fetchone()[0]
        )
        self._queue = asyncio.Queue()
        self._committer = asyncio.create_task(self._commit_loop(), name="journal-commit")

    async def close(self) -> None:
        if self._lockfile:
            self._lockfile.close()  # releases the flock
            self._lockfile = None
        if self._committer:
            self._committer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._committer
        await self._db.close()

    async def append(self, entries: Sequence[NewEntry]) -> list[Accepted]:
        """Durably append entries, all or none; returns once they are on disk."""
        assert self._queue is not None, "journal not started"
        fut: asyncio.Future[list[Accepted]] = asyncio.get_running_loop().create_future()
        await self._queue.put((list(entries), fut))
        return await fut

    async def _commit_loop(self) -> None:
        assert self._queue is not None
        while True:
            group = [await self._queue.get()]
            while not self._queue.empty() and len(group) < 256:
                group.append(self._queue.get_nowait())
            batches = [g[0] for g in group]
            try:
                results: list[list[Accepted] | BaseException] = await self._db.write(
                    functools.partial(self._commit_group, batches=batches)
                )
            except Exception as exc:  # noqa: BLE001 - the commit failed (I/O, a full disk):
                # nothing of the group is acknowledged; its callers hear why, the loop goes on
                results = [exc] * len(group)
            for (_, fut), result in zip(group, results, strict=True):
                if fut.done():
                    continue
                if isinstance(result, BaseException):
                    fut.set_exception(result)
                else:
                    self.pending_count += sum(not a.duplicate for a in result)
                    fut.set_result(result)

    @staticmethod
    def _commit_group(
        conn: sqlite3.Connection, batches: list[list[NewEntry]]
    ) -> list[list[Accepted] | BaseException]:
        """One fsync for many callers; each caller's batch is its own savepoint (all or none)."""
        out: list[list[Accepted] | BaseException] = []
        for batch in batches:
            conn.execute("SAVEPOINT batch")
            try:
                out.append([SqliteJournal._insert(conn, e) for e in batch])
                conn.execute("RELEASE batch")
            except Exception as exc:  # noqa: BLE001 - reported to that caller only
                conn.execute("ROLLBACK TO batch")
                conn.execute("RELEASE batch")
                out.append(exc)
        return out

    @staticmethod
    def _insert(conn: sqlite3.Connection, e: NewEntry) -> Accepted:
        digest = commands.digest(e.command)
        if e.idem_key:
            row = conn.execute(
                "SELECT seq, write_id, digest, applied FROM journal"
                " WHERE agent_id=? AND idem_key=?",
                (e.agent_id, e.idem_key),
            ).fetchone()
            if row:
                if row[2] != digest:
                    raise Conflict(
                        f"idempotency_key {e.idem_key!r} was already used for a different write; "
                        "use a new key for new content",
                        field="idempotency_key",
                    )
                return Accepted(seq=row[0], write_id=row[1], duplicate=True, applied=bool(row[3]))
        cur = conn.execute(
            "INSERT INTO journal(write_id, kind, agent_id, idem_key, digest, payload, created)"
            " VALUES (?,?,?,?,?,?,?)",
            (
                e.write_id,
                e.kind,
                e.agent_id,
                e.idem_key or None,
                digest,
                commands.dumps(e.command),
                time.time(),
            ),
        )
        return Accepted(
            seq=int(cur.lastrowid or 0), write_id=e.write_id, duplicate=False, applied=False
        )

    async def pending(
        self, limit: int, kinds: Sequence[str] = (), after: int = 0
    ) -> list[JournalEntry]:
        """The oldest entries not applied yet (of the given kinds, with a seq above ``after``),
        in journal order."""

        where = "applied=0 AND seq>?"
        if kinds:
            where += f" AND kind IN ({marks(len(kinds))})"
        rows = await self._db.read(
            lambda c: c.execute(
                "SELECT seq, write_id, kind, agent_id, payload FROM journal"
                f" WHERE {where} ORDER BY seq LIMIT ?",
                (after, *kinds, limit),
            ).fetchall()
        )
        return readable(rows)

    async def mark_applied(self, seqs: Sequence[int]) -> None:
        now = time.time()
        self.pending_count -= await self._db.write(
            lambda c: _rowcount(
                c.executemany(
                    "UPDATE journal SET applied=1, payload=NULL, applied_at=?"
                    " WHERE seq=? AND applied=0",
                    [(now, s) for s in seqs],
                )
            )
        )

    async def mark_dead(self, seq: int, error: str) -> None:
        """Takes an entry that can never apply out of the queue (kept, with the error)."""

        now = time.time()
        self.pending_count -= await self._db.write(
            lambda c: _rowcount(
                c.execute(
                    "UPDATE journal SET applied=2, applied_at=?, error=? WHERE seq=? AND applied=0",
                    (now, error[:500], seq),
                )
            )
        )

    async def state(self, seq: int) -> int:
        """0 pending, 1 applied, 2 dead (could not be applied), -1 unknown."""

        row = await self._db.read(
            lambda c: c.execute("SELECT applied FROM journal WHERE seq=?", (seq,)).fetchone()
        )
        return int(row[0]) if row else EntryState.UNKNOWN

    async def states(self, seqs: Sequence[int]) -> dict[int, int]:
        unique = list(dict.fromkeys(int(s) for s in seqs))

        def run(c: sqlite3.Connection) -> dict[int, int]:
            out = dict.fromkeys(unique, EntryState.UNKNOWN)
            for part in chunks(unique):
                out.update(
                    c.execute(
                        f"SELECT seq, applied FROM journal WHERE seq IN ({marks(len(part))})",
                        part,
                    ).fetchall()
                )
            return out

        return await self._db.read(run) if unique else {}

    async def prune(self, older_than_s: float) -> int:
        """Drop applied entries older than the retention: their idempotency keys expire too."""

        cutoff = time.time() - older_than_s
        return await self._db.write(
            lambda c: _rowcount(
                c.execute("DELETE FROM journal WHERE applied > 0 AND applied_at < ?", (cutoff,))
            )
        )

    async def oldest_pending_age(self) -> float:
        """Seconds since the oldest entry still waiting to be applied was acknowledged (0: none)."""

        row = await self._db.read(
            lambda c: c.execute("SELECT MIN(created) FROM journal WHERE applied=0").fetchone()
        )
        return max(0.0, time.time() - row[0]) if row and row[0] else 0.0

    async def erase_pending(self, namespace: str, write_ids: Sequence[str], before_seq: int) -> int:
        def run(c: sqlite3.Connection) -> int:
            n = 0
            if namespace:
                n += _rowcount(
                    c.execute(
                        "UPDATE journal SET applied=2, payload=NULL, applied_at=?, error=?"
                        " WHERE applied=0 AND seq < ? AND kind IN ('memory', 'turn')"
                        # a payload that is not JSON matches no namespace (json_extract would
                        # fail the whole erasure); the lane marks it dead when it comes to it
                        " AND CASE WHEN json_valid(payload)"
                        " THEN json_extract(payload, '$.namespace') END = ?",
                        (now, "erased before it was applied", before_seq, namespace),
                    )
                )
            for part in chunks(list(write_ids)):
                n += _rowcount(
                    c.execute(
                        "UPDATE journal SET applied=2, payload=NULL, applied_at=?, error=?"
                        " WHERE applied=0 AND seq < ? AND kind IN ('memory', 'turn')"
                        f" AND write_id IN ({marks(len(part))})",
                        (now, "erased before it was applied", before_seq, *part),
                    )
                )
                # a dead entry (kept with its error) keeps no copy of an erased write either
                c.execute(
                    "UPDATE journal SET payload=NULL WHERE applied=2 AND payload IS NOT NULL"
                    f" AND write_id IN ({marks(len(part))})",
                    part,
                )
            if namespace:
                c.execute(
                    "UPDATE journal SET payload=NULL WHERE applied=2 AND payload IS NOT NULL"
                    " AND CASE WHEN json_valid(payload)"
                    " THEN json_extract(payload, '$.namespace') END = ?",
                    (namespace,),
                )
            return n

        now = time.time()
        count = await self._db.write(run)
        self.pending_count -= count
        await self._db.checkpoint()  # no page image of a dropped payload stays in the WAL
        return count

    async def counts(self) -> tuple[int, int]:
        """(pending, applied)."""

        rows = dict(
            await self._db.read(
                lambda c: c.execute(
                    "SELECT applied, COUNT(*) FROM journal GROUP BY applied"
                ).fetchall()
            )
        )
        return int(rows.get(0, 0)), int(rows.get(1, 0)) + int(rows.get(2, 0))


def _rowcount(cur: sqlite3.Cursor) -> int:
    n = cur.rowcount
    cur.close()  # never let a cursor outlive the lock
    return n


def _exclusive(path: Path) -> IO[str]:
    """One gateway per data dir: a second one would apply the same journal twice over."""
    f = path.open("a+")
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.seek(0)
        owner = f.read().strip() or "another process"
        f.close()
        raise FailedPrecondition(
            f"the data dir {path.parent} is in use by {owner}: stop that gateway, or start this "
            "one with another --data-dir"
        ) from None
    f.seek(0)
    f.truncate()
    f.write(f"memgate pid {os.getpid()}")
    f.flush()
    return f
