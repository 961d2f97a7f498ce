"""What the grammar finds: atoms, their parts, and the regex fragments they share.

An atom is one piece of a time expression found in the canonical text ("at 5
pm", "tomorrow", "in 2 weeks"); the groups pass merges neighbouring atoms.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import tzinfo

from mavend.language.timeparse.lexing import MONTHS, Lexed, year_of_two_digits


@dataclass(frozen=True)
class Clock:
    h: int
    m: int = 0
    s: int = 0
    meridiem: str = ""  # "am" | "pm" | ""
    exact24: bool = False  # 0, 13-23, "07:00", "7h01": no am/pm question
    shift: int = 0  # minutes added after am/pm is settled ("twenty to nine")
    weak: bool = False  # a bare number: a time only next to a date or part of day


@dataclass(frozen=True)
class Period:
    name: str  # morning, afternoon, evening, night, lunch, am, pm, mid...
    default: tuple[int, int]


@dataclass(frozen=True)
class DateSpec:
    kind: str  # see date_candidates
    a: int = 0
    b: int = 0
    c: int = 0
    year: int | None = None
    weekday: int | None = None  # a weekday that must match (Sunday 8/3)
    end_of_day: bool = False
    name: str = ""


@dataclass(frozen=True)
class Offset:
    months: float = 0
    days: float = 0
    seconds: float = 0
    bdays: int = 0
    relative: bool = False  # counted from now ("in 5 min", "5 min from now")
    anchor: str = ""  # "after" | "before": counted from a date that follows
    anchor_optional: bool = False  # "the day after" alone counts from today
    nth_weekday: tuple[int, int] | None = None  # (n, weekday) after an anchor


@dataclass
class Atom:
    start: int
    end: int
    strength: int
    clock: Clock | None = None
    date: DateSpec | None = None
    period: Period | None = None
    offset: Offset | None = None
    tz: tzinfo | None = None


# Regular-expression fragments over the canonical text.
WD = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
MON = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
EDGE = r"(?<![\w:./\-])"  # a number must not continue another number or date
DAYNUM = r"(?:\d{1,2}th|\d{1,2})(?!\w)"
PRE = (
    r"(?:(?P<pre>(?:at|around|about|approximately|approx|by|before|after|until|till|from|for|"
    r"since|on)(?=\s)|@)\s?)?"
)
STRONG_PRE = {"at", "@", "around", "about", "approximately", "approx", "by", "until", "till"}


UNIT_WORDS = (
    r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|wks?|fortnights?|"
    r"months?|years?|yrs?|weekends?)"
)
NOT_TIME_AFTER = (
    r"(?!\s?(?:[:./]\s?\d|am|pm|oclock|ish|h(?!\w)|'|\"|" + UNIT_WORDS + r"(?!\w)))"
)


Handler = Callable[[re.Match[str], Lexed], "Atom | None"]


def make_atom(m: re.Match[str], strength: int, **kw: object) -> Atom:
    return Atom(m.start(), m.end(), strength, **kw)  # type: ignore[arg-type]


def offset_with(off: Offset, **kw: object) -> Offset:
    values = {f: getattr(off, f) for f in off.__dataclass_fields__}
    values.update(kw)
    return Offset(**values)  # type: ignore[arg-type]


# Readers of matched text, shared by the grammar modules.


def after_currency(lx: Lexed, pos: int) -> bool:
    """Whether the number at canonical position pos is an amount ("$ 40", "£4.50")."""
    return lx.canon[max(0, pos - 3) : pos].rstrip().endswith(("$", "€", "£", "¥", "#"))


def day_number(text: str) -> int:
    """ "21" or "21th" (the lexer's ordinal) -> 21."""
    return int(text[:-2] if text.endswith("th") else text)


def year_number(y: str | None) -> int | None:
    """ "2027", "20 27" (said "twenty twenty seven") or "27" -> 2027."""
    if not y:
        return None
    y = y.replace(" ", "")
    return year_of_two_digits(y) if len(y) == 2 else int(y)


def nth_number(text: str) -> int:
    """An ordinal count: "2th" -> 2, "last" -> -1."""
    if text in ("last", "final"):
        return -1
    return day_number(text)


def month_target(m: re.Match[str]) -> tuple[str, int]:
    """("month", M) for a named month (group mon), ("rel", delta) for this/next month (rel)."""
    if m["mon"]:
        return "month", MONTHS.index(m["mon"]) + 1
    return "rel", 1 if m["rel"] in ("next", "following") else 0
