"""The page's writes. Each runs in the daemon's turn worker (one at a time with the
turns) and is recorded like a turn's change, session "web", so "undo" takes it back."""

from __future__ import annotations

from typing import Any

from mavend.assistant import Assistant
from mavend.handlers.reminder_find import label
from mavend.lists import ListBook
from mavend.replies import Change
from mavend.router.decision import Intent

SESSION = "web"


class NotFound(LookupError):
    """No such row (any more): the page is out of date."""


def _record(a: Assistant, said: str, change: Change) -> None:
    a.undo.journal.record(SESSION, said, [change], a.ctx.now())


def cancel_reminder(a: Assistant, reminder_id: int) -> dict[str, Any]:
    pending = {r.id: r for r in a.ctx.reminders.pending()}
    reminder = pending.get(reminder_id)
    if reminder is None:
        raise NotFound(f"reminder {reminder_id} is not pending")
    a.ctx.reminders.cancel(reminder_id)
    a.ctx.on_reminders_changed()
    what = label(reminder)
    _record(a, "cancel on the page", Change(
        "reminder.cancel", f"cancelled {what}", {"ids": [reminder_id], "what": what}))  # fmt: skip
    return {"text": f"Cancelled {what}."}


def delete_note(a: Assistant, note_id: int) -> dict[str, Any]:
    with a.store.read() as conn:
        row = conn.execute("SELECT text FROM notes WHERE id = ?", (note_id,)).fetchone()
    if row is None or not a.ctx.notes.delete(note_id):
        raise NotFound(f"note {note_id} is gone")
    text = row["text"]
    _record(a, "delete on the page", Change("note.delete", f"deleted the note “{text}”",
                                            {"text": text}))  # fmt: skip
    return {"text": "Deleted the note."}


def delete_fact(a: Assistant, fact_id: int) -> dict[str, Any]:
    with a.store.read() as conn:
        row = conn.execute(
            "SELECT key, value, utterance FROM facts WHERE id = ?", (fact_id,)
        ).fetchone()
    if row is None or not a.ctx.facts.delete(fact_id):
        raise NotFound(f"entry {fact_id} is gone")
    ref = {"key": row["key"], "value": row["value"], "utterance": row["utterance"]}
    said = row["utterance"] or f"{row['key']}: {row['value']}"
    _record(a, "delete on the page", Change("fact.delete", f"deleted “{said}”", ref))
    return {"text": "Deleted it."}


def delete_list_item(a: Assistant, name: str, item_id: int) -> dict[str, Any]:
    book = ListBook(a.ctx.store, a.ctx.tz, clock=a.ctx.clock)
    item = next((i for i in book.items(name) or [] if i.id == item_id), None)
    if item is None or not book.remove(name, [item_id]):
        raise NotFound(f"item {item_id} is not on the {name} list")
    _record(a, "delete on the page", Change(
        "list.remove", f"took {item.text} off the {name} list",
        {"list": name, "texts": [item.text]}))  # fmt: skip
    return {"text": f"Took {item.text} off the {name} list."}


def that_was_wrong(a: Assistant, turn_id: int, intent: str) -> dict[str, Any]:
    """A turn the household says was misunderstood, with what it meant: taught to the
    classifier as a spoken correction is (memory/engine.py `correct`)."""
    try:
        meant = Intent(intent)  # only the seven intents: nothing else reaches the classifier
    except ValueError:
        known = ", ".join(i.value for i in Intent)
        raise ValueError(f"{intent!r} is not one of: {known}") from None
    with a.store.read() as conn:
        row = conn.execute("SELECT utterance FROM turns WHERE id = ?", (turn_id,)).fetchone()
    if row is None:
        raise NotFound(f"turn {turn_id} is not in the log")
    if not a.memory.correct(a.router, row["utterance"], meant):
        return {"text": "Memory is off ([memory] enabled = false): nothing was learned."}
    return {"text": f"Learned: “{row['utterance']}” means {meant.value}."}


def forget_memory(a: Assistant, record_id: int) -> dict[str, Any]:
    """One habit or repair of the owner's, forgotten (`mavend memory forget` does the same)."""
    engine = a.memory
    mine = {h.id for h in engine.table.habits(engine.scope, 100_000)}
    mine |= {r.id for r in engine.table.repairs(engine.scope)}
    if record_id not in mine or not engine.table.delete(record_id):
        raise NotFound(f"memory {record_id} is gone")
    return {"text": "Forgotten."}


def undo(a: Assistant, turn: int) -> dict[str, Any]:
    reply = a.undo.undo_turn(turn, SESSION)
    if reply.outcome != "done":
        raise NotFound(reply.text)
    return {"text": reply.text}
