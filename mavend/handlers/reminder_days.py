"""Which days of the week a repeating reminder keeps: "don't wake me up on weekends",
"turn off my alarm at weekends", "only remind me about the fish on weekdays".

The outcome a household notices is the opposite one: "don't wake me up on weekends" was
read as a withdrawn command ("OK, I won't") and the weekend alarms stayed set; "don't
remind me to stretch on weekends" cancelled the whole series; "i don't need the fish
reminder on sundays" set a new reminder. Here the series keeps its other days: the days
said are taken out of it ("don't", "turn off", "skip ... on saturdays", "not at
weekends") or it keeps to them ("only ... on weekdays", "make it weekdays only").

Only days said as a repeat change the rule ("on weekends", "at the weekend", "on
saturdays", "during the week"); one day ("on saturday", "tomorrow") is one occurrence, the
reminder commands' `day`; "for the weekend" / "this weekend" skips the coming Saturday's
and Sunday's occurrences when they are the next ones (a series keeps no gap further on,
and the reply says so). A command is claimed only when a repeating reminder of its kind exists
(`ReminderHandler.days`); otherwise the words go on as before ("remind me to feed the fish
only on weekdays" with no fish series sets one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import timedelta

from mavend.handlers.common import HandlerContext, Outcome, Reply
from mavend.handlers.reminder_find import (
    ReminderFinder,
    focus_key,
    of_kind,
    owned_name,
    says_which,
    which_one,
)
from mavend.recurrence.rule import WEEKDAY_CODES
from mavend.scheduler import Reminder, spoken_time

# How long after a series is set or touched a bare "not on weekends" is about it.
FOLLOW_UP_S = 300.0
_PLURAL_DAYS = {
    "mondays": "MO", "tuesdays": "TU", "wednesdays": "WE", "thursdays": "TH",
    "fridays": "FR", "saturdays": "SA", "sundays": "SU",
}
_WEEKEND = r"(?:the )?week ?ends?"
_WORKDAYS = r"(?:the )?(?:week ?days|work ?days|working days|school days)"
_PLURAL = r"(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)"
# The days as a repeat: "at weekends", "on the weekend", "during the week", "on mondays
# and fridays". Not "for the weekend" / "this weekend": that one weekend.
_DAYS = (
    rf"(?:(?:on|at|during) )?(?P<days>{_WEEKEND}|{_WORKDAYS}|(?<=during )the week"
    rf"|{_PLURAL}(?:(?:,? and|,| or) {_PLURAL})*)"
)
_TAIL = r"(?: (?:any ?more|any longer|from now on|please|though|thanks|thank you))*$"
_LEAD = r"^(?:(?:oh|um|uh|er|ok|okay|so|and|but|also|actually|hey|please) )*"
_NOT = r"(?:don't|dont|do not|no need to|(?:you )?(?:don't|dont|do not) (?:need|have) to)"
_NOUN = r"(?:reminders?|alarms?)"
_OWN = r"(?:my|the|our|that|this|those|these)"
# "wake me up", "remind me to stretch": what goes off, said as what it does.
_DOING = (
    r"(?P<wake>wake me(?: up)?|get me up|waking me(?: up)?|set (?:off )?(?:my |the )?alarm"
    r"|ring|ringing|go off|going off)"
    r"|(?:remind|reminding) me(?: (?:to|about|of) (?P<task>.+?))?"
)

_NEGATED = re.compile(rf"{_LEAD}(?:please )?(?:{_NOT}|stop|quit) (?:{_DOING}) {_DAYS}{_TAIL}")
_TURN_OFF = re.compile(
    rf"{_LEAD}(?:please )?(?:turn off|switch off|shut off|cancel|disable|skip|stop|remove|"
    rf"delete|drop|get rid of) (?P<what>{_OWN} (?:.+? )?{_NOUN}) {_DAYS}{_TAIL}"
)
_NO_NEED = re.compile(
    rf"{_LEAD}(?:i|we) (?:don't|dont|do not|no longer) (?:need|want) (?:(?P<wake>to be woken"
    rf"(?: up)?|waking(?: up)?|(?:an|any) alarms?)|(?P<what>(?:{_OWN}|an?|any) (?:.+? )?"
    rf"{_NOUN})) {_DAYS}{_TAIL}"
)
_NO_MORE = re.compile(rf"{_LEAD}no (?P<what>(?:.+? )?{_NOUN}) {_DAYS}{_TAIL}")
_NOT_ON = re.compile(
    rf"{_LEAD}(?:(?:but|and) )?(?:not|except|apart from|but not|never) {_DAYS}"
    r"(?: (?:though|please|thanks))*$"
)
_ONLY_DOING = re.compile(rf"{_LEAD}(?:please )?(?:only|just) (?:{_DOING}) {_DAYS}{_TAIL}")
_DOING_ONLY = re.compile(rf"{_LEAD}(?:please )?(?:{_DOING}) (?:only|just) {_DAYS}{_TAIL}")
_CHANGE = ("change", "switch", "move")
_MAKE_ONLY = re.compile(
    rf"{_LEAD}(?:please )?(?P<verb>make|change|set|switch|put|turn|move) (?P<what>(?:it|that|this|"
    rf"{_OWN} (?:.+? )?{_NOUN}))(?: (?:to|so it'?s|so that it'?s|for))? (?:(?:only|just) )?"
    rf"{_DAYS}(?: only)?{_TAIL}"
)
_SHOULD_ONLY = re.compile(
    rf"{_LEAD}(?P<what>{_OWN} (?:.+? )?{_NOUN}|it) (?:should|must|can|is to) (?:only|just) "
    rf"(?:go off|ring|be|happen|remind me|run) {_DAYS}{_TAIL}"
)
_ONLY = re.compile(
    rf"{_LEAD}(?:(?:only|just) {_DAYS}|(?P<bare>{_WEEKEND}|{_WORKDAYS}|{_PLURAL}) only)"
    r"(?: (?:please|thanks|though))*$"
)


@dataclass(frozen=True)
class DaysCommand:
    """A series kept to some days (`only`) or without them. `what`: the words that name
    it ("" and `kind` alone: "my alarm", "wake me up"); `pronoun`: the one in focus."""

    days: tuple[str, ...]
    only: bool
    what: str = ""
    kind: str = ""  # "alarm" | "reminder" ("" any but a timer)
    pronoun: bool = False
    follow_up: bool = False  # "not on weekends" alone: only just after one was set
    once: bool = False  # "for the weekend", "this weekend": the coming one only
    exact: bool = False  # "make it wednesdays": those days instead of the ones it had


def day_codes(days: str) -> tuple[str, ...]:
    """'weekends' -> SA, SU; 'the week' / 'weekdays' -> MO..FR; 'mondays and fridays'."""
    if re.fullmatch(_WEEKEND, days):
        return ("SA", "SU")
    if re.fullmatch(_WORKDAYS, days) or days == "the week":
        return WEEKDAY_CODES[:5]
    said = {_PLURAL_DAYS[w] for w in re.findall(_PLURAL, days)}
    return tuple(d for d in WEEKDAY_CODES if d in said)


def _kind(words: str) -> str:
    return "alarm" if re.search(r"\balarms?\b", words) else "reminder"


# "turn off my alarm for the weekend", "don't wake me up this weekend": the coming one.
_THIS_WEEKEND = re.compile(
    rf"{_LEAD}(?:please )?(?:(?:turn off|switch off|cancel|disable|skip|stop) (?P<what>{_OWN} "
    rf"(?:.+? )?{_NOUN})|(?:{_NOT}) (?:{_DOING})) (?:(?:for|over) (?:this|the)|this) (?:coming )?"
    rf"weekend{_TAIL}"
)


def parse_days(said: str) -> DaysCommand | None:
    """The days command in `said` (normalized), or None."""
    if match := _THIS_WEEKEND.fullmatch(said):
        if match["what"]:
            return replace(_named(match["what"], "weekends", False), once=True)
        kind = "alarm" if match["wake"] else "reminder"
        return DaysCommand(("SA", "SU"), False, what=match["task"] or "", kind=kind, once=True)
    if said.startswith(("set ", "wake me", "remind me", "make a", "add ")) and not re.search(
        r"\b(?:only|just)\b", said
    ):
        return None  # a new one: "remind me to stretch on weekends", "wake me up on fridays"
    for pattern, only in ((_NEGATED, False), (_ONLY_DOING, True), (_DOING_ONLY, True)):
        if match := pattern.fullmatch(said):
            if match["wake"]:
                return DaysCommand(day_codes(match["days"]), only, kind="alarm")
            return DaysCommand(day_codes(match["days"]), only, what=match["task"] or "",
                               kind="reminder")
    for pattern, only in ((_TURN_OFF, False), (_NO_MORE, False), (_SHOULD_ONLY, True)):
        if match := pattern.fullmatch(said):
            return _named(match["what"], match["days"], only)
    if match := _NO_NEED.fullmatch(said):
        if match["wake"]:
            return DaysCommand(day_codes(match["days"]), False, kind="alarm")
        return _named(match["what"], match["days"], False)
    if match := _MAKE_ONLY.fullmatch(said):
        limited = re.search(r"\b(?:only|just)\b", said) is not None
        if match["what"] in ("it", "that", "this") or limited or match["verb"] in _CHANGE:
            # "make it wednesdays", "change the bins reminder to fridays": those days
            return replace(_named(match["what"], match["days"], True), exact=True)
        return None  # "set my alarm for weekdays" with no "only": a new one's words
    if match := _NOT_ON.fullmatch(said):
        return DaysCommand(day_codes(match["days"]), False, pronoun=True, follow_up=True)
    if match := _ONLY.fullmatch(said):
        return DaysCommand(day_codes(match["days"] or match["bare"]), True, pronoun=True,
                           follow_up=True)
    return None


def _named(what: str, days: str, only: bool) -> DaysCommand:
    pronoun = what in ("it", "that", "this")
    return DaysCommand(day_codes(days), only, what="" if pronoun else what, kind=_kind(what),
                       pronoun=pronoun)


class ReminderDays:
    """Applies a `DaysCommand` to the one series it names (asks when several match)."""

    def __init__(self, ctx: HandlerContext, finder: ReminderFinder):
        self.ctx = ctx
        self.finder = finder

    def series(self, command: DaysCommand) -> list[Reminder]:
        """The repeating reminders the command could be about."""
        return [r for r in of_kind(self.ctx.reminders.active(), command.kind)
                if r.series is not None and r.kind != "timer"]

    def claims(self, command: DaysCommand, session: str) -> bool:
        """Whether a series the words could name is set (none: the words go on as said).
        "not on weekends" alone names the series just set or touched in this session."""
        candidates = self.series(command)
        if not candidates:
            return False
        if command.follow_up:
            stored = self.ctx.session.get(focus_key(session)) or {}
            if self.ctx.now().timestamp() - float(stored.get("at") or 0) > FOLLOW_UP_S:
                return False
        found = self.finder.find(candidates, command.what, pronoun=command.pronoun,
                                 session=session, kind=command.kind)
        if command.pronoun:
            return found.chosen is not None
        return bool(found.matches)

    def run(self, command: DaysCommand, session: str) -> Reply:
        now = self.ctx.now()
        candidates = self.series(command)
        if not command.pronoun and not says_which(command.what) and len(candidates) > 1:
            # "don't wake me up on weekends" with two alarm series: neither at weekends.
            return self._each(command, candidates, session)
        found = self.finder.find(candidates, command.what, pronoun=command.pronoun,
                                 session=session, kind=command.kind)
        if found.chosen is None:
            if not found.matches:
                return Reply("You have no repeating reminder like that; nothing was changed.",
                             Outcome.ASKED)
            return Reply(which_one(found.matches, now), Outcome.ASKED)
        changed, said, outcome = self._one(command, found.chosen, session)
        if changed is None or changed.series is None:
            return Reply(f"{_capital(said)}.", outcome)
        return Reply(
            f"OK, {said}; the next is {_at(spoken_time(changed.fire_at, now))}.",
            data={"ids": [changed.id], "rules": [changed.series.rule]},
        )

    def _each(self, command: DaysCommand, candidates: list[Reminder], session: str) -> Reply:
        results = [self._one(command, reminder, session) for reminder in candidates]
        changed = [r for r, _, _ in results if r is not None and r.series is not None]
        said = "; ".join(text for _, text, _ in results)
        if not changed:
            return Reply(f"{_capital(said)}.", results[0][2])
        return Reply(f"OK: {said}.", data={
            "ids": [r.id for r in changed],
            "rules": [r.series.rule for r in changed if r.series is not None],
        })

    def _one(
        self, command: DaysCommand, reminder: Reminder, session: str
    ) -> tuple[Reminder | None, str, Outcome]:
        """(the reminder as changed, or None; what to say of it; the outcome)."""
        assert reminder.series is not None
        if command.once:
            return self._this_weekend(reminder, session)
        name = owned_name(reminder)
        said = reminder.series.describe()
        current = reminder.series.weekdays()
        if current is None:
            return None, (f"{name} is {said}: it doesn't keep to days of the week, so I can't "
                          "leave some out, and nothing was changed"), Outcome.REFUSED
        kept = (tuple(command.days) if command.exact
                else tuple(d for d in current if (d in command.days) == command.only))
        if command.only and not kept:  # "only on weekends" for a weekday one: those days
            kept = tuple(command.days)
        if kept == current:
            return None, f"{name} is already {said}, nothing to change", Outcome.DONE
        if not kept:
            return None, (f"that would leave {name} no day to go off on: it is {said}. To stop "
                          f"it, say \"cancel {name}\". Nothing was changed"), Outcome.REFUSED
        updated = self.ctx.reminders.keep_days(reminder.id, reminder.series.on_days(kept),
                                               now=self.ctx.now())
        self.ctx.on_reminders_changed()
        self.finder.set_focus(session, updated)
        assert updated.series is not None
        return updated, f"{name} is now {updated.series.describe()}", Outcome.DONE


    def _this_weekend(
        self, reminder: Reminder, session: str
    ) -> tuple[Reminder | None, str, Outcome]:
        """ "turn off my alarm for the weekend": its occurrences on the coming Saturday and
        Sunday taken out of the series, whether or not they are its next ones."""
        assert reminder.series is not None
        now = self.ctx.now()
        name = owned_name(reminder)
        today = now.date()
        saturday = today + timedelta(days=(5 - today.weekday()) % 7 if today.weekday() != 6
                                     else -1)
        weekend = {saturday, saturday + timedelta(days=1)}
        days = reminder.series.weekdays()
        if days is not None and not {"SA", "SU"} & set(days):
            return None, (f"{name} doesn't go off at the weekend ({reminder.series.describe()}),"
                          " nothing to change"), Outcome.DONE
        # Its occurrences this weekend, taken out of the series: the next ones, or ones
        # further on (kept as skips; it could only skip the next ones).
        coming = tuple(t for day in sorted(weekend) for t in reminder.series.on(day)
                       if t > now)[:_MOST_SKIPPED]
        if not coming:
            return None, (f"{name} doesn't go off this weekend ({reminder.series.describe()}),"
                          " nothing to change"), Outcome.DONE
        current = self.ctx.reminders.skip_on(reminder.id, coming)
        self.ctx.on_reminders_changed()
        self.finder.set_focus(session, current)
        return current, f"{name} won't go off this weekend", Outcome.DONE


# At most this many occurrences are skipped for one weekend (an hourly one has 48).
_MOST_SKIPPED = 24 * 60


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _at(when: str) -> str:
    """spoken_time's "07:00 tomorrow" after "the next is": "at 07:00 tomorrow"."""
    return when if when.startswith(("at ", "on ", "in ")) else f"at {when}"
