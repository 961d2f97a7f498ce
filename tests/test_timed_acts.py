"""Acts with a time around them (mavend.handlers.timed), judged by what they leave: a real
sound server's mute state, the reminders table's scheduled rows, and the act the daemon
runs when a row fires.

    "mute for an hour"               muted now; a row unmutes it an hour later
    "lock the screen in ten minutes"  nothing now; a row locks it then
    "mute" said twice                 still muted (the act sets the state, never toggles it)
"""

from __future__ import annotations

import asyncio
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.api import client as dbus_client
from mavend.config import ActSlot, ActSpec, ActsSettings, NotificationSettings, Settings
from mavend.scheduler import ReminderBook, ReminderDelivery, ScheduledAct
from mavend.state.store import Store
from tests.notify_server import NotificationServer
from tests.pulse import Pulse, pulse_source  # noqa: F401
from tests.state_kit import (
    TZ,
    MovableClock,
    daemon_serving,
    kit_router,
    kit_settings,
    local_fire_at,
    make_assistant,
    real_clock,
    reminder_rows,
    wait_for,
)

NOW = datetime(2026, 12, 2, 14, 0, tzinfo=TZ)
WRITE = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text(sys.argv[2])"


def sound_acts() -> ActsSettings:
    """The shipped mute and unmute: pactl, on the test's private sound server."""
    shipped = Settings().acts
    return ActsSettings(allow=(
        shipped.get("mute"), shipped.get("unmute"),  # type: ignore[arg-type]
    ))


def settings_with(tmp_path: Path, acts: ActsSettings) -> Settings:
    return kit_settings(tmp_path, acts=acts)


def marking(name: str, description: str, marker: Path, mark: str, **more: object) -> ActSpec:
    """An act that leaves `mark` in `marker` when it runs, instead of doing anything."""
    return ActSpec(name=name, description=description,
                   argv=(sys.executable, "-c", WRITE, str(marker), mark), **more)  # type: ignore[arg-type]


def assistant_with(tmp_path: Path, *acts: ActSpec):
    return make_assistant(settings_with(tmp_path, ActsSettings(allow=acts)),
                          clock=MovableClock(NOW))


def two_way_assistant(tmp_path: Path, marker: Path, *acts: tuple[str, str, str]):
    """An assistant whose acts (name, description, mark) each leave their mark in `marker`."""
    acts_made = (marking(name, said, marker, mark) for name, said, mark in acts)
    return assistant_with(tmp_path, *acts_made)


def deliver(delivery: ReminderDelivery, rounds: int = 1) -> None:
    """Deliver what is fired, `rounds` times, each round reporting it delivered everything."""
    async def go() -> None:
        try:
            for _ in range(rounds):
                assert await delivery.deliver_pending()
        finally:
            await delivery.notifier.close()

    asyncio.run(go())


def notifier():
    from mavend.desktop.notify import Notifier

    return Notifier(Settings().notifications)


def muted(pulse: Pulse) -> bool:
    said = pulse.pactl("get-sink-mute", "@DEFAULT_SINK@").stdout.strip()
    assert said in ("Mute: yes", "Mute: no"), said
    return said == "Mute: yes"


def test_mute_and_unmute_set_the_state_said_never_toggle_it(
    tmp_path: Path, pulse_source: Pulse  # noqa: F811
) -> None:
    assistant = make_assistant(settings_with(tmp_path, sound_acts()), clock=MovableClock(NOW))
    for said, expect in [("mute", True), ("mute the sound", True), ("unmute", False),
                         ("unmute the speakers", False), ("mute the music", True),
                         ("turn the sound back on", False), ("mute yourself", True),
                         ("mute yourself", True), ("bring the sound back", False),
                         ("unmute yourself", False)]:
        turn = assistant.handle_text(said)
        assert turn.reply.outcome == "done", (said, turn.reply.text)
        assert muted(pulse_source) is expect, said


@pytest.mark.parametrize(
    ("said", "back_at"),
    [
        ("mute the sound for ten minutes", "2026-12-02 14:10"),
        ("mute for an hour", "2026-12-02 15:00"),
        ("be quiet for twenty minutes", "2026-12-02 14:20"),
        ("could you keep quiet for half an hour please", "2026-12-02 14:30"),
        ("mute the speakers until six", "2026-12-02 18:00"),
        ("silence the music till 3 pm", "2026-12-02 15:00"),
        ("mute yourself for the next hour", "2026-12-02 15:00"),
    ],
)
def test_mute_for_a_while_mutes_now_and_schedules_the_unmute(
    tmp_path: Path, pulse_source: Pulse, said: str, back_at: str  # noqa: F811
) -> None:
    assistant = make_assistant(settings_with(tmp_path, sound_acts()), clock=MovableClock(NOW))
    turn = assistant.handle_text(said)
    assert muted(pulse_source), turn.reply.text
    (row,) = reminder_rows(assistant)
    assert (row["kind"], row["status"], local_fire_at(row), row["text"]) == (
        "act", "pending", back_at, "unmute the sound")
    assert ScheduledAct.loads(row["act"]) == ScheduledAct("unmute", {}, "")
    assert "unmute the sound at" in turn.reply.text, turn.reply.text
    # "undo that" ends the while now: the sound is back, and nothing is left to run
    undone = assistant.handle_text("undo that")
    assert not muted(pulse_source), undone.reply.text
    assert [r["status"] for r in reminder_rows(assistant)] == ["cancelled"]
    assert undone.reply.text.startswith("Undone: I ran “unmute the sound” now instead of at ")


def test_what_a_while_did_is_told_and_undoing_it_after_its_end_changes_nothing(
    tmp_path: Path, pulse_source: Pulse  # noqa: F811
) -> None:
    clock = MovableClock(NOW)
    assistant = make_assistant(settings_with(tmp_path, sound_acts()), clock=clock)
    assistant.handle_text("mute for the next hour")
    told = assistant.handle_text("what did you just do")
    assert told.reply.text == "I ran “mute the sound” until 15:00 today.", told.reply.text
    # The while is over: its row fired and ran, as the daemon's delivery runs it.
    (row,) = reminder_rows(assistant)
    book = ReminderBook(assistant.store, TZ)
    clock.at = NOW + timedelta(hours=1)
    firing = book.fire(row["id"], row["fire_at"], now=clock.at, late=False)
    assert firing is not None
    assert assistant.run_scheduled(ScheduledAct.loads(row["act"])) == "Done: unmute the sound."
    book.mark_delivered(firing, None, now=clock.at)
    assert not muted(pulse_source)
    clock.at = NOW + timedelta(hours=1, minutes=5)
    undone = assistant.handle_text("undo that")
    assert "the while was already over" in undone.reply.text, undone.reply.text
    assert not muted(pulse_source)


def test_undoing_a_while_whose_end_was_cancelled_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "sound.txt"
    assistant = two_way_assistant(tmp_path, marker, ("mute", "mute the sound", "muted"),
                                  ("unmute", "unmute the sound", "unmuted"))
    assistant.handle_text("mute for an hour")
    (row,) = reminder_rows(assistant)
    ReminderBook(assistant.store, TZ).cancel(row["id"])  # the unmute called off elsewhere
    undone = assistant.handle_text("undo that")
    assert "had been cancelled already" in undone.reply.text, undone.reply.text
    assert marker.read_text() == "muted"


def test_an_act_for_later_runs_nothing_now_and_its_row_runs_it_when_it_fires(
    tmp_path: Path, notification_server: NotificationServer
) -> None:
    marker = tmp_path / "locked.txt"
    assistant = assistant_with(
        tmp_path, marking("lock_screen", "lock the screen", marker, "locked")
    )
    turn = assistant.handle_text("lock the screen in ten minutes")
    assert not marker.exists(), turn.reply.text
    assert turn.reply.text.startswith("OK, I'll lock the screen at 14:10 today"), turn.reply.text
    (row,) = reminder_rows(assistant)
    assert (row["kind"], local_fire_at(row)) == ("act", "2026-12-02 14:10")

    book = ReminderBook(assistant.store, TZ)
    fire_at = NOW + timedelta(minutes=10)
    firing = book.fire(row["id"], row["fire_at"], now=fire_at, late=False)
    assert firing is not None and not marker.exists()  # fired: the delivery runs it
    delivery = ReminderDelivery(book, notifier(), assistant.settings, clock=lambda: fire_at)
    delivery.run_act = assistant.run_scheduled
    deliver(delivery, rounds=2)  # the second: delivered, nothing runs twice
    assert marker.read_text() == "locked"
    (shown,) = notification_server.interface.received
    assert (shown.summary, shown.body) == ("Scheduled", "Done: lock the screen.")
    assert "sound-name" not in shown.hints and shown.actions == []
    (done,) = book.firings(row["id"])
    assert done.act_result == "Done: lock the screen." and done.delivered_at is not None
    assert book.get(row["id"]).status == "done"
    assert book.last_fired() is None  # "snooze that" never reaches a scheduled act


def test_a_row_whose_act_started_and_never_finished_is_not_run_again(
    tmp_path: Path, notification_server: NotificationServer
) -> None:
    # mavend stopped while the act ran: at the next start the row is shown as maybe
    # unfinished, and the act is not run a second time.
    marker = tmp_path / "ran.txt"
    settings = kit_settings(tmp_path, acts=ActsSettings(allow=(
        marking("lock_screen", "lock the screen", marker, "again"),)))
    book = ReminderBook(Store.open(settings), TZ)
    row = book.add("lock the screen", NOW, now=NOW, act=ScheduledAct("lock_screen"))
    firing = book.fire(row.id, row.due, now=NOW, late=False)
    assert firing is not None
    book.act_started(firing)
    delivery = ReminderDelivery(book, notifier(), settings, clock=lambda: NOW)
    delivery.run_act = lambda act: pytest.fail("run again")  # type: ignore[assignment]
    deliver(delivery)
    assert not marker.exists()
    (shown,) = notification_server.interface.received
    assert shown.body.startswith("I may not have finished: lock the screen.")


def test_a_scheduled_act_is_checked_against_the_allowlist_when_it_runs(
    tmp_path: Path
) -> None:
    # The config changed in between: an act taken off the list, or one that now needs a
    # yes, is not run when its row fires; an argument the slot no longer allows neither.
    marker = tmp_path / "ran.txt"
    assistant = assistant_with(
        tmp_path,
        marking("restart_service", "restart a user service", marker, "restarted",
                destructive=True),
        marking("volume_set", "set the volume to a level in percent", marker, "{level}",
                slots={"level": ActSlot(type="int", min=0, max=100)}),
    )
    gone = assistant.run_scheduled(ScheduledAct("lock_screen"))
    assert gone == "I didn't lock screen: it is no longer on my list of allowed actions."
    asks = assistant.run_scheduled(ScheduledAct("restart_service"))
    assert asks.endswith("it needs a spoken yes, and nobody was asked.")
    loud = assistant.run_scheduled(ScheduledAct("volume_set", {"level": "150"}))
    assert loud.startswith("I didn't set the volume to a level in percent (150): ")
    assert not marker.exists()


def test_a_destructive_or_two_way_act_for_later_gets_a_reminder_and_runs_nothing(
    tmp_path: Path
) -> None:
    marker = tmp_path / "ran.txt"
    assistant = assistant_with(
        tmp_path,
        marking("restart_service", "restart a user service", marker, "restarted {service}",
                destructive=True,
                slots={"service": ActSlot(type="enum", values=("pipewire",))}),
        marking("media_play_pause", "play or pause the media player", marker, "toggled"),
    )
    restart = assistant.handle_text("restart pipewire in 5 minutes")
    assert "without a yes from you then, so I did nothing now" in restart.reply.text
    pause = assistant.handle_text("pause the music in 5 minutes")
    assert "it works both ways, so I did nothing now" in pause.reply.text
    assert not marker.exists()
    assert [(r["kind"], local_fire_at(r)) for r in reminder_rows(assistant)] == [
        ("reminder", "2026-12-02 14:05"), ("reminder", "2026-12-02 14:05")]


def test_the_daemon_mutes_for_a_while_and_unmutes_by_itself(
    tmp_path: Path, session_bus: str, pulse_source: Pulse  # noqa: F811
) -> None:
    settings = kit_settings(
        tmp_path, acts=sound_acts(), notifications=NotificationSettings(enabled=False)
    )
    router = kit_router(settings, real_clock())
    with daemon_serving(settings, router):
        reply = dbus_client.say("mute the sound for three seconds")
        assert "unmute the sound at" in reply, reply
        assert muted(pulse_source)
        wait_for(lambda: not muted(pulse_source), 20, "the daemon to unmute the sound")
        book = ReminderBook(Store.open(settings), TZ)
        # shown (here: logged, notifications are off), then done: nothing left to run
        wait_for(lambda: book.list(statuses=None)[0].status == "done", 10, "the row done")
    (row,) = book.list(statuses=None)
    (firing,) = book.firings(row.id)
    assert (row.kind, firing.act_result) == ("act", "Done: unmute the sound.")


def test_pause_for_a_while_pauses_now_and_schedules_play(tmp_path: Path) -> None:
    # Play and pause are two acts (the shipped ones run playerctl play / pause): the music
    # is paused now and played again by the row; "stop the music" never starts it.
    marker = tmp_path / "player.txt"
    assistant = two_way_assistant(tmp_path, marker,
                                  ("media_play", "play the media player", "playing"),
                                  ("media_pause", "pause the media player", "paused"))
    turn = assistant.handle_text("stop the music for five minutes")
    assert marker.read_text() == "paused", turn.reply.text
    (row,) = reminder_rows(assistant)
    assert (row["kind"], local_fire_at(row)) == ("act", "2026-12-02 14:05")
    assert ScheduledAct.loads(row["act"]) == ScheduledAct("media_play", {}, "")
    assert assistant.handle_text("stop the music").reply.outcome == "done"
    assert marker.read_text() == "paused"  # said twice: still paused, never toggled
    undone = assistant.handle_text("undo the last two")
    assert marker.read_text() == "playing", undone.reply.text


def test_an_act_with_no_opposite_runs_now_and_says_the_while_is_not_kept(
    tmp_path: Path
) -> None:
    marker = tmp_path / "ran.txt"
    assistant = assistant_with(
        tmp_path, marking("media_play_pause", "play or pause the media player", marker, "toggled")
    )
    turn = assistant.handle_text("pause the music for five minutes")
    assert marker.read_text() == "toggled"
    assert turn.reply.text.endswith("I can't undo that by myself later, so it stays that way.")
    assert reminder_rows(assistant) == []
