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
    alarm clock's battery" is a timer)."""
    if TIMER_RE.search(said):
        return TIMER
    if ALARM_RE.search(said):
        return ALARM
    return REMINDER


def when_question(kind: str) -> str:
    """The question for a missing time, in the words of the kind asked for."""
    return _QUESTIONS.get(kind, _QUESTIONS[REMINDER])
