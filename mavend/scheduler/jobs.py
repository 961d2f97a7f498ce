"""`ReminderScheduler`: APScheduler 3 date jobs built from the reminders table, and the
watcher that keeps them in step with it (see the package's docstring)."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from datetime import datetime, tzinfo
from typing import Any

from mavend.config import Settings
from mavend.errors import MavendError, StorageError
from mavend.scheduler.book import Clock, ReminderBook
from mavend.scheduler.reminder import JOB_PREFIX, Firing, Reminder
from mavend.state.store import Store, parse_iso
from mavend.workers import started_pool

log = logging.getLogger(__name__)

# Fired this long after its time (a suspended laptop, a stuck machine), a
# reminder is marked late even though the daemon was running.
LATE_AFTER_S = 60.0
# Due this long before the scheduler started: missed while the daemon was down.
# (A second or two is start-up noise, and fire times are stored to the second.)
DOWN_SLACK_S = 2.0
# The watcher re-reads everything this often, even when nothing changed, so a
# job lost to an error (a locked database at fire time) is re-added.
FULL_SYNC_S = 30.0

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
        from apscheduler.jobstores.memory import MemoryJobStore
        from apscheduler.schedulers.background import BackgroundScheduler

        global _ACTIVE
        if _ACTIVE is not None:
            raise RuntimeError("a reminder scheduler is already running in this process")
        self._scheduler = BackgroundScheduler(
            jobstores={"default": MemoryJobStore()},
            executors={"default": _firing_pool(self.store)},
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
                if (now - reminder.fire_at).total_seconds() > self.grace_s and reminder.series:
                    reminder = self._catch_up(reminder, now)
                    if reminder is None:
                        continue
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

    def _catch_up(self, reminder: Reminder, now: datetime) -> Reminder | None:
        """A series that missed occurrences: skip those past the grace (logged); the
        series as it is now, None when it has nothing left to schedule."""
        moved = self.book.catch_up(reminder.id, reminder.due, now=now, grace_s=self.grace_s)
        if moved is None:
            return None
        log.warning(
            "reminder %d (%s, repeating) missed its occurrences from %s, longer ago than the"
            " misfire grace; skipped to %s",
            reminder.id, reminder.text, reminder.due, moved.due,
        )
        return moved if moved.status == "pending" else None

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
        if firing.reminder.series is not None:
            self._dirty.set()  # the series' next occurrence needs its job
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
                    if reminder.series is not None:
                        self._catch_up(reminder, self.clock())
                        self._dirty.set()
                    else:
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


def _firing_pool(store: Store) -> Any:
    """APScheduler's thread pool for the firings, its two threads (and their database
    connections) started now rather than when two reminders first fire together."""
    from apscheduler.executors.pool import BasePoolExecutor

    class StartedPool(BasePoolExecutor):
        def __init__(self) -> None:
            super().__init__(started_pool(2, "mavend-fire", initializer=store.connection))

    return StartedPool()
