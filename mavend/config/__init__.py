"""Typed, validated settings loaded from TOML.

The file lives in the XDG config dir (`mavend --config PATH` overrides). It is
parsed with tomllib and validated by pydantic into frozen dataclasses: an
unknown key, a wrong type or a bad value is a `ConfigError` that names the key
and the line it is on. A missing file means the defaults.

Every key is documented, with its default, in `config.example.toml`; a test
checks that the example and these defaults agree.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import field
from pathlib import Path

from pydantic import TypeAdapter, ValidationError, model_validator

from mavend import paths
from mavend.config.acts import ActKind, ActSlot, ActSpec, ActsSettings, SlotKind
from mavend.config.answers import PlaceSettings, WeatherSettings
from mavend.config.base import Name, NonNegative, Positive, Probability, SpokenName, _settings, log
from mavend.config.devices import with_device_acts
from mavend.config.home import DeviceSpec, FloorSpec, HomeAssistantSettings, MqttSettings
from mavend.config.rooms import SatelliteSpec, WyomingSettings
from mavend.config.router import LlmSettings, RouterSettings
from mavend.config.state import (
    LoggingSettings,
    MemorySettings,
    ModelSettings,
    NotificationSettings,
    ReminderSettings,
    StorageSettings,
)
from mavend.config.voice import (
    AudioSettings,
    ConversationSettings,
    EarconSettings,
    EndpointSettings,
    SttSettings,
    TtsSettings,
    WakeWordSettings,
)
from mavend.config.voices import VoicesSettings
from mavend.config.web import WebSettings
from mavend.errors import ConfigError

# The settings blocks live in modules by the part of mavend they configure; every name
# is importable from here, as it was from the single module this package replaced.
__all__ = [
    "ActKind", "ActSlot", "ActSpec", "ActsSettings", "AudioSettings", "ConversationSettings",
    "DeviceSpec", "EarconSettings", "EndpointSettings", "FloorSpec", "HomeAssistantSettings",
    "LlmSettings", "LoggingSettings", "MemorySettings", "ModelSettings", "MqttSettings",
    "Name", "NonNegative", "NotificationSettings", "PlaceSettings", "Positive", "Probability",
    "ReminderSettings", "RouterSettings", "SatelliteSpec", "Settings", "SlotKind",
    "SpokenName", "StorageSettings", "SttSettings", "TtsSettings", "VoicesSettings",
    "WakeWordSettings", "WeatherSettings", "WebSettings", "WyomingSettings", "load_settings",
    "parse_settings",
]


@_settings
class Settings:
    audio: AudioSettings = field(default_factory=AudioSettings)
    wakeword: WakeWordSettings = field(default_factory=WakeWordSettings)
    endpoint: EndpointSettings = field(default_factory=EndpointSettings)
    stt: SttSettings = field(default_factory=SttSettings)
    router: RouterSettings = field(default_factory=RouterSettings)
    llm: LlmSettings = field(default_factory=LlmSettings)
    acts: ActsSettings = field(default_factory=ActsSettings)
    mqtt: MqttSettings = field(default_factory=MqttSettings)
    homeassistant: HomeAssistantSettings = field(default_factory=HomeAssistantSettings)
    weather: WeatherSettings = field(default_factory=WeatherSettings)
    place: PlaceSettings = field(default_factory=PlaceSettings)
    devices: tuple[DeviceSpec, ...] = ()
    floors: tuple[FloorSpec, ...] = ()
    satellites: tuple[SatelliteSpec, ...] = ()
    reminders: ReminderSettings = field(default_factory=ReminderSettings)
    notifications: NotificationSettings = field(default_factory=NotificationSettings)
    memory: MemorySettings = field(default_factory=MemorySettings)
    conversation: ConversationSettings = field(default_factory=ConversationSettings)
    tts: TtsSettings = field(default_factory=TtsSettings)
    earcons: EarconSettings = field(default_factory=EarconSettings)
    wyoming: WyomingSettings = field(default_factory=WyomingSettings)
    web: WebSettings = field(default_factory=WebSettings)
    voices: VoicesSettings = field(default_factory=VoicesSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    models: ModelSettings = field(default_factory=ModelSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)

    @model_validator(mode="after")
    def _device_acts(self) -> Settings:
        """Add the acts the devices table generates to the allowlist, so the grammar,
        the slot extractor and the LLM's GBNF all read them from `acts` like any other."""
        if self.floors and not self.devices:
            raise ValueError("[[floors]] name rooms of [[devices]]; there are no devices")
        if self.devices:
            object.__setattr__(self, "acts", with_device_acts(self.acts, self.devices,
                                                              self.floors))
        return self

    @model_validator(mode="after")
    def _satellite_names(self) -> Settings:
        # The name is the satellite's session and the key a reminder is announced by.
        names = [satellite.name for satellite in self.satellites]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"satellite names must differ: {', '.join(twice)} twice")
        return self


_ADAPTER = TypeAdapter(Settings)


def load_settings(path: Path | None = None) -> Settings:
    """Load settings from `path`, or from the XDG config file when None.

    An explicit path that does not exist is an error (the user named it); a
    missing default file means the defaults.
    """
    explicit = path is not None
    path = path if explicit else paths.default_config_path()
    if not path.exists():
        if explicit:
            raise ConfigError(f"config file not found: {path}")
        log.debug("no config file at %s: using the defaults", path)
        return Settings()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    return parse_settings(text, origin=str(path))


def parse_settings(text: str, origin: str = "<config>") -> Settings:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{origin}: malformed TOML: {exc}") from exc
    try:
        # Through JSON so strict mode accepts TOML arrays for tuples, but never
        # turns a string into a number or a number into a string.
        return _ADAPTER.validate_json(json.dumps(raw, default=str), strict=True)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, text, origin)) from exc


def _describe(exc: ValidationError, text: str, origin: str) -> str:
    lines = []
    for error in exc.errors():
        loc = tuple(error["loc"])
        key = _dotted(loc)
        line = _locate(text, loc)
        where = f"{origin}:{line}" if line else origin
        message = error["msg"]
        if error["type"] in ("unexpected_keyword_argument", "extra_forbidden"):
            message = "unknown key"
        elif error["type"] == "value_error":
            message = message.removeprefix("Value error, ")
        lines.append(f"{where}: `{key}`: {message}")
    return "invalid config:\n  " + "\n  ".join(lines)


def _dotted(loc: tuple[object, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(
    r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*="""
)


def _split_key(dotted: str) -> tuple[str, ...]:
    return tuple(
        p.strip().strip("\"'")
        for p in re.split(r"\.(?=(?:[^\"']*[\"'][^\"']*[\"'])*[^\"']*$)", dotted)
    )


def _locate(text: str, loc: tuple[object, ...]) -> int | None:
    """The 1-based line that defines `loc` (or its nearest parent), if any.

    tomllib keeps no positions, so walk the source: track the current table
    header (counting array-of-tables entries) and record every key's full path.
    """
    positions: dict[tuple[object, ...], int] = {}
    table: tuple[object, ...] = ()
    counts: dict[tuple[str, ...], int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if header := _HEADER.match(line):
            names = _split_key(header.group(2))
            if header.group(1) == "[[":
                counts[names] = counts.get(names, -1) + 1
            table = _resolve_arrays(names, counts)
            positions.setdefault(table, number)
        elif key := _KEY.match(line):
            positions.setdefault(table + _split_key(key.group(1)), number)
    for end in range(len(loc), 0, -1):
        if loc[:end] in positions:
            return positions[loc[:end]]
    return None


def _resolve_arrays(
    names: tuple[str, ...], counts: dict[tuple[str, ...], int]
) -> tuple[object, ...]:
    """Insert the current index after every array-of-tables prefix of `names`."""
    out: list[object] = []
    for i, name in enumerate(names):
        out.append(name)
        prefix = names[: i + 1]
        if prefix in counts:
            out.append(counts[prefix])
    return tuple(out)
