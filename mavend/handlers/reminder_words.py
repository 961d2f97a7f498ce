"""The words every spoken reminder command is made of: the reminder nouns and pronouns,
the polite lead, the parsed command itself (`ReminderCommand`), and a span said in words
(`duration_of`). Shared by the command parsers (reminder_commands, reminder_cancels).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from mavend.language.timeparse import resolve_time

NOUN = r"(?:reminders?|timers?|alarms?|ones?)"
PRONOUN = r"(?:it|(?:that|this)(?: one| reminder| timer| alarm)?)"
# Said before the command: hesitations, "please", "could you" ("um could you please ...").
POLITE = (
    r"^(?:(?:um|uh|er|erm|so|oh|ok|okay|hey|right|actually|and|now) )*"
    r"(?:(?:can|could|would) you |will you )?(?:please |just )?"
)
# Verbs whose "it" / "that" may be something else ("stop that", "skip that" song).
OWN_PRONOUN = re.compile(
    r"cancel|delete|remove|get rid of|scrap|erase|forget about|drop|bin|ditch"
)
# A fixed instant to read durations against ("8 minutes" means the same at any time).
EPOCH = datetime(2001, 1, 1, 12, tzinfo=UTC)


@dataclass(frozen=True)
class ReminderCommand:
    # list | cancel | skip | snooze | move | shift | rename | timer | pause | resume
    # | add_time | left
    action: str
    what: str = ""  # the words that point at one ("the dentist reminder", "my 3 o'clock one")
    everything: bool = False  # "all my timers", "clear my reminders"
    kind: str = ""  # "timer" | "alarm" | "reminder" when one was named; "" any
    minutes: float | None = None  # snooze length
    pronoun: bool = False  # "it", "that": the one in focus
    when: str = ""  # move: the new time, as said ("friday at 10")
    seconds: float = 0.0  # shift / add_time: signed; timer: its length
    text: str = ""  # rename: the new words; timer: its name
    next_only: bool = False  # "just the next", "skip": one occurrence of a series
    day: str = ""  # cancel / skip: the day said ("tomorrow", "on friday"): that occurrence
    more: tuple[ReminderCommand, ...] = ()  # timer: others said in the same breath


def duration_of(phrase: str) -> timedelta | None:
    """'8 minutes', 'an hour', 'half an hour' -> the span; None when it is none."""
    phrase = phrase.strip()
    if not phrase:
        return None
    found = resolve_time(phrase if re.match(r"^(?:in|for) ", phrase) else f"for {phrase}", EPOCH)
    if found is None or found.duration is None or found.duration.total_seconds() <= 0:
        return None

    def bare(text: str) -> str:
        return re.sub(r"^(?:for|in) ", "", " ".join(text.lower().split()))

    # The whole phrase must be the span ("reminder half an hour" is no length).
    return found.duration if bare(found.phrase) == bare(phrase) else None


def kind_of(words: str) -> str:
    if re.search(r"\btimers?\b", words):
        return "timer"
    if re.search(r"\balarms?\b", words):
        return "alarm"
    if re.search(r"\breminders?\b", words):
        return "reminder"
    return ""


def is_pronoun(words: str) -> bool:
    return re.fullmatch(PRONOUN + r"(?: one)?", words) is not None


def has_noun(words: str) -> bool:
    return re.search(rf"\b{NOUN}\b", words) is not None


def target_of(words: str) -> tuple[str, bool, str]:
    """(what, pronoun, kind) for the words that point at a reminder."""
    words = words.strip()
    return words, is_pronoun(words), kind_of(words)
