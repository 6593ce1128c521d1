"""The ledger's memory-formation tables: dialogue turns kept until they are mined for facts, the
ids of the last mined ones (a turn recorded again is not kept twice), and per session how far
mining got and when the last turn came (for the idle trigger)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from gateway.core.model.candidates import FORMED_IDS_KEPT, DueSession, SessionTurns
from gateway.core.model.models import Turn, Zone
from stores.codec import dump_json_spaced, parse_json
from stores.sqlite_base import SqliteDb

T = TypeVar("T")

FORMATION_SCHEMA = """
CREATE TABLE IF NOT EXISTS transcript (
    pos INTEGER PRIMARY KEY AUTOINCREMENT, namespace TEXT NOT NULL, session_id TEXT NOT NULL,
    turn_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, at TEXT NOT NULL,
    metadata TEXT NOT NULL, UNIQUE(namespace, session_id, turn_id));
CREATE INDEX IF NOT EXISTS transcript_session ON transcript(namespace, session_id, pos);
CREATE TABLE IF NOT EXISTS formed_turn (
    namespace TEXT NOT NULL, session_id TEXT NOT NULL, turn_id TEXT NOT NULL, pos INTEGER NOT NULL,
    PRIMARY KEY (namespace, session_id, turn_id));
CREATE INDEX IF NOT EXISTS formed_turn_session ON formed_turn(namespace, session_id, pos);
CREATE INDEX IF NOT EXISTS formed_turn_id ON formed_turn(turn_id);
CREATE TABLE IF NOT EXISTS formation (
    namespace TEXT NOT NULL, session_id TEXT NOT NULL, formed_upto INTEGER NOT NULL DEFAULT 0,
    last_turn REAL NOT NULL, PRIMARY KEY (namespace, session_id));
"""


class FormationRecords:
    """Mixed into ``SqliteLedger``: the formation part of the ``Ledger`` contract."""

    _db: SqliteDb

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await self._db.write(fn)

    async def record_turns(self, namespace: str, session_id: str, turns: Sequence[Turn]) -> None:
        if not turns:
            return
        now = time.time()

        def run(c: sqlite3.Connection) -> None:
            c.executemany(
                "INSERT OR IGNORE INTO transcript(namespace, session_id, turn_id, role, content,"
                " at, metadata) SELECT ?1,?2,?3,?4,?5,?6,?7 WHERE NOT EXISTS (SELECT 1 FROM"
                " formed_turn WHERE namespace=?1 AND session_id=?2 AND turn_id=?3)",
                [
                    (
                        namespace,
                        session_id,
                        t.id,
                        t.role,
                        t.content,
                        t.at.isoformat(),
                        dump_json_spaced(t.metadata),
                    )
                    for t in turns
                ],
            )
            c.execute(
                "INSERT INTO formation(namespace, session_id, last_turn) VALUES (?,?,?)"
                " ON CONFLICT(namespace, session_id) DO UPDATE SET last_turn=excluded.last_turn",
                (namespace, session_id, now),
            )

        await self._run(run)

    async def unformed_turns(
        self, namespace: str, session_id: str, upto: int = 0, limit: int = 0
    ) -> SessionTurns:
        def run(c: sqlite3.Connection) -> tuple[int, list[Any]]:
            row = c.execute(
                "SELECT formed_upto FROM formation WHERE namespace=? AND session_id=?",
                (namespace, session_id),
            ).fetchone()
            after = int(row[0]) if row else 0
            rows = c.execute(
                "SELECT pos, turn_id, role, content, at, metadata FROM transcript"
                " WHERE namespace=? AND session_id=? AND pos>? AND (?=0 OR pos<=?) ORDER BY pos"
                " LIMIT ?",
                (namespace, session_id, after, upto, upto, limit or -1),
            ).fetchall()
            return after, rows

        after, rows = await self._db.read(run)
        turns = [
            Turn(r[1], r[2], r[3], Zone.DIALOGUE, datetime.fromisoformat(r[4]), parse_json(r[5]))
            for r in rows
        ]
        last = rows[-1][0] if rows else after
        return SessionTurns(namespace, session_id, after, last, turns)

    async def mark_formed(self, namespace: str, session_id: str, upto: int) -> None:
        def run(c: sqlite3.Connection) -> None:
            c.execute(
                "UPDATE formation SET formed_upto=MAX(formed_upto, ?)"
                " WHERE namespace=? AND session_id=?",
                (upto, namespace, session_id),
            )
            mined = (namespace, session_id, upto)
            c.execute(
                "INSERT OR IGNORE INTO formed_turn SELECT namespace, session_id, turn_id, pos"
                " FROM transcript WHERE namespace=? AND session_id=? AND pos<=?",
                mined,
            )
            c.execute("DELETE FROM transcript WHERE namespace=? AND session_id=? AND pos<=?", mined)
            c.execute(
                "DELETE FROM formed_turn WHERE namespace=?1 AND session_id=?2 AND pos <="
                " (SELECT pos FROM formed_turn WHERE namespace=?1 AND session_id=?2"
                " ORDER BY pos DESC LIMIT 1 OFFSET ?3)",
                (namespace, session_id, FORMED_IDS_KEPT),
            )

        await self._run(run)

    async def due_sessions(
        self, idle_before: float, every_turns: int, limit: int
    ) -> list[DueSession]:
        rows = await self._db.read(
            lambda c: c.execute(
                "SELECT t.namespace, t.session_id, MAX(t.pos), COUNT(*), f.last_turn"
                " FROM transcript t JOIN formation f"
                " ON f.namespace=t.namespace AND f.session_id=t.session_id"
                " WHERE t.pos > f.formed_upto GROUP BY t.namespace, t.session_id"
                " HAVING f.last_turn < ? OR (? > 0 AND COUNT(*) >= ?) LIMIT ?",
                (idle_before, every_turns, every_turns, limit),
            ).fetchall()
        )
        return [DueSession(r[0], r[1], int(r[2]), int(r[3]), r[4] < idle_before) for r in rows]
