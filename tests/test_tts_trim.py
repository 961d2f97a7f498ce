"""The voice's padding is trimmed: the first word is heard sooner, sentences run on."""

from __future__ import annotations

import numpy as np

from mavend.tts.audio import trim_silence
from tests.conftest import require_model

RATE = 24_000


def tone(seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


def test_padding_is_cut_to_a_short_lead_and_tail() -> None:
    audio = np.concatenate([np.zeros(int(0.3 * RATE)), tone(0.5), np.zeros(int(0.45 * RATE))])
    trimmed = trim_silence(audio.astype(np.float32), RATE)
    lead = np.flatnonzero(np.abs(trimmed) > 0.01)[0] / RATE
    assert 0.0 <= lead <= 0.03
    assert abs(trimmed.size / RATE - (0.5 + 0.02 + 0.12)) < 0.02


def test_silence_and_empty_audio_come_back_unchanged() -> None:
    quiet = np.full(RATE, 0.001, dtype=np.float32)
    assert trim_silence(quiet, RATE) is quiet
    empty = np.zeros(0, dtype=np.float32)
    assert trim_silence(empty, RATE).size == 0


def test_the_real_voice_starts_speaking_within_50_ms() -> None:
    from mavend.tts.voice import Voice

    voice = Voice.load(require_model("hibari-heart"))
    audio = voice.synthesize("Timer set for ten minutes.")
    onset = np.flatnonzero(np.abs(audio) > 0.01)[0] / voice.sample_rate
    assert onset <= 0.05
    assert audio.size / voice.sample_rate > 0.8  # the words themselves are all there
