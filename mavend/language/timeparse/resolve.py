"""Resolution: the strongest group, turned into an instant against `now`."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from functools import lru_cache
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mavend.language.timeparse.atoms import Clock, DateSpec, Offset, Period
from mavend.language.timeparse.candidates import add_bdays, add_months, date_candidates, week_of
from mavend.language.timeparse.clocks import ALARM_RE, EVENING_RE, PERIODS
from mavend.language.timeparse.grammar import find_atoms
from mavend.language.timeparse.groups import Group, group_atoms
from mavend.language.timeparse.lexing import Lexed, lex

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
    # The other span when the time was said in two places, the day and the hour apart
    # ("on friday ... at 3": phrase "on friday", also "at 3"), verbatim; else "".
    also: str = ""


def resolve_text(
    text: str, now: datetime, prefer_future: bool, default_time: time, min_score: int
) -> TimeResolution | None:
    if not isinstance(text, str) or not text.strip():
        return None
    text = text[:MAX_INPUT_CHARS]
    now = _aware(now)
    lx = lex(text)
    if not lx.toks:
        return None
    every = group_atoms(lx, find_atoms(lx))
    if any(_counts_from_unknown(g) for g in every):
        return None  # the day it counts from is not known: no time is better than a wrong one
    groups = [g for g in every if _usable(g)]
    if not groups:
        return None
    # "remind me tomorrow to check the 3 o'clock train": the train's hour is not when.
    named = [
        g for g in groups
        if g.clock is not None and g.date is None and g.offset is None
        and _NAMES_A_THING.search(lx.canon[: g.start])
    ]
    if named and any(g.date or g.offset for g in groups if g not in named):
        groups = [g for g in groups if g not in named]  # ("the 5 pm one" alone still is)
    best = max(groups, key=lambda g: (g.score, g.end - g.start, -g.start))
    if best.score < min_score and not _covers_most(lx, best):
        return None
    if _counts_from_something_else(lx, best):
        return None
    start, end = lx.span(best.start, best.end)
    also = ""
    if (apart := _day_and_hour_apart(lx, best, groups)) is not None:
        best, other = apart
        other_start, other_end = lx.span(other.start, other.end)
        also = text[other_start:other_end]
    if ALARM_RE.search(lx.canon):
        _mornings(best)
    elif EVENING_RE.search(lx.canon):
        _evenings(best)
    resolved = _resolve_group(best, now, prefer_future, default_time)
    if resolved is None:
        return None
    when, kind, duration = resolved
    return TimeResolution(
        when=when, kind=kind, phrase=text[start:end], duration=duration, also=also
    )


# A clock time after one of these names a thing, not when: "the 3 o'clock train".
_NAMES_A_THING = re.compile(r"(?:^|\s)(?:the|my|your|our|his|her|their|a|this|that)\s$")
_APART_MAX_GAP = 60  # canonical characters between the day and the hour


def _day_and_hour_apart(lx: Lexed, best: Group, groups: list[Group]) -> tuple[Group, Group] | None:
    """A day and an hour said apart, with the task between ("remind me on friday to
    call bob at 3"): one group with the day and no hour, exactly one other with the
    hour (or part of the day) and no day. The two as one group, and the other one."""
    def day_only(g: Group) -> bool:
        return g.date is not None and g.clock is None and g.period is None and g.offset is None

    def hour_only(g: Group) -> bool:
        return (
            ((g.clock is not None and not g.clock.weak) or g.period is not None)
            and g.date is None and g.offset is None
            and not _NAMES_A_THING.search(lx.canon[: g.start])
        )

    if day_only(best):
        others = [g for g in groups if g is not best and hour_only(g)]
    elif hour_only(best):
        others = [g for g in groups if g is not best and day_only(g)]
    else:
        return None
    if len(others) != 1:
        return None  # none, or two hours for one day: nothing is guessed
    other = others[0]
    gap = (other.start - best.end) if other.start >= best.end else (best.start - other.end)
    if gap > _APART_MAX_GAP:
        return None
    merged = Group()
    for atom in sorted([*best.atoms, *other.atoms], key=lambda a: a.start):
        if not merged.add(atom):
            return None
    return merged, other



def _mornings(g: Group) -> None:
    """An alarm or a wake-up call with a bare hour is a morning ("wake me at six")."""
    clock = g.clock
    if clock is not None and not (clock.meridiem or clock.exact24 or g.period) and clock.h != 12:
        g.period = Period("am", PERIODS["am"])


def _evenings(g: Group) -> None:
    """Dinner, drinks or the theatre with a bare hour is an evening ("dinner with sam on
    friday at 8" was 08:00: a later day reads 7-11 as the morning)."""
    clock = g.clock
    if clock is not None and not (clock.meridiem or clock.exact24 or g.period) \
            and 1 <= clock.h <= 11:
        g.period = Period("pm", PERIODS["pm"])


def _usable(g: Group) -> bool:
    # A lone bare number, or a lone "the day after"-style link, is no time.
    if g.clock is not None and g.clock.weak and not (g.date or g.period or g.offset):
        return len(g.atoms) == 1  # kept for resolve_time("five"); find_time needs more
    if g.date is not None and g.date.kind == "rel" and g.date.a < 0:
        return False  # "yesterday" is the past; it only counts as an anchor
    return bool(g.atoms)


def _counts_from_unknown(g: Group) -> bool:
    """ "2 days before my anniversary", "the day before the bins at 7pm": a span counted
    from a date the resolver cannot read. Counting from now set the wrong day."""
    off = g.offset
    return off is not None and bool(off.anchor) and not off.anchor_optional and g.anchor is None


_BEFORE_AFTER = re.compile(r"\s?(?:before|after)(?!\w)")


def _counts_from_something_else(lx: Lexed, g: Group) -> bool:
    """ "2 days before my anniversary": a bare span counted from a date the resolver could
    not read (the anchored reading failed) is not "in 2 days"."""
    off = g.offset
    return (off is not None and not off.relative and not off.anchor and g.date is None
            and g.clock is None and _BEFORE_AFTER.match(lx.canon, g.end) is not None)


def _covers_most(lx: Lexed, g: Group) -> bool:
    """A weak expression still counts when it is (nearly) the whole utterance ("thu")."""
    if g.score < 1:
        return False
    covered = len(lx.canon[g.start : g.end].replace(" ", ""))
    total = len(re.sub(r"[\W_]", "", lx.canon)) or 1
    return covered >= 0.6 * total


def _aware(now: datetime) -> datetime:
    if now.tzinfo is None or now.tzinfo.utcoffset(now) is None:
        return now.replace(tzinfo=machine_zone())
    return now


@lru_cache(maxsize=1)
def machine_zone() -> tzinfo:
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
    g: Group, now: datetime, prefer_future: bool, default_time: time
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
    g: Group, now: datetime, prefer_future: bool, default_time: time
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
                # "2 days before my anniversary": the date it counts from is not one the
                # resolver reads; counting from now instead set it for the wrong day.
                return None
            base = today
        target = _step_from_anchor(base, off)
        dates = [week_of(target, g.date.a) if _is_weekday(g.date) else target]
    elif off is not None and off.relative and (g.date is not None or has_time):
        moved = _apply_offset(now, off)
        dates = [week_of(moved.date(), g.date.a) if _is_weekday(g.date) else moved.date()]
    elif off is not None:
        return _resolve_offset_only(off, now)
    elif g.date is not None:
        dates = date_candidates(g.date, today, has_time)
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


def _resolve_offset_only(off: Offset, now: datetime) -> _Resolved:
    when = _apply_offset(now, off)
    kind = "datetime" if off.relative else "duration"
    return when, kind, _elapsed(now, when)


_ZERO = timedelta(0)


def _elapsed(start: datetime, end: datetime) -> timedelta:
    """Real time between two instants. Python subtracts (and compares) datetimes
    that share a tzinfo on the wall clock, which is an hour off across DST."""
    return end.astimezone(UTC) - start.astimezone(UTC)


def _is_weekday(spec: DateSpec | None) -> bool:
    return spec is not None and spec.kind == "weekday"


def _anchor_date(g: Group, today: date, has_time: bool) -> date | None:
    if g.anchor is None:
        return None
    found = date_candidates(g.anchor, today, has_time)
    if not found:
        return None
    off, spec = g.offset, g.anchor
    yearly = spec.kind in ("md", "holiday") and spec.year is None and not spec.c
    if off is not None and off.anchor == "before" and yearly:
        # "a week before christmas" on the 20th: next year's, not a day gone by. The
        # anchor's own next date is still this year's; the day counted back from it is not.
        for base in found:
            if _step_from_anchor(base, off) >= today:
                return base
        later = date_candidates(spec, found[-1] + timedelta(days=1), has_time)
        return later[0] if later else found[0]
    return found[0]


def _step_from_anchor(base: date, off: Offset) -> date:
    sign = -1 if off.anchor == "before" else 1
    if off.nth_weekday is not None:
        n, wd = off.nth_weekday
        ahead = (wd - base.weekday()) % 7 or 7
        if sign > 0:
            return base + timedelta(days=ahead + 7 * (n - 1))
        back = (base.weekday() - wd) % 7 or 7
        return base - timedelta(days=back + 7 * (n - 1))
    moved = add_months(base, sign * off.months) + timedelta(days=sign * off.days)
    moved += timedelta(seconds=sign * off.seconds)
    return add_bdays(moved, sign * off.bdays)


def _apply_offset(now: datetime, off: Offset) -> datetime:
    tz = now.tzinfo
    assert tz is not None
    whole_days = int(off.days)
    extra_seconds = off.seconds + (off.days - whole_days) * 86400
    months_whole = int(off.months)
    extra_days = round((off.months - months_whole) * 30)  # "1.5 months": 30-day months
    day = add_months(now.date(), months_whole) + timedelta(days=whole_days + extra_days)
    day = add_bdays(day, off.bdays)
    # Calendar steps keep the wall-clock time; hours and minutes are elapsed time.
    moved = _local(day, now.hour, now.minute, now.second + now.microsecond / 1e6, tz)
    if day == now.date():
        moved = now
    return (moved.astimezone(UTC) + timedelta(seconds=extra_seconds)).astimezone(tz)


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


def _pick_time(g: Group, dates: list[date] | None, now: datetime, prefer_future: bool) -> datetime:
    tz = now.tzinfo
    assert tz is not None
    today = now.date()
    if dates is None:  # a clock time with no day: today or the next days
        days = [today + timedelta(days=k) for k in range(3)]
    elif len(dates) == 1 and dates[0] == today and g.date is not None and g.date.kind == "rel":
        # "today at 8" said at 10: tomorrow. "tonight" (no clock) said at 22:30 is not
        # tomorrow night: its 20:00 has passed, and the caller asks when.
        days = [today] if g.clock is None else [today, today + timedelta(days=1)]
    else:
        days = dates
    first: datetime | None = None
    # A weekday that is today ("on monday at 9" said on a Monday afternoon) reads its
    # clock as on any named day (09:00, next week's when that has passed), not as the
    # nearest 9 ahead (21:00 today, which the bare "monday" would never have meant)
    named_day = _is_weekday(g.date)
    for d in days:
        nearest = dates is None or (d == today and not named_day)
        for h, m, s, day_shift in _readings(g.clock, g.period, nearest):
            dt = _local(d + timedelta(days=day_shift), h, m, s, tz)
            first = first or dt
            if not prefer_future or _elapsed(now, dt) > _ZERO:
                return dt
    assert first is not None
    return first


def _readings(
    clock: Clock | None, period: Period | None, nearest: bool
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
