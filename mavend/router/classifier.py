"""Stage 1 fallback: nearest-centroid intent classifier over sentence embeddings.

Contract: every intent has a centroid in embedding space; an utterance gets the
intent of the nearest centroid, and its confidence is the cosine similarity to
that centroid. Two refinements, both measured by bench/classifier_bench.py:

* Local centroids. An intent such as `act` spans lights, music, taxis and
  messages, so its global mean sits between clusters and is far from all of
  them (pure centroid: 75 % strict accuracy on the dev set). The centroid an
  utterance is compared with is therefore pulled toward the intent's examples
  nearest to it:  c_i(q) = normalize((1 - w) * mean_i + w * mean(top-k_i(q))),
  with k = 3, w = 0.7 (87 % on the same set). `neighbours=0` (or
  `local_weight=0`) gives the classic global centroid.
* Exact matches. A text that, normalized, IS a labelled example takes that
  example's label with confidence 1.0 (its cosine to that example). The latest
  label wins, so a user's correction overrides a built-in example at once
  instead of nudging a centroid by 1/n.

`scores` holds the cosine to every intent's centroid, so the gate can read the
margin between the best two (`ClassifierResult.margin`) as well. The scale is
the model's, not a probability: with USE, in-scope dev utterances score 0.43 to
0.83 (5th to 95th percentile) and out-of-scope ones 0.33 to 0.61, and nothing
but an exact example reaches 0.9. Pick gate thresholds from the bench output.

Examples come from the shipped `mavend/data/intent_examples.jsonl` plus an
append-only user file in the data directory (corrections; the memory module
writes it through `append_example`). The built-in embeddings are cached to a
`.npy` next to the user file, keyed by the examples' hash and the model's
fingerprint, so a warm start skips ~500 forward passes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from mavend.router.decision import Intent
from mavend.router.embedder import (
    MAX_CHARS,
    Embedder,
    HashingEmbedder,
    UseEmbedder,
    prepare_text,
)

__all__ = [
    "USER_EXAMPLES_FILENAME",
    "CentroidClassifier",
    "ClassifierResult",
    "Embedder",
    "Example",
    "HashingEmbedder",
    "UseEmbedder",
    "append_example",
    "builtin_examples_path",
    "cached_embeddings",
    "load_examples",
]

log = logging.getLogger(__name__)

USER_EXAMPLES_FILENAME = "intent_examples.user.jsonl"
_CACHE_PREFIX = "intent-embeddings-"
# Bump when prepare_text or the cache layout changes: old files stop matching.
_CACHE_VERSION = "1"
_PUNCT = re.compile(r"[^\w\s]+", re.UNICODE)


@dataclass(frozen=True)
class Example:
    """One labelled utterance."""

    text: str
    intent: Intent

    def __post_init__(self) -> None:
        # Accept the plain string value ("act") as well as the enum member.
        object.__setattr__(self, "intent", Intent(self.intent))

    def to_json(self) -> dict[str, str]:
        return {"text": self.text, "intent": str(self.intent)}


@dataclass(frozen=True)
class ClassifierResult:
    intent: Intent
    confidence: float  # cosine to the winning centroid (1.0 for an exact example match)
    scores: dict[Intent, float]  # cosine to each intent's centroid (intents with examples)
    nearest: str  # the winning intent's example most similar to the text ("" if none)

    @property
    def margin(self) -> float:
        """Best score minus the runner-up: small means the intents were close to a tie."""
        top = sorted(self.scores.values(), reverse=True)
        if len(top) < 2:
            return top[0] if top else 0.0
        return top[0] - top[1]


# --------------------------------------------------------------------------- files


def builtin_examples_path() -> Path:
    """The labelled examples shipped in the package."""
    return Path(str(resources.files("mavend").joinpath("data", "intent_examples.jsonl")))


def load_examples(builtin: Path, user: Path | None) -> list[Example]:
    """The shipped examples, then the user's (append-only, later lines win ties).

    The shipped file is strict: a bad line is a packaging bug and raises. The
    user file is lenient: a line torn by a crash mid-append is skipped with a
    warning, because losing one correction beats refusing to start.
    """
    examples = _read_examples(builtin, strict=True)
    if user is not None:
        examples.extend(_read_examples(user, strict=False))
    return examples


def append_example(user_file: Path, example: Example) -> None:
    """Append one example as a JSON line and fsync it; earlier lines are never touched."""
    user_file.parent.mkdir(parents=True, exist_ok=True)
    created = not user_file.exists()
    row: dict[str, Any] = example.to_json()
    row["added"] = datetime.now(UTC).isoformat(timespec="seconds")
    line = json.dumps(row, ensure_ascii=False) + "\n"
    with open(user_file, "ab") as fh:
        # A crash mid-append can leave a last line without its newline; start a
        # fresh line so this row is not glued onto the torn one.
        if fh.tell() > 0 and not _ends_with_newline(user_file):
            line = "\n" + line
        fh.write(line.encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())
    if created:
        _fsync_dir(user_file.parent)  # the new directory entry must survive a crash too


def _read_examples(path: Path, *, strict: bool) -> list[Example]:
    if not strict and not path.exists():
        return []
    examples: list[Example] = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                examples.append(_parse_example(line))
            except (ValueError, TypeError, KeyError) as exc:
                if strict:
                    raise ValueError(f"{path}:{number}: bad example line: {exc}") from exc
                log.warning("%s:%d: skipping a bad example line (%s)", path, number, exc)
    return examples


def _parse_example(line: str) -> Example:
    row = json.loads(line)
    if not isinstance(row, dict):
        raise TypeError("not a JSON object")
    text = row["text"]
    if not isinstance(text, str) or not text.strip():
        raise ValueError("text must be a non-empty string")
    return Example(text=text.strip(), intent=Intent(row["intent"]))


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # not every filesystem lets a directory be opened; best effort
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- cache


def cached_embeddings(
    embedder: Embedder, examples: Sequence[Example], cache_dir: Path | None
) -> tuple[np.ndarray, bool]:
    """Embeddings of `examples`, read from / written to a `.npy` in `cache_dir`.

    Returns (vectors, hit). The file name carries a hash of the embedder's
    `fingerprint` (the model's sha or size+mtime), the input bound and every
    (intent, text): any change makes a new name, so a stale file is never read.
    An embedder without a `fingerprint`, or no `cache_dir`, means no caching.
    """
    fingerprint = getattr(embedder, "fingerprint", None)
    texts = [e.text for e in examples]
    if cache_dir is None or not fingerprint:
        return embedder.embed(texts), False
    path = cache_dir / f"{_CACHE_PREFIX}{_cache_key(str(fingerprint), examples)}.npy"
    vectors = _read_cache(path, len(examples), embedder.dim)
    if vectors is not None:
        return vectors, True
    vectors = embedder.embed(texts)
    _write_cache(path, vectors)
    return vectors, False


def _cache_key(fingerprint: str, examples: Sequence[Example]) -> str:
    digest = hashlib.sha256(f"{_CACHE_VERSION}\n{fingerprint}\n{MAX_CHARS}\n".encode())
    for e in examples:
        digest.update(f"{e.intent}\t{e.text}\n".encode())
    return digest.hexdigest()[:24]


def _read_cache(path: Path, rows: int, dim: int) -> np.ndarray | None:
    if not path.exists():
        return None
    try:
        vectors = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable embedding cache %s (%s)", path, exc)
        return None
    if vectors.shape != (rows, dim) or vectors.dtype != np.float32:
        log.warning("ignoring embedding cache %s: shape %s", path, vectors.shape)
        return None
    if not np.isfinite(vectors).all():
        return None
    return vectors


def _write_cache(path: Path, vectors: np.ndarray) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write-then-rename: a reader never sees half a file.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".npy")
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, np.ascontiguousarray(vectors, dtype=np.float32), allow_pickle=False)
        os.replace(tmp, path)
    except OSError as exc:  # a read-only data dir costs start-up time, nothing else
        log.warning("cannot write embedding cache %s (%s)", path, exc)
        return
    for stale in path.parent.glob(f"{_CACHE_PREFIX}*.npy"):
        if stale != path:
            stale.unlink(missing_ok=True)


# --------------------------------------------------------------------------- classifier


def _match_key(text: str) -> str:
    """What counts as 'the same utterance': case, punctuation and spacing ignored."""
    return " ".join(_PUNCT.sub(" ", prepare_text(text).casefold()).split())


@dataclass(frozen=True)
class _State:
    """An immutable snapshot; add_example swaps in a new one (copy-on-write)."""

    vectors: np.ndarray  # (n, dim) float32, unit rows
    labels: np.ndarray  # (n,) index into _INTENTS
    texts: tuple[str, ...]
    sums: np.ndarray  # (7, dim) float64: running sum of each intent's vectors
    counts: np.ndarray  # (7,) int
    centroids: np.ndarray  # (7, dim) float32: normalized sums (zero row: no examples)
    members: tuple[np.ndarray, ...]  # per intent: row indices into vectors
    exact: Mapping[str, Intent]  # _match_key(text) -> latest label


_INTENTS: tuple[Intent, ...] = tuple(Intent)


class CentroidClassifier:
    """Nearest-centroid intent classifier; thread-safe (see the module docstring).

    `classify` never raises for any string (empty, huge, control characters,
    emoji): empty or whitespace-only input has confidence 0.0, so the gate
    asks (intent CHAT: no side effect if a caller ignores confidence).
    `add_example` updates the affected centroid incrementally and, when the
    classifier has a `user_file`, persists the example there first.
    """

    def __init__(
        self,
        embedder: Embedder,
        examples: Sequence[Example],
        *,
        embeddings: np.ndarray | None = None,
        user_file: Path | None = None,
        neighbours: int = 3,
        local_weight: float = 0.7,
    ) -> None:
        if not examples:
            raise ValueError("the classifier needs at least one labelled example")
        if neighbours < 0 or not 0.0 <= local_weight <= 1.0:
            raise ValueError("neighbours must be >= 0 and local_weight in [0, 1]")
        self.embedder = embedder
        self.user_file = user_file
        self.neighbours = neighbours
        self.local_weight = local_weight if neighbours > 0 else 0.0
        if embeddings is None:
            embeddings = embedder.embed([e.text for e in examples])
        if embeddings.shape != (len(examples), embedder.dim):
            raise ValueError(
                f"embeddings shape {embeddings.shape} != ({len(examples)}, {embedder.dim})"
            )
        self._lock = threading.Lock()  # serializes writers; readers take a snapshot
        self._state = _build_state(examples, np.asarray(embeddings, dtype=np.float32))

    @classmethod
    def load(
        cls,
        embedder: Embedder,
        *,
        builtin: Path | None = None,
        user_file: Path | None = None,
        cache_dir: Path | None = None,
        **options: Any,
    ) -> CentroidClassifier:
        """Built-in + user examples, the built-in embeddings through the cache.

        `cache_dir` defaults to the user file's directory. User examples are
        embedded at every start: they are few, and caching them would
        invalidate the cache on every correction.
        """
        builtin_examples = _read_examples(builtin or builtin_examples_path(), strict=True)
        user_examples = _read_examples(user_file, strict=False) if user_file else []
        if cache_dir is None and user_file is not None:
            cache_dir = user_file.parent
        vectors, _hit = cached_embeddings(embedder, builtin_examples, cache_dir)
        if user_examples:
            user_vectors = embedder.embed([e.text for e in user_examples])
            vectors = np.concatenate([vectors, user_vectors], axis=0)
        return cls(
            embedder,
            builtin_examples + user_examples,
            embeddings=vectors,
            user_file=user_file,
            **options,
        )

    @property
    def examples(self) -> list[Example]:
        state = self._state
        return [
            Example(t, _INTENTS[int(i)]) for t, i in zip(state.texts, state.labels, strict=True)
        ]

    def classify(self, text: str) -> ClassifierResult:
        state = self._state  # one consistent snapshot, whatever add_example does meanwhile
        if not prepare_text(text):
            # Nothing to classify. CHAT has no side effect, and confidence 0.0
            # makes any gate ask rather than act on it.
            return ClassifierResult(Intent.CHAT, 0.0, {}, "")
        query = self.embedder.embed([text])[0]
        sims = state.vectors @ query
        scores = self._scores(state, query, sims)
        winner = max(scores, key=scores.__getitem__)
        confidence = scores[winner]
        exact = state.exact.get(_match_key(text))
        if exact is not None:
            winner, confidence = exact, 1.0
        return ClassifierResult(
            intent=winner,
            confidence=confidence,
            scores=scores,
            nearest=_nearest(state, sims, _INTENTS.index(winner)),
        )

    def centroid_for(self, text: str, intent: Intent) -> np.ndarray:
        """The (unit) centroid `text` is compared with for `intent`: for tests and logs."""
        state = self._state
        query = self.embedder.embed([text])[0]
        return self._centroid(state, state.vectors @ query, _INTENTS.index(intent))

    def add_example(self, text: str, intent: Intent | str) -> Example:
        """Learn one labelled utterance now; persist it to the user file if there is one."""
        example = Example(text=text.strip(), intent=Intent(intent))
        if not prepare_text(example.text):
            raise ValueError("an example needs some text")
        vector = self.embedder.embed([example.text])[0]
        with self._lock:
            if self.user_file is not None:
                # Disk first: if the write fails, memory and the file still agree.
                append_example(self.user_file, example)
            self._state = _with_example(self._state, example, vector)
        return example

    def _scores(self, state: _State, query: np.ndarray, sims: np.ndarray) -> dict[Intent, float]:
        scores: dict[Intent, float] = {}
        for i, intent in enumerate(_INTENTS):
            if state.counts[i] == 0:
                continue
            centroid = self._centroid(state, sims, i)
            scores[intent] = _clip(float(centroid @ query))
        return scores

    def _centroid(self, state: _State, sims: np.ndarray, i: int) -> np.ndarray:
        if self.local_weight == 0.0:
            return state.centroids[i]
        rows = state.members[i]
        k = min(self.neighbours, len(rows))
        # argpartition: the k best without sorting the rest.
        best = rows[np.argpartition(-sims[rows], k - 1)[:k]]
        local = state.vectors[best].mean(axis=0)
        mixed = (1.0 - self.local_weight) * state.centroids[i] + self.local_weight * local
        norm = float(np.linalg.norm(mixed))
        return (mixed / norm).astype(np.float32) if norm > 0 else state.centroids[i]


def _clip(value: float) -> float:
    # int8 rounding can put a cosine a hair outside [-1, 1]; NaN never escapes.
    return 0.0 if math.isnan(value) else max(-1.0, min(1.0, value))


def _nearest(state: _State, sims: np.ndarray, i: int) -> str:
    rows = state.members[i]
    if len(rows) == 0:
        return ""
    return state.texts[int(rows[int(np.argmax(sims[rows]))])]


def _build_state(examples: Sequence[Example], vectors: np.ndarray) -> _State:
    labels = np.array([_INTENTS.index(e.intent) for e in examples], dtype=np.int64)
    sums = np.zeros((len(_INTENTS), vectors.shape[1]), dtype=np.float64)
    np.add.at(sums, labels, vectors.astype(np.float64))
    exact: dict[str, Intent] = {}
    for e in examples:  # in file order: the user's later lines override built-ins
        exact[_match_key(e.text)] = e.intent
    return _State(
        vectors=vectors,
        labels=labels,
        texts=tuple(e.text for e in examples),
        sums=sums,
        counts=np.bincount(labels, minlength=len(_INTENTS)),
        centroids=_normalize(sums),
        members=tuple(np.flatnonzero(labels == i) for i in range(len(_INTENTS))),
        exact=exact,
    )


def _with_example(state: _State, example: Example, vector: np.ndarray) -> _State:
    """The state plus one example: only the affected centroid is recomputed."""
    i = _INTENTS.index(example.intent)
    sums = state.sums.copy()
    sums[i] += vector
    centroids = state.centroids.copy()
    centroids[i] = _normalize(sums[i : i + 1])[0]
    counts = state.counts.copy()
    counts[i] += 1
    row = len(state.texts)
    members = list(state.members)
    members[i] = np.append(members[i], row)
    exact = dict(state.exact)
    exact[_match_key(example.text)] = example.intent
    return _State(
        vectors=np.concatenate([state.vectors, vector[None, :].astype(np.float32)], axis=0),
        labels=np.append(state.labels, i),
        texts=(*state.texts, example.text),
        sums=sums,
        counts=counts,
        centroids=centroids,
        members=tuple(members),
        exact=exact,
    )


def _normalize(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.where(norms == 0.0, 1.0, norms)).astype(np.float32)
