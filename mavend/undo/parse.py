"""What "undo" sounds like: taking the last change(s) back, or asking what was done.

Exact phrasings only (stage 0, no model): a bare "undo", "undo that", "take that back",
"no, undo the last two", "redo", "what did you just do". A sentence that goes on about
something else ("undo the knot in the rope", "what did you do at the weekend") is not one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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


# "don't cancel it" said just after it was cancelled: which verbs name which changes. A
# change is named only by the verb that made it (a "don't turn it off" after a reminder
# was set takes nothing back).
_NAMED_BY: tuple[tuple[re.Pattern[str], tuple[str, ...], str], ...] = tuple(
    (re.compile(verb), kinds, summary)
    for verb, kinds, summary in (
        (r"^(?:cancel|delete|remove|clear|stop|scrap|drop|get rid of|erase|forget|take)\b",
         ("reminder.cancel", "note.delete", "fact.delete", "list.remove", "list.tick"), ""),
        (r"^(?:(?:turn|switch|shut|put|power) (?:\S+ ){0,4}?off|(?:turn|switch|shut|power) "
         r"off)\b", ("device.set",), "turned off"),
        (r"^(?:(?:turn|switch|put|power) (?:\S+ ){0,4}?on|(?:turn|switch|power) on)\b",
         ("device.set",), "turned on"),
        (r"^(?:add|put)\b", ("list.add", "note.add"), ""),
        (r"^(?:set|remind|wake|start|make)\b", ("reminder.set",), ""),
        (r"^(?:move|change|push|shift|reschedule|rename|snooze)\b",
         ("reminder.edit", "note.edit", "fact.edit", "list.edit"), ""),
        (r"^(?:tick|check|cross)\b", ("list.tick",), ""),
    )
)


_ANOTHER_CLAUSE = re.compile(r"\b(?:just|instead|rather|but|and|then)\b|,")


def names_the_change(negated: str, kinds: Sequence[str], summaries: Sequence[str]) -> bool:
    """Whether "don't <negated>" names the kind of change just made ("cancel it" and a
    reminder cancelled; "turn the lamp off" and a lamp turned off)."""
    said = " ".join(negated.lower().split())
    words = said.split()
    if not words or words.count(words[0]) > 1 or _ANOTHER_CLAUSE.search(said):
        # "don't set it for 6, set it for 7", "don't cancel it, just move it": what is
        # wanted instead is said too, and taking the first back alone would leave neither
        return False
    for verb, named_kinds, summary in _NAMED_BY:
        if not verb.match(said):
            continue
        named = _content(" ".join(words[1:]))  # "turn the lamp off": the lamp
        if any(k in named_kinds and (not summary or s.startswith(summary)) and _about(named, s)
               for k, s in zip(kinds, summaries, strict=True)):
            return True
    return False


# Words that name no thing: "cancel it", "don't remind me about that any more".
_NO_THING = frozenset({
    "it", "that", "this", "them", "those", "these", "one", "me", "us", "the", "a", "an", "my",
    "our", "your", "to", "about", "for", "of", "on", "off", "up", "down", "please", "any",
    "more", "anymore", "again", "now", "then", "there", "yet", "at", "in", "get", "rid",
})


def _content(words: str) -> list[str]:
    return [w for w in words.split() if w.isalpha() and w not in _NO_THING]


def _about(named: list[str], summary: str) -> bool:
    """Whether the words name what the change was about: "cancel it" any change of its
    kind; "remind me to feed the cat" only a change whose summary says so."""
    said = set(summary.lower().replace("(", " ").replace(")", " ").split())
    return all(w in said or w.rstrip("s") in said for w in named)
