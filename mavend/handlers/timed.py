"""Acts with a time around them: for later, or for a while.

    "lock the screen in ten minutes"      later: nothing runs now; mavend runs it then
    "turn off the lights at eleven"       (a scheduled act: mavend.scheduler.ScheduledAct)
    "mute for an hour", "mute until six"  a while: it runs now, and its opposite runs then
    "turn the fan on for half an hour"    (the fan goes off by itself)

An act is never run at the wrong time: a later one is not run now, and a while's end is
not dropped. What cannot be done by itself is said, and a reminder stands in: a
destructive act (it needs a spoken yes when it runs, and nobody is there to give it),
an act the allowlist has no opposite for, or an opposite that is not allowlisted.

A scheduled act is a row in the reminders table (kind "act"): it survives a restart,
fires once, runs at most once, is listed with the reminders, and "cancel that" or
"undo that" takes it back before it runs.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

from mavend.config import ActSpec
from mavend.errors import MavendError
from mavend.handlers.act import ActHandler, check_args, describe
from mavend.handlers.common import HandlerContext, Outcome, Reply, TurnContext, human_duration
from mavend.handlers.reminder import ReminderHandler, set_change, stated_time
from mavend.handlers.system import VOLUME_ACTS
from mavend.home.run import HomeActs
from mavend.language.timeparse import TimeResolution, bare_today, find_time, lasts
from mavend.replies import Change
from mavend.router.decision import Decision, Intent, Slots
from mavend.router.slots import reminder_task
from mavend.scheduler import ScheduledAct
from mavend.scheduler.edits import check_text

# An act and the act that undoes it, for "for a while" (both ways). Only pairs whose
# second half puts back what the first changed; a toggle (play-pause) has no opposite,
# and a lock's opposite needs a spoken yes.
OPPOSITES = {
    "mute": "unmute",
    "media_pause": "media_play",
    "device_on": "device_off",
    "lights_on": "lights_off",
    "device_mute": "device_unmute",
    "device_play": "device_pause",
    "device_open": "device_close",
    "device_oscillate": "device_oscillate_off",
}
OPPOSITES |= {b: a for a, b in OPPOSITES.items()}

# Acts that work both ways (play or pause): run later, they might do the opposite of what
# was asked, so a reminder stands in.
TOGGLES = frozenset({"media_play_pause"})

# "could you lock my screen (in 20 minutes)": the asking is not the task.
_ASKING = re.compile(r"^(?:(?:please|can you|could you|would you|will you)\s+)+")
def _holds_a_value(phrase: str, args: dict[str, str]) -> bool:
    """The time phrase is made of an act's own number ("on 19.5" for 19.5 degrees)."""
    said = set(re.findall(r"\d+", phrase))
    return any(value in said for value in args.values() if value.isdigit())


class TimedActs:
    """`handle(decision)`: the reply for an act said with a time to come, or None."""

    def __init__(self, ctx: HandlerContext, acts: ActHandler, reminders: ReminderHandler):
        self.ctx, self.acts, self.reminders = ctx, acts, reminders

    def handle(self, decision: Decision, context: TurnContext | None) -> Reply | None:
        name = decision.slots.fn if decision.slots.has_fn else ""
        if decision.intent is Intent.SYSTEM:
            name = VOLUME_ACTS.get(name, "")  # "louder" runs volume_up: an act too
        act = self.ctx.settings.acts.get(name) if name else None
        if act is None or decision.clarify is not None:
            return None
        now = self.ctx.now()
        found = find_time(decision.utterance, now)
        if found is None or found.when <= now or bare_today(found):
            return None  # "turn the heating up today": now, not at the day's 09:00
        args = dict(decision.slots.args)
        if _holds_a_value(found.phrase, args):
            return None  # "put the office heating on 19.5": the degrees, not 19 May
        if lasts(found):
            return self.for_a_while(decision, act, args, found, context)
        return self.later(decision, act, args, found, context)

    # later -----------------------------------------------------------------
    def later(
        self,
        decision: Decision,
        act: ActSpec,
        args: dict[str, str],
        found: TimeResolution,
        context: TurnContext | None,
    ) -> Reply:
        """Nothing runs now; the act is scheduled for then (or a reminder stands in)."""
        valid, problem = check_args(act, args)
        if problem:
            return Reply(problem, Outcome.REFUSED, "bad_argument", {"act": act.name})
        when = found.when.replace(microsecond=0)
        if act.destructive:
            return self._remind_instead(
                decision, act, found, context,
                f"I won't {describe(act)} later without a yes from you then, so I did "
                "nothing now.",
            )
        if HomeActs(self.ctx.settings).bulk_question(act, valid, _room(context)):
            # "turn off everything in the house at 11": asked first when said for now, so
            # never run later unasked
            return self._remind_instead(
                decision, act, found, context,
                "I won't switch everything in the home later without a yes from you then, "
                "so I did nothing now.",
            )
        if act.name in TOGGLES:
            return self._remind_instead(
                decision, act, found, context,
                f"I can't {describe(act)} later by myself: it works both ways, so I did "
                "nothing now.",
            )
        task = _task(decision, found)
        return self._schedule(act, valid, when, context, task, f"OK, I'll {task}")

    # for a while -----------------------------------------------------------
    def for_a_while(
        self,
        decision: Decision,
        act: ActSpec,
        args: dict[str, str],
        found: TimeResolution,
        context: TurnContext | None,
    ) -> Reply | None:
        """The act runs now; its opposite is scheduled for the end of the while. An act
        with no opposite here runs now, and the reply says the while is not kept. None: a
        destructive act, asked about as it would have been."""
        if act.destructive:
            return None
        opposite = self.ctx.settings.acts.get(OPPOSITES.get(act.name, ""))
        valid, problem = check_args(opposite, args) if opposite is not None else ({}, "")
        ran = self.acts.request(act, args, _room(context), session=_session(context))
        if ran.outcome is not Outcome.DONE:
            return ran  # nothing changed: nothing to put back
        if opposite is None or opposite.destructive or problem:
            # "pause the music for five minutes" with only a play/pause toggle: done now,
            # and said plainly that nothing will undo it by itself.
            return replace(ran, text=f"{ran.text} I can't undo that by myself later, so it "
                                     "stays that way.")
        when = found.when.replace(microsecond=0)
        words = self._words(opposite, valid)
        back = self._schedule(opposite, valid, when, context, words, f"I'll {words}")
        if back.outcome is not Outcome.DONE:
            return replace(ran, text=f"{ran.text} {back.text}")
        # One change for both halves: "undo that" ends the while now (the opposite runs,
        # the row is cancelled). Cancelling the row alone would leave the sound muted for
        # good, the opposite of what was asked.
        ended = Change(
            "act.while",
            f"ran “{describe(act)}” until {stated_time(when, self.ctx.now())}",
            {"ids": [back.data["reminder_id"]], "act": opposite.name, "args": valid,
             "room": _room(context), "what": words, "at": when.strftime("%H:%M")},
        )  # fmt: skip
        return Reply(f"{ran.text} {back.text}", data={**ran.data, **back.data},
                     changes=(ended,))  # fmt: skip

    # the row -----------------------------------------------------------------
    def _schedule(
        self,
        act: ActSpec,
        args: dict[str, str],
        when: datetime,
        context: TurnContext | None,
        text: str,
        lead: str,
    ) -> Reply:
        now = self.ctx.now()
        try:
            text = check_text(text)
        except MavendError as exc:
            return Reply(f"{exc} Nothing was set.", Outcome.REFUSED)
        origin = context.satellite if context is not None and context.satellite else None
        scheduled = ScheduledAct(act.name, args, _room(context))
        reminder = self.ctx.reminders.add(text, when, now=now, act=scheduled, origin=origin)
        self.ctx.on_reminders_changed()
        left = human_duration((reminder.fire_at - now).total_seconds())
        return Reply(
            f"{lead} at {stated_time(reminder.fire_at, now)} (in {left}).",
            data={"reminder_id": reminder.id, "fire_at": reminder.due, "kind": "act",
                  "scheduled_act": scheduled.to_json()},
            changes=(set_change(reminder, now),),
        )

    def _remind_instead(
        self,
        decision: Decision,
        act: ActSpec,
        found: TimeResolution,
        context: TurnContext | None,
        why: str,
    ) -> Reply:
        task = _task(decision, found)
        slots = Slots(time=found.when.replace(microsecond=0), has_time=True, text=task,
                      kind="reminder")
        # In a reminder's words: "pause the music in 5 minutes" is no timer command.
        said = f"remind me to {task} {found.phrase}"
        reminder = replace(decision, utterance=said, intent=Intent.REMINDER, slots=slots,
                           clarify=None)
        reply = self.reminders.handle(reminder, context)
        if reply.outcome != Outcome.DONE:
            return reply
        return replace(reply, text=f"{why} {reply.text}",
                       data={**reply.data, "act": act.name, "ran": None})

    def words_for(self, scheduled: ScheduledAct) -> str:
        """A stored act's words ("unmute the sound"), its name if it is no longer allowed."""
        act = self.ctx.settings.acts.get(scheduled.fn)
        return scheduled.fn.replace("_", " ") if act is None else self._words(act, scheduled.args)

    @staticmethod
    def _words(act: ActSpec, args: dict[str, str]) -> str:
        """'unmute the sound', 'turn off the kitchen lamp': what the row will do."""
        device, room = args.get("device", ""), args.get("room", "")
        if act.name in _DEVICE_WORDS and (device or room):
            return _DEVICE_WORDS[act.name].format(device=device, room=room)
        shown = [v for v in args.values() if v]
        return describe(act) + (f" ({', '.join(shown)})" if shown else "")


# A device act's words with the thing it works on, for a row that runs it later.
_DEVICE_WORDS = {
    "device_on": "turn on the {device}",
    "device_off": "turn off the {device}",
    "lights_on": "turn on the lights in the {room}",
    "lights_off": "turn off the lights in the {room}",
    "device_mute": "mute the {device}",
    "device_unmute": "unmute the {device}",
    "device_play": "play the {device}",
    "device_pause": "pause the {device}",
    "device_open": "open the {device}",
    "device_close": "close the {device}",
    "device_oscillate": "make the {device} oscillate",
    "device_oscillate_off": "stop the {device} oscillating",
}


def _task(decision: Decision, found: TimeResolution) -> str:
    """The words that say what to do, without the time or the asking: 'lock my screen'."""
    return _ASKING.sub("", reminder_task(decision.utterance, found.phrase)) or "do it"


def _room(context: TurnContext | None) -> str:
    return context.room if context is not None else ""


def _session(context: TurnContext | None) -> str:
    return context.session if context is not None else ""
