"""Handlers: one per intent; `TurnHandler.handle(decision)` returns a short `Reply`.

    act       run an allowlisted argv (destructive ones after a spoken "yes")
    reminder  set one (timers too); list, cancel, snooze
    fact      log key/value/time; note: text + embedding
    query     answer from the clock, reminders, facts, notes (recall), or the LLM
    chat      a short LLM reply, behind the same personal boundary as a query's (a chat
              turn that asks about the user is answered from their data or not at all);
              system: stop, cancel, repeat, help, volume, listening

State lives in the shared SQLite database (`mavend.state.store`), so `mavend say`
and the daemon see the same facts, notes and reminders.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from mavend.answers import Answer, Answers
from mavend.handlers.act import ActHandler
from mavend.handlers.chat import ChatHandler
from mavend.handlers.common import (
    HandlerContext,
    Outcome,
    Reply,
    TurnContext,
    content_stems,
    looks_like_question,
)
from mavend.handlers.confirm import op_room, pending_op
from mavend.handlers.fact import FactHandler
from mavend.handlers.forget import ForgetCommand, ForgetHandler, parse_forget
from mavend.handlers.note import NoteHandler
from mavend.handlers.query import QueryHandler
from mavend.handlers.reminder import ReminderCommand, ReminderHandler, parse_command
from mavend.handlers.reminder_cancels import NO_LONGER_TAIL
from mavend.handlers.reminder_days import DaysCommand
from mavend.handlers.system import SystemHandler
from mavend.handlers.timed import TimedActs
from mavend.home.devices import outdoor_room
from mavend.router.decision import PERSONAL_SOURCES, Decision, Intent, Slots, Source, Stage
from mavend.router.grammar import normalize
from mavend.router.personal import boundary_allows_general

__all__ = [
    "ForgetCommand",
    "HandlerContext",
    "Outcome",
    "ReminderCommand",
    "Reply",
    "TurnContext",
    "TurnHandler",
    "parse_command",
    "parse_forget",
]

# A question about the user's own things: "where's my car", "what's our wifi password".
_OWN = re.compile(r"\b(?:my|our|mine|ours|i|i'm|i've|i'd|me)\b")
_REMIND_ME = re.compile(r"^(?:remind|tell) me (?:to|about) (?P<task>\S.*?)" + NO_LONGER_TAIL)


# "when's my next physio", "what time am i seeing the dentist": asks when (never says it).
_ASKS_WHEN = re.compile(
    r"^(?:so |um |uh |hey )*(?:when(?:'s| is| are| am| do| does| will)|whens"
    r"|what (?:time|day) (?:is|are|am|do|does|will))\b(?!.*\bremind\b)"
)
# The words of a question about the reminders themselves, not about a thing reminded of.
_ABOUT_REMINDERS = frozenset(
    {"remind", "reminder", "alarm", "timer", "next", "time", "set", "go", "off", "ring",
     "due", "one", "first", "last", "upcom", "com", "s", "m", "re", "ll", "d", "ve"}
)
_OUTSIDE = re.compile(r"\b(?:outside|outdoors|out there|out)\b")


class TurnHandler:
    """Dispatches a decision to its intent's handler."""

    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx
        self.acts = ActHandler(ctx)
        self.reminders = ReminderHandler(ctx)
        self.facts = FactHandler(ctx)
        self.notes = NoteHandler(ctx)
        self.chat = ChatHandler(ctx)
        self.query = QueryHandler(ctx, self.chat, self.reminders)
        self.system = SystemHandler(ctx, self.acts)
        self.forget = ForgetHandler(ctx)
        self.timed = TimedActs(ctx, self.acts, self.reminders)
        # What is worked out (a sum, a unit, the time in a city) or looked up in a
        # configured live source is answered here, never by a model's guess.
        self.answers = Answers(ctx.settings, ctx.tz)
        # Rooms above this package (mavend.lists) that ask yes/no questions of their own:
        # room -> (the intent a yes is logged as, what runs it).
        self.rooms: dict[str, tuple[Intent, Callable[[str, Mapping[str, Any]], Reply]]] = {}

    def handle(self, decision: Decision, context: TurnContext | None = None) -> Reply:
        clarify = decision.clarify
        if clarify is not None and clarify.kind != "slot":
            # The router could not tell what is wanted: ask its question, unless it is a
            # question about the user's own things that their own data answers.
            kept = self._answered_from_own(decision.utterance)
            return kept if kept is not None else Reply(clarify.question, Outcome.ASKED)
        intent = decision.intent
        if intent in (Intent.FACT, Intent.NOTE) and looks_like_question(decision.utterance):
            # A question is never stored: "where did I put my passport" routed
            # as a note is a query about notes. The decider placed it in the user's
            # own data, so it is personal: it is answered from there or not at all.
            source = Source.FACTS if intent == Intent.FACT else Source.NOTES
            return self.query.handle(replace(decision, source=source, personal=True))
        if intent == Intent.REMINDER and decision.stage is not Stage.GRAMMAR and _ASKS_WHEN.match(
                normalize(decision.utterance)):
            # "when's the next time i'm seeing the physio" asks about a reminder; a decider
            # that took it for one to set asked "When should I remind you?"
            return self._when_reminded(decision)
        if intent in (Intent.QUERY, Intent.CHAT) and decision.source not in PERSONAL_SOURCES:
            computed = self.computed(decision)
            # Worked out here, never by a model; but a "live" question about the user
            # ("the score from the kids' match") is about their data, not the world's,
            # unless a grammar anchored the world ("search the web for ...").
            live = computed is not None and computed.data.get("skill") == "live"
            # The weather is nobody's own data, whoever asks ("have we got frost on the
            # way" said "I don't know: I have nothing stored about that")
            weather = live and computed.data.get("topic") == "weather"
            if live and (sensed := self._read_outdoors(decision, computed)) is not None:
                return sensed  # no weather source: a sensor in the garden answers
            if computed is not None and not (live and not weather
                                             and not boundary_allows_general(decision)):
                return computed
        if intent == Intent.SYSTEM and (kept := self._reminder_taken_back(decision, context)):
            return kept
        if intent in (Intent.ACT, Intent.SYSTEM):
            timed = self.timed.handle(decision, context)
            if timed is not None:  # for later, or for a while (mavend.handlers.timed)
                return timed
        if intent == Intent.ACT:
            return self.acts.handle(decision, context)
        if intent == Intent.REMINDER:
            return self.reminders.handle(decision, context)
        if intent == Intent.FACT:
            saved = self.facts.handle(decision)
            if saved is not None:
                return saved
            # No key/value found: keep the words as a note rather than lose them.
            return self.notes.save(decision.utterance.strip(), prefix="Saved as a note")
        if intent == Intent.NOTE:
            return self.notes.handle(decision)
        if intent == Intent.QUERY:
            return self.query.handle(decision)
        if intent == Intent.SYSTEM:
            return self.system.handle(decision, context)
        # Chat is general knowledge too: out through the query handler's one way out.
        return self.query.chat_turn(decision)

    def _reminder_taken_back(
        self, decision: Decision, context: TurnContext | None
    ) -> Reply | None:
        """"don't remind me to X" when a reminder to X is set: that one is cancelled."""
        slots = decision.slots
        if slots.fn != "withdrawn" or slots.args.get("kind") != "negated":
            return None
        asked = _REMIND_ME.match(normalize(slots.text))
        if asked is None:
            return None
        return self.reminders.taken_back(asked["task"], context.session if context else "")

    def _answered_from_own(self, said: str) -> Reply | None:
        """ "where's my car" read as out of reach, or between a question and a log: when
        the user's own facts or notes answer it ("my car is in bay 42" was kept), that is
        the answer. Only a question naming the user's own ("my", "our", "I"); only what
        recall finds above its floor; nothing is written and no model is asked."""
        if not looks_like_question(said) or not _OWN.search(normalize(said)):
            return None
        return self.query.from_own_data(said.strip())

    def _read_outdoors(self, decision: Decision, computed: Reply) -> Reply | None:
        """ "how humid is it outside" with no [weather] source, when a sensor out of
        doors reads it (or the home's only sensor of that kind, when no place was said):
        its reading, through the device_read act like any other, never a guess."""
        data = computed.data
        if data.get("source") != "" or not data.get("now") or data.get("place"):
            return None
        quantity = data.get("ask")
        if quantity not in ("temperature", "humidity") or self.ctx.settings.acts.get(
            "device_read") is None:
            return None
        outside = bool(_OUTSIDE.search(normalize(decision.utterance)))
        room = outdoor_room(self.ctx.settings.devices, str(quantity), outside=outside)
        if not room:
            return None
        slots = Slots(fn="device_read", has_fn=True, args={"quantity": str(quantity), "room": room},
                      text=decision.slots.text)
        return self.acts.handle(replace(decision, intent=Intent.ACT, slots=slots))

    def _when_reminded(self, decision: Decision) -> Reply:
        """The reminder a question names, its time; a question about one that is not
        set is said so (it read the other reminders out, as if they answered it)."""
        questions = self.reminders.questions
        said = decision.utterance
        found = questions.time_left(said) or questions.when_is(said)
        if found is not None:
            return found
        if content_stems(said) - _ABOUT_REMINDERS:
            return Reply("I don't have a reminder about that.", data={"reminders": []})
        return self.query.handle(replace(decision, intent=Intent.QUERY,
                                         source=Source.REMINDERS, personal=True))

    def computed(self, decision: Decision) -> Reply | None:
        """The answer mavend works out or looks up itself (mavend.answers), or None."""
        text = decision.slots.text.strip() or decision.utterance.strip()
        answer = self.answers.answer(text, self.ctx.now())
        return None if answer is None else answer_reply(answer)

    def command(
        self, command: ReminderCommand | DaysCommand, context: TurnContext | None = None
    ) -> Reply:
        return self.reminders.command(command, context)

    def confirmed(self, pending: Mapping[str, Any]) -> tuple[Intent, Reply]:
        """A yes to a stored question (handlers.confirm): the room that asked runs it."""
        op = pending_op(pending)
        room = op_room(op)
        if room == "act":
            return Intent.ACT, self.acts.run_confirmed(pending)
        if room == "forget":
            return Intent.SYSTEM, self.forget.confirmed(op, pending)
        if room == "reminders":
            return Intent.REMINDER, self.reminders.confirmed(op, pending)
        if room in self.rooms:
            intent, run = self.rooms[room]
            return intent, run(op, pending)
        return Intent.SYSTEM, Reply(
            "That question is from another version of mavend; ask again.", Outcome.REFUSED
        )


def answer_reply(answer: Answer) -> Reply:
    """A computed answer as a reply. A live fact with no source is an honest answer
    (done); a source that failed is unavailable, like any missing service."""
    failed = not answer.available and "error" in answer.data
    return Reply(
        answer.text,
        Outcome.UNAVAILABLE if failed else Outcome.DONE,
        "source_failed" if failed else "",
        data={"skill": answer.skill, "available": answer.available, **dict(answer.data)},
    )
