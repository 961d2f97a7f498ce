"""query: answer from the clock, the reminders, the facts, the notes; general ones by the LLM.

A personal question ("where is my passport") is answered from stored state
only; with nothing relevant stored the answer is "I don't know", never a
model's guess. Only a general question ("what is the capital of France") goes
to the LLM.
"""

from __future__ import annotations

import re

from mavend.handlers.chat import ChatHandler
from mavend.handlers.common import HandlerContext, Outcome, Reply
from mavend.handlers.fact import FactQueries
from mavend.handlers.recall import Recall, phrase_answer
from mavend.handlers.reminder import ReminderHandler
from mavend.router.cascade import source_for
from mavend.router.decision import Decision, Intent, Source
from mavend.router.grammar import normalize

_PERSONAL = re.compile(r"\b(?:i|me|my|mine|myself|we|our|us)\b")
DONT_KNOW = "I don't know: I have nothing stored about that."


class QueryHandler:
    def __init__(self, ctx: HandlerContext, chat: ChatHandler, reminders: ReminderHandler):
        self.ctx = ctx
        self.chat = chat
        self.reminders = reminders
        self.facts = FactQueries(ctx)
        self.recall = Recall(ctx)

    def handle(self, decision: Decision) -> Reply:
        question = decision.slots.text.strip() or decision.utterance.strip()
        source = decision.source or source_for(Intent.QUERY, question)
        if source == Source.CLOCK:
            return self.clock()
        if source == Source.REMINDERS:
            return self.reminders.list()
        if source == Source.GENERAL:
            return self.chat.answer(question)
        if (answer := self.facts.answer(question)) is not None:
            return answer
        if found := self.recall.search(question):
            return Reply(
                phrase_answer(question, found, self.ctx),
                data={"recalled": [f"{r.kind}:{r.id}" for r in found]},
            )
        if source in (Source.FACTS, Source.NOTES) or _PERSONAL.search(normalize(question)):
            return Reply(DONT_KNOW, Outcome.DONE, data={"recalled": []})
        return self.chat.answer(question)

    def clock(self) -> Reply:
        now = self.ctx.now()
        return Reply(f"It's {now:%H:%M} on {now:%A}, {now.day} {now:%B}.")
