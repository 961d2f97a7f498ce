"""The devices table as data: generated acts, and which devices a request means.

`[[devices]]` generates the device acts below. Their `device` slot enumerates every
device name and alias, their optional `room` slot every room, so the grammar's
{device} and {room} lists and the LLM's GBNF enums (both built from act slots) grow
with the table: adding a lamp is one config entry. Every act shares the same
`device` and `room` enums, because the grammar keys its lists by slot name.

A request names a device, a room, both or neither; `resolve` turns that into the
devices meant, using the turn's room (the satellite's, or `[audio] room`) when the
words leave it open, and asks when they stay ambiguous.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mavend.config import ActSlot, ActSpec, ActsSettings, DeviceSpec
from mavend.home import classes, z2m

# Generated act -> (operation, the value it always sends, its value slot). The handler
# reads the operation from this table, so a device act can only ever do one of its
# device's class operations (mavend/home/classes.py) to a device of the table.
OPERATIONS = {
    "device_on": "on",
    "device_off": "off",
    "device_state": "state",
    "light_set": "set",
    "lights_on": "on",
    "lights_off": "off",
    "device_set": "set",
    "device_open": "open",
    "device_close": "close",
    "device_stop": "stop",
    "device_lock": "lock",
    "device_unlock": "unlock",
    "device_oscillate": "oscillate",
    "device_oscillate_off": "oscillate",
    "device_temperature": "temperature",
    "device_mode": "mode",
    "device_colour": "colour",
    "device_play": "play",
    "device_pause": "pause",
    "device_next": "next",
    "device_previous": "previous",
    "device_mute": "mute",
    "device_unmute": "mute",
    "device_start": "start",
    "device_dock": "dock",
    "device_activate": "activate",
    "device_read": "read",
    "device_which": "state",
    "device_up": "up",
    "device_down": "down",
    "device_preset": "preset",
}
FIXED_VALUES = {
    "device_on": "",
    "device_oscillate": "on",
    "device_oscillate_off": "off",
    "device_mute": "on",
    "device_unmute": "off",
}
VALUE_SLOTS = {  # act -> the slot holding its value
    "light_set": "brightness",
    "device_set": "percent",
    "device_temperature": "degrees",
    "device_mode": "mode",
    "device_colour": "colour",
    "device_read": "quantity",
    "device_which": "state",
    "device_preset": "preset",
}
DESCRIPTIONS = {
    "device_on": "turn on a device: a light, a plug, a fan, the heating, a speaker",
    "device_off": "turn off a device: a light, a plug, a fan, the heating, a speaker",
    "device_state": "say what state a device is in: on, open, locked, playing, its reading",
    "light_set": "set a light's brightness in percent",
    "lights_on": "turn on the lights in a room",
    "lights_off": "turn off the lights in a room",
    "device_set": "set a fan's speed, a blind's position or a speaker's volume in percent",
    "device_open": "open a blind, curtain, garage door, gate or valve",
    "device_close": "close a blind, curtain, garage door, gate or valve",
    "device_stop": "stop a blind or curtain moving, or stop a speaker or a vacuum",
    "device_lock": "lock a door lock",
    "device_unlock": "unlock a door lock",
    "device_oscillate": "make a fan oscillate (swing)",
    "device_oscillate_off": "stop a fan oscillating",
    "device_temperature": "set a thermostat's target temperature in degrees",
    "device_mode": "set a thermostat's mode: heat, cool, auto, off",
    "device_colour": "set a light's colour",
    "device_play": "play or resume music on a speaker or TV",
    "device_pause": "pause a speaker, a TV or a vacuum",
    "device_next": "skip to the next song on a speaker",
    "device_previous": "go back to the previous song on a speaker",
    "device_mute": "mute a speaker or TV",
    "device_unmute": "unmute a speaker or TV",
    "device_start": "start a robot vacuum cleaning",
    "device_dock": "send a robot vacuum back to its dock",
    "device_activate": "activate a scene or run a script",
    "device_read": "read a temperature or humidity in a room from its sensor or thermostat",
    "device_which": "say which devices of a kind are on, open, locked: which lights are on",
    "device_up": "a step up: a light brighter, a fan faster, a speaker louder",
    "device_down": "a step down: a light dimmer, a fan slower, a speaker quieter",
    "device_preset": "put a fan or a thermostat in one of its preset modes: sleep, eco",
}
DESTRUCTIVE = frozenset({"device_unlock"})
# The states "which lights are on" asks about, and the states (as classes.describe says
# them) each one means.
WHICH_STATES: dict[str, tuple[str, ...]] = {
    "on": ("on",),
    "off": ("off",),
    "open": ("open", "opening"),
    "closed": ("closed", "closing"),
    "locked": ("locked",),
    "unlocked": ("unlocked", "open", "jammed"),
    "playing": ("playing",),
}
HALF_DEGREE = ("and a half", "point five", "point 5", "5")
# Home Assistant's HVAC modes (climate docs), said as people say them.
HVAC_MODES = ("off", "heat", "cool", "auto", "heat_cool", "dry", "fan_only")
EVERYTHING = "everything"  # "turn off everything in the kitchen"
# Said for the whole home ("all the lights in the house"): an optional `scope` slot, so a
# plural without a room means every room, not this one.
WHOLE_HOME = (
    "in the house", "in the home", "in the flat", "in the apartment", "in the whole house",
    "around the house", "throughout the house", "all over the house", "everywhere",
)  # fmt: skip


def device_ops(device: DeviceSpec) -> tuple[str, ...]:
    """The operations this device offers (a light's set and colour by its flags)."""
    ops = classes.CLASSES[device.type].supported(device.supports)
    if device.type == "light" and not device.supports:
        flags = (
            ("set", device.dimmable),
            ("colour", device.colour),
            ("up", device.dimmable),
            ("down", device.dimmable),
        )
        ops = (*ops, *(op for op, on in flags if on))
    if device.type in ("sensor", "climate"):
        ops = (*ops, "read")  # a reading asked for by quantity and room (device_read)
    if not device.presets:
        ops = tuple(op for op in ops if op != "preset")  # nothing to choose from
    if device.mqtt:  # what Zigbee2MQTT has a command for
        ops = tuple(op for op in ops if op in z2m.OPS[device.type])
    return ops


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


def nouns(device: DeviceSpec) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What this device is called when not by name: (one of them, every one of them).

    Its class's words (by device_class), and its name's last word when that names a kind
    ("the blinds" for the kitchen blinds, "the lamp" for the desk lamp)."""
    one, every = classes.CLASSES[device.type].words(device.device_class)
    # An alias that ends in a kind is a kind of its own, said in the plural for all of
    # them: "the heater plugs" for every device called "heater plug".
    kinds = tuple(a for a in device.aliases if a.rsplit(" ", 1)[-1] in classes.KIND_WORDS)
    every = (*every, *(_plural(a) for a in kinds if " " in a))
    head = device.name.rsplit(" ", 1)[-1]
    # Not when the kind is said in more words: a garage door is never "the door".
    longer = any(w.endswith(f" {head}") for w in (*one, *every))
    if head in classes.KIND_WORDS and head not in one and head not in every and not longer:
        plural = head.endswith("s") and head[:-1] in classes.KIND_WORDS
        return (one, (*every, head)) if plural else ((*one, head), every)
    return one, every


def _plural(words: str) -> str:
    return words + ("es" if words.endswith(("s", "sh", "ch", "x")) else "s")


def device_acts(devices: Sequence[DeviceSpec]) -> tuple[ActSpec, ...]:
    # A to-do list is reached through the list commands (mavend/lists/), not an act.
    devices = [d for d in devices if d.type != "todo"]
    ops = {op for d in devices for op in device_ops(d)}
    spoken = {n for d in devices for n in (d.name, *d.aliases)}
    # Class words ("the blinds", "the thermostat", "the lights"): lights_on and lights_off
    # come first in the grammar, so "turn on the lights" is still the room's lights.
    spoken |= {w for d in devices for ws in nouns(d) for w in ws}
    if any(d.type != "scene" and d.type != "script" for d in devices):
        spoken.add(EVERYTHING)
    rooms = sorted({d.room for d in devices if d.room})
    room = {"room": ActSlot(type="enum", values=tuple(rooms), optional=True)} if rooms else {}
    room["scope"] = ActSlot(type="enum", values=WHOLE_HOME, optional=True)
    device = {"device": ActSlot(type="enum", values=tuple(sorted(spoken)))}
    values = {
        "brightness": ActSlot(type="int", min=0, max=100),
        "percent": ActSlot(type="int", min=0, max=100),
        # Celsius or Fahrenheit, as the thermostat counts (Home Assistant refuses its own
        # out-of-range values, and the reply says so).
        "degrees": ActSlot(type="int", min=5, max=95),
        # "nineteen and a half", "19.5" (normalized to "19 5"): a thermostat's half degree.
        "half": ActSlot(type="enum", values=HALF_DEGREE, optional=True),
        "mode": ActSlot(type="enum", values=HVAC_MODES),
        "colour": ActSlot(type="enum", values=(*classes.COLOURS, *classes.WHITES)),
        "quantity": ActSlot(type="enum", values=classes.QUANTITIES),
        "state": ActSlot(type="enum", values=tuple(WHICH_STATES)),
        "preset": ActSlot(
            type="enum", values=tuple(sorted({p.lower() for d in devices for p in d.presets}))
            or ("none",),
        ),
    }
    slots: dict[str, dict[str, ActSlot]] = {}
    for name, op in OPERATIONS.items():
        if name in ("lights_on", "lights_off"):
            if any(d.type == "light" for d in devices):
                slots[name] = dict(room)
            continue
        if name == "light_set":
            if any(d.type == "light" and "set" in device_ops(d) for d in devices):
                slots[name] = {**device, "brightness": values["brightness"], **room}
            continue
        if name == "device_set" and not any(
            d.type != "light" and "set" in device_ops(d) for d in devices
        ):
            continue
        if op not in ops:
            continue
        value = VALUE_SLOTS.get(name)
        if name == "device_read":
            slots[name] = {"quantity": values["quantity"], **room}
            continue
        if name == "device_which":
            # Its own `kind` list, lights included: "turn on the lights" stays lights_on.
            kinds = sorted({w for d in devices for ws in nouns(d) for w in ws})
            kind = {"kind": ActSlot(type="enum", values=tuple(kinds))}
            every = {"every": ActSlot(type="enum", values=("all", "both", "every"), optional=True)}
            slots[name] = {**kind, "state": values["state"], **every, **room}
            continue
        extra = {"half": values["half"]} if name == "device_temperature" else {}
        slots[name] = {**device, **({value: values[value]} if value else {}), **extra, **room}
    return tuple(
        ActSpec(
            name=name,
            kind="device",
            description=DESCRIPTIONS[name],
            destructive=name in DESTRUCTIVE,
            slots=act_slots,
        )
        for name, act_slots in slots.items()
    )


def with_device_acts(acts: ActsSettings, devices: Sequence[DeviceSpec]) -> ActsSettings:
    """The allowlist plus the generated acts (replacing any from an earlier pass)."""
    check_devices(devices)
    own = tuple(a for a in acts.allow if a.kind != "device")
    generated = device_acts(devices)
    if clash := sorted({a.name for a in own} & {a.name for a in generated}):
        raise ValueError(f"act name(s) {clash} are generated from [[devices]]; rename yours")
    return ActsSettings(confirm_timeout_s=acts.confirm_timeout_s, allow=own + generated)


def check_devices(devices: Sequence[DeviceSpec]) -> None:
    names = [d.name for d in devices]
    if dupes := sorted({n for n in names if names.count(n) > 1}):
        raise ValueError(f"device names must be unique; repeated: {dupes}")
    if clash := sorted({a for d in devices for a in d.aliases} & set(names)):
        # An alias may be shared (a lamp per room), a name may not be another's alias.
        raise ValueError(f"{clash} is a device's name and another device's alias")
    if clash := sorted({d.room for d in devices if d.room} & {*names}):
        raise ValueError(f"{clash} is both a room and a device name")
    if any(EVERYTHING in (d.name, *d.aliases) for d in devices):
        raise ValueError(f"{EVERYTHING!r} means every device of a room; it cannot name one")


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
        if args.get("scope") and not room:
            lights = tuple(d for d in devices if d.type == "light")
            group = f"all {len(lights)} lights" if len(lights) > 3 else ""
            return Resolution(devices=lights, group=group)
        return _room_lights(devices, room or here)
    if op_act == "device_read":
        return _readers(devices, args.get("quantity", ""), room or here)
    if op_act == "device_which":
        return _of_kind(devices, args.get("kind", ""), room)
    word = args.get("device", "")
    named = [d for d in devices if d.name == word]
    if not named and room and (joined := [d for d in devices if d.name == f"{room} {word}"]):
        named = joined  # "the bedroom fan" heard as the room and the fan
    if named:  # names are unique: "the study lamp" is that one, whatever the room
        return _able(op, tuple(named), word)
    devices = [d for d in devices if d.type != "todo"]
    if word == EVERYTHING:
        return _everything(devices, op, room or here, whole_home=bool(args.get("scope")))
    # A plural kind ("the blinds") is every one of them, even where it is also each one's
    # alias (an imported "kitchen blinds" is "blinds" in its room); so is a kind said once
    # for the whole home ("every thermostat in the house").
    whole_home = bool(args.get("scope"))
    plural = _can_first([d for d in devices if _every_one(d, word, whole_home)], op)
    if plural:
        return _all_of(plural, word, room, here, op)
    found = [d for d in devices if word in d.aliases]
    if found:
        return _one_of(found, word, room, here, op)
    single = _can_first([d for d in devices if word in nouns(d)[0]], op)
    in_room = [d for d in devices if d.room == word and effective_op(d, op)]
    if in_room and not any(effective_op(d, op) for d in single):
        # "lock up the garage": the room's lock, when no garage door can be locked.
        return _everything(devices, op, word)
    return _one_of(single, word, room, here, op)


def _every_one(device: DeviceSpec, word: str, whole_home: bool) -> bool:
    one, every = nouns(device)
    return word in every or (whole_home and word in one)


def _of_kind(devices: Sequence[DeviceSpec], kind: str, room: str) -> Resolution:
    """ "Which lights are on": every device of that kind (in that room) to read."""
    found = [d for d in devices if kind in (*nouns(d)[0], *nouns(d)[1]) and d.type != "todo"]
    # "Which windows are open" asks the window sensors, not the blinds covering them.
    found = [d for d in found if d.type == "binary_sensor"] or found
    found = [d for d in found if d.room == room] if room else found
    if not found:
        place = f" in the {room}" if room else ""
        return Resolution(refusal=f"There are no {kind}{place} that I know of.")
    return Resolution(devices=tuple(found), group=kind if kind.endswith("s") else _plural(kind))


def _can_first(found: list[DeviceSpec], op: str) -> list[DeviceSpec]:
    """Of the devices a kind word fits, the ones that can do it ("lock the door": the locks,
    not the door sensors), unless none can (then the refusal names one)."""
    able = [d for d in found if effective_op(d, op)]
    return able or found


def _one_of(
    found: list[DeviceSpec], word: str, room: str, here: str, op: str
) -> Resolution:
    """One device called `word` (an alias, or its kind): the room's, or ask which."""
    if found and not any(effective_op(d, op) for d in found):
        return _able(op, (found[0],), word)  # none of them can: say so, don't ask which
    if room:
        found = [d for d in found if d.room == room]
        if not found:
            return Resolution(refusal=f"There's no {word} in the {room}.")
    elif len(found) > 1:
        local = [d for d in found if here and d.room == here]
        if not local:
            return Resolution(question=_which(word, found), choices=tuple(found))
        found = local
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


def _all_of(found: list[DeviceSpec], word: str, room: str, here: str, op: str) -> Resolution:
    """Every device of a kind: the room's, this room's, or the home's."""
    where = room or (here if any(d.room == here for d in found) else "")
    if where:
        found = [d for d in found if d.room == where]
        if not found:
            return Resolution(refusal=f"There are no {word} in the {where} that I know of.")
    # A few are named ("The study shutters and the den curtains are closed."), more are
    # counted ("All 5 blinds in the kitchen are closed.").
    group = f"all {len(found)} {word}" + (f" in the {where}" if where else "")
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
