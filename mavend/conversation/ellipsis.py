"""Ellipsis: a short utterance read as the previous turn with one part swapped. Pure.

    "remind me to call mum at five"  +  "and dad at six"   -> remind me to call dad at six
    "what's on my calendar tomorrow" +  "and on friday?"   -> what's on my calendar on friday
    "set the volume to 40 percent"   +  "and 60"           -> the same act, level 60
    "turn the volume up"             +  "more"             -> the same command again

Three steps, each a plain function of its inputs (no clock, no database, no model):

- `topic_of(decision, said)`: what a finished turn leaves for the next one to continue
  (its intent, its words, the time words in them, the object a new one would replace);
- `parse_fragment(said, find_time)`: the pieces a short utterance names: a time, an
  object (a person, a thing, a value), or "again"; None when it is more than that;
- `continues(...)` says whether the fragment is read against the topic at all, and
  `rebuild(topic, fragment)` gives the request in words plus the hints stage 2 checks.

What is rebuilt is only ever a request: the caller runs it through the router's slot
extractor (the allowlist, typed act slots, the time resolver) and the normal handler
(a destructive act asks first). Nothing here can name an act, a value or a source the
two turns did not say.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any

from mavend.answers import calc
from mavend.answers.text import read
from mavend.language.anchors import names_another, own_anchors
from mavend.language.reminder_kinds import ALARM, REQUEST_WORDS, TIMER, reminder_kind
from mavend.language.timeparse import TimeResolution
from mavend.router.decision import Decision, Intent, Source, Stage
from mavend.router.gate import is_fragment
from mavend.router.grammar import normalize
from mavend.router.slots import asks_for_reminder, parse_number
from mavend.smalltalk import asked_for

# Finds the time words in a text: mavend.language.timeparse.find_time with `now` bound
# (its result's `phrase` is the words as said, its `kind` "time", "date", ...).
TimeFinder = Callable[[str], TimeResolution | None]


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Leading words that carry nothing ("uh and tuesday", "okay so what about friday").
_FILLERS = _set("uh uhh um umm uhm er erm hmm hm oh ah ok okay so well right yeah")
# Leading cues of an ellipsis, longest first: what remains is the fragment.
_CUES: tuple[tuple[str, ...], ...] = tuple(
    tuple(cue.split())
    for cue in sorted(
        [
            "and what about", "what about", "how about", "and how about", "but what about",
            "the same for", "same for", "same thing for", "the same thing for", "same with",
            "the same with", "same on", "same at", "and the same for", "do the same for",
            "and also", "and then", "and", "also", "plus", "then", "now", "but",
        ],
        key=lambda c: -len(c.split()),
    )
)
# Trailing words that carry nothing ("and dad too", "pipewire as well please"); the
# first three mark an ellipsis as a leading "and" does ("dad too").
_TAILS: tuple[tuple[str, ...], ...] = (
    ("as", "well"), ("too",), ("also",), ("please",), ("instead",), ("then",), ("though",),
)
_MARKING_TAILS = frozenset(_TAILS[:3])
# Words around an object once its time is cut out ("for dad at six" -> "dad"); an
# article stays in front of it ("and the dog at five" -> "the dog").
_PREPOSITIONS = _set("for on at to in with about by of")
_CONNECTORS = _PREPOSITIONS | _set("the a an")
# A whole fragment that asks for the same thing once more.
REPEATS = frozenset(
    [
        "again", "more", "once more", "one more time", "a bit more", "a little more",
        "some more", "even more", "a little bit more", "do it again", "do that again",
        "same again", "the same again", "same thing again", "again please", "more please",
    ]
)
# An object is a few words ("dad", "the other one", "my sister"); more is a request.
MAX_OBJECT_WORDS = 3
# Reminder tasks keep their verb (and its particle) when a new object comes in:
# "call mum" + "dad" -> "call dad"; "pick up the kids" + "the dog" -> "pick up the dog".
_PARTICLES = _set("up out off in on back down over")
# A query's object follows the last of these ("how old is mum", "the weather in paris").
_QUERY_PIVOTS = _set("of for in about at from with is are was")
# Sources whose question has no object to swap: the answer is the clock or the calendar.
_FIXED_SOURCES = frozenset({Source.CLOCK, Source.REMINDERS})
# System commands that "more" / "again" repeat.
REPEATABLE_SYSTEM = frozenset({"louder", "quieter"})


@dataclass(frozen=True)
class Fragment:
    """What a short utterance names. At least one of time / obj / repeat is set."""

    said: str  # the words as given (the turn passes them normalized, wake word stripped)
    cue: bool = False  # it began with "and", "what about", "same for", ...
    time_phrase: str = ""  # the time words, as said ("on friday", "at six")
    time_kind: str = ""  # the resolver's kind of them: "date" is a day without a clock time
    obj: str = ""  # a person, a thing or a value ("dad", "other one", "60")
    repeat: bool = False  # "again", "more", "once more"

    @property
    def only_time(self) -> bool:
        return bool(self.time_phrase) and not self.obj and not self.repeat


@dataclass(frozen=True)
class Topic:
    """What a finished turn leaves for an ellipsis to continue (stored as JSON)."""

    intent: str
    text: str  # the request's words, normalized: as said, or as rebuilt
    time_phrase: str = ""  # the time words inside `text` ("" none)
    time_kind: str = ""  # the resolver's kind of them ("time": a clock time, no day)
    time: str = ""  # reminders: the absolute time it was set for (ISO), "" none
    task: str = ""  # reminders: what to remind ("call mum")
    obj: str = ""  # the words a new person / thing / value replaces ("" none)
    fn: str = ""  # act or system: the command
    args: dict[str, str] = field(default_factory=dict)
    slot: str = ""  # act: the slot an object fills
    source: str = ""  # query: where the answer lives, as the router named it
    personal: bool = False
    sum: str = ""  # query: a calculation, as said or carried on ("25 plus 70"), "" none
    confidence: float = 1.0
    asked: bool = False  # the turn asked for a missing detail ("When should I ...?")
    at: float = 0.0  # when the turn ended (a timestamp)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: object) -> Topic | None:
        if not isinstance(raw, Mapping):
            return None
        try:
            known = {k: raw[k] for k in cls.__dataclass_fields__ if k in raw}
            topic = cls(**known)
            return replace(topic, args={str(k): str(v) for k, v in dict(topic.args).items()})
        except (TypeError, ValueError):
            return None


@dataclass(frozen=True)
class Rebuilt:
    """The continued request: words for stage 2 to read, and the hints it checks."""

    intent: Intent
    text: str
    fn: str = ""
    args: dict[str, str] = field(default_factory=dict)
    keep_time: str = ""  # reminders: the previous absolute time, when no new one was said
    keep_clock: str = ""  # reminders: a new day was said, at the previous time's clock


# the fragment -----------------------------------------------------------------------
def parse_fragment(said: str, find_time: TimeFinder) -> Fragment | None:
    """The pieces a short utterance names, or None when it names none or is a request
    of its own (more than a time, a few words of object, or "again")."""
    words = normalize(said).split()
    words, cue = _strip_cues(words)
    words, marked = _strip_tails(words)
    cue = cue or marked
    if not words:
        return None
    rest = " ".join(words)
    if rest in REPEATS:
        return Fragment(said, cue=cue, repeat=True)
    # "and again at six": with anything else said, "again" only marks the ellipsis.
    rest = " ".join(w for w in rest.split() if w != "again")
    found = find_time(rest)
    phrase = normalize(found.phrase) if found else ""
    if phrase:
        rest = _cut(rest, phrase)
    obj = _object_words(rest)
    if obj is None or (not phrase and not obj):
        return None
    kind = found.kind if found else ""
    return Fragment(said, cue=cue, time_phrase=phrase, time_kind=kind, obj=obj)


def _strip_cues(words: list[str]) -> tuple[list[str], bool]:
    cue = False
    changed = True
    while words and changed:
        changed = False
        while words and words[0] in _FILLERS:
            words, changed = words[1:], True
        for lead in _CUES:
            if tuple(words[: len(lead)]) == lead and len(words) > len(lead):
                words, changed, cue = words[len(lead) :], True, True
                break
    return words, cue


def _strip_tails(words: list[str]) -> tuple[list[str], bool]:
    marked = False
    changed = True
    while words and changed:
        changed = False
        for tail in _TAILS:  # before the fillers: "as well" ends on one
            if len(words) > len(tail) and tuple(words[-len(tail) :]) == tail:
                words, changed = words[: -len(tail)], True
                marked = marked or tail in _MARKING_TAILS
                break
        else:
            if words[-1] in _FILLERS and len(words) > 1:
                words, changed = words[:-1], True
    return words, marked


def _object_words(rest: str) -> str | None:
    """The object left once the time is cut out: "" none, None when it is too much to be
    one (a request of its own) or not words at all (keyboard mash)."""
    words = rest.split()
    while words and words[0] in _PREPOSITIONS:
        words = words[1:]
    while words and words[-1] in _CONNECTORS:
        words = words[:-1]
    if not words:
        return ""
    if len(words) > MAX_OBJECT_WORDS:
        return None
    obj = " ".join(words)
    if parse_number(obj) is not None:
        return obj
    return None if is_fragment(obj) else obj


def _cut(text: str, phrase: str) -> str:
    """`text` without the last whole-word occurrence of `phrase`."""
    return " ".join(_swap(text, phrase, "").split())


def _swap(text: str, old: str, new: str) -> str:
    """`text` with the last whole-word occurrence of `old` replaced by `new`."""
    if not old:
        return text
    found = list(re.finditer(rf"(?<!\w){re.escape(old)}(?!\w)", text))
    if not found:
        return text
    at = found[-1]
    return " ".join(f"{text[: at.start()]}{new}{text[at.end() :]}".split())


# the topic --------------------------------------------------------------------------
def topic_of(
    decision: Decision,
    said: str,
    find_time: TimeFinder,
    *,
    act_slots: Callable[[str], tuple[str, ...]] = lambda fn: (),
    at: float = 0.0,
) -> Topic | None:
    """What `decision` (for the words `said`) leaves for an ellipsis, or None.

    A question about what was meant (a route clarify) is no topic; a question about a
    missing detail ("When should I remind you?") is one, marked `asked`."""
    clarify = decision.clarify
    if clarify is not None and clarify.kind != "slot":
        return None
    text = normalize(said)
    base = Topic(
        intent=str(decision.intent),
        text=text,
        confidence=float(decision.confidence),
        asked=clarify is not None,
        at=at,
    )
    if decision.intent is Intent.REMINDER:
        return _reminder_topic(base, decision, find_time)
    if decision.intent is Intent.QUERY:
        # "and times two" next works from this one's result (answers.followup)
        worked = calc.parse(read(said).numeric)
        summed = replace(base, sum=said.strip()) if worked is not None else base
        return _query_topic(summed, decision, find_time)
    if decision.intent is Intent.ACT and decision.slots.has_fn:
        names = act_slots(decision.slots.fn)
        slot = names[0] if names else ""
        args = dict(decision.slots.args)
        return replace(base, fn=decision.slots.fn, args=args, slot=slot, obj=args.get(slot, ""))
    if decision.intent is Intent.CHAT and asked_for(said) is not None:
        return base  # a joke or a fun fact: "another one" next asks for one more
    if decision.intent is Intent.SYSTEM and decision.slots.fn in REPEATABLE_SYSTEM:
        return replace(base, fn=decision.slots.fn)
    if decision.intent in (Intent.NOTE, Intent.FACT):
        # "... is under the blue pot": a correction in the next breath names it "it"
        kept = decision.slots.text if decision.intent is Intent.NOTE else ""
        return replace(base, task=normalize(kept or said))
    return None


def _reminder_topic(base: Topic, decision: Decision, find_time: TimeFinder) -> Topic:
    task = normalize(decision.slots.text)
    found = find_time(base.text) if decision.slots.has_time else None
    when = decision.slots.time.isoformat() if decision.slots.time else ""
    return replace(
        base,
        task=task,
        time_phrase=normalize(found.phrase) if found else "",
        time_kind=found.kind if found else "",
        time=when,
        obj=_task_object(task),
    )


def _task_object(task: str) -> str:
    """The object of a reminder's task: what follows its verb ("call mum" -> "mum")."""
    words = task.split()
    if len(words) < 2:
        return task
    keep = 2 if len(words) > 2 and words[1] in _PARTICLES else 1
    return " ".join(words[keep:])


def _query_topic(base: Topic, decision: Decision, find_time: TimeFinder) -> Topic:
    found = find_time(base.text)
    phrase = normalize(found.phrase) if found else ""
    topic = replace(
        base,
        time_phrase=phrase,
        time_kind=found.kind if found else "",
        source=str(decision.source),
        personal=decision.personal,
    )
    if decision.source in _FIXED_SOURCES:
        return topic
    words = _cut(base.text, phrase).split()
    pivots = [i for i, w in enumerate(words) if w in _QUERY_PIVOTS]
    if not pivots:
        return topic
    obj = words[pivots[-1] + 1 :]
    if not obj or len(obj) > MAX_OBJECT_WORDS:
        return topic
    return replace(topic, obj=" ".join(obj))


# when a fragment continues the topic ------------------------------------------------
def continues(
    topic: Topic | None,
    fragment: Fragment | None,
    decision: Decision,
    *,
    now_ts: float,
    window_s: float,
    is_command: Callable[[str], bool] = lambda text: False,
) -> bool:
    """Whether the utterance is read as an ellipsis of `topic` at all.

    Never for a whole command of its own (a grammar match, for the utterance or for the
    words after its cue: "and turn the volume down"), nor outside the window. Then when
    the utterance has the form of an ellipsis (a cue: "and ...", "what about ...",
    "... too"; "again"), or answers the detail the previous turn asked for ("When
    should I remind you?" "at six"). Without either, only a question is continued, when
    the words alone are a bare day ("friday?") or route weakly (the gate or the router
    asked): a reminder or an act is never made from an unmarked guess ("eggs")."""
    if topic is None or fragment is None:
        return False
    if not 0 <= now_ts - topic.at <= window_s:
        return False
    if decision.stage is Stage.GRAMMAR:
        return False
    if is_command(fragment.said) or is_command(_after_cue(fragment.said)):
        return False
    if fragment.cue or fragment.repeat:
        return True
    if topic.asked:
        return _answers(topic, fragment)
    weak = decision.clarify is not None and decision.clarify.kind == "route"
    return topic.intent == Intent.QUERY and (fragment.only_time or weak)


def _answers(topic: Topic, fragment: Fragment) -> bool:
    """The fragment gives what the previous turn asked for: a reminder's time, an act's
    value ("When should I remind you?" "at six"; "Which service?" "syncthing")."""
    if topic.intent == Intent.REMINDER:
        # "remind me again in ten minutes" after "For how long?" is a request of its own.
        return bool(fragment.time_phrase) and not asks_for_reminder(fragment.obj)
    if topic.intent == Intent.ACT:
        return bool(fragment.obj) and not fragment.time_phrase
    return False


def _after_cue(said: str) -> str:
    words, _ = _strip_cues(normalize(said).split())
    return " ".join(words)


# the rebuilt request ----------------------------------------------------------------
def rebuild(topic: Topic, fragment: Fragment) -> Rebuilt | None:
    """The topic with the fragment's pieces in place of the ones they name; None when
    the fragment names something the topic has no place for."""
    if fragment.repeat:
        return _repeat(topic)
    intent = Intent(topic.intent)
    if intent is Intent.REMINDER:
        return _reminder(topic, fragment)
    if intent is Intent.QUERY:
        return _query(topic, fragment)
    if intent is Intent.ACT and not fragment.time_phrase:
        return _act(topic, fragment)
    return None


def _repeat(topic: Topic) -> Rebuilt | None:
    if topic.intent not in (Intent.ACT, Intent.SYSTEM) or topic.asked:
        return None
    return Rebuilt(Intent(topic.intent), topic.text, topic.fn, dict(topic.args))


def _reminder(topic: Topic, fragment: Fragment) -> Rebuilt | None:
    anchors = own_anchors(topic.text) if topic.asked and fragment.time_kind == "date" else []
    if anchors and not topic.time:
        if names_another(fragment.said, anchors[0]):
            return None  # "When is mum's birthday?" "our anniversary is on the 3rd"
        # "When is your sister's birthday?" "the 12th of january": the date said takes
        # the name's place ("the day before the 12th of january"); the rest stands.
        m = anchors[0]
        text = f"{topic.text[: m.start()]}{fragment.time_phrase}{topic.text[m.end():]}"
        return Rebuilt(Intent.REMINDER, " ".join(text.split()))
    task = topic.task
    if fragment.obj:
        verb = task[: len(task) - len(topic.obj)].strip() if topic.obj else ""
        said_verb = verb and fragment.obj.split()[0] == verb.split()[0]  # "and call dad"
        task = fragment.obj if said_verb else f"{verb} {fragment.obj}".strip()
    phrase = fragment.time_phrase
    # No new time said: the previous absolute time stands (re-resolving "in ten
    # minutes" now would move it). A day without a clock time ("and on thursday"
    # after "at eight") keeps the clock time the previous one resolved to.
    keep = "" if phrase else topic.time
    clock = topic.time if fragment.time_kind == "date" else ""
    text = " ".join(_reminder_words(reminder_kind(topic.text), task, phrase,
                                    fragment.time_kind).split())
    return Rebuilt(Intent.REMINDER, text, keep_time=keep, keep_clock=clock)


def _reminder_words(kind: str, task: str, phrase: str, time_kind: str) -> str:
    """The request again in its own kind's words: "set me a timer" + "ten minutes" is
    a timer for ten minutes, "an alarm" + "seven thirty" an alarm, not a reminder."""
    bare = phrase and not phrase.startswith(("at ", "for ", "in ", "on "))
    request = REQUEST_WORDS[kind]
    if kind == TIMER:
        length = f"for {phrase}" if bare and time_kind == "duration" else phrase
        return f"{request} {length} {f'for {task}' if task else ''}"
    if kind == ALARM:
        at = f"for {phrase}" if bare and time_kind == "time" else phrase
        return f"{request} {f'to {task}' if task else ''} {at}"
    return f"{request} {f'to {task}' if task else ''} {phrase}"


def _query(topic: Topic, fragment: Fragment) -> Rebuilt | None:
    if fragment.obj and not topic.obj:
        return None  # "and dad?" after "what time is it": nothing to put dad in
    text = topic.text
    if fragment.time_phrase:
        if topic.time_phrase:
            text = _swap(text, topic.time_phrase, fragment.time_phrase)
        else:
            text = f"{text} {fragment.time_phrase}"
    if fragment.obj and _PERCENT.fullmatch(fragment.obj) and (said := _PERCENT.search(text)):
        # "what's 20 percent of 150" "and 30 percent": the percentage, not the 150
        text = f"{text[:said.start()]}{fragment.obj}{text[said.end():]}"
    elif fragment.obj:
        text = _swap(text, topic.obj, fragment.obj)
    return Rebuilt(Intent.QUERY, text)


_PERCENT = re.compile(r"\b\d+(?:\.\d+)? ?(?:percent|per cent|%)")


def _act(topic: Topic, fragment: Fragment) -> Rebuilt | None:
    if not fragment.obj or not topic.slot:
        return None  # "and the kitchen" for an act that takes no value
    if topic.obj:
        text = _swap(topic.text, topic.obj, fragment.obj)
    else:
        text = f"{topic.text} {fragment.obj}"
    # The new value is a hint, and the rebuilt words carry it: the slot extractor
    # checks it against the allowlist as it would a value said in one go.
    return Rebuilt(Intent.ACT, text, topic.fn, {**topic.args, topic.slot: fragment.obj})


def when_of(rebuilt: Rebuilt) -> datetime | None:
    """The previous absolute time a rebuilt reminder keeps (None: a new one was said)."""
    return datetime.fromisoformat(rebuilt.keep_time) if rebuilt.keep_time else None


def on_day_at_clock(day: datetime, clock_of: str) -> datetime:
    """`day` (a resolved date) at the wall-clock time of `clock_of` (ISO)."""
    clock = datetime.fromisoformat(clock_of).astimezone(day.tzinfo)
    return day.replace(hour=clock.hour, minute=clock.minute, second=0, microsecond=0)
