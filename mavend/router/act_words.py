"""Which allowlisted act a request can mean, by what it names: an act is taken only for a
request that names the thing the act works on, never for the verbs the two share.

A fuzzy score over whole sentences bridged different things: "turn the pool pump on"
scored 78 against "volume down: turn the volume down" (the words "turn" and "the"), and
the classifier's act intent then turned this box's volume down. So an act's *objects*
are the content words of its name, description and enum slot values but its verb (the
volume, the screen, pipewire, the kitchen lamp), and a request must name one of them, or
a word of the same kind below, before any score counts. A model's pick of an act (the LLM's `fn`)
is held to the same rule; a grammar's match is exact and needs no such check.

    ActVocabulary(acts)     -> .match(text): the best act the words name, or None;
                               .names_object(act, text) -> bool (worked out once per list)
    names_object, match_act -> the same for one call
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rapidfuzz import fuzz, process

from mavend.config import ActSpec
from mavend.language.numbers import TEENS, TENS, UNITS

# Words that say what to do, how, or to be polite: shared by many acts, naming none.
_GENERIC_WORDS = """a an the my our your this that these those it its some any all to of on off
    up down in
    at for and or with from into by as is are be can could would will you me i we please
    thanks thank now just bit little lot more less again set turn switch put make get give
    start stop go run do let keep bring change level percent per cent value number way
    halfway quick quickly user program one thing something"""
GENERIC = frozenset(_GENERIC_WORDS.split())

# Everyday words for the objects of the usual acts (the allowlist's own vocabulary, not a
# list of phrasings): "the music" is what a media act plays, "my computer" what is locked.
KINDRED: dict[str, frozenset[str]] = {
    "volume": frozenset({"sound", "audio", "loud", "louder", "quiet", "quieter", "loudness"}),
    "media": frozenset({"music", "song", "track", "tune", "player", "playback", "playlist"}),
    "track": frozenset({"song", "tune", "music"}),
    "screen": frozenset({"computer", "desktop", "session", "laptop", "pc", "workstation"}),
    "sound": frozenset({"audio", "volume", "speaker"}),
    "service": frozenset({"server", "daemon"}),
}

_WORD = re.compile(r"[a-z0-9']+")


def stem(word: str) -> str:
    """Enough to meet a plural or a possessive ("songs", "computer's") halfway."""
    word = word.removesuffix("'s").strip("'")
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def words(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in _WORD.findall(text.lower()))


def object_words(act: ActSpec) -> frozenset[str]:
    """What the act works on: its own content words, its enum values' and their kin, but
    not its verbs ("lock the screen" works on a screen: "lock the front door" names none)."""
    said = f"{act.name.replace('_', ' ')} {act.description}"
    for slot in act.slots.values():
        if slot.type == "enum":
            said += " " + " ".join(slot.values)
    verbs = leading_verbs(act.description)
    own = {w for w in words(said) if w not in GENERIC | verbs and not w.isdigit()}
    kin = {k for w in own for k in KINDRED.get(w, ())}
    return frozenset(own | {stem(k) for k in kin})


# Where a description's leading verbs end ("play or pause | the media player").
_DETERMINERS = frozenset(
    ["the", "a", "an", "to", "my", "your", "our", "this", "that", "all", "every", "of", "at",
     "in", "on", "for"]
)


def leading_verbs(description: str) -> frozenset[str]:
    """The words before the description's first determiner or preposition, "or" aside:
    "play or pause the media player" -> {play, pause}; "lock the screen" -> {lock}."""
    verbs: set[str] = set()
    for word in _WORD.findall(description.lower()):
        if word in _DETERMINERS:
            break
        if word not in ("or", "and"):
            verbs.add(stem(word))
    return frozenset(verbs)


def names_object(act: ActSpec, text: str) -> bool:
    return bool(object_words(act) & words(text))


class ActVocabulary:
    """Each act's objects and the text it is scored against, worked out once for an
    allowlist (the slot extractor keeps one), so a turn only reads its own words."""

    def __init__(self, acts: Sequence[ActSpec]):
        self._acts = {a.name: a for a in acts}
        self._objects = {a.name: object_words(a) for a in acts}
        self._texts = {a.name: _act_text(a, self._objects[a.name]) for a in acts}
        # A device act is never taken by score: its verb decides what the home is left in
        # ("lock the shed door" scored best as device_on and opened the garage door), and
        # only an exact sentence of the grammar or a model held to the enums picks it.
        self._scored = {n: t for n, t in self._texts.items() if self._acts[n].kind != "device"}

    def names_object(self, act: ActSpec, text: str) -> bool:
        objects = self._objects.get(act.name)
        return bool((object_words(act) if objects is None else objects) & words(text))

    def match(self, text: str, cutoff: float = 60) -> ActSpec | None:
        """The act whose words score best against `text` among those it names an object
        of. The cutoff (60) is lower than the old whole-sentence one (75) because the
        object must now be shared first; it was chosen on this project's own probes."""
        said = words(text)
        named = {n: t for n, t in self._scored.items() if self._objects[n] & said}
        if _LEVEL.search(text.lower()):
            # "turn the volume to forty" names a level: an act that takes one, not the
            # "turn the volume up" its words score best against.
            levelled = {n: t for n, t in named.items() if _takes_level(self._acts[n])}
            if len(levelled) == 1:  # its object and a level named: no score needed
                return self._acts[next(iter(levelled))]
            named = levelled or named
        if not named:
            return None
        best = process.extractOne(
            text.lower(), named, scorer=fuzz.token_set_ratio, score_cutoff=cutoff
        )
        return None if best is None else self._acts[best[2]]


# A level said as "to forty", "at 30 percent", "on fifty" (digits or number words).
_WORDS = "|".join(sorted({*UNITS, *TEENS, *TENS, "hundred"}, key=len, reverse=True))
_NUMBER_WORD = rf"(?:\d+|{_WORDS})"
_LEVEL = re.compile(rf"\b(?:to|at|on)\s+{_NUMBER_WORD}\b")


def _takes_level(act: ActSpec) -> bool:
    return any(slot.type == "int" for slot in act.slots.values())


def match_act(text: str, acts: Sequence[ActSpec], cutoff: float = 60) -> ActSpec | None:
    return ActVocabulary(acts).match(text, cutoff)


def _act_text(act: ActSpec, objects: frozenset[str]) -> str:
    # With its objects' kin: "lock my computer" is scored against "... screen computer".
    own = f"{act.name.replace('_', ' ')} {act.description}".lower()
    return f"{own} {' '.join(sorted(objects - words(own)))}"

_THING = re.compile(
    r"^(?:(?:please|hey|ok|okay|um|uh|so)\s+)*(?:(?:can|could|would|will)\s+you\s+)?"
    r"(?:please\s+)?(?:(?:turn|switch|put|set|open|close|shut|lock|unlock|start|stop|run|dim|"
    r"raise|lower|pause|play|activate|arm|disarm)\s+(?:on\s+|off\s+|up\s+|down\s+)?"
    r"(?:the|my|our|that|this)\s+|(?P<run>activate|run|trigger)\s+(?:the\s+)?)"
    r"(?P<thing>[a-z][a-z' ]*?)"
    # what may follow the thing: "for 10 minutes", "until 6", "at 7" are the act's time
    r"(?:\s+(?:on|off|up|down|halfway|please|now|for me|(?:to|at|by|for|until|till|in)\s+.*))*$"
)


def thing_named(text: str) -> str:
    """The thing a device-like command names ("the pool pump" in "turn the pool pump on"),
    or "" when the words are not of that shape. Only ever used to word a refusal."""
    match = _THING.match(text.lower().strip(" .!?"))
    return match["thing"].strip() if match else ""


def routine_named(text: str) -> str:
    """The scene or script a bare "activate movie time" / "run bedtime" names, or ""."""
    match = _THING.match(text.lower().strip(" .!?"))
    if match is None:
        return ""
    thing = match["thing"].strip()
    # "run the bedtime routine", "turn on the party scene": said as one by its kind
    return thing if match["run"] or _ROUTINE_WORD.search(thing) else ""


_ROUTINE_WORD = re.compile(r"\b(?:routine|scene|script|mode)$")
