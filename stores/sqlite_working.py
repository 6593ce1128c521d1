"""Embedded working memory: one SQLite file in WAL mode, synchronous=FULL (the default when no
Redis is configured).

Mirrors ``RedisWorkingStore`` exactly (see ``gateway.core.ports.ports.WorkingStore``):

* each (namespace, session) has an expiry (``wm_session.expires_at``) refreshed by every read and
  write; an expired session reads as empty and is purged the next time it is touched, plus a
  periodic sweep of all expired sessions;
* appends are idempotent by turn id: every appended id is remembered in ``wm_seen`` for the life
  of the session, so a replay is skipped even after its turn was trimmed or taken;
* the append, the trim of each touched zone to its newest ``max_len`` and the expiry refresh run
  in one transaction.

One ``SqliteDb`` (its own worker thread, one transaction per operation), so the event loop never
blocks on disk I/O and every operation is serialised. ``clock`` is injectable for TTL tests.
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from gateway.core.model.errors import BackendUnavailable, InvalidArgument
from gateway.core.model.models import Turn, Zone
from gateway.core.model.state_budget import StateShare, StateTotals
from stores.codec import dump_json, dump_json_ascii, parse_json
from stores.sqlite_base import SqliteDb

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS wm_session (
    namespace   TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    expires_at  REAL    NOT NULL,             -- unix seconds
    next_seq    INTEGER NOT NULL DEFAULT 0,   -- insertion order of turns, across zones
    PRIMARY KEY (namespace, session_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS wm_session_expiry ON wm_session (expires_at);

CREATE TABLE IF NOT EXISTS wm_turn (
    namespace   TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    zone        TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    turn_id     TEXT    NOT NULL,
    role        TEXT    NOT NULL,
    content     TEXT    NOT NULL,
    at          TEXT    NOT NULL,             -- ISO 8601, UTC
    metadata    TEXT    NOT NULL DEFAULT '{}', -- JSON object of strings
    PRIMARY KEY (namespace, session_id, zone, seq),
    UNIQUE (namespace, session_id, turn_id)
);

CREATE TABLE IF NOT EXISTS wm_seen (
    namespace   TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    turn_id     TEXT NOT NULL,
    PRIMARY KEY (namespace, session_id, turn_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS wm_state (
    namespace   TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    PRIMARY KEY (namespace, session_id, key)
) WITHOUT ROWID;

-- session state counted per agent (``reserve_state``): the agent that last changed a
-- session's state, its keys and bytes, until the session TTL after that change
CREATE TABLE IF NOT EXISTS wm_state_share (
    namespace   TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    agent       TEXT    NOT NULL,
    keys        INTEGER NOT NULL,
    size        INTEGER NOT NULL,
    expires_at  REAL    NOT NULL,
    PRIMARY KEY (namespace, session_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS wm_state_share_agent ON wm_state_share (agent, expires_at);
"""

_SESSION_TABLES = ("wm_turn", "wm_seen", "wm_state", "wm_session")


def _check_ids(namespace: str, session_id: str) -> None:
    if not namespace:
        raise InvalidArgument("namespace must not be empty", field="namespace")
    if not session_id:
        raise InvalidArgument("session_id must not be empty", field="session_id")


def _utc_iso(at: datetime) -> str:
    """Timezone-aware UTC ISO text; a naive datetime is taken to be UTC already."""
    at = at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
    return at.isoformat()


def _parse_at(text: str) -> datetime:
    at = datetime.fromisoformat(text)
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


class SqliteWorkingStore:
    """``WorkingStore`` over an embedded SQLite database (``path``; ``:memory:`` works too)."""

    backend = "sqlite"

    def __init__(
        self,
        path: Path,
        ttl_seconds: int = 3600,
        sweep_interval: float = 60.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if ttl_seconds <= 0:
            raise ValueError("ttl_seconds must be positive")
        self._path = Path(path)
        self._ttl = int(ttl_seconds)
        self._sweep_interval = sweep_interval
        self._next_sweep = 0.0
        self._clock = clock
        self._db = SqliteDb(path, _SCHEMA, "working store")
        self._closed = False

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        self._closed = False
        await self._db.start()

    async def close(self) -> None:
        self._closed = True
        await self._db.close()

    async def ping(self) -> None:
        await self._run(lambda db: db.execute("SELECT 1").fetchone())

    async def durability(self) -> str:
        return self._db.durability()

    # ------------------------------------------------------------------ contract

    async def append(
        self, namespace: str, session_id: str, turns: Sequence[Turn], max_len: int
    ) -> dict[Zone, int]:
        _check_ids(namespace, session_id)
        if max_len < 1:
            raise InvalidArgument("max_len must be at least 1", field="max_len")
        rows = [
            (
                t.id,
                Zone(t.zone).value,
                t.role,
                t.content,
                _utc_iso(t.at),
                dump_json(dict(t.metadata)),
            )
            for t in turns
        ]
        if any(not r[0] for r in rows):
            raise InvalidArgument("every turn needs an id", field="turns")
        return await self._run(lambda db: self._append(db, namespace, session_id, rows, max_len))

    async def window(
        self, namespace: str, session_id: str, zones: Sequence[Zone] | None = None
    ) -> dict[Zone, list[Turn]]:
        _check_ids(namespace, session_id)
        wanted = list(dict.fromkeys(Zone(z) for z in (zones if zones is not None else Zone)))
        return await self._run(lambda db: self._window(db, namespace, session_id, wanted))

    async def take_oldest(self, namespace: str, session_id: str, zone: Zone, n: int) -> list[Turn]:
        _check_ids(namespace, session_id)
        zone = Zone(zone)
        if n <= 0:
            return []
        return await self._run(lambda db: self._take_oldest(db, namespace, session_id, zone, n))

    async def clear(self, namespace: str, session_id: str, zone: Zone | None = None) -> None:
        _check_ids(namespace, session_id)
        zone = None if zone is None else Zone(zone)
        await self._run(lambda db: self._clear(db, namespace, session_id, zone))

    async def get_state(self, namespace: str, session_id: str) -> dict[str, str]:
        _check_ids(namespace, session_id)
        return await self._run(lambda db: self._get_state(db, namespace, session_id))

    async def set_state(
        self, namespace: str, session_id: str, updates: dict[str, str], remove: Sequence[str] = ()
    ) -> dict[str, str]:
        _check_ids(namespace, session_id)
        updates = {str(k): str(v) for k, v in updates.items()}
        remove = [str(k) for k in remove]
        return await self._run(
            lambda db: self._set_state(db, namespace, session_id, updates, remove)
        )

    async def ttl_seconds(self, namespace: str, session_id: str) -> int:
        _check_ids(namespace, session_id)
        return await self._run(lambda db: self._ttl_seconds(db, namespace, session_id))

    async def remove_turns(self, namespace: str, session_id: str, turn_ids: Sequence[str]) -> int:
        _check_ids(namespace, session_id)
        ids = list(dict.fromkeys(turn_ids))
        if not ids:
            return 0

        def run(db: sqlite3.Connection) -> int:
            n = 0
            for turn_id in ids:
                n += db.execute(
                    "DELETE FROM wm_turn WHERE namespace = ? AND session_id = ? AND turn_id = ?",
                    (namespace, session_id, turn_id),
                ).rowcount
            return n

        removed = await self._run(run)
        await self._db.checkpoint()
        return removed

    async def erase_namespace(self, namespace: str) -> int:
        def run(db: sqlite3.Connection) -> int:
            sessions = db.execute(
                "SELECT COUNT(*) FROM wm_session WHERE namespace = ?", (namespace,)
            ).fetchone()[0]
            for table in _SESSION_TABLES:
                db.execute(f"DELETE FROM {table} WHERE namespace = ?", (namespace,))
            return int(sessions)

        count = await self._run(run)
        await self._db.checkpoint()
        return count

    async def reserve_state(self, share: StateShare, max_keys: int, max_bytes: int) -> StateTotals:
        _check_ids(share.namespace, share.session_id)
        return await self._run(lambda db: self._reserve_state(db, share, max_keys, max_bytes))

    async def release_state(self, agent: str, namespace: str, session_id: str) -> None:
        await self._run(
            lambda db: db.execute(
                "DELETE FROM wm_state_share WHERE namespace = ? AND session_id = ? AND agent = ?",
                (namespace, session_id, agent),
            )
        )

    # ------------------------------------------------------------------ plumbing

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise BackendUnavailable("sqlite", "working store is closed")
        return await self._db.write(fn)

    # Every operation below runs on the worker thread, holding the lock, inside one transaction.

    def _live(self, db: sqlite3.Connection, ns: str, sid: str, now: float) -> bool:
        """Whether the session exists and has not expired; an expired one is purged here."""
        row = db.execute(
            "SELECT expires_at FROM wm_session WHERE namespace = ? AND session_id = ?", (ns, sid)
        ).fetchone()
        if row is None:
            return False
        if row[0] <= now:
            self._purge(db, ns, sid)
            return False
        return True

    @staticmethod
    def _purge(db: sqlite3.Connection, ns: str, sid: str) -> None:
        for table in _SESSION_TABLES:
            db.execute(f"DELETE FROM {table} WHERE namespace = ? AND session_id = ?", (ns, sid))

    def _refresh(self, db: sqlite3.Connection, ns: str, sid: str, now: float) -> None:
        db.execute(
            "INSERT INTO wm_session (namespace, session_id, expires_at) VALUES (?, ?, ?) "
            "ON CONFLICT (namespace, session_id) DO UPDATE SET expires_at = excluded.expires_at",
            (ns, sid, now + self._ttl),
        )

    def _maybe_sweep(self, db: sqlite3.Connection, now: float) -> None:
        """Purge every expired session, at most once per ``sweep_interval`` (inside a txn)."""
        if now < self._next_sweep:
            return
        self._next_sweep = now + self._sweep_interval
        expired = db.execute(
            "SELECT namespace, session_id FROM wm_session WHERE expires_at <= ?", (now,)
        ).fetchall()
        for ns, sid in expired:
            self._purge(db, ns, sid)
        db.execute("DELETE FROM wm_state_share WHERE expires_at <= ?", (now,))

    def _append(
        self,
        db: sqlite3.Connection,
        ns: str,
        sid: str,
        rows: list[tuple[str, str, str, str, str, str]],
        max_len: int,
    ) -> dict[Zone, int]:
        now = self._clock()
        self._maybe_sweep(db, now)
        live = self._live(db, ns, sid, now)
        if not rows:
            if live:
                self._refresh(db, ns, sid, now)
            return {}
        self._refresh(db, ns, sid, now)
        seq = db.execute(
            "SELECT next_seq FROM wm_session WHERE namespace = ? AND session_id = ?", (ns, sid)
        ).fetchone()[0]
        touched: dict[Zone, None] = {}
        for turn_id, zone, role, content, at, metadata in rows:
            touched[Zone(zone)] = None
            new = db.execute(
                "INSERT OR IGNORE INTO wm_seen (namespace, session_id, turn_id) VALUES (?, ?, ?)",
                (ns, sid, turn_id),
            ).rowcount
            if not new:
                continue
            db.execute(
                "INSERT INTO wm_turn (namespace, session_id, zone, seq, turn_id, role, content, "
                "at, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (ns, sid, zone, seq, turn_id, role, content, at, metadata),
            )
            seq += 1
        db.execute(
            "UPDATE wm_session SET next_seq = ? WHERE namespace = ? AND session_id = ?",
            (seq, ns, sid),
        )
        lengths: dict[Zone, int] = {}
        for zone in touched:
            # Keep the newest max_len: drop everything at or below the (max_len+1)-th newest seq.
            db.execute(
                "DELETE FROM wm_turn WHERE namespace = ? AND session_id = ? AND zone = ? "
                "AND seq <= (SELECT seq FROM wm_turn WHERE namespace = ? AND session_id = ? "
                "AND zone = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
                (ns, sid, zone.value, ns, sid, zone.value, max_len),
            )
            lengths[zone] = db.execute(
                "SELECT count(*) FROM wm_turn WHERE namespace = ? AND session_id = ? AND zone = ?",
                (ns, sid, zone.value),
            ).fetchone()[0]
        return lengths

    def _window(
        self, db: sqlite3.Connection, ns: str, sid: str, zones: list[Zone]
    ) -> dict[Zone, list[Turn]]:
        now = self._clock()
        out: dict[Zone, list[Turn]] = {z: [] for z in zones}
        if self._live(db, ns, sid, now):
            self._refresh(db, ns, sid, now)
            if zones:
                marks = ",".join("?" * len(zones))
                cur = db.execute(
                    "SELECT zone, turn_id, role, content, at, metadata FROM wm_turn "
                    f"WHERE namespace = ? AND session_id = ? AND zone IN ({marks}) ORDER BY seq",
                    (ns, sid, *(z.value for z in zones)),
                )
                for zone, *rest in cur:
                    out[Zone(zone)].append(self._turn(zone, *rest))
        return out

    def _take_oldest(
        self, db: sqlite3.Connection, ns: str, sid: str, zone: Zone, n: int
    ) -> list[Turn]:
        now = self._clock()
        if not self._live(db, ns, sid, now):
            return []
        self._refresh(db, ns, sid, now)
        rows = db.execute(
            "SELECT seq, turn_id, role, content, at, metadata FROM wm_turn "
            "WHERE namespace = ? AND session_id = ? AND zone = ? ORDER BY seq LIMIT ?",
            (ns, sid, zone.value, n),
        ).fetchall()
        if rows:
            db.execute(
                "DELETE FROM wm_turn WHERE namespace = ? AND session_id = ? AND zone = ? "
                "AND seq <= ?",
                (ns, sid, zone.value, rows[-1][0]),
            )
        return [self._turn(zone.value, *row[1:]) for row in rows]

    def _clear(self, db: sqlite3.Connection, ns: str, sid: str, zone: Zone | None) -> None:
        now = self._clock()
        if self._live(db, ns, sid, now):
            if zone is None:
                self._purge(db, ns, sid)
            else:
                db.execute(
                    "DELETE FROM wm_turn WHERE namespace = ? AND session_id = ? AND zone = ?",
                    (ns, sid, zone.value),
                )
                self._refresh(db, ns, sid, now)

    def _get_state(self, db: sqlite3.Connection, ns: str, sid: str) -> dict[str, str]:
        now = self._clock()
        if not self._live(db, ns, sid, now):
            return {}
        self._refresh(db, ns, sid, now)
        return self._read_state(db, ns, sid)

    def _set_state(
        self,
        db: sqlite3.Connection,
        ns: str,
        sid: str,
        updates: dict[str, str],
        remove: list[str],
    ) -> dict[str, str]:
        now = self._clock()
        live = self._live(db, ns, sid, now)
        if not live and not updates:
            return {}
        self._refresh(db, ns, sid, now)
        db.executemany(
            "INSERT INTO wm_state (namespace, session_id, key, value) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (namespace, session_id, key) DO UPDATE SET value = excluded.value",
            [(ns, sid, k, v) for k, v in updates.items()],
        )
        if remove:  # one statement for every removal (the caller bounds how many)
            db.execute(
                "DELETE FROM wm_state WHERE namespace = ? AND session_id = ? "
                "AND key IN (SELECT value FROM json_each(?))",
                (ns, sid, dump_json_ascii(list(remove))),
            )
        return self._read_state(db, ns, sid)

    def _reserve_state(
        self, db: sqlite3.Connection, share: StateShare, max_keys: int, max_bytes: int
    ) -> StateTotals:
        now = self._clock()
        where = (share.namespace, share.session_id)
        mine = db.execute(
            "SELECT keys, size FROM wm_state_share WHERE namespace = ? AND session_id = ?"
            " AND agent = ? AND expires_at > ?",
            (*where, share.agent, now),
        ).fetchone() or (0, 0)
        others = db.execute(
            "SELECT COALESCE(SUM(keys), 0), COALESCE(SUM(size), 0) FROM wm_state_share"
            " WHERE agent = ? AND expires_at > ? AND NOT (namespace = ? AND session_id = ?)",
            (share.agent, now, *where),
        ).fetchone()
        totals = StateTotals(others[0] + share.keys, others[1] + share.size)
        if totals.keys > max_keys and share.keys > mine[0]:
            return StateTotals(totals.keys, totals.size, "keys")
        if totals.size > max_bytes and share.size > mine[1]:
            return StateTotals(totals.keys, totals.size, "bytes")
        db.execute("DELETE FROM wm_state_share WHERE namespace = ? AND session_id = ?", where)
        if share.keys or share.size:
            db.execute(
                "INSERT INTO wm_state_share VALUES (?, ?, ?, ?, ?, ?)",
                (*where, share.agent, share.keys, share.size, now + self._ttl),
            )
        return totals

    def _ttl_seconds(self, db: sqlite3.Connection, ns: str, sid: str) -> int:
        """Like Redis TTL (rounded to the second); does not refresh the expiry."""
        now = self._clock()
        ttl = -2
        if self._live(db, ns, sid, now) and self._has_data(db, ns, sid):
            (expires_at,) = db.execute(
                "SELECT expires_at FROM wm_session WHERE namespace = ? AND session_id = ?",
                (ns, sid),
            ).fetchone()
            ttl = max(0, math.floor(expires_at - now + 0.5))
        return ttl

    @staticmethod
    def _has_data(db: sqlite3.Connection, ns: str, sid: str) -> bool:
        """A session with no turns, no state and no seen ids does not exist (as in Redis)."""
        return any(
            db.execute(
                f"SELECT 1 FROM {table} WHERE namespace = ? AND session_id = ? LIMIT 1", (ns, sid)
            ).fetchone()
            for table in ("wm_seen", "wm_state", "wm_turn")
        )

    @staticmethod
    def _read_state(db: sqlite3.Connection, ns: str, sid: str) -> dict[str, str]:
        return dict(
            db.execute(
                "SELECT key, value FROM wm_state WHERE namespace = ? AND session_id = ? "
                "ORDER BY key",
                (ns, sid),
            ).fetchall()
        )

    @staticmethod
    def _turn(zone: str, turn_id: str, role: str, content: str, at: str, metadata: str) -> Turn:
        return Turn(
            id=turn_id,
            role=role,
            content=content,
            zone=Zone(zone),
            at=_parse_at(at),
            metadata=parse_json(metadata),
        )
