"""reminder: set one (once or repeating; alarms and timers are reminders), and list,
cancel, skip, move, rename or snooze them by voice.

The router resolves the time phrase to an absolute, timezone-aware time; only
that time is stored. A time in the past, or none at all, is a question, never a
guess. A repeat ("every monday") is read by mavend.recurrence into an RRULE; the row's
fire time is then always its next occurrence. Setting a reminder writes the shared
database: the daemon schedules it (now if it runs, at its next start otherwise).

Managing one by voice: `reminder_commands.parse_command` reads the words (before the
router), `reminder_find` finds the reminder they point at ("it" = the session's focus),
kitchen timers are `timers.TimerCommands`. Two matches are asked about, never guessed;
a bulk cancel asks first (handlers.confirm) and cancels exactly what it asked about.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, time, timedelta
from typing import Any

from mavend.errors import MavendError
from mavend.handlers.common import (
    HandlerContext,
    Outcome,
    Reply,
    TurnContext,
    human_duration,
)
from mavend.handlers.confirm import Confirmations
from mavend.handlers.own_dates import OwnDates
from mavend.handlers.reminder_anchors import ReminderAnchors
from mavend.handlers.reminder_cancels import ONE_DAY
from mavend.handlers.reminder_changes import set_change, stated_day, stated_time, table_changes
from mavend.handlers.reminder_commands import (
    ReminderCommand,
    another_one,
    bare_minutes,
    duration_of,
    parse_command,
    parse_loose,
    time_said_again,
)
from mavend.handlers.reminder_days import DaysCommand, ReminderDays, parse_days
from mavend.handlers.reminder_find import (
    MERIDIEM,
    ReminderFinder,
    about,
    cancelled_name,
    counted,
    described,
    focus_key,
    label,
    match_words,
    of_kind,
    owned_name,
    which_one,
)
from mavend.handlers.reminder_questions import NOUNS as _NOUNS
from mavend.handlers.reminder_questions import ReminderQuestions
from mavend.handlers.reminder_task import ask_task
from mavend.handlers.timers import TimerCommands, asked_seconds
from mavend.language.person import to_second_person
from mavend.language.reminder_kinds import ALARM, REMINDER, TIMER, reminder_kind, when_question
from mavend.language.timeparse import resolve_time
from mavend.recurrence import SpokenSeries, parse_series
from mavend.replies import Change
from mavend.router.decision import Decision
from mavend.router.grammar import normalize
from mavend.router.slots import reminder_task
from mavend.scheduler import Reminder, spoken_time
from mavend.scheduler.edits import check_text

__all__ = ["ReminderCommand", "ReminderHandler", "parse_command", "set_change", "stated_time"]

CANCEL_OP = "reminders.cancel"


_NOT_A_NAME = frozenset({"timer", "timers", "a", "an", "the", "my", "for", "one", "new", "set",
                         "start", "please"})


def timer_name(words: str) -> str:
    """What a timer is for, from a timer request's leftover words: "the pasta" ->
    "pasta"; "" when they only say "timer"."""
    kept = normalize(words).split()
    while kept and kept[0] in ("the", "my", "a", "an", "for"):
        kept.pop(0)
    if not kept or all(word in _NOT_A_NAME for word in kept):
        return ""
    return " ".join(kept)


_SET_THE_ALARM = re.compile(r"^(?:(?:please|can you|could you)\s+)*set (?:the|my) alarm\b")
# How long after one is set or moved a bare new time ("no on thursday") is its correction.
JUST_SET_S = 120.0


def _session(context: TurnContext | None) -> str:
    return context.session if context is not None else ""


class ReminderHandler:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx
        self.finder = ReminderFinder(ctx)
        self.timers = TimerCommands(ctx, self.finder)
        self.own_dates = OwnDates(ctx)
        self.questions = ReminderQuestions(ctx, self.finder, self.timers)
        self.anchors = ReminderAnchors(ctx, self.finder, self.own_dates)
        self.days_of = ReminderDays(ctx, self.finder)

    # setting ------------------------------------------------------------
    def handle(self, decision: Decision, context: TurnContext | None = None) -> Reply:
        if (command := parse_loose(decision.utterance)) is not None:
            return self.command(command, context)  # "cancel the dentist", routed here
        now = self.ctx.now()
        # The slots' kind is read from the words they came from: a follow-up's rebuilt
        # request ("set a timer for ten minutes"), where the utterance is "ten minutes".
        kind = decision.slots.kind or reminder_kind(normalize(decision.utterance))
        alarm = kind == ALARM
        if kind != TIMER:
            spoken = parse_series(decision.utterance, now, alarm=alarm)
            if spoken is not None:
                return self._set_series(spoken, kind, context, now)
        if not decision.slots.has_time and kind != TIMER:
            decision = self.anchors.counted_from(decision, now, _session(context))
            if not decision.slots.has_time and (event := self.own_dates.unknown(
                    decision.utterance)):
                # "the day before my sister's birthday", no date kept: the answer, a
                # date, takes the name's place (conversation.ellipsis)
                return Reply(f"When is {event}?", Outcome.ASKED)
        if decision.clarify is not None:
            return Reply(decision.clarify.question, Outcome.ASKED)
        when = decision.slots.time if decision.slots.has_time else None
        if when is None:
            return Reply(when_question(kind, normalize(decision.utterance)), Outcome.ASKED)
        if when <= now:
            return Reply(
                f"{spoken_time(when, now)} has already passed. {when_question(kind)}",
                Outcome.ASKED,
            )
        text = decision.slots.text.strip()
        if _AGAIN.fullmatch(normalize(text)) and kind != TIMER:
            # "remind me again in an hour": the one that just went off (or was just set),
            # not a reminder "to again"
            earlier = self.finder.focus(_session(context), self.ctx.reminders.active())
            if earlier is None:
                return Reply("Remind you about what?", Outcome.ASKED)
            text = earlier.text
        # A timer's words are its name ("for the pasta": the pasta timer), as when the
        # name and the length are said in one breath (TimerCommands.start).
        name = timer_name(text) if kind == TIMER else ""
        # "a timer for 10 minutes to turn off the oven": what to do when it rings
        purpose = name.removeprefix("to ") if name.startswith("to ") else ""
        if purpose:
            name = text = purpose
        elif name:
            text = f"{name} timer"
        elif kind == TIMER:
            # the length said, not what is left once a slow turn reaches here
            text = f"timer for {human_duration(asked_seconds(decision.utterance, when, now))}"
        elif not text and not alarm:  # "remind me in ten minutes": of what?
            return ask_task(self.ctx, when, _session(context))
        elif not text:
            text = "alarm"
        try:
            text = check_text(text)
        except MavendError as exc:
            return Reply(f"{exc} Nothing was set.", Outcome.REFUSED)
        origin = context.satellite if context is not None and context.satellite else None
        reminder = self.ctx.reminders.add(text, when, now=now, kind=kind, origin=origin,
                                          name=name or None)
        self._changed(context, reminder)
        data = {"reminder_id": reminder.id, "fire_at": reminder.due, "kind": kind}
        changes = (set_change(reminder, now),)
        if kind == "timer":
            left = human_duration(asked_seconds(decision.utterance, reminder.fire_at, now))
            what = f"{name.capitalize()} timer" if name and not purpose else "Timer"
            then = f", to {to_second_person(purpose, starts_sentence=False)}" if purpose else ""
            return Reply(
                f"{what} set for {left}, until {reminder.fire_at:%H:%M:%S}{then}.",
                data=data,
                changes=changes,
            )
        if kind == "alarm":
            named = "" if text == "alarm" else f" ({text})"
            return Reply(
                f"Alarm set{named} for {stated_time(reminder.fire_at, now, dated=True)}.",
                data=data,
                changes=changes,
            )
        said = about(text)
        return Reply(
            f"OK, I'll remind you{' ' + said if said else ''} at "
            f"{stated_time(reminder.fire_at, now)}.",
            data=data,
            changes=changes,
        )

    def _set_series(
        self, spoken: SpokenSeries, kind: str, context: TurnContext | None, now: datetime
    ) -> Reply:
        if spoken.series is None:
            return Reply(spoken.error, Outcome.REFUSED)
        # No words left ("remind me every day at 8"): named as a one-off would be.
        text = reminder_task(spoken.rest, spoken.clock_phrase) or kind
        try:
            text = check_text(text)
        except MavendError as exc:
            return Reply(f"{exc} Nothing was set.", Outcome.REFUSED)
        origin = context.satellite if context is not None and context.satellite else None
        reminder = self.ctx.reminders.add(
            text, spoken.series.start, now=now, kind=kind, origin=origin, series=spoken.series
        )
        self._changed(context, reminder)
        rule = spoken.series.describe()
        first = stated_time(reminder.fire_at, now, dated=True)
        data = {"reminder_id": reminder.id, "fire_at": reminder.due, "kind": kind,
                "rule": spoken.series.rule}
        changes = (set_change(reminder, now),)
        if kind == "alarm":
            return Reply(f"Alarm set {rule}; the first is at {first}.", data=data, changes=changes)
        said = about(text)
        return Reply(
            f"OK, I'll remind you{' ' + said if said else ''} {rule}; the first is at {first}.",
            data=data,
            changes=changes,
        )

    def _changed(self, context: TurnContext | None, reminder: Reminder) -> None:
        self.finder.set_focus(_session(context), reminder)
        self.ctx.on_reminders_changed()

    # commands ------------------------------------------------------------
    def confirmed(self, op: str, pending: Mapping[str, Any]) -> Reply:
        """A yes to a question this handler asked (handlers.confirm): a bulk cancel."""
        if op != CANCEL_OP:
            return Reply("That question has lapsed; ask again.", Outcome.REFUSED)
        ids = [int(i) for i in pending.get("ids") or []]
        cancelled = self.ctx.reminders.cancel_many(ids)
        self.ctx.on_reminders_changed()
        noun = _NOUNS.get(str(pending.get("kind") or ""), _NOUNS[""])
        if not cancelled:
            return Reply(f"Those {noun[1]} had already gone; nothing to cancel.")
        what = f"1 {noun[0]}" if len(cancelled) == 1 else f"{len(cancelled)} {noun[1]}"
        if not pending.get("kind"):  # "cancel everything": "2 timers and an alarm"
            what = counted([self.ctx.reminders.get(i) for i in cancelled])
        change = Change("reminder.cancel", f"cancelled {what}", {"ids": cancelled, "what": what})
        return Reply(f"Cancelled {what}.", data={"cancelled": cancelled}, changes=(change,))

    def command(
        self, command: ReminderCommand | DaysCommand, context: TurnContext | None = None
    ) -> Reply:
        session = _session(context)
        before = self.ctx.reminders.snapshots()
        try:
            reply = self._command(command, context, session)
        except MavendError as exc:
            return Reply(f"Sorry, {exc}; nothing was changed.", Outcome.REFUSED)
        if reply.changes:
            return reply
        # What the command did, read off the table: a timer set, a move, a pause, a snooze.
        return replace(reply, changes=self.changed_since(before))

    def changed_since(self, before: Mapping[int, Mapping[str, Any]]) -> tuple[Change, ...]:
        """What happened to the pending reminders since `before` (`snapshots()`), as changes."""
        return table_changes(self.ctx.reminders, before, self.ctx.now())

    def claim(self, said: str) -> ReminderCommand | None:
        """A command without a reminder word whose words name a reminder that is set
        ("cancel the dentist" with a dentist reminder pending): the assistant may take it
        before the router, which cannot know what is set. None otherwise."""
        command = parse_loose(said)
        if command is None or command.pronoun or not command.what:
            return None
        candidates = of_kind(self.ctx.reminders.active(), command.kind)
        found = match_words(candidates, command.what, self.ctx.now())
        if found and all(r.act for r in found) and _DEVICE_VERB.match(normalize(said)):
            # "switch off the heater" with its switching off planned: the heater, now (it
            # cancelled the plan and left the heater on)
            return None
        return command if found else None

    def another_like(self, said: str, session: str) -> str | None:
        """ "set another one for 3 minutes" after a timer was set: "set a timer for 3
        minutes" (after an alarm, an alarm). The words only: they are routed as said."""
        focus = self.finder.focus(session, self.ctx.reminders.active())
        kind = focus.kind if focus is not None and focus.kind in (TIMER, ALARM) else ""
        return another_one(said, kind)

    def time_again(self, said: str, session: str) -> ReminderCommand | None:
        """ "no on thursday", "not tomorrow, thursday" said right after one was set or
        moved in this session: its new time (it set a reminder "to no not tomorrow").
        Not later: by then "no on thursday" is no correction of it."""
        when = time_said_again(said)
        if when is None:
            return None
        stored = self.ctx.session.get(focus_key(session)) or {}
        if self.ctx.now().timestamp() - float(stored.get("at") or 0) > JUST_SET_S:
            return None
        return ReminderCommand("move", what="it", pronoun=True, when=when)

    def timer_minutes(self, said: str, session: str) -> ReminderCommand | None:
        """ "make it 15" when "it" is a timer (the session's focus): 15 minutes from now.
        Not otherwise: after "set the heating to 20", "make it 21" is the thermostat's."""
        when = bare_minutes(said)
        if when is None:
            return None
        focus = self.finder.focus(session, self.ctx.reminders.active())
        if focus is None or focus.kind != TIMER:
            return None
        return ReminderCommand("move", what="it", pronoun=True, when=when)

    def days(self, said: str, session: str) -> DaysCommand | None:
        """ "don't wake me up on weekends", "only remind me about the fish on weekdays":
        claimed when a repeating reminder the words could name is set (the series keeps
        its other days; it was withdrawn as said, or cancelled whole). None otherwise."""
        command = parse_days(said)
        if command is None or not self.days_of.claims(command, session):
            return None
        return command

    def _command(
        self, command: ReminderCommand | DaysCommand, context: TurnContext | None, session: str
    ) -> Reply:
        if isinstance(command, DaysCommand):
            return self.days_of.run(command, session)
        action = command.action
        if action == "list":
            return self.questions.list(kind=command.kind if command.kind != "reminder" else "")
        if action == "snooze":
            return self.snooze(command, session)
        # "how long until the washing reminder": any reminder the words name
        if (action == "left" and command.what and not command.pronoun
                and (left := self.questions.left_of(command.what, session)) is not None):
            return left
        if action == "left" and command.kind in (ALARM, REMINDER):
            return self.questions.next_of_kind(command.kind, session)
        if action in TimerCommands.ACTIONS:
            return self.timers.run(command, context)
        if action == "cancel" and command.everything:
            return self._cancel_all(command, session)
        return self._one(command, session)

    def _cancel_all(self, command: ReminderCommand, session: str) -> Reply:
        chosen = of_kind(self.ctx.reminders.active(), command.kind)
        if command.kind == REMINDER:
            # "delete all my reminders" leaves the alarms, as it leaves the timers (it
            # asked "Cancel all 2 reminders?" of an alarm and a reminder)
            chosen = [r for r in chosen if r.kind != ALARM]
        plural = _NOUNS[command.kind][1]
        if not chosen:
            return Reply("There's nothing to cancel." if not command.kind
                         else f"You have no {plural}.")
        question = (
            # "Cancel the reminder to buy stamps?" (it was "Cancel buy stamps?")
            f"Cancel {owned_name(chosen[0]) if chosen[0].kind == REMINDER else label(chosen[0])}?"
            if len(chosen) == 1
            else f"Cancel all {len(chosen)} {plural}?" if command.kind
            else f"Cancel everything: {counted(chosen)}?"
        )
        ids = [r.id for r in chosen]
        return Confirmations(self.ctx).ask(
            session, CANCEL_OP, {"ids": ids, "kind": command.kind}, question,
            room="reminders", data={"ids": ids},
        )

    def _one(self, command: ReminderCommand, session: str) -> Reply:
        """cancel, skip, move, shift, rename: one reminder, found by its words or "it"."""
        now = self.ctx.now()
        candidates = of_kind(self.ctx.reminders.active(), command.kind)
        singular, plural = _NOUNS[command.kind]
        if not candidates:
            if command.pronoun and command.action == "cancel" and not self.ctx.reminders.active():
                return Reply("There's nothing to cancel.")
            return Reply(f"You have no {plural} set.")
        found = self.finder.find(
            candidates, command.what, pronoun=command.pronoun, session=session, kind=command.kind
        )
        if found.chosen is None and not found.matches and command.day:
            # "my alarm on tuesday" when its next is Friday: the alarm, and then the day.
            found = self.finder.find(candidates, " ".join(ONE_DAY.sub(" ", command.what).split()),
                                     pronoun=command.pronoun, session=session, kind=command.kind)
        if found.chosen is None:
            if not found.matches:
                listed = "; ".join(described(r, now) for r in candidates[:5])
                return Reply(
                    f"I found no {singular} like {_plain(command.what)}. You have: {listed}.",
                    Outcome.ASKED,
                )
            return Reply(which_one(found.matches, now), Outcome.ASKED)
        reminder = found.chosen
        if command.day and reminder.series is not None:
            return self._one_day(reminder, command.day, session, now)
        if command.action == "cancel":
            return self._cancel(reminder, session)
        if command.action == "skip":
            return self._skip(reminder, session)
        if command.action == "rename":
            return self._rename(reminder, command.text, session)
        return self._move(reminder, command, session, now)

    def set_instead(self, command: ReminderCommand, said: str) -> str | None:
        """ "set the alarm for 8" with no alarm set: a new alarm, said as the grammar
        knows it ("set an alarm for 8"); it said "You have no alarms set." None when
        there is one to move, or the words are not "set" ("move my alarm to 8")."""
        if (command.action != "move" or command.kind != "alarm" or command.pronoun
                or of_kind(self.ctx.reminders.active(), "alarm")
                or not _SET_THE_ALARM.match(said)):
            return None
        return f"set an alarm for {command.when}"

    def taken_back(self, task: str, session: str) -> Reply | None:
        """"don't remind me to feed the cat" with that reminder set: it is cancelled (the
        reply "OK, I won't remind you" left it to fire). None: no one reminder is it."""
        candidates = of_kind(self.ctx.reminders.active(), "reminder")
        matches = match_words(candidates, task, self.ctx.now())
        if len(matches) != 1:
            return None
        cancelled = self._cancel(matches[0], session)
        return replace(cancelled, text=f"OK, I won't. {cancelled.text}")

    def _cancel(self, reminder: Reminder, session: str) -> Reply:
        self.ctx.reminders.cancel(reminder.id)
        self.ctx.on_reminders_changed()
        data = {"cancelled": [reminder.id]}
        changes = (
            Change(
                "reminder.cancel",
                f"cancelled {cancelled_name(reminder)}",
                {"ids": [reminder.id], "what": label(reminder)},
            ),
        )
        if reminder.series is not None:
            return Reply(
                f"Cancelled {cancelled_name(reminder)}: the whole series "
                f"({reminder.series.describe()}).",
                data=data,
                changes=changes,
            )
        named = cancelled_name(reminder)
        if reminder.kind == "alarm" and named == "alarm":  # "Cancelled alarm." said no which
            named = f"the alarm at {spoken_time(reminder.fire_at, self.ctx.now())}"
        return Reply(f"Cancelled {named}.", data=data, changes=changes)

    def _one_day(self, reminder: Reminder, day: str, session: str, now: datetime) -> Reply:
        """"cancel my alarm for tomorrow" with a series: that day's occurrence is skipped
        when it is the next one; otherwise nothing changes and the reply says when the
        next one is (one occurrence further on cannot be taken out alone)."""
        found = resolve_time(day, now)
        named = found.when.date() if found is not None else None
        if named == reminder.fire_at.astimezone(now.tzinfo).date():
            return self._skip(reminder, session)
        said = day if re.match(r"(?:today|tonight|tomorrow|this )", day) else f"on {day.title()}"
        assert reminder.series is not None
        later = tuple(t for t in reminder.series.on(named) if t > now) if named else ()
        if not later:
            name = owned_name(reminder)
            return Reply(
                f"{name[:1].upper()}{name[1:]} doesn't go off {said} "
                f"({reminder.series.describe()}). I've left it as it is.",
                Outcome.DONE,
                data={"reminder_id": reminder.id, "unchanged": True},
            )
        # One further on: taken out of the series alone (it could only skip the next).
        after = self.ctx.reminders.skip_on(reminder.id, later)
        self._changed_by_id(session, after)
        return Reply(
            f"OK, {owned_name(reminder)} won't go off {stated_day(later[0], now)}; the series goes "
            f"on, next at {stated_time(after.fire_at, now, dated=True)}.",
            data={"reminder_id": after.id, "skipped": [t.isoformat() for t in later]},
        )

    def _skip(self, reminder: Reminder, session: str) -> Reply:
        now = self.ctx.now()
        if reminder.series is None:
            return self._cancel(reminder, session)
        skipped = stated_time(reminder.fire_at, now, dated=True)
        after = self.ctx.reminders.skip_next(reminder.id)
        self._changed_by_id(session, after)
        if after.status != "pending":
            return Reply(
                f"Skipped {label(reminder)} at {skipped}; that was the last one, so the series"
                " has ended.",
                data={"reminder_id": after.id},
            )
        return Reply(
            f"Skipped {label(reminder)} at {skipped}; the series goes on, next at "
            f"{stated_time(after.fire_at, now, dated=True)}.",
            data={"reminder_id": after.id, "fire_at": after.due},
        )

    def _rename(self, reminder: Reminder, text: str, session: str) -> Reply:
        renamed = self.ctx.reminders.rename(reminder.id, text)
        self._changed_by_id(session, renamed)
        return Reply(
            f"Renamed {label(reminder)} to {renamed.text}; it is still at "
            f"{stated_time(renamed.fire_at, self.ctx.now())}.",
            data={"reminder_id": renamed.id, "text": renamed.text},
        )

    def _move(
        self, reminder: Reminder, command: ReminderCommand, session: str, now: datetime
    ) -> Reply:
        if command.action == "shift":
            when = reminder.fire_at + timedelta(seconds=command.seconds)
        else:
            when = _new_time(reminder, command.when, now)
            if when is None:
                return Reply(
                    f"I couldn't tell what time {_plain(command.when)} is; nothing was changed.",
                    Outcome.ASKED,
                )
        if when <= now:
            return Reply(
                f"{stated_time(when, now)} has already passed, so {label(reminder)} stays at "
                f"{stated_time(reminder.fire_at, now)}.",
                Outcome.REFUSED,
            )
        moved = self.ctx.reminders.move(reminder.id, when, now=now)
        self._changed_by_id(session, moved)
        data = {"reminder_id": moved.id, "fire_at": moved.due}
        if moved.kind == TIMER:  # "make it 15 minutes": a timer's length, not a clock time
            left = human_duration(round((moved.fire_at - now).total_seconds()))
            until = f"{moved.fire_at:%H:%M:%S}"
            if moved.text.startswith("timer for "):  # named by its length: the new one
                self.ctx.reminders.rename(moved.id, f"timer for {left}")
                return Reply(f"Timer now set for {left}, until {until}.", data=data)
            name = label(moved)
            return Reply(f"{name[0].upper()}{name[1:]} now runs {left}, until {until}.",
                         data=data)
        at = stated_time(moved.fire_at, now, dated=True)
        if reminder.series is not None and moved.id != reminder.id:
            return Reply(
                f"Moved the next {label(reminder)} to {at}; the series goes on "
                f"({reminder.series.describe()}).",
                data=data,
            )
        return Reply(f"Moved {label(reminder)} to {at}.", data=data)

    def _changed_by_id(self, session: str, reminder: Reminder) -> None:
        self.finder.set_focus(session, reminder)
        self.ctx.on_reminders_changed()

    def snooze(self, command: ReminderCommand, session: str = "") -> Reply:
        firing = self.ctx.reminders.last_fired()
        if firing is None:
            return Reply("There is no reminder to snooze.")
        minutes = command.minutes or self.ctx.settings.reminders.snooze_minutes
        reminder = self.ctx.reminders.snooze(firing.reminder.id, minutes, now=self.ctx.now())
        self._changed_by_id(session, reminder)
        amount = f"{minutes:g} minutes" if minutes != 1 else "1 minute"
        data = {"reminder_id": reminder.id, "fire_at": reminder.due}
        if firing.reminder.series is not None:
            return Reply(
                f"Snoozed {label(reminder)} for {amount}, until {reminder.fire_at:%H:%M}; the "
                f"series goes on ({firing.reminder.series.describe()}).",
                data=data,
            )
        return Reply(
            f"Snoozed {label(reminder)} for {amount}, until {reminder.fire_at:%H:%M}.", data=data
        )


def _new_time(reminder: Reminder, phrase: str, now: datetime) -> datetime | None:
    """Where "move it to PHRASE" puts it: a clock alone keeps the reminder's day (and
    takes the 12-hour reading nearest its old time); a day alone keeps its clock."""
    if (length := duration_of(phrase)) is not None and phrase.strip().startswith("in "):
        return now + length
    found = resolve_time(phrase, now)
    if found is None:
        return None
    old = reminder.fire_at.astimezone(now.tzinfo)
    when = found.when.astimezone(now.tzinfo)
    if found.kind == "date":
        return datetime.combine(when.date(), old.time(), tzinfo=now.tzinfo)
    if found.kind == "time":
        day = old.date()
        options = [datetime.combine(day, time(when.hour, when.minute), tzinfo=now.tzinfo)]
        said = normalize(phrase)
        if not MERIDIEM.search(said):
            other = (when.hour + 12) % 24
            options.append(datetime.combine(day, time(other, when.minute), tzinfo=now.tzinfo))
        future = [o for o in options if o > now] or options
        return min(future, key=lambda o: abs((o - old).total_seconds()))
    return when


def _plain(what: str) -> str:
    return f'"{what.strip()[:60]}"' if what.strip() else "that"


_AGAIN = re.compile(
    r"(?:about |of )?(?:it |that |this |this one |that one )?(?:again|once more|one more time)"
)


# Verbs that work a device as well as cancel a plan to ("switch off the heater").
_DEVICE_VERB = re.compile(
    r"^(?:(?:please|can you|could you|just) )*(?:(?:turn|switch|shut|power) (?:\w+ )*?"
    r"(?:off|on|down)|stop|close|open|lock|unlock)\b"
)
