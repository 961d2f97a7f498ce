"""The everyday-request suite (tests/data/everyday/*.jsonl) through the real daemon.

Every case is said over D-Bus to the real daemon (real router, real classifier, the
real local LLM under the default policy) on a private session bus, and judged by the
end state it leaves (tests/everyday_kit.py). Prints cases, passed and rate per family.

    python bench/everyday_bench.py                 # every family
    python bench/everyday_bench.py --family negation --family lists --verbose
    python bench/everyday_bench.py --json          # machine-readable
    python bench/everyday_bench.py --case tim-014 --verbose
    python bench/everyday_bench.py --shuffle 7     # the same results in another order

Heavy (loads the models): run it under `flock /tmp/mavend-heavy.lock`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.everyday_kit import (  # noqa: E402
    DATA,
    FAMILIES,
    CaseResult,
    failure_text,
    private_session_bus,
    run_suite,
    table,
    to_json,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append", choices=FAMILIES, help="repeatable")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--verbose", action="store_true", help="show each failure")
    parser.add_argument("--progress", action="store_true", help="a line per case on stderr")
    parser.add_argument("--case", action="append", default=[], help="only this case id")
    parser.add_argument("--shuffle", type=int, metavar="SEED", help="cases in a random order")
    parser.add_argument("--data", type=Path, default=DATA, help="the cases' directory")
    parser.add_argument(
        "--daemon-per-family", action="store_true", help="a fresh daemon for each family"
    )
    args = parser.parse_args(argv)
    families = tuple(args.family or FAMILIES)

    def progress(result: CaseResult) -> None:
        mark = "ok  " if result.passed else "FAIL"
        print(f"{mark} {result.case.id} {result.seconds:5.1f}s", file=sys.stderr, flush=True)

    import mavend

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="everyday-") as tmp:
        work = Path(tmp)
        # The daemon's config and data stay in this run's own directory.
        os.environ["MAVEND_CONFIG_DIR"] = str(work / "config")
        os.environ["MAVEND_DATA_DIR"] = str(work / "data")
        with private_session_bus(work):
            reports = run_suite(
                families,
                data_dir=args.data,
                workdir=work,
                daemon_per_family=args.daemon_per_family,
                progress=progress if args.progress else None,
                case_ids=args.case,
                shuffle_seed=args.shuffle,
            )
    wall_s = time.monotonic() - started
    result = to_json(reports)
    result["wall_s"] = round(wall_s, 1)
    result["mavend"] = mavend.__file__
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"mavend from {mavend.__file__}")
    print(table(reports))
    print(
        f"wall {wall_s:.0f} s; {result['turns']} turns, {result['llm_turns']} decided with the"
        f" LLM; the slowest reset between cases {result['reset_max_s']:.2f} s"
    )
    if args.verbose:
        for report in reports:
            for failure in report.failures():
                print(failure_text(failure))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
