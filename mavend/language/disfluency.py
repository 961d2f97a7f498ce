"""Speech as said, tidied: fillers and restarts out, a word a recogniser often mishears
put back. "uh can you can you turn the uh bedroom lamp on" is "can you turn the bedroom
lamp on"; "turn of the kitchen light" is "turn off the kitchen light".

Only ever a second reading: the router tries it when the words as heard match no
command, and a tidied reading must still match a whole command to count.
"""

from __future__ import annotations

import re

from mavend.language.numbers import TEENS, TENS, UNITS

_FILLERS = re.compile(r"\b(?:uh+|um+|uhm+|er+|erm+|hmm+|mm+|ah+)\b")
# "can you can you", "turn the turn the", "the the": a run said twice in a row.
_RESTART = re.compile(r"\b((?:\w+ ){0,2}\w+) \1\b")
# Whisper hears "turn off" as "turn of" ("of" is the likelier word to its language model);
# a command to turn something "of" is never meant.
# Likewise "remind me too/two call mum" (its "to"), and "set a time for 5 minutes" or a
# timer said without its "for" ("set timer ten minute"), before a number.
_A_NUMBER = r"(?=\d|(?:an?|half|" + "|".join((*UNITS, *TEENS, *TENS)) + r")\b)"
_MISHEARD = (
    (re.compile(r"\b(turn|switch|shut|power) of\b"), r"\1 off"),
    (re.compile(r"\bremind me (?:too|two) "), "remind me to "),
    (re.compile(rf"^(set|start) (an? )?time(?:r)? (?:for )?{_A_NUMBER}"), r"\1 \2timer for "),
)


def fluent(text: str) -> str:
    """`text` (normalized: lower case, no punctuation) without fillers and restarts."""
    said = " ".join(_FILLERS.sub(" ", text).split())  # "the uh the": "the the", one space
    for _ in range(3):  # "can you can you can you"
        tidier = _RESTART.sub(r"\1", said)
        if tidier == said:
            break
        said = tidier
    for pattern, meant in _MISHEARD:
        said = pattern.sub(meant, said)
    return " ".join(said.split())


# Hesitations only: "mm" and "ah" can be words in what is kept ("10 mm screws").
_HESITATIONS = re.compile(r"\b(?:uh+|um+|uhm+|er+|erm+|hmm+)\b")


def without_fillers(text: str) -> str:
    """`text` (normalized) without the hesitations said inside it: a reminder's words
    are kept as meant ("pick up the kids", not "uh pick up the kids")."""
    return " ".join(_HESITATIONS.sub(" ", text).split())


def said_once(text: str) -> str:
    """`text` (normalized) said twice in a row, as once: "set a timer for two hours set a
    timer for 2 hours" (Whisper wrote the command twice, once in words, once in digits) is
    "set a timer for 2 hours". Anything else is returned as it is."""
    words = text.split()
    half = len(words) // 2
    if half < 3 or len(words) % 2:
        return text
    numbers = {**UNITS, **TEENS, **TENS}
    same = [str(numbers.get(w, w)) for w in words]
    return " ".join(words[half:]) if same[:half] == same[half:] else text
