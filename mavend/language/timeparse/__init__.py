"""Resolve spoken time expressions into absolute, timezone-aware datetimes.

The LLM never computes times: it hands over the phrase the user said, and this
module turns it into an instant, once, at capture ("in 4 h" becomes now + 4 h).
The classifier path only has the whole utterance, so `find_time` also locates
the expression inside it.

How it works, in three passes:
1. Lexing: the text is split into tokens that keep their offsets in the input,
   then canonicalised (lower case, number words to digits, "p. m." to "pm",
   "tmrw" to "tomorrow", ...). Speech-to-text spells numbers out, so "twenty
   five to nine" and "25 to 9" must read the same. Russian time words are read
   first as the English ones they stand for (`russian`: "через десять минут" is
   "in 10 minutes", "без четверти восемь" "quarter to 8"), keeping their offsets.
2. Atoms: a small grammar of regular expressions over the canonical text finds
   clock times, dates, parts of the day and spans of time. Each atom carries a
   strength: "at 5 pm" is surely a time, a bare "5" only when next to a date.
3. Groups: atoms that only have connectors between them ("tomorrow at 7",
   "8, tomorrow evening", "2 weeks after easter on monday") are merged, and the
   strongest group is resolved against `now`.

The modules follow those passes: `lexing` (with `russian`); the grammar of atoms in `clocks`,
`dates`, `weekdays`, `parts` (of months, weeks and years) and `spans`, over
the shared pieces in `atoms`, run by `grammar`; `groups`; then `resolve`, with
the calendar arithmetic in `candidates`.

Rules worth knowing (all are general, none is tied to a phrase):
- Everything resolves to the future when `prefer_future` is set (a reminder
  cannot fire in the past): "march 3" said in April is next year's, "today at
  8am" said at 10:00 is tomorrow's 08:00.
- am/pm. A clock time without am/pm and without a day ("at five") is its
  nearest future occurrence on a 12-hour clock: at 14:00 that is 17:00, at
  18:00 it is 05:00 tomorrow, at 03:00 it is 05:00 today. With a later day
  ("friday at 5") there is no "nearest", so waking hours decide: 1-6 read as
  pm, 7-11 as am. "12" is noon (midnight is said as such). A part of the day
  decides first ("5 in the morning", "tonight at 11", "tonight at 2" = the
  small hours), an alarm or wake-up call makes a bare hour a morning, and dinner,
  drinks, the pub, the cinema or the theatre an evening ("dinner on friday at 8").
  24-hour spellings ("07:00", "19:45", "7h01") are taken as they are.
- Clock times are also said as number pairs ("seven thirty", "ten oh five",
  "at 6 45 pm"; a written pair needs "at", am/pm, an alarm or a day before it),
  as "N (minutes) to/past H" ("twenty to nine", "5 minutes to 10 pm") and, in
  British English, as "half seven" (7:30), also counted from that half hour
  ("ten to half four" is 4:20, "five past half three" 3:35). A dotted "7.45" that cannot be a
  date is a time next to a day or after "at".
- Weekdays. "on tuesday" said on a Tuesday means next week, unless a time is
  given that is still ahead today ("tuesday at 6pm" said at 14:00). "this
  friday" is the Friday of this week ("this wednesday" said on a Wednesday
  may be today), "this coming friday" / "the coming friday" / "upcoming" the
  next one after today, "next friday" / "friday next week" the
  Friday of next week, so "friday after next" is the Friday of the week after.
  A weekday next to a date without a year picks between the date's next two
  occurrences ("Sat, Aug 9"); otherwise the date wins. "in 2 weeks on monday"
  is the Monday of the week 2 weeks from now, while the British "a week on
  monday" / "monday week" is seven days after the coming Monday ("a week
  tomorrow": seven days after tomorrow). "two fridays from now", "the second
  friday from now", "in two fridays" and "two fridays later" are the second
  coming Friday. A bare
  number after a weekday is a clock time ("monday 9"); the day of the month is
  said as an ordinal ("monday the 9th") or is over 12.
- Numeric dates are month first (12/25), day first when the first number
  cannot be a month (25/12) and in the dotted European spelling with a year
  (2.1.2027 is 2 January). A month said as a word may be joined to its day by a
  slash, dot or dash, either way round ("5-mar-2027", "apr/5", "20.march"). A
  year may follow the day and month in any spelling ("march 3rd 2027", "the
  fourth of july twenty twenty seven", "sept 9 '27", "12-apr-26", "june 3rd in
  2026"), and "next year" may stand for it.
- Parts of months, weeks and years ("mid march", "the end of the month", "the
  second week of june", "the middle of next week") resolve to the day the part
  starts, or its last / middle day for "the end of" / "the middle of"; see
  `parts` for the table.
- "yesterday" only counts as the day a span is counted from ("a week from
  yesterday"); on its own it is the past.
- A date without a time of day resolves to `default_time` (09:00), kind
  "date". A date that names today once that hour has passed ("today", "the
  12th" said on the 12th) resolves to the next full hour.
- Fractions are written with a slash or as a glyph ("1 1/2 hours", "1½ hours",
  "in ¾ of an hour").
- Spans of hours, minutes and seconds are elapsed time (DST-safe: "in 2 hours"
  across a clock change is 2 real hours); days, weeks, months and years are
  calendar steps that keep the wall-clock time. `duration` is set whenever the
  expression is a span counted from now; kind "duration" is a plain span
  ("for ten minutes"), kind "datetime" a moment ("in ten minutes").
- A time zone named after the time ("8:00 GMT", "9 am pacific time") is
  converted into now's zone.
- Not times: the past ("2 days ago"), counts ("a table for 4"), phone
  numbers, ordinals of other things ("the first floor").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, time, tzinfo

from mavend.language.timeparse.grammar import find_atoms
from mavend.language.timeparse.lexing import lex
from mavend.language.timeparse.resolve import (
    DEFAULT_TIME,
    TimeResolution,
    machine_zone,
    resolve_text,
)

__all__ = [
    "DEFAULT_TIME",
    "TimeResolution",
    "bare_today",
    "find_time",
    "lasts",
    "local_zone",
    "resolve_time",
]


def resolve_time(
    phrase: str,
    now: datetime,
    *,
    prefer_future: bool = True,
    default_time: time = DEFAULT_TIME,
) -> TimeResolution | None:
    """Resolve a phrase that is known to be a time expression ("at five pm").

    Weak readings count here (a bare "five" is 5 o'clock) because the caller
    already says the phrase is a time. Returns None when nothing parses.
    """
    return resolve_text(phrase, now, prefer_future, default_time, min_score=0)


def find_time(
    utterance: str,
    now: datetime,
    *,
    prefer_future: bool = True,
    default_time: time = DEFAULT_TIME,
) -> TimeResolution | None:
    """Locate and resolve the time expression inside a whole utterance."""
    return resolve_text(utterance, now, prefer_future, default_time, min_score=2)


# A time that says how long, not when: "for ten minutes", "until six", "till 3 pm".
_LASTING = re.compile(r"(?:for|until|till|til|up to)\b")


def lasts(found: TimeResolution) -> bool:
    """Does the time found say how long something lasts ("for an hour", "until six"),
    rather than when it happens ("in an hour", "at six")?"""
    return found.kind == "duration" or _LASTING.match(found.phrase.strip().lower()) is not None


def bare_today(found: TimeResolution) -> bool:
    """Is the time found only "today" (no hour)? For an act that means now: the day's
    default hour (09:00) made "turn the heating up today" wait until nine."""
    return found.kind == "date" and " ".join(found.phrase.lower().split()) == "today"


def local_zone() -> tzinfo:
    """The machine's zone, as an IANA zone when it can be named (DST-aware)."""
    return machine_zone()


def iter_atoms(text: str) -> Iterable[tuple[str, int]]:  # pragma: no cover - debugging aid
    """The atoms the grammar sees in text, with their strength (for error analysis)."""
    lx = lex(text)
    for atom in find_atoms(lx):
        s, e = lx.span(atom.start, atom.end)
        yield text[s:e], atom.strength
