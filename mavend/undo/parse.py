"""What "undo" sounds like: taking the last change(s) back, or asking what was done.

Exact phrasings only (stage 0, no model): a bare "undo", "undo that", "take that back",
"no, undo the last two", "redo", "what did you just do". A sentence that goes on about
something else ("undo the knot in the rope", "what did you do at the weekend") is not one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from mavend.language.numbers import TEENS, UNITS

MAX_TURNS = 5  # "undo the last five" at most: a bigger erasure is what `forget` is for

_LEAD = r"(?:(?:no|nope|oops|oh no|wait|hang on|sorry|ugh|um|uh|please|hey)[, ]+)*"
_TAIL = r"(?:[, ]+(?:please|thanks|thank you|now|again))*"
_THAT = (
    r"(?: (?:that|this|it|the last (?:one|thing|change|command)|your last (?:change|command)"
    r"|what you (?:just )?did|what you just (?:set|changed|added|wrote)))?"
)
_UNDO = re.compile(
    rf"^{_LEAD}(?:undo|take (?:that|it) back|revert|reverse) ?{_THAT}{_TAIL}$"
)
_UNDO_N = re.compile(
    rf"^{_LEAD}(?:undo|take back|revert|reverse) (?:the )?last (\w+)(?: (?:things|changes|ones"
    rf"|commands|turns))?{_TAIL}$"
)
_REDO = re.compile(rf"^{_LEAD}(?:redo(?: that| it)?|undo (?:the|that|your) undo|do (?:that|it) "
                   rf"again after all){_TAIL}$")  # fmt: skip
_WHAT = re.compile(
    rf"^{_LEAD}(?:what (?:did you (?:just )?(?:do|change|set|write)|have you (?:just )?"
    rf"(?:done|changed)|was (?:the last thing|that) you (?:just )?did|did that (?:just )?do)"
    rf"|what was your last (?:change|command)){_TAIL}$"
)


@dataclass(frozen=True)
class UndoCommand:
    action: Literal["undo", "redo", "what"]
    turns: int = 1


def parse_undo(said: str) -> UndoCommand | None:
    """The command in `said` (normalized: lower case, no end punctuation), or None."""
    text = " ".join(said.lower().replace("?", " ").replace("!", " ").replace(".", " ").split())
    if _WHAT.match(text):
        return UndoCommand("what")
    if _REDO.match(text):
        return UndoCommand("redo")
    if _UNDO.match(text):
        return UndoCommand("undo")
    found = _UNDO_N.match(text)
    if found:
        word = found[1]
        count = {"couple": 2, "few": 3, **UNITS, **TEENS}.get(word)
        if count is None and word.isdigit():
            count = int(word)
        if count is not None and count >= 1:
            return UndoCommand("undo", min(count, MAX_TURNS))
    return None
