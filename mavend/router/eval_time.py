"""`mavend eval time FILE.jsonl`: measure the time resolver on labelled rows.

Row format (see shared/eval/README.md, section datetime_eval):
    {text, reference, expected, expected_type, expected_any?, span?, grain?, duration_seconds?}

Each row's whole `text` goes through `find_time`, as the product sees whole
utterances; that is the headline accuracy. When a row has a `span`, the span
alone also goes through `resolve_time` (reported as span_accuracy), which tells
"could not find it" apart from "found it, resolved it wrong".

Scoring:
- `YYYY-MM-DD` (date): the resolved date must match.
- `YYYY-MM-DDTHH:MM:SS[+hh:mm]` (datetime): the instant must match; with an
  offset the comparison is between absolute instants, without one it is on the
  wall clock. A row's `grain` (Duckling's) truncates both sides first: "a day
  from now" at grain hour is right at 04:30 when 04:00 is expected.
- `HH:MM:SS` (time): the time of day must match.
- an ISO duration (`PT20M`): the resolved span (or when - reference) must equal
  `duration_seconds`; calendar months and years vary in length, so a span that
  has them may be off by 7 %.
- `expected_any`: any of the listed values is right.
A row whose `reference` is null resolves against the start of the current
local day: those rows are context-free times of day ("at 7" is 07:00) and
durations, and midnight keeps the score the same whatever the hour of the run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mavend.language.timeparse import TimeResolution, find_time, local_zone, resolve_time

_ISO_DURATION = re.compile(
    r"^P(?:(?P<y>[\d.]+)Y)?(?:(?P<mo>[\d.]+)M)?(?:(?P<w>[\d.]+)W)?(?:(?P<we>[\d.]+)WE)?"
    r"(?:(?P<bd>[\d.]+)BD)?(?:(?P<d>[\d.]+)D)?"
    r"(?:T(?:(?P<h>[\d.]+)H)?(?:(?P<mi>[\d.]+)M)?(?:(?P<s>[\d.]+)S)?)?$"
)
_DURATION_SECONDS = {
    "y": 365 * 86400, "mo": 30 * 86400, "w": 7 * 86400, "we": 2 * 86400, "bd": 86400,
    "d": 86400, "h": 3600, "mi": 60, "s": 1,
}


@dataclass(frozen=True)
class TimeMiss:
    text: str
    reference: str | None
    expected: str
    got: str | None
    expected_type: str
    phrase: str | None = None
    source: str = ""
    mode: str = ""


@dataclass(frozen=True)
class TypeScore:
    n: int
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else 0.0


@dataclass
class TimeEvalReport:
    n: int = 0
    correct: int = 0
    span_n: int = 0
    span_correct: int = 0
    per_type: dict[str, TypeScore] = field(default_factory=dict)
    per_source: dict[str, TypeScore] = field(default_factory=dict)
    misses: list[TimeMiss] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else 0.0

    @property
    def span_accuracy(self) -> float:
        return self.span_correct / self.span_n if self.span_n else 0.0

    def latency_ms(self, pct: float) -> float:
        if not self.latencies_ms:
            return 0.0
        ordered = sorted(self.latencies_ms)
        index = min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))
        return ordered[index]

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "accuracy": round(self.accuracy, 4),
            "span_n": self.span_n,
            "span_accuracy": round(self.span_accuracy, 4),
            "per_type": {k: _score_json(v) for k, v in sorted(self.per_type.items())},
            "per_source": {k: _score_json(v) for k, v in sorted(self.per_source.items())},
            "latency_ms": {"p50": round(self.latency_ms(50), 3),
                           "p95": round(self.latency_ms(95), 3)},
            "misses": len(self.misses),
        }


def _score_json(s: TypeScore) -> dict[str, Any]:
    return {"n": s.n, "correct": s.correct, "accuracy": round(s.accuracy, 4)}


def evaluate_time(rows: Iterable[dict[str, Any]]) -> TimeEvalReport:
    """Resolve every row's text (and span) against its reference and score it."""
    report = TimeEvalReport()
    by_type: Counter[str] = Counter()
    good_type: Counter[str] = Counter()
    by_source: Counter[str] = Counter()
    good_source: Counter[str] = Counter()
    for row in rows:
        now = _reference(row.get("reference"))
        started = time.perf_counter()
        got = find_time(row["text"], now)
        report.latencies_ms.append((time.perf_counter() - started) * 1000)
        ok = is_correct(row, got, now)
        kind = row.get("expected_type", "?")
        source = str(row.get("source", "")).split(" ")[0]
        report.n += 1
        by_type[kind] += 1
        by_source[source] += 1
        if ok:
            report.correct += 1
            good_type[kind] += 1
            good_source[source] += 1
        else:
            report.misses.append(_miss(row, got))
        span = row.get("span")
        if span:
            report.span_n += 1
            report.span_correct += is_correct(row, resolve_time(span, now), now)
    report.per_type = {k: TypeScore(v, good_type[k]) for k, v in by_type.items()}
    report.per_source = {k: TypeScore(v, good_source[k]) for k, v in by_source.items()}
    return report


def _reference(value: str | None) -> datetime:
    if value:
        ref = datetime.fromisoformat(value)
        return ref if ref.tzinfo is not None else ref.replace(tzinfo=local_zone())
    return datetime.now(local_zone()).replace(hour=0, minute=0, second=0, microsecond=0)


def _miss(row: dict[str, Any], got: TimeResolution | None) -> TimeMiss:
    expected = row.get("expected_any") or [row.get("expected")]
    return TimeMiss(
        text=row["text"],
        reference=row.get("reference"),
        expected=" | ".join(str(e) for e in expected),
        got=_describe(got),
        expected_type=row.get("expected_type", "?"),
        phrase=got.phrase if got else None,
        source=str(row.get("source", "")),
        mode=str(row.get("mode", "")),
    )


def _describe(got: TimeResolution | None) -> str | None:
    if got is None:
        return None
    text = got.when.isoformat()
    if got.duration is not None:
        text += f" ({got.kind}, {got.duration.total_seconds():g}s)"
    else:
        text += f" ({got.kind})"
    return text


def is_correct(row: dict[str, Any], got: TimeResolution | None, now: datetime) -> bool:
    """Whether got matches the row's expected value (or any of expected_any)."""
    if got is None:
        return False
    expected = row.get("expected_any") or [row.get("expected")]
    return any(_matches(row, str(e), got, now) for e in expected if e)


def _matches(row: dict[str, Any], expected: str, got: TimeResolution, now: datetime) -> bool:
    if expected.startswith("P"):
        return _duration_matches(row, expected, got, now)
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", expected):
        return got.when.date().isoformat() == expected
    if re.fullmatch(r"\d{2}:\d{2}:\d{2}", expected):
        return got.when.strftime("%H:%M:%S") == expected
    want = datetime.fromisoformat(expected)
    have = got.when if want.tzinfo is not None else got.when.replace(tzinfo=None)
    grain = row.get("grain")
    if grain == "day":
        return have.date() == want.date()
    return _truncate(have, grain) == _truncate(want, grain)


def _truncate(value: datetime, grain: str | None) -> datetime:
    if grain == "hour":
        return value.replace(minute=0, second=0, microsecond=0)
    if grain == "minute":
        return value.replace(second=0, microsecond=0)
    return value.replace(microsecond=0)


def _duration_matches(
    row: dict[str, Any], expected: str, got: TimeResolution, now: datetime
) -> bool:
    want = row.get("duration_seconds") if expected == row.get("expected") else None
    if want is None:
        want = iso_duration_seconds(expected)
    if want is None:
        return False
    # UTC on both sides: same-zone subtraction is wall-clock, an hour off across DST
    span = got.duration if got.duration is not None else (
        got.when.astimezone(UTC) - now.astimezone(UTC)
    )
    have = span.total_seconds()
    date_part = expected.split("T")[0]
    calendar_units = "Y" in date_part or "M" in date_part
    tolerance = 0.07 * float(want) if calendar_units else 1.0
    return abs(have - float(want)) <= tolerance


def iso_duration_seconds(value: str) -> float | None:
    """Nominal seconds of an ISO 8601 duration (months of 30 days, years of 365)."""
    m = _ISO_DURATION.match(value)
    if not m or value in ("P", "PT"):
        return None
    return sum(float(v) * _DURATION_SECONDS[k] for k, v in m.groupdict().items() if v)


# ---------------------------------------------------------------------------
# CLI


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `time FILE.jsonl [--json]` under an existing `eval` subparser."""
    parser = subparsers.add_parser(
        "time",
        help="measure the time resolver on a JSONL file of labelled time expressions",
        description="Resolve each row's text relative to its reference time and score it.",
    )
    _add_arguments(parser)
    parser.set_defaults(func=main_time)


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="JSONL rows: text, reference, expected, ...")
    parser.add_argument("--json", action="store_true",
                        help="end with one JSON line: accuracy, n, per_type, latency")
    parser.add_argument("--misses", type=int, default=50, metavar="N",
                        help="print at most N misses (default 50)")


def main_time(args: argparse.Namespace) -> int:
    try:
        rows = list(_read_rows(args.file))
    except (OSError, ValueError) as exc:
        print(f"eval time: {exc}", file=sys.stderr)
        return 2
    report = evaluate_time(rows)
    _print_report(report, max(0, int(getattr(args, "misses", 50))))
    if args.json:
        print(json.dumps(report.to_json(), sort_keys=True))
    return 0


def _read_rows(path: Path) -> Iterable[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from exc
            if not isinstance(row, dict) or "text" not in row:
                raise ValueError(f"{path}:{number}: a row needs at least 'text'")
            yield row


def _print_report(report: TimeEvalReport, max_misses: int) -> None:
    print(f"time resolver: {report.correct}/{report.n} = {report.accuracy:.1%} on the full text")
    if report.span_n:
        print(f"  on the span alone: {report.span_correct}/{report.span_n} = "
              f"{report.span_accuracy:.1%}")
    print(f"  latency per utterance: p50 {report.latency_ms(50):.2f} ms, "
          f"p95 {report.latency_ms(95):.2f} ms")
    print("per type:")
    for kind, score in sorted(report.per_type.items()):
        print(f"  {kind:<10} {score.correct:>4}/{score.n:<4} {score.accuracy:.1%}")
    print("per source:")
    for source, score in sorted(report.per_source.items()):
        print(f"  {source:<28} {score.correct:>4}/{score.n:<4} {score.accuracy:.1%}")
    if report.misses and max_misses:
        print(f"misses ({len(report.misses)}):")
        for miss in report.misses[:max_misses]:
            print(f"  [{miss.expected_type}/{miss.mode}] {miss.text!r} @ {miss.reference}")
            print(f"      expected {miss.expected}; got {miss.got} from {miss.phrase!r}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mavend.router.eval_time",
                                     description=__doc__.splitlines()[0])
    _add_arguments(parser)
    return main_time(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
