"""Whisper starting the utterance over: "What time is it? what time is it".

On a short command with no wake phrase before it (a satellite that heard its own
wake word, a follow-up answer), Whisper's decoder often runs past the end of the
speech and says the command again, sometimes a third time cut short by the token
limit ("Turn on the kitchen light. Turn on the kitchen light, turn on the"). The
copies are near-identical, not exact: "set a timer for 2 hours, setup timer for 2
hours". `collapse_restart` keeps the first copy.

What it must not do is swallow a person correcting themselves ("turn on the light
turn off the light", "a timer for five minutes a timer for ten minutes"): the copies
must agree on every word that carries the meaning of such a change (numbers,
on/off, up/down, ...), and otherwise be near-identical letter for letter.
"""

from __future__ import annotations

import re
from collections import Counter

from rapidfuzz import fuzz

_WORD = re.compile(r"[A-Za-z0-9']+")
# Letter-level similarity (0-100) of a later copy to the first, spaces ignored.
# "set a timer for 2 hours" vs "setup timer for 2 hours" is 92; "turn on the light"
# vs "turn off the light" is 90 and is kept apart by the meaning words below.
MIN_SIMILARITY = 90.0
# A copy found again after garbled words must be at least this many words: shorter
# ones ("turn on") come back in ordinary commands.
MIN_GARBLED_COPY = 3
_NUMBER_WORDS = frozenset(
    {
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
        "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy",
        "eighty", "ninety", "hundred", "thousand", "half", "quarter",
    }
)
# Words whose swap turns a command into another one.
_POLARITY = frozenset(
    {
        "on", "off", "up", "down", "in", "out", "open", "close", "start", "stop", "lock",
        "unlock", "yes", "no", "not", "don't", "louder", "quieter", "higher", "lower", "next",
        "previous", "more", "less",
    }
)


def collapse_restart(text: str) -> str:
    """`text` with a repeated start-over removed (the first copy kept), else as it was."""
    words = list(_WORD.finditer(text))
    keys = [w.group().lower() for w in words]
    for size in range(1, len(keys)):
        if _restarts(keys, size):
            return text[: words[size - 1].end()]
    size = _garbled_restart(keys)
    if size:
        return text[: words[size - 1].end()]
    return text


def _garbled_restart(keys: list[str]) -> int:
    """The size of a first copy that comes back after a few garbled words and runs on.

    "what time is it wh t ty visit what time is it what time" (tiny.en on CI's CPU):
    the decoder lost its way, found the command again and looped until the token
    limit. The later copies must start word for word like the first and run past one
    copy (a loop, not a person saying it twice with something in between), and the
    garbled words must be shorter than a copy and carry no number or polarity word."""
    for size in range(MIN_GARBLED_COPY, len(keys) // 2):
        first = keys[:size]
        first_letters = "".join(first)
        for start in range(size + 1, len(keys) - size + 1):
            if keys[start : start + size] != first:
                continue
            between, rest = keys[size:start], keys[start:]
            if len("".join(between)) >= len(first_letters):
                break
            if any(carries_meaning(w) for w in between):
                break
            if len("".join(rest)) > len(first_letters) and _restarts(rest, size):
                return size
            break
    return 0


def _restarts(keys: list[str], size: int) -> bool:
    """Is everything after the first `size` words copies of them (the last cut short)?"""
    first = keys[:size]
    rest = keys[size:]
    first_letters = "".join(first)
    rest_letters = "".join(rest)
    if len(rest_letters) < len(first_letters) / 2:
        return False  # not a copy: at most a word or two of one (left as heard)
    # Whole copies (a copy may be a letter or two longer or shorter), or copies of
    # which the last was cut short by the token limit.
    whole = max(1, round(len(rest_letters) / len(first_letters)))
    cut = -(-len(rest_letters) // len(first_letters))
    targets = (first_letters * whole, (first_letters * cut)[: len(rest_letters)])
    if max(fuzz.ratio(rest_letters, t) for t in targets) < MIN_SIMILARITY:
        return False
    return _same_meaning_words(first, rest)


def _same_meaning_words(first: list[str], rest: list[str]) -> bool:
    """No number or polarity word in the copies that the first copy does not have."""
    allowed = Counter(w for w in first if carries_meaning(w))
    for start in range(0, len(rest), len(first)):
        copy = Counter(w for w in rest[start : start + len(first)] if carries_meaning(w))
        if copy - allowed:
            return False
    return True


def carries_meaning(word: str) -> bool:
    return word.isdigit() or word in _NUMBER_WORDS or word in _POLARITY
