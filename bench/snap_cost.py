"""What the grammar snap costs a turn, and what it snaps, on a JSONL file of utterances.

    .venv/bin/python bench/snap_cost.py ../shared/eval/router_dev.jsonl [more.jsonl ...]

Each row's text goes through stage 0 as the cascade runs it: `grammar.match`, and for a
miss `grammar.snap` (router/snap.py). Printed: every snapped row (heard -> meant, the
command, the row's label) and the time of match plus snap per row, p50 / p95 / max.
Measures only; nothing is tuned here.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mavend import paths  # noqa: E402
from mavend.config import Settings  # noqa: E402
from mavend.machine import describe_machine  # noqa: E402
from mavend.router.grammar import CommandGrammar  # noqa: E402


def main(files: list[str]) -> int:
    settings = Settings()
    grammar = CommandGrammar.from_dir(paths.grammars_dir(), settings.acts,
                                      settings.router.wake_words)
    print(f"# machine: {describe_machine(load=True)}")
    for name in files:
        rows = [json.loads(line) for line in Path(name).read_text().splitlines() if line.strip()]
        snapped, times = 0, []
        for row in rows:
            text = row.get("text") or row.get("utterance") or ""
            started = time.perf_counter()
            found = grammar.snap(text) if grammar.match(text) is None else None
            times.append((time.perf_counter() - started) * 1000)
            if found is not None:
                snapped += 1
                print(f"  {text!r} -> {found.text!r} [{found.match.intent}.{found.match.name}]"
                      f" labelled {row.get('intent')}")
        times.sort()
        print(f"{name}: {len(rows)} rows, {snapped} snapped; match + snap p50 "
              f"{times[len(times) // 2]:.2f} ms, p95 {times[int(0.95 * len(times))]:.2f} ms, "
              f"max {times[-1]:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
