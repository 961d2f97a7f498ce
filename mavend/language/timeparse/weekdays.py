"""Weekdays: "friday", "next friday", "friday after next", "tuesday week",
"two fridays from now", "the friday after easter", "the last friday of the month".

Conventions (the package docstring has them all): a plain weekday is its next
occurrence; "this friday" is the Friday of this week; "next friday" and "friday
next week" the Friday of next week, so "friday after next" is the Friday of the
week after. British counts start from the coming weekday: "tuesday week" and
"a week on tuesday" are seven days after the coming Tuesday, "a week tomorrow"
seven days after tomorrow. Counted weekdays ("two fridays from now", "the
second friday from now", "in two fridays") are the nth coming occurrence.
"""

from __future__ import annotations

import re

from mavend.language.timeparse.atoms import (
    EDGE,
    MON,
    WD,
    Atom,
    DateSpec,
    Handler,
    Offset,
    day_number,
    make_atom,
    month_target,
    nth_number,
    year_number,
)
from mavend.language.timeparse.lexing import AMBIGUOUS_ABBREV, WEEKDAYS, Lexed

_WEEKDAY_RE = re.compile(
    r"(?P<eod>(?:the\s)?end\sof\s(?:the\s)?)?"
    r"(?:(?P<mod>this\scoming|this|next|the\sfollowing|following|coming|upcoming|on|on\sthe)\s)?"
    r"(?P<wd>" + WD + r")(?!\w)"
    r"(?:\s(?P<post>after\snext|of\snext\sweek|next\sweek|of\sthis\sweek|this\sweek|coming"
    # "monday next" (British) is next monday; "monday next month" is something else
    r"|next(?!\s(?:week|month|year|weekend|" + WD + r")(?!\w))))?"
)
_WEEKDAY_NEXT_WEEK_RE = re.compile(
    r"(?:the\s)?(?:next|following)\sweek,?\s(?:on\s)?(?:the\s)?(?P<wd>" + WD + r")(?!\w)"
)
_N_WEEKDAYS_RE = re.compile(
    r"(?:the\s)?(?P<n>" + EDGE + r"\d{1,2}(?:th)?|a)\s(?P<wd>" + WD + r")\s"
    r"(?:from\s(?:now|today)|later)(?!\w)"
    r"|in\s(?P<n2>" + EDGE + r"\d{1,2})\s(?P<wd2>" + WD + r")(?!\w)(?:\stime(?!\w))?"
)
# British: "a week on tuesday", "two weeks tuesday", "a fortnight tomorrow", "a week today".
# "in a week on tuesday" is another rule (the tuesday of the week a week from now).
_WEEKS_ON_RE = re.compile(
    r"(?<!in\s)(?P<n>a|" + EDGE + r"\d)\s(?P<u>weeks?|fortnights?)\s"
    r"(?:(?:on\s)?(?P<wd>" + WD + r")|(?P<rd>today|tomorrow))(?!\w)"
)
# British: "tuesday week", "tomorrow week", "friday fortnight".
_DAY_WEEK_RE = re.compile(
    r"(?:on\s)?(?:(?P<wd>" + WD + r")|(?P<rd>today|tomorrow))\s(?P<u>week|fortnight)(?!\w)"
)
_NTH_WEEKDAY_RE = re.compile(
    r"(?:the\s)?(?P<n>\d{1,2}th|last|final)\s(?P<wd>" + WD + r")\s(?:of|in)\s"
    r"(?:(?P<rel>this|next|the|following)\smonth|(?P<mon>" + MON + r"))(?!\w)"
    r"(?:,?\s(?P<y>\d{4})(?!\w))?"
)
# "the first monday after easter", "the friday after": counted from a date that
# follows, or from today. Not "friday after next" (above) nor "friday after 5pm".
_NTH_WEEKDAY_AFTER_RE = re.compile(
    r"(?:(?:the\s)?(?P<n>\d{1,2}th|\d{1,2}|next|first)\s|the\s)(?P<wd>" + WD + r")\s"
    r"(?P<anc>after|following|before)(?!\w)(?!\s(?:next|\d{1,2}(?!th)|noon|midnight)(?!\w))"
)
_WORD = re.compile(r"[^\W_]")
_WEEKEND_RE = re.compile(
    r"(?:(?P<mod>this\scoming|this|next|coming|the|on\sthe|over\sthe|at\sthe)\s)?weekend(?!\w)"
)


def _h_weekday(m: re.Match[str], lx: Lexed) -> Atom | None:
    wd = WEEKDAYS.index(m["wd"])
    mod = (m["mod"] or "").replace("the ", "")
    post = m["post"] or ""
    if "after next" in post:
        mode = "after_next"
    elif "next" in post or mod in ("next", "following"):
        mode = "next_week"
    elif "this week" in post:
        mode = "this_week"
    elif mod in ("this coming", "coming", "upcoming") or post == "coming":
        mode = "coming"  # never today: "this coming wednesday" said on a Wednesday is next week's
    elif mod == "this":
        mode = "this"
    else:
        mode = "plain"
    strength = 2
    if not mod and not post and lx.original(m.start("wd")) in AMBIGUOUS_ABBREV:
        strength = 1  # "sun", "sat", "wed" are also plain words
    spec = DateSpec("weekday", wd, name=mode, end_of_day=bool(m["eod"]))
    return make_atom(m, strength, date=spec)


def _h_weekday_next_week(m: re.Match[str], lx: Lexed) -> Atom | None:
    return make_atom(m, 3, date=DateSpec("weekday", WEEKDAYS.index(m["wd"]), name="next_week"))


def _h_n_weekdays(m: re.Match[str], lx: Lexed) -> Atom | None:
    count = m["n"] or m["n2"]
    n = 1 if count == "a" else day_number(count)
    if not 1 <= n <= 60:
        return None
    wd = WEEKDAYS.index(m["wd"] or m["wd2"])
    return make_atom(m, 3, date=DateSpec("nth_from_now", n, wd))


def _weeks_of(n: str, unit: str) -> int:
    return (1 if n == "a" else int(n)) * (2 if unit.startswith("fortnight") else 1)


def _counted_from(m: re.Match[str], weeks: int) -> DateSpec:
    """The coming weekday (or today/tomorrow) moved on by whole weeks."""
    if m["rd"]:
        return DateSpec("rel", (1 if m["rd"] == "tomorrow" else 0) + 7 * weeks)
    return DateSpec("weekday", WEEKDAYS.index(m["wd"]), 7 * weeks, name="plain")


def _h_weeks_on(m: re.Match[str], lx: Lexed) -> Atom | None:
    weeks = _weeks_of(m["n"], m["u"])
    return make_atom(m, 3, date=_counted_from(m, weeks)) if weeks else None


def _h_day_week(m: re.Match[str], lx: Lexed) -> Atom | None:
    return make_atom(m, 3, date=_counted_from(m, _weeks_of("a", m["u"])))


def _h_nth_weekday(m: re.Match[str], lx: Lexed) -> Atom | None:
    n = nth_number(m["n"])
    if n == 0 or n > 5:
        return None
    how, value = month_target(m)
    spec = DateSpec("nth_weekday", n, WEEKDAYS.index(m["wd"]), value, year=year_number(m["y"]),
                    name=how)
    return make_atom(m, 3, date=spec)


def _h_nth_weekday_after(m: re.Match[str], lx: Lexed) -> Atom | None:
    n = 1 if m["n"] in (None, "next", "first") else day_number(m["n"])
    if not 1 <= n <= 52:
        return None
    anchor = "before" if m["anc"] == "before" else "after"
    off = Offset(anchor=anchor, anchor_optional=True, nth_weekday=(n, WEEKDAYS.index(m["wd"])))
    # Like "the day after": alone at the end it counts from today.
    ends = _WORD.search(lx.canon, m.end()) is None
    return make_atom(m, 2 if ends else 1, offset=off)


def _h_weekend(m: re.Match[str], lx: Lexed) -> Atom | None:
    mod = m["mod"] or ""
    mode = "next_week" if mod == "next" else "this"
    return make_atom(m, 2 if mod else 1, date=DateSpec("weekend", name=mode))


PATTERNS: list[tuple[re.Pattern[str], Handler]] = [
    (_WEEKDAY_RE, _h_weekday),
    (_WEEKDAY_NEXT_WEEK_RE, _h_weekday_next_week),
    (_N_WEEKDAYS_RE, _h_n_weekdays),
    (_WEEKS_ON_RE, _h_weeks_on),
    (_DAY_WEEK_RE, _h_day_week),
    (_NTH_WEEKDAY_RE, _h_nth_weekday),
    (_NTH_WEEKDAY_AFTER_RE, _h_nth_weekday_after),
    (_WEEKEND_RE, _h_weekend),
]
