"""Endpointing: when has the speaker finished the command that followed the wake word?

A pure state machine over VAD speech probabilities, one per 32 ms window, fed
only with windows after the wake word fired (speech that is still going on then
counts: a command spoken straight after the wake word). It reports *steps*, the
front end acts on them:

  ONSET     the command's speech began (at least `min_speech_ms` in a row)
  PAUSED    a short silence (`speculate_ms`) after speech: a good moment to
            transcribe what we have so far, speculatively
  QUIET     `grammar_silence_ms` of silence: if the partial transcript is already
            a complete stage-0 command that could not go on, the utterance can
            end here
  SETTLED   `grammar_slot_silence_ms` of silence: if it is a stage-0 command
            whose slots are all filled ("set a timer for two hours"), it can
            end here (more words could still change it, so it waits longer)
  END       `silence_ms` of silence after speech, or the maximum length reached
  NO_SPEECH nobody spoke within `no_speech_timeout_s` of the wake word

`segment` counts how often speech (re)started: a speculative transcript is only
good for the segment it was taken in.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from mavend.config import EndpointSettings
from wakeword.vad import WINDOW_S

# A command needs this much speech in a row to count (a click or a breath does not).
MIN_SPEECH_MS = 120
# Transcribe speculatively after this much silence: by the time the grammar
# silence (300 ms) has passed, the partial transcript is usually ready.
SPECULATE_MS = 96


@dataclass(frozen=True)
class EndpointConfig:
    vad_threshold: float = 0.5
    silence_ms: int = 700
    max_utterance_s: float = 12.0
    no_speech_timeout_s: float = 5.0
    grammar_early_stop: bool = True
    grammar_silence_ms: int = 300
    grammar_slot_silence_ms: int = 450
    min_speech_ms: int = MIN_SPEECH_MS
    speculate_ms: int = SPECULATE_MS

    @classmethod
    def from_settings(cls, settings: EndpointSettings) -> EndpointConfig:
        return cls(
            vad_threshold=settings.vad_threshold,
            silence_ms=settings.silence_ms,
            max_utterance_s=settings.max_utterance_s,
            no_speech_timeout_s=settings.no_speech_timeout_s,
            grammar_early_stop=settings.grammar_early_stop,
            grammar_silence_ms=settings.grammar_silence_ms,
            grammar_slot_silence_ms=settings.grammar_slot_silence_ms,
        )


class Step(enum.Enum):
    NONE = "none"
    ONSET = "onset"
    PAUSED = "paused"
    QUIET = "quiet"
    SETTLED = "settled"
    END = "end"
    NO_SPEECH = "no_speech"


def _windows(ms: float) -> int:
    return max(1, math.ceil(ms / 1000.0 / WINDOW_S - 1e-9))


class Endpointer:
    """Follows one utterance, window by window. `update` returns what just happened."""

    def __init__(self, config: EndpointConfig, start_t: float):
        self.config = config
        self.start_t = start_t  # the wake word's time: the utterance clock starts here
        self._on = config.vad_threshold
        self._onset_windows = _windows(config.min_speech_ms)
        self._speculate = _windows(config.speculate_ms)
        self._quiet = _windows(config.grammar_silence_ms)
        # After QUIET, or it would come first and find no partial transcript to judge.
        self._settled = max(self._quiet + 1, _windows(config.grammar_slot_silence_ms))
        self._end = _windows(config.silence_ms)
        self.speaking = False
        self.started = False
        self.ended: str = ""  # the reason, once ended
        self.segment = 0
        self.speech_start_t: float | None = None
        self.speech_end_t: float | None = None
        self.speech_s = 0.0
        self._run = 0  # windows of speech in a row (before onset)
        self._silence = 0  # windows of silence since the last speech

    @property
    def silence_ms(self) -> float:
        return self._silence * WINDOW_S * 1000.0

    def update(self, prob: float, t_end: float) -> Step:
        """Feed the probability of the window that ends at `t_end` (audio seconds)."""
        if self.ended:
            return Step.NONE
        # No hysteresis: speech ends at the last window the VAD is sure of.
        # Silero's probability decays over 2-4 windows after the last phoneme;
        # waiting for it to fall further (Silero's own iterator releases at
        # threshold - 0.15) added 20-100 ms to every endpoint. A dip inside
        # speech only counts towards a silence that the next speech resets.
        self.speaking = prob >= self._on
        if self.speaking:
            return self._on_speech(t_end)
        return self._on_silence(t_end)

    def _on_speech(self, t_end: float) -> Step:
        self.speech_s += WINDOW_S
        self.speech_end_t = t_end
        if not self.started:
            self._run += 1
            if self._run >= self._onset_windows:
                self.started = True
                self.speech_start_t = t_end - self._run * WINDOW_S
                return Step.ONSET
            return self._timeouts(t_end)
        if self._silence:
            self.segment += 1  # new audio after a pause: older speculation is stale
        self._silence = 0
        return self._timeouts(t_end)

    def _on_silence(self, t_end: float) -> Step:
        if not self.started:
            self._run = 0
            return self._timeouts(t_end)
        self._silence += 1
        if self._silence == self._end:
            return self._finish("silence")
        if self._silence == self._speculate and self.config.grammar_early_stop:
            return Step.PAUSED
        if self._silence == self._quiet and self.config.grammar_early_stop:
            return Step.QUIET
        if self._silence == self._settled and self.config.grammar_early_stop:
            return Step.SETTLED
        return self._timeouts(t_end)

    def _timeouts(self, t_end: float) -> Step:
        elapsed = t_end - self.start_t
        if not self.started and elapsed >= self.config.no_speech_timeout_s:
            self.ended = "no_speech"
            return Step.NO_SPEECH
        if elapsed >= self.config.max_utterance_s:
            return self._finish("max_length") if self.started else self._no_speech()
        return Step.NONE

    def _no_speech(self) -> Step:
        self.ended = "no_speech"
        return Step.NO_SPEECH

    def _finish(self, reason: str) -> Step:
        self.ended = reason
        return Step.END

    def finish(self, reason: str) -> Step:
        """End from outside (the stream ended, or the grammar matched early)."""
        if self.ended:
            return Step.NONE
        return self._finish(reason) if self.started else self._no_speech()
