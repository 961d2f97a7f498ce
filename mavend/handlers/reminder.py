"""reminder: set one (timers are reminders), and list, cancel or snooze them by voice.

The router resolves the time phrase to an absolute, timezone-aware time; only
that time is stored. A time in the past, or none at all, is a question, never a
guess. Setting a reminder writes the shared database: the daemon schedules it
(now if it runs, at its next start otherwise).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time

from rapidfuzz import fuzz, process

from mavend.handlers.common import (
    HandlerContext,
    Outcome,
    Reply,
    TurnContext,
    human_duration,
    human_list,
)
from mavend.router.decision import Decision
from mavend.router.grammar import normalize
from mavend.router.slots import first_number
from mavend.router.timeparse import find_time
from mavend.scheduler import Reminder, spoken_time

_NOUN = r"(?:reminders?|timers?|alarms?)"
_LIST = re.compile(
    rf"^(?:(?:list|show|read|tell me)(?: me)?(?: all)?(?: of)?(?: my| the)?(?: pending| upcoming)? "
    rf"{_NOUN}|what {_NOUN} (?:do i have|are (?:set|there|pending))|"
    rf"(?:what are|which are) (?:my|the)(?: pending| upcoming)? {_NOUN}|(?:do i have|are there) "
    rf"any {_NOUN}(?: set)?)$"
)
_CANCEL = re.compile(
    rf"^(?:cancel|delete|remove|clear|drop|turn off|stop)(?P<all> all)?(?: of)?(?: my| the| that)? "
    rf"(?P<noun>{_NOUN})(?: (?:to|about|for|that|at))?(?: (?P<what>.+))?$"
)
_SNOOZE = re.compile(
    rf"^snooze(?: (?:it|that|this|(?:my|the|that) {_NOUN}))?"
    r"(?: (?:for|by) (?P<amount>[\w ]+?) minutes?)?$"
)


@dataclass(frozen=True)
class ReminderCommand:
    action: str  # list | cancel | snooze
    what: str = ""
    everything: bool = False
    kind: str = ""  # "timer" when the user said timer
    minutes: int | None = None


def parse_command(text: str) -> ReminderCommand | None:
    """A spoken reminder-management command, or None. Exact patterns only."""
    said = normalize(text)
    if _LIST.match(said):
        return ReminderCommand("list")
    if match := _CANCEL.match(said):
        kind = "timer" if match["noun"].startswith("timer") else ""
        return ReminderCommand(
            "cancel", what=(match["what"] or "").strip(), everything=bool(match["all"]), kind=kind
        )
    if match := _SNOOZE.match(said):
        minutes = first_number(match["amount"]) if match["amount"] else None
        return ReminderCommand("snooze", minutes=minutes)
    return None


def _asked_seconds(decision: Decision, fire_at: datetime, now: datetime) -> float:
    """The timer's length as the user said it: the fire time was fixed when the words were
    heard, so by the reply a "5 second" timer has ~4 s left. The spoken span is re-read
    (find_time) and used when it agrees with the fire time to within the turn's delay."""
    left = (fire_at - now).total_seconds()
    found = find_time(decision.utterance, now)
    if found is None or found.duration is None:
        return left
    asked = found.duration.total_seconds()
    return asked if 0 <= asked - left <= 30 else left


class ReminderHandler:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx

    def handle(self, decision: Decision, context: TurnContext | None = None) -> Reply:
        if decision.clarify is not None:
            return Reply(decision.clarify.question, Outcome.ASKED)
        now = self.ctx.now()
        when = decision.slots.time if decision.slots.has_time else None
        if when is None:
            return Reply("When should I remind you?", Outcome.ASKED)
        if when <= now:
            return Reply(
                f"{spoken_time(when, now)} has already passed. When should I remind you?",
                Outcome.ASKED,
            )
        said = normalize(decision.utterance)
        kind = "timer" if re.search(r"\btimers?\b", said) else "reminder"
        text = decision.slots.text.strip()
        if kind == "timer" and not text:
            text = f"timer for {human_duration((when - now).total_seconds())}"
        elif not text:
            text = "alarm" if re.search(r"\b(?:alarm|wake me)\b", said) else "reminder"
        origin = context.satellite if context is not None and context.satellite else None
        reminder = self.ctx.reminders.add(text, when, now=now, kind=kind, origin=origin)
        self.ctx.on_reminders_changed()
        data = {"reminder_id": reminder.id, "fire_at": reminder.due, "kind": kind}
        if kind == "timer":
            left = human_duration(_asked_seconds(decision, reminder.fire_at, now))
            return Reply(f"Timer set for {left}, until {reminder.fire_at:%H:%M:%S}.", data=data)
        about = _about(text)
        return Reply(
            f"OK, I'll remind you{' ' + about if about else ''} at "
            f"{spoken_time(reminder.fire_at, now)}.",
            data=data,
        )

    # list, cancel, snooze -----------------------------------------------
    def command(self, command: ReminderCommand) -> Reply:
        if command.action == "list":
            return self.list()
        if command.action == "cancel":
            return self.cancel(command)
        return self.snooze(command)

    def list(self, day: date | None = None) -> Reply:
        """The pending reminders; only those of `day` when a question named one."""
        pending = self.ctx.reminders.pending()
        now = self.ctx.now()
        when = ""
        if day is not None:
            pending = [r for r in pending if r.fire_at.astimezone(now.tzinfo).date() == day]
            when = " " + _day_words(day, now)
        if not pending:
            return Reply(f"You have no reminders{when}." if when else "You have no reminders set.")
        items = [f"{_label(r)} at {spoken_time(r.fire_at, now)}" for r in pending[:10]]
        more = f", and {len(pending) - 10} more" if len(pending) > 10 else ""
        noun = "reminder" if len(pending) == 1 else "reminders"
        # Read aloud, a list is summarised: the count and the next one.
        spoken = f"You have {len(pending)} {noun}{when}; the next is {items[0]}."
        return Reply(
            f"You have {len(pending)} {noun}{when}: {'; '.join(items)}{more}.",
            data={"reminders": [r.id for r in pending]},
            spoken=spoken if len(pending) > 1 else "",
        )

    def cancel(self, command: ReminderCommand) -> Reply:
        pending = self.ctx.reminders.pending()
        if command.kind == "timer":
            pending = [r for r in pending if r.kind == "timer"] or pending
        if not pending:
            return Reply("There are no reminders to cancel.")
        if command.everything:
            chosen = pending
        elif command.what:
            chosen = _best_match(pending, command.what)
            if not chosen:
                return Reply(
                    f"I found no reminder about {command.what}. You have: "
                    f"{human_list([_label(r) for r in pending])}.",
                    Outcome.ASKED,
                )
        elif len(pending) == 1:
            chosen = pending
        else:
            now = self.ctx.now()
            options = [f"{_label(r)} at {spoken_time(r.fire_at, now)}" for r in pending[:5]]
            return Reply(f"Which one? You have: {'; '.join(options)}.", Outcome.ASKED)
        for reminder in chosen:
            self.ctx.reminders.cancel(reminder.id)
        self.ctx.on_reminders_changed()
        what = _label(chosen[0]) if len(chosen) == 1 else f"{len(chosen)} reminders"
        return Reply(f"Cancelled {what}.", data={"cancelled": [r.id for r in chosen]})

    def snooze(self, command: ReminderCommand) -> Reply:
        firing = self.ctx.reminders.last_fired()
        if firing is None:
            return Reply("There is no reminder to snooze.")
        minutes = command.minutes or self.ctx.settings.reminders.snooze_minutes
        reminder = self.ctx.reminders.snooze(firing.reminder.id, minutes, now=self.ctx.now())
        self.ctx.on_reminders_changed()
        return Reply(
            f"Snoozed {_label(reminder)} for {minutes} minutes, until {reminder.fire_at:%H:%M}.",
            data={"reminder_id": reminder.id, "fire_at": reminder.due},
        )


def _about(text: str) -> str:
    lowered = text.lower()
    if lowered in ("reminder", "alarm"):
        return ""
    starts_verb = not lowered.startswith(("that ", "about ", "the ", "my ", "a "))
    return f"to {text}" if starts_verb else f"about {text}"


def _day_words(day: date, now: datetime) -> str:
    """'today', 'tomorrow', 'on Friday', 'on 3 April': spoken_time without the clock."""
    noon = datetime.combine(day, time(12), tzinfo=now.tzinfo)
    return spoken_time(noon, now).removeprefix("12:00 ")


def _label(reminder: Reminder) -> str:
    return reminder.text if reminder.kind != "timer" else f"the {reminder.text}"


def _best_match(pending: list[Reminder], what: str) -> list[Reminder]:
    found = process.extractOne(
        normalize(what),
        {r.id: normalize(r.text) for r in pending},
        scorer=fuzz.token_set_ratio,
        score_cutoff=70,
    )
    return [r for r in pending if found and r.id == found[2]]
