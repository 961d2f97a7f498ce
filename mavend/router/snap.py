"""Snapping a misheard command onto the grammar sentence it was one word away from.

Whisper hears "lock the scream", "set a timer for ten minuets", "turn on the bedroon
lamp": one word it did not know, near a word the grammar does. Stage 0 misses such a
command and the deciders guess. Home Assistant's speech-to-phrase answers this by hearing
only the grammar's sentences; a general assistant cannot, so this snaps only what is one
small edit away (the idea, not its code):

- exactly one word is replaced, and only a word the grammar does not know (its templates,
  expansion rules and slot values), so every word the grammar reads stays as heard;
- by a grammar word within a small spelling distance (1 edit up to 4 letters, 2 beyond);
- never by a word that decides an outcome (on/off, up/down, lock/unlock, all, numbers,
  ...): turning "the lamp onn" into "on" would be a guess at the opposite of "off"; nor
  is such a word, heard, ever replaced ("never", "nothing" stay what was said);
- and only when the edited text is a full grammar match, and every edit that matches
  leads to the same command. Two different commands within reach: nothing is snapped
  (fuzzy matching never bridges two different things), and the deciders and the gate
  take the turn as heard.

A pure module: text and the grammar's matcher in, a snapped match or None out.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from rapidfuzz.distance import Levenshtein

M = TypeVar("M")

# Words whose change flips or scales what a command does: never a snap target.
_OUTCOME_TEXT = """
    on off up down in out open close closed shut lock unlock locked unlocked start stop
    stopped play pause resume unpause mute unmute next previous last first all every
    everything none nothing no not don't dont never cancel delete remove clear undo redo
    more less increase decrease raise lower brighter dimmer warmer cooler hotter colder
    high low max maximum min minimum full half yes
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy
    eighty ninety hundred thousand
"""
OUTCOME_WORDS = frozenset(_OUTCOME_TEXT.split())
_WORD = re.compile(r"[a-z][a-z']*")
SHORTEST_WORD = 3  # "a"/"i", "to"/"too": too short to tell a mishearing from a word
# A spoken command is short; a longer turn is speech for the deciders, not a command.
MAX_WORDS = 12
# Each near word costs a grammar match; more candidates than this is no single mishearing.
MAX_TRIES = 24


@dataclass(frozen=True)
class Snapped(Generic[M]):
    match: M  # the grammar's match of the edited text
    text: str  # the edited text
    heard: str  # the word as heard
    meant: str  # the grammar word put in its place


def snap_words(texts: Iterable[str]) -> frozenset[str]:
    """The words a grammar knows, from its sentence and rule templates and slot values."""
    words: set[str] = set()
    for text in texts:
        words.update(_WORD.findall(text.lower()))
    return frozenset(words)


@functools.lru_cache(maxsize=8)
def _targets(known: frozenset[str]) -> tuple[str, ...]:
    """The words a snap may put in: a grammar's, once (snap runs on every turn it misses)."""
    return tuple(sorted(w for w in known if len(w) >= SHORTEST_WORD and w not in OUTCOME_WORDS))


def allowed_distance(word: str) -> int:
    return 1 if len(word) <= 4 else 2


def snap(
    text: str,
    known: frozenset[str],
    match: Callable[[str], M | None],
    same: Callable[[M, M], bool] | None = None,
) -> Snapped[M] | None:
    """`text` (normalized, not a grammar match) with one unknown word replaced by a near
    grammar word, when that makes a full match and no other such edit means otherwise."""
    words = text.split()
    if len(words) > MAX_WORDS:
        return None
    targets = _targets(known)
    found: list[Snapped[M]] = []
    tries = 0
    for index, heard in enumerate(words):
        if heard in known or len(heard) < SHORTEST_WORD or not heard.isalpha():
            continue  # a word the grammar reads, a short one, a number: as heard
        if heard in OUTCOME_WORDS:
            continue  # "never", "nothing", "unlock": an outcome is never taken out either
        limit = allowed_distance(heard)
        for meant in targets:
            if abs(len(meant) - len(heard)) > limit:
                continue
            if Levenshtein.distance(heard, meant, score_cutoff=limit) > limit:
                continue
            tries += 1
            if tries > MAX_TRIES:
                return None
            edited = " ".join([*words[:index], meant, *words[index + 1:]])
            matched = match(edited)
            if matched is not None:
                found.append(Snapped(matched, edited, heard, meant))
    if not found:
        return None
    same = same or (lambda a, b: a == b)
    first = found[0]
    if any(not same(first.match, other.match) for other in found[1:]):
        return None  # two different commands within one edit: not ours to pick
    return first
