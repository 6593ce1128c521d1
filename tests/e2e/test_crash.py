"""kill -9 right after acknowledged writes loses none of them, and replay stores each once."""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gateway import client as gc

pytestmark = pytest.mark.slow


def _spawn(data_dir: Path, extra: list[str]) -> tuple[subprocess.Popen[bytes], str]:
    log = data_dir.parent / f"{data_dir.name}-{time.monotonic_ns()}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gateway.cli",
                "serve",
                "--port",
                "0",
                "--data-dir",
                str(data_dir),
                "--embedder",
                "minilm",  # the real embedder: applying is slow enough to kill mid-way
                *extra,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            # the rules alone: the embedder screen slows acknowledgements until the apply lane
            # keeps up, and the kill must find acknowledged writes not yet applied
            env={**os.environ, "MEMGATE_INJECTION_EMBEDDER": ""},
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        m = re.search(r"listening on (\S+)", log.read_text(errors="replace"))
        if m:
            return proc, m.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"gateway did not start:\n{log.read_text(errors='replace')[-3000:]}")


def _backend_flags(backend: dict[str, str]) -> list[str]:
    flags = []
    if backend.get("redis_url"):
        flags += ["--redis-url", backend["redis_url"]]
    if backend.get("neo4j_uri"):
        flags += ["--neo4j-uri", backend["neo4j_uri"]]
    return flags


def test_sigkill_after_ack_loses_nothing(tmp_path: Path, backend: dict[str, str], ns: str) -> None:
    flags = _backend_flags(backend)
    proc, address = _spawn(tmp_path / "data", flags)
    acked: dict[str, str] = {}
    turns: list[str] = []
    try:
        with gc.GatewayClient(address, agent_id="master") as c:
            for batch in range(10):
                items = [
                    dict(
                        namespace=ns,
                        layer="episodic",
                        content=f"event {batch}-{i} happened",
                        idempotency_key=f"e-{batch}-{i}",
                    )
                    for i in range(100)
                ]
                for item, mid in zip(items, c.batch_write(items), strict=True):
                    acked[mid] = str(item["content"])
            for i in range(5):
                turns.append(c.append_turn(ns, "s1", role="user", content=f"turn {i}").id)
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # no shutdown hook, no flush
        proc.wait(10)
    assert len(acked) == 1000
    # the kill really happened with acknowledged writes not yet applied
    journal = sqlite3.connect(tmp_path / "data" / "journal.db")
    pending = journal.execute("SELECT COUNT(*) FROM journal WHERE applied = 0").fetchone()[0]
    journal.close()
    assert pending > 0

    proc, address = _spawn(tmp_path / "data", flags)
    try:
        with gc.GatewayClient(address, agent_id="master") as c:
            deadline = time.monotonic() + 60
            while c.stats().journal_pending and time.monotonic() < deadline:
                time.sleep(0.1)
            assert c.stats().journal_pending == 0
            for mid, content in acked.items():
                assert c.get(mid).content == content
            events = c.timeline(ns, limit=1000)
            assert sorted(e.id for e in events) == sorted(acked)  # each stored exactly once
            assert [t.id for t in c.window(ns, "s1")] == turns
            # the rebuilt vector index finds them
            assert len(c.recall("event happened", namespaces=[ns], top_k=50).hits) == 50
            # a client retrying an acknowledged write after the crash gets the same id back
            again = c.write_result(ns, "episodic", "event 0-0 happened", idempotency_key="e-0-0")
            assert again.duplicate and again.id in acked
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
