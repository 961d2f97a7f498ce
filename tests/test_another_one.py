""""Set another one for 3 minutes": a new timer (or alarm) like the one just set.

Found by hand: after "set a timer for five minutes", "set another one for 3 minutes"
set a *reminder* "set another one" for the next minute, and "set one more for an hour
called laundry" looked for a reminder called "one more" to move. Judged by the rows
left in the reminders table (kind, name, fire time) through the whole turn.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from mavend.handlers.reminder_commands import another_one
from tests.state_kit import (
    TZ,
    MovableClock,
    kit_settings,
    local_fire_at,
    make_assistant,
    reminder_rows,
)

NOW = datetime(2026, 12, 7, 17, 0, tzinfo=TZ)


@pytest.mark.parametrize(
    ("said", "kind", "asked"),
    [
        ("set another one for 3 minutes", "timer", "set a timer for 3 minutes"),
        ("set one more for an hour called laundry", "timer",
         "set a timer for an hour called laundry"),
        ("um and another one for 90 seconds", "timer", "set a timer for 90 seconds"),
        # a bare number after a timer is its minutes ("for 10" was a timer until 10:00)
        ("start a second one for 8", "timer", "set a timer for 8 minutes"),
        ("and one for ten", "timer", "set a timer for ten minutes"),
        ("and one for 6 15", "alarm", "set an alarm for 6 15"),
        # the kind said: that kind ("another alarm" named an alarm "another alarm")
        ("and another alarm for 6 15", "alarm", "set an alarm for 6 15"),
        ("and another timer for 3 minutes", "alarm", "set a timer for 3 minutes"),
        ("set another one for 7", "alarm", "set an alarm for 7"),
        ("another one at 7 30", "alarm", "set an alarm at 7 30"),
        # a span is a timer whatever came before; a time of day an alarm
        ("set another one for 10 minutes", "alarm", "set a timer for 10 minutes"),
        ("one more for 8 am", "timer", "set an alarm for 8 am"),
        ("set another one for 3 minutes", "", "set a timer for 3 minutes"),
    ],
)
def test_another_one_is_the_request_it_stands_for(said: str, kind: str, asked: str) -> None:
    assert another_one(said, kind) == asked


@pytest.mark.parametrize(
    ("said", "kind"),
    [
        ("set another one for 7", ""),  # nothing set before: no kind to repeat
        ("set another one for 7", "reminder"),
        ("play another one", "timer"),
        ("another one", "timer"),  # no time: not this
        ("set another reminder for tomorrow", "timer"),  # names its own kind
        ("add another one to the list", "timer"),
        ("one for the road", "timer"),  # "one" with no "and" before it
    ],
)
def test_anything_else_is_left_alone(said: str, kind: str) -> None:
    assert another_one(said, kind) is None


def test_another_one_after_a_timer_sets_a_timer(tmp_path: Path) -> None:
    helper = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW))
    helper.handle_text("set a timer for five minutes")
    second = helper.handle_text("set another one for 3 minutes")
    third = helper.handle_text("set one more for an hour called laundry")
    rows = reminder_rows(helper)
    assert [(r["kind"], r["name"], local_fire_at(r)) for r in rows] == [
        ("timer", None, "2026-12-07 17:05"),
        ("timer", None, "2026-12-07 17:03"),
        ("timer", "laundry", "2026-12-07 18:00"),
    ], (second.to_json(), third.to_json())
    assert "3 minutes" in second.reply.text and "aundry" in third.reply.text


def test_another_one_after_an_alarm_sets_an_alarm(tmp_path: Path) -> None:
    helper = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW))
    helper.handle_text("wake me up at 6:30 tomorrow")
    turn = helper.handle_text("set another one for 7")
    rows = reminder_rows(helper)
    assert [(r["kind"], local_fire_at(r)) for r in rows] == [
        ("alarm", "2026-12-08 06:30"), ("alarm", "2026-12-08 07:00")], turn.to_json()
