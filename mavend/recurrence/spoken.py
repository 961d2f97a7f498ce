"""A spoken repeat ("every monday and thursday at 7", "every other week until
christmas", "every 2 hours 5 times") read into a `Series`.

The words are matched on timeparse's canonical text (number words are digits there:
"every three hours" reads "every 3 hours"), so spelled-out and written numbers read the
same. What is left once the repeat and its end are cut out holds the time of day and the
task ("remind me every monday to take out the bins at 7 pm" -> "remind me to take out
the bins at 7 pm"); timeparse reads the clock from it.

A series' clock without am/pm is read by waking hours, as timeparse reads a clock on a
later day: 1-6 pm, 7-11 am, 12 noon; a part of the day said with the repeat ("every
morning", "every evening") or an alarm decides first.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from dateutil.relativedelta import relativedelta
from dateutil.rrule import rrulestr

from mavend.language.script import is_russian
from mavend.language.timeparse import TimeResolution, find_time, resolve_time
from mavend.language.timeparse.lexing import CARRIED_ON, MONTHS, WEEKDAY, WEEKDAYS, Lexed, lex
from mavend.recurrence.rule import WEEKDAY_CODES, Series, rule_text, until_value

_DAY = rf"{WEEKDAY}s?"
_DAYS = rf"{_DAY}(?:(?:\s*,\s*|\s+and\s+|\s+)(?:and\s+)?{_DAY})*"
_EVERY = r"(?:every|each)"
_MONTH = rf"(?:{'|'.join(MONTHS)})"
_NTH = r"(?P<nth>\d{1,2})(?:st|nd|rd|th)?"
_PART = r"(?P<part>morning|afternoon|evening|night)"
_WHICH = r"(?P<which>[1-4](?:st|nd|rd|th)|last|final)"
_UNIT = {"minute": "MINUTELY", "hour": "HOURLY", "day": "DAILY", "week": "WEEKLY",
         "month": "MONTHLY", "year": "YEARLY"}

# The repeat, first match wins (the more specific first).
_REPEATS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("yearly", rf"\b{_EVERY}\s+(?:year\s+on\s+)?(?:the\s+)?{_NTH}(?:\s+of)?\s+"
                   rf"(?P<month>{_MONTH})\b"),
        ("yearly", rf"\b{_EVERY}\s+(?:year\s+on\s+)?(?P<month>{_MONTH})\s+(?:the\s+)?{_NTH}\b"),
        # "on the last friday of every month", "the first monday of each month" (timeparse's
        # canonical text has "1th" for "first")
        ("month_day", rf"\b(?:on\s+)?(?:the\s+)?{_WHICH}\s+(?P<day>{WEEKDAY})\s+(?:of|in)\s+"
                      r"(?:every|each|the)\s+month\b"),
        ("month_day", rf"\b{_EVERY}\s+month\s+on\s+the\s+{_WHICH}\s+(?P<day>{WEEKDAY})\b"),
        ("monthly", rf"\b{_EVERY}\s+(?:the\s+)?{_NTH}\s+(?:day\s+)?of\s+(?:the|every|each)"
                    r"\s+month\b"),
        ("monthly", rf"\b(?:on\s+)?(?:the\s+)?{_NTH}\s+(?:day\s+)?of\s+(?:every|each|the)"
                    r"\s+month\b"),
        ("monthly", rf"\b{_EVERY}\s+month\s+on\s+the\s+{_NTH}\b"),
        ("every_n", r"\b(?:every|each)\s+(?P<n>\d+)\s+(?P<unit>minute|hour|day|week|month)s?\b"),
        # "every couple of hours", "every pair of weeks": two of them
        ("every_n", r"\b(?:every|each)\s+(?:couple|pair)(?:\s+of)?\s+"
                    r"(?P<unit>minute|hour|day|week|month)s\b"),
        ("other_days", rf"\b{_EVERY}\s+(?:other|second|2nd|2th)\s+(?P<days>{_DAYS})\b"),
        ("other", r"\b(?:every|each)\s+(?:other|second|2nd|2th)\s+(?P<unit>day|week|month|year)\b"),
        ("weekdays", rf"\b(?:{_EVERY}\s+(?:week\s*day|work\s*day|working\s+day|weekday)|"
                     r"(?:on\s+)?weekdays|(?:on\s+)?workdays)\b"),
        ("weekends", rf"\b(?:{_EVERY}\s+weekend(?:\s+day)?|(?:at\s+|on\s+)?(?:the\s+)?weekends)\b"),
        ("days", rf"\b{_EVERY}\s+(?P<days>{_DAYS})\b"),
        ("unit", r"\b(?:every|each)\s+(?:single\s+)?(?P<unit>minute|hour|day|week|month|year)\b"),
        ("unit", rf"\b{_EVERY}\s+{_PART}\b"),
        ("unit", r"\b(?P<adverb>hourly|daily|nightly|weekly|monthly|yearly|annually)\b"),
    )
)
_ADVERB_UNIT = {"hourly": "hour", "daily": "day", "nightly": "day", "weekly": "week",
                "monthly": "month", "yearly": "year", "annually": "year"}
_PART_CLOCK = {"morning": time(8), "afternoon": time(15), "evening": time(19), "night": time(21)}

_ON_DAYS = re.compile(
    r"\b(?:on\s+)(?P<days>(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)"
    r"(?:(?:\s*,\s*|\s+and\s+)(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays"
    r"|sundays))*)\b"
)
_COUNT = re.compile(r"\b(?P<n>\d+)\s+times\b(?!\s+(?:a|an|per|each|every)\b)")
_FOR = re.compile(r"\bfor\s+(?:the\s+next\s+)?(?P<n>\d+|a|an)\s+(?P<unit>day|week|month|year)s?\b")
_UNTIL = re.compile(r"\b(?:until|till|til|through|up\s+to)\s+")
_YESTERDAY = re.compile(r"\b(?:until|till|til|through)\s+yesterday\b")


@dataclass(frozen=True)
class SpokenSeries:
    """What a repeat said: the series, or why it can never fire; and the rest of the words."""

    series: Series | None
    error: str  # one sentence when the rule can never fire; "" otherwise
    rest: str  # the utterance without the repeat and its end (the task, the clock)
    clock_phrase: str = ""  # the time of day as said, cut from `rest` by the caller


@dataclass
class _Parsed:
    freq: str
    interval: int = 1
    byday: tuple[str, ...] = ()
    bymonthday: int | None = None
    bymonth: int | None = None
    part: str = ""
    byhour: tuple[int, ...] = ()  # a window: "every 2 hours between 9 and 5"
    byminute: tuple[int, ...] = ()


# The hours an hourly repeat keeps to: "between 9 and 5", "from 8am to 8pm", "during the
# day". Said without am or pm, the first hour is a waking one and the last comes after it.
_HOUR = r"(?P<{0}>\d{{1,2}})(?:[:.]00)?(?:\s*(?P<{0}m>a\.?\s?m|p\.?\s?m)\b\.?)?"
_WINDOW = re.compile(
    rf"\b(?:between|from)\s+{_HOUR.format('a')}\s+(?:and|to|till|until|til)\s+"
    rf"{_HOUR.format('b')}(?:\s+o\s?clock)?"
    r"|\b(?P<day>during the day|in the daytime|during (?:work|working|office) hours)\b"
)


def _weekday_codes(days: str) -> tuple[str, ...]:
    found = re.findall(r"monday|tuesday|wednesday|thursday|friday|saturday|sunday", days)
    return tuple(WEEKDAY_CODES[WEEKDAYS.index(d)] for d in dict.fromkeys(found))


def _read_repeat(name: str, m: re.Match[str]) -> _Parsed:
    groups = m.groupdict()
    if name == "yearly":
        return _Parsed("YEARLY", bymonth=MONTHS.index(groups["month"]) + 1,
                       bymonthday=int(groups["nth"]))
    if name == "monthly":
        return _Parsed("MONTHLY", bymonthday=int(groups["nth"]))
    if name == "month_day":  # "the last friday": BYDAY=-1FR
        which = -1 if groups["which"] in ("last", "final") else int(groups["which"][0])
        return _Parsed("MONTHLY", byday=(f"{which}{_weekday_codes(groups['day'])[0]}",))
    if name == "every_n":
        return _Parsed(_UNIT[groups["unit"]], interval=max(1, int(groups.get("n") or 2)))
    if name == "other_days":
        return _Parsed("WEEKLY", interval=2, byday=_weekday_codes(groups["days"]))
    if name == "other":
        return _Parsed(_UNIT[groups["unit"]], interval=2)
    if name == "weekdays":
        return _Parsed("WEEKLY", byday=WEEKDAY_CODES[:5])
    if name == "weekends":
        return _Parsed("WEEKLY", byday=("SA", "SU"))
    if name == "days":
        return _Parsed("WEEKLY", byday=_weekday_codes(groups["days"]))
    if groups.get("part"):
        return _Parsed("DAILY", part=groups["part"])
    unit = groups.get("unit") or _ADVERB_UNIT[groups["adverb"]]
    part = "night" if groups.get("adverb") == "nightly" else ""
    return _Parsed(_UNIT[unit], part=part)


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + " " + text[end:]
    return " ".join(text.split())


def parse_series(utterance: str, now: datetime, *, alarm: bool = False) -> SpokenSeries | None:
    """The repeat said in `utterance`, or None when it says none."""
    lx = lex(utterance)
    canon = lx.canon
    # "every day except weekends": the weekends are taken out, never the repeat (it set
    # an alarm for Saturday and Sunday only)
    kept_out = _EXCEPT_KIND.search(canon)
    found = next(((n, m) for n, p in _REPEATS for m in p.finditer(canon)
                  if kept_out is None or not kept_out.start() <= m.start() < kept_out.end()),
                 None)
    plural = _ON_DAYS.search(utterance.lower())
    if plural is not None and (found is None or found[0] == "unit"):
        # "on tuesdays": the plural is the repeat, and the canonical text drops it.
        parsed = _Parsed("WEEKLY", byday=_weekday_codes(plural["days"]))
        spans = [plural.span()] + ([lx.span(*found[1].span())] if found is not None else [])
        return _finish(utterance, lx, canon, now, alarm, parsed, spans)
    if found is None:
        return None
    name, match = found
    parsed = _read_repeat(name, match)
    return _finish(utterance, lx, canon, now, alarm, parsed, [lx.span(*_carried_on(canon, match))])


_CARRIED = re.compile(rf"\s+{CARRIED_ON}\b")
_AND_BEFORE = re.compile(r"\band\s+$")
# "from now on", "going forward": the repeat starts now, as it would unsaid.
_FROM_NOW = re.compile(
    r"\b(?:from\s+(?:now|here|this\s+(?:moment|point))\s+on(?:wards)?(?:\s+out)?|going\s+forward)\b"
)
# "from tomorrow on", "starting monday onwards": the day is the start, the "on" no task.
_ON_AFTER_START = re.compile(r"\b(?:from|starting)\s+(?:\w+\s+){1,2}?(?P<on>on(?:wards)?)\b")


def _carried_on(canon: str, match: re.Match[str]) -> tuple[int, int]:
    """The repeat's span with the words that carry it on from a first day ("... tomorrow
    and every day after that"): they are no part of the task, and the "and" joins no
    second request."""
    start, end = match.span()
    if (tail := _CARRIED.match(canon, end)) is None:
        return start, end
    before = _AND_BEFORE.search(canon[:start])
    return (before.start() if before else start), tail.end()


def _finish(
    utterance: str,
    lx: Lexed,
    canon: str,
    now: datetime,
    alarm: bool,
    parsed: _Parsed,
    spans: list[tuple[int, int]],
) -> SpokenSeries:
    error = _impossible(parsed)
    if error:
        return SpokenSeries(None, error, _cut(utterance, spans))
    count, until, end_error = _read_end(utterance, lx, canon, now, spans)
    if (left_out := _EXCEPT.search(canon)) is not None:
        # "every weekday except friday", "every day but sunday": those days taken out
        if not _leave_out(parsed, _weekday_codes(left_out["days"])):
            return SpokenSeries(None, "That leaves no day for it to go off on; nothing was set.",
                                _cut(utterance, spans))
        spans.append(lx.span(*left_out.span()))
    elif (kind_out := _EXCEPT_KIND.search(canon)) is not None:
        days = ("SA", "SU") if kind_out["kind"].startswith("weekend") else WEEKDAY_CODES[:5]
        if not _leave_out(parsed, days):
            return SpokenSeries(None, "That leaves no day for it to go off on; nothing was set.",
                                _cut(utterance, spans))
        spans.append(lx.span(*kind_out.span()))
        left_out = kind_out
    # "every other week on friday": the day is said apart from the repeat.
    day = re.search(rf"\b(?:(?:starting|beginning|from)\s+)?(?:on\s+)?(?P<days>{_DAYS})\b", canon)
    if parsed.freq == "WEEKLY" and not parsed.byday and day and left_out is None:
        parsed.byday = _weekday_codes(day["days"])
        spans.append(lx.span(*day.span()))
    if parsed.freq in ("HOURLY", "MINUTELY") and (window := _WINDOW.search(canon)):
        if not _keep_to(parsed, window):
            return SpokenSeries(None, "I couldn't tell which hours that should keep to; "
                                "nothing was set.", _cut(utterance, spans))
        spans.append(lx.span(*window.span()))
    if (from_now := _FROM_NOW.search(canon)) is not None:
        spans.append(lx.span(*from_now.span()))
    elif (on := _ON_AFTER_START.search(canon)) is not None:
        spans.append(lx.span(*on.span("on")))
    rest = _cut(utterance, spans)
    clock, clock_phrase, start = _clock(rest, now, parsed, alarm)
    if end_error:
        return SpokenSeries(None, end_error, rest, clock_phrase)
    return _build(parsed, clock, now, count, until, rest, clock_phrase, start)


_EXCEPT = re.compile(
    rf"\b(?:except|except for|but not|apart from|other than|excluding|not)\s+(?:on\s+)?"
    rf"(?P<days>{_DAY}(?:(?:\s*,\s*|\s+and\s+|\s+or\s+|\s+)(?:and\s+|or\s+)?{_DAY})*)\b"
)


_EXCEPT_KIND = re.compile(
    r"\b(?:except|except for|but not|apart from|other than|excluding|not)\s+(?:on\s+|at\s+)?"
    r"(?:the\s+)?(?P<kind>weekends?|weekdays?|week\s+days|work\s*days)\b"
)


def _leave_out(parsed: _Parsed, days: tuple[str, ...]) -> bool:
    """Take `days` out of a daily or weekly repeat; False when none would be left, or
    when the repeat is not by the day (hourly, monthly: left as said)."""
    if parsed.freq == "DAILY" and parsed.interval == 1:
        kept = tuple(d for d in WEEKDAY_CODES if d not in days)
    elif parsed.freq == "WEEKLY" and parsed.byday:
        kept = tuple(d for d in parsed.byday if d not in days)
    else:
        return True
    if not kept:
        return False
    parsed.freq, parsed.byday = "WEEKLY", kept
    return True


def _keep_to(parsed: _Parsed, window: re.Match[str]) -> bool:
    """Make an hourly or minutely repeat a daily one at the hours of `window`; False
    when the hours make no window (or a step that does not divide the hour)."""
    if window["day"]:
        first, last = 9, 17
    else:
        first = _window_hour(int(window["a"]), window["am"], waking=True)
        last = _window_hour(int(window["b"]), window["bm"], waking=False, after=first)
    if first is None or last is None or not first < last:
        return False
    if parsed.freq == "HOURLY":
        parsed.byhour = tuple(range(first, last + 1, parsed.interval))
        parsed.byminute = (0,)
    elif 60 % parsed.interval == 0:
        parsed.byhour = tuple(range(first, last))
        parsed.byminute = tuple(range(0, 60, parsed.interval))
    else:
        return False
    parsed.freq, parsed.interval = "DAILY", 1
    return True


def _window_hour(hour: int, meridiem: str | None, *, waking: bool, after: int = 0) -> int | None:
    if not 0 <= hour <= 23:
        return None
    if meridiem:
        if hour > 12:
            return None
        pm = meridiem.replace(".", "").replace(" ", "").startswith("p")
        return hour % 12 + (12 if pm else 0)
    if hour > 12:
        return hour
    if waking:  # 7-11 am, 12 noon, 1-6 pm
        return hour + 12 if 1 <= hour <= 6 else hour
    return hour + 12 if hour + 12 <= 23 and hour <= after else hour


def _impossible(parsed: _Parsed) -> str:
    day = parsed.bymonthday
    if day is None:
        return ""
    if parsed.freq == "YEARLY" and parsed.bymonth is not None:
        longest = 29 if parsed.bymonth == 2 else calendar.monthrange(2001, parsed.bymonth)[1]
        if not 1 <= day <= longest:
            month = calendar.month_name[parsed.bymonth]
            return f"{month} never has a {_nth(day)}, so that would never go off; nothing was set."
    if not 1 <= day <= 31:
        return f"No month has a {_nth(day)}, so that would never go off; nothing was set."
    return ""


def _nth(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _read_end(
    utterance: str, lx: Lexed, canon: str, now: datetime, spans: list[tuple[int, int]]
) -> tuple[int | None, datetime | None, str]:
    """COUNT or UNTIL, as said; cuts their words into `spans`."""
    if m := _COUNT.search(canon):
        spans.append(lx.span(*m.span()))
        return max(1, int(m["n"])), None, ""
    if m := _FOR.search(canon):
        spans.append(lx.span(*m.span()))
        n = 1 if m["n"] in ("a", "an") else int(m["n"])
        step = {"day": relativedelta(days=n), "week": relativedelta(weeks=n),
                "month": relativedelta(months=n), "year": relativedelta(years=n)}[m["unit"]]
        return None, now + step, ""
    if m := _YESTERDAY.search(canon):
        spans.append(lx.span(*m.span()))
        return None, None, "That ends before it starts (yesterday has passed), so nothing was set."
    if m := _UNTIL.search(canon):
        start, _ = lx.span(m.start(), m.end())
        tail_start = lx.span(m.end(), len(canon))[0] if m.end() < len(canon) else len(utterance)
        tail = utterance[tail_start:]
        found = resolve_time(tail, now) if tail.strip() else None
        if found is None or not tail.lower().startswith(found.phrase.lower()[:1]):
            return None, None, "I couldn't tell when that should stop; nothing was set."
        end = tail_start + tail.find(found.phrase) + len(found.phrase)
        spans.append((start, end))
        last_day: date = found.when.date()
        until = datetime.combine(last_day, time(23, 59, 59), tzinfo=now.tzinfo)
        return None, until, ""
    return None, None, ""


def _clock(rest: str, now: datetime, parsed: _Parsed, alarm: bool) -> tuple[time, str, date | None]:
    """The series' time of day, the words that said it ("" when none did), and the day it
    starts on when one was said ("on friday at noon ... every month": from Friday)."""
    part_default = _PART_CLOCK.get(parsed.part, time(7) if alarm else time(9))
    found = find_time(rest, now)
    start = _start_day(found, now) if found and _names_a_start(rest, found.phrase) else None
    if parsed.freq in ("MINUTELY", "HOURLY"):
        return now.time().replace(second=0, microsecond=0), "", None
    if found is None or found.kind not in ("time", "datetime"):
        return part_default, _with_lead(rest, found.phrase) if start else "", start
    when = found.when.astimezone(now.tzinfo)
    hour = when.hour
    # A Russian phrase is judged by the English words it reads as ("вечера": pm).
    said = lex(found.phrase).canon if is_russian(found.phrase) else found.phrase.lower()
    explicit = re.search(
        # "7pm" glues the meridiem to the number, so no word boundary comes before it.
        r"(?<![a-z])(?:a\.? ?m|p\.? ?m)\b"
        r"|\b(?:morning|afternoon|evening|night|tonight|noon|midday|midnight)\b"
        r"|\b0\d|\b(?:1[3-9]|2[0-3])\b", said
    )
    if not explicit:
        base = hour % 12
        if parsed.part in ("afternoon", "evening", "night"):
            hour = base + 12 if base else 12
        elif parsed.part == "morning" or alarm:
            hour = base
        else:  # waking hours: 1-6 pm, 7-11 am, 12 noon
            hour = base + 12 if 1 <= base <= 6 else (12 if base == 0 else base)
    phrase = _with_lead(rest, found.phrase) if start else found.phrase
    return time(hour, when.minute), phrase, start


def _with_lead(rest: str, phrase: str) -> str:
    """The start day's words with the word that leads them in ("starting saturday"), so
    the task keeps neither."""
    m = re.search(rf"\b(?:starting|beginning|commencing|from|as of)(?: on)? {re.escape(phrase)}",
                  rest, re.IGNORECASE)
    return m.group() if m else phrase


_START_WORDS = re.compile(
    r"^(?:on|starting|beginning|commencing|from|as of|next|this|tomorrow|the day after)\b"
)
_DATE_WORDS = re.compile(
    r"\d+(?:st|nd|rd|th)\b|\b(?:january|february|march|april|may|june|july|august|september"
    r"|october|november|december)\b"
)
_LEADS = frozenset({"on", "starting", "beginning", "commencing", "from", "next", "this"})


def _names_a_start(rest: str, phrase: str) -> bool:
    """Whether the day found is said as the first one ("on friday", "starting saturday",
    "from the 10th"), not a day the task names in passing ("... except sunday")."""
    said = phrase.lower()
    if _START_WORDS.match(said) or _DATE_WORDS.search(said):
        return True
    at = rest.lower().find(said)
    before = rest[:at].split()[-1:] if at > 0 else []
    return bool(before) and before[0].lower() in _LEADS


def _start_day(found: TimeResolution | None, now: datetime) -> date | None:
    """The day a series starts on, when the words name a day after today."""
    if found is None or found.kind not in ("date", "datetime"):
        return None
    day = found.when.astimezone(now.tzinfo).date()
    return day if day > now.date() else None


def _build(
    parsed: _Parsed,
    clock: time,
    now: datetime,
    count: int | None,
    until: datetime | None,
    rest: str,
    clock_phrase: str,
    start: date | None = None,
) -> SpokenSeries:
    parts = {"FREQ": parsed.freq}
    if parsed.interval > 1:
        parts["INTERVAL"] = str(parsed.interval)
    if parsed.bymonth:
        parts["BYMONTH"] = str(parsed.bymonth)
    if parsed.bymonthday:
        parts["BYMONTHDAY"] = str(parsed.bymonthday)
    if parsed.byday:
        parts["BYDAY"] = ",".join(parsed.byday)
    if parsed.byhour:
        parts["BYHOUR"] = ",".join(str(h) for h in parsed.byhour)
        parts["BYMINUTE"] = ",".join(str(m) for m in parsed.byminute)
        clock = time(parsed.byhour[0], parsed.byminute[0])
    if parsed.freq in ("MINUTELY", "HOURLY"):
        step = timedelta(minutes=parsed.interval) if parsed.freq == "MINUTELY" else timedelta(
            hours=parsed.interval
        )
        anchor = now.replace(second=0, microsecond=0) + step
    else:
        # From the day said, if one was ("on friday ... every month": the 11th of each);
        # else from today.
        anchor = datetime.combine(start or now.date(), clock, tzinfo=now.tzinfo)
        if parsed.freq == "DAILY" and parsed.interval > 1 and start is None and anchor <= now:
            # "every other day" said after today's time: from tomorrow (it skipped to the
            # day after, counting today as the first)
            anchor += timedelta(days=1)
    if parsed.freq == "WEEKLY" and parsed.interval > 1 and parsed.byday:
        # "every other tuesday" starts on the coming Tuesday, not two weeks after this
        # week's (the weeks are counted from the first occurrence).
        weekly = rrulestr(f"FREQ=WEEKLY;BYDAY={','.join(parsed.byday)}", dtstart=anchor)
        anchor = weekly.after(now, inc=False) or anchor
    if until is not None:
        parts["UNTIL"] = until_value(until)
    bounded = rrulestr(rule_text(parts), dtstart=anchor)
    first = bounded.after(now, inc=True) if anchor > now else bounded.after(now, inc=False)
    if first is None:
        return SpokenSeries(
            None, "That would end before it ever went off, so nothing was set.", rest, clock_phrase
        )
    if count is not None:
        parts["COUNT"] = str(count)
        parts.pop("UNTIL", None)
    if parsed.freq == "WEEKLY" and not parsed.byday:
        parts["BYDAY"] = WEEKDAY_CODES[first.weekday()]
    return SpokenSeries(Series(rule_text(parts), first), "", rest, clock_phrase)
