"""Forgetting by voice: a bulk erasure asks first and erases only what was asked about."""

from __future__ import annotations

from pathlib import Path

import pytest

from mavend.handlers import parse_forget
from tests.state_kit import kit_settings, make_assistant


def _counts(a) -> dict[str, int]:
    with a.store.read() as conn:
        return {
            t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("notes", "facts", "memory", "reminders")
        }


@pytest.mark.parametrize(
    ("said", "scope"),
    [
        ("forget everything", "everything"),
        ("please forget everything you know about me", "everything"),
        ("erase everything you have stored", "everything"),
        ("wipe my data", "everything"),
        ("delete all my notes", "notes"),
        ("clear my notes", "notes"),
        ("delete all my facts", "facts"),
        ("clear my log", "facts"),
        ("forget what you've learned", "memory"),
        ("reset your habits", "memory"),
    ],
)
def test_bulk_erasures_are_read(said: str, scope: str) -> None:
    found = parse_forget(said)
    assert found is not None and found.scope == scope


@pytest.mark.parametrize(
    "said",
    ["forget it", "clear all", "delete all", "note to self forget nothing",
     "delete the dentist reminder", "clear the shopping list", "forget about it",
     "forget the dentist reminder", "forget my alarm", "forget that"],
)
def test_other_sentences_are_not_erasures(said: str) -> None:
    assert parse_forget(said) is None


def test_forget_everything_asks_then_erases_only_what_was_there(tmp_path: Path) -> None:
    a = make_assistant(kit_settings(tmp_path))
    # Saved the way the note handler saves them (no note grammar routes without a model).
    a.ctx.notes.add("the spare key is under the blue pot", a.ctx.now())
    a.ctx.notes.add("the wifi password is on the router", a.ctx.now())
    assert a.handle_text("remind me to call mum at 5 pm").reply.outcome == "done"
    before = _counts(a)
    assert before["notes"] == 2
    asked = a.handle_text("forget everything")
    assert asked.reply.outcome == "confirm" and "2 notes" in asked.reply.text
    assert _counts(a) == before  # nothing erased before the yes
    done = a.handle_text("yes")
    assert done.decision.decided_by == "confirmation"
    after = _counts(a)
    assert after["notes"] == 0 and after["reminders"] == before["reminders"] == 1


def test_a_note_saved_after_the_question_survives_the_yes(tmp_path: Path) -> None:
    a = make_assistant(kit_settings(tmp_path))
    a.ctx.notes.add("the spare key is under the blue pot", a.ctx.now())
    assert a.handle_text("delete all my notes").reply.outcome == "confirm"
    # Another process saves a note between the question and the yes.
    a.ctx.notes.add("the bike lock code is 4711", a.ctx.now())
    a.handle_text("yes")
    assert [n.text for n, _, _ in a.ctx.notes.recent()] == ["the bike lock code is 4711"]


def test_no_erases_nothing_and_nothing_stored_asks_nothing(tmp_path: Path) -> None:
    a = make_assistant(kit_settings(tmp_path))
    assert a.handle_text("forget everything").reply.text == "There's nothing stored to forget."
    a.ctx.notes.add("the spare key is under the blue pot", a.ctx.now())
    assert a.handle_text("forget everything").reply.outcome == "confirm"
    assert a.handle_text("no").reply.text == "OK, I won't."
    assert _counts(a)["notes"] == 1


@pytest.mark.parametrize(
    ("said", "what"),
    [
        ("forget the wifi password", "the wifi password"),
        ("please forget my locker code", "my locker code"),
        ("forget what i said about the plumber", "the plumber"),
        ("delete the note about the boiler", "the boiler"),
        ("remove the entry about my weight", "my weight"),
        ("forget the milk", "the milk"),  # one row, found or not; asked before it goes
    ],
)
def test_one_row_is_read_with_the_words_that_find_it(said: str, what: str) -> None:
    found = parse_forget(said)
    assert found is not None and (found.scope, found.what) == ("one", what)


def test_forget_one_asks_with_what_it_found_then_erases_only_that(tmp_path: Path) -> None:
    """"forget the wifi password" was routed as a question and read the password out.
    End state: before the yes nothing is gone; after it, that note alone; "undo that"
    brings it back; words that find nothing change nothing."""
    from mavend.router.embedder import HashingEmbedder

    embedder = HashingEmbedder()
    a = make_assistant(kit_settings(tmp_path), embedder=embedder)
    for text in ("my wifi password is sunflower22", "the plumber comes on friday"):
        a.ctx.notes.add(text, a.ctx.now(), embedding=embedder.embed([text])[0],
                        embedder=embedder.fingerprint)
    asked = a.handle_text("forget the wifi password").reply
    assert asked.outcome == "confirm" and "my wifi password is sunflower22" in asked.text
    assert _counts(a)["notes"] == 2
    done = a.handle_text("yes").reply
    assert done.text == "Done: I forgot “my wifi password is sunflower22”."
    assert [n.text for n, _, _ in a.ctx.notes.recent()] == ["the plumber comes on friday"]
    assert a.handle_text("undo that").reply.outcome == "done"
    assert _counts(a)["notes"] == 2
    nothing = a.handle_text("forget my bank pin").reply
    assert nothing.text == "I have nothing stored about my bank pin." and _counts(a)["notes"] == 2


def test_the_last_note_is_forgotten_after_a_yes(tmp_path: Path) -> None:
    """"delete my last note" was refused as an act. End state: the newest note alone is
    gone, after the yes; a fact logged later is not a note."""
    from datetime import datetime, timedelta

    from tests.state_kit import TZ

    a = make_assistant(kit_settings(tmp_path))
    at = datetime(2026, 12, 2, 9, 0, tzinfo=TZ)
    a.ctx.notes.add("the boiler code is 4471", at)
    a.ctx.notes.add("the gate code is 1973", at + timedelta(minutes=1))
    a.ctx.facts.add("coffee", "1", at + timedelta(minutes=2), utterance="i had a coffee")
    assert parse_forget("remove the note i just made").scope == "last"
    asked = a.handle_text("delete my last note").reply
    assert asked.outcome == "confirm" and "the gate code is 1973" in asked.text
    assert _counts(a)["notes"] == 2
    a.handle_text("yes")
    assert [n.text for n, _, _ in a.ctx.notes.recent()] == ["the boiler code is 4471"]
    assert _counts(a)["facts"] == 1
    assert "i had a coffee" in a.handle_text("forget the last thing i told you").reply.text


def test_what_did_i_just_say_says_it_back(tmp_path: Path) -> None:
    """It answered "I don't know that command" and the whole help."""
    from mavend.router.decision import Intent
    from tests.scripted import Classified, ScriptedClassifier

    system = Classified(Intent.SYSTEM, 0.99, {Intent.SYSTEM: 0.99})
    a = make_assistant(kit_settings(tmp_path),
                       classifier=ScriptedClassifier({}, system))
    a.handle_text("set a timer for 5 minutes")
    assert a.handle_text("what did i just say").reply.text == (
        "You said: “set a timer for 5 minutes”.")


@pytest.mark.parametrize(("said", "what"), [
    ("forget where my car is", "my car"),
    ("please forget where the spare keys are", "the spare keys"),
    ("forget where i parked my car", "my car"),
])
def test_forget_where_a_thing_is_names_that_row(said: str, what: str) -> None:
    # it was "Sorry, I can't help with that here."
    found = parse_forget(said)
    assert found is not None and (found.scope, found.what) == ("one", what)


def test_forget_where_my_car_is_asks_then_forgets_that_note(tmp_path: Path) -> None:
    from mavend.router.embedder import HashingEmbedder

    embedder = HashingEmbedder()
    helper = make_assistant(kit_settings(tmp_path), embedder=embedder)
    for text in ("my car is parked on level 2", "the spare key is under the blue pot"):
        helper.ctx.notes.add(text, helper.ctx.now(), embedding=embedder.embed([text])[0],
                             embedder=embedder.fingerprint)
    asked = helper.handle_text("forget where my car is").reply
    assert asked.text.startswith("Forget “my car is parked on level 2”?"), asked.text
    helper.handle_text("yes")
    assert [n.text for n, _, _ in helper.ctx.notes.recent()] == [
        "the spare key is under the blue pot"]
