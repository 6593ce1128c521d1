"""Would the embedder help the rules? (issue 33 M5: "rules plus the embedder — similarity to attack
prototypes — if it measures better"). The measurement that chose the operating point; the
screen as wired (``injection_embedder``) is ``gateway/embedding/prototype_screen.py``, its file
written by ``bench/injection/ship_prototypes.py``, its figures ``evaluate.py --screen``.

    python -m bench.injection.prototypes --embedder use-multilingual

The prototypes are the tuning half's attacks. A text is flagged when the rules flag it or its
cosine similarity to the nearest prototype reaches a threshold; each threshold is chosen on the
tuning half only (the highest benign score there, i.e. no tuning false positive, or a quantile of
the tuning benign scores: a false-positive budget), then applied to the test half."""

from __future__ import annotations

import argparse

import numpy as np

from bench.injection.corpus import halves
from gateway.core.screening.injection import find
from gateway.embedding.factory import build_embedder


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--embedder", default="use-multilingual")
    p.add_argument("--budgets", default="0,0.02,0.05", help="tuning false-positive budgets")
    args = p.parse_args()
    embedder = build_embedder(args.embedder, 0)
    h = halves()
    (tune_a, tune_b), (test_a, test_b) = h["tune"], h["test"]

    def embed(texts: list[str]) -> np.ndarray:
        return _unit(np.asarray(embedder.embed(texts), dtype=np.float32))

    protos = embed(tune_a)
    own = protos @ protos.T
    np.fill_diagonal(own, -1.0)  # a tuning attack is not its own prototype
    score = {
        "tune_a": own.max(1),
        "tune_b": (embed(tune_b) @ protos.T).max(1),
        "test_a": (embed(test_a) @ protos.T).max(1),
        "test_b": (embed(test_b) @ protos.T).max(1),
    }
    texts = {"tune_a": tune_a, "tune_b": tune_b, "test_a": test_a, "test_b": test_b}
    rules = {k: np.array([bool(find(t)) for t in v]) for k, v in texts.items()}
    print(f"embedder {args.embedder}; rules alone: test {rules['test_a'].sum()}/{len(test_a)}, "
          f"false positives {rules['test_b'].sum()}/{len(test_b)}")  # fmt: skip
    for budget in (float(b) for b in args.budgets.split(",")):
        benign = score["tune_b"]
        threshold = benign.max() + 1e-6 if budget == 0 else float(np.quantile(benign, 1 - budget))
        got = {k: rules[k] | (score[k] >= threshold) for k in texts}
        print(
            f"tuning budget {budget:.0%} (threshold {threshold:.3f}): "
            f"tune {got['tune_a'].sum()}/{len(tune_a)}, fp {got['tune_b'].sum()}/{len(tune_b)}; "
            f"test {got['test_a'].sum()}/{len(test_a)}, fp {got['test_b'].sum()}/{len(test_b)}"
        )


if __name__ == "__main__":
    main()
