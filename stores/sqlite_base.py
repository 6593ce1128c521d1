"""The one SQLite base every embedded store uses: a connection per file (WAL), opened with the
store's schema, used under a lock from one worker thread; writes run as one ``BEGIN IMMEDIATE``
transaction rolled back on any error. The time a call spends on the worker thread (not waiting
for it) is reported to ``stores.timing`` for the circuit breaker. ``secure_delete`` is on (deleted
content is zeroed) and ``checkpoint()`` truncates the WAL, so an erasure leaves nothing behind in
either file. ``sqlite3.OperationalError`` (locked, disk I/O, cannot open)
surfaces as ``BackendUnavailable``, so a breaker and the core treat it like a dead server."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from gateway.core.model.errors import BackendUnavailable
from stores import timing

T = TypeVar("T")

_CHUNK = 500  # bound on the parameters of one IN (...) list


def chunks(items: Sequence[T], size: int = _CHUNK) -> Iterator[Sequence[T]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def marks(n: int) -> str:
    return ",".join("?" * n)


def no_cursor(result: T) -> T:
    """A cursor must not outlive the lock: finalising it on another thread while the connection
    runs a statement is an SQLite API misuse. Close it here; callers get None instead."""
    if isinstance(result, sqlite3.Cursor):
        result.close()
        return None  # type: ignore[return-value]
    return result


class SqliteDb:
    """One SQLite connection on its own worker thread.

    ``read(fn)`` runs ``fn(connection)``; ``write(fn)`` runs it inside one ``BEGIN IMMEDIATE``
    transaction. ``synchronous`` is ``FULL`` for every store (the WAL is fsynced at each commit,
    so a write that returned survives an OS crash: the journal drops a payload only after the
    stores have it durably, docs/SECURITY.md "Durability"); ``NORMAL`` only for throwaway use.
    """

    def __init__(self, path: Path | str, schema: str, what: str, synchronous: str = "FULL") -> None:
        if synchronous not in ("FULL", "NORMAL"):
            raise ValueError(f"synchronous must be FULL or NORMAL, not {synchronous!r}")
        self._path = Path(path)
        self._schema = schema
        self._what = what
        self._synchronous = synchronous
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None

    @property
    def path(self) -> Path:
        return self._path

    async def start(self) -> None:
        await self._call(self._open)

    async def close(self) -> None:
        if self._executor is None:
            return
        await self._call(self._close)
        self._executor.shutdown(wait=True)
        self._executor = None

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await self._call(lambda: fn(self._connection()))

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await self._call(lambda: self._transaction(fn))

    async def ping(self) -> None:
        await self.read(lambda c: c.execute("SELECT 1").fetchone())

    def durability(self) -> str:
        if self._synchronous == "FULL":
            return ""
        return f"{self._what} runs with synchronous={self._synchronous}: commits are not fsynced"

    async def checkpoint(self) -> None:
        """Copy the WAL into the database file and truncate it to zero bytes: after an erasure,
        no old page image (holding erased content) stays in the ``-wal`` file."""
        await self.read(lambda c: c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone())

    # ---- plumbing
    async def _call(self, fn: Callable[[], T]) -> T:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._locked, fn, timing.current())

    def _open(self) -> None:
        if self._conn is not None:
            return
        if str(self._path) != ":memory:":
            self._path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(self._path), isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            # deleted and overwritten content is zeroed, not left in free pages (erasure)
            conn.execute("PRAGMA secure_delete=ON")
            conn.execute("PRAGMA busy_timeout=5000")
            conn.executescript(self._schema)
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise BackendUnavailable("sqlite", f"{self._what} is not started (or closed)")
        return self._conn

    def _transaction(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = fn(conn)
        except BaseException:
            if conn.in_transaction:
                conn.rollback()
            raise
        conn.execute("COMMIT")
        return result

    def _locked(self, fn: Callable[[], T], backend: timing.BackendTime | None = None) -> T:
        with self._lock:
            started = time.perf_counter()  # queueing for this thread and lock is not SQLite's
            try:
                return no_cursor(fn())
            except sqlite3.OperationalError as exc:
                if self._conn is not None and self._conn.in_transaction:
                    self._conn.rollback()
                raise BackendUnavailable("sqlite", f"{self._what}: {exc}") from exc
            finally:
                if backend is not None:
                    backend.add((time.perf_counter() - started) * 1000)


class SqliteBacked:
    """Lifecycle shared by the SQLite-backed stores: one ``SqliteDb`` in ``self._db``."""

    backend = "sqlite"
    _db: SqliteDb

    async def start(self) -> None:
        await self._db.start()

    async def close(self) -> None:
        await self._db.close()

    async def ping(self) -> None:
        await self._db.ping()

    async def durability(self) -> str:
        return self._db.durability()
