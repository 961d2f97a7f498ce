"""A command the grammar knows, said around other words: after why ("it's freezing in
the garage can you put the heater on"), or instead of a negated one ("don't turn the
lamp on, turn it off"). Pure reads of the grammar; the cascade makes the decision."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

from mavend.language.timeparse import find_time
from mavend.router.decision import Intent
from mavend.router.grammar import CommandGrammar, GrammarMatch, normalize
from mavend.router.negation import withdrawal

# A why said before a command ("it's freezing in here, put the heating on") is no
# question, negation or report of someone's words: those leads never run what follows.
# It opens as a statement about how things are ("it's", "the floors are", "i'm off").
_REASON_START = frozenset({
    "it's", "its", "it", "the", "i'm", "im", "i", "we", "we're", "were", "my", "our",
    "there's", "theres", "this", "that's", "oh", "ugh", "gosh", "brr", "phew", "man", "wow",
    "so", "well",
})
_NO_REASON_WORDS = frozenset({
    "not", "don't", "dont", "didn't", "never", "no", "if", "whether", "why", "told", "said",
    "asked", "says", "say", "tell", "remind", "wonder", "should", "shouldn't", "wouldn't",
    "won't", "unless", "before", "after", "when", "while",
})
# "... open the water valve out there": the place is the one the why named
_THERE = re.compile(r"\s+(?:out|in|over|up|down) there$")


def after_reason(grammar: CommandGrammar, utterance: str) -> GrammarMatch | None:
    """"it's freezing in the garage can you put the heater on": the home command said
    after why, or None. The room named in the why is the command's when it names none
    ("... open the water valve out there"). A why that asks, negates or reports ("why
    did you turn on the light", "i told him not to ...") is none."""
    words = normalize(grammar.strip_wake_word(normalize(utterance))).split()
    if (after := _reason_after(grammar, words)) is not None:
        return after
    if len(words) < 4 or words[0] not in _REASON_START:
        return None
    for cut in range(2, len(words) - 1):
        lead = words[:cut]
        if _NO_REASON_WORDS.intersection(lead):
            return None  # every longer lead holds it too
        rest = _THERE.sub("", " ".join(words[cut:])).strip()
        room = _room_in(grammar, " ".join(lead))
        tries = ([f"{rest} in the {room}"] if room else []) + [rest]
        for said in tries:
            match = grammar.match(said) if len(said.split()) >= 2 else None
            if (match is not None and match.intent is Intent.ACT and not match.wildcard
                    and withdrawal(said) is None):
                if room and "room" not in match.slots and "device" in match.slots:
                    # "its boiling in the office get the fan going": the office's fan
                    match = replace(match, slots={**match.slots, "room": room},
                                    text=" ".join(words))
                return match
    return None


_BECAUSE = frozenset({"because", "cause", "'cause", "cos", "coz", "as", "since"})


def _reason_after(grammar: CommandGrammar, words: list[str]) -> GrammarMatch | None:
    """ "turn on the bedroom fan because it's boiling": the command said before why (it
    read "the bedroom fan because it's boiling" as a device). The why opens as a
    statement; a room it names is the command's when the command names none."""
    for at, word in enumerate(words):
        if word not in _BECAUSE or at < 2 or at + 1 >= len(words):
            continue
        why = words[at + 1:]
        if why[0] not in _REASON_START or _NO_REASON_WORDS.intersection(why):
            continue
        said = " ".join(words[:at])
        match = grammar.match(said)
        if match is None or match.intent is not Intent.ACT or match.wildcard \
                or withdrawal(said) is not None:
            continue
        room = _room_in(grammar, " ".join(why))
        if room and "room" not in match.slots and "device" in match.slots:
            homed = grammar.match(f"{said} in the {room}")
            match = homed if homed is not None and homed.intent is Intent.ACT else match
        return replace(match, text=" ".join(words))
    return None


def said_instead(grammar: CommandGrammar, negated: str) -> tuple[str, GrammarMatch] | None:
    """The command said after a negated one, when both are whole commands: "turn the
    lamp on turn it off" -> "turn the lamp off" ("it" is the first one's device)."""
    words = negated.split()
    for cut in range(2, len(words) - 1):
        first = grammar.match(" ".join(words[:cut]))
        if first is None or first.intent is not Intent.ACT:
            continue
        rest = " ".join(words[cut:])
        device = first.slots.get("device", "")
        if device:
            rest = re.sub(r"\b(?:it|them)\b", f"the {device}", rest)
        second = grammar.match(rest)
        if second is not None and second.intent is Intent.ACT and withdrawal(rest) is None:
            return rest, second
    return None


def _room_in(grammar: CommandGrammar, text: str) -> str:
    padded = f" {text.replace(chr(39) + 's ', ' ')} "
    return next((room for room in grammar.rooms() if f" {room} " in padded), "")


def command_around_a_time(grammar: CommandGrammar, said: str, now: datetime) -> bool:
    """Whether `said` is a command of its own, said with or without a time around it
    ("turn on the garage heater for an hour"): then it answers no question the last turn
    asked ("Which heater?"), however well a device's name in it fits."""
    text = normalize(said)
    if grammar.match(text) is not None:
        return True
    found = find_time(text, now)
    if found is None or not found.phrase:
        return False
    rest = re.sub(rf"(?:\bfor )?\b{re.escape(normalize(found.phrase))}\b", " ", text, count=1)
    rest = " ".join(rest.split())
    match = grammar.match(rest) if rest else None
    return match is not None and match.intent is Intent.ACT
