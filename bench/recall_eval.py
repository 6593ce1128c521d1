"""Long-dialogue recall benchmark (longdialog-v1) through the public client.

    python -m bench.recall_eval --backend embedded --embedder minilm
    python -m bench.recall_eval --backend real --conversations 4
    python -m bench.recall_eval --backend both --questions-per-category 15 --json out.json
    python -m bench.recall_eval --backend embedded,dense    # beside an in-process dense library

Starts a fresh gateway on 127.0.0.1 (port 0, a temporary data directory; ``memgate serve`` as its
own process unless ``--gateway thread``): embedded stores, or with
``--backend real`` Redis + Neo4j at ``MEMGATE_REDIS_URL`` / ``MEMGATE_NEO4J_URI`` (default
redis://127.0.0.1:6390/0 and bolt://127.0.0.1:7690), always in fresh namespaces (nothing is wiped).

Writes every turn as an episodic memory, the way an agent that logs a conversation would:
namespace ``user/ld-<run>-<conversation>``, ``session_id`` = the conversation's session,
``event_time`` = the session's date and time + 30 s per turn (keeps the order), content
``"<Speaker>: <text>"`` (so a question that names a person can match its turns; ``--content
plain`` writes the text alone), metadata ``speaker`` and ``turn_id``; ``BatchWrite`` with
``wait=true`` in batches of ``--batch``. Then asks every selected question with
``recall(question, namespaces=[ns], top_k=max k)`` and maps the hits back to turn ids through the
write ids that ``BatchWrite`` returned.

R@k = the fraction of a question's evidence turns among its top k hits, averaged over the
questions that have evidence. Adversarial questions about something never said have none: they
are counted (``no-evidence``) but have no recall target. Also reported: recall latency p50/p95
(client side) and the applied write rate (turns / wall time of the waiting batch writes).

Two references run without a gateway: ``bm25`` (word overlap: BM25 over each turn and the one
before) and ``dense`` (an in-process dense memory library: the same embedder over each turn as
written, an exact inner-product index per conversation, each question embedded and searched in
this process). Run beside a gateway backend (``--backend embedded,dense``), the gateway's recall
p50 is also given as a multiple of the in-process library's, on the same questions: the measure
of issue 7's held-out bar (at most 1.5x).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.dialogues.generate import CATEGORIES, load
from bench.serving import gateway_process
from gateway.client import GatewayClient
from gateway.core.model.provenance import turns_of
from gateway.embedding.factory import EMBEDDER_KINDS
from gateway.rpc.server import serve_in_thread
from gateway.settings import DEFAULT_EMBEDDER, Settings

DATA = Path(__file__).resolve().parent / "dialogues" / "longdialog-v1.json"
DEFAULT_REDIS = "redis://127.0.0.1:6390/0"
DEFAULT_NEO4J = "bolt://127.0.0.1:7690"
TURN_SPACING = timedelta(seconds=30)

Conv = dict[str, Any]


def select(
    data: dict[str, Any],
    conversations: int = 0,
    per_category: int = 0,
    seed: int = 1,
    ids: Sequence[str] = (),
) -> list[Conv]:
    """The first ``conversations`` conversations (or those named in ``ids``); with
    ``per_category``, that many questions of each category per conversation (a seeded sample,
    the same every run)."""
    if ids:
        convs = [c for c in data["conversations"] if c["id"] in ids]
    else:
        convs = data["conversations"][: conversations or None]
    if not per_category:
        return convs
    out = []
    for conv in convs:
        rng = random.Random(f"{seed}-{conv['id']}")
        by_cat: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for q in conv["questions"]:
            by_cat[q["category"]].append(q)
        chosen = []
        for cat in CATEGORIES:
            qs = by_cat[cat]
            chosen += rng.sample(qs, min(per_category, len(qs)))
        chosen.sort(key=lambda q: q["id"])
        out.append({**conv, "questions": chosen})
    return out


def turn_items(conv: Conv, namespace: str, content: str = "speaker") -> list[dict[str, Any]]:
    """One episodic write per turn."""
    items = []
    for session in conv["sessions"]:
        start = datetime.fromisoformat(session["date_time"]).replace(tzinfo=UTC)
        for i, turn in enumerate(session["turns"]):
            text = f"{turn['speaker']}: {turn['text']}" if content == "speaker" else turn["text"]
            items.append(
                dict(
                    namespace=namespace,
                    layer="episodic",
                    content=text,
                    session_id=f"{conv['id']}-s{session['session']}",
                    event_time=start + i * TURN_SPACING,
                    metadata={"speaker": turn["speaker"], "turn_id": turn["id"]},
                    idempotency_key=f"{namespace}/{turn['id']}",
                )
            )
    return items


@dataclass
class Run:
    """Raw results of one backend run."""

    backend: str
    ks: list[int]
    turns: int = 0
    write_s: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    skipped_writes: int = 0
    path: str = "batch"
    append_ms: list[float] = field(default_factory=list)
    end_session_ms: list[float] = field(default_factory=list)


def load_conversation(
    client: GatewayClient,
    conv: Conv,
    namespace: str,
    batch: int,
    content: str,
    say: Callable[[str], None],
    done_before: int = 0,
) -> tuple[dict[str, str], float]:
    """Write the turns; returns (memory id -> turn id, seconds spent)."""
    items = turn_items(conv, namespace, content)
    ids: dict[str, str] = {}
    t0 = time.perf_counter()
    for start in range(0, len(items), batch):
        chunk = items[start : start + batch]
        written = client.batch_write(chunk, wait=True)
        for item, mid in zip(chunk, written, strict=True):
            if mid:
                ids[mid] = item["metadata"]["turn_id"]
        total = done_before + start + len(chunk)
        if total // 500 != (total - len(chunk)) // 500:
            say(f"  {total} turns written ({conv['id']})")
    return ids, time.perf_counter() - t0


def say_conversation(
    client: GatewayClient,
    conv: Conv,
    namespace: str,
    run: Run,
    say: Callable[[str], None],
    per_call: int = 1,
) -> tuple[dict[str, str], float]:
    """The conversation as an agent lives it: ``append_turn`` per turn (its time, the speaker;
    the first speaker is the ``user``, the other the ``assistant``), ``end_session(wait=True)``
    per session. Returns (gateway turn id -> turn id, seconds spent); the latencies go to
    ``run``. ``per_call`` > 1: as a replay does it, ``append_turns`` with that many turns a call
    (``append_ms`` then times a call)."""
    ids: dict[str, str] = {}
    user = conv["speakers"][0]
    t0 = time.perf_counter()
    done = 0
    for session in conv["sessions"]:
        sid = f"{conv['id']}-s{session['session']}"
        start = datetime.fromisoformat(session["date_time"]).replace(tzinfo=UTC)
        if per_call > 1:  # a replay: AppendTurns, ``per_call`` turns a call
            said = [
                dict(
                    namespace=namespace, session_id=sid, content=turn["text"],
                    role="user" if turn["speaker"] == user else "assistant",
                    at=start + i * TURN_SPACING, metadata={"speaker": turn["speaker"]},
                    idempotency_key=f"{namespace}/{turn['id']}",
                )
                for i, turn in enumerate(session["turns"])
            ]  # fmt: skip
            for k in range(0, len(said), per_call):
                t1 = time.perf_counter()
                results = client.append_turns(said[k : k + per_call])
                run.append_ms.append((time.perf_counter() - t1) * 1000)
                for r, turn in zip(results, session["turns"][k : k + per_call], strict=True):
                    if r.id:
                        ids[r.id] = turn["id"]
        for i, turn in enumerate(session["turns"] if per_call <= 1 else ()):
            t1 = time.perf_counter()
            r = client.append_turn(
                namespace,
                sid,
                role="user" if turn["speaker"] == user else "assistant",
                content=turn["text"],
                at=start + i * TURN_SPACING,
                metadata={"speaker": turn["speaker"]},
                idempotency_key=f"{namespace}/{turn['id']}",
            )
            run.append_ms.append((time.perf_counter() - t1) * 1000)
            if r.id:
                ids[r.id] = turn["id"]
        t1 = time.perf_counter()
        client.end_session(namespace, sid, wait=True)
        run.end_session_ms.append((time.perf_counter() - t1) * 1000)
        before, done = done, done + len(session["turns"])
        if done // 200 != before // 200:
            say(f"  {done} turns said ({conv['id']})")
    return ids, time.perf_counter() - t0


def ask(client: GatewayClient, conv: Conv, namespace: str, ids: dict[str, str], run: Run) -> None:
    """Ask every question; a hit answers for every turn it points at: the turn written, a kept
    turn, an observation or a fact formed from turns (``provenance.turns_of``)."""
    top = max(run.ks)
    for q in conv["questions"]:
        t0 = time.perf_counter()
        recall = client.recall(q["question"], namespaces=[namespace], top_k=top)
        run.latencies_ms.append((time.perf_counter() - t0) * 1000)
        got = [
            [ids[h.id]]
            if h.id in ids
            else [ids[t] for t in sorted(turns_of(h.metadata)) if t in ids]
            or [h.metadata.get("turn_id", "")]
            for h in recall.hits
        ]
        _score(run, conv, q, got)


def _score(run: Run, conv: Conv, q: dict[str, Any], got: Sequence[str | Sequence[str]]) -> None:
    """``got``: per hit, best first, the turn id it found (or the turn ids)."""
    evidence = q["evidence"]
    hits = [[g] if isinstance(g, str) else list(g) for g in got]
    ranks = {e: next((n + 1 for n, h in enumerate(hits) if e in h), None) for e in evidence}
    run.results.append(
        {
            "conversation": conv["id"],
            "id": q["id"],
            "category": q["category"],
            "kind": q["kind"],
            "question": q["question"],
            "evidence": evidence,
            "side": side(conv, evidence),
            "ranks": ranks,
            "hits": hits,
            "recall": {
                k: (sum(1 for r in ranks.values() if r and r <= k) / len(evidence)) for k in run.ks
            }
            if evidence
            else None,
        }
    )


def side(conv: Conv, evidence: Sequence[str]) -> str:
    """Whose words a question's evidence is: the ``user`` (the first speaker, the user side of
    the conversation path), the ``assistant`` (the other), or ``both``."""
    speaker = {t["id"]: t["speaker"] for s in conv["sessions"] for t in s["turns"]}
    sides = {"user" if speaker.get(e) == conv["speakers"][0] else "assistant" for e in evidence}
    return sides.pop() if len(sides) == 1 else ("both" if sides else "")


def evaluate(
    address: str,
    convs: Sequence[Conv],
    ks: Sequence[int] = (1, 5, 10, 25),
    backend: str = "",
    batch: int = 100,
    content: str = "speaker",
    run_id: str = "",
    say: Callable[[str], None] = print,
    path: str = "batch",
    per_call: int = 1,
) -> Run:
    """Load every conversation into its own fresh namespace (``path``: ``batch``, every turn
    written as an episodic memory; ``conversation``, said with ``append_turn`` and
    ``end_session``), then ask its questions."""
    run = Run(backend=backend, ks=sorted(ks), path=path)
    run_id = run_id or uuid.uuid4().hex[:8]
    with GatewayClient(address, agent_id="master", timeout=120) as client:
        for conv in convs:
            ns = f"user/ld-{run_id}-{conv['id']}"
            if path == "conversation":
                ids, seconds = say_conversation(client, conv, ns, run, say, per_call)
            else:
                ids, seconds = load_conversation(client, conv, ns, batch, content, say, run.turns)
            n = sum(len(s["turns"]) for s in conv["sessions"])
            run.turns += n
            run.skipped_writes += n - len(ids)
            run.write_s += seconds
            ask(client, conv, ns, ids, run)
            say(f"  {conv['id']}: {n} turns in {seconds:.1f}s, {len(conv['questions'])} questions")
    return run


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def figures(run: Run) -> dict[str, Any]:
    """Per category and overall: questions, R@k; latency and write rate."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in run.results:
        groups[r["category"]].append(r)
        groups["overall"].append(r)
    table = {}
    seen = [c for c in dict.fromkeys(r["category"] for r in run.results) if c not in CATEGORIES]
    for cat in [*CATEGORIES, *seen, "overall"]:
        rs = groups.get(cat, [])
        if not rs and cat != "overall":
            continue
        scored = [r for r in rs if r["recall"] is not None]
        row: dict[str, Any] = {"questions": len(rs), "no_evidence": len(rs) - len(scored)}
        for k in run.ks:
            row[f"R@{k}"] = statistics.fmean(r["recall"][k] for r in scored) if scored else None
        table[cat] = row
    sides = {}
    for name in ("user", "assistant", "both"):
        scored = [r for r in run.results if r["recall"] is not None and r.get("side") == name]
        if scored:
            sides[name] = {"questions": len(scored)} | {
                f"R@{k}": statistics.fmean(r["recall"][k] for r in scored) for k in run.ks
            }
    said = {}
    if run.append_ms:
        said = {
            "append_turn_p50_ms": percentile(run.append_ms, 50),
            "append_turn_p95_ms": percentile(run.append_ms, 95),
            "end_session_p50_ms": percentile(run.end_session_ms, 50),
            "end_session_p95_ms": percentile(run.end_session_ms, 95),
        }
    return {
        "backend": run.backend,
        "path": run.path,
        "sides": sides,
        **said,
        "turns": run.turns,
        "skipped_writes": run.skipped_writes,
        "writes_per_s": run.turns / run.write_s if run.write_s else 0.0,
        "recall_p50_ms": percentile(run.latencies_ms, 50),
        "recall_p95_ms": percentile(run.latencies_ms, 95),
        "categories": table,
    }


def render(fig: dict[str, Any], ks: Sequence[int]) -> str:
    head = f"{'category':<12} {'n':>5} {'no-ev':>5} " + " ".join(f"{'R@' + str(k):>6}" for k in ks)
    lines = [head, "-" * len(head)]
    for cat, row in fig["categories"].items():
        cells = " ".join(
            f"{100 * row[f'R@{k}']:6.1f}" if row[f"R@{k}"] is not None else f"{'-':>6}" for k in ks
        )
        lines.append(f"{cat:<12} {row['questions']:>5} {row['no_evidence']:>5} {cells}")
    for name, row in fig.get("sides", {}).items():
        cells = " ".join(f"{100 * row[f'R@{k}']:6.1f}" for k in ks)
        lines.append(f"{'  ' + name + ' said':<12} {row['questions']:>5} {'':>5} {cells}")
    tail = f"recall latency p50 {fig['recall_p50_ms']:.1f} ms, p95 {fig['recall_p95_ms']:.1f} ms"
    if fig.get("append_turn_p50_ms") is not None:
        tail += (
            f"; append_turn p50 {fig['append_turn_p50_ms']:.1f} / p95 "
            f"{fig['append_turn_p95_ms']:.1f} ms, end_session p50 {fig['end_session_p50_ms']:.0f}"
            f" / p95 {fig['end_session_p95_ms']:.0f} ms; {fig['turns']} turns said and kept at "
            f"{fig['writes_per_s']:.0f} turns/s"
        )
    elif fig["writes_per_s"]:
        tail += f"; {fig['turns']} turns written at {fig['writes_per_s']:.0f} writes/s applied"
    if fig["skipped_writes"]:
        tail += f" ({fig['skipped_writes']} skipped)"
    lines.append(tail)
    return "\n".join(lines)


def run_bm25(convs: Sequence[Conv], ks: Sequence[int]) -> Run:
    """The lexical reference (no gateway): BM25 over each turn plus the previous turn."""
    from bench.dialogues.bm25 import index_conversation

    run = Run(backend="bm25", ks=sorted(ks))
    for conv in convs:
        index, turn_ids = index_conversation(conv)
        run.turns += len(turn_ids)
        for q in conv["questions"]:
            t0 = time.perf_counter()
            got = [turn_ids[i] for i in index.top(q["question"], max(ks))]
            run.latencies_ms.append((time.perf_counter() - t0) * 1000)
            _score(run, conv, q, got)
    return run


def run_dense(convs: Sequence[Conv], ks: Sequence[int], embedder_kind: str, content: str) -> Run:
    """The in-process dense reference (no gateway): each turn embedded as the gateway is given
    it, an exact inner-product index per conversation (one FAISS thread), each question embedded
    and searched here; its latency is that of a dense memory library called in-process."""
    import faiss
    import numpy as np

    from gateway.embedding import build_embedder

    embedder = build_embedder(embedder_kind, cache_size=0)
    faiss.omp_set_num_threads(1)
    run = Run(backend="dense", ks=sorted(ks))
    for conv in convs:
        items = turn_items(conv, "", content)
        turn_ids = [item["metadata"]["turn_id"] for item in items]
        index = faiss.IndexFlatIP(embedder.dim)
        index.add(np.asarray(embedder.embed([item["content"] for item in items]), np.float32))
        run.turns += len(turn_ids)
        for q in conv["questions"]:
            t0 = time.perf_counter()
            # a question as the embedder embeds queries (e5: the ``query: `` prefix)
            ask = getattr(embedder, "embed_queries", embedder.embed)
            vector = np.asarray(ask([q["question"]]), np.float32)
            _, found = index.search(vector, max(ks))
            run.latencies_ms.append((time.perf_counter() - t0) * 1000)
            _score(run, conv, q, [turn_ids[i] for i in found[0] if i >= 0])
    return run


#: --backend values: gateway backends, and references that run without a gateway
BACKENDS = ("embedded", "real", "bm25", "dense")
REFERENCES = ("bm25", "dense")


def backends_of(value: str) -> list[str]:
    """``--backend``: names joined by commas ("both" = embedded,real), each run once, in order."""
    names: list[str] = []
    for name in value.split(","):
        name = name.strip()
        for one in ("embedded", "real") if name == "both" else (name,):
            if one not in BACKENDS:
                raise argparse.ArgumentTypeError(
                    f"unknown backend {one!r}: choose from {', '.join(BACKENDS)} or both"
                )
            if one not in names:
                names.append(one)
    return names


def against_dense(out: dict[str, Any]) -> list[str]:
    """Each gateway backend's recall p50 as a multiple of the in-process dense library's."""
    dense = out.get("dense", {}).get("recall_p50_ms")
    if not dense:
        return []
    lines = []
    for name, fig in out.items():
        if name.split("/")[0] in BACKENDS and name not in REFERENCES:
            fig["recall_p50_vs_dense"] = fig["recall_p50_ms"] / dense
            lines.append(
                f"recall p50 {name}: {fig['recall_p50_ms']:.1f} ms = "
                f"{fig['recall_p50_vs_dense']:.2f}x the in-process dense library ({dense:.1f} ms)"
            )
    return lines


def backend_settings(backend: str, data_dir: Path, embedder: str) -> Settings:
    real = backend == "real"
    return Settings(
        host="127.0.0.1",
        port=0,
        data_dir=data_dir,
        embedder=embedder,
        redis_url=os.environ.get("MEMGATE_REDIS_URL", DEFAULT_REDIS) if real else "",
        neo4j_uri=os.environ.get("MEMGATE_NEO4J_URI", DEFAULT_NEO4J) if real else "",
        recall_cache_ttl_s=0.0,
        wait_timeout_s=120.0,
        working_slow_ms=0.0,
        graph_slow_ms=0.0,
    )


def run_backend(
    backend: str, convs: Sequence[Conv], args: argparse.Namespace, path: str = "batch"
) -> Run:
    with tempfile.TemporaryDirectory(prefix="memgate-recall-") as tmp:
        settings = backend_settings(backend, Path(tmp), args.embedder)
        serving = serve_in_thread if args.gateway == "thread" else gateway_process
        with serving(settings) as address:
            print(
                f"{backend}: gateway on {address} ({args.gateway}), embedder {args.embedder}",
                flush=True,
            )
            return evaluate(
                address,
                convs,
                args.ks,
                backend=backend,
                batch=args.batch,
                content=args.content,
                say=lambda m: print(m, flush=True),
                path=path,
                per_call=getattr(args, "turns_per_call", 1),
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--backend",
        type=backends_of,
        default="embedded",
        help="embedded, real, both (embedded,real), or the references without a gateway: bm25 "
        "(lexical), dense (an in-process dense library); several joined by commas",
    )
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--conversations", type=int, default=0, help="first N (default: all)")
    ap.add_argument("--questions-per-category", type=int, default=0, help="default: all")
    ap.add_argument(
        "--embedder",
        choices=list(EMBEDDER_KINDS),
        default=DEFAULT_EMBEDDER,
    )
    ap.add_argument("--k", default="1,5,10,25")
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument(
        "--turns-per-call",
        type=int,
        default=1,
        help="conversation path: 1 = append_turn per turn (an agent); N = append_turns with N "
        "turns a call (a replay)",
    )
    ap.add_argument(
        "--path",
        choices=["batch", "conversation", "both"],
        default="batch",
        help="how a gateway is given the conversation: batch (every turn written as an episodic "
        "memory with BatchWrite), conversation (append_turn per turn, end_session per session), "
        "or both, side by side",
    )
    ap.add_argument("--content", choices=["speaker", "plain"], default="speaker")
    ap.add_argument("--json", default="", help="write the figures here")
    ap.add_argument("--dump", default="", help="write every question's hits and ranks here")
    ap.add_argument(
        "--gateway",
        choices=["process", "thread"],
        default="process",
        help="process: `memgate serve` as its own process, as users run it (default); thread: "
        "in a thread of this process",
    )
    args = ap.parse_args(argv)
    args.ks = sorted(int(k) for k in args.k.split(","))
    convs = select(load(args.data), args.conversations, args.questions_per_category)
    nq = sum(len(c["questions"]) for c in convs)
    nt = sum(len(s["turns"]) for c in convs for s in c["sessions"])
    print(f"longdialog: {len(convs)} conversations, {nt} turns, {nq} questions", flush=True)
    out: dict[str, Any] = {"command": " ".join(["python -m bench.recall_eval", *sys.argv[1:]])}
    dump: list[dict[str, Any]] = []
    paths = ["batch", "conversation"] if args.path == "both" else [args.path]
    for backend in args.backend:
        for path in paths if backend not in REFERENCES else ["batch"]:
            if backend == "bm25":
                run = run_bm25(convs, args.ks)
            elif backend == "dense":
                run = run_dense(convs, args.ks, args.embedder, args.content)
            else:
                run = run_backend(backend, convs, args, path)
            name = backend if path == "batch" else f"{backend}/{path}"
            fig = figures(run)
            out[name] = fig
            dump += [{"backend": name, **r} for r in run.results]
            how = "turn + previous turn" if backend == "bm25" else args.embedder
            print(f"\n== {name} ({how}, {len(convs)} conversations)")
            print(render(fig, args.ks), flush=True)
    for line in against_dense(out):
        print(line)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    if args.dump:
        Path(args.dump).write_text(json.dumps(dump, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
