"""Notifications over a real private session bus, to the recording test server
and to a real Debian notification daemon (dunst under Xvfb)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.config import NotificationSettings, Settings
from mavend.desktop.entry import install_desktop_files
from mavend.desktop.notify import (
    Notification,
    Notifier,
    NotifyUnavailable,
    Shown,
    cut,
    prepare_body,
)
from mavend.scheduler import Firing, ReminderBook, ReminderDelivery, firing_tag
from mavend.state.store import Store
from tests.notify_server import NotificationServer
from tests.state_kit import TZ, wait_for

SETTINGS = NotificationSettings(app_name="mavend-test", urgency="critical", max_body_chars=100)


def test_bodies_are_escaped_after_cutting() -> None:
    assert prepare_body("<b>x</b> & y", 100, markup=True) == "&lt;b&gt;x&lt;/b&gt; &amp; y"
    assert prepare_body("<b>x</b>", 100, markup=False) == "<b>x</b>"
    cut_body = prepare_body("a&" * 60, 50, markup=True)
    assert cut_body.endswith("…") and "&amp;" in cut_body
    assert not cut_body.removesuffix("…").endswith("&am")  # never a split entity
    assert prepare_body("bell\x07 and\x00 nul", 100, markup=False) == "bell  and  nul"


def test_cut_prefers_a_word_boundary_and_keeps_the_limit() -> None:
    text = "word " * 50
    out = cut(text, 42)
    assert len(out) <= 42 and out.endswith("word…")
    assert cut("x" * 50, 10) == "x" * 9 + "…"
    assert cut("short", 10) == "short"


def test_notify_sends_summary_escaped_body_actions_and_urgency(notification_server) -> None:
    async def go() -> int:
        notifier = Notifier(SETTINGS)
        try:
            return await notifier.notify(
                Notification("Reminder", "call <i>mom</i> & dad", actions=(("done", "Done"),))
            )
        finally:
            await notifier.close()

    notification_id = asyncio.run(go())
    (sent,) = notification_server.interface.received
    assert notification_id >= 1
    assert (sent.app_name, sent.summary) == ("mavend-test", "Reminder")
    assert sent.body == "call &lt;i&gt;mom&lt;/i&gt; &amp; dad"
    assert sent.actions == ["done", "Done"]
    assert sent.hints["urgency"].value == 2 and sent.timeout == -1


def test_a_10000_character_body_is_cut(notification_server) -> None:
    async def go() -> None:
        notifier = Notifier(SETTINGS)
        await notifier.notify(Notification("Reminder", "<" * 10_000))
        await notifier.close()

    asyncio.run(go())
    (sent,) = notification_server.interface.received
    visible = sent.body.replace("&lt;", "<")
    assert len(visible) == SETTINGS.max_body_chars and visible.endswith("…")


def test_action_and_close_signals_reach_the_callbacks(notification_server) -> None:
    server = notification_server
    got: list[tuple[str, int, object]] = []

    async def go() -> None:
        notifier = Notifier(SETTINGS)
        notifier.on_action = lambda nid, key: got.append(("action", nid, key))
        notifier.on_closed = lambda nid, reason: got.append(("closed", nid, reason))
        nid = await notifier.notify(Notification("Reminder", "stretch"))
        server._loop.call_soon_threadsafe(server.interface.ActionInvoked, nid, "snooze")
        await notifier.close_notification(nid)  # the server answers with NotificationClosed
        for _ in range(100):
            if len(got) == 2:
                break
            await asyncio.sleep(0.02)
        await notifier.close()

    asyncio.run(go())
    assert got == [("action", 1, "snooze"), ("closed", 1, 3)]


def test_no_bus_then_no_server_then_both(tmp_path: Path, monkeypatch, request) -> None:
    # The address of the bus the session_bus fixture will start later.
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path / 'bus'}")

    async def attempt(notifier: Notifier) -> int | str:
        try:
            return await notifier.notify(Notification("Reminder", "held"))
        except NotifyUnavailable as exc:
            return str(exc)

    async def go() -> list[int | str]:
        notifier = Notifier(SETTINGS)
        results = [await attempt(notifier)]
        request.getfixturevalue("session_bus")
        results.append(await attempt(notifier))
        request.getfixturevalue("notification_server")
        results.append(await attempt(notifier))
        await notifier.close()
        return results

    no_bus, no_server, delivered = asyncio.run(go())
    assert "no session bus" in no_bus
    assert no_server == "no notification server on the session bus"
    assert delivered == 1


@pytest.fixture
def dunst(session_bus: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """dunst on a headless X server (Xvfb), on the private session bus."""
    for tool in ("Xvfb", "dunst", "dunstctl"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed: apt-get install xvfb dunst (make test does)")
    read_fd, write_fd = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "800x600x24", "-nolisten", "tcp"],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        display = ":" + pipe.readline().strip()
    env = {**os.environ, "DISPLAY": display, "HOME": str(tmp_path)}
    daemon = subprocess.Popen(
        ["dunst"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for(
            lambda: (
                subprocess.run(
                    ["dunstctl", "is-paused"], env=env, capture_output=True, timeout=5
                ).returncode
                == 0
            ),
            10,
            "dunst to own org.freedesktop.Notifications",
        )
        yield env
    finally:
        daemon.terminate()
        xvfb.terminate()
        daemon.wait(5)
        xvfb.wait(5)


def test_smoke_against_dunst(dunst: dict[str, str]) -> None:
    closed: list[tuple[int, int]] = []

    async def go() -> tuple[tuple[str, ...], int]:
        notifier = Notifier(NotificationSettings(max_body_chars=200))
        notifier.on_closed = lambda nid, reason: closed.append((nid, reason))
        info = await notifier.server_information()
        nid = await notifier.notify(
            Notification("Reminder", "<b>markup</b> & " + "x" * 5000, actions=(("done", "Done"),))
        )
        await asyncio.to_thread(
            wait_for,
            lambda: _dunst_count(dunst) == 1,
            10,
            "dunst to display the notification",
        )
        await asyncio.to_thread(
            subprocess.run, ["dunstctl", "close"], env=dunst, check=True, timeout=5
        )
        for _ in range(100):
            if closed:
                break
            await asyncio.sleep(0.05)
        await notifier.close()
        return info, nid

    info, nid = asyncio.run(go())
    assert info[0] == "dunst"
    assert closed and closed[0][0] == nid


def _dunst_count(env: dict[str, str]) -> int:
    out = subprocess.run(
        ["dunstctl", "count", "displayed"], env=env, capture_output=True, text=True, timeout=5
    ).stdout
    return int(out.strip() or 0)


def test_a_firing_shown_twice_replaces_itself_on_dunst(dunst: dict[str, str]) -> None:
    # A crash between the server's reply and the delivery record shows a firing
    # again at the next start (tests/test_crash.py); its tag makes dunst replace it.
    # (dunst also stacks identical texts, but only while `stack_duplicates` is on:
    # the bodies differ here so that only the tag can merge them.)
    async def go() -> None:
        notifier = Notifier(NotificationSettings())
        for body, tag in [
            ("feed the cat", "mavend-reminder-1-a"),
            ("feed the cat (again)", "mavend-reminder-1-a"),
            ("water the plants", "mavend-reminder-2-b"),
        ]:
            await notifier.notify(Notification("Reminder", body, tag=tag))
        await notifier.close()

    asyncio.run(go())
    wait_for(lambda: _dunst_count(dunst) >= 2, 10, "dunst to display the notifications")
    waiting = ["dunstctl", "count", "waiting"]
    wait_for(
        lambda: (
            subprocess.run(waiting, env=dunst, capture_output=True, text=True).stdout.strip() == "0"
        ),
        10,
        "dunst to have nothing waiting",
    )
    assert _dunst_count(dunst) == 2  # two firings, two notifications: not three


# the desktop entry, the icon, reminders' hints and replacing ---------------------------
def test_every_notification_names_mavend_s_desktop_entry_and_icon(notification_server) -> None:
    async def go() -> None:
        for settings in (SETTINGS, NotificationSettings(icon="file:///opt/mavend/mic.svg")):
            notifier = Notifier(settings)
            await notifier.notify(Notification("mavend", "a reply"))
            await notifier.close()

    asyncio.run(go())
    default, custom = notification_server.interface.received
    assert (default.icon, custom.icon) == ("mavend", "file:///opt/mavend/mic.svg")
    for sent in (default, custom):
        assert sent.hints["desktop-entry"].value == "mavend"  # mavend.desktop, installed
        assert "category" not in sent.hints and "sound-name" not in sent.hints  # replies: none


def fired_reminder(path: Path, *, timeout_s: float = 5.0) -> tuple[ReminderBook, Firing]:
    """A reminder fired a moment ago and not yet shown, in a real database file."""
    book = ReminderBook(Store(path, timeout_s=timeout_s), TZ)
    now = datetime.now(TZ)
    reminder = book.add("feed the cat", now - timedelta(seconds=1), now=now)
    firing = book.fire(reminder.id, reminder.due, now=now, late=False)
    assert firing is not None
    return book, firing


def delivery(book: ReminderBook, urgency: str = "normal") -> ReminderDelivery:
    settings = Settings(notifications=NotificationSettings(urgency=urgency))
    return ReminderDelivery(
        book, Notifier(settings.notifications), settings, clock=lambda: datetime.now(TZ)
    )


def test_a_reminder_carries_category_urgency_alarm_sound_entry_and_icon(
    tmp_path: Path, notification_server
) -> None:
    book, firing = fired_reminder(tmp_path / "state.sqlite3")

    async def go() -> bool:
        reminders = delivery(book, urgency="critical")
        try:
            return await reminders.deliver_pending()
        finally:
            await reminders.notifier.close()

    assert asyncio.run(go())
    (sent,) = notification_server.interface.received
    hints = {key: variant.value for key, variant in sent.hints.items()}
    assert hints == {
        "urgency": 2,  # critical, as configured
        "desktop-entry": "mavend",
        "category": "x-mavend.reminder",
        "sound-name": "alarm-clock-elapsed",
        "x-dunst-stack-tag": firing_tag(firing),
    }
    assert (sent.icon, sent.replaces_id, sent.summary) == ("mavend", 0, "Reminder")
    (recorded,) = book.firings(firing.reminder.id)
    assert recorded.delivered_at is not None and recorded.notification_id == 1


def hold_the_database(path: Path) -> sqlite3.Connection:
    """Another process's write transaction: every write of ours waits, then fails."""
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    return blocker


def test_a_show_whose_record_failed_is_shown_again_in_place_of_the_first(
    tmp_path: Path, notification_server
) -> None:
    # The server showed the reminder but its delivery could not be recorded (the
    # database was locked), so the next round shows it again: through the spec's
    # replaces_id, in place of the first, on any server (here without the tag's help:
    # the recording server ignores tags), and without ringing a second time.
    path = tmp_path / "state.sqlite3"
    book, firing = fired_reminder(path, timeout_s=0.2)
    server = notification_server.interface

    async def go() -> None:
        reminders = delivery(book)
        blocker = hold_the_database(path)
        await reminders.deliver_pending()
        assert book.undelivered() == [firing]  # shown, not recorded
        blocker.execute("ROLLBACK")
        blocker.close()
        await reminders.deliver_pending()
        await reminders.deliver_pending()  # recorded now: nothing more is shown
        await reminders.notifier.close()

    asyncio.run(go())
    first, again = server.received
    assert (first.replaces_id, again.replaces_id) == (0, 1)
    assert "sound-name" in first.hints and "sound-name" not in again.hints
    assert list(server.shown) == [1] and server.shown[1] is again  # replaced, not added
    (recorded,) = book.firings(firing.reminder.id)
    assert recorded.delivered_at is not None and recorded.notification_id == 1


def test_an_id_from_a_server_that_has_restarted_since_is_not_replaced(
    tmp_path: Path, notification_server
) -> None:
    # A restarted server numbers from 1 again: the old id may now be another
    # program's notification, so the re-show is a new notification (replaces_id 0).
    path = tmp_path / "state.sqlite3"
    book, firing = fired_reminder(path, timeout_s=0.2)
    servers = [notification_server]

    async def go() -> None:
        reminders = delivery(book)
        blocker = hold_the_database(path)
        await reminders.deliver_pending()
        blocker.execute("ROLLBACK")
        blocker.close()
        notification_server.stop()
        servers.append(NotificationServer(notification_server.address).start())
        await reminders.deliver_pending()
        await reminders.notifier.close()

    try:
        asyncio.run(go())
    finally:
        servers[-1].stop()
    before, after = (server.interface.received for server in servers)
    assert [n.replaces_id for n in before] == [0] and [n.replaces_id for n in after] == [0]
    assert "sound-name" in after[0].hints  # a new notification rings
    assert book.firings(firing.reminder.id)[0].delivered_at is not None


def _dunst_history(env: dict[str, str]) -> list[dict[str, object]]:
    out = subprocess.run(
        ["dunstctl", "history"], env=env, capture_output=True, text=True, timeout=5, check=True
    ).stdout
    return [{key: value["data"] for key, value in n.items()} for n in json.loads(out)["data"][0]]


def test_dunst_replaces_by_id_and_finds_the_installed_icon(tmp_path: Path, request) -> None:
    # Before dunst starts (the fixture): the icon installed as `mavend service install`
    # does, and dunst told to look for icons there (it has no hicolor lookup by default).
    share = tmp_path / "share"
    _, icon = install_desktop_files(share)
    dunstrc = tmp_path / ".config" / "dunst" / "dunstrc"
    dunstrc.parent.mkdir(parents=True)
    dunstrc.write_text(f"[global]\n    icon_path = {icon.parent}\n")
    env = request.getfixturevalue("dunst")

    async def go() -> tuple[Shown, Shown]:
        notifier = Notifier(NotificationSettings(urgency="critical"))
        # No stack tag: only replaces_id can merge the two.
        note = Notification("Reminder", "feed the cat", category="x-mavend.reminder")
        first = await notifier.show(note)
        second = await notifier.show(
            Notification("Reminder", "feed the cat (again)", category=note.category),
            replacing=first,
        )
        await notifier.close()
        return first, second

    first, second = asyncio.run(go())
    assert second.id == first.id
    wait_for(lambda: _dunst_count(env) >= 1, 10, "dunst to display the notification")
    assert _dunst_count(env) == 1  # replaced, not added
    subprocess.run(["dunstctl", "close-all"], env=env, check=True, timeout=5)
    wait_for(lambda: _dunst_history(env), 10, "dunst to move it to its history")
    (shown,) = _dunst_history(env)
    assert (shown["id"], shown["body"]) == (first.id, "feed the cat (again)")
    assert (shown["appname"], shown["category"]) == ("mavend", "x-mavend.reminder")
    assert shown["icon_path"] == str(icon)  # the icon name resolved to the installed file
    assert shown["timeout"] == 0  # critical: dunst keeps it until dismissed
