"""Trains the update judge (``gateway/core/truth/judge.py``) on hand-labelled pairs and ships it
beside the embedder's other assets (``gateway/embedding/judge_<embedder>.npz``).

    python -m bench.judge_train [--embedder e5-multilingual] [--folds 5] [--write]

The pairs (``bench/truth/judge-pairs-{en,zh}.json``, and ``-2`` of each: hard cases — another
thing of the same kind, a relative with the same attribute, updates said only by implication)
were written by helpers who never read the slot rules, the blind set or the dev sets: an older and a newer statement
(a stored note or something the user said), labelled update / restatement / compatible /
other_subject / unrelated. The head learns update against the rest.

Reported per fold and language: precision and recall of "update" at the chosen threshold, and the
share of each other label taken for an update (a false update reorders two true statements).
The L2 strength is chosen by cross-validation, the threshold for precision ``--precision`` on the
held-out folds unless ``--threshold`` sets it; ``--write`` then trains on every pair and writes
the head. The shipped head: ``--query --l2 0.0003 --threshold 0.55 --veto 0.35`` (the threshold and the veto chosen end to
end on ``bench/truth/dev-v2.json``: supersede recall against look-alikes answered,
docs/BENCHMARKS-HISTORY.md "An update judge").
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from gateway.core.truth.judge import features

HERE = Path(__file__).resolve().parent
PAIRS = sorted((HERE / "truth").glob("judge-pairs-*.json"))
ASSETS = HERE.parent / "gateway" / "embedding"


def load(paths: list[Path]) -> list[dict[str, Any]]:
    pairs = []
    for p in paths:
        if p.exists():
            pairs += json.loads(p.read_text())["pairs"]
    return pairs


def embed(embedder_kind: str, texts: list[str], queries: bool = False) -> np.ndarray:
    from gateway.core.recall.query_text import dense_text
    from gateway.embedding import build_embedder

    emb = build_embedder(embedder_kind, cache_size=0)
    run = getattr(emb, "embed_queries", emb.embed) if queries else emb.embed
    out = []
    for i in range(0, len(texts), 64):
        chunk = texts[i : i + 64]
        out.append(run([dense_text(t) for t in chunk] if queries else chunk))
        print(f"  embedded {min(i + 64, len(texts))}/{len(texts)}", end="\r", flush=True)
    print()
    return np.vstack(out)


def fit(x: np.ndarray, y: np.ndarray, l2: float, iters: int = 1500) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by full-batch gradient descent with Adam (class
    weights balance update against the rest)."""
    n, d = x.shape
    pos = y.mean()
    sw = np.where(y == 1, 0.5 / pos, 0.5 / (1 - pos)).astype(np.float32)
    w = np.zeros(d, dtype=np.float32)
    b = 0.0
    m_w, v_w, m_b, v_b = np.zeros_like(w), np.zeros_like(w), 0.0, 0.0
    lr, b1, b2, eps = 0.05, 0.9, 0.999, 1e-8
    for t in range(1, iters + 1):
        p = 1 / (1 + np.exp(-np.clip(x @ w + b, -30, 30)))
        g = sw * (p - y) / n
        gw = x.T @ g + l2 * w
        gb = float(g.sum())
        m_w = b1 * m_w + (1 - b1) * gw
        v_w = b2 * v_w + (1 - b2) * gw * gw
        m_b = b1 * m_b + (1 - b1) * gb
        v_b = b2 * v_b + (1 - b2) * gb * gb
        w -= lr * (m_w / (1 - b1**t)) / (np.sqrt(v_w / (1 - b2**t)) + eps)
        b -= lr * (m_b / (1 - b1**t)) / (np.sqrt(v_b / (1 - b2**t)) + eps)
    return w, b


def prob(x: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(x @ w + b, -30, 30)))


def folds_of(pairs: list[dict[str, Any]], k: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    return rng.integers(0, k, len(pairs))


def cross_validate(x: np.ndarray, y: np.ndarray, fold: np.ndarray, l2: float) -> np.ndarray:
    """Held-out probabilities of every pair (each from the model trained without its fold)."""
    out = np.zeros(len(y), dtype=np.float32)
    for f in sorted(set(fold.tolist())):
        tr, te = fold != f, fold == f
        w, b = fit(x[tr], y[tr], l2)
        out[te] = prob(x[te], w, b)
    return out


def report(pairs: list[dict[str, Any]], p: np.ndarray, t: float) -> dict[str, Any]:
    by: dict[str, Counter[str]] = defaultdict(Counter)
    for pair, pr in zip(pairs, p.tolist(), strict=True):
        lang = pair["id"].split("-")[0]
        said = pr >= t
        by[lang][f"{pair['label']}:n"] += 1
        by[lang][f"{pair['label']}:said_update"] += said
    out: dict[str, Any] = {}
    for lang, c in sorted(by.items()):
        tp = c["update:said_update"]
        fp = sum(
            v for k, v in c.items() if k.endswith(":said_update") and k != "update:said_update"
        )
        row = {
            "precision": round(tp / max(1, tp + fp), 3),
            "recall": round(tp / max(1, c["update:n"]), 3),
        }
        for label in ("restatement", "compatible", "other_subject", "unrelated"):
            if c[f"{label}:n"]:
                row[f"false_{label}"] = f"{c[f'{label}:said_update']}/{c[f'{label}:n']}"
        out[lang] = row
    return out


def threshold_for(p: np.ndarray, y: np.ndarray, precision: float) -> float:
    """The lowest threshold whose held-out precision reaches ``precision``."""
    for t in np.arange(0.30, 0.96, 0.01):
        said = p >= t
        if said.sum() and (y[said] == 1).mean() >= precision:
            return round(float(t), 2)
    return 0.95


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--embedder", default="e5-multilingual")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--precision", type=float, default=0.9)
    ap.add_argument("--l2", default="0.0003,0.001,0.003,0.01")
    ap.add_argument(
        "--query", action="store_true", help="the head also reads the question both answer"
    )
    ap.add_argument(
        "--threshold",
        type=float,
        default=0.0,
        help="ship this threshold instead of the cross-validated one (chosen end to end on the "
        "dev sets: bench/truth/dev-v2.json, recency-dev.json)",
    )
    ap.add_argument(
        "--veto",
        type=float,
        default=0.0,
        help="below this probability the head overrules the structural rule (chosen end to end "
        "on bench/truth/dev-v2.json)",
    )
    ap.add_argument("--write", action="store_true", help="train on every pair and ship the head")
    args = ap.parse_args(argv)
    pairs = load(PAIRS)
    print(f"{len(pairs)} pairs: {dict(Counter(p['label'] for p in pairs))}")
    texts = sorted({p["older"] for p in pairs} | {p["newer"] for p in pairs})
    vec = dict(zip(texts, embed(args.embedder, texts), strict=True))
    query = None
    if args.query:
        qs = sorted({p["question"] for p in pairs})
        qvec = dict(zip(qs, embed(args.embedder, qs, queries=True), strict=True))
        query = np.stack([qvec[p["question"]] for p in pairs])
    x = features(
        np.stack([vec[p["older"]] for p in pairs]),
        np.stack([vec[p["newer"]] for p in pairs]),
        query,
    )
    y = np.array([p["label"] == "update" for p in pairs], dtype=np.float32)
    fold = folds_of(pairs, args.folds)
    best: tuple[float, float, float] | None = None
    for l2 in (float(v) for v in args.l2.split(",")):
        p = cross_validate(x, y, fold, l2)
        t = threshold_for(p, y, args.precision)
        said = p >= t
        recall = float((said & (y == 1)).sum() / y.sum())
        auc = _auc(p, y)
        print(f"l2 {l2:g}: AUC {auc:.3f}, threshold {t} → recall {recall:.3f}")
        print("   ", json.dumps(report(pairs, p, t)))
        if args.threshold:
            at = p >= args.threshold
            print(
                f"    at {args.threshold}: precision {float(y[at].mean()):.3f}, recall "
                f"{float(at[y == 1].mean()):.3f}",
                json.dumps(report(pairs, p, args.threshold)),
            )
        if best is None or recall > best[0]:
            best = (recall, l2, t)
    assert best is not None
    recall, l2, t = best
    t = args.threshold or t
    print(f"chosen: l2 {l2:g}, threshold {t} (held-out update recall {recall:.3f})")
    if args.write:
        w, b = fit(x, y, l2)
        out = ASSETS / f"judge_{args.embedder.replace('-multilingual', '')}.npz"
        np.savez(
            out,
            weights=w.astype(np.float32),
            bias=np.float32(b),
            threshold=np.float32(t),
            veto=np.float32(args.veto),
            dim=np.int32(len(next(iter(vec.values())))),
            embedder=np.array(args.embedder),
            pairs=np.int32(len(pairs)),
        )
        print(f"wrote {out.relative_to(HERE.parent)}")
    return 0


def _auc(p: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(p)
    ranks = np.empty(len(p))
    ranks[order] = np.arange(1, len(p) + 1)
    npos = y.sum()
    nneg = len(y) - npos
    return float((ranks[y == 1].sum() - npos * (npos + 1) / 2) / (npos * nneg))


if __name__ == "__main__":
    sys.exit(main())
