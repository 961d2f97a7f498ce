"""`[[devices]]` as acts: the acts the devices table adds to the allowlist while the
config is read (`Settings` does it when it is built), and what each one does.

Their `device` slot enumerates every device name and alias, their optional `room` slot
every room, so the grammar's {device} and {room} lists and the LLM's GBNF enums (both
built from act slots) grow with the table: adding a lamp is one config entry. Every act
shares the same `device` and `room` enums, because the grammar keys its lists by slot
name.

This is part of reading the config, so it stands on the config's own types and on the
home's vocabulary (mavend/home/classes.py, which imports nothing of mavend); which
devices a request means, and running an act, are mavend/home/'s (devices.py, run.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mavend.config.acts import ActSlot, ActSpec, ActsSettings
from mavend.config.home import DeviceSpec, FloorSpec
from mavend.home import classes

# Generated act -> (operation, the value it always sends, its value slot). The handler
# reads the operation from this table, so a device act can only ever do one of its
# device's class operations (mavend/home/classes.py) to a device of the table
# (mavend/home/run.py).
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
    # "turn the heating down two degrees": a thermostat's step, said (else its own)
    "device_up": "by",
    "device_down": "by",
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
# "did i leave anything on": a which-question of every kind at once ("is everything
# locked": of every kind, each one)
ANYTHING = "anything"
# Said for the whole home ("all the lights in the house"): an optional `scope` slot, so a
# plural without a room means every room, not this one.
WHOLE_HOME = (
    "in the house", "in the home", "in the flat", "in the apartment", "in the whole house",
    "around the house", "throughout the house", "all over the house", "everywhere",
    "in every room", "in all the rooms", "in all rooms", "in each room", "all around the house",
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
        ops = tuple(op for op in ops if op in classes.Z2M_OPS[device.type])
    return ops


MAIN_LIGHT = ("big light", "main light", "overhead light", "top light")
_MAIN_LIGHT_NAME = re.compile(r"\b(?:ceiling|overhead|main|pendant|big)\b")


def nouns(device: DeviceSpec) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What this device is called when not by name: (one of them, every one of them).

    Its class's words (by device_class), and its name's last word when that names a kind
    ("the blinds" for the kitchen blinds, "the lamp" for the desk lamp)."""
    one, every = classes.CLASSES[device.type].words(device.device_class)
    if device.type == "light" and _MAIN_LIGHT_NAME.search(device.name):
        # "put the big light on": a room's ceiling light, as the British call it
        one, every = (*one, *MAIN_LIGHT), (*every, *(plural_of(w) for w in MAIN_LIGHT))
    # An alias that ends in a kind is a kind of its own, said in the plural for all of
    # them: "the heater plugs" for every device called "heater plug".
    kinds = tuple(a for a in device.aliases if a.rsplit(" ", 1)[-1] in classes.KIND_WORDS)
    every = (*every, *(plural_of(a) for a in kinds if " " in a))
    head = device.name.rsplit(" ", 1)[-1]
    # Not when the kind is said in more words: a garage door is never "the door".
    longer = any(w.endswith(f" {head}") for w in (*one, *every))
    if head in classes.KIND_WORDS and head not in one and head not in every and not longer:
        plural = head.endswith("s") and head[:-1] in classes.KIND_WORDS
        return (one, (*every, head)) if plural else ((*one, head), every)
    return one, every


_SOCKET_WORDS = ("plug", "socket", "outlet", "smart plug")


def unplugged(name: str) -> str:
    """A plug's name without the word for it: the "garden heater plug" is switched on as
    "the garden heater" (what it powers). "" when the name has no such word."""
    for word in _SOCKET_WORDS:
        if name.endswith(f" {word}"):
            return name[: -len(word) - 1]
    return ""


# The words a state question asks a lock with ("did i lock ...", "is ... unlocked").
LOCK_WORDS = ("lock", "locked", "unlock", "unlocked")


def in_room_names(device: DeviceSpec) -> tuple[str, ...]:
    """What a device is called inside its room: the "garage heater plug" is "the heater
    plug" or "the heater" in the garage ("switch the heater in the garage on")."""
    room = f"{device.room} " if device.room else ""
    if not room or not device.name.startswith(room):
        return ()
    rest = device.name[len(room):]
    return tuple(n for n in (rest, unplugged(rest)) if n)


# Words said of many that are no noun with a plural: the things they stand for.
_MASS = {"heating": "thermostats", "heat": "thermostats", "water": "water valves",
         "gas": "gas valves", "music": "players", "sound": "players"}


def plural_of(words: str) -> str:
    """ "blind" -> "blinds"; "heating" -> "thermostats" ("All 5 heatings are off")."""
    if words in _MASS:
        return _MASS[words]
    return words + ("es" if words.endswith(("s", "sh", "ch", "x")) else "s")


def floor_phrases(floor: FloorSpec) -> tuple[str, ...]:
    """How a floor is said after a command: "downstairs", "on the ground floor", "in the
    basement" (each name and alias, bare and with its preposition)."""
    return tuple(dict.fromkeys(
        phrase for name in (floor.name, *floor.aliases)
        for phrase in (name, f"on the {name}", f"in the {name}", f"on {name}")
    ))


def floor_rooms(floors: Sequence[FloorSpec]) -> dict[str, tuple[str, ...]]:
    """Each way a floor is said -> its rooms."""
    return {phrase: tuple(floor.rooms) for floor in floors for phrase in floor_phrases(floor)}


# Acts about one device or a reading: nothing to leave out of them.
_ONE_ONLY = frozenset({"device_read", "device_state", "device_temperature", "device_set"})


def device_acts(
    devices: Sequence[DeviceSpec], floors: Sequence[FloorSpec] = ()
) -> tuple[ActSpec, ...]:
    # A to-do list is reached through the list commands (mavend/lists/), not an act.
    devices = [d for d in devices if d.type != "todo"]
    ops = {op for d in devices for op in device_ops(d)}
    spoken = {n for d in devices for n in (d.name, *d.aliases, unplugged(d.name),
                                            *in_room_names(d)) if n}
    # Class words ("the blinds", "the thermostat", "the lights"): lights_on and lights_off
    # come first in the grammar, so "turn on the lights" is still the room's lights.
    spoken |= {w for d in devices for ws in nouns(d) for w in ws}
    if any(d.type != "scene" and d.type != "script" for d in devices):
        spoken.add(EVERYTHING)
    rooms = sorted({d.room for d in devices if d.room})
    room = {"room": ActSlot(type="enum", values=tuple(rooms), optional=True)} if rooms else {}
    # A floor is said where the whole home is ("lights off downstairs"): its rooms' devices.
    room["scope"] = ActSlot(type="enum", values=(*WHOLE_HOME, *floor_rooms(floors)),
                            optional=True)
    device = {"device": ActSlot(type="enum", values=tuple(sorted(spoken)))}
    # "turn off everything in the kitchen except the heater": one of them left as it is;
    # "all the lights except the hallway light", "everything but the kitchen": a room's
    # devices of a kind, or all of a room's, left as they are
    in_rooms = {f"{d.room} {w}" for d in devices if d.room for ws in nouns(d) for w in ws}
    but = {"except": ActSlot(type="enum", values=tuple(sorted(
        (spoken | in_rooms | set(rooms)) - {EVERYTHING})), optional=True)}
    values = {
        "brightness": ActSlot(type="int", min=0, max=100),
        "percent": ActSlot(type="int", min=0, max=100),
        # Celsius or Fahrenheit, as the thermostat counts (Home Assistant refuses its own
        # out-of-range values, and the reply says so).
        "degrees": ActSlot(type="int", min=5, max=95),
        # A step said in degrees ("down a degree", "up two degrees"); only a thermostat's.
        "by": ActSlot(type="int", min=1, max=10, optional=True),
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
    # "all the lights", "is every window shut": said with no room, the whole home's
    every = {"every": ActSlot(type="enum", values=("all", "both", "each", "every"),
                              optional=True)}
    slots: dict[str, dict[str, ActSlot]] = {}
    for name, op in OPERATIONS.items():
        if name in ("lights_on", "lights_off"):
            if any(d.type == "light" for d in devices):
                slots[name] = {**room, **every, **but}
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
            kinds = sorted({w for d in devices for ws in nouns(d) for w in ws}
                           | {ANYTHING, EVERYTHING})
            kind = {"kind": ActSlot(type="enum", values=tuple(kinds))}
            slots[name] = {**kind, "state": values["state"], **every, **room}
            continue
        extra = {"half": values["half"]} if name == "device_temperature" else {}
        if name == "device_state":
            # "did i lock the garage door": asked of its lock, not of the door (a cover)
            extra = {"about": ActSlot(type="enum", values=LOCK_WORDS, optional=True)}
        slots[name] = {**device, **({value: values[value]} if value else {}), **extra, **room,
                       **({**but, **every} if name not in _ONE_ONLY else {})}
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


def with_device_acts(
    acts: ActsSettings, devices: Sequence[DeviceSpec], floors: Sequence[FloorSpec] = ()
) -> ActsSettings:
    """The allowlist plus the generated acts (replacing any from an earlier pass)."""
    check_devices(devices)
    check_floors(devices, floors)
    own = tuple(a for a in acts.allow if a.kind != "device")
    generated = device_acts(devices, floors)
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


def check_floors(devices: Sequence[DeviceSpec], floors: Sequence[FloorSpec]) -> None:
    rooms = {d.room for d in devices if d.room}
    said = [p for f in floors for p in floor_phrases(f)]
    if twice := sorted({p for p in said if said.count(p) > 1}):
        raise ValueError(f"floor names must differ; {twice[0]!r} is said for two floors")
    names = {n for d in devices for n in (d.name, *d.aliases)}
    for floor in floors:
        if unknown := [r for r in floor.rooms if r not in rooms]:
            raise ValueError(
                f"floor {floor.name!r} names room(s) no device is in: {unknown} "
                f"(the rooms are {sorted(rooms)})"
            )
        if clash := sorted(({floor.name, *floor.aliases} & (rooms | names)) | (
                {floor.name, *floor.aliases} & set(WHOLE_HOME))):
            raise ValueError(f"{clash[0]!r} is both a floor and a room or device name")
