"""Record what each decider says about every row of an eval file, for policy study.

For each row: the grammar match (if any), the classifier's scores, and the LLM's
intent probabilities (all seven), with timings. The policy in
`mavend/router/cascade.py` is then chosen from these signals on the dev file,
with few parameters, and checked on held-out data by whoever holds it.

    .venv/bin/python bench/router_signals.py ../shared/eval/router_dev.jsonl \
        > bench/out/router_signals_dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from mavend.clock import system_clock, user_timezone
from mavend.config import Settings
from mavend.router import build_router
from mavend.router.evaluate import read_rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file", type=Path)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    settings = Settings()
    router = build_router(settings, clock=system_clock(user_timezone("")))
    started = time.perf_counter()
    router.warm_up()
    print(f"# warm-up {time.perf_counter() - started:.1f} s", file=sys.stderr)
    rows = read_rows(args.file)[: args.limit or None]
    for index, row in enumerate(rows, 1):
        match = router.grammar.match(row.text)
        text = router.grammar.strip_wake_word(row.text)
        t0 = time.perf_counter()
        clf = router.classifier.classify(text)
        t1 = time.perf_counter()
        llm, error = None, ""
        try:
            llm = router.llm.route(text)
        except Exception as exc:  # record, like the cascade would fall through
            error = f"{type(exc).__name__}: {exc}"
        t2 = time.perf_counter()
        print(json.dumps({
            "text": row.text, "gold": row.intent, "confidence": row.confidence,
            "alt": list(row.alt_intents),
            "grammar": f"{match.intent}.{match.name}" if match else None,
            "clf": {"intent": str(clf.intent), "conf": clf.confidence,
                    "scores": {str(k): v for k, v in clf.scores.items()}},
            "llm": None if llm is None else {
                "intent": str(llm.intent), "conf": llm.confidence,
                "alts": {str(i): p for i, p in llm.alternatives}},
            "llm_error": error,
            "ms": {"classifier": (t1 - t0) * 1000, "llm": (t2 - t1) * 1000},
        }), flush=True)
        if index % 50 == 0:
            print(f"# {index}/{len(rows)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
