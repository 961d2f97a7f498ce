"""A note corrected in the next breath: "the spare key is under the blue pot", then
"actually it's under the red pot now". The second turn names no subject of its own ("it");
the previous note's subject takes its place, and it is kept as a note of its own that
says it corrects ("the spare key is now under the red pot"), which recall reads as
superseding the older one. ("no wait, it's ..." is a withdrawal: mavend.router.negation.)

Pure: the topic the note turn left and the words said; the caller decides and handles.
"""

from __future__ import annotations

import re

from mavend.router.decision import Intent
from mavend.router.grammar import normalize

# "the spare key is under ...", "my keys are in ...", "the car's in the garage"
_SUBJECT = re.compile(r"^(?P<subject>(?:the|my|our|your)\s+.+?)(?:\s+(?P<verb>is|are)|'s)\s+\S")
# "actually it's under the red pot now", "no wait they're in the drawer"
_IT_IS = re.compile(
    r"^(?:(?:actually|oh|sorry|um|uh|well|hmm|oops|correction)\s+)*"
    r"(?:(?P<one>it's|it is|its|it s)|(?P<many>they're|they are|theyre))\s+(?P<rest>.+?)"
    r"(?:\s+now)?$"
)

# What a corrected value looks like: a place ("under the red pot") or a number ("4472");
# "it's raining" right after a note is no correction of it.
_NEW_VALUE = re.compile(
    r"^(?:in|on|under|behind|beside|next to|by|near|inside|upstairs|downstairs|at|over|above|"
    r"below|with|in the|on the|underneath|outside|back in|back on)\b|^\d"
)


def note_subject(note: str) -> str:
    """The thing a note says where or what it is ("the spare key"), or ""."""
    m = _SUBJECT.match(normalize(note))
    return m["subject"] if m else ""


def corrected_note(previous: str, said: str, *, marked: bool = True) -> str:
    """The note `said` makes of the previous one (`previous`: its words), or "" when it
    is no such correction. `marked`: say "now" (a note; a fact's key takes the new value
    without it)."""
    subject = note_subject(previous)
    m = _IT_IS.match(normalize(said))
    if not subject or m is None or not _NEW_VALUE.match(m["rest"]):
        return ""
    plural = re.match(r"^\S+\s+\S+s$", subject) is not None or subject.endswith(" keys")
    verb = "are" if m["many"] or plural else "is"
    # "is now": what recall reads as a correction of what was kept before
    return f"{subject} {verb}{' now' if marked else ''} {m['rest']}"


def is_note(intent: str) -> bool:
    """A turn that kept something said: a note, or a fact ("my glasses are on the piano")."""
    return intent in (str(Intent.NOTE), str(Intent.FACT))
