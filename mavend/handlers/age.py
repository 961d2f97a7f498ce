"""age: "how old is my son", worked out from the birth date the user told mavend.

"my son was born on 4 march 2015" is kept as a fact or a note; asked how old he is,
recall read the note back ("You logged ...: my son was born on 4 march 2015") and the
0.5B model, asked to phrase it, said "43". The age is computed here instead, from the
newest row the household may read that names the same person and a birth date
("born", "birthday", "date of birth") with its year. A birthday without a year gets
what is known ("... but not the year"); nothing stored leaves the question to recall.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime

from dateutil.relativedelta import relativedelta

from mavend.handlers.common import HandlerContext, Reply
from mavend.handlers.own_dates import kept_rows
from mavend.language.timeparse import find_time
from mavend.router.grammar import normalize

_HOW_OLD = re.compile(
    r"^(?:how old (?P<verb>is|are|am|will|was|s|'s|turns?)|what age (?P<verb2>is|am|will))"
    r" (?P<who>.+?)(?: (?P<be>be|turn|be turning"
    r"|be on (?:his|her|their|my) (?:next )?birthday))?"
    r"(?: now| today| this year| exactly)?$"
)
# The speaker's own birth date, said of themselves ("i was born on ...", "my birthday is").
_MINE = re.compile(
    r"(?:^|\b)(?:i (?:was|were|am) born|i m born|my (?:birthday|birth ?day|date of birth|dob)"
    r"(?:'s| is| was)?)\b"
)
_OWNER = re.compile(r"^(?:my|our|the) ")
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")
_BORN_IN = re.compile(r"\bborn in (?P<year>1[89]\d\d|20\d\d)\b")


@dataclass(frozen=True)
class AgeQuestion:
    who: str  # "son", "dog", "rex": as said, without "my"
    named: str  # how the reply names them: "your son", "Rex"
    ahead: bool  # "how old will he be": at the next birthday


def parse(question: str) -> AgeQuestion | None:
    said = normalize(question).replace("?", "").strip()
    said = re.sub(r"^how old's ", "how old is ", said)
    m = _HOW_OLD.match(said)
    if not m:
        return None
    ahead = (m["verb"] or m["verb2"]) in ("will", "turn", "turns") or bool(m["be"])
    if m["who"] == "i":  # "how old am i", "how old will i be": the speaker's own
        return AgeQuestion("i", "you", ahead)
    owner = _OWNER.match(m["who"])
    who = _OWNER.sub("", m["who"]).strip()
    if not who or who in ("you", "it", "that", "this", "he", "she", "they", "we"):
        return None  # "how old are you": not a row to look up
    named = f"your {who}" if owner and owner.group(0) != "the " else (
        f"the {who}" if owner else who.title())
    return AgeQuestion(who, named, ahead)


@dataclass(frozen=True)
class _Birth:
    day: date | None  # None: the year alone ("born in 2015")
    year: int | None
    month_day: tuple[int, int] | None


class AgeQuestions:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx

    def answer(self, question: str) -> Reply | None:
        asked = parse(question)
        if asked is None:
            return None
        found = self._birth(asked.who)
        if found is None and asked.who == "i":
            return Reply("I don't know when you were born. Tell me, for example: "
                         "\"my birthday is 3 March 1985\".", data={"who": "i"})
        if found is None:
            return None
        birth, row = found
        return _reply(asked, birth, self.ctx.now().date(), row)

    def _birth(self, who: str) -> tuple[_Birth, str] | None:
        if who == "i":
            return self._own_birth()
        # The row says it of them, nobody else ("my son's friend was born ..." is not his).
        said = re.escape(" ".join(normalize(who).split()))
        theirs = re.compile(rf"(?:^|\b(?:my|our|the) (?:\w+ )?){said}(?:'s|s'|s)? "
                            r"(?:(?:was|is) born|born|birthday|date of birth|dob|birth ?day)\b")
        # The newest: a correction ("no, he was born in 2016") replaces what was said.
        for row in kept_rows(self.ctx, who):
            if theirs.search(row.text) and (birth := _read_birth(row.text, self.ctx.now())):
                return birth, row.text
        return None


    def _own_birth(self) -> tuple[_Birth, str] | None:
        rows = [*kept_rows(self.ctx, "born"), *kept_rows(self.ctx, "birthday")]
        for row in sorted(rows, key=lambda r: r.at, reverse=True):
            if _MINE.search(row.text) and (birth := _read_birth(row.text, self.ctx.now())):
                return birth, row.text
        return None


def _read_birth(said: str, now: datetime) -> _Birth | None:
    found = find_time(said, now)
    if found is not None and found.kind == "date":
        day = found.when.date()
        if _YEAR.search(found.phrase):
            return _Birth(day, day.year, (day.month, day.day))
        return _Birth(None, None, (day.month, day.day))
    if m := _BORN_IN.search(said):
        return _Birth(None, int(m["year"]), None)
    return None


def _reply(asked: AgeQuestion, birth: _Birth, today: date, row: str) -> Reply:
    said = _Said.of(asked)
    data: dict[str, object] = {"who": asked.who, "from": row}
    if birth.day is None and birth.year is None and birth.month_day:
        month, day = birth.month_day
        return Reply(f"I know {said.whose} birthday is {day} {calendar.month_name[month]}, "
                     f"but not the year {said.they} were born.", data=data)
    if birth.day is None:
        assert birth.year is not None
        age = today.year - birth.year
        data["age"] = [age - 1, age]
        return Reply(f"{said.subject} {said.were} born in {birth.year}, so {age - 1} or {age}.",
                     data=data)
    if birth.day > today:
        return Reply(f"{said.subject} {said.are}n't born yet: the date I have is "
                     f"{_spoken(birth.day)}.", data=data)
    age = relativedelta(today, birth.day).years
    data["age"] = age
    if asked.ahead:
        next_birthday = _next_birthday(birth.day, today)
        turning = relativedelta(next_birthday, birth.day).years
        data["age"] = turning
        return Reply(f"{said.subject} will be {turning} on {_spoken(next_birthday)}.",
                     data=data)
    return Reply(f"{said.subject} {said.are} {age} (born {_spoken(birth.day)}).", data=data)


@dataclass(frozen=True)
class _Said:
    """How the reply names them, with the verbs that agree: "your son is", "you are"."""

    subject: str  # "Your son", "Rex", "You"
    whose: str  # "your son's", "your"
    they: str  # "they", "you"
    are: str  # "is", "are"
    were: str  # "was", "were"

    @classmethod
    def of(cls, asked: AgeQuestion) -> _Said:
        if asked.who == "i":
            return cls("You", "your", "you", "are", "were")
        return cls(_capital(asked.named), f"{asked.named}'s", "they", "is", "was")


def _next_birthday(born: date, today: date) -> date:
    for years in range(today.year - born.year, today.year - born.year + 2):
        day = born + relativedelta(years=years)  # 29 February: 28 February in other years
        if day > today:
            return day
    raise AssertionError("a birthday comes within two years")


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _spoken(day: date) -> str:
    return f"{day.day} {calendar.month_name[day.month]} {day.year}"
