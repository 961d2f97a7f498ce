"""The soak harness (bench/soak.py) on a few turns: the real daemon process, two Wyoming
clients and the D-Bus API, reminders that fire during the run; and its checks, which
must catch a double firing, a lost notification, a table that grew wrong, a leak."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

from bench.soak import checks

ROOT = Path(__file__).resolve().parent.parent


def run_soak(out: Path) -> tuple[subprocess.CompletedProcess, dict]:
    command = [
        sys.executable, str(ROOT / "bench" / "soak.py"), "--compressed",
        "--turns", "50", "--firings", "5", "--fire-min", "2", "--fire-within", "4",
        "--interval", "1s", "--json", str(out),
        # 50 turns are all warm-up: growth is judged on long runs, not here.
        "--max-mib-per-1000-turns", "1e9",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return done, json.loads(out.read_text())


def test_a_short_compressed_soak_passes_and_its_figures_are_the_daemons(tmp_path: Path) -> None:
    done, report = run_soak(tmp_path / "soak.json")
    summary, series = report["summary"], report["series"]
    assert done.returncode == 0, summary["failed_checks"]
    assert "soak: PASS" in done.stdout and "RSS slope after warm-up" in done.stdout
    assert summary["failed_checks"] == []
    assert summary["turns_answered"] == summary["turns_sent"] == 50
    assert set(summary["turns_by_path"]) == {"kitchen", "study", "dbus"}
    assert summary["transport_errors"] == 0 and summary["daemon_exit"] == 0
    # Every reminder set fired once: a firings row, a notification, a D-Bus signal.
    assert summary["reminders_set"] == 5 and summary["table_growth"]["firings"] == 5
    assert summary["reminders_fired_twice"] == 0 and summary["firings_undelivered"] == 0
    assert summary["notifications"] == {"tags": 5, "shown_twice": 0}
    assert summary["reminder_fired_signals"] == {"ids": 5, "twice": 0}
    # What was said was stored: one turn row each, the notes, no LLM anywhere.
    growth, expected = summary["table_growth"], summary["expected_growth"]
    assert growth["turns"] == 50 and growth["notes"] == expected["notes"] > 0
    assert not [k for k in summary["routes"] if k.endswith(":llm")]
    # The samples are the daemon's: a real RSS, open fds, threads, rows per table.
    assert len(series) >= 3
    assert all(s["rss_mib"] > 50 and s["fds"] > 3 and s["threads"] >= 1 for s in series)
    assert series[-1]["rows"]["turns"] == 50


def passing() -> dict:
    return {
        "mode": "long", "transport_errors": 0, "turns_answered": 10, "turns_sent": 10,
        "table_growth": {"turns": 10, "notes": 2, "reminders": 2, "firings": 2},
        "expected_growth": {"turns": 10, "notes": 2, "reminders": 2, "firings": 2},
        "routes": {"computed:grammar": 6}, "outcomes": {"computed:done": 6},
        "reminders_fired_twice": 0, "reminder_statuses": {"fired": 2},
        "firings_undelivered": 0, "reminders_set": 2,
        "notifications": {"tags": 2, "shown_twice": 0},
        "reminder_fired_signals": {"ids": 2, "twice": 0},
        "rss_slope_mib_per_h": 0.5, "rss_mib_per_1000_turns": 0.1,
        "stored_vectors_mib_per_1000_turns": 0.05,
        "fds": {"after_warmup": 20, "end": 21}, "threads": {"after_warmup": 9, "end": 9},
        "error_log_lines": 0, "daemon_exit": 0,
    }  # fmt: skip


def test_the_checks_catch_what_a_soak_is_for() -> None:
    limits = {"max_slope": 5.0, "max_per_kturns": 1.0}
    assert checks(passing(), **limits) == []
    broken = {
        "reminders_fired_twice": 1,
        "notifications": {"tags": 1, "shown_twice": 0},
        "reminder_fired_signals": {"ids": 2, "twice": 1},
        "reminder_statuses": {"fired": 1, "pending": 1},
        "rss_slope_mib_per_h": 12.0,
        "fds": {"after_warmup": 20, "end": 60},
        "threads": {"after_warmup": 9, "end": 30},
        "routes": {"computed:llm": 1},
        "error_log_lines": 3,
        "daemon_exit": "died (-9)",
    }
    for key, value in broken.items():
        summary = copy.deepcopy(passing())
        summary[key] = value
        assert len(checks(summary, **limits)) == 1, key
    grew = copy.deepcopy(passing())
    grew["table_growth"]["notes"] = 1  # a note said and answered, and not stored
    assert checks(grew, **limits) == ["table notes grew by 1, 2 stored"]
    compressed = {**copy.deepcopy(passing()), "mode": "compressed", "rss_slope_mib_per_h": 99}
    assert checks(compressed, **limits) == []  # compressed hours are not hours
    compressed["rss_mib_per_1000_turns"] = 3.0
    assert checks(compressed, **limits) == [
        "RSS grew 2.95 MiB per 1000 turns beyond the stored vectors >= 1"
    ]
    compressed["stored_vectors_mib_per_1000_turns"] = 2.5  # what recall holds by design
    assert checks(compressed, **limits) == []
