"""Kitchen timers by voice: several at once, named ("the pasta timer"), paused and
resumed, time added or taken off, and how long is left.

A timer is a reminder of kind "timer". A named one keeps its name in `reminders.name`
and says it in its text ("pasta timer"). Paused: still pending, with `paused_left`
seconds and no job (the scheduler never fires it; `ReminderBook.pending()` leaves it
out). "it" is the only timer running, or the one in focus.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from mavend.errors import MavendError
from mavend.handlers.common import HandlerContext, Outcome, Reply, TurnContext, human_duration
from mavend.handlers.reminder_find import described, label, of_kind, which_one
from mavend.handlers.reminder_words import ReminderCommand
from mavend.language.timeparse import find_time
from mavend.scheduler import Reminder
from mavend.scheduler.edits import check_text

if TYPE_CHECKING:
    from mavend.handlers.reminder_find import ReminderFinder


def asked_seconds(utterance: str, fire_at: datetime, now: datetime) -> float:
    """The timer's length as the user said it: the fire time was fixed when the words were
    heard, so by the reply a "5 second" timer has ~4 s left. The spoken span is re-read
    (find_time) and used when it agrees with the fire time to within the turn's delay."""
    left = (fire_at - now).total_seconds()
    found = find_time(utterance, now)
    if found is None or found.duration is None:
        return left
    asked = found.duration.total_seconds()
    return asked if 0 <= asked - left <= 30 else left


def _left(reminder: Reminder, now: datetime) -> float:
    if reminder.paused_left is not None:
        return reminder.paused_left
    return max(0.0, (reminder.fire_at - now).total_seconds())


class TimerCommands:
    ACTIONS = frozenset({"timer", "pause", "resume", "add_time", "left"})

    def __init__(self, ctx: HandlerContext, finder: ReminderFinder):
        self.ctx = ctx
        self.finder = finder

    def run(self, command: ReminderCommand, context: TurnContext | None) -> Reply:
        session = context.session if context is not None else ""
        if command.action == "timer":
            return self.start(command, context, session)
        timers = of_kind(self.ctx.reminders.active(), "timer")
        if command.action == "left" and not command.what:
            return self._all_left(timers)
        if not timers:
            return Reply("You have no timers.")
        now = self.ctx.now()
        if command.everything and command.action in ("pause", "resume"):
            return self._each(timers, command.action, now)
        found = self.finder.find(timers, command.what, pronoun=command.pronoun, session=session)
        if found.chosen is None:
            if not found.matches:
                listed = "; ".join(described(t, now) for t in timers[:5])
                return Reply(f"I found no timer like that. You have: {listed}.", Outcome.ASKED)
            return Reply(which_one(found.matches, now), Outcome.ASKED)
        timer = found.chosen
        self.finder.set_focus(session, timer)
        if command.action == "left":
            return self.one_left(timer, now)
        if command.action == "pause":
            return self._pause(timer, now)
        if command.action == "resume":
            return self._resume(timer, now)
        return self._add(timer, command.seconds, now)

    def start(self, command: ReminderCommand, context: TurnContext | None, session: str) -> Reply:
        """One named timer, or several said together (each checked before any is set)."""
        now = self.ctx.now()
        asked = (command, *command.more)
        try:
            names = [check_text(c.text) for c in asked]
        except MavendError as exc:
            return Reply(f"{exc} No timer was set.", Outcome.REFUSED)
        origin = context.satellite if context is not None and context.satellite else None
        set_now: list[Reminder] = []
        for name, each in zip(names, asked, strict=True):
            when = now.replace(microsecond=0) + timedelta(seconds=each.seconds)
            set_now.append(self.ctx.reminders.add(
                f"{name} timer", when, now=now, kind="timer", origin=origin, name=name
            ))
        self.finder.set_focus(session, set_now[-1])
        self.ctx.on_reminders_changed()
        ids = {t.id for t in set_now}
        others = [t for t in of_kind(self.ctx.reminders.active(), "timer") if t.id not in ids]
        total = len(others) + len(set_now)
        also = f" You have {total} timers running." if total > 1 else ""
        said = [
            f"{name} timer set for {human_duration(each.seconds)}, until {timer.fire_at:%H:%M:%S}"
            for name, each, timer in zip(names, asked, set_now, strict=True)
        ]
        text = "; ".join(said)
        return Reply(
            f"{text[0].upper()}{text[1:]}.{also}",
            data={"reminder_id": set_now[0].id, "fire_at": set_now[0].due, "kind": "timer",
                  "name": names[0], "timers": sorted(ids)},
        )

    def _all_left(self, timers: list[Reminder]) -> Reply:
        if not timers:
            return Reply("You have no timers running.")
        now = self.ctx.now()
        parts = [self._left_words(t, now) for t in timers]
        parts[1:] = [p[0].lower() + p[1:] for p in parts[1:]]
        return Reply("; ".join(parts) + ".", data={"timers": [t.id for t in timers]})

    def _left_words(self, timer: Reminder, now: datetime) -> str:
        left = human_duration(_left(timer, now))
        name = label(timer)
        if timer.paused_left is not None:
            return f"{name[0].upper() + name[1:]} is paused with {left} left"
        return f"{name[0].upper() + name[1:]} has {left} left, until {timer.fire_at:%H:%M:%S}"

    def one_left(self, timer: Reminder, now: datetime) -> Reply:
        return Reply(
            self._left_words(timer, now) + ".",
            data={"reminder_id": timer.id, "left_s": round(_left(timer, now))},
        )

    def _each(self, timers: list[Reminder], action: str, now: datetime) -> Reply:
        """ "pause all timers", "resume all my timers": each one not already so."""
        todo = [t for t in timers if (t.paused_left is None) == (action == "pause")]
        if len(todo) == 1 or len(timers) == 1:
            one = todo[0] if todo else timers[0]
            return self._pause(one, now) if action == "pause" else self._resume(one, now)
        if not todo:
            return Reply(f"All {len(timers)} timers are already "
                         f"{'paused' if action == 'pause' else 'running'}.")
        for timer in todo:
            if action == "pause":
                self.ctx.reminders.pause(timer.id, now=now)
            else:
                self.ctx.reminders.resume(timer.id, now=now)
        self.ctx.on_reminders_changed()
        done = "Paused" if action == "pause" else "Resumed"
        return Reply(f"{done} {len(todo)} timers.", data={"reminder_ids": [t.id for t in todo]})

    def _pause(self, timer: Reminder, now: datetime) -> Reply:
        if timer.paused_left is not None:
            return Reply(f"{label(timer).capitalize()} is already paused, with "
                         f"{human_duration(timer.paused_left)} left.")
        paused = self.ctx.reminders.pause(timer.id, now=now)
        self.ctx.on_reminders_changed()
        return Reply(
            f"Paused {label(timer)} with {human_duration(paused.paused_left or 0)} left.",
            data={"reminder_id": paused.id, "paused_left": paused.paused_left},
        )

    def _resume(self, timer: Reminder, now: datetime) -> Reply:
        if timer.paused_left is None:
            return Reply(f"{label(timer).capitalize()} is running, until {timer.fire_at:%H:%M:%S}.")
        resumed = self.ctx.reminders.resume(timer.id, now=now)
        self.ctx.on_reminders_changed()
        return Reply(
            f"Resumed {label(timer)}: {human_duration(_left(resumed, now))} left, until "
            f"{resumed.fire_at:%H:%M:%S}.",
            data={"reminder_id": resumed.id, "fire_at": resumed.due},
        )

    def _add(self, timer: Reminder, seconds: float, now: datetime) -> Reply:
        if _left(timer, now) + seconds <= 0:
            return Reply(
                f"{label(timer).capitalize()} has only {human_duration(_left(timer, now))} left;"
                " nothing was changed.",
                Outcome.REFUSED,
            )
        changed = self.ctx.reminders.shift(timer.id, seconds, now=now)
        self.ctx.on_reminders_changed()
        verb = "Added" if seconds > 0 else "Took"
        amount = human_duration(abs(seconds))
        where = "to" if seconds > 0 else "off"
        until = "" if changed.paused_left is not None else f", until {changed.fire_at:%H:%M:%S}"
        return Reply(
            f"{verb} {amount} {where} {label(timer)}: {human_duration(_left(changed, now))} "
            f"left{until}.",
            data={"reminder_id": changed.id, "fire_at": changed.due},
        )
