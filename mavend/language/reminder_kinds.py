"""What a reminder request asks for: a timer, an alarm or a reminder; and the question
that asks for its missing time in those words.

A request that names its kind and nothing else ("set me a timer", "I need an alarm")
is answered with the question its kind calls for: a timer runs for a length of time,
an alarm goes off at a clock time, a reminder is said at a moment. The answer
("ten minutes", "seven thirty") then sets that kind, not a reminder of the words
"set me a timer".
"""

from __future__ import annotations

import re

from mavend.language.person import to_second_person
from mavend.language.timeparse.clocks import ALARM_RE

TIMER = "timer"
ALARM = "alarm"
REMINDER = "reminder"

# English or Russian ("таймер", "засеки": time it).
TIMER_RE = re.compile(r"(?<![^\W_])(?:timers?|таймер\w*|засеки)(?![^\W_])")

# The request in a kind's own words: what a follow-up's answer is read after, and
# what the request is rebuilt from ("ten minutes" -> "set a timer for ten minutes").
REQUEST_WORDS = {TIMER: "set a timer", ALARM: "set an alarm", REMINDER: "remind me"}

_QUESTIONS = {
    TIMER: "For how long?",
    ALARM: "What time should the alarm go off?",
    REMINDER: "When should I remind you?",
}


def reminder_kind(said: str) -> str:
    """TIMER, ALARM or REMINDER for normalized words (a timer wins: "a timer for my
    alarm clock's battery" is a timer; "remind me ... when i wake up" is a reminder)."""
    said = without_trigger(said)
    if TIMER_RE.search(said):
        return TIMER
    if ALARM_RE.search(said):
        return ALARM
    return REMINDER


# A moment said as something the user does, which nothing on the box can sense: "when i
# get home", "once i leave work", "next time i'm at the shop". The reminder still needs a
# clock time; the question says why (it asked "When should I remind you?" as if the
# words had not been said, or read "remind me when i get home to ..." as a question).
_DOES = (
    r"(?:(?:i|we) (?:get|got|arrive|leave|reach|come|go|walk|wake|finish|see|head|pass|sit"
    r"|start|stop|land|drive|park)|(?:i|we)(?: am|'m| are|'re) (?:at|in|out|back|home|near|by"
    r"|on|there|done|finished|up|leaving|going|heading))\b"
)
_SO = r"(?:when|once|as soon as|whenever|next time|the next time|after)"
TRIGGER = re.compile(rf"\b(?P<clause>{_SO} {_DOES}.*)$")
_TRIGGER_FIRST = re.compile(
    rf"^(?P<lead>(?:(?:please|can you|could you|will you) )*remind (?:me|us)) "
    rf"(?P<clause>{_SO} {_DOES}.*?) (?P<to>to|about|that) "
    r"(?!(?:the|a|an|my|our|your|his|her|their|work|school|bed|town|church|class|"
    r"the shop|the office|the station)\b)(?P<task>\S.*)$"
)


def without_trigger(said: str) -> str:
    """The words without a trailing "when i get home" (its "wake" names no alarm)."""
    return TRIGGER.sub("", said).strip()


def trigger_first(said: str) -> str | None:
    """ "remind me when i get home to feed the cat" -> "remind me to feed the cat when i
    get home" (the order the reminder grammar reads); None for other words."""
    match = _TRIGGER_FIRST.match(said)
    if match is None:
        return None
    return f"{match['lead']} {match['to']} {match['task']} {match['clause']}"


def when_question(kind: str, said: str = "") -> str:
    """The question for a missing time, in the words of the kind asked for; with the
    moment said as something the user does ("when i get home"), why it is asked."""
    question = _QUESTIONS.get(kind, _QUESTIONS[REMINDER])
    if said and (trigger := TRIGGER.search(trigger_first(said) or said)):
        clause = to_second_person(trigger["clause"], starts_sentence=False)
        return f"I can't tell {clause}, so I need a time. {question}"
    return question
