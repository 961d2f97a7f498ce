"""Stage 0: the command grammar.

Templates in `grammars/*.yaml` (hassil's format) name intents
`<mavend intent>.<name>`. A match is deterministic and needs no model. Slots
named after an act's slots take their allowed values from the config, so a
grammar can never widen what an act accepts; an `act.*` intent whose name is
not on the allowlist is ignored at load time (and logged).

A `query.*` sentence block may name where the answer lives in its metadata:
`source` (a `Source` value) and `anchored: true` when the sentence itself names that
destination ("look it up in my notes", "search the web for ..."). Only such a block
anchors a decision's source; see `Decision.source_anchored`.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from hassil import Intents, RangeSlotList, TextSlotList, WildcardSlotList, recognize_all
from hassil.errors import HassilError
from hassil.intents import SlotList

from mavend.config import ActSpec, ActsSettings
from mavend.errors import ConfigError
from mavend.language.disfluency import fluent
from mavend.language.reminder_kinds import trigger_first
from mavend.language.rooms import as_home_rooms
from mavend.router.decision import Intent, Source
from mavend.router.snap import Snapped, snap, snap_words

log = logging.getLogger(__name__)

# Longer than any command anyone speaks: beyond this, stage 0 does not try.
MAX_COMMAND_CHARS = 200


@dataclass(frozen=True)
class GrammarMatch:
    intent: Intent
    name: str  # the part after the dot: an act name, a system command, a reminder kind
    slots: dict[str, str] = field(default_factory=dict)
    text: str = ""  # the normalized text that matched (wake word removed)
    source: Source = Source.UNKNOWN  # query.* only: from the sentence block's metadata
    anchored: bool = False  # the sentence names that destination (metadata `anchored`)
    wildcard: bool = False  # a slot took free words ({task}, {when}, {question})


class CommandGrammar:
    """Loads every grammar file once; `match(text)` is cheap and pure."""

    def __init__(self, files: Iterable[Path], acts: ActsSettings, wake_words: Iterable[str] = ()):
        self._acts = acts
        self._intents = _load_intents(list(files), acts)
        self._slot_lists = {**_unfilled_lists(self._intents), **_act_slot_lists(acts.allow)}
        self._wake = _wake_word_pattern(wake_words)
        self._known: frozenset[str] | None = None
        self._named: tuple[tuple[str, ...], tuple[str, ...]] | None = None  # rooms, devices

    @classmethod
    def from_dir(cls, directory: Path, acts: ActsSettings, wake_words: Iterable[str] = ()):
        files = sorted(directory.glob("*.yaml"))
        if not files:
            raise ConfigError(f"no grammar files (*.yaml) in {directory}")
        return cls(files, acts, wake_words)

    @property
    def intent_names(self) -> list[str]:
        return sorted(self._intents.intents)

    def vocabulary(self) -> list[str]:
        """Words the grammar knows: a hint for speech-to-text."""
        words: set[str] = set()
        for intent in self._intents.intents.values():
            for data in intent.data:
                for sentence in data.sentences:
                    words.update(re.findall(r"[a-z']+", sentence.text or ""))
        return sorted(words)

    def rooms(self) -> tuple[str, ...]:
        """The rooms the home's devices are in ({room}), longest first."""
        found = self._slot_lists.get("room") or self._intents.slot_lists.get("room")
        values = getattr(found, "values", ()) or ()
        names = {getattr(v.text_in, "text", "") or "" for v in values}
        return tuple(sorted((n for n in names if n), key=len, reverse=True))

    def known_words(self) -> frozenset[str]:
        """Every word the grammar reads: sentence and rule templates and slot values, with
        the names inside `<rule>` and `{slot}` references left out."""
        if self._known is None:
            self._known = snap_words(_template_texts(self._intents, self._slot_lists))
        return self._known

    def snap(self, text: str) -> Snapped[GrammarMatch] | None:
        """`text`, which `match` did not match, as the grammar command it is one misheard
        word away from (router.snap); None when nothing is near, or two commands are."""
        normalized = normalize(self.strip_wake_word(normalize(text)))
        if not normalized or len(normalized) > MAX_COMMAND_CHARS:
            return None
        return snap(normalized, self.known_words(), self._fixed_match, same=_same_command)

    def _fixed_match(self, text: str) -> GrammarMatch | None:
        """A match with no free-text slot: a snapped word never opens a wildcard, which
        would take any words at all ("vote that ..." is not "note that ...")."""
        found = self.match(text)
        return None if found is None or found.wildcard else found

    def strip_wake_word(self, text: str) -> str:
        return self._wake.sub("", text, count=1) if self._wake else text

    def match(self, text: str) -> GrammarMatch | None:
        normalized = normalize(self.strip_wake_word(normalize(text)))
        if not normalized or len(normalized) > MAX_COMMAND_CHARS:
            return None
        found = self._match(normalized)
        if found is None:
            # "could you restart syncthing for me please" is "restart syncthing", said kindly.
            core = strip_politeness(normalized)
            if core and core != normalized:
                found = self._match(core)
        if found is None:
            # "uh can you can you turn the uh lamp on", "turn of the lamp": said unevenly
            tidy = fluent(normalized)
            if tidy != normalized:
                found = self._match(tidy) or self._match(strip_politeness(tidy))
        if found is None and (typed := with_apostrophes(normalized)) != normalized:
            found = self._match(typed)  # "whats the temperature in the bathroom", typed
        if found is None and (reordered := trigger_first(normalized)) is not None:
            found = self._match(reordered)  # "remind me when i get home to feed the cat"
        if found is None and (homed := self._home_rooms(normalized)) != normalized:
            found = self._match(homed)  # "the hall light", the home's room a "hallway"
        return found

    def _home_rooms(self, normalized: str) -> str:
        if self._named is None:
            devices = self._slot_lists.get("device") or self._intents.slot_lists.get("device")
            names = tuple(getattr(v.text_in, "text", "") or ""
                          for v in (getattr(devices, "values", ()) or ()))
            self._named = (self.rooms(), names)
        if not self._named[0]:
            return normalized
        return as_home_rooms(normalized, *self._named)

    def _match(self, normalized: str) -> GrammarMatch | None:
        try:
            for result in recognize_all(normalized, self._intents, slot_lists=self._slot_lists):
                found = self._to_match(result, normalized)
                if found is not None:
                    return found
        except HassilError as exc:
            # A grammar that cannot be matched must not take every turn down with it (a
            # missing list once did: "Sorry, something went wrong." for every request):
            # stage 0 is skipped and the deciders behind it route the turn.
            log.error("the command grammar failed on %r, skipped: %s", normalized, exc)
        return None

    def _to_match(self, result, normalized: str) -> GrammarMatch | None:
        kind, _, name = result.intent.name.partition(".")
        slots = {key: str(entity.value).strip() for key, entity in result.entities.items()}
        if kind == Intent.ACT and not self._act_args_valid(name, slots):
            return None
        if slots.get("when", "").split(" ", 1)[0] in _QUESTION_WORDS:
            return None  # "remind me what i said about the car" asks; {when} is no time
        if name in _NOT_THE_HEATINGS and slots.get("device") in _HEATING_WORDS:
            # "turn the heating up" is warmer (device_up), not "open the heating"; "set all
            # thermostats to 18" is 18 degrees (device_temperature), not a brightness
            return None
        if kind == Intent.NOTE and slots.get("note", "").startswith("that "):
            # "make a note that X" read by "make a note {note}": the note is X
            slots["note"] = slots["note"].removeprefix("that ")
        metadata = result.intent_metadata or {}
        return GrammarMatch(
            intent=Intent(kind),
            name=name,
            slots=slots,
            text=normalized,
            source=Source(metadata.get("source", "")),
            anchored=metadata.get("anchored") is True,
            wildcard=any(entity.is_wildcard for entity in result.entities.values()),
        )

    def _act_args_valid(self, name: str, slots: dict[str, str]) -> bool:
        act = self._acts.get(name)
        required = {n for n, slot in act.slots.items() if not slot.optional} if act else set()
        return act is not None and required <= set(slots)


_QUESTION_WORDS = frozenset({"what", "what's", "where", "when", "who", "how", "which", "why"})
# "(turn|put) <dev> up" opens a blind and "set <dev> to 40" is a light's level; said of the
# heating, each is its own act (a step warmer, degrees).
_HEATING_WORDS = frozenset({"heating", "heat", "thermostat", "thermostats", "temperature"})
_NOT_THE_HEATINGS = frozenset({"device_open", "device_close", "light_set", "device_set"})


def _same_command(a: GrammarMatch, b: GrammarMatch) -> bool:
    return (a.intent, a.name, a.slots) == (b.intent, b.name, b.slots)


_REFERENCE = re.compile(r"<[^>]*>|\{[^}]*\}")


def _sentence_texts(intents: Intents) -> list[str]:
    """Every sentence template and expansion rule, as written."""
    texts = [
        sentence.text or ""
        for intent in intents.intents.values()
        for data in intent.data
        for sentence in data.sentences
    ]
    return texts + [rule.text or "" for rule in intents.expansion_rules.values()]


def _template_texts(intents: Intents, act_lists: dict[str, SlotList]) -> list[str]:
    texts = _sentence_texts(intents)
    for slot_list in [*intents.slot_lists.values(), *act_lists.values()]:
        if isinstance(slot_list, TextSlotList):
            texts.extend(getattr(v.text_in, "text", "") or "" for v in slot_list.values)
    return [_REFERENCE.sub(" ", text) for text in texts]


# Politeness around a command, tried off when the words as said match nothing.
_POLITE_START = re.compile(
    r"^(?:(?:please|ok|okay|so|um|uh|er|erm|hey|oh|well|right|alright|just)\s+)*"
    r"(?:(?:can|could|would|will) you\s+(?:please\s+)?"
    r"|i (?:want|need|would like|'d like) you to\s+|(?:please\s+))?"
)
_POLITE_END = re.compile(
    r"(?:\s+(?:for me|please|thanks|thank you|now|right now|(?:would|will|can|could) you))+$"
)


def strip_politeness(normalized: str) -> str:
    """The command inside its politeness: "could you keep it down please" -> "keep it down"."""
    return _POLITE_END.sub("", _POLITE_START.sub("", normalized)).strip()


# Contractions typed without their apostrophe, where the bare word means nothing else
# ("its", "ill", "were", "lets", "id" do, and are left alone).
_APOSTROPHES = {
    "whats": "what's", "wheres": "where's", "hows": "how's", "whos": "who's",
    "thats": "that's", "theres": "there's", "dont": "don't", "doesnt": "doesn't",
    "didnt": "didn't", "isnt": "isn't", "arent": "aren't", "wasnt": "wasn't",
    "cant": "can't", "couldnt": "couldn't", "wouldnt": "wouldn't", "havent": "haven't",
    "im": "i'm", "ive": "i've", "youre": "you're",
}
_APOSTROPHE_WORD = re.compile(rf"\b(?:{'|'.join(_APOSTROPHES)})\b")


def with_apostrophes(normalized: str) -> str:
    """The words with the apostrophes a keyboard left out put back ("whats" -> "what's")."""
    return _APOSTROPHE_WORD.sub(lambda m: _APOSTROPHES[m.group(0)], normalized)


def normalize(text: str) -> str:
    """Lower-case, drop punctuation and control characters, squeeze spaces."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = "".join(ch if ch.isalnum() or ch in " %'" else " " for ch in text)
    return " ".join(text.split())


def _wake_word_pattern(wake_words: Iterable[str]) -> re.Pattern[str] | None:
    words = sorted({normalize(w) for w in wake_words if normalize(w)}, key=len, reverse=True)
    if not words:
        return None
    alternatives = "|".join(re.escape(w) for w in words)
    return re.compile(rf"^\s*(?:(?:hey|ok|okay)\s+)?(?:{alternatives})\b[\s,]*")


# A config from before play and pause were two acts allowlists only playerctl's toggle:
# the play and pause sentences go to it (as they did then) rather than unheard.
STAND_INS = {"media_play": "media_play_pause", "media_pause": "media_play_pause"}


def _load_intents(files: list[Path], acts: ActsSettings) -> Intents:
    merged: dict = {"language": "en", "intents": {}, "lists": {}, "expansion_rules": {}}
    allowed = {a.name for a in acts.allow}
    for path in files:
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise ConfigError(f"grammar file {path}: {exc}") from exc
        for name, body in (doc.get("intents") or {}).items():
            _check_intent_name(path, name, allowed)
            _check_metadata(path, name, body)
            if name.startswith("act.") and name[4:] not in allowed:
                stand_in = STAND_INS.get(name[4:], "")
                if stand_in not in allowed:
                    _log_ignored_once(path, name)
                    continue
                name = f"act.{stand_in}"
            if name in merged["intents"]:  # one intent in two files (English, Russian)
                known = merged["intents"][name]
                merged["intents"][name] = {
                    **known, "data": [*known.get("data", []), *body.get("data", [])]
                }
            else:
                merged["intents"][name] = body
        merged["lists"].update(doc.get("lists") or {})
        merged["expansion_rules"].update(doc.get("expansion_rules") or {})
    try:
        return Intents.from_dict(merged)
    except Exception as exc:  # hassil raises plain exceptions for template syntax
        raise ConfigError(f"grammar files {[p.name for p in files]}: {exc}") from exc


# Grammar intents for acts not on the allowlist (the device acts, with no [[devices]]) are
# the usual case, not news: said at debug, once per process per intent.
_IGNORED_LOGGED: set[str] = set()


def _log_ignored_once(path: Path, name: str) -> None:
    if name in _IGNORED_LOGGED:
        return
    _IGNORED_LOGGED.add(name)
    log.debug("grammar %s: %s is not on the allowlist; ignored", path.name, name)


def _check_intent_name(path: Path, name: str, allowed: set[str]) -> None:
    kind, dot, rest = name.partition(".")
    if not dot or not rest or kind not in {i.value for i in Intent}:
        raise ConfigError(
            f"grammar file {path}: intent `{name}` must be named `<intent>.<name>` with "
            f"<intent> one of {[i.value for i in Intent]}"
        )


SOURCE_METADATA = frozenset({"source", "anchored"})


def _check_metadata(path: Path, name: str, body: object) -> None:
    """A sentence block's metadata may only name a query's source, and anchor it."""
    blocks = body.get("data") if isinstance(body, dict) else None
    for data in blocks or []:
        metadata = data.get("metadata") if isinstance(data, dict) else None
        if metadata is None:
            continue
        where = f"grammar file {path}: intent `{name}`: metadata"
        if not isinstance(metadata, dict) or set(metadata) - SOURCE_METADATA:
            raise ConfigError(f"{where} may only hold {sorted(SOURCE_METADATA)}: {metadata!r}")
        if not name.startswith(f"{Intent.QUERY}."):
            raise ConfigError(f"{where}: only query.* intents name a source")
        values = [s.value for s in Source if s.value]
        if metadata.get("source") not in values:
            raise ConfigError(f"{where}: source must be one of {values}")
        if not isinstance(metadata.get("anchored", False), bool):
            raise ConfigError(f"{where}: anchored must be true or false")


_LIST_REFERENCE = re.compile(r"\{(\w+)(?::\w+)?\}")


def _unfilled_lists(intents: Intents) -> dict[str, SlotList]:
    """An empty list for every `{list}` a kept sentence names that nothing fills: devices
    without rooms generate no {room} values, and hassil raises on a list it was never
    given (every spoken command was dropped); an empty list just matches nothing."""
    named = {name for text in _sentence_texts(intents) for name in _LIST_REFERENCE.findall(text)}
    return {
        name: TextSlotList(name=name, values=[])
        for name in sorted(named - set(intents.slot_lists))
    }


def _act_slot_lists(acts: Iterable[ActSpec]) -> dict[str, SlotList]:
    lists: dict[str, SlotList] = {}
    for act in acts:
        for slot_name, slot in act.slots.items():
            if slot.type == "enum":
                lists[slot_name] = TextSlotList.from_strings(slot.values)
            elif slot.type == "int":
                lists[slot_name] = RangeSlotList(
                    name=slot_name,
                    start=slot.min if slot.min is not None else 0,
                    stop=slot.max if slot.max is not None else 1000,
                )
            else:  # a pattern slot takes any words; stage 2 validates them
                lists[slot_name] = WildcardSlotList(name=slot_name)
    return lists
