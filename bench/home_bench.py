"""The home benchmark: the generated homes' requests through mavend, judged by the end state
the Home Assistant stand-in is left in (runner and judge: bench/home_bench_kit.py; data:
tests/data/homes/, made by `python -m tests.ha_home.make_homes`).

Each home is served by the stateful stand-in, imported with `mavend home import`'s code,
and every request said to the real assistant in process (LLM off unless --llm). Prints
the pass rate per class (HA domain), per kind and per home, and the turn latency.

    .venv/bin/python bench/home_bench.py                        # all three homes, LLM off
    .venv/bin/python bench/home_bench.py --home flat_small --show-failures 20
    .venv/bin/python bench/home_bench.py --home house_mid --llm --json /tmp/home.json
    .venv/bin/python bench/home_bench.py --home villa_big --request villa_big-004 --progress

Heavy (loads the classifier, and the LLM with --llm): on a shared box, `nice -n 19`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.home_bench_kit import (  # noqa: E402
    HOMES,
    HOMES_DIR,
    HomeRun,
    RequestResult,
    load_requests,
    run_home,
)


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _rate(results: Sequence[RequestResult]) -> str:
    if not results:
        return "-"
    passed = sum(r.passed for r in results)
    return f"{passed}/{len(results)} {100 * passed / len(results):3.0f}%"


def breakdown(runs: Sequence[HomeRun], key: str) -> str:
    """Rows: each value of `key` (class or kind); columns: each home, then all."""
    homes = [run.home for run in runs]
    cells: dict[str, dict[str, list[RequestResult]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        for result in run.results:
            value = result.request.cls if key == "class" else result.request.kind
            cells[value][run.home].append(result)
            cells[value]["all"].append(result)
    columns = [*homes, "all"] if len(homes) > 1 else homes
    width = max(14, *(len(c) + 2 for c in columns))
    lines = [f"{key:<14}" + "".join(f"{c:>{width}}" for c in columns)]
    order = sorted(cells, key=lambda v: (-len(cells[v]["all"]), v))
    for value in order:
        lines.append(
            f"{value:<14}" + "".join(f"{_rate(cells[value][c]):>{width}}" for c in columns)
        )
    return "\n".join(lines)


def per_home(runs: Sequence[HomeRun]) -> str:
    lines = [
        f"{'home':<12}{'entities':>9}{'devices':>8}{'requests':>9}{'passed':>14}"
        f"{'p50 ms':>8}{'p95 ms':>8}{'acts run':>9}"
    ]
    every: list[RequestResult] = []
    for run in runs:
        every += run.results
        lines.append(
            _home_line(run.home, run.imported.entities, len(run.imported.devices), run.results)
        )
    if len(runs) > 1:
        lines.append(
            _home_line(
                "all",
                sum(r.imported.entities for r in runs),
                sum(len(r.imported.devices) for r in runs),
                every,
            )
        )
    return "\n".join(lines)


def _home_line(name: str, entities: int, devices: int, results: Sequence[RequestResult]) -> str:
    turns = [ms for r in results for ms in r.turn_ms]
    acts = sum(bool(r.acts) for r in results)
    return (
        f"{name:<12}{entities:>9}{devices:>8}{len(results):>9}{_rate(results):>14}"
        f"{percentile(turns, 0.5):>8.0f}{percentile(turns, 0.95):>8.0f}{acts:>9}"
    )


def failure_text(result: RequestResult) -> str:
    r = result.request
    lines = [
        f"FAIL {r.id} [{r.cls}/{r.kind}] {r.text!r}" + (f" + {r.confirm!r}" if r.confirm else "")
    ]
    for reply, route in zip(result.replies, result.routes, strict=False):
        lines.append(f"     {route}: {reply!r}")
    lines += [f"     - {problem}" for problem in result.problems]
    return "\n".join(lines)


def report(runs: Sequence[HomeRun], llm: bool, wall_s: float) -> str:
    parts = [
        f"home benchmark, LLM {'on' if llm else 'off'}, wall {wall_s:.0f} s",
        "",
        per_home(runs),
        "",
        breakdown(runs, "class"),
        "",
        breakdown(runs, "kind"),
        "",
        "acts run: requests that reached an allowlisted program (replaced by a harmless one "
        "here), e.g. a door lock taken for the screen lock.",
    ]
    for run in runs:
        skipped = [line for line in run.imported.summary() if "cannot control yet" in line]
        parts.append(f"{run.home} import: {' '.join(run.imported.summary()[:1] + skipped)}")
    return "\n".join(parts)


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--home", choices=[*HOMES, "all"], default="all")
    parser.add_argument("--llm", action="store_true", help="the router's LLM on (default off)")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the raw results here")
    parser.add_argument(
        "--show-failures", type=int, default=0, metavar="N", help="print N failures"
    )
    parser.add_argument("--request", action="append", default=[], metavar="ID", help="only this id")
    parser.add_argument("--limit", type=int, default=0, metavar="N", help="first N per home")
    parser.add_argument("--progress", action="store_true", help="a line per request on stderr")
    parser.add_argument(
        "--data",
        type=Path,
        default=HOMES_DIR,
        metavar="DIR",
        help="where <home>.json and <home>.requests.jsonl are (default tests/data/homes)",
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    homes = HOMES if args.home == "all" else (args.home,)

    def progress(result: RequestResult) -> None:
        mark = "ok  " if result.passed else "FAIL"
        print(
            f"{mark} {result.request.id} {sum(result.turn_ms):6.0f} ms", file=sys.stderr, flush=True
        )

    started = time.monotonic()
    runs: list[HomeRun] = []
    with tempfile.TemporaryDirectory(prefix="home-bench-") as tmp:
        for home in homes:
            requests = load_requests(home, args.data)
            if args.request:
                requests = [r for r in requests if r.id in args.request]
            if args.limit:
                requests = requests[: args.limit]
            runs.append(
                run_home(
                    home,
                    Path(tmp),
                    requests=requests,
                    llm=args.llm,
                    data_dir=args.data,
                    progress=progress if args.progress else None,
                )
            )
    wall_s = time.monotonic() - started
    print(report(runs, args.llm, wall_s))
    failures = [r for run in runs for r in run.results if not r.passed]
    for result in failures[: args.show_failures]:
        print(failure_text(result))
    if args.json:
        turns = [ms for run in runs for r in run.results for ms in r.turn_ms]
        args.json.write_text(
            json.dumps(
                {
                    "llm": args.llm,
                    "wall_s": round(wall_s, 1),
                    "p50_ms": round(percentile(turns, 0.5), 1),
                    "p95_ms": round(percentile(turns, 0.95), 1),
                    "mean_ms": round(statistics.fmean(turns), 1) if turns else 0.0,
                    "homes": {
                        run.home: {
                            "entities": run.imported.entities,
                            "devices": len(run.imported.devices),
                            "import_summary": run.imported.summary(),
                            "warmup_ms": round(run.warmup_ms, 1),
                        }
                        for run in runs
                    },
                    "results": [r.to_json() for run in runs for r in run.results],
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
