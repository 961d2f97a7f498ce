"""query: answered where the decision says the answer lives.

`Decision.source` was named by the decider that routed the question (a grammar, the
LLM, the classifier); this handler never guesses it from the words. What each does:

    clock      the time and date here, now
    reminders  the user's pending reminders, timers and alarms
    facts      the user's facts first, then their notes; else "I don't know"
    notes      the user's notes first, then their facts; else "I don't know"
    general    anchored by a grammar ("search the web for ..."): general knowledge
               straight away; named by a model: as unknown
    unknown    the whole chain: facts, notes, then general knowledge, unless the
               question is personal

The personal boundary lives in `_general_knowledge` and nowhere else: a question the
decision marks `personal` (or whose words are about the user: `router.personal`)
reaches general knowledge (the LLM's own, a remote backend, a web tool later: all of
them through that one method) only when a grammar anchored the destination. A model's
"general" cannot open it; with nothing stored, the answer is "I don't know", never a
model's guess about the user's life. Chat turns go out through the same method
(`chat_turn`): one that asks about the user is answered from their data or not at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import date

from mavend.handlers.age import AgeQuestions
from mavend.handlers.chat import ChatHandler
from mavend.handlers.common import HandlerContext, Outcome, Reply, content_stems
from mavend.handlers.fact import FactQueries, event_objects
from mavend.handlers.own_dates import OwnDates
from mavend.handlers.recall import Recall, phrase_answer
from mavend.handlers.reminder import ReminderHandler
from mavend.home.devices import absent_device
from mavend.language.reminder_kinds import ALARM, TIMER, reminder_kind
from mavend.language.timeparse import find_time
from mavend.router.decision import PERSONAL_SOURCES, Decision, Intent, Source
from mavend.router.grammar import normalize
from mavend.router.personal import boundary_allows_general
from mavend.scheduler import spoken_time

DONT_KNOW = "I don't know: I have nothing stored about that."
_TODAY = re.compile(r"\b(?:today|tonight)\b")
# "what notes do i have", "read me my notes", "what did i ask you to remember": the notes
# themselves, newest first (recall found nothing "about" such words and said "I don't know").
_ALL_NOTES = re.compile(
    r"^(?:(?:what|which) notes (?:do i have|have i (?:got|made|saved|taken))"
    r"|(?:can you |could you |please )?(?:read|show|list|tell|give)(?: me)? (?:all )?(?:of )?"
    r"(?:my|the) notes"
    r"|what (?:did|have) i (?:ask|asked|tell|told|get|got) you to (?:remember|note(?: down)?)"
    r"|what (?:do you|have you) (?:remember|got|noted|stored|saved)(?: for me| about me)?"
    r"|(?:what is|what's|whats) in my notes|what are my notes|any notes"
    r"|how many notes (?:do i have|have i got|are there))(?: please)?$"
)
# "read my last note": the newest one alone (it said "I don't know").
_LAST_NOTE = re.compile(
    r"^(?:can you |could you |please )?(?:read|show|tell|give)(?: me)? (?:my|the) "
    r"(?:last|latest|newest|most recent) note(?: please)?$|^what was my (?:last|latest) note$"
)
NOTES_SAID = 5  # the newest this many are read out; the count says how many there are


class QueryHandler:
    def __init__(self, ctx: HandlerContext, chat: ChatHandler, reminders: ReminderHandler):
        self.ctx = ctx
        self.chat = chat
        self.reminders = reminders
        self.facts = FactQueries(ctx)
        self.ages = AgeQuestions(ctx)
        self.own_dates = OwnDates(ctx)
        self.recall = Recall(ctx)

    def handle(self, decision: Decision) -> Reply:
        question = decision.slots.text.strip() or decision.utterance.strip()
        if _ALL_NOTES.match(normalize(decision.utterance)):
            return self.notes_said()
        if _LAST_NOTE.match(normalize(decision.utterance)):
            return self.notes_said(newest=1)
        source = decision.source
        # "how many days until my sister's birthday" (routed to the clock, which said the
        # time): counted from the date kept for it, or said that none is.
        if (counted := self.own_dates.days_until(question)) is not None:
            return counted
        if source == Source.CLOCK:
            return self.clock()
        if source == Source.REMINDERS:
            # "what time is my alarm": the alarms ("You have no reminders set." was said
            # of an alarm question, and the one alarm came as "1 reminder")
            kind = reminder_kind(re.sub(r"\b(alarm|timer)s\b", r"\1", normalize(question)))
            questions = self.reminders.questions
            # "what time is my dentist reminder": that one (it read every reminder out)
            return questions.time_left(question) or questions.when_is(question) or (
                questions.list(day=self._day(question),
                               kind=kind if kind in (ALARM, TIMER) else ""))
        if source == Source.GENERAL and decision.source_anchored:
            return self._general_knowledge(decision, question)
        for step in self._chain(source):
            if (answer := step(question)) is not None:
                return answer
        if source in PERSONAL_SOURCES:  # a decider said the answer is the user's own
            return Reply(DONT_KNOW, Outcome.DONE, data={"recalled": []})
        return self._general_knowledge(decision, question)

    def notes_said(self, newest: int = 0) -> Reply:
        """The newest notes this voice may read, with how many there are; `newest`: that
        many alone ("read my last note")."""
        readable = self.ctx.readable()
        notes = [note for note, _, _ in self.ctx.notes.recent()
                 if readable is None or note.speaker in readable]
        if not notes:
            return Reply("You have no notes.", data={"notes": []})
        if newest == 1:
            last = notes[0]
            when = spoken_time(last.at, self.ctx.now())
            return Reply(f"Your last note, from {when}: “{last.text}”.",
                         data={"notes": [last.id], "count": len(notes)})
        said = "; ".join(f"“{n.text}”" for n in notes[:NOTES_SAID])
        count = "1 note" if len(notes) == 1 else f"{len(notes)} notes"
        newest = "" if len(notes) <= NOTES_SAID else f" The newest {NOTES_SAID}:"
        return Reply(f"You have {count}.{newest} {said}.",
                     data={"notes": [n.id for n in notes[:NOTES_SAID]], "count": len(notes)})

    def from_own_data(self, question: str) -> Reply | None:
        """The answer the user's own facts and notes hold, or None: never a model's."""
        for step in self._chain(Source.UNKNOWN):
            if (answer := step(question)) is not None:
                return answer
        return None

    def _day(self, question: str) -> date | None:
        """The day a calendar question names ("what's on my calendar on friday"), if any.
        On a continued turn the question is the previous one with the new day in it."""
        now = self.ctx.now()
        if _TODAY.search(question.lower()):
            return now.date()  # the resolver reads a late "today" as the next full hour
        found = find_time(question, now)
        return found.when.astimezone(now.tzinfo).date() if found is not None else None

    def _chain(self, source: Source) -> tuple[Callable[[str], Reply | None], ...]:
        """The user's own data, in the order the source suggests."""
        if source == Source.NOTES:
            return (self.ages.answer, self.reminders.questions.when_is, self._from_notes,
                    self._from_facts, self._absent_device)
        # "how long until my reminder to check the washing", routed as a question about
        # facts: the reminder it names answers it, when the words pick one.
        return (self.ages.answer, self.reminders.questions.time_left,
                self.reminders.questions.when_is, self._from_facts, self._from_notes,
                self._absent_device)

    def _absent_device(self, question: str) -> Reply | None:
        """ "is the back door locked" with no back door: said so, with the doors there are
        (it was "I don't know: I have nothing stored about that.")."""
        said = absent_device(self.ctx.settings.devices, normalize(question))
        return Reply(said, data={"absent_device": True}) if said else None

    def _from_facts(self, question: str) -> Reply | None:
        return self.facts.answer(question)

    def _from_notes(self, question: str) -> Reply | None:
        found = self.recall.search(question)
        if (objects := event_objects(question)) is not None:
            # "have i taken my pills today" is not answered by "i took my inhaler"
            found = [r for r in found if objects & content_stems(r.text)]
        if not found:
            return None
        return Reply(
            phrase_answer(question, found, self.ctx),
            data={"recalled": [f"{r.kind}:{r.id}" for r in found]},
        )

    def chat_turn(self, decision: Decision) -> Reply:
        """A chat turn: the model's reply, through the one way out. A chat turn that asks
        about the user ("the bin day", "how old is the dog now") is a question about
        their data: their facts and notes answer it, or "I don't know" does."""
        text = decision.slots.text.strip() or decision.utterance.strip()
        if not boundary_allows_general(decision, text):
            return self.handle(replace(decision, personal=True))
        return self._general_knowledge(decision, text)

    def _general_knowledge(self, decision: Decision, question: str) -> Reply:
        """The one way out to general knowledge, behind the personal boundary."""
        if not boundary_allows_general(decision, question):
            return Reply(DONT_KNOW, Outcome.DONE, data={"recalled": [], "personal": True})
        # a query is a question about the world; a chat turn is talk
        return self.chat.answer(question, factual=decision.intent is Intent.QUERY)

    def clock(self) -> Reply:
        now = self.ctx.now()
        return Reply(f"It's {now:%H:%M} on {now:%A}, {now.day} {now:%B}.")
