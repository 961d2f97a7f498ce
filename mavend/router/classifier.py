"""Stage 1: the intent classifier, a local nearest-centroid vote over sentence embeddings.

Contract: every label (the seven intents, plus `unsupported` and `fragment`,
see `mavend.router.examples`) has examples in embedding space; an utterance
gets a calibrated probability for each label, and the router acts on the most
probable one (an out-of-scope label makes the router ask instead).

How a label is scored, and why (bench/classifier_bench.py measures each choice):

* Local centroids. An intent such as `act` spans lights, music, taxis and
  messages, so its global mean sits between clusters and is far from all of
  them. The centroid an utterance is compared with is pulled toward the
  label's examples nearest to it:
  c_l(q) = normalize((1 - w) * mean_l + w * mean(top-k_l(q))), k = 5, w = 0.7.
  On the external dev set this beat a plain k-nearest-neighbour vote and a
  logistic-regression head trained on the same ~9,000 examples (BENCHMARKS.md,
  "Classifier heads"): the head fits the bank's own phrasing, the local
  centroid generalises better to other people's.
* Calibration. The cosines are turned into probabilities by a softmax at
  temperature `temperature`, fitted (minimum log-loss) on the project's own
  held-out test utterances (tests/data/router_own), not on the dev set, so the
  gate's threshold reads as a probability.
* Exact matches. A text that, normalized, IS a labelled example takes that
  example's label with probability 1.0. The latest label wins, so a user's
  correction overrides a built-in example at once instead of nudging a
  centroid by 1/n.

`scores` keeps the raw cosine of every intent (the model's scale, for logs and
benches); `probabilities` is what decisions use. The built-in embeddings are
cached to a `.npy` in the cache directory, keyed by the examples' hash and the
model's fingerprint, so a warm start skips ~9,000 forward passes (~10 s).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import os
import re
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mavend import paths
from mavend.router.decision import PERSONAL_SOURCES, Intent, Source
from mavend.router.embedder import (
    MAX_CHARS,
    Embedder,
    HashingEmbedder,
    UseEmbedder,
    prepare_text,
)
from mavend.router.examples import (
    LABELS,
    OUT_OF_SCOPE,
    USER_EXAMPLES_FILENAME,
    Example,
    append_example,
    builtin_examples_dir,
    load_examples,
    read_builtin,
    read_examples,
)

__all__ = [
    "LABELS",
    "OUT_OF_SCOPE",
    "USER_EXAMPLES_FILENAME",
    "CentroidClassifier",
    "ClassifierResult",
    "Embedder",
    "Example",
    "HashingEmbedder",
    "UseEmbedder",
    "append_example",
    "builtin_examples_dir",
    "cached_embeddings",
    "load_examples",
]

log = logging.getLogger(__name__)

_CACHE_PREFIX = "intent-embeddings-"
# Bump when prepare_text or the cache layout changes: old files stop matching.
_CACHE_VERSION = "2"
CACHES_KEPT = 3  # bank vector files kept, the most recently used (~18 MB each)
_PUNCT = re.compile(r"[^\w\s]+", re.UNICODE)
_INTENTS: tuple[Intent, ...] = tuple(Intent)
# Fitted by bench/classifier_bench.py --calibrate on tests/data/router_own (never
# on shared/eval): the softmax temperature with the least log-loss there.
DEFAULT_TEMPERATURE = 0.03
# How far the source head's "general" must lead every personal source (cosine). Chosen
# on our own tests/data/router_source/queries.jsonl, the knee of the trade-off: 0.04 keeps
# 93 % of its general questions general and lets 4 % of its personal ones through
# (0.00: 97 % / 8 %; 0.05: 87 % / 4 %). BENCHMARKS.md has the table.
GENERAL_MARGIN = 0.04


@dataclass(frozen=True)
class Calibration:
    """What depends on an embedding's scale of cosines: the softmax temperature (fitted
    on our own held-out set) and the source head's general margin (on our own queries)."""

    temperature: float = DEFAULT_TEMPERATURE
    general_margin: float = GENERAL_MARGIN


USE_CALIBRATION = Calibration()
# USE joined with e5 (`[router] classifier_e5_model`): its cosines sit closer together, so
# both were fitted again the same way, on our own sets (bench/classifier_join.py): the
# least log-loss on tests/data/router_own, and the smallest margin that lets no more
# personal questions through as "general" than USE at 0.04 (3.9 % against 4.8 %, with
# 74.7 % of general questions kept general against 75.0 %).
USE_E5_CALIBRATION = Calibration(temperature=0.0075, general_margin=0.01)


@dataclass(frozen=True)
class ClassifierResult:
    intent: Intent  # the most probable intent (out-of-scope labels aside)
    confidence: float  # its calibrated probability (1.0 for an exact example match)
    scores: dict[Intent, float]  # cosine to each intent's local centroid (the model's scale)
    nearest: str  # the winning label's example most similar to the text ("" if none)
    # Calibrated probability of every label with examples, out-of-scope ones included.
    probabilities: dict[str, float] = field(default_factory=dict)
    # Where the answer would live if this is a question: the source head (the nearest
    # source among the bank's query examples, as for intents); "" without tagged examples.
    source: str = ""

    @property
    def label(self) -> str:
        """The most probable label: an intent, `unsupported` or `fragment`."""
        if not self.probabilities:
            return str(self.intent)
        return max(self.probabilities, key=self.probabilities.__getitem__)

    @property
    def out_of_scope(self) -> bool:
        return self.label in OUT_OF_SCOPE

    @property
    def margin(self) -> float:
        """Best probability minus the runner-up's: small means a near tie."""
        top = sorted(self.probabilities.values(), reverse=True)
        if len(top) < 2:
            return top[0] if top else 0.0
        return top[0] - top[1]

    def ranking(self) -> tuple[Intent, ...]:
        """The intents, most probable first."""
        probs = self.probabilities
        return tuple(sorted(self.scores, key=lambda i: -probs.get(str(i), 0.0)))


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
    with contextlib.suppress(OSError):  # used now: the newest to keep (`_write_cache`)
        os.utime(path)
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
    # The newest few are kept, not only this one: two embedders used in turn (USE alone
    # by `mavend eval`, USE joined to e5 by the daemon) each rebuilt the bank's vectors
    # (a minute on two cores) every time the other had run.
    paths.keep_recent(path, f"{_CACHE_PREFIX}*.npy", CACHES_KEPT)


# --------------------------------------------------------------------------- classifier


def _match_key(text: str) -> str:
    """What counts as 'the same utterance': case, punctuation and spacing ignored."""
    return " ".join(_PUNCT.sub(" ", prepare_text(text).casefold()).split())


@dataclass(frozen=True)
class _State:
    """An immutable snapshot; add_example swaps in a new one (copy-on-write)."""

    vectors: np.ndarray  # (n, dim) float32, unit rows
    labels: np.ndarray  # (n,) index into LABELS
    texts: tuple[str, ...]
    sums: np.ndarray  # (len(LABELS), dim) float64: running sum of each label's vectors
    counts: np.ndarray  # (len(LABELS),) int
    centroids: np.ndarray  # (len(LABELS), dim) float32: normalized sums (zero row: none)
    members: tuple[np.ndarray, ...]  # per label: row indices into vectors
    exact: Mapping[str, str]  # _match_key(text) -> latest label
    # The source head: per source, the rows of query examples tagged with it, and
    # their normalized mean. Examples the user adds carry no source; these stay.
    source_members: Mapping[str, np.ndarray]
    source_centroids: Mapping[str, np.ndarray]


class CentroidClassifier:
    """Local-centroid label classifier with calibrated probabilities; thread-safe.

    `classify` never raises for any string (empty, huge, control characters,
    emoji): empty or whitespace-only input has confidence 0.0 and the
    `fragment` label, so the gate asks. `add_example` updates the affected
    centroid incrementally and, when the classifier has a `user_file`,
    persists the example there first.
    """

    def __init__(
        self,
        embedder: Embedder,
        examples: Sequence[Example],
        *,
        embeddings: np.ndarray | None = None,
        user_file: Path | None = None,
        neighbours: int = 5,
        local_weight: float = 0.7,
        temperature: float = DEFAULT_TEMPERATURE,
        general_margin: float = GENERAL_MARGIN,
    ) -> None:
        if not any(e.in_scope for e in examples):
            raise ValueError("the classifier needs at least one labelled example of an intent")
        if neighbours < 0 or not 0.0 <= local_weight <= 1.0:
            raise ValueError("neighbours must be >= 0 and local_weight in [0, 1]")
        if not temperature > 0.0:
            raise ValueError("temperature must be positive")
        self.embedder = embedder
        self.user_file = user_file
        self.neighbours = neighbours
        self.local_weight = local_weight if neighbours > 0 else 0.0
        self.temperature = temperature
        self.general_margin = general_margin
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

        `builtin` is the bank's directory (default: the shipped one) or one
        JSONL file. `cache_dir` defaults to the user file's directory. User
        examples are embedded at every start: they are few, and caching them
        would invalidate the cache on every correction.
        """
        builtin_examples = read_builtin(builtin)
        user_examples = read_examples(user_file, strict=False) if user_file else []
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
        return [Example(t, LABELS[int(i)]) for t, i in zip(state.texts, state.labels, strict=True)]

    def classify(self, text: str) -> ClassifierResult:
        state = self._state  # one consistent snapshot, whatever add_example does meanwhile
        if not prepare_text(text):
            # Nothing to classify. CHAT has no side effect, and confidence 0.0
            # makes any gate ask rather than act on it.
            return ClassifierResult(Intent.CHAT, 0.0, {}, "", {"fragment": 1.0})
        query = self.embedder.embed([text])[0]
        sims = state.vectors @ query
        cosines = self._cosines(state, sims, query)
        exact = state.exact.get(_match_key(text))
        if exact is not None:
            probabilities = {label: float(label == exact) for label in cosines}
            probabilities[exact] = 1.0
        else:
            probabilities = _softmax(cosines, self.temperature)
        scores = {Intent(label): c for label, c in cosines.items() if label not in OUT_OF_SCOPE}
        intent = max(scores, key=lambda i: probabilities.get(str(i), 0.0))
        label = max(probabilities, key=probabilities.__getitem__)
        return ClassifierResult(
            intent=intent,
            confidence=probabilities.get(str(intent), 0.0),
            scores=scores,
            nearest=_nearest(state, sims, LABELS.index(label)),
            probabilities=probabilities,
            # Judged on every utterance: the decided intent may be a query even where
            # this classifier's top intent is not (the LLM's vote), and the head's
            # judgment still counts toward the personal boundary then.
            source=self._source(state, sims, query),
        )

    def _source(self, state: _State, sims: np.ndarray, query: np.ndarray) -> str:
        """The query's source: the local centroid nearest to it, as for the intents.

        "general" must win by `general_margin` over every personal source; closer than
        that, the nearest personal source is named. The head errs toward the user's
        own data because "general" is the judgment that widens (see personal.py)."""
        cosines = {
            source: float(self._mix(state, sims, rows, state.source_centroids[source]) @ query)
            for source, rows in state.source_members.items()
        }
        if not cosines:
            return ""
        best = max(cosines, key=cosines.__getitem__)
        personal = [s for s in cosines if Source(s) in PERSONAL_SOURCES]
        if best == Source.GENERAL and personal:
            runner_up = max(personal, key=cosines.__getitem__)
            if cosines[best] - cosines[runner_up] < self.general_margin:
                return runner_up
        return best

    def examples_near(self, text: str, labels: Sequence[str], k: int) -> list[tuple[str, str]]:
        """The `k` examples most similar to `text` among `labels`, most similar first."""
        state = self._state
        rows = np.concatenate([state.members[LABELS.index(str(label))] for label in labels])
        if len(rows) == 0 or not prepare_text(text):
            return []
        sims = state.vectors[rows] @ self.embedder.embed([text])[0]
        best = rows[np.argsort(-sims)[:k]]
        return [(state.texts[int(i)], LABELS[int(state.labels[int(i)])]) for i in best]

    def centroid_for(self, text: str, intent: Intent | str) -> np.ndarray:
        """The (unit) centroid `text` is compared with for `intent`: for tests and logs."""
        state = self._state
        query = self.embedder.embed([text])[0]
        return self._centroid(state, state.vectors @ query, LABELS.index(str(intent)))

    def add_example(self, text: str, intent: Intent | str) -> Example:
        """Learn one labelled utterance now; persist it to the user file if there is one."""
        example = Example(text=text.strip(), intent=str(intent))
        if not prepare_text(example.text):
            raise ValueError("an example needs some text")
        vector = self.embedder.embed([example.text])[0]
        with self._lock:
            if self.user_file is not None:
                # Disk first: if the write fails, memory and the file still agree.
                append_example(self.user_file, example)
            self._state = _with_example(self._state, example, vector)
        return example

    def _cosines(self, state: _State, sims: np.ndarray, query: np.ndarray) -> dict[str, float]:
        return {
            label: _clip(float(self._centroid(state, sims, i) @ query))
            for i, label in enumerate(LABELS)
            if state.counts[i] > 0
        }

    def _centroid(self, state: _State, sims: np.ndarray, i: int) -> np.ndarray:
        return self._mix(state, sims, state.members[i], state.centroids[i])

    def _mix(
        self, state: _State, sims: np.ndarray, rows: np.ndarray, centroid: np.ndarray
    ) -> np.ndarray:
        """The global centroid mixed with the mean of the k rows nearest the query."""
        if self.local_weight == 0.0 or len(rows) == 0:
            return centroid
        k = min(self.neighbours, len(rows))
        # argpartition: the k best without sorting the rest.
        best = rows[np.argpartition(-sims[rows], k - 1)[:k]]
        local = state.vectors[best].mean(axis=0)
        mixed = (1.0 - self.local_weight) * centroid + self.local_weight * local
        norm = float(np.linalg.norm(mixed))
        return (mixed / norm).astype(np.float32) if norm > 0 else centroid


def _softmax(cosines: dict[str, float], temperature: float) -> dict[str, float]:
    top = max(cosines.values())
    exp = {k: math.exp((v - top) / temperature) for k, v in cosines.items()}
    total = sum(exp.values())
    return {k: v / total for k, v in exp.items()}


def _clip(value: float) -> float:
    # int8 rounding can put a cosine a hair outside [-1, 1]; NaN never escapes.
    return 0.0 if math.isnan(value) else max(-1.0, min(1.0, value))


def _nearest(state: _State, sims: np.ndarray, i: int) -> str:
    rows = state.members[i]
    if len(rows) == 0:
        return ""
    return state.texts[int(rows[int(np.argmax(sims[rows]))])]


def _build_state(examples: Sequence[Example], vectors: np.ndarray) -> _State:
    labels = np.array([LABELS.index(e.intent) for e in examples], dtype=np.int64)
    sums = np.zeros((len(LABELS), vectors.shape[1]), dtype=np.float64)
    np.add.at(sums, labels, vectors.astype(np.float64))
    exact: dict[str, str] = {}
    for e in examples:  # in file order: the user's later lines override built-ins
        exact[_match_key(e.text)] = e.intent
    tagged = np.array([e.source for e in examples])
    source_members = {
        s: rows for s in sorted(set(tagged) - {""}) if len(rows := np.flatnonzero(tagged == s))
    }
    return _State(
        vectors=vectors,
        labels=labels,
        texts=tuple(e.text for e in examples),
        sums=sums,
        counts=np.bincount(labels, minlength=len(LABELS)),
        centroids=_normalize(sums),
        members=tuple(np.flatnonzero(labels == i) for i in range(len(LABELS))),
        exact=exact,
        source_members=source_members,
        source_centroids={
            s: _normalize(vectors[rows].sum(axis=0, keepdims=True))[0]
            for s, rows in source_members.items()
        },
    )


def _with_example(state: _State, example: Example, vector: np.ndarray) -> _State:
    """The state plus one example: only the affected centroid is recomputed."""
    i = LABELS.index(example.intent)
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
        source_members=state.source_members,
        source_centroids=state.source_centroids,
    )


def _normalize(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.where(norms == 0.0, 1.0, norms)).astype(np.float32)
