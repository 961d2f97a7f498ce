"""A value said again replaces the old one in answers; the model's echo of the prompt's
markers is not an answer. Found by hand: after "actually the boiler code is 4472",
"what's the boiler code" said 4471, and once "The boiler code is 4471 NOTES."."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from mavend.handlers.recall import Recalled, grounded, superseded_out
from mavend.router.decision import Intent
from tests.scripted import Classified, ScriptedClassifier
from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant

AT = datetime(2026, 12, 2, 9, 0, tzinfo=TZ)


def _row(text: str, minutes: int) -> Recalled:
    return Recalled("note", minutes + 1, text, AT + timedelta(minutes=minutes), 0.6)


def test_a_corrected_value_replaces_the_old_one() -> None:
    old, new = _row("the boiler code is 4471", 0), _row("actually the boiler code is 4472", 5)
    assert superseded_out([old, new]) == [new]
    # two numbers for the same thing: the newer stands without a cue
    later = _row("the gate code is 2024", 9)
    assert superseded_out([_row("the gate code is 1973", 1), later]) == [later]


def test_other_things_said_about_the_same_subject_both_stand() -> None:
    rows = [_row("the car is in the garage", 0), _row("the car is blue", 5)]
    assert superseded_out(rows) == rows


def test_the_prompt_markers_are_no_answer() -> None:
    rows = [_row("the boiler code is 4471", 0)]
    assert not grounded("The boiler code is 4471 NOTES.", rows, "what's the boiler code")
    assert grounded("The boiler code is 4471.", rows, "what's the boiler code")


def test_the_answer_is_the_newest_value(tmp_path: Path) -> None:
    query = Classified(Intent.QUERY, 0.99, {Intent.QUERY: 0.99}, source="notes")
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(AT + timedelta(hours=1)),
                       classifier=ScriptedClassifier({}, query))
    a.ctx.notes.add("the boiler code is 4471", AT)
    a.ctx.notes.add("actually the boiler code is 4472", AT + timedelta(minutes=5))
    reply = a.handle_text("what's the boiler code").reply.text
    assert "4472" in reply and "4471" not in reply, reply
