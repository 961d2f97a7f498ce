"""Sentence embedders for the intent classifier.

`UseEmbedder` is the real one: Universal Sentence Encoder multilingual v3, int8,
run by onnxruntime with the tokenizer inside the graph (the input is a string
tensor, so the onnxruntime-extensions custom ops must be registered). It is the
one impure seam of the classifier: given `HashingEmbedder` instead, the
classifier and the cascade above it are pure and testable without a model.

Every embedder sees text through `prepare_text` first, so both agree on what an
utterance is: control characters become spaces, whitespace is collapsed and the
text is cut to `MAX_CHARS`.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import re
import unicodedata
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from mavend.errors import ModelError, ModelMissingError

if TYPE_CHECKING:
    import onnxruntime

# The bound on what is embedded. USE's cost grows with length (about 1 ms at
# 100 chars, 2 ms at 500, 4 ms at 1000, 60 ms at 10 000 on one Xeon thread), and a
# spoken request states its intent in the first sentence: 512 characters is
# about 90 words, a long spoken turn. Longer text (a pasted paragraph on the
# CLI) is cut at the last word boundary before the bound.
MAX_CHARS = 512


_SPACE = re.compile(r"\s+")
USE_MODEL_NAME = "use-multilingual-int8"


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalized float32 rows of width `dim`."""

    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dim), float32, every row of unit length."""
        ...


def prepare_text(text: str, max_chars: int = MAX_CHARS) -> str:
    """The text an embedder actually sees.

    Control and format characters become spaces: the graph's tokenizer reads
    the string as a C string, so a NUL would silently drop everything after it
    ("\\x00abc" embeds exactly like ""), and zero-width characters carry nothing.
    """
    # Cleaning costs a Python step per character; only a bounded prefix can
    # survive the cut, so clean just that (4x leaves room for collapsed spaces).
    head = text[: max_chars * 4]
    cleaned = "".join(
        " " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in head
    )
    cleaned = _SPACE.sub(" ", cleaned).strip()
    if len(cleaned) <= max_chars:
        return cleaned
    cut = cleaned[:max_chars]
    space = cut.rfind(" ")
    # Cut at a word boundary unless that would throw away most of the bound
    # (one enormous "word", e.g. a pasted URL or a run of emoji).
    return cut[:space] if space > max_chars // 2 else cut


def _normalize_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    # A zero row stays zero rather than becoming NaN; callers never produce one
    # for non-empty input, and a zero row has cosine 0 with everything.
    return (matrix / np.where(norms == 0.0, 1.0, norms)).astype(np.float32, copy=False)


class UseEmbedder:
    """Universal Sentence Encoder multilingual v3 (int8 ONNX), 512-d.

    Thread-safe: onnxruntime's `InferenceSession.run` may be called from many
    threads at once, and nothing else here is mutable after construction.
    """

    dim = 512

    def __init__(self, model_path: Path, threads: int = 1, sha256: str | None = None) -> None:
        """Load the model; `sha256` (the pin, when the caller knows it) keys caches.

        Without `sha256`, `fingerprint` falls back to the file's size and mtime:
        hashing 72 MB on every start would cost about 100 ms for nothing.
        """
        model_path = Path(model_path)
        if not model_path.is_file():
            raise ModelMissingError(
                f"the sentence-embedding model {USE_MODEL_NAME!r} is missing at {model_path}; "
                "run `mavend models pull` to fetch it"
            )
        self.model_path = model_path
        self.threads = threads
        stat = model_path.stat()
        self.fingerprint = (
            f"{USE_MODEL_NAME}:sha256:{sha256}"
            if sha256
            else f"{USE_MODEL_NAME}:stat:{stat.st_size}:{stat.st_mtime_ns}"
        )
        self._session = _open_session(model_path, threads)
        self._input = self._session.get_inputs()[0].name

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed a batch, one session.run per text.

        Not one run for the whole batch, deliberately: the int8 graph quantizes
        its activations dynamically with one scale per input tensor, so in a
        batched run a row's embedding depends on its batch-mates (cosine 0.994
        to 1.0 against the same text alone). Run alone, an embedding is a
        function of its text only: a cached example vector is exactly what
        `classify` computes for that text, whatever else was in the file. The
        price is ~0.9 ms a row instead of ~0.25 ms, paid at a cold start only.
        """
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = [self._run([prepare_text(t)]) for t in texts]
        return _normalize_rows(np.concatenate(rows, axis=0))

    def warm_up(self) -> None:
        """Run one inference so the first real utterance does not pay for allocation."""
        self._run(["warm up"])

    def _run(self, batch: list[str]) -> np.ndarray:
        out = self._session.run(None, {self._input: np.array(batch, dtype=object)})[0]
        if out.ndim != 2 or out.shape[1] != self.dim:
            raise ModelError(
                f"{self.model_path} returned shape {out.shape}, expected (n, {self.dim}); "
                "run `mavend models pull` to replace it"
            )
        return np.asarray(out, dtype=np.float32)


def _extensions_library() -> str:
    """The path of onnxruntime-extensions' custom-op library (USE's tokenizer ops).

    Found, not imported: the package's `__init__` imports `onnx` whenever it is installed
    (it is, for the e5 conversion at pull time), and that costs the daemon about 14 MiB of
    RSS for an API it never calls (BENCHMARKS.md, "The daemon without `onnx`")."""
    spec = importlib.util.find_spec("onnxruntime_extensions")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            candidate = Path(folder) / f"_extensions_pydll{suffix}"
            if candidate.is_file():
                return str(candidate)
    raise ModelError(
        "onnxruntime-extensions is not installed (USE's tokenizer needs it); "
        "run `make setup` again"
    )


def _open_session(model_path: Path, threads: int) -> onnxruntime.InferenceSession:
    # Imported here so that importing this module (HashingEmbedder in tests, the
    # CLI's --help) does not pay onnxruntime's import time.
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.register_custom_ops_library(_extensions_library())
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    try:
        return ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own untyped errors
        raise ModelError(
            f"cannot load {model_path}: {exc}; run `mavend models pull` to fetch it again"
        ) from exc


E5_MODEL_NAME = "multilingual-e5-small"
E5_GRAPH = "e5-small-int8.onnx"  # written by `mavend models pull` (mavend/models/e5/)
E5_TOKENIZER = "tokenizer.json"
E5_MAX_TOKENS = 512
# e5's weight when joined to USE (`JoinedEmbedder`): of 1.0, 1.5, 2.0, 2.5 and 3.0, the one
# best on both the dev file and our own held-out set (top label; BENCHMARKS.md).
E5_WEIGHT = 2.0


class E5Embedder:
    """multilingual-e5-small (the graph `mavend models pull` converts), 384-d.

    The text is prefixed "query: " as e5 expects; one run per text, like `UseEmbedder`
    and for the same reason (the int8 graph's activation scale is per batch).
    Thread-safe as `UseEmbedder` is.
    """

    dim = 384
    prefix = "query: "

    def __init__(self, model_dir: Path, threads: int = 1, sha256: str | None = None) -> None:
        model_dir = Path(model_dir)
        graph, tokenizer = model_dir / E5_GRAPH, model_dir / E5_TOKENIZER
        for path in (graph, tokenizer):
            if not path.is_file():
                raise ModelMissingError(
                    f"the sentence-embedding model {E5_MODEL_NAME!r} is missing {path}; "
                    "run `mavend models pull` to fetch and convert it"
                )
        from tokenizers import Tokenizer

        self.model_path = graph
        self.threads = threads
        stat = graph.stat()
        self.fingerprint = (
            f"{E5_MODEL_NAME}:sha256:{sha256}"
            if sha256
            else f"{E5_MODEL_NAME}:stat:{stat.st_size}:{stat.st_mtime_ns}"
        )
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.enable_truncation(E5_MAX_TOKENS)
        self._tokenizer.no_padding()
        self._session = _open_session(graph, threads)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalize_rows(np.concatenate([self._run(t) for t in texts], axis=0))

    def warm_up(self) -> None:
        self._run("warm up")

    def _run(self, text: str) -> np.ndarray:
        ids = self._tokenizer.encode(self.prefix + prepare_text(text)).ids
        feed = {
            "input_ids": np.array([ids], dtype=np.int64),
            "attention_mask": np.ones((1, len(ids)), dtype=np.int64),
        }
        out = self._session.run(None, feed)[0]
        if out.shape != (1, self.dim):
            raise ModelError(
                f"{self.model_path} returned shape {out.shape}, expected (1, {self.dim}); "
                "run `mavend models pull` to convert it again"
            )
        return np.asarray(out, dtype=np.float32)


class JoinedEmbedder:
    """Two embedders side by side: [a, weight x b], L2-normalized.

    Each part is unit length, so `weight` is how much b's cosine counts against a's:
    the joined cosine is (cos_a + weight^2 cos_b) / (1 + weight^2).
    """

    def __init__(self, first: Embedder, second: Embedder, weight: float) -> None:
        if weight <= 0:
            raise ValueError("the second embedder's weight must be positive")
        self.parts = (first, second)
        self.weight = float(weight)
        self.dim = first.dim + second.dim
        self.fingerprint = (
            f"joined:{getattr(first, 'fingerprint', '?')}+{self.weight:g}x"
            f"{getattr(second, 'fingerprint', '?')}"
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        first, second = (part.embed(texts) for part in self.parts)
        return _normalize_rows(np.concatenate([first, self.weight * second], axis=1))

    def warm_up(self) -> None:
        for part in self.parts:
            getattr(part, "warm_up", lambda: None)()


class HashingEmbedder:
    """A deterministic, dependency-free embedder: a TEST SEAM, not a model.

    Word unigrams and character trigrams (inside word boundaries) are hashed
    into `dim` signed buckets with CRC32, then the row is L2-normalized. Texts
    sharing words or word pieces are close; nothing else is understood. Used by
    unit tests of the classifier and the cascade, where speed and exact
    reproducibility matter and meaning does not.
    """

    def __init__(self, dim: int = 256) -> None:
        if dim < 8:
            raise ValueError("dim must be at least 8")
        self.dim = dim
        self.fingerprint = f"hashing:v1:{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for feature, weight in _features(prepare_text(text)):
                h = zlib.crc32(feature.encode("utf-8"))
                sign = 1.0 if (h >> 31) & 1 else -1.0
                rows[i, h % self.dim] += sign * weight
        return _normalize_rows(rows)


def _features(text: str) -> list[tuple[str, float]]:
    words = re.findall(r"\w+|[^\w\s]", text.casefold())
    if not words:
        # Empty input still gets a unit vector, so the contract holds for it.
        return [("\x00empty", 1.0)]
    feats: list[tuple[str, float]] = [("w:" + w, 1.0) for w in words]
    for w in words:
        padded = f"<{w}>"
        feats.extend(("c:" + padded[j : j + 3], 0.3) for j in range(max(1, len(padded) - 2)))
    return feats


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in chunks (for callers that want an exact key)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
