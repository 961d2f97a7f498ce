"""Clock times and parts of the day: "at 5 pm", "twenty to nine", "noon", "tonight".

The am/pm question is not settled here: a clock atom keeps what was said
(meridiem, 24-hour spelling, a bare number) and the resolver picks the reading.
"""

from __future__ import annotations

import re
from datetime import timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mavend.language.timeparse.atoms import (
    EDGE,
    PRE,
    STRONG_PRE,
    UNIT_WORDS,
    WD,
    Atom,
    Clock,
    DateSpec,
    Handler,
    Period,
    after_currency,
    make_atom,
)
from mavend.language.timeparse.lexing import Lexed

_TZ_NAMES: dict[str, str | float] = {
    "gmt": 0, "utc": 0, "z": 0, "bst": 1, "cet": 1, "cest": 2, "eet": 2, "eest": 3,
    "est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6, "pst": -8, "pdt": -7,
    "pacific": "America/Los_Angeles", "eastern": "America/New_York",
    "central": "America/Chicago", "mountain": "America/Denver",
}
_TZ = (
    r"(?:\s?\(?\s?(?P<tz>gmt|utc|bst|cest|cet|eest|eet|est|edt|cst|cdt|mst|mdt|pst|pdt|"
    r"(?:pacific|eastern|central|mountain)\s(?:standard\s|daylight\s)?time)(?:\s?\))?)?"
)


_CLOCK_RE = re.compile(
    PRE + EDGE
    + r"(?:(?P<hm>\d{3,4})(?!\w)(?!\s?[\-.]?\s?\d)|(?P<h>\d{1,2})(?!\w)(?!\s?[/\-]\s?\d)"
    r"(?:(?P<sep>\s?[:.]\s?|\s?h\s?|\s)(?P<m>\d{2})(?!\w)(?:\s?[:.]\s?(?P<s>\d{2})(?!\w))?"
    r"|(?P<hh>\s?h)(?!\w)(?!\s?\d))?)"
    r"(?!\s?[:./]\s?\d)"
    r"(?:\s?(?P<ish>ish))?(?:\s?(?P<oc>oclock))?(?:\s?(?P<ish2>ish))?"
    r"(?:\s?(?P<ap>am|pm))?(?:\s?ish)?(?:\s?(?P<oc2>oclock))?" + _TZ
    + r"(?!\spast(?!\w))"  # "at twenty past" (the hour unsaid) is not 20:00
)
_REL_CLOCK_RE = re.compile(
    PRE
    + r"(?P<q>(?:a\s)?quarter|half|3\squarters|" + EDGE + r"\d{1,2}(?!\w))"
    r"(?:\s(?:minutes?|mins?))?\s(?P<rel>past|after|to|till|til|before|of)\s"
    r"(?:(?P<noon>noon|midnight)|(?P<half>half\s)?(?P<bh>\d{1,2})(?!\w)"
    r"(?:\s?(?::|h)\s?(?P<bm>\d{2})(?!\w))?"
    r"(?:\s?oclock)?(?:\s?(?P<ap>am|pm))?(?:\s?oclock)?)" + _TZ
)
# "half seven" (British): not "half 2 hours", "half 3 times", "half 4/5", "in half 3 ways".
_HALF_HOUR_RE = re.compile(
    PRE + r"(?<!in\s)(?<!into\s)(?P<half>half)\s" + EDGE + r"(?P<h>\d{1,2})(?!\w)"
    r"(?!\s?(?:[:./]\s?\d|'|\"|times?(?!\w)|" + UNIT_WORDS + r"(?!\w)))"
    r"(?:\s?oclock)?(?:\s?(?P<ap>am|pm))?" + _TZ
)
_NOON_RE = re.compile(PRE + r"(?:12\s)?(?P<nm>noon|midnight)(?:\s?ish)?")
# A day right before a number pair makes it a clock time ("friday 10 15").
_DAY_BEFORE = re.compile(r"(?<![^\W_])(?:" + WD + r"|today|tomorrow|tonight),?\s$")
# An alarm or a wake-up call: a bare hour is a morning, "for twelve" is a time.
# An alarm, a wake-up call, or getting up: a bare hour is a morning.
ALARM_RE = re.compile(
    r"(?<![^\W_])(?:wake|waking|alarm|get\s+up|getting\s+up)(?![^\W_])"
    r"|(?<![^\W_])(?:будильник|разбуди|подъ[её]м)\w*",  # Russian: alarm, wake me, getting up
)
# What happens in the evening: a bare hour said with it is after noon ("dinner at 8").
EVENING_RE = re.compile(
    r"(?<![^\W_])(?:dinner|supper|drinks|the\spub|date\snight|the\stheatre|the\stheater"
    r"|the\scinema|the\smovies|the\sconcert|the\sgig|the\sshow|bedtime|nightcap)(?![^\W_])"
)
_PERIOD_RE = re.compile(
    r"(?:(?P<pfx>this|in\sthe|during\sthe|at|next|tonight|early\sin\sthe|late\sin\sthe|"
    r"for\sthe|over\sthe|the|after|before)\s)?"
    r"(?:(?:early|late)\s)?"
    r"(?P<p>morning|afternoon|evening|night|tonight|lunchtime|lunch|midmorning|"
    r"midafternoon|midevening|dawn|daybreak|sunrise|dusk|sunset)(?!\w)"
    r"|in\sthe\s(?P<ap>am|pm)(?!\w)"
)


def _tz_of(name: str | None) -> tzinfo | None:
    if not name:
        return None
    key = name.split()[0]
    value = _TZ_NAMES.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return ZoneInfo(value)
        except ZoneInfoNotFoundError:  # pragma: no cover - tzdata missing
            return None
    return timezone(timedelta(hours=value))


def _h_clock(m: re.Match[str], lx: Lexed) -> Atom | None:
    pre = m["pre"] or ""
    ap = m["ap"] or ""
    oc = bool(m["oc"] or m["oc2"])
    tz = _tz_of(m["tz"])
    strong_pre = pre in STRONG_PRE
    sep = (m["sep"] or "").strip()
    if m["hm"]:
        digits = m["hm"]
        if not (ap or strong_pre or oc):
            return None  # a bare 4-digit number is a year or a count, not 10:30
        h, mi, s = int(digits[:-2]), int(digits[-2:]), 0
        hour_text = digits[:-2]
    else:
        h = int(m["h"])
        hour_text = m["h"]
        mi = int(m["m"]) if m["m"] else 0
        s = int(m["s"]) if m["s"] else 0
        if m["m"] and not _pair_is_time(m, lx, sep, h, mi):
            return None
        if m["hh"] and not (tz or strong_pre):
            return None  # "8 h" is eight hours unless a zone or "at" makes it a time
    if h > 24 or mi > 59 or s > 59 or (ap and h == 0 and not m["m"]):
        return None
    if ap and h > 12:
        ap = ""  # "13:00 pm": the 24-hour reading wins
    colon = sep in (":", "h") or bool(m["hh"])
    # "7h01", "07:00", "15:30" are 24-hour clock readings; am/pm overrides ("9 h 45 pm").
    exact24 = not ap and (
        h == 0 or h > 12 or sep == "h" or (len(hour_text) == 2 and hour_text[0] == "0")
    )
    weak = not (colon or ap or oc or tz or strong_pre or m["m"] or m["ish"] or m["ish2"])
    if weak and pre in ("for", "from") and h <= 12 and ALARM_RE.search(lx.canon):
        weak = False  # "set an alarm for twelve"
    if weak and (h > 12 or pre in ("for", "from")):
        return None  # "a table for 4": a count, not four o'clock
    strength = 3 if (colon or ap or oc or tz) else (0 if weak else 2)
    if sep == "." and not (ap or strong_pre or oc or tz):
        strength = 1  # "7.45" alone may be a decimal; next to a day it is a time
    start = m.start() if (pre and (strong_pre or not weak)) else m.start("hm" if m["hm"] else "h")
    clock = Clock(h % 24, mi, s, ap, exact24, 0, weak)
    return Atom(start, m.end(), strength, clock=clock, tz=tz)


def _pair_is_time(m: re.Match[str], lx: Lexed, sep: str, h: int, mi: int) -> bool:
    """Whether an hour and minutes not joined by a colon ("7.45", "7 45") are a time."""
    pre = m["pre"] or ""
    marked = bool(m["ap"] or pre in STRONG_PRE)
    if sep == ".":
        if lx.spoken(m.start("h")):
            return False  # "seven point four five" is a number
        # 5.12 is a date (and 4.50 a price) unless "at" or am/pm says otherwise
        return marked or not (_could_be_date(h, mi) or after_currency(lx, m.start("h")))
    if sep != "":
        return True
    if mi < 10 and not m["m"].startswith("0"):
        return False  # "7 5" is two numbers
    # "3 30" alone is two numbers; "seven thirty", "an alarm for 6 45", "monday 10 15" are times
    return bool(
        marked or m["oc"] or m["oc2"] or m["tz"]
        or (lx.spoken(m.start("h")) and lx.spoken(m.start("m")))
        or (pre == "for" and ALARM_RE.search(lx.canon))
        or _DAY_BEFORE.search(lx.canon[max(0, m.start() - 12) : m.start()])
    )


def _could_be_date(a: int, b: int) -> bool:
    """Whether a.b reads as month.day or day.month."""
    return (1 <= a <= 12 and 1 <= b <= 31) or (1 <= b <= 12 and 1 <= a <= 31)


def _h_half_hour(m: re.Match[str], lx: Lexed) -> Atom | None:
    """British "half seven": half past seven."""
    h = int(m["h"])
    if not 1 <= h <= 12:
        return None
    ap = m["ap"] or ""
    strong = m["pre"] in STRONG_PRE
    start = m.start() if strong else m.start("half")
    strength = 3 if (ap or strong) else 2
    return Atom(start, m.end(), strength, clock=Clock(h, 30, 0, ap), tz=_tz_of(m["tz"]))


def _h_rel_clock(m: re.Match[str], lx: Lexed) -> Atom | None:
    q = m["q"]
    minutes = {"half": 30, "3 quarters": 45}.get(q, 15 if q.endswith("quarter") else None)
    if minutes is None:
        minutes = int(q)
    if minutes > 59:
        return None
    rel = m["rel"]
    if rel == "of" and not q.endswith("quarter"):
        return None  # "20 of october" is a date
    sign = -1 if rel in ("to", "till", "til", "before", "of") else 1
    if m["noon"]:
        base = Clock(12 if m["noon"] == "noon" else 0, exact24=True)
    else:
        h = int(m["bh"])
        if h > 23:
            return None
        bm = int(m["bm"]) if m["bm"] else 0
        if m["half"]:  # British "ten to half four": from half past four (4:20)
            if bm or h > 12:
                return None
            bm = 30
        ap = m["ap"] or ""
        base = Clock(h, bm, 0, ap if h <= 12 else "", h == 0 or h > 12)
    clock = Clock(base.h, base.m, 0, base.meridiem, base.exact24, sign * minutes)
    start = m.start() if m["pre"] in STRONG_PRE else m.start("q")
    return Atom(start, m.end(), 3, clock=clock, tz=_tz_of(m["tz"]))


def _h_noon(m: re.Match[str], lx: Lexed) -> Atom | None:
    h = 12 if m["nm"] == "noon" else 0
    start = m.start() if m["pre"] in STRONG_PRE else m.start("nm")
    return Atom(start, m.end(), 3, clock=Clock(h, exact24=True))


PERIODS = {
    "morning": (9, 0), "afternoon": (15, 0), "evening": (19, 0), "night": (21, 0),
    "tonight": (20, 0), "lunch": (12, 0), "lunchtime": (12, 0), "midmorning": (10, 0),
    "midafternoon": (14, 0), "midevening": (20, 0), "am": (9, 0), "pm": (15, 0),
    "dawn": (6, 0), "daybreak": (6, 0), "sunrise": (6, 0), "dusk": (18, 0), "sunset": (18, 0),
}


def _h_period(m: re.Match[str], lx: Lexed) -> Atom | None:
    if m["ap"]:
        return make_atom(m, 1, period=Period(m["ap"], PERIODS[m["ap"]]))
    name = m["p"]
    pfx = m["pfx"] or ""
    if name == "tonight" or pfx == "tonight":
        return make_atom(m, 2, period=Period("night", (20, 0)), date=DateSpec("rel", 0))
    if name == "lunchtime":
        name = "lunch"
    if pfx in ("after", "before"):
        if name != "lunch":  # "before evening": the evening, as said without the word
            return Atom(m.start("p"), m.end(), 1, period=Period(name, PERIODS[name]))
        # "after lunch" is once it is eaten, "before lunch" while there is time to act
        clock = (13, 0) if pfx == "after" else (11, 30)
        return make_atom(m, 2, period=Period("lunch", clock))
    period = Period(name, PERIODS[name])
    date_spec: DateSpec | None = None
    if pfx == "this":
        date_spec = DateSpec("rel", 0)
    elif pfx == "next":
        date_spec = DateSpec("rel", 1)
    strength = 2 if (pfx and pfx != "the") or name.startswith("mid") or name == "lunch" else 1
    return make_atom(m, strength, period=period, date=date_spec)


PATTERNS: list[tuple[re.Pattern[str], Handler]] = [
    (_CLOCK_RE, _h_clock),
    (_REL_CLOCK_RE, _h_rel_clock),
    (_HALF_HOUR_RE, _h_half_hour),
    (_NOON_RE, _h_noon),
    (_PERIOD_RE, _h_period),
]
