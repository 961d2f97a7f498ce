"""A note corrected in the next breath: "the spare key is under the blue pot", then
"actually it's under the red pot now". The second turn names no subject of its own ("it");
the previous note's subject takes its place, and it is kept as a note of its own that
says it corrects ("the spare key is now under the red pot"), which recall reads as
superseding the older one. ("no wait, it's ..." is a withdrawal: mavend.router.negation.)

Pure: the topic the note turn left and the words said; the caller decides and handles.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

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


# "change the wifi password to seahorse12", "update my locker code to 1234", "the wifi
# password has changed to ...", "the new wifi password is ...": a kept value, said anew.
_CHANGE = re.compile(
    r"^(?:(?:please|can you|could you|actually|ok|okay|so)\s+)*(?:change|update)\s+"
    r"(?P<subject>(?:the|my|our)\s+.+?)\s+to\s+(?P<value>\S.*?)(?:\s+please)?$"
    r"|^(?P<subject2>(?:the|my|our)\s+.+?)\s+(?:has|have)?\s*changed\s+to\s+(?P<value2>\S.*)$"
    r"|^(?P<own>the|my|our)\s+new\s+(?P<subject3>.+?)\s+(?:is|are)\s+(?P<value3>\S.*)$"
)


def _bare(subject: str) -> str:
    return re.sub(r"^(?:the|my|our|your)\s+", "", subject).strip()


def changed_value(said: str, kept: Callable[[], Iterable[str]]) -> str:
    """ "the wifi password is now seahorse12" for "change the wifi password to
    seahorse12", when something kept (`kept()`: notes' words and facts' keys) says what
    the wifi password is; "" otherwise ("change the channel to bbc" keeps nothing). It was
    "Sorry, I can't help with that here", and the old password stayed the answer."""
    m = _CHANGE.match(normalize(said))
    if m is None:
        return ""
    subject = m["subject"] or m["subject2"] or f"{m['own']} {m['subject3']}"
    value = m["value"] or m["value2"] or m["value3"]
    wanted = _bare(subject)
    if not any(_bare(note_subject(text) or text) == wanted for text in kept()):
        return ""
    plural = re.match(r"^\S+\s+\S+s$", subject) is not None
    return f"{subject} {'are' if plural else 'is'} now {value}"

