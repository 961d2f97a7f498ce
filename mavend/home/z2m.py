"""Zigbee2MQTT: what a device is sent on `<topic>/set` (reads on `<topic>/get`) and what its
state message on `<topic>` says, as Zigbee2MQTT documents its exposes.

- light, switch, plug: `{"state": "ON"|"OFF"}`, `brightness` on Z2M's 0-254 scale, a
  step as `brightness_step`, a colour as `{"color": {"hex": ...}}`, a white as
  `color_temp` in mired;
- cover: `{"state": "OPEN"|"CLOSE"|"STOP"}`, `{"position": 0-100}`; it reports `state`
  (OPEN/CLOSE) and `position`;
- lock: `{"state": "LOCK"|"UNLOCK"}`; it reports `state` and `lock_state` (locked,
  unlocked, not_fully_locked);
- fan: `{"fan_state": "ON"|"OFF"}` and `{"fan_mode": "low"|"medium"|"high"}` (a speed
  asked in percent is the nearest of the three, as Home Assistant's MQTT fan reads them);
- climate (a radiator valve or thermostat): `system_mode`, the setpoint as the device
  names it (`occupied_heating_setpoint`, the Zigbee cluster's, or the
  `current_heating_setpoint` of many valves: the one it reports), `preset`, and it
  reports `local_temperature`;
- sensor: a reading named by its kind (`temperature`, `humidity`, ...); binary_sensor:
  `contact` (false: open), `occupancy`, `water_leak`, `smoke`, `vibration`.

Battery sensors sleep and never answer a /get: a reading is the last state the broker
kept (Zigbee2MQTT's `retain: true` for the device), or a fresh one if it answers.

A state message of any type but a light's is read as the Home Assistant state object it
stands for (`as_ha`), so mavend/home/classes.py decides whether it reached what was asked
and how to say it, for both ways of reaching a device.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from mavend.config import DeviceSpec
from mavend.home import classes, mqtt, templates

BRIGHTNESS = 254  # Zigbee2MQTT's brightness scale: 0-254
_COVER = {"open": "OPEN", "close": "CLOSE", "stop": "STOP"}
_LOCK = {"lock": "LOCK", "unlock": "UNLOCK"}
_LOCK_STATES = {"locked": "locked", "unlocked": "unlocked", "not_fully_locked": "jammed"}
# A fan's speeds, and the percentage each stands for (Home Assistant: 3 speeds).
FAN_MODES = ("low", "medium", "high")
_SETPOINTS = ("occupied_heating_setpoint", "current_heating_setpoint")
# binary_sensor device_class -> (Zigbee2MQTT property, whether true means "off")
_BINARY = {
    "door": ("contact", True),
    "window": ("contact", True),
    "opening": ("contact", True),
    "garage_door": ("contact", True),
    "motion": ("occupancy", False),
    "occupancy": ("occupancy", False),
    "presence": ("presence", False),
    "moisture": ("water_leak", False),
    "smoke": ("smoke", False),
    "vibration": ("vibration", False),
}
_UNITS = {"temperature": "°C", "humidity": "%", "co2": "ppm", "illuminance": "lx"}

# What each type can be told or asked through Zigbee2MQTT: classes.Z2M_OPS (there, not
# here, because the config reads it while loading: mavend/config/devices.py).
OPS = classes.Z2M_OPS
READS = frozenset({"state", "read"})


def needs_state(device: DeviceSpec, op: str) -> bool:
    """Whether the command is made from what the device holds now: a thermostat's
    setpoint name and target, a fan's speed for a step."""
    steps = op in ("up", "down")
    return (device.type == "climate" and (steps or op == "temperature")) or (
        device.type == "fan" and steps
    )


def keeps_last_state(device: DeviceSpec, op: str) -> bool:
    """Whether a read may be answered by the state the broker kept (a sleeping sensor)."""
    return op in READS and device.type in ("sensor", "binary_sensor", "climate")


def read_message(device: DeviceSpec) -> mqtt.Message:
    """The /get that asks a device for what a read of it needs."""
    if device.type == "sensor":
        asked: dict[str, Any] = {device.device_class or "temperature": ""}
    elif device.type == "binary_sensor":
        asked = {_binary(device)[0]: ""}
    elif device.type == "climate":
        asked = {"system_mode": "", "local_temperature": ""}
    elif device.type == "fan":
        asked = {"fan_state": "", "fan_mode": ""}
    else:
        asked = {"state": ""}
    return mqtt.Message(f"{device.mqtt}/get", templates.json_text(asked))


def message(
    device: DeviceSpec,
    op: str,
    level: int | None,
    value: str = "",
    known: Mapping[str, Any] | None = None,
) -> mqtt.Message:
    """The command; `known`: the device's state message, where `needs_state` says so."""
    if op in READS:
        return read_message(device)
    if op not in OPS.get(device.type, ()):
        raise templates.TemplateError(
            f"there is no Zigbee2MQTT command to {op} a {device.type.replace('_', ' ')}"
        )
    body: dict[str, Any]
    if device.type == "cover":
        body = {"position": int(value)} if op == "set" else {"state": _COVER[op]}
    elif device.type == "lock":
        body = {"state": _LOCK[op]}
    elif device.type == "fan":
        body = _fan(device, op, level, known)
    elif device.type == "climate":
        body = _climate(device, op, value, known)
    else:
        body = _switched(op, level, value)
    return mqtt.Message(f"{device.mqtt}/set", templates.json_text(body), qos=1)


def _fan(
    device: DeviceSpec, op: str, level: int | None, known: Mapping[str, Any] | None
) -> dict[str, Any]:
    if op in ("on", "off"):
        return {"fan_state": "ON" if op == "on" else "OFF"}
    if op == "set":
        return {"fan_mode": fan_mode(level or 0)} if level else {"fan_state": "OFF"}
    now = str((known or {}).get("fan_mode", "")).lower()
    if now not in FAN_MODES:  # off, or a mode with no place on the ladder (auto)
        if op == "down" or not known:
            raise templates.TemplateError(f"the {device.name} hasn't said what speed it is on")
        return {"fan_mode": FAN_MODES[0]}
    step = 1 if op == "up" else -1
    return {"fan_mode": FAN_MODES[max(0, min(len(FAN_MODES) - 1, FAN_MODES.index(now) + step))]}


def fan_mode(percent: int) -> str:
    """The nearest of the three speeds: 1-33 low, 34-66 medium, 67-100 high."""
    return FAN_MODES[min(len(FAN_MODES) - 1, max(0, (percent - 1) * len(FAN_MODES) // 100))]


def _climate(
    device: DeviceSpec, op: str, value: str, known: Mapping[str, Any] | None
) -> dict[str, Any]:
    if op in ("on", "off"):
        # A Zigbee thermostat is a radiator valve: on is heating (Home Assistant's
        # climate.turn_on picks the device's last mode, which Zigbee2MQTT doesn't keep).
        return {"system_mode": "heat" if op == "on" else "off"}
    if op == "mode":
        return {"system_mode": value}
    if op == "preset":
        return {"preset": next((p for p in device.presets if p.lower() == value.lower()), value)}
    key = setpoint_key(known)
    if op in ("up", "down"):
        seen = as_ha(device, known)
        value = classes.warmer_target(seen, op, value) if seen else ""
        if not value:
            raise templates.TemplateError(f"the {device.name} hasn't said what it's set to")
    number = float(value)
    return {key: int(number) if number.is_integer() else number}


def setpoint_key(state: Mapping[str, Any] | None) -> str:
    """The setpoint as this thermostat names it: the one it reports, else the Zigbee
    cluster's own (occupied_heating_setpoint)."""
    return next((k for k in _SETPOINTS if _number((state or {}).get(k))), _SETPOINTS[0])


def _binary(device: DeviceSpec) -> tuple[str, bool]:
    return _BINARY.get(device.device_class, ("contact", True))


def _switched(op: str, level: int | None, value: str) -> dict[str, Any]:
    if op in ("up", "down"):  # Zigbee2MQTT's brightness_step, on its 0-254 scale
        step = round(classes.STEP * BRIGHTNESS / 100)
        return {"brightness_step": step if op == "up" else -step}
    on = op in ("on", "colour") or (level or 0) > 0
    body: dict[str, Any] = {"state": "ON" if on else "OFF"}
    if op == "set" and level:
        body["brightness"] = round(level * BRIGHTNESS / 100)
    if op == "colour" and value in classes.WHITES:  # colour temperature in mired
        body["color_temp"] = round(1_000_000 / classes.WHITES[value])
    elif op == "colour":
        body["color"] = {"hex": "#{:02x}{:02x}{:02x}".format(*classes.COLOURS[value])}
    return body


def light_state(state: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """{"on": bool, "level": percent or None} from a light's, switch's or plug's message."""
    if not state or not isinstance(state.get("state"), str):
        return None
    brightness = state.get("brightness")
    level = round(brightness * 100 / BRIGHTNESS) if _number(brightness) else None
    return {"on": state["state"].upper() == "ON", "level": level}


def as_ha(device: DeviceSpec, state: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A state message as the Home Assistant state it stands for (None for a light,
    switch or plug, read by `light_state`, or a message that says nothing of it)."""
    if not state:
        return None
    read = _AS_HA.get(device.type)
    return read(device, state) if read else None


def _cover(device: DeviceSpec, state: Mapping[str, Any]) -> dict[str, Any] | None:
    raw, position = state.get("state"), state.get("position")
    attributes = {"current_position": position} if _number(position) else {}
    if isinstance(raw, str) and raw.upper() in ("OPEN", "CLOSE"):
        said = "open" if raw.upper() == "OPEN" else "closed"
    elif _number(position):
        said = "closed" if position == 0 else "open"
    else:
        return None
    if _number(position) and position > 0:  # a stopped cover reports where it is
        said = "open"
    return {"state": said, "attributes": attributes}


def _lock(device: DeviceSpec, state: Mapping[str, Any]) -> dict[str, Any] | None:
    raw, detail = state.get("state"), state.get("lock_state")
    if isinstance(detail, str) and detail in _LOCK_STATES:
        return {"state": _LOCK_STATES[detail], "attributes": {}}
    if isinstance(raw, str) and raw.upper() in _LOCK.values():
        return {"state": "locked" if raw.upper() == "LOCK" else "unlocked", "attributes": {}}
    return None


def _fan_as_ha(device: DeviceSpec, state: Mapping[str, Any]) -> dict[str, Any] | None:
    raw, mode = state.get("fan_state"), str(state.get("fan_mode", "")).lower()
    if isinstance(raw, str) and raw.upper() in ("ON", "OFF"):
        on = raw.upper() == "ON"
    elif mode:
        on = mode != "off"
    else:
        return None
    attributes: dict[str, Any] = {}
    if on and mode in FAN_MODES:
        attributes["percentage"] = round((FAN_MODES.index(mode) + 1) * 100 / len(FAN_MODES))
    return {"state": "on" if on else "off", "attributes": attributes}


def _climate_as_ha(device: DeviceSpec, state: Mapping[str, Any]) -> dict[str, Any] | None:
    mode = state.get("system_mode")
    if not isinstance(mode, str):
        return None
    attributes: dict[str, Any] = {}
    target = state.get(setpoint_key(state))
    if _number(target):
        attributes["temperature"] = target
    if _number(now := state.get("local_temperature")):
        attributes["current_temperature"] = now
    if isinstance(preset := state.get("preset"), str):
        attributes["preset_mode"] = preset
    return {"state": mode.lower(), "attributes": attributes}


def _sensor(device: DeviceSpec, state: Mapping[str, Any]) -> dict[str, Any] | None:
    kind = device.device_class or "temperature"
    value = state.get(kind)
    if not _number(value):
        return None
    unit = _UNITS.get(kind, "")
    return {"state": f"{value:g}", "attributes": {"unit_of_measurement": unit}}


def _binary_sensor(device: DeviceSpec, state: Mapping[str, Any]) -> dict[str, Any] | None:
    name, inverted = _binary(device)
    value = state.get(name)
    if not isinstance(value, bool):
        return None
    return {"state": "on" if value != inverted else "off", "attributes": {}}


_AS_HA: dict[str, Callable[[DeviceSpec, Mapping[str, Any]], dict[str, Any] | None]] = {
    "cover": _cover,
    "lock": _lock,
    "fan": _fan_as_ha,
    "climate": _climate_as_ha,
    "sensor": _sensor,
    "binary_sensor": _binary_sensor,
}


def check(
    device: DeviceSpec, op: str, level: int | None, value: str, command: mqtt.Message
) -> Callable[..., bool]:
    """Whether a state message shows `command` (this module's `message`) done: the watch
    of mqtt.publish."""
    sent = _payload(command.payload) if op not in READS else {}

    def reached(state: Mapping[str, Any]) -> bool:
        if device.type not in _AS_HA:
            light = light_state(state)
            return light is not None and light_matches(op, level, light)
        seen = as_ha(device, state)
        if seen is None:
            return False
        if op in READS or op == "stop":
            return True
        if device.type == "fan":
            return _fan_reached(sent, state, seen)
        if device.type == "climate":
            return all(_same(state.get(k), v) for k, v in sent.items())
        return classes.reached(device.type, op, value, seen)

    return reached


def _fan_reached(
    sent: Mapping[str, Any], state: Mapping[str, Any], seen: Mapping[str, Any]
) -> bool:
    if "fan_mode" in sent:
        return str(state.get("fan_mode", "")).lower() == sent["fan_mode"]
    return seen["state"] == str(sent.get("fan_state", "")).lower()


def _same(seen: object, sent: object) -> bool:
    if _number(seen) and _number(sent):
        return abs(float(seen) - float(sent)) < 0.01  # type: ignore[arg-type]
    return str(seen).lower() == str(sent).lower()


def _payload(payload: str) -> dict[str, Any]:
    loaded = json.loads(payload)
    return loaded if isinstance(loaded, dict) else {}


def said(device: DeviceSpec, state: Mapping[str, Any] | None) -> str:
    """A light's, switch's or plug's state as said back ("on, at 40 percent")."""
    light = light_state(state)
    if not light:
        return ""
    if light["on"] and light.get("level") is not None:
        return f"on, at {light['level']} percent"
    return "on" if light["on"] else "off"


def light_matches(op: str, level: int | None, seen: Mapping[str, Any]) -> bool:
    if op in ("state", "down"):
        return True
    if op == "up":
        return seen["on"]
    want_on = op in ("on", "colour") or (op == "set" and (level or 0) > 0)
    if seen["on"] != want_on:
        return False
    # A light reports brightness on its own scale: within 2 percent is the level asked for.
    return not (
        op == "set" and level and seen["level"] is not None and abs(seen["level"] - level) > 2
    )


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
