"""all-MiniLM-L6-v2 on ONNX Runtime, built from the same weights as the numpy reference.

The BERT encoder is written out as an ONNX graph with ``onnx.helper`` directly
from ``model.safetensors`` (no torch, no transformers, nothing downloaded):

* embeddings: word + position + token-type (all 0) + LayerNormalization;
* 6 layers of multi-head self-attention (additive -10000 mask on padded keys,
  like BERT's) and a feed-forward block with exact (erf) GELU, each followed by
  a residual LayerNormalization;
* mean pooling over the attention mask and L2 normalisation, in the graph.

The op pattern follows what a PyTorch BERT export looks like, so ONNX
Runtime's graph optimiser fuses it (Attention, SkipLayerNormalization,
BiasGelu, ...).  The model is serialised in memory and handed to
``onnxruntime.InferenceSession`` as bytes; with ``cache_dir`` the built (or
quantised) model is also written there under a name keyed by a digest of the
weights, so later starts skip the build.

Two variants:

* ``"fp32"`` -- same maths as :class:`~gateway.embedding.minilm.MiniLMEmbedder`
  (cosine >= 0.9999 to it and to the golden vectors).
* ``"int8"`` -- dynamic int8 quantisation, per output channel, of the q/k/v and
  feed-forward-in MatMul weights of layers 1-4 (``INT8_MATMULS``;
  ``onnxruntime.quantization.quantize_dynamic``); cosine to the golden vectors
  >= 0.99 (median ~0.997), ~1.2x faster than fp32 one text per run. Quantising
  every MatMul is ~2x faster but misses the 0.99 gate (0.976 on "?").

Tokenisation, truncation (256 tokens) and length-bucketed batching are the
same as in the numpy embedder.  ``embed`` is thread-safe: ``InferenceSession.run``
may be called concurrently and the tokenizer is never reconfigured after
``__init__``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .minilm import (
    _REQUIRED_FILES,
    INSTALL_HINT,
    MODEL_NAME,
    LengthBucketed,
    _missing_model_error,
    default_model_dir,
)
from .onnx_graph import GraphBuilder, cached_build

__all__ = ["OnnxMiniLMEmbedder", "build_minilm_graph", "VARIANTS", "default_threads"]

log = logging.getLogger(__name__)

VARIANTS = ("fp32", "int8")
OPSET = 17
#: bump when the graph changes, so cached .onnx files of an older build are not reused
GRAPH_VERSION = "2"  # 2: int8 quantises only INT8_MATMULS
_MASK_VALUE = -10000.0  # BERT's additive mask; exp() of it underflows to exactly 0 in float32


def default_threads() -> int:
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# --------------------------------------------------------------------------- graph


def build_minilm_graph(
    weights: dict[str, np.ndarray], config: dict[str, Any], max_tokens: int = 256
) -> Any:
    """The BERT encoder + mean pooling + L2 norm as an ``onnx.ModelProto`` (opset 17).

    Inputs ``input_ids`` and ``attention_mask``: int64 ``(batch, seq)``; output
    ``sentence_embedding``: float32 ``(batch, hidden)``, rows L2-normalised.
    ``weights`` are the safetensors tensors (an optional ``bert.`` prefix is ignored).
    """
    from onnx import TensorProto, helper

    w = {k[len("bert.") :] if k.startswith("bert.") else k: v for k, v in weights.items()}
    d = int(config["hidden_size"])
    nh = int(config["num_attention_heads"])
    hd = d // nh
    eps = float(config.get("layer_norm_eps", 1e-12))
    n_layers = int(config["num_hidden_layers"])

    g = GraphBuilder()
    i64 = np.int64
    # ---- embeddings
    word = g.const("embeddings.word", w["embeddings.word_embeddings.weight"].astype(np.float32))
    pos_table = w["embeddings.position_embeddings.weight"][:max_tokens].astype(np.float32)
    pos = g.const("embeddings.position", pos_table)
    type0 = g.const(
        "embeddings.token_type0", w["embeddings.token_type_embeddings.weight"][0].astype(np.float32)
    )
    zero = g.const("c.zero_1d", np.array([0], dtype=i64))
    one_idx = g.const("c.one_1d", np.array([1], dtype=i64))
    two_idx = g.const("c.two_1d", np.array([2], dtype=i64))
    seq_len = g.op("Slice", [g.op("Shape", ["input_ids"]), one_idx, two_idx])  # [t]
    pos_emb = g.op("Slice", [pos, zero, seq_len, zero])  # (t, d)
    x = g.op("Gather", [word, "input_ids"], axis=0)  # (b, t, d)
    x = g.op("Add", [x, pos_emb])
    x = g.op("Add", [x, type0])
    x = g.layer_norm(
        x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps, "embeddings.ln"
    )

    # ---- attention mask: (b, t) int64 -> additive bias (b, 1, 1, t)
    mask_f = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    ext = g.op("Unsqueeze", [mask_f, g.const("c.axes_12", np.array([1, 2], dtype=i64))])
    inv = g.op("Sub", [g.const("c.one_f", np.array(1.0, dtype=np.float32)), ext])
    mask_bias = g.op("Mul", [inv, g.const("c.mask_value", np.array(_MASK_VALUE, dtype=np.float32))])

    heads_shape = g.const("c.heads_shape", np.array([0, 0, nh, hd], dtype=i64))
    merge_shape = g.const("c.merge_shape", np.array([0, 0, d], dtype=i64))
    scale = g.const("c.sqrt_head_dim", np.array(math.sqrt(hd), dtype=np.float32))
    sqrt2 = g.const("c.sqrt2", np.array(math.sqrt(2.0), dtype=np.float32))
    half = g.const("c.half", np.array(0.5, dtype=np.float32))
    one_f = "c.one_f"

    # ---- encoder layers
    for i in range(n_layers):
        p = f"encoder.layer.{i}."

        def lw(name: str, p: str = p) -> np.ndarray:
            return w[p + name]

        def heads(t: str, perm: list[int]) -> str:
            return g.op("Transpose", [g.op("Reshape", [t, heads_shape])], perm=perm)

        q = g.linear(x, lw("attention.self.query.weight"), lw("attention.self.query.bias"), p + "q")
        k = g.linear(x, lw("attention.self.key.weight"), lw("attention.self.key.bias"), p + "k")
        v = g.linear(x, lw("attention.self.value.weight"), lw("attention.self.value.bias"), p + "v")
        qh = heads(q, [0, 2, 1, 3])  # (b, nh, t, hd)
        kh = heads(k, [0, 2, 3, 1])  # (b, nh, hd, t)
        vh = heads(v, [0, 2, 1, 3])  # (b, nh, t, hd)
        scores = g.op("Div", [g.op("MatMul", [qh, kh]), scale])
        probs = g.op("Softmax", [g.op("Add", [scores, mask_bias])], axis=-1)
        ctx = g.op("Transpose", [g.op("MatMul", [probs, vh])], perm=[0, 2, 1, 3])
        ctx = g.op("Reshape", [ctx, merge_shape])  # (b, t, d)
        attn = g.linear(
            ctx, lw("attention.output.dense.weight"), lw("attention.output.dense.bias"), p + "ao"
        )
        h = g.layer_norm(
            g.op("Add", [attn, x]),
            lw("attention.output.LayerNorm.weight"),
            lw("attention.output.LayerNorm.bias"),
            eps,
            p + "ln1",
        )
        inter = g.linear(
            h, lw("intermediate.dense.weight"), lw("intermediate.dense.bias"), p + "in"
        )
        # exact GELU: x * 0.5 * (1 + erf(x / sqrt 2))
        erf = g.op("Erf", [g.op("Div", [inter, sqrt2])])
        gelu = g.op("Mul", [g.op("Mul", [inter, g.op("Add", [erf, one_f])]), half])
        out = g.linear(gelu, lw("output.dense.weight"), lw("output.dense.bias"), p + "out")
        x = g.layer_norm(
            g.op("Add", [out, h]),
            lw("output.LayerNorm.weight"),
            lw("output.LayerNorm.bias"),
            eps,
            p + "ln2",
        )

    # ---- mean pooling over the mask, then L2 normalisation
    m3 = g.op("Unsqueeze", [mask_f, two_idx])  # (b, t, 1)
    summed = g.op("ReduceSum", [g.op("Mul", [x, m3]), one_idx], keepdims=0)  # (b, d)
    counts = g.op("ReduceSum", [m3, one_idx], keepdims=0)  # (b, 1)
    counts = g.op("Max", [counts, g.const("c.count_eps", np.array(1e-9, dtype=np.float32))])
    pooled = g.op("Div", [summed, counts])
    norm = g.op("ReduceL2", [pooled], axes=[1], keepdims=1)
    norm = g.op("Max", [norm, g.const("c.norm_eps", np.array(1e-12, dtype=np.float32))])
    g.op("Div", [pooled, norm], name="sentence_embedding")

    graph = helper.make_graph(
        g.nodes,
        "all_minilm_l6_v2",
        inputs=[
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        outputs=[
            helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["batch", d])
        ],
        initializer=g.initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="memgate",
        producer_version=GRAPH_VERSION,
    )
    model.ir_version = 8  # opset 17's IR version; readable by any ONNX Runtime >= 1.12
    return model


#: int8 MatMuls: q, k, v and the feed-forward up-projection of the middle layers. The attention
#: and feed-forward output projections (whose inputs carry the outlier activations) and the first
#: and last layers stay fp32: quantising every MatMul costs the golden texts' worst cosine 0.976,
#: this 0.990 (docs/BENCHMARKS-HISTORY.md "int8 variants").
INT8_MATMULS = (".q.weight_t", ".k.weight_t", ".v.weight_t", ".in.weight_t")
INT8_FP32_LAYERS = (0, 5)


def int8_nodes(model: Any) -> list[str]:
    """Names of the MatMul nodes the int8 variant quantises (``INT8_MATMULS`` outside
    ``INT8_FP32_LAYERS``)."""
    keep = tuple(f"encoder.layer.{i}." for i in INT8_FP32_LAYERS)
    return [
        n.name
        for n in model.graph.node
        if n.op_type == "MatMul"
        and any(i.endswith(INT8_MATMULS) and not i.startswith(keep) for i in n.input)
    ]


def quantize_int8(model: Any) -> bytes:
    """Dynamic int8 quantisation of the ``int8_nodes`` MatMul weights (per output channel);
    returns the serialised model."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    nodes = int8_nodes(model)
    with tempfile.TemporaryDirectory(prefix="memgate-quant-") as tmp:
        src = Path(tmp) / "fp32.onnx"
        dst = Path(tmp) / "int8.onnx"
        src.write_bytes(model.SerializeToString())
        quantize_dynamic(
            src,
            dst,
            op_types_to_quantize=["MatMul"],
            nodes_to_quantize=nodes,
            weight_type=QuantType.QInt8,
            per_channel=True,  # per-tensor: min cosine to the reference 0.85
            extra_options={"MatMulConstBOnly": True},
        )
        return dst.read_bytes()


# --------------------------------------------------------------------------- embedder


class OnnxMiniLMEmbedder(LengthBucketed):
    """all-MiniLM-L6-v2 on ONNX Runtime; same ``Embedder`` protocol as the numpy one.

    variant: ``"fp32"`` or ``"int8"`` (dynamic quantisation of the MatMul weights).
    threads: ONNX Runtime intra-op threads; 0 -> every core this process may use.
    batch_size: texts per run; texts are sorted by token length and each batch
    is padded only to its own longest text (order is restored in the output).
    Default 32 for fp32 and 1 for int8: dynamic quantisation takes one
    activation range per tensor, i.e. per *batch*, so a batched int8 text's
    vector depends on its batch-mates (cosine to the same text run alone as low
    as 0.965); one text per run keeps the vector a function of the text alone,
    which the cache and dedup rely on, and costs int8 little (see BENCHMARKS).
    spinning: let ONNX Runtime's idle intra-op threads spin for the next run (off: they sleep).
    cache_dir: if set, the built model is stored there as
    ``all-minilm-l6-v2-<variant>-<digest>.onnx`` (digest of the weights, the
    graph version and the options) and loaded from there next time.
    """

    dim: int
    name: str

    def __init__(
        self,
        model_dir: str | Path | None = None,
        variant: str = "fp32",
        threads: int = 0,
        batch_size: int | None = None,
        max_tokens: int = 256,
        cache_dir: str | Path | None = None,
        spinning: bool = False,
    ) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        if batch_size is None:
            batch_size = 1 if variant == "int8" else 32
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if max_tokens < 2:
            raise ValueError(f"max_tokens must be >= 2 ([CLS] and [SEP]), got {max_tokens}")
        if threads < 0:
            raise ValueError(f"threads must be >= 0, got {threads}")

        resolved = Path(model_dir) if model_dir is not None else default_model_dir()
        if resolved is None:
            raise _missing_model_error(None, "neither the package nor the model cache has them")
        missing = [f for f in _REQUIRED_FILES if not (resolved / f).is_file()]
        if missing:
            raise _missing_model_error(resolved, "missing " + ", ".join(missing))
        self.model_dir = resolved

        import onnxruntime as ort
        from tokenizers import Tokenizer

        config = json.loads((resolved / "config.json").read_text(encoding="utf-8"))
        if config.get("hidden_act", "gelu") != "gelu":
            raise RuntimeError(f"unsupported hidden_act {config['hidden_act']!r} (only 'gelu')")
        if max_tokens > int(config.get("max_position_embeddings", 512)):
            raise ValueError(f"max_tokens {max_tokens} exceeds the model's positions")
        self.dim = int(config["hidden_size"])
        self.variant = variant
        self.batch_size = int(batch_size)
        self.max_tokens = int(max_tokens)
        self.threads = int(threads) or default_threads()
        self.name = f"{MODEL_NAME}:onnx-{variant}"

        tokenizer = Tokenizer.from_file(str(resolved / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_tokens)
        self._tokenizer = tokenizer
        pad_id = tokenizer.token_to_id("[PAD]")
        self._pad_id = int(pad_id) if pad_id is not None else int(config.get("pad_token_id", 0))

        model_bytes = self._model_bytes(config, None if cache_dir is None else Path(cache_dir))

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = self.threads
        # Spinning intra-op threads answer a lone run ~1 ms sooner on idle cores, but burn as
        # much CPU again as the run itself (measured: 10.7 vs 5.7 ms CPU per query, 2 threads):
        # on cores shared with the event loop and the stores, that CPU is what recalls queue for.
        self.spinning = bool(spinning)
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.log_severity_level = 3  # errors only
        self._session = ort.InferenceSession(
            model_bytes, sess_options=opts, providers=["CPUExecutionProvider"]
        )

    def __repr__(self) -> str:
        return (
            f"OnnxMiniLMEmbedder(model_dir={str(self.model_dir)!r}, variant={self.variant!r}, "
            f"threads={self.threads}, batch_size={self.batch_size}, max_tokens={self.max_tokens})"
        )

    # ------------------------------------------------------------------ model

    def _build(self, config: dict[str, Any]) -> bytes:
        from safetensors.numpy import load_file

        weights = load_file(str(self.model_dir / "model.safetensors"))
        try:
            model = build_minilm_graph(weights, config, self.max_tokens)
        except KeyError as exc:
            raise RuntimeError(
                f"model.safetensors in {self.model_dir} lacks weight {exc}; "
                f"reinstall with: {INSTALL_HINT}"
            ) from exc
        if self.variant == "int8":
            return quantize_int8(model)
        data: bytes = model.SerializeToString()
        return data

    def _model_bytes(self, config: dict[str, Any], cache_dir: Path | None) -> bytes:
        key = json.dumps(config, sort_keys=True)
        key += f"|graph={GRAPH_VERSION}|opset={OPSET}|max_tokens={self.max_tokens}"
        return cached_build(
            cache_dir,
            f"all-minilm-l6-v2-{self.variant}",
            [self.model_dir / "model.safetensors"],
            key,
            lambda: self._build(config),
        )

    # ------------------------------------------------------------------ API

    def _embed_batch(self, batch_ids: list[list[int]]) -> np.ndarray:
        b = len(batch_ids)
        t = max(len(x) for x in batch_ids)
        input_ids = np.full((b, t), self._pad_id, dtype=np.int64)
        mask = np.zeros((b, t), dtype=np.int64)
        for row, seq in enumerate(batch_ids):
            input_ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        (vecs,) = self._session.run(
            ["sentence_embedding"], {"input_ids": input_ids, "attention_mask": mask}
        )
        return np.asarray(vecs, dtype=np.float32)
