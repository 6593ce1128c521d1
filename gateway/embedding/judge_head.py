"""The update judge shipped for an embedder (``judge_<name>.npz`` beside this module, written by
``python -m bench.judge_train --write``): loaded once per embedder, ``None`` when no head was
trained for it (recall then keeps its structural rule, ``core/recall/newer_first.py``)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from gateway.core.truth.judge import UpdateJudge

HERE = Path(__file__).resolve().parent
#: the embedders a head was trained for, and its file
HEADS = {"e5-multilingual": "judge_e5.npz"}


@lru_cache(maxsize=4)
def load_judge(embedder: str) -> UpdateJudge | None:
    name = HEADS.get(embedder)
    if name is None or not (HERE / name).exists():
        return None
    with np.load(HERE / name) as f:
        return UpdateJudge(
            embedder=str(f["embedder"]),
            weights=f["weights"].astype(np.float32),
            bias=float(f["bias"]),
            threshold=float(f["threshold"]),
            dim=int(f["dim"]),
            veto=float(f["veto"]) if "veto" in f else 0.0,
        )
