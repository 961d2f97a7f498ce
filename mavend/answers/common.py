"""What every skill shares: the `Answer`, and how numbers are said."""

from __future__ import annotations

import calendar
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any


@dataclass(frozen=True)
class Answer:
    text: str  # one or two short sentences, to show and speak
    skill: str  # the skill's name, as `Answers.recognize` gives it ("calc", "dates", ...)
    data: Mapping[str, Any]  # the computed facts: {"result": 391}, {"zone": "Asia/Tokyo", ...}
    available: bool = True  # False: a live fact with no configured source, or it failed


def say_number(value: float, *, decimals: int | None = None) -> tuple[str, bool]:
    """`value` as said aloud, and whether that is exact (else the caller says "about").

    Whole numbers are said whole; others keep four significant figures but never
    drop below two decimals for numbers of 1 or more (16.09, 12345.68, 0.03527),
    because a reply like "12350" for 12345.678 would hide digits the user can hear.
    """
    if not math.isfinite(value):
        return str(value), False
    if decimals is None:
        if value == 0:
            return "0", True
        digits = math.floor(math.log10(abs(value))) + 1
        decimals = max(2, 4 - digits)
    rounded = round(value, decimals)
    if rounded == round(rounded):
        text = str(round(rounded))
    else:
        text = f"{rounded:.{decimals}f}".rstrip("0").rstrip(".")
    return text, _close(rounded, value)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


def plural(count: float, singular: str, many: str | None = None) -> str:
    return singular if count == 1 else (many or singular + "s")


# The day a question is about, said as a word: "tomorrow", "this evening", "on friday".
_DAY_WORDS = (
    ("day after tomorrow", 2), ("tomorrow", 1), ("tonight", 0), ("today", 0),
    ("this morning", 0), ("this afternoon", 0), ("this evening", 0), ("later", 0),
)
_WEEKDAYS = [name.lower() for name in calendar.day_name]


def days_ahead(plain: str, today: date) -> int | None:
    """How many days after `today` the day named in `plain` is (a weekday: its next,
    today's included), or None when no day is named."""
    for word, offset in _DAY_WORDS:
        if re.search(rf"\b{word}\b", plain):
            return offset
    for number, name in enumerate(_WEEKDAYS):
        if re.search(rf"\b{name}\b", plain):
            return (number - today.weekday()) % 7
    return None
