"""Who said an utterance: the speaker encoder against the enrolled voiceprints.

`SpeakerId.from_settings(settings, store)` loads the encoder (the model
`resemblyzer-encoder`, from the model cache, never downloaded here) and
`identify(audio)` names the enrolled voice, or `UNKNOWN`. The voiceprints are read
from the database on every call (a few rows): a voice enrolled or forgotten with
`mavend voices` while the daemon runs counts from the next turn.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from mavend.config import Settings
from mavend.state.store import Store
from mavend.voices.encoder import SpeakerEncoder
from mavend.voices.prints import VoicePrints
from mavend.voices.speech import SpeechOnly

log = logging.getLogger(__name__)

ENCODER = "resemblyzer-encoder"  # the model that makes the voiceprints
UNKNOWN = "unknown"  # a voice was heard that no enrollment matches
# Under this much speech there is too little of a voice to tell whose it is.
MIN_SECONDS = 0.8
RATE = 16_000


@dataclass(frozen=True)
class Heard:
    speaker: str  # an enrolled name, or UNKNOWN
    score: float  # cosine to the nearest voiceprint (-1: none enrolled, or too short)
    ms: float  # time spent


class SpeakerId:
    def __init__(self, encoder: SpeakerEncoder, prints: VoicePrints, settings: Settings,
                 speech: SpeechOnly | None = None):
        self.encoder = encoder
        self.prints = prints
        self.speech = speech  # None: the audio is embedded as it is (benches compare)
        self.threshold = settings.voices.threshold
        self.margin = settings.voices.margin

    @classmethod
    def from_settings(cls, settings: Settings, store: Store) -> SpeakerId:
        """The encoder and Silero VAD from the model cache (a missing one: ModelError)."""
        from mavend.models import require
        from wakeword.vad import SileroVad

        models = settings.models.models_path()
        encoder = SpeakerEncoder.load(require(ENCODER, models))
        speech = SpeechOnly(SileroVad(require("silero-vad", models)))
        return cls(encoder, VoicePrints(store), settings, speech)

    def embed(self, audio: np.ndarray) -> np.ndarray:
        """The voice's embedding of an utterance or an enrollment recording: its speech
        only, silences cut (mavend/voices/speech.py), as enrollment and turns must agree."""
        return self.encoder.embed(self.speech(audio) if self.speech is not None else audio)

    def identify(self, audio: np.ndarray) -> Heard:
        """The enrolled voice `audio` (16 kHz, int16 or float) is, or UNKNOWN."""
        started = time.perf_counter()
        if len(audio) < MIN_SECONDS * RATE:
            return Heard(UNKNOWN, -1.0, 0.0)
        vector = self.embed(audio)
        found = self.prints.identify(vector, threshold=self.threshold, margin=self.margin,
                                     encoder=ENCODER)
        ms = (time.perf_counter() - started) * 1000.0
        return Heard(found.name or UNKNOWN, found.score, ms)
