"""Neo4j reads on the blocking driver, in worker threads.

The asyncio driver reads a result chunk by chunk, one event-loop turn (and a ``wait_for`` task)
per socket read: loading 35 memories took ~230 loop turns and 5.5 ms, against 3.0 ms for the
same query on the blocking driver (docs/BENCHMARKS-HISTORY.md). Reads are most of a recall's Neo4j time,
so they run here: a blocking driver with its own pool, one worker thread per concurrent read
(the socket waits release the GIL), idle sessions kept between calls. Writes stay on the asyncio
driver (``neo4j_schema.Neo4jSession``), whose managed transactions retry transient errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import neo4j
from neo4j import exceptions as nx

from stores import timing


class ThreadedReads:
    """Auto-commit read queries on ``workers`` threads sharing one blocking driver."""

    def __init__(
        self,
        uri: str,
        auth: tuple[str, str] | None,
        database: str,
        config: dict[str, Any],
        workers: int,
        query_timeout_s: float,
    ) -> None:
        self._uri, self._auth, self._config = uri, auth, config
        self._database = database
        self._workers = workers
        self._timeout = query_timeout_s
        self._driver: neo4j.Driver | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._idle: list[neo4j.Session] = []
        self._lock = threading.Lock()

    async def start(self) -> None:
        if self._driver is not None:
            return
        self._executor = ThreadPoolExecutor(self._workers, thread_name_prefix="neo4j-read")
        driver = neo4j.GraphDatabase.driver(self._uri, auth=self._auth, **self._config)
        try:
            await self._in_thread(driver.verify_connectivity)
        except BaseException:
            await self._in_thread(driver.close)
            self._executor.shutdown(wait=False)
            self._executor = None
            raise
        self._driver = driver

    async def close(self) -> None:
        driver, self._driver = self._driver, None
        executor, self._executor = self._executor, None
        if executor is None:
            return

        def shut() -> None:
            with self._lock:
                idle, self._idle = self._idle, []
            for session in idle:
                _close_quietly(session)
            if driver is not None:
                driver.close()

        await asyncio.get_running_loop().run_in_executor(executor, shut)
        executor.shutdown(wait=True)

    async def read(self, query: str, params: dict[str, Any]) -> list[neo4j.Record]:
        """Every record of ``query``; a broken connection or a transient error is tried once
        more on a fresh session. Reports the server's own time (``stores.timing``)."""
        return await self._in_thread(self._read, query, params)

    async def _in_thread(self, fn: Any, *args: Any) -> Any:
        if self._executor is None:
            raise nx.ServiceUnavailable("the Neo4j read pool is not started (or closed)")
        ctx = contextvars.copy_context()  # the breaker's timing collector goes along
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, ctx.run, fn, *args)

    def _read(self, query: str, params: dict[str, Any]) -> list[neo4j.Record]:
        driver = self._driver
        if driver is None:
            raise nx.ServiceUnavailable("the Neo4j read pool is not started (or closed)")
        for attempt in range(2):
            with self._lock:
                session = self._idle.pop() if self._idle else None
            if session is None:
                session = driver.session(
                    database=self._database, default_access_mode=neo4j.READ_ACCESS
                )
            try:
                result = session.run(neo4j.Query(query, timeout=self._timeout), params)
                records = list(result)
                summary = result.consume()
            except (nx.SessionExpired, nx.ServiceUnavailable, nx.TransientError):
                _close_quietly(session)
                if attempt:
                    raise
                continue
            except BaseException:
                _close_quietly(session)
                raise
            server = (summary.result_available_after or 0) + (summary.result_consumed_after or 0)
            timing.report(float(server))
            if self._driver is driver:
                with self._lock:
                    self._idle.append(session)
            else:  # closed meanwhile
                _close_quietly(session)
            return records
        raise AssertionError("unreachable")  # pragma: no cover


def _close_quietly(session: neo4j.Session) -> None:
    with contextlib.suppress(Exception):
        session.close()
