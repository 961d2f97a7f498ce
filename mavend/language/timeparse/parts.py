"""Parts of months, weeks and years: "the first week of june", "mid march",
"the end of the month", "the beginning of next year", "the middle of next week".

A part is a stretch of days; a reminder for it fires on the day it starts,
except "the end of" (its last day) and "the middle of" (its middle day):
- month: early / the beginning / the start -> the 1st, mid / the middle -> the
  15th, late -> the 21st (its last third), the end -> the last day; the nth
  week -> day 7(n-1)+1 (weeks are counted in sevens from the 1st), the last
  week -> the last seven days; the nth weekend -> the nth Saturday.
- week (Monday to Sunday): early / the start -> Monday, mid / the middle ->
  Wednesday, late -> Thursday, the end -> Friday (the end of the working week).
- year: early / the start -> 1 January, mid -> 1 July, late -> 1 September, the
  end -> 31 December.
"this month" / "the month" / "this week" is the next such part still ahead.
"""

from __future__ import annotations

import re

from mavend.language.timeparse.atoms import (
    MON,
    Atom,
    DateSpec,
    Handler,
    make_atom,
    month_target,
    nth_number,
    year_number,
)
from mavend.language.timeparse.lexing import MONTHS, Lexed

_YEAR = r"\d{4}|(?:19|20)\s\d{2}"
# "early", "mid-", "late in", "the end of", "the middle of"
_PART = (
    r"(?:the\s)?(?:(?P<adj>early|late|mid)(?:\s?-\s?|\s)(?:in\s)?"
    r"|(?P<noun>beginning|start|middle|end)\sof\s)"
)
_PART_OF_UNIT_RE = re.compile(
    _PART + r"(?:(?:the|this)\s|(?P<rel>next|following|coming)\s)?(?P<u>month|week|year)(?!\w)"
    r"|(?P<midweek>midweek)(?!\w)"
)
_PART_OF_MONTH_RE = re.compile(
    _PART + r"(?:(?P<mon>" + MON + r")(?:,?\s(?:of\s)?(?P<y>" + _YEAR + r"))?"
    r"|(?P<yr>" + _YEAR + r")(?!\s?s(?!\w)))(?!\w)(?!\s?[/\-.]?\s?\d)"  # not "the late 1990s"
)
_NTH_WEEK_RE = re.compile(
    r"(?:the\s)?(?P<n>\d{1,2}th|last|final)\s(?P<u>week|weekend)\s(?:of|in)\s"
    r"(?:(?P<rel>this|next|the|following)\smonth|(?P<mon>" + MON + r"))(?!\w)"
    r"(?:,?\s(?P<y>\d{4})(?!\w))?"
)

_PART_NAMES = {
    "early": "start", "beginning": "start", "start": "start", "mid": "mid", "middle": "mid",
    "late": "late", "end": "end",
}


def _part(m: re.Match[str]) -> str:
    return _PART_NAMES[m["adj"] or m["noun"]]


def _h_part_of_unit(m: re.Match[str], lx: Lexed) -> Atom | None:
    if m["midweek"]:
        return make_atom(m, 3, date=DateSpec("part", name="week:mid"))
    ahead = 1 if m["rel"] else 0
    return make_atom(m, 3, date=DateSpec("part", c=ahead, name=f"{m['u']}:{_part(m)}"))


def _h_part_of_month(m: re.Match[str], lx: Lexed) -> Atom | None:
    if m["yr"]:
        return make_atom(m, 3, date=DateSpec("part", year=year_number(m["yr"]),
                                             name=f"year:{_part(m)}"))
    month = MONTHS.index(m["mon"]) + 1
    spec = DateSpec("part", b=month, year=year_number(m["y"]), name=f"month:{_part(m)}")
    return make_atom(m, 3, date=spec)


def _h_nth_week(m: re.Match[str], lx: Lexed) -> Atom | None:
    n = nth_number(m["n"])
    if n == 0 or n > 5:
        return None
    how, value = month_target(m)
    month, ahead = (value, 0) if how == "month" else (0, value)
    spec = DateSpec("part", n, month, ahead, year=year_number(m["y"]), name=f"month:{m['u']}")
    return make_atom(m, 3, date=spec)


PATTERNS: list[tuple[re.Pattern[str], Handler]] = [
    (_PART_OF_UNIT_RE, _h_part_of_unit),
    (_PART_OF_MONTH_RE, _h_part_of_month),
    (_NTH_WEEK_RE, _h_nth_week),
]
