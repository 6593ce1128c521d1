"""Start an embedded gateway (no external server) for the demo."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gateway.rpc.server import serve_in_thread
from gateway.settings import Settings


@contextmanager
def embedded_gateway(embedder: str = "") -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="memgate-demo-") as tmp:
        settings = Settings(port=0, data_dir=Path(tmp), embedder=embedder or Settings().embedder)
        with serve_in_thread(settings) as target:
            yield target
