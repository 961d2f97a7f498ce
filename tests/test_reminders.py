"""Reminders: the table, real APScheduler jobs on the same SQLite file, delivery
over a real private session bus to the recording notification server."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.config import ReminderSettings
from mavend.daemon.lifecycle import Daemon, DaemonOptions
from mavend.errors import MavendError, NotFoundError
from mavend.scheduler import ReminderBook, ReminderScheduler, Status
from mavend.state.store import Store
from tests.state_kit import TZ, kit_router, kit_settings, real_clock, wait_for

NOW = datetime(2026, 3, 10, 14, 0, tzinfo=TZ)


@pytest.fixture
def book(tmp_path: Path) -> ReminderBook:
    store = Store(tmp_path / "state.sqlite3")
    yield ReminderBook(store, TZ)
    store.close()


# the table ------------------------------------------------------------------
def test_the_fire_time_is_stored_absolute_in_the_users_zone(book: ReminderBook) -> None:
    from zoneinfo import ZoneInfo

    utc = datetime(2026, 3, 10, 16, 0, 0, 123456, tzinfo=ZoneInfo("UTC"))
    reminder = book.add("call mom", utc, now=NOW)
    assert reminder.due == "2026-03-10T17:00:00+01:00"
    assert reminder.status == Status.PENDING and reminder.text == "call mom"
    with pytest.raises(ValueError, match="timezone-aware"):
        book.add("naive", datetime(2026, 3, 10, 17, 0), now=NOW)


def test_a_due_time_fires_once(book: ReminderBook) -> None:
    reminder = book.add("call mom", NOW + timedelta(hours=1), now=NOW)
    later = NOW + timedelta(hours=1, seconds=1)
    first = book.fire(reminder.id, reminder.due, now=later, late=False)
    assert first is not None and first.reminder.status == Status.FIRED
    assert book.fire(reminder.id, reminder.due, now=later, late=False) is None
    assert len(book.firings(reminder.id)) == 1
    assert [f.due for f in book.undelivered()] == [reminder.due]


def test_a_snooze_is_a_new_due_time_and_a_stale_job_is_a_no_op(book: ReminderBook) -> None:
    reminder = book.add("stretch", NOW + timedelta(minutes=1), now=NOW)
    book.fire(reminder.id, reminder.due, now=NOW + timedelta(minutes=1), late=False)
    snoozed = book.snooze(reminder.id, 10, now=NOW + timedelta(minutes=2))
    assert snoozed.status == Status.PENDING and snoozed.snoozes == 1
    assert snoozed.fire_at == NOW + timedelta(minutes=12)
    assert book.undelivered() == []  # snoozed before it was shown: not shown now
    assert book.fire(reminder.id, reminder.due, now=NOW, late=False) is None  # the old job
    assert book.fire(snoozed.id, snoozed.due, now=NOW, late=False) is not None
    assert len(book.firings(reminder.id)) == 2


def test_cancelled_reminders_never_fire_and_cannot_be_snoozed(book: ReminderBook) -> None:
    reminder = book.add("water the plants", NOW + timedelta(hours=2), now=NOW)
    assert book.cancel(reminder.id).status == Status.CANCELLED
    assert book.fire(reminder.id, reminder.due, now=NOW, late=False) is None
    with pytest.raises(MavendError, match="was cancelled"):
        book.snooze(reminder.id, 5, now=NOW)
    with pytest.raises(NotFoundError, match="no reminder with id 99"):
        book.cancel(99)
    assert book.pending() == []
    assert [r.id for r in book.list(statuses=None)] == [reminder.id]


# the scheduler --------------------------------------------------------------
def start_scheduler(settings, store: Store, fired: list) -> ReminderScheduler:
    scheduler = ReminderScheduler(
        store, settings, TZ, on_fired=fired.append, clock=real_clock(), poll_s=0.1
    )
    scheduler.start()
    return scheduler


def job_ids(scheduler: ReminderScheduler) -> set[str]:
    return set(scheduler.jobs())


def test_a_scheduled_reminder_fires_once_on_time(tmp_path: Path) -> None:
    settings = kit_settings(tmp_path)
    store = Store.open(settings)
    book = ReminderBook(store, TZ)
    fired: list = []
    scheduler = start_scheduler(settings, store, fired)
    try:
        # Set after the start, by "another process" (its own connection): the
        # watcher must notice it.
        other = ReminderBook(Store(store.path), TZ)
        reminder = other.add("stretch", datetime.now(TZ) + timedelta(seconds=1.5), now=NOW)
        wait_for(lambda: f"reminder-{reminder.id}" in job_ids(scheduler), 5, "the job")
        wait_for(lambda: fired, 6, "the reminder to fire")
        time.sleep(0.5)  # a few more watcher cycles: nothing fires again
        assert job_ids(scheduler) == set()
    finally:
        scheduler.stop()
    (firing,) = fired
    assert firing.reminder.id == reminder.id and not firing.late
    assert len(book.firings(reminder.id)) == 1
    assert book.get(reminder.id).status == Status.FIRED


def test_missed_while_stopped_fires_late_once_and_too_old_is_missed(tmp_path: Path) -> None:
    settings = kit_settings(tmp_path, reminders=ReminderSettings(misfire_grace_s=3600))
    store = Store.open(settings)
    book = ReminderBook(store, TZ)
    now = datetime.now(TZ)
    soon = book.add("scheduled before the stop", now + timedelta(seconds=1), now=now)
    fired: list = []
    first = start_scheduler(settings, store, fired)
    assert job_ids(first) == {f"reminder-{soon.id}"}
    first.stop()  # "down" before the fire time; the table still holds it, pending
    # Set while down (no job yet), and one older than the misfire grace.
    while_down = book.add("set while down", now - timedelta(minutes=5), now=now)
    ancient = book.add("ancient", now - timedelta(hours=2), now=now)
    # Back more than the start-up slack (2 s) after its time: it was missed while down.
    time.sleep(max(0.0, (soon.fire_at - datetime.now(TZ)).total_seconds()) + 2.2)
    assert fired == [] and book.get(soon.id).status == Status.PENDING
    second = start_scheduler(settings, store, fired)
    try:
        wait_for(lambda: len(fired) == 2, 5, "both late reminders")
        time.sleep(0.5)
    finally:
        second.stop()
    assert sorted(f.reminder.id for f in fired) == [soon.id, while_down.id]
    assert all(f.late for f in fired)
    assert [len(book.firings(r.id)) for r in (soon, while_down, ancient)] == [1, 1, 0]
    assert book.get(ancient.id).status == Status.MISSED


# delivery, through the in-process daemon --------------------------------------
@contextlib.asynccontextmanager
async def running(settings, **options) -> AsyncIterator[Daemon]:
    daemon = Daemon(
        settings,
        router=kit_router(settings, real_clock()),
        options=DaemonOptions(stdin_turns=False, poll_s=0.1, **options),
    )
    await daemon.start()
    try:
        yield daemon
    finally:
        await daemon.stop()


async def until(condition: Callable[[], object], timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := condition():
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def reminders_shown(server) -> list:
    return [n for n in server.interface.received if n.summary.startswith(("Reminder", "Timer"))]


def test_a_reminder_2_s_ahead_fires_one_notify_with_the_right_text(
    tmp_path: Path, notification_server
) -> None:
    settings = kit_settings(tmp_path)

    async def go() -> tuple[str, list]:
        async with running(settings) as daemon:
            turn = await daemon.submit_text("remind me in 2 seconds to stretch your legs")
            await until(lambda: reminders_shown(notification_server), 6, "the reminder")
            await asyncio.sleep(0.5)
            return turn.reply.text, reminders_shown(notification_server)

    reply, shown = asyncio.run(go())
    assert reply.startswith("OK, I'll remind you to stretch your legs at ")
    (note,) = shown
    assert (note.summary, note.body) == ("Reminder", "stretch your legs")
    assert note.actions == ["done", "Done", "snooze", "Snooze 10 min"]
    # The turn's reply was shown too, as its own notification.
    received = notification_server.interface.received
    assert any(n.summary == "mavend" and n.body == reply for n in received)


def test_snooze_through_action_invoked_reschedules(tmp_path: Path, notification_server) -> None:
    settings = kit_settings(tmp_path)
    server = notification_server

    async def go():
        async with running(settings, notify_replies=False) as daemon:
            book = daemon.scheduler.book
            reminder = book.add(
                "take the pizza out",
                datetime.now(TZ) + timedelta(seconds=0.5),
                now=datetime.now(TZ),
            )
            daemon.scheduler.request_sync()
            await until(lambda: reminders_shown(server), 5, "the reminder")
            nid = await until(
                lambda: (f := book.firings(reminder.id)) and f[0].notification_id,
                3,
                "the delivery record",
            )
            clicked = datetime.now(TZ)
            server._loop.call_soon_threadsafe(server.interface.ActionInvoked, nid, "snooze")
            snoozed = await until(
                lambda: (r := book.get(reminder.id)).status == Status.PENDING and r, 3, "snooze"
            )
            jobs = await until(
                lambda: (j := daemon.scheduler.jobs()).get(f"reminder-{reminder.id}") and j,
                3,
                "the new job",
            )
            return clicked, snoozed, jobs

    clicked, snoozed, jobs = asyncio.run(go())
    expected = clicked + timedelta(minutes=10)
    assert abs((snoozed.fire_at - expected).total_seconds()) < 2 and snoozed.snoozes == 1
    assert jobs[f"reminder-{snoozed.id}"] == snoozed.fire_at
    assert len(reminders_shown(server)) == 1  # not shown again until the new time


@pytest.mark.parametrize("signal", ["ActionInvoked", "NotificationClosed"])
def test_done_or_dismissing_acknowledges_the_reminder(
    tmp_path: Path, notification_server, signal: str
) -> None:
    settings = kit_settings(tmp_path)
    server = notification_server
    # "Done" clicked, or the notification dismissed by the user (reason 2).
    emit, argument = {
        "ActionInvoked": (server.interface.ActionInvoked, "done"),
        "NotificationClosed": (server.interface.NotificationClosed, 2),
    }[signal]

    async def go():
        async with running(settings, notify_replies=False) as daemon:
            book = daemon.scheduler.book
            reminder = book.add(
                "done test", datetime.now(TZ) + timedelta(seconds=0.3), now=datetime.now(TZ)
            )
            daemon.scheduler.request_sync()
            nid = await until(
                lambda: (f := book.firings(reminder.id)) and f[0].notification_id, 5, "delivery"
            )
            server._loop.call_soon_threadsafe(emit, nid, argument)
            return await until(
                lambda: (r := book.get(reminder.id)).status == Status.DONE and r, 3, "done"
            )

    assert asyncio.run(go()).status == Status.DONE


def test_without_a_bus_it_fires_and_is_delivered_when_the_bus_returns(
    tmp_path: Path, monkeypatch, request
) -> None:
    settings = kit_settings(tmp_path)
    # Where the session_bus fixture will listen once it is started, mid-test.
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path / 'bus'}")

    async def go():
        async with running(settings, notify_replies=False) as daemon:
            book = daemon.scheduler.book
            reminder = book.add(
                "held back", datetime.now(TZ) + timedelta(seconds=0.3), now=datetime.now(TZ)
            )
            daemon.scheduler.request_sync()
            held = await until(
                lambda: (f := book.firings(reminder.id)) and f[0].attempts >= 1 and f[0],
                5,
                "a failed delivery attempt",
            )
            server = request.getfixturevalue("notification_server")
            firings = await until(
                lambda: (f := book.firings(reminder.id))[0].delivered_at and f,
                5,
                "the delivery after the bus returned",
            )
            return held, firings, reminders_shown(server)

    held, firings, shown = asyncio.run(go())
    assert held.delivered_at is None and held.reminder.status == Status.FIRED
    assert "no session bus" in _last_error(tmp_path, held.reminder.id)
    (firing,) = firings
    assert firing.delivered_at is not None and firing.notification_id == 1
    assert [n.body for n in shown] == ["held back"]


def _last_error(tmp_path: Path, reminder_id: int) -> str:
    path = kit_settings(tmp_path).storage.database_path()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return conn.execute(
            "SELECT last_error FROM firings WHERE reminder_id = ?", (reminder_id,)
        ).fetchone()[0]


def test_a_firing_not_yet_shown_is_shown_at_start_and_not_fired_again(
    tmp_path: Path, notification_server
) -> None:
    settings = kit_settings(tmp_path)
    store = Store.open(settings)
    book = ReminderBook(store, TZ)
    now = datetime.now(TZ)
    reminder = book.add("fired before a crash", now - timedelta(minutes=1), now=now)
    # The daemon recorded the firing and died before showing it.
    assert book.fire(reminder.id, reminder.due, now=now, late=False) is not None

    async def go() -> None:
        async with running(settings, notify_replies=False):
            await until(lambda: reminders_shown(notification_server), 5, "the re-delivery")
            await asyncio.sleep(0.5)

    asyncio.run(go())
    (shown,) = reminders_shown(notification_server)
    assert shown.body == "fired before a crash"
    (firing,) = book.firings(reminder.id)
    assert firing.delivered_at is not None and not firing.late
    store.close()


def test_an_absurd_snooze_is_refused_not_a_crash(book: ReminderBook) -> None:
    from mavend.errors import MavendError

    reminder = book.add("tea", NOW + timedelta(minutes=1), now=NOW)
    with pytest.raises(MavendError, match="a week"):
        book.snooze(reminder.id, 10**12, now=NOW)
    assert book.get(reminder.id).fire_at == NOW + timedelta(minutes=1)


# repeating reminders on the real scheduler ---------------------------------------
def test_a_series_fires_each_occurrence_once_and_moves_on(tmp_path: Path) -> None:
    from mavend.recurrence import Series

    settings = kit_settings(tmp_path)
    store = Store.open(settings)
    book = ReminderBook(store, TZ)
    fired: list = []
    start = datetime.now(TZ).replace(microsecond=0) + timedelta(seconds=2)
    series = Series("FREQ=SECONDLY;INTERVAL=1;COUNT=3", start)
    scheduler = start_scheduler(settings, store, fired)
    try:
        reminder = ReminderBook(Store(store.path), TZ).add(
            "stand up", start, now=datetime.now(TZ), series=series
        )
        wait_for(lambda: len(fired) == 3, 8, "three occurrences")
        time.sleep(1.0)  # more watcher cycles: nothing fires again
    finally:
        scheduler.stop()
    assert [f.due for f in fired] == [
        (start + timedelta(seconds=s)).isoformat() for s in range(3)
    ]
    assert [f.due for f in book.firings(reminder.id)] == [f.due for f in fired]
    # The last occurrence ends the series: fired, like a one-off.
    ended = book.get(reminder.id)
    assert ended.status == Status.FIRED and ended.due == fired[-1].due
    assert ended.series is not None and ended.series.rule.endswith("COUNT=3")


def test_a_series_missed_while_down_fires_once_late_then_goes_on(tmp_path: Path) -> None:
    """Two hours down, a grace of one hour, an occurrence every ten minutes: the one
    inside the grace fires once, late; the older ones are skipped; no burst."""
    from mavend.recurrence import Series

    settings = kit_settings(tmp_path, reminders=ReminderSettings(misfire_grace_s=3600))
    store = Store.open(settings)
    book = ReminderBook(store, TZ)
    now = datetime.now(TZ).replace(microsecond=0)
    start = now - timedelta(hours=2, seconds=30)
    reminder = book.add(
        "check the bread", start, now=start, series=Series("FREQ=MINUTELY;INTERVAL=10", start)
    )
    fired: list = []
    scheduler = start_scheduler(settings, store, fired)
    try:
        wait_for(lambda: fired, 5, "the late occurrence")
        time.sleep(1.0)
        jobs = scheduler.jobs()
    finally:
        scheduler.stop()
    (late,) = fired
    assert late.late
    due = datetime.fromisoformat(late.due)
    # The first occurrence inside the grace (just under an hour ago), not the oldest.
    assert timedelta(minutes=50) <= now - due <= timedelta(hours=1)
    after = book.get(reminder.id)
    assert after.status == Status.PENDING and after.fire_at > now
    assert after.fire_at - now <= timedelta(minutes=10)
    assert jobs == {f"reminder-{reminder.id}": after.fire_at}
    assert len(book.firings(reminder.id)) == 1


def test_a_paused_timer_has_no_job_and_fires_after_it_resumes(tmp_path: Path) -> None:
    settings = kit_settings(tmp_path)
    store = Store.open(settings)
    book = ReminderBook(store, TZ)
    fired: list = []
    scheduler = start_scheduler(settings, store, fired)
    try:
        other = ReminderBook(Store(store.path), TZ)
        now = datetime.now(TZ)
        timer = other.add("egg timer", now + timedelta(seconds=1.5), now=now, kind="timer",
                          name="egg")
        other.pause(timer.id, now=datetime.now(TZ))
        time.sleep(2.5)  # past its old time: paused, it must not fire
        assert fired == [] and job_ids(scheduler) == set()
        assert [r.id for r in book.active()] == [timer.id] and book.pending() == []
        resumed = other.resume(timer.id, now=datetime.now(TZ))
        assert resumed.paused_left is None
        wait_for(lambda: fired, 5, "the resumed timer")
    finally:
        scheduler.stop()
    (firing,) = fired
    assert firing.reminder.id == timer.id and firing.due == resumed.due
    assert book.get(timer.id).status == Status.FIRED


def test_reminders_list_shows_the_rule(private_dirs: Path) -> None:
    """`mavend reminders list`, run as a user runs it, on a series and a paused timer."""
    import json
    import os
    import subprocess
    import sys

    from mavend.config import Settings
    from mavend.recurrence import parse_series

    config = private_dirs / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        '[router]\nllm_enabled = false\n\n[reminders]\ntimezone = "Europe/Berlin"\n'
    )
    store = Store(Settings().storage.database_path())
    book = ReminderBook(store, TZ)
    now = datetime.now(TZ).replace(microsecond=0)
    spoken = parse_series("every monday and thursday at 7 pm go swimming", now)
    assert spoken is not None and spoken.series is not None
    swim = book.add("go swimming", now, now=now, series=spoken.series)
    timer = book.add(
        "pasta timer", now + timedelta(minutes=8), now=now, kind="timer", name="pasta"
    )
    book.pause(timer.id, now=now)
    store.close()
    mavend = Path(sys.executable).parent / "mavend"

    def run(*args: str) -> str:
        done = subprocess.run(
            [str(mavend), "reminders", "list", *args], capture_output=True, text=True,
            timeout=60, env=os.environ.copy(),
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    lines = run().splitlines()
    assert any(
        line.startswith(f"{swim.id:>4}  {swim.due}") and "go swimming" in line
        and "(repeats every Monday and Thursday at 19:00)" in line
        for line in lines
    ), lines
    assert any(
        "(paused)  pasta timer" in line and "[paused, 480 s left]" in line for line in lines
    ), lines
    rows = {r["id"]: r for r in map(json.loads, run("--json").splitlines())}
    assert rows[swim.id]["rule"] == "FREQ=WEEKLY;BYDAY=MO,TH"
    assert rows[swim.id]["repeats"] == "every Monday and Thursday at 19:00"
    assert rows[timer.id]["paused_left"] == 480 and rows[timer.id]["name"] == "pasta"


@pytest.mark.parametrize("action", ["snooze", "done"])
def test_snooze_or_done_on_an_occurrence_leaves_the_series_going(
    tmp_path: Path, notification_server, action: str
) -> None:
    """Through the in-process daemon and the notification server: an occurrence of a
    series is shown; its Snooze makes a one-off copy, its Done acknowledges it; either
    way the series stays pending at its next occurrence, with its job."""
    from mavend.recurrence import Series

    settings = kit_settings(tmp_path)
    server = notification_server

    async def go():
        async with running(settings, notify_replies=False) as daemon:
            book = daemon.scheduler.book
            now = datetime.now(TZ)
            start = (now + timedelta(seconds=1)).replace(microsecond=0)
            series = book.add(
                "feed the fish", start, now=now, series=Series("FREQ=DAILY", start)
            )
            daemon.scheduler.request_sync()
            nid = await until(
                lambda: (f := book.firings(series.id)) and f[0].notification_id, 5, "delivery"
            )
            server._loop.call_soon_threadsafe(server.interface.ActionInvoked, nid, action)
            if action == "snooze":
                await until(lambda: len(book.list(statuses=None)) == 2, 3, "the snoozed copy")
            else:
                await asyncio.sleep(0.5)
            def every_pending_job() -> dict | None:
                # The series' next job and, after a snooze, the copy's: the scheduler syncs
                # them one after the other (CI once read the jobs between the two).
                jobs = daemon.scheduler.jobs()
                pending = [r for r in book.list(statuses=None) if r.status == Status.PENDING]
                wanted = {f"reminder-{series.id}", *(f"reminder-{r.id}" for r in pending)}
                return jobs if wanted <= set(jobs) else None

            jobs = await until(every_pending_job, 3, "the jobs of the series and its copy")
            return start, book.list(statuses=None), jobs

    start, reminders, jobs = asyncio.run(go())
    kept = reminders[-1] if action == "snooze" else reminders[0]
    assert kept.series is not None and kept.status == Status.PENDING
    assert kept.fire_at == start + timedelta(days=1)
    assert jobs[f"reminder-{kept.id}"] == kept.fire_at
    (note,) = reminders_shown(server)
    assert note.body == "feed the fish\nRepeats every day at " + f"{start:%H:%M}."
    if action == "snooze":
        copy = reminders[0]
        assert (copy.series, copy.status, copy.text) == (None, Status.PENDING, "feed the fish")
        assert jobs[f"reminder-{copy.id}"] == copy.fire_at
        assert timedelta(minutes=9) < copy.fire_at - start < timedelta(minutes=11)
