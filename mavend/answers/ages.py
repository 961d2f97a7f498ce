"""ages: how old someone born on a date said in the question is, worked out.

    "how old am i if i was born in 1985"            -> 40 or 41 (the birthday decides)
    "how old is someone born on 3 march 1985"       -> 41
    "if i was born on the 4th of july 1990 how old will i be in 2030" -> 40

The birth date is in the question, so nothing personal is looked up (an age from a
birth date the user told mavend is the query handler's: `handlers.age`). The 0.5B model,
asked "how old am i if i was born in 1985", said it did not know; this is subtraction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

from dateutil.relativedelta import relativedelta

from mavend.answers.common import Answer
from mavend.answers.dates import spoken_date
from mavend.language.timeparse import find_time

SKILL = "ages"

_WHO = (r"(?:am i|are you|is (?:someone|somebody|a person|a child|he|she|one)|"
        r"would (?:i|you|someone|somebody|a person|he|she|they) be|will (?:i|you|they) be|"
        r"are they|were you|was i)")
_BORN = (r"(?:if )?(?:i was|i were|i m|i am|you were|you are|you re|they were|they are|"
         r"he was|she was|someone was|someone is|somebody was)? ?born (?P<born>(?:in|on) .+?)")
_IN_YEAR = r"(?: (?:in|by) (?P<target>\d{4}))?"
_IN_YEAR_LAST = r"(?: (?:in|by) (?P<target2>\d{4}))?"
_ASKED = (
    re.compile(rf"^how old {_WHO}{_IN_YEAR} {_BORN}{_IN_YEAR_LAST}$"),
    re.compile(rf"^{_BORN},? how old {_WHO}{_IN_YEAR}(?: now| today| this year)?$"),
    re.compile(rf"^(?:what is |whats )?the age of (?:someone|somebody|a person) {_BORN}$"),
)
_YEAR_ONLY = re.compile(r"^in (?P<year>\d{4})$")
_YEAR = re.compile(r"\b(?:1[89]|20)\d\d\b")


@dataclass(frozen=True)
class AgeAsked:
    born_year: int
    born_day: date | None  # None: the year alone was said
    target_year: int | None  # "how old will i be in 2030"; None: today


def parse(numeric: str, now: datetime) -> AgeAsked | None:
    """The age `numeric` (digits, see text.read) asks about, or None."""
    for pattern in _ASKED:
        m = pattern.match(numeric)
        if m is None:
            continue
        groups = m.groupdict()
        target = groups.get("target") or groups.get("target2")
        born = m["born"]
        if (year := _YEAR_ONLY.match(born)) is not None:
            return AgeAsked(int(year["year"]), None, int(target) if target else None)
        found = find_time(born, now)
        if found is None or found.kind != "date" or not _YEAR.search(found.phrase):
            return None  # a birthday without its year is no age
        day = found.when.date()
        return AgeAsked(day.year, day, int(target) if target else None)
    return None


def answer(asked: AgeAsked, now: datetime) -> Answer:
    today = now.date()
    born = f"born {spoken_date(asked.born_day)}" if asked.born_day else f"born in {asked.born_year}"
    data: dict[str, object] = {"born": str(asked.born_day or asked.born_year)}
    year = asked.target_year if asked.target_year is not None else today.year
    if year < asked.born_year or (asked.born_day is not None and asked.target_year is None
                                  and asked.born_day > today):
        return Answer(f"Someone {born} isn't born yet.", SKILL, {**data, "age": None})
    if asked.target_year is not None:
        age = asked.target_year - asked.born_year
        if asked.born_day is not None:
            birthday = _birthday_in(asked.born_day, asked.target_year)
            return Answer(f"Someone {born} turns {age} on {spoken_date(birthday)}.", SKILL,
                          {**data, "age": age})
        return Answer(f"Someone {born} turns {age} in {asked.target_year}.", SKILL,
                      {**data, "age": age})
    if asked.born_day is None:
        age = today.year - asked.born_year
        before = max(age - 1, 0)
        return Answer(f"Someone {born} is {before} or {age}: {age} once their birthday has "
                      "come this year.", SKILL, {**data, "age": [before, age]})
    age = relativedelta(today, asked.born_day).years
    return Answer(f"Someone {born} is {age}.", SKILL, {**data, "age": age})


def _birthday_in(born: date, year: int) -> date:
    return born + relativedelta(years=year - born.year)  # 29 February: the 28th
