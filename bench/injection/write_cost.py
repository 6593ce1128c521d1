"""What the embedder injection screen costs a write (docs/SECURITY.md "Quarantined: prompt
injection"): gateways started with the CLI on loopback (embedded stores), one with
``injection_embedder = ""`` (the rules alone) and one with ``"use-multilingual"``, one after the
other, then the first again (the shared box drifts); for each, the acknowledgement time of single
Writes through the client (``wait=False``: journaled, not yet applied) and the gateway's RSS.

    python -m bench.injection.write_cost [--writes 200] [--embedder minilm]

Every write is a distinct ordinary sentence (no cache helps); importance is set so that none is
skipped as small talk."""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gateway.client import GatewayClient

SENTENCES = [
    "The user prefers tea over coffee in the morning",
    "Deploy of build {n} to staging finished without errors",
    "Alice asked to move the weekly sync to Thursday at 10:00",
    "The invoice for order {n} was paid by bank transfer",
    "用户说下周三要去上海出差，需要订酒店",
    "Remember that the quarterly report is due on the {n}th",
]


def _rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    m = re.search(r"VmRSS:\s+(\d+) kB", status)
    return int(m.group(1)) / 1024 if m else 0.0


def _serve(data_dir: Path, embedder: str, screen: str) -> tuple[subprocess.Popen[bytes], str]:
    log = data_dir.with_suffix(".log")
    env = {**os.environ, "MEMGATE_INJECTION_EMBEDDER": screen}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway.cli", "serve", "--host", "127.0.0.1", "--port", "0",
             "--data-dir", str(data_dir), "--embedder", embedder],
            stdout=out, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        m = re.search(r"listening on (\S+)", log.read_text(errors="replace"))
        if m:
            return proc, m.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(log.read_text(errors="replace")[-2000:])


def measure(root: Path, name: str, embedder: str, screen: str, writes: int) -> dict[str, float]:
    proc, address = _serve(root / name, embedder, screen)
    try:
        times = []
        with GatewayClient(address, agent_id="master") as client:
            for i in range(20 + writes):
                text = SENTENCES[i % len(SENTENCES)].format(n=i) + f" (note {i})"
                start = time.perf_counter()
                client.write("user/bench", "semantic", text, importance=0.7)
                if i >= 20:  # the first ones warm the channel, the stores and the model
                    times.append((time.perf_counter() - start) * 1000)
            time.sleep(1.0)
            rss = _rss_mb(proc.pid)
        qs = statistics.quantiles(times, n=100)
        return {"p50": statistics.median(times), "p90": qs[89], "rss": rss}
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--writes", type=int, default=200)
    p.add_argument("--embedder", default="minilm", help="the gateway's own embedder")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        runs = [("rules", ""), ("rules+embedder", "use-multilingual"), ("rules again", "")]
        for name, screen in runs:
            f = measure(root, name.replace(" ", "-"), args.embedder, screen, args.writes)
            print(
                f"{name:15s} embedder={args.embedder}: Write ack p50 {f['p50']:.1f} ms, "
                f"p90 {f['p90']:.1f} ms; gateway RSS {f['rss']:.0f} MB",
                flush=True,
            )


if __name__ == "__main__":
    main()
