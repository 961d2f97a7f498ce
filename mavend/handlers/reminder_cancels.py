"""Cancelling and skipping by voice: "cancel the dentist reminder", "stop reminding me
about the bins", "i don't need my alarm on friday", "the dentist reminder, delete it",
"cancel everything". Exact patterns over the normalized words, each with a reminder word
or a pronoun (mavend.handlers.reminder_words).
"""

from __future__ import annotations

import re

from mavend.handlers.reminder_words import (
    NOUN,
    OWN_PRONOUN,
    POLITE,
    ReminderCommand,
    has_noun,
    is_pronoun,
    kind_of,
)
from mavend.language.timeparse.lexing import WEEKDAY

_CANCEL_VERB = (
    r"(?:cancel|delete|remove|clear|clear out|drop|turn off|stop|get rid of|scrap|kill|"
    r"forget about|erase|bin|ditch|switch off|wipe|wipe out|purge|throw away|trash)"
)
CANCEL = re.compile(rf"{POLITE}(?P<verb>{_CANCEL_VERB}|skip) (?P<rest>.+)$")
# "the dentist reminder, delete it": the reference first, the verb and "it" after it.
_THEN_IT = re.compile(
    r"^(?P<pre>.+?) (?:so |just |please )*(?:cancel|delete|remove|get rid of|scrap|bin|drop) "
    r"(?:it|that|that one|this one)(?: please)?$"
)
_NO_LONGER = re.compile(
    r"\b(?:i )?(?:don'?t|do not|no longer) (?:need|want)\b|\b(?:any ?more|any longer)\b"
)
_EVERYTHING = re.compile(r"^(?:all|every|each)(?: of)?(?: my| the| those| these)? ")
NEXT_ONLY = re.compile(r"\b(?:just|only)\b|\bthe next\b|\bnext\b|\bthis week'?s?\b")


# "stop reminding me about the bins", "you can stop reminding me to water the plants",
# "no more reminders about the bins": that reminder (or series) cancelled.
# Said after the reminder it ends ("... about the bins anymore"): no part of its name.
NO_LONGER_TAIL = r"(?: any ?more| any longer| from now on| ever again| again)?$"
_STOP_REMINDING = re.compile(
    rf"{POLITE}(?:(?:you can |please )?(?:stop|quit) reminding me|no more reminders?|"
    r"(?:don't|dont|do not) remind me) (?:about |to |of |for |that )?(?P<what>.+?)"
    + NO_LONGER_TAIL
)


# One day said: "today", "tomorrow night", "this coming friday" (ONE_DAY's words too).
_DAY_SAID = (r"today|tonight|tomorrow(?: morning| night)?|this morning"
             rf"|(?:this (?:coming )?)?{WEEKDAY}(?: morning| night)?")


# "no more bin reminders", "i don't need the plant reminder anymore", "never mind the
# dentist reminder": one named by its reminder word (a bare "never mind" withdraws the turn).
# With a day ("i don't need my alarm on friday", "no alarm tomorrow please"): that day's
# (it set an alarm named "i dont need my alarm" for Friday).
_NO_NEED = re.compile(
    rf"{POLITE}(?:no more (?P<more>.+? {NOUN})|(?:i|we) (?:don'?t|do not|no longer) need "
    rf"(?P<need>.+? {NOUN})(?: (?:on |for )?(?P<day>{_DAY_SAID}))?"
    rf"(?: any ?more| any longer| now| after all)?"
    rf"|(?:never mind|forget) (?P<mind>.+? {NOUN})"
    rf"|no (?P<no>alarm) (?:on |for )?(?P<day2>{_DAY_SAID})(?: please| thanks)?)$"
)


# The alarm of one day not wanted, said as not being woken: "no need to wake me tomorrow",
# "i don't need waking on friday", "let me have a lie in tomorrow" (the first two set an
# alarm at 09:00 named by the words). With a reason first: "i'm off work tomorrow so no
# alarm", the day said in the reason.
_NO_WAKE_ASK = (
    r"(?:(?:there's |there is )?no need to (?:wake|get) me(?: up)?|no alarm|no wake ?up(?: call)?"
    r"|(?:i|we) (?:don'?t|do not) need (?:waking(?: up)?|to be woken(?: up)?|to get up early"
    r"|an alarm|my alarm|the alarm|a wake ?up(?: call)?)"
    r"|(?:you can |just )?(?:skip|turn off|switch off|cancel) (?:my|the) alarm"
    r"|let me (?:sleep in|lie in|have a lie in)|i(?:'m| am) having a lie in"
    r"|(?:please )?(?:don'?t|do not) (?:wake|get) me(?: up)?)"
)
_NO_WAKE = re.compile(
    rf"{POLITE}{_NO_WAKE_ASK} (?:on |for )?(?P<day>{_DAY_SAID})(?: please| thanks| then)?$"
)
_REASON_NO_WAKE = re.compile(
    rf"^(?P<reason>.+?),? (?:so|and so|which means|meaning) {_NO_WAKE_ASK}"
    r"(?: (?:please|thanks|then|for once))?$"
)


def _no_wake(said: str) -> ReminderCommand | None:
    """That day's alarm skipped: the series goes on, a one-off is cancelled."""
    day = ""
    if unwoken := _NO_WAKE.match(said):
        day = unwoken["day"]
    elif (reason := _REASON_NO_WAKE.match(said)) and (named := ONE_DAY.search(reason["reason"])):
        day = named["day"]
    if not day:
        return None
    return ReminderCommand("cancel", what=f"alarm {day}", kind="alarm", day=day)


# Everything at once, named by no kind (a bare "cancel" is the system's: the question
# asked, or nothing). Asked about first, like any bulk cancel.
_ALL_OF_IT = re.compile(
    rf"{POLITE}(?:cancel|delete|remove|scrap|get rid of|clear) (?:absolutely )?"
    r"(?:everything|it all|all of (?:it|them)|all (?:of )?(?:that|those|these)|the lot)"
    r"(?: (?:i(?: have|'ve|ve)? set|i have|that'?s set|set|pending|for (?:today|now)))?$"
)


def parse_cancel(said: str) -> ReminderCommand | None:
    if (stop := _STOP_REMINDING.match(said)) and not is_pronoun(stop["what"]):
        what = stop["what"]
        return ReminderCommand("cancel", what=what, kind=kind_of(what))
    if (unwoken := _no_wake(said)) is not None:
        return unwoken
    if (unneeded := _NO_NEED.match(said)) is not None:
        what = unneeded["more"] or unneeded["need"] or unneeded["mind"] or unneeded["no"]
        day = unneeded["day"] or unneeded["day2"] or ""
        if is_pronoun(what):  # "i don't need that reminder anymore"
            return ReminderCommand("cancel", pronoun=True, day=day)
        return ReminderCommand("cancel", what=f"{what} {day}".strip(), kind=kind_of(what), day=day)
    if (then := _THEN_IT.match(said)) and has_noun(then["pre"]):
        what = " ".join(_NO_LONGER.sub(" ", then["pre"]).split())
        return ReminderCommand("cancel", what=what, kind=kind_of(what))
    if _ALL_OF_IT.match(said):  # "cancel everything": every timer, alarm and reminder
        return ReminderCommand("cancel", everything=True)
    m = CANCEL.match(said)
    if m is None:
        return None
    rest = m["rest"].strip()
    skip = m["verb"] == "skip"
    everything = bool(_EVERYTHING.match(rest))
    if everything:
        rest = _EVERYTHING.sub("", rest)
    if is_pronoun(rest):
        if not OWN_PRONOUN.fullmatch(m["verb"]):
            return None  # "stop that", "skip that": the system's or the music's
        return ReminderCommand("cancel", pronoun=True)
    if not has_noun(rest):
        return None
    kind = kind_of(rest)
    # "clear my reminders", "delete the timers": a plural with nothing else is all of them.
    bare_plural = re.fullmatch(r"(?:my |the |those |these |our )?(?:reminders|timers|alarms)", rest)
    next_only = skip or bool(NEXT_ONLY.search(rest))
    # "turn off my alarm for tomorrow": that day's, not the series (it was cancelled). The
    # day stays in `what` too: it tells "friday's dentist reminder" from tomorrow's.
    named = None if everything or bare_plural else ONE_DAY.search(rest)
    day = named["day"] if named else ""
    what = rest if not (everything or bare_plural) else ""
    return ReminderCommand(
        "skip" if next_only else "cancel",
        what=what,
        everything=everything or bool(bare_plural),
        kind=kind,
        next_only=next_only,
        day=day,
    )


ONE_DAY = re.compile(rf"\s*\b(?:for|on)?\s*(?P<day>{_DAY_SAID})(?:'?s)?\b")
