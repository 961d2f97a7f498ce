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
import logging
import re
import string
import tomllib
from dataclasses import field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.dataclasses import dataclass

from mavend import addresses, paths
from mavend.errors import ConfigError
from mavend.home import templates

log = logging.getLogger(__name__)

# Settings are frozen, reject unknown keys, and never coerce "5" into 5.
_STRICT = ConfigDict(extra="forbid", strict=True)


def _settings(cls):
    return dataclass(frozen=True, config=_STRICT)(cls)


Probability = Annotated[float, Field(ge=0.0, le=1.0)]
Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
Name = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)]


@_settings
class AudioSettings:
    device: str = ""  # "" = the default input device; else a name substring or an index
    sample_rate: int = Field(default=16000, ge=8000, le=48000)
    block_ms: int = Field(default=80, ge=10, le=500)
    # Where this microphone is ("study"): "turn on the lights" means this room's lights.
    room: str = Field(default="", pattern=r"^(?:[a-z0-9]+(?: [a-z0-9']+)*)?$", max_length=48)


@_settings
class WakeWordSettings:
    model: str = "hey_jarvis"  # a bundled model name, or a path to a custom .onnx
    threshold: Probability = 0.5
    refractory_s: NonNegative = 2.0
    vad_threshold: Probability = 0.0  # 0 = no VAD gating of the wake word
    preroll_s: NonNegative = 1.5
    # Skip the wake model while the room stays within `energy_gate_db` of its
    # noise floor (saves most of the idle CPU; speech at 5 dB SNR still opens it).
    energy_gate: bool = True
    energy_gate_db: Positive = 6.0


@_settings
class EndpointSettings:
    vad_threshold: Probability = 0.5
    silence_ms: int = Field(default=700, ge=100, le=5000)
    max_utterance_s: Positive = 12.0
    no_speech_timeout_s: Positive = 5.0
    grammar_early_stop: bool = True
    grammar_silence_ms: int = Field(default=300, ge=100, le=5000)


@_settings
class SttSettings:
    model: str = "whisper-tiny.en"
    language: str = "en"
    beam_size: int = Field(default=1, ge=1, le=10)
    threads: int = Field(default=2, ge=1, le=64)
    compute_type: Literal["int8", "int8_float32", "float32"] = "int8"
    vad_filter: bool = True
    grammar_hotwords: bool = True
    # "fit": encode only the audio's length (padded to whole seconds), several
    # times faster on short commands; "full": Whisper's standard 30 s window.
    encoder_window: Literal["fit", "full"] = "fit"
    # "local": faster-whisper in this process; "wyoming": a Wyoming ASR server at `uri`
    # (wyoming-faster-whisper on a bigger machine). model..encoder_window are the local one's.
    backend: Literal["local", "wyoming"] = "local"
    # Send audio to a uri outside loopback, private and link-local addresses.
    allow_remote: bool = False
    uri: str = ""  # "tcp://192.168.1.20:10300"
    timeout_s: Positive = 15.0  # connect + transcribe; past it the turn ends, listening goes on

    @field_validator("uri")
    @classmethod
    def _own_network(cls, uri: str, info: ValidationInfo) -> str:
        if not uri:
            return uri
        host, _port = addresses.tcp_uri(uri)
        if addresses.literal_host_is_private(host) is False and not info.data.get(
            "allow_remote", False
        ):
            raise ValueError(
                f"{host} is not a loopback or private address; set allow_remote = true "
                "to send what the microphone hears to it"
            )
        return uri

    @model_validator(mode="after")
    def _complete(self) -> SttSettings:
        if self.backend == "wyoming" and not self.uri:
            raise ValueError('backend = "wyoming" needs a uri ("tcp://host:10300")')
        return self


@_settings
class RouterSettings:
    wake_words: tuple[str, ...] = ("hey jarvis", "jarvis")
    llm_enabled: bool = True
    llm_model: str = "qwen2.5-0.5b-instruct-q4_k_m"  # a model name, or a path to a .gguf
    llm_threads: int = Field(default=2, ge=1, le=64)
    llm_context: int = Field(default=2048, ge=512, le=32768)
    llm_timeout_s: Positive = 3.0
    llm_max_tokens: int = Field(default=96, ge=16, le=1024)
    classifier_model: str = "use-multilingual-int8"
    # Who decides the route: "auto" (the policy measured best for llm_model), "classifier",
    # "llm-first" (the LLM, the classifier when it fails), "vote", "tie-break".
    policy: Literal["auto", "classifier", "llm-first", "vote", "tie-break"] = "auto"
    # Below this routing probability (0-1) the assistant asks instead of guessing.
    clarify_threshold: Probability = 0.35
    # policy "vote": when the classifier's probability is at least this, the LLM is not asked.
    classifier_confident: Probability = 0.9
    # policy "vote": the classifier's share of the vote with the LLM (the rest is the LLM's).
    classifier_weight: Probability = 0.7
    # policy "tie-break": the LLM chooses when the classifier's best two are this close.
    tie_margin: Probability = 0.15


@_settings
class LlmSettings:
    """Where the router's LLM runs. [router] llm_* keep their meaning: llm_enabled turns
    it off, llm_timeout_s is the deadline of a route for either backend, llm_max_tokens
    bounds an answer; llm_model, llm_threads and llm_context are the local model's."""

    # "local": the GGUF in this process; "openai": an OpenAI-compatible server at base_url.
    backend: Literal["local", "openai"] = "local"
    # Send to a base_url outside loopback, private and link-local addresses.
    allow_remote: bool = False
    base_url: str = ""  # "http://192.168.1.20:8080" (with or without /v1)
    model: str = ""  # the server's model name; "" = the server's default
    api_key_file: str = ""  # a file holding the API key, sent as a bearer token
    api_key_env: str = ""  # or the environment variable holding it
    # How the answer is held to the router's grammar: "grammar" (GBNF in the `grammar`
    # field: llama.cpp servers) or "json_schema" (response_format, for other servers).
    constrain: Literal["grammar", "json_schema"] = "grammar"
    # Ask for the intent token's top logprobs: the route's confidence, as the local model
    # reads it from its logits. Off, or a server that sends none: a fixed 0.6 (README).
    logprobs: bool = True

    @field_validator("base_url")
    @classmethod
    def _own_network(cls, url: str, info: ValidationInfo) -> str:
        if not url:
            return url
        host = addresses.url_host(url)
        if not url.startswith(("http://", "https://")) or not host:
            raise ValueError("must be an http:// or https:// URL with a host")
        if "@" in url.split("://", 1)[1].split("/", 1)[0]:
            raise ValueError("must not carry credentials: use api_key_file or api_key_env")
        private = addresses.literal_host_is_private(host)
        if private is False and not info.data.get("allow_remote", False):
            raise ValueError(
                f"{host} is not a loopback or private address; set allow_remote = true "
                "to send the router's prompts and your questions to it"
            )
        return url

    @model_validator(mode="after")
    def _complete(self) -> LlmSettings:
        if self.backend == "openai" and not self.base_url:
            raise ValueError('backend = "openai" needs a base_url')
        if self.api_key_file and self.api_key_env:
            raise ValueError("set api_key_file or api_key_env, not both")
        return self


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
    timeout_s: Positive = 10.0
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
    return (
        ActSpec(
            name="media_play_pause",
            argv=("playerctl", "play-pause"),
            description="play or pause the media player",
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
        ActSpec(
            name="mute",
            argv=("pactl", "set-sink-mute", "@DEFAULT_SINK@", "toggle"),
            description="mute or unmute the sound",
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


SpokenName = Annotated[str, Field(pattern=r"^[a-z0-9]+(?: [a-z0-9']+)*$", max_length=48)]


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
    """A light or a plug, reached over MQTT (Zigbee2MQTT) or through Home Assistant.

    The devices table generates the device acts, their `device` and `room` enums and
    the grammar's {device} and {room} lists (mavend/home/devices.py)."""

    name: SpokenName  # what you call it: "kitchen ceiling"
    aliases: tuple[SpokenName, ...] = ()  # other names: "lamp" (a room tells lamps apart)
    room: SpokenName | Literal[""] = ""
    type: Literal["light", "plug", "switch"] = "light"
    dimmable: bool = False
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
        if self.dimmable and self.type != "light":
            raise ValueError("only a light can be dimmable")
        return self


@_settings
class SatelliteSpec:
    """A Wyoming satellite (wyoming-satellite on a Pi) mavend connects to, as Home
    Assistant does (mavend/wyoming/satellite.py). Its turns are heard in `room`."""

    uri: str  # "tcp://192.168.1.31:10700": where the satellite serves Wyoming
    name: Name  # "kitchen": its session is satellite:<name>, `mavend satellites` shows it
    room: SpokenName | Literal[""] = ""  # "" = [audio] room
    # Connect to a uri outside loopback, private and link-local addresses.
    allow_remote: bool = False
    # The rate of the reply audio sent to it; wyoming-satellite's --snd-command-rate
    # (default 22050). 16-bit mono either way.
    snd_rate: int = Field(default=22050, ge=8000, le=48000)

    @field_validator("uri")
    @classmethod
    def _own_network(cls, uri: str) -> str:
        addresses.tcp_uri(uri)  # ValueError: must be tcp://host:port
        return uri

    @model_validator(mode="after")
    def _private(self) -> SatelliteSpec:
        # After the fields: allow_remote comes after uri in the file as often as before.
        host, _port = addresses.tcp_uri(self.uri)
        if addresses.literal_host_is_private(host) is False and not self.allow_remote:
            raise ValueError(
                f"{host} is not a loopback or private address; set allow_remote = true "
                "to stream from a satellite outside your own network"
            )
        return self


@_settings
class ReminderSettings:
    timezone: str = ""  # "" = the system's local zone; else an IANA name like "Europe/Berlin"
    default_hour: int = Field(default=9, ge=0, le=23)  # for "tomorrow" with no time of day
    snooze_minutes: int = Field(default=10, ge=1, le=1440)
    # Reminders missed while the daemon was down still fire at start-up, marked
    # late, if they are at most this old (seconds).
    misfire_grace_s: int = Field(default=7 * 24 * 3600, ge=1)


@_settings
class NotificationSettings:
    enabled: bool = True
    app_name: str = "mavend"
    # An icon-theme name ("mavend": `mavend service install` installs it) or a file:// URI.
    icon: str = "mavend"
    urgency: Literal["low", "normal", "critical"] = "normal"
    timeout_ms: int = Field(default=-1, ge=-1)  # -1 = the server's default
    max_body_chars: int = Field(default=1000, ge=20, le=100000)
    retry_s: Positive = 30.0


@_settings
class MemorySettings:
    enabled: bool = True
    scope: Name = "owner"  # whose habits this daemon learns and reads
    recall_max_items: int = Field(default=5, ge=0, le=50)
    recall_item_chars: int = Field(default=180, ge=20, le=2000)
    recall_max_chars: int = Field(default=600, ge=20, le=10000)
    habit_confidence: Probability = 0.7
    # User-confirmed records a habit needs before it may settle an unclear turn.
    habit_min_support: int = Field(default=2, ge=1, le=100)
    # A "no, I meant ..." counts as a correction of the previous turn within this many seconds.
    correction_window_s: Positive = 120.0
    # Habit records kept (the oldest are dropped first); repairs are few and all kept.
    max_records: int = Field(default=5000, ge=10, le=1000000)


@_settings
class ConversationSettings:
    # After a reply that expects an answer (a question, a clarification, "Do you want me
    # to ...?"), the microphone takes the next utterance without the wake word if it
    # starts within this many seconds.
    follow_up_s: Positive = 8.0
    # An ellipsis ("and on friday?", "and dad at six") is rebuilt from the previous
    # turn when said within this many seconds of it (mavend/conversation/).
    continuation_s: Positive = 30.0


@_settings
class TtsSettings:
    enabled: bool = True  # speak replies (notifications are sent as before either way)
    voice: str = "hibari-heart"  # a voice model of the registry (mavend models list)
    volume: Probability = 1.0
    speak_reminders: bool = True  # a firing reminder is spoken as well as notified
    device: str = ""  # "" = the default output device; else a name substring or an index
    # A reply longer than this many sentences is cut, ending "and more".
    max_sentences: int = Field(default=4, ge=1, le=50)


@_settings
class EarconSettings:
    enabled: bool = True
    wake_sound: str = ""  # "" = the built-in chime; else the path of a 16-bit WAV file
    done_sound: str = ""  # played when listening ends; "" = the built-in chime


@_settings
class WyomingSettings:
    """Mavend as a Wyoming service (mavend/wyoming/server.py): Home Assistant's
    conversation agent, and its voice. Off while `listen` is ""."""

    listen: str = ""  # "tcp://127.0.0.1:10400"; another address than loopback is logged
    # Also serve `synthesize` with mavend's own voice ([tts] voice), announced in `info`.
    synthesize: bool = True

    @field_validator("listen")
    @classmethod
    def _address(cls, listen: str) -> str:
        if listen:
            addresses.tcp_uri(listen)
        return listen


@_settings
class StorageSettings:
    data_dir: str = ""  # "" = the XDG data dir (MAVEND_DATA_DIR overrides)
    database: str = "mavend.sqlite3"  # relative to data_dir

    def data_path(self) -> Path:
        return Path(self.data_dir).expanduser() if self.data_dir else paths.data_dir()

    def database_path(self) -> Path:
        db = Path(self.database).expanduser()
        return db if db.is_absolute() else self.data_path() / db


@_settings
class ModelSettings:
    dir: str = ""  # "" = MAVEND_MODELS_DIR, else the XDG cache dir
    profile: str = "default"

    def models_path(self) -> Path:
        return Path(self.dir).expanduser() if self.dir else paths.models_dir()


@_settings
class LoggingSettings:
    level: Literal["debug", "info", "warning", "error"] = "info"


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
    devices: tuple[DeviceSpec, ...] = ()
    satellites: tuple[SatelliteSpec, ...] = ()
    reminders: ReminderSettings = field(default_factory=ReminderSettings)
    notifications: NotificationSettings = field(default_factory=NotificationSettings)
    memory: MemorySettings = field(default_factory=MemorySettings)
    conversation: ConversationSettings = field(default_factory=ConversationSettings)
    tts: TtsSettings = field(default_factory=TtsSettings)
    earcons: EarconSettings = field(default_factory=EarconSettings)
    wyoming: WyomingSettings = field(default_factory=WyomingSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    models: ModelSettings = field(default_factory=ModelSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)

    @model_validator(mode="after")
    def _device_acts(self) -> Settings:
        """Add the acts the devices table generates to the allowlist, so the grammar,
        the slot extractor and the LLM's GBNF all read them from `acts` like any other."""
        if self.devices:
            # Imported here: mavend.home.devices imports this module.
            from mavend.home.devices import with_device_acts

            object.__setattr__(self, "acts", with_device_acts(self.acts, self.devices))
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
