"""yearfacts: where today falls in its year, and the years themselves. "what week of the
year is it", "what day of the year is it", "how many days are left in the year", "what
quarter are we in"; "is 2028 a leap year", "how many days are in february", "how long ago
was 1989".

The clock answered these with the time ("It's 04:14 on Monday, 7 December"); each is a
line of calendar arithmetic. Week numbers are ISO 8601 (weeks start on Monday; week 1
holds the year's first Thursday), as calendars in Europe print them.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from dateutil.relativedelta import relativedelta

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


_MONTHS = "|".join(m.lower() for m in calendar.month_name[1:])
# A year said alone: "how long ago was 1989", "how many years until 2030" (the date reader
# needs a day; the model, asked, guessed).
# Ahead, only "years" or "the year" make it one: "how long until 2030" may be 20:30.
_YEARS = re.compile(
    r"^how (?:(?:long ago|many years ago) (?:was|is) (?:the year )?"
    r"|(?:many years|long) (?:has it been |is it |have passed |ago was )?since (?:the year )?"
    r"|many years (?:is it |are there |is there |do we have |left )?(?:until|till|to|before) "
    r"(?:the year )?|long (?:is it )?(?:until|till|to|before) the year )"
    r"(?P<year>1[0-9]{3}|20[0-9]{2}|2100)$"
)
_LEAP = re.compile(
    r"^(?:is|was|will) (?P<year>\d{4}|it|this year|next year|last year)(?: be)? a leap year"
    r"(?: this year)?$|^(?:when|what) is the (?P<next>next) leap year$"
)


# "how many days are in february", "how many days does this month have": the calendar's
# (units said "365.25 days in a year", the mean, to "how many days in a year").
_DAYS_IN = re.compile(
    rf"^how many days (?:are there |are |is there )?in (?:a |the )?(?:month of )?"
    rf"(?P<month>{_MONTHS}|this month|next month|last month|year|this year|next year)"
    rf"(?: (?P<year>\d{{4}}))?$"
    rf"|^how many days (?:does|did|will) (?P<month2>{_MONTHS}|this month|next month) (?:have|has)"
    rf"(?: (?P<year2>\d{{4}}))?$"
)


@dataclass(frozen=True)
class YearQuestion:
    kind: str  # "week", "day", "left", "quarter"; "years", "leap", "days_in"
    unit: str = "days"
    span: str = "year"  # "left": year or month; "years"/"leap"/"days_in": what was said
    year: str = ""  # "days_in": the year said, if any


def parse(numeric: str) -> YearQuestion | None:
    if years := _YEARS.match(numeric):
        return YearQuestion("years", span=years["year"])
    if leap := _LEAP.match(numeric):
        return YearQuestion("leap", span=leap["year"] or "next")
    if days := _DAYS_IN.match(numeric):
        return YearQuestion("days_in", span=days["month"] or days["month2"],
                            year=days["year"] or days["year2"] or "")
    for kind, shape in _SHAPES:
        if m := shape.match(numeric):
            groups = m.groupdict()
            return YearQuestion(kind, groups.get("unit") or "days", groups.get("span") or "year")
    return None


def answer(question: YearQuestion, now: datetime) -> Answer:
    today = now.date()
    if question.kind == "years":
        return _years(int(question.span), today)
    if question.kind == "leap":
        return _leap(question.span, today)
    if question.kind == "days_in":
        return _days_in(question.span, question.year, today)
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


def _days_in(month: str, year_said: str, today: date) -> Answer:
    shift = {"next": 1, "last": -1}.get(month.split()[0], 0)
    if month == "year" and not year_said:
        return Answer("A year has 365 days, or 366 in a leap year.", SKILL,
                      {"days": 365, "leap_year_days": 366})
    if "year" in month:
        year = int(year_said) if year_said else today.year + shift
        days = 366 if calendar.isleap(year) else 365
        return Answer(f"{year} has {days} days.", SKILL, {"year": year, "days": days})
    if "month" in month:
        first = date(today.year, today.month, 1) + relativedelta(months=shift)
        number, year = first.month, first.year
    else:
        number = [m.lower() for m in calendar.month_name].index(month)
        year = int(year_said) if year_said else today.year
        if not year_said and number < today.month:
            year += 1  # "february" said in december: the coming one
    days = calendar.monthrange(year, number)[1]
    name = calendar.month_name[number]
    extra = ""
    if number == 2 and not year_said:
        extra = " (29 in a leap year)" if days == 28 else " (a leap year)"
    return Answer(f"{name} {year} has {days} days{extra}.", SKILL,
                  {"month": number, "year": year, "days": days})


def _years(year: int, today: date) -> Answer:
    """A year said alone, counted in whole calendar years from this one."""
    apart = today.year - year
    data = {"year": year, "years": apart}
    if apart > 0:
        return Answer(f"{year} was {apart} {plural(apart, 'year')} ago.", SKILL, data)
    if apart < 0:
        ahead = -apart
        return Answer(f"{year} is {ahead} {plural(ahead, 'year')} away: it starts on 1 "
                      f"January, in {(date(year, 1, 1) - today).days} days.", SKILL, data)
    return Answer(f"That's this year: it's {year} now.", SKILL, data)


def _leap(said: str, today: date) -> Answer:
    if said == "next":
        year = next(y for y in range(today.year + 1, today.year + 9) if calendar.isleap(y))
        return Answer(f"The next leap year is {year}.", SKILL, {"year": year, "leap": True})
    shift = {"next year": 1, "last year": -1}.get(said, 0)
    year = int(said) if said.isdigit() else today.year + shift
    leap = calendar.isleap(year)
    verb = "was" if year < today.year else "will" if year > today.year else "is"
    said_verb = f"{verb} be" if verb == "will" else verb
    if not leap:
        said_verb = "won't be" if verb == "will" else f"{verb} not"
    return Answer(f"{'Yes' if leap else 'No'}, {year} {said_verb} a leap year.", SKILL,
                  {"year": year, "leap": leap})
