"""A repeating reminder kept to some days of the week by voice: "don't wake me up on
weekends", "turn off my alarm at weekends", "only remind me about the fish on weekdays".

Before, "don't wake me up on weekends" said "OK, I won't" and left the weekend alarms
set; "don't remind me to stretch on weekends" cancelled the whole series; "i don't need
the fish reminder on sundays" and "only remind me about the fish on weekdays" set new
reminders with those words. The real assistant (real grammar, real SQLite) on a clock the
test moves; the end state is the stored rule and the days the series then fires on,
fired through the book as the scheduler does. No LLM."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.assistant import Assistant
from mavend.handlers import Outcome
from mavend.handlers.reminder_days import parse_days
from mavend.scheduler import Reminder
from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant
from tests.test_reminder_voice import NOW, book, say


@pytest.fixture
def clock() -> MovableClock:
    return MovableClock(NOW)  # a Wednesday afternoon


@pytest.fixture
def assistant(tmp_path: Path, clock: MovableClock) -> Assistant:
    return make_assistant(kit_settings(tmp_path), clock=clock)


def only_pending(assistant: Assistant) -> Reminder:
    (reminder,) = book(assistant).pending()
    return reminder


def fired_days(assistant: Assistant, clock: MovableClock, times: int) -> list[str]:
    """Fire the one pending series `times` times, as the scheduler would: the weekday
    (and clock) of each occurrence."""
    days = []
    for _ in range(times):
        reminder = only_pending(assistant)
        clock.at = reminder.fire_at
        assert book(assistant).fire(reminder.id, reminder.due, now=clock.at, late=False)
        days.append(f"{reminder.fire_at.astimezone(TZ):%a %H:%M}")
    return days


@pytest.mark.parametrize("said", [
    "don't wake me up on weekends",
    "dont wake me at the weekend",
    "turn off my alarm on weekends",
    "cancel my alarm on saturdays and sundays",
    "i don't need to be woken up at weekends",
    "no alarm at weekends please",
    "only wake me up on weekdays",
    "make my alarm weekdays only",
    "wake me up only during the week",
])
def test_a_daily_alarm_keeps_its_weekdays(
    assistant: Assistant, clock: MovableClock, said: str
) -> None:
    say(assistant, "set an alarm for 7am every day")
    reply = say(assistant, said)
    assert reply.outcome == Outcome.DONE, reply.text
    assert "your alarm is now every weekday at 07:00" in reply.text, reply.text
    assert "the next is at 07:00 tomorrow" in reply.text, reply.text
    alarm = only_pending(assistant)
    assert (alarm.kind, alarm.series.rule if alarm.series else None) == (
        "alarm", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR")
    assert fired_days(assistant, clock, 6) == [
        "Thu 07:00", "Fri 07:00", "Mon 07:00", "Tue 07:00", "Wed 07:00", "Thu 07:00"]


@pytest.mark.parametrize("said", [
    "don't remind me to stretch on weekends",
    "stop reminding me to stretch at the weekend",
    "skip the stretch reminder on saturdays and sundays",
])
def test_an_hourly_reminder_is_not_cancelled_by_a_dont_with_days(
    assistant: Assistant, clock: MovableClock, said: str
) -> None:
    """It cancelled the whole series ("OK, I won't. Cancelled the reminder to stretch")."""
    clock.at = datetime(2026, 12, 4, 22, 30, tzinfo=TZ)  # Friday night
    say(assistant, "remind me to stretch every hour")
    reply = say(assistant, said)
    assert "the reminder to stretch is now every hour on weekdays" in reply.text, reply.text
    stretch = only_pending(assistant)
    assert stretch.series is not None and "BYDAY=MO,TU,WE,TH,FR" in stretch.series.rule
    assert fired_days(assistant, clock, 3) == ["Fri 23:30", "Mon 00:30", "Mon 01:30"]


def test_one_day_out_of_a_daily_reminder_sets_nothing_new(
    assistant: Assistant, clock: MovableClock
) -> None:
    """It set a reminder "that you don't need the fish reminder" every Sunday."""
    say(assistant, "remind me to feed the fish every day at 8")
    say(assistant, "remind me at 5 pm to call mum")
    reply = say(assistant, "i don't need the fish reminder on sundays")
    assert "every day except Sunday at 08:00" in reply.text, reply.text
    mum, fish = sorted(book(assistant).pending(), key=lambda r: r.text)
    assert (fish.text, mum.text) == ("feed the fish", "call mum")
    assert fish.series is not None and fish.series.rule == "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA"
    say(assistant, "cancel the reminder to call mum")
    assert fired_days(assistant, clock, 5) == [
        "Thu 08:00", "Fri 08:00", "Sat 08:00", "Mon 08:00", "Tue 08:00"]


@pytest.mark.parametrize("said", [
    "only remind me about the fish on weekdays",
    "remind me to feed the fish only on weekdays",
    "change the fish reminder to weekdays only",
    "the fish reminder should only go off on weekdays",
])
def test_only_on_weekdays_changes_the_series_it_names(assistant: Assistant, said: str) -> None:
    say(assistant, "remind me to feed the fish every day at 8")
    say(assistant, "remind me to stretch every day at 11")
    reply = say(assistant, said)
    assert "the reminder to feed the fish is now every weekday at 08:00" in reply.text, reply.text
    rules = {r.text: r.series.rule for r in book(assistant).pending() if r.series}
    assert rules == {"feed the fish": "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
                     "stretch": "FREQ=DAILY"}


@pytest.mark.parametrize(("said", "rule"), [
    ("not on weekends", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"),
    ("but not at weekends though", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"),
    ("weekdays only", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"),
    ("only on mondays and fridays", "FREQ=WEEKLY;BYDAY=MO,FR"),
    ("make it weekends only", "FREQ=WEEKLY;BYDAY=SA,SU"),
])
def test_days_said_right_after_setting_one_are_about_it(
    assistant: Assistant, said: str, rule: str
) -> None:
    say(assistant, "remind me to water the plants every day at 9")
    reply = say(assistant, said)
    assert reply.outcome == Outcome.DONE and "water the plants is now" in reply.text, reply.text
    plants = only_pending(assistant)
    assert plants.series is not None and plants.series.rule == rule


def test_days_said_alone_long_after_are_about_nothing_set(
    assistant: Assistant, clock: MovableClock
) -> None:
    say(assistant, "remind me to water the plants every day at 9")
    clock.at = NOW + timedelta(minutes=20)
    say(assistant, "not on weekends")
    plants = only_pending(assistant)
    assert plants.series is not None and plants.series.rule == "FREQ=DAILY"


def test_an_occurrence_on_a_day_taken_out_moves_to_the_next_kept_day(
    assistant: Assistant, clock: MovableClock
) -> None:
    clock.at = datetime(2026, 12, 5, 10, 0, tzinfo=TZ)  # Saturday morning
    say(assistant, "remind me to check the post every day at noon")
    assert only_pending(assistant).fire_at == datetime(2026, 12, 5, 12, 0, tzinfo=TZ)
    reply = say(assistant, "don't remind me to check the post at weekends")
    assert "the next is at 12:00 on Monday" in reply.text, reply.text
    assert only_pending(assistant).fire_at == datetime(2026, 12, 7, 12, 0, tzinfo=TZ)


def test_a_series_not_by_the_week_is_left_as_it_is(assistant: Assistant) -> None:
    say(assistant, "remind me to pay rent on the first of every month")
    before = only_pending(assistant)
    reply = say(assistant, "don't remind me to pay rent on weekends")
    assert reply.outcome == Outcome.REFUSED and "nothing was changed" in reply.text, reply.text
    after = only_pending(assistant)
    assert (after.series, after.fire_at) == (before.series, before.fire_at)


def test_taking_out_every_day_it_has_changes_nothing(assistant: Assistant) -> None:
    say(assistant, "remind me to put the bins out every monday at 7 pm")
    reply = say(assistant, "don't remind me about the bins on mondays")
    assert reply.outcome == Outcome.REFUSED and "no day to go off on" in reply.text, reply.text
    bins = only_pending(assistant)
    assert bins.series is not None and bins.series.rule == "FREQ=WEEKLY;BYDAY=MO"


def test_no_alarm_at_weekends_is_every_alarm_series(
    assistant: Assistant, clock: MovableClock
) -> None:
    """Two daily alarms: "don't wake me up on weekends" is neither at weekends."""
    say(assistant, "set an alarm for 7am every day")
    say(assistant, "set an alarm for 8am every day")
    say(assistant, "remind me to stretch every day at 9")
    reply = say(assistant, "don't wake me up on weekends")
    assert reply.text == ("OK: your alarm is now every weekday at 07:00; your alarm is now "
                          "every weekday at 08:00."), reply.text
    assert sorted((r.text, r.series.rule) for r in book(assistant).pending() if r.series) == [
        ("alarm", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"),
        ("alarm", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"),
        ("stretch", "FREQ=DAILY"),
    ]


def test_two_reminders_the_words_match_are_asked_about(assistant: Assistant) -> None:
    say(assistant, "remind me to feed the fish every day at 8")
    say(assistant, "remind me to feed the fish every day at 6 pm")
    reply = say(assistant, "don't remind me to feed the fish on sundays")
    assert reply.outcome == Outcome.ASKED and "Which one" in reply.text, reply.text
    assert [r.series.rule for r in book(assistant).pending() if r.series] == [
        "FREQ=DAILY", "FREQ=DAILY"]


def test_undo_puts_the_days_back(assistant: Assistant, clock: MovableClock) -> None:
    say(assistant, "set an alarm for 7am every day")
    say(assistant, "don't wake me up on weekends")
    say(assistant, "undo that")
    alarm = only_pending(assistant)
    assert alarm.series is not None and alarm.series.rule == "FREQ=DAILY"
    assert fired_days(assistant, clock, 3) == ["Thu 07:00", "Fri 07:00", "Sat 07:00"]


def test_with_no_series_set_the_words_go_on_as_before(assistant: Assistant) -> None:
    """Nothing repeats: "don't wake me up on weekends" sets nothing, and "remind me to feed
    the fish only on weekdays" is a new weekday series, as it was."""
    say(assistant, "remind me at 5 pm to call mum")
    reply = say(assistant, "don't wake me up on weekends")
    assert reply.text.startswith("OK, I won't"), reply.text
    assert [r.text for r in book(assistant).pending()] == ["call mum"]
    say(assistant, "cancel the reminder to call mum")
    say(assistant, "remind me to feed the fish only on weekdays")
    fish = only_pending(assistant)
    assert fish.series is not None and "BYDAY=MO,TU,WE,TH,FR" in fish.series.rule


@pytest.mark.parametrize("said", [
    "don't wake me up on saturday",
    "set my alarm for weekdays",
    "remind me to stretch on weekends",
    "turn off the lights on weekends",
    "don't lock the screen",
])
def test_words_that_are_no_change_of_days(said: str) -> None:
    assert parse_days(said) is None


@pytest.mark.parametrize(("said", "once"), [
    ("turn off my alarm for the weekend", True), ("don't wake me up this weekend", True),
    ("skip my alarm over the weekend", True), ("don't wake me up at the weekend", False),
    ("don't wake me up on weekends", False),
])
def test_this_weekend_is_the_coming_one_and_weekends_are_every_one(said: str, once: bool) -> None:
    command = parse_days(said)
    assert command is not None and command.once is once and command.days == ("SA", "SU")


@pytest.mark.parametrize("said", ["turn off my alarm for the weekend",
                                  "don't wake me up this weekend"])
def test_this_weekend_skips_the_coming_saturday_and_sunday_only(
    assistant: Assistant, clock: MovableClock, said: str
) -> None:
    """It said "I found no alarm like 'my alarm for the weekend'"."""
    clock.at = datetime(2026, 12, 4, 21, 0, tzinfo=TZ)  # Friday evening
    say(assistant, "set an alarm for 7am every day")
    reply = say(assistant, said)
    assert reply.text == ("OK, your alarm won't go off this weekend; the next is at 07:00 on "
                          "Monday."), reply.text
    alarm = only_pending(assistant)
    assert alarm.series is not None and alarm.series.rule == "FREQ=DAILY"  # every day after
    assert fired_days(assistant, clock, 8) == [
        "Mon 07:00", "Tue 07:00", "Wed 07:00", "Thu 07:00", "Fri 07:00", "Sat 07:00",
        "Sun 07:00", "Mon 07:00"]


def test_this_weekend_said_midweek_takes_those_days_out(
    assistant: Assistant, clock: MovableClock
) -> None:
    """Said on a Wednesday, it changed nothing ("I can only skip the next times your
    alarm goes off"): the weekend's occurrences are taken out alone, the days before and
    after it still go off, and undo puts them back."""
    say(assistant, "set an alarm for 7am every day")
    reply = say(assistant, "turn off my alarm for the weekend")
    assert reply.text == ("OK, your alarm won't go off this weekend; the next is at 07:00 "
                          "tomorrow."), reply.text
    listed = say(assistant, "what alarms do i have").text
    assert "(not on Saturday 5 December or Sunday 6 December)" in listed, listed
    assert fired_days(assistant, clock, 4) == ["Thu 07:00", "Fri 07:00", "Mon 07:00",
                                               "Tue 07:00"]


def test_this_weekend_taken_out_is_put_back_by_undo(assistant: Assistant,
                                                      clock: MovableClock) -> None:
    say(assistant, "set an alarm for 7am every day")
    say(assistant, "turn off my alarm for the weekend")
    assert say(assistant, "undo that").outcome is Outcome.DONE
    assert fired_days(assistant, clock, 4) == ["Thu 07:00", "Fri 07:00", "Sat 07:00",
                                               "Sun 07:00"]


def test_this_weekend_for_a_weekday_alarm_has_nothing_to_change(assistant: Assistant) -> None:
    say(assistant, "set an alarm for 7am every weekday")
    reply = say(assistant, "turn off my alarms for the weekend")
    assert reply.text == ("Your alarm doesn't go off at the weekend (every weekday at 07:00), "
                          "nothing to change."), reply.text


def test_make_it_other_days_moves_the_series_to_them(
    assistant: Assistant, clock: MovableClock
) -> None:
    """ "actually make it wednesdays" after a Tuesday series was refused ("That would
    leave ... no day to go off on")."""
    say(assistant, "remind me to take the bins out every tuesday at 7pm")
    reply = say(assistant, "actually make it wednesdays")
    assert "is now every Wednesday at 19:00" in reply.text, reply.text
    say(assistant, "change the bins reminder to mondays and thursdays")
    bins = only_pending(assistant)
    assert bins.series is not None and bins.series.rule == "FREQ=WEEKLY;BYDAY=MO,TH"
    assert fired_days(assistant, clock, 3) == ["Thu 19:00", "Mon 19:00", "Thu 19:00"]


def test_only_days_keep_what_they_can_and_move_when_none_is_left(
    assistant: Assistant,
) -> None:
    say(assistant, "remind me to water the plants every monday wednesday and saturday at 9")
    say(assistant, "only remind me about the plants on weekdays")
    plants = only_pending(assistant)
    assert plants.series is not None and plants.series.rule.endswith("BYDAY=MO,WE")
    say(assistant, "cancel the plants reminder")
    say(assistant, "set an alarm for 7am every weekday")
    say(assistant, "make it weekends only")
    alarm = only_pending(assistant)
    assert alarm.series is not None and alarm.series.rule == "FREQ=WEEKLY;BYDAY=SA,SU"


@pytest.mark.parametrize("said", ["skip my alarm on friday", "turn off my alarm on friday",
                                  "i don't need my alarm on friday",
                                  "no alarm on friday please"])
def test_one_later_day_taken_out_alone(assistant: Assistant, clock: MovableClock,
                                       said: str) -> None:
    """Friday's occurrence, two after the next: it said "I can only skip the next alarm"
    and left Friday's to ring ("i don't need my alarm on friday" set a new alarm named "i
    dont need my alarm"). The days around it still go off."""
    say(assistant, "set an alarm for 7am every day")
    reply = say(assistant, said)
    assert "won't go off on Friday 4 December" in reply.text, reply.text
    assert fired_days(assistant, clock, 3) == ["Thu 07:00", "Sat 07:00", "Sun 07:00"]


@pytest.mark.parametrize("said", [
    "no need to wake me on friday",
    "i don't need waking on friday",
    "don't wake me up on friday",
    "let me have a lie in on friday",
    "i'm off work on friday so no alarm",
    "we're away on friday so you can skip the alarm",
])
def test_a_day_not_to_be_woken_skips_that_days_alarm(assistant: Assistant, clock: MovableClock,
                                                     said: str) -> None:
    """Said as not being woken, or with a reason first: "no need to wake me tomorrow" set
    a new alarm at 09:00 named by the words, and "don't wake me up tomorrow" said "OK, I
    won't" and left the alarm to ring. Friday's alarm is taken out; the others go off."""
    say(assistant, "set an alarm for 7am every day")
    reply = say(assistant, said)
    assert "won't go off on Friday 4 December" in reply.text, reply.text
    assert fired_days(assistant, clock, 3) == ["Thu 07:00", "Sat 07:00", "Sun 07:00"]


def test_a_day_not_to_be_woken_with_no_alarm_sets_none(assistant: Assistant) -> None:
    reply = say(assistant, "no need to wake me tomorrow")
    assert reply.text == "You have no alarms set."
    assert book(assistant).pending() == []


def test_a_reason_with_no_day_is_not_read_as_a_day_off(assistant: Assistant) -> None:
    """No day in the reason: nothing is skipped on a guess."""
    say(assistant, "set an alarm for 7am every day")
    say(assistant, "i'm tired so no alarm")
    assert only_pending(assistant).series.skips == ()
