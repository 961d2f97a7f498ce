"""A value said again replaces the old one in answers; the model's echo of the prompt's
markers is not an answer. Found by hand: after "actually the boiler code is 4472",
"what's the boiler code" said 4471, and once "The boiler code is 4471 NOTES."."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

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


def test_a_correction_in_the_same_second_still_replaces() -> None:
    # typed at once ("mavend say" twice): equal times, the later row is the newer
    old = Recalled("note", 7, "the wifi password is tiger123", AT, 0.6)
    new = Recalled("note", 8, "actually the wifi password is lion456", AT, 0.6)
    assert superseded_out([new, old]) == [new]


def test_other_things_said_about_the_same_subject_both_stand() -> None:
    rows = [_row("the car is in the garage", 0), _row("the car is blue", 5)]
    assert superseded_out(rows) == rows


def test_the_prompt_markers_are_no_answer() -> None:
    rows = [_row("the boiler code is 4471", 0)]
    assert not grounded("The boiler code is 4471 NOTES.", rows, "what's the boiler code")
    assert grounded("The boiler code is 4471.", rows, "what's the boiler code")


def test_an_answer_must_name_what_was_asked_about() -> None:
    """The 0.5B model answered "what's my daughter called" with "Lucy's name is Lucy."."""
    rows = [_row("my daughter's name is lucy", 0)]
    assert not grounded("Lucy's name is Lucy.", rows, "what's my daughter called")
    assert grounded("Your daughter's name is Lucy.", rows, "what's my daughter called")


def test_the_answer_is_the_newest_value(tmp_path: Path) -> None:
    query = Classified(Intent.QUERY, 0.99, {Intent.QUERY: 0.99}, source="notes")
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(AT + timedelta(hours=1)),
                       classifier=ScriptedClassifier({}, query))
    a.ctx.notes.add("the boiler code is 4471", AT)
    a.ctx.notes.add("actually the boiler code is 4472", AT + timedelta(minutes=5))
    reply = a.handle_text("what's the boiler code").reply.text
    assert "4472" in reply and "4471" not in reply, reply


NOTE = Classified(Intent.NOTE, 0.95, {Intent.NOTE: 0.95})
UNSURE = Classified(Intent.ACT, 0.3, {Intent.ACT: 0.3, Intent.NOTE: 0.28})
WHERE = Classified(Intent.QUERY, 0.99, {Intent.QUERY: 0.99}, source="notes")


def test_a_note_corrected_in_the_next_breath_is_the_answer(tmp_path: Path) -> None:
    """"actually it's under the red pot now" was asked about ("Sorry, I can't help with
    that here") and the key stayed under the blue pot."""
    clock = MovableClock(AT)
    a = make_assistant(kit_settings(tmp_path), clock=clock,
                       classifier=ScriptedClassifier({
                           "the torch is in the hall cupboard": NOTE,
                           "where's the torch": WHERE,
                       }, UNSURE))
    a.handle_text("the torch is in the hall cupboard")
    clock.at += timedelta(seconds=20)
    turn = a.handle_text("oh sorry it's under the stairs now")
    assert turn.reply.text == "Noted: the torch is now under the stairs"
    assert [n.text for n, _, _ in a.ctx.notes.recent()] == [
        "the torch is now under the stairs", "the torch is in the hall cupboard"]
    reply = a.handle_text("where's the torch").reply.text
    assert "under the stairs" in reply and "cupboard" not in reply, reply


def test_what_is_no_new_value_is_no_correction(tmp_path: Path) -> None:
    a = make_assistant(kit_settings(tmp_path), clock=MovableClock(AT),
                       classifier=ScriptedClassifier({
                           "the torch is in the hall cupboard": NOTE}, UNSURE))
    a.handle_text("the torch is in the hall cupboard")
    a.handle_text("it's raining again")
    assert [n.text for n, _, _ in a.ctx.notes.recent()] == ["the torch is in the hall cupboard"]


@pytest.mark.parametrize(("kept", "said", "new"), [
    ("the wifi password is fishcake99", "change the wifi password to seahorse12",
     "the wifi password is now seahorse12"),
    ("my locker code is 1234", "can you update my locker code to 9876",
     "my locker code is now 9876"),
    ("the gate code is 2024", "the gate code has changed to 5555", "the gate code is now 5555"),
    ("the gate code is 2024", "the new gate code is 7777", "the gate code is now 7777"),
])
def test_a_kept_value_changed_by_name_is_the_new_answer(
    tmp_path: Path, kept: str, said: str, new: str
) -> None:
    """ "change the wifi password to seahorse12" was "Sorry, I can't help with that here",
    and the old password stayed the answer."""
    clock = MovableClock(AT)
    a = make_assistant(kit_settings(tmp_path), clock=clock, classifier=ScriptedClassifier(
        {kept: NOTE}, WHERE))
    a.handle_text(kept)
    clock.at = AT + timedelta(hours=2)  # long after: no continuation of the first turn
    reply = a.handle_text(said).reply
    assert reply.text == f"Noted: {new}", reply.text
    assert [n.text for n, _, _ in a.ctx.notes.recent()] == [new, kept]
    subject = new.split(" is now ")[0].replace("my ", "")
    answer = a.handle_text(f"what's {subject}").reply.text
    assert new.split()[-1] in answer and kept.split()[-1] not in answer, answer


def test_a_change_of_something_never_kept_is_not_a_note(tmp_path: Path) -> None:
    a = make_assistant(kit_settings(tmp_path), classifier=ScriptedClassifier(
        {"the wifi password is fishcake99": NOTE}, UNSURE))
    a.handle_text("the wifi password is fishcake99")
    a.handle_text("change the channel to bbc one")
    assert [n.text for n, _, _ in a.ctx.notes.recent()] == ["the wifi password is fishcake99"]
