"""Benchmark the stage-1 classifier: latency, start-up, heads compared, calibration.

    .venv/bin/python bench/classifier_bench.py [--eval FILE] [--own DIR] [--threads N]

Heads compared over the same USE embeddings of the same bank
(mavend/data/intents): the global centroid, the local centroid (the shipped
head), a k-nearest-neighbour vote, and a softmax-regression head trained at
start-up (the issue's "logistic regression" option). Accuracy is measured on
the external dev file (../shared/eval/router_dev.jsonl, data nobody on the
project wrote) and on our own held-out utterances (tests/data/router_own).

Calibration: the softmax temperature that turns local-centroid cosines into
probabilities is fitted on our own held-out set (least log-loss), never on the
dev file; the bench prints the grid and then how well the fitted probabilities
hold on dev (accuracy per confidence bin, expected calibration error).
Only aggregates are printed: the eval rows are for measuring, never copying.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mavend.router.classifier import (  # noqa: E402
    DEFAULT_TEMPERATURE,
    LABELS,
    OUT_OF_SCOPE,
    CentroidClassifier,
    Example,
    load_examples,
)
from mavend.router.embedder import UseEmbedder, file_sha256  # noqa: E402

DEFAULT_EVAL = ROOT.parent / "shared" / "eval" / "router_dev.jsonl"
DEFAULT_OWN = ROOT / "tests" / "data" / "router_own"
WRITES = {"fact", "note", "reminder", "act"}
TEMPERATURES = (0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.05, 0.07, 0.1)


@dataclass(frozen=True)
class Row:
    text: str
    intent: str  # an intent, "oos" (dev) or "unsupported"/"fragment" (our own set)
    confidence: str = "high"
    alt: tuple[str, ...] = ()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    threadpool_limits(1, user_api="blas")  # as the product does (mavend/router/__init__.py)
    from mavend.models import require

    model = require("use-multilingual-int8")
    dev, own = read_rows(args.eval), read_own(args.own)
    print_machine(args.threads)
    sha = file_sha256(model)
    started = time.perf_counter()
    embedder = UseEmbedder(model, threads=args.threads, sha256=sha)
    session_s = time.perf_counter() - started
    embedder.warm_up()
    examples = load_examples(None, None)
    print(f"\nmodel {model.name} (sha256 {sha[:16]}…); bank: {len(examples)} examples")
    print(f"dev: {args.eval} ({len(dev)} rows); own held-out: {args.own} ({len(own)} rows)")
    print_startup(embedder, session_s)
    print_latency(embedder, [r.text for r in dev])

    bank = embedder.embed([e.text for e in examples])
    dev_x = embedder.embed([r.text for r in dev])
    own_x = embedder.embed([r.text for r in own])
    labels = np.array([LABELS.index(e.intent) for e in examples])
    print("\n=== heads (no grammar, no gate: the classifier's own label) ===")
    print(f"{'head':44s} {'dev strict':>10} {'lenient':>8} {'oos ask':>8} {'harm':>6} {'own':>6}")
    heads: dict[str, Callable[[np.ndarray], list[str]]] = {
        "global centroid": lambda x: centroid(bank, labels, x, k=0, w=0.0),
        "local centroid k=3 w=0.7 (first wave)": lambda x: centroid(bank, labels, x, k=3, w=0.7),
        "local centroid k=5 w=0.7 (shipped)": lambda x: centroid(bank, labels, x, k=5, w=0.7),
        "k-nearest-neighbour vote k=8": lambda x: knn(bank, labels, x, k=8),
    }
    trained = timed(lambda: heads.update(softmax_head(bank, labels)))
    for name, predict in heads.items():
        print(f"{name:44s} {report(dev, predict(dev_x))}  {own_accuracy(own, predict(own_x)):.3f}")
    print(f"(softmax-regression head: trained in {trained:.1f} s on 2 cores, 400 Adam steps)")
    print_calibration(embedder, examples, dev, own)
    return 0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval", type=Path, default=DEFAULT_EVAL)
    parser.add_argument("--own", type=Path, default=DEFAULT_OWN)
    parser.add_argument("--threads", type=int, default=1)
    return parser.parse_args(argv)


def read_rows(path: Path) -> list[Row]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        rows.append(
            Row(obj["text"], obj["intent"], obj["confidence"], tuple(obj.get("alt_intents", ())))
        )
    return rows


def read_own(directory: Path) -> list[Row]:
    return [
        Row(obj["text"], obj["intent"])
        for path in sorted(directory.glob("*.jsonl"))
        for obj in map(json.loads, path.read_text(encoding="utf-8").splitlines())
    ]


# --------------------------------------------------------------------------- heads


def centroid(bank: np.ndarray, labels: np.ndarray, x: np.ndarray, *, k: int, w: float) -> list[str]:
    means = np.stack([unit(bank[labels == i].mean(0)) for i in range(len(LABELS))])
    sims = x @ bank.T
    out = []
    for q, s in zip(x, sims, strict=True):
        best, best_cos = 0, -2.0
        for i in range(len(LABELS)):
            rows = np.flatnonzero(labels == i)
            c = means[i]
            if k:
                top = rows[np.argsort(-s[rows])[:k]]
                c = unit((1 - w) * means[i] + w * bank[top].mean(0))
            if float(c @ q) > best_cos:
                best, best_cos = i, float(c @ q)
        out.append(LABELS[best])
    return out


def knn(bank: np.ndarray, labels: np.ndarray, x: np.ndarray, *, k: int) -> list[str]:
    sims = x @ bank.T
    out = []
    for s in sims:
        top = np.argsort(-s)[:k]
        votes = np.bincount(labels[top], weights=s[top], minlength=len(LABELS))
        out.append(LABELS[int(votes.argmax())])
    return out


def softmax_head(bank: np.ndarray, labels: np.ndarray) -> dict[str, Callable]:
    """Multinomial logistic regression (L2 1e-4), full-batch Adam."""
    n, d = bank.shape
    k = len(LABELS)
    weights, bias = np.zeros((d, k)), np.zeros(k)
    target = np.eye(k)[labels]
    moments = [np.zeros_like(weights), np.zeros_like(weights), np.zeros(k), np.zeros(k)]
    for step in range(1, 401):
        z = bank @ weights + bias
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        grad = (p - target) / n
        for j, (param, g) in enumerate(
            ((weights, bank.T @ grad + 1e-4 * weights), (bias, grad.sum(0)))
        ):
            m, v = moments[2 * j], moments[2 * j + 1]
            m[:] = 0.9 * m + 0.1 * g
            v[:] = 0.999 * v + 0.001 * g * g
            param -= 0.05 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return {
        "softmax-regression head": lambda x: [LABELS[i] for i in (x @ weights + bias).argmax(1)]
    }


# --------------------------------------------------------------------------- scoring


def verdict(row: Row, label: str) -> tuple[bool, bool]:
    """(strictly right, leniently right) for one dev row."""
    asked = label in OUT_OF_SCOPE
    exact = asked if row.intent == "oos" else label == row.intent
    return exact, exact or (not asked and label in row.alt)


def report(rows: list[Row], labels: list[str]) -> str:
    strict = [verdict(r, p)[0] for r, p in zip(rows, labels, strict=True) if r.confidence == "high"]
    lenient = [verdict(r, p)[1] for r, p in zip(rows, labels, strict=True)]
    oos = [p for r, p in zip(rows, labels, strict=True) if r.intent == "oos"]
    asked = mean(p in OUT_OF_SCOPE for p in oos)
    harm = mean(p in WRITES for p in oos)
    return f"{mean(strict):10.3f} {mean(lenient):8.3f} {asked:8.2f} {harm:6.2f}"


def own_accuracy(rows: list[Row], labels: list[str]) -> float:
    def same(a: str, b: str) -> bool:
        return a == b or (a in OUT_OF_SCOPE and b in OUT_OF_SCOPE)

    return mean(same(r.intent, p) for r, p in zip(rows, labels, strict=True))


# --------------------------------------------------------------------------- calibration


def print_calibration(
    embedder: UseEmbedder, examples: list[Example], dev: list[Row], own: list[Row]
) -> None:
    clf = CentroidClassifier(embedder, examples)
    print("\n=== calibration: softmax temperature, fitted on our own held-out set ===")
    own_cos = [cosines(clf, r.text) for r in own]
    for t in TEMPERATURES:
        nll = mean(
            -math.log(max(softmax(c, t).get(r.intent, 0.0), 1e-12))
            for c, r in zip(own_cos, own, strict=True)
        )
        mark = "  <- shipped (DEFAULT_TEMPERATURE)" if t == DEFAULT_TEMPERATURE else ""
        print(f"  T={t:<6} log-loss {nll:.4f}{mark}")
    print("on dev, in-scope high rows, the shipped probabilities: accuracy per confidence bin")
    results = [(clf.classify(r.text), r) for r in dev if r.confidence == "high"]
    bins = [(0.0, 0.35), (0.35, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01)]
    ece = 0.0
    for lo, hi in bins:
        inside = [(res, r) for res, r in results if lo <= max(res.probabilities.values()) < hi]
        if not inside:
            continue
        conf = mean(max(res.probabilities.values()) for res, _ in inside)
        acc = mean(res.label == r.intent for res, r in inside)
        ece += len(inside) / len(results) * abs(acc - conf)
        print(
            f"  [{lo:.2f}, {min(hi, 1.0):.2f}): n={len(inside):4d}  "
            f"mean p {conf:.3f}  accuracy {acc:.3f}"
        )
    print(f"  expected calibration error on dev: {ece:.3f}")


def cosines(clf: CentroidClassifier, text: str) -> dict[str, float]:
    state = clf._state
    query = clf.embedder.embed([text])[0]
    return clf._cosines(state, state.vectors @ query, query)


def softmax(c: dict[str, float], t: float) -> dict[str, float]:
    top = max(c.values())
    e = {k: math.exp((v - top) / t) for k, v in c.items()}
    total = sum(e.values())
    return {k: v / total for k, v in e.items()}


# --------------------------------------------------------------------------- latency


def print_machine(threads: int) -> None:
    import onnxruntime

    from mavend.machine import describe_machine

    print("=== machine ===")
    print(f"{describe_machine()}; affinity {len(os.sched_getaffinity(0))} cores")
    print(
        f"python {platform.python_version()}, onnxruntime {onnxruntime.__version__}, "
        f"numpy {np.__version__}, onnx threads {threads}, BLAS threads 1"
    )


def print_startup(embedder: UseEmbedder, session_s: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        cold = timed(lambda: CentroidClassifier.load(embedder, cache_dir=cache))
        warm = [timed(lambda: CentroidClassifier.load(embedder, cache_dir=cache)) for _ in range(3)]
    print("\n=== start-up ===")
    print(
        f"onnxruntime session {session_s * 1000:.0f} ms; classifier build: no cache "
        f"{cold * 1000:.0f} ms (embeds every example), "
        f"cached {statistics.median(warm) * 1000:.0f} ms"
    )


def print_latency(embedder: UseEmbedder, texts: list[str]) -> None:
    clf = CentroidClassifier.load(embedder)
    for text in texts[:20]:
        clf.classify(text)
    ms = [timed(lambda t=t: clf.classify(t)) * 1000 for t in texts]
    print(f"\n=== latency, classify one utterance ({len(texts)} dev texts) ===")
    print(
        f"p50 {pct(ms, 50):.2f} ms  p95 {pct(ms, 95):.2f} ms  max {max(ms):.2f} ms "
        "(target p95 <= 5 ms)"
    )


# --------------------------------------------------------------------------- helpers


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def mean(values: object) -> float:
    seq = [float(v) for v in values]  # type: ignore[attr-defined]
    return sum(seq) / len(seq) if seq else float("nan")


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


if __name__ == "__main__":
    raise SystemExit(main())
