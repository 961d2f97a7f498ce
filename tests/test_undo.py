""""What did you just do?" and "undo that": the end state in the SQLite file after each
turn, through the real Assistant (grammar routing, stage 0 commands)."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

import pytest

from mavend.replies import Change
from mavend.state.store import Store
from mavend.undo import UndoCommand, UndoJournal, parse_undo
from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant

NOW = datetime(2026, 12, 3, 9, 0, tzinfo=TZ)


@pytest.fixture
def home(tmp_path: Path):
    settings = kit_settings(tmp_path)
    clock = MovableClock(NOW)
    return make_assistant(settings, clock=clock), settings.storage.database_path()


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def reminders(db: Path) -> list[tuple[str, str]]:
    return rows(db, "SELECT text, status FROM reminders ORDER BY id")


def test_a_reminder_set_is_described_undone_and_redone(home) -> None:
    a, db = home
    assert a.handle_text("remind me to call mum at 5 pm").reply.outcome == "done"
    assert reminders(db) == [("call mum", "pending")]
    what = a.handle_text("hey jarvis, what did you just do?")
    assert what.decision.decided_by == "undo-command"
    assert what.reply.text == "I set a reminder (call mum) for 17:00 today."
    undo = a.handle_text("undo that")
    assert undo.reply.outcome == "done", undo.reply.text
    assert reminders(db) == [("call mum", "cancelled")]
    assert undo.reply.text == "Undone: I cancelled the reminder (call mum) for 17:00 today."
    # An undo is a turn: the next "undo that" takes it back (a redo).
    redo = a.handle_text("redo")
    assert redo.reply.outcome == "done", redo.reply.text
    assert reminders(db) == [("call mum", "pending")]
    again = a.handle_text("no, undo that")
    assert again.reply.outcome == "done"
    assert reminders(db) == [("call mum", "cancelled")]
    assert a.handle_text("what did you just do").reply.text == (
        "I cancelled the reminder (call mum) for 17:00 today."
    )


def test_a_cancel_is_taken_back(home) -> None:
    a, db = home
    a.handle_text("remind me to water the plants at 6 pm")
    assert a.handle_text("cancel the water the plants reminder").reply.outcome == "done"
    assert reminders(db) == [("water the plants", "cancelled")]
    undo = a.handle_text("oops undo that").reply
    assert undo.text == "Undone: I put back water the plants."
    assert reminders(db) == [("water the plants", "pending")]


def test_a_cancelled_reminder_whose_time_has_passed_stays_cancelled(home, tmp_path) -> None:
    a, db = home
    a.handle_text("set a timer for 10 minutes")
    a.handle_text("cancel the timer")
    a.undo.ctx.clock.at = NOW.replace(hour=10)  # the timer would have rung at 09:10
    reply = a.handle_text("undo that").reply
    assert reply.text == (
        "Nothing to undo: the timer for 10 minutes stays cancelled: its time has passed."
    )
    assert [s for _, s in reminders(db)] == ["cancelled"]


def test_a_note_is_deleted_and_put_back(home) -> None:
    a, db = home
    a.handle_text("remember that the spare key is under the blue pot")
    assert rows(db, "SELECT text FROM notes") == [("the spare key is under the blue pot",)]
    assert a.handle_text("take that back").reply.outcome == "done"
    assert rows(db, "SELECT text FROM notes") == []
    assert a.handle_text("redo").reply.outcome == "done"
    assert rows(db, "SELECT text FROM notes") == [("the spare key is under the blue pot",)]


def test_list_items_come_off_and_go_back(home) -> None:
    a, db = home
    a.handle_text("add eggs and oat milk to the shopping list")
    a.handle_text("put bread on the shopping list")
    items = "SELECT text, done FROM list_items ORDER BY id"
    assert rows(db, items) == [("eggs", 0), ("oat milk", 0), ("bread", 0)]
    assert a.handle_text("undo the last two").reply.outcome == "done"
    assert rows(db, items) == []
    a.handle_text("add eggs and oat milk to the shopping list")
    a.handle_text("take oat milk off the shopping list")
    assert rows(db, items) == [("eggs", 0)]
    a.handle_text("undo that")
    assert sorted(rows(db, items)) == [("eggs", 0), ("oat milk", 0)]
    a.handle_text("tick off eggs on the shopping list")
    a.handle_text("undo")
    assert ("eggs", 0) in rows(db, items)


def test_two_commands_in_one_breath_are_undone_together(home) -> None:
    a, db = home
    a.handle_text("add coffee to the shopping list and set a timer for 10 minutes")
    assert reminders(db) and rows(db, "SELECT text FROM list_items") == [("coffee",)]
    what = a.handle_text("what did you just do").reply.text
    assert "coffee" in what and "timer" in what
    a.handle_text("undo that")
    assert rows(db, "SELECT text FROM list_items") == []
    assert [s for _, s in reminders(db)] == ["cancelled"]


def test_another_rooms_turn_cannot_be_undone_from_here(home) -> None:
    a, db = home
    a.handle_text("remind me to feed the cat at 6 pm", session="satellite:kitchen")
    here = a.handle_text("undo that")
    assert here.reply.text == "There's nothing to undo."
    assert reminders(db) == [("feed the cat", "pending")]
    assert a.handle_text("what did you just do").reply.text == "I haven't changed anything yet."
    there = a.handle_text("undo that", session="satellite:kitchen")
    assert there.reply.outcome == "done"
    assert reminders(db) == [("feed the cat", "cancelled")]


def test_a_command_that_ran_is_never_run_or_undone_again(home) -> None:
    a, db = home
    assert a.handle_text("lock the screen").reply.outcome == "done"
    runs = "SELECT name FROM act_runs"
    assert rows(db, runs) == [("lock_screen",)]
    assert a.handle_text("what did you just do").reply.text == "I ran lock the screen."
    undo = a.handle_text("undo that")
    assert undo.reply.outcome == "refused"
    assert undo.reply.text == "I can't take back that I ran lock the screen."
    assert rows(db, runs) == [("lock_screen",)]  # nothing ran again, nothing else ran


def test_nothing_to_undo_on_a_fresh_box(home) -> None:
    a, _db = home
    assert a.handle_text("undo that").reply.text == "There's nothing to undo."
    assert a.handle_text("redo").reply.text == "There's nothing to redo."


def test_a_fact_is_taken_back_and_logged_again(tmp_path: Path) -> None:
    from mavend.handlers.common import HandlerContext
    from mavend.lists import ListBook
    from mavend.undo.inverse import Inverses

    settings = kit_settings(tmp_path)
    store = Store.open(settings)
    ctx = HandlerContext(settings, store, TZ, MovableClock(NOW))
    fact = ctx.facts.add("water", "2 glasses", NOW, utterance="i drank two glasses of water")
    inverses = Inverses(ctx, ListBook(store, TZ, clock=ctx.clock))
    ref = {"id": fact.id, "key": "water", "value": "2 glasses", "utterance": fact.utterance}
    undone = inverses.undo(Change("fact.add", "logged water: 2 glasses", ref))
    db = settings.storage.database_path()
    assert rows(db, "SELECT key FROM facts") == []
    assert undone.redo is not None and undone.redo.kind == "fact.delete"
    inverses.undo(undone.redo)
    assert rows(db, "SELECT key, value, utterance FROM facts") == [
        ("water", "2 glasses", "i drank two glasses of water")
    ]


def test_the_journal_keeps_turns_per_session_newest_first(tmp_path: Path) -> None:
    settings = kit_settings(tmp_path)
    journal = UndoJournal(Store.open(settings), TZ)
    assert journal.record("local", "nothing", [], NOW) == 0
    first = journal.record("local", "a", [Change("note.add", "noted a", {"id": 1})], NOW)
    journal.record("kitchen", "b", [Change("note.add", "noted b", {"id": 2})], NOW)
    third = journal.record("local", "c", [Change("note.add", "noted c", {"id": 3})], NOW)
    assert [t.turn for t in journal.recent("local", 5)] == [third, first]
    journal.record("local", "undo: c", [Change("note.delete", "x")], NOW, undo_of=third)
    assert journal.get(third).undone
    assert [t.said for t in journal.recent("local", 5)] == ["undo: c", "a"]


@pytest.mark.parametrize(
    ("said", "command"),
    [
        ("undo", UndoCommand("undo")),
        ("undo that", UndoCommand("undo")),
        ("no undo that", UndoCommand("undo")),
        ("oh no, take that back please", UndoCommand("undo")),
        ("undo the last change", UndoCommand("undo")),
        ("undo what you just did", UndoCommand("undo")),
        ("undo the last two", UndoCommand("undo", 2)),
        ("undo the last 3 things", UndoCommand("undo", 3)),
        ("undo the last twelve", UndoCommand("undo", 5)),
        ("redo", UndoCommand("redo")),
        ("undo the undo", UndoCommand("redo")),
        ("what did you just do", UndoCommand("what")),
        ("what did you do?", UndoCommand("what")),
        ("hey what have you just changed", UndoCommand("what")),
        ("what was your last command", UndoCommand("what")),
    ],
)
def test_undo_phrasings(said: str, command: UndoCommand) -> None:
    assert parse_undo(said) == command


@pytest.mark.parametrize(
    "said",
    [
        "undo the knot in my shoelace",
        "what did you do at the weekend",
        "how do i undo a git commit",
        "what did you just say",
        "undo the last zero",
        "remind me to undo the bolts tomorrow",
    ],
)
def test_not_undo(said: str) -> None:
    assert parse_undo(said) is None


def test_a_move_a_pause_and_a_named_timer_are_taken_back(home) -> None:
    a, db = home
    a.handle_text("remind me to call bob at 5 pm")
    a.handle_text("move the call bob reminder to 6 pm")
    fire = "SELECT fire_at FROM reminders WHERE text = 'call bob'"
    assert rows(db, fire) == [("2026-12-03T18:00:00+01:00",)]
    assert a.handle_text("what did you just do").reply.text == "I changed call bob."
    assert a.handle_text("undo that").reply.text == "Undone: I put call bob back as it was."
    assert rows(db, fire) == [("2026-12-03T17:00:00+01:00",)]
    a.handle_text("set a pasta timer for 12 minutes")
    assert a.handle_text("what did you just do").reply.text == (
        "I set a timer (pasta) for 09:12 today."
    )
    a.handle_text("pause the pasta timer")
    paused = "SELECT paused_left FROM reminders WHERE name = 'pasta'"
    assert rows(db, paused) == [(720.0,)]
    a.handle_text("undo")
    assert rows(db, paused) == [(None,)]
    a.handle_text("undo")  # the timer itself
    assert rows(db, "SELECT status FROM reminders WHERE name = 'pasta'") == [("cancelled",)]
