"""A reminder counted from the household's own day ("the day before my sister's
birthday") is set from the date they kept, or asked about; never counted from now.

Found by hand: "remind me the day before my sister's birthday to buy a card" was set
for 09:00 tomorrow, "remind me 2 days before my anniversary to book a table" for two
days from now, and the resolver read "the day before christmas" as the 26th.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.language.timeparse import find_time, resolve_time
from mavend.router.decision import Intent
from tests.scripted import Classified, ScriptedClassifier
from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant

NOW = datetime(2026, 12, 2, 15, 30, tzinfo=TZ)  # a Wednesday
KEPT = datetime(2026, 11, 1, 9, 0, tzinfo=TZ)


def _assistant(tmp_path: Path, notes: tuple[str, ...] = ()):
    note = Classified(Intent.NOTE, 0.99, {Intent.NOTE: 0.99})
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW),
                       classifier=ScriptedClassifier({}, note))
    for i, text in enumerate(notes):
        a.ctx.notes.add(text, KEPT + timedelta(minutes=i))
    return a


def _pending(a) -> list[tuple[str, str]]:
    return [(r.text, f"{r.fire_at.astimezone(TZ):%Y-%m-%d %H:%M}")
            for r in a.ctx.reminders.active()]


@pytest.mark.parametrize(
    ("said", "pending"),
    [
        ("remind me the day before my sister's birthday to buy a card",
         ("buy a card", "2027-01-11 09:00")),
        ("remind me on my sister's birthday to call her", ("call her", "2027-01-12 09:00")),
        ("remind me a week before my sisters birthday at 6pm to book a table",
         ("book a table", "2027-01-05 18:00")),
        # a birth date with its year: the next birthday
        ("remind me two days before my son's birthday to order the cake",
         ("order the cake", "2027-03-02 09:00")),
    ],
)
def test_the_day_kept_is_the_day_counted_from(tmp_path: Path, said: str,
                                              pending: tuple[str, str]) -> None:
    a = _assistant(tmp_path, ("my sister's birthday is on 12 january",
                              "my son was born on 4 march 2015"))
    turn = a.handle_text(said)
    assert turn.reply.outcome == "done", turn.reply.text
    assert _pending(a) == [pending]


def test_a_day_not_kept_is_asked_about_and_the_answer_takes_its_place(tmp_path: Path) -> None:
    a = _assistant(tmp_path)
    turn = a.handle_text("remind me a week before our anniversary to book a table")
    assert turn.reply.text == "When is your anniversary?" and _pending(a) == []
    turn = a.handle_text("the 3rd of december")
    assert _pending(a) == [("book a table", "2027-11-26 09:00")], turn.reply.text


def test_an_answer_about_another_day_is_not_taken_for_it(tmp_path: Path) -> None:
    a = _assistant(tmp_path)
    assert a.handle_text("remind me 2 days before mum's birthday to post her card").reply.text \
        == "When is mum's birthday?"
    a.handle_text("our anniversary is on the 3rd of december")
    assert _pending(a) == []


def test_two_dates_kept_for_the_same_day_are_not_chosen_between(tmp_path: Path) -> None:
    a = _assistant(tmp_path, ("my sister's birthday is on 12 january",
                              "my sister's birthday is on 21 january"))
    turn = a.handle_text("remind me the day before my sister's birthday to buy a card")
    assert turn.reply.outcome == "asked" and _pending(a) == []


def test_a_day_named_as_a_thing_is_no_anchor(tmp_path: Path) -> None:
    a = _assistant(tmp_path, ("my sister's birthday is on 12 january",))
    a.handle_text("remind me to buy my sister's birthday present tomorrow")
    assert _pending(a) == [("buy my sister's birthday present", "2026-12-03 09:00")]


@pytest.mark.parametrize(
    ("said", "when"),
    [
        ("the day before christmas", "2026-12-24 09:00"),  # it was the 26th
        ("the day after christmas", "2026-12-26 09:00"),
        ("remind me the day after", "2026-12-03 09:00"),
        ("2 days before christmas", "2026-12-23 09:00"),
        ("the day before", None),  # it was tomorrow
        ("2 days before my anniversary", None),  # it was in 2 days
        ("remind me 3 days after my surgery to take the stitches out", None),
        ("remind me the day before the bins at 7pm", None),  # it was 19:00 tomorrow
    ],
)
def test_a_day_counted_from_an_unknown_day_is_no_time(said: str, when: str | None) -> None:
    for read in (resolve_time, find_time):
        found = read(said, NOW)
        assert (f"{found.when:%Y-%m-%d %H:%M}" if found else None) == when, (read, found)


def test_a_possessive_written_either_way_is_the_same_day(tmp_path: Path) -> None:
    a = _assistant(tmp_path, ("my sisters birthday is on 12 january",))
    a.handle_text("remind me on my sister's birthday to call her")
    assert _pending(a) == [("call her", "2027-01-12 09:00")]


def test_one_persons_day_is_never_taken_for_anothers(tmp_path: Path) -> None:
    """ "my birthday" shares its words with "my sister's birthday": never the same day."""
    a = _assistant(tmp_path, ("my sister's birthday is on 12 january",
                              "my wife's mum's birthday is on 3 may",
                              "my son's friend was born on 1 june 2014"))
    assert a.handle_text("remind me the day before my birthday to book a table").reply.text \
        == "When is your birthday?"
    assert a.handle_text("remind me on mum's birthday to call her").reply.text \
        == "When is mum's birthday?"
    assert a.handle_text("remind me on my son's birthday to get a cake").reply.text \
        == "When is your son's birthday?"
    assert _pending(a) == []


def _asking(tmp_path: Path, notes: tuple[str, ...] = ()):
    """The question routed the way the classifier sent it when found: to the clock."""
    clock = Classified(Intent.QUERY, 0.97, {Intent.QUERY: 0.97}, source="clock")
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW),
                       classifier=ScriptedClassifier({}, clock))
    for i, text in enumerate(notes):
        a.ctx.notes.add(text, KEPT + timedelta(minutes=i))
    return a


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        ("how many days until my sister's birthday",
         "Your sister's birthday is in 41 days, on Tuesday 12 January 2027."),
        ("how many weeks till my sisters birthday",
         "Your sisters birthday is in 5 weeks and 6 days, on Tuesday 12 January 2027."),
        ("how many sleeps until our anniversary",
         "Your anniversary is tomorrow, Thursday 3 December."),
    ],
)
def test_days_until_a_kept_day_are_counted_from_it(tmp_path: Path, asked: str,
                                                   said: str) -> None:
    """It was answered with the time of day ("It's 01:01 on Monday, 7 December.")."""
    a = _asking(tmp_path, ("my sister's birthday is on 12 january",
                           "our anniversary is on the 3rd of december"))
    turn = a.handle_text(asked)
    assert turn.reply.text == said
    assert _pending(a) == []


def test_days_until_a_day_not_kept_say_so(tmp_path: Path) -> None:
    a = _asking(tmp_path, ("my sister's birthday is on 12 january",))
    turn = a.handle_text("how long until my birthday")
    assert turn.reply.text.startswith("I don't know when your birthday is.")
    assert "15:30" not in turn.reply.text


def test_no_task_said_reminds_of_the_day_itself(tmp_path: Path) -> None:
    """ "remind me the day before my sister's birthday", routed as a reminder: of the
    birthday (it asked "What should I remind you about?")."""
    reminder = Classified(Intent.REMINDER, 0.99, {Intent.REMINDER: 0.99})
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW),
                       classifier=ScriptedClassifier({}, reminder))
    a.ctx.notes.add("my sister's birthday is on 12 january", KEPT)
    reply = a.handle_text("remind me the day before my sister's birthday").reply
    assert reply.text.startswith("OK, I'll remind you about your sister's birthday"), reply.text
    assert _pending(a) == [("my sister's birthday", "2027-01-11 09:00")]
