"""A repeat carried on from a first day said with it: "wake me up at 7 tomorrow and every
day after", "remind me on friday and every friday after that to pay the cleaner", "every
day from now on", and a meal said as the time ("every sunday after lunch").

Before, "wake me up at 7 tomorrow and every day after" set two alarms for 07:00 tomorrow
(a one-off and a series named "after"); "... and every day after" left "and after" in a
reminder's task; "from now on" was kept in the task ("water the plants from now"); "after
lunch" was read as noon and its "after" kept in the task ("call mum after"). The real
assistant (real grammar, real SQLite) on a clock the test moves; the end state is the
rows stored: how many, their rule, their first time and their task. No LLM."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from mavend.assistant import Assistant
from mavend.handlers import Outcome
from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant
from tests.test_reminder_voice import NOW, book, say


@pytest.fixture
def assistant(tmp_path: Path) -> Assistant:
    return make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW))  # Wed 14:00


@pytest.mark.parametrize(
    ("said", "rule", "first", "task"),
    [
        ("wake me up at 7 tomorrow and every day after", "FREQ=DAILY",
         datetime(2026, 12, 3, 7, 0), ""),
        ("wake me up at 7 tomorrow and every day after that", "FREQ=DAILY",
         datetime(2026, 12, 3, 7, 0), ""),
        ("set an alarm for 6 30 on monday and every monday after that",
         "FREQ=WEEKLY;BYDAY=MO", datetime(2026, 12, 7, 6, 30), ""),
        ("remind me to take my pills at 9 tomorrow and every day after",
         "FREQ=DAILY", datetime(2026, 12, 3, 9, 0), "take my pills"),
        ("remind me on friday and every friday after that to pay the cleaner",
         "FREQ=WEEKLY;BYDAY=FR", datetime(2026, 12, 4, 9, 0), "pay the cleaner"),
        ("remind me to feed the fish at 6 pm today and each day thereafter",
         "FREQ=DAILY", datetime(2026, 12, 2, 18, 0), "feed the fish"),
        ("remind me to water the plants every day from now on at 8 pm",
         "FREQ=DAILY", datetime(2026, 12, 2, 20, 0), "water the plants"),
        ("remind me to stretch every day at 5 going forward", "FREQ=DAILY",
         datetime(2026, 12, 2, 17, 0), "stretch"),
        ("remind me to walk the dog every morning from tomorrow onwards", "FREQ=DAILY",
         datetime(2026, 12, 3, 8, 0), "walk the dog"),
        ("remind me every day from monday on to take my vitamins", "FREQ=DAILY",
         datetime(2026, 12, 7, 9, 0), "take my vitamins"),
        ("remind me to call mum every sunday after lunch", "FREQ=WEEKLY;BYDAY=SU",
         datetime(2026, 12, 6, 13, 0), "call mum"),
    ],
)
def test_a_repeat_carried_on_from_its_first_day_is_one_series(
    assistant: Assistant, said: str, rule: str, first: datetime, task: str
) -> None:
    reply = say(assistant, said)
    assert reply.outcome is Outcome.DONE, reply.text
    (reminder,) = book(assistant).pending()
    assert reminder.series is not None and reminder.series.rule == rule
    assert reminder.fire_at.astimezone(TZ) == first.replace(tzinfo=TZ)
    if task:
        assert reminder.text == task
        assert "after" not in reply.text.split(" every ")[0]
    else:
        assert reminder.kind == "alarm"
    assert f"{first:%H:%M}" in reply.text


@pytest.mark.parametrize(
    ("said", "due", "task"),
    [
        ("remind me to take my tablets after lunch", datetime(2026, 12, 3, 13, 0),
         "take my tablets"),
        ("remind me before lunch tomorrow to order the cake", datetime(2026, 12, 3, 11, 30),
         "order the cake"),
        ("remind me to ring the garage after lunch on friday", datetime(2026, 12, 4, 13, 0),
         "ring the garage"),
    ],
)
def test_after_and_before_lunch_are_times_of_their_own(
    assistant: Assistant, said: str, due: datetime, task: str
) -> None:
    reply = say(assistant, said)
    assert reply.outcome is Outcome.DONE, reply.text
    (reminder,) = book(assistant).pending()
    assert reminder.fire_at.astimezone(TZ) == due.replace(tzinfo=TZ)
    assert reminder.text == task
    assert reminder.series is None


@pytest.mark.parametrize(
    "said",
    [
        "set an alarm for 7 tomorrow and another for 8 on friday",
        "wake me at 7 tomorrow and at 9 on saturday",
    ],
)
def test_two_alarms_on_two_days_are_still_two(assistant: Assistant, said: str) -> None:
    reply = say(assistant, said)
    assert reply.outcome is Outcome.DONE, reply.text
    alarms = book(assistant).pending()
    assert len(alarms) == 2
    assert all(a.series is None for a in alarms)


def test_every_other_day_said_after_its_hour_starts_tomorrow(tmp_path: Path) -> None:
    """Said at 20:00 it started the day after tomorrow (today counted as the first)."""
    late = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW.replace(hour=20)))
    say(late, "remind me every other day to water the cactus")
    (reminder,) = book(late).pending()
    assert reminder.fire_at.astimezone(TZ) == datetime(2026, 12, 3, 9, 0, tzinfo=TZ)
    assert reminder.series is not None and reminder.series.rule == "FREQ=DAILY;INTERVAL=2"
