"""Questions about what is set: the pending reminders (of a day, of a kind), and how long
until the one the words name ("how long left on the eggs", "what time is my alarm").
Nothing here changes a reminder; the focus moves to the one asked about."""

from __future__ import annotations

import re
from datetime import date, datetime, time

from mavend.handlers.common import HandlerContext, Outcome, Reply, human_duration
from mavend.handlers.reminder_commands import asked_time_left
from mavend.handlers.reminder_find import (
    ReminderFinder,
    about,
    described,
    label,
    match_score,
    match_words,
    of_kind,
    which_one,
)
from mavend.handlers.timers import TimerCommands
from mavend.language.reminder_kinds import ALARM, TIMER
from mavend.scheduler import Reminder, spoken_time

# "when is the plumber coming", "when am i calling the dentist", "what day is the bin
# collection": a question whose answer is a reminder's time. Never a past one ("when did").
_WHEN = re.compile(
    r"^(?:(?:so|and|um|uh|hey|ok|okay) )*(?:when|what time|what day|which day)"
    r"(?: is| s|'s| are| am i| do i| does| will| are we| do we)"
    r" (?P<what>.+?)(?: again)?$"
)
# How close the words must be to the reminder's: closer than for "cancel the ..." (the
# reminder "call the dentist" is no answer to "when is the dentist appointment").
WHEN_SCORE = 85
_CLAUSE = re.compile(r"\b(?:is|are|was|were|will|comes?|arrives?|starts?|opens?)\b")

NOUNS = {"timer": ("timer", "timers"), "alarm": ("alarm", "alarms"),
         "reminder": ("reminder", "reminders"), "": ("reminder", "reminders")}


class ReminderQuestions:
    def __init__(self, ctx: HandlerContext, finder: ReminderFinder, timers: TimerCommands):
        self.ctx = ctx
        self.finder = finder
        self.timers = timers

    def time_left(self, question: str) -> Reply | None:
        """How long until the one pending reminder or timer the question names ("how long
        left on the eggs", "how long until the washing reminder"); two named: which one;
        none, or not such a question: None (the caller lists them, or looks elsewhere)."""
        what = asked_time_left(question)
        return None if what is None else self.left_of(what, "")

    def when_is(self, question: str) -> Reply | None:
        """The time of the one pending reminder the question names ("when is the plumber
        coming": the reminder "the plumber is coming"); None when it names none closely."""
        m = _WHEN.match(question.lower().strip().rstrip("?.! "))
        if m is None:
            return None
        now = self.ctx.now()
        what = m["what"]
        found = [r for r in match_words(self.ctx.reminders.active(), what, now)
                 if match_score(what, r) >= WHEN_SCORE]
        if len(found) > 1:  # a question: each of them, not "which one?"
            ordered = sorted(found, key=lambda r: r.fire_at)
            return Reply(f"There are {len(found)}: "
                         f"{'; '.join(described(r, now) for r in ordered)}.",
                         data={"reminders": [r.id for r in ordered]})
        if not found:
            return None
        chosen = found[0]
        when = spoken_time(chosen.fire_at, now)
        data = {"reminder_id": chosen.id, "fire_at": chosen.due}
        if chosen.kind in (TIMER, ALARM):
            return Reply(f"Your {label(chosen)} is set for {when}.", data=data)
        if _CLAUSE.search(chosen.text.lower()):  # "the plumber is coming": said as it is
            return Reply(f"{chosen.text[:1].upper()}{chosen.text[1:]}: at {when}.", data=data)
        # "Your reminder that you have a dentist appointment ...", not "to i have a ..."
        return Reply(f"Your reminder {about(chosen.text)} is at {when}.", data=data)

    def left_of(self, what: str, session: str) -> Reply | None:
        now = self.ctx.now()
        matches = match_words(self.ctx.reminders.active(), what, now)
        if len(matches) > 1:
            return Reply(which_one(tuple(matches), now), Outcome.ASKED)
        if not matches:
            return None
        return self._left(matches[0], session, now)

    def next_of_kind(self, kind: str, session: str) -> Reply:
        """ "how long until my next alarm", "when's my next reminder": the first one set."""
        pending = sorted(of_kind(self.ctx.reminders.active(), kind), key=lambda r: r.fire_at)
        if not pending:
            return Reply(f"You have no {NOUNS[kind][1]} set.")
        return self._left(pending[0], session, self.ctx.now())

    def _left(self, chosen: Reminder, session: str, now: datetime) -> Reply:
        self.finder.set_focus(session, chosen)
        if chosen.kind == TIMER:
            return self.timers.one_left(chosen, now)
        seconds = max(0.0, (chosen.fire_at - now).total_seconds())
        if seconds >= 3600:  # hours away: to the minute ("18 hours and 53 minutes")
            seconds = round(seconds / 60) * 60
        noun = "alarm" if chosen.kind == ALARM else "reminder"
        named = "" if label(chosen) == noun else f", {label(chosen)},"  # not "alarm, alarm"
        return Reply(f"Your {noun}{named} is in {human_duration(seconds)}, at "
                     f"{spoken_time(chosen.fire_at, now)}.",
                     data={"reminder_id": chosen.id, "fire_at": chosen.due})

    def list(self, day: date | None = None, *, kind: str = "") -> Reply:
        """The pending reminders; only those of `day` when a question named one."""
        pending = of_kind(self.ctx.reminders.active(), kind)
        now = self.ctx.now()
        when = ""
        if day is not None:
            pending = [r for r in pending if r.fire_at.astimezone(now.tzinfo).date() == day]
            when = " " + _day_words(day, now)
        singular, plural = NOUNS[kind]
        if not pending:
            if not (when or kind):
                return Reply("You have no reminders set.")
            return Reply(f"You have no {plural}{when}.")
        if kind == ALARM and len(pending) == 1 and pending[0].series is None:
            alarm = pending[0]  # "Your alarm is set for 07:00 tomorrow", not "1 alarm: alarm"
            about = "" if alarm.text == "alarm" else f" ({alarm.text})"
            return Reply(f"Your alarm{about} is set for {spoken_time(alarm.fire_at, now)}.",
                         data={"reminders": [alarm.id]})
        items = [described(r, now) for r in pending[:10]]
        more = f", and {len(pending) - 10} more" if len(pending) > 10 else ""
        noun = singular if len(pending) == 1 else plural
        # Read aloud, a list is summarised: the count and the next one.
        spoken = f"You have {len(pending)} {noun}{when}; the next is {items[0]}."
        return Reply(
            f"You have {len(pending)} {noun}{when}: {'; '.join(items)}{more}.",
            data={"reminders": [r.id for r in pending]},
            spoken=spoken if len(pending) > 1 else "",
        )


def _day_words(day: date, now: datetime) -> str:
    """'today', 'tomorrow', 'on Friday', 'on 3 April': spoken_time without the clock."""
    noon = datetime.combine(day, time(12), tzinfo=now.tzinfo)
    return spoken_time(noon, now).removeprefix("12:00 ")
