"""One request at several times: each time its own alarm, reminder or timer.

Each was one before: "set an alarm for 6 and 6 30" an alarm named "and 6 30" at 6:00;
"remind me at 7 and 9 to check the oven" one reminder at 7, the 9 dropped; "a timer for 5
minutes and 10 minutes" one timer of 15 minutes; "set two timers one for 5 minutes and one
for 10 minutes" read as moving a timer called "two timers one" (and said "no timers").
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant

NOW = datetime(2026, 12, 7, 10, 45, tzinfo=TZ)  # a Monday morning


def _pending(tmp_path: Path, *said: str) -> list[tuple[str, int, int, int, str, str]]:
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW))
    for words in said:
        a.handle_text(words)
    return sorted(
        (r.kind, r.fire_at.day, r.fire_at.hour, r.fire_at.minute, r.text, r.name or "")
        for r in a.ctx.reminders.pending()
    )


def test_two_alarm_times_set_two_alarms(tmp_path: Path) -> None:
    assert _pending(tmp_path, "set an alarm for 6 and 6 30") == [
        ("alarm", 8, 6, 0, "alarm", ""), ("alarm", 8, 6, 30, "alarm", ""),
    ]


def test_a_day_said_once_holds_for_each_time(tmp_path: Path) -> None:
    assert _pending(tmp_path, "wake me up at 6 and 6 30 on friday") == [
        ("alarm", 11, 6, 0, "alarm", ""), ("alarm", 11, 6, 30, "alarm", ""),
    ]


def test_a_clock_said_once_holds_for_each_day(tmp_path: Path) -> None:
    pending = _pending(tmp_path, "remind me tomorrow and friday at 5 pm to water the plants")
    assert [(day, hour, text) for _, day, hour, _, text, _ in pending] == [
        (8, 17, "water the plants"), (11, 17, "water the plants"),
    ]


def test_a_reminder_at_two_times_keeps_its_task_for_both(tmp_path: Path) -> None:
    pending = _pending(tmp_path, "remind me at 7 and 9 to check the oven")
    assert [(hour, text) for _, _, hour, _, text, _ in pending] == [
        (19, "check the oven"), (21, "check the oven"),
    ]


@pytest.mark.parametrize(
    "said",
    [
        "set a timer for 5 minutes and 10 minutes",
        "set two timers one for 5 minutes and one for 10 minutes",
        "can you set two timers, one for 5 minutes and another for 10 minutes",
    ],
)
def test_two_timer_lengths_are_two_timers(tmp_path: Path, said: str) -> None:
    pending = _pending(tmp_path, said)
    assert [(kind, (hour * 60 + minute) - (10 * 60 + 45)) for kind, _, hour, minute, *_ in pending
            ] == [("timer", 5), ("timer", 10)]


@pytest.mark.parametrize(
    ("said", "minutes"),
    [
        ("set a timer for 1 hour and 30 minutes", 90),
        ("set a timer for an hour and a half", 90),
        ("set a timer for 2 minutes and 30 seconds", 2),  # fires at 10:47:30
    ],
)
def test_a_length_in_falling_units_is_one_timer(tmp_path: Path, said: str, minutes: int) -> None:
    pending = _pending(tmp_path, said)
    assert [(hour * 60 + minute) - (10 * 60 + 45) for _, _, hour, minute, *_ in pending] == [
        minutes
    ]


def test_a_range_or_a_task_with_and_is_left_alone(tmp_path: Path) -> None:
    pending = _pending(
        tmp_path,
        "remind me to call mum and dad at 5 pm",
        "remind me between 5 and 6 pm to call the garage",
    )
    assert ("reminder", 7, 17, 0, "call mum and dad", "") in pending
    assert len([p for p in pending if p[4] == "call the garage"]) <= 1


def test_a_new_time_said_right_after_moves_the_one_just_set(tmp_path: Path) -> None:
    """ "no not tomorrow on thursday" set a second reminder, "to no not tomorrow"."""
    from datetime import timedelta

    clock = MovableClock(NOW)
    a = make_assistant(kit_settings(tmp_path), clock=clock)
    a.handle_text("remind me to water the plants tomorrow morning")
    a.handle_text("no not tomorrow on thursday")
    (moved,) = a.ctx.reminders.pending()
    assert (moved.text, moved.fire_at.day) == ("water the plants", 10)
    a.handle_text("set an alarm for 6")
    a.handle_text("no 6 30")
    alarm = next(r for r in a.ctx.reminders.pending() if r.kind == "alarm")
    assert (alarm.fire_at.hour, alarm.fire_at.minute) == (6, 30)
    # Minutes later it is no correction: nothing moves.
    clock.at += timedelta(minutes=10)
    a.handle_text("no on friday")
    assert sorted((r.kind, r.fire_at.day) for r in a.ctx.reminders.pending()) == [
        ("alarm", 8), ("reminder", 10)]


def test_two_sized_timers_said_as_one_are_two(tmp_path: Path) -> None:
    """It was one timer, named "set a 5 minute timer and a timer", for 10 minutes."""
    pending = _pending(tmp_path, "set a 5 minute timer and a 10 minute timer")
    assert [(kind, (hour * 60 + minute) - (10 * 60 + 45), name)
            for kind, _, hour, minute, _, name in pending] == [("timer", 5, ""), ("timer", 10, "")]


@pytest.mark.parametrize("said", [
    "set a timer for 5 minutes for the eggs and 8 minutes for the toast",
    "set two timers 5 minutes for the eggs and 8 minutes for the toast",
    "start a timer for 5 minutes for the eggs, and another for 8 minutes for the toast",
])
def test_two_named_timers_said_as_one_are_two(tmp_path: Path, said: str) -> None:
    """It was one timer of 5 minutes, named "eggs and 8 minutes for the toast"."""
    pending = _pending(tmp_path, said)
    assert [(kind, (hour * 60 + minute) - (10 * 60 + 45), name)
            for kind, _, hour, minute, _, name in pending] == [("timer", 5, "eggs"),
                                                               ("timer", 8, "toast")]


def test_an_alarm_named_by_its_time_is_the_one_cancelled(tmp_path: Path) -> None:
    """ "delete the 6 30 alarm" said it found no alarm like that."""
    pending = _pending(tmp_path, "set an alarm for half six tomorrow",
                       "set an alarm for 8 tomorrow", "delete the 6 30 alarm")
    assert [(kind, hour, minute) for kind, _, hour, minute, *_ in pending] == [("alarm", 8, 0)]


def test_every_day_except_weekends_is_weekdays(tmp_path: Path) -> None:
    """It set the alarm for Saturday and Sunday only: the opposite of what was said."""
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW))
    a.handle_text("set an alarm for 7 every day except weekends")
    (alarm,) = a.ctx.reminders.pending()
    assert alarm.series is not None and alarm.series.rule == "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
    assert (alarm.fire_at.day, alarm.fire_at.hour) == (8, 7)  # Tuesday 07:00, the next weekday


@pytest.mark.parametrize("said", [
    "remind me to take my medication at 8am and 8pm every day",
    "remind me at 8am and 8pm every day to take my medication",
    "remind me every day at 8am and 8pm to take my medication",
])
def test_a_repeat_said_once_holds_for_each_time(tmp_path: Path, said: str) -> None:
    """It was one daily series at 08:00 named "take your medication and 8pm": the evening
    dose was never reminded."""
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW))
    a.handle_text(said)
    pending = sorted((r.fire_at.hour, r.text, r.series is not None)
                     for r in a.ctx.reminders.pending())
    assert pending == [(8, "take my medication", True), (20, "take my medication", True)]


def test_a_bare_hour_beside_the_same_hour_pm_is_the_morning(tmp_path: Path) -> None:
    """"at 8 and 8pm" set two reminders, both at 20:00 today."""
    pending = _pending(tmp_path, "remind me to take my pills at 8 and 8pm")
    assert [(day, hour, text) for _, day, hour, _, text, _ in pending] == [
        (7, 20, "take my pills"), (8, 8, "take my pills"),
    ]


def test_two_clocks_inside_the_task_are_two_reminders(tmp_path: Path) -> None:
    pending = _pending(tmp_path, "remind me to check the oven at 7 and 9")
    assert [(hour, text) for _, _, hour, _, text, _ in pending] == [
        (19, "check the oven"), (21, "check the oven"),
    ]


def test_weekday_alarms_at_two_times(tmp_path: Path) -> None:
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW))
    a.handle_text("wake me up at 6 and 6 30 on weekdays")
    pending = sorted((r.fire_at.hour, r.fire_at.minute, r.kind, r.series.describe())
                     for r in a.ctx.reminders.pending() if r.series is not None)
    assert pending == [(6, 0, "alarm", "every weekday at 06:00"),
                       (6, 30, "alarm", "every weekday at 06:30")]


def test_the_bare_hour_is_the_morning_said_second_too(tmp_path: Path) -> None:
    pending = _pending(tmp_path, "remind me to take my pills at 8pm and 8")
    assert [(day, hour) for _, day, hour, _, _, _ in pending] == [(7, 20), (8, 8)]


def test_alarms_said_in_the_plural_with_commas(tmp_path: Path) -> None:
    """ "set alarms for 6, 6 15 and 6 30 tomorrow" with an alarm at 7 moved that alarm to
    18:30 (read as "set the alarm for ..."); with none, it set nothing."""
    assert _pending(tmp_path, "set an alarm for 7",
                    "set alarms for 6, 6 15 and 6 30 tomorrow") == [
        ("alarm", 8, 6, 0, "alarm", ""), ("alarm", 8, 6, 15, "alarm", ""),
        ("alarm", 8, 6, 30, "alarm", ""), ("alarm", 8, 7, 0, "alarm", ""),
    ]


def test_timers_said_in_the_plural_share_the_unit(tmp_path: Path) -> None:
    pending = _pending(tmp_path, "set timers for 5 and 10 minutes")
    assert [(kind, hour, minute) for kind, _, hour, minute, _, _ in pending] == [
        ("timer", 10, 50), ("timer", 10, 55)]


def test_set_the_alarm_with_none_set_sets_one(tmp_path: Path) -> None:
    """It said "You have no alarms set." and set nothing; with one set, it is moved."""
    assert _pending(tmp_path, "set the alarm for 8") == [("alarm", 8, 8, 0, "alarm", "")]
    assert _pending(tmp_path / "moved", "set an alarm for 7", "set my alarm for 6 30") == [
        ("alarm", 8, 6, 30, "alarm", "")]
