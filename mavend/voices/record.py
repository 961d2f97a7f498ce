"""Enrolling from the microphone: one sentence at a time, cut by the voice activity
detector (`mavend voices enroll NAME` without `--audio-file`).

Each `take()` waits for speech (at most `wait_s`), keeps it from a moment before it
starts until `silence_s` of quiet after it (or `max_s` in all), and returns the speech
as 16 kHz int16. The chunks come from one open stream, so nothing said between two
prompts is lost or cut.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from mavend.errors import UsageError
from wakeword.audio import RATE
from wakeword.sources import AudioChunk
from wakeword.vad import WINDOW, SileroVad

# Sentences of our own to read aloud: ordinary speech, a few seconds each, many sounds.
SENTENCES = (
    "Good morning, could you tell me what the weather is doing today?",
    "I usually put the kettle on before I feed the cat.",
    "My sister is coming round for dinner on Thursday evening.",
    "Please remind me to water the tomatoes in the greenhouse.",
    "We walked along the river until the sun went down.",
)


@dataclass(frozen=True)
class Takes:
    threshold: float = 0.5  # speech probability of a window that counts as speech
    lead_s: float = 0.3  # kept from before the speech starts
    silence_s: float = 0.8  # quiet that ends a sentence
    max_s: float = 15.0  # one sentence at most
    wait_s: float = 10.0  # how long to wait for the sentence to start


class SentenceRecorder:
    """Sentences from a live stream of chunks, cut by Silero VAD."""

    def __init__(self, chunks: Iterator[AudioChunk], vad: SileroVad, takes: Takes = Takes()):
        self._chunks = chunks
        self._vad = vad
        self.takes = takes
        self._pending = np.zeros(0, np.int16)

    def _windows(self) -> Iterator[np.ndarray]:
        while True:
            while len(self._pending) < WINDOW:
                chunk = next(self._chunks, None)
                if chunk is None:
                    return
                self._pending = np.concatenate([self._pending, chunk.samples])
            window, self._pending = self._pending[:WINDOW], self._pending[WINDOW:]
            yield window

    def take(self) -> np.ndarray:
        """The next sentence said; UsageError when none starts within `wait_s`."""
        t = self.takes
        lead = int(t.lead_s * RATE / WINDOW)
        quiet_windows = int(t.silence_s * RATE / WINDOW)
        kept: list[np.ndarray] = []
        speaking, quiet, waited = False, 0, 0
        for window in self._windows():
            kept.append(window)
            speech = self._vad.window(window) >= t.threshold
            if not speaking:
                waited += 1
                kept = kept[-(lead + 1):]
                if speech:
                    speaking = True
                elif waited * WINDOW > t.wait_s * RATE:
                    break
                continue
            quiet = 0 if speech else quiet + 1
            if quiet >= quiet_windows or len(kept) * WINDOW >= t.max_s * RATE:
                self._vad.reset()
                return np.concatenate(kept[: len(kept) - quiet] if quiet else kept)
        if speaking:  # the stream ended mid-sentence: what was said is kept
            return np.concatenate(kept)
        raise UsageError(f"nothing was said within {t.wait_s:g} s: is the microphone on "
                         "(`mavend doctor`)?")
