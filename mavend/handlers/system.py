"""system: stop, cancel, repeat, help, louder/quieter, pause/resume listening."""

from __future__ import annotations

import re

from mavend.handlers.act import ActHandler
from mavend.handlers.common import (
    HandlerContext,
    Outcome,
    Reply,
    TurnContext,
    human_duration,
    human_list,
)
from mavend.handlers.confirm import confirm_key
from mavend.language.timeparse import find_time
from mavend.router.decision import Decision
from mavend.router.grammar import normalize
from mavend.router.negation import Withdrawal
from mavend.router.slots import SYSTEM_COMMANDS
from mavend.scheduler import spoken_time

VOLUME_ACTS = {"louder": "volume_up", "quieter": "volume_down"}


# "what did I just say", "what did you hear": the user's last words, said back.
_HEARD = re.compile(
    r"\b(?:what did i (?:just )?say|what did you (?:just )?hear(?: me say)?|what was that i said"
    r"|did you hear (?:what i said|me))\b"
)

# "are you still there", "can you hear me": said to check it is listening (it said "I
# don't know that command" and read the whole help out)
_STILL_THERE = re.compile(
    r"^(?:(?:hello|hey|hi|um|uh|so)\s+)*(?:are you (?:still )?(?:there|here|listening|awake"
    r"|with me|on)|(?:you|u) (?:still )?there|can you (?:still )?hear me|is (?:this|it) "
    r"(?:thing )?(?:on|working))(?:\s+(?:mate|then|now))?\??$"
)


class SystemHandler:
    def __init__(self, ctx: HandlerContext, acts: ActHandler):
        self.ctx = ctx
        self.acts = acts

    def handle(self, decision: Decision, context: TurnContext | None = None) -> Reply:
        command = decision.slots.fn if decision.slots.has_fn else ""
        if command in ("stop", "cancel"):
            session = context.session if context is not None else ""
            dropped = self.ctx.session.pop(confirm_key(session)) is not None
            if command == "stop":
                return Reply("Okay.")
            return Reply("Cancelled." if dropped else "There's nothing to cancel.")
        if command == "withdrawn":
            # A negated or withdrawn command (mavend.router.negation): nothing ran.
            kind = str(decision.slots.args.get("kind", "withdrawn"))
            return Reply(Withdrawal(kind, decision.slots.text).reply(), data={"ran": None})
        if command == "repeat":
            return self.repeat()
        if command == "help":
            return self.help()
        if command in VOLUME_ACTS:
            reply = self.acts.run_named(VOLUME_ACTS[command])
            if reply is None:
                return Reply(
                    f"Volume control isn't on my list of allowed actions "
                    f"(add a {VOLUME_ACTS[command]} act to the config).",
                    Outcome.REFUSED,
                    "not_allowed",
                )
            return reply
        if command == "pause_listening":
            return self.pause_listening(decision, context)
        if command == "resume_listening":
            return Reply("Listening again.", data={"listening": True})
        if command and command not in SYSTEM_COMMANDS:
            # An allowlisted act the words named (router/slots.py): the act handler runs it.
            return self.acts.handle(decision, context)
        if _HEARD.search(normalize(decision.utterance)):
            return self.heard()
        if _STILL_THERE.match(normalize(decision.utterance)):
            return Reply("Yes, I'm here.", data={"listening": True})
        return Reply(f"I don't know that command. {self.help().text}", Outcome.ASKED,
                     spoken="I don't know that command. Say help to hear what I can do.")

    def heard(self) -> Reply:
        """ "what did I just say": the words heard last turn (it answered "I don't know that
        command" and the whole help)."""
        last = self.ctx.turns.last()
        if last is None or not last.utterance:
            return Reply("I haven't heard anything from you yet.")
        return Reply(f"You said: “{last.utterance}”.", data={"turn_id": last.id})

    def pause_listening(self, decision: Decision, context: TurnContext | None) -> Reply:
        """The daemon lets go of the microphone on `data["listening"]` False, until
        `resume_at` when the words named an end ("for twenty minutes", "until six").
        Once it has, no spoken "resume listening" can be heard: the reply says how to."""
        if context is not None and context.satellite:
            return Reply(
                "I can only stop listening on the box's own microphone: say it there, or "
                "run mavend pause.",
                Outcome.REFUSED,
                "not_here",
            )
        now = self.ctx.now()
        found = find_time(decision.utterance, now)
        until = found.when if found is not None and found.when > now else None
        data = {"listening": False, "resume_at": until.isoformat() if until else None}
        if until is None:
            return Reply("I've stopped listening for the wake word. To turn it back on, run "
                         "mavend resume.", data=data)
        return Reply(
            f"I've stopped listening for {human_duration((until - now).total_seconds())}, "
            f"until {spoken_time(until, now)}.",
            data=data,
        )

    def repeat(self) -> Reply:
        # Called before this turn is logged: the last logged turn is the one before.
        last = self.ctx.turns.last()
        if last is None or not last.reply:
            return Reply("I haven't said anything yet.")
        return Reply(last.reply, data={"turn_id": last.id})

    def help(self) -> Reply:
        commands = [c.replace("_", " ") for c in self.ctx.system_commands]
        say = f" Say {human_list(commands, conjunction='or')} any time." if commands else ""
        return Reply(
            "I can set reminders and timers, take notes and find them again, log things "
            "like 'I drank a coffee' and answer 'when did I last' or 'how many today', "
            f"answer questions, and {self.acts.allowed()}.{say}"
        )
