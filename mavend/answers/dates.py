"""dates: calendar arithmetic. "how many days until christmas", "what day of the week
was 1 january 2000", "how long ago was 4 july 1976", "what's the date in 3 weeks".

Holidays are computed (fixed dates; Easter by `dateutil.easter`; US Thanksgiving by
`dateutil.rrule`), never listed year by year. A spelled date goes to the time resolver
reminders use (`mavend.language.timeparse`), which reads "the fourth of july nineteen
seventy six" and "31/12/1999". A holiday that is today is today; one that has passed
this year means next year's, unless the question looks back ("since", "ago").
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from dateutil.easter import easter
from dateutil.relativedelta import TH, relativedelta
from dateutil.rrule import SU, YEARLY, rrule

from mavend.answers.common import Answer, plural
from mavend.language.timeparse import resolve_time

SKILL = "dates"


def _thanksgiving(year: int) -> date:
    first = rrule(YEARLY, count=1, bymonth=11, byweekday=TH(4), dtstart=datetime(year, 1, 1))
    return first[0].date()


def _nth_sunday(month: int, n: int) -> Callable[[int], date]:
    def rule(year: int) -> date:
        found = rrule(YEARLY, count=1, bymonth=month, byweekday=SU(n),
                      dtstart=datetime(year, 1, 1))
        return found[0].date()
    return rule


def _mothering_sunday(year: int) -> date:
    """The UK's and Ireland's Mother's Day: the fourth Sunday of Lent, three weeks before
    Easter."""
    return easter(year) - timedelta(days=21)


# Where "mother's day" is Mothering Sunday, not May's second Sunday (the user's zone says).
_MOTHERING_SUNDAY_ZONES = frozenset({"Europe/London", "Europe/Dublin", "Europe/Belfast",
                                     "Europe/Isle_of_Man", "Europe/Jersey", "Europe/Guernsey"})

# (what people say, the name a reply uses, the date in a given year)
_HOLIDAYS: tuple[tuple[str, str, Callable[[int], date]], ...] = (
    (r"christmas eve", "Christmas Eve", lambda y: date(y, 12, 24)),
    (r"(?:christmas|xmas)(?: day)?", "Christmas", lambda y: date(y, 12, 25)),
    (r"boxing day", "Boxing Day", lambda y: date(y, 12, 26)),
    (r"new years? eve", "New Year's Eve", lambda y: date(y, 12, 31)),
    (r"(?:new years?(?: day)?|the new year)", "New Year's Day", lambda y: date(y, 1, 1)),
    (r"halloween", "Halloween", lambda y: date(y, 10, 31)),
    (r"(?:saint )?valentines?(?: day)?", "Valentine's Day", lambda y: date(y, 2, 14)),
    (r"(?:saint |st )?patricks day", "St Patrick's Day", lambda y: date(y, 3, 17)),
    (r"april fools?(?: day)?", "April Fools' Day", lambda y: date(y, 4, 1)),
    (r"easter(?: sunday)?", "Easter Sunday", easter),
    (r"easter monday", "Easter Monday", lambda y: easter(y) + timedelta(days=1)),
    (r"good friday", "Good Friday", lambda y: easter(y) - timedelta(days=2)),
    (r"(?:us )?thanksgiving(?: day)?", "Thanksgiving", _thanksgiving),
    (r"mothering sunday|(?:uk|british|english) mothers? day|mothers? day in the uk",
     "Mothering Sunday", _mothering_sunday),
    (r"mothers? day", "Mother's Day", _nth_sunday(5, 2)),
    (r"fathers? day", "Father's Day", _nth_sunday(6, 3)),
)
_HOLIDAY_RES = tuple((re.compile(rf"^(?:the )?{p}$"), name, rule) for p, name, rule in _HOLIDAYS)
_YEAR_AFTER = re.compile(
    r"^(?P<what>.+?)(?:,? (?:in |of )?(?P<year>\d{4})| (?P<rel>this|next|last) year)$"
)
_MONTHS = "|".join(m.lower() for m in calendar.month_name[1:])
_MONTH_ABBR = "|".join(m.lower() for m in calendar.month_abbr[1:])
_DAY_MONTH = re.compile(
    rf"^(?:the )?(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?: of)? (?P<month>{_MONTHS}|{_MONTH_ABBR})"
    rf"(?: (?P<year>\d{{4}}))?$|^(?P<month2>{_MONTHS}|{_MONTH_ABBR}) (?:the )?"
    rf"(?P<day2>\d{{1,2}})(?:st|nd|rd|th)?(?: (?P<year2>\d{{4}}))?$"
)
_LOOKS_LIKE_A_DATE = re.compile(rf"\b(?:{_MONTHS}|{_MONTH_ABBR})\b|\d")
_UNITS = r"(?P<unit>days|weeks|months|years|sleeps|hours|minutes)"
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("offset", r"^what (?:is |will |was )?(?:the )?(?:date|day)(?: will it be| is it| will "
                   r"be| was it| was| be| it will be| would it be| is)? (?P<span>.+)$"),
        ("offset", r"^what (?:date|day) (?:is|was|will it be|will be|would be) (?P<span>.+)$"),
        # "what year was it 30 years ago": the year alone (the model, asked, said 1990)
        ("offset_year", r"^(?:what|which) year (?:was it|will it be|is it|was|will be|would it "
                        r"be|would be|is) (?P<span>.+)$"),
        ("offset", r"^what (?:is|was|will be) (?P<span>yesterday|tomorrow)'?s? (?:date|day)$"),
        ("offset", r"^what is (?P<span>\d+ (?:days?|weeks?|months?|years?) "
                   r"(?:from (?:now|today)|after today|ago))$"),
        ("until", rf"^how (?:many|much) {_UNITS}(?: (?:is it|are there|are left|left|is there|"
                  rf"do (?:i|we) have|have (?:i|we) got|to go))? (?:until|before|to|till) "
                  rf"(?P<target>.+?)(?: left)?$"),
        ("until", r"^how (?:long|much time)(?: is it| is there| is left| do (?:i|we) have| have "
                  r"(?:i|we) got| left)? (?:until|before|till|to) (?P<target>.+)$"),
        ("until", rf"^{_UNITS} (?:left )?until (?P<target>.+)$"),
        ("until", r"^how (?:soon|far away|far off) is (?P<target>.+)$"),
        ("when", r"^when is (?P<target>.+?)$"),
        ("weekday", r"^(?:what|which) (?:day of the week|day of week|weekday|day)(?: is| was| "
                    r"will| would| does| did| falls?| will be)? (?P<target>.+?)(?: be| fall "
                    r"on| fall| land on| on| going to be| falls? on)?$"),
        ("weekday", r"^is (?P<target>.+?) (?:on )?an? (?P<guess>monday|tuesday|wednesday|thursday|"
                    r"friday|saturday|sunday|weekend|weekday|week day|work day|working day)$"),
        ("since", r"^how long ago (?:was|is|did|were) (?P<target>.+)$"),
        ("since", rf"^how (?:many|much) {_UNITS}(?: (?:has it been|have passed|is it|ago was|ago "
                  rf"is|have gone by|has it been))? since (?P<target>.+)$"),
        ("since", r"^how long (?:has it been |is it |)since (?P<target>.+)$"),
    )
)
_SPAN = re.compile(
    r"^(?:in (?P<n>\d+|a|an) (?P<u>days?|weeks?|months?|years?|fortnights?)(?: time)?(?: from "
    r"(?:now|today))?|(?P<n2>\d+|a|an) (?P<u2>days?|weeks?|months?|years?|fortnights?) "
    r"(?P<dir>from (?:now|today)|after today|time|hence|ago|before today|back))$"
)
_PERSONAL = re.compile(r"\b(?:my|our|your|his|her|their|me|i|we)\b")
_NAMED_DATE = re.compile(
    r"^(?:my|our) (?P<name>[a-z' ]+?),? (?:on|which is(?: on)?|is(?: on)?|that is(?: on)?) "
    r"(?P<date>.+)$"
)
_RELATIVE_DAY = re.compile(
    r"^(?:(?:next|this|coming|last) )?(?:monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday|tomorrow|yesterday|today)$|^the day (?:after tomorrow|before yesterday)$"
)
# The time resolver reads ahead (reminders are in the future): a day in the past is
# worked out here. "last friday" is the most recent friday before today.
_PAST_DAY = re.compile(
    r"^(?:yesterday|the day before yesterday|last (?P<weekday>monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday))$"
)
_FILLER_WORDS = {"the", "on", "of", "this", "year", "coming", "it", "is", "be", "day"}


@dataclass(frozen=True)
class DateQuestion:
    kind: str  # "until", "when", "weekday", "since", "offset", "until_clock", "between"
    target: str  # the date as said (plain words), or the span for "offset"
    target_digits: str  # the same with digits
    unit: str = "days"
    guess: str = ""  # "is christmas on a friday": the weekday guessed


_IS_TODAY = re.compile(
    r"^is (?:it|today)(?: today)? (?:the |a |an |on a )?(?P<guess>weekend|weekday|week day|work "
    r"day|working day|monday|tuesday|wednesday|thursday|friday|saturday|sunday)(?: today)?$"
)
# "is 2027 a leap year", "was 1900 a leap year", "is it a leap year this year", "when is
# the next leap year": the 0.5B model, asked, said 2027 was divisible by 4.



# "how many hours until midnight", "how long till 5 pm": a clock time ahead today (the
# clock said the time to these).
_UNTIL_CLOCK = re.compile(
    r"^how (?:many (?P<unit>hours|minutes)|long|much time)(?: (?:is it|are there|are left|left|"
    r"is there|do (?:i|we) have|have (?:i|we) got|to go))? (?:until|till|til|before|to) "
    r"(?P<target>.+?)(?: today| tonight)?$"
)


# "how many days between christmas and new year": two dates, each read as a target is
# (the model said 12).
_BETWEEN = re.compile(
    rf"^how (?:many|much) {_UNITS}(?: are there| is it| are)? (?:between|from) (?P<a>.+?) "
    rf"(?:and|to|until|till) (?P<b>.+?)$"
)


def parse(plain: str, numeric: str, now: datetime) -> DateQuestion | None:
    """The date question, when its target is a date or a holiday (cheap: no I/O)."""
    if (between := _BETWEEN.match(numeric)) is not None and between["unit"] in (
            "days", "weeks", "sleeps"):
        pair = tuple(DateQuestion("until", between[k], between[k]) for k in ("a", "b"))
        if all(_resolvable(q, now) for q in pair):
            return DateQuestion("between", between["a"], between["b"], between["unit"])
    if (clock := _UNTIL_CLOCK.match(numeric)) is not None:
        found = resolve_time(clock["target"], now, prefer_future=True)
        if found is not None and found.kind == "time" and found.phrase == clock["target"]:
            return DateQuestion("until_clock", clock["target"], clock["target"],
                                clock["unit"] or "hours")
    if today := _IS_TODAY.match(numeric):  # "is it the weekend", "is it friday today"
        return DateQuestion("weekday", "today", "today", guess=today["guess"])
    for kind, shape in _SHAPES:
        m = shape.match(numeric)
        if not m:
            continue
        if kind in ("offset", "offset_year"):
            span = re.sub(r"^on ", "", m.group("span"))
            if _SPAN.match(span):
                return DateQuestion("offset", span, span, "year" if kind == "offset_year" else "")
            if kind == "offset_year":
                continue
            if _RELATIVE_DAY.match(span) and not span.endswith("today"):
                # "what's the date next friday", "what day was yesterday": the date of a
                # day named; today's is the clock's
                return DateQuestion("weekday", span, span)
            named = DateQuestion("weekday", span, span)
            if kind == "offset" and _a_whole_day(span, now) and _resolvable(named, now):
                # "what date is the second sunday in may", "... a week from friday"
                return named
            continue
        target = m.group("target").strip()
        if kind == "weekday" and target in ("it", "it today", "today", "it now"):
            return None  # the clock's own question
        # The same target in the words as said: the resolver reads spoken years itself.
        in_words = shape.match(plain)
        plain_target = in_words.group("target").strip() if in_words else target
        unit = m.groupdict().get("unit") or "days"
        question = DateQuestion(kind, plain_target, target, unit, m.groupdict().get("guess") or "")
        if _resolvable(question, now):
            return question
        return None
    return None


def _a_whole_day(span: str, now: datetime) -> bool:
    """`span` is a day and nothing else ("today" is the clock's to answer)."""
    found = resolve_time(span, now, prefer_future=True)
    return (found is not None and found.kind == "date" and found.phrase == span
            and "today" not in span)


def _resolvable(question: DateQuestion, now: datetime) -> bool:
    target = question.target_digits
    if _NAMED_DATE.match(target):
        return True
    if _PERSONAL.search(target):
        return False  # "until my dentist appointment": the user's own, answered elsewhere
    if _holiday(target) is not None or _DAY_MONTH.match(target):
        return True
    if question.kind == "when":
        return False  # "when is the game": only holidays are this skill's
    return _resolve(question.target, now) is not None or (
        question.kind == "weekday" and bool(_LOOKS_LIKE_A_DATE.search(target))
    )


def _holiday(target: str) -> tuple[str, Callable[[int], date], int | None, str] | None:
    """(name, rule, explicit year, relative year word) for a holiday target."""
    what, year, rel = target, None, ""
    if m := _YEAR_AFTER.match(target):
        what, rel = m.group("what"), m.group("rel") or ""
        year = int(m.group("year")) if m.group("year") else None
    what = what.replace("'", "")
    for pattern, name, rule in _HOLIDAY_RES:
        if pattern.match(what):
            return name, rule, year, rel
    return None


def _resolve(target: str, now: datetime) -> date | None:
    """A spelled date, read by the time resolver; None unless the whole target is a date."""
    if m := _PAST_DAY.match(target):
        return _past_day(m, now.date())
    found = resolve_time(target, now, prefer_future=True)
    if found is None or found.kind != "date":
        return None
    leftover = target.replace(found.phrase, " ").split()
    if any(word not in _FILLER_WORDS for word in leftover):
        return None
    return found.when.astimezone(now.tzinfo).date()


def _past_day(m: re.Match[str], today: date) -> date:
    if not m["weekday"]:
        return today - timedelta(days=2 if m.group(0).startswith("the day") else 1)
    back = (today.weekday() - list(calendar.day_name).index(m["weekday"].capitalize())) % 7
    return today - timedelta(days=back or 7)


def _year_is_implicit(target: str, now: datetime) -> bool:
    """Whether the date said has no year of its own: resolved from two years earlier it
    moves with the clock ("1 january"), or it stays put ("1 january 2000")."""
    here = _resolve(target, now)
    earlier = _resolve(target, now - relativedelta(years=2))
    return here is not None and earlier is not None and here != earlier


# --- answering ------------------------------------------------------------------------


class _BadDate(Exception):
    pass


@dataclass(frozen=True)
class _Target:
    name: str  # "Christmas", "1 January 2000", "your birthday"
    day: date
    holiday: bool


def answer(question: DateQuestion, now: datetime) -> Answer:
    today = now.date()
    if question.kind == "offset":
        return _offset(question, now)
    if question.kind == "until_clock":
        return _until_clock(question, now)
    if question.kind == "between":
        return _between(question, now)
    looking_back = question.kind == "since"
    try:
        target = _target(question, now, looking_back)
    except _BadDate as exc:
        return Answer(str(exc), SKILL, {"error": str(exc), "target": question.target})
    if question.kind in ("until", "when"):
        return _until(target, today, question.unit)
    if question.kind == "since":
        return _since(target, today, question.unit)
    return _weekday(target, today, question.guess)


def _target(question: DateQuestion, now: datetime, looking_back: bool) -> _Target:
    today = now.date()
    said = question.target_digits
    if m := _NAMED_DATE.match(said):
        inner = DateQuestion(question.kind, _named_plain(question.target), m.group("date"))
        found = _target(inner, now, looking_back)
        return _Target(f"your {m.group('name').strip()}", found.day, holiday=True)
    if (holiday := _holiday(said)) is not None:
        name, rule, year, rel = holiday
        if name == "Mother's Day" and getattr(now.tzinfo, "key", "") in _MOTHERING_SUNDAY_ZONES:
            name, rule = "Mothering Sunday", _mothering_sunday
        if year is None and rel:
            year = today.year + {"this": 0, "next": 1, "last": -1}[rel]
        if year is not None:
            if not 1583 <= year <= 9999:
                raise _BadDate(f"I can only work out {name} between 1583 and 9999.")
            return _Target(name, rule(year), holiday=True)
        day = rule(today.year)
        if looking_back and day > today:
            day = rule(today.year - 1)
        elif not looking_back and day < today:
            day = rule(today.year + 1)
        return _Target(name, day, holiday=True)
    _check_day_exists(said, today)
    day = _resolve(question.target, now) or _resolve(said, now)
    if day is None:
        raise _BadDate(f"I can't read {question.target} as a date.")
    if looking_back and day > today and _year_is_implicit(question.target, now):
        day = _last_year(day)
    if _RELATIVE_DAY.match(question.target):  # "tomorrow", "next friday": said as such
        return _Target(question.target, day, holiday=False)
    return _Target(spoken_date(day, with_year=day.year != today.year), day, holiday=False)


def _named_plain(target: str) -> str:
    m = _NAMED_DATE.match(target)
    return m.group("date") if m else target


def _last_year(day: date) -> date:
    return day - relativedelta(years=1)


def _check_day_exists(said: str, today: date) -> None:
    m = _DAY_MONTH.match(said)
    if not m:
        return
    day = int(m.group("day") or m.group("day2"))
    month_word = m.group("month") or m.group("month2")
    month = _month_number(month_word)
    year_text = m.group("year") or m.group("year2")
    longest = 29 if month == 2 and year_text is None else calendar.monthrange(
        int(year_text) if year_text else today.year, month
    )[1]
    if not 1 <= day <= longest:
        month_name = calendar.month_name[month]
        if month == 2 and day == 29 and year_text:
            raise _BadDate(f"{year_text} is not a leap year: February {year_text} has 28 days.")
        raise _BadDate(f"There's no {day} {month_name}: {month_name} has {longest} days.")


def _month_number(word: str) -> int:
    for number in range(1, 13):
        if word in (calendar.month_name[number].lower(), calendar.month_abbr[number].lower()):
            return number
    raise _BadDate(f"I don't know the month {word}.")


def spoken_date(day: date, *, with_year: bool = True, weekday: bool = False) -> str:
    """"25 December 2026", "Friday, 25 December" (with `weekday`, without the year)."""
    text = f"{day.day} {calendar.month_name[day.month]}"
    if with_year:
        text += f" {day.year}"
    return f"{calendar.day_name[day.weekday()]}, {text}" if weekday else text


def _until(target: _Target, today: date, unit: str) -> Answer:
    days = (target.day - today).days
    on = spoken_date(target.day, with_year=target.day.year != today.year, weekday=True)
    data = {"target": target.name, "date": target.day.isoformat(), "days": days,
            "weekday": calendar.day_name[target.day.weekday()]}
    name = _capital(target.name)
    if days == 0:
        return Answer(f"{name} is today!" if target.holiday else f"{name} is today.", SKILL, data)
    if days < 0:
        ago = -days
        return Answer(f"{name} was {ago} {plural(ago, 'day')} ago, on {on}.", SKILL, data)
    if days == 1 and target.name != "tomorrow":
        return Answer(f"{name} is tomorrow, {on}.", SKILL, data)
    span = _span(today, target.day, days, unit)
    if target.holiday or _RELATIVE_DAY.match(target.name):
        return Answer(f"{name} is in {span}, on {on}.", SKILL, data)
    return Answer(f"{name} is in {span}, a {data['weekday']}.", SKILL, data)


def _between(question: DateQuestion, now: datetime) -> Answer:
    """The days from the first date said to the second, the second read after the first
    ("between christmas and new year": 1 January after 25 December)."""
    try:
        first = _target(DateQuestion("until", question.target, question.target), now, False)
        second = _target(DateQuestion("until", question.target_digits,
                                      question.target_digits), now, False)
    except _BadDate as exc:
        return Answer(str(exc), SKILL, {"error": str(exc)})
    later = second.day
    while later < first.day and second.holiday:  # the next one after the first
        later = later.replace(year=later.year + 1)
    days = abs((later - first.day).days)
    start, end = sorted((first.day, later))
    span = _span(start, end, days, question.unit) if days else "0 days"
    data = {"from": first.day.isoformat(), "to": later.isoformat(), "days": days}
    return Answer(f"There are {span} between {_named(first, first.day)} and "
                  f"{_named(second, later)}.", SKILL, data)


def _named(target: _Target, day: date) -> str:
    """ "Christmas (25 December 2026)"; a date said as a date, once."""
    said = spoken_date(day)
    return f"{target.name} ({said})" if target.holiday else said


def _until_clock(question: DateQuestion, now: datetime) -> Answer:
    found = resolve_time(question.target_digits, now, prefer_future=True)
    assert found is not None  # parse() read it
    when = found.when.astimezone(now.tzinfo).replace(second=0, microsecond=0)
    minutes = max(0, round((when - now).total_seconds() / 60))
    hours, rest = divmod(minutes, 60)
    if question.unit == "minutes" or not hours:
        said = f"{minutes} {plural(minutes, 'minute')}"
    else:
        said = f"{hours} {plural(hours, 'hour')}" + (
            f" and {rest} {plural(rest, 'minute')}" if rest else "")
    day = "" if when.date() == now.date() else " tomorrow"
    return Answer(f"{_capital(said)} until {when:%H:%M}{day}.", SKILL,
                  {"minutes": minutes, "at": when.isoformat()})


def _since(target: _Target, today: date, unit: str) -> Answer:
    days = (today - target.day).days
    data = {"target": target.name, "date": target.day.isoformat(), "days": days}
    name = _capital(target.name)
    if days < 0:
        return Answer(f"{name} hasn't happened yet: it's in {-days} "
                      f"{plural(-days, 'day')}.", SKILL, data)
    if days == 0:
        return Answer(f"{name} is today.", SKILL, data)
    text = f"{name} was {_span(target.day, today, days, unit)} ago"
    if target.holiday:
        text += f", on {spoken_date(target.day, weekday=True)}"
    elif unit == "days" and days >= 365:
        text += f": {_calendar_span(target.day, today)}"
    return Answer(text + ".", SKILL, data)


def spoken_span(start: date, end: date, unit: str = "days") -> str:
    """How far `end` is from `start`, in the unit asked: "97 days", "13 weeks and 6 days"
    (also for the household's own days: mavend.handlers.own_dates)."""
    return _span(start, end, (end - start).days, unit)


def _span(start: date, end: date, days: int, unit: str) -> str:
    if unit == "weeks":
        weeks, rest = divmod(days, 7)
        text = f"{weeks} {plural(weeks, 'week')}"
        return text + (f" and {rest} {plural(rest, 'day')}" if rest else "")
    if unit in ("months", "years"):
        return _calendar_span(start, end)
    if unit == "sleeps":
        return f"{days} {plural(days, 'sleep')}"
    if unit == "hours":
        return f"{days * 24} hours"
    if unit == "minutes":
        return f"{days * 24 * 60} minutes"
    return f"{days} {plural(days, 'day')}"


def _calendar_span(start: date, end: date) -> str:
    delta = relativedelta(end, start)
    parts = [
        f"{value} {plural(value, word)}"
        for value, word in ((delta.years, "year"), (delta.months, "month"), (delta.days, "day"))
        if value
    ]
    return ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else parts[0]


_DAY_KINDS = {"weekend": "weekend", "weekday": "weekday", "week day": "weekday",
              "work day": "weekday", "working day": "weekday"}


def _weekday(target: _Target, today: date, guess: str) -> Answer:
    weekday = calendar.day_name[target.day.weekday()]
    data = {"target": target.name, "date": target.day.isoformat(), "weekday": weekday}
    tense = "was" if target.day < today else "is"
    if target.day > today and target.day.year != today.year:
        tense = "will be"
    said = spoken_date(target.day, with_year=True)
    if _RELATIVE_DAY.match(target.name):
        name = "today" if target.day == today else target.name
        if guess:  # "is tomorrow a weekday": yes or no first (it said only the date)
            kind = _DAY_KINDS.get(guess)
            right = ((target.day.weekday() >= 5) == (kind == "weekend") if kind
                     else guess == weekday.lower())
            data["correct"] = right
            return Answer(f"{'Yes' if right else 'No'}: {name} {tense} {weekday}, {said}.",
                          SKILL, data)
        if _WEEKDAY_WORD.search(name):  # "Last Friday was 4 December", not "... Friday, 4 ..."
            return Answer(f"{_capital(name)} {tense} {said}.", SKILL, data)
        return Answer(f"{_capital(name)} {tense} {weekday}, {said}.", SKILL, data)
    name = target.name if target.holiday else said
    if guess in _DAY_KINDS:  # "is christmas on a weekend"
        weekend = target.day.weekday() >= 5
        right = weekend == (_DAY_KINDS[guess] == "weekend")
        data["correct"] = right
        verdict = "Yes" if right else "No"
        return Answer(f"{verdict}: {name} {tense} on a {weekday}"
                      + (f", {said}." if target.holiday else "."), SKILL, data)
    if guess:
        right = guess == weekday.lower()
        data["correct"] = right
        verdict = "Yes" if right else "No"
        return Answer(f"{verdict}: {name} {tense} on a {weekday}"
                      + (f", {said}." if target.holiday else "."), SKILL, data)
    if target.holiday:
        return Answer(f"{_capital(name)} {tense} on a {weekday}, {said}.", SKILL, data)
    return Answer(f"{_capital(said)} {tense} a {weekday}.", SKILL, data)


def _offset(question: DateQuestion, now: datetime) -> Answer:
    m = _SPAN.match(question.target_digits)
    assert m is not None  # parse() only lets a span through
    count_text = m.group("n") or m.group("n2")
    count = 1 if count_text in ("a", "an") else int(count_text)
    unit = (m.group("u") or m.group("u2")).rstrip("s")
    back = (m.group("dir") or "") in ("ago", "before today", "back")
    if count > 100_000:
        return Answer("That's too far from today for me to work out.", SKILL,
                      {"error": "too far"})
    step = {"day": relativedelta(days=count), "week": relativedelta(weeks=count),
            "fortnight": relativedelta(weeks=2 * count), "month": relativedelta(months=count),
            "year": relativedelta(years=count)}[unit]
    today = now.date()
    try:
        day = today - step if back else today + step
    except (OverflowError, ValueError):
        return Answer("That's too far from today for me to work out.", SKILL,
                      {"error": "too far"})
    said = spoken_date(day, with_year=True, weekday=True)
    span = f"{count} {plural(count, unit)}"
    if question.unit == "year":  # "what year was it 30 years ago"
        said = str(day.year)
    text = f"{span} ago it was {said}." if back else f"In {span} it will be {said}."
    return Answer(_capital(text), SKILL, {"date": day.isoformat(),
                                          "weekday": calendar.day_name[day.weekday()],
                                          "days": (day - today).days})


_WEEKDAY_WORD = re.compile(r"\b(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b")


def _capital(text: str) -> str:
    text = _WEEKDAY_WORD.sub(lambda m: m.group(1).capitalize(), text)  # "Next Friday"
    return text[:1].upper() + text[1:]
