"""What a reminder command changed, as `Change` records for "what did you just do?" and
"undo that": a reminder set, cancelled or edited, read off the table before and after.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from mavend.handlers.reminder_find import label
from mavend.replies import Change
from mavend.scheduler import Reminder, ReminderBook, spoken_time
from mavend.scheduler.reminder import Status


def stated_time(moment: datetime, now: datetime, *, dated: bool = False) -> str:
    """spoken_time with the date wherever a wrong guess could hide: '10:00 on Friday 4
    December'; with `dated`, today and tomorrow too ('06:30 tomorrow, Thursday 3 December')."""
    moment = moment.astimezone(now.tzinfo)
    spoken = spoken_time(moment, now)
    days = (moment.date() - now.date()).days
    if 1 < days < 7:
        return f"{spoken} {moment.day} {moment:%B}"
    if dated and days in (0, 1):
        return f"{spoken} ({moment:%A} {moment.day} {moment:%B})"
    return spoken



def stated_day(moment: datetime, now: datetime) -> str:
    """The day an occurrence falls on: 'tomorrow', 'on Friday 11 December'."""
    moment = moment.astimezone(now.tzinfo)
    days = (moment.date() - now.date()).days
    if days == 0:
        return "today"
    if days == 1:
        return "tomorrow"
    return f"on {moment:%A} {moment.day} {moment:%B}"


def table_changes(
    book: ReminderBook, before: Mapping[int, Mapping[str, Any]], now: datetime
) -> tuple[Change, ...]:
    """What happened to the pending reminders since `before` (`book.snapshots()`)."""
    after = book.snapshots()
    changes: list[Change] = []
    for reminder_id in sorted(after.keys() - before.keys()):
        changes.append(set_change(book.get(reminder_id), now))
    for reminder_id in sorted(before.keys() - after.keys()):
        reminder = book.get(reminder_id)
        if reminder.status == Status.CANCELLED:
            what = label(reminder)
            changes.append(Change("reminder.cancel", f"cancelled {what}",
                                  {"ids": [reminder_id], "what": what}))  # fmt: skip
    for reminder_id in sorted(before.keys() & after.keys()):
        if before[reminder_id] != after[reminder_id]:
            reminder = book.get(reminder_id)
            changes.append(Change(
                "reminder.edit", f"changed {label(reminder)}",
                {"id": reminder_id, "before": dict(before[reminder_id]),
                 "after": dict(after[reminder_id]), "what": label(reminder)},
            ))  # fmt: skip
    return tuple(changes)


def set_change(reminder: Reminder, now: datetime) -> Change:
    """What setting `reminder` changed, for "what did you just do?" and "undo that"."""
    noun = {"timer": "timer", "alarm": "alarm"}.get(reminder.kind, "reminder")
    named = reminder.kind != "timer" or reminder.name
    called = f" ({reminder.name or reminder.text})" if named else ""
    at = f"for {stated_time(reminder.fire_at, now)}"
    when = reminder.series.describe() if reminder.series else at
    what = f"{noun}{called} {when}"
    return Change(
        "reminder.set", f"set a{'n' if noun == 'alarm' else ''} {what}",
        {"ids": [reminder.id], "what": f"the {what}"},
    )  # fmt: skip
