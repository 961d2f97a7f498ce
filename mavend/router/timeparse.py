"""Resolve spoken time expressions into absolute, timezone-aware datetimes.

The LLM never computes times: it hands over the phrase the user said, and this
module turns it into an instant, once, at capture ("in 4 h" becomes now + 4 h).
The classifier path only has the whole utterance, so `find_time` also locates
the expression inside it.

How it works, in three passes:
1. Lexing: the text is split into tokens that keep their offsets in the input,
   then canonicalised (lower case, number words to digits, "p. m." to "pm",
   "tmrw" to "tomorrow", ...). Speech-to-text spells numbers out, so "twenty
   five to nine" and "25 to 9" must read the same.
2. Atoms: a small grammar of regular expressions over the canonical text finds
   clock times, dates, parts of the day and spans of time. Each atom carries a
   strength: "at 5 pm" is surely a time, a bare "5" only when next to a date.
3. Groups: atoms that only have connectors between them ("tomorrow at 7",
   "8, tomorrow evening", "2 weeks after easter on monday") are merged, and the
   strongest group is resolved against `now`.

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
  small hours), and an alarm or wake-up call makes a bare hour a morning.
  24-hour spellings ("07:00", "19:45", "7h01") are taken as they are.
- Weekdays. "on tuesday" said on a Tuesday means next week, unless a time is
  given that is still ahead today ("tuesday at 6pm" said at 14:00). "this
  friday" is the Friday of this week, "next friday" / "friday next week" the
  Friday of next week. A weekday next to a date without a year picks between
  the date's next two occurrences ("Sat, Aug 9"); otherwise the date wins.
  "in 2 weeks on monday" is the Monday of the week 2 weeks from now.
- A date without a time of day resolves to `default_time` (09:00), kind
  "date". A date that names today once that hour has passed ("today", "the
  12th" said on the 12th) resolves to the next full hour.
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

import calendar
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mavend.router.numbers import TEENS, TENS, UNITS

__all__ = ["DEFAULT_TIME", "TimeResolution", "find_time", "local_zone", "resolve_time"]

DEFAULT_TIME = time(9, 0)  # a date said without a time of day fires at 09:00
# Utterances are short; past this the input is cut so a pasted wall of text
# still answers in bounded time.
MAX_INPUT_CHARS = 2000


@dataclass(frozen=True)
class TimeResolution:
    when: datetime  # absolute, tz-aware (duration -> now + duration)
    kind: str  # "datetime" | "date" | "time" | "duration"
    phrase: str  # the span of text that was resolved, verbatim from the input
    duration: timedelta | None = None  # set for spans of time ("ten minutes", "in 2 h")


# ---------------------------------------------------------------------------
# Public API


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
    return _resolve_text(phrase, now, prefer_future, default_time, min_score=0)


def find_time(
    utterance: str,
    now: datetime,
    *,
    prefer_future: bool = True,
    default_time: time = DEFAULT_TIME,
) -> TimeResolution | None:
    """Locate and resolve the time expression inside a whole utterance."""
    return _resolve_text(utterance, now, prefer_future, default_time, min_score=2)


def local_zone() -> tzinfo:
    """The machine's zone, as an IANA zone when it can be named (DST-aware)."""
    return _local_zone()


# ---------------------------------------------------------------------------
# Lexing


@dataclass
class _Tok:
    text: str  # canonical text
    start: int  # offsets in the original input
    end: int
    gap: bool  # whitespace before it in the input
    kind: str  # "num" | "word" | "punct"
    spoken: bool = False  # a number that was written as words


_RAW_TOKEN = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*|\d+|\S")

_UNITS, _TEENS, _TENS = UNITS, TEENS, TENS
_ORD_UNITS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9,
}
_ORD_OTHER = {
    "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
    "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
    "twentieth": 20, "thirtieth": 30,
}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)
_ALIASES = {
    "mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday",
    "weds": "wednesday", "thu": "thursday", "thur": "thursday", "thurs": "thursday",
    "fri": "friday", "sat": "saturday", "sun": "sunday",
    "jan": "january", "feb": "february", "mar": "march", "apr": "april", "jun": "june",
    "jul": "july", "aug": "august", "sep": "september", "sept": "september",
    "oct": "october", "nov": "november", "dec": "december",
    "tmrw": "tomorrow", "tmr": "tomorrow", "tmw": "tomorrow", "tomorow": "tomorrow",
    "tommorow": "tomorrow", "tommorrow": "tomorrow", "tomorrows": "tomorrow",
    "tonite": "tonight", "nite": "night",
    "o'clock": "oclock", "noonish": "noon", "midday": "noon", "mid-day": "noon",
    "an": "a", "xmas": "christmas", "eod": "eod",
    "year's": "years", "valentine's": "valentines", "mother's": "mothers",
    "father's": "fathers", "patrick's": "patricks", "fool's": "fools", "new-year": "new year",
    "afternoonish": "afternoon", "morningish": "morning", "eveningish": "evening",
}
_AMBIGUOUS_ABBREV = {"sun", "sat", "wed", "mar", "mon", "fri"}  # also ordinary words
_DROP = {"ampm"}  # "9ampm": the writer could not decide, neither can we
_MIDS = {"night": "midnight", "day": "noon", "morning": "midmorning",
         "afternoon": "midafternoon", "evening": "midevening"}


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "′": "'", "”": '"', "“": '"', "″": '"'})


def _raw_tokens(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    prev_end = 0
    # Curly quotes become straight ones and terminal escapes blanks (same
    # length, so offsets still hold).
    text = _ANSI.sub(lambda m: " " * len(m.group(0)), text.translate(_QUOTES))
    for m in _RAW_TOKEN.finditer(text):
        s = m.group(0)
        kind = "num" if s[0].isdigit() else ("word" if s[0].isalpha() else "punct")
        gap = m.start() > prev_end or not toks
        toks.append(_Tok(s.lower(), m.start(), m.end(), gap and bool(toks), kind))
        prev_end = m.end()
    return toks


def _drop_word_hyphens(raw: list[_Tok]) -> list[_Tok]:
    """ "half-day", "mid-morning", "45-seconds": a hyphen glued between a word or
    number and a word only joins them. Dates ("2031-oct-7") keep theirs."""
    out: list[_Tok] = []
    for k, t in enumerate(raw):
        prev = raw[k - 1] if k else None
        nxt = raw[k + 1] if k + 1 < len(raw) else None
        if (
            t.text == "-" and prev is not None and nxt is not None and not t.gap and not nxt.gap
            and prev.kind != "punct" and nxt.kind == "word"
            and _ALIASES.get(nxt.text, nxt.text) not in _MONTHS
            and _ALIASES.get(prev.text, prev.text) not in _MONTHS
        ):
            nxt.gap = True
            continue
        out.append(t)
    return out


def _canonical(raw: list[_Tok]) -> list[_Tok]:
    raw = _drop_word_hyphens(raw)
    out: list[_Tok] = []
    i = 0
    n = len(raw)
    while i < n:
        t = raw[i]
        nxt = raw[i + 1] if i + 1 < n else None
        prev = out[-1] if out else None
        # Number words ("twenty five", "two thousand and thirty two", "twenty-fourth").
        if t.kind == "word" and _is_number_word(t.text):
            merged, i = _merge_number_words(raw, i, prev)
            out.append(merged)
            continue
        # "21st", "2nd": an ordinal glued to its digits.
        if t.kind == "num" and nxt and not nxt.gap and nxt.text in ("st", "nd", "rd", "th"):
            out.append(_Tok(f"{int(t.text)}th", t.start, nxt.end, t.gap, "num"))
            i += 2
            continue
        # am / pm in all their spellings, only right after a number.
        if t.kind == "word" and t.text in ("a", "p", "am", "pm") and prev and (
            prev.kind == "num" or prev.text in ("oclock", "ish")
        ):
            meridiem, j = _meridiem(raw, i)
            if meridiem:
                out.append(_Tok(meridiem, t.start, raw[j - 1].end, t.gap, "word"))
                i = j
                continue
        if t.kind == "punct":
            i = _punct(raw, i, out)
            continue
        word = t.text
        if word == "o" and nxt and nxt.text == "clock":
            out.append(_Tok("oclock", t.start, nxt.end, t.gap, "word"))
            i += 2
            continue
        if word == "mid" and nxt and nxt.kind == "word" and nxt.text in _MIDS:
            out.append(_Tok(_MIDS[nxt.text], t.start, nxt.end, t.gap, "word"))
            i += 2
            continue
        if word == "lunch" and nxt and nxt.text == "time":
            out.append(_Tok("lunchtime", t.start, nxt.end, t.gap, "word"))
            i += 2
            continue
        if word.startswith("mid") and word[3:] in _MIDS:
            word = _MIDS[word[3:]]
        elif word.endswith("s") and word[:-1] in _WEEKDAYS:
            word = word[:-1]  # "three fridays from now"
        if word in _DROP:
            i += 1
            continue
        word = _ALIASES.get(word, word)
        out.append(_Tok(word, t.start, t.end, t.gap, t.kind))
        i += 1
    return out


def _punct(raw: list[_Tok], i: int, out: list[_Tok]) -> int:
    t = raw[i]
    prev = out[-1] if out else None
    glued_prev = prev is not None and not t.gap
    ch = t.text
    if ch in ("’", "‘", "'", "′"):
        # 15' is fifteen minutes; any other apostrophe (workers' day) is noise.
        if glued_prev and prev.kind == "num":
            out.append(_Tok("'", t.start, t.end, t.gap, "punct"))
        return i + 1
    if ch in ('"', "”", "″"):
        if glued_prev and prev.kind == "num":
            out.append(_Tok('"', t.start, t.end, t.gap, "punct"))
        return i + 1
    out.append(_Tok(ch, t.start, t.end, t.gap, "punct"))
    return i + 1


def _meridiem(raw: list[_Tok], i: int) -> tuple[str, int]:
    """Read am/pm at raw[i]: "pm", "p", "p.m.", "p. m .", "p m". Returns (word, next index)."""
    t = raw[i]
    if t.text in ("am", "pm"):
        j = i + 1
        if j < len(raw) and raw[j].text == ".":
            j += 1
        return t.text, j
    letter = t.text
    j = i + 1
    saw_m = saw_dot = False
    if j < len(raw) and raw[j].text == ".":
        j += 1
        saw_dot = True
    if j < len(raw) and raw[j].text == "m":
        j += 1
        saw_m = True
        if j < len(raw) and raw[j].text == ".":
            j += 1
    # A lone "a"/"p" is a meridiem only when glued to the number ("3p", "8:15a")
    # or spelled with a dot or an "m"; "3 a day" stays an article.
    if saw_m or saw_dot or not t.gap:
        return letter + "m", j
    return "", i


def _is_number_word(w: str) -> bool:
    return w in _UNITS or w in _TEENS or w in _TENS or w in _ORD_UNITS or w in _ORD_OTHER


def _merge_number_words(raw: list[_Tok], i: int, prev: _Tok | None) -> tuple[_Tok, int]:
    """Merge a run of number words into one numeric token (spoken=True)."""
    start_tok = raw[i]
    w = start_tok.text
    n = len(raw)

    def at(k: int) -> str:
        return raw[k].text if k < n else ""

    # "second" is both a unit and an ordinal: an ordinal before of/month/weekday/day.
    if w == "second":
        after = at(i + 1)
        ordinal = (prev is not None and prev.text == "the") or after in (
            "of", "day", "week", "last", *_WEEKDAYS, *_MONTHS,
        ) or _ALIASES.get(after, "") in (*_WEEKDAYS, *_MONTHS)
        if not ordinal:
            return _Tok("second", start_tok.start, start_tok.end, start_tok.gap, "word"), i + 1
    if w in _ORD_UNITS or w in _ORD_OTHER:
        value = _ORD_UNITS.get(w) or _ORD_OTHER[w]
        return _Tok(f"{value}th", start_tok.start, start_tok.end, start_tok.gap, "num", True), i + 1
    j = i + 1
    ordinal = False
    if w in _TENS:
        value = _TENS[w]
        k = j + 1 if at(j) == "-" and not raw[j].gap else j
        if at(k) in _UNITS and _UNITS[at(k)] > 0:
            value += _UNITS[at(k)]
            j = k + 1
        elif at(k) in _ORD_UNITS:
            value += _ORD_UNITS[at(k)]
            ordinal = True
            j = k + 1
        elif at(j) == "and" and at(j + 1) in _UNITS and _UNITS[at(j + 1)] > 0:
            value += _UNITS[at(j + 1)]  # "thirty and five minutes"
            j += 2
    else:
        value = _UNITS.get(w, _TEENS.get(w, 0))
    # hundreds and thousands: "two thousand and thirty two"
    for word, mult in (("hundred", 100), ("thousand", 1000)):
        if not ordinal and at(j) == word:
            value *= mult
            j += 1
            k = j + 1 if at(j) == "and" else j
            if at(k) and _is_number_word(at(k)) and at(k) != "second":
                rest, k2 = _merge_number_words(raw, k, None)
                if rest.text.isdigit() and int(rest.text) < mult:
                    value += int(rest.text)
                    j = k2
                elif rest.text.endswith("th"):
                    value += int(rest.text[:-2])
                    ordinal = True
                    j = k2
    end = raw[j - 1].end
    text = f"{value}th" if ordinal else str(value)
    # "seven oh five": a minute written with a leading "oh".
    return _Tok(text, start_tok.start, end, start_tok.gap, "num", True), j


@dataclass
class _Lexed:
    text: str  # the original input (possibly cut)
    canon: str  # canonical text the grammar runs on
    toks: list[_Tok]
    cstart: list[int]  # canonical start of each token
    cend: list[int]

    def tok_at(self, cpos: int) -> int:
        """Index of the token covering canonical position cpos (or the next one)."""
        lo, hi = 0, len(self.cstart)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.cend[mid] <= cpos:
                lo = mid + 1
            else:
                hi = mid
        return min(lo, len(self.toks) - 1)

    def spoken(self, cpos: int) -> bool:
        return bool(self.toks) and self.toks[self.tok_at(cpos)].spoken

    def original(self, cpos: int) -> str:
        t = self.toks[self.tok_at(cpos)]
        return self.text[t.start : t.end].lower()

    def span(self, cstart: int, cend: int) -> tuple[int, int]:
        while cstart < cend and self.canon[cstart] == " ":
            cstart += 1
        while cend > cstart and self.canon[cend - 1] == " ":
            cend -= 1
        first = self.tok_at(cstart)
        last = self.tok_at(max(cstart, cend - 1))
        return self.toks[first].start, self.toks[last].end


def _lex(text: str) -> _Lexed:
    toks = _canonical(_raw_tokens(text))
    toks = _oh_minutes(toks)
    parts: list[str] = []
    cstart: list[int] = []
    cend: list[int] = []
    pos = 0
    prev: _Tok | None = None
    for t in toks:
        sep = ""
        if prev is not None and (
            t.gap or (prev.kind != t.kind and prev.kind != "punct" and t.kind != "punct")
        ):
            sep = " "
        parts.append(sep)
        pos += len(sep)
        cstart.append(pos)
        parts.append(t.text)
        pos += len(t.text)
        cend.append(pos)
        prev = t
    return _Lexed(text, "".join(parts), toks, cstart, cend)


def _oh_minutes(toks: list[_Tok]) -> list[_Tok]:
    """ "seven oh five" -> 7 05: the "oh" marks a minute below ten."""
    out: list[_Tok] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if (
            t.text in ("oh", "o") and out and out[-1].kind == "num" and i + 1 < len(toks)
            and toks[i + 1].kind == "num" and toks[i + 1].text.isdigit()
            and len(toks[i + 1].text) == 1
        ):
            nxt = toks[i + 1]
            out.append(_Tok("0" + nxt.text, t.start, nxt.end, t.gap, "num", True))
            i += 2
            continue
        out.append(t)
        i += 1
    return out


# ---------------------------------------------------------------------------
# Atoms: what the grammar finds


@dataclass(frozen=True)
class _Clock:
    h: int
    m: int = 0
    s: int = 0
    meridiem: str = ""  # "am" | "pm" | ""
    exact24: bool = False  # 0, 13-23, "07:00", "7h01": no am/pm question
    shift: int = 0  # minutes added after am/pm is settled ("twenty to nine")
    weak: bool = False  # a bare number: a time only next to a date or part of day


@dataclass(frozen=True)
class _Period:
    name: str  # morning, afternoon, evening, night, lunch, am, pm, mid...
    default: tuple[int, int]


@dataclass(frozen=True)
class _DateSpec:
    kind: str  # see _date_candidates
    a: int = 0
    b: int = 0
    c: int = 0
    year: int | None = None
    weekday: int | None = None  # a weekday that must match (Sunday 8/3)
    end_of_day: bool = False
    name: str = ""


@dataclass(frozen=True)
class _Offset:
    months: float = 0
    days: float = 0
    seconds: float = 0
    bdays: int = 0
    relative: bool = False  # counted from now ("in 5 min", "5 min from now")
    anchor: str = ""  # "after" | "before": counted from a date that follows
    anchor_optional: bool = False  # "the day after" alone counts from today
    nth_weekday: tuple[int, int] | None = None  # (n, weekday) after an anchor


@dataclass
class _Atom:
    start: int
    end: int
    strength: int
    clock: _Clock | None = None
    date: _DateSpec | None = None
    period: _Period | None = None
    offset: _Offset | None = None
    tz: tzinfo | None = None


# Regular-expression fragments over the canonical text.
_WD = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_MON = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
_L = r"(?<![\w:./\-])"  # a number must not continue another number or date
_DAYNUM = r"(?:\d{1,2}th|\d{1,2})(?!\w)"
_PRE = (
    r"(?:(?P<pre>(?:at|around|about|approximately|approx|by|before|after|until|till|from|for|"
    r"since|on)(?=\s)|@)\s?)?"
)
_STRONG_PRE = {"at", "@", "around", "about", "approximately", "approx", "by", "until", "till"}
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
_UNIT_WORDS = (
    r"(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|wks?|fortnights?|"
    r"months?|years?|yrs?|weekends?)"
)
_NOT_TIME_AFTER = (
    r"(?!\s?(?:[:./]\s?\d|am|pm|oclock|ish|h(?!\w)|'|\"|" + _UNIT_WORDS + r"(?!\w)))"
)

_CLOCK_RE = re.compile(
    _PRE + _L
    + r"(?:(?P<hm>\d{3,4})(?!\w)(?!\s?[\-.]?\s?\d)|(?P<h>\d{1,2})(?!\w)(?!\s?[/\-]\s?\d)"
    r"(?:(?P<sep>\s?[:.]\s?|\s?h\s?|\s)(?P<m>\d{2})(?!\w)(?:\s?[:.]\s?(?P<s>\d{2})(?!\w))?"
    r"|(?P<hh>\s?h)(?!\w)(?!\s?\d))?)"
    r"(?!\s?[:./]\s?\d)"
    r"(?:\s?(?P<ish>ish))?(?:\s?(?P<oc>oclock))?(?:\s?(?P<ish2>ish))?"
    r"(?:\s?(?P<ap>am|pm))?(?:\s?ish)?(?:\s?(?P<oc2>oclock))?" + _TZ
)
_REL_CLOCK_RE = re.compile(
    _PRE
    + r"(?P<q>(?:a\s)?quarter|half|3\squarters|" + _L + r"\d{1,2}(?!\w))"
    r"(?:\s(?:minutes?|mins?))?\s(?P<rel>past|after|to|till|til|before|of)\s"
    r"(?:(?P<noon>noon|midnight)|(?P<bh>\d{1,2})(?!\w)(?:\s?(?::|h)\s?(?P<bm>\d{2})(?!\w))?"
    r"(?:\s?oclock)?(?:\s?(?P<ap>am|pm))?(?:\s?oclock)?)" + _TZ
)
_NOON_RE = re.compile(_PRE + r"(?:12\s)?(?P<nm>noon|midnight)(?:\s?ish)?")
# An alarm or a wake-up call: a bare hour is a morning, "for twelve" is a time.
_ALARM_RE = re.compile(r"(?<![^\W_])(?:wake|waking|alarm)(?![^\W_])")
_PERIOD_RE = re.compile(
    r"(?:(?P<pfx>this|in\sthe|during\sthe|at|next|tonight|early\sin\sthe|late\sin\sthe|"
    r"for\sthe|over\sthe|the)\s)?"
    r"(?:(?:early|late)\s)?"
    r"(?P<p>morning|afternoon|evening|night|tonight|lunchtime|lunch|midmorning|"
    r"midafternoon|midevening|dawn|daybreak|sunrise|dusk|sunset)(?!\w)"
    r"|in\sthe\s(?P<ap>am|pm)(?!\w)"
)
_RELDAY_RE = re.compile(
    r"(?P<eod>(?:the\s)?end\sof\s(?:the\s)?)?"
    r"(?P<rd>(?:the\s)?day\safter\stomorrow|tomorrow|today|(?:the\s)?next\sday|"
    r"(?:the\s)?following\sday|eod|(?:by\s)?end\sof\s(?:the\s)?day)(?!\w)"
)
_DAY_AFTER_RE = re.compile(r"(?:the\s)?day\s(?P<dir>after|before)(?!\s(?:tomorrow|yesterday))")
_WEEKDAY_RE = re.compile(
    r"(?P<eod>(?:the\s)?end\sof\s(?:the\s)?)?"
    r"(?:(?P<mod>this\scoming|this|next|the\sfollowing|following|coming|upcoming|on|on\sthe)\s)?"
    r"(?P<wd>" + _WD + r")(?!\w)"
    r"(?:\s(?P<post>after\snext|of\snext\sweek|next\sweek|of\sthis\sweek|this\sweek))?"
)
_WEEKDAY_NEXT_WEEK_RE = re.compile(
    r"(?:the\s)?(?:next|following)\sweek,?\s(?:on\s)?(?:the\s)?(?P<wd>" + _WD + r")(?!\w)"
)
_N_WEEKDAYS_RE = re.compile(
    r"(?P<n>" + _L + r"\d{1,2}|a)\s(?P<wd>" + _WD + r")\sfrom\s(?:now|today)(?!\w)"
)
_WEEKDAY_DAY_RE = re.compile(
    r"(?:(?:on|this)\s)?(?P<wd>" + _WD + r"),?\s(?:the\s)?(?P<d>" + _DAYNUM + r")"
    + r"(?!\s?(?:" + _MON + r"|of\s))" + _NOT_TIME_AFTER
)
_YEAR_AFTER = (
    r"(?:,?\s(?P<y>\d{4}|(?:19|20)\s\d{2})(?!\w)(?!\s?[:.]\s?\d)"
    r"|,?\s(?P<y2>\d{2})(?!\w)" + _NOT_TIME_AFTER + r")?"
)
_DAY_MONTH_RE = re.compile(
    r"(?:(?P<wd>" + _WD + r"),?\s)?(?:the\s)?" + _L + r"(?P<d>" + _DAYNUM + r")"
    r"(?:\sday)?\s?(?:of\s)?(?:the\smonth\sof\s)?(?P<mon>" + _MON + r")(?!\w)" + _YEAR_AFTER
)
_MONTH_DAY_RE = re.compile(
    r"(?:(?P<wd>" + _WD + r"),?\s)?(?P<mon>" + _MON + r")\s?[/\-.,]?\s?(?:the\s)?"
    r"(?P<d>" + _DAYNUM + r")(?!\s?[:.]\s?\d)"
    r"(?:(?:,\s?|\s|\s?[/\-]\s?)(?P<y>\d{4}|(?:19|20)\s\d{2})(?!\w)(?!\s?[:.]\s?\d))?"
    r"(?:,?\s(?P<wd2>" + _WD + r")(?!\w))?"
)
_YMD_RE = re.compile(
    _L + r"(?P<y>\d{4})\s?(?P<sep>[-/.])\s?(?P<a>\d{1,2}|" + _MON + r")\s?(?P=sep)\s?"
    r"(?P<b>\d{1,2})(?!\w)(?!\s?[:./]\s?\d)"
)
_DYM_RE = re.compile(
    _L + r"(?P<d>\d{1,2})\s?(?P<sep>[-/])\s?(?P<y>\d{4})\s?(?P=sep)\s?(?P<mon>" + _MON + r")(?!\w)"
)
_NUMDATE_RE = re.compile(
    r"(?:(?P<on>on)\s)?" + _L + r"(?P<a>\d{1,2})\s?(?P<sep>[/.\-])\s?(?P<b>\d{1,2})(?!\w)"
    r"(?:\s?(?P=sep)\s?(?P<y>\d{4}|\d{2})(?!\w))?(?!\s?[:./]\s?\d)"
)
_YMD8_RE = re.compile(r"(?<![\w:./])(?P<ymd>(?:19|20)\d{6})(?!\w)")
_DAY_ONLY_RE = re.compile(
    r"(?P<pfx>on\sthe|for\sthe|on|the|by\sthe)\s" + _L + r"(?P<d>" + _DAYNUM + r")"
    r"(?!\s?(?:" + _MON + r"|of\s))" + _NOT_TIME_AFTER
)
_DAY_BEFORE_TIME_RE = re.compile(
    _L + r"(?P<d>\d{1,2})(?!\w)(?=\s?(?:,\s?|\sat\s)\d)"  # "20 at 9:30", "20, 7pm"
)
_ORDINAL_RE = re.compile(
    _L + r"(?P<d>\d{1,2}th)(?!\w)(?!\s?(?:" + _MON + r"|of\s|" + _WD + r"|day|last))"
)
_MONTH_REL_DAY_RE = re.compile(
    r"(?:the\s)?" + _L + r"(?P<d>" + _DAYNUM + r")\s(?:of\s)?(?:the\s)?"
    r"(?P<which>next|this|following|coming)\smonth(?!\w)"
)
_NTH_WEEKDAY_RE = re.compile(
    r"(?:the\s)?(?P<n>\d{1,2}th|last|final)\s(?P<wd>" + _WD + r")\s(?:of|in)\s"
    r"(?:(?P<rel>this|next|the|following)\smonth|(?P<mon>" + _MON + r"))(?!\w)"
    r"(?:,?\s(?P<y>\d{4})(?!\w))?"
)
_NTH_DAY_RE = re.compile(
    r"(?:the\s)?(?:(?P<n>\d{1,2}th)\s)?(?P<last>last\s)?day\s(?:of|in)\s"
    r"(?:(?P<rel>this|next|the|following)\smonth|(?P<mon>" + _MON + r"))(?!\w)"
    r"(?:,?\s(?P<y>\d{4})(?!\w))?"
)
_SAME_TIME_RE = re.compile(
    r"(?:at\s)?(?:this|the\ssame)\stime\s(?P<when>tomorrow|next\sweek|next\smonth|next\syear)"
    r"|(?P<when2>tomorrow|next\sweek)\s(?:at\s)?(?:this|the\ssame)\stime"
)
_WEEKEND_RE = re.compile(
    r"(?:(?P<mod>this\scoming|this|next|coming|the|on\sthe|over\sthe|at\sthe)\s)?weekend(?!\w)"
)
_MONTH_ONLY_RE = re.compile(
    r"(?:in|during|next|this|early|by|until|till)\s(?:early\s)?(?P<mon>" + _MON + r")(?!\w)"
    r"(?:\s(?P<y>\d{4}))?(?!\s?[/\-.]?\s?\d)"
)
_NEXT_UNIT_RE = re.compile(
    r"(?:the\s)?(?P<which>next|following|coming)\s(?P<u>week|month|year)(?!\w)"
)

_HOLIDAYS: dict[str, str] = {
    # fixed dates are "M-D"; others are computed in _holiday_date
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

# Spans of time. _DUR_ONE has no named groups so it can repeat ("1 hour, 15 minutes").
_FRACTION = r"(?:half|quarter|1\s?/\s?2|1\s?/\s?4|3\s?/\s?4)"
_QTY = (
    r"(?:" + _L + r"\d+(?:\.\d+)?(?:\s?/\s?\d+(?:\s(?:of\s)?a)?)?(?!\w)"
    r"(?:\sand\s(?:a\s)?" + _FRACTION + r")?"
    r"|a\s(?:couple|pair)(?:\sof)?|couple(?:\sof)?|(?:a\s)?few|several|another|a"
    r"|(?:a\s)?half(?:\sof)?(?:\sa)?|(?:a\s|1\s)?quarter(?:\sof)?(?:\sa)?"
    r"|3\squarters(?:\sof)?(?:\sa)?)"
)
_UNIT = (
    r"(?:seconds?|secs?|s|\"|minutes?|mins?|m|'|hours?|hrs?|h|days?|d|nights?|weeks?|wks?|w|"
    r"fortnights?|months?|mos?|years?|yrs?|y|weekends?|(?:business|working|work)\sdays?|"
    r"workdays?)"
)
_DUR_ONE = (
    _QTY + r"(?:\s(?:more|whole|full|additional|extra))?\s?" + _UNIT
    + r"(?![\w])(?:\sand\s(?:a\s)?(?:half|quarter))?"
)
_DUR = _DUR_ONE + r"(?:(?:\s?,\s?|\s)(?:and\s)?" + _DUR_ONE + r")*"
_DUR_PART_RE = re.compile(
    r"(?P<q>" + _QTY + r")(?:\s(?:more|whole|full|additional|extra))?\s?(?P<u>" + _UNIT + r")"
    r"(?![\w])(?:\sand\s(?:a\s)?(?P<f>half|quarter))?"
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
_NTH_WEEKDAY_AFTER_RE = re.compile(
    r"(?:the\s)?(?P<n>\d{1,2}th|\d{1,2}|next|first)\s(?P<wd>" + _WD + r")\s"
    r"(?P<anc>after|following|before)(?=\s)"
)
_DURATION_RE = re.compile(
    r"(?:(?P<pre>for|lasting|during|about|around)\s)?(?:the\s)?(?P<dur>" + _DUR + r")"
    r"(?!\s(?:ago|before\snow|earlier)(?!\w))"  # the past is no time to remind
)
_WHOLE_UNIT_RE = re.compile(
    r"(?:for\sthe|all|all\sthe|(?:for\s)?(?:a\s|the\s)?(?:whole|full|entire))\s"
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
    if re.fullmatch(r"3\squarters(?:\sof)?(?:\sa)?", q):
        return 0.75
    m = re.match(
        r"(?P<n>\d+(?:\.\d+)?)(?:\s?/\s?(?P<den>\d+))?(?:\s(?:of\s)?a)?"
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
    if m["f"]:
        value += _fraction(m["f"])
    return value


def _fraction(f: str) -> float:
    f = f.replace(" ", "")
    return {"half": 0.5, "1/2": 0.5, "quarter": 0.25, "1/4": 0.25, "3/4": 0.75}.get(f, 0.0)


def _parse_duration(text: str) -> _Offset | None:
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
    return _Offset(months=months, days=days, seconds=seconds, bdays=bdays)


# ---------------------------------------------------------------------------
# Atom handlers: match -> atom (or None to reject)

_Handler = Callable[[re.Match[str], _Lexed], "_Atom | None"]


def _atom(m: re.Match[str], strength: int, **kw: object) -> _Atom:
    return _Atom(m.start(), m.end(), strength, **kw)  # type: ignore[arg-type]


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


def _h_clock(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    pre = m["pre"] or ""
    ap = m["ap"] or ""
    oc = bool(m["oc"] or m["oc2"])
    tz = _tz_of(m["tz"])
    strong_pre = pre in _STRONG_PRE
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
        if m["m"] and sep == "." and not (ap or strong_pre):
            return None  # 5.12 is a date unless "at" or am/pm says otherwise
        if m["m"] and sep == "" and not (
            ap or strong_pre or oc or tz
            or (lx.spoken(m.start("h")) and lx.spoken(m.start("m")))
        ):
            return None  # "3 30" alone is two numbers
        if m["m"] and sep == "" and mi < 10 and not m["m"].startswith("0"):
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
    if weak and pre in ("for", "from") and h <= 12 and _ALARM_RE.search(lx.canon):
        weak = False  # "set an alarm for twelve"
    if weak and (h > 12 or pre in ("for", "from")):
        return None  # "a table for 4": a count, not four o'clock
    strength = 3 if (colon or ap or oc or tz) else (0 if weak else 2)
    start = m.start() if (pre and (strong_pre or not weak)) else m.start("hm" if m["hm"] else "h")
    clock = _Clock(h % 24, mi, s, ap, exact24, 0, weak)
    return _Atom(start, m.end(), strength, clock=clock, tz=tz)


def _h_rel_clock(m: re.Match[str], lx: _Lexed) -> _Atom | None:
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
        base = _Clock(12 if m["noon"] == "noon" else 0, exact24=True)
    else:
        h = int(m["bh"])
        if h > 23:
            return None
        bm = int(m["bm"]) if m["bm"] else 0
        ap = m["ap"] or ""
        base = _Clock(h, bm, 0, ap if h <= 12 else "", h == 0 or h > 12)
    clock = _Clock(base.h, base.m, 0, base.meridiem, base.exact24, sign * minutes)
    start = m.start() if m["pre"] in _STRONG_PRE else m.start("q")
    return _Atom(start, m.end(), 3, clock=clock, tz=_tz_of(m["tz"]))


def _h_noon(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    h = 12 if m["nm"] == "noon" else 0
    start = m.start() if m["pre"] in _STRONG_PRE else m.start("nm")
    return _Atom(start, m.end(), 3, clock=_Clock(h, exact24=True))


_PERIODS = {
    "morning": (9, 0), "afternoon": (15, 0), "evening": (19, 0), "night": (21, 0),
    "tonight": (20, 0), "lunch": (12, 0), "lunchtime": (12, 0), "midmorning": (10, 0),
    "midafternoon": (14, 0), "midevening": (20, 0), "am": (9, 0), "pm": (15, 0),
    "dawn": (6, 0), "daybreak": (6, 0), "sunrise": (6, 0), "dusk": (18, 0), "sunset": (18, 0),
}


def _h_period(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    if m["ap"]:
        return _atom(m, 1, period=_Period(m["ap"], _PERIODS[m["ap"]]))
    name = m["p"]
    pfx = m["pfx"] or ""
    if name == "tonight" or pfx == "tonight":
        return _atom(m, 2, period=_Period("night", (20, 0)), date=_DateSpec("rel", 0))
    if name == "lunchtime":
        name = "lunch"
    period = _Period(name, _PERIODS[name])
    date_spec: _DateSpec | None = None
    if pfx == "this":
        date_spec = _DateSpec("rel", 0)
    elif pfx == "next":
        date_spec = _DateSpec("rel", 1)
    strength = 2 if (pfx and pfx != "the") or name.startswith("mid") or name == "lunch" else 1
    return _atom(m, strength, period=period, date=date_spec)


def _h_relday(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    rd = m["rd"]
    eod = bool(m["eod"]) or rd == "eod" or "end of" in rd
    if "after tomorrow" in rd:
        n = 2
    elif "tomorrow" in rd or "next" in rd or "following" in rd:
        n = 1
    else:
        n = 0
    return _atom(m, 2, date=_DateSpec("rel", n, end_of_day=eod))


def _h_day_after(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    sign = 1 if m["dir"] == "after" else -1
    off = _Offset(days=sign, anchor=m["dir"], anchor_optional=True)
    # "the day after" that ends the sentence counts from today; inside one it
    # needs the date it counts from ("the day after christmas").
    ends = not re.search(r"[^\W_]", lx.canon[m.end() :])
    return _atom(m, 2 if ends else 1, offset=off)


def _h_weekday(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    wd = _WEEKDAYS.index(m["wd"])
    mod = (m["mod"] or "").replace("the ", "")
    post = m["post"] or ""
    if "after next" in post:
        mode = "after_next"
    elif "next week" in post or mod in ("next", "following"):
        mode = "next_week"
    elif "this week" in post:
        mode = "this_week"
    elif mod in ("this", "this coming", "coming", "upcoming"):
        mode = "this"
    else:
        mode = "plain"
    strength = 2
    if not mod and not post and lx.original(m.start("wd")) in _AMBIGUOUS_ABBREV:
        strength = 1  # "sun", "sat", "wed" are also plain words
    return _atom(m, strength, date=_DateSpec("weekday", wd, name=mode, end_of_day=bool(m["eod"])))


def _h_weekday_next_week(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    return _atom(m, 3, date=_DateSpec("weekday", _WEEKDAYS.index(m["wd"]), name="next_week"))


def _h_n_weekdays(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    n = 1 if m["n"] == "a" else int(m["n"])
    if not 1 <= n <= 60:
        return None
    return _atom(m, 3, date=_DateSpec("nth_from_now", n, _WEEKDAYS.index(m["wd"])))


def _day(text: str) -> int:
    return int(text[:-2] if text.endswith("th") else text)


def _year(y: str | None) -> int | None:
    if not y:
        return None
    y = y.replace(" ", "")
    value = int(y)
    if len(y) == 2:
        value += 2000 if value < 70 else 1900
    return value


def _h_weekday_day(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    d = _day(m["d"])
    if not 1 <= d <= 31:
        return None
    wd = _WEEKDAYS.index(m["wd"])
    return _atom(m, 3, date=_DateSpec("day", d, weekday=wd))


def _month_day(m: re.Match[str], strength: int, year: int | None) -> _Atom | None:
    d = _day(m["d"])
    month = _MONTHS.index(m["mon"]) + 1
    if not 1 <= d <= 31 or d > _max_day(month):
        return None
    wd_text = m["wd"] or (m.groupdict().get("wd2") or "")
    wd = _WEEKDAYS.index(wd_text) if wd_text else None
    return _atom(m, strength, date=_DateSpec("md", month, d, year=year, weekday=wd))


def _max_day(month: int) -> int:
    return 29 if month == 2 else calendar.monthrange(2001, month)[1]


def _after_currency(m: re.Match[str], lx: _Lexed, group: str) -> bool:
    before = lx.canon[: m.start(group)].rstrip()
    return before.endswith(("$", "€", "£", "¥", "#"))


def _h_day_month(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    if _after_currency(m, lx, "d"):
        return None  # "$ 40 June 3": the 40 is money
    return _month_day(m, 3, _year(m["y"] or m["y2"]))


def _h_month_day(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    if m["mon"] == "may" and not (m["y"] or m["wd"] or m["d"].endswith("th")):
        # "may 5" reads as a date, "you may 3 ..." should not: require the day to look like one
        tail = lx.canon[m.end() :].lstrip()
        if tail[:1].isalpha() and not tail.startswith(("at", "in", "on")):
            return None
    return _month_day(m, 3, _year(m["y"]))


def _h_ymd(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    a = m["a"]
    month = _MONTHS.index(a) + 1 if a.isalpha() else int(a)
    return _date_atom(m, int(m["y"]), month, int(m["b"]), 3)


def _h_dym(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    return _date_atom(m, int(m["y"]), _MONTHS.index(m["mon"]) + 1, int(m["d"]), 3)


def _date_atom(m: re.Match[str], y: int | None, month: int, d: int, strength: int) -> _Atom | None:
    if not 1 <= month <= 12 or not 1 <= d <= _max_day(month):
        return None
    if y is not None:
        try:
            date(y, month, d)
        except ValueError:
            return None
    return _atom(m, strength, date=_DateSpec("md", month, d, year=y))


def _h_numdate(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    a, b, sep = int(m["a"]), int(m["b"]), m["sep"]
    y = _year(m["y"])
    if sep == "-" and y is None:
        return None  # "3-4" is a range or a score
    if y is None:
        before = lx.canon[: m.start("a")].rstrip()
        if sep == "." and before.endswith(("at", "@", "around", "about")):
            return None
        if _after_currency(m, lx, "a"):
            return None
    # Month first (the sources are US English) unless that cannot be a date.
    month, d = (a, b) if a <= 12 else (b, a)
    strength = 2 if (sep == "/" or y is not None or m["on"]) else 1
    return _date_atom(m, y, month, d, strength)


def _h_ymd8(m: re.Match[str], lx: _Lexed) -> _Atom | None:
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


def _ends_day(lx: _Lexed, end: int) -> bool:
    rest = lx.canon[end:].lstrip(" ")
    word = re.match(r"[a-z]+", rest)
    return word is None or word.group(0) in _DAY_FOLLOWERS


def _h_day_only(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    d = _day(m["d"])
    if not 1 <= d <= 31 or not _ends_day(lx, m.end()):
        return None
    pfx = m["pfx"]
    strength = 1 if pfx == "the" and not m["d"].endswith("th") else 2
    return _atom(m, strength, date=_DateSpec("day", d))


def _h_day_before_time(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    d = _day(m["d"])
    return _atom(m, 1, date=_DateSpec("day", d)) if 1 <= d <= 31 else None


def _h_ordinal(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    d = _day(m["d"])
    if not 1 <= d <= 31 or not _ends_day(lx, m.end()):
        return None
    return _atom(m, 1, date=_DateSpec("day", d))


def _h_month_rel_day(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    d = _day(m["d"])
    if not 1 <= d <= 31:
        return None
    delta = 0 if m["which"] == "this" else 1
    return _atom(m, 3, date=_DateSpec("month_rel_day", d, delta))


def _nth(text: str) -> int:
    if text in ("last", "final"):
        return -1
    return _day(text)


def _month_target(m: re.Match[str]) -> tuple[str, int]:
    """("month", M) for a named month, ("rel", delta) for this/next month."""
    if m["mon"]:
        return "month", _MONTHS.index(m["mon"]) + 1
    return "rel", 1 if m["rel"] in ("next", "following") else 0


def _h_nth_weekday(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    n = _nth(m["n"])
    if n == 0 or n > 5:
        return None
    how, value = _month_target(m)
    spec = _DateSpec("nth_weekday", n, _WEEKDAYS.index(m["wd"]), value, year=_year(m["y"]),
                     name=how)
    return _atom(m, 3, date=spec)


def _h_nth_day(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    if not m["n"] and not m["last"]:
        return None
    n = _day(m["n"]) if m["n"] else 1
    if m["last"]:
        n = -n
    how, value = _month_target(m)
    spec = _DateSpec("nth_day", n, 0, value, year=_year(m["y"]), name=how)
    return _atom(m, 3, date=spec)


def _h_same_time(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    """ "this time tomorrow": the same clock time, one calendar step ahead."""
    step = {"tomorrow": _Offset(days=1), "next week": _Offset(days=7),
            "next month": _Offset(months=1), "next year": _Offset(months=12)}
    return _atom(m, 3, offset=_with(step[m["when"] or m["when2"]], relative=True))


def _h_weekend(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    mod = m["mod"] or ""
    mode = "next_week" if mod == "next" else "this"
    return _atom(m, 2 if mod else 1, date=_DateSpec("weekend", name=mode))


def _h_month_only(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    month = _MONTHS.index(m["mon"]) + 1
    return _atom(m, 2, date=_DateSpec("md", month, 1, year=_year(m["y"])))


def _h_next_unit(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    return _atom(m, 2, date=_DateSpec("next_unit", name=m["u"]))


def _h_holiday(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    text = m["h"]
    for key in _HOLIDAY_KEYS:
        if re.fullmatch(key, text):
            return _atom(m, 3, date=_DateSpec("holiday", name=_HOLIDAYS[key], year=_year(m["y"])))
    return None  # pragma: no cover - the alternation and the table agree


def _h_offset_pre(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    off = _parse_duration(m["dur"])
    if off is None:
        return None
    return _atom(m, 3, offset=_with(off, relative=True))


def _h_offset_post(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    if m["post"] in ("ago", "before now", "earlier"):
        return None  # the past: a reminder cannot fire there
    off = _parse_duration(m["dur"])
    if off is None:
        return None
    return _atom(m, 3, offset=_with(off, relative=True))


def _h_offset_anchor(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    off = _parse_duration(m["dur"])
    if off is None:
        return None
    anchor = "before" if m["anc"] == "before" else "after"
    return _atom(m, 1, offset=_with(off, anchor=anchor))


def _h_nth_weekday_after(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    n = 1 if m["n"] in ("next", "first") else _day(m["n"])
    if not 1 <= n <= 52:
        return None
    anchor = "before" if m["anc"] == "before" else "after"
    off = _Offset(anchor=anchor, nth_weekday=(n, _WEEKDAYS.index(m["wd"])))
    return _atom(m, 1, offset=off)


def _h_duration(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    off = _parse_duration(m["dur"])
    if off is None:
        return None
    dur = m["dur"]
    # "a minute", "an hour" alone are weak ("wait a minute"); numbers and "for" are not.
    strength = 2 if (m["pre"] == "for" or re.match(r"\d|couple|few|half|another", dur)) else 1
    return _atom(m, strength, offset=off)


def _h_whole_unit(m: re.Match[str], lx: _Lexed) -> _Atom | None:
    unit = m["u"]
    if unit in ("morning", "afternoon"):
        return None
    off = _parse_duration("1 " + unit)
    return _atom(m, 2, offset=off) if off else None


def _with(off: _Offset, **kw: object) -> _Offset:
    values = {f: getattr(off, f) for f in off.__dataclass_fields__}
    values.update(kw)
    return _Offset(**values)  # type: ignore[arg-type]


_PATTERNS: list[tuple[re.Pattern[str], _Handler]] = [
    (_CLOCK_RE, _h_clock),
    (_REL_CLOCK_RE, _h_rel_clock),
    (_NOON_RE, _h_noon),
    (_PERIOD_RE, _h_period),
    (_RELDAY_RE, _h_relday),
    (_DAY_AFTER_RE, _h_day_after),
    (_WEEKDAY_RE, _h_weekday),
    (_WEEKDAY_NEXT_WEEK_RE, _h_weekday_next_week),
    (_N_WEEKDAYS_RE, _h_n_weekdays),
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
    (_NTH_WEEKDAY_RE, _h_nth_weekday),
    (_NTH_DAY_RE, _h_nth_day),
    (_NEXT_UNIT_RE, _h_next_unit),
    (_MONTH_ONLY_RE, _h_month_only),
    (_WEEKEND_RE, _h_weekend),
    (_SAME_TIME_RE, _h_same_time),
    (_HOLIDAY_RE, _h_holiday),
    (_OFFSET_PRE_RE, _h_offset_pre),
    (_OFFSET_POST_RE, _h_offset_post),
    (_OFFSET_ANCHOR_RE, _h_offset_anchor),
    (_NTH_WEEKDAY_AFTER_RE, _h_nth_weekday_after),
    (_DURATION_RE, _h_duration),
    (_WHOLE_UNIT_RE, _h_whole_unit),
]


def _whole_words(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """Anchor a pattern to word edges, so "chat" holds no "at" and "monday" no "a y"."""
    return re.compile(r"(?<![^\W_])(?:" + pattern.pattern + r")(?![^\W_])")


_WORD_PATTERNS = [(_whole_words(p), h) for p, h in _PATTERNS]


def _find_atoms(lx: _Lexed) -> list[_Atom]:
    candidates: list[_Atom] = []
    for pattern, handler in _WORD_PATTERNS:
        for m in pattern.finditer(lx.canon):
            if m.end() == m.start():
                continue
            atom = handler(m, lx)
            if atom is not None:
                candidates.append(atom)
    # Longest first, then strongest: "in 1/5 h" beats the date 1/5 inside it.
    candidates.sort(key=lambda a: (-(a.end - a.start), -a.strength, a.start))
    taken: list[_Atom] = []
    for atom in candidates:
        if all(atom.end <= t.start or atom.start >= t.end for t in taken):
            taken.append(atom)
    taken.sort(key=lambda a: a.start)
    return taken


# ---------------------------------------------------------------------------
# Groups: atoms joined by connectors form one expression

_CONNECTOR_RE = re.compile(
    r"^(?:[\s,\-@]|(?<![a-z])(?:at|on|around|about|approximately|by|of|the|for|in|and|say|"
    r"this)(?![a-z]))*$"
)


@dataclass
class _Group:
    atoms: list[_Atom] = field(default_factory=list)
    clock: _Clock | None = None
    clock_atom: _Atom | None = None
    date: _DateSpec | None = None
    period: _Period | None = None
    offset: _Offset | None = None
    anchor: _DateSpec | None = None
    tz: tzinfo | None = None

    @property
    def start(self) -> int:
        return min(a.start for a in self.atoms)

    @property
    def end(self) -> int:
        return max(a.end for a in self.atoms)

    @property
    def score(self) -> int:
        return sum(a.strength for a in self.atoms)

    def add(self, atom: _Atom) -> bool:
        """Join atom if it is compatible with what the group has; False if not."""
        plan = self._plan(atom)
        if plan is None:
            return False
        plan()
        self.atoms.append(atom)
        if atom.tz is not None:
            self.tz = atom.tz
        return True

    def _plan(self, atom: _Atom) -> Callable[[], None] | None:
        if self.atoms and (_bare(atom.offset) or _bare(self.offset)):
            return None  # "tomorrow for 2 hours": a plain span of time stands alone
        steps: list[Callable[[], None]] = []
        if atom.clock is not None:
            if self.clock is None:
                steps.append(lambda: self._set_clock(atom))
            elif self.clock.weak and not atom.clock.weak:
                steps.append(lambda: self._replace_weak_clock(atom))
            else:
                return None
        if atom.offset is not None:
            off = atom.offset
            if self.offset is not None:
                return None
            if self.date is not None and self.date.kind != "weekday" and not off.anchor:
                return None  # only a weekday goes with "in 2 weeks" ("monday in 2 weeks")
            steps.append(lambda: setattr(self, "offset", off))
        if atom.date is not None:
            step = self._plan_date(atom.date)
            if step is None:
                return None
            steps.append(step)
        if atom.period is not None:
            if self.period is not None:
                return None
            steps.append(lambda: setattr(self, "period", atom.period))

        def run() -> None:
            for step in steps:
                step()

        return run

    def _plan_date(self, spec: _DateSpec) -> Callable[[], None] | None:
        off = self.offset
        if off is not None and off.anchor and self.anchor is None and self.date is None:
            return lambda: setattr(self, "anchor", spec)
        if self.date is None:
            return lambda: setattr(self, "date", spec)
        current = self.date
        # A weekday next to an explicit date narrows it ("Sat, Aug 9").
        if current.kind == "weekday" and spec.kind in ("md", "day") and spec.weekday is None:
            return lambda: setattr(self, "date", _spec_with(spec, weekday=current.a))
        if spec.kind == "weekday" and current.kind in ("md", "day") and current.weekday is None:
            return lambda: setattr(self, "date", _spec_with(current, weekday=spec.a))
        if current.kind == "rel" and current.a == 0 and spec.kind != "rel" and self.period:
            # "tonight" then "sunday": the named day wins, the part of day stays
            return lambda: setattr(self, "date", spec)
        return None

    def _set_clock(self, atom: _Atom) -> None:
        self.clock = atom.clock
        self.clock_atom = atom

    def _replace_weak_clock(self, atom: _Atom) -> None:
        if self.clock_atom is not None:
            self.atoms.remove(self.clock_atom)
        self._set_clock(atom)


def _bare(off: _Offset | None) -> bool:
    """A span of time that is not counted from anything ("for 10 minutes")."""
    return off is not None and not (off.relative or off.anchor)


def _spec_with(spec: _DateSpec, **kw: object) -> _DateSpec:
    values = {f: getattr(spec, f) for f in spec.__dataclass_fields__}
    values.update(kw)
    return _DateSpec(**values)  # type: ignore[arg-type]


def _groups(lx: _Lexed, atoms: list[_Atom]) -> list[_Group]:
    groups: list[_Group] = []
    current: _Group | None = None
    for atom in atoms:
        if current is not None:
            gap = lx.canon[current.end : atom.start]
            if len(gap) <= 24 and _CONNECTOR_RE.match(gap) and current.add(atom):
                continue
            groups.append(current)
        current = _Group()
        current.add(atom)
    if current is not None:
        groups.append(current)
    return groups


# ---------------------------------------------------------------------------
# Resolution


def _resolve_text(
    text: str, now: datetime, prefer_future: bool, default_time: time, min_score: int
) -> TimeResolution | None:
    if not isinstance(text, str) or not text.strip():
        return None
    text = text[:MAX_INPUT_CHARS]
    now = _aware(now)
    lx = _lex(text)
    if not lx.toks:
        return None
    groups = [g for g in _groups(lx, _find_atoms(lx)) if _usable(g)]
    if not groups:
        return None
    best = max(groups, key=lambda g: (g.score, g.end - g.start, -g.start))
    if best.score < min_score and not _covers_most(lx, best):
        return None
    if _ALARM_RE.search(lx.canon):
        _mornings(best)
    start, end = lx.span(best.start, best.end)
    resolved = _resolve_group(best, now, prefer_future, default_time)
    if resolved is None:
        return None
    when, kind, duration = resolved
    return TimeResolution(when=when, kind=kind, phrase=text[start:end], duration=duration)


def _mornings(g: _Group) -> None:
    """An alarm or a wake-up call with a bare hour is a morning ("wake me at six")."""
    clock = g.clock
    if clock is not None and not (clock.meridiem or clock.exact24 or g.period) and clock.h != 12:
        g.period = _Period("am", _PERIODS["am"])


def _usable(g: _Group) -> bool:
    # A lone bare number, or a lone "the day after"-style link, is no time.
    if g.clock is not None and g.clock.weak and not (g.date or g.period or g.offset):
        return len(g.atoms) == 1  # kept for resolve_time("five"); find_time needs more
    return bool(g.atoms)


def _covers_most(lx: _Lexed, g: _Group) -> bool:
    """A weak expression still counts when it is (nearly) the whole utterance ("thu")."""
    if g.score < 1:
        return False
    covered = len(lx.canon[g.start : g.end].replace(" ", ""))
    total = len(re.sub(r"[\W_]", "", lx.canon)) or 1
    return covered >= 0.6 * total


def _aware(now: datetime) -> datetime:
    if now.tzinfo is None or now.tzinfo.utcoffset(now) is None:
        return now.replace(tzinfo=_local_zone())
    return now


@lru_cache(maxsize=1)
def _local_zone() -> tzinfo:
    name = os.environ.get("TZ", "").lstrip(":")
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    try:
        target = str(Path("/etc/localtime").resolve())
        if "zoneinfo/" in target:
            return ZoneInfo(target.split("zoneinfo/", 1)[1])
    except (OSError, ZoneInfoNotFoundError, ValueError):
        pass
    return datetime.now().astimezone().tzinfo or UTC


def _local(d: date, h: int, m: int, s: float, tz: tzinfo) -> datetime:
    """Wall-clock time on day d, normalised through UTC (02:30 in a DST gap -> 03:30)."""
    whole = int(s)
    micro = round((s - whole) * 1_000_000)
    naive = datetime(d.year, d.month, d.day, h, m, whole, micro)
    return naive.replace(tzinfo=tz).astimezone(UTC).astimezone(tz)


_Resolved = tuple[datetime, str, timedelta | None]


def _resolve_group(
    g: _Group, now: datetime, prefer_future: bool, default_time: time
) -> _Resolved | None:
    home = now.tzinfo
    frame_now = now.astimezone(g.tz) if g.tz is not None else now
    try:
        resolved = _resolve_in_frame(g, frame_now, prefer_future, default_time)
    except (ValueError, OverflowError):
        return None  # a date past year 9999 or the like
    if resolved is None:
        return None
    when, kind, duration = resolved
    return when.astimezone(home), kind, duration


def _resolve_in_frame(
    g: _Group, now: datetime, prefer_future: bool, default_time: time
) -> _Resolved | None:
    tz = now.tzinfo
    assert tz is not None
    today = now.date()
    off = g.offset
    has_time = g.clock is not None or g.period is not None
    dates: list[date] | None
    if off is not None and (off.anchor or off.nth_weekday):
        base = _anchor_date(g, today, has_time)
        if base is None:
            if not off.anchor_optional:
                return _resolve_offset_only(_with(off, relative=True), now)
            base = today
        target = _step_from_anchor(base, off)
        dates = [_week_of(target, g.date.a) if _is_weekday(g.date) else target]
    elif off is not None and off.relative and (g.date is not None or has_time):
        moved = _apply_offset(now, off)
        dates = [_week_of(moved.date(), g.date.a) if _is_weekday(g.date) else moved.date()]
    elif off is not None:
        return _resolve_offset_only(off, now)
    elif g.date is not None:
        dates = _date_candidates(g.date, today, has_time)
    else:
        dates = None
    if not dates and dates is not None:
        return None
    if has_time:
        when = _pick_time(g, dates, now, prefer_future)
        kind = "time" if dates is None else "datetime"
        return when, kind, None
    assert dates is not None
    spec = g.date
    if spec is not None and spec.end_of_day:
        return _pick_date(dates, time(23, 59, 59), now, prefer_future), "datetime", None
    return _pick_date(dates, default_time, now, prefer_future), "date", None


def _resolve_offset_only(off: _Offset, now: datetime) -> _Resolved:
    when = _apply_offset(now, off)
    kind = "datetime" if off.relative else "duration"
    return when, kind, _elapsed(now, when)


_ZERO = timedelta(0)


def _elapsed(start: datetime, end: datetime) -> timedelta:
    """Real time between two instants. Python subtracts (and compares) datetimes
    that share a tzinfo on the wall clock, which is an hour off across DST."""
    return end.astimezone(UTC) - start.astimezone(UTC)


def _is_weekday(spec: _DateSpec | None) -> bool:
    return spec is not None and spec.kind == "weekday"


def _anchor_date(g: _Group, today: date, has_time: bool) -> date | None:
    if g.anchor is None:
        return None
    found = _date_candidates(g.anchor, today, has_time)
    return found[0] if found else None


def _step_from_anchor(base: date, off: _Offset) -> date:
    sign = -1 if off.anchor == "before" else 1
    if off.nth_weekday is not None:
        n, wd = off.nth_weekday
        ahead = (wd - base.weekday()) % 7 or 7
        if sign > 0:
            return base + timedelta(days=ahead + 7 * (n - 1))
        back = (base.weekday() - wd) % 7 or 7
        return base - timedelta(days=back + 7 * (n - 1))
    moved = _add_months(base, sign * off.months) + timedelta(days=sign * off.days)
    moved += timedelta(seconds=sign * off.seconds)
    return _add_bdays(moved, sign * off.bdays)


def _apply_offset(now: datetime, off: _Offset) -> datetime:
    tz = now.tzinfo
    assert tz is not None
    whole_days = int(off.days)
    extra_seconds = off.seconds + (off.days - whole_days) * 86400
    months_whole = int(off.months)
    extra_days = round((off.months - months_whole) * 30)  # "1.5 months": 30-day months
    day = _add_months(now.date(), months_whole) + timedelta(days=whole_days + extra_days)
    day = _add_bdays(day, off.bdays)
    # Calendar steps keep the wall-clock time; hours and minutes are elapsed time.
    moved = _local(day, now.hour, now.minute, now.second + now.microsecond / 1e6, tz)
    if day == now.date():
        moved = now
    return (moved.astimezone(UTC) + timedelta(seconds=extra_seconds)).astimezone(tz)


def _add_months(d: date, months: float) -> date:
    total = d.year * 12 + (d.month - 1) + int(months)
    year, month = divmod(total, 12)
    return date(year, month + 1, min(d.day, calendar.monthrange(year, month + 1)[1]))


def _add_bdays(d: date, n: int) -> date:
    step = 1 if n >= 0 else -1
    for _ in range(abs(n)):
        d += timedelta(days=step)
        while d.weekday() >= 5:
            d += timedelta(days=step)
    return d


def _week_of(d: date, weekday: int) -> date:
    """The given weekday in the Monday-to-Sunday week that holds d."""
    return d - timedelta(days=d.weekday()) + timedelta(days=weekday)


def _pick_date(dates: list[date], at: time, now: datetime, prefer_future: bool) -> datetime:
    tz = now.tzinfo
    assert tz is not None
    first: datetime | None = None
    for d in dates:
        dt = _local(d, at.hour, at.minute, at.second, tz)
        first = first or dt
        if not prefer_future or _elapsed(now, dt) > _ZERO:
            return dt
        if d == now.date() and d == dates[0]:
            # A day that names today ("today", "the 12th" said on the 12th) after
            # the default hour: the next full hour, still today.
            if now.hour < 23:
                return _local(d, now.hour + 1, 0, 0, tz)
            return _local(d, 23, 59, 59, tz)
    assert first is not None
    return first


def _pick_time(g: _Group, dates: list[date] | None, now: datetime, prefer_future: bool) -> datetime:
    tz = now.tzinfo
    assert tz is not None
    today = now.date()
    if dates is None:  # a clock time with no day: today or the next days
        days = [today + timedelta(days=k) for k in range(3)]
    elif len(dates) == 1 and dates[0] == today and g.date is not None and g.date.kind == "rel":
        days = [today, today + timedelta(days=1)]  # "today at 8" said at 10: tomorrow
    else:
        days = dates
    first: datetime | None = None
    for d in days:
        nearest = dates is None or d == today
        for h, m, s, day_shift in _readings(g.clock, g.period, nearest):
            dt = _local(d + timedelta(days=day_shift), h, m, s, tz)
            first = first or dt
            if not prefer_future or _elapsed(now, dt) > _ZERO:
                return dt
    assert first is not None
    return first


def _readings(
    clock: _Clock | None, period: _Period | None, nearest: bool
) -> list[tuple[int, int, int, int]]:
    """The 24-hour readings of a clock time, most likely first (see module doc)."""
    if clock is None:
        assert period is not None
        h, m = period.default
        return [(h, m, 0, 0)]
    h = clock.h
    if clock.exact24:
        hours = [h]
    elif clock.meridiem:
        hours = [h % 12 + (12 if clock.meridiem == "pm" else 0)]
    elif period is not None:
        hours = [_period_hour(h, period.name)]
    elif h == 12:
        hours = [12]  # "at 12", "12:30": noon; midnight is said as such
    elif nearest:
        hours = [h, h + 12]
    else:
        hours = [h + 12 if 1 <= h <= 6 else h]  # waking hours decide on a later day
    out: list[tuple[int, int, int, int]] = []
    for hour in hours:
        total = hour * 60 + clock.m + clock.shift
        day_shift = 0
        if period is not None and period.name in ("evening", "night") and hour == 0:
            day_shift = 1  # "midnight tonight" is the end of today
        day_shift += total // 1440
        total %= 1440
        out.append((total // 60, total % 60, clock.s, day_shift))
    return out


def _period_hour(h: int, name: str) -> int:
    if name in ("morning", "am", "midmorning", "dawn", "daybreak", "sunrise"):
        return 0 if h == 12 else h
    if name in ("afternoon", "pm", "midafternoon"):
        return h if h >= 12 else h + 12
    if name in ("evening", "midevening", "dusk", "sunset"):
        return 0 if h == 12 else (h if h > 12 else h + 12)
    if name == "night":
        if h == 12:
            return 0
        return h if (h > 12 or h <= 4) else h + 12  # "tonight at 2" is the small hours
    if name == "lunch":
        return h if h >= 11 else h + 12
    return h


# ---------------------------------------------------------------------------
# Date candidates: the occurrences of a date expression, soonest first


def _date_candidates(spec: _DateSpec, today: date, has_time: bool) -> list[date]:
    kind = spec.kind
    if kind == "rel":
        return [today + timedelta(days=spec.a)]
    if kind == "weekday":
        return _weekday_candidates(spec, today, has_time)
    if kind == "md":
        return _md_candidates(spec, today)
    if kind == "day":
        return _day_candidates(spec, today)
    if kind == "nth_from_now":
        ahead = (spec.b - today.weekday()) % 7 or 7
        return [today + timedelta(days=ahead + 7 * (spec.a - 1))]
    if kind == "month_rel_day":
        first = _add_months(today.replace(day=1), spec.b)
        try:
            return [first.replace(day=spec.a)]
        except ValueError:
            return []
    if kind in ("nth_weekday", "nth_day"):
        return _nth_candidates(spec, today)
    if kind == "holiday":
        years = [spec.year] if spec.year else [today.year, today.year + 1]
        found = [d for y in years if (d := _holiday_date(spec.name, y)) is not None]
        return found if spec.year else [d for d in found if d >= today]
    if kind == "weekend":
        saturday = today - timedelta(days=today.weekday()) + timedelta(days=5)
        if spec.name == "next_week":
            return [saturday + timedelta(days=7)]
        return [today] if today.weekday() >= 5 else [saturday]
    if kind == "next_unit":
        if spec.name == "week":
            return [today - timedelta(days=today.weekday()) + timedelta(days=7)]
        if spec.name == "month":
            return [_add_months(today.replace(day=1), 1)]
        return [date(today.year + 1, 1, 1)]
    return []  # pragma: no cover - every kind is handled above


def _weekday_candidates(spec: _DateSpec, today: date, has_time: bool) -> list[date]:
    wd, mode = spec.a, spec.name
    monday = today - timedelta(days=today.weekday())
    if mode in ("next_week",):
        return [monday + timedelta(days=7 + wd)]
    if mode == "this_week":
        return [monday + timedelta(days=wd)]
    ahead = (wd - today.weekday()) % 7
    if mode == "this":
        first = today + timedelta(days=ahead)
    elif ahead == 0 and not has_time:
        first = today + timedelta(days=7)  # "on tuesday" said on a Tuesday: next week
    else:
        first = today + timedelta(days=ahead)
    if mode == "after_next":
        return [(today + timedelta(days=ahead or 7)) + timedelta(days=7)]
    return [first + timedelta(days=7 * k) for k in range(3)]


def _md_candidates(spec: _DateSpec, today: date) -> list[date]:
    month, d = spec.a, spec.b
    if spec.year is not None:
        try:
            return [date(spec.year, month, d)]
        except ValueError:
            return []
    found: list[date] = []
    for y in range(today.year, today.year + 9):
        try:
            candidate = date(y, month, d)
        except ValueError:
            continue  # Feb 29 outside a leap year
        if candidate >= today:
            found.append(candidate)
        if len(found) >= 3:
            break
    if spec.weekday is not None:
        # The weekday picks between the next two occurrences ("Fri, Jul 18" is
        # the year when it is a Friday); if neither fits, the date itself wins.
        for k, candidate in enumerate(found[:2]):
            if candidate.weekday() == spec.weekday:
                return found[k:]
    return found


def _day_candidates(spec: _DateSpec, today: date) -> list[date]:
    d = spec.a
    found: list[date] = []
    month_start = today.replace(day=1)
    for k in range(0, 60):
        first = _add_months(month_start, k)
        try:
            candidate = first.replace(day=d)
        except ValueError:
            continue
        if candidate < today:
            continue
        if spec.weekday is not None and candidate.weekday() != spec.weekday:
            continue
        found.append(candidate)
        if len(found) >= 3:
            break
    return found


def _nth_candidates(spec: _DateSpec, today: date) -> list[date]:
    if spec.name == "rel":
        month_first = _add_months(today.replace(day=1), spec.c)
        months = [(month_first.year, month_first.month)]
        if spec.c == 0:
            nxt = _add_months(month_first, 1)
            months.append((nxt.year, nxt.month))
    elif spec.year is not None:
        months = [(spec.year, spec.c)]
    else:
        months = [(today.year, spec.c), (today.year + 1, spec.c)]
    found: list[date] = []
    for y, mo in months:
        d = _nth_weekday(y, mo, spec.a, spec.b) if spec.kind == "nth_weekday" else _nth_day(
            y, mo, spec.a
        )
        if d is not None and (spec.year is not None or d >= today):
            found.append(d)
    return found


def _nth_weekday(year: int, month: int, n: int, weekday: int) -> date | None:
    if n > 0:
        first = date(year, month, 1)
        d = first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
        return d if d.month == month else None
    last = date(year, month, calendar.monthrange(year, month)[1])
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def _nth_day(year: int, month: int, n: int) -> date | None:
    days = calendar.monthrange(year, month)[1]
    day = n if n > 0 else days + 1 + n
    return date(year, month, day) if 1 <= day <= days else None


def _holiday_date(rule: str, year: int) -> date | None:
    if rule.startswith("nth:"):
        _, month, n, weekday = rule.split(":")
        return _nth_weekday(year, int(month), int(n), int(weekday))
    base, _, delta = rule.partition("+")
    sign = 1
    if not delta and "-" in rule and not rule[0].isdigit():
        base, _, delta = rule.partition("-")
        sign = -1
    if base == "easter":
        day = _easter(year)
    elif base == "thanksgiving":
        day = _nth_weekday(year, 11, 4, 3)
        assert day is not None
    else:
        month, d = (int(x) for x in base.split("-"))
        day = date(year, month, d)
    return day + timedelta(days=sign * int(delta or 0))


def _easter(year: int) -> date:
    """Gregorian Easter Sunday (the anonymous Gregorian algorithm)."""
    a = year % 19
    b, c = divmod(year, 100)
    d, e = divmod(b, 4)
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    r = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * r) // 451
    month, day = divmod(h + r - 7 * m + 114, 31)
    return date(year, month, day + 1)


def iter_atoms(text: str) -> Iterable[tuple[str, int]]:  # pragma: no cover - debugging aid
    """The atoms the grammar sees in text, with their strength (for error analysis)."""
    lx = _lex(text)
    for atom in _find_atoms(lx):
        s, e = lx.span(atom.start, atom.end)
        yield text[s:e], atom.strength
