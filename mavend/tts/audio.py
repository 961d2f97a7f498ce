"""Small audio helpers shared by the voice, the earcons and the tests."""

from __future__ import annotations

import wave
from fractions import Fraction
from pathlib import Path

import numpy as np


def resample(audio: np.ndarray, rate: int, target: int) -> np.ndarray:
    """Polyphase resampling of mono float32 audio (scipy: already a dependency)."""
    if rate == target or audio.size == 0:
        return audio.astype(np.float32, copy=False)
    from scipy.signal import resample_poly

    ratio = Fraction(target, rate)
    return resample_poly(audio, ratio.numerator, ratio.denominator).astype(np.float32)


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    """Mono float32 in [-1, 1] and the sample rate, from a 16-bit PCM WAV (channels mixed)."""
    with wave.open(str(path), "rb") as wav:
        if wav.getsampwidth() != 2:
            raise ValueError(f"{path}: only 16-bit PCM WAV files are supported")
        channels, rate = wav.getnchannels(), wav.getframerate()
        data = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2")
    audio = data.astype(np.float32) / 32768.0
    if channels > 1:
        audio = audio.reshape(-1, channels).mean(axis=1)
    return audio, rate


def write_wav(path: Path, audio: np.ndarray, rate: int) -> None:
    """16-bit PCM mono WAV."""
    pcm = (np.clip(audio, -1.0, 1.0) * 32767.0).astype("<i2")
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(pcm.tobytes())


def trim_silence(
    audio: np.ndarray, rate: int, *, lead_s: float = 0.02, tail_s: float = 0.12,
    threshold: float = 0.01,
) -> np.ndarray:
    """`audio` with its leading near-silence cut to `lead_s` and its trailing to `tail_s`.

    The voice pads every sentence with ~0.3 s of silence before and ~0.45 s after
    (bench/conversation_bench.py found it): before the first sentence that is pure delay
    to the first audible word, and between streamed sentences dead air. `threshold` is a
    10 ms frame's peak (-40 dBFS); all-silent audio comes back as it was.
    """
    frame = max(1, rate // 100)
    usable = audio.size - audio.size % frame
    if usable == 0:
        return audio
    peaks = np.abs(audio[:usable]).reshape(-1, frame).max(axis=1)
    loud = np.flatnonzero(peaks >= threshold)
    if loud.size == 0:
        return audio
    start = max(0, loud[0] * frame - int(lead_s * rate))
    end = min(audio.size, (loud[-1] + 1) * frame + int(tail_s * rate))
    return audio[start:end]
