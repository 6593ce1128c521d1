"""The update judge (``core/truth/judge.py``) and the head shipped for the default embedder
(``embedding/judge_head.py``): its input is built from the two statements' vectors (and the
question's), a vector of another size is never judged, and the shipped head loads with the
embedder's size and a threshold in (0, 1)."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.core.truth.judge import UpdateJudge, features
from gateway.embedding.judge_head import load_judge


def _unit(*v: float) -> np.ndarray:
    a = np.asarray(v, np.float32)
    return a / np.linalg.norm(a)


def test_features_carry_the_pair_and_the_question() -> None:
    a, b, q = _unit(1, 0, 0), _unit(0.6, 0.8, 0), _unit(0, 1, 0)
    x = features(a, b)
    assert x.shape == (1, 10) and x[0, -1] == pytest.approx(0.6)  # the cosine last
    assert np.allclose(x[0, 6:9], b - a)  # which way the newer differs
    xq = features(a, b, q)
    assert xq.shape == (1, 10 + 3 + 3 + 3)
    assert xq[0, -3:] == pytest.approx([0.0, 0.8, 0.8])  # cos(q, older), cos(q, newer), gap


def test_the_head_decides_by_its_weights_and_never_on_another_size() -> None:
    dim = 3
    # a head that reads only the cosine: an update when the two are near
    w = np.zeros(3 * dim + 1, np.float32)
    w[-1] = 20.0
    judge = UpdateJudge("test", w, -10.0, 0.5, dim)
    near, far = (_unit(1, 0.1, 0), _unit(1, 0.2, 0)), (_unit(1, 0, 0), _unit(0, 1, 0))
    assert judge.updates(*near) and not judge.updates(*far)
    assert not judge.updates(_unit(1, 0), _unit(1, 0.1))  # another embedder's vectors
    asks = UpdateJudge("test", np.zeros(5 * dim + 4, np.float32), 5.0, 0.5, dim)
    assert asks.reads_query and not asks.updates(*near)  # it reads a question: none, no verdict
    assert asks.updates(*near, _unit(0, 0, 1))


def test_the_shipped_head_fits_the_default_embedder() -> None:
    judge = load_judge("e5-multilingual")
    # e5-small: 384 dimensions, and two the language calibration adds
    assert judge is not None and judge.dim == 386 and 0 < judge.threshold < 1
    assert len(judge.weights) in (3 * judge.dim + 1, 5 * judge.dim + 4)
    assert load_judge("minilm") is None  # no head trained for it: recall keeps the rule
