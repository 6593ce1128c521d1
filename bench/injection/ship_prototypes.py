"""Write the second injection screen's prototypes and threshold from the corpus's tuning half
(``gateway/embedding/injection_prototypes.npy`` and ``.json``; docs/SECURITY.md):

    python -m bench.injection.ship_prototypes [--embedder e5-multilingual|use-multilingual]

The prototypes are the tuning half's attacks, embedded with the screen's encoder
(``--embedder``: ``use-multilingual``, the default, or ``e5-multilingual``); the threshold is the 98th percentile of the tuning benign texts' scores (a 2 % false-positive budget
on the tuning half; a text the screen does not judge, ``judged``, scores 0). The test half is
never read here."""

from __future__ import annotations

import argparse
import json

import numpy as np

from bench.injection.corpus import halves
from gateway.embedding.factory import build_embedder
from gateway.embedding.prototype_screen import EMBEDDER_KIND, PROTOTYPE_FILES, judged

#: the tuning half's false-positive budget the threshold is chosen for
BUDGET = 0.02


def tuned(embedder_kind: str = EMBEDDER_KIND, budget: float = BUDGET) -> tuple[np.ndarray, dict]:
    """The prototype rows and the settings, recomputed from the tuning half."""
    embedder = build_embedder(embedder_kind, 0)
    attacks, benign = halves()["tune"]
    protos = np.asarray(embedder.embed(attacks), dtype=np.float32)
    benign_scores = (np.asarray(embedder.embed(benign), dtype=np.float32) @ protos.T).max(1)
    benign_scores[[not judged(t) for t in benign]] = 0.0  # the screen never judges them
    threshold = float(np.quantile(benign_scores, 1 - budget))
    meta = {
        "embedder": embedder.name,
        "count": len(attacks),
        "threshold": round(threshold, 6),
        "budget": budget,
        "source": "bench/injection/corpus.py tuning half (attacks)",
    }
    return protos, meta


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--embedder", choices=list(PROTOTYPE_FILES), default=EMBEDDER_KIND)
    args = p.parse_args()
    protos, meta = tuned(args.embedder)
    path = PROTOTYPE_FILES[args.embedder]
    np.save(path, protos, allow_pickle=False)
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(f"{path.name}: {protos.shape}; threshold {meta['threshold']:.3f}")


if __name__ == "__main__":
    main()
