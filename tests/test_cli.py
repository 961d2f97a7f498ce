"""The installed console script, run as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

MAVEND = Path(sys.executable).parent / "mavend"


def mavend(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    assert MAVEND.exists(), f"{MAVEND} is not installed: pip install -e . (make test does)"
    return subprocess.run(
        [str(MAVEND), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["run"],
        ["say"],
        ["route"],
        ["doctor"],
        ["models"],
        ["models", "pull"],
        ["models", "list"],
        ["models", "verify"],
        ["eval"],
        ["eval", "time"],
        ["pause"],
        ["resume"],
        ["service", "install"],
        ["service", "status"],
        ["listen"],
        ["reminders"],
    ],
)
def test_every_command_has_help(command: list[str]) -> None:
    result = mavend(*command, "--help")
    assert result.returncode == 0, result.stderr
    assert "usage: mavend" in result.stdout


def test_help_documents_exit_codes() -> None:
    assert "exit codes" in mavend("--help").stdout


def test_route_json_prints_a_decision_object() -> None:
    result = mavend(
        "route", "--json", "--now", "2026-11-30T08:00:00+01:00", "set a timer for ten minutes"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    decision = json.loads(lines[0])
    assert decision["intent"] == "reminder" and decision["stage"] == 0
    assert decision["confidence"] == 1.0 and decision["clarify"] is None
    assert decision["slots"]["time"] == "2026-11-30T08:10:00+01:00"
    assert {"fn", "args", "key", "value", "text"} <= set(decision["slots"])
    assert "source" in decision


def test_route_without_json_is_readable() -> None:
    result = mavend("route", "--now", "2026-11-30T08:00:00", "pause the music")
    assert result.returncode == 0, result.stderr
    assert "intent:     act" in result.stdout and "media_pause" in result.stdout


def test_bad_now_is_a_usage_error() -> None:
    result = mavend("route", "--now", "yesterday-ish", "hello")
    assert result.returncode == 2 and "--now" in result.stderr


def test_malformed_config_exits_3_naming_the_line(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[router]\n\nclarify_threshold = 'high'\n")
    result = mavend("--config", str(config), "route", "stop")
    assert result.returncode == 3
    assert f"{config}:3: `router.clarify_threshold`" in result.stderr


def test_missing_models_exit_4_naming_the_pull_command(tmp_path: Path) -> None:
    result = mavend("route", "hello there", env={"MAVEND_MODELS_DIR": str(tmp_path / "none")})
    assert result.returncode == 4
    assert "mavend models pull" in result.stderr


def test_say_runs_a_turn_and_run_no_audio_is_the_daemon() -> None:
    # `say` goes through the handlers now; `run --no-audio` is covered as a real
    # process in tests/test_daemon.py (it runs until SIGTERM).
    result = mavend("say", "set a timer for ten minutes")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Timer set for 10 minutes")
    assert "--no-audio" in mavend("run", "--help").stdout


def test_logging_under_systemd_has_priority_prefix_and_no_timestamp(tmp_path: Path) -> None:
    result = mavend(
        "-v",
        "route",
        "--json",
        "stop",
        env={"JOURNAL_STREAM": "8:12345", "MAVEND_CONFIG_DIR": str(tmp_path)},
    )
    debug_lines = [line for line in result.stderr.splitlines() if line.startswith("<7>")]
    assert debug_lines, result.stderr
    assert all(not line[3:5].isdigit() for line in debug_lines)
