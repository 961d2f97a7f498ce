"""Benchmark the stage-1 intent classifier: latency, start-up, accuracy, clarify threshold.

    .venv/bin/python bench/classifier_bench.py [--model PATH] [--eval FILE] [--threads N]

Accuracy is measured on ../shared/eval/router_dev.jsonl (data nobody on the
project wrote; see its README). Only aggregates are printed: the eval rows are
for measuring, never for copying into the examples file.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mavend.router.classifier import (  # noqa: E402
    CentroidClassifier,
    ClassifierResult,
    builtin_examples_path,
    cached_embeddings,
    load_examples,
)
from mavend.router.decision import Intent  # noqa: E402
from mavend.router.embedder import MAX_CHARS, UseEmbedder, file_sha256  # noqa: E402

DEFAULT_EVAL = ROOT.parent / "shared" / "eval" / "router_dev.jsonl"
INTENTS = [str(i) for i in Intent]
# The variants compared: (label, neighbours, local_weight). The first is the
# classic nearest global centroid; the second is the shipped default.
VARIANTS: list[tuple[str, int, float]] = [
    ("global centroid (k=0)", 0, 0.0),
    ("local centroid k=3 w=0.7 (default)", 3, 0.7),
    ("local centroid k=5 w=0.7", 5, 0.7),
    ("nearest examples only k=3 w=1.0", 3, 1.0),
]


@dataclass(frozen=True)
class Row:
    text: str
    intent: str
    confidence: str
    alt: tuple[str, ...]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    model = args.model or default_model()
    rows = read_eval(args.eval)
    print_machine(args.threads)

    sha = file_sha256(model)
    started = time.perf_counter()
    embedder = UseEmbedder(model, threads=args.threads, sha256=sha)
    session_s = time.perf_counter() - started
    embedder.warm_up()
    examples = load_examples(builtin_examples_path(), None)
    print_settings(model, sha, args, len(examples))

    print_startup(embedder, session_s)
    print_latency(embedder, [r.text for r in rows])

    vectors = embedder.embed([e.text for e in examples])
    for label, k, w in VARIANTS:
        clf = CentroidClassifier(
            embedder, examples, embeddings=vectors, neighbours=k, local_weight=w
        )
        results = [clf.classify(r.text) for r in rows]
        print(f"\n=== accuracy: {label} ===")
        print_accuracy(rows, results, detailed=(k, w) == (3, 0.7))
    return 0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="the USE .onnx (default: mavend.models)")
    parser.add_argument("--eval", type=Path, default=DEFAULT_EVAL)
    parser.add_argument("--threads", type=int, default=1)
    return parser.parse_args(argv)


def default_model() -> Path:
    from mavend.models import require

    return require("use-multilingual-int8")


def read_eval(path: Path) -> list[Row]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            rows.append(
                Row(
                    obj["text"], obj["intent"], obj["confidence"], tuple(obj.get("alt_intents", ()))
                )
            )
    return rows


# --------------------------------------------------------------------------- reports


def print_machine(threads: int) -> None:
    import onnxruntime

    from mavend.machine import cpu_model

    cpu = cpu_model()
    print("=== machine ===")
    print(f"cpu: {cpu}; cores visible: {os.cpu_count()}; affinity: {len(os.sched_getaffinity(0))}")
    print(
        f"python {platform.python_version()}, onnxruntime {onnxruntime.__version__}, "
        f"numpy {np.__version__}, threads {threads}"
    )


def print_settings(model: Path, sha: str, args: argparse.Namespace, n_examples: int) -> None:
    print("\n=== settings ===")
    print(f"model: {model} (sha256 {sha[:16]}…, {model.stat().st_size:,} B)")
    print(f"input bound: {MAX_CHARS} chars; built-in examples: {n_examples}")
    print(f"eval: {args.eval}")


def print_startup(embedder: UseEmbedder, session_s: float) -> None:
    print("\n=== start-up ===")
    print(f"onnxruntime session load: {session_s * 1000:.0f} ms (OS file cache warm)")
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        cold = timed(lambda: CentroidClassifier.load(embedder, cache_dir=cache))
        warm = [timed(lambda: CentroidClassifier.load(embedder, cache_dir=cache)) for _ in range(5)]
        examples = load_examples(builtin_examples_path(), None)
        _, hit = cached_embeddings(embedder, examples, cache)
    print(f"classifier build, no cache (embeds every example): {cold * 1000:.0f} ms")
    print(
        f"classifier build, cache hit: {statistics.median(warm) * 1000:.1f} ms "
        f"(median of 5; hit={hit})"
    )
    print(
        f"total start-up: cold {(session_s + cold) * 1000:.0f} ms, "
        f"cached {(session_s + statistics.median(warm)) * 1000:.0f} ms"
    )


def print_latency(embedder: UseEmbedder, texts: list[str]) -> None:
    clf = CentroidClassifier.load(embedder)
    embed_ms = [timed(lambda t=t: embedder.embed([t])) * 1000 for t in texts]
    classify_ms = [timed(lambda t=t: clf.classify(t)) * 1000 for t in texts]
    long_text = "please turn on the lights in the kitchen and play some music " * 200
    long_ms = [timed(lambda: clf.classify(long_text)) * 1000 for _ in range(20)]
    print(f"\n=== latency, one utterance per call ({len(texts)} eval texts) ===")
    print(
        f"embed:    p50 {pct(embed_ms, 50):.2f} ms  p95 {pct(embed_ms, 95):.2f} ms  "
        f"max {max(embed_ms):.2f} ms"
    )
    print(
        f"classify: p50 {pct(classify_ms, 50):.2f} ms  p95 {pct(classify_ms, 95):.2f} ms  "
        f"max {max(classify_ms):.2f} ms  (target p95 <= 5 ms)"
    )
    print(
        f"classify a {len(long_text)}-char text (cut to {MAX_CHARS}): p50 {pct(long_ms, 50):.2f} ms"
    )


def print_accuracy(rows: list[Row], results: list[ClassifierResult], *, detailed: bool) -> None:
    pred = [str(r.intent) for r in results]
    high = [i for i, r in enumerate(rows) if r.confidence == "high"]
    inscope = [i for i, r in enumerate(rows) if r.intent != "oos"]
    strict = mean(pred[i] == rows[i].intent for i in high)
    lenient_in = mean(ok(rows[i], pred[i]) for i in inscope)
    lenient_all = mean(ok(rows[i], pred[i]) for i in range(len(rows)))
    print(f"strict (confidence=high, n={len(high)}): {strict:.3f}")
    print(
        f"lenient, in-scope rows (n={len(inscope)}): {lenient_in:.3f}; "
        f"all rows incl. oos (n={len(rows)}): {lenient_all:.3f}"
    )
    recall = {it: mean(pred[i] == it for i in inscope if rows[i].intent == it) for it in INTENTS}
    print("recall: " + "  ".join(f"{it} {v:.2f}" for it, v in recall.items()))
    if not detailed:
        return
    print_confusion(rows, pred)
    conf = np.array([r.confidence for r in results])
    margin = np.array([r.margin for r in results])
    is_oos = np.array([r.intent == "oos" for r in rows])
    correct = np.array([ok(r, p) for r, p in zip(rows, pred, strict=True)])
    print_distribution("top cosine (confidence)", conf, is_oos)
    print_distribution("margin (best - runner-up)", margin, is_oos)
    print_thresholds("confidence", conf, is_oos, ~is_oos)
    print_thresholds("margin", margin, is_oos, ~is_oos)
    # CLINC oos rows phrased as questions (confidence low, alt query) are ones a
    # general assistant should answer; the medium rows are the real "can't do".
    requests = is_oos & np.array([r.confidence == "medium" for r in rows])
    print(f"-- the same on non-question oos rows only (n={int(requests.sum())}):")
    print_thresholds("confidence", conf, requests, ~is_oos, brief=True)
    print_combined(conf, margin, is_oos, requests)
    print_gate(conf, correct, is_oos)


def print_confusion(rows: list[Row], pred: list[str]) -> None:
    counts = Counter((r.intent, p) for r, p in zip(rows, pred, strict=True))
    print("confusion (rows gold, columns predicted):")
    print("          " + " ".join(f"{p[:6]:>6}" for p in INTENTS))
    for gold in [*INTENTS, "oos"]:
        print(f"{gold:9s} " + " ".join(f"{counts[(gold, p)]:6d}" for p in INTENTS))


def print_distribution(name: str, values: np.ndarray, is_oos: np.ndarray) -> None:
    qs = (5, 25, 50, 75, 95)
    print(f"{name} percentiles {qs}:")
    for label, mask in (("in-scope", ~is_oos), ("oos", is_oos)):
        print(f"  {label:9s} " + "  ".join(f"{np.percentile(values[mask], q):.3f}" for q in qs))


def print_thresholds(
    name: str, values: np.ndarray, oos: np.ndarray, inscope: np.ndarray, *, brief: bool = False
) -> None:
    """Clarify when value < t: the rate on `oos` rows against the rate on `inscope` rows."""
    grid = np.round(np.arange(0.0, 1.0001, 0.01), 2)
    rates = [(t, mean(values[oos] < t), mean(values[inscope] < t)) for t in grid]
    meets = [r for r in rates if r[1] >= 0.60 and r[2] <= 0.05]
    print(f"clarify when {name} < t  (oos clarified / in-scope clarified):")
    for t, o, i in rates:
        shown = round(t * 100) % 5 == 0 and 0.0 < t < 1.0 and (o > 0.0 or i > 0.0) and i < 0.99
        if shown and not brief:
            print(f"  t={t:.2f}: {o:.2f} / {i:.2f}")
    if meets:
        t, o, i = meets[0]
        print(f"  -> t={t:.2f} meets >=60% oos / <=5% in-scope: {o:.2f} / {i:.2f}")
        return
    at5 = max((r for r in rates if r[2] <= 0.05), key=lambda r: r[1])
    at60 = min((r for r in rates if r[1] >= 0.60), key=lambda r: r[2])
    best = max(rates, key=lambda r: r[1] - r[2])
    print("  -> no t meets >=60% oos with <=5% in-scope. Trade-offs:")
    print(f"     in-scope <=5%: t={at5[0]:.2f} clarifies {at5[1]:.2f} of oos ({at5[2]:.2f} in)")
    print(f"     oos >=60%:     t={at60[0]:.2f} clarifies {at60[2]:.2f} of in-scope")
    print(f"     max (oos - in): t={best[0]:.2f}: {best[1]:.2f} / {best[2]:.2f}")


def print_combined(
    conf: np.ndarray, margin: np.ndarray, is_oos: np.ndarray, requests: np.ndarray
) -> None:
    """Clarify when confidence < a OR margin < b: best (a, b) with <=5% in-scope asked."""
    best: tuple[float, float, float, float, float] | None = None
    for a in np.round(np.arange(0.30, 0.61, 0.01), 2):
        for b in np.round(np.arange(0.0, 0.21, 0.01), 2):
            ask = (conf < a) | (margin < b)
            inscope = mean(ask[~is_oos])
            if inscope > 0.05:
                continue
            score = (mean(ask[is_oos]), mean(ask[requests]), inscope, a, b)
            if best is None or score[0] > best[0]:
                best = score
    if best is None:
        print("combined rule: nothing keeps in-scope clarify <= 5%")
        return
    o, req, i, a, b = best
    print(
        f"combined rule, clarify when confidence < {a:.2f} or margin < {b:.2f}: "
        f"oos {o:.2f} (non-question oos {req:.2f}) / in-scope {i:.2f}"
    )


def print_gate(conf: np.ndarray, correct: np.ndarray, is_oos: np.ndarray) -> None:
    """What the cascade's thresholds mean: coverage and accuracy above each."""
    print("in-scope rows answered when confidence >= t (coverage, lenient accuracy):")
    inscope = ~is_oos
    for t in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        above = inscope & (conf >= t)
        acc = mean(correct[above]) if above.any() else float("nan")
        print(f"  t={t:.1f}: coverage {mean(above[inscope]):.2f}, accuracy {acc:.3f}")


# --------------------------------------------------------------------------- helpers


def ok(row: Row, pred: str) -> bool:
    return pred == row.intent or pred in row.alt


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
