"""Recall's floor against the embedder it is given: USE alone, or USE joined with e5.

    .venv/bin/python bench/recall_floor.py

Recall keeps a stored row only when its cosine with the question (plus a small bonus per
shared content word) reaches MIN_SCORE (mavend/handlers/recall.py, 0.42, measured on
USE). The pairs here are this file's own: questions with the stored row that answers
them, and questions with rows that do not. Printed: each pair's cosine under both
embedders, and how many unrelated pairs clear the floor under each.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mavend.config import parse_settings
from mavend.handlers.recall import MIN_SCORE
from mavend.router import build_router

RELATED = [
    ("where's my car", "my car is in bay 42"),
    ("what's the wifi password", "the wifi password is sunflower22"),
    ("when is the plumber coming", "the plumber comes on friday"),
    ("where's the spare key", "the spare key is under the blue pot"),
    ("what's my locker code", "my locker code is 4419"),
    ("when is bin day", "the bin day is thursday"),
]
UNRELATED = [
    ("what's my credit score", "i took my blood pressure pills"),
    ("what's my credit score", "my car is in bay 42"),
    ("where's the nearest pharmacy", "my car is in bay 42"),
    ("spell necessary", "i took my blood pressure pills"),
    ("what's our wifi password", "i took my blood pressure pills"),
    ("when is the plumber coming", "my locker code is 4419"),
    ("what time is sunset", "the bin day is thursday"),
    ("how far is it to london", "the spare key is under the blue pot"),
]


def cosine(embedder, a: str, b: str) -> float:
    x, y = embedder.embed([a, b])
    return float(np.dot(x, y) / np.linalg.norm(x) / np.linalg.norm(y))


def main() -> None:
    settings = parse_settings(
        '[router]\nllm_enabled = false\nclassifier_e5_model = "multilingual-e5-small"\n'
    )
    router = build_router(settings, clock=lambda: datetime.now(UTC))
    joined = router.classifier.get().embedder
    use = joined.parts[0]
    print(f"floor {MIN_SCORE}; cosines: USE alone | USE joined with e5 ({joined.fingerprint})")
    over = {"use": 0, "joined": 0}
    for label, pairs in (("related", RELATED), ("unrelated", UNRELATED)):
        print(f"\n{label}")
        for question, row in pairs:
            a, b = cosine(use, question, row), cosine(joined, question, row)
            print(f"  {a:5.3f} | {b:5.3f}   {question!r} ~ {row!r}")
            if label == "unrelated":
                over["use"] += a >= MIN_SCORE
                over["joined"] += b >= MIN_SCORE
    print(f"\nunrelated pairs at or over the floor: USE {over['use']}/{len(UNRELATED)}, "
          f"joined {over['joined']}/{len(UNRELATED)}")


if __name__ == "__main__":
    main()
