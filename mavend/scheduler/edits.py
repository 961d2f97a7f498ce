"""Changing a reminder once set: move, skip an occurrence, keep a series to some days of
the week, rename, pause and resume a timer, add or take off time. Each is one
transaction: a change is whole or not at all.

A mixin of `ReminderBook` (book.py), kept apart so each module stays one concern; it
uses the book's connection helpers (`_get`, `_insert`, `_free_due`, `_set_fire_at`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from mavend.errors import MavendError
from mavend.recurrence.rule import WEEKDAY_CODES
from mavend.state.store import iso

if TYPE_CHECKING:
    from mavend.recurrence import Series
    from mavend.scheduler.reminder import Reminder

MAX_TEXT_CHARS = 200  # a reminder is a line said aloud, not a document


def check_text(text: str) -> str:
    """The text as it will be stored, or a MavendError that says why not (one sentence)."""
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise MavendError("That text has control characters in it; say it in plain words.")
    cleaned = " ".join(text.split())
    if len(cleaned) > MAX_TEXT_CHARS:
        raise MavendError(
            f"That is {len(cleaned)} characters long; a reminder takes at most"
            f" {MAX_TEXT_CHARS}, so say it shorter."
        )
    return cleaned


def skips_text(skips: tuple[datetime, ...]) -> str | None:
    """A series' skipped occurrences as stored (space-separated ISO 8601); None: none."""
    return " ".join(iso(s) for s in skips) or None


class ReminderEdits:
    """What a reminder can be changed into after it is set (mixed into ReminderBook)."""

    store: Any
    tz: Any

    def _editable(self, conn: Any, reminder_id: int) -> Reminder:
        reminder = self._get(conn, reminder_id)  # type: ignore[attr-defined]
        if reminder.status not in ("pending", "fired"):
            raise MavendError(f"that reminder is {reminder.status}; set a new one instead")
        return reminder

    def move(self, reminder_id: int, when: datetime, *, now: datetime) -> Reminder:
        """Fire at `when` instead. For a series, only its next occurrence moves: a one-off
        copy at `when` takes its place (returned) and the series goes on after it."""
        if when <= now:
            raise MavendError("that time has already passed")
        when = when.astimezone(self.tz).replace(microsecond=0)
        with self.store.write("moving the reminder") as conn:
            reminder = self._editable(conn, reminder_id)
            if reminder.series is not None and reminder.status == "pending":
                self._advance(conn, reminder)
                return self._insert(  # type: ignore[attr-defined]
                    conn, reminder.text, when, now=now, kind=reminder.kind,
                    origin=reminder.origin, name=reminder.name,
                )
            when = self._free_due(conn, reminder_id, when)  # type: ignore[attr-defined]
            self._set_fire_at(conn, reminder_id, when)  # type: ignore[attr-defined]
            conn.execute(
                "UPDATE reminders SET status = 'pending', paused_left = NULL WHERE id = ?",
                (reminder_id,),
            )
            return self._get(conn, reminder_id)  # type: ignore[attr-defined]

    def skip_next(self, reminder_id: int) -> Reminder:
        """A series without its next occurrence (the one after it is next); a series with
        none left after it ends (cancelled)."""
        with self.store.write("skipping an occurrence") as conn:
            reminder = self._editable(conn, reminder_id)
            if reminder.series is None:
                raise MavendError("that reminder does not repeat; cancel it instead")
            self._advance(conn, reminder)
            return self._get(conn, reminder_id)  # type: ignore[attr-defined]

    def _advance(self, conn: Any, reminder: Reminder) -> None:
        assert reminder.series is not None
        nxt = reminder.series.after(reminder.fire_at)
        if nxt is None:
            conn.execute("UPDATE reminders SET status = 'cancelled' WHERE id = ?", (reminder.id,))
        else:
            self._set_fire_at(conn, reminder.id, nxt)  # type: ignore[attr-defined]

    def skip_on(self, reminder_id: int, occurrences: tuple[datetime, ...]) -> Reminder:
        """A series without `occurrences` (each one of its own, later than now): kept as
        skips, and the next one moved on when it is among them."""
        with self.store.write("skipping occurrences") as conn:
            reminder = self._editable(conn, reminder_id)
            if reminder.series is None:
                raise MavendError("that reminder does not repeat; cancel it instead")
            series = reminder.series.without(occurrences)
            # the ones already past (before its next) are dropped: the list never grows
            kept = tuple(t for t in series.skips if t >= reminder.fire_at)
            conn.execute("UPDATE reminders SET rule_skips = ? WHERE id = ?",
                         (skips_text(kept), reminder_id))
            if reminder.status == "pending" and reminder.fire_at in occurrences:
                nxt = series.after(reminder.fire_at)
                if nxt is None:
                    conn.execute("UPDATE reminders SET status = 'cancelled' WHERE id = ?",
                                 (reminder_id,))
                else:
                    self._set_fire_at(conn, reminder_id, nxt)  # type: ignore[attr-defined]
            return self._get(conn, reminder_id)  # type: ignore[attr-defined]

    def keep_days(self, reminder_id: int, series: Series, *, now: datetime) -> Reminder:
        """A series on other days of the week (`Series.on_days`): its rule replaced, and
        its next occurrence the new rule's first after `now` (the one it had stays when it
        is still on a kept day and comes first)."""
        with self.store.write("changing the days it repeats on") as conn:
            reminder = self._editable(conn, reminder_id)
            if reminder.series is None:
                raise MavendError("that reminder does not repeat")
            conn.execute("UPDATE reminders SET rule = ? WHERE id = ?", (series.rule, reminder_id))
            if reminder.status == "pending":
                kept = series.weekdays() or ()
                day = reminder.fire_at.astimezone(series.start.tzinfo).weekday()
                nxt = series.after(now)
                if WEEKDAY_CODES[day] in kept and (nxt is None or reminder.fire_at <= nxt):
                    nxt = reminder.fire_at
                if nxt is None:
                    raise MavendError("that leaves it no day to go off on before it ends")
                if nxt != reminder.fire_at:
                    nxt = self._free_due(conn, reminder_id, nxt)  # type: ignore[attr-defined]
                    self._set_fire_at(conn, reminder_id, nxt)  # type: ignore[attr-defined]
            return self._get(conn, reminder_id)  # type: ignore[attr-defined]

    def rename(self, reminder_id: int, text: str) -> Reminder:
        text = check_text(text)
        if not text:
            raise MavendError("a reminder needs some words")
        with self.store.write("renaming the reminder") as conn:
            self._editable(conn, reminder_id)
            conn.execute("UPDATE reminders SET text = ? WHERE id = ?", (text, reminder_id))
            return self._get(conn, reminder_id)  # type: ignore[attr-defined]

    def pause(self, reminder_id: int, *, now: datetime) -> Reminder:
        """A paused timer keeps status pending with the seconds it had left, and no job."""
        with self.store.write("pausing the timer") as conn:
            reminder = self._editable(conn, reminder_id)
            if reminder.status != "pending" or reminder.paused:
                return reminder
            left = max(0.0, (reminder.fire_at - now).total_seconds())
            conn.execute(
                "UPDATE reminders SET paused_left = ? WHERE id = ?", (left, reminder_id)
            )
            return self._get(conn, reminder_id)  # type: ignore[attr-defined]

    def resume(self, reminder_id: int, *, now: datetime) -> Reminder:
        with self.store.write("resuming the timer") as conn:
            reminder = self._editable(conn, reminder_id)
            if reminder.paused_left is None:
                return reminder
            when = now + timedelta(seconds=max(1.0, reminder.paused_left))
            when = self._free_due(  # type: ignore[attr-defined]
                conn, reminder_id, when.astimezone(self.tz).replace(microsecond=0)
            )
            self._set_fire_at(conn, reminder_id, when)  # type: ignore[attr-defined]
            conn.execute("UPDATE reminders SET paused_left = NULL WHERE id = ?", (reminder_id,))
            return self._get(conn, reminder_id)  # type: ignore[attr-defined]

    def shift(self, reminder_id: int, seconds: float, *, now: datetime) -> Reminder:
        """Add (or, negative, take off) time: a running one fires that much later, a
        paused one keeps that much more left. Never into the past."""
        with self.store.write("changing the time left") as conn:
            reminder = self._editable(conn, reminder_id)
            if reminder.paused_left is not None:
                left = reminder.paused_left + seconds
                if left <= 0:
                    raise MavendError("that would leave no time at all")
                conn.execute(
                    "UPDATE reminders SET paused_left = ? WHERE id = ?", (left, reminder_id)
                )
                return self._get(conn, reminder_id)  # type: ignore[attr-defined]
        return self.move(reminder_id, reminder.fire_at + timedelta(seconds=seconds), now=now)

    def cancel_many(self, reminder_ids: list[int]) -> list[int]:
        """Cancel exactly these (those still pending or fired); the ids cancelled."""
        done: list[int] = []
        with self.store.write("cancelling reminders") as conn:
            for reminder_id in reminder_ids:
                cursor = conn.execute(
                    "UPDATE reminders SET status = 'cancelled'"
                    " WHERE id = ? AND status IN ('pending', 'fired')",
                    (reminder_id,),
                )
                if cursor.rowcount == 1:
                    done.append(reminder_id)
        return done
