"""One request at several times: "set an alarm for 6 and 6 30", "remind me at 7 and 9 to
check the oven", "a timer for 5 minutes and 10 minutes".

    each_time(grammar, said, now) -> [request, ...] | None

The grammar's `when` slot takes "6 and 6 30" whole; each part that is a time of its own
becomes the same request at that time (it was one alarm named "and 6 30", one reminder at 7
with the 9 dropped, one timer of 15 minutes). A span said in falling units is one span ("an
hour and a half", "1 hour and 30 minutes"); only parts in the same or a rising unit are
several ("5 minutes and 10 minutes"). "set two timers, one for 5 minutes and one for 10" is
read as "set a timer for 5 minutes and for 10 minutes" first. Every request made is matched
again by the grammar as the same command with that time, or nothing is split.
"""

from __future__ import annotations

import re
from datetime import datetime
from itertools import pairwise

from mavend.language.timeparse import TimeResolution, find_time
from mavend.language.timeparse.lexing import AND_CARRIED_ON, WEEKDAY
from mavend.router.decision import Intent
from mavend.router.grammar import CommandGrammar

MAX_TIMES = 4  # "at 6, 7, 8 and 9": more than that in one breath is a misheard paragraph

_PARTS = re.compile(r"\s*,\s*|\s+(?:and|then|plus)(?:\s+(?:then|also|again))?\s+|\s+&\s+")
_JOINED = re.compile(r"\b(?:and|then|plus)\b|&|,")
_FILLER = re.compile(r"^(?:(?:one|another|also|again|then|the other)\s+)+")
_LEAD = re.compile(r"^(?:at|for|in|on|by)\b")
_BARE_CLOCK = re.compile(
    r"^(?P<h>[01]?\d|2[0-3])(?: (?P<m>[0-5]\d))?(?P<ampm> ?(?:am|pm|a m|p m))?$"
)
_COUNTED = re.compile(
    r"^(?P<verb>(?:(?:please|can you|could you)\s+)*(?:set|start|make|put on|give me|i need))"
    r"\s+(?:two|2|three|3|four|4|a couple of|a pair of)\s+(?P<noun>timers|alarms)\b,?\s*"
    r"(?P<rest>.+)$"
)
# A repeat said once for several times ("every day at 8am and 8pm", "at 7 and 9 on
# weekdays"): it holds for each.
_REPEAT = (
    r"(?:(?:every|each) (?:other |single )?(?:day|night|morning|evening|weekday|week|monday"
    r"|tuesday|wednesday|thursday|friday|saturday|sunday)|daily|nightly|on weekdays"
    r"|on weekends|weekdays)"
)
_REPEAT_FIRST = re.compile(rf"^{_REPEAT} ")
_REPEAT_LAST = re.compile(rf" {_REPEAT}$")
# "remind me to take my pills at 8am and 8pm": two clocks inside the task's words, where
# the grammar's `when` slot holds neither
_CLOCK = r"(?:[01]?\d|2[0-3])(?:[: ][0-5]\d)?(?: ?(?:am|pm|a m|p m|o ?clock))?"
_TWO_CLOCKS = re.compile(
    rf"\bat (?P<a>{_CLOCK}) (?:and|&) (?:at )?(?P<b>{_CLOCK})(?P<repeat> {_REPEAT})?(?=$| )"
)
_MERIDIEM = re.compile(r" ?(?:am|pm|a m|p m)$")
_UNITS = ("second", "minute", "hour", "day", "week", "month", "year")
_UNIT = re.compile(rf"\b(?P<u>{'|'.join(_UNITS)}|sec|min|hr)s?\b")
_UNIT_RANK = {**{u: i for i, u in enumerate(_UNITS)}, "sec": 0, "min": 1, "hr": 2}


_DAYS_OF_ONE_REPEAT = re.compile(
    rf"^(?:(?:every|each)\s+{WEEKDAY}s?(?:(?:\s*,\s*|\s+)(?:and\s+)?{WEEKDAY}s?)+"
    rf"|(?:on\s+)?{WEEKDAY}s(?:(?:\s*,\s*|\s+)(?:and\s+)?{WEEKDAY}s)+)\b"
)


def each_time(grammar: CommandGrammar, said: str, now: datetime) -> list[str] | None:
    """The request once per time it names (normalized words), or None for one time."""
    if not _JOINED.search(said) or AND_CARRIED_ON.search(said):
        # one time at most, or one series from a first day ("at 7 tomorrow and every day
        # after"): no grammar match spent on it
        return None
    if (sized := _sized_timers(grammar, said, now)) is not None:
        return sized
    plural = _PLURAL.match(said) is not None or _COUNTED.match(said) is not None
    said = _uncounted(said)
    found = grammar.match(said)
    if found is None or found.intent is not Intent.REMINDER:
        return None
    when = found.slots.get("when", "")
    if not when:
        return _clocks_in_task(grammar, said, found.name, now)
    if _DAYS_OF_ONE_REPEAT.match(when):
        return None  # "every monday, wednesday and friday at 9": one series, those days
    parts = _shared_repeat(_paired_meridiem(_clock_runs(
        [_FILLER.sub("", p) for p in _PARTS.split(when) if p.strip()])))
    if plural:  # "set timers for 5 and 10 minutes": several said, so the unit is each one's
        parts = _shared_unit(parts)
    if not 2 <= len(parts) <= MAX_TIMES or " " + when not in " " + said:
        return None
    at = (" " + said).index(" " + when)
    before, after = said[:at], said[at + len(when):]
    lead = _LEAD.match(parts[0])
    requests = []
    for part in _shared_clock(parts, now):
        request = _as_request(grammar, found.name, before, part, after, lead, now)
        if request is None:
            return None
        requests.append(request)
    if _one_span(requests, now):
        return None
    return requests


def _as_request(
    grammar: CommandGrammar, name: str, before: str, part: str, after: str,
    lead: re.Match[str] | None, now: datetime,
) -> str | None:
    """The request with `part` as its time ("9" after "at 7": "at 9"; "6 30": "6:30"), when
    the grammar reads it as the same command and the whole part is its time; else None."""
    if (said_lead := _LEAD.match(part)) and re.search(rf"\b{said_lead.group(0)} $", before):
        part = part[said_lead.end():].strip()  # "for" already said: "one for 10" -> "10"
    options = [part]
    if lead and not _LEAD.match(part) and not _LEAD.search(before.split()[-1] if before else ""):
        options.insert(0, f"{lead.group(0)} {part}")  # "in 10 minutes and 20": "in 20"
    if (clock := _BARE_CLOCK.match(part)) and clock["m"]:  # "6 30": "6:30"
        options.append(f"{clock['h']}:{clock['m']}{clock['ampm'] or ''}")
    for option in options:
        request = f"{before}{option}{after}"
        again = grammar.match(request)
        if again is None or again.name != name or again.slots.get("when") != option:
            continue
        found = find_time(request, now)
        timed = _REPEAT_LAST.sub("", _REPEAT_FIRST.sub("", option))  # the repeat's own reader
        if found is not None and found.phrase.endswith(timed):
            return request
    return None


def _clocks_in_task(
    grammar: CommandGrammar, said: str, name: str, now: datetime
) -> list[str] | None:
    """"remind me to take my pills at 8am and 8pm (every day)": the request once per
    clock, when each is the same command with that clock as its only time."""
    m = _TWO_CLOCKS.search(said)
    if m is None:
        return None
    first, second = _paired_meridiem([m["a"], m["b"]])
    repeat = m["repeat"] or ""
    requests = [f"{said[:m.start()]}at {clock}{repeat}{said[m.end():]}"
                for clock in (first, second)]
    for request, clock in zip(requests, (first, second), strict=True):
        again = grammar.match(request)
        found = find_time(request, now)
        if again is None or again.name != name or found is None or not found.phrase.endswith(
                clock):
            return None
    return requests


def _paired_meridiem(parts: list[str]) -> list[str]:
    """"at 8 and 8pm": the bare 8 is the morning's (both were 20:00 today)."""
    marked = {re.sub(r"\D", "", p): m for p in parts if (m := _MERIDIEM.search(p))}
    out = []
    for part in parts:
        clock = _BARE_CLOCK.match(_LEAD.sub("", part).strip())
        other = marked.get(re.sub(r"\D", "", part))
        if clock and not clock["ampm"] and other and other.group(0).strip() in ("pm", "p m"):
            part = f"{part}am"
        out.append(part)
    return out


def _shared_repeat(parts: list[str]) -> list[str]:
    """"every day at 8am and 8pm", "at 7 and 9 on weekdays": the repeat for each time."""
    if len(parts) < 2:
        return parts
    if (first := _REPEAT_FIRST.match(parts[0])) is not None:
        return [parts[0]] + [p if _REPEAT_FIRST.match(p) else f"{first.group(0)}{p}"
                             for p in parts[1:]]
    if (last := _REPEAT_LAST.search(parts[-1])) is not None:
        return [p if _REPEAT_LAST.search(p) else f"{p}{last.group(0)}"
                for p in parts[:-1]] + [parts[-1]]
    return parts


_SAID_LAST = (  # (what the earlier parts are, the shared words at the end of the last)
    ("date", re.compile(r" (?:at|by|around) \S+(?: \d\d)?(?: ?(?:am|pm|a m|p m|o ?clock))?$")),
    ("time", re.compile(r" (?:today|tonight|tomorrow(?: morning| evening| night)?|"
                        r"(?:on|this|next) \w+(?: morning| evening| night)?)$")),
)


def _shared_clock(parts: list[str], now: datetime) -> list[str]:
    """"tomorrow and friday at 9": the clock time said once, for each day before it;
    "at 6 and 6 30 on friday": the day said once, for each time before it."""
    lead = _LEAD.match(parts[0])
    said = [_read(p, lead.group(0) if lead else "at", now) for p in parts]
    last = said[-1]
    if last is None or last.kind != "datetime":
        return parts
    for kind, shared in _SAID_LAST:
        words = shared.search(parts[-1])
        if words and all(e is not None and e.kind == kind for e in said[:-1]):
            return [f"{p}{words.group(0)}" for p in parts[:-1]] + [parts[-1]]
    return parts


def _read(part: str, lead: str, now: datetime) -> TimeResolution | None:
    """`part` read wholly as a time, as said or after the lead word ("6 30": "at 6 30")."""
    for candidate in (part, f"{lead} {part}"):
        found = find_time(candidate, now)
        if found is not None and " ".join(found.phrase.split()) == candidate:
            return found
    return None


_SIZED = re.compile(
    r"^(?P<verb>.*?\b(?:set|start|make|put on|give me|i need|i want))\s+(?P<first>(?:a|an)\s+\S+"
    r"(?:\s+\S+)?\s+timer)\s+and\s+(?:(?:a|an|another)\s+)(?P<second>\S+(?:\s+\S+)?\s+timer)$"
)


# "set a timer for 5 minutes for the eggs and 8 minutes for the toast": two named timers
# (it was one, named "eggs and 8 minutes for the toast", of 5 minutes)
_SPAN = (r"(?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen"
         r"|twenty|twenty five|thirty|forty|forty five|fifty|sixty|ninety|half an?)"
         r"(?: and a (?:half|quarter))? (?:seconds?|secs?|minutes?|mins?|hours?|hrs?)")
_LABELLED = re.compile(
    r"^(?P<verb>(?:(?:please|can you|could you)\s+)*(?:set|start|put on|give me|make)"
    r"(?: me)?)\s+(?:a |two |2 )?timers?\s+(?:for\s+)?(?P<a>" + _SPAN + r")\s+(?:for|on)\s+"
    r"(?P<la>[a-z' ]+?),?\s+and\s+(?:(?:a|one|another)\s+(?:timer\s+)?)?(?:for\s+)?"
    r"(?P<b>" + _SPAN + r")\s+(?:for|on)\s+(?P<lb>[a-z' ]+)$"
)


def _sized_timers(grammar: CommandGrammar, said: str, now: datetime) -> list[str] | None:
    """"set a 5 minute timer and a 10 minute timer": two timers (it was one, named "set a 5
    minute timer and a timer"); each half must be the grammar's timer."""
    m = _SIZED.match(said)
    if (labelled := _LABELLED.match(said)) is not None:
        verb = labelled["verb"]
        requests = [f"{verb} a timer for {labelled['a']} for {labelled['la']}",
                    f"{verb} a timer for {labelled['b']} for {labelled['lb']}"]
    elif m is None:
        return None
    else:
        requests = [f"{m['verb']} {m['first']}", f"{m['verb']} a {m['second']}"]
    for request in requests:
        found = grammar.match(request)
        length = find_time(request, now)
        if found is None or found.name != "timer" or length is None or length.kind != "duration":
            return None  # "a pasta timer and an egg timer": no length, no split here
    return requests


_PLURAL = re.compile(
    r"^(?P<verb>(?:(?:please|can you|could you)\s+)*(?:set|start|make)(?: me)?)\s+"
    r"(?P<noun>timers|alarms)\s+(?P<rest>(?:for|at)\b.+)$"
)
# A run of clock times said with no "and" between ("6 6 15 6 30" once the commas are gone)
_RUN = re.compile(r"^(?:(?:[01]?\d|2[0-3])(?: [0-5]\d)?(?: |$)){2,}")


def _clock_runs(parts: list[str]) -> list[str]:
    """"6, 6 15 and 6 30" reads "6 6 15" and "6 30" once normalizing drops the commas:
    a run of bare clock times is cut into its times (a minute is two digits)."""
    out: list[str] = []
    for part in parts:
        words = part.split()
        run = _RUN.match(part)
        if run is None:
            out.append(part)
            continue
        times: list[str] = []
        i = 0
        while i < len(words) and re.fullmatch(r"\d{1,2}", words[i]):
            minute = words[i + 1] if i + 1 < len(words) else ""
            if len(minute) == 2 and minute.isdigit() and int(minute) < 60:
                times.append(f"{words[i]} {minute}")
                i += 2
            else:
                times.append(words[i])
                i += 1
        rest = " ".join(words[i:])
        if len(times) < 2:
            out.append(part)
            continue
        out.extend([*times[:-1], f"{times[-1]} {rest}".strip()])
    return out


def _shared_unit(parts: list[str]) -> list[str]:
    """ "5 and 10 minutes" said of several timers: 5 minutes and 10 minutes."""
    unit = _UNIT.search(parts[-1]) if parts else None
    if unit is None:
        return parts
    return [f"{p} {unit.group(0)}" if re.fullmatch(r"\d+", p.strip()) else p for p in parts]


def _uncounted(said: str) -> str:
    """"set two timers, one for 5 minutes and one for 10" -> "set a timer for 5 minutes and
    one for 10"; "set alarms for 6 and 7" -> "set an alarm for 6 and 7"; other words
    unchanged."""
    if (plural := _PLURAL.match(said)) is not None:
        noun = "a timer" if plural["noun"] == "timers" else "an alarm"
        return f"{plural['verb']} {noun} {plural['rest']}"
    m = _COUNTED.match(said)
    if m is None:
        return said
    rest = _FILLER.sub("", m["rest"])
    return f"{m['verb']} {'a timer' if m['noun'] == 'timers' else 'an alarm'} {rest}"


def _one_span(requests: list[str], now: datetime) -> bool:
    """Whether the times are one length of time said in falling units ("1 hour and 30
    minutes"): a part in a smaller unit than the one before it adds to it."""
    ranks = []
    for request in requests:
        found = find_time(request, now)
        if found is None or found.kind != "duration":
            return False  # clock times and days are each a time of their own
        units = [_UNIT_RANK[m["u"]] for m in _UNIT.finditer(found.phrase)]
        ranks.append(min(units) if units else None)
    if any(r is None for r in ranks):
        return True  # a number without a unit leans on the part before it
    return any(later < earlier for earlier, later in pairwise(ranks))
