"""Calendar dates: "tomorrow", "march 3rd 2027", "12/25", "the 5th of next month",
"the last day of april", "june 2027", "christmas", "this time tomorrow".

Each handler turns a match into a `DateSpec`; which actual days a spec names
(and which of them comes first) is decided in `candidates`. Weekdays are in
`weekdays`, parts of months, weeks and years in `parts`.
"""

from __future__ import annotations

import calendar
import re
from datetime import date

from mavend.language.timeparse.atoms import (
    DAYNUM,
    EDGE,
    MON,
    NOT_TIME_AFTER,
    UNIT_WORDS,
    WD,
    Atom,
    DateSpec,
    Handler,
    Offset,
    after_currency,
    day_number,
    make_atom,
    month_target,
    offset_with,
    year_number,
)
from mavend.language.timeparse.lexing import MONTHS, WEEKDAYS, Lexed

_RELDAY_RE = re.compile(
    r"(?P<eod>(?:the\s)?end\sof\s(?:the\s)?)?"
    r"(?P<rd>(?:the\s)?day\safter\stomorrow|tomorrow|today|yesterday|(?:the\s)?next\sday|"
    r"(?:the\s)?following\sday|eod|(?:by\s)?end\sof\s(?:the\s)?day(?:\s(?:tomorrow|today))?)"
    r"(?!\w)"
)
_DAY_AFTER_RE = re.compile(r"(?:the\s)?day\s(?P<dir>after|before)(?!\s(?:tomorrow|yesterday))")
_WEEKDAY_DAY_RE = re.compile(
    r"(?:(?:on|this)\s)?(?P<wd>" + WD + r"),?\s(?P<the>the\s)?(?P<d>" + DAYNUM + r")"
    + r"(?!\s?(?:" + MON + r"|of\s))" + NOT_TIME_AFTER + r"(?!\s\d)"
)
# "in 2027" only before a year that is not a count of something ("in 2030 minutes").
_IN_YEAR = r"in\s(?=(?:\d{4}|(?:19|20)\s\d{2})(?!\w)(?!\s(?:" + UNIT_WORDS + r")(?!\w)))"
_YEAR_AFTER = (
    r"(?:(?:\.?,?\s(?:of\s|" + _IN_YEAR + r")?|\s?[-/.]\s?)"
    r"(?P<y>\d{4}|(?:19|20)\s\d{2})(?!\w)(?!\s?[:.]\s?\d)"
    r"|(?:,?\s|\s?[-/.]\s?)(?P<y2>\d{2})(?!\w)" + NOT_TIME_AFTER + r")?"
)
_DAY_MONTH_RE = re.compile(
    r"(?:(?P<wd>" + WD + r"),?\s)?(?:the\s)?" + EDGE + r"(?P<d>" + DAYNUM + r")"
    r"(?:\sday)?(?:\s?[-/.]\s?|\s?(?:of\s)?(?:the\smonth\sof\s)?)(?P<mon>" + MON + r")(?!\w)"
    + _YEAR_AFTER
)
_MONTH_DAY_RE = re.compile(
    r"(?:(?P<wd>" + WD + r"),?\s)?(?P<mon>" + MON + r")\s?[/\-.,]?\s?(?:the\s)?"
    r"(?P<d>" + DAYNUM + r")(?!\s?[:.]\s?\d)(?!\s?(?:am|pm|oclock)(?!\w))"  # "5 march 10 am"
    r"(?:(?:,\s?|\s(?:of\s|" + _IN_YEAR + r")?|\s?[/\-]\s?)(?P<y>\d{4}|(?:19|20)\s\d{2})(?!\w)"
    r"(?!\s?[:.]\s?\d))?"
    r"(?:,?\s(?P<wd2>" + WD + r")(?!\w))?"
)
_YMD_RE = re.compile(
    EDGE + r"(?P<y>\d{4})\s?(?P<sep>[-/.])\s?(?P<a>\d{1,2}|" + MON + r")\s?(?P=sep)\s?"
    r"(?P<b>\d{1,2})(?!\w)(?!\s?[:./]\s?\d)"
)
_DYM_RE = re.compile(
    EDGE + r"(?P<d>\d{1,2})\s?(?P<sep>[-/])\s?(?P<y>\d{4})\s?(?P=sep)\s?(?P<mon>" + MON + r")(?!\w)"
)
_NUMDATE_RE = re.compile(
    r"(?:(?P<on>on)\s)?" + EDGE + r"(?P<a>\d{1,2})\s?(?P<sep>[/.\-])\s?(?P<b>\d{1,2})(?!\w)"
    r"(?:\s?(?P=sep)\s?(?P<y>\d{4}|\d{2})(?!\w))?(?!\s?[:./]\s?\d)"
)
_YMD8_RE = re.compile(r"(?<![\w:./])(?P<ymd>(?:19|20)\d{6})(?!\w)")
_DAY_ONLY_RE = re.compile(
    r"(?P<pfx>on\sthe|for\sthe|on|the|by\sthe)\s" + EDGE + r"(?P<d>" + DAYNUM + r")"
    r"(?!\s?(?:" + MON + r"|of\s))" + NOT_TIME_AFTER
)
_DAY_BEFORE_TIME_RE = re.compile(
    EDGE + r"(?P<d>\d{1,2})(?!\w)(?=\s?(?:,\s?|\sat\s)\d)"  # "20 at 9:30", "20, 7pm"
)
_ORDINAL_RE = re.compile(
    EDGE + r"(?P<d>\d{1,2}th)(?!\w)(?!\s?(?:" + MON + r"|of\s|" + WD + r"|day|last))"
)
_MONTH_REL_DAY_RE = re.compile(
    r"(?:the\s)?" + EDGE + r"(?P<d>" + DAYNUM + r")\s(?:of\s)?(?:the\s)?"
    r"(?P<which>next|this|following|coming)\smonth(?!\w)"
)
_NTH_DAY_RE = re.compile(
    r"(?:the\s)?(?:(?P<n>\d{1,2}th)\s)?(?P<last>last\s)?day\s(?:of|in)\s"
    r"(?:(?P<rel>this|next|the|following)\smonth|(?P<mon>" + MON + r"))(?!\w)"
    r"(?:,?\s(?P<y>\d{4})(?!\w))?"
)
_SAME_TIME_RE = re.compile(
    r"(?:at\s)?(?:this|the\ssame)\stime\s(?P<when>tomorrow|next\sweek|next\smonth|next\syear)"
    r"|(?P<when2>tomorrow|next\sweek)\s(?:at\s)?(?:this|the\ssame)\stime"
)
# "in june", "by june 2027", "june of 2027", "june twenty twenty seven": the 1st.
_MONTH_ONLY_RE = re.compile(
    r"(?:(?P<pfx>in|during|next|this|by|until|till)\s)?(?P<mon>" + MON + r")(?!\w)"
    r"(?:,?\s(?:of\s)?(?P<y>\d{4}|(?:19|20)\s\d{2}))?(?!\w)(?!\s?[/\-.]?\s?\d)"
)
_NEXT_YEAR_AFTER = re.compile(r"\s(?:of\s)?(?:the\s)?(?:next|following|coming)\syear(?!\w)")
_NEXT_UNIT_RE = re.compile(
    r"(?:the\s)?(?P<which>next|following|coming)\s(?P<u>week|month|year)(?!\w)"
    r"|(?:the\s)?(?P<u2>week|month|year)\s(?P<after>after\snext)(?!\w)"
)

_HOLIDAYS: dict[str, str] = {
    # fixed dates are "M-D"; others are computed in candidates.holiday_date
    r"new\syears?\seve": "12-31",
    r"new\syears?(?:\sday)?": "1-1",
    r"christmas\seve": "12-24",
    r"christmas(?:\sday)?": "12-25",
    r"boxing\sday": "12-26",
    r"valentines?(?:\sday)?": "2-14",
    r"(?:st\s|saint\s)?patricks\sday": "3-17",
    r"april\sfools?(?:\sday)?": "4-1",
    r"halloween": "10-31",
    r"independence\sday": "7-4",
    r"(?:international\s)?workers\sday|may\sday|labour\sday": "5-1",
    r"veterans\sday|remembrance\sday|armistice\sday": "11-11",
    r"easter(?:\ssunday)?": "easter",
    r"easter\smonday": "easter+1",
    r"good\sfriday": "easter-2",
    r"thanksgiving(?:\sday)?": "thanksgiving",
    r"black\sfriday": "thanksgiving+1",
    r"mothers\sday": "nth:5:2:6",  # second Sunday of May
    r"fathers\sday": "nth:6:3:6",
    r"memorial\sday": "nth:5:-1:0",
    r"labor\sday": "nth:9:1:0",
    r"(?:mlk|martin\sluther\sking(?:\sjr)?)\sday": "nth:1:3:0",
    r"presidents\sday": "nth:2:3:0",
    r"columbus\sday": "nth:10:2:0",
}
_HOLIDAY_KEYS = list(_HOLIDAYS)
_HOLIDAY_RE = re.compile(
    r"(?:(?P<mod>this\scoming|this|next|the\sfollowing|following|coming|upcoming)\s)?"
    r"(?P<h>" + "|".join(f"(?:{k})" for k in _HOLIDAY_KEYS) + r")(?!\w)"
    r"(?:\s(?:of\s)?(?P<y>\d{4})(?!\w))?"
)


def _h_relday(m: re.Match[str], lx: Lexed) -> Atom | None:
    rd = m["rd"]
    eod = bool(m["eod"]) or rd == "eod" or "end of" in rd
    if "after tomorrow" in rd:
        n = 2
    elif "tomorrow" in rd or "next" in rd or "following" in rd:
        n = 1
    elif rd == "yesterday":
        n = -1  # only a date to count from ("a week from yesterday"), see resolve
    else:
        n = 0
    return make_atom(m, 2, date=DateSpec("rel", n, end_of_day=eod))


def _h_day_after(m: re.Match[str], lx: Lexed) -> Atom | None:
    # "the day after" that ends the sentence counts from today; inside one it
    # needs the date it counts from ("the day after christmas"). "The day before" always
    # does: without a date it read as tomorrow ("the day before my sister's birthday").
    ends = not re.search(r"[^\W_]", lx.canon[m.end() :])
    # One day, in the anchor's direction (the step applies the sign: a negative count
    # here made "the day before christmas" the 26th).
    off = Offset(days=1, anchor=m["dir"], anchor_optional=ends and m["dir"] == "after")
    return make_atom(m, 2 if ends else 1, offset=off)


def _h_weekday_day(m: re.Match[str], lx: Lexed) -> Atom | None:
    d = day_number(m["d"])
    if not 1 <= d <= 31:
        return None
    if d <= 12 and not (m["the"] or m["d"].endswith("th")):
        return None  # "monday 9" is nine o'clock; the 9th is said as an ordinal
    wd = WEEKDAYS.index(m["wd"])
    return make_atom(m, 3, date=DateSpec("day", d, weekday=wd))


def _month_day(m: re.Match[str], strength: int, year: int | None) -> Atom | None:
    d = day_number(m["d"])
    month = MONTHS.index(m["mon"]) + 1
    if not 1 <= d <= 31 or d > _max_day(month):
        return None
    wd_text = m["wd"] or (m.groupdict().get("wd2") or "")
    wd = WEEKDAYS.index(wd_text) if wd_text else None
    return make_atom(m, strength, date=DateSpec("md", month, d, year=year, weekday=wd))


def _max_day(month: int) -> int:
    return 29 if month == 2 else calendar.monthrange(2001, month)[1]


def _h_day_month(m: re.Match[str], lx: Lexed) -> Atom | None:
    if after_currency(lx, m.start("d")):
        return None  # "$ 40 June 3": the 40 is money
    return _month_day(m, 3, year_number(m["y"] or m["y2"]))


def _h_month_day(m: re.Match[str], lx: Lexed) -> Atom | None:
    if m["mon"] == "may" and not (m["y"] or m["wd"] or m["d"].endswith("th")):
        # "may 5" reads as a date, "you may 3 ..." should not: require the day to look like one
        tail = lx.canon[m.end() :].lstrip()
        if tail[:1].isalpha() and not tail.startswith(("at", "in", "on")):
            return None
    return _month_day(m, 3, year_number(m["y"]))


def _h_ymd(m: re.Match[str], lx: Lexed) -> Atom | None:
    a = m["a"]
    month = MONTHS.index(a) + 1 if a.isalpha() else int(a)
    return _date_atom(m, int(m["y"]), month, int(m["b"]), 3)


def _h_dym(m: re.Match[str], lx: Lexed) -> Atom | None:
    return _date_atom(m, int(m["y"]), MONTHS.index(m["mon"]) + 1, int(m["d"]), 3)


def _date_atom(m: re.Match[str], y: int | None, month: int, d: int, strength: int) -> Atom | None:
    if not 1 <= month <= 12 or not 1 <= d <= _max_day(month):
        return None
    if y is not None:
        try:
            date(y, month, d)
        except ValueError:
            return None
    return make_atom(m, strength, date=DateSpec("md", month, d, year=y))


def _h_numdate(m: re.Match[str], lx: Lexed) -> Atom | None:
    a, b, sep = int(m["a"]), int(m["b"]), m["sep"]
    if lx.spoken(m.start("a")):
        return None  # "two point five" is a number; dates are written, not said so
    y = year_number(m["y"])
    if sep == "-" and y is None:
        return None  # "3-4" is a range or a score
    if y is None:
        before = lx.canon[: m.start("a")].rstrip()
        if sep == "." and before.endswith(("at", "@", "around", "about")):
            return None
        if after_currency(lx, m.start("a")):
            return None
    # Month first (the sources are US English) unless that cannot be a date; dots
    # with a year ("3.4.2027") are the European day-first spelling.
    month, d = (a, b) if a <= 12 else (b, a)
    if sep == "." and y is not None and b <= 12:
        month, d = b, a
    strength = 2 if (sep == "/" or y is not None or m["on"]) else 1
    return _date_atom(m, y, month, d, strength)


def _h_ymd8(m: re.Match[str], lx: Lexed) -> Atom | None:
    s = m["ymd"]
    return _date_atom(m, int(s[:4]), int(s[4:6]), int(s[6:]), 2)


# Words that may follow a day number ("on the 5th at 9", "the 3rd to pay rent");
# any other word makes it an ordinal of something else ("the first floor").
_DAY_FOLLOWERS = frozenset(
    {
        "at", "on", "in", "of", "to", "for", "and", "or", "by", "please", "i", "we", "you",
        "around", "about", "from", "till", "until", "before", "after", "then", "so", "this", "next",
        "morning", "afternoon", "evening", "night", "tonight", "noon", "midnight", "remind", "that",
        "because", "if", "when", "is", "as", "with",
    }
)


def _ends_day(lx: Lexed, end: int) -> bool:
    rest = lx.canon[end:].lstrip(" ")
    word = re.match(r"[a-z]+", rest)
    return word is None or word.group(0) in _DAY_FOLLOWERS


def _h_day_only(m: re.Match[str], lx: Lexed) -> Atom | None:
    d = day_number(m["d"])
    if not 1 <= d <= 31 or not _ends_day(lx, m.end()):
        return None
    pfx = m["pfx"]
    strength = 1 if pfx == "the" and not m["d"].endswith("th") else 2
    return make_atom(m, strength, date=DateSpec("day", d))


def _h_day_before_time(m: re.Match[str], lx: Lexed) -> Atom | None:
    d = day_number(m["d"])
    return make_atom(m, 1, date=DateSpec("day", d)) if 1 <= d <= 31 else None


def _h_ordinal(m: re.Match[str], lx: Lexed) -> Atom | None:
    d = day_number(m["d"])
    if not 1 <= d <= 31 or not _ends_day(lx, m.end()):
        return None
    return make_atom(m, 1, date=DateSpec("day", d))


def _h_month_rel_day(m: re.Match[str], lx: Lexed) -> Atom | None:
    d = day_number(m["d"])
    if not 1 <= d <= 31:
        return None
    delta = 0 if m["which"] == "this" else 1
    return make_atom(m, 3, date=DateSpec("month_rel_day", d, delta))


def _h_nth_day(m: re.Match[str], lx: Lexed) -> Atom | None:
    if not m["n"] and not m["last"]:
        return None
    n = day_number(m["n"]) if m["n"] else 1
    if m["last"]:
        n = -n
    how, value = month_target(m)
    spec = DateSpec("nth_day", n, 0, value, year=year_number(m["y"]), name=how)
    return make_atom(m, 3, date=spec)


def _h_same_time(m: re.Match[str], lx: Lexed) -> Atom | None:
    """ "this time tomorrow": the same clock time, one calendar step ahead."""
    step = {"tomorrow": Offset(days=1), "next week": Offset(days=7),
            "next month": Offset(months=1), "next year": Offset(months=12)}
    return make_atom(m, 3, offset=offset_with(step[m["when"] or m["when2"]], relative=True))


def _h_month_only(m: re.Match[str], lx: Lexed) -> Atom | None:
    if not (m["pfx"] or m["y"] or _NEXT_YEAR_AFTER.match(lx.canon, m.end())):
        return None  # "march" alone is also a verb; "march of next year" is not
    month = MONTHS.index(m["mon"]) + 1
    return make_atom(m, 2, date=DateSpec("md", month, 1, year=year_number(m["y"])))


def _h_next_unit(m: re.Match[str], lx: Lexed) -> Atom | None:
    ahead = 2 if m["after"] else 1
    return make_atom(m, 2, date=DateSpec("next_unit", ahead, name=m["u"] or m["u2"]))


def _h_holiday(m: re.Match[str], lx: Lexed) -> Atom | None:
    text = m["h"]
    for key in _HOLIDAY_KEYS:
        if re.fullmatch(key, text):
            spec = DateSpec("holiday", name=_HOLIDAYS[key], year=year_number(m["y"]))
            return make_atom(m, 3, date=spec)
    return None  # pragma: no cover - the alternation and the table agree


PATTERNS: list[tuple[re.Pattern[str], Handler]] = [
    (_RELDAY_RE, _h_relday),
    (_DAY_AFTER_RE, _h_day_after),
    (_WEEKDAY_DAY_RE, _h_weekday_day),
    (_DAY_MONTH_RE, _h_day_month),
    (_MONTH_DAY_RE, _h_month_day),
    (_YMD_RE, _h_ymd),
    (_DYM_RE, _h_dym),
    (_NUMDATE_RE, _h_numdate),
    (_YMD8_RE, _h_ymd8),
    (_DAY_ONLY_RE, _h_day_only),
    (_ORDINAL_RE, _h_ordinal),
    (_DAY_BEFORE_TIME_RE, _h_day_before_time),
    (_MONTH_REL_DAY_RE, _h_month_rel_day),
    (_NTH_DAY_RE, _h_nth_day),
    (_NEXT_UNIT_RE, _h_next_unit),
    (_MONTH_ONLY_RE, _h_month_only),
    (_SAME_TIME_RE, _h_same_time),
    (_HOLIDAY_RE, _h_holiday),
]
