"""The gateway's side of its recall workers: spawn and supervise them, hand each recall to the
least busy ready one, stream every index change to all of them.

``answer`` returns ``None`` (and the gateway runs the recall itself) when no worker is ready, or
when the one it chose failed or died before answering: a recall is a read, so running it again
here is safe, and a worker never holds up or loses one. A worker that exits is spawned again
(after 1 s, doubling up to 30 s while it keeps failing).

With ``recall_workers_start = "lazy"`` (the default) no worker is spawned until a recall is
handed here, i.e. until one arrives while another is running: that one and those that follow
run in the gateway until the workers are ready. An idle or single-agent gateway holds none.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import itertools
import logging
import pickle
import secrets
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gateway.core.recall.recall_cache import RecallQuery, RecallResult
from gateway.recall_workers import frames, worker
from gateway.recall_workers.broadcast import IndexChange
from gateway.settings import Settings, usable_cores

log = logging.getLogger("memgate.recall_workers")

SUPERVISE_EVERY_S = 1.0
RESPAWN_MIN_S, RESPAWN_MAX_S = 1.0, 30.0
#: a query goes to "its" worker (by a hash of its text) unless that worker has more than this
#: many recalls in flight beyond the least busy one
AFFINITY_SLACK = 4
#: a worker must say who it is this soon after connecting
HELLO_TIMEOUT_S = 10.0
#: a worker that has not answered a request for this long is killed (and spawned again); its
#: recalls run in the gateway
HUNG_AFTER_S = 30.0


class WorkerLost(Exception):
    """The worker failed or died before answering."""


@dataclass(eq=False)
class _Conn:
    number: int
    writer: asyncio.StreamWriter
    ready: bool = False
    pending: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    #: when each pending request was sent (loop time)
    sent: dict[int, float] = field(default_factory=dict)

    def send(self, data: bytes) -> None:
        if not self.writer.is_closing():
            self.writer.write(data)

    def lose(self, why: str) -> None:
        self.ready = False
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(WorkerLost(why))
        self.pending.clear()
        self.sent.clear()


@dataclass(eq=False)
class _Slot:
    process: subprocess.Popen[bytes] | None = None
    conn: _Conn | None = None
    next_spawn: float = 0.0
    backoff: float = RESPAWN_MIN_S

    def defer(self, now: float) -> None:
        """The next spawn after the back-off, which doubles (up to ``RESPAWN_MAX_S``)."""
        self.next_spawn = now + self.backoff
        self.backoff = min(self.backoff * 2, RESPAWN_MAX_S)


class RecallWorkers:
    """``RemoteAnswers`` over ``settings.recall_workers()`` worker processes."""

    def __init__(self, settings: Settings, build_stores: worker.ReaderStores) -> None:
        n = settings.recall_workers()
        self._build_stores = build_stores
        # embed_threads 0 ("all cores") in each worker would crowd the cores: share them out
        threads = settings.embed_threads or max(1, usable_cores() // n)
        self._settings = replace(
            settings, data_dir=settings.data_dir.resolve(), embed_threads=threads
        )
        self._slots = [_Slot() for _ in range(n)]
        self._secret = secrets.token_bytes(frames.SECRET_BYTES)
        self._ids = itertools.count(1)
        self._dir: Path | None = None
        self._server: asyncio.AbstractServer | None = None
        self._supervisor: asyncio.Task[None] | None = None
        self._closing = False
        #: set once the workers are wanted (lazy start: at the first recall handed here)
        self._wanted = asyncio.Event()
        if settings.recall_workers_start == "eager":
            self._wanted.set()
        #: recalls the workers answered; recalls run here because the chosen worker failed
        self.answered = 0
        self.lost = 0
        self.spawned = 0

    @property
    def configured(self) -> int:
        return len(self._slots)

    @property
    def started(self) -> bool:
        """Whether the workers are wanted (eager, or since the first concurrent recall)."""
        return self._wanted.is_set()

    @property
    def ready(self) -> int:
        return sum(1 for s in self._slots if s.conn is not None and s.conn.ready)

    async def start(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="memgate-"))  # mode 0700: ours alone
        self._server = await asyncio.start_unix_server(self._connected, str(self._address))
        self._supervisor = asyncio.create_task(self._supervise(), name="recall-workers")

    @property
    def _address(self) -> Path:
        assert self._dir is not None
        return self._dir / "recall.sock"

    async def close(self) -> None:
        self._closing = True
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor
        for slot in self._slots:
            if slot.conn is not None:
                slot.conn.lose("the gateway is stopping")
                slot.conn.writer.close()  # the worker exits at the end of its stream
                slot.conn = None
            elif slot.process is not None:
                slot.process.terminate()  # still starting: it would not hear the socket close
        if self._server is not None:
            self._server.close()
        loop = asyncio.get_running_loop()
        for slot in self._slots:
            if slot.process is not None:
                await loop.run_in_executor(None, _stop, slot.process)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)

    # ---- the RemoteAnswers port
    def in_flight(self) -> int:
        return sum(len(s.conn.pending) for s in self._slots if s.conn is not None)

    async def answer(self, q: RecallQuery) -> RecallResult | None:
        if not self._wanted.is_set():
            self._wanted.set()
            log.info("concurrent recalls: starting %d recall worker(s)", len(self._slots))
        ready = [s.conn for s in self._slots if s.conn is not None and s.conn.ready]
        if not ready:
            return None
        # the same query to the same worker (its embedder's cache of query vectors), unless
        # that one is clearly busier than the least busy
        conn = ready[hash(q.query) % len(ready)]
        least = min(ready, key=lambda c: len(c.pending))
        if len(conn.pending) > len(least.pending) + AFFINITY_SLACK:
            conn = least
        try:
            result: RecallResult = await self._ask(conn, "q", q)
        except WorkerLost as exc:
            self.lost += 1
            log.warning("recall worker %d: %s; this recall runs in the gateway", conn.number, exc)
            return None
        self.answered += 1
        return result

    async def vectors(self) -> list[int | None]:
        """Each worker's vector count (None: not ready), counted after every index change made
        before this call: equal to the gateway's own count when the workers keep up."""
        return await self._ask_each("n")

    async def _ask_each(self, kind: str) -> list[int | None]:
        out: list[int | None] = []
        for slot in self._slots:
            conn = slot.conn
            try:
                out.append(await self._ask(conn, kind) if conn and conn.ready else None)
            except WorkerLost:
                out.append(None)
        return out

    async def _ask(self, conn: _Conn, kind: str, *args: Any) -> Any:
        rid = next(self._ids)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        conn.pending[rid] = fut
        conn.sent[rid] = asyncio.get_running_loop().time()
        conn.send(frames.encode((kind, rid, *args)))
        try:
            return await fut
        finally:
            conn.pending.pop(rid, None)
            conn.sent.pop(rid, None)

    # ---- erasure (``gateway.core.screening.memo.also``): the workers' memos and embedder cache
    def forget_texts(self) -> None:
        """Every worker empties its memos and embedder cache, after the changes sent before."""
        self.on_index_change(("f", ()))

    def texts_held(self) -> int:
        return 0  # the workers' own: ``held_by_workers``

    async def held_by_workers(self) -> list[int | None]:
        """How many texts each worker's memos and embedder cache hold (None: not ready), after
        every change sent before this call."""
        return await self._ask_each("h")

    # ---- index changes (``BroadcastIndex`` listener)
    def on_index_change(self, change: IndexChange) -> None:
        conns = [s.conn for s in self._slots if s.conn is not None]
        if conns:
            data = frames.encode(change)
            for conn in conns:
                conn.send(data)

    # ---- connections
    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            secret = await asyncio.wait_for(
                reader.readexactly(frames.SECRET_BYTES), HELLO_TIMEOUT_S
            )
            if not hmac.compare_digest(secret, self._secret):
                raise PermissionError("wrong secret")
            kind, number = await asyncio.wait_for(frames.read(reader), HELLO_TIMEOUT_S)
            if kind != "hi" or not 0 <= number < len(self._slots) or self._closing:
                raise PermissionError(f"unexpected hello {kind!r} {number!r}")
        except (TimeoutError, OSError, EOFError, ValueError, PermissionError) as exc:
            log.warning("refused a connection to the recall workers' socket: %s", exc)
            writer.close()
            return
        slot = self._slots[number]
        if slot.conn is not None:
            slot.conn.lose("replaced by a new connection")
            slot.conn.writer.close()
        conn = slot.conn = _Conn(number, writer)
        # from here on every index change reaches it (it keeps them until its shards are full)
        conn.send(frames.encode(("hello",)))
        try:
            await self._serve(conn, slot, reader)
        finally:
            conn.lose("its connection closed")
            if slot.conn is conn:
                slot.conn = None
            writer.close()

    async def _serve(self, conn: _Conn, slot: _Slot, reader: asyncio.StreamReader) -> None:
        while True:
            try:
                frame: Any = await frames.read(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                if not self._closing:
                    log.warning("recall worker %d disconnected", conn.number)
                return
            kind = frame[0]
            if kind == "a" or kind == "e":
                fut = conn.pending.get(frame[1])
                if fut is not None and not fut.done():
                    if kind == "a":
                        fut.set_result(frame[2])
                    else:
                        fut.set_exception(WorkerLost(f"it failed: {frame[2]}"))
            elif kind == "ready":
                conn.ready = True
                slot.backoff = RESPAWN_MIN_S
                log.info("recall worker %d ready (%d vectors)", conn.number, frame[1])

    # ---- processes
    async def _supervise(self) -> None:
        loop = asyncio.get_running_loop()
        await self._wanted.wait()
        while True:
            for number, slot in enumerate(self._slots):
                conn, process = slot.conn, slot.process
                if conn and conn.sent and loop.time() - min(conn.sent.values()) > HUNG_AFTER_S:
                    log.error("recall worker %d stopped answering: killing it", number)
                    conn.lose(f"it did not answer for {HUNG_AFTER_S:.0f} s")
                    if process is not None and process.poll() is None:
                        process.kill()
                if slot.process is not None and slot.process.poll() is None:
                    continue
                if slot.process is not None:
                    log.warning(
                        "recall worker %d exited (code %s); spawning it again in %.0f s",
                        number,
                        slot.process.returncode,
                        slot.backoff,
                    )
                    slot.process = None
                    slot.defer(loop.time())
                if loop.time() >= slot.next_spawn:
                    try:
                        slot.process = self._spawn(number)
                    except Exception:  # noqa: BLE001 - no fork now (memory, process limit)
                        log.exception(
                            "could not start recall worker %d; trying again in %.0f s",
                            number,
                            slot.backoff,
                        )
                        slot.defer(loop.time())
            await asyncio.sleep(SUPERVISE_EVERY_S)

    def _spawn(self, number: int) -> subprocess.Popen[bytes]:
        """A fresh interpreter (not ``multiprocessing``: it would re-import the embedding
        program's main module) given its arguments, the secret among them, on stdin."""
        args = (self._settings, str(self._address), self._secret, number, self._build_stores)
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            [sys.executable, "-c", worker.BOOT],
            stdin=subprocess.PIPE,
            close_fds=True,
        )
        assert process.stdin is not None
        process.stdin.write(pickle.dumps([p for p in sys.path if p]))
        process.stdin.write(pickle.dumps(args))
        process.stdin.close()
        self.spawned += 1
        return process


def _stop(process: subprocess.Popen[bytes]) -> None:
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
