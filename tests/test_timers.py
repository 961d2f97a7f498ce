"""Kitchen timers by voice: several at once, named, paused and resumed, time added or
taken off, how long is left, cancelled by name. The real assistant (grammar, reminder
commands, SQLite) on a clock the test moves; the end state is read from the table."""

from __future__ import annotations

import contextlib
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.assistant import Assistant
from mavend.handlers import Outcome, Reply
from mavend.scheduler import ReminderBook
from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant

NOW = datetime(2026, 12, 2, 18, 0, tzinfo=TZ)


@pytest.fixture
def clock() -> MovableClock:
    return MovableClock(NOW)


@pytest.fixture
def assistant(tmp_path: Path, clock: MovableClock) -> Assistant:
    return make_assistant(kit_settings(tmp_path), clock=clock)


def say(assistant: Assistant, text: str) -> Reply:
    return assistant.handle_text(text).reply


def timers(assistant: Assistant) -> dict[str, sqlite3.Row]:
    with contextlib.closing(sqlite3.connect(assistant.store.path)) as conn:
        conn.row_factory = sqlite3.Row
        found = conn.execute("SELECT * FROM reminders WHERE kind = 'timer' ORDER BY id")
        return {r["name"] or r["text"]: r for r in found.fetchall()}


def test_named_timers_run_side_by_side(assistant: Assistant) -> None:
    pasta = say(assistant, "set a pasta timer for 8 minutes")
    assert pasta.text == "Pasta timer set for 8 minutes, until 18:08:00."
    eggs = say(assistant, "start a 10 minute timer for the eggs")
    assert eggs.text == (
        "Eggs timer set for 10 minutes, until 18:10:00. You have 2 timers running."
    )
    rice = say(assistant, "set a timer for 12 minutes for the rice")
    assert rice.text.startswith("Rice timer set for 12 minutes, until 18:12:00.")
    rows = timers(assistant)
    assert {name: r["fire_at"][11:19] for name, r in rows.items()} == {
        "pasta": "18:08:00", "eggs": "18:10:00", "rice": "18:12:00",
    }
    assert {r["text"] for r in rows.values()} == {"pasta timer", "eggs timer", "rice timer"}


def test_pause_resume_and_how_long_is_left(assistant: Assistant, clock: MovableClock) -> None:
    say(assistant, "set a pasta timer for 8 minutes")
    say(assistant, "set a timer for 5 minutes for the garlic bread")
    clock.at = NOW + timedelta(minutes=3)
    paused = say(assistant, "pause the pasta timer")
    assert paused.text == "Paused the pasta timer with 5 minutes left."
    assert timers(assistant)["pasta"]["paused_left"] == 300
    assert timers(assistant)["pasta"]["status"] == "pending"
    listed = say(assistant, "what timers are running")
    assert "the pasta timer (paused, 5 minutes left)" in listed.text
    clock.at = NOW + timedelta(minutes=4)
    left = say(assistant, "how much time is left")
    assert left.text == (
        "The garlic bread timer has 1 minute left, until 18:05:00; the pasta timer is paused"
        " with 5 minutes left."
    )
    clock.at = NOW + timedelta(minutes=10)
    resumed = say(assistant, "resume the pasta timer")
    assert resumed.text == "Resumed the pasta timer: 5 minutes left, until 18:15:00."
    row = timers(assistant)["pasta"]
    assert (row["paused_left"], row["fire_at"][11:19]) == (None, "18:15:00")
    assert say(assistant, "how long is left on the pasta timer").text == (
        "The pasta timer has 5 minutes left, until 18:15:00."
    )


def test_add_and_take_off_time(assistant: Assistant) -> None:
    say(assistant, "set a pasta timer for 8 minutes")
    say(assistant, "start a 6 minute timer for the eggs")
    assert say(assistant, "add 2 minutes to the pasta timer").text == (
        "Added 2 minutes to the pasta timer: 10 minutes left, until 18:10:00."
    )
    assert say(assistant, "take a minute off the egg timer").text == (
        "Took 1 minute off the eggs timer: 5 minutes left, until 18:05:00."
    )
    too_much = say(assistant, "take 20 minutes off the egg timer")
    assert too_much.outcome == Outcome.REFUSED and "nothing was changed" in too_much.text
    rows = timers(assistant)
    assert (rows["pasta"]["fire_at"][11:19], rows["eggs"]["fire_at"][11:19]) == (
        "18:10:00", "18:05:00",
    )


def test_more_time_said_as_another_or_an_extra(assistant: Assistant) -> None:
    """'add another two minutes' and 'give it an extra five' were refused as acts."""
    say(assistant, "set a pasta timer for eleven minutes")
    assert say(assistant, "add another two minutes to the pasta timer").text == (
        "Added 2 minutes to the pasta timer: 13 minutes left, until 18:13:00."
    )
    assert say(assistant, "give it an extra five minutes").text.startswith(
        "Added 5 minutes to the pasta timer"
    )
    assert say(assistant, "put another minute on the timer").text.startswith(
        "Added 1 minute to the pasta timer"
    )
    assert timers(assistant)["pasta"]["fire_at"][11:19] == "18:19:00"


def test_it_is_the_only_timer_and_two_are_asked_about(assistant: Assistant) -> None:
    say(assistant, "set a timer for ten minutes")
    paused = say(assistant, "pause it")
    assert paused.text == "Paused the timer for 10 minutes with 10 minutes left."
    assert say(assistant, "resume it").text.startswith("Resumed the timer for 10 minutes")
    say(assistant, "set a pasta timer for 8 minutes")
    say(assistant, "set a rice timer for 12 minutes")
    # The focus is the rice timer (set last); an unnamed "the timer" with three is asked.
    assert say(assistant, "pause it").text == "Paused the rice timer with 12 minutes left."
    asked = say(assistant, "how long is left on the timer")
    assert asked.text.startswith("The rice timer")  # the focus still


def test_cancel_a_named_timer_needs_no_yes_and_all_timers_asks(assistant: Assistant) -> None:
    say(assistant, "set a pasta timer for 8 minutes")
    say(assistant, "set a sauce timer for 20 minutes")
    say(assistant, "remind me tomorrow at 9 to buy basil")
    assert say(assistant, "cancel the pasta timer").text == "Cancelled the pasta timer."
    asked = say(assistant, "cancel all timers")
    assert asked.outcome == Outcome.CONFIRM and asked.text.startswith("Cancel the sauce timer?")
    assert say(assistant, "yes").text == "Cancelled 1 timer."
    with contextlib.closing(sqlite3.connect(assistant.store.path)) as conn:
        statuses = conn.execute("SELECT text, status FROM reminders ORDER BY id").fetchall()
    assert statuses == [
        ("pasta timer", "cancelled"), ("sauce timer", "cancelled"), ("buy basil", "pending"),
    ]


def test_no_timer_says_so(assistant: Assistant) -> None:
    assert say(assistant, "how much time is left").text == "You have no timers running."
    assert say(assistant, "pause the timer").text == "You have no timers."
    assert say(assistant, "cancel all my timers").text == "You have no timers."
    say(assistant, "set a pasta timer for 8 minutes")
    missing = say(assistant, "pause the turkey timer")
    assert missing.outcome == Outcome.ASKED and "the pasta timer" in missing.text
    assert timers(assistant)["pasta"]["paused_left"] is None


def test_a_timer_name_with_control_characters_is_refused(assistant: Assistant) -> None:
    from mavend.handlers.reminder_commands import ReminderCommand

    reply = assistant.handler.command(
        ReminderCommand("timer", kind="timer", text="pas\x07ta", seconds=60)
    )
    assert reply.outcome == Outcome.REFUSED and "control characters" in reply.text
    assert timers(assistant) == {}


def test_a_paused_timer_is_left_out_of_what_the_scheduler_fires(assistant: Assistant) -> None:
    from mavend.scheduler import ReminderBook

    say(assistant, "set a pasta timer for 8 minutes")
    say(assistant, "pause it")
    book = ReminderBook(assistant.store, TZ)
    assert book.pending() == [] and [r.name for r in book.active()] == ["pasta"]
    paused = book.active()[0]
    assert book.fire(paused.id, paused.due, now=NOW + timedelta(minutes=9), late=False) is None


def test_two_timers_in_one_breath_and_one_said_after_another(assistant: Assistant) -> None:
    both = say(assistant, "set a soup timer for 20 minutes and a bread timer for 35 minutes")
    assert both.text == (
        "Soup timer set for 20 minutes, until 18:20:00; bread timer set for 35 minutes, until"
        " 18:35:00. You have 2 timers running."
    )
    after = say(assistant, "and a rice timer for 12")
    assert after.text.startswith("Rice timer set for 12 minutes, until 18:12:00.")
    assert {name: r["fire_at"][11:19] for name, r in timers(assistant).items()} == {
        "soup": "18:20:00", "bread": "18:35:00", "rice": "18:12:00",
    }
    assert say(assistant, "how long until the bread is done").text == (
        "The bread timer has 35 minutes left, until 18:35:00."
    )


def test_another_timer_in_the_same_breath_and_how_long_is_left_on_them(
    assistant: Assistant,
) -> None:
    # "and another for 10 minutes" was one timer, named "3 minutes and another", for 10.
    say(assistant, "set a timer for 3 minutes and another for 10 minutes")
    with contextlib.closing(sqlite3.connect(assistant.store.path)) as conn:
        rows = conn.execute("SELECT text, fire_at FROM reminders ORDER BY id").fetchall()
    assert [(text, at[11:19]) for text, at in rows] == [
        ("timer for 3 minutes", "18:03:00"), ("timer for 10 minutes", "18:10:00"),
    ]
    # Plural: each of them, not "which one?"
    left = say(assistant, "how long is left on my timers")
    assert left.outcome == Outcome.DONE and "3 minutes left" in left.text, left.text
    assert "10 minutes left" in left.text


def test_make_it_15_changes_the_timer_just_set(tmp_path) -> None:
    """ "make it 15" was refused as an act; "make it 20 minutes" set a reminder "to make it".
    A bare number is a timer's minutes only when "it" is a timer."""
    from datetime import datetime, timedelta

    from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant

    now = datetime(2026, 12, 2, 15, 0, tzinfo=TZ)
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(now))
    a.handle_text("set a timer for 10 minutes")
    assert a.handle_text("make it 15").reply.text == "Timer now set for 15 minutes, until 15:15:00."
    assert a.handle_text("actually make it 20 minutes").reply.text == (
        "Timer now set for 20 minutes, until 15:20:00.")
    (timer,) = a.ctx.reminders.active()
    assert (timer.text, timer.fire_at) == ("timer for 20 minutes", now + timedelta(minutes=20))
    a.handle_text("remind me to call mum in 10 minutes")
    a.handle_text("make it 21")  # "it" is a reminder now: no timer's minutes
    assert sorted(r.fire_at for r in a.ctx.reminders.active()) == [
        now + timedelta(minutes=10), now + timedelta(minutes=20)]


def test_an_unnamed_alarm_cancelled_is_said_by_its_time(assistant: Assistant) -> None:
    """ "turn off my alarm for tomorrow" answered "Cancelled alarm." (which one?)."""
    say(assistant, "set an alarm for 6 30 tomorrow")
    say(assistant, "wake me up at 7 on saturday")
    assert say(assistant, "turn off my alarm for tomorrow").text == (
        "Cancelled the alarm at 06:30 tomorrow."
    )
    with contextlib.closing(sqlite3.connect(assistant.store.path)) as conn:
        left = conn.execute("SELECT fire_at FROM reminders WHERE kind = 'alarm' "
                            "AND status = 'pending'").fetchall()
    assert [row[0][:16] for row in left] == ["2026-12-05T07:00"]


def test_a_timer_to_do_something_says_what_and_rings_with_it(tmp_path: Path) -> None:
    """ "set a timer for 10 minutes to turn off the oven" said "To turn off the oven timer
    set for 10 minutes" and was listed as "the to turn off the oven timer"."""
    a = make_assistant(kit_settings(tmp_path))
    reply = a.handle_text("set a timer for 10 minutes to turn off the oven").reply
    assert reply.text.startswith("Timer set for 10 minutes, until "), reply.text
    assert reply.text.endswith(", to turn off the oven."), reply.text
    listed = a.handle_text("what timers do i have").reply.text
    assert listed.startswith("You have 1 timer: the timer to turn off the oven at "), listed
    (timer,) = ReminderBook(a.store, TZ).pending()
    assert (timer.kind, timer.text) == ("timer", "turn off the oven")  # said when it rings
    assert a.handle_text("cancel the oven timer").reply.text == (
        "Cancelled the timer to turn off the oven.")
