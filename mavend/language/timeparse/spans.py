"""Spans of time: "ten minutes", "an hour and a half", "in 2 weeks", "3 days after".

Hours, minutes and seconds are elapsed time; days, weeks, months and years
are calendar steps (see `resolve.apply_offset`).
"""

from __future__ import annotations

import re

from mavend.language.timeparse.atoms import (
    EDGE,
    Atom,
    Handler,
    Offset,
    make_atom,
    offset_with,
)
from mavend.language.timeparse.lexing import Lexed

# Spans of time. _DUR_ONE has no named groups so it can repeat ("1 hour, 15 minutes").
_FRACTION = r"(?:half|quarter|3\squarters?(?!\w)|1\s?/\s?2|1\s?/\s?4|3\s?/\s?4)"
_QTY = (
    # "2", "1.5", "3/4 (of a)", "1 1/2" (a whole and a fraction)
    r"(?:" + EDGE + r"\d+(?:\.\d+)?(?:\s(?:[1-8]\s?/\s?[2-9])|\s?/\s?\d+(?:\s(?:of\s)?a)?)?"
    r"(?!\w)"
    r"(?:\sand\s(?:a\s)?" + _FRACTION + r")?"
    r"|a\s(?:couple|pair)(?:\sof)?|couple(?:\sof)?|(?:a\s)?few|several|another|a"
    # not "quarters" read as a quarter of a second ("s")
    r"|(?:a\s)?half(?!\w)(?:\sof)?(?:\sa)?|(?:a\s|1\s)?quarter(?!\w)(?:\sof)?(?:\sa)?"
    r"|3\squarters?(?!\w)(?:\sof)?(?:\sa)?)"
)
_UNIT = (
    r"(?:seconds?|secs?|s|\"|minutes?|mins?|m|'|hours?|hrs?|h|days?|d|nights?|weeks?|wks?|w|"
    r"fortnights?|months?|mos?|years?|yrs?|y|weekends?|(?:business|working|work)\sdays?|"
    r"workdays?)"
)
_DUR_ONE = (
    _QTY + r"(?:\s(?:more|whole|full|additional|extra))?\s?" + _UNIT
    + r"(?![\w])(?:\sand\s(?:a\s)?(?:half|quarter|3\squarters?))?"
)
_DUR = _DUR_ONE + r"(?:(?:\s?,\s?|\s)(?:and\s)?" + _DUR_ONE + r")*"
_DUR_PART_RE = re.compile(
    r"(?P<q>" + _QTY + r")(?:\s(?:more|whole|full|additional|extra))?\s?(?P<u>" + _UNIT + r")"
    r"(?![\w])(?:\sand\s(?:a\s)?(?P<f>half|quarter|3\squarters?))?"
)
_OFFSET_PRE_RE = re.compile(
    r"(?P<pre>in|within|after|upcoming|coming)\s"
    r"(?:(?:about|around|approximately|roughly|just|only|another|like)\s)?"
    r"(?P<dur>" + _DUR + r")"
    r"(?:\s(?P<post>from\snow|from\sright\snow|later|hence|from\stoday))?"
)
_OFFSET_POST_RE = re.compile(
    r"(?P<dur>" + _DUR + r")\s(?P<post>from\snow|from\sright\snow|from\stoday|from\sthis\smoment|"
    r"later|hence|after\sthat|from\sthen|ago|before\snow|earlier)(?!\w)"
)
_OFFSET_ANCHOR_RE = re.compile(
    r"(?P<dur>" + _DUR + r")\s(?P<anc>after|from|following|before)(?=\s)"
)
_DURATION_RE = re.compile(
    r"(?:(?P<pre>for|lasting|during|about|around)\s)?(?:the\s)?(?P<dur>" + _DUR + r")"
    r"(?!\s(?:ago|before\snow|earlier)(?!\w))"  # the past is no time to remind
)
_WHOLE_UNIT_RE = re.compile(
    # "for the next hour": a while, as "for an hour" (not "in the next hour", a deadline)
    r"(?:(?:for|over)\sthe\snext|for\sthe|all|all\sthe|(?:for\s)?(?:a\s|the\s)?(?:whole|full|entire))\s"
    r"(?P<u>day|week|hour|month|night|weekend|year|morning|afternoon)(?!\w)"
)

_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}


def _unit_key(u: str) -> str:
    u = u.replace(" ", "")
    if u in ('"',) or u.startswith("sec") or u == "s":
        return "s"
    if u == "'" or u.startswith("min") or u == "m":
        return "m"
    if u.startswith(("hour", "hr")) or u == "h":
        return "h"
    if u.startswith(("business", "working", "workday")) or u == "workdays":
        return "bd"
    if u.startswith("weekend"):
        return "we"
    if u.startswith(("day", "night")) or u == "d":
        return "d"
    if u.startswith("fortnight"):
        return "f"
    if u.startswith(("week", "wk")) or u == "w":
        return "w"
    if u.startswith(("month", "mo")):
        return "mo"
    return "y"


def _qty_value(q: str) -> float | None:
    q = q.strip()
    if re.fullmatch(r"(?:a\s)?(?:couple|pair)(?:\sof)?", q):
        return 2
    if re.fullmatch(r"(?:a\s)?few|several", q):
        return 3  # Duckling's convention: "a few" is three
    if q in ("a", "another"):
        return 1
    if re.fullmatch(r"(?:a\s)?half(?:\sof)?(?:\sa)?", q):
        return 0.5
    if re.fullmatch(r"(?:a\s|1\s)?quarter(?:\sof)?(?:\sa)?", q):
        return 0.25
    if re.fullmatch(r"3\squarters?(?:\sof)?(?:\sa)?", q):
        return 0.75
    m = re.match(
        r"(?P<n>\d+(?:\.\d+)?)(?:\s(?P<mixed>\d\s?/\s?\d)|\s?/\s?(?P<den>\d+))?(?:\s(?:of\s)?a)?"
        r"(?:\sand\s(?:a\s)?(?P<f>.+))?$",
        q,
    )
    if not m:
        return None
    value = float(m["n"])
    if m["den"]:
        den = int(m["den"])
        if den == 0:
            return None
        value /= den
    for part in (m["mixed"], m["f"]):
        if part:
            value += _fraction(part)
    return value


def _fraction(f: str) -> float:
    f = f.replace(" ", "")
    fractions = {"half": 0.5, "quarter": 0.25, "3quarter": 0.75, "3quarters": 0.75}
    if m := re.fullmatch(r"([1-8])/([2-9])", f):  # "1 1/3 hours": a proper fraction
        top, bottom = int(m[1]), int(m[2])
        return top / bottom if top < bottom else 0.0
    return fractions.get(f, 0.0)


def _parse_duration(text: str) -> Offset | None:
    months = days = seconds = 0.0
    bdays = 0
    found = False
    for m in _DUR_PART_RE.finditer(text):
        value = _qty_value(m["q"])
        if value is None:
            return None
        if m["f"]:
            value += _fraction(m["f"])
        found = True
        unit = _unit_key(m["u"])
        if unit in _UNIT_SECONDS:
            seconds += value * _UNIT_SECONDS[unit]
        elif unit == "d":
            days += value
        elif unit == "w":
            days += 7 * value
        elif unit == "f":
            days += 14 * value
        elif unit == "we":
            days += 2 * value  # a weekend is two days long
        elif unit == "bd":
            bdays += round(value)
        elif unit == "mo":
            months += value
        else:
            months += 12 * value
    if not found or (months == days == seconds == 0 and bdays == 0):
        return None
    return Offset(months=months, days=days, seconds=seconds, bdays=bdays)


def _h_offset_pre(m: re.Match[str], lx: Lexed) -> Atom | None:
    off = _parse_duration(m["dur"])
    if off is None:
        return None
    return make_atom(m, 3, offset=offset_with(off, relative=True))


def _h_offset_post(m: re.Match[str], lx: Lexed) -> Atom | None:
    if m["post"] in ("ago", "before now", "earlier"):
        return None  # the past: a reminder cannot fire there
    off = _parse_duration(m["dur"])
    if off is None:
        return None
    return make_atom(m, 3, offset=offset_with(off, relative=True))


def _h_offset_anchor(m: re.Match[str], lx: Lexed) -> Atom | None:
    off = _parse_duration(m["dur"])
    if off is None:
        return None
    anchor = "before" if m["anc"] == "before" else "after"
    return make_atom(m, 1, offset=offset_with(off, anchor=anchor))


def _h_duration(m: re.Match[str], lx: Lexed) -> Atom | None:
    off = _parse_duration(m["dur"])
    if off is None:
        return None
    dur = m["dur"]
    # "a minute", "an hour" alone are weak ("wait a minute"); numbers and "for" are not.
    strength = 2 if (m["pre"] == "for" or re.match(r"\d|couple|few|half|another", dur)) else 1
    return make_atom(m, strength, offset=off)


def _h_whole_unit(m: re.Match[str], lx: Lexed) -> Atom | None:
    unit = m["u"]
    if unit in ("morning", "afternoon"):
        return None
    off = _parse_duration("1 " + unit)
    return make_atom(m, 2, offset=off) if off else None


PATTERNS: list[tuple[re.Pattern[str], Handler]] = [
    (_OFFSET_PRE_RE, _h_offset_pre),
    (_OFFSET_POST_RE, _h_offset_post),
    (_OFFSET_ANCHOR_RE, _h_offset_anchor),
    (_DURATION_RE, _h_duration),
    (_WHOLE_UNIT_RE, _h_whole_unit),
]
