"""Stage 2: slot extraction, per intent.

Classification says what kind of request it is, not its arguments:
- reminder: the time phrase resolved to an absolute, timezone-aware fire time
  at capture ("in 4 h" -> now + 4 h; the phrase itself is never stored);
- act: `fn` and `args` matched against the allowlist. Anything not on it is
  refused, never improvised; a model's hint is only ever a hint;
- system: the command name;
- fact: a key and a value; note and query: the text.

A slot that does not parse leaves its `has_*` flag False and, where the turn
cannot go on without it, a question for the gate to ask.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from rapidfuzz import fuzz, process

from mavend.config import ActSlot, ActSpec, ActsSettings
from mavend.language.disfluency import without_fillers
from mavend.language.nouns import singular
from mavend.language.numbers import TEENS, TENS, UNITS
from mavend.language.reminder_kinds import reminder_kind, when_question
from mavend.language.script import RUSSIAN_FILLER
from mavend.language.timeparse import TimeResolution, find_time, resolve_time
from mavend.language.timeparse.clocks import ALARM_RE
from mavend.router.act_words import ActVocabulary
from mavend.router.decision import Intent, Slots
from mavend.router.grammar import normalize

SYSTEM_COMMANDS: dict[str, str] = {
    "stop": "stop talking or stop what is running",
    "cancel": "cancel the current request",
    "repeat": "repeat the last reply",
    "help": "say what I can do",
    "louder": "turn the volume up",
    "quieter": "turn the volume down",
    "pause_listening": "stop listening for the wake word, don't listen",
    "resume_listening": "start listening again",
}

# Words that carry the request type rather than its content.
# "(could you) remind me (to)", "wake me up", "(i need) (set me) a timer (for)": the
# request, not its content. A kind named with its article ("an alarm") is the request
# however it is asked for; "a pasta timer" keeps its pasta.
_ASKING = (
    r"(?:(?:can|could|would|will)\s+you\s+"
    r"|(?:i(?:'ll|\s+will|'m\s+going\s+to|'m\s+gonna)?\s+|gonna\s+)?(?:need|want|wanna)"
    r"(?:\s+you)?\s+(?:to\s+)?"
    r"|i(?:'d|\s+would)\s+like\s+(?:you\s+to\s+)?(?:to\s+)?|let'?s\s+)?"
)
_SETTING = r"(?:set|make|create|add|start|put|schedule|give|get)(?:\s+(?:me|up|on|in))*"
_REMINDER_LEAD = re.compile(
    r"^(?:(?:please|hey|ok|okay|so|um|uh|er|oh|actually|also|and|right|just)\s+)*"
    + _ASKING
    + r"(?:please\s+)?"
    r"(?:remind\s+me|wake\s+me(?:\s+up)?|(?:" + _SETTING + r"\s+)?"
    r"(?:a|an|another|one|a\s+new|new|a\s+second|a\s+third|one\s+more|an\s+extra)"
    r"\s+(?:reminder|timer|alarm)s?(?![^\W_])"
    r"|(?:reminder|timer|alarm)(?=\s+(?:to|that|about|for)\s))"
    r"\s*(?:(?:to|that|about|for)\s+)?",
)
# "add an event tomorrow at 3 dentist", "schedule an appointment for the vet": the event
# is the reminder and what follows its name ("the dentist", not a task "to dentist")
_EVENT_LEAD = re.compile(
    r"^(?:please\s+)?(?:add|create|schedule|make|set\s+up|put\s+in)\s+(?:an?\s+|the\s+)?"
    r"(?:calendar\s+)?(?P<noun>event|appointment|entry)(?:\s+(?P<prep>called|named|for|about"
    r"|with))?\s+"
)
_DETERMINED = re.compile(r"^(?:the|my|a|an|our|his|her|their|your)\b")
_POLITE = frozenset({"please", "thanks", "pls"})
# A reminder said as what must be done ("i've got to water the plants tonight", "remind
# me that i need to renew my passport"): the obligation is how it was said, not the task.
_OBLIGATION = re.compile(
    r"^(?:(?:so|um|uh|er|oh|actually|also|and|right|just|basically|ok|okay|well|hey)\s+)*"
    r"(?:(?:i|we)(?:'ve|\s+have)?\s+(?:got\s+to|gotta)|(?:got\s+to|gotta)"
    r"|(?:i|we)(?:'ll|\s+will)?\s+(?:really\s+)?(?:need|have|must|should|ought)\s+to"
    r"|(?:i|we)\s+(?:really\s+)?(?:must|should)|(?:need|have)\s+to"
    r"|(?:i|we)\s+(?:mustn't|must\s+not|can't|cannot|shouldn't|should\s+not)\s+forget"
    r"\s+(?:to|about)"
    r"|don't\s+(?:let\s+me\s+)?forget\s+(?:to|about))"
    r"\s+(?:(?:really|definitely|probably|still|also)\s+)?"
)
# A task said as what is on ("the kids' dentist appointment is on the 14th at 4"): once
# the time is cut, the verb left at its end goes too. Only after a subject that is a
# thing ("the", "my"): "check what the answer is" keeps its verb.
_SUBJECTS = frozenset({"the", "my", "our", "his", "her", "their", "your", "a", "an"})
_COPULAS = frozenset({"is", "are", "was", "were", "'s"})
# What is left of "set me a timer for me please", "an alarm for like 7": no task at all.
_NO_TASK = re.compile(
    r"^(?:(?:(?:for\s+)?me|please|now|right\s+now|thanks|thank\s+you|real\s+quick"
    r"|quickly|going|ok|okay|and|another(?:\s+one)?|one\s+more"
    # hedges and hesitations left once the time is cut ("an alarm for like seven thirty")
    r"|like|about|around|roughly|um|uh|er|erm)\s*)*$"
)
# Russian: "(ну) напомни (мне) (пожалуйста) (о|про|что|чтобы)", "можешь напомнить",
# "поставь таймер", "разбуди меня", "засеки".
_RU_OPENING = rf"(?:{RUSSIAN_FILLER}\s+)*"
_RU_ASKING = r"(?:(?:не\s+забудь|ты\s+можешь|вы\s+можете|можешь|можете|пожалуйста)\s+)?"
_RU_VERB = (
    r"(?:напомнить|напоминать|напомни(?:те)?|напоминай(?:те)?"
    r"|(?:поставь|установи|заведи|сделай|создай|запусти|включи|задай)(?:те)?"
    r"(?:\s+мне)?\s+(?:напоминание|таймер|будильник)"
    r"|разбуди(?:те)?(?:\s+меня)?|засеки|напоминание|таймер|будильник)(?![^\W_])"
)
_RU_AFTER = r"(?:\s+мне)?(?:\s+(?:пожалуйста|ну|это))*\s*(?:(?:о|об|про|что|чтобы)(?:\s+я)?\s+)?"
_REMINDER_LEAD_RU = re.compile(f"^{_RU_OPENING}{_RU_ASKING}{_RU_VERB}{_RU_AFTER}")
# A Russian preposition left alone once the time phrase after it is cut ("в <пятницу>").
_RU_ORPHAN = re.compile(r"(?<![^\W_])(?:в|во|на|к|ко)\s+\x00")
_NOTE_LEAD = re.compile(
    r"^(?:please\s+)?(?:(?:can|could)\s+you\s+)?(?:remember|note\s+to\s+self|note|"
    r"(?:make|take|put|add|leave|save|write|jot)(?:\s+(?:me|down))?\s+a\s+note(?:\s+saying)?|"
    r"(?:write|jot)\s+down|don'?t\s+forget"
    # "put this in my notes ...", "pin this to the notes ...", "note to self ..."
    r"|(?:put|pin|stick|pop|add|save|write|jot|keep|store)(?:\s+(?:this|that))?(?:\s+down)?"
    r"\s+(?:in|into|to|on)\s+(?:my|the)\s+notes)"
    r"\s*(?:(?:that|this|of|to|down)\s+)?",
)

# The same asked for after the words ("the key is on the red hook, don't let me forget it"):
# what is kept is the words, not the asking.
_NOTE_TAIL = re.compile(
    r"\s+(?:(?:and|so|please|just)\s+)*(?:(?:don'?t|do not)\s+(?:let me\s+)?(?:forget|lose)"
    r"(?:\s+(?:about\s+)?(?:it|that|this))?|remember\s+(?:that|this|it)"
    r"|keep\s+(?:that|this|it)\s+in\s+mind"
    r"|(?:(?:can|could|would)\s+you\s+)?make\s+a\s+note\s+of\s+(?:it|that|this)"
    r"|(?:note|write|jot|put)\s+(?:that|this|it)\s+down)(?:\s+(?:please|ok|okay|for me))*$"
)


# Words left hanging at the end of a reminder's task once its time phrase is cut out
# ("call mom at", "the timer for"): prepositions, articles, determiners, conjunctions.
_TRAILING_CONNECTORS = frozenset(
    [
        "the", "a", "an", "with", "to", "of", "and", "or", "but", "for", "from", "in", "on",
        # Not "her": "call her", "text her" end with it ("call" was set).
        "at", "by", "my", "your", "his", "their", "our", "its", "this", "that", "these",
        "those", "some", "any", "about", "into", "than", "then", "if", "because",
        # Russian prepositions and conjunctions left behind by a cut time phrase.
        "в", "во", "на", "к", "ко", "о", "об", "про", "и", "а", "но", "с", "со", "у", "до",
        "что", "чтобы",
    ]
)


@dataclass(frozen=True)
class SlotHints:
    """What an earlier stage already found; each value is checked, never trusted."""

    fn: str = ""
    fn_from_model: bool = False  # `fn` is the LLM's pick, not a grammar's or the user's
    args: dict[str, str] = field(default_factory=dict)
    time_phrase: str = ""
    time_from_grammar: bool = False  # time_phrase is a grammar's {when}, not a model's guess
    task: str = ""
    key: str = ""
    value: str = ""
    text: str = ""


@dataclass(frozen=True)
class SlotResult:
    slots: Slots
    # Set when the turn cannot go on without asking (no time, not allowed, ...).
    question: str = ""


TimeResolver = Callable[[str, datetime], TimeResolution | None]
TimeFinder = Callable[[str, datetime], TimeResolution | None]


class SlotExtractor:
    def __init__(
        self,
        acts: ActsSettings,
        *,
        resolve: TimeResolver = resolve_time,
        find: TimeFinder = find_time,
    ):
        self._acts = acts
        self._resolve = resolve
        self._find = find
        self._vocabulary = ActVocabulary(acts.allow)

    def extract(self, intent: Intent, text: str, now: datetime, hints: SlotHints) -> SlotResult:
        handler = {
            Intent.REMINDER: self._reminder,
            Intent.ACT: self._act,
            Intent.SYSTEM: self._system,
            Intent.FACT: self._fact,
        }.get(intent)
        if handler is None:  # note, query, chat: the text is the payload
            return SlotResult(Slots(text=_payload_text(intent, text, hints)))
        return handler(text, now, hints)

    # reminder ------------------------------------------------------------
    def _reminder(self, text: str, now: datetime, hints: SlotHints) -> SlotResult:
        found = self.time_of(text, now, hints)
        words = hints.task or text
        if hints.time_from_grammar and hints.time_phrase and (
            self._time_from_hints(text, now, hints) is None
        ):
            # The template's {when} is no time ("remind me {when} about {task}" read "remind
            # me to stretch in about ten minutes" as when "to stretch in"): its cut of the
            # words is wrong too, so the task comes from the whole words.
            words = text
        task = _reminder_task(words, *((found.phrase, found.also) if found else ()))
        kind = reminder_kind(normalize(text))
        if found is None:
            return SlotResult(Slots(text=task, kind=kind),
                              question=when_question(kind, normalize(text)))
        if found.when <= now:
            return SlotResult(
                Slots(time=found.when, has_time=True, text=task, kind=kind),
                question=f"{found.when:%H:%M on %A} has already passed. {when_question(kind)}",
            )
        return SlotResult(
            Slots(time=found.when.replace(microsecond=0), has_time=True, text=task, kind=kind)
        )

    def time_of(self, text: str, now: datetime, hints: SlotHints) -> TimeResolution | None:
        """The time a reminder (or a question about one's calendar) names, resolved."""
        # A grammar's {when} is placed by its template: read it first. A model's phrase
        # comes after the resolver's own search: on the dev file's reminders the LLM's
        # phrase covered the source's time words less often (51/71 against 61/71,
        # bench/llm_jobs.py), so it is used only when the resolver finds no time at all.
        # An alarm or a wake-up call reads a bare hour as a morning; only the whole
        # utterance carries those words ("wake me up {when}": the phrase alone does not).
        if hints.time_from_grammar and not ALARM_RE.search(normalize(text)):
            placed = self._time_from_hints(text, now, hints)
            if placed is not None:
                # "remind me on friday to {task}" with "at 3" in the task: the day and
                # the hour said apart, which only the whole utterance shows.
                whole = self._find(text, now)
                split = whole is not None and whole.also and normalize(placed.phrase) in (
                    normalize(whole.phrase), normalize(whole.also)
                )
                return whole if split else placed
            return self._find(text, now)
        return self._find(text, now) or self._time_from_hints(text, now, hints)

    def _time_from_hints(self, text: str, now: datetime, hints: SlotHints) -> TimeResolution | None:
        phrase = hints.time_phrase.strip()
        # A model's phrase must be words the user said: it may not invent a time.
        if not phrase or normalize(phrase) not in normalize(text):
            return None
        return self._resolve(phrase, now)

    # act -----------------------------------------------------------------
    def _act(self, text: str, now: datetime, hints: SlotHints) -> SlotResult:
        text_for_args = text
        if hints.fn:
            act = self._acts.get(hints.fn)
            if act is not None and hints.fn_from_model and not self._model_may_pick(act, text):
                act = None  # the model bridged two things: "the front door" is no screen
        else:
            act = self._vocabulary.match(normalize(text))
            if act is None and (bare := self._without_time(text, now)) is not None:
                # "could you lock my screen in 20 minutes": the act is in the words around
                # the time (which the handler reads again: an act for later is not run now).
                act = self._vocabulary.match(bare)
                text_for_args = bare if act is not None else text
        if act is None:
            # Not on the allowlist: the intent stands (the user wants something
            # done) and has_fn stays False; the act handler refuses and lists
            # what is allowed. Nothing is improvised.
            return SlotResult(Slots(text=text))
        args, question = _act_args(act, text_for_args, hints.args, hints.fn_from_model)
        return SlotResult(Slots(fn=act.name, args=args, has_fn=True, text=text), question=question)

    def _without_time(self, text: str, now: datetime) -> str | None:
        """The words with their time phrase cut out, or None when they name no time."""
        said = normalize(text)
        found = self._find(said, now)
        if found is None:
            return None
        phrase = normalize(found.phrase)
        rest = " ".join(f" {said} ".replace(f" {phrase} ", " ", 1).split())
        return rest if rest and rest != said else None

    def _model_may_pick(self, act: ActSpec, text: str) -> bool:
        # A program on this box (argv) runs only for words that name what it works on.
        # Home acts are held by their enum and int slots, checked in _act_args.
        return act.kind != "argv" or self._vocabulary.names_object(act, normalize(text))

    # system --------------------------------------------------------------
    def _system(self, text: str, now: datetime, hints: SlotHints) -> SlotResult:
        name = hints.fn if hints.fn in SYSTEM_COMMANDS else _match_system(text)
        if not name and (bare := self._without_time(text, now)) is not None:
            name = _match_system(bare)  # "louder at 9 pm please"
        if not name:
            # No system command, but words an allowlisted act answers to ("turn the volume
            # to forty", read as a system request): the act, checked as any act is, so the
            # handler does what was asked instead of listing what it knows.
            act = self._act(text, now, SlotHints())
            if act.slots.has_fn:
                return act
        return SlotResult(Slots(fn=name, has_fn=bool(name), text=text))

    # fact ----------------------------------------------------------------
    def _fact(self, text: str, now: datetime, hints: SlotHints) -> SlotResult:
        key, value = (hints.key.strip(), hints.value.strip())
        if not key:
            key, value = extract_fact(text)
        key = _slug(key)
        return SlotResult(Slots(key=key, value=value, has_key=bool(key), text=text))


# A system command is taken only for words that name it, never for the words commands
# share: a fuzzy score alone read "turn off" and "lower the volume" as louder ("turn the
# volume up") and "wake me" as stop listening ("... the wake word"). Each command lists
# word sets the words must meet, every one of them (what, and which way).
_LISTEN = frozenset({"listen", "listening", "mic", "microphone"})
_SOUND = frozenset({"volume", "sound", "audio", "yourself", "voice", "speaker"})
_UP = frozenset({"up", "raise", "increase", "boost"})
_DOWN = frozenset({"down", "lower", "decrease", "reduce"})
_VOLUME = frozenset({"volume", "audio"})  # "more" and "less" go with these only
# Each command: alternatives, each a tuple of word sets that the words must all meet.
_SYSTEM_WORDS: dict[str, tuple[tuple[frozenset[str], ...], ...]] = {
    "stop": ((frozenset({"stop", "halt", "quiet", "silence", "shush", "hush", "enough"}),),),
    "cancel": ((frozenset({"cancel", "abort"}),),),
    "repeat": ((frozenset({"repeat", "pardon"}),),),
    "help": ((frozenset({"help", "commands"}),),),
    "louder": ((frozenset({"louder"}),), (_UP, _SOUND), (frozenset({"more"}), _VOLUME)),
    "quieter": ((frozenset({"quieter", "softer"}),), (_DOWN, _SOUND),
                (frozenset({"less"}), _VOLUME)),
    "pause_listening": ((_LISTEN, frozenset({"stop", "pause", "off", "dont", "don't", "mute",
                                             "quit"})),),
    "resume_listening": ((_LISTEN, frozenset({"start", "resume", "on", "again", "unmute",
                                              "back", "keep", "carry"})),),
}  # fmt: skip
# Asked in a sentence rather than named by a word.
_SYSTEM_PHRASES = (
    ("repeat", re.compile(r"\b(?:what did you (?:just )?say|say(?: \w+){0,3} again|say what"
                          r"|come again)\b")),
    ("help", re.compile(r"\bwhat (?:(?:else|kind of things|jobs) )?(?:can|could|should) "
                        r"(?:you|i) (?:\w+ )?(?:do|say|ask|handle)\b")),
)  # fmt: skip


def _match_system(text: str) -> str:
    """The system command `text` names, or ""; a fuzzy score only breaks a tie."""
    said = normalize(text)
    for name, phrase in _SYSTEM_PHRASES:
        if phrase.search(said):
            return name
    words = set(said.split())
    named = {
        name: f"{name.replace('_', ' ')} {SYSTEM_COMMANDS[name]}"
        for name, alternatives in _SYSTEM_WORDS.items()
        if any(all(words & needed for needed in sets) for sets in alternatives)
    }
    if len(named) < 2:
        return next(iter(named), "")
    best = process.extractOne(said, named, scorer=fuzz.token_set_ratio)
    return best[2] if best else ""


def _act_args(
    act: ActSpec, text: str, hinted: dict[str, str], from_model: bool = False
) -> tuple[dict[str, str], str]:
    args: dict[str, str] = {}
    for name, slot in act.slots.items():
        hint = hinted.get(name, "")
        if slot.optional:
            # An optional slot (a device act's room) is what a grammar or model placed,
            # and only if the user said it; no search of the text ("kitchen" in "the
            # kitchen ceiling" is no room). Left out, the handler uses the turn's room.
            said = hint and f" {normalize(hint)} " in f" {normalize(text)} "
            # A number a grammar read ("down two degrees": 2, "a degree": 1) is said in
            # words the text does not spell as digits; its range still bounds it.
            said = said or (hint and slot.type == "int" and not from_model)
            value = _slot_value(slot, hint, hint) if said else None
            if value is not None:
                args[name] = value
            continue
        if from_model and act.kind == "device" and name == "device" and not _said(hint, text):
            # A model's device must be one the words name: "kill the music in the gym" is
            # not the gym lamp, however the model read it.
            hint = ""
        value = _slot_value(slot, hint, text)
        if value is None:
            return args, _slot_question(act, name, slot)
        args[name] = value
    return args, ""


def _said(value: str, text: str) -> bool:
    """The words of `value` are in `text` (spelt within a letter or two: "speker"): all of
    a one- or two-word name, all but one of a longer one ("the garage heater" for the
    garage heater plug)."""
    heard = normalize(text).split()
    words = normalize(value).split()
    missing = 0
    for word in words:
        if word in heard:
            continue
        if len(word) < 4 or not any(fuzz.ratio(word, h) >= 85 for h in heard if len(h) >= 4):
            missing += 1
    return missing == 0 or (len(words) >= 3 and missing == 1)


def _slot_value(slot: ActSlot, hint: str, text: str) -> str | None:
    """The validated value for one act slot, or None when it is missing or not allowed."""
    if slot.type == "enum":
        for candidate in (hint, text):
            found = _enum_value(slot.values, candidate)
            if found is not None:
                return found
        return None
    if slot.type == "int":
        number = parse_number(hint) if hint else None
        number = number if number is not None else first_number(text)
        if number is None:
            return None
        if (slot.min is not None and number < slot.min) or (
            slot.max is not None and number > slot.max
        ):
            return None
        return str(number)
    value = hint.strip()
    return value if value and re.fullmatch(slot.pattern, value) else None


def _enum_value(values: tuple[str, ...], candidate: str) -> str | None:
    """The value said in `candidate`: the longest one present as whole words ("desk
    lamp" over "lamp", "lamp" over "bedside lamp"), else the closest fuzzy match."""
    said = normalize(candidate)
    if not said:
        return None
    present = [v for v in values if f" {normalize(v)} " in f" {said} "]
    if present:
        return max(present, key=len)
    found = process.extractOne(said, values, scorer=fuzz.partial_ratio, score_cutoff=90)
    return found[0] if found else None


# A question lists the choices only while they can be heard in one breath (a home's
# 150 device names cannot).
MAX_LISTED_VALUES = 8


def _slot_question(act: ActSpec, name: str, slot: ActSlot) -> str:
    what = act.description or act.name.replace("_", " ")
    if slot.type == "enum" and len(slot.values) <= MAX_LISTED_VALUES:
        return f"To {what}, which {name}? I can use: {', '.join(slot.values)}."
    if slot.type == "int":
        return f"To {what}, which {name}, from {slot.min} to {slot.max}?"
    return f"To {what}, which {name}?"


def reminder_task(text: str, time_phrase: str) -> str:
    """What to be reminded of: the words once the time phrase and the lead are cut."""
    return _reminder_task(text, time_phrase)


def asks_for_reminder(text: str) -> bool:
    """The words open with a request for a reminder, a timer or an alarm ("remind me",
    "set a timer"): a request of its own, not a detail of another."""
    match = _REMINDER_LEAD.match(normalize(text))
    return match is not None and match.end() > 0


_LEADS_IN = re.compile(r"^(?:at|on|by|in|for|from|around|about|before|after|until|till)\b")


def _reminder_task(text: str, *time_phrases: str) -> str:
    task = normalize(text)
    said = [normalize(p) for p in time_phrases if p]
    # A word left before a time cut from the end ("call mom at" once "five pm" is gone) is
    # dropped below; one that ends the task itself ("shut the hens in", "turn the oven on"
    # before "at 6") stays.
    last = next((p for p in said if task.endswith(p)), None)
    time_last = not said or (last is not None and not _LEADS_IN.match(last))
    for phrase in said:  # the day and the hour, when said apart
        task = task.replace(phrase, " \x00 ")
    task = _RU_ORPHAN.sub(" ", task).replace("\x00", " ")
    task = without_fillers(task)
    if (event := _EVENT_LEAD.match(task.strip())) is not None:
        named = task.strip()[event.end():].strip()
        if named and event["prep"] == "with":  # "an appointment with sarah"
            return f"the {event['noun']} with {named}"
        return named if not named or _DETERMINED.match(named) else f"the {named}"
    task = _REMINDER_LEAD_RU.sub("", _REMINDER_LEAD.sub("", task))
    task = _OBLIGATION.sub("", task)
    words = task.split()
    while time_last and words and words[-1] in _TRAILING_CONNECTORS:  # "call mom at"
        words.pop()
    while words and words[-1] in _POLITE:  # "call mum please"
        words.pop()
    if len(words) > 2 and words[0] in _SUBJECTS and words[-1] in _COPULAS:
        words.pop()  # "the dentist appointment is [on the 14th at 4]": the appointment
    task = " ".join(words)
    return "" if _NO_TASK.match(task) else task


def _payload_text(intent: Intent, text: str, hints: SlotHints) -> str:
    if intent == Intent.NOTE:
        stripped = _NOTE_TAIL.sub("", _NOTE_LEAD.sub("", normalize(text)))
        return stripped or text.strip()
    return text.strip()


# facts -------------------------------------------------------------------
_FACT_PATTERNS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], tuple[str, str]]], ...] = (
    (re.compile(r"\bi (?:just )?slept (?:for )?(?P<v>.+)"), lambda m: ("sleep", m["v"])),
    (re.compile(r"\bmy (?P<k>[a-z ]{2,30}?) (?:is|was|are) (?P<v>.+)"), lambda m: (m["k"], m["v"])),
    (re.compile(r"\bi weigh (?P<v>.+)"), lambda m: ("weight", m["v"])),
    # A reading said off the scales: "weighed myself 84 kilos", "the scales say 13 stone".
    (
        re.compile(r"\b(?:i )?weighed (?:myself |in )?(?:at )?(?P<v>\d.*)"),
        lambda m: ("weight", m["v"]),
    ),
    (
        re.compile(
            r"\bscales? (?:says?|said|reads?|read|shows?|showed) (?:i'?m |i am )?(?P<v>\d.*)"
        ),
        lambda m: ("weight", m["v"]),
    ),
    (
        re.compile(
            r"\bi (?:just )?(?:drank|had|ate|took) (?P<q>(?:a|an|one|two|three|four|five|\d+) "
            r"(?:\w+ of )?)?(?P<k>[a-z ]+)"
        ),
        lambda m: (_thing(m["k"]), _quantity(m["q"])),
    ),
    (re.compile(r"\bi (?:really )?(?:like|love|enjoy|adore) (?P<v>.+)"),
     lambda m: ("likes", m["v"])),
    (re.compile(r"\bi(?:'m| am|m) (?:really |so |totally )?(?:crazy|mad|nuts|potty|wild"
                r"|obsessed) (?:about|with) (?P<v>.+)"), lambda m: ("likes", m["v"])),
    (re.compile(r"\bi(?:'m| am|m) (?:a )?(?:big |huge )?(?:fan of|keen on) (?P<v>.+)"),
     lambda m: ("likes", m["v"])),
    (re.compile(r"\bi(?:'m| am|m) not (?:a )?(?:big |huge )?(?:fan of|keen on) (?P<v>.+)"
                r"|\bi (?:really )?(?:can'?t stand|cannot stand|loathe|detest) (?P<w>.+)"),
     lambda m: ("dislikes", m["v"] or m["w"])),
    (re.compile(r"\bi (?:don'?t like|hate|dislike) (?P<v>.+)"), lambda m: ("dislikes", m["v"])),
    (re.compile(r"\b(?:call me|my name is) (?P<v>.+)"), lambda m: ("name", m["v"])),
    (
        re.compile(r"\b(?:i|we)(?:'ve| have)? (?:just |already |finally )?(?P<k>[a-z]+ed)\b ?"
                   r"(?P<v>.*)"),
        lambda m: (m["k"], m["v"] or "done"),
    ),
)


# What follows the thing had: "two coffees this morning", "a bowl of pasta for lunch".
_AFTER_THE_THING = re.compile(
    r" (?:for|at|with|this|last|today|yesterday|tonight|earlier|just|in|on|before|after"
    r"|around|about|already|again|so far)\b.*$"
)


def _thing(words: str) -> str:
    """ "coffees this morning" -> "coffee" (the key was "morning")."""
    kept = _AFTER_THE_THING.sub("", f" {words.strip()}").split() or words.split()
    # in the singular: "two coffees" and "a coffee" are one count (two keys, each summed
    # alone, said "1 coffee")
    return singular(kept[-1])


def _quantity(spoken: str | None) -> str:
    """ "two glasses of" -> "two glasses"; "a" / "an" / nothing -> "1"."""
    quantity = (spoken or "").strip().removesuffix(" of")
    return "1" if quantity in ("", "a", "an", "one") else quantity


# normalize() drops every full stop, decimal points too: "80.5 kilos" became "80 5 kilos".
_DECIMAL = re.compile(r"(?<=\d)\.(?=\d)")
_DECIMAL_MARK = "zzdecimalzz"  # letters: normalize() keeps them


def extract_fact(text: str) -> tuple[str, str]:
    """A (key, value) for a first-person statement, or ("", "") when none is found."""
    normalized = normalize(_DECIMAL.sub(_DECIMAL_MARK, text)).replace(_DECIMAL_MARK, ".")
    for pattern, build in _FACT_PATTERNS:
        if match := pattern.search(normalized):
            key, value = build(match)
            return key.strip(), value.strip()
    return "", ""


def _slug(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")[:40]


# numbers -----------------------------------------------------------------
_UNITS = {**UNITS, **TEENS}  # zero to nineteen
_TENS = TENS


def parse_number(text: str) -> int | None:
    """An integer written in digits or English words ("forty five", "a hundred")."""
    words = normalize(text).replace("-", " ").replace("%", " ").split()
    if len(words) == 1 and re.fullmatch(r"\d+(?:\.0+)?", words[0]):
        return int(float(words[0]))
    total, seen = 0, False
    for word in words:
        if word in ("a", "and") and not seen:
            continue
        if word in _UNITS:
            total += _UNITS[word]
        elif word in _TENS:
            total += _TENS[word]
        elif word == "hundred":
            total = max(total, 1) * 100
        elif word in ("percent", "per", "cent"):
            continue
        else:
            return None
        seen = True
    return total if seen else None


def first_number(text: str) -> int | None:
    """The first number in a sentence, in digits or words."""
    normalized = normalize(text).replace("-", " ")
    if digits := re.search(r"\b\d+\b", normalized):
        return int(digits.group())
    words = normalized.split()
    for start, word in enumerate(words):
        if word in _UNITS or word in _TENS or word == "hundred":
            end = start
            while end < len(words) and (
                words[end] in _UNITS or words[end] in _TENS or words[end] in ("hundred", "and")
            ):
                end += 1
            return parse_number(" ".join(words[start:end]))
    return None
