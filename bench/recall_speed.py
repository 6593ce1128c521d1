"""Recall latency beside its floor, in the same run (issue 7.6).

    python -m bench.recall_speed --memories 600,10000 --questions 200
    python -m bench.recall_speed --backend real --memories 600
    python -m bench.recall_speed --backend both --memories 600,10000

Loads dialogue turns of ``bench/dialogues`` (repeated with a suffix past the dataset's 5,824) into
one namespace of a fresh gateway per size, then asks longdialog questions through the public
client (``top_k`` 10) and times each recall. The gateway is ``memgate serve``, its own process, as
users run it (with ``--stages``, a thread of this process, so that its spans can be timed). The floor is what any retriever must pay for the
same question: the query embedding (the same embedder kind, in this process) plus an exact
inner-product search over as many vectors (FAISS ``IndexFlatIP``), timed right after each recall
(so both see the same load on a shared machine). Printed per size: recall p50/p95, floor p50,
the query embedding alone, and recall p50 minus each: minus the embedding is issue 7's target (at
most +5 ms on the embedded default: everything but the embedding, the vector search included);
minus the floor is the gateway's own cost (gRPC, lexical search, fusion, loading the hits).
``--backend both`` runs the embedded gateway and Redis + Neo4j (``real``) one after the other per
size and also prints real / embedded recall p50 (the target is at most 2). ``--stages`` also prints
where the time goes: the p50 of each traced stage of the same recalls (``bench/stage_timer.py``),
and the call minus its server span (gRPC and the client).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from bench.dialogues.generate import load
from bench.recall_eval import DATA, backend_settings, percentile
from bench.serving import gateway_process, ready_gateway
from bench.stage_timer import StageTimer
from gateway.client import GatewayClient
from gateway.embedding import build_embedder


def turns(n: int) -> list[dict[str, Any]]:
    data = load(DATA)
    out = []
    all_turns = [
        (conv["id"], s, i, t)
        for conv in data["conversations"]
        for s in conv["sessions"]
        for i, t in enumerate(s["turns"])
    ]
    for round_, (cid, session, i, turn) in zip(range(n), itertools.cycle(all_turns), strict=False):
        lap = round_ // len(all_turns)
        suffix = f" ({lap})" if lap else ""
        start = datetime.fromisoformat(session["date_time"]).replace(tzinfo=UTC)
        out.append(
            dict(
                layer="episodic",
                content=f"{turn['speaker']}: {turn['text']}{suffix}",
                session_id=f"{cid}-s{session['session']}-{lap}",
                event_time=start + timedelta(seconds=30 * i),
                metadata={"speaker": turn["speaker"]},
            )
        )
    return out


def questions(n: int) -> list[str]:
    data = load(DATA)
    qs = [q["question"] for conv in data["conversations"] for q in conv["questions"]]
    return qs[:: max(1, len(qs) // n)][:n]


class Floor:
    """Query embedding + exact flat inner-product search over ``n_vectors`` random unit vectors
    (one OpenMP thread, as the gateway's FAISS shards use)."""

    def __init__(self, embedder: Any, n_vectors: int) -> None:
        rng = np.random.default_rng(0)
        vectors = rng.standard_normal((n_vectors, embedder.dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        faiss.omp_set_num_threads(1)
        self._index = faiss.IndexFlatIP(embedder.dim)
        self._index.add(vectors)
        self._embedder = embedder

    def time_ms(self, question: str) -> tuple[float, float]:
        """(query embedding alone, query embedding + flat search), in ms."""
        t0 = time.perf_counter()
        v = self._embedder.embed([question])
        t1 = time.perf_counter()
        self._index.search(np.asarray(v, dtype=np.float32), 40)
        return (t1 - t0) * 1000, (time.perf_counter() - t0) * 1000


#: the server span around a whole call (``gateway/rpc/interceptors.py``)
RPC_SPAN = "rpc Recall"
#: what is left of a call outside its server span
TRANSPORT = "gRPC + client"


def run(
    backend: str, size: int, qs: list[str], embedder_kind: str, stages: bool = False
) -> dict[str, Any]:
    """Recall and floor figures; with ``stages``, also ``stages``: stage name -> ms per recall
    (the gateway then runs in a thread of this process, to be traced; otherwise as its own
    process, ``memgate serve``, as users run it)."""
    embedder = build_embedder(embedder_kind, cache_size=0)
    floor = Floor(embedder, size)
    timer = StageTimer() if stages else None
    per_stage: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="memgate-speed-") as tmp:
        settings = backend_settings(backend, Path(tmp), embedder_kind)
        with (
            ready_gateway(settings, timer) if stages else gateway_process(settings) as address,
            GatewayClient(address, agent_id="master", timeout=300) as client,
        ):
            ns = f"user/speed-{uuid.uuid4().hex[:8]}"
            items = [{**t, "namespace": ns} for t in turns(size)]
            t0 = time.perf_counter()
            for start in range(0, len(items), 200):
                client.batch_write(items[start : start + 200], wait=True)
            load_s = time.perf_counter() - t0
            for q in ("warm up", *qs[:3]):
                client.recall(q, namespaces=[ns], top_k=10)
                floor.time_ms(q)
            latencies, embeds, floors = [], [], []
            if timer is not None:
                timer.take()
            for q in qs:
                t0 = time.perf_counter()
                client.recall(q, namespaces=[ns], top_k=10)
                latencies.append((time.perf_counter() - t0) * 1000)
                if timer is not None:
                    spans = timer.take()
                    if RPC_SPAN in spans:
                        spans[TRANSPORT] = latencies[-1] - spans[RPC_SPAN]
                    for name, ms in spans.items():
                        per_stage.setdefault(name, []).append(ms)
                embed_ms, floor_ms = floor.time_ms(q)
                embeds.append(embed_ms)
                floors.append(floor_ms)
    return {
        "memories": size,
        "load_s": load_s,
        "recall_p50_ms": percentile(latencies, 50),
        "recall_p95_ms": percentile(latencies, 95),
        "embed_p50_ms": statistics.median(embeds),
        "floor_p50_ms": statistics.median(floors),
        "recalls": len(latencies),
        "stages": per_stage,
    }


def stage_lines(r: dict[str, Any]) -> list[str]:
    """The stages of ``run(..., stages=True)``, longest p50 first, each over the recalls that
    had it. Side by side stages (the keyword search runs beside the embedding) overlap: they do
    not add up to the call."""
    stages: dict[str, list[float]] = r["stages"]
    out = []
    for name, times in sorted(stages.items(), key=lambda kv: -statistics.median(kv[1])):
        share = "" if len(times) == r["recalls"] else f" (in {len(times)} of {r['recalls']})"
        out.append(f"{'':>10}{name:<32} p50 {statistics.median(times):6.2f} ms{share}")
    return out


def line(backend: str, r: dict[str, Any]) -> str:
    over = r["recall_p50_ms"] - r["floor_p50_ms"]
    over_embed = r["recall_p50_ms"] - r["embed_p50_ms"]
    return (
        f"{backend:>8} {int(r['memories']):>6} memories: recall p50 {r['recall_p50_ms']:6.1f} ms, "
        f"p95 {r['recall_p95_ms']:6.1f} ms | query embed p50 {r['embed_p50_ms']:5.1f} ms, "
        f"+ flat search (floor) {r['floor_p50_ms']:5.1f} ms | recall - embed {over_embed:+6.1f} ms "
        f"(target <= +5), recall - floor {over:+6.1f} ms (loaded in {r['load_s']:.0f} s)"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--backend", choices=["embedded", "real", "both"], default="embedded")
    ap.add_argument("--memories", default="600,10000")
    ap.add_argument("--questions", type=int, default=200)
    ap.add_argument("--embedder", choices=["minilm", "hash"], default="minilm")
    ap.add_argument("--stages", action="store_true", help="also print each stage's p50")
    args = ap.parse_args(argv)
    qs = questions(args.questions)
    backends = ["embedded", "real"] if args.backend == "both" else [args.backend]
    print(f"{args.backend}, embedder {args.embedder}, {len(qs)} questions, top_k 10", flush=True)
    for size in (int(s) for s in args.memories.split(",")):
        results = {}
        for backend in backends:
            results[backend] = run(backend, size, qs, args.embedder, args.stages)
            print(line(backend, results[backend]), flush=True)
            if args.stages:
                print("\n".join(stage_lines(results[backend])), flush=True)
        if len(results) == 2:
            ratio = results["real"]["recall_p50_ms"] / results["embedded"]["recall_p50_ms"]
            print(
                f"{'':>8} {size:>6} memories: real / embedded recall p50 {ratio:.2f}x", flush=True
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
