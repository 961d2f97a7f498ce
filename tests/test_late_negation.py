"""A "don't" said just too late: "wait no, don't cancel it" once it has been cancelled,
"no don't add eggs" once they are on the list; and a "don't" that says what is wanted
instead: "don't set it for 6, set it for 7", "don't cancel it, just move it to 4".

Before: "wait no don't cancel it" said "OK, I won't cancel it." and the reminder stayed
cancelled (the opposite of what was said); "don't set it for 6, set it for 7" said "OK, I
won't set it for 6 set it for 7." and left the alarm at 6. The real assistant (real
grammar, real SQLite) on a clock the test moves; the end state is the reminders and list
rows. No LLM."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from mavend.assistant import Assistant
from mavend.handlers import Outcome
from mavend.lists import ListBook
from mavend.router.negation import instead_said
from mavend.undo.parse import names_the_change
from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant
from tests.test_reminder_voice import NOW, book, say


@pytest.fixture
def clock() -> MovableClock:
    return MovableClock(NOW)


@pytest.fixture
def assistant(tmp_path: Path, clock: MovableClock) -> Assistant:
    return make_assistant(kit_settings(tmp_path), clock=clock)


def shopping(assistant: Assistant) -> list[str]:
    return [i.text for i in ListBook(assistant.store, TZ).items("shopping") or []]


@pytest.mark.parametrize("said", ["wait no don't cancel it", "no dont cancel that",
                                  "oh no don't delete it"])
def test_a_cancel_taken_back_by_a_late_dont(assistant: Assistant, said: str) -> None:
    say(assistant, "remind me to call the plumber tomorrow at 3")
    say(assistant, "cancel it")
    assert book(assistant).pending() == []
    reply = say(assistant, said)
    assert reply.outcome is Outcome.DONE, reply.text
    (back,) = book(assistant).pending()
    assert back.text == "call the plumber"
    assert back.fire_at.astimezone(TZ).hour == 15
    assert reply.text.startswith("I had already cancelled the reminder to call the plumber, "
                                 "so I've taken it back"), reply.text


def test_an_item_added_is_taken_off_by_a_late_dont(assistant: Assistant) -> None:
    say(assistant, "add eggs and bread to the shopping list")
    reply = say(assistant, "no don't add eggs")
    assert shopping(assistant) == ["bread"], reply.text  # only what the "don't" named
    assert reply.text.startswith("I had already added eggs to your shopping list"), reply.text
    say(assistant, "add milk to the shopping list")
    say(assistant, "don't add that")
    assert shopping(assistant) == ["bread"]


def test_a_timer_set_is_cancelled_by_a_late_dont(assistant: Assistant) -> None:
    say(assistant, "set a timer for 10 minutes")
    reply = say(assistant, "don't set a timer")
    assert book(assistant).pending() == [], reply.text


def test_a_dont_about_something_else_takes_nothing_back(assistant: Assistant) -> None:
    say(assistant, "set a timer for 10 minutes")
    reply = say(assistant, "don't turn off the lights")
    assert reply.text == "OK, I won't turn off the lights."
    assert len(book(assistant).pending()) == 1


def test_too_late_for_a_dont_to_be_about_the_last_change(
    assistant: Assistant, clock: MovableClock
) -> None:
    say(assistant, "remind me to call the plumber tomorrow at 3")
    say(assistant, "cancel it")
    clock.at = clock.at + timedelta(minutes=5)
    reply = say(assistant, "don't cancel it")
    assert reply.text == "OK, I won't cancel it."
    assert book(assistant).pending() == []


def test_another_rooms_dont_takes_nothing_back(assistant: Assistant) -> None:
    say(assistant, "remind me to call the plumber tomorrow at 3")
    say(assistant, "cancel it")
    say(assistant, "no don't cancel it", session="satellite:kitchen")
    assert book(assistant).pending() == []


def test_a_dont_with_the_time_wanted_instead_moves_it(assistant: Assistant) -> None:
    say(assistant, "set an alarm for 6 tomorrow")
    reply = say(assistant, "don't set it for 6, set it for 7")
    assert reply.outcome is Outcome.DONE, reply.text
    (alarm,) = book(assistant).pending()
    assert alarm.kind == "alarm" and alarm.fire_at.astimezone(TZ).hour == 7


def test_dont_cancel_it_just_move_it(assistant: Assistant) -> None:
    say(assistant, "remind me to call bob at 3 tomorrow")
    say(assistant, "dont cancel it just move it to 4")
    (moved,) = book(assistant).pending()
    assert moved.text == "call bob" and moved.fire_at.astimezone(TZ).hour == 16


def test_something_else_said_instead_runs_nothing(assistant: Assistant) -> None:
    """ "add oat milk" alone would be a note, not the list: said again, it is asked."""
    reply = say(assistant, "don't add milk add oat milk")
    assert reply.text == "OK, I won't add milk add oat milk."
    assert shopping(assistant) == []
    count = assistant.store.connection().execute("SELECT count(*) FROM notes").fetchone()[0]
    assert count == 0


def test_days_taken_out_of_a_series_are_no_late_dont(assistant: Assistant) -> None:
    say(assistant, "wake me up at 7 every day")
    say(assistant, "don't wake me up on weekends")
    (alarm,) = book(assistant).pending()
    assert alarm.series is not None and "BYDAY=MO,TU,WE,TH,FR" in alarm.series.rule


@pytest.mark.parametrize(("negated", "kind", "summary", "named"), [
    ("cancel it", "reminder.cancel", "cancelled the reminder", True),
    ("turn the lamp off", "device.set", "turned off the lamp", True),
    ("turn the lamp off", "device.set", "turned on the lamp", False),
    ("turn off the lights", "reminder.set", "set a timer", False),
    ("set a timer", "reminder.set", "set a timer for 14:10 today", True),
    ("add eggs", "list.add", "added eggs to your shopping list", True),
    ("cancel it just move it", "reminder.cancel", "cancelled the reminder", False),
    ("remind me to feed the cat", "reminder.set", "set a reminder (call mum) for 19:00", False),
    ("remind me", "reminder.set", "set a reminder (call mum) for 19:00", True),
    ("turn off the lights", "device.set", "turned off the kitchen light", True),
    ("turn the lamp off", "device.set", "turned off the desk lamp", True),
    ("turn the fan off", "device.set", "turned off the desk lamp", False),
])
def test_which_dont_names_which_change(negated: str, kind: str, summary: str,
                                       named: bool) -> None:
    assert names_the_change(negated, [kind], [summary]) is named


@pytest.mark.parametrize(("negated", "instead"), [
    ("set it for 6 set it for 7", "set it for 7"),
    ("cancel it just move it to 4", "move it to 4"),
    ("turn the lamp on turn it off", "turn it off"),
    ("cancel it", ""),
    ("turn off the lights", ""),
])
def test_what_is_said_instead(negated: str, instead: str) -> None:
    assert instead_said(negated) == instead
