"""`ReminderDelivery`: fired reminders shown as desktop notifications, with retries,
and the notification's actions (done, snooze) taken back to the table."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mavend.config import Settings
from mavend.errors import MavendError, StorageError
from mavend.scheduler.book import Clock, ReminderBook
from mavend.scheduler.reminder import Firing, ScheduledAct
from mavend.state.store import parse_iso

if TYPE_CHECKING:
    from mavend.desktop.notify import Notification, Notifier, Shown

log = logging.getLogger(__name__)

CLOSED_BY_USER = 2  # NotificationClosed reason codes, from the notification spec


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
        # Runs a scheduled act (blocking, off the loop) and says how it went; the daemon
        # sets it once its handlers exist. None: an act row is reported as not run.
        self.run_act: Callable[[ScheduledAct], str] | None = None
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
        from mavend.desktop.notify import NotifyUnavailable

        try:
            firings = await asyncio.to_thread(self.book.undelivered)
        except StorageError as exc:
            log.error("cannot read fired reminders: %s", exc)
            return False
        undelivered = {_firing_key(f) for f in firings}  # the rest were cancelled or snoozed
        self._unrecorded = {k: v for k, v in self._unrecorded.items() if k in undelivered}
        for firing in firings:
            if firing.reminder.act is not None:
                firing = await self._run_act(firing)
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

    async def _run_act(self, firing: Firing) -> Firing:
        """Run a fired row's act, at most once, and keep how it went on its firing."""
        act = firing.reminder.act
        assert act is not None
        if firing.act_result is not None:
            if firing.act_result:  # ran; only its notice is still to show
                return firing
            # Started and never finished: mavend stopped while it ran. Not run again.
            result = (f"I may not have finished: {firing.reminder.text}. mavend stopped "
                      "while doing it, and I won't run it twice.")
        elif not await self._record(self.book.act_started, firing):
            return firing  # not recorded as started: not run yet; tried again next round
        elif self.run_act is None:
            result = f"I couldn't {firing.reminder.text}: nothing here runs acts."
        else:
            try:
                result = await asyncio.to_thread(self.run_act, act)
            except Exception as exc:  # a failing act is reported, never retried
                log.exception("scheduled act %s failed", act.fn)
                result = f"I couldn't {firing.reminder.text}: {exc}"
        log.info("scheduled act %d (%s): %s", firing.reminder.id, act.fn, result)
        await self._record(self.book.act_finished, firing, result)
        return replace(firing, act_result=result)

    async def _show(self, firing: Firing) -> Shown | None:
        if not self.settings.notifications.enabled:
            log.info("reminder (notifications off): %s", firing.reminder.text)
            return None
        return await self.notifier.show(
            self.notification_for(firing), replacing=self._unrecorded.get(_firing_key(firing))
        )

    def notification_for(self, firing: Firing) -> Notification:
        from mavend.desktop.notify import Notification

        reminder = firing.reminder
        if reminder.act is not None:  # not something to do: something mavend did
            body = firing.act_result or reminder.text
            if firing.late:
                due = spoken_time(parse_iso(firing.due), self.clock())
                body += f"\nIt was due at {due}."
            return Notification(
                summary="Scheduled" + (" (late)" if firing.late else ""),
                body=body,
                tag=firing_tag(firing),
                category=REMINDER_CATEGORY,
            )
        minutes = self.settings.reminders.snooze_minutes
        summary = {"timer": "Timer", "alarm": "Alarm"}.get(reminder.kind, "Reminder")
        body = reminder.text or "(no text)"
        if reminder.kind == "timer":
            body = f"Time's up: {reminder.text}" if reminder.text else "Time's up."
        if reminder.series is not None:  # an occurrence: the series goes on after it
            body += f"\nRepeats {reminder.series.describe()}."
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
            from mavend.desktop.notify import NotifyUnavailable

            with contextlib.suppress(NotifyUnavailable):  # the server may have closed it
                await self.notifier.close_notification(notification_id)
