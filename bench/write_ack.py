"""How long an agent waits for an acknowledgement: ``write`` (no wait) and ``append_turn``, with
1 and 50 agents at once, beside their floors in the same run (issue 46).

    python -m bench.write_ack --backend both [--agents 1,50] [--seconds 8]
    python -m bench.write_ack --gateway-src /path/to/older/checkout   # before/after, one run

The gateway is ``memgate serve`` in a child process with its default settings (MiniLM, the
embedder injection screen on), fresh data directory, loopback. Each agent is a sub-agent (its own
``agent/<id>`` namespace and session, its own asyncio client); for ``--seconds`` it alternates a
``write`` of one dialogue turn (``longdialog-v1`` text, semantic layer, ``wait=False``) and an
``append_turn`` of the next, each timed from the call to its answer. Floors measured in the same
run: an fsync of a 1 KB record in the data directory's file system (the journal's cost) and the
injection screen's embedding of one turn (what used to stand before every acknowledgement).
Bounded: at most 200 agents, 30 s per level; loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.recall_eval import percentile
from bench.serving import gateway_process, real_servers
from gateway.settings import Settings

DATA = Path(__file__).resolve().parent / "dialogues" / "longdialog-v1.json"


def turns(n: int = 2000) -> list[str]:
    data = json.loads(DATA.read_text())
    out = [t["text"] for c in data["conversations"] for s in c["sessions"] for t in s["turns"]]
    return [t for t in out if len(t) > 40][:n]


def fsync_floor(directory: Path, rounds: int = 200) -> float:
    """p50 ms of appending a 1 KB record and fsyncing it (the journal's floor)."""
    path = directory / "fsync-probe"
    times = []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for _ in range(rounds):
            t0 = time.perf_counter()
            os.write(fd, b"x" * 1024)
            os.fsync(fd)
            times.append((time.perf_counter() - t0) * 1000)
    finally:
        os.close(fd)
        path.unlink()
    return statistics.median(times)


def screen_floor(texts: list[str], rounds: int = 100) -> float:
    """p50 ms of the injection screen's embedder on one turn."""
    from gateway.embedding import build_embedder

    embedder = build_embedder("use-multilingual", cache_size=0)
    embedder.embed(texts[:4])  # warm
    times = []
    for text in texts[:rounds]:
        t0 = time.perf_counter()
        embedder.embed([text])
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


async def agents(address: str, n: int, seconds: float, texts: list[str]) -> dict[str, Any]:
    from gateway.client.aio import GatewayClient

    lat: dict[str, list[float]] = {"write": [], "append_turn": []}
    deadline = time.monotonic() + seconds

    async def agent(i: int) -> None:
        name = f"ack-{os.getpid()}-{n}-{i}"
        async with GatewayClient(address, agent_id=name, timeout=60) as c:
            await c.health()
            k = i
            while time.monotonic() < deadline:
                text = texts[k % len(texts)]
                t0 = time.perf_counter()
                await c.write(f"agent/{name}", "semantic", text)
                lat["write"].append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                await c.append_turn(f"agent/{name}", "s1", role="user", content=text)
                lat["append_turn"].append((time.perf_counter() - t0) * 1000)
                k += n

    await asyncio.gather(*(agent(i) for i in range(n)))
    return {
        kind: {
            "calls": len(v),
            "p50_ms": round(percentile(v, 50), 1),
            "p99_ms": round(percentile(v, 99), 1),
        }
        for kind, v in lat.items()
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--backend", choices=["embedded", "real", "both"], default="embedded")
    ap.add_argument("--agents", default="1,50")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument(
        "--gateway-src", default="", help="another checkout's gateway, run beside this one"
    )
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    levels = [min(200, int(x)) for x in args.agents.split(",")]
    seconds = min(30.0, args.seconds)
    texts = turns()
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="memgate-ack-") as tmp:
        out["floor"] = {
            "fsync_1kb_p50_ms": round(fsync_floor(Path(tmp)), 2),
            "screen_embedding_p50_ms": round(screen_floor(texts), 2),
        }
        print(f"floors: {out['floor']}", flush=True)
        sources = [("this", None)] + ([("src", Path(args.gateway_src))] if args.gateway_src else [])
        for backend in ("embedded", "real") if args.backend == "both" else (args.backend,):
            for label, src in sources:
                data = Path(tmp) / f"{backend}-{label}"
                settings = Settings(
                    host="127.0.0.1", port=0, data_dir=data, recall_processes=0,
                    **real_servers(backend),
                )  # fmt: skip
                with gateway_process(settings, checkout=src) as address:
                    for n in levels:
                        key = f"{backend}/{label}/{n}"
                        out[key] = asyncio.run(agents(address, n, seconds, texts))
                        print(f"{key}: {out[key]}", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
