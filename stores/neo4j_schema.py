"""What the Neo4j adapters share: one driver session wrapper that maps driver failures onto the
domain's errors, idempotent schema creation, and the value encodings (times as epoch
microseconds, maps and lists as JSON) that Neo4j properties can hold."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import neo4j
from neo4j import exceptions as nx

from gateway.core.model.errors import BackendUnavailable, Conflict
from stores import codec
from stores.neo4j_reads import ThreadedReads

BACKEND = "neo4j"


T = TypeVar("T")

MEMORY_TEXT_INDEX = "memgate_memory_text"

#: Schema of the record store. Community edition has no node keys and no partial constraints:
#: (id, version) is a composite uniqueness constraint, and "one active memory per fact" is a
#: unique (namespace, fact_key) on the :Fact node its active holder owns (see ``neo4j_records``).
#: Keyword search uses a whitespace-analysed fulltext index (Lucene BM25) over the memory's
#: analysed terms (``stores.text_analysis``), present only while the memory is active. (Versions
#: before it indexed ``search_terms`` in ``memgate_memory_terms``; that index is left alone.)
RECORD_SCHEMA: tuple[str, ...] = (
    "CREATE CONSTRAINT memgate_memory_id IF NOT EXISTS FOR (m:Memory) REQUIRE m.id IS UNIQUE",
    "CREATE CONSTRAINT memgate_memory_version IF NOT EXISTS "
    "FOR (v:MemoryVersion) REQUIRE (v.id, v.version) IS UNIQUE",
    "CREATE CONSTRAINT memgate_fact IF NOT EXISTS "
    "FOR (f:Fact) REQUIRE (f.namespace, f.fact_key) IS UNIQUE",
    "CREATE INDEX memgate_memory_scope IF NOT EXISTS "
    "FOR (m:Memory) ON (m.namespace, m.layer, m.status)",
    "CREATE INDEX memgate_memory_when IF NOT EXISTS FOR (m:Memory) ON (m.when_at)",
    # one namespace's vectors in id order, loaded on demand (stores/vector_cache.py)
    "CREATE INDEX memgate_memory_vectors IF NOT EXISTS "
    "FOR (m:Memory) ON (m.namespace, m.status, m.id)",
    "CREATE INDEX memgate_memory_session IF NOT EXISTS "
    "FOR (m:Memory) ON (m.namespace, m.source_session)",
    f"CREATE FULLTEXT INDEX {MEMORY_TEXT_INDEX} IF NOT EXISTS "
    "FOR (m:Memory) ON EACH [m.search_text, m.search_ns] "
    "OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}}",
)

#: One label per NodeKind, each with its own unique id.
GRAPH_LABELS: tuple[str, ...] = ("User", "Agent", "Session", "Event", "Entity", "Task", "Step")

GRAPH_SCHEMA: tuple[str, ...] = (
    *(
        f"CREATE CONSTRAINT memgate_{label.lower()}_id IF NOT EXISTS "
        f"FOR (n:{label}) REQUIRE n.id IS UNIQUE"
        for label in GRAPH_LABELS
    ),
    "CREATE INDEX memgate_event_time IF NOT EXISTS FOR (e:Event) ON (e.namespace, e.at)",
)

# Schema statements racing with another process can fail even with IF NOT EXISTS.
_SCHEMA_RACE_CODES = (
    "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
    "Neo.ClientError.Schema.IndexAlreadyExists",
    "Neo.ClientError.Schema.ConstraintAlreadyExists",
)


def to_micros(value: datetime | None) -> int | None:
    """A datetime as integer epoch microseconds (exact); naive datetimes are taken as UTC."""
    return None if value is None else codec.to_micros(value)


def from_micros(value: int | None) -> datetime | None:
    return None if value is None else codec.from_micros(value)


def unavailable(exc: BaseException) -> BackendUnavailable:
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return BackendUnavailable(BACKEND, detail[:200])


async def _close_quietly(session: neo4j.AsyncSession) -> None:
    """Close a session that is not kept (its connection goes back to the pool or is dropped)."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(1.0):
            await session.close()


class Neo4jSession:
    """A driver plus the database it works on. Every call goes through ``_guard`` so callers only
    ever see ``BackendUnavailable``, ``Conflict`` or a programming error."""

    def __init__(
        self,
        uri: str,
        user: str | None,
        password: str | None,
        database: str,
        *,
        connection_timeout: float = 3.0,
        acquisition_timeout: float = 5.0,
        retry_time: float = 1.0,
        operation_timeout: float = 10.0,
        max_concurrency: int = 16,
        read_threads: int = 2,
    ) -> None:
        self.uri = uri
        self.database = database
        self._auth = (user, password or "") if user else None
        self._config: dict[str, Any] = {
            "connection_timeout": connection_timeout,
            "connection_acquisition_timeout": acquisition_timeout,
            "max_transaction_retry_time": retry_time,
            "max_connection_pool_size": max_concurrency,
            # "property/label does not exist": what every statement says on an empty database
            # (a fresh install), and "index or constraint already exists": what each of the
            # schema's ``IF NOT EXISTS`` statements says on every later start — a multi-line
            # warning per statement in the gateway's log, for nothing
            "notifications_disabled_classifications": [
                neo4j.NotificationDisabledClassification.UNRECOGNIZED,
                neo4j.NotificationDisabledClassification.SCHEMA,
            ],
        }
        # Calls beyond the pool wait here, in our own queue, and not for a pooled connection:
        # a pool acquisition timeout under load would look like a dead server to the breaker.
        self._slots = asyncio.Semaphore(max_concurrency)
        self._operation_timeout = operation_timeout
        self._driver: neo4j.AsyncDriver | None = None
        # reads go through the blocking driver in threads (``neo4j_reads``: ~2x faster)
        self._reads = ThreadedReads(
            uri, self._auth, database, self._config, read_threads, operation_timeout
        )
        self._idle_reads: list[neo4j.AsyncSession] = []
        self._idle_writes: list[neo4j.AsyncSession] = []

    async def start(self, schema: Sequence[str]) -> None:
        if self._driver is not None:
            return
        driver = neo4j.AsyncGraphDatabase.driver(self.uri, auth=self._auth, **self._config)
        try:
            await self._guard(driver.verify_connectivity())
            await self._guard(self._reads.start())
            self._driver = driver
            for statement in schema:
                await self._create_schema(statement)
            await self.write("CALL db.awaitIndexes(60)", {})
        except BaseException:
            self._driver = None
            await self._reads.close()
            await driver.close()
            raise

    async def close(self) -> None:
        await self._reads.close()
        driver, self._driver = self._driver, None
        idle, self._idle_reads, self._idle_writes = self._idle_reads + self._idle_writes, [], []
        for session in idle:
            await _close_quietly(session)
        if driver is not None:
            await driver.close()

    async def ping(self) -> None:
        """One auto-commit query, not retried: a health probe should fail fast."""

        async def probe(session: neo4j.AsyncSession) -> None:
            result = await session.run("RETURN 1 AS ok")
            await result.consume()

        await self._session_call(probe, read=True)

    async def write(self, query: str, params: dict[str, Any]) -> None:
        """Run one statement in one write transaction (retried by the driver on transient
        errors), consuming its result."""

        async def work(tx: neo4j.AsyncManagedTransaction) -> None:
            result = await tx.run(query, params)
            await result.consume()

        await self._session_call(lambda s: s.execute_write(work))

    async def read(self, query: str, params: dict[str, Any]) -> list[neo4j.Record]:
        """One auto-commit query in read access mode: a single round trip (a managed read
        transaction adds BEGIN and COMMIT), on a session kept from an earlier call, run by the
        blocking driver in a worker thread (``neo4j_reads``). A query that fails on a broken
        connection or a transient error is tried once more, on a fresh session. Reports the
        server's own time for the query (``stores.timing``): waiting for a pooled connection or
        for our event loop is not the database being slow."""
        if self._driver is None:
            raise BackendUnavailable(BACKEND, "not started")
        async with self._slots:
            return await self._guard(self._reads.read(query, params))

    async def _create_schema(self, statement: str) -> None:
        try:
            await self.write(statement, {})
        except nx.ClientError as exc:  # pragma: no cover - only under concurrent start-ups
            if exc.code not in _SCHEMA_RACE_CODES:
                raise

    async def _session_call(
        self,
        fn: Callable[[neo4j.AsyncSession], Awaitable[T]],
        read: bool = False,
        retry: bool = False,
    ) -> T:
        driver = self._driver
        if driver is None:
            raise BackendUnavailable(BACKEND, "not started")
        async with self._slots:
            return await self._guard(self._on_session(driver, fn, read, retry))

    async def _on_session(
        self,
        driver: neo4j.AsyncDriver,
        fn: Callable[[neo4j.AsyncSession], Awaitable[T]],
        read: bool,
        retry: bool,
    ) -> T:
        """``fn`` on an idle session of the access mode, or a new one when none is idle
        (creating a session per call costs about as much as a query round trip). A session whose
        call failed is closed, not kept; with ``retry`` a broken connection or a transient error
        is tried once more on a fresh session."""
        idle = self._idle_reads if read else self._idle_writes
        for attempt in range(2 if retry else 1):
            session = idle.pop() if idle else self._session(driver, read)
            try:
                result = await fn(session)
            except (nx.SessionExpired, nx.ServiceUnavailable, nx.TransientError):
                await _close_quietly(session)
                if attempt or not retry:
                    raise
                continue
            except BaseException:
                await _close_quietly(session)
                raise
            if self._driver is driver:
                idle.append(session)
            else:  # closed meanwhile
                await _close_quietly(session)
            return result
        raise AssertionError("unreachable")  # pragma: no cover

    def _session(self, driver: neo4j.AsyncDriver, read: bool) -> neo4j.AsyncSession:
        mode = neo4j.READ_ACCESS if read else neo4j.WRITE_ACCESS
        return driver.session(database=self.database, default_access_mode=mode)

    async def _guard(self, operation: Awaitable[T]) -> T:
        try:
            async with asyncio.timeout(self._operation_timeout):
                return await operation
        except nx.ConstraintError as exc:
            raise Conflict(exc.message or "uniqueness constraint violated") from exc
        except nx.AuthError as exc:
            raise BackendUnavailable(BACKEND, "authentication failed") from exc
        except (
            nx.ServiceUnavailable,
            nx.SessionExpired,
            nx.ConnectionPoolError,
            nx.TransientError,
            OSError,
            TimeoutError,
        ) as exc:
            raise unavailable(exc) from exc


class Neo4jBacked:
    """Construction and lifecycle shared by the Neo4j-backed stores; ``_schema`` is what
    ``start()`` creates (idempotently)."""

    backend = "neo4j"
    _schema: Sequence[str] = ()

    def __init__(
        self,
        uri: str,
        user: str | None = None,
        password: str | None = None,
        database: str = "neo4j",
        read_threads: int = 2,
    ) -> None:
        self._db = Neo4jSession(uri, user, password, database, read_threads=read_threads)

    async def start(self) -> None:
        await self._db.start(self._schema)

    async def close(self) -> None:
        await self._db.close()

    async def ping(self) -> None:
        await self._db.ping()

    async def durability(self) -> str:
        """Neo4j forces its transaction log to disk before a commit returns (Neo4j 5 has no
        setting that defers it); recovery replays the log after a crash."""
        return ""
