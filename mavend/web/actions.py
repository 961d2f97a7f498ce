"""The page's writes. Each runs in the daemon's turn worker (one at a time with the
turns) and is recorded like a turn's change, session "web", so "undo" takes it back."""

from __future__ import annotations

from typing import Any

from mavend.assistant import Assistant
from mavend.errors import MavendError
from mavend.handlers.forget import delete_row
from mavend.handlers.reminder_find import cancelled_name, label
from mavend.language.timeparse import resolve_time
from mavend.lists import ListBook, ListInputError
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
    what = cancelled_name(reminder)
    _record(a, "cancel on the page", Change(
        "reminder.cancel", f"cancelled {what}", {"ids": [reminder_id], "what": what}))  # fmt: skip
    return {"text": f"Cancelled {what}."}


def snooze_reminder(a: Assistant, reminder_id: int, minutes: int) -> dict[str, Any]:
    """Later by `minutes` (a paused timer: that much more left)."""
    if not 1 <= minutes <= 24 * 60:
        raise ValueError("snooze by 1 minute to a day")
    return _edit_reminder(a, reminder_id, "snooze on the page",
                          lambda: a.ctx.reminders.shift(reminder_id, minutes * 60.0,
                                                        now=a.ctx.now()))  # fmt: skip


def edit_reminder(a: Assistant, reminder_id: int, body: dict[str, Any]) -> dict[str, Any]:
    """New words and/or a new time, the time said as to the assistant ("tomorrow at 6")."""
    text = str(body.get("text") or "").strip()
    when_said = str(body.get("when") or "").strip()
    now = a.ctx.now()
    when = None
    if when_said:
        resolved = resolve_time(when_said, now)
        if resolved is None:
            raise ValueError(f"I can't read “{when_said}” as a time")
        when = resolved.when

    def apply() -> Any:
        if text:
            a.ctx.reminders.rename(reminder_id, text)
        if when is not None:
            a.ctx.reminders.move(reminder_id, when, now=now)

    if not text and when is None:
        raise ValueError("say what to change: the words, the time, or both")
    return _edit_reminder(a, reminder_id, "edit on the page", apply)


def _edit_reminder(a: Assistant, reminder_id: int, said: str, apply: Any) -> dict[str, Any]:
    before = a.ctx.reminders.snapshots()
    if reminder_id not in before:
        raise NotFound(f"reminder {reminder_id} is not pending")
    try:
        apply()
    except MavendError as exc:
        raise ValueError(str(exc)) from None
    a.ctx.on_reminders_changed()
    changes = a.handler.reminders.changed_since(before)
    if changes:
        a.undo.journal.record(SESSION, said, changes, a.ctx.now())
    reminder = a.ctx.reminders.get(reminder_id)
    return {"text": f"Changed {label(reminder)}."}


def edit_note(a: Assistant, note_id: int, body: dict[str, Any]) -> dict[str, Any]:
    text = str(body.get("text") or "").strip()
    if not text:
        raise ValueError("a note needs some words")
    with a.store.read() as conn:
        row = conn.execute("SELECT text FROM notes WHERE id = ?", (note_id,)).fetchone()
    if row is None:
        raise NotFound(f"note {note_id} is gone")
    vector, embedder = a.ctx.embed(text)
    a.ctx.notes.edit(note_id, text, embedding=vector, embedder=embedder)
    _record(a, "edit on the page", Change(
        "note.edit", f"changed the note “{row['text']}” to “{text}”",
        {"id": note_id, "before": row["text"], "after": text}))  # fmt: skip
    return {"text": "Changed the note."}


def edit_fact(a: Assistant, fact_id: int, body: dict[str, Any]) -> dict[str, Any]:
    value = str(body.get("value") or "").strip()
    if not value or len(value) > 500:
        raise ValueError("a value needs some words (500 characters at most)")
    with a.store.read() as conn:
        row = conn.execute("SELECT key, value FROM facts WHERE id = ?", (fact_id,)).fetchone()
    if row is None or not a.ctx.facts.edit(fact_id, value):
        raise NotFound(f"entry {fact_id} is gone")
    _record(a, "edit on the page", Change(
        "fact.edit", f"changed {row['key']} from “{row['value']}” to “{value}”",
        {"id": fact_id, "before": row["value"], "after": value}))  # fmt: skip
    return {"text": f"Changed {row['key']} to {value}."}


def edit_list_item(a: Assistant, name: str, item_id: int, body: dict[str, Any]) -> dict[str, Any]:
    book = ListBook(a.ctx.store, a.ctx.tz, clock=a.ctx.clock)
    old = next((i for i in book.items(name) or [] if i.id == item_id), None)
    if old is None:
        raise NotFound(f"item {item_id} is not on the {name} list")
    try:
        item = book.rename_item(name, item_id, str(body.get("text") or ""))
    except ListInputError as exc:
        raise ValueError(str(exc)) from None
    if item is None:
        raise NotFound(f"item {item_id} is not on the {name} list")
    _record(a, "edit on the page", Change(
        "list.edit", f"changed {old.text} to {item.text} on the {name} list",
        {"list": name, "id": item_id, "before": old.text, "after": item.text}))  # fmt: skip
    return {"text": f"Changed {old.text} to {item.text}."}


def delete_note(a: Assistant, note_id: int) -> dict[str, Any]:
    deleted = delete_row(a.ctx, "note", note_id)
    if deleted is None:
        raise NotFound(f"note {note_id} is gone")
    _record(a, "delete on the page", deleted[1])
    return {"text": "Deleted the note."}


def delete_fact(a: Assistant, fact_id: int) -> dict[str, Any]:
    deleted = delete_row(a.ctx, "fact", fact_id)
    if deleted is None:
        raise NotFound(f"entry {fact_id} is gone")
    _record(a, "delete on the page", deleted[1])
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
    """One habit or repair of the owner's or an enrolled voice's, forgotten (`mavend memory
    forget` does the same)."""
    engine = a.memory
    mine: set[int] = set()
    for scope in engine.table.scopes_under(engine.scope):
        mine |= {h.id for h in engine.table.habits(scope, 100_000)}
        mine |= {r.id for r in engine.table.repairs(scope)}
    if record_id not in mine or not engine.table.delete(record_id):
        raise NotFound(f"memory {record_id} is gone")
    return {"text": "Forgotten."}


def undo(a: Assistant, turn: int) -> dict[str, Any]:
    reply = a.undo.undo_turn(turn, SESSION)
    if reply.outcome != "done":
        raise NotFound(reply.text)
    return {"text": reply.text}
