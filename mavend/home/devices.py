"""The devices table as data: which devices a request means.

`[[devices]]` generates the device acts while the config is read
(mavend/config/devices.py: the acts, their operations and slots).

A request names a device, a room, both or neither; `resolve` turns that into the
devices meant, using the turn's room (the satellite's, or `[audio] room`) when the
words leave it open, and asks when they stay ambiguous.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mavend.config import DeviceSpec
from mavend.config.devices import (
    ANYTHING,
    EVERYTHING,
    LOCK_WORDS,
    OPERATIONS,
    device_ops,
    in_room_names,
    nouns,
    plural_of,
    unplugged,
)
from mavend.home import classes
from mavend.replies import human_list

# What "turn on" means for a device with no on/off, as Home Assistant's own intents
# read it: a blind opens, a vacuum starts, a scene activates; "set it to 21" on a
# thermostat is its temperature; "stop the fan" turns it off.
KINDRED_OPS = {
    "on": ("open", "start", "activate", "play"),
    "off": ("close", "dock"),
    "set": ("temperature",),
    "start": ("activate", "on", "play"),
    "stop": ("off", "pause"),
    "activate": ("on",),
    "play": ("on",),
    "open": ("up",),  # "turn the fan up" is said as "put the blinds up"
    "mode": ("preset",),  # "put the fan on sleep": a fan's modes are its presets
    "preset": ("mode",),
}


def effective_op(device: DeviceSpec, op: str) -> str | None:
    """The operation `op` means for this device, or None when it has nothing like it."""
    ops = device_ops(device)
    if op in ops:
        return op
    return next((alt for alt in KINDRED_OPS.get(op, ()) if alt in ops), None)


@dataclass(frozen=True)
class Resolution:
    devices: tuple[DeviceSpec, ...] = ()
    question: str = ""  # set when the words leave it open: ask, never guess
    refusal: str = ""  # set when nothing fits (no lamp in the garage)
    group: str = ""  # "the kitchen lights": how to name a room's lights in the reply
    skipped: tuple[DeviceSpec, ...] = ()  # meant, but cannot do it (a lamp asked to open)
    choices: tuple[DeviceSpec, ...] = ()  # what `question` asks between


def resolve(
    devices: Sequence[DeviceSpec], op_act: str, args: dict[str, str], here: str
) -> Resolution:
    """The devices a checked request means. `here`: the turn's room, "" if unknown."""
    room = args.get("room", "")
    op = OPERATIONS[op_act]
    if args.get("scope"):  # "... in the house": every room's, whatever room this is
        here = ""
    if op_act in ("lights_on", "lights_off"):
        # "all the lights" with no room: every room's (it asked which room); so is "the
        # lights except the hallway" said where no room is known
        leave_out = bool(args.get("except")) and not here
        if (args.get("scope") or args.get("every") or leave_out) and not room:
            lights = tuple(d for d in devices if d.type == "light")
            group = f"all {len(lights)} lights" if len(lights) > 3 else ""
            return Resolution(devices=lights, group=group)
        return _room_lights(devices, room or here)
    if op_act == "device_read":
        return _readers(devices, args.get("quantity", ""), room or here)
    if op_act == "device_which":
        return _of_kind(devices, args.get("kind", ""), room, args.get("state", ""))
    word = args.get("device", "")
    # "lock the garage door" where the door is a cover and "garage door lock" its lock:
    # the lock (it said "The garage door can't be locked.")
    locking = args.get("about") in LOCK_WORDS or op_act in ("device_lock", "device_unlock")
    if locking and (locks := [
        d for d in devices if d.type == "lock" and f" {word} " in f" {d.name} "
        and d.name != word
    ]):
        return _one_of(locks, word, room, here, op)  # "did i lock the garage door"
    named = [d for d in devices if d.name == word]
    if not named and room and (joined := [
        d for d in devices if f"{room} {word}" in (d.name, unplugged(d.name))
    ]):
        named = joined  # "the bedroom fan", "the heater in the garage": the room and the name
    if named:  # names are unique: "the study lamp" is that one, whatever the room
        return _able(op, tuple(named), word)
    devices = [d for d in devices if d.type != "todo"]
    if word == EVERYTHING:
        return _everything(devices, op, room or here, whole_home=bool(args.get("scope")))
    # A plural kind ("the blinds") is every one of them, even where it is also each one's
    # alias (an imported "kitchen blinds" is "blinds" in its room); so is a kind said once
    # for the whole home ("every thermostat in the house").
    whole_home = bool(args.get("scope"))
    every = whole_home or bool(args.get("every"))  # "close every blind": each one of them
    if args.get("every") and not room:
        here = ""  # ... in the whole home, not only this room's
    of_kind = _called_so([d for d in devices if _every_one(d, word, every)], word)
    plural = _can_first(of_kind, op)
    if plural:
        return _all_of(plural, word, room, here, op, of_kind)
    found = [d for d in devices if word in d.aliases or word == unplugged(d.name)]
    if not found and not any(word in nouns(d)[0] for d in devices):
        # "the heater" for the garage heater plug; a kind's word ("the thermostat") stays
        # every device of that kind, not the one whose name happens to hold it
        found = [d for d in devices if word in in_room_names(d)]
    if found and not any(effective_op(d, op) for d in found):
        # "unlock the garage door": the garage door (a cover) cannot, the garage door
        # lock can; a device whose name holds the words and can do it is the one meant.
        able = [d for d in devices if effective_op(d, op) and f" {word} " in f" {d.name} "]
        found = able or found
    if found:
        return _one_of(found, word, room, here, op)
    single = _can_first([d for d in devices if word in nouns(d)[0]], op)
    in_room = [d for d in devices if d.room == word and effective_op(d, op)]
    if in_room and not any(effective_op(d, op) for d in single):
        # "lock up the garage": the room's lock, when no garage door can be locked.
        return _everything(devices, op, word)
    return _one_of(single, word, room, here, op)


def _called_so(found: list[DeviceSpec], word: str) -> list[DeviceSpec]:
    """ "all the lamps": the lights called lamps, when some are (a lamp is a light, and
    "lamps" was every light: the ceiling lights and the strips came on too). The class's
    own word ("the lights") stays every one of them."""
    one = word[:-1] if word.endswith("s") else word
    called = [d for d in found if d.name == one or d.name.endswith(f" {one}")
              or one in d.aliases or word in d.aliases]
    first_word = {classes.CLASSES[d.type].words(d.device_class)[1][:1] for d in found}
    if not called or any(word in w for w in first_word):
        return found
    return called


def _every_one(device: DeviceSpec, word: str, whole_home: bool) -> bool:
    one, every = nouns(device)
    return word in every or (whole_home and word in one)


# "Did I leave anything on": the kinds of device that can be in each state asked about.
_IN_STATE = {
    "on": ("light", "switch", "plug", "fan"), "off": ("light", "switch", "plug", "fan"),
    "open": ("cover", "valve", "binary_sensor"), "closed": ("cover", "valve", "binary_sensor"),
    "playing": ("media_player",),
    "locked": ("lock",), "unlocked": ("lock",),
}
# What "is anything open" asks about: a way in (a blind open by day is no news).
_OPENINGS = ("door", "garage_door", "garage", "gate", "opening", "window")


def _of_kind(devices: Sequence[DeviceSpec], kind: str, room: str, state: str = "") -> Resolution:
    """ "Which lights are on": every device of that kind (in that room) to read."""
    if kind in (ANYTHING, EVERYTHING):  # every device that can be in `state`
        found = [d for d in devices if d.type in _IN_STATE.get(state, ())
                 and (d.type not in ("binary_sensor", "cover") or d.device_class in _OPENINGS)]
        found = [d for d in found if d.room == room] if room else found
        if not found:
            place = f" in the {room}" if room else ""
            return Resolution(refusal=f"There's nothing{place} that can be {state}.")
        return Resolution(devices=tuple(found), group=ANYTHING)
    found = [d for d in devices if kind in (*nouns(d)[0], *nouns(d)[1]) and d.type != "todo"]
    # "Which windows are open" asks the window sensors, not the blinds covering them.
    found = [d for d in found if d.type == "binary_sensor"] or found
    found = [d for d in found if d.room == room] if room else found
    if not found:
        place = f" in the {room}" if room else ""
        return Resolution(refusal=f"There are no {kind}{place} that I know of.")
    return Resolution(devices=tuple(found), group=kind if kind.endswith("s") else plural_of(kind))


def _can_first(found: list[DeviceSpec], op: str) -> list[DeviceSpec]:
    """Of the devices a kind word fits, the ones that can do it ("lock the door": the locks,
    not the door sensors), unless none can (then the refusal names one)."""
    able = [d for d in found if effective_op(d, op)]
    return able or found


# A state question about a kind several rooms have is answered for each, up to this many
# (more is a list nobody wants read out: "which lamp?" is asked).
MAX_READ_UNASKED = 3


def _one_of(
    found: list[DeviceSpec], word: str, room: str, here: str, op: str
) -> Resolution:
    """One device called `word` (an alias, or its kind): the room's, or ask which."""
    if found and not any(effective_op(d, op) for d in found):
        return _able(op, (found[0],), word)  # none of them can: say so, don't ask which
    if room:
        roaming = [d for d in found if d.type == "vacuum"]
        found = [d for d in found if d.room == room]
        if not found and op == "start" and len(roaming) == 1:
            # "hoover the kitchen" with the one robot docked in the hallway: it goes
            # (a robot cleans more rooms than the one it is kept in)
            found = roaming
        if not found:
            return Resolution(refusal=f"There's no {word} in the {room}.")
    elif len(found) > 1:
        local = [d for d in found if here and d.room == here]
        if not local and op == "state" and len(found) <= MAX_READ_UNASKED:
            # "did i lock the door": both doors read out harm nothing and answer it
            return Resolution(devices=tuple(found), group=plural_of(word))
        if not local:
            return Resolution(question=_which(word, found), choices=tuple(found))
        found = local
    if len(found) > 1 and op == "state":
        # "did i leave the kids room light on": reading them all harms nothing and
        # answers it; asking "which light?" did not
        return Resolution(devices=tuple(found), group=plural_of(word))
    if len(found) > 1:  # two of that kind in the one room: which?
        names = _or(sorted(d.name for d in found))
        return Resolution(question=f"Which {word}: the {names}?", choices=tuple(found))
    return _able(op, tuple(found), word)


def _which(word: str, found: Sequence[DeviceSpec]) -> str:
    """Ask once, naming the candidates: by room when each room has one, else by name."""
    rooms = [d.room for d in found]
    if all(rooms) and len(set(rooms)) == len(rooms):
        return f"Which {word}: the one in the {_or(sorted(rooms))}?"
    return f"Which {word}: the {_or(sorted(d.name for d in found))}?"


def _all_of(
    found: list[DeviceSpec], word: str, room: str, here: str, op: str,
    of_kind: Sequence[DeviceSpec] = (),
) -> Resolution:
    """Every device of a kind (`found`: those that can do `op`, of all `of_kind`): the
    room's, this room's, or the home's."""
    where = room or (here if any(d.room == here for d in found) else "")
    words = word if word.endswith("s") else plural_of(word)  # "every blind": all 17 blinds
    if where:
        found = [d for d in found if d.room == where]
        if not found and any(d.room == where for d in of_kind):
            # "turn the kitchen lights red" where none can: it said there were none
            return Resolution(refusal=f"The {where} {words} can't {_VERBS.get(op, op)}.")
        if not found:
            return Resolution(refusal=f"There are no {words} in the {where} that I know of.")
    # A few are named ("The study shutters and the den curtains are closed."), more are
    # counted ("All 5 blinds in the kitchen are closed.").
    group = f"all {len(found)} {words}" + (f" in the {where}" if where else "")
    return _able(op, tuple(found), word, group if len(found) > 3 else "")


def _everything(
    devices: Sequence[DeviceSpec], op: str, room: str, *, whole_home: bool = False
) -> Resolution:
    if not room and not whole_home:
        return Resolution(question="Everything in which room?")
    here = [
        d
        for d in devices
        if ((whole_home and not room) or d.room == room) and d.type not in ("scene", "script")
    ]
    able = tuple(d for d in here if effective_op(d, op) == op)  # only what it says: no kin
    if not able:
        where = f"in the {room}" if room else "in the home"
        return Resolution(refusal=f"There's nothing {where} I can do that to.")
    # A few are named ("The den lamp and the den tv are off."), more are counted.
    where = f" in the {room}" if room else ""
    group = f"all {len(able)} devices{where}" if len(able) > 3 else ""
    return Resolution(devices=able, group=group)


# Rooms out of doors: "how humid is it outside" is read there when no weather source is.
_OUTDOORS = re.compile(
    r"\b(?:garden|yard|backyard|patio|terrace|balcony|outside|outdoors?|porch|deck|driveway"
    r"|veranda|courtyard|allotment)\b"
)


def outdoor_room(devices: Sequence[DeviceSpec], quantity: str, *, outside: bool) -> str:
    """The room whose sensor answers "how humid is it (outside)" when no weather source is
    configured: the one outdoor room with a `quantity` sensor when `outside` was said, or
    the home's only `quantity` sensor's room when no place was; "" when none or several."""
    sensors = [d for d in devices if d.type == "sensor" and d.device_class == quantity]
    if outside:
        sensors = [d for d in sensors if _OUTDOORS.search(d.room or "")]
    rooms = {d.room for d in sensors}
    return rooms.pop() if len(rooms) == 1 and len(sensors) >= 1 and "" not in rooms else ""


def _readers(devices: Sequence[DeviceSpec], quantity: str, room: str) -> Resolution:
    """The sensor (or thermostat, for a temperature) that reads `quantity` in `room`."""
    sensors = [d for d in devices if d.type == "sensor" and d.device_class == quantity]
    if quantity == "temperature":
        sensors += [d for d in devices if d.type == "climate"]
    if room:
        sensors = [d for d in sensors if d.room == room]
    if not sensors:
        place = f" in the {room}" if room else ""
        return Resolution(refusal=f"I don't have a {quantity} sensor{place}.")
    if len({d.room for d in sensors}) > 1:
        rooms = sorted({d.room for d in sensors if d.room})
        return Resolution(question=f"The {quantity} in which room: the {_or(rooms)}?")
    return Resolution(devices=(sensors[0],))


def _able(op: str, found: tuple[DeviceSpec, ...], word: str, group: str = "") -> Resolution:
    if not found:
        return Resolution(refusal=f"I don't have anything called the {word} that I can control.")
    able = tuple(d for d in found if effective_op(d, op))
    if not able:
        first = found[0]
        if op == "set" and first.type in ("light", "plug", "switch"):
            return Resolution(refusal=f"The {first.name} can't be dimmed.")
        return Resolution(refusal=f"The {first.name} can't {_VERBS.get(op, op)}.")
    skipped = tuple(d for d in found if d not in able)
    return Resolution(devices=able, group=group if not skipped else "", skipped=skipped)


_VERBS = {
    "set": "be set to a percentage",
    "colour": "change colour",
    "oscillate": "oscillate",
    "temperature": "be set to a temperature",
    "mode": "change mode",
    "mute": "be muted",
    "activate": "be activated",
    "dock": "go back to a dock",
    "state": "say its state",
    "on": "be turned on",
    "off": "be turned off",
    "open": "be opened",
    "close": "be closed",
    "stop": "be stopped",
    "lock": "be locked",
    "unlock": "be unlocked",
    "play": "play",
    "pause": "be paused",
    "next": "skip a track",
    "previous": "go back a track",
    "start": "be started",
    "read": "be read",
    "up": "go up a step",
    "down": "go down a step",
}


def _or(words: Sequence[str]) -> str:
    return " or the ".join(words)


def _room_lights(devices: Sequence[DeviceSpec], room: str) -> Resolution:
    lights = [d for d in devices if d.type == "light"]
    rooms = sorted({d.room for d in lights if d.room})
    if not room:
        if len(rooms) > 1:
            return Resolution(question=f"Which room's lights: the {' or the '.join(rooms)}?")
        return Resolution(devices=tuple(lights), group="all the lights")
    here = tuple(d for d in lights if d.room == room)
    if not here:
        return Resolution(refusal=f"There are no lights in the {room} that I know of.")
    return Resolution(devices=here, group=f"the {room} lights" if len(here) > 1 else "")


def chosen(choices: Sequence[Mapping[str, str]], said: str) -> str:
    """The one device of a "Which fan?" question the answer names, by its name or its room
    ("the study one", "the one in the loft", "loft"), or "" when it names none or two."""
    words = f" {' '.join(said.lower().split())} "
    named = [c for c in choices if f" {c['name']} " in words]
    if len(named) != 1:
        named = [c for c in choices if c.get("room") and f" {c['room']} " in words]
    return named[0]["name"] if len(named) == 1 else ""


# "is the back door locked", "are the porch lights on": a device's state asked by a name
_STATE_ASKED = re.compile(
    r"^(?:is |are |did (?:i|we|you) (?:leave|lock|shut|close) )(?:the|my|our) (?P<thing>[a-z' ]+?)"
    r"(?: (?:locked|unlocked|open|opened|closed|shut|on|off|running|still on|still open))?"
    r"(?: (?:right now|now|at the moment))?$"
)


def absent_device(devices: Sequence[DeviceSpec], question: str) -> str:
    """What to say to a state question about a device the home does not have ("is the
    back door locked" with no back door): that it is not known, and the devices whose
    names share its kind's word; "" when the question is not one, or names a device."""
    m = _STATE_ASKED.match(question)
    if m is None:
        return ""
    thing = m["thing"].strip()
    known = {d.name for d in devices} | {a for d in devices for a in d.aliases}
    if thing in known or thing in {unplugged(d.name) for d in devices}:
        return ""
    kind = thing.split()[-1]
    stem = kind[:-1] if kind.endswith("s") and len(kind) > 3 else kind
    alike = [d for d in devices if stem in d.name.split() or f"{stem}s" in d.name.split()]
    if not alike:
        return ""  # no home word: not a device question
    named = [f"the {d.name}" for d in alike[:4]]
    if len(alike) > 4:
        named.append(f"{len(alike) - 4} more")
    article = "any" if kind != stem else "an" if thing[0] in "aeiou" else "a"
    return f"I don't know of {article} {thing} in this home. I know {human_list(named)}."
