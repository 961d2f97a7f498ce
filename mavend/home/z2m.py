"""Zigbee2MQTT: what a device is sent on `<topic>/set` (reads on `<topic>/get`) and what its
state message on `<topic>` says, as Zigbee2MQTT documents its exposes.

- light, switch, plug: `{"state": "ON"|"OFF"}`, `brightness` on Z2M's 0-254 scale, a
  step as `brightness_step`, a colour as `{"color": {"hex": ...}}`, a white as
  `color_temp` in mired;
- cover: `{"state": "OPEN"|"CLOSE"|"STOP"}`, `{"position": 0-100}`; it reports `state`
  (OPEN/CLOSE) and `position`;
- lock: `{"state": "LOCK"|"UNLOCK"}`; it reports `state` and `lock_state` (locked,
  unlocked, not_fully_locked).

Thermostats, fans and valves differ from model to model in Zigbee2MQTT (setpoint and mode
property names, fan modes for speeds): those are reached through Home Assistant.

A cover's or a lock's state message is read as the Home Assistant state object it stands
for (`as_ha`), so mavend/home/classes.py decides whether it reached what was asked and
how to say it, for both ways of reaching a device.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mavend.config import DeviceSpec
from mavend.home import classes, mqtt, templates

BRIGHTNESS = 254  # Zigbee2MQTT's brightness scale: 0-254
_COVER = {"open": "OPEN", "close": "CLOSE", "stop": "STOP"}
_LOCK = {"lock": "LOCK", "unlock": "UNLOCK"}
_LOCK_STATES = {"locked": "locked", "unlocked": "unlocked", "not_fully_locked": "jammed"}


def message(device: DeviceSpec, op: str, level: int | None, value: str = "") -> mqtt.Message:
    if op == "state":
        return mqtt.Message(f"{device.mqtt}/get", templates.json_text({"state": ""}))
    body: dict[str, Any]
    if device.type == "cover":
        body = {"position": int(value)} if op == "set" else {"state": _COVER[op]}
    elif device.type == "lock":
        body = {"state": _LOCK[op]}
    else:
        body = _switched(op, level, value)
    return mqtt.Message(f"{device.mqtt}/set", templates.json_text(body), qos=1)


def _switched(op: str, level: int | None, value: str) -> dict[str, Any]:
    if op in ("up", "down"):  # Zigbee2MQTT's brightness_step, on its 0-254 scale
        step = round(classes.STEP * BRIGHTNESS / 100)
        return {"brightness_step": step if op == "up" else -step}
    if op not in ("on", "off", "set", "colour"):
        raise templates.TemplateError(f"there is no Zigbee2MQTT command to {op} a light or switch")
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
    """A cover's or lock's state message as the Home Assistant state it stands for."""
    if not state:
        return None
    raw = state.get("state")
    if device.type == "cover":
        position = state.get("position")
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
    if device.type == "lock":
        detail = state.get("lock_state")
        if isinstance(detail, str) and detail in _LOCK_STATES:
            return {"state": _LOCK_STATES[detail], "attributes": {}}
        if isinstance(raw, str) and raw.upper() in _LOCK.values():
            return {"state": "locked" if raw.upper() == "LOCK" else "unlocked", "attributes": {}}
    return None


def check(device: DeviceSpec, op: str, level: int | None, value: str) -> Callable[..., bool]:
    """Whether a state message shows the command done (the watch of mqtt.publish)."""

    def reached(state: Mapping[str, Any]) -> bool:
        if device.type in ("cover", "lock"):
            seen = as_ha(device, state)
            if seen is None:
                return False
            if op in ("state", "stop"):
                return True
            return classes.reached(device.type, op, value, seen)
        light = light_state(state)
        return light is not None and light_matches(op, level, light)

    return reached


def said(device: DeviceSpec, state: Mapping[str, Any] | None) -> str:
    """The state as said back, for any type this module reaches."""
    if device.type in ("cover", "lock"):
        seen = as_ha(device, state)
        return classes.describe(device.type, device.device_class, seen) if seen else ""
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
