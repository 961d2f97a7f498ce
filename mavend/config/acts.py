"""The act allowlist: each act's kind (argv, mqtt, homeassistant, device), its slots and the
shipped defaults."""

from __future__ import annotations

import re
import string
from dataclasses import field
from typing import Any, Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from mavend.config.base import (
    Name,
    Positive,
    _settings,
)
from mavend.home import templates

SlotKind = Literal["enum", "int", "pattern"]


@_settings
class ActSlot:
    type: SlotKind = "enum"
    values: tuple[str, ...] = ()  # type = "enum"
    pattern: str = ""  # type = "pattern": a full-match regular expression
    min: int | None = None  # type = "int"
    max: int | None = None
    # May be left out; only generated device acts use it (`room`: the turn's room then).
    optional: bool = False

    @model_validator(mode="after")
    def _check(self) -> ActSlot:
        if self.type == "enum" and not self.values:
            raise ValueError("an enum slot needs `values`")
        if self.type == "pattern":
            if not self.pattern:
                raise ValueError("a pattern slot needs `pattern`")
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"`pattern` is not a regular expression: {exc}") from exc
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("`min` is greater than `max`")
        return self


ActKind = Literal["argv", "mqtt", "homeassistant", "device"]


@_settings
class ActSpec:
    """One allowlisted act: an argv template run without a shell (kind "argv"), an MQTT
    message ("mqtt"), a Home Assistant service call ("homeassistant"), or a device act
    generated from `[[devices]]` ("device"). See mavend/home/ for the last three."""

    name: Name
    argv: tuple[str, ...] = ()
    kind: ActKind = "argv"
    description: str = ""
    destructive: bool = False  # needs a spoken "yes" before it runs
    timeout_s: Positive = 10.0  # an attached argv act is killed after it
    # kind = "argv": start the program and return at once (a player, a browser): it runs in a
    # session of its own, stdin /dev/null, its output in the daemon's log; never killed.
    detach: bool = False
    slots: dict[Name, ActSlot] = field(default_factory=dict)
    # kind = "mqtt": a topic template, a payload template (text, JSON text or a TOML table)
    topic: str = ""
    payload: str | dict[str, Any] = ""
    qos: int = Field(default=0, ge=0, le=2)
    retain: bool = False
    # kind = "homeassistant": a service ("light.turn_on"), an entity id template, data
    service: str = ""
    entity_id: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    @field_validator("payload")
    @classmethod
    def _payload_shape(cls, payload: str | dict[str, Any]) -> str | dict[str, Any]:
        templates.payload_fields(payload)  # refuses a payload that looks like JSON and isn't
        return payload

    @field_validator("data")
    @classmethod
    def _data_shape(cls, data: dict[str, Any]) -> dict[str, Any]:
        templates.json_fields(data)
        if "entity_id" in data:
            raise ValueError("`entity_id` is its own key, not part of `data`")
        return data

    @model_validator(mode="after")
    def _check(self) -> ActSpec:
        if self.detach and self.kind != "argv":
            raise ValueError(f"`detach` is for argv acts only, not kind = {self.kind!r}")
        used = self._templates_used()
        if missing := sorted(used - set(self.slots)):
            raise ValueError(f"{self.kind} act uses slot(s) {missing} that `slots` does not define")
        if optional := sorted(n for n in used if self.slots[n].optional):
            raise ValueError(f"slot(s) {optional} are optional and cannot fill a template")
        for name in templates.check_topic_template(self.topic) if self.kind == "mqtt" else ():
            for value in self.slots[name].values:  # an enum's values are known now
                templates.check_value(name, value, topic=True)
        return self

    def _templates_used(self) -> set[str]:
        other = {
            "argv": bool(self.argv),
            "mqtt": bool(self.topic or self.payload or self.qos or self.retain),
            "homeassistant": bool(self.service or self.entity_id or self.data),
        }
        if stray := [kind for kind, set_ in other.items() if set_ and kind != self.kind]:
            raise ValueError(f"kind = {self.kind!r}, but keys of kind {stray[0]!r} are set")
        if self.kind == "argv":
            return self._argv_used()
        if self.kind == "mqtt":
            return templates.check_topic_template(self.topic) | templates.payload_fields(
                self.payload
            )
        if self.kind == "homeassistant":
            if not templates.SERVICE.fullmatch(self.service):
                raise ValueError("`service` must be like light.turn_on")
            if not self.entity_id:
                raise ValueError("a homeassistant act needs an `entity_id`")
            return templates.check_entity_template(self.entity_id) | templates.json_fields(
                self.data
            )
        return set()  # device: nothing templated, the devices table says where to send

    def _argv_used(self) -> set[str]:
        if not self.argv or not self.argv[0].strip():
            raise ValueError("`argv` needs at least the program to run")
        if "{" in self.argv[0]:
            raise ValueError("the program (argv[0]) cannot be a slot")
        return {
            name
            for part in self.argv
            for _, name, _, _ in string.Formatter().parse(part)
            if name is not None
        }


def _default_acts() -> tuple[ActSpec, ...]:
    # Harmless by default: media keys, volume, screen lock; restarting a user
    # service is limited to a short list and needs a spoken confirmation.
    # Play and pause are two acts, not playerctl's play-pause toggle: a toggle said
    # "stop the music" to a paused player would start it, and could not be undone later.
    return (
        ActSpec(
            name="media_play", argv=("playerctl", "play"), description="play the media player"
        ),
        ActSpec(
            name="media_pause", argv=("playerctl", "pause"), description="pause the media player"
        ),
        ActSpec(
            name="media_next", argv=("playerctl", "next"), description="skip to the next track"
        ),
        ActSpec(
            name="media_previous",
            argv=("playerctl", "previous"),
            description="go back to the previous track",
        ),
        ActSpec(
            name="volume_up",
            argv=("pactl", "set-sink-volume", "@DEFAULT_SINK@", "+10%"),
            description="turn the volume up",
        ),
        ActSpec(
            name="volume_down",
            argv=("pactl", "set-sink-volume", "@DEFAULT_SINK@", "-10%"),
            description="turn the volume down",
        ),
        ActSpec(
            name="volume_set",
            argv=("pactl", "set-sink-volume", "@DEFAULT_SINK@", "{level}%"),
            description="set the volume to a level in percent",
            slots={"level": ActSlot(type="int", min=0, max=100)},
        ),
        # Mute and unmute set the state said, never toggle it: "mute" said twice leaves
        # the sound muted, and "unmute" never mutes a speaker that was already on.
        ActSpec(
            name="mute",
            argv=("pactl", "set-sink-mute", "@DEFAULT_SINK@", "1"),
            description="mute the sound",
        ),
        ActSpec(
            name="unmute",
            argv=("pactl", "set-sink-mute", "@DEFAULT_SINK@", "0"),
            description="unmute the sound",
        ),
        ActSpec(
            name="lock_screen", argv=("loginctl", "lock-session"), description="lock the screen"
        ),
        ActSpec(
            name="restart_service",
            argv=("systemctl", "--user", "restart", "{service}"),
            description="restart a user service",
            destructive=True,
            slots={
                "service": ActSlot(type="enum", values=("pipewire", "wireplumber", "syncthing"))
            },
        ),
    )


@_settings
class ActsSettings:
    confirm_timeout_s: Positive = 15.0
    allow: tuple[ActSpec, ...] = field(default_factory=_default_acts)

    @model_validator(mode="after")
    def _unique(self) -> ActsSettings:
        names = [a.name for a in self.allow]
        if dupes := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"act names must be unique; repeated: {dupes}")
        return self

    def get(self, name: str) -> ActSpec | None:
        return next((a for a in self.allow if a.name == name), None)
