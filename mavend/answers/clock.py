"""clock: the time and date here or somewhere else. "what time is it in tokyo", "whats
the date in sydney", "how far ahead is tokyo", "time in new york right now"; and here,
"can you tell me the time", "what's today's date" (the grammar's exact "what time is
it" comes first; these catch the ways it doesn't know, so no model ever guesses the
clock). The place is looked up in `places` at answer time, so recognising the
question's shape stays a regular expression.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from mavend.answers.common import Answer, plural
from mavend.answers.places import Place, Places
from mavend.language.timeparse import resolve_time

SKILL = "clock"

_NOW = r"(?: (?:right now|now|currently|at the moment|today|there))*"
_PLACE = r"(?P<place>[a-z][a-z0-9 /+\-:']*?)"
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("time", rf"^(?:so )?what (?:is the )?(?:local |current )?time (?:is it |it is "
                 rf"|would it be |will it be )?(?:right now |now |currently |over )?"
                 rf"(?:in|at|over in) {_PLACE}{_NOW}$"),
        ("time", rf"^what is the (?:local |current )?time (?:right now |now )?(?:in|at) {_PLACE}"
                 rf"{_NOW}$"),
        ("time", rf"^(?:the )?(?:local |current )?time (?:right now |now )?in {_PLACE}{_NOW}$"),
        ("time", rf"^what time do they have in {_PLACE}{_NOW}$"),
        ("time", rf"^(?:is it|is it still) (?:night|day|daytime|nighttime|morning|evening) "
                 rf"in {_PLACE}{_NOW}$"),
        ("date", rf"^what (?:is )?(?:the |today's )?date (?:is it |today )?(?:right now |now )?"
                 rf"(?:in|at) {_PLACE}{_NOW}$"),
        ("date", rf"^what day (?:of the week )?is it (?:right now |now )?in {_PLACE}{_NOW}$"),
        ("offset", rf"^how (?:far|many hours) (?:ahead|behind|forward|back) is {_PLACE}"
                   rf"(?: (?:of|from) (?:me|us|here|my time))?{_NOW}$"),
        ("offset", rf"^is {_PLACE} (?:ahead|behind|ahead or behind|behind or ahead)"
                   rf"(?: of (?:me|us|here))?{_NOW}$"),
        ("offset", rf"^what is the time difference (?:with|to|between (?:here|me|us) and|"
                   rf"from here to|for) {_PLACE}$"),
        ("offset", rf"^what is the time difference between {_PLACE} and (?:here|me|us)$"),
    )
)
# The time or the date here: no place named. Whole utterances only.
_POLITE = (
    r"(?:(?:please |so |ok |okay )?(?:can|could|would) you (?:please )?tell me |do you know "
    r"|tell me )?"
)
_HERE_NOW = r"(?: (?:right now|now|please|today|at the moment|currently|exactly))*"
_HERE: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("time", rf"^{_POLITE}what (?:is )?(?:the )?(?:time|time it is)(?: is it)?{_HERE_NOW}$"),
        ("time", rf"^{_POLITE}the time{_HERE_NOW}$"),
        ("time", rf"^{_POLITE}what time (?:is it|it is|have we got|do we have){_HERE_NOW}$"),
        ("time", rf"^(?:have you got|do you have) the time{_HERE_NOW}$"),
        ("date", rf"^{_POLITE}what (?:is )?(?:the |today's |todays )?date(?: is it)?{_HERE_NOW}$"),
        ("date", rf"^{_POLITE}what (?:day|date) (?:is it|it is|is today)(?: today)?{_HERE_NOW}$"),
        ("date", rf"^{_POLITE}(?:today's|todays) date{_HERE_NOW}$"),
        ("date", rf"^{_POLITE}what day of the week is it{_HERE_NOW}$"),
    )
)
# What follows "in" in a time question that is not a place: a span ("in 3 weeks"
# belongs to dates), a part of the day, a room of the house.
_NOT_A_PLACE = re.compile(
    r".*\b(?:seconds?|minutes?|hours?|days?|weeks?|fortnights?|months?|years?)(?: time)?$|"
    r"^(?:\d|an? |half |now\b|then\b|the (?:morning|afternoon|evening|night)\b|(?:the )?(?:morning|"
    r"afternoon|evening|night|future|past|meantime|end)\b|my |your |this |here$|there$|"
    r"the (?:kitchen|bedroom|living room|lounge|bathroom|office|study|garage|garden|hall|"
    r"hallway|house|nursery|basement|attic|dining room|car|oven|fridge|freezer)\b)"
)
ROOMS = {"kitchen", "bedroom", "living room", "lounge", "bathroom", "office", "study",
         "garage", "garden", "hall", "hallway", "house", "nursery", "basement", "attic",
         "dining room", "car"}


# "what time will it be in 20 minutes", "what's 15 minutes from now", "what time was it
# 2 hours ago": the clock moved by a span. Found by hand: the first got "I have no live
# data for that", the second set a reminder "to what's".
_SPAN = (r"(?P<span>(?:an?|half an?|a quarter of an|\d+|\d+ and a (?:half|quarter)) "
         r"(?:hours?|hrs?|minutes?|mins?|seconds?)(?: and (?:a half|a quarter|\d+ "
         r"(?:minutes?|mins?)))?)")
_TIME_BE = (r"(?:time )?(?:will it be|is it going to be|would it be|will the time be|is it|is "
            r"the time|will be|is|'s)")
_LATER = (
    re.compile(rf"^what {_TIME_BE} (?:in )?{_SPAN}(?: time| from now| later)?$"),
    re.compile(rf"^what {_TIME_BE} {_SPAN} (?:from now|later|from now on)$"),
    re.compile(rf"^what (?:time )?(?:was it|was the time|was|is it|is) {_SPAN} (?P<back>ago)$"),
)


@dataclass(frozen=True)
class ClockQuestion:
    kind: str  # "time", "date", "offset", "later", "convert" or "compare"
    place: str  # as said
    shift: timedelta = timedelta()  # "later": the span from now, negative looking back
    at: str = ""  # "convert", "compare": the clock time here, as said ("9 am")
    relation: str = ""  # "compare": "past", "before" or "nearly"


# "is it past four yet", "has it gone half five", "is it before 9", "is it nearly
# noon": the clock against a time (it was "I don't know that command").
_COMPARE = re.compile(
    r"^(?:is it|it is|is it already|(?P<verb>has it (?:gone|got to|passed|turned|reached)"
    r"|have we (?:gone|passed|got to|reached)))"
    r"(?: (?P<relation>past|after|gone|later than|before|earlier than|not yet|nearly|almost"
    r"|close to|coming up to))? (?P<at>[a-z0-9: ]+?)(?: o'?clock)?"
    r"(?: (?:yet|already|now|then|at the moment))*$"
)
_RELATION = {"past": "past", "after": "past", "gone": "past", "later than": "past",
             "before": "before", "earlier than": "before", "not yet": "before",
             "nearly": "nearly", "almost": "nearly", "close to": "nearly",
             "coming up to": "nearly"}
_HALF_DAY_SAID = re.compile(r"\b(?:am|pm|a m|p m|noon|midday|midnight|morning|afternoon"
                            r"|evening|night|tonight)\b")
# The time asked about starts as a clock does: "morning" or "bedtime" is no time of day.
_CLOCK_START = re.compile(
    r"^(?:\d|half |quarter |twenty|(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven"
    r"|twelve)\b|noon|midday|midnight)"
)
NEARLY = timedelta(minutes=30)  # "is it nearly four": within half an hour of it


# "what time will it be in london when it's 9 am here", "if it's 6 pm here what time is it
# in tokyo": a clock time here, said in another zone. It read "London When It's 9 Am Here"
# as a place.
_AT = r"(?P<at>[a-z0-9: ]+?)"
_HERE_WORDS = r"(?: here| for me| my time| where i am| at home)?"
_CONVERT = (
    re.compile(rf"^what (?:time )?(?:will it be|is it|would it be|will that be|is that|"
               rf"would that be) in {_PLACE} (?:when|if) it(?: is|'s| s|s)? {_AT}{_HERE_WORDS}$"),
    re.compile(rf"^(?:when|if) it(?: is|'s| s|s)? {_AT}{_HERE_WORDS},? what (?:time )?"
               rf"(?:will it be|is it|would it be) in {_PLACE}$"),
    re.compile(rf"^what is {_AT}{_HERE_WORDS} in {_PLACE} time$"),
)


def parse(
    plain: str, rooms: frozenset[str] = frozenset(), numeric: str = ""
) -> ClockQuestion | None:
    text = re.sub(r"\bhey |\bjust ", "", plain)
    digits = re.sub(r"\bhey |\bjust ", "", numeric) if numeric else text
    if (later := _later(text) or _later(digits)) is not None:  # "in three hours"
        return later
    for shape in _CONVERT:
        if (m := shape.match(text)) and resolve_time(m["at"], datetime.now().astimezone()):
            place = m["place"].strip()
            if place and not _NOT_A_PLACE.match(place):
                return ClockQuestion("convert", place, at=m["at"].strip())
    for kind, shape in _HERE:
        if shape.match(text):
            return ClockQuestion(kind, "")
    if (m := _COMPARE.match(digits)) and (m["relation"] or m["verb"] or re.search(
            r" (?:yet|already)$", digits)):
        at = m["at"].strip()
        found = resolve_time(f"at {at}", datetime.now().astimezone())
        if found is not None and found.kind == "time" and _CLOCK_START.match(at):
            return ClockQuestion("compare", "", at=at, relation=_RELATION.get(
                m["relation"] or "past", "past"))
    for kind, shape in _SHAPES:
        if m := shape.match(text):
            place = m.group("place").strip()
            bare = place.removeprefix("the ")
            if not place or _NOT_A_PLACE.match(place) or bare in rooms or bare in ROOMS:
                return None
            return ClockQuestion(kind, place)
    return None


def _later(text: str) -> ClockQuestion | None:
    for shape in _LATER:
        if m := shape.match(text):
            span = f"in {m['span']}"
            # The resolver reads the span (words and digits): only a whole span counts.
            found = resolve_time(span, datetime.now().astimezone())
            if found is None or found.duration is None or found.phrase != span:
                return None
            back = bool(m.groupdict().get("back"))
            return ClockQuestion("later", m["span"], -found.duration if back else found.duration)
    return None


def answer(question: ClockQuestion, now: datetime, places: Places) -> Answer:
    if question.kind == "later":
        return _moved(question, now)
    if question.kind == "compare":
        return _compared(question, now)
    if not question.place:
        return here(question, now)
    place = places.find(question.place)
    if place is None:
        said = " ".join(w.capitalize() for w in question.place.split())
        text = f"I don't know a place called {said}."
        return Answer(text, SKILL, {"place": question.place, "found": False})
    if question.kind == "convert":
        return _converted(question, now, place)
    there = now.astimezone(place.zone)
    offset = (there.utcoffset() or timedelta()) - (now.utcoffset() or timedelta())
    minutes = int(offset.total_seconds() // 60)
    relation = _relation(minutes)
    note = f" ({place.note})" if place.note else ""
    if question.kind == "date":
        text = (f"In {place.label} it's {there:%A}, {there.day} {there:%B} {there.year}, "
                f"{there:%H:%M}{note}.")
    elif question.kind == "offset":
        if minutes == 0:
            text = f"{_capital(place.label)} is on the same time as you: it's {there:%H:%M} there"
            text += f"{note}."
        else:
            text = f"{_capital(place.label)} is {relation}: it's {there:%H:%M} on {there:%A} "
            text += f"there{note}."
    else:
        text = f"It's {there:%H:%M} on {there:%A} in {place.label}{note}, {relation}."
    data = {
        "place": place.label,
        "zone": place.zone_name,
        "country": place.country,
        "local": there.isoformat(),
        "offset_minutes": minutes,
        "found": True,
    }
    return Answer(text, SKILL, data)


def here(question: ClockQuestion, now: datetime) -> Answer:
    """The time and date in the user's own zone, as the query handler's clock says it."""
    text = f"It's {now:%H:%M} on {now:%A}, {now.day} {now:%B}."
    if question.kind == "date":
        text = f"It's {now:%A}, {now.day} {now:%B} {now.year}."
    zone = getattr(now.tzinfo, "key", None) or str(now.tzinfo)
    return Answer(text, SKILL, {"place": "", "zone": zone, "local": now.isoformat()})


def _moved(question: ClockQuestion, now: datetime) -> Answer:
    then = now + question.shift
    days = (then.date() - now.date()).days
    day = {0: "", 1: " tomorrow", -1: " yesterday"}.get(days, f" on {then:%A}")
    clock = f"{then:%H:%M:%S}" if abs(question.shift) < timedelta(minutes=2) else f"{then:%H:%M}"
    if question.shift < timedelta():
        text = f"{_capital(question.place)} ago it was {clock}{day}."
    else:
        text = f"In {question.place} it will be {clock}{day}."
    return Answer(text, SKILL, {"local": then.isoformat(),
                                "shift_s": question.shift.total_seconds()})


def _converted(question: ClockQuestion, now: datetime, place: Place) -> Answer:
    found = resolve_time(question.at, now)
    assert found is not None  # parse() read it
    clock = found.when.astimezone(now.tzinfo)
    mine = now.replace(hour=clock.hour, minute=clock.minute, second=0, microsecond=0)
    there = mine.astimezone(place.zone)
    days = (there.date() - mine.date()).days
    day = {0: "", 1: " the next day", -1: " the day before"}.get(days, "")
    minutes = int(((there.utcoffset() or timedelta()) - (mine.utcoffset() or timedelta()))
                  .total_seconds() // 60)
    text = (f"When it's {mine:%H:%M} here, it's {there:%H:%M}{day} in {place.label}, "
            f"{_relation(minutes)}.")
    return Answer(text, SKILL, {"place": place.label, "zone": place.zone_name,
                                "here": mine.isoformat(), "there": there.isoformat(),
                                "offset_minutes": minutes, "found": True})


def _compared(question: ClockQuestion, now: datetime) -> Answer:
    """Now against the time asked about. A bare hour ("past four") is the one of its two
    readings nearest now: 16:00 in the evening, 04:00 before dawn."""
    found = resolve_time(f"at {question.at}", now)
    assert found is not None  # parse() read it
    clock = found.when.astimezone(now.tzinfo)
    target = now.replace(hour=clock.hour, minute=clock.minute, second=0, microsecond=0)
    if not _HALF_DAY_SAID.search(question.at) and 1 <= clock.hour <= 12:
        other = target.replace(hour=(clock.hour + 12) % 24)
        target = min((target, other), key=lambda t: abs((t - now).total_seconds()))
    left = target - now
    it_is = f"it's {now:%H:%M}"
    to_go = f"{_minutes(left)} to {target:%H:%M}"
    if question.relation == "before":
        text = f"Yes, {it_is}: {to_go}." if left > timedelta() else f"No, {it_is}."
    elif question.relation == "nearly":
        if left <= timedelta():
            text = f"It's already past {target:%H:%M}: {it_is}."
        else:
            text = f"{'Yes' if left <= NEARLY else 'No'}, {it_is}: {to_go}."
    else:
        text = f"Yes, {it_is}." if left <= timedelta() else f"No, {it_is}: {to_go}."
    return Answer(text, SKILL, {"local": now.isoformat(), "asked": target.isoformat(),
                                "relation": question.relation, "reached": left <= timedelta()})


def _minutes(left: timedelta) -> str:
    minutes = max(1, round(left.total_seconds() / 60))
    hours, rest = divmod(minutes, 60)
    parts = [f"{hours} {plural(hours, 'hour')}"] if hours else []
    if rest:
        parts.append(f"{rest} {plural(rest, 'minute')}")
    return " and ".join(parts)


def _relation(minutes: int) -> str:
    if minutes == 0:
        return "the same time as you"
    hours, rest = divmod(abs(minutes), 60)
    parts = []
    if hours:
        parts.append(f"{hours} {plural(hours, 'hour')}")
    if rest:
        parts.append(f"{rest} {plural(rest, 'minute')}")
    return f"{' and '.join(parts)} {'ahead of' if minutes > 0 else 'behind'} you"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
