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

from collections.abc import Sequence
from dataclasses import dataclass

from mavend.config import ActSlot, ActSpec, ActsSettings, DeviceSpec

# Generated act -> what it does. The handler reads the operation from this table,
# so a device act can only ever switch, dim or read a device of the table.
OPERATIONS = {
    "device_on": "on",
    "device_off": "off",
    "device_state": "state",
    "light_set": "set",
    "lights_on": "on",
    "lights_off": "off",
}
DESCRIPTIONS = {
    "device_on": "turn on a light or a plug",
    "device_off": "turn off a light or a plug",
    "device_state": "say whether a light or a plug is on",
    "light_set": "set a light's brightness in percent",
    "lights_on": "turn on the lights in a room",
    "lights_off": "turn off the lights in a room",
}


def device_acts(devices: Sequence[DeviceSpec]) -> tuple[ActSpec, ...]:
    names = sorted({n for d in devices for n in (d.name, *d.aliases)})
    rooms = sorted({d.room for d in devices if d.room})
    room = {"room": ActSlot(type="enum", values=tuple(rooms), optional=True)} if rooms else {}
    device = {"device": ActSlot(type="enum", values=tuple(names))}
    slots: dict[str, dict[str, ActSlot]] = {
        "device_on": {**device, **room},
        "device_off": {**device, **room},
        "device_state": {**device, **room},
    }
    if any(d.dimmable for d in devices):
        brightness = {"brightness": ActSlot(type="int", min=0, max=100)}
        slots["light_set"] = {**device, **brightness, **room}
    if any(d.type == "light" for d in devices):
        slots["lights_on"] = dict(room)
        slots["lights_off"] = dict(room)
    return tuple(
        ActSpec(name=name, kind="device", description=DESCRIPTIONS[name], slots=act_slots)
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


@dataclass(frozen=True)
class Resolution:
    devices: tuple[DeviceSpec, ...] = ()
    question: str = ""  # set when the words leave it open: ask, never guess
    refusal: str = ""  # set when nothing fits (no lamp in the garage)
    group: str = ""  # "the kitchen lights": how to name a room's lights in the reply


def resolve(
    devices: Sequence[DeviceSpec], op_act: str, args: dict[str, str], here: str
) -> Resolution:
    """The devices a checked request means. `here`: the turn's room, "" if unknown."""
    room = args.get("room", "")
    if op_act in ("lights_on", "lights_off"):
        return _room_lights(devices, room or here)
    word = args.get("device", "")
    named = [d for d in devices if d.name == word]
    if named:  # names are unique: "the study lamp" is that one, whatever the room
        return _only_dimmable(op_act, tuple(named))
    found = [d for d in devices if word in d.aliases]
    if room:
        found = [d for d in found if d.room == room]
        if not found:
            return Resolution(refusal=f"There's no {word} in the {room}.")
    elif len(found) > 1:
        local = [d for d in found if here and d.room == here]
        if not local:
            where = sorted({d.room or d.name for d in found})
            return Resolution(question=f"Which {word}: the one in the {' or the '.join(where)}?")
        found = local
    return _only_dimmable(op_act, tuple(found))


def _only_dimmable(op_act: str, found: tuple[DeviceSpec, ...]) -> Resolution:
    if not found:
        return Resolution(refusal="I don't know that device.")
    if op_act == "light_set" and (fixed := [d for d in found if not d.dimmable]):
        return Resolution(refusal=f"The {fixed[0].name} can't be dimmed.")
    return Resolution(devices=found)


def _room_lights(devices: Sequence[DeviceSpec], room: str) -> Resolution:
    lights = [d for d in devices if d.type == "light"]
    rooms = sorted({d.room for d in lights if d.room})
    if not room:
        if rooms:
            return Resolution(question=f"Which room's lights: the {' or the '.join(rooms)}?")
        return Resolution(devices=tuple(lights), group="all the lights")
    here = tuple(d for d in lights if d.room == room)
    if not here:
        return Resolution(refusal=f"There are no lights in the {room} that I know of.")
    return Resolution(devices=here, group=f"the {room} lights" if len(here) > 1 else "")
