"""Calendar arithmetic: the days a date expression names, soonest first."""

from __future__ import annotations

import calendar
from datetime import date, timedelta

from mavend.language.timeparse.atoms import DateSpec


def add_months(d: date, months: float) -> date:
    total = d.year * 12 + (d.month - 1) + int(months)
    year, month = divmod(total, 12)
    return date(year, month + 1, min(d.day, calendar.monthrange(year, month + 1)[1]))


def add_bdays(d: date, n: int) -> date:
    step = 1 if n >= 0 else -1
    for _ in range(abs(n)):
        d += timedelta(days=step)
        while d.weekday() >= 5:
            d += timedelta(days=step)
    return d


def week_of(d: date, weekday: int) -> date:
    """The given weekday in the Monday-to-Sunday week that holds d."""
    return d - timedelta(days=d.weekday()) + timedelta(days=weekday)


def date_candidates(spec: DateSpec, today: date, has_time: bool) -> list[date]:
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
        first = add_months(today.replace(day=1), spec.b)
        try:
            return [first.replace(day=spec.a)]
        except ValueError:
            return []
    if kind in ("nth_weekday", "nth_day"):
        return _nth_candidates(spec, today)
    if kind == "holiday":
        years = [spec.year] if spec.year else [today.year, today.year + 1]
        found = [d for y in years if (d := holiday_date(spec.name, y)) is not None]
        return found if spec.year else [d for d in found if d >= today]
    if kind == "weekend":
        saturday = today - timedelta(days=today.weekday()) + timedelta(days=5)
        if spec.name == "next_week":
            return [saturday + timedelta(days=7)]
        return [today] if today.weekday() >= 5 else [saturday]
    if kind == "next_unit":  # spec.a units ahead: "next week" 1, "the week after next" 2
        if spec.name == "week":
            return [today - timedelta(days=today.weekday()) + timedelta(days=7 * spec.a)]
        if spec.name == "month":
            return [add_months(today.replace(day=1), spec.a)]
        return [date(today.year + spec.a, 1, 1)]
    if kind == "part":
        found = _part_candidates(spec, today)
        return found if spec.year is not None else [d for d in found if d >= today]
    return []  # pragma: no cover - every kind is handled above


def _weekday_candidates(spec: DateSpec, today: date, has_time: bool) -> list[date]:
    """spec.a is the weekday, spec.b days added after it ("tuesday week": 7)."""
    wd, mode, later = spec.a, spec.name, timedelta(days=spec.b)
    monday = today - timedelta(days=today.weekday())
    if mode == "next_week":
        return [monday + timedelta(days=7 + wd) + later]
    if mode == "after_next":  # the one after "next friday"
        return [monday + timedelta(days=14 + wd) + later]
    if mode == "this_week":
        return [monday + timedelta(days=wd) + later]
    ahead = (wd - today.weekday()) % 7
    if mode == "this":
        first = today + timedelta(days=ahead)
    elif mode == "coming":
        first = today + timedelta(days=ahead or 7)
    elif ahead == 0 and not has_time:
        first = today + timedelta(days=7)  # "on tuesday" said on a Tuesday: next week
    else:
        first = today + timedelta(days=ahead)
    return [first + later + timedelta(days=7 * k) for k in range(3)]


def _md_candidates(spec: DateSpec, today: date) -> list[date]:
    """spec.a is the month, spec.b the day; spec.c years ahead ("... next year") if set."""
    month, d = spec.a, spec.b
    year = spec.year if spec.year is not None else (today.year + spec.c if spec.c else None)
    if year is not None:
        try:
            return [date(year, month, d)]
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


def _day_candidates(spec: DateSpec, today: date) -> list[date]:
    d = spec.a
    found: list[date] = []
    month_start = today.replace(day=1)
    for k in range(0, 60):
        first = add_months(month_start, k)
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


def _months(month: int, ahead: int, year: int | None, today: date) -> list[tuple[int, int]]:
    """(year, month) pairs a month target may mean, soonest first: a named month
    (this year's and next year's), or the month `ahead` months from now ("this
    month" also gives next month, in case the day asked for has passed)."""
    if month:
        return [(year, month)] if year is not None else [(today.year, month),
                                                         (today.year + 1, month)]
    first = add_months(today.replace(day=1), ahead)
    following = add_months(first, 1)
    months = [(first.year, first.month)]
    return [*months, (following.year, following.month)] if ahead == 0 else months


def _nth_candidates(spec: DateSpec, today: date) -> list[date]:
    if spec.name == "rel":
        months = _months(0, spec.c, None, today)
    else:
        months = _months(spec.c, 0, spec.year, today)
    found: list[date] = []
    for y, mo in months:
        d = _nth_weekday(y, mo, spec.a, spec.b) if spec.kind == "nth_weekday" else _nth_day(
            y, mo, spec.a
        )
        if d is not None and (spec.year is not None or d >= today):
            found.append(d)
    return found


_WEEK_PART_DAYS = {"start": 0, "mid": 2, "late": 3, "end": 4}  # Monday + n (see parts)
_YEAR_PART_DAYS = {"start": (1, 1), "mid": (7, 1), "late": (9, 1), "end": (12, 31)}


def _part_candidates(spec: DateSpec, today: date) -> list[date]:
    """spec.name is "unit:part"; spec.a the n of an nth week, spec.b a named
    month, spec.c how many units ahead (0: this one, or the next if it passed)."""
    unit, part = spec.name.split(":")
    if unit == "week":
        monday = today - timedelta(days=today.weekday())
        weeks = [spec.c] if spec.c else [0, 1]
        return [monday + timedelta(days=7 * w + _WEEK_PART_DAYS[part]) for w in weeks]
    if unit == "year":
        if spec.year is not None:
            years = [spec.year]
        else:
            years = [today.year + spec.c] if spec.c else [today.year, today.year + 1]
        return [date(y, *_YEAR_PART_DAYS[part]) for y in years]
    months = _months(spec.b, spec.c, spec.year, today)
    return [d for y, mo in months if (d := _month_part(y, mo, part, spec.a)) is not None]


def _month_part(year: int, month: int, part: str, n: int) -> date | None:
    last = calendar.monthrange(year, month)[1]
    if part == "week":
        day = last - 6 if n < 0 else 1 + 7 * (n - 1)
        return date(year, month, day) if day <= last else None
    if part == "weekend":
        return _nth_weekday(year, month, n, 5)
    day = {"start": 1, "mid": 15, "late": 21, "end": last}[part]
    return date(year, month, day)


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


def holiday_date(rule: str, year: int) -> date | None:
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
