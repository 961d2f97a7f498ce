"""The daemon's lifecycle: the D-Bus API on the real daemon, SIGTERM, SIGHUP, supervision.

Real processes and a real private session bus; the notification server records
what a desktop would show.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.api import client as dbus_client
from mavend.api.server import BUS_NAME, INTERFACE, OBJECT_PATH
from mavend.config import Settings, parse_settings
from mavend.daemon.lifecycle import Daemon, DaemonOptions
from mavend.scheduler import ReminderBook
from mavend.state.store import Store
from tests.state_kit import TZ
from tests.test_daemon import MAVEND
from tests.test_daemon_audio import synchronously, until

CONFIG = """
[router]
llm_enabled = false

[reminders]
timezone = "Europe/Berlin"

[notifications]
retry_s = 0.5

[[acts.allow]]
name = "lock_screen"
argv = {argv}
"""


def write_marker_argv(marker: Path, text: str) -> str:
    code = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text(sys.argv[2])"
    return json.dumps([sys.executable, "-c", code, str(marker), text])


@pytest.fixture
def config(private_dirs: Path) -> Path:
    path = private_dirs / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(CONFIG.format(argv=write_marker_argv(private_dirs / "marker", "before")))
    return path


@contextmanager
def daemon_process(log: Path, *args: str) -> Iterator[subprocess.Popen]:
    with open(log, "w") as err:
        process = subprocess.Popen(
            [str(MAVEND), "run", "--no-audio", *args], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=err, env=os.environ.copy(),
        )
    try:
        deadline = time.monotonic() + 60
        while not dbus_client.daemon_available():
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, f"no D-Bus API within 60 s:\n{log.read_text()}"
            time.sleep(0.2)
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)


def add_reminder(text: str, seconds: float) -> int:
    store = Store.open(Settings())
    try:
        now = datetime.now(TZ)
        return ReminderBook(store, TZ).add(text, now + timedelta(seconds=seconds), now=now).id
    finally:
        store.close()


def firings(reminder_id: int) -> int:
    store = Store.open(Settings())
    try:
        return len(ReminderBook(store, TZ).firings(reminder_id))
    finally:
        store.close()


def test_the_cli_and_the_d_bus_api_talk_to_the_running_daemon(
    config: Path, notification_server, private_dirs: Path, tmp_path: Path
) -> None:
    log = tmp_path / "run.log"
    with daemon_process(log) as process:
        turn = dbus_client.say_json("lock the screen")
        assert turn["decision"]["slots"]["fn"] == "lock_screen", turn
        assert (private_dirs / "marker").read_text() == "before"
        # `mavend say` (no --local) is answered by the daemon: its pid is on the turn log.
        said = subprocess.run([str(MAVEND), "say", "set a timer for ten minutes"],
                              capture_output=True, text=True, timeout=60)
        assert said.returncode == 0 and said.stdout.startswith("Timer set"), said.stderr
        listed = dbus_client.list_reminders()
        assert [r["kind"] for r in listed] == ["timer"]
        assert dbus_client.cancel_reminder(listed[0]["id"]) is True
        assert dbus_client.list_reminders() == []
        decision = dbus_client.route("what time is it")
        assert decision["intent"] == "query"
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(10) == 0, log.read_text()
        stopped_s = time.monotonic() - started
    print(f"lifecycle: SIGTERM -> exit 0 in {stopped_s:.2f} s (no audio)")
    assert stopped_s <= 5.0
    assert "D-Bus API: org.mavend.Assistant1" in log.read_text()
    assert not dbus_client.daemon_available()  # the name went with it


def test_reminder_fired_is_a_signal(
    config: Path, notification_server, tmp_path: Path, session_bus: str
) -> None:
    from dbus_next.aio import MessageBus

    log = tmp_path / "run.log"
    received: list[tuple[int, str]] = []

    async def listen_for_one(reminder_id: int) -> None:
        bus = await MessageBus(bus_address=session_bus).connect()
        try:
            introspection = await bus.introspect(BUS_NAME, OBJECT_PATH)
            api = bus.get_proxy_object(BUS_NAME, OBJECT_PATH, introspection).get_interface(
                INTERFACE
            )
            api.on_reminder_fired(lambda rid, text: received.append((rid, text)))
            deadline = time.monotonic() + 20
            while not received and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
        finally:
            bus.disconnect()

    with daemon_process(log):
        reminder_id = add_reminder("water the plants", 2.0)
        asyncio.run(listen_for_one(reminder_id))
    assert received == [(reminder_id, "water the plants")], log.read_text()


def test_sighup_reloads_the_allowlist_and_keeps_every_reminder(
    config: Path, notification_server, private_dirs: Path, tmp_path: Path
) -> None:
    log = tmp_path / "run.log"
    marker = private_dirs / "marker"
    with daemon_process(log) as process:
        reminder_id = add_reminder("stretch", 4.0)
        config.write_text(CONFIG.format(argv=write_marker_argv(marker, "after")))
        process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 30
        while "configuration reloaded" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        dbus_client.say("lock the screen")
        assert marker.read_text() == "after"  # the reloaded allowlist ran
        # A broken config on SIGHUP: said, and the running one stays.
        config.write_text("[wakeword]\nthreshold = 7\n")
        process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 30
        while "reload failed" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        assert "config.toml:2" in log.read_text()
        marker.unlink()
        dbus_client.say("lock the screen")
        assert marker.read_text() == "after"
        deadline = time.monotonic() + 20
        while not firings(reminder_id):
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        time.sleep(1.0)
        assert firings(reminder_id) == 1
        process.send_signal(signal.SIGTERM)
        assert process.wait(10) == 0
    received = notification_server.interface.received
    notes = [n for n in received if "stretch" in n.body]
    assert len(notes) == 1, received


@synchronously
async def test_a_crashing_service_is_restarted_with_backoff_and_the_others_go_on(
    private_dirs: Path,
) -> None:
    settings = parse_settings('[router]\nllm_enabled = false\n[notifications]\nenabled = false\n')
    daemon = Daemon(
        settings,
        options=DaemonOptions(stdin_turns=False, poll_s=0.1, dbus_api=False),
    )
    runs: list[float] = []

    async def flaky() -> None:
        runs.append(time.monotonic())
        if len(runs) <= 2:
            raise RuntimeError("boom")
        await asyncio.Event().wait()

    daemon.add_service("flaky", flaky)
    await daemon.start()
    try:
        assert daemon.store is not None
        book = ReminderBook(daemon.store, TZ)
        now = datetime.now(TZ)
        reminder = book.add("still fires", now + timedelta(seconds=1), now=now)
        daemon.scheduler.request_sync()
        await until(lambda: len(runs) == 3, 10, "the third start")
        await until(lambda: book.firings(reminder.id), 10, "the reminder")
        turn = await daemon.say("set a timer for five minutes")
    finally:
        await daemon.stop()
    assert daemon.restarts == {"flaky": 2}
    gaps = [b - a for a, b in itertools.pairwise(runs)]
    assert 0.9 <= gaps[0] < 1.8 and 1.9 <= gaps[1] < 3.0, gaps  # 1 s, then 2 s
    assert turn.reply.text.startswith("Timer set")
