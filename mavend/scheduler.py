"""Reminders: the table, the APScheduler jobs that fire them, and their delivery.

The `reminders` table is the source of truth. A reminder stores its absolute
fire time in the user's time zone (never the phrase that produced it). Anyone
may write it (`mavend say`, `mavend reminders`, the daemon's handlers); only
the daemon's `ReminderScheduler` turns pending rows into APScheduler 3 date
jobs, held in memory: the table is rebuilt into jobs at every start, so a second,
persistent job store would only duplicate it (and could disagree with it). It
re-reads the table whenever another connection commits (PRAGMA data_version), so
a reminder set by `mavend say` while the daemon runs is scheduled within a
second, and one set while it was down is scheduled at start-up.

Exactly once. A job is `reminder-<id>` with the due time as an argument. Firing
is one transaction: the reminder must still be pending *at that due time*, and
a row keyed by (reminder id, due time) is inserted into `firings`; a second
attempt to fire the same due time finds the reminder no longer pending (or hits
the key) and does nothing. Delivery comes after the commit and is recorded on
the firing row, so a crash between fire and delivery re-delivers at the next
start but never re-fires. A snooze sets a new due time, hence a new firing.

Misfires (see PLATFORM.md): jobs due while the daemon was down run at start-up
when they are at most `misfire_grace_s` old, and are marked late; older ones
are marked missed, logged, and listed by `mavend reminders list --all`.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

from mavend.config import Settings
from mavend.errors import MavendError, NotFoundError, StorageError
from mavend.store import Store, iso, parse_iso

if TYPE_CHECKING:
    from mavend.notify import Notification, Notifier, Shown

log = logging.getLogger(__name__)

JOB_PREFIX = "reminder-"
# Fired this long after its time (a suspended laptop, a stuck machine), a
# reminder is marked late even though the daemon was running.
LATE_AFTER_S = 60.0
# Due this long before the scheduler started: missed while the daemon was down.
# (A second or two is start-up noise, and fire times are stored to the second.)
DOWN_SLACK_S = 2.0
MAX_SNOOZE_MINUTES = 7 * 24 * 60
CLOSED_BY_USER = 2  # NotificationClosed reason codes, from the notification spec
# The watcher re-reads everything this often, even when nothing changed, so a
# job lost to an error (a locked database at fire time) is re-added.
FULL_SYNC_S = 30.0

Clock = Callable[[], datetime]


class Status(enum.StrEnum):
    PENDING = "pending"
    FIRED = "fired"  # fired; delivery is tracked on its firing row
    DONE = "done"  # acknowledged ("Done" on the notification)
    CANCELLED = "cancelled"
    MISSED = "missed"  # older than the misfire grace when the daemon came back


@dataclass(frozen=True)
class Reminder:
    id: int
    text: str
    kind: str  # reminder | timer
    fire_at: datetime
    due: str  # fire_at exactly as stored: the job argument and the firing key
    status: Status
    snoozes: int
    created_at: datetime
    origin: str | None = None  # the satellite it was set from; None: this box

    @property
    def job_id(self) -> str:
        return f"{JOB_PREFIX}{self.id}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "kind": self.kind,
            "fire_at": self.due,
            "status": str(self.status),
            "snoozes": self.snoozes,
            "created_at": iso(self.created_at),
            "origin": self.origin,
        }


@dataclass(frozen=True)
class Firing:
    reminder: Reminder
    due: str
    fired_at: datetime
    late: bool
    delivered_at: datetime | None
    notification_id: int | None
    attempts: int


def _tz_name(tz: tzinfo) -> str:
    return getattr(tz, "key", None) or str(tz)


class ReminderBook:
    """Reads and writes reminders; safe to use from any process or thread."""

    _COLUMNS = "r.id, r.text, r.kind, r.fire_at, r.status, r.snoozes, r.created_at, r.origin"

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
    ) -> Reminder:
        if fire_at.tzinfo is None:
            raise ValueError("a reminder's fire time must be timezone-aware")
        fire_at = fire_at.astimezone(self.tz).replace(microsecond=0)
        with self.store.write("saving the reminder") as conn:
            cursor = conn.execute(
                "INSERT INTO reminders (text, kind, fire_at, fire_ts, tz, created_at, origin)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    text, kind, iso(fire_at), fire_at.timestamp(), _tz_name(self.tz), iso(now),
                    origin,
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
            used = {
                r[0]
                for r in conn.execute(
                    "SELECT due FROM firings WHERE reminder_id = ?", (reminder_id,)
                )
            }
            while iso(when) in used:  # a due time fires once: never reuse one
                when += timedelta(seconds=1)
            conn.execute(
                "UPDATE reminders SET fire_at = ?, fire_ts = ?, status = 'pending',"
                " snoozes = snoozes + 1 WHERE id = ?",
                (iso(when), when.timestamp(), reminder_id),
            )
            return self._get(conn, reminder_id)

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

    def fire(self, reminder_id: int, due: str, *, now: datetime, late: bool) -> Firing | None:
        """Record that the reminder fired at `due`: once, or None if it already did.

        None also when it was cancelled or snoozed since the job was made: a
        stale job is a no-op.
        """
        with self.store.write("recording a fired reminder") as conn:
            row = conn.execute(
                "SELECT status, fire_at FROM reminders WHERE id = ?", (reminder_id,)
            ).fetchone()
            if row is None or row["status"] != Status.PENDING or row["fire_at"] != due:
                return None
            try:
                conn.execute(
                    "INSERT INTO firings (reminder_id, due, fired_at, late) VALUES (?, ?, ?, ?)",
                    (reminder_id, due, iso(now.astimezone(self.tz)), int(late)),
                )
            except sqlite3.IntegrityError:  # this due time already fired
                return None
            conn.execute("UPDATE reminders SET status = 'fired' WHERE id = ?", (reminder_id,))
            return self._firing(conn, reminder_id, due)

    def mark_delivered(self, firing: Firing, notification_id: int | None, *, now: datetime) -> None:
        with self.store.write("recording a delivered reminder") as conn:
            conn.execute(
                "UPDATE firings SET delivered_at = ?, notification_id = ?, attempts = attempts + 1"
                " WHERE reminder_id = ? AND due = ?",
                (iso(now.astimezone(self.tz)), notification_id, firing.reminder.id, firing.due),
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
        return self.list(statuses=(Status.PENDING,))

    def last_fired(self) -> Firing | None:
        """The most recent firing whose reminder is still unacknowledged."""
        with self.store.read() as conn:
            row = conn.execute(
                "SELECT f.reminder_id, f.due FROM firings f JOIN reminders r"
                " ON r.id = f.reminder_id WHERE r.status = 'fired' AND r.fire_at = f.due"
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
                " ON r.id = f.reminder_id WHERE f.delivered_at IS NULL"
                " AND r.status = 'fired' AND r.fire_at = f.due ORDER BY f.due"
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
        )

    @staticmethod
    def _reminder(row: sqlite3.Row) -> Reminder:
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
        )


# the scheduler ------------------------------------------------------------
_ACTIVE: ReminderScheduler | None = None


def fire_job(reminder_id: int, due: str) -> None:
    """The job function APScheduler stores (by reference) and calls."""
    if _ACTIVE is None:  # only if a job outlived its scheduler's stop()
        raise RuntimeError("no reminder scheduler is running in this process")
    _ACTIVE.fire(reminder_id, due)


class ReminderScheduler:
    """APScheduler 3 (background threads) over the reminders table. One per process."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        tz: tzinfo,
        *,
        on_fired: Callable[[Firing], None] = lambda firing: None,
        clock: Clock | None = None,
        poll_s: float = 1.0,
    ):
        self.store = store
        self.book = ReminderBook(store, tz)
        self.tz = tz
        self.grace_s = settings.reminders.misfire_grace_s
        self.on_fired = on_fired
        self.clock = clock or (lambda: datetime.now(tz))
        self.poll_s = poll_s
        self.started_at: datetime | None = None
        self._scheduler: Any = None
        self._sync_lock = threading.Lock()
        self._stop = threading.Event()
        self._dirty = threading.Event()
        self._watcher: threading.Thread | None = None

    def start(self) -> None:
        from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MISSED
        from apscheduler.executors.pool import ThreadPoolExecutor
        from apscheduler.jobstores.memory import MemoryJobStore
        from apscheduler.schedulers.background import BackgroundScheduler

        global _ACTIVE
        if _ACTIVE is not None:
            raise RuntimeError("a reminder scheduler is already running in this process")
        self._scheduler = BackgroundScheduler(
            jobstores={"default": MemoryJobStore()},
            executors={"default": ThreadPoolExecutor(2)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": self.grace_s},
            timezone=self.tz,
        )
        self._scheduler.add_listener(self._on_event, EVENT_JOB_MISSED | EVENT_JOB_ERROR)
        _ACTIVE = self
        self.started_at = self.clock()
        try:
            # Paused first: get_jobs() shows nothing on a scheduler not yet
            # started, and nothing should fire before the table is synced.
            self._scheduler.start(paused=True)
            self.sync()
        except Exception:
            self.stop()
            raise
        self._scheduler.resume()
        self._stop.clear()
        self._watcher = threading.Thread(target=self._watch, name="reminder-watch", daemon=True)
        self._watcher.start()

    def stop(self) -> None:
        global _ACTIVE
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=10)
            self._watcher = None
        if self._scheduler is not None and self._scheduler.running:
            self._scheduler.shutdown(wait=True)  # a firing in progress completes
        if _ACTIVE is self:
            _ACTIVE = None

    def request_sync(self) -> None:
        """Re-read the table at the next tick (after this process changed it)."""
        self._dirty.set()

    def jobs(self) -> dict[str, datetime | None]:
        return {job.id: job.next_run_time for job in self._scheduler.get_jobs()}

    def sync(self) -> None:
        """Make the job store match the table: one job per pending reminder."""
        from apscheduler.jobstores.base import JobLookupError
        from apscheduler.triggers.date import DateTrigger

        with self._sync_lock:
            now = self.clock()
            jobs = {job.id: job for job in self._scheduler.get_jobs()}
            wanted: set[str] = set()
            for reminder in self.book.pending():
                if (now - reminder.fire_at).total_seconds() > self.grace_s:
                    if self.book.mark_missed(reminder.id, reminder.due):
                        log.warning(
                            "reminder %d (%s) was due %s, longer ago than the misfire grace;"
                            " marked missed",
                            reminder.id,
                            reminder.text,
                            reminder.due,
                        )
                    continue
                wanted.add(reminder.job_id)
                args = (reminder.id, reminder.due)
                job = jobs.get(reminder.job_id)
                if job is not None and tuple(job.args) == args:
                    continue
                self._scheduler.add_job(
                    fire_job,
                    trigger=DateTrigger(run_date=reminder.fire_at),
                    args=args,
                    id=reminder.job_id,
                    name=f"reminder {reminder.id}",
                    replace_existing=True,
                )
                log.info("scheduled reminder %d for %s", reminder.id, reminder.due)
            for job_id in set(jobs) - wanted:
                if job_id.startswith(JOB_PREFIX):
                    with contextlib.suppress(JobLookupError):  # it may just have run
                        self._scheduler.remove_job(job_id)

    def fire(self, reminder_id: int, due: str) -> Firing | None:
        now = self.clock()
        due_at = parse_iso(due)
        started = self.started_at or now
        # Late: due before this daemon started (it was down), or long overdue.
        missed_while_down = (started - due_at).total_seconds() > DOWN_SLACK_S
        late = missed_while_down or (now - due_at).total_seconds() > LATE_AFTER_S
        try:
            firing = self.book.fire(reminder_id, due, now=now, late=late)
        except StorageError:
            # Still pending in the table: the next sync re-adds the job.
            log.exception("reminder %d could not be recorded as fired; will retry", reminder_id)
            self._dirty.set()
            raise
        if firing is None:
            log.info("reminder %d at %s: already fired, snoozed or cancelled", reminder_id, due)
            return None
        log.info(
            "reminder %d fired%s: %s", reminder_id, " (late)" if late else "", firing.reminder.text
        )
        try:
            self.on_fired(firing)
        except Exception:  # delivery is retried from the table; never lose the firing
            log.exception("the fired-reminder callback failed")
        return firing

    def _on_event(self, event: Any) -> None:
        from apscheduler.events import EVENT_JOB_MISSED

        if not event.job_id.startswith(JOB_PREFIX):
            return
        if event.code == EVENT_JOB_MISSED:
            reminder_id = int(event.job_id.removeprefix(JOB_PREFIX))
            try:
                reminder = self.book.get(reminder_id)
                if abs(reminder.fire_at.timestamp() - event.scheduled_run_time.timestamp()) < 1:
                    self.book.mark_missed(reminder_id, reminder.due)
                log.warning("reminder %d missed its time %s", reminder_id, reminder.due)
            except MavendError:
                log.exception("marking reminder %d missed failed", reminder_id)
        else:
            log.error("reminder job %s failed: %s", event.job_id, event.exception)

    def _watch(self) -> None:
        # Its own connection: PRAGMA data_version only moves for commits made
        # by *other* connections, and this one never writes.
        conn: sqlite3.Connection | None = None
        last_version: int | None = None
        last_full = time.monotonic()
        failing = False
        while not self._stop.wait(self.poll_s):
            try:
                if conn is None:
                    conn = sqlite3.connect(self.store.path, timeout=self.store.timeout_s)
                version = int(conn.execute("PRAGMA data_version").fetchone()[0])
                full = time.monotonic() - last_full > FULL_SYNC_S
                if version != last_version or self._dirty.is_set() or full:
                    self._dirty.clear()
                    self.sync()
                    last_version, last_full = version, time.monotonic()
                if failing:
                    log.info("the reminder table is readable again")
                failing = False
            except Exception as exc:  # a locked or broken database: keep trying
                self._dirty.set()
                if not failing:
                    log.error(
                        "syncing reminders failed (retrying every %g s): %s", self.poll_s, exc
                    )
                failing = True
        if conn is not None:
            conn.close()


# delivery -----------------------------------------------------------------
def spoken_time(moment: datetime, now: datetime) -> str:
    """'17:00 today', '09:00 tomorrow', '17:00 on Friday', '17:00 on 3 April'."""
    moment = moment.astimezone(now.tzinfo)
    days = (moment.date() - now.date()).days
    clock = f"{moment:%H:%M}"
    if days == 0:
        return f"{clock} today"
    if days == 1:
        return f"{clock} tomorrow"
    if days == -1:
        return f"{clock} yesterday"
    if 1 < days < 7:
        return f"{clock} on {moment:%A}"
    year = f" {moment.year}" if moment.year != now.year else ""
    return f"{clock} on {moment.day} {moment:%B}{year}"


def firing_tag(firing: Firing) -> str:
    """One firing's notification tag: the same for every attempt to show it."""
    return f"mavend-reminder-{firing.reminder.id}-{firing.due}"


# The notification spec's categories (device, email, im, network, presence,
# transfer, call) have none for a reminder or an alarm; the spec asks for
# "x-vendor.class" then.
REMINDER_CATEGORY = "x-mavend.reminder"
# The sound naming spec's alarm: "the alarm clock has elapsed" (timers and reminders alike).
REMINDER_SOUND = "alarm-clock-elapsed"


def _firing_key(firing: Firing) -> tuple[int, str]:
    return firing.reminder.id, firing.due


class ReminderDelivery:
    """Shows fired reminders; retries while the bus or the server is missing.

    Runs on the daemon's event loop. What to deliver comes from the table
    (fired, not yet delivered), so nothing is lost to a crash or an outage.

    At least once: `delivered_at` is committed after the server's reply, so a
    crash between the two shows the reminder again at the next start (seen by
    tests/test_crash.py: 2 repeats in one run of 100 kills, none in two others).
    The notification server gives no way to ask what it already shows, so the
    window cannot be closed from this side; each firing's notification carries
    a stack tag (`firing_tag`), and a server that honours it (dunst) replaces
    the first instead of showing a second. The spec's own `replaces_id` cannot
    help there: the id comes in that very reply, and a crash before the commit
    loses it with the record. It is used when the id is known: a show whose
    record failed (a locked database) is shown again at the next round in place
    of the first, on any server, as long as that server has not restarted.
    """

    def __init__(
        self,
        book: ReminderBook,
        notifier: Notifier,
        settings: Settings,
        *,
        on_change: Callable[[], None] = lambda: None,
        clock: Clock,
    ):
        self.book = book
        self.notifier = notifier
        self.settings = settings
        self.on_change = on_change
        self.clock = clock
        self.wake = asyncio.Event()
        self._outage = False
        # Shown, but the record of it failed: the next round shows it in place of this.
        self._unrecorded: dict[tuple[int, str], Shown] = {}
        self._tasks: set[asyncio.Task] = set()
        notifier.on_action = self.on_action
        notifier.on_closed = self.on_closed

    async def run(self) -> None:
        while True:
            self.wake.clear()
            try:
                delivered_all = await self.deliver_pending()
            except Exception:  # a bug here must not end delivery for good
                log.exception("delivering reminders failed")
                delivered_all = False
            # Failing: retry every retry_s. Otherwise sleep until a firing
            # wakes us (and look again now and then, as a safety net).
            timeout = self.settings.notifications.retry_s if not delivered_all else 60.0
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), timeout)

    async def deliver_pending(self) -> bool:
        """Deliver every undelivered firing; False when one could not be delivered."""
        from mavend.notify import NotifyUnavailable

        try:
            firings = await asyncio.to_thread(self.book.undelivered)
        except StorageError as exc:
            log.error("cannot read fired reminders: %s", exc)
            return False
        undelivered = {_firing_key(f) for f in firings}  # the rest were cancelled or snoozed
        self._unrecorded = {k: v for k, v in self._unrecorded.items() if k in undelivered}
        for firing in firings:
            try:
                shown = await self._show(firing)
            except NotifyUnavailable as exc:
                if not self._outage:
                    log.warning(
                        "reminder %d fired but cannot be shown (%s); retrying every %g s",
                        firing.reminder.id,
                        exc,
                        self.settings.notifications.retry_s,
                    )
                self._outage = True
                await self._record(self.book.delivery_failed, firing, str(exc))
                return False
            if self._outage:
                log.info("notifications work again; delivering held reminders")
            self._outage = False
            recorded = await self._record(
                lambda f, n: self.book.mark_delivered(f, n, now=self.clock()),
                firing,
                None if shown is None else shown.id,
            )
            if recorded:
                self._unrecorded.pop(_firing_key(firing), None)
            elif shown is not None:
                self._unrecorded[_firing_key(firing)] = shown
        return True

    async def _show(self, firing: Firing) -> Shown | None:
        if not self.settings.notifications.enabled:
            log.info("reminder (notifications off): %s", firing.reminder.text)
            return None
        return await self.notifier.show(
            self.notification_for(firing), replacing=self._unrecorded.get(_firing_key(firing))
        )

    def notification_for(self, firing: Firing) -> Notification:
        from mavend.notify import Notification

        reminder = firing.reminder
        minutes = self.settings.reminders.snooze_minutes
        summary = "Timer" if reminder.kind == "timer" else "Reminder"
        body = reminder.text or "(no text)"
        if reminder.kind == "timer":
            body = f"Time's up: {reminder.text}" if reminder.text else "Time's up."
        if firing.late:
            summary += " (late)"
            due = spoken_time(parse_iso(firing.due), self.clock())
            body += f"\nIt was due at {due}."
        return Notification(
            summary=summary,
            body=body,
            actions=(("done", "Done"), ("snooze", f"Snooze {minutes} min")),
            tag=firing_tag(firing),
            category=REMINDER_CATEGORY,
            sound=REMINDER_SOUND,
        )

    async def _record(self, write: Callable[..., None], *args: Any) -> bool:
        try:
            await asyncio.to_thread(write, *args)
        except StorageError as exc:
            # Worst case the reminder is shown again later: never lost.
            log.error("recording a delivery failed: %s", exc)
            return False
        return True

    # notification actions ------------------------------------------------
    def on_action(self, notification_id: int, action: str) -> None:
        task = asyncio.get_running_loop().create_task(self.handle_action(notification_id, action))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def on_closed(self, notification_id: int, reason: int) -> None:
        # Reason 2: the user dismissed it, which acknowledges it like "Done".
        # (1 is "expired": not seen, so it stays fired; 3 is our own close.)
        if reason == CLOSED_BY_USER:
            self.on_action(notification_id, "dismissed")

    async def handle_action(self, notification_id: int, action: str) -> None:
        firing = await asyncio.to_thread(self.book.firing_for_notification, notification_id)
        if firing is None:
            return  # not one of ours (another app's notification)
        reminder_id = firing.reminder.id
        try:
            if action == "snooze":
                minutes = self.settings.reminders.snooze_minutes
                reminder = await asyncio.to_thread(
                    lambda: self.book.snooze(reminder_id, minutes, now=self.clock())
                )
                log.info("reminder %d snoozed until %s", reminder_id, reminder.due)
                self.on_change()
            elif action in ("done", "dismissed"):
                await asyncio.to_thread(self.book.mark_done, reminder_id)
                log.info("reminder %d %s", reminder_id, action)
            else:
                return
        except MavendError as exc:
            log.error("notification action %r on reminder %d failed: %s", action, reminder_id, exc)
            return
        if action == "done":
            from mavend.notify import NotifyUnavailable

            with contextlib.suppress(NotifyUnavailable):  # the server may have closed it
                await self.notifier.close_notification(notification_id)
