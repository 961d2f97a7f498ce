"""Two commands in one breath: "wake me at 6:30 and remind me to take my pills at 8".

    two_commands(grammar, said, now) -> (first, second) | None

Split only where each half is a whole command of the grammar's: "remind me to call mum
and dad at five" is one reminder, and a half that only a model could read is never
split off. A second half that says "another" takes the first's command with its own
time: "set a timer for 3 minutes and another for 10 minutes" is two timers (it was one,
named "3 minutes and another", for 10 minutes); one with a time and a task of its own after
a reminder is a reminder too ("... and at 8 pm to give her the pills"), and a time alone
is the same reminder again ("take my pills at 8 am and 8 pm").

    two_questions(grammar, answers, said) -> (first, second) | None

Two questions mavend answers itself ("what's the weather like and what time is it"): split
only where each half is one the grammar or mavend.answers reads; never for a model.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

from mavend.language.timeparse import find_time
from mavend.language.timeparse.lexing import AND_CARRIED_ON, WEEKDAY
from mavend.router.decision import Intent
from mavend.router.grammar import CommandGrammar, GrammarMatch

_JOINT = re.compile(r"\s+(?:and then|and also|and|then)\s+")
_ANOTHER = re.compile(
    r"^(?:(?:set|make|start|add)\s+)?(?:another|one more)(?:\s+one)?\s+(?P<time>\S.*)$"
)


def two_commands(grammar: CommandGrammar, said: str, now: datetime) -> tuple[str, str] | None:
    """The two halves of `said` (normalized), each a command, or None."""
    if not _JOINT.search(said) or _one_time_said_whole(grammar, said, now):
        return None  # the grammar is asked about the whole only when there is a joint
    if AND_CARRIED_ON.search(said):
        return None  # "at 7 tomorrow and every day after that": one series from tomorrow
    for joint in _JOINT.finditer(said):
        left, right = said[: joint.start()].strip(), said[joint.end() :].strip()
        if not left or not right or (_REPEAT_DAYS.search(left) and _A_DAY.match(right)):
            continue  # "every monday, wednesday and saturday": one repeat's days
        first = grammar.match(left)
        if first is None or _system_only(first):
            continue
        second = grammar.match(right)
        if second is None:
            right = (_another(left, right, now) or _remind_me_too(left, right, now)
                     or _at_another_time(left, first, right, now)
                     or _same_verb(grammar, left, first, right) or right)
            second = grammar.match(right) if right else None
        if (second is None and first.intent is Intent.REMINDER and _A_TIMER.search(left)
                and _DEVICE_VERB.match(right)):
            # "set a timer for 10 minutes and turn off the kitchen light" with no kitchen
            # light: the timer, and the rest asked for on its own (it named the timer "and
            # turn off the kitchen light", and nobody heard that there was none)
            return left, right
        if second is None or _system_only(second):
            continue
        return left, right
    return None


# The system commands that change something in the room: "turn the volume down and pause
# the music" runs both (the pause was dropped). The others ("stop", "help", "repeat")
# are about the conversation itself and never half of two.
_ACTING_SYSTEM = frozenset({"louder", "quieter"})


def _system_only(match: GrammarMatch) -> bool:
    return match.intent is Intent.SYSTEM and match.name not in _ACTING_SYSTEM


_DAY = rf"{WEEKDAY}s?"
_REPEAT_DAYS = re.compile(rf"\b(?:every|each|on)\s+{_DAY}(?:,?\s+{_DAY})*,?$")
_A_DAY = re.compile(rf"{_DAY}\b")
# A timer's words never hold another request ("remind me to call mum and turn off the
# heating" is one task, two things to do).
_A_TIMER = re.compile(r"\btimer\b")
_DEVICE_VERB = re.compile(
    r"^(?:please\s+)?(?:turn|switch|lock|unlock|open|close|shut|dim|brighten|put the|start the"
    r"|stop the)\b"
)


def _one_time_said_whole(grammar: CommandGrammar, said: str, now: datetime) -> bool:
    """ "a timer for 1 hour and 30 minutes": one reminder whose one time holds the joint."""
    whole = grammar.match(said)
    when = whole.slots.get("when", "") if whole is not None else ""
    if whole is None or whole.intent is not Intent.REMINDER or not _JOINT.search(f" {when} "):
        return False
    one = find_time(when, now)
    return one is not None and " ".join(one.phrase.split()) == when


_REMIND_LEAD = re.compile(r"^(?:(?:please|can you|could you)\s+)*(?P<lead>remind me)\b")
_TASK = re.compile(r"\b(?:to|about)\s+\w")


def _remind_me_too(left: str, right: str, now: datetime) -> str:
    """"remind me at 6 pm to feed the cat and at 8 pm to give her the pills": the second
    reminder said without its "remind me" (it was one reminder, "feed the cat and at 8 pm
    to give her the pills"). Only with a time and a task of its own: "remind me to call
    mum and dad at five" stays one."""
    lead = _REMIND_LEAD.match(left)
    if lead is None or not _TASK.search(right) or find_time(right, now) is None:
        return ""
    return f"{lead['lead']} {right}"


_ARTICLE = re.compile(r"^(?:the|my|our)\s+")


def _same_verb(grammar: CommandGrammar, left: str, first: GrammarMatch, right: str) -> str:
    """"turn off the office lamp and the office fan": the second device with the first's
    verb ("turn off the office fan"; it was one device called "office lamp and the office
    fan", unknown). "turn on the hallway light and the garage light": a room's lights the
    same way. Only when the second half is a device (or a room's lights) of the home's."""
    if first.intent is not Intent.ACT:
        return ""
    device, room = first.slots.get("device", ""), first.slots.get("room", "")
    other = _ARTICLE.sub("", right)
    if device and f" {device}" in f" {left}":
        at = left.rfind(device)
        again = f"{left[:at]}{other}{left[at + len(device):]}"
        found = grammar.match(again)
        if found is None or found.name != first.name or found.slots.get("device") != other:
            return ""
        return again
    lights = re.search(rf"\b{re.escape(room)}\s+(?:lights?|lamps?)\b", left) if room else None
    if lights is None and room and left.endswith(f" {room}"):
        # "turn on the lights in the kids room and the hallway": the second room's too
        lights = re.search(rf"{re.escape(room)}$", left)
    if lights is None:
        return ""
    again = f"{left[:lights.start()]}{other}{left[lights.end():]}"
    found = grammar.match(again)
    verb = first.name.rsplit("_", 1)[-1]  # "on" of lights_on: the same for device_on
    if found is None or found.intent is not Intent.ACT or not found.name.endswith(f"_{verb}"):
        return ""
    return again


_AT_TIME = re.compile(r"^(?:at|in|on|by|for)\b")
_BARE_CLOCK = re.compile(r"^\d{1,2}(?:[: ]\d{2})?(?: ?(?:am|pm|a m|p m))?$")
_PART_OF_DAY = {"morning": "in the morning", "afternoon": "in the afternoon",
                "evening": "in the evening", "night": "at night"}


def _at_another_time(left: str, first: GrammarMatch, right: str, now: datetime) -> str:
    """"remind me to take my pills at 8 am and 8 pm", "... in the morning and in the
    evening": the same reminder again at the second time (it was one reminder, "take your
    pills and 8 pm"). Only when the second half is a time and nothing else."""
    if first.intent is not Intent.REMINDER:
        return ""
    before = find_time(left, now)
    # The first time must end the first half: "remind me tomorrow to take the pills at 7
    # and at 8" has its day apart from its hours, and stays one reminder, the words kept.
    if before is None or not left.endswith(before.phrase):
        return ""
    said = right
    lead = _AT_TIME.match(before.phrase)
    if right in _PART_OF_DAY:  # "tomorrow morning and evening": tomorrow evening
        named = re.search(rf"\b(?:{'|'.join(_PART_OF_DAY)})\b", before.phrase)
        said = (before.phrase[:named.start()] + right + before.phrase[named.end():]
                if named else _PART_OF_DAY[right])
    elif lead and _BARE_CLOCK.match(right):  # "at 7 and 8", "an alarm for 6 and 6 30"
        said = f"{lead.group(0)} {right}"
    after = find_time(said, now)
    if after is None or " ".join(after.phrase.split()) != said:
        return ""
    at = left.rfind(before.phrase)
    return f"{left[:at]}{said}{left[at + len(before.phrase):]}"


def _another(left: str, right: str, now: datetime) -> str:
    """"another for 10 minutes" after "set a timer for 3 minutes": "set a timer for 10
    minutes"; "" when the halves do not read that way."""
    asked = _ANOTHER.match(right)
    if asked is None:
        return ""
    before, after = find_time(left, now), find_time(asked["time"], now)
    if before is None or after is None or not left.endswith(before.phrase):
        return ""
    return left[: len(left) - len(before.phrase)] + asked["time"]


# Before a second question: "... and what time is it", "... and how cold is it outside"
_QUESTION_JOINT = re.compile(
    r"\s+(?:and also|and then|and|also|plus)\s+(?=(?:what|whats|what's|how|when|where|which"
    r"|who|is|are|will|do|does)\b)"
)


def two_questions(
    grammar: CommandGrammar, answers: Callable[[str], str | None] | None, said: str
) -> tuple[str, str] | None:
    """The two questions of `said`, when each is answered without a model; else None."""
    def answered(text: str) -> bool:
        found = grammar.match(text)
        if found is not None:
            return found.intent is Intent.QUERY
        return answers is not None and answers(text) is not None

    for joint in _QUESTION_JOINT.finditer(said):
        left, right = said[: joint.start()].strip(), said[joint.end():].strip()
        if len(left.split()) < 2 or len(right.split()) < 2:
            continue
        # One of the two may be a question about something kept ("what's the wifi
        # password and what time is it"): the other is still one answered without a model.
        if (answered(left) or _ASKS_ABOUT.match(left)) and (
                answered(right) or _ASKS_ABOUT.match(right)) and (
                answered(left) or answered(right)):
            return left, right
    return None


# A question about a thing of the household's: "what's the wifi password", "where are my
# keys", "when is lucy's birthday".
_ASKS_ABOUT = re.compile(
    r"^(?:what|where|who|when)(?:'s|s| is| are| was)\s+(?:my|our|the|[a-z]+'s)\s+[a-z]"
)
