"""Reading a turn as a reply to the previous one: a correction, or a clarify answer.

    "no, I meant set a reminder"        -> the previous utterance, as a reminder
    "wrong light, the kitchen one"      -> the previous act, with kitchen for its slot
    "no, I meant turn the kitchen on"   -> a whole new utterance, routed
    "take a note" (after "should I set a reminder or take a note?") -> note

Deliberately narrow: only explicit cues count, so an ordinary request that
happens to start with "no" ("no more music") is never taken for a correction.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mavend.memory.text import tokens
from mavend.router.decision import Intent
from mavend.router.gate import INTENT_PHRASES

# "no, X" needs the punctuation (typed) or an explicit "I meant"/"I said" (spoken).
_CUES = (
    re.compile(r"^(?:no|nope|nah)\s*[,.!;:\u2014-]+\s*(?P<rest>.+)$"),
    re.compile(
        r"^(?:(?:no|nope|nah|sorry)[\s,.!]+)?(?:i\s+meant|i\s+mean|i\s+said|i\s+wanted)"
        r"[\s,:]+(?P<rest>.+)$"
    ),
    re.compile(
        r"^(?:that'?s|that\s+is|this\s+is|you\s+got\s+it)\s+(?:wrong|not\s+(?:it|right|what\s+i"
        r"\s+(?:meant|said|wanted)))[\s,.!;:\u2014-]*(?P<rest>.*)$"
    ),
    re.compile(r"^wrong(?:\s+(?P<what>\w+))?\s*[,.!;:\u2014-]+\s*(?P<rest>.+)$"),
    re.compile(r"^wrong\s+(?P<what>\w+)\s+(?P<rest>(?:the|it'?s|i\s+meant)\b.+)$"),
    re.compile(r"^not\s+that(?:\s+one)?\s*[,.!;:\u2014-]+\s*(?P<rest>.+)$"),
)
# Leading words of the corrected part that carry nothing ("I meant the kitchen one").
_LEAD = re.compile(
    r"^(?:i\s+meant|i\s+mean|i\s+said|i\s+wanted|it\s+was|it'?s|it\s+is|make\s+it"
    r"|as|use|the|to)\s+"
)
_TRAIL = re.compile(r"\s+(?:one|please|instead)$")

# Words that name an intent when the user answers or corrects with a few words.
_INTENT_WORDS: dict[Intent, frozenset[str]] = {
    Intent.REMINDER: frozenset({"reminder", "remind", "timer", "alarm"}),
    Intent.NOTE: frozenset({"note", "notes", "memo"}),
    Intent.FACT: frozenset({"log", "fact", "record", "logged"}),
    Intent.QUERY: frozenset({"question", "answer", "asking", "query"}),
    Intent.CHAT: frozenset({"chat", "chatting", "talking"}),
    Intent.ACT: frozenset({"action", "do", "run", "doing"}),
    Intent.SYSTEM: frozenset({"assistant"}),
}
# A label is intent words and these only: "take a note", "a reminder please".
# Any other word ("jot down rice") makes it a request of its own.
_FILLER = """a an the it that this one please yes yeah set take make just as i meant mean want
wanted was is to me something now save add create keep s so ok okay oh sorry like should you"""
_LABEL_FILLER = frozenset(_FILLER.split())
# Beyond this many words a corrected part is a whole new request, not a label.
MAX_LABEL_WORDS = 5
_FIRST = frozenset({"first", "former"})
_SECOND = frozenset({"second", "latter", "other"})
_YES = frozenset({"yes", "yeah", "yep", "yup", "sure", "right", "correct", "exactly"})


@dataclass(frozen=True)
class Correction:
    """What the user said instead. Exactly one of intent / words / text is the point."""

    rest: str  # the corrected part, as said
    intent: Intent | None  # "no, I meant a reminder": the intent, named
    text: str  # "no, I meant turn on the radio": a whole utterance to route


def parse_correction(utterance: str) -> Correction | None:
    said = " ".join(utterance.casefold().split())
    for cue in _CUES:
        match = cue.match(said)
        if match is None:
            continue
        rest = _clean(match.group("rest") or "")
        if not rest:
            return None
        intent = intent_named(rest)
        text = "" if intent is not None else rest
        return Correction(rest=rest, intent=intent, text=text)
    return None


def _clean(rest: str) -> str:
    rest = rest.strip(" ,.!?;:")
    for _ in range(3):
        rest = _LEAD.sub("", rest)
    return _TRAIL.sub("", rest).strip(" ,.!?;:")


def intent_named(text: str) -> Intent | None:
    """The one intent a short phrase names ("a reminder", "take a note"), else None."""
    words = tokens(text)
    if not words or len(words) > MAX_LABEL_WORDS:
        return None
    said = " ".join(words)
    for intent, phrase in INTENT_PHRASES.items():
        if said == phrase or said.endswith(" " + phrase):
            return intent
    keys_said = set(words) - _LABEL_FILLER
    if any(not any(w in keys for keys in _INTENT_WORDS.values()) for w in keys_said):
        return None
    named = {i for i, keys in _INTENT_WORDS.items() if keys & set(words)}
    if len(named) == 1:
        return next(iter(named))
    if named == {Intent.ACT, Intent.REMINDER} and "reminder" in words:
        return Intent.REMINDER  # "set a reminder" is not "do something"
    return None


def parse_clarify_answer(utterance: str, candidates: Sequence[Intent]) -> Intent | None:
    """The intent a reply to "should I X or Y?" picks, or None when it is not an answer."""
    words = tokens(utterance)
    if not words or len(words) > MAX_LABEL_WORDS:
        return None
    named = intent_named(utterance)
    if named is not None:
        return named
    if candidates and _FIRST & set(words):
        return candidates[0]
    if len(candidates) > 1 and _SECOND & set(words):
        return candidates[1]
    if len(candidates) == 1 and words[0] in _YES:
        return candidates[0]
    return None


def slot_values(text: str) -> list[str]:
    """The words of a corrected part, for matching against an act's slot values."""
    return tokens(text)
