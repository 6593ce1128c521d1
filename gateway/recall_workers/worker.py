"""One recall worker process: ``RecallEngine.answer`` for the gateway that spawned it.

It opens its own connections to the gateway's working store, records and graph, fills its own
FAISS shards (in a temporary directory) from the records, and from then on applies every index
change the gateway streams to it. Changes and recall requests arrive on one socket, in order, and
a change is applied before the next frame is read: a recall the gateway sends after a write was
applied sees that write. Changes that arrive while the shards are being filled wait for the end
of the fill. The worker never writes to a store; it exits when the gateway's end of the socket
closes (the gateway stopped or died).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gateway.core.apply.index_fill import fill_index
from gateway.core.ports.ports import Stores
from gateway.core.recall.recall_cache import RecallQuery
from gateway.core.recall.recall_engine import RecallEngine
from gateway.core.screening import memo
from gateway.embedding import CachedEmbedder, build_embedder
from gateway.recall_workers import frames
from gateway.settings import Settings

log = logging.getLogger("memgate.recall_worker")


#: what the gateway runs (``python -c``): this process's import path, then ``run``'s arguments,
#: both pickled on stdin
BOOT = (
    "import pickle, sys; sys.path[:0] = pickle.load(sys.stdin.buffer); "
    "from gateway.recall_workers.worker import run; run(*pickle.load(sys.stdin.buffer))"
)

#: settings, vector size, the directory of the worker's own FAISS shards -> its stores
ReaderStores = Callable[[Settings, int, Path], Stores]


def run(
    settings: Settings, address: str, secret: bytes, number: int, build_stores: ReaderStores
) -> None:
    """The process's entry point (``BOOT``); ``build_stores`` is
    ``gateway.wiring.build_reader_stores``, given by the composition root."""
    logging.basicConfig(
        level=logging.WARNING, format=f"memgate recall worker {number}: %(levelname)s %(message)s"
    )
    log.setLevel(logging.INFO)  # its own start-up line; the stores' notes are the gateway's
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(settings, address, secret, number, build_stores))


async def _serve(
    settings: Settings, address: str, secret: bytes, number: int, build_stores: ReaderStores
) -> None:
    reader, writer = await asyncio.open_unix_connection(address)
    writer.write(secret + frames.encode(("hi", number)))
    await writer.drain()
    if (await frames.read(reader))[0] != "hello":
        raise RuntimeError("the gateway did not accept this recall worker")
    embedder = build_embedder(
        settings.embedder,
        cache_size=settings.embed_cache_size,
        threads=settings.embed_threads,
        onnx_cache_dir=settings.onnx_cache(),
        spinning=settings.embed_spinning,
    )
    if isinstance(embedder, CachedEmbedder):
        memo.also(embedder)
    # in the gateway's private directory, which it removes when it stops
    with tempfile.TemporaryDirectory(prefix=f"index-{number}-", dir=Path(address).parent) as tmp:
        stores = build_stores(settings, embedder.dim, Path(tmp))
        for store in stores.all():
            await store.start()
        # a worker shares the host with the gateway and the other workers: never alone on it
        engine = RecallEngine(settings.recall(), stores, embedder, alone=lambda: False)
        try:
            await Worker(engine, stores, embedder.dim, reader, writer).run()
        finally:
            engine.close()
            for store in reversed(stores.all()):
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(store.close(), 10)
            writer.close()


class Worker:
    def __init__(
        self,
        engine: RecallEngine,
        stores: Stores,
        dim: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self._engine = engine
        self._stores = stores
        self._dim = dim
        self._reader = reader
        self._writer = writer
        #: changes that arrived while the shards were being filled (None once filled)
        self._waiting: list[Any] | None = []
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        reading = asyncio.create_task(self._read(), name="recall-worker-read")
        try:
            await self._fill()
            await reading
        finally:
            reading.cancel()
            for task in list(self._tasks):
                task.cancel()

    async def _fill(self) -> None:
        n, _ = await fill_index(self._stores.records, self._stores.index, self._dim)
        while self._waiting:
            await self._change(self._waiting.pop(0))
        self._waiting = None  # no await since the list was seen empty: nothing slipped past
        log.info("ready: %d vectors", n)
        self._writer.write(frames.encode(("ready", n)))

    async def _read(self) -> None:
        while True:
            try:
                frame = await frames.read(self._reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return  # the gateway is gone
            if frame[0] == "q":
                task = asyncio.create_task(self._answer(frame[1], frame[2]))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            elif frame[0] == "n":  # how many vectors, once every change before it is applied
                count = await self._stores.index.count()
                self._writer.write(frames.encode(("a", frame[1], count)))
            elif frame[0] == "h":  # how many texts the memos and embedder cache hold
                self._writer.write(frames.encode(("a", frame[1], memo.held())))
            elif self._waiting is not None:
                self._waiting.append(frame)
            else:
                await self._change(frame)

    async def _change(self, frame: Any) -> None:
        op, arg = frame
        index = self._stores.index
        if op == "u":
            await index.upsert(arg)
        elif op == "d":
            await index.delete(arg)
        elif op == "r":
            await index.reset()
        elif op == "f":  # an erasure ran in the gateway: no text of it stays here either
            memo.forget()

    async def _answer(self, rid: int, q: RecallQuery) -> None:
        try:
            result = await self._engine.answer(q)
        except Exception as exc:  # noqa: BLE001 - the gateway answers it itself
            log.exception("recall failed")
            self._writer.write(frames.encode(("e", rid, f"{type(exc).__name__}: {exc}")))
            return
        for hit in result.hits:  # the gateway never returns them (1.5 KB each); no one else
            hit.memory.embedding = None  # holds these objects
        self._writer.write(frames.encode(("a", rid, result)))
