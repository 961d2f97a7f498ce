"""The classifier on USE joined with multilingual-e5-small: what its scale of cosines needs
(the softmax temperature, the source head's general margin), fitted the way USE's were, on
our own sets only, then both classifiers side by side.

    .venv/bin/python bench/classifier_join.py

* temperature: least log-loss on tests/data/router_own (as bench/classifier_bench.py);
* general margin: on tests/data/router_source/queries.jsonl, the smallest margin that lets
  no more of the personal questions through as "general" than USE's 0.04 does;
* then, per embedding, the classifier's decided label (probabilities, the gate's 0.35
  threshold, out-of-scope labels asking) on the dev file's strict rows and on our own
  held-out rows, the source head on the queries, and the time per utterance.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mavend.models import require  # noqa: E402
from mavend.router.classifier import (  # noqa: E402
    OUT_OF_SCOPE,
    USE_CALIBRATION,
    Calibration,
    CentroidClassifier,
)
from mavend.router.embedder import (  # noqa: E402
    E5_WEIGHT,
    E5Embedder,
    JoinedEmbedder,
    UseEmbedder,
)
from mavend.router.examples import read_builtin  # noqa: E402

DEV = ROOT.parent / "shared" / "eval" / "router_dev.jsonl"
OWN = ROOT / "tests" / "data" / "router_own"
QUERIES = ROOT / "tests" / "data" / "router_source" / "queries.jsonl"
TEMPERATURES = (0.004, 0.005, 0.006, 0.0075, 0.01, 0.0125, 0.015, 0.02, 0.03)
MARGINS = (0.0, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05)
THRESHOLD = 0.35  # [router] clarify_threshold


class Cached:
    """An embedder that remembers what it embedded (the sets are read several times)."""

    def __init__(self, inner) -> None:
        self.inner, self.dim, self.memo = inner, inner.dim, {}
        self.fingerprint = inner.fingerprint

    def embed(self, texts):
        todo = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if todo:
            self.memo.update(zip(todo, self.inner.embed(todo), strict=True))
        return np.stack([self.memo[t] for t in texts])


def rows(path: Path) -> list[dict]:
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    return [json.loads(line) for f in files for line in f.open() if line.strip()]


def decided(clf: CentroidClassifier, text: str) -> str:
    result = clf.classify(text)
    if result.out_of_scope or max(result.probabilities.values()) < THRESHOLD:
        return "ask"
    return result.label


def right(want: str, got: str) -> bool:
    if want in ("oos", *OUT_OF_SCOPE):
        return got == "ask"
    return got == want


def fit_temperature(clf: CentroidClassifier, own: list[dict]) -> float:
    state = clf._state
    losses = {}
    for t in TEMPERATURES:
        loss = 0.0
        for row in own:
            query = clf.embedder.embed([row["text"]])[0]
            cos = clf._cosines(state, state.vectors @ query, query)
            top = max(cos.values())
            exp = {k: math.exp((v - top) / t) for k, v in cos.items()}
            loss -= math.log(max(exp.get(row["intent"], 0.0) / sum(exp.values()), 1e-12))
        losses[t] = loss / len(own)
        print(f"  T={t:<7} log-loss {losses[t]:.4f}")
    return min(losses, key=losses.__getitem__)


def source_head(clf: CentroidClassifier, queries: list[dict]) -> tuple[float, float, float]:
    judged = [(q, clf.classify(q["text"])) for q in queries]
    asked = [(q, r) for q, r in judged if r.label == "query"]
    right_source = sum(r.source == q["answer_source"] for q, r in asked) / len(asked)
    personal = [r for q, r in asked if q["personal"]]
    general = [r for q, r in asked if not q["personal"]]
    through = sum(r.source == "general" for r in personal) / len(personal)
    kept = sum(r.source == "general" for r in general) / len(general)
    return right_source, through, kept


def main() -> int:
    threadpool_limits(1, user_api="blas")
    bank = read_builtin(None)
    dev = [r for r in rows(DEV) if r.get("confidence", "high") == "high"]
    own, queries = rows(OWN), rows(QUERIES)
    use = UseEmbedder(require("use-multilingual-int8"))
    joined = JoinedEmbedder(use, E5Embedder(require("multilingual-e5-small")), E5_WEIGHT)
    print(f"bank {len(bank)}; dev strict {len(dev)}; own {len(own)}; queries {len(queries)}")
    fitted = {}
    for name, embedder, calibration in (("USE", use, USE_CALIBRATION), ("USE+e5", joined, None)):
        cached = Cached(embedder)
        clf = CentroidClassifier(cached, bank)
        if calibration is None:
            print(f"{name}: temperature, least log-loss on our own held-out set")
            temperature = fit_temperature(clf, own)
            print(f"{name}: general margin on our own queries (as few personal let through)")
            clf.general_margin = USE_CALIBRATION.general_margin
            use_through = fitted["USE"][1][1]
            margin = MARGINS[-1]
            for m in MARGINS:
                clf.general_margin = m
                right_source, through, kept = source_head(clf, queries)
                print(f"  margin {m:<6} source right {right_source:.3f}  personal called general "
                      f"{through:.3f}  general kept general {kept:.3f}")  # fmt: skip
                if through <= use_through and margin == MARGINS[-1]:
                    margin = m
            calibration = Calibration(temperature, margin)
            print(f"{name}: fitted {calibration}")
        clf.temperature, clf.general_margin = calibration.temperature, calibration.general_margin
        started = time.perf_counter()
        embedder.embed([r["text"] for r in dev[:100]])
        per_text_ms = (time.perf_counter() - started) * 10
        dev_acc = np.mean([right(r["intent"], decided(clf, r["text"])) for r in dev])
        own_acc = np.mean([right(r["intent"], decided(clf, r["text"])) for r in own])
        fitted[name] = (calibration, source_head(clf, queries), dev_acc, own_acc, per_text_ms)
    print("\nembedding  calibration                                  dev     own     "
          "source  personal->general  general kept  ms/utterance")  # fmt: skip
    for name, (cal, (src, through, kept), dev_acc, own_acc, ms) in fitted.items():
        print(f"{name:<10} T={cal.temperature:<7} margin={cal.general_margin:<6}        "
              f"{100 * dev_acc:5.1f} % {100 * own_acc:5.1f} %  {100 * src:5.1f} %  "
              f"{100 * through:5.1f} %           {100 * kept:5.1f} %      {ms:.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
