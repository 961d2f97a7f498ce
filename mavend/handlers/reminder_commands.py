"""Spoken reminder and timer management, parsed before the router: list, cancel, skip,
move, rename, snooze, and a kitchen timer's name, pause, resume, time added or taken off
and time left.

Exact patterns over the normalized utterance, anchored at its start, and each needs a
reminder word ("reminder", "timer", "alarm", "one") or a pronoun ("it", "that"), so
"turn off the lights" or "move the blinds to 50 percent" never land here. Only "move X
to TIME" goes without one ("move the dentist to 11"), and only when TIME reads as a
time. What the words point at (`target`) is found by the handler, in the table.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta

from mavend.handlers.reminder_cancels import CANCEL, NEXT_ONLY, ONE_DAY, parse_cancel
from mavend.handlers.reminder_commands_ru import as_english
from mavend.handlers.reminder_words import EPOCH as _EPOCH
from mavend.handlers.reminder_words import NOUN as _NOUN
from mavend.handlers.reminder_words import POLITE as _POLITE
from mavend.handlers.reminder_words import PRONOUN as _PRONOUN
from mavend.handlers.reminder_words import ReminderCommand, duration_of
from mavend.handlers.reminder_words import has_noun as _has_noun
from mavend.handlers.reminder_words import is_pronoun as _is_pronoun
from mavend.handlers.reminder_words import kind_of as _kind
from mavend.handlers.reminder_words import target_of as _target
from mavend.language.timeparse import resolve_time
from mavend.router.grammar import normalize
from mavend.router.slots import parse_number

_STATE = r"(?: pending| upcoming| running)"
_LIST = re.compile(
    rf"^(?:(?:list|show|read|tell me)(?: me)?(?: all)?(?: of)?(?: my| the)?{_STATE}? "
    rf"{_NOUN}|what {_NOUN} (?:do i have|are (?:set|there|pending|running|on))|"
    rf"(?:what are|which are) (?:my|the){_STATE}? {_NOUN}|(?:do i have|are there) "
    rf"any {_NOUN}(?: set| running)?)$"
)
_SNOOZE = re.compile(
    rf"{_POLITE}snooze(?: (?:{_PRONOUN}|(?:my|the|that) (?:\w+ )?{_NOUN}))?"
    r"(?: (?:for|by|another|for another|a further))?(?: (?P<amount>.+?))?(?: more)?$"
)
_RENAME = (
    re.compile(rf"{_POLITE}rename (?P<target>.+?) (?:to|as) (?P<text>.+)$"),
    re.compile(
        rf"{_POLITE}(?:change|update|edit) (?P<target>.+?) (?:to say|so it says|to read) "
        r"(?P<text>.+)$"
    ),
    re.compile(
        rf"{_POLITE}(?:change|update|edit) the (?:text|wording|words|name) (?:of|on|for) "
        r"(?P<target>.+?) to (?P<text>.+)$"
    ),
)
_MOVE_VERB = r"(?:move|push|shift|reschedule|put|change|bring|set|make)"
_TO = re.compile(
    rf"{_POLITE}(?:move|push|shift|reschedule|put|change|set|make|bring) (?P<target>.+?) "
    r"(?:to|until|till|for|at) (?P<when>.+)$"
)
# How a new timer is introduced: "a", "another", "a second", "one more".
_NEW_TIMER = r"(?:a |an |another |a second |a third |one more |a new |an extra |a further )"
_A_TIMER = r"(?:a |an |the |my |another |a second |a third |one more |a new |an extra )"
_TIMER_NAMED = (
    # "set a pasta timer for 8 minutes", "start an egg timer 5 minutes"
    re.compile(
        rf"{_POLITE}(?:set|start|put on|make|begin)(?: me)? {_A_TIMER}?"
        r"(?P<name>[a-z' ]+?) timer (?:for |of |on )?(?P<dur>.+)$"
    ),
    # "start a 10 minute timer for the eggs"
    re.compile(
        rf"{_POLITE}(?:set|start|put on|make|begin)(?: me)? {_NEW_TIMER}?(?P<dur>.+?) timer "
        r"(?:for|on|called) (?:the |my |a )?(?P<name>[a-z' ]+)$"
    ),
    # "set a timer for 10 minutes for the eggs"
    re.compile(
        rf"{_POLITE}(?:set|start|put on|make)(?: me)? {_NEW_TIMER}?timer (?:for )?(?P<dur>.+?) "
        r"(?:for|on|called) (?:the |my |a )?(?P<name>[a-z' ]+)$"
    ),
    # "set a timer called pasta for 8 minutes"
    re.compile(
        rf"{_POLITE}(?:set|start|put on|make)(?: me)? {_NEW_TIMER}?timer (?:called|named|for the) "
        r"(?P<name>[a-z' ]+?) (?:for )?(?P<dur>.+)$"
    ),
    # After another, its length first: "... and a 10 minute timer for the fish"
    re.compile(
        rf"^(?:(?:and|also|plus) )*{_NEW_TIMER}(?P<dur>[a-z0-9 ]+?) timer (?:for|on|called) "
        r"(?:the |my |a )?(?P<name>[a-z' ]+)$"
    ),
    # Said on its own or after another ("and an egg timer for 5", "pasta timer 8 minutes")
    re.compile(
        r"^(?:(?:and|also|plus) )*(?:(?:an?|another|the|one) )?(?P<name>[a-z']+(?: [a-z']+)?) "
        r"timer (?:for |of )?(?P<dur>.+)$"
    ),
)
# Not a timer's name: the words of a command about one.
_NOT_A_NAME = re.compile(
    r"(?:^| )(?:set|start|pause|stop|cancel|resume|add|take|how|what|is|the|my|your|this|that|"
    r"kitchen|new|quick|little|countdown|another|a|an|second|third|other|extra|more)$"
)
_PAUSE = re.compile(rf"{_POLITE}(?P<verb>pause|hold|freeze|suspend) (?P<target>.+)$")
_RESUME = re.compile(
    rf"{_POLITE}(?:(?P<verb>resume|unpause|un pause|continue|restart|carry on with|unfreeze) "
    r"(?P<target>.+)|"
    r"(?:start|set) (?P<target2>.+?) (?:going )?again)$"
)
# "add another two minutes", "give it an extra five": the amount said as more of it.
_EXTRA = r"(?:another |an extra |an additional |a further |extra )?"
_ADD = re.compile(
    rf"{_POLITE}(?:add|put) {_EXTRA}(?P<amount>.+?) (?:more |extra )?(?:to|onto|on to|on) "
    r"(?P<target>.+)$"
)
_GIVE = re.compile(
    rf"{_POLITE}give (?P<target>.+? timer|it|that) {_EXTRA}(?P<amount>.+?)(?: more| extra)?$"
)
_TAKE = re.compile(
    rf"{_POLITE}(?:take|knock|shave|remove|subtract|cut) (?P<amount>.+?) (?:off|from) "
    r"(?P<target>.+)$"
)
_LEFT = re.compile(
    rf"{_POLITE}(?:how (?:long|much time|much longer|many minutes) "
    r"(?:is |are |do i have |have i got |is there )?"
    r"(?:left|remaining|to go)?|what'?s left|time left)"
    # "what's left on the shopping list" is the list's (it said when "go shopping" was)
    r"(?: (?:on|for|in|of|until|till) (?P<target>(?!.*\blist$).+?))?"
    r"(?: (?:is done|goes off|rings|is up|ends))?$|"
    r"how long (?:until|till|before) (?P<until>.+?)(?: (?:goes off|rings|is up|ends))?$|"
    # "when's my next reminder", "what time is my next alarm": the first one of the kind
    r"(?:when(?:'s| is| s)|what time is|what's|what is) (?P<next>(?:my|the) next "
    r"(?:reminder|alarm|timer))(?: set for| for| due)?$"
)
# "actually make that 11", "make it half past four": the one in focus, at that time.
_MAKE_IT = re.compile(rf"{_POLITE}(?:no |sorry |wait )*make (?:it|that) (?P<when>.+)$")
# "make it 2 degrees cooler", "make it 50 percent": a value for a device, not a time.
_A_VALUE = re.compile(
    r"\b(?:degrees?|percent|per cent|warmer|cooler|colder|hotter|brighter|dimmer|darker"
    r"|louder|quieter|lighter)\b|%"
)
def parse_command(text: str) -> ReminderCommand | None:
    """A spoken reminder-management command, or None. Exact patterns only."""
    said = re.sub(r"(?: (?:please|thanks|thank you))+$", "", normalize(text))
    if not said:
        return None
    said = as_english(said) or said  # a Russian command, as the English one it stands for
    if _LIST.match(said):
        return ReminderCommand("list", kind=_kind(said))
    for parse in (_timer, _snooze, _rename, _timer_edits, _cancel_and_set, parse_cancel, _left,
                  _move):
        command = parse(said)
        if command is not None:
            return command
    return None


# "set another one for 3 minutes", "one more for an hour called laundry": a new one of
# the kind just set; the words are rewritten as that request (the reminder handler knows
# which kind is in focus).
_ANOTHER_ONE = re.compile(
    rf"{_POLITE}(?:(?:and|also|ok|okay|now|then) )*(?:(?:set|start|make|put on|add|do|create|"
    r"give me)(?: me)? )?(?:(?:another|one more|a second|a third|a new|an extra|a further)"
    r"(?: one| (?P<noun>alarm|timer))?|(?<=and |lso |lus )one)"
    # "and one for 6 15", "and another alarm for 6 15" (it named an alarm "another
    # alarm", and a timer "one for 10" set for the first one's 5 minutes)
    r" (?P<rest>(?:for|at|in|of) .+)$"
)
_NAMED_AFTER = re.compile(r" (?:called|named|for (?:the|my)) .+$")
_CLOCK_TIME = re.compile(r"^at |\b(?:am|pm|a m|p m|o ?clock|noon|midnight)\b|\d:\d\d")


def another_one(said: str, kind: str) -> str | None:
    """ "set another one for 3 minutes" as the request it stands for, given the kind of
    the one just set ("timer", "alarm"). A span is a timer whatever came before ("for 10
    minutes" is no alarm); a time of day is another alarm after an alarm. Else None."""
    m = _ANOTHER_ONE.match(normalize(said))
    if m is None:
        return None
    rest = m["rest"]
    kind = m["noun"] or kind
    span = _NAMED_AFTER.sub("", rest).removeprefix("for ").removeprefix("of ")
    if rest.startswith(("for ", "of ")) and duration_of(span) is not None:
        kind = "timer"
    elif _CLOCK_TIME.search(rest):  # "one more for 8 am" after a timer: an alarm
        kind = "alarm"
    if kind == "timer":
        if (number := re.fullmatch(r"for (?P<n>\d+|[a-z]+(?: [a-z]+)?)", rest)) and (
                parse_number(number["n"]) is not None):
            return f"set a timer for {number['n']} minutes"  # "and one for 10": minutes
        return f"set a timer {rest}"
    if kind == "alarm":
        return f"set an alarm {rest}"
    return None


# "set another timer for 3 minutes", "make me a reminder for 5": a new one, not one set.
_NEW_REFERENCE = r"(?:me |a |an |another |one more |new |a new |a second |a third )"


def parse_loose(text: str) -> ReminderCommand | None:
    """A management command without a reminder word ("cancel the dentist"), for a turn
    the router already sent to reminders: there it cannot be the lights or the music."""
    said = re.sub(r"(?: (?:please|thanks|thank you))+$", "", normalize(text))
    if (command := parse_command(said)) is not None:
        return command
    if (m := _TO.match(said)) and not re.match(_NEW_REFERENCE, m["target"]):
        when = _clock(m["when"])
        if resolve_time(when, _EPOCH) is not None and duration_of(when) is None:
            return ReminderCommand("move", what=m["target"].strip(), when=when)
    for pattern, action in ((_PAUSE, "pause"), (_RESUME, "resume")):
        if (m := pattern.match(said)) and (target := m.groupdict().get("target") or ""):
            return ReminderCommand(action, what=target.strip(), kind="timer")
    # "how long on the rice", "how much longer for the eggs": the timer the words name
    asked = re.sub(r"^(how (?:long|much longer)) (on|for) ", r"\1 left \2 ", said)
    if (m := _LEFT.match(asked)) and (target := (m["target"] or m["until"] or "").strip()):
        return ReminderCommand("left", what=target)
    if (m := CANCEL.match(said)) and not _is_pronoun(m["rest"].strip()):
        rest = m["rest"].strip()
        if re.match(r"(?:me |a |an )", rest):
            return None  # "remind me ...", "cancel a ..." are no reference to one set
        next_only = m["verb"] == "skip" or bool(NEXT_ONLY.search(rest))
        return ReminderCommand("skip" if next_only else "cancel", what=rest, next_only=next_only)
    return None


def _timer(said: str) -> ReminderCommand | None:
    """A named timer, or two said together ("a pasta timer for 8 minutes and an egg
    timer for 5"): the first, with the others in `more`."""
    parts = re.split(r" and (?=(?:an?|another|the) [a-z0-9' ]+ timer\b)", said)
    commands = [_one_timer(part) for part in parts]
    if not commands or any(c is None for c in commands):
        return None
    first, *more = commands
    assert first is not None
    return replace(first, more=tuple(c for c in more if c is not None))


def _one_timer(said: str) -> ReminderCommand | None:
    for pattern in _TIMER_NAMED:
        if m := pattern.match(said):
            name = re.sub(r"^(?:the|my|a|an) ", "", m["name"].strip())
            length = timer_length(m["dur"])
            if length is None or not name or _NOT_A_NAME.search(name) or duration_of(name):
                continue  # no name ("a kitchen timer", "another timer"): a later pattern's
            return ReminderCommand("timer", kind="timer", text=name, seconds=length.total_seconds())
    return None


def timer_length(phrase: str) -> timedelta | None:
    """A timer's length; a bare number is minutes ("an egg timer for 5")."""
    if re.fullmatch(r"\d{1,3}", phrase.strip()):
        return timedelta(minutes=int(phrase))
    return duration_of(phrase)


def _snooze(said: str) -> ReminderCommand | None:
    m = _SNOOZE.match(said)
    if m is None:
        return None
    minutes = None
    if m["amount"]:
        length = duration_of(re.sub(r"^(?:another|a further|an extra|extra) ", "", m["amount"]))
        if length is None:
            return None
        minutes = length.total_seconds() / 60
    return ReminderCommand("snooze", minutes=minutes, pronoun=True)


def _rename(said: str) -> ReminderCommand | None:
    for pattern in _RENAME:
        if m := pattern.match(said):
            what, pronoun, kind = _target(m["target"])
            if not (pronoun or _has_noun(what)):
                continue
            return ReminderCommand("rename", what=what, pronoun=pronoun, kind=kind,
                                   text=m["text"].strip())
    return None


def _timer_edits(said: str) -> ReminderCommand | None:
    for pattern, action in ((_PAUSE, "pause"), (_RESUME, "resume")):
        m = pattern.match(said)
        target = (m.groupdict().get("target") or m.groupdict().get("target2") or "") if m else ""
        if _EVERY_TIMER.match(target.strip()):  # "pause all timers": each of them
            return ReminderCommand(action, everything=True, kind="timer")
    if m := _PAUSE.match(said):
        what, pronoun, kind = _target(m["target"])
        if pronoun or kind == "timer" or re.fullmatch(r"(?:the |my )?(?:\w+ )?timers?", what):
            return ReminderCommand("pause", what=what, pronoun=pronoun, kind="timer")
    if m := _RESUME.match(said):
        what, pronoun, kind = _target(m["target"] or m["target2"])
        if pronoun or kind == "timer":
            return ReminderCommand("resume", what=what, pronoun=pronoun, kind="timer")
    for pattern, sign in ((_ADD, 1), (_GIVE, 1), (_TAKE, -1)):
        if m := pattern.match(said):
            what, pronoun, kind = _target(m["target"])
            # "another minute": the article went with "another".
            length = duration_of(m["amount"]) or duration_of(f"a {m['amount']}")
            if length is None or not (pronoun or _has_noun(what)):
                continue
            return ReminderCommand("add_time", what=what, pronoun=pronoun, kind=kind or "timer",
                                   seconds=sign * length.total_seconds())
    return None


def _left(said: str) -> ReminderCommand | None:
    m = _LEFT.match(said)
    if m is None:
        return None
    target = (m["target"] or m["until"] or m["next"] or "").strip()
    done = re.search(r" (?:is|are) (?:done|ready|cooked)$", said) is not None
    if done:  # "how long until the pasta is done": a timer, named by what it times
        target = re.sub(r" (?:is|are) (?:done|ready|cooked)$", "", target)
    if target and not (_has_noun(target) or _is_pronoun(target) or done):
        return None
    if _EVERY_TIMER.match(target):  # "how long left on my timers": each of them, not "which?"
        target = ""
    what, pronoun, kind = _target(target)
    # "how long until my next alarm": an alarm's (it said "You have no timers.")
    return ReminderCommand("left", what=what, pronoun=pronoun, kind=kind or "timer")


_GOES_OFF = re.compile(
    r"^(?:when|what time) (?:does|will|is) (?P<target>.+?) (?:go(?:ing)? off|ring|due)$"
)


def asked_time_left(question: str) -> str | None:
    """The words naming the reminder in "how long left on the eggs", "how long until the
    washing reminder", "when does my dentist reminder go off"; None for other questions.
    Looser than a command (`_left` wants "timer" or "it"): the caller only answers when
    the words pick one pending reminder."""
    said = normalize(question).replace("?", "").strip()
    m = _LEFT.match(said) or _GOES_OFF.match(said)
    if m is None:
        return None
    target = (m.groupdict().get("target") or m.groupdict().get("until") or "").strip()
    target = re.sub(r" (?:is|are) (?:done|ready|cooked)$", "", target)
    return target or None


_EVERY_TIMER = re.compile(
    r"^(?:(?:all|each|every|both) (?:of )?)?(?:the|my|our)? ?(?:timers|of them)$"
)


_SHIFT = re.compile(
    rf"{_POLITE}{_MOVE_VERB} (?P<body>.+?) (?P<dir>later|earlier|sooner|back|forward|forwards)"
    r"(?: (?:by )?(?P<tail>.+))?$"
)


def _shift(said: str) -> ReminderCommand | None:
    """'push it back an hour', 'make the dentist reminder an hour later': the words split
    into what is moved and by how much, wherever the amount reads as a span."""
    m = _SHIFT.match(said)
    if m is None:
        return None
    body, tail = m["body"].split(), (m["tail"] or "").strip()
    splits = [(" ".join(body), tail)] if tail else []
    # "make (the dentist reminder) (an hour) later": the amount is the body's last words.
    # The longest amount that reads as a span ("half an hour", not "an hour").
    longest = min(4, len(body) - 1)
    splits += [(" ".join(body[:-k]), " ".join(body[-k:])) for k in range(longest, 0, -1)]
    for target, amount in splits:
        length = duration_of(amount.removeprefix("by ")) if amount else None
        if length is None or not target:
            continue
        what, pronoun, kind = _target(target)
        if pronoun or _has_noun(what) or target.startswith("the "):
            sign = -1 if m["dir"] in ("forward", "forwards", "earlier", "sooner") else 1
            return ReminderCommand("shift", what=what, pronoun=pronoun, kind=kind,
                                   seconds=sign * length.total_seconds())
    return None


# "no on thursday", "no not tomorrow on thursday", "not tomorrow thursday": the time of the
# one just set, said again (it set a reminder "to no not tomorrow", on Thursday).
_NOT_THAT = re.compile(
    rf"{_POLITE}(?:(?:no|nope|sorry|oops|wait)\s+)+(?P<rest>.+)$|{_POLITE}(?P<not>not\s+.+)$"
)


def time_said_again(said: str) -> str | None:
    """The new time in "no [not <old time>] <new time>", or None. Only the caller knows
    whether a reminder was just set for it to be the time of."""
    m = _NOT_THAT.match(normalize(said))
    if m is None:
        return None
    words = (m["rest"] or m["not"]).split()
    if words[0] == "not":  # "not tomorrow on thursday": the old time, then the new one
        for cut in range(2, len(words)):
            old, new = " ".join(words[1:cut]), " ".join(words[cut:]).removeprefix("but ")
            if _whole_time(old) and _whole_time(new):
                return _clock(new)
        return None
    new = " ".join(words).removeprefix("but ")
    return _clock(new) if _whole_time(new) else None


def _whole_time(words: str) -> bool:
    found = resolve_time(_clock(words), _EPOCH)
    return found is not None and found.phrase == _clock(words) and duration_of(words) is None


def _clock(words: str) -> str:
    """normalize() wrote "6:30" as "6 30": a 24-hour pair reads as a clock again."""
    return re.sub(r"\b([01]?\d|2[0-3]) ([0-5]\d)\b", r"\1:\2", words.strip())


def _make_it(said: str) -> ReminderCommand | None:
    m = _MAKE_IT.match(said)
    if m is None or _A_VALUE.search(m["when"]):
        return None
    when = _clock(m["when"])
    if duration_of(when) is not None and not when.startswith("in "):
        # "make it 15 minutes" (after a timer, or a reminder just set): from now. It set
        # a new reminder "to make it".
        return ReminderCommand("move", what="it", pronoun=True, when=f"in {when}")
    if resolve_time(when, _EPOCH) is None:
        return None
    return ReminderCommand("move", what="it", pronoun=True, when=when)


_BARE_NUMBER = re.compile(rf"{_POLITE}(?:no |sorry |wait )*make (?:it|that) (?P<n>[a-z0-9 ]+)$")


def bare_minutes(said: str) -> str | None:
    """ "make it 15": the number alone, as a timer's minutes ("in 15 minutes"), or None.
    Only the caller knows whether a timer is what "it" is."""
    m = _BARE_NUMBER.match(normalize(said))
    number = parse_number(m["n"]) if m else None
    return f"in {number} minutes" if number is not None and 0 < number <= 999 else None


# "cancel my alarm for tomorrow and set one for 8 instead": that one moved (it looked for
# an alarm called "my alarm for tomorrow morning and set one for 8 instead")
_CANCEL_AND_SET = re.compile(
    rf"{_POLITE}(?:cancel|scrap|delete|ditch|drop|get rid of) (?P<ref>.+?),? and (?:just )?"
    r"(?:set|make|put|do|create|give me) (?:one|another|another one|a new one|it|an? (?:new )?"
    r"(?:alarm|reminder|timer)) (?P<when>(?:(?:for|at) )?.+?)(?: instead)?$"
)


def _cancel_and_set(said: str) -> ReminderCommand | None:
    m = _CANCEL_AND_SET.match(said)
    if m is None or not (_has_noun(m["ref"]) or _is_pronoun(m["ref"])):
        return None
    day = ONE_DAY.search(m["ref"])
    ref = ONE_DAY.sub("", m["ref"]).strip() if day else m["ref"]
    what, pronoun, kind = _target(ref)
    when = m["when"].removeprefix("for ")
    if duration_of(when) is not None:
        if kind != "timer":
            return None
        when = f"in {when}"  # "cancel the timer and set one for 10 minutes": 10 from now
    elif day:
        when = f"{when} {day['day']}"
    if resolve_time(when, _EPOCH) is None:
        return None
    return ReminderCommand("move", what=what, pronoun=pronoun, kind=kind, when=when)


def _move(said: str) -> ReminderCommand | None:
    if re.match(rf"{_POLITE}\w+ (?:me )?(?:a|an|another|new) ", said):
        return None  # "set an alarm for 7", "make a reminder for 5": a new one, not a move
    if re.match(rf"{_POLITE}(?:set|make|create|add|start) (?:me )?(?:some |more |new )?"
                r"(?:alarms|reminders|timers)\b", said):
        return None  # "set alarms for 6 and 6 30": new ones (it moved the alarm set to 18:30)
    if (shifted := _shift(said)) is not None:
        return shifted
    if (made := _make_it(said)) is not None:
        return made
    if m := _TO.match(said):
        what, pronoun, kind = _target(m["target"])
        when = _clock(m["when"])
        if duration_of(when) is not None and not re.match(r"^in ", when):
            return None  # "set the timer to 5 minutes" is a timer's length, not a time
        if resolve_time(when, _EPOCH) is None:
            return None
        verb_ok = re.match(rf"{_POLITE}(?:move|push|shift|reschedule)\b", said) is not None
        if pronoun or _has_noun(what) or verb_ok:
            return ReminderCommand("move", what=what, pronoun=pronoun, kind=kind, when=when)
    return None
