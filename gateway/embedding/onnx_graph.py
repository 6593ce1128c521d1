"""Writing an encoder out as an ONNX graph with ``onnx.helper``: the node and initializer
collector the MiniLM and e5 graph builders share (``onnx_minilm.py``, ``e5_onnx.py``), and the
cache of built models between starts."""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["GraphBuilder", "cached_build"]

log = logging.getLogger(__name__)


def cached_build(
    cache_dir: Path | None, stem: str, sources: Sequence[Path], key: str, build: Callable[[], bytes]
) -> bytes:
    """The serialised model: built, or read from ``cache_dir`` where an earlier start kept it
    as ``<stem>-<digest>.onnx``, the digest of the ``sources`` files' bytes and ``key`` (what
    else the build depends on). None: built every time. A cache that cannot be written only
    costs the next start a rebuild (a warning)."""
    if cache_dir is None:
        return build()
    digest = hashlib.sha256()
    for source in sources:
        with source.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    digest.update(key.encode())
    path = cache_dir / f"{stem}-{digest.hexdigest()[:20]}.onnx"
    if path.is_file():
        return path.read_bytes()
    data = build()
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        log.warning("could not cache the ONNX model in %s: %s", cache_dir, exc)
    return data


class GraphBuilder:
    """Collects nodes and initializers with generated, unique names."""

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self._helper = helper
        self._numpy_helper = numpy_helper
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(self._numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], name: str | None = None, **attrs: Any) -> str:
        self._count += 1
        out = name or f"{op_type.lower()}_{self._count}"
        self.nodes.append(
            self._helper.make_node(op_type, inputs, [out], name=f"{op_type}_{self._count}", **attrs)
        )
        return out

    def linear(self, x: str, weight: np.ndarray, bias: np.ndarray, prefix: str) -> str:
        """``x @ weight.T + bias`` (weight stored as in torch: (out, in))."""
        w = self.const(prefix + ".weight_t", np.ascontiguousarray(weight.T, dtype=np.float32))
        b = self.const(prefix + ".bias", bias.astype(np.float32))
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def layer_norm(
        self, x: str, weight: np.ndarray, bias: np.ndarray, eps: float, prefix: str
    ) -> str:
        g = self.const(prefix + ".weight", weight.astype(np.float32))
        b = self.const(prefix + ".bias", bias.astype(np.float32))
        return self.op("LayerNormalization", [x, g, b], axis=-1, epsilon=eps)
