"""A stored series: an RFC 5545 RRULE (no DTSTART) and its first occurrence.

dateutil's rrule does the calendar arithmetic. Occurrences keep their wall-clock time
across a clock change ("every day at 07:00" stays 07:00 in summer) because the start is
given in the user's IANA zone, never as a fixed offset: `Series.of` converts it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from functools import cached_property

from dateutil.rrule import rrule, rruleset, rrulestr

# The most occurrences read off one day (one every minute is 1,440).
MAX_ON_A_DAY = 24 * 60
WEEKDAY_CODES = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)


@dataclass(frozen=True)
class Series:
    rule: str  # "FREQ=WEEKLY;BYDAY=MO;UNTIL=20261224T225959Z"
    start: datetime  # the first occurrence, aware, in the user's zone
    # Occurrences taken out one by one (RFC 5545 EXDATE): "not on friday", "not this
    # weekend" said of a series whose next time is before them.
    skips: tuple[datetime, ...] = ()

    @classmethod
    def of(cls, rule: str, start: datetime, tz: tzinfo,
           skips: tuple[datetime, ...] = ()) -> Series:
        return cls(rule, start.astimezone(tz), tuple(s.astimezone(tz) for s in skips))

    @cached_property
    def _rrule(self) -> rrule | rruleset:
        rule: rrule = rrulestr(self.rule, dtstart=self.start)  # type: ignore[assignment]
        if not self.skips:
            return rule
        both = rruleset()
        both.rrule(rule)
        for skipped in self.skips:
            both.exdate(skipped)
        return both

    def without(self, occurrences: tuple[datetime, ...]) -> Series:
        """The same series with `occurrences` taken out too."""
        kept = tuple(sorted(set(self.skips) | set(occurrences)))
        return Series(self.rule, self.start, kept)

    def on(self, day: date) -> tuple[datetime, ...]:
        """Its occurrences on `day` (in its zone), in order."""
        tz = self.start.tzinfo
        begin = datetime.combine(day, time(0), tzinfo=tz)
        found, moment = [], begin - timedelta(microseconds=1)
        while (moment := self._rrule.after(moment, inc=False)) is not None and (
                moment.date() == day) and len(found) < MAX_ON_A_DAY:
            found.append(moment)
        return tuple(found)

    def after(self, moment: datetime) -> datetime | None:
        """The first occurrence strictly after `moment`; None when the series has ended."""
        found = self._rrule.after(moment.astimezone(self.start.tzinfo), inc=False)
        return found

    def first(self) -> datetime | None:
        return self._rrule.after(self.start, inc=True)

    def parts(self) -> dict[str, str]:
        return dict(p.split("=", 1) for p in self.rule.split(";") if "=" in p)

    def describe(self) -> str:
        """'every Monday at 19:00', 'every weekday at 07:00, until 24 December'."""
        return describe_rule(self.parts(), self.start)

    def weekdays(self) -> tuple[str, ...] | None:
        """The days of the week it goes off on (RRULE codes, Monday first); None when
        it does not repeat by them (every other day, monthly, yearly: the days drift)."""
        parts = self.parts()
        freq, interval = parts.get("FREQ", ""), int(parts.get("INTERVAL", "1") or 1)
        if parts.get("BYMONTHDAY") or parts.get("BYMONTH"):
            return None
        said = [d for d in parts.get("BYDAY", "").split(",") if d in WEEKDAY_CODES]
        if freq == "WEEKLY":
            days = said or [WEEKDAY_CODES[self.start.weekday()]]
        elif freq in ("HOURLY", "MINUTELY", "SECONDLY") or (freq == "DAILY" and interval == 1):
            days = said or list(WEEKDAY_CODES)
        else:
            return None
        return tuple(d for d in WEEKDAY_CODES if d in days)

    def on_days(self, days: tuple[str, ...]) -> Series:
        """The same series kept to `days` (a subset of `weekdays()`): a once-a-day one
        becomes weekly on those days, one that repeats within a day keeps its step and
        goes off on those days only."""
        parts = self.parts()
        ordered = ",".join(d for d in WEEKDAY_CODES if d in days)
        if parts.get("FREQ") == "DAILY" and not parts.get("BYHOUR"):
            parts["FREQ"] = "WEEKLY"
        parts["BYDAY"] = ordered
        return Series(rule_text(parts), self.start, self.skips)


def rule_text(parts: dict[str, str]) -> str:
    order = ("FREQ", "INTERVAL", "BYMONTH", "BYMONTHDAY", "BYDAY", "BYHOUR", "BYMINUTE", "COUNT",
             "UNTIL")
    return ";".join(f"{k}={parts[k]}" for k in order if parts.get(k))


def until_value(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _nth_weekday(byday: str) -> str:
    """'-1FR' -> 'last Friday', '1MO' -> 'first Monday'; '' for a plain BYDAY."""
    match = re.fullmatch(r"(-?\d)(MO|TU|WE|TH|FR|SA|SU)", byday)
    if match is None:
        return ""
    which = {"-1": "last", "1": "first", "2": "second", "3": "third", "4": "fourth"}
    day = WEEKDAY_NAMES[WEEKDAY_CODES.index(match[2])]
    return f"{which.get(match[1], match[1])} {day}"


def _every(interval: int, unit: str) -> str:
    if interval == 1:
        return f"every {unit}"
    if interval == 2 and unit not in ("second", "minute", "hour"):
        return f"every other {unit}"
    return f"every {interval} {unit}s"


def _days(codes: list[str]) -> str:
    names = [WEEKDAY_NAMES[WEEKDAY_CODES.index(c)] for c in codes if c in WEEKDAY_CODES]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def days_phrase(codes: list[str]) -> str:
    """'on weekdays', 'at weekends', 'on Mondays and Fridays' (a step within the day,
    kept to some days of the week)."""
    if codes == list(WEEKDAY_CODES[:5]):
        return "on weekdays"
    if codes == ["SA", "SU"]:
        return "at weekends"
    if len(codes) == 6:
        return "except on " + next(f"{WEEKDAY_NAMES[i]}s" for i, c in enumerate(WEEKDAY_CODES)
                                   if c not in codes)
    names = [f"{WEEKDAY_NAMES[WEEKDAY_CODES.index(c)]}s" for c in codes if c in WEEKDAY_CODES]
    return "on " + (names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1])


def _window(parts: dict[str, str], start: datetime) -> str:
    hours = [int(h) for h in parts["BYHOUR"].split(",") if h]
    minutes = [int(m) for m in parts.get("BYMINUTE", "0").split(",") if m] or [0]
    first, last = f"{hours[0]:02d}:{minutes[0]:02d}", f"{hours[-1]:02d}:{minutes[-1]:02d}"
    if len(minutes) > 1:
        step = _every(minutes[1] - minutes[0], "minute")
    elif len(hours) > 1:
        step = _every(hours[1] - hours[0], "hour")
    else:
        return f"every day at {first}"
    return f"{step} from {first} to {last}"


def describe_rule(parts: dict[str, str], start: datetime) -> str:
    freq = parts.get("FREQ", "")
    interval = int(parts.get("INTERVAL", "1") or 1)
    clock = f"{start:%H:%M}"
    days = [d for d in parts.get("BYDAY", "").split(",") if d]
    if parts.get("BYHOUR"):  # a daily window: "every 2 hours from 09:00 to 17:00"
        text = _window(parts, start)
    elif freq == "SECONDLY":  # not said aloud; a test's or a script's rule
        text = _every(interval, "second")
    elif freq == "MINUTELY":
        text = _every(interval, "minute")
    elif freq == "HOURLY":
        text = _every(interval, "hour")
    elif freq == "DAILY":
        text = f"{_every(interval, 'day')} at {clock}"
    elif freq == "WEEKLY":
        days = days or [WEEKDAY_CODES[start.weekday()]]
        if days == list(WEEKDAY_CODES[:5]):
            text = f"every weekday at {clock}"
        elif days == ["SA", "SU"]:
            text = f"every Saturday and Sunday at {clock}"
        elif interval == 1 and len(days) == 6:  # "every day except Sunday"
            text = f"every day except {_days([d for d in WEEKDAY_CODES if d not in days])}"
            text += f" at {clock}"
        elif interval == 1:
            text = f"every {_days(days)} at {clock}"
        elif interval == 2:
            text = f"every other {_days(days)} at {clock}"
        else:
            text = f"every {interval} weeks on {_days(days)} at {clock}"
    elif freq == "MONTHLY" and (nth := _nth_weekday(parts.get("BYDAY", ""))):
        text = f"on the {nth} of {_every(interval, 'month')} at {clock}"
    elif freq == "MONTHLY":
        day = int(parts.get("BYMONTHDAY") or start.day)
        text = f"on the {_ordinal(day)} of {_every(interval, 'month')} at {clock}"
    elif freq == "YEARLY":
        month = int(parts.get("BYMONTH") or start.month)
        day = int(parts.get("BYMONTHDAY") or start.day)
        text = f"every year on {day} {MONTH_NAMES[month - 1]} at {clock}"
    else:
        text = "repeating"
    if days and len(days) < 7 and freq != "WEEKLY" and (
            parts.get("BYHOUR") or freq in ("HOURLY", "MINUTELY", "SECONDLY")):
        text += " " + days_phrase(days)  # "every hour on weekdays"
    if parts.get("COUNT"):
        text += f", {parts['COUNT']} times in all"
    if parts.get("UNTIL"):
        until = datetime.strptime(parts["UNTIL"], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
        local = until.astimezone(start.tzinfo)
        text += f", until {local.day} {MONTH_NAMES[local.month - 1]}"
        if local.year != start.year:
            text += f" {local.year}"
    return text
