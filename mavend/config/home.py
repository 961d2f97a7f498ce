"""The home: the MQTT broker, Home Assistant, and the devices table that generates acts."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
    model_validator,
)

from mavend.config.base import (
    Positive,
    SpokenName,
    _settings,
)
from mavend.home import classes, templates

DeviceType = Literal[
    "light", "plug", "switch", "cover", "valve", "lock", "fan", "climate", "media_player",
    "vacuum", "sensor", "binary_sensor", "scene", "script", "todo",
]  # fmt: skip  (mavend/home/classes.py CLASSES: one entry each)


@_settings
class MqttSettings:
    """The broker that `mqtt` acts and MQTT devices publish to (mavend/home/mqtt.py)."""

    host: str = "localhost"
    port: int = Field(default=1883, ge=1, le=65535)
    tls: bool = False
    ca_file: str = ""  # tls = true: "" = the system's certificate authorities
    username: str = ""  # "" = connect anonymously
    password_file: str = ""  # a file whose first line is the password (never the config)
    connect_timeout_s: Positive = 3.0
    # How long a device has to report its new state before the reply says it didn't.
    confirm_timeout_s: Positive = 1.5


@_settings
class HomeAssistantSettings:
    """Home Assistant's REST API, for `homeassistant` acts and devices."""

    url: str = Field(default="", pattern=r"^(?:https?://[^\s/?#]+(?:/[^\s?#]*)?)?$")
    token_file: str = ""  # a file holding a long-lived access token
    timeout_s: Positive = 5.0


@_settings
class DeviceSpec:
    """A device of the home, reached over MQTT (Zigbee2MQTT) or through Home Assistant.

    `type` is one of mavend/home/classes.py's classes (Home Assistant's domains, with
    plug for a switch that is a socket). The devices table generates the device acts,
    their `device` and `room` enums and the grammar's {device} and {room} lists
    (mavend/config/devices.py)."""

    name: SpokenName  # what you call it: "kitchen ceiling"
    aliases: tuple[SpokenName, ...] = ()  # other names: "lamp" (a room tells lamps apart)
    room: SpokenName | Literal[""] = ""
    type: DeviceType = "light"
    dimmable: bool = False
    colour: bool = False  # a light that takes a colour (and warm/cool white)
    # Home Assistant's device_class where it changes the words: a cover "garage", "blind",
    # "curtain"; a binary_sensor "door", "window"; a sensor "temperature", "humidity".
    device_class: str = Field(default="", pattern=r"^[a-z_]*$")
    # What it can do, when less than its type's usual (mavend home import fills it from
    # supported_features): ["open", "close", "stop"] for a garage door with no position.
    supports: tuple[str, ...] = ()
    # A fan's or thermostat's preset modes, as Home Assistant names them ("sleep", "eco"):
    # "put the bedroom fan on sleep" sends one of these, never another word.
    presets: tuple[str, ...] = ()
    mqtt: str = ""  # Zigbee2MQTT's topic for it: "zigbee2mqtt/kitchen_ceiling"
    homeassistant: str = ""  # or its entity id: "light.kitchen_ceiling"

    @model_validator(mode="after")
    def _check(self) -> DeviceSpec:
        if bool(self.mqtt) == bool(self.homeassistant):
            raise ValueError("a device needs exactly one of `mqtt` (a topic) or `homeassistant`")
        if self.mqtt:
            if templates.fields(self.mqtt) or self.mqtt.endswith("/"):
                raise ValueError("`mqtt` is the device's own topic, like zigbee2mqtt/lamp")
            templates.check_topic_template(self.mqtt)
        if self.homeassistant and not templates.ENTITY_ID.fullmatch(self.homeassistant):
            raise ValueError("`homeassistant` must be an entity id like light.kitchen")
        if self.presets and self.type not in ("fan", "climate"):
            raise ValueError("only a fan or a thermostat (climate) has `presets`")
        if (self.dimmable or self.colour) and self.type != "light":
            raise ValueError("only a light can be dimmable or take a colour")
        cls = classes.CLASSES[self.type]
        if self.mqtt and not cls.mqtt:
            raise ValueError(
                f"a {self.type} is reached through Home Assistant (`homeassistant`); "
                "over MQTT (Zigbee2MQTT) only lights, plugs, switches, covers, locks, fans, "
                "thermostats (climate) and sensors"
            )
        if unknown := [op for op in self.supports if op not in cls.ops]:
            raise ValueError(
                f"a {self.type} cannot {unknown[0]!r}; `supports` takes {sorted(cls.ops)}"
            )
        return self


@_settings
class FloorSpec:
    """A floor of the home and its rooms: "lights off downstairs", "close the blinds
    upstairs" mean the devices of those rooms (Home Assistant's floors; `mavend home
    import` writes them from its floor registry)."""

    name: SpokenName  # "downstairs", "ground floor", "basement"
    aliases: tuple[SpokenName, ...] = ()  # "ground floor" for "downstairs"
    rooms: tuple[SpokenName, ...] = Field(min_length=1)  # the [[devices]] rooms on it
