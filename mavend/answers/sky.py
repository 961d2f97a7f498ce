"""sky: the sun's times at home and the moon's phase, worked out, never guessed.

    parse(plain, today) -> SkyQuestion | None
    answer(question, now, place) -> Answer

Sunrise, sunset, dawn and dusk need where home is ([place] latitude and longitude; the
[weather] ones when only they are set) and are computed by astral for that day in the
home's zone; with no place, the reply says what to set. The moon's phase needs no place:
the next full or new moon is the day whose phase (astral's, in days of a 29.5-day cycle)
is nearest it, said to the day.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from astral import LocationInfo, moon
from astral.sun import sun

from mavend.answers.common import Answer, days_ahead

SKILL = "sky"
NO_PLACE = ("I don't know where home is, so I can't work out the {what}. Set [place] latitude "
            "and longitude in config.toml.")

_SUN_WORDS = {
    "sunrise": "sunrise", "sun rise": "sunrise", "sun up": "sunrise", "first light": "dawn",
    "daybreak": "dawn", "dawn": "dawn", "sunset": "sunset", "sun set": "sunset",
    "sundown": "sunset", "dusk": "dusk", "nightfall": "dusk",
}
_SUN = re.compile(
    rf"\b(?P<word>{'|'.join(_SUN_WORDS)})\b"
    r"|\bwhen (?:does|will|is) (?:the )?sun (?P<verb>rise|set|come up|go down|going down)"
    r"|\bwhen (?:does|will) it get (?P<get>dark|light)\b"
)
_VERB_EVENT = {"rise": "sunrise", "come up": "sunrise", "set": "sunset", "go down": "sunset",
               "going down": "sunset"}
_MOON = re.compile(
    r"\b(?:(?P<next>next|when(?:'s| is| will be| is the next)?|coming)\b.*\b(?P<which>full|new)"
    r" moon\b"
    r"|(?P<phase>phase of the moon|moon phase|moon'?s phase|what (?:is )?the moon (?:like|doing)"
    r"|what phase is the moon|how full is the moon)"
    r"|is (?:it|there) (?:a )?(?P<tonight>full|new) moon (?:tonight|today)\b"
    r"|is the moon (?P<full>full)\b)"
)
# Phases in days of the cycle astral counts (0 new, 7 first quarter, 14 full, 21 last).
_CYCLE = 28.0
_PHASE_NAMES = ((1.0, "a new moon"), (6.0, "a waxing crescent"), (8.0, "at first quarter"),
                (13.0, "a waxing gibbous"), (15.0, "a full moon"), (20.0, "a waning gibbous"),
                (22.0, "at last quarter"), (27.0, "a waning crescent"), (28.0, "a new moon"))


@dataclass(frozen=True)
class SkyQuestion:
    kind: str  # "sun" | "moon_next" | "moon_phase"
    event: str = ""  # sunrise | sunset | dawn | dusk; full | new
    day: date | None = None  # the sun's: the day asked about


# A question, or the thing asked for alone: "remind me at sunset to shut the hens in" and
# "i've got to be up at dawn" are a reminder and an alarm, with the time in their words.
_ASKS = re.compile(
    r"^(?:(?:hey|so|and|ok|okay|please|um|uh)\s+)*(?:what|whats|when|whens|tell me|how|is|are"
    r"|at what|do you know|can you tell me|could you tell me|sunrise|sunset|dawn|dusk|sundown"
    r"|first light|moon)\b"
)


def parse(plain: str, today: date) -> SkyQuestion | None:
    """The sky question in `plain` (normalized words), or None."""
    if not _ASKS.match(plain):
        return None
    if m := _MOON.search(plain):
        if m["which"]:
            return SkyQuestion("moon_next", m["which"])
        if m["tonight"] or m["full"]:
            return SkyQuestion("moon_phase", m["tonight"] or m["full"], today)
        return SkyQuestion("moon_phase", "", today)
    if m := _SUN.search(plain):
        if m["word"]:
            event = _SUN_WORDS[m["word"]]
        elif m["verb"]:
            event = _VERB_EVENT[m["verb"]]
        else:
            event = "dusk" if m["get"] == "dark" else "dawn"
        return SkyQuestion("sun", event, _day(plain, today))
    return None


def _day(plain: str, today: date) -> date | None:
    """The day said, or None when none was (the next one to come, then)."""
    ahead = days_ahead(plain, today)
    return None if ahead is None else today + timedelta(days=ahead)


def answer(question: SkyQuestion, now: datetime, latitude: float, longitude: float) -> Answer:
    if question.kind == "moon_next":
        return _next_moon(question.event, now.date())
    if question.kind == "moon_phase":
        return _phase(question.event, question.day or now.date())
    return _sun(question.event, question.day, now, latitude, longitude)


def _sun(event: str, said: date | None, now: datetime, latitude: float,
         longitude: float) -> Answer:
    if latitude == 0.0 and longitude == 0.0:
        return Answer(NO_PLACE.format(what=event), SKILL, {"event": event}, available=False)
    where = LocationInfo("home", "", str(now.tzinfo), latitude, longitude)
    day = said or now.date()
    try:
        times = sun(where.observer, date=day, tzinfo=now.tzinfo)
        if said is None and times[event] < now:  # "what time is sunrise" in the evening
            day = day + timedelta(days=1)
            times = sun(where.observer, date=day, tzinfo=now.tzinfo)
    except ValueError:  # the sun never rises or sets there that day (polar day or night)
        return Answer(f"There's no {event} at home {_said_day(day, now.date())}: the sun "
                      "doesn't cross the horizon that day.", SKILL, {"event": event})
    at = times[event].astimezone(now.tzinfo)
    when = _said_day(day, now.date())
    verb = "was" if at < now else "is"
    return Answer(f"{event.capitalize()} {when} {verb} at {at:%H:%M}.", SKILL,
                  {"event": event, "at": at.isoformat(timespec="minutes")})


def _next_moon(which: str, today: date) -> Answer:
    target = 14.0 if which == "full" else 0.0
    day = _phase_day(target, today)
    when = "tonight" if day == today else (
        "tomorrow" if day == today + timedelta(days=1) else f"on {day:%A} {day.day} {day:%B}")
    return Answer(f"The next {which} moon is {when}.", SKILL,
                  {"moon": which, "date": day.isoformat()})


def _phase_day(target: float, today: date) -> date:
    """The first day from `today` whose phase is the nearest to `target` where the cycle
    passes it."""
    def distance(day: date) -> float:
        offset = (moon.phase(day) - target) % _CYCLE
        return min(offset, _CYCLE - offset)

    day = today
    for _ in range(40):  # one cycle and a bit
        after = day + timedelta(days=1)
        before_off = (moon.phase(day) - target) % _CYCLE
        after_off = (moon.phase(after) - target) % _CYCLE
        if after_off < before_off:  # the cycle passed the target between the two days
            return day if distance(day) <= distance(after) else after
        day = after
    return today


def _phase(which: str, day: date) -> Answer:
    phase = moon.phase(day)
    name = next(n for edge, n in _PHASE_NAMES if phase < edge)
    if which:
        full = name == "a full moon" if which == "full" else name == "a new moon"
        said = f"Yes, it's {which} moon tonight." if full else (
            f"No, it's not a {which} moon tonight: the moon is {name}.")
        return Answer(said, SKILL, {"phase": round(phase, 1)})
    return Answer(f"The moon is {name} tonight.", SKILL, {"phase": round(phase, 1)})


def _said_day(day: date, today: date) -> str:
    if day == today:
        return "today"
    if day == today + timedelta(days=1):
        return "tomorrow"
    return f"on {day:%A}"
