"""Load generator: many concurrent agents against one gateway, with the embedder floor beside it.

    python -m bench.load --backend embedded|real|both --clients 1,16,64,200 --seconds 10
                         [--client-procs 2] [--client-mode async|threads] [--set NAME=VALUE]
    python -m bench.load --gateway-src /path/to/older/checkout --clients 200 --write-every 0

The gateway runs in a child process (its own GIL), listening on 127.0.0.1 only. It is first
filled with ``--memories`` seeded dialogue turns (written by the master in 20 user namespaces,
``batch_write(wait=True)`` from 4 client threads: the "fill" line, applied writes/s beside the
embedder's batched rate). Then, for each client count, that many agents run for ``--seconds``:
each call is a recall over two user namespaces plus the agent's own, with a query drawn from
~2,000 distinct ones, and one call in ``--write-every`` is a write of one turn to the agent's own
namespace (``wait=False``). An agent that gets RESOURCE_EXHAUSTED waits the ``retry-after-ms``
it was told (100 ms when the answer carries none), times 0.5-1.5.

The harness (``--client-mode async``, the default) measures the server, not itself: the agents
are asyncio tasks, one ``gateway.client.aio.GatewayClient`` per agent (each agent has its own identity,
which admission control counts per agent, as real agents would), spread round robin over
``--client-procs`` client processes (their channels to the one gateway share an HTTP/2
connection per process, as gRPC's global subchannel pool does). Every agent connects (health)
before the clock starts; a shared monotonic deadline starts and stops them together. The old
harness (``--client-mode threads``: one blocking client per thread, all in this process) is kept
for comparison: past ~16 clients its threads queue on this process's GIL (~3 ms of client CPU
per call), so its latencies are mostly its own.

Reported per client count: recall calls/s, p50/p99 of the recalls that were served, recalls
whose answer was degraded (a skipped layer, named in ``degraded``), RESOURCE_EXHAUSTED answers
and their p99 latency (admission control must answer them promptly), other errors, writes/s
acknowledged and applied (until the journal drained), the gateway's CPU per served call (its
process and its recall workers)
(recalls + writes; comparable across runs on a shared host, unlike wall-clock figures) and the
client processes' CPU per call. Beside it, measured in the same run: the embedder alone, built
as the gateway builds it — batches of 64 dialogue turns (texts/s), one query per call (p50,
calls/s) and queries in batches of 16 (what natural batching of concurrent queries can reach).
The load average is printed: on a shared host the absolute figures move a lot. Bounded: at most
500 agents, 60 s per level, 8 client processes; loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.bench_apply import unique_turns
from gateway.client import GatewayClient
from gateway.client.errors import GatewayError, Overloaded
from gateway.embedding import build_embedder
from gateway.settings import DEFAULT_EMBEDDER, Settings

_TOPICS = [
    "food allergies",
    "the Kyoto hotel",
    "database timeouts",
    "piano lessons",
    "the refund",
    "budget approval",
    "reply style",
    "contract renewal",
    "the staging migration",
    "the onboarding redesign",
    "the flaky payments test",
    "Friday's dinner",
    "the cancellation fee",
    "the health check",
    "the client reply",
    "the meeting notes",
]
_FORMS = [
    "what did the user say about {t}",
    "anything about {t} {w}",
    "remind me of {t}",
    "status of {t} {w}",
    "what was decided on {t}",
    "{t}: open questions {w}",
]
_WHEN = ["", "recently", "last week", "yesterday", "this month", "before the deadline"]


def make_queries(n: int = 2000, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < n:
        form = rng.choice(_FORMS)
        out.add(
            form.format(t=rng.choice(_TOPICS), w=rng.choice(_WHEN)).strip()
            + f" #{rng.randint(1, 400)}"
        )
    return sorted(out)


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[max(0, min(len(s) - 1, round(p / 100 * (len(s) - 1))))]


# ---------------------------------------------------------------------- the gateway process


def _serve(settings: Settings, ready: Any, stop: Any) -> None:
    from bench.serving import ready_gateway

    # measured from the moment its recall workers are up (start-up, not throughput)
    with ready_gateway(settings) as address:
        ready.put(address)
        stop.wait()


def process_cpu_s(pid: int) -> float:
    """CPU seconds process ``pid`` and its live descendants (recall workers) have used (user +
    system, all their threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    children: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            children += [int(c) for c in (task / "children").read_text().split()]
    for child in children:
        with contextlib.suppress(OSError, IndexError, ValueError):
            own += process_cpu_s(child)
    return own


class GatewayProcess:
    def __init__(self, settings: Settings) -> None:
        ctx = mp.get_context("spawn")
        self._ready = ctx.Queue()
        self._stop = ctx.Event()
        self._proc = ctx.Process(target=_serve, args=(settings, self._ready, self._stop))

    def __enter__(self) -> str:
        self._proc.start()
        return str(self._ready.get(timeout=300))

    def cpu_s(self) -> float:
        return process_cpu_s(self._proc.pid or 0)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._proc.join(120)
        if self._proc.is_alive():
            self._proc.terminate()


class CheckoutGateway:
    """The gateway of another checkout (``--gateway-src``: e.g. the commit an issue measured),
    run by its own ``memgate serve`` on 127.0.0.1 with its defaults: the same harness and machine
    measure both. Only the embedded default (its settings are its own)."""

    def __init__(self, src: Path, data_dir: Path, embedder: str) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self._port = sock.getsockname()[1]
        self._cmd = [
            sys.executable, "-m", "gateway.cli", "serve", "--host", "127.0.0.1",
            "--port", str(self._port), "--data-dir", str(data_dir), "--embedder", embedder,
        ]  # fmt: skip
        self._src = src
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> str:
        env = {**os.environ, "PYTHONPATH": str(self._src)}
        self._proc = subprocess.Popen(self._cmd, cwd=self._src, env=env)
        address = f"127.0.0.1:{self._port}"
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                with GatewayClient(address, agent_id="master", timeout=2) as c:
                    c.health()
                return address
            except GatewayError:
                if self._proc.poll() is not None:
                    raise SystemExit(f"the gateway of {self._src} exited") from None
                time.sleep(0.5)
        raise SystemExit(f"the gateway of {self._src} did not answer in 300 s")

    def cpu_s(self) -> float:
        assert self._proc is not None
        return process_cpu_s(self._proc.pid)

    def __exit__(self, *exc: object) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(60)
            except subprocess.TimeoutExpired:
                self._proc.kill()


# ---------------------------------------------------------------------- measurements


@dataclass
class Level:
    clients: int
    seconds: float = 0.0
    recall_ms: list[float] = field(default_factory=list)
    overload_ms: list[float] = field(default_factory=list)
    degraded: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    writes: int = 0
    applied_s: float = 0.0
    client_cpu_s: float = 0.0
    gateway_cpu_s: float = 0.0


def floor(settings: Settings, turns: list[str], queries: list[str]) -> dict[str, float]:
    """The embedder alone, built as the gateway builds it."""
    emb = build_embedder(
        settings.embedder,
        cache_size=0,
        threads=settings.embed_threads,
        spinning=settings.embed_spinning,
    )
    emb.embed(turns[:64])
    start = time.perf_counter()
    for i in range(0, len(turns), 64):
        emb.embed(turns[i : i + 64])
    batched = len(turns) / (time.perf_counter() - start)
    start = time.perf_counter()
    for i in range(0, 256, 16):
        emb.embed(queries[i : i + 16])
    queries_batched = 256 / (time.perf_counter() - start)
    lat = []
    for q in queries[:100]:
        t0 = time.perf_counter()
        emb.embed([q])
        lat.append((time.perf_counter() - t0) * 1000)
    return {
        "batched_per_s": batched,
        "query_p50_ms": statistics.median(lat),
        "query_per_s": 1000 / statistics.fmean(lat),
        "queries_batched_per_s": queries_batched,
    }


def populate(address: str, turns: list[str], namespaces: list[str]) -> tuple[float, float]:
    """(acknowledged /s, applied /s) of ``turns`` written by 4 master clients, wait=True."""
    chunks = [turns[i : i + 64] for i in range(0, len(turns), 64)]
    lock = threading.Lock()

    def writer() -> None:
        with GatewayClient(address, agent_id="master", timeout=300) as c:
            while True:
                with lock:
                    if not chunks:
                        return
                    chunk = chunks.pop()
                c.batch_write(
                    [
                        dict(
                            namespace=namespaces[hash(t) % len(namespaces)],
                            layer="episodic" if j % 3 == 0 else "semantic",
                            content=t,
                        )
                        for j, t in enumerate(chunk)
                    ],
                    wait=True,
                )

    start = time.perf_counter()
    threads = [threading.Thread(target=writer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    return len(turns) / elapsed, len(turns) / elapsed


def _client_call(
    rng: random.Random, n: int, own: str, namespaces: list[str], queries: list[str], every: int
) -> tuple[str, tuple[Any, ...]]:
    """The n-th call of an agent: ("write", args) one time in ``every``, else ("recall", args)."""
    if every and n % every == 0:
        return "write", (own, "episodic", rng.choice(queries) + " (noted)")
    return "recall", (rng.choice(queries), [*rng.sample(namespaces, 2), own])


def _tally(level: Level, part: dict[str, Any]) -> None:
    level.recall_ms += part["recall_ms"]
    level.overload_ms += part["overload_ms"]
    level.degraded += part["degraded"]
    level.writes += part["writes"]
    level.client_cpu_s += part["cpu_s"]
    for k, v in part["errors"].items():
        level.errors[k] = level.errors.get(k, 0) + v


async def _agents(
    address: str,
    ids: list[int],
    namespaces: list[str],
    queries: list[str],
    every: int,
    ready: Any,
    go: Any,
) -> dict[str, Any]:
    """One client process: an asyncio task (and ``GatewayClient``) per agent."""
    from gateway.client.aio import GatewayClient as AsyncClient

    part: dict[str, Any] = dict(recall_ms=[], overload_ms=[], degraded=0, writes=0, errors={})
    clients = [AsyncClient(address, agent_id=f"agent-{i}", timeout=30, retries=0) for i in ids]
    await asyncio.gather(*(c.health() for c in clients))  # connected before the clock starts
    ready.put(len(ids))
    deadline = go.get()  # time.monotonic() is one clock for every process (Linux)
    cpu0 = time.process_time()

    async def agent(i: int, c: Any) -> None:
        rng, own, n = random.Random(i), f"agent/agent-{i}", 0
        while time.monotonic() < deadline:
            n += 1
            kind, args = _client_call(rng, n, own, namespaces, queries, every)
            t0 = time.perf_counter()
            try:
                if kind == "write":
                    await c.write(*args)
                    part["writes"] += 1
                    continue
                r = await c.recall(args[0], args[1], top_k=5)
                part["recall_ms"].append((time.perf_counter() - t0) * 1000)
                part["degraded"] += bool(r.degraded)
            except Overloaded as exc:
                part["overload_ms"].append((time.perf_counter() - t0) * 1000)
                await asyncio.sleep((exc.retry_after_ms or 100) / 1000 * (0.5 + rng.random()))
            except GatewayError as exc:
                part["errors"][exc.code.name] = part["errors"].get(exc.code.name, 0) + 1

    await asyncio.gather(*(agent(i, c) for i, c in zip(ids, clients, strict=True)))
    part["cpu_s"] = time.process_time() - cpu0
    await asyncio.gather(*(c.close() for c in clients))
    return part


def _client_process(
    address: str,
    ids: list[int],
    namespaces: list[str],
    queries: list[str],
    every: int,
    ready: Any,
    go: Any,
    out: Any,
) -> None:
    out.put(asyncio.run(_agents(address, ids, namespaces, queries, every, ready, go)))


def run_level_async(
    address: str,
    level: Level,
    seconds: float,
    namespaces: list[str],
    queries: list[str],
    write_every: int,
    procs: int,
) -> None:
    """``level.clients`` asyncio agents spread over ``procs`` client processes."""
    ctx = mp.get_context("spawn")
    ready, out = ctx.Queue(), ctx.Queue()
    groups = [g for g in (list(range(level.clients))[p::procs] for p in range(procs)) if g]
    gos = [ctx.Queue() for _ in groups]
    children = [
        ctx.Process(
            target=_client_process,
            args=(address, g, namespaces, queries, write_every, ready, go, out),
            daemon=True,
        )
        for g, go in zip(groups, gos, strict=True)
    ]
    for child in children:
        child.start()
    try:
        for _ in children:
            ready.get(timeout=120)
        start = time.perf_counter()
        deadline = time.monotonic() + seconds
        for go in gos:
            go.put(deadline)
        for _ in children:
            _tally(level, out.get(timeout=seconds + 120))
        level.seconds = time.perf_counter() - start
    finally:
        for child in children:
            child.join(30)
            if child.is_alive():
                child.terminate()
    _wait_applied(address, level, start)


def _wait_applied(address: str, level: Level, start: float) -> None:
    with GatewayClient(address, agent_id="master") as c:  # until the writes are applied
        while c.stats().journal_pending:
            time.sleep(0.05)
    level.applied_s = time.perf_counter() - start


def run_level_threads(
    address: str,
    level: Level,
    seconds: float,
    namespaces: list[str],
    queries: list[str],
    write_every: int,
) -> None:
    """The old harness: one blocking client per thread, all in this process (GIL-bound: past
    ~16 clients it measures itself more than the gateway)."""
    lock = threading.Lock()
    deadline = 0.0

    def start_clock() -> None:  # once every client is connected
        nonlocal deadline
        deadline = time.monotonic() + seconds

    barrier = threading.Barrier(level.clients + 1, action=start_clock)

    def client(i: int) -> None:
        rng, own, n = random.Random(i), f"agent/agent-{i}", 0
        part: dict[str, Any] = dict(recall_ms=[], overload_ms=[], degraded=0, writes=0, errors={})
        with GatewayClient(address, agent_id=f"agent-{i}", timeout=30, retries=0) as c:
            try:
                c.health()  # connect before the clock starts
            finally:
                barrier.wait()
            while time.monotonic() < deadline:
                n += 1
                kind, args = _client_call(rng, n, own, namespaces, queries, write_every)
                t0 = time.perf_counter()
                try:
                    if kind == "write":
                        c.write(*args)
                        part["writes"] += 1
                        continue
                    r = c.recall(args[0], args[1], top_k=5)
                    part["recall_ms"].append((time.perf_counter() - t0) * 1000)
                    part["degraded"] += bool(r.degraded)
                except Overloaded as exc:
                    part["overload_ms"].append((time.perf_counter() - t0) * 1000)
                    time.sleep((exc.retry_after_ms or 100) / 1000 * (0.5 + rng.random()))
                except GatewayError as exc:
                    part["errors"][exc.code.name] = part["errors"].get(exc.code.name, 0) + 1
        part["cpu_s"] = 0.0
        with lock:
            _tally(level, part)

    cpu0 = time.process_time()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(level.clients)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    level.seconds = time.perf_counter() - start
    level.client_cpu_s = time.process_time() - cpu0
    _wait_applied(address, level, start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("embedded", "real", "both"), default="embedded")
    ap.add_argument("--clients", default="1,16,64,200")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--memories", type=int, default=512)
    ap.add_argument("--write-every", type=int, default=10, help="0: recalls only")
    ap.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    ap.add_argument(
        "--client-procs", type=int, default=2, help="client processes the agents are spread over"
    )
    ap.add_argument(
        "--client-mode",
        choices=("async", "threads"),
        default="async",
        help="async: asyncio agents in --client-procs processes; threads: the old harness",
    )
    ap.add_argument("--redis-url", default=os.environ.get("MEMGATE_TEST_REDIS_URL", ""))
    ap.add_argument("--neo4j-uri", default=os.environ.get("MEMGATE_TEST_NEO4J_URI", ""))
    ap.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="a gateway setting"
    )
    ap.add_argument(
        "--gateway-src",
        default="",
        help="serve the gateway of this checkout instead (embedded, its own defaults): "
        "e.g. a worktree of the commit an issue measured, for a same-machine baseline",
    )
    args = ap.parse_args()
    if args.gateway_src and (args.backend != "embedded" or args.set):
        raise SystemExit("--gateway-src runs that checkout's embedded default: no --backend/--set")
    counts = [int(c) for c in args.clients.split(",")]
    if max(counts) > 500 or args.seconds > 60 or not 1 <= args.client_procs <= 8:
        raise SystemExit("bounded: at most 500 clients, 60 s per level and 8 client processes")
    turns = unique_turns(args.memories)
    queries = make_queries()
    backends = ["embedded", "real"] if args.backend == "both" else [args.backend]
    overrides: dict[str, Any] = {}
    for item in args.set:
        name, _, value = item.partition("=")
        current = getattr(Settings(), name)
        if isinstance(current, bool):
            overrides[name] = value.lower() in ("1", "true", "yes", "on")
        else:
            overrides[name] = type(current)(value)
    harness = (
        f"asyncio agents in {args.client_procs} processes"
        if args.client_mode == "async"
        else "threads in one process"
    )
    print(
        f"bench.load: {args.memories} memories, clients {counts}, {args.seconds:.0f} s each, "
        f"1 write per {args.write_every} calls, embedder {args.embedder}, {os.cpu_count()} cores, "
        f"clients: {harness}, "
        f"load average {os.getloadavg()[0]:.1f} (shared host){', ' + str(overrides) if overrides else ''}",
        flush=True,
    )
    for backend in backends:
        if backend == "real" and not (args.redis_url and args.neo4j_uri):
            print("real: skipped (set MEMGATE_TEST_REDIS_URL and MEMGATE_TEST_NEO4J_URI)")
            continue
        run = uuid.uuid4().hex[:6]
        namespaces = [f"user/load-{run}-{i}" for i in range(20)]
        with tempfile.TemporaryDirectory(prefix="memgate-load-") as tmp:
            settings = replace(
                Settings(
                    port=0,
                    data_dir=Path(tmp),
                    embedder=args.embedder,
                    redis_url=args.redis_url if backend == "real" else "",
                    neo4j_uri=args.neo4j_uri if backend == "real" else "",
                ),
                **overrides,
            ).validate()
            f = floor(settings, turns, queries)
            print(
                f"\n[{backend}] embedder alone: batches of 64 turns {f['batched_per_s']:.0f} "
                f"texts/s; one query per call p50 {f['query_p50_ms']:.1f} ms "
                f"({f['query_per_s']:.0f}/s on one thread); queries in batches of 16 "
                f"{f['queries_batched_per_s']:.0f}/s",
                flush=True,
            )
            gateway: GatewayProcess | CheckoutGateway = GatewayProcess(settings)
            if args.gateway_src:
                gateway = CheckoutGateway(Path(args.gateway_src), Path(tmp), args.embedder)
            with gateway as address:
                _, applied = populate(address, turns, namespaces)
                print(
                    f"[{backend}] fill: {len(turns)} turns, batch_write(wait=True) x4 clients: "
                    f"{applied:.1f} applied writes/s ({applied / f['batched_per_s']:.0%} of the "
                    "embedder alone)",
                    flush=True,
                )
                print(
                    "| clients | recalls/s | p50 ms | p99 ms | degraded | RESOURCE_EXHAUSTED "
                    "(p99 ms) | other errors | writes ack/s | applied/s | gateway CPU ms/served "
                    "| client CPU ms/call "
                    "| load avg |"
                )
                print("|---|---|---|---|---|---|---|---|---|---|---|---|")
                for n in counts:
                    level = Level(n)
                    cpu0 = gateway.cpu_s()
                    if args.client_mode == "async":
                        run_level_async(
                            address,
                            level,
                            args.seconds,
                            namespaces,
                            queries,
                            args.write_every,
                            args.client_procs,
                        )
                    else:
                        run_level_threads(
                            address, level, args.seconds, namespaces, queries, args.write_every
                        )
                    level.gateway_cpu_s = gateway.cpu_s() - cpu0  # until the writes applied
                    calls = len(level.recall_ms) + len(level.overload_ms) + level.writes
                    served = len(level.recall_ms) + level.writes
                    print(
                        f"| {n} | {len(level.recall_ms) / level.seconds:.1f} "
                        f"| {percentile(level.recall_ms, 50):.0f} "
                        f"| {percentile(level.recall_ms, 99):.0f} | {level.degraded} "
                        f"| {len(level.overload_ms)} ({percentile(level.overload_ms, 99):.0f}) "
                        f"| {level.errors or 0} | {level.writes / level.seconds:.1f} "
                        f"| {level.writes / level.applied_s:.1f} "
                        f"| {1000 * level.gateway_cpu_s / max(1, served):.2f} "
                        f"| {1000 * level.client_cpu_s / max(1, calls):.2f} "
                        f"| {os.getloadavg()[0]:.1f} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
