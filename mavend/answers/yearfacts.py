"""yearfacts: where today falls in its year. "what week of the year is it", "what day of
the year is it", "how many days are left in the year", "what quarter are we in".

The clock answered these with the time ("It's 04:14 on Monday, 7 December"); each is a
line of calendar arithmetic. Week numbers are ISO 8601 (weeks start on Monday; week 1
holds the year's first Thursday), as calendars in Europe print them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from mavend.answers.common import Answer, plural

SKILL = "yearfacts"

_NOW = (r"(?: (?:is it|is this|are we in|are we on|is today|are we|is it today|is it now"
        r"|today|now))?")
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("week", rf"^(?:what|which) (?:week(?: number)?|number week)(?: of the year)?{_NOW}$"),
        ("week", r"^what(?: is)? (?:the|this) week(?:'s)? number(?: of the year)?(?: today)?$"),
        ("week", r"^what is the week number(?: today| now| this week)?$"),
        ("day", rf"^(?:what|which) (?:number )?day of the year{_NOW}$"),
        ("left", r"^how many (?P<unit>days|weeks) (?:are )?(?:left|remaining|to go|are left)"
                 r"(?: in| of)? (?:the|this) (?P<span>year|month)$"),
        ("left", r"^how many (?P<unit>days|weeks) (?:are there |do we have |have we got )?"
                 r"(?:left )?(?:until|till|to|before) the end of (?:the|this) "
                 r"(?P<span>year|month)$"),
        ("quarter", rf"^(?:what|which) (?:quarter|financial quarter)(?: of the year)?{_NOW}$"),
    )
)


@dataclass(frozen=True)
class YearQuestion:
    kind: str  # "week", "day", "left" or "quarter"
    unit: str = "days"
    span: str = "year"


def parse(numeric: str) -> YearQuestion | None:
    for kind, shape in _SHAPES:
        if m := shape.match(numeric):
            groups = m.groupdict()
            return YearQuestion(kind, groups.get("unit") or "days", groups.get("span") or "year")
    return None


def answer(question: YearQuestion, now: datetime) -> Answer:
    today = now.date()
    if question.kind == "week":
        year, week, _ = today.isocalendar()
        return Answer(f"It's week {week} of {year}.", SKILL, {"week": week, "year": year})
    if question.kind == "day":
        day = today.timetuple().tm_yday
        days = _year_length(today.year)
        return Answer(f"Today is day {day} of {days} in {today.year}.", SKILL,
                      {"day": day, "of": days})
    if question.kind == "quarter":
        quarter = (today.month - 1) // 3 + 1
        return Answer(f"It's the {('first', 'second', 'third', 'fourth')[quarter - 1]} quarter "
                      f"of {today.year}.", SKILL, {"quarter": quarter, "year": today.year})
    return _left(question, today)


def _left(question: YearQuestion, today: date) -> Answer:
    if question.span == "year":
        last = date(today.year, 12, 31)
        named = str(today.year)
    else:
        following = (today.replace(day=28) + timedelta(days=4)).replace(day=1)
        last = following - timedelta(days=1)
        named = today.strftime("%B")
    days = (last - today).days  # after today
    data = {"days": days, "last": last.isoformat()}
    if question.unit == "weeks":
        weeks, rest = divmod(days, 7)
        said = f"{weeks} {plural(weeks, 'week')}" + (
            f" and {rest} {plural(rest, 'day')}" if rest else "")
        return Answer(f"{_there(weeks or rest)} {said} left in {named} after today.", SKILL, data)
    if days == 0:
        return Answer(f"Today is the last day of {named}.", SKILL, data)
    return Answer(f"{_there(days)} {days} {plural(days, 'day')} left in {named} after today.",
                  SKILL, data)


def _there(count: int) -> str:
    return "There is" if count == 1 else "There are"


def _year_length(year: int) -> int:
    return (date(year + 1, 1, 1) - date(year, 1, 1)).days
