"""Vectors past one machine's memory (issue 32): approximate search in large namespaces, start-up
and memory of a replica with vectors loaded on demand against today's full copy, and what client
affinity buys.

    python -m bench.vector_scale ann --sizes 10000,100000,1000000
    python -m bench.vector_scale startup --memories 1000000 --namespaces 10000          # embedded
    python -m bench.vector_scale startup --memories 1000000 --namespaces 10000 \\
        --neo4j-uri bolt://127.0.0.1:7702 --redis-url redis://127.0.0.1:6401/0 --replicas 2
    python -m bench.vector_scale onens --sizes 10000,1000000 --stages --exact-too --keep DIR
    python -m bench.vector_scale affinity

ann       one namespace of N vectors near real dialogue (MiniLM vectors of the project's dialogue
          turns, each stored vector one of them plus noise, cosine ~0.8 to it; queries: other
          turns, noised the same way): search p50/p95 with the exact flat scan and with the
          index's own choice (IVF past ``APPROX_MIN``), recall@10 of the latter against exact.
startup   N memories over M namespaces (hash-embedder vectors of short notes; ``global`` holds
          ``--global-size`` of them) written straight into the record store (Neo4j: one UNWIND per
          5,000, the node shape ``Neo4jRecordStore.put`` writes; re-used when the tag is there);
          then each mode: start-up time (process start to serving) and idle RSS, recall p50/p99
          on hot (second recall) and cold (first) namespaces, the same hit ids in both modes on a
          sample. Embedded: the index alone in a child process (start = open + fill or pin).
          Neo4j: ``--replicas`` real gateways (Redis journal) started side by side, through gRPC.
onens     one namespace of N dialogue turns (``turns``: the project's conversations, copied with a
          lap number) through a gateway: recall p50 at each size (``--stages``: the gateway in
          this process, each stage's p50; ``--exact-too``: the same questions again with the
          lexical search exact at any size, its p50 and how many answers agree).
affinity  the hit rate of a replica's cache when recalls reach replicas round robin against one
          namespace always to the same replica (the client's target list ordered by a hash of the
          namespace), on a Zipf workload, simulated over the cache's own LRU policy.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from gateway.core.model.models import Layer, Memory, VectorItem

ROOT = Path(__file__).resolve().parent.parent


def _pcts(xs: list[float]) -> tuple[float, float, float]:
    a = np.asarray(xs) * 1000
    return float(np.percentile(a, 50)), float(np.percentile(a, 95)), float(np.percentile(a, 99))


def _rss_mb(pid: int | None = None) -> float:
    path = f"/proc/{pid or 'self'}/status"
    for line in Path(path).read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# -- ann ---------------------------------------------------------------------------------------


def _dialogue_vectors() -> np.ndarray:
    from gateway.embedding.factory import build_embedder

    data = json.loads((ROOT / "bench/dialogues/longdialog-v1.json").read_text())
    texts = [
        t["text"]
        for c in data["conversations"]
        for s in c["sessions"]
        for t in s["turns"]
        if len(t.get("text", "")) > 20
    ]
    texts = list(dict.fromkeys(texts))
    emb = build_embedder("minilm")
    print(f"embedding {len(texts)} dialogue turns with {emb.name} ...", flush=True)
    return np.asarray(emb.embed(texts), dtype=np.float32)


def _noised(base: np.ndarray, n: int, rng: np.random.Generator, noise: float) -> np.ndarray:
    x = base[rng.integers(0, len(base), n)]
    x = x + noise * rng.standard_normal(x.shape).astype(np.float32) / np.sqrt(x.shape[1])
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _mixed(
    x: np.ndarray, base: np.ndarray, rng: np.random.Generator, args: argparse.Namespace
) -> np.ndarray:
    """``--mix m``: each vector also takes ``m`` of a second turn (texts on two topics): fewer,
    looser clusters, a harder case for an inverted file."""
    if not args.mix:
        return x
    y = x + args.mix * _noised(base, len(x), rng, args.noise)
    return (y / np.linalg.norm(y, axis=1, keepdims=True)).astype(np.float32)


async def _ann(args: argparse.Namespace) -> None:
    import stores.faiss_index as fi

    turns = _dialogue_vectors()
    rng = np.random.default_rng(7)
    order = rng.permutation(len(turns))
    held = turns[order[: len(turns) // 5]]  # query topics never stored as such
    stored = turns[order[len(turns) // 5 :]]
    queries = _mixed(_noised(held, args.queries, rng, args.noise), held, rng, args)
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        vectors = _mixed(_noised(stored, size, rng, args.noise), stored, rng, args)
        items = [VectorItem(f"m{i}", "global", Layer.SEMANTIC, v) for i, v in enumerate(vectors)]
        exact = [set(np.argsort(-(vectors @ q))[:10].tolist()) for q in queries]
        for mode in ("flat", "auto"):
            fi.APPROX_MIN = 1 << 60 if mode == "flat" else 32_768
            index = fi.ShardedFaissIndex(None, dim=vectors.shape[1], shards=8)
            t0 = time.perf_counter()
            for start in range(0, size, 50_000):
                await index.upsert(items[start : start + 50_000])
            build = time.perf_counter() - t0
            (part,) = index._shards[index.shard_of("global")].parts["global"].values()
            times, found = [], 0
            for q, want in zip(queries, exact, strict=True):
                t = time.perf_counter()
                hits = await index.search(q, ["global"], 10)
                times.append(time.perf_counter() - t)
                found += len(want & {int(m[1:]) for m, _ in hits})
            p50, p95, _ = _pcts(times)
            kind = (
                "flat" if part.flat else f"IVF {part.index.nlist} lists, {part.index.nprobe} probed"
            )
            row = {
                "vectors": size,
                "index": kind,
                "p50_ms": round(p50, 2),
                "p95_ms": round(p95, 2),
                "recall@10": round(found / (10 * len(queries)), 4),
                "build_s": round(build, 1),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
            del index, part
        del items, vectors
    fi.APPROX_MIN = 32_768
    print("\n| vectors | index | p50 ms | p95 ms | recall@10 vs exact | build s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['vectors']:,} | {r['index']} | {r['p50_ms']} | {r['p95_ms']} | "
            f"{r['recall@10']} | {r['build_s']} |"
        )


# -- startup -----------------------------------------------------------------------------------


def _namespace(i: int) -> str:
    return "global" if i == 0 else f"user/u{i:06d}"


_WORDS = (
    "tea coffee hiking paris berlin piano guitar python rust garden dog cat sister brother "
    "meeting deadline budget travel train flight hotel vegan pasta sushi marathon yoga chess "
    "novel movie concert museum dentist doctor birthday wedding apartment rent salary promotion"
)
WORDS = _WORDS.split()


def _corpus(args: argparse.Namespace, tag: str) -> Any:
    """Yields batches of Memory: ``global`` first (``--global-size``), then the rest spread over
    the namespaces (Zipf-ish sizes), ids ``<tag>-<n>``."""
    from gateway.embedding.hashed import HashEmbedder

    emb = HashEmbedder(384)
    rng = np.random.default_rng(11)
    others = args.memories - args.global_size
    weights = 1.0 / np.arange(1, args.namespaces) ** 0.6
    counts = np.floor(weights / weights.sum() * others).astype(int)
    counts[: others - counts.sum()] += 1
    plan = [(0, args.global_size)] + [(i + 1, int(c)) for i, c in enumerate(counts)]
    batch: list[tuple[str, str]] = []
    n = 0
    for ns_i, count in plan:
        for _ in range(count):
            words = rng.choice(WORDS, 6)
            batch.append((_namespace(ns_i), f"note {n}: " + " ".join(words)))
            n += 1
            if len(batch) == 5000:
                yield _memories(batch, emb, tag, n - len(batch))
                batch = []
    if batch:
        yield _memories(batch, emb, tag, n - len(batch))


def _memories(batch: list[tuple[str, str]], emb: Any, tag: str, first: int) -> list[Memory]:
    vectors = emb.embed([text for _, text in batch])
    return [
        Memory(
            id=f"{tag}-{first + i:08d}",
            namespace=ns,
            layer=Layer.SEMANTIC,
            content=text,
            embedding=vectors[i],
        )
        for i, (ns, text) in enumerate(batch)
    ]


async def _load_neo4j(args: argparse.Namespace, tag: str) -> None:
    from stores.neo4j_records import Neo4jRecordStore, _current_props, _version_props

    store = Neo4jRecordStore(args.neo4j_uri)
    await store.start()
    try:
        have = await store._db.read(  # noqa: SLF001 - the bench checks its own corpus
            "MATCH (m:Memory {id: $id}) RETURN count(m) AS n",
            {"id": f"{tag}-{args.memories - 1:08d}"},
        )
        if have and have[0]["n"]:
            print(f"corpus {tag} already in Neo4j", flush=True)
            return
        t0, done = time.perf_counter(), 0
        for batch in _corpus(args, tag):
            await store._db.write(  # noqa: SLF001
                "UNWIND $rows AS r CREATE (m:Memory) SET m = r.h "
                "CREATE (v:MemoryVersion) SET v = r.v CREATE (m)-[:HAS_VERSION]->(v)",
                {"rows": [{"h": _current_props(m), "v": _version_props(m)} for m in batch]},
            )
            done += len(batch)
            if done % 100_000 < 5000:
                rate = done / (time.perf_counter() - t0)
                print(f"  loaded {done:,} memories ({rate:,.0f}/s)", flush=True)
    finally:
        await store.close()


async def _load_sqlite(args: argparse.Namespace, path: Path, tag: str) -> None:
    from stores.sqlite_records import SqliteRecordStore

    marker = path.with_suffix(".done")
    if marker.exists() and marker.read_text() == tag:
        print(f"corpus {tag} already in {path}", flush=True)
        return
    store = SqliteRecordStore(path)
    await store.start()
    t0, done = time.perf_counter(), 0
    for batch in _corpus(args, tag):
        await store.put(batch)
        done += len(batch)
        if done % 100_000 < 5000:
            print(f"  loaded {done:,} memories ({done / (time.perf_counter() - t0):,.0f}/s)")
    await store.close()
    marker.write_text(tag)


def _sample(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """Namespaces to recall in (hot: recalled twice, the second timed; cold: once) and queries."""
    rng = np.random.default_rng(5)
    picks = rng.choice(np.arange(1, args.namespaces), size=min(args.sample, args.namespaces - 1),
                       replace=False)  # fmt: skip
    queries = [" ".join(rng.choice(WORDS, 3)) for _ in picks]
    return [_namespace(int(i)) for i in picks], queries


async def _child(args: argparse.Namespace) -> None:
    """One embedded mode in its own process: open the records, make the index ready, recall."""
    from gateway.core.apply.index_fill import fill_index
    from gateway.embedding.hashed import HashEmbedder
    from stores.faiss_index import ShardedFaissIndex
    from stores.sqlite_records import SqliteRecordStore
    from stores.vector_cache import OnDemandVectorIndex

    base = _rss_mb()
    t0 = time.perf_counter()
    records = SqliteRecordStore(Path(args.db))
    await records.start()
    index: Any
    if args.mode == "full":
        index = ShardedFaissIndex(None, dim=384, shards=8)
        await index.start()
        await fill_index(records, index, 384)
    else:
        index = OnDemandVectorIndex(records=records, dim=384, budget_mb=args.budget_mb,
                                    pinned=("global",))  # fmt: skip
        await index.start()
    start_s = time.perf_counter() - t0
    idle = _rss_mb()
    emb = HashEmbedder(384)
    spaces, queries = _sample(args)
    cold, hot, results = [], [], {}
    for ns, q in zip(spaces, queries, strict=True):
        v = emb.embed([q])[0]
        t = time.perf_counter()
        await index.search(v, [ns, "global"], 10)
        cold.append(time.perf_counter() - t)
        t = time.perf_counter()
        hits = await index.search(v, [ns, "global"], 10)
        hot.append(time.perf_counter() - t)
        results[ns] = [m for m, _ in hits]
    print(json.dumps({"start_s": start_s, "idle_rss_mb": idle, "base_rss_mb": base,
                      "cold": cold, "hot": hot, "results": results,
                      "after_rss_mb": _rss_mb()}))  # fmt: skip


def _run_child(args: argparse.Namespace, mode: str, db: Path) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.vector_scale", "_child", "--mode", mode, "--db", str(db),
           "--memories", str(args.memories), "--namespaces", str(args.namespaces),
           "--sample", str(args.sample), "--budget-mb", str(args.budget_mb)]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _gateway_mode(args: argparse.Namespace, mode: str, root: Path, prefix: str) -> dict[str, Any]:
    from gateway.client import GatewayClient
    from tests.e2e.gateways import spawn

    flags = ["--redis-url", args.redis_url, "--neo4j-uri", args.neo4j_uri, "--journal", "redis"]
    env = {
        "MEMGATE_REDIS_JOURNAL_PREFIX": prefix,
        "MEMGATE_VECTORS": mode,
        "MEMGATE_VECTOR_CACHE_MB": str(args.budget_mb),
        "MEMGATE_RECALL_PROCESSES": "0",
        "MEMGATE_SLOT_BACKFILL": "0",  # a start-up pass over every stored vector, once
        "MEMGATE_RECALL_CACHE_TTL_S": "0",  # the second recall reaches the index again
    }
    from concurrent.futures import ThreadPoolExecutor

    def one(i: int) -> tuple[Any, float]:
        t = time.perf_counter()
        gw = spawn(root / f"{mode}-gw{i}", flags, {**env, "MEMGATE_REPLICA_ID": f"{mode}-{i}"},
                   start_timeout=args.start_timeout)  # fmt: skip
        return gw, time.perf_counter() - t

    with ThreadPoolExecutor(args.replicas) as pool:
        started = list(pool.map(one, range(args.replicas)))
    gws = [g for g, _ in started]
    try:
        time.sleep(2)
        idle = [_rss_mb(g.proc.pid) for g in gws]
        spaces, queries = _sample(args)
        cold, hot, results = [], [], {}
        for i, (ns, q) in enumerate(zip(spaces, queries, strict=True)):
            gw = gws[i % len(gws)]
            with GatewayClient(gw.address, agent_id="master", timeout=60) as c:
                t = time.perf_counter()
                c.recall(q, namespaces=[ns, "global"], top_k=10)
                cold.append(time.perf_counter() - t)
                t = time.perf_counter()
                got = c.recall(q, namespaces=[ns, "global"], top_k=10)
                hot.append(time.perf_counter() - t)
                results[ns] = [h.id for h in got.hits]
        after = [_rss_mb(g.proc.pid) for g in gws]
    finally:
        for g in gws:
            g.stop()
    return {"start_s": [s for _, s in started], "idle_rss_mb": idle, "after_rss_mb": after,
            "cold": cold, "hot": hot, "results": results}  # fmt: skip


async def _startup(args: argparse.Namespace) -> None:
    tag = f"vs{args.memories}x{args.namespaces}g{args.global_size}"
    out: dict[str, dict[str, Any]] = {}
    if args.neo4j_uri:
        await _load_neo4j(args, tag)
        with tempfile.TemporaryDirectory() as tmp:
            prefix = f"mgbench-{uuid.uuid4().hex[:8]}"
            for mode in filter(None, args.modes.split(",")):
                print(f"== {mode}: {args.replicas} replicas side by side", flush=True)
                out[mode] = _gateway_mode(args, mode, Path(tmp), prefix)
    else:
        db = Path(args.data_dir) / f"{tag}.db"
        db.parent.mkdir(parents=True, exist_ok=True)
        await _load_sqlite(args, db, tag)
        for mode in filter(None, args.modes.split(",")):
            print(f"== {mode}", flush=True)
            out[mode] = _run_child(args, mode, db)
    backend = "Neo4j + Redis, gateways" if args.neo4j_uri else "embedded SQLite, index alone"
    print(f"\n{args.memories:,} memories over {args.namespaces:,} namespaces ({backend})")
    print("| mode | start-up s | idle RSS MB | cold recall p50 / p99 ms | hot p50 / p99 ms |")
    print("|---|---|---|---|---|")
    for mode, r in out.items():
        starts = r["start_s"] if isinstance(r["start_s"], list) else [r["start_s"]]
        idle = r["idle_rss_mb"] if isinstance(r["idle_rss_mb"], list) else [r["idle_rss_mb"]]
        c50, _, c99 = _pcts(r["cold"])
        h50, _, h99 = _pcts(r["hot"])
        print(f"| {mode} | {' / '.join(f'{s:.1f}' for s in starts)} | "
              f"{' / '.join(f'{m:.0f}' for m in idle)} | {c50:.1f} / {c99:.1f} | "
              f"{h50:.1f} / {h99:.1f} |")  # fmt: skip
    if len(out) == 2:
        a, b = out.values()
        same = sum(a["results"][ns] == b["results"][ns] for ns in a["results"])
        print(f"same hit ids in both modes: {same}/{len(a['results'])} namespaces")
        cold = np.asarray(b["cold"]) - np.asarray(b["hot"])
        print(f"cost of a cold namespace (on_demand, first minus second recall): "
              f"p50 {np.percentile(cold, 50) * 1000:.1f} ms")  # fmt: skip


# -- one namespace -----------------------------------------------------------------------------


async def _onens(args: argparse.Namespace) -> None:
    """Recall through the gateway over one namespace of N dialogue turns (hash embedder; written
    straight into the embedded record store, as the gateway stores them), p50 beside 10k."""
    from dataclasses import replace

    from bench.recall_eval import backend_settings
    from bench.recall_speed import questions, turns
    from bench.serving import gateway_process, ready_gateway
    from bench.stage_timer import StageTimer
    from gateway.client import GatewayClient
    from gateway.core.apply import dialogue
    from gateway.embedding.hashed import HashEmbedder
    from stores.sqlite_records import SqliteRecordStore

    emb = HashEmbedder(384)
    qs = questions(args.queries)
    rows = []
    for size in [int(x) for x in args.sizes.split(",")]:
        keep = Path(args.keep) / f"onens-{size}" if args.keep else None
        with tempfile.TemporaryDirectory(prefix="memgate-onens-") as scratch:
            tmp = str(keep or scratch)
            Path(tmp).mkdir(parents=True, exist_ok=True)
            written = Path(tmp) / "written"
            store = SqliteRecordStore(Path(tmp) / "records.db")
            await store.start()
            t0 = time.perf_counter()
            source = [] if written.exists() else turns(size)
            for start in range(0, len(source), 5000):
                part = source[start : start + 5000]
                mems = [
                    Memory(
                        id=f"t{start + i:08d}",
                        namespace="user/speed",
                        layer=Layer.EPISODIC,
                        content=t["content"],
                        source_session=t["session_id"],
                        event_time=t["event_time"],
                        metadata=t["metadata"],
                    )
                    for i, t in enumerate(part)
                ]
                said = [
                    dialogue.said(m.layer, m.source_session, m.content, m.metadata) for m in mems
                ]
                vectors = emb.embed(said)
                await store.put(
                    [m.with_changes(embedding=v) for m, v in zip(mems, vectors, strict=True)]
                )
                if (start // 5000) % 20 == 19:
                    print(f"  {start + len(part):,} turns written", flush=True)
            await store.close()
            written.touch()
            load = time.perf_counter() - t0
            settings = replace(backend_settings("embedded", Path(tmp), "hash"), recall_processes=0)
            t0 = time.perf_counter()
            timer = StageTimer() if args.stages else None
            serving = ready_gateway(settings, timer) if timer else gateway_process(settings, 3600)
            stages: dict[str, list[float]] = {}
            with serving as address:
                start_s = time.perf_counter() - t0
                with GatewayClient(address, agent_id="master", timeout=120) as c:
                    for q in qs[:5]:
                        c.recall(q, namespaces=["user/speed"], top_k=10)
                    times = []
                    if timer:
                        timer.take()
                    hits: dict[str, list[str]] = {}
                    for q in qs:
                        t = time.perf_counter()
                        r = c.recall(q, namespaces=["user/speed"], top_k=10)
                        times.append(time.perf_counter() - t)
                        hits[q] = [_lap_free(h.content) for h in r.hits]
                        for name, ms in (timer.take() if timer else {}).items():
                            stages.setdefault(name, []).append(ms)
                    exact = _exact_too(c, qs, hits) if args.exact_too and timer else {}
            p50, p95, _ = _pcts(times)
            row = {"memories": size, "recall_p50_ms": round(p50, 1), "p95_ms": round(p95, 1),
                   "start_s": round(start_s, 1), "written_s": round(load, 1), **exact}  # fmt: skip
            rows.append(row)
            print(json.dumps(row), flush=True)
            for name, ms in sorted(stages.items(), key=lambda kv: -float(np.median(kv[1]))):
                print(f"    {name:<36} p50 {np.median(ms):7.2f} ms ({len(ms)} recalls)")
    if len(rows) > 1:
        print(f"p50 at {rows[-1]['memories']:,} / p50 at {rows[0]['memories']:,}: "
              f"{rows[-1]['recall_p50_ms'] / rows[0]['recall_p50_ms']:.2f}x")  # fmt: skip


def _lap_free(content: str) -> str:
    """A turn's text without the lap number ``turns`` adds to its copies (" (12)")."""
    head, _, tail = content.rpartition(" (")
    return head if head and tail.endswith(")") and tail[:-1].isdigit() else content


def _evidence() -> dict[str, set[str]]:
    """Each question's evidence turns as ``turns`` writes them ("Speaker: text")."""
    from bench.recall_speed import DATA, load

    out: dict[str, set[str]] = {}
    for conv in load(DATA)["conversations"]:
        said = {
            t["id"]: f"{t['speaker']}: {t['text']}" for s in conv["sessions"] for t in s["turns"]
        }
        for q in conv["questions"]:
            out.setdefault(q["question"], set()).update(said[e] for e in q["evidence"] if e in said)
    return out


def _r10(hits: dict[str, list[str]], evidence: dict[str, set[str]]) -> float:
    """R@10 by text: the share of a question's evidence turns among its hits (any copy)."""
    scored = [len(evidence[q] & set(h)) / len(evidence[q]) for q, h in hits.items() if evidence[q]]
    return round(100 * sum(scored) / max(1, len(scored)), 1)


def _exact_too(c: Any, qs: list[str], hits: dict[str, list[str]]) -> dict[str, float]:
    """The same questions with the lexical search exact at any size (the gateway runs in this
    process): its p50, how many answers agree with the two-step search's, and R@10 of each
    against the questions' evidence. Compared by text without the lap number: ``turns`` stores
    copies of one conversation, equal but for it."""
    from stores import text_analysis

    kept = text_analysis.LEXICAL_APPROX_MIN
    text_analysis.LEXICAL_APPROX_MIN = 1 << 62
    exact: dict[str, list[str]] = {}
    try:
        times, top1, top10 = [], 0, 0.0
        for q in qs:
            t = time.perf_counter()
            r = c.recall(q, namespaces=["user/speed"], top_k=10)
            times.append(time.perf_counter() - t)
            exact[q] = want = [_lap_free(h.content) for h in r.hits]
            top1 += want[:1] == hits[q][:1]
            top10 += len(set(want) & set(hits[q])) / max(1, len(set(want)))
    finally:
        text_analysis.LEXICAL_APPROX_MIN = kept
    evidence = _evidence()
    return {"exact_lexical_p50_ms": round(_pcts(times)[0], 1),
            "same_top1": round(top1 / len(qs), 3), "top10_overlap": round(top10 / len(qs), 3),
            "r10": _r10(hits, evidence), "r10_exact": _r10(exact, evidence)}  # fmt: skip


# -- affinity ----------------------------------------------------------------------------------


def _affinity(args: argparse.Namespace) -> None:
    """Replicas' LRU caches under round robin vs namespace affinity (simulated, same policy)."""
    rng = np.random.default_rng(3)
    sizes = np.maximum(1, rng.zipf(1.6, args.namespaces) * 20).clip(max=20_000)
    per_vector = 384 * 4 + 700  # as stores/vector_cache.py counts
    budget = args.budget_mb * 2**20
    popularity = 1.0 / np.arange(1, args.namespaces + 1) ** args.skew
    popularity /= popularity.sum()
    stream = rng.choice(args.namespaces, size=args.recalls, p=popularity)

    def run(pick: Any) -> float:
        caches: list[OrderedDict[int, int]] = [OrderedDict() for _ in range(args.replicas)]
        held = [0] * args.replicas
        hits = 0
        for i, ns in enumerate(stream.tolist()):
            r = pick(i, ns)
            cache = caches[r]
            if ns in cache:
                hits += 1
                cache.move_to_end(ns)
            else:
                cache[ns] = int(sizes[ns]) * per_vector
                held[r] += cache[ns]
                while held[r] > budget and len(cache) > 1:
                    _, b = cache.popitem(last=False)
                    held[r] -= b
        return hits / len(stream)

    def by_hash(_: int, ns: int) -> int:
        h = hashlib.blake2b(str(ns).encode(), digest_size=8).digest()
        return int.from_bytes(h, "big") % args.replicas

    rr = run(lambda i, _: i % args.replicas)
    aff = run(by_hash)
    total = int(sizes.sum())
    print(f"{args.namespaces:,} namespaces, {total:,} vectors ({total * per_vector / 2**20:,.0f} "
          f"MB), {args.replicas} replicas x {args.budget_mb} MB, {args.recalls:,} recalls, "
          f"Zipf skew {args.skew}")  # fmt: skip
    print(
        f"| routing | cache hit rate |\n|---|---|\n| round robin | {rr:.2f} |\n"
        f"| namespace affinity (hash of namespace -> replica) | {aff:.2f} |"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="part", required=True)
    a = sub.add_parser("ann")
    a.add_argument("--sizes", default="10000,100000")
    a.add_argument("--queries", type=int, default=200)
    a.add_argument("--noise", type=float, default=0.75)
    a.add_argument("--mix", type=float, default=0.0)
    for name in ("startup", "_child"):
        s = sub.add_parser(name)
        s.add_argument("--memories", type=int, default=100_000)
        s.add_argument("--namespaces", type=int, default=1000)
        s.add_argument("--global-size", type=int, default=2000)
        s.add_argument("--sample", type=int, default=200)
        s.add_argument("--budget-mb", type=int, default=2048)
        s.add_argument("--modes", default="full,on_demand")
        s.add_argument("--neo4j-uri", default="")
        s.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
        s.add_argument("--replicas", type=int, default=2)
        s.add_argument("--start-timeout", type=float, default=3600)
        s.add_argument("--data-dir", default=str(Path(tempfile.gettempdir()) / "memgate-vs"))
        s.add_argument("--mode", default="full")
        s.add_argument("--db", default="")
    o = sub.add_parser("onens")
    o.add_argument("--sizes", default="10000,1000000")
    o.add_argument("--queries", type=int, default=200)
    o.add_argument("--stages", action="store_true", help="gateway in a thread, each stage's p50")
    o.add_argument("--keep", default="", help="keep (and re-use) the written stores under DIR")
    o.add_argument(
        "--exact-too",
        action="store_true",
        help="with --stages: the same questions with the lexical search exact (p50, agreement)",
    )
    f = sub.add_parser("affinity")
    f.add_argument("--namespaces", type=int, default=20_000)
    f.add_argument("--recalls", type=int, default=200_000)
    f.add_argument("--replicas", type=int, default=3)
    f.add_argument("--budget-mb", type=int, default=256)
    f.add_argument("--skew", type=float, default=1.0)
    args = p.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.part == "ann":
        asyncio.run(_ann(args))
    elif args.part == "startup":
        asyncio.run(_startup(args))
    elif args.part == "_child":
        asyncio.run(_child(args))
    elif args.part == "onens":
        asyncio.run(_onens(args))
    else:
        _affinity(args)


if __name__ == "__main__":
    main()
