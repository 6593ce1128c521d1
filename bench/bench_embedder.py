"""Embedder throughput and latency: numpy reference vs ONNX Runtime fp32 vs int8, in one run.

    python -m bench.bench_embedder [--turns 300] [--threads 0] [--json bench/results/embedder.json]

On ~300 seeded, synthetic chat turns of 25-50 words (dialogue length, ~35-70 tokens) it reports
for each variant: texts/s batched (calls of 32 and 64 turns, each padded to its longest turn),
texts/s one turn per call, single short-query latency p50/p95, the ratio to numpy, and the
minimum cosine to the golden vectors (tests/data/minilm_golden).  No cache in front: the model
alone is measured.  Keep runs short on a shared machine; the figures are noisy.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from gateway.embedding import MiniLMEmbedder, OnnxMiniLMEmbedder

GOLDEN_DIR = Path(__file__).resolve().parents[1] / "tests" / "data" / "minilm_golden"

_OPENERS = [
    "Hey, quick question:",
    "Thanks for the summary earlier.",
    "Okay so",
    "Following up on yesterday,",
    "Sorry to bother you again, but",
    "Just to be clear,",
    "I checked with the team and",
    "Before I forget,",
]
_SUBJECTS = [
    "the refund for order ORD-2024-7891",
    "our trip to Kyoto next spring",
    "the database migration on the staging cluster",
    "my daughter's piano lessons",
    "the onboarding flow redesign",
    "the quarterly budget spreadsheet",
    "the hotel booking near the station",
    "the flaky integration test in the payments service",
    "the vegetarian options for Friday's dinner",
    "the contract renewal with the cloud provider",
]
_VERBS = [
    "still seems to be stuck",
    "needs a decision by Thursday",
    "was moved to next week",
    "keeps failing with a timeout",
    "looks much better than the last version",
    "should include the new pricing",
    "has to be approved by finance first",
    "is more expensive than we planned",
]
_DETAILS = [
    "and I would rather not pay the cancellation fee if we can avoid it",
    "because the health check kills the pod before it finishes",
    "so please remind me on Monday morning before the standup",
    "and my partner is allergic to peanuts, so keep that in mind",
    "which means we should raise the limit to at least sixty seconds",
    "but the design team disagrees with engineering about the timeline",
    "and I think the second option is simpler to explain to customers",
    "so could you draft a short reply that I can send to the client",
    "and last time you suggested splitting it into two smaller tasks",
    "because nobody wrote down what we agreed in the meeting",
]
_TAILS = [
    "What do you think?",
    "Can you check what we said about this last week?",
    "Please keep the answer short, no long lists.",
    "Let me know if you need the exact numbers.",
    "Does that match what you remember?",
    "",
]
_QUERY_TOPICS = [
    "food allergies",
    "the Kyoto hotel",
    "database timeouts",
    "piano lesson schedule",
    "refund status",
    "budget approval",
    "reply style preferences",
    "contract renewal",
]


def make_turns(n: int, seed: int = 7) -> list[str]:
    """n chat turns of 25-50 words, deterministic for a seed."""
    rng = random.Random(seed)
    turns = []
    while len(turns) < n:
        parts = [
            rng.choice(_OPENERS),
            rng.choice(_SUBJECTS),
            rng.choice(_VERBS),
            rng.choice(_DETAILS) + ".",
            rng.choice(_TAILS),
        ]
        if rng.random() < 0.5:
            parts.insert(4, "Also, " + rng.choice(_SUBJECTS) + " " + rng.choice(_VERBS) + ".")
        text = " ".join(p for p in parts if p)
        if 25 <= len(text.split()) <= 50:
            turns.append(text)
    return turns


def make_queries(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [
        f"what did the user say about {rng.choice(_QUERY_TOPICS)} {rng.choice(['', 'recently', 'last week'])}".strip()
        for _ in range(n)
    ]


def _rate(fn: Callable[[], object], texts: int, min_seconds: float = 0.5) -> float:
    """texts/s of fn (which embeds ``texts`` texts), repeated until min_seconds have passed."""
    fn()  # warm-up
    done = 0
    start = time.perf_counter()
    while True:
        fn()
        done += texts
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return done / elapsed


def _golden_min_cosine(embedder: object) -> float:
    texts = json.loads((GOLDEN_DIR / "texts.json").read_text(encoding="utf-8"))["texts"]
    expected = np.load(GOLDEN_DIR / "vectors.npy").astype(np.float64)
    got = embedder.embed(texts).astype(np.float64)  # type: ignore[attr-defined]
    cos = (got * expected).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(expected, axis=1)
    return float(cos.min())


def measure(
    name: str,
    make: Callable[[int], object],
    turns: list[str],
    queries: list[str],
    golden: bool = True,
) -> dict:
    row: dict[str, float | str] = {"variant": name}
    for bs in (32, 64):
        emb = make(bs)
        chunks = [turns[i : i + bs] for i in range(0, len(turns), bs)]

        def run(emb: object = emb, chunks: list[list[str]] = chunks) -> None:
            for chunk in chunks:
                emb.embed(chunk)  # type: ignore[attr-defined]

        row[f"batched_{bs}"] = _rate(run, len(turns))
    emb = make(32)
    singles = turns[:40]
    row["single"] = _rate(lambda: [emb.embed([t]) for t in singles], len(singles))  # type: ignore[attr-defined]
    for q in queries[:5]:
        emb.embed([q])  # type: ignore[attr-defined]
    lat = []
    for q in queries:
        t0 = time.perf_counter()
        emb.embed([q])  # type: ignore[attr-defined]
        lat.append((time.perf_counter() - t0) * 1000)
    lat.sort()
    row["query_p50_ms"] = statistics.median(lat)
    row["query_p95_ms"] = lat[int(0.95 * (len(lat) - 1))]
    row["golden_min_cos"] = _golden_min_cosine(emb) if golden else float("nan")
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=300)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--threads", type=int, default=0, help="ONNX Runtime threads (0 = all cores)")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    ap.add_argument(
        "--multilingual",
        action="store_true",
        help="also the multilingual kinds (use-multilingual, e5-multilingual; no golden vectors)",
    )
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # quantize_dynamic's pre-processing hint

    turns = make_turns(args.turns)
    queries = make_queries(args.queries)
    ref = MiniLMEmbedder()
    lengths = ref.token_lengths(turns)
    qlen = ref.token_lengths(queries)
    print(
        f"{len(turns)} turns, {min(lengths)}-{max(lengths)} tokens (median "
        f"{statistics.median(lengths):.0f}); {len(queries)} queries, median "
        f"{statistics.median(qlen):.0f} tokens; ONNX threads {args.threads or 'all'}"
    )

    t0 = time.perf_counter()
    fp32 = OnnxMiniLMEmbedder(variant="fp32", threads=args.threads)
    t1 = time.perf_counter()
    int8 = OnnxMiniLMEmbedder(variant="int8", threads=args.threads)
    t2 = time.perf_counter()
    print(f"start-up: build+load fp32 {t1 - t0:.2f} s, int8 (incl. quantisation) {t2 - t1:.2f} s")

    def onnx_like(base: OnnxMiniLMEmbedder, batch: bool) -> Callable[[int], object]:
        def make(bs: int) -> OnnxMiniLMEmbedder:
            emb = OnnxMiniLMEmbedder.__new__(OnnxMiniLMEmbedder)
            emb.__dict__.update(base.__dict__)  # shares the session
            emb.batch_size = bs if batch else base.batch_size
            return emb

        return make

    variants: list[tuple[str, Callable[[int], object]]] = [
        ("numpy", lambda bs: MiniLMEmbedder(batch_size=bs)),
        ("onnx fp32", onnx_like(fp32, batch=True)),
        ("onnx int8", onnx_like(int8, batch=False)),
        ("onnx int8, batched*", onnx_like(int8, batch=True)),
    ]
    rows = [measure(name, make, turns, queries) for name, make in variants]
    if args.multilingual:
        from gateway.embedding import build_embedder

        for kind in ("use-multilingual", "e5-multilingual"):
            one = build_embedder(kind, cache_size=0, threads=args.threads)
            rows.append(measure(kind, lambda bs, one=one: one, turns, queries, golden=False))

    base = rows[0]
    header = (
        f"| {'variant':<20} | {'batch 32 /s':>11} | {'batch 64 /s':>11} | {'1 per call /s':>13} "
        f"| {'query p50':>9} | {'query p95':>9} | {'x numpy (b32 / 1 / p50)':>24} | {'golden min cos':>14} |"
    )
    print()
    print(header)
    print("|" + "|".join("-" * len(c) for c in header.split("|")[1:-1]) + "|")
    for r in rows:
        ratios = (
            f"{r['batched_32'] / base['batched_32']:.2f} / {r['single'] / base['single']:.2f} / "
            f"{base['query_p50_ms'] / r['query_p50_ms']:.2f}"
        )
        print(
            f"| {r['variant']:<20} | {r['batched_32']:>11.0f} | {r['batched_64']:>11.0f} "
            f"| {r['single']:>13.0f} | {r['query_p50_ms']:>6.2f} ms | {r['query_p95_ms']:>6.2f} ms "
            f"| {ratios:>24} | {r['golden_min_cos']:>14.5f} |"
        )
    print(
        "\n* int8 embeds one text per ONNX run by default (dynamic quantisation ranges are per "
        "batch, so batching makes a vector depend on its batch-mates); the batched* row forces "
        "batches of 32/64 for comparison."
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
