"""Which reminder the words point at: by its words ("the dentist one"), its time ("the 5
pm one", "tomorrow's"), both, or "it" (the one in focus). Two matches are a question,
never a guess; the caller changes nothing then.

The focus is per session (`reminder_focus:<session>` in the session table): the reminder
the session last set or touched; one that fired since is newer and wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime

from rapidfuzz import fuzz

from mavend.handlers.common import HandlerContext
from mavend.language.person import to_second_person
from mavend.language.timeparse import find_time, resolve_time
from mavend.router.grammar import normalize
from mavend.scheduler import Reminder, spoken_time

FOCUS_KEY = "reminder_focus"
# "it" reaches back to a firing this recent (a reminder that just went off).
FIRED_FOCUS_S = 30 * 60
_FILLER = re.compile(
    r"\b(?:the|my|a|an|that|this|those|these|one|ones|reminders?|timers?|alarms?|about|to|for|"
    r"called|just|only|next|at|on|set|i set|from|of|please|repeating|recurring|series)\b"
)
# Words that settle am or pm ("7pm" glues it to the number: no word boundary before it).
MERIDIEM = re.compile(
    r"(?<![a-z])(?:am|pm|a m|p m)\b|\b(?:morning|afternoon|evening|night|tonight|noon)\b|\d\d:"
)


@dataclass(frozen=True)
class Found:
    """What the words matched: `chosen` when exactly one, else the candidates to ask about."""

    chosen: Reminder | None
    matches: tuple[Reminder, ...] = ()


def focus_key(session: str) -> str:
    return f"{FOCUS_KEY}:{session or 'local'}"


def label(reminder: Reminder) -> str:
    """How a reply names it: its words said back ("my meeting" -> "your meeting")."""
    if reminder.kind == "timer" and not re.search(r"\btimer(?: for .+)?$", reminder.text):
        # "a timer for 10 minutes to turn off the oven": its text is what to do
        return f"the timer to {to_second_person(reminder.text, starts_sentence=False)}"
    if reminder.kind == "timer":
        return f"the {reminder.text}"
    return to_second_person(reminder.text, starts_sentence=False)


def owned_name(reminder: Reminder) -> str:
    """'your alarm', 'the reminder to stretch'."""
    if reminder.kind == "alarm" or not (said := about(reminder.text)):
        return f"your {reminder.kind}"
    return f"the reminder {said}"


# A task said as a whole clause: "i have a meeting", "my passport expires in march".
_CLAUSE = re.compile(
    r"^(?:(?:i|i'm|i've|i'll|we|we're|we've)\s+\S+\s+\S"
    r"|(?:my|our|the|a|an|his|her|their|your)\s.*\b(?:is|are|was|were|"
    r"has|have|had|needs?|expires?|ends?|starts?|runs?|due|goes|comes|arrives?)\b)"
)


def about(text: str) -> str:
    """How the reply names the task: "to call mum", "about the bins", "that you have a
    meeting" (the stored text keeps the owner's words)."""
    lowered = text.lower()
    if lowered in ("reminder", "alarm"):
        return ""
    if lowered.startswith("that "):
        return to_second_person(text, starts_sentence=False)
    if _CLAUSE.match(lowered):
        return "that " + to_second_person(text, starts_sentence=False)
    starts_verb = not lowered.startswith(("about ", "the ", "my ", "a "))
    said_back = to_second_person(text, starts_sentence=False)  # "to take your pills"
    return f"to {said_back}" if starts_verb else f"about {said_back}"


def cancelled_name(reminder: Reminder) -> str:
    """How "Cancelled ..." names it: "the reminder to take the bins out" (the task alone,
    "Cancelled take the bins out", read as a command)."""
    if reminder.kind == "reminder" and (said := about(reminder.text)):
        return f"the reminder {said}"
    return label(reminder)


def described(reminder: Reminder, now: datetime) -> str:
    """'dentist at 10:00 tomorrow', 'bins, every Monday at 19:00, next at 19:00 on Monday'."""
    if reminder.paused_left is not None:
        from mavend.handlers.common import human_duration

        return f"{label(reminder)} (paused, {human_duration(reminder.paused_left)} left)"
    when = spoken_time(reminder.fire_at, now)
    if reminder.series is not None:
        days = sorted({t.astimezone(now.tzinfo).date() for t in reminder.series.skips if t > now})
        skipped = [f"{d:%A} {d.day} {d:%B}" for d in days]
        but = f" (not on {' or '.join(skipped[:3])})" if skipped else ""
        return f"{label(reminder)}, {reminder.series.describe()}{but}, next at {when}"
    if reminder.act is not None:  # a scheduled act: not a thing to do, a thing mavend does
        return f"{label(reminder)} at {when} (I'll do that myself)"
    return f"{label(reminder)} at {when}"


def of_kind(reminders: list[Reminder], kind: str) -> list[Reminder]:
    """Timers, alarms, or reminders (everything but timers); "" all."""
    if kind == "timer":
        return [r for r in reminders if r.kind == "timer"]
    if kind == "alarm":
        return [r for r in reminders if r.kind == "alarm"]
    if kind == "reminder":
        return [r for r in reminders if r.kind != "timer"]
    return list(reminders)


def counted(reminders: list[Reminder]) -> str:
    """'2 timers, an alarm and 3 reminders' (a planned device act is "a planned action")."""
    counts: dict[str, int] = {}
    for reminder in reminders:
        kind = "planned action" if reminder.act is not None else reminder.kind
        counts[kind] = counts.get(kind, 0) + 1
    order = ("timer", "alarm", "reminder", "planned action")
    parts = [
        (f"{'an' if kind == 'alarm' else 'a'} {kind}" if n == 1 else f"{n} {kind}s")
        for kind in sorted(counts, key=lambda k: order.index(k) if k in order else 9)
        for n in [counts[kind]]
    ]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


class ReminderFinder:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx

    # focus -----------------------------------------------------------------
    def set_focus(self, session: str, reminder: Reminder) -> None:
        self.ctx.session.put(
            focus_key(session), {"id": reminder.id, "at": self.ctx.now().timestamp()}
        )

    def focus(self, session: str, candidates: list[Reminder], kind: str = "") -> Reminder | None:
        """The reminder "it" means: the session's focus, or one that fired since (a
        one-off that just went off is no longer pending, and still "it")."""
        ids = {r.id: r for r in candidates}
        stored = self.ctx.session.get(focus_key(session)) or {}
        focus_at = float(stored.get("at") or 0)
        firing = self.ctx.reminders.last_fired()
        now = self.ctx.now()
        if firing is not None and firing.fired_at.timestamp() > focus_at:
            recent = (now - firing.fired_at).total_seconds() <= FIRED_FOCUS_S
            if recent and (firing.reminder.id in ids or of_kind([firing.reminder], kind)):
                return ids.get(firing.reminder.id, firing.reminder)
        return ids.get(int(stored.get("id") or 0))

    # words -----------------------------------------------------------------
    def find(
        self, candidates: list[Reminder], what: str, *, pronoun: bool, session: str,
        kind: str = "",
    ) -> Found:
        if pronoun or not says_which(what):  # "it", "the timer"
            focused = self.focus(session, candidates, kind)
            if focused is not None:
                return Found(focused, (focused,))
            if len(candidates) == 1:
                return Found(candidates[0], tuple(candidates))
            return Found(None, tuple(candidates))
        matches = match_words(candidates, what, self.ctx.now())
        return Found(matches[0] if len(matches) == 1 else None, tuple(matches))


def says_which(what: str) -> bool:
    """Whether the words tell one reminder from another ("the dentist one": yes; "my
    alarm", "the timer": no, only the kind)."""
    return bool(_FILLER.sub(" ", normalize(what)).strip())


def match_words(candidates: list[Reminder], what: str, now: datetime) -> list[Reminder]:
    said = normalize(what).replace("'s", "")
    found = find_time(said, now) or _bare_clock(said, now)
    chosen = list(candidates)
    if found is not None:
        chosen = [r for r in chosen if _same_time(r, found.kind, found.when, found.phrase, now)]
        said = said.replace(normalize(found.phrase), " ")
        if found.also:
            said = said.replace(normalize(found.also), " ")
    words = " ".join(_FILLER.sub(" ", said).split())
    if not words:
        return chosen if found is not None else []
    scored = [(_score(words, r), r) for r in chosen]
    best = max((s for s, _ in scored), default=0)
    if best < 70:
        return []
    return [r for s, r in scored if s >= max(70, best - 5)]


def _bare_clock(said: str, now: datetime):
    """ "my 3 o'clock", "the 5 one": a clock said to pick a reminder, not to set one."""
    if m := re.search(r"\b(\d{1,2})(?:[: ](\d\d))? ?(?:o ?clock|oclock)\b", said):
        return resolve_time(m.group(0), now)
    # "the 6 30 alarm", "my 7:15 one": an hour and its minutes before the noun
    if m := re.search(r"\b([01]?\d|2[0-3])[: ]([0-5]\d)\b(?= (?:alarm|reminder|timer|one)s?\b)",
                      said):
        found = resolve_time(f"{m[1]}:{m[2]}", now)
        return replace(found, phrase=m.group(0)) if found is not None else None
    return None


def match_score(words: str, reminder: Reminder) -> float:
    """How closely `words` name `reminder`, 0 to 100, with the filler words (articles,
    "reminder", "about") out of both."""
    def plain(text: str) -> str:
        return " ".join(_FILLER.sub(" ", normalize(text).replace("'s", "")).split())

    return fuzz.token_set_ratio(plain(words), plain(f"{reminder.text} {reminder.name or ''}"))


def _score(words: str, reminder: Reminder) -> float:
    text = normalize(f"{reminder.text} {reminder.name or ''}")
    return max(fuzz.token_set_ratio(words, text), fuzz.partial_ratio(words, text) - 10)


def _same_time(reminder: Reminder, kind: str, when: datetime, phrase: str, now: datetime) -> bool:
    fire = reminder.fire_at.astimezone(now.tzinfo)
    when = when.astimezone(now.tzinfo)
    if kind == "duration":  # "the 3 minute timer": a timer by the length it was set for
        return reminder.kind == "timer" and _set_length(reminder) == round((when - now)
                                                                           .total_seconds())
    if kind == "date":
        return fire.date() == when.date()
    clock_same = (fire.hour, fire.minute) == (when.hour, when.minute)
    if not MERIDIEM.search(normalize(phrase)):  # "the 5 one": 05:00 or 17:00
        clock_same = (fire.hour % 12, fire.minute) == (when.hour % 12, when.minute)
    if kind == "time":
        return clock_same
    if kind == "datetime":
        day_said = re.search(
            r"\b(?:today|tomorrow|tonight|monday|tuesday|wednesday|thursday|friday|saturday|"
            r"sunday|\d{1,2}(?:st|nd|rd|th)|january|february|march|april|may|june|july|"
            r"august|september|october|november|december)\b",
            normalize(phrase),
        )
        return clock_same and (not day_said or fire.date() == when.date())
    return False


def _set_length(reminder: Reminder) -> int:
    """The seconds a timer was set for: the length its name says ("timer for 3 minutes",
    renamed when time is added), else from when it was set to when it rings."""
    named = find_time(reminder.text, reminder.created_at)
    if named is not None and named.duration is not None:
        return round(named.duration.total_seconds())
    return round((reminder.fire_at - reminder.created_at).total_seconds())


def which_one(matches: tuple[Reminder, ...], now: datetime) -> str:
    """'Which one: dentist at 10:00 tomorrow or dentist at 15:00 on Friday?'"""
    options = [described(r, now) for r in matches[:5]]
    more = f" (and {len(matches) - 5} more)" if len(matches) > 5 else ""
    if len(options) == 2:
        return f"Which one: {options[0]} or {options[1]}?"
    return f"Which one: {'; '.join(options[:-1])}, or {options[-1]}{more}?"
