"""Device classes as data: what each `[[devices]] type` can do, and how Home Assistant does it.

One table, `CLASSES`, says for every type: its Home Assistant domain, the words people
use for one ("the blinds", "the thermostat"), the operations it has, the service each
operation calls and the `supported_features` bit it needs (as Home Assistant's
documentation names them), and how a state it reports is said back. The generated acts
(mavend/config/devices.py), their grammar lists and GBNF enums, the importer's choice of
type (mavend/home/importer.py) and the reply all read this table: a new class is a new
entry here and sentences in grammars/home.yaml.

An operation is a plain word ("open", "set", "lock"); its value, when it has one, is a
checked slot value: a percentage, degrees, a mode, a colour name. Nothing here is sent
before run.py has checked the value against the act's slot and against the device.

This module imports nothing from mavend: mavend.config validates `type` and `supports`
against it while loading.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

State = Mapping[str, Any]  # a Home Assistant state object: {"state": ..., "attributes": {...}}
Data = dict[str, Any]


@dataclass(frozen=True)
class Operation:
    service: str  # in the class's domain: "open_cover"
    feature: int = 0  # the supported_features bit it needs; 0: every device of the class
    data: Callable[[str], Data] = lambda value: {}  # the service data for a checked value
    reached: Callable[[State, str], bool] = lambda state, value: True


@dataclass(frozen=True)
class DeviceClass:
    type: str  # `[[devices]] type`
    domain: str  # Home Assistant's domain
    nouns: tuple[str, ...]  # what one is called when not by its name: "fan"
    plurals: tuple[str, ...]  # "fans": every one in the room (or the home)
    ops: Mapping[str, Operation]
    # What a device does when its `supports` is empty: every operation (Home Assistant says
    # so when a device lacks one) but where a flag of its own decides (a light's dimmable).
    default_ops: tuple[str, ...] = ()
    # device_class (Home Assistant's) -> nouns, where the kind changes the words.
    kinds: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    mqtt: bool = False  # reachable through Zigbee2MQTT's topics (mavend/home/run.py)

    def supported(self, supports: tuple[str, ...]) -> tuple[str, ...]:
        return supports or self.default_ops or tuple(self.ops)

    def words(self, device_class: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return self.kinds.get(device_class, (self.nouns, self.plurals))


def _state_is(*states: str) -> Callable[[State, str], bool]:
    return lambda state, value: state.get("state") in states


def _attr(state: State, name: str) -> Any:
    return (state.get("attributes") or {}).get(name)


def _near(name: str, full: float, within: float = 2.0) -> Callable[[State, str], bool]:
    """The attribute `name`, whose 100 percent is `full`, is within `within` percent."""

    def reached(state: State, value: str) -> bool:
        seen = _attr(state, name)
        return _number(seen) and abs(seen * 100 / full - float(value)) <= within

    return reached


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _preset_is(state: State, value: str) -> bool:
    return str(_attr(state, "preset_mode") or "").lower() == value.lower()


def _on_level(state: State, value: str) -> bool:
    return state.get("state") == ("on" if int(value) > 0 else "off")


def _positioned(kind: str) -> dict[str, Operation]:
    def at(state: State, value: str) -> bool:
        position = _attr(state, "current_position")
        if _number(position):
            return abs(position - int(value)) <= 2
        return state.get("state") == ("closed" if int(value) == 0 else "open")

    return {
        "open": Operation(f"open_{kind}", 1, reached=_state_is("open", "opening")),
        "close": Operation(f"close_{kind}", 2, reached=_state_is("closed", "closing")),
        "set": Operation(
            f"set_{kind}_position", 4, lambda v: {"position": int(v)}, reached=at
        ),
        "stop": Operation(f"stop_{kind}", 8),
        "state": Operation(""),
    }


# How far "brighter", "louder", "faster" go when no level is said (percent).
STEP = 20

# Colours people say, as CSS (and Home Assistant's color_name) defines them.
COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (255, 0, 0),
    "green": (0, 128, 0),
    "blue": (0, 0, 255),
    "yellow": (255, 255, 0),
    "orange": (255, 165, 0),
    "purple": (128, 0, 128),
    "pink": (255, 192, 203),
    "white": (255, 255, 255),
    "cyan": (0, 255, 255),
    "magenta": (255, 0, 255),
    "turquoise": (64, 224, 208),
    "violet": (238, 130, 238),
    "lime": (0, 255, 0),
    "gold": (255, 215, 0),
}
# White light by its warmth, in kelvin (Home Assistant's color_temp_kelvin).
WHITES: dict[str, int] = {"warm white": 2700, "neutral white": 4000, "cool white": 6500}


def _colour_data(value: str) -> Data:
    if value in WHITES:
        return {"color_temp_kelvin": WHITES[value]}
    return {"rgb_color": list(COLOURS[value])}


def _colour_reached(state: State, value: str) -> bool:
    if value in WHITES:
        seen = _attr(state, "color_temp_kelvin")
        return _number(seen) and abs(seen - WHITES[value]) <= 150
    return state.get("state") == "on" and _attr(state, "rgb_color") in (
        list(COLOURS[value]),
        COLOURS[value],
    )


_ON_OFF = {
    "on": Operation("turn_on", reached=_state_is("on")),
    "off": Operation("turn_off", reached=_state_is("off")),
    "state": Operation(""),
}
LIGHT = DeviceClass(
    "light",
    "light",
    ("light", "lamp"),
    ("lights", "lamps"),
    {
        **_ON_OFF,
        "set": Operation(
            "turn_on", 0, lambda v: {"brightness_pct": int(v)}, lambda s, v: _light_at(s, v)
        ),
        "colour": Operation("turn_on", 0, _colour_data, _colour_reached),
        # A step, as Home Assistant's brightness_step_pct ("brighten the lamp").
        "up": Operation("turn_on", 0, lambda v: {"brightness_step_pct": STEP}, _state_is("on")),
        "down": Operation("turn_on", 0, lambda v: {"brightness_step_pct": -STEP}),
    },
    default_ops=("on", "off", "state"),
    mqtt=True,
)


# A fan runs at its own steps (25 % for a four-speed fan): within half a step is reached.
_fan_speed = _near("percentage", 100, within=13)


def _light_at(state: State, value: str) -> bool:
    if int(value) == 0:
        return state.get("state") == "off"
    return state.get("state") == "on" and _near("brightness", 255)(state, value)


SWITCH = DeviceClass("switch", "switch", ("switch",), ("switches",), _ON_OFF, mqtt=True)
PLUG = DeviceClass("plug", "switch", ("plug", "socket"), ("plugs", "sockets"), _ON_OFF, mqtt=True)
COVER = DeviceClass(
    "cover",
    "cover",
    ("cover",),
    ("covers",),
    _positioned("cover"),
    mqtt=True,
    kinds={
        # What covers a window is what "close the windows" can close (a window sensor
        # cannot, and is left out by what it can do: devices._can_first).
        "blind": (("blind", "shade", "blinds", "shades"), ("blinds", "shades", "windows")),
        "shade": (("shade", "blind", "shades", "blinds"), ("shades", "blinds", "windows")),
        "shutter": (("shutter", "shutters"), ("shutters", "windows")),
        "curtain": (("curtain", "curtains", "drapes"), ("curtains", "drapes", "windows")),
        "awning": (("awning",), ("awnings",)),
        "garage": (("garage door", "garage"), ("garage doors",)),
        "gate": (("gate",), ("gates",)),
        "door": (("door",), ("doors",)),
        "window": (("window",), ("windows",)),
    },
)
VALVE = DeviceClass(
    "valve",
    "valve",
    ("valve", "tap"),
    ("valves", "taps"),
    _positioned("valve"),
    kinds={"water": (("water valve", "valve", "water", "tap", "water tap", "stopcock"),
                     ("valves", "taps")),
           "gas": (("gas valve", "gas"), ("gas valves",))},
)
LOCK = DeviceClass(
    "lock",
    "lock",
    ("lock", "door lock", "door"),
    ("locks", "door locks", "doors"),
    {
        "lock": Operation("lock", reached=_state_is("locked", "locking")),
        "unlock": Operation("unlock", reached=_state_is("unlocked", "unlocking", "open")),
        "state": Operation(""),
    },
    mqtt=True,
)
FAN = DeviceClass(
    "fan",
    "fan",
    ("fan",),
    ("fans",),
    {
        "on": Operation("turn_on", 32, reached=_state_is("on")),
        "off": Operation("turn_off", 16, reached=_state_is("off")),
        "set": Operation(
            "set_percentage",
            1,
            lambda v: {"percentage": int(v)},
            lambda s, v: _on_level(s, v) and (int(v) == 0 or _fan_speed(s, v)),
        ),
        "preset": Operation(
            "set_preset_mode", 8, lambda v: {"preset_mode": v}, lambda s, v: _preset_is(s, v)
        ),
        "up": Operation("increase_speed", 1, reached=_state_is("on")),
        "down": Operation("decrease_speed", 1),
        "oscillate": Operation(
            "oscillate",
            2,
            lambda v: {"oscillating": v == "on"},
            lambda s, v: _attr(s, "oscillating") is (v == "on"),
        ),
        "state": Operation(""),
    },
    mqtt=True,
)
CLIMATE = DeviceClass(
    "climate",
    "climate",
    ("thermostat", "heating", "air conditioning", "heat pump"),
    ("thermostats",),
    {
        "on": Operation("turn_on", reached=lambda s, v: s.get("state") not in ("off", None)),
        "off": Operation("turn_off", reached=_state_is("off")),
        "temperature": Operation(
            "set_temperature",
            1,
            lambda v: {"temperature": float(v) if "." in v else int(v)},
            lambda s, v: _number(_attr(s, "temperature"))
            and abs(_attr(s, "temperature") - float(v)) < 0.01,
        ),
        "mode": Operation(
            "set_hvac_mode", 0, lambda v: {"hvac_mode": v}, lambda s, v: s.get("state") == v
        ),
        "preset": Operation(
            "set_preset_mode", 16, lambda v: {"preset_mode": v}, lambda s, v: _preset_is(s, v)
        ),
        # A step of its own target_temp_step (1 when it has none) from the target it holds:
        # run.py reads the target first and sends "temperature" (warmer_target).
        "up": Operation("set_temperature", 1),
        "down": Operation("set_temperature", 1),
        "state": Operation(""),
    },
    mqtt=True,
)


def _as_number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def warmer_target(state: State, op: str, by: str = "") -> str:
    """The new target for a thermostat's step up or down, or "" when it holds none. The
    step is `by` degrees when said ("down a degree"), else its own target_temp_step."""
    target, step = _attr(state, "temperature"), _attr(state, "target_temp_step")
    if not _number(target):
        return ""
    step = step if _number(step) and step > 0 else 1
    said = _as_number(by)
    if said is not None and said > 0:
        step = said
    value = target + step if op == "up" else target - step
    return f"{value:g}"


PLAYER = DeviceClass(
    "media_player",
    "media_player",
    ("player", "media player"),
    ("players", "media players"),
    {
        "on": Operation("turn_on", 128, reached=lambda s, v: s.get("state") != "off"),
        "off": Operation("turn_off", 256, reached=_state_is("off")),
        "play": Operation("media_play", 16384, reached=_state_is("playing")),
        "pause": Operation("media_pause", 1, reached=_state_is("paused", "idle", "off")),
        "stop": Operation("media_stop", 4096, reached=_state_is("idle", "off", "paused")),
        "next": Operation("media_next_track", 32),
        # Home Assistant registers volume_up/down for VOLUME_STEP or VOLUME_SET (it steps
        # a set-only player's level itself): either bit will do.
        "up": Operation("volume_up", 1024 | 4),
        "down": Operation("volume_down", 1024 | 4),
        "previous": Operation("media_previous_track", 16),
        "set": Operation(
            "volume_set",
            4,
            lambda v: {"volume_level": int(v) / 100},
            _near("volume_level", 1.0),
        ),
        "mute": Operation(
            "volume_mute",
            8,
            lambda v: {"is_volume_muted": v == "on"},
            lambda s, v: _attr(s, "is_volume_muted") is (v == "on"),
        ),
        "state": Operation(""),
    },
    # A speaker is not "the tv": Home Assistant's device_class says which (a name ending
    # in "tv" or "speaker" says it too: devices.nouns).
    # Each is a player too ("what's playing in the kitchen" asks the room's player).
    kinds={
        "speaker": (("speaker", "stereo", "player", "media player"),
                    ("speakers", "players", "media players")),
        "tv": (("tv", "television", "telly", "player", "media player"),
               ("tvs", "televisions", "players", "media players")),
        "receiver": (("receiver", "stereo", "amp", "player", "media player"),
                     ("receivers", "players", "media players")),
    },
)
VACUUM = DeviceClass(
    "vacuum",
    "vacuum",
    ("vacuum", "robot vacuum", "hoover", "robot"),
    ("vacuums",),
    {
        "start": Operation("start", 8192, reached=_state_is("cleaning")),
        "stop": Operation("stop", 8, reached=_state_is("idle", "paused", "docked")),
        "pause": Operation("pause", 4, reached=_state_is("paused", "idle", "docked")),
        "dock": Operation("return_to_base", 16, reached=_state_is("returning", "docked")),
        "state": Operation(""),
    },
)
SENSOR = DeviceClass(
    "sensor", "sensor", ("sensor",), ("sensors",), {"state": Operation("")}, mqtt=True
)
BINARY_SENSOR = DeviceClass(
    "binary_sensor",
    "binary_sensor",
    ("sensor",),
    ("sensors",),
    {"state": Operation("")},
    kinds={
        "door": (("door",), ("doors",)),
        "garage_door": (("garage door",), ("garage doors",)),
        "window": (("window",), ("windows",)),
        "opening": (("opening",), ("openings",)),
        "motion": (("motion sensor",), ("motion sensors",)),
        "moisture": (("leak sensor", "water sensor"), ("leak sensors",)),
    },
    mqtt=True,
)
SCENE = DeviceClass("scene", "scene", ("scene",), ("scenes",), {"activate": Operation("turn_on")})
SCRIPT = DeviceClass(
    "script", "script", ("script",), ("scripts",), {"activate": Operation("turn_on")}
)

# A to-do list: the same verbs as mavend's own lists (mavend/lists/), through Home
# Assistant's todo services (mavend/home/todo.py); it generates no device act.
TODO = DeviceClass(
    "todo",
    "todo",
    ("list",),
    ("lists",),
    {
        "add": Operation("add_item", 1, lambda v: {"item": v}),
        "remove": Operation("remove_item", 2, lambda v: {"item": v}),
        "tick": Operation("update_item", 4, lambda v: {"item": v, "status": "completed"}),
        "untick": Operation("update_item", 4, lambda v: {"item": v, "status": "needs_action"}),
        "read": Operation("get_items"),
    },
)

CLASSES: dict[str, DeviceClass] = {
    c.type: c
    for c in (
        LIGHT, SWITCH, PLUG, COVER, VALVE, LOCK, FAN, CLIMATE, PLAYER, VACUUM, SENSOR,
        BINARY_SENSOR, SCENE, SCRIPT, TODO,
    )
}

# Home Assistant's device classes whose state "on" means open (binary_sensor docs).
OPEN_WHEN_ON = frozenset({"door", "garage_door", "opening", "window"})
# A sensor's reading by its device_class: how it is asked for ("what's the humidity").
QUANTITIES = ("temperature", "humidity")
UNITS = {"%": "percent", "°C": "degrees", "°F": "degrees Fahrenheit", "ppm": "parts per million"}


def call(device_type: str, op: str, value: str, domain: str = "") -> tuple[str, Data]:
    """Home Assistant's service ("cover.set_cover_position") and data for a checked value.

    `domain`: the entity's own, where a type spans two (a switch may be an input_boolean)."""
    cls = CLASSES[device_type]
    operation = cls.ops[op]
    return f"{domain or cls.domain}.{operation.service}", operation.data(value)


def reached(device_type: str, op: str, value: str, state: State) -> bool:
    return CLASSES[device_type].ops[op].reached(state, value)


def describe(device_type: str, device_class: str, state: State) -> str:
    """The state as said back: "open at 30 percent", "locked", "set to 21 degrees, heating"."""
    raw = str(state.get("state", ""))
    if raw in ("unavailable", "unknown", ""):
        return "unavailable" if raw == "unavailable" else "in an unknown state"
    say = _DESCRIBE.get(device_type)
    return say(state, device_class) if say else raw.replace("_", " ")


def _describe_light(state: State, device_class: str) -> str:
    brightness = _attr(state, "brightness")
    if state.get("state") == "on" and _number(brightness):
        return f"on, at {round(brightness * 100 / 255)} percent"
    return str(state.get("state"))


def _describe_positioned(state: State, device_class: str) -> str:
    raw, position = str(state.get("state")), _attr(state, "current_position")
    if raw == "open" and _number(position) and 0 < position < 100:
        return f"open at {position} percent"
    return raw


def _describe_fan(state: State, device_class: str) -> str:
    raw, speed = str(state.get("state")), _attr(state, "percentage")
    text = f"on at {speed} percent" if raw == "on" and _number(speed) and speed else raw
    if raw == "on" and (preset := _attr(state, "preset_mode")):
        text = f"on in {str(preset).replace('_', ' ').lower()} mode"  # "put the fan on sleep"
    return f"{text}, oscillating" if raw == "on" and _attr(state, "oscillating") else text


def _describe_climate(state: State, device_class: str) -> str:
    raw, target = str(state.get("state")), _attr(state, "temperature")
    mode = "off" if raw == "off" else f"on {raw.replace('_', ' ')}"
    parts = [mode]
    if raw != "off" and _number(target):
        parts.append(f"set to {_degrees(target)} degrees")
    if _number(now := _attr(state, "current_temperature")):
        parts.append(f"and it's {_degrees(now)} degrees now")
    return ", ".join(parts[:2]) + (f" {parts[2]}" if len(parts) > 2 else "")


def _describe_player(state: State, device_class: str) -> str:
    raw = str(state.get("state"))
    title, artist = _attr(state, "media_title"), _attr(state, "media_artist")
    text = raw
    if raw in ("playing", "paused") and title:
        on = "" if raw == "playing" else " on"  # "playing X", "paused on X"
        text = f"{raw}{on} {title}" + (f" by {artist}" if artist else "")
    volume = _attr(state, "volume_level")
    if _attr(state, "is_volume_muted"):
        text += ", muted"
    elif _number(volume) and raw != "off":
        text += f", volume {round(volume * 100)} percent"
    return text


def _describe_vacuum(state: State, device_class: str) -> str:
    raw = str(state.get("state"))
    return {"returning": "going back to its dock", "docked": "on its dock"}.get(raw, raw)


def _describe_sensor(state: State, device_class: str) -> str:
    raw, unit = str(state.get("state")), _attr(state, "unit_of_measurement") or ""
    return f"{raw} {UNITS.get(unit, unit)}".strip()


def _describe_binary(state: State, device_class: str) -> str:
    on = state.get("state") == "on"
    if device_class in OPEN_WHEN_ON:
        return "open" if on else "closed"
    words = {"motion": ("detecting motion", "not detecting motion"),
             "moisture": ("wet", "dry"), "lock": ("unlocked", "locked")}  # fmt: skip
    yes, no = words.get(device_class, ("on", "off"))
    return yes if on else no


def _degrees(value: float) -> str:
    return f"{value:g}"


_DESCRIBE: dict[str, Callable[[State, str], str]] = {
    "light": _describe_light,
    "cover": _describe_positioned,
    "valve": _describe_positioned,
    "fan": _describe_fan,
    "climate": _describe_climate,
    "media_player": _describe_player,
    "vacuum": _describe_vacuum,
    "sensor": _describe_sensor,
    "binary_sensor": _describe_binary,
}


# Every word that names a kind of device, for a name's last word ("kitchen blinds").
KIND_WORDS = frozenset(
    w
    for c in CLASSES.values()
    for words in (c.nouns, c.plurals, *(n for kind in c.kinds.values() for n in kind))
    for w in words
)


def supported_ops(device_type: str, features: int) -> tuple[str, ...]:
    """The operations a device of this type offers, from Home Assistant's supported_features."""
    cls = CLASSES[device_type]
    return tuple(op for op, o in cls.ops.items() if not o.feature or features & o.feature)


# What each type can be told or asked through Zigbee2MQTT (a light's set, colour and
# steps still by its own flags): the devices table offers nothing else for it
# (mavend/config/devices.py), and mavend/home/z2m.py sends nothing else.
Z2M_OPS: dict[str, frozenset[str]] = {
    "light": frozenset({"on", "off", "set", "colour", "up", "down", "state"}),
    "switch": frozenset({"on", "off", "state"}),
    "plug": frozenset({"on", "off", "state"}),
    "cover": frozenset({"open", "close", "stop", "set", "state"}),
    "lock": frozenset({"lock", "unlock", "state"}),
    "fan": frozenset({"on", "off", "set", "up", "down", "state"}),
    "climate": frozenset(
        {"on", "off", "temperature", "mode", "preset", "up", "down", "state", "read"}
    ),
    "sensor": frozenset({"state", "read"}),
    "binary_sensor": frozenset({"state"}),
}
