""""Remind me about it the day before": counted back from the reminder just set.

Found by hand: after "the kids' dentist appointment is on the 14th at 4" (a reminder at
16:00 on the 14th, said back as "the kids' dentist appointment is"), "remind me about it
the day before" asked "When should I remind you?". Judged by the rows left.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from mavend.router.decision import Intent
from tests.scripted import Classified, ScriptedClassifier
from tests.state_kit import (
    TZ,
    MovableClock,
    kit_settings,
    local_fire_at,
    make_assistant,
    reminder_rows,
)

NOW = datetime(2026, 12, 7, 9, 0, tzinfo=TZ)  # a Monday


def _assistant(tmp_path: Path):
    # a statement with a time is a reminder; everything else is left to the grammar
    reminder = Classified(Intent.REMINDER, 0.99, {Intent.REMINDER: 0.99})
    return make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW),
                          classifier=ScriptedClassifier({}, reminder))


def rows(helper) -> list[tuple[str, str]]:
    return [(r["text"], local_fire_at(r)) for r in reminder_rows(helper)]


def test_the_day_before_is_counted_from_the_one_just_set(tmp_path: Path) -> None:
    helper = _assistant(tmp_path)
    first = helper.handle_text("the kids' dentist appointment is on the 14th at 4")
    assert "the kids' dentist appointment at 16:00" in first.reply.text, first.reply.text
    helper.handle_text("remind me about it the day before")
    assert rows(helper) == [("the kids' dentist appointment", "2026-12-14 16:00"),
                            ("the kids' dentist appointment", "2026-12-13 16:00")]


@pytest.mark.parametrize(("said", "text", "at"), [
    ("remind me an hour before", "the plumber is coming", "2026-12-10 13:00"),
    ("remind me half an hour before that", "the plumber is coming", "2026-12-10 13:30"),
    ("remind me the night before as well", "the plumber is coming", "2026-12-09 20:00"),
    ("remind me to tidy up two days before", "tidy up", "2026-12-08 14:00"),
])
def test_a_span_before_it(tmp_path: Path, said: str, text: str, at: str) -> None:
    helper = _assistant(tmp_path)
    helper.handle_text("remind me that the plumber is coming on thursday at 2 pm")
    turn = helper.handle_text(said)
    assert rows(helper)[-1] == (text, at), turn.to_json()


def test_with_nothing_set_it_asks_when(tmp_path: Path) -> None:
    helper = _assistant(tmp_path)
    reply = helper.handle_text("remind me about it the day before").reply
    assert reply.text == "When should I remind you?" and rows(helper) == []


def test_a_subjects_verb_goes_with_its_time(tmp_path: Path) -> None:
    helper = _assistant(tmp_path)
    helper.handle_text("remind me my passport appointment is on friday at 10")
    helper.handle_text("remind me to check what the answer is at 5 pm")
    assert rows(helper) == [("my passport appointment", "2026-12-11 10:00"),
                            ("check what the answer is", "2026-12-07 17:00")]
