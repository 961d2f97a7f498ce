"""The personal boundary: is a question about the user?

A personal question is answered from the user's own data (facts, notes, reminders) or
not at all; it reaches general knowledge (the LLM's own, a remote backend, a web tool)
only when a stage-0 grammar anchored that destination. The router records the judgment
on the decision (`Decision.personal`) and the query handler enforces it, in one place.

The judgment only ever narrows: each signal below can mark a question personal, none
can clear it. So a decider that guesses "general" for a question about the user does
not open the way; it takes every signal agreeing that the question is not about the
user.

Signals:
  * a decider named a personal source (the LLM's `source`, the classifier's source
    head): they read meaning, so they catch "when was the dentist appointment";
  * the words claim something as the speaker's ("my", "mine", "our"): cheap, and
    independent of any model. Not "i" or "me": "how do i boil an egg" and "tell me
    how far the moon is" are general questions, and a boundary that refuses those
    teaches users to route around it.
The handler adds a third at answer time: the user's own store holds something about it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mavend.router.decision import PERSONAL_SOURCES, Decision, Intent, Source

_POSSESSIVE = re.compile(r"\b(?:my|mine|myself|our|ours|ourselves)\b")


def refers_to_speaker(text: str) -> bool:
    """The words claim something as the speaker's ("my", "our"): a model-free signal."""
    return _POSSESSIVE.search(" ".join(text.lower().split())) is not None


def judge_personal(text: str, named: Iterable[Source | str]) -> bool:
    """Personal if any decider named a personal source, or the words name the speaker."""
    known = {s.value for s in Source}
    if any(Source(s) in PERSONAL_SOURCES for s in named if s in known):
        return True
    return refers_to_speaker(text)


def boundary_allows_general(decision: Decision) -> bool:
    """May this decision's question be answered by general knowledge? The boundary."""
    return decision.source_anchored or not decision.personal


def goes_to_general_knowledge(decision: Decision) -> bool:
    """With nothing stored, would the handlers answer this turn from general knowledge?

    A chat reply is the LLM's own knowledge too. A query goes there unless its source
    is the clock, the reminders or the user's own data, or the boundary stops it.
    For the evaluation's personal-boundary figure; the handlers decide for real."""
    if decision.clarify is not None and decision.clarify.kind != "slot":
        return False
    if decision.intent is Intent.CHAT:
        return True
    if decision.intent is not Intent.QUERY:
        return False
    if decision.source == Source.GENERAL and decision.source_anchored:
        return True
    if decision.source in (Source.CLOCK, Source.REMINDERS, *PERSONAL_SOURCES):
        return False
    return boundary_allows_general(decision)
