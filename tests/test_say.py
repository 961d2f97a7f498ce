"""`mavend say` and `mavend reminders`, run as a user runs them (the console script),
on a real SQLite file in the test's private data dir."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.conftest import require_model

MAVEND = Path(sys.executable).parent / "mavend"


def mavend(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(MAVEND), *args], capture_output=True, text=True, timeout=timeout, env=os.environ.copy()
    )


@pytest.fixture
def config(private_dirs: Path) -> Path:
    path = private_dirs / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('[router]\nllm_enabled = false\n\n[reminders]\ntimezone = "Europe/Berlin"\n')
    return path


def listed(*flags: str) -> list[dict]:
    result = mavend("reminders", "list", "--json", *flags)
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_say_sets_a_reminder_the_reminders_command_manages(config: Path) -> None:
    before = datetime.now().astimezone()
    said = mavend("say", "remind me in 10 minutes to call mom")
    assert said.returncode == 0, said.stderr
    assert re.fullmatch(
        r"OK, I'll remind you to call mom at \d\d:\d\d (today|tomorrow)\.\n", said.stdout
    )
    assert "the daemon is not running" in said.stderr
    (reminder,) = listed()
    fire_at = datetime.fromisoformat(reminder["fire_at"])
    assert reminder["text"] == "call mom" and reminder["status"] == "pending"
    assert fire_at.utcoffset() in (timedelta(hours=1), timedelta(hours=2))  # Berlin
    assert abs((fire_at - before).total_seconds() - 600) < 30

    snoozed = mavend("reminders", "snooze", str(reminder["id"]), "30")
    assert snoozed.returncode == 0, snoozed.stderr
    (moved,) = listed()
    assert abs((datetime.fromisoformat(moved["fire_at"]) - before).total_seconds() - 1800) < 30

    assert mavend("reminders", "cancel", str(reminder["id"])).returncode == 0
    assert listed() == []
    assert [r["status"] for r in listed("--all")] == ["cancelled"]
    missing = mavend("reminders", "cancel", "99")
    assert missing.returncode == 1 and "no reminder with id 99" in missing.stderr


def test_say_json_prints_the_decision_and_the_reply(config: Path) -> None:
    result = mavend("say", "--json", "set a timer for ten minutes")
    assert result.returncode == 0, result.stderr
    turn = json.loads(result.stdout)
    assert turn["decision"]["intent"] == "reminder"
    assert turn["reply"]["outcome"] == "done"
    assert turn["reply"]["text"].startswith("Timer set for 10 minutes, until ")
    assert turn["reply"]["data"]["kind"] == "timer"


def test_a_corrupt_database_is_a_clear_error_and_nothing_is_claimed(
    config: Path, private_dirs: Path
) -> None:
    database = private_dirs / "data" / "mavend.sqlite3"
    database.parent.mkdir(parents=True)
    database.write_bytes(b"\x00garbage, not SQLite\x00" * 500)
    result = mavend("say", "set a timer for ten minutes")
    assert result.returncode == 1
    assert result.stdout == ""  # no "Timer set"
    assert str(database) in result.stderr and "damaged" in result.stderr


@pytest.mark.parametrize(
    "command",
    [["reminders"], ["reminders", "list"], ["reminders", "cancel"], ["reminders", "snooze"]],
)
def test_reminders_commands_have_help(command: list[str]) -> None:
    result = mavend(*command, "--help")
    assert result.returncode == 0 and "usage: mavend reminders" in result.stdout


@pytest.mark.models
def test_say_with_the_real_models_recalls_a_note_by_meaning(config: Path) -> None:
    require_model("use-multilingual-int8")
    noted = mavend("say", "remember that my passport is in the top drawer of the desk")
    assert noted.returncode == 0, noted.stderr
    assert noted.stdout.startswith("Noted: ")
    asked = mavend("say", "where did I put my passport")
    assert asked.returncode == 0, asked.stderr
    assert "top drawer of the desk" in asked.stdout
