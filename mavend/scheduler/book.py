"""The reminders table: what is due, what fired, what was delivered (`ReminderBook`).

Safe from any process or thread: every call is its own transaction on the SQLite file.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from datetime import datetime, timedelta, tzinfo
from typing import Any

from mavend.errors import MavendError, NotFoundError
from mavend.recurrence import Series
from mavend.scheduler.edits import ReminderEdits, skips_text
from mavend.scheduler.reminder import ACT_KIND, Firing, Reminder, ScheduledAct, Status
from mavend.state.store import Store, iso, parse_iso

log = logging.getLogger(__name__)

MAX_SNOOZE_MINUTES = 7 * 24 * 60

Clock = Callable[[], datetime]


# A firing still to show or act on: a one-off's latest (neither snoozed nor cancelled
# since), or any occurrence of a series that goes on (or ended on that occurrence).
_SHOWABLE = (
    "((r.status = 'fired' AND r.fire_at = f.due)"
    " OR (r.rule IS NOT NULL AND r.status IN ('pending', 'fired')))"
)


def _tz_name(tz: tzinfo) -> str:
    return getattr(tz, "key", None) or str(tz)


class ReminderBook(ReminderEdits):
    """Reads and writes reminders; safe to use from any process or thread."""

    _COLUMNS = (
        "r.id, r.text, r.kind, r.fire_at, r.status, r.snoozes, r.created_at, r.origin,"
        " r.rule, r.rule_start, r.rule_skips, r.name, r.paused_left, r.act"
    )

    def __init__(self, store: Store, tz: tzinfo):
        self.store, self.tz = store, tz

    # writing -------------------------------------------------------------
    def add(
        self,
        text: str,
        fire_at: datetime,
        *,
        now: datetime,
        kind: str = "reminder",
        origin: str | None = None,
        series: Series | None = None,
        name: str | None = None,
        act: ScheduledAct | None = None,
    ) -> Reminder:
        """A new pending reminder; a `series` fires first at its start (`fire_at` is
        ignored then: a series' fire time is always its next occurrence). With `act`,
        a row of kind "act" that runs it when it fires."""
        if fire_at.tzinfo is None:
            raise ValueError("a reminder's fire time must be timezone-aware")
        if series is not None:
            fire_at = series.start
        fire_at = fire_at.astimezone(self.tz).replace(microsecond=0)
        with self.store.write("saving the reminder") as conn:
            return self._insert(conn, text, fire_at, now=now, kind=ACT_KIND if act else kind,
                                origin=origin, series=series, name=name, act=act)

    def _insert(
        self,
        conn: sqlite3.Connection,
        text: str,
        fire_at: datetime,
        *,
        now: datetime,
        kind: str,
        origin: str | None,
        series: Series | None = None,
        name: str | None = None,
        snoozes: int = 0,
        act: ScheduledAct | None = None,
    ) -> Reminder:
        cursor = conn.execute(
            "INSERT INTO reminders (text, kind, fire_at, fire_ts, tz, created_at, origin,"
            " rule, rule_start, rule_skips, name, snoozes, act)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                text, kind, iso(fire_at), fire_at.timestamp(), _tz_name(self.tz), iso(now),
                origin, series.rule if series else None,
                iso(series.start) if series else None,
                skips_text(series.skips) if series else None, name, snoozes,
                act.dumps() if act else None,
            ),
        )
        return self._get(conn, int(cursor.lastrowid or 0))

    def cancel(self, reminder_id: int) -> Reminder:
        with self.store.write("cancelling the reminder") as conn:
            reminder = self._get(conn, reminder_id)
            if reminder.status != Status.CANCELLED:
                conn.execute(
                    "UPDATE reminders SET status = 'cancelled' WHERE id = ?", (reminder_id,)
                )
            return self._get(conn, reminder_id)

    def restore(self, reminder_id: int, *, now: datetime) -> Reminder | None:
        """A cancelled reminder pending again ("undo that" after a cancel), when its next
        time is still ahead; None when it is not cancelled or its time has passed."""
        with self.store.write("restoring the reminder") as conn:
            cursor = conn.execute(
                "UPDATE reminders SET status = 'pending'"
                " WHERE id = ? AND status = 'cancelled' AND fire_ts > ?",
                (reminder_id, now.timestamp()),
            )
            return self._get(conn, reminder_id) if cursor.rowcount else None

    # What an edit changes ("move it to 6", "pause the pasta timer", "snooze that"): the
    # columns an undo puts back as they were.
    EDITED = ("text", "fire_at", "fire_ts", "status", "snoozes", "name", "paused_left",
              "rule", "rule_start", "rule_skips")  # fmt: skip

    def snapshots(self) -> dict[int, dict[str, Any]]:
        """Every pending reminder's edited columns, by id (before and after a command)."""
        with self.store.read() as conn:
            rows = conn.execute(
                f"SELECT id, {', '.join(self.EDITED)} FROM reminders WHERE status = 'pending'"
            ).fetchall()
        return {int(r["id"]): {c: r[c] for c in self.EDITED} for r in rows}

    def put_back(self, reminder_id: int, snapshot: dict[str, Any], *, now: datetime) -> bool:
        """The columns as they were before an edit ("undo that"), while the reminder is
        still pending and the time it goes back to is still ahead (or it was paused)."""
        if snapshot.get("paused_left") is None and float(snapshot["fire_ts"]) <= now.timestamp():
            return False
        columns = [c for c in self.EDITED if c in snapshot]
        with self.store.write("putting the reminder back") as conn:
            cursor = conn.execute(
                f"UPDATE reminders SET {', '.join(f'{c} = ?' for c in columns)}"
                " WHERE id = ? AND status = 'pending'",
                (*(snapshot[c] for c in columns), reminder_id),
            )
            return cursor.rowcount > 0

    def snooze(self, reminder_id: int, minutes: float, *, now: datetime) -> Reminder:
        """Fire again `minutes` from now (pending, fired, done or missed alike)."""
        if not 0 < minutes <= MAX_SNOOZE_MINUTES:
            raise MavendError(
                f"snooze takes 1 to {MAX_SNOOZE_MINUTES} minutes (a week); "
                "for later than that, set a new reminder"
            )
        with self.store.write("snoozing the reminder") as conn:
            reminder = self._get(conn, reminder_id)
            if reminder.status == Status.CANCELLED:
                raise MavendError(f"reminder {reminder_id} was cancelled; set a new one instead")
            when = (now + timedelta(minutes=minutes)).astimezone(self.tz).replace(microsecond=0)
            if reminder.series is not None:
                # An occurrence of a series: its snooze is a one-off copy, the series goes
                # on; the occurrence counts as seen (it is not shown again).
                conn.execute(
                    "UPDATE firings SET delivered_at = COALESCE(delivered_at, ?)"
                    " WHERE reminder_id = ?",
                    (iso(now.astimezone(self.tz)), reminder_id),
                )
                return self._insert(
                    conn, reminder.text, when, now=now, kind=reminder.kind,
                    origin=reminder.origin, name=reminder.name, snoozes=1,
                )
            when = self._free_due(conn, reminder_id, when)
            conn.execute(
                "UPDATE reminders SET fire_at = ?, fire_ts = ?, status = 'pending',"
                " snoozes = snoozes + 1, paused_left = NULL WHERE id = ?",
                (iso(when), when.timestamp(), reminder_id),
            )
            return self._get(conn, reminder_id)

    @staticmethod
    def _free_due(conn: sqlite3.Connection, reminder_id: int, when: datetime) -> datetime:
        """`when`, or the first second after it that this reminder has not fired at."""
        used = {
            r[0] for r in conn.execute("SELECT due FROM firings WHERE reminder_id = ?",
                                       (reminder_id,))
        }
        while iso(when) in used:  # a due time fires once: never reuse one
            when += timedelta(seconds=1)
        return when

    def mark_done(self, reminder_id: int) -> Reminder:
        with self.store.write("acknowledging the reminder") as conn:
            conn.execute(
                "UPDATE reminders SET status = 'done' WHERE id = ? AND status = 'fired'",
                (reminder_id,),
            )
            return self._get(conn, reminder_id)

    def mark_missed(self, reminder_id: int, due: str) -> bool:
        with self.store.write("marking a reminder missed") as conn:
            cursor = conn.execute(
                "UPDATE reminders SET status = 'missed'"
                " WHERE id = ? AND status = 'pending' AND fire_at = ?",
                (reminder_id, due),
            )
            return cursor.rowcount == 1

    def catch_up(
        self, reminder_id: int, due: str, *, now: datetime, grace_s: float
    ) -> Reminder | None:
        """A series whose occurrence `due` is older than the grace: its occurrences older
        than the grace are skipped; it moves to the first one within the grace (which
        then fires once, late) or else to the next future one. None when it changed
        since (or is no series); a series with no occurrence left is marked missed."""
        with self.store.write("moving a series past missed occurrences") as conn:
            reminder = self._get(conn, reminder_id)
            if reminder.series is None or reminder.status != Status.PENDING or reminder.due != due:
                return None
            nxt = reminder.series.after(now - timedelta(seconds=grace_s))
            if nxt is None:
                conn.execute("UPDATE reminders SET status = 'missed' WHERE id = ?", (reminder_id,))
            else:
                self._set_fire_at(conn, reminder_id, nxt)
            return self._get(conn, reminder_id)

    def _set_fire_at(self, conn: sqlite3.Connection, reminder_id: int, when: datetime) -> None:
        when = when.astimezone(self.tz).replace(microsecond=0)
        conn.execute(
            "UPDATE reminders SET fire_at = ?, fire_ts = ? WHERE id = ?",
            (iso(when), when.timestamp(), reminder_id),
        )

    def fire(self, reminder_id: int, due: str, *, now: datetime, late: bool) -> Firing | None:
        """Record that the reminder fired at `due`: once, or None if it already did.

        None also when it was cancelled or snoozed since the job was made: a
        stale job is a no-op.
        """
        with self.store.write("recording a fired reminder") as conn:
            row = conn.execute(
                "SELECT status, fire_at, paused_left FROM reminders WHERE id = ?", (reminder_id,)
            ).fetchone()
            if (
                row is None
                or row["status"] != Status.PENDING
                or row["fire_at"] != due
                or row["paused_left"] is not None
            ):
                return None
            try:
                conn.execute(
                    "INSERT INTO firings (reminder_id, due, fired_at, late) VALUES (?, ?, ?, ?)",
                    (reminder_id, due, iso(now.astimezone(self.tz)), int(late)),
                )
            except sqlite3.IntegrityError:  # this due time already fired
                return None
            series = self._get(conn, reminder_id).series
            # A series moves on in the same transaction: to its first occurrence after
            # now (any between `due` and now are past: skipped, never a burst), or ends.
            nxt = series.after(max(parse_iso(due), now)) if series is not None else None
            if series is not None and (passed := series.after(parse_iso(due))) and passed <= now:
                log.warning(
                    "reminder %d (repeating) fired late for %s; its occurrences up to %s"
                    " are past and skipped", reminder_id, due, iso(now),
                )
            if nxt is not None:
                self._set_fire_at(conn, reminder_id, nxt)
            else:
                conn.execute("UPDATE reminders SET status = 'fired' WHERE id = ?", (reminder_id,))
            return self._firing(conn, reminder_id, due)

    def mark_delivered(self, firing: Firing, notification_id: int | None, *, now: datetime) -> None:
        with self.store.write("recording a delivered reminder") as conn:
            conn.execute(
                "UPDATE firings SET delivered_at = ?, notification_id = ?, attempts = attempts + 1"
                " WHERE reminder_id = ? AND due = ?",
                (iso(now.astimezone(self.tz)), notification_id, firing.reminder.id, firing.due),
            )
            # A scheduled act needs no "Done" from anyone: it is done once it is shown.
            conn.execute(
                "UPDATE reminders SET status = 'done'"
                " WHERE id = ? AND kind = ? AND status = 'fired'",
                (firing.reminder.id, ACT_KIND),
            )

    def act_started(self, firing: Firing) -> None:
        """Committed before a scheduled act runs: a crash while it runs never runs it twice."""
        self._set_act_result(firing, "", "recording a scheduled act's start")

    def act_finished(self, firing: Firing, result: str) -> None:
        self._set_act_result(firing, result or "done", "recording a scheduled act's result")

    def _set_act_result(self, firing: Firing, result: str, doing: str) -> None:
        with self.store.write(doing) as conn:
            conn.execute(
                "UPDATE firings SET act_result = ? WHERE reminder_id = ? AND due = ?",
                (result[:500], firing.reminder.id, firing.due),
            )

    def delivery_failed(self, firing: Firing, error: str) -> None:
        with self.store.write("recording a failed delivery") as conn:
            conn.execute(
                "UPDATE firings SET attempts = attempts + 1, last_error = ?"
                " WHERE reminder_id = ? AND due = ?",
                (error[:500], firing.reminder.id, firing.due),
            )

    # reading -------------------------------------------------------------
    def get(self, reminder_id: int) -> Reminder:
        with self.store.read() as conn:
            return self._get(conn, reminder_id)

    def list(self, *, statuses: tuple[Status, ...] | None = (Status.PENDING,)) -> list[Reminder]:
        """Reminders in fire-time order; `statuses=None` for all of them."""
        where, params = "", ()
        if statuses is not None:
            where = f" WHERE r.status IN ({','.join('?' for _ in statuses)})"
            params = tuple(str(s) for s in statuses)
        with self.store.read() as conn:
            rows = conn.execute(
                f"SELECT {self._COLUMNS} FROM reminders r{where} ORDER BY r.fire_ts, r.id", params
            ).fetchall()
        return [self._reminder(r) for r in rows]

    def pending(self) -> list[Reminder]:
        """What the scheduler must fire: pending and not paused."""
        return [r for r in self.active() if not r.paused]

    def active(self) -> list[Reminder]:
        """Pending ones, paused timers included (what a listing shows)."""
        return self.list(statuses=(Status.PENDING,))

    def last_fired(self) -> Firing | None:
        """The most recent firing whose reminder is still unacknowledged."""
        with self.store.read() as conn:
            row = conn.execute(
                "SELECT f.reminder_id, f.due FROM firings f JOIN reminders r"
                f" ON r.id = f.reminder_id WHERE {_SHOWABLE} AND r.kind != '{ACT_KIND}'"
                " ORDER BY f.fired_at DESC LIMIT 1"
            ).fetchone()
            return None if row is None else self._firing(conn, row[0], row[1])

    def firings(self, reminder_id: int) -> list[Firing]:
        with self.store.read() as conn:
            dues = [
                r[0]
                for r in conn.execute(
                    "SELECT due FROM firings WHERE reminder_id = ? ORDER BY fired_at",
                    (reminder_id,),
                )
            ]
            return [self._firing(conn, reminder_id, due) for due in dues]

    def undelivered(self) -> list[Firing]:
        """Fired, not yet shown, and neither cancelled nor snoozed since."""
        with self.store.read() as conn:
            keys = conn.execute(
                "SELECT f.reminder_id, f.due FROM firings f JOIN reminders r"
                f" ON r.id = f.reminder_id WHERE f.delivered_at IS NULL AND {_SHOWABLE}"
                " ORDER BY f.due"
            ).fetchall()
            return [self._firing(conn, rid, due) for rid, due in keys]

    def firing_for_notification(self, notification_id: int) -> Firing | None:
        with self.store.read() as conn:
            row = conn.execute(
                "SELECT reminder_id, due FROM firings WHERE notification_id = ?"
                " ORDER BY delivered_at DESC LIMIT 1",
                (notification_id,),
            ).fetchone()
            return None if row is None else self._firing(conn, row[0], row[1])

    def _get(self, conn: sqlite3.Connection, reminder_id: int) -> Reminder:
        row = conn.execute(
            f"SELECT {self._COLUMNS} FROM reminders r WHERE r.id = ?", (reminder_id,)
        ).fetchone()
        if row is None:
            raise NotFoundError(
                f"no reminder with id {reminder_id}; `mavend reminders list` shows them"
            )
        return self._reminder(row)

    def _firing(self, conn: sqlite3.Connection, reminder_id: int, due: str) -> Firing:
        row = conn.execute(
            "SELECT * FROM firings WHERE reminder_id = ? AND due = ?", (reminder_id, due)
        ).fetchone()
        delivered = row["delivered_at"]
        return Firing(
            reminder=self._get(conn, reminder_id),
            due=due,
            fired_at=parse_iso(row["fired_at"]),
            late=bool(row["late"]),
            delivered_at=parse_iso(delivered) if delivered else None,
            notification_id=row["notification_id"],
            attempts=row["attempts"],
            act_result=row["act_result"],
        )

    def _reminder(self, row: sqlite3.Row) -> Reminder:
        series = None
        if row["rule"] and row["rule_start"]:
            skips = tuple(parse_iso(t) for t in (row["rule_skips"] or "").split())
            series = Series.of(row["rule"], parse_iso(row["rule_start"]), self.tz, skips)
        return Reminder(
            id=row["id"],
            text=row["text"],
            kind=row["kind"],
            fire_at=parse_iso(row["fire_at"]),
            due=row["fire_at"],
            status=Status(row["status"]),
            snoozes=row["snoozes"],
            created_at=parse_iso(row["created_at"]),
            origin=row["origin"],
            series=series,
            name=row["name"],
            paused_left=row["paused_left"],
            act=ScheduledAct.loads(row["act"]),
        )
