"""How long until the one reminder or timer the words name, any kind, asked any way.

Found by hand: "how long left on the eggs" listed every reminder; "how long until the
washing reminder" said "You have no timers" (the question was read as a timer's); "how
long until my reminder to check the washing", routed as a question about facts, said
"I don't know". Each names one pending reminder; the answer is its time left.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.router.decision import Intent
from tests.scripted import Classified, ScriptedClassifier
from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant

NOW = datetime(2026, 12, 2, 15, 30, tzinfo=TZ)


def _assistant(tmp_path: Path, source: str):
    query = Classified(Intent.QUERY, 0.99, {Intent.QUERY: 0.99}, source=source)
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW),
                       classifier=ScriptedClassifier({}, query))
    a.ctx.reminders.add("check the washing", NOW + timedelta(minutes=40), now=NOW)
    a.ctx.reminders.add("eggs timer", NOW + timedelta(minutes=8), now=NOW, kind="timer",
                        name="eggs")
    return a


@pytest.mark.parametrize("source", ["reminders", "facts", ""])
@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("how long left on the eggs", "The eggs timer has 8 minutes left, until 15:38:00."),
        ("how much time is left on the eggs",
         "The eggs timer has 8 minutes left, until 15:38:00."),
        ("how long until the washing reminder",
         "Your reminder, check the washing, is in 40 minutes, at 16:10 today."),
        ("how long until my reminder to check the washing",
         "Your reminder, check the washing, is in 40 minutes, at 16:10 today."),
        ("when does my washing reminder go off",
         "Your reminder, check the washing, is in 40 minutes, at 16:10 today."),
    ],
)
def test_the_reminder_named_says_its_time_left(tmp_path: Path, source: str, question: str,
                                               reply: str) -> None:
    a = _assistant(tmp_path, source)
    before = a.ctx.reminders.active()
    assert a.handle_text(question).reply.text == reply
    assert a.ctx.reminders.active() == before  # a question changes nothing


def test_two_reminders_named_alike_are_asked_about(tmp_path: Path) -> None:
    a = _assistant(tmp_path, "reminders")
    a.ctx.reminders.add("take the washing out", NOW + timedelta(minutes=90), now=NOW)
    turn = a.handle_text("how long until the washing reminder")
    assert "check the washing" in turn.reply.text and "take the washing out" in turn.reply.text
    assert turn.reply.outcome == "asked"


def test_words_that_name_no_reminder_list_them_instead(tmp_path: Path) -> None:
    a = _assistant(tmp_path, "reminders")
    reply = a.handle_text("how long left on the roast").reply.text
    assert reply.startswith("You have 2 reminders"), reply


def test_a_question_about_the_alarm_is_answered_about_alarms(tmp_path: Path) -> None:
    """ "what time is my alarm" said "You have no reminders set." with none set, and "You
    have 3 reminders: ..." with one."""
    query = Classified(Intent.QUERY, 0.99, {Intent.QUERY: 0.99}, source="reminders")
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW),
                       classifier=ScriptedClassifier({}, query))
    assert a.handle_text("what time is my alarm").reply.text == "You have no alarms."
    a.ctx.reminders.add("check the washing", NOW + timedelta(minutes=40), now=NOW)
    a.ctx.reminders.add("alarm", datetime(2026, 12, 3, 7, 0, tzinfo=TZ), now=NOW, kind="alarm")
    assert a.handle_text("what time is my alarm").reply.text == (
        "Your alarm is set for 07:00 tomorrow.")


def test_the_next_of_a_kind_is_the_first_one_set(tmp_path: Path) -> None:
    """ "how long until my next alarm" said "You have no timers." with no alarm set, and
    "when's my next reminder" listed every one."""
    a = _assistant(tmp_path, "reminders")
    assert a.handle_text("how long until my next alarm").reply.text == (
        "You have no alarms set.")
    a.ctx.reminders.add("alarm", NOW + timedelta(hours=15, minutes=20, seconds=12), now=NOW,
                        kind="alarm")
    assert a.handle_text("how long until my next alarm").reply.text == (
        "Your alarm is in 15 hours and 20 minutes, at 06:50 tomorrow.")
    a.ctx.reminders.add("call mum", NOW + timedelta(hours=3), now=NOW)
    assert a.handle_text("when's my next reminder").reply.text == (
        "Your reminder, check the washing, is in 40 minutes, at 16:10 today.")


def test_pause_all_timers_pauses_each(tmp_path: Path) -> None:
    """It said "I found no timer like that."."""
    a = _assistant(tmp_path, "reminders")
    a.ctx.reminders.add("pizza timer", NOW + timedelta(minutes=12), now=NOW, kind="timer",
                        name="pizza")
    assert a.handle_text("pause all timers").reply.text == "Paused 2 timers."
    assert all(t.paused_left is not None for t in a.ctx.reminders.active() if t.kind == "timer")
    assert a.handle_text("resume all my timers").reply.text == "Resumed 2 timers."
    assert all(t.paused_left is None for t in a.ctx.reminders.active())
