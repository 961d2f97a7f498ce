"""Reminders counted from another date than now: one the household told mavend, or the
reminder just set.

    "remind me the day before my sister's birthday"  -> the birthday kept in a note
    "the plumber is coming on thursday at 2", then "remind me an hour before"
                                                      -> 13:00 on Thursday

Both only when the words named no time the resolver could read ("When should I remind
you?" was the answer); both leave the decision as it was when they find nothing.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta

from mavend.handlers.common import HandlerContext
from mavend.handlers.own_dates import OwnDates
from mavend.handlers.reminder_find import ReminderFinder
from mavend.handlers.reminder_words import duration_of
from mavend.language.anchors import own_anchors
from mavend.language.reminder_kinds import TIMER
from mavend.router.decision import Decision
from mavend.router.grammar import normalize
from mavend.router.slots import reminder_task

# "the day before", "an hour before it", "two days before that": counted back from a
# reminder already set
_BEFORE_IT = re.compile(
    r"\b(?P<span>the day|a day|the night|an hour|half an hour|a week|(?:\d+|a|an|one|two|"
    r"three|four|five|ten|fifteen|twenty|thirty) (?:minutes?|hours?|days?|weeks?)) before"
    r"(?: (?:it|that|then|hand|that one))?\b"
)
_NIGHT_BEFORE = 20  # "the night before": 20:00 the day before


class ReminderAnchors:
    def __init__(self, ctx: HandlerContext, finder: ReminderFinder, own_dates: OwnDates):
        self.ctx = ctx
        self.finder = finder
        self.own_dates = own_dates

    def counted_from(self, decision: Decision, now: datetime, session: str) -> Decision:
        """`decision` with the time counted from a date kept or the reminder in focus."""
        decision = self.from_own_date(decision, now)
        if decision.slots.has_time:
            return decision
        return self.before_the_one_in_focus(decision, session)

    def from_own_date(self, decision: Decision, now: datetime) -> Decision:
        """ "the day before my sister's birthday": the date kept for it, when there is one."""
        found = self.own_dates.find_time(decision.utterance, now)
        if found is None:
            return decision
        when, read = found
        said = re.search(rf"(?:\b(?:on|for|by) )?{re.escape(when.phrase)}", read)
        task = reminder_task(read, said.group(0) if said else when.phrase)
        if not task and (named := own_anchors(normalize(decision.utterance))):
            # "remind me the day before my mum's birthday": of the birthday (it asked
            # "What should I remind you about?")
            task = named[0]["said"]
        slots = replace(decision.slots, time=when.when, has_time=True, text=task)
        return replace(decision, slots=slots, clarify=None)

    def before_the_one_in_focus(self, decision: Decision, session: str) -> Decision:
        """ "remind me about it the day before", "an hour before": counted back from the
        reminder this session just set or touched. "it" is that reminder's own words."""
        said = normalize(decision.utterance)
        m = _BEFORE_IT.search(said)
        if m is None:
            return decision
        focus = self.finder.focus(session, self.ctx.reminders.active())
        if focus is None or focus.kind == TIMER:
            return decision
        span, day = m["span"], timedelta(days=1)
        if span in ("the day", "a day"):
            when = focus.fire_at - day
        elif span == "the night":
            when = (focus.fire_at - day).replace(hour=_NIGHT_BEFORE, minute=0)
        elif (length := duration_of(span)) is not None:
            when = focus.fire_at - length
        else:
            return decision
        task = reminder_task(said, m.group(0))
        task = re.sub(r"(?: (?:as well|too|also|again))+$", "", f" {task}").strip()
        if re.fullmatch(r"(?:about |of )?(?:it|that|this|that one|then)?", task):
            task = focus.text
        slots = replace(decision.slots, time=when, has_time=True, text=task)
        return replace(decision, slots=slots, clarify=None)
