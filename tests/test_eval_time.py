"""The `eval time` harness on rows written for these tests."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from mavend.language.timeparse import TimeResolution
from mavend.router.eval_time import (
    evaluate_time,
    is_correct,
    iso_duration_seconds,
    main,
    main_time,
    register,
)

# 2024-05-06 is a Monday.
ROWS: list[dict[str, Any]] = [
    {  # right
        "text": "remind me tomorrow at 4pm", "reference": "2024-05-06T10:00:00",
        "expected": "2024-05-07T16:00:00", "expected_type": "datetime",
        "span": "tomorrow at 4pm",
    },
    {  # wrong: friday is the 10th
        "text": "remind me on friday", "reference": "2024-05-06T10:00:00",
        "expected": "2024-05-11", "expected_type": "date",
    },
    {  # either reading is right; the resolver picks 06:30, the nearest
        "text": "at half past six", "reference": "2024-05-06T05:00:00",
        "expected": "2024-05-06T18:30:00", "expected_type": "datetime",
        "expected_any": ["2024-05-06T18:30:00", "2024-05-06T06:30:00"],
    },
    {  # a duration, no reference
        "text": "set a timer for twelve minutes", "reference": None,
        "expected": "PT12M", "expected_type": "duration", "duration_seconds": 720.0,
    },
    {  # a bare time of day, no reference
        "text": "wake me at 7:15", "reference": None,
        "expected": "07:15:00", "expected_type": "time",
    },
    {  # a reference with an offset, compared as instants at minute grain
        "text": "in three hours", "reference": "2024-05-06T22:30:00-02:00",
        "expected": "2024-05-07T01:30:00-02:00", "expected_type": "datetime", "grain": "minute",
    },
    {  # nothing to find
        "text": "no time in here", "reference": "2024-05-06T10:00:00",
        "expected": "2024-05-07", "expected_type": "date",
    },
]


def write_rows(tmp_path: Path, rows: list[dict[str, Any]] = ROWS) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_report_numbers() -> None:
    report = evaluate_time(ROWS)
    assert report.n == 7
    assert report.correct == 5
    assert report.accuracy == pytest.approx(5 / 7)
    assert {k: (v.n, v.correct) for k, v in report.per_type.items()} == {
        "datetime": (3, 3), "date": (2, 0), "duration": (1, 1), "time": (1, 1),
    }
    assert report.span_n == 1 and report.span_correct == 1
    assert [m.text for m in report.misses] == ["remind me on friday", "no time in here"]
    wrong, empty = report.misses
    assert wrong.expected == "2024-05-11"
    assert wrong.got is not None and wrong.got.startswith("2024-05-10T09:00:00")
    assert wrong.phrase == "on friday"
    assert empty.got is None
    assert len(report.latencies_ms) == 7


def test_cli_wiring_under_an_eval_subparser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser(prog="mavend")
    commands = parser.add_subparsers(dest="command")
    evaluate = commands.add_parser("eval")
    register(evaluate.add_subparsers(dest="eval_command"))
    args = parser.parse_args(["eval", "time", str(write_rows(tmp_path)), "--json"])
    assert args.func is main_time
    assert args.func(args) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    summary = json.loads(lines[-1])
    assert summary["n"] == 7
    assert summary["accuracy"] == pytest.approx(5 / 7, abs=1e-4)
    assert summary["per_type"]["date"] == {"n": 2, "correct": 0, "accuracy": 0.0}
    assert summary["per_type"]["duration"]["accuracy"] == 1.0
    assert any("remind me on friday" in line for line in lines)  # misses are printed


def test_without_json_the_last_line_is_not_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(write_rows(tmp_path, ROWS[:1]))]) == 0
    out = capsys.readouterr().out
    assert "1/1 = 100.0%" in out
    with pytest.raises(json.JSONDecodeError):
        json.loads(out.strip().splitlines()[-1])


def test_a_broken_file_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "at 5"}\nnot json\n', encoding="utf-8")
    assert main([str(path)]) == 2
    assert "bad.jsonl:2" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.jsonl")]) == 2


def test_empty_input() -> None:
    report = evaluate_time([])
    assert (report.n, report.accuracy, report.latency_ms(95)) == (0, 0.0, 0.0)


def _res(when: datetime, kind: str = "datetime") -> TimeResolution:
    return TimeResolution(when=when, kind=kind, phrase="x")


def test_grain_truncates_both_sides() -> None:
    now = datetime(2024, 5, 6, 10, 40, tzinfo=UTC)
    row = {"expected": "2024-05-07T10:00:00+00:00", "expected_type": "datetime", "grain": "hour"}
    assert is_correct(row, _res(datetime(2024, 5, 7, 10, 40, tzinfo=UTC)), now)
    assert not is_correct({**row, "grain": "minute"},
                          _res(datetime(2024, 5, 7, 10, 40, tzinfo=UTC)), now)


def test_calendar_durations_allow_for_month_lengths() -> None:
    now = datetime(2024, 2, 1, 9, 0, tzinfo=UTC)
    row = {"expected": "P1M", "expected_type": "duration", "duration_seconds": 30 * 86400.0}
    assert is_correct(row, _res(datetime(2024, 3, 1, 9, 0, tzinfo=UTC)), now)  # 29 days
    assert not is_correct(row, _res(datetime(2024, 3, 8, 9, 0, tzinfo=UTC)), now)
    exact = {"expected": "PT20M", "expected_type": "duration", "duration_seconds": 1200.0}
    assert not is_correct(exact, _res(datetime(2024, 2, 1, 9, 21, tzinfo=UTC)), now)


def test_iso_durations() -> None:
    assert iso_duration_seconds("PT1H30M") == 5400
    assert iso_duration_seconds("P1DT2H") == 93600
    assert iso_duration_seconds("P3WE") == 6 * 86400
    assert iso_duration_seconds("PT1.5H") == 5400
    assert iso_duration_seconds("nonsense") is None
