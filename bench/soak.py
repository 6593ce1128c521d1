"""Memory under abuse: a gateway (``memgate serve``, a child process, recall workers started with
it) takes a stream of well-formed and malformed calls for a while, and the resident memory of
the gateway and of each recall worker is sampled as it goes. Bounded means a plateau: the last
half of the run grows each process by less than ``--plateau`` (default 5 %).

    python -m bench.soak [--seconds 300] [--threads 8] [--embedder e5-multilingual] [--json out.json]

The calls, from ``--threads`` clients on loopback: writes to 50 namespaces drawn from a pool of
``--pool`` texts, each with its own idempotency key (the store stops growing once the pool is
written: what still grows after that is not data), recalls, turns appended to 20 sessions from
the same pool, and a quarter of
the calls malformed — random bytes as a request body of a random method, an over-long content,
a bad namespace, a huge top_k — which must each be refused with INVALID_ARGUMENT (or another
clean status), never INTERNAL. Bounded: loopback only, at most 64 threads, 1 hour.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import string
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc

from bench.serving import gateway_process
from gateway.client import GatewayClient, GatewayError
from gateway.settings import Settings
from memgate.v1 import memgate_pb2 as pb

METHODS = sorted(pb.DESCRIPTOR.services_by_name["MemoryGateway"].methods_by_name)
SERVICE = "/memgate.v1.MemoryGateway/"


def _words(rng: random.Random, n: int) -> str:
    return " ".join(
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(n)
    )


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def descendants(pid: int) -> list[int]:
    """``pid``'s children and theirs (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def gateway_pids() -> tuple[int, list[int]]:
    """The gateway child of this process and its recall workers."""
    for child in descendants(os.getpid()):
        try:
            cmd = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "gateway.cli serve" in cmd:
            return child, descendants(child)
    raise RuntimeError("the gateway process was not found among this process's children")


class Load:
    def __init__(self, address: str, seed: int, pool: int) -> None:
        self.address = address
        self.rng = random.Random(seed)
        texts = random.Random(seed + 1)
        self.pool = [_words(texts, texts.randint(5, 40)) for _ in range(pool)]
        self.codes: Counter[str] = Counter()
        self.calls = 0
        self.lock = threading.Lock()

    def run(self, until: float) -> None:
        rng = random.Random(self.rng.random())
        channel = grpc.insecure_channel(self.address)
        raw = {m: channel.unary_unary(SERVICE + m) for m in METHODS}
        with GatewayClient(self.address, "master", timeout=30, retries=0) as c:
            while time.monotonic() < until:
                code = self._one(c, raw, rng)
                with self.lock:
                    self.calls += 1
                    self.codes[code] += 1
        channel.close()

    def _one(self, c: GatewayClient, raw: dict[str, Any], rng: random.Random) -> str:
        pick = rng.random()
        ns = f"user/soak-{rng.randrange(50)}"
        k = rng.randrange(len(self.pool))
        try:
            if pick < 0.35:
                c.write(
                    f"user/soak-{k % 50}", "semantic", self.pool[k], idempotency_key=f"soak-{k}"
                )
            elif pick < 0.55:
                c.recall(_words(rng, 6), [ns], top_k=10)
            elif pick < 0.75:
                c.append_turn(ns, f"s{rng.randrange(20)}", role="user", content=self.pool[k])
            elif pick < 0.85:
                method = rng.choice(METHODS)
                body = rng.randbytes(rng.randint(0, 4096))
                raw[method](body, timeout=30)
            elif pick < 0.9:
                c.write(ns, "semantic", "x" * 300_000)  # over the content limit
            elif pick < 0.95:
                c.write("not a namespace", "semantic", "hello")
            else:
                c.recall("tea", [ns], top_k=100_000)
            return "OK"
        except GatewayError as err:
            return err.code.name if err.code else type(err).__name__
        except grpc.RpcError as err:
            return err.code().name


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--sample-s", type=float, default=10.0)
    ap.add_argument("--embedder", default=Settings().embedder)
    ap.add_argument("--recall-processes", type=int, default=2)
    ap.add_argument("--plateau", type=float, default=0.05)
    ap.add_argument("--pool", type=int, default=2000, help="distinct texts written")
    ap.add_argument("--json")
    args = ap.parse_args()
    if not 0 < args.seconds <= 3600 or not 0 < args.threads <= 64:
        sys.exit("--seconds must be in (0, 3600] and --threads in (0, 64]")
    with tempfile.TemporaryDirectory(prefix="memgate-soak-") as tmp:
        settings = replace(
            Settings(port=0, host="127.0.0.1", data_dir=Path(tmp)),
            embedder=args.embedder,
            recall_processes=args.recall_processes,
        )
        with gateway_process(settings) as address:
            gw, workers = gateway_pids()
            load = Load(address, seed=7, pool=args.pool)
            until = time.monotonic() + args.seconds
            threads = [
                threading.Thread(target=load.run, args=(until,), daemon=True)
                for _ in range(args.threads)
            ]
            for t in threads:
                t.start()
            samples: list[dict[str, Any]] = []
            start = time.monotonic()
            while any(t.is_alive() for t in threads):
                workers = descendants(gw)
                row = {
                    "t": round(time.monotonic() - start, 1),
                    "calls": load.calls,
                    "gateway_mb": round(rss_mb(gw), 1),
                    "workers_mb": [round(rss_mb(p), 1) for p in workers],
                }
                samples.append(row)
                print(
                    f"  {row['t']:7.1f} s  {row['calls']:7d} calls  gateway {row['gateway_mb']:7.1f}"
                    f" MB  workers {row['workers_mb']}",
                    flush=True,
                )
                time.sleep(args.sample_s)
            for t in threads:
                t.join()
    report = verdict(samples, args.plateau)
    report.update(codes=dict(load.codes), calls=load.calls, seconds=args.seconds)
    print(json.dumps({k: v for k, v in report.items() if k != "samples"}, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps({**report, "samples": samples}, indent=1))


def verdict(samples: list[dict[str, Any]], plateau: float) -> dict[str, Any]:
    """Per process, the resident memory at the start, at half time and at the end, and whether
    the last half grew by less than ``plateau``."""
    half = samples[len(samples) // 2]
    last = samples[-1]
    out: dict[str, Any] = {
        "gateway_mb": [samples[0]["gateway_mb"], half["gateway_mb"], last["gateway_mb"]],
        "gateway_bounded": last["gateway_mb"] <= half["gateway_mb"] * (1 + plateau),
    }
    n = min(len(half["workers_mb"]), len(last["workers_mb"]))
    out["workers_mb"] = [[half["workers_mb"][i], last["workers_mb"][i]] for i in range(n)]
    out["workers_bounded"] = all(
        last["workers_mb"][i] <= half["workers_mb"][i] * (1 + plateau) for i in range(n)
    )
    return out


if __name__ == "__main__":
    main()
