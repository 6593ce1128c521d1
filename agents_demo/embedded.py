"""Start an embedded gateway (no external server) for the demo, in a background thread."""

from __future__ import annotations

import asyncio
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gateway.rpc.server import create_server
from gateway.settings import Settings


@contextmanager
def embedded_gateway(embedder: str = "minilm") -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="memgate-demo-") as tmp:
        settings = Settings(port=0, data_dir=Path(tmp), embedder=embedder)
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()

        async def boot():  # type: ignore[no-untyped-def]
            gw = await create_server(settings)
            await gw.start()
            return gw

        gw = asyncio.run_coroutine_threadsafe(boot(), loop).result(120)
        try:
            yield f"127.0.0.1:{gw.port}"
        finally:
            asyncio.run_coroutine_threadsafe(gw.stop(1.0), loop).result(60)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
