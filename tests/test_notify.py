"""Notifications over a real private session bus, to the recording test server
and, once, to a real Debian notification daemon (dunst under Xvfb)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mavend.config import NotificationSettings
from mavend.notify import Notification, Notifier, NotifyUnavailable, cut, prepare_body
from tests.state_kit import wait_for

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
