"""The voice path's settings: microphone, wake word, endpointing, speech-to-text, the
conversation's windows, spoken replies and earcons."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from mavend import addresses
from mavend.config.base import (
    NonNegative,
    Positive,
    Probability,
    _settings,
)


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
    # A second, independent check before a wake counts (wakeword/verifier.py): "micro" =
    # microWakeWord's hey_jarvis must hear it too (`mavend models pull` fetches it), over
    # the 2 s up to 0.24 s after openWakeWord's trigger; "none" = openWakeWord alone.
    verifier: Literal["none", "micro"] = "none"


@_settings
class EndpointSettings:
    vad_threshold: Probability = 0.5
    silence_ms: int = Field(default=700, ge=100, le=5000)
    max_utterance_s: Positive = 12.0
    no_speech_timeout_s: Positive = 5.0
    grammar_early_stop: bool = True
    grammar_silence_ms: int = Field(default=300, ge=100, le=5000)
    # A stage-0 command whose slots are all filled and resolved ("set a timer for two
    # hours") ends after this much silence: longer, since more words could still follow.
    grammar_slot_silence_ms: int = Field(default=450, ge=100, le=5000)


@_settings
class SttSettings:
    model: str = "whisper-tiny.en"
    language: str = "en"
    # The household's languages, for a multilingual model (whisper-base): each utterance
    # is heard in the likeliest of them (["en", "ru"]); empty: always `language`; one: it.
    languages: tuple[str, ...] = ()
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

    @field_validator("languages")
    @classmethod
    def _language_codes(cls, languages: tuple[str, ...]) -> tuple[str, ...]:
        for code in languages:
            if not re.fullmatch(r"[a-z]{2,3}", code):
                raise ValueError(f"{code!r} is not a language code (Whisper's: en, ru, de, ...)")
        return languages

    @field_validator("uri")
    @classmethod
    def _own_network(cls, uri: str, info: ValidationInfo) -> str:
        if not uri:
            return uri
        host, _port = addresses.tcp_uri(uri)
        addresses.require_own_network(
            host,
            info.data.get("allow_remote", False),  # declared before uri: already read
            "send what the microphone hears to it",
        )
        return uri

    @model_validator(mode="after")
    def _complete(self) -> SttSettings:
        if self.backend == "wyoming" and not self.uri:
            raise ValueError('backend = "wyoming" needs a uri ("tcp://host:10300")')
        return self


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
