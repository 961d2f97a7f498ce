"""Missing pieces: each gives one clear message, and what can still run keeps running.

Real processes (`mavend run`, `mavend say`, `mavend route`) on a box that lacks
one thing at a time: the session bus, the models, a writable data dir, a valid
config. (No microphone: tests/test_daemon_audio.py.)
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.config import Settings
from mavend.scheduler import ReminderBook
from mavend.state.store import Store
from tests.state_kit import TZ
from tests.test_daemon import MAVEND

FAST = """
[router]
llm_enabled = false

[reminders]
timezone = "Europe/Berlin"

[notifications]
retry_s = 0.5
"""


def mavend(*args: str, env: dict[str, str] | None = None, timeout: float = 120):
    return subprocess.run(
        [str(MAVEND), *args], capture_output=True, text=True, timeout=timeout,
        env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
    )


@contextmanager
def daemon(log: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen]:
    with open(log, "w") as err:
        process = subprocess.Popen(
            [str(MAVEND), "run", *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=err, env={**os.environ, **(env or {})},
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def wait_for_line(log: Path, text: str, process: subprocess.Popen, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        content = log.read_text()
        if text in content:
            return content
        assert process.poll() is None, f"the daemon exited ({process.returncode}):\n{content}"
        time.sleep(0.2)
    pytest.fail(f"{text!r} not logged within {timeout} s:\n{log.read_text()}")


def stop(process: subprocess.Popen, log: Path) -> None:
    process.send_signal(signal.SIGTERM)
    assert process.wait(10) == 0, log.read_text()


@pytest.fixture
def config(private_dirs: Path) -> Path:
    path = private_dirs / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FAST)
    return path


@contextmanager
def read_only(folder: Path) -> Iterator[Path]:
    """`folder`, read-only for this process too (root ignores file modes: a ro bind mount)."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(0o755)
        return
    done = subprocess.run(["mount", "--bind", "-o", "ro", str(folder), str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"cannot make a read-only folder (mount --bind -o ro): {done.stderr}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_missing_models_one_message_and_reminders_still_fire(
    config: Path, private_dirs: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "no-models"
    empty.mkdir()
    env = {"MAVEND_MODELS_DIR": str(empty)}
    # A reminder due in 3 s, set before the daemon starts.
    settings = Settings()
    store = Store.open(settings)
    now = datetime.now(TZ)
    reminder = ReminderBook(store, TZ).add("stretch", now + timedelta(seconds=3), now=now)
    store.close()
    log = tmp_path / "run.log"
    with daemon(log, env=env) as process:  # with audio: the front end needs three models
        text = wait_for_line(log, "mavend is running", process, 60)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            store = Store.open(settings)
            fired = ReminderBook(store, TZ).firings(reminder.id)
            store.close()
            if fired:
                break
            time.sleep(0.3)
        assert fired, log.read_text()  # the scheduler does not need a model
        stop(process, log)
    text = log.read_text()
    assert text.count("audio front end cannot start") == 1, text
    assert "mavend models pull" in text, text
    # A text turn that the grammar settles needs no model either.
    said = mavend("say", "--local", "set a timer for five minutes", env=env)
    assert said.returncode == 0, said.stderr
    assert said.stdout.startswith("Timer set"), said.stdout
    # One the grammar does not know needs the classifier: one clear line, how to fix it.
    routed = mavend("route", "what did I say about the plumber", env=env)
    assert routed.returncode == 4, routed.stderr
    assert "mavend models pull" in routed.stderr
    assert "Traceback" not in routed.stderr


def test_a_read_only_data_dir_is_named_and_routing_still_works(
    config: Path, private_dirs: Path, tmp_path: Path
) -> None:
    with read_only(private_dirs / "data") as folder:
        result = mavend("run", "--no-audio")
        assert result.returncode == 1
        lines = [line for line in result.stderr.splitlines() if "read-only" in line]
        assert len(lines) == 1 and str(folder) in lines[0], result.stderr
        assert "MAVEND_DATA_DIR" in lines[0] and "Traceback" not in result.stderr
        said = mavend("say", "--local", "set a timer for five minutes")
        assert said.returncode != 0 and "read-only" in said.stderr, said.stderr
        routed = mavend("route", "--no-llm", "set a timer for five minutes")
        assert routed.returncode == 0, routed.stderr
        assert "reminder" in routed.stdout


def test_a_malformed_config_names_file_line_and_key_and_nothing_starts(
    private_dirs: Path, tmp_path: Path
) -> None:
    path = private_dirs / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('[audio]\nblock_ms = 80\n\n[wakeword]\nthreshold = "high"\n')
    result = mavend("run", "--no-audio")
    assert result.returncode == 3
    assert f"{path}:5" in result.stderr and "wakeword.threshold" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert not (private_dirs / "data" / "mavend.sqlite3").exists()  # nothing started


def test_no_session_bus_one_message_each_and_reminders_still_fire(
    config: Path, no_session_bus: None, tmp_path: Path
) -> None:
    settings = Settings()
    store = Store.open(settings)
    now = datetime.now(TZ)
    reminder = ReminderBook(store, TZ).add("stretch", now + timedelta(seconds=2), now=now)
    store.close()
    log = tmp_path / "run.log"
    with daemon(log, "--no-audio") as process:
        wait_for_line(log, "mavend is running", process, 60)
        deadline = time.monotonic() + 30
        fired: list = []
        while not fired and time.monotonic() < deadline:
            store = Store.open(settings)
            fired = ReminderBook(store, TZ).firings(reminder.id)
            store.close()
            time.sleep(0.3)
        assert fired, log.read_text()  # fired, kept to be shown when a bus appears
        time.sleep(3.0)  # several delivery retries (retry_s = 0.5) and an API retry pass
        stop(process, log)
    text = log.read_text()
    assert text.count("D-Bus control API off") == 1, text
    assert text.count("cannot be shown (no session bus") == 1, text
    assert fired[0].delivered_at is None  # not lost: delivered at the next chance
    assert "Traceback" not in text
