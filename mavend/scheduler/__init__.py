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

Series (mavend.recurrence). A repeating reminder is one row: `rule` (an RRULE),
`rule_start` (its first occurrence) and `fire_at`, always its next occurrence. Each
occurrence fires once under the same (id, due) key; the firing's transaction moves
`fire_at` on to the first occurrence after now (or, after the last, leaves the row
fired), so occurrences passed while one fired late are skipped, never fired in a burst.
Down longer than the grace, a series skips the occurrences older than the grace (logged)
and fires the first one inside it, late, once; with none inside, it waits for its next.
Done on an occurrence changes nothing; a snooze is a one-off copy; cancel ends the series.
A paused timer stays pending with `paused_left` and no job (`pending()` leaves it out).

Scheduled acts. A row of kind "act" carries an allowlisted act (`ScheduledAct`): "lock the
screen in ten minutes", the unmute after "mute for an hour". It fires like any reminder
(exactly once); its delivery runs the act, at most once (`act_result` is committed as
started before it runs, so a crash while it runs leaves it unrun, said so, never run
twice), then shows what happened. Only the daemon runs it, through the allowlist as it
stands then (`ReminderDelivery.run_act`).

The table (`book.ReminderBook`, with its edits in `edits.ReminderEdits`), the jobs
(`jobs.ReminderScheduler`) and the delivery (`delivery.ReminderDelivery`) are one module
each.
"""

from mavend.scheduler.book import ReminderBook
from mavend.scheduler.delivery import (
    REMINDER_CATEGORY,
    REMINDER_SOUND,
    ReminderDelivery,
    firing_tag,
    spoken_time,
)
from mavend.scheduler.jobs import ReminderScheduler, fire_job
from mavend.scheduler.reminder import ACT_KIND, Firing, Reminder, ScheduledAct, Status

__all__ = [
    "ACT_KIND",
    "REMINDER_CATEGORY",
    "REMINDER_SOUND",
    "Firing",
    "Reminder",
    "ReminderBook",
    "ReminderDelivery",
    "ReminderScheduler",
    "ScheduledAct",
    "Status",
    "fire_job",
    "firing_tag",
    "spoken_time",
]
