"""Find the outlier input channels of the e5 engine's feed-forward output projections and write
them to ``gateway/embedding/e5_outliers.json`` (``gateway/embedding/e5_onnx.py`` runs them in
float32 beside the int8 path).

Calibration texts: the synthetic chat turns of ``bench.bench_embedder`` and the dev people's
facts and turns of ``bench/multilingual/bilingual-v1.json`` in both languages (the held-out
people and the long-dialogue set are never read). Each is run through the float32 graph; per
projection, a channel whose largest |activation| is at least ``RATIO`` times the 99th
percentile of the channels' largest is an outlier (at most ``MOST`` per projection).

    python -m bench.e5_outliers [--check]   # --check: find and compare, write nothing
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np

from bench.bench_embedder import make_turns
from bench.multilingual_eval import SPLITS, load
from gateway.embedding.e5_onnx import OUTLIERS, build_e5_graph, load_outliers
from gateway.embedding.e5_weights import E5Tokenizer, E5Weights, default_weights_file

RATIO = 3.0
MOST = 4
VERSION = "ffn-out-v1"


def calibration_texts() -> list[str]:
    texts = make_turns(200)
    for person in load()[SPLITS["dev"]]:
        for fact in person["facts"]:
            texts += [fact[k] for k in ("en", "zh", "turn_en", "turn_zh")]
    return texts


def largest_activations(texts: list[str]) -> dict[str, np.ndarray]:
    """Weight name → per input channel, the largest |activation| over the texts."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    weights = E5Weights(default_weights_file())
    tokenizer = E5Tokenizer(weights)
    model = build_e5_graph(weights)
    inputs = {
        next(i for i in n.input if i.endswith(".out.weight_t")): n.input[0]
        for n in model.graph.node
        if n.op_type == "MatMul" and any(i.endswith(".out.weight_t") for i in n.input)
    }
    for name in inputs.values():
        model.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    top: dict[str, Any] = {}
    for n, text in enumerate(texts):
        ids = np.array([0, *tokenizer.content_ids("passage: " + text), 2], dtype=np.int64)
        for name, value in zip(
            names, session.run(None, {"inputs_embeds": weights.word_rows(ids)[None]}), strict=True
        ):
            if name in inputs.values():
                seen = np.abs(value.reshape(-1, value.shape[-1])).max(axis=0)
                top[name] = np.maximum(top.get(name, 0.0), seen)
        if (n + 1) % 200 == 0:
            print(f"  {n + 1} of {len(texts)} texts", file=sys.stderr)
    return {w: top[x] for w, x in inputs.items()}


def outliers(largest: dict[str, np.ndarray]) -> dict[str, list[int]]:
    out = {}
    for name, peak in largest.items():
        p99 = float(np.percentile(peak, 99))
        chosen = [int(i) for i in np.argsort(-peak)[:MOST] if peak[i] >= RATIO * p99]
        if chosen:
            out[name] = chosen
    return dict(sorted(out.items(), key=lambda kv: int(kv[0].split(".")[0][1:])))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--check", action="store_true", help="find and compare with the shipped file")
    args = ap.parse_args(argv)
    texts = calibration_texts()
    print(f"running {len(texts)} calibration texts through the float32 graph ...", file=sys.stderr)
    found = outliers(largest_activations(texts))
    print(json.dumps(found))
    if args.check:
        shipped = load_outliers()
        print("same as shipped" if shipped == found else f"shipped: {json.dumps(shipped)}")
        return
    OUTLIERS.write_text(
        json.dumps({"version": VERSION, "ratio": RATIO, "channels": found}, indent=1) + "\n"
    )
    print(f"wrote {OUTLIERS}")


if __name__ == "__main__":
    main()
