"""`mavend run --no-audio` as a real process: SIGKILL with reminders pending,
SIGTERM, a second daemon, `mavend say` beside a running daemon, stdin turns."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.config import Settings
from mavend.scheduler import ReminderBook, Status
from mavend.state.store import Store
from tests.state_kit import TZ, wait_for

MAVEND = Path(sys.executable).parent / "mavend"


@pytest.fixture
def config(private_dirs: Path) -> Path:
    path = private_dirs / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        '[router]\nllm_enabled = false\n\n[reminders]\ntimezone = "Europe/Berlin"\n\n'
        "[notifications]\nretry_s = 0.5\n"
    )
    return path


class DaemonProcess:
    def __init__(self, log: Path, stdin: int = subprocess.DEVNULL):
        self.log = log
        self.proc = subprocess.Popen(
            [str(MAVEND), "run", "--no-audio"],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=open(log, "w"),  # noqa: SIM115 - the child owns it
            text=True,
            env=os.environ.copy(),
        )

    def wait_ready(self) -> DaemonProcess:
        wait_for(
            lambda: "mavend is running" in self.output() or self.proc.poll() is not None,
            90,  # models load from a cold page cache on a fresh CI box
            "the daemon to start",
        )
        assert self.proc.poll() is None, self.output()
        return self

    def output(self) -> str:
        return self.log.read_text()

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(15)


@contextlib.contextmanager
def daemon(tmp_path: Path, name: str, **kwargs) -> Iterator[DaemonProcess]:
    process = DaemonProcess(tmp_path / f"{name}.log", **kwargs)
    try:
        yield process
    finally:
        if process.proc.poll() is None:
            process.proc.kill()
            process.proc.wait(10)


def reminder_notes(server) -> list:
    return [n for n in server.interface.received if n.summary.startswith("Reminder")]


def scheduled(process: DaemonProcess, reminder_ids: list[int]) -> bool:
    """The daemon logged a job for each reminder (its jobs live in memory only)."""
    return all(f"scheduled reminder {i} for" in process.output() for i in reminder_ids)


def test_sigkill_with_reminders_pending_then_each_fires_once_marked_late(
    tmp_path: Path, config: Path, notification_server
) -> None:
    database = Settings().storage.database_path()  # MAVEND_DATA_DIR points into tmp_path
    with daemon(tmp_path, "first") as first:
        first.wait_ready()
        store = Store(database)
        book = ReminderBook(store, TZ)
        now = datetime.now(TZ)
        reminders = [
            book.add("feed the cat", now + timedelta(seconds=4), now=now),
            book.add("take the laundry out", now + timedelta(seconds=5), now=now),
        ]
        ids = [r.id for r in reminders]
        wait_for(lambda: scheduled(first, ids), 10, "the daemon to schedule both")
        first.stop(signal.SIGKILL)
    assert reminder_notes(notification_server) == []
    # Come back well after both were due (and past the 2 s start-up slack).
    last_due = max(r.fire_at for r in reminders)
    time.sleep(max(0.0, (last_due - datetime.now(TZ)).total_seconds()) + 2.5)
    # The table, the only record, still holds both for the restart to find.
    assert [book.get(r.id).status for r in reminders] == [Status.PENDING] * 2

    with daemon(tmp_path, "second") as second:
        second.wait_ready()
        wait_for(lambda: len(reminder_notes(notification_server)) >= 2, 15, "two late reminders")
        time.sleep(1.5)  # more scheduler and watcher cycles: nothing fires twice
        shown = reminder_notes(notification_server)
        assert second.stop() == 0, second.output()

    assert sorted(n.body.split("\n")[0] for n in shown) == ["feed the cat", "take the laundry out"]
    assert all(n.summary == "Reminder (late)" for n in shown)
    assert all(re.search(r"\nIt was due at \d\d:\d\d (today|yesterday)\.$", n.body) for n in shown)
    for reminder in reminders:
        (firing,) = book.firings(reminder.id)
        assert firing.late and firing.delivered_at is not None
    assert book.pending() == []
    store.close()


def test_a_running_daemon_takes_turns_fires_what_say_sets_and_stops_on_sigterm(
    tmp_path: Path, config: Path, notification_server
) -> None:
    with daemon(tmp_path, "main", stdin=subprocess.PIPE) as main:
        main.wait_ready()
        # A second daemon on the same state is refused.
        other = subprocess.run(
            [str(MAVEND), "run", "--no-audio"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert other.returncode == 1 and "already running" in other.stderr

        # Text turns on stdin: the reply is printed and shown.
        main.proc.stdin.write("set a timer for ten minutes\n")
        main.proc.stdin.flush()
        printed = main.proc.stdout.readline()
        assert printed.startswith("Timer set for 10 minutes, until ")
        wait_for(
            lambda: any(n.summary == "mavend" for n in notification_server.interface.received),
            5,
            "the reply notification",
        )

        # `mavend say` beside the daemon: same database, the daemon fires it.
        said = subprocess.run(
            [str(MAVEND), "say", "remind me in 3 seconds to drink water"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert said.returncode == 0, said.stderr
        assert "daemon is not running" not in said.stderr
        wait_for(lambda: reminder_notes(notification_server), 15, "the reminder from say")
        assert main.stop(signal.SIGTERM) == 0, main.output()
        assert "mavend stopped" in main.output()

    (note,) = reminder_notes(notification_server)
    assert (note.summary, note.body) == ("Reminder", "drink water")


def _threads_and_fds(pid: int) -> tuple[int, int]:
    return len(os.listdir(f"/proc/{pid}/task")), len(os.listdir(f"/proc/{pid}/fd"))


def test_overlapping_calls_add_no_thread_or_open_file_to_a_running_daemon(
    tmp_path: Path, config: Path, notification_server
) -> None:
    """The daemon's worker threads and their database connections all exist once it is
    running (mavend/workers.py): thirty D-Bus calls at once, and turns among them, wait
    for a thread instead of adding one (each added thread kept a connection, its page
    cache and a malloc arena for the rest of the daemon's life: issue 22's soak)."""
    import asyncio

    from mavend.api.client import DaemonClient

    async def burst() -> list[object]:
        async with DaemonClient() as client:
            calls = [client.list_reminders() for _ in range(24)]
            calls += [client.route("what is 2 plus 2") for _ in range(4)]
            calls += [client.say("what is 17 plus 25"), client.say("set a timer for an hour")]
            return await asyncio.gather(*calls)

    with daemon(tmp_path, "workers") as main:
        main.wait_ready()
        pid = main.proc.pid
        before = _threads_and_fds(pid)
        for _ in range(3):
            answers = asyncio.run(burst())
        assert answers[-2] == "17 plus 25 is 42."
        assert str(answers[-1]).startswith("Timer set for 1 hour")
        assert all(isinstance(listed, list) for listed in answers[:24])
        # Settled, not at once: a reply's file or a checkpoint may be open a moment.
        deadline = time.monotonic() + 5
        while _threads_and_fds(pid) != before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _threads_and_fds(pid) == before, main.output()
        assert main.stop(signal.SIGTERM) == 0, main.output()
