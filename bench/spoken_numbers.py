"""Numbers as they are said, for a word error rate that counts words, not spellings.

Whisper writes "set the lights to 50%" and "wake me at 6:30" for what was said as "fifty
percent" and "six thirty"; scored against the words said, each is two or three errors that
are no mishearing. Both sides of a WER go through `spoken(text)`: digits become the words
they are read as, "%" becomes "percent". Only the forms the benches' commands use.
"""

from __future__ import annotations

import re

_ONES_TEXT = """zero one two three four five six seven eight nine ten eleven twelve thirteen
fourteen fifteen sixteen seventeen eighteen nineteen"""
_TENS_TEXT = "_ _ twenty thirty forty fifty sixty seventy eighty ninety"
_ONES, _TENS = _ONES_TEXT.split(), _TENS_TEXT.split()
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_PERCENT = re.compile(r"(\d+)\s*%")
_NUMBER = re.compile(r"\b\d+\b")


def number_words(n: int) -> str:
    """0..9999 in words: 42 -> "forty two", 305 -> "three hundred five"."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (f" {_ONES[ones]}" if ones else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{_ONES[hundreds]} hundred" + (f" {number_words(rest)}" if rest else "")
    if n < 10_000:
        thousands, rest = divmod(n, 1000)
        return f"{_ONES[thousands]} thousand" + (f" {number_words(rest)}" if rest else "")
    return str(n)


def _clock(match: re.Match[str]) -> str:
    hours, minutes = int(match[1]), int(match[2])
    if minutes == 0:
        return number_words(hours)
    if minutes < 10:
        return f"{number_words(hours)} oh {number_words(minutes)}"
    return f"{number_words(hours)} {number_words(minutes)}"


def spoken(text: str) -> str:
    text = _CLOCK.sub(_clock, text)
    text = _PERCENT.sub(lambda m: f"{m[1]} percent", text)
    return _NUMBER.sub(lambda m: number_words(int(m[0])), text)
