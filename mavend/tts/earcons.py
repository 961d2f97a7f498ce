"""Earcons: a short rising chime when the wake word is heard, a falling one when
listening ends. The built-in WAVs (mavend/data/sounds/) were made by `make_chime`
below (`python -m mavend.tts.earcons` writes them again); they are the project's own
work, released under CC0 (and MIT, as the rest of mavend). `[earcons] wake_sound` /
`done_sound` replace them with the user's own 16-bit WAV files.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from mavend.config import EarconSettings
from mavend.tts.audio import read_wav, resample, write_wav

log = logging.getLogger(__name__)

RATE = 24000
WAKE_TONES = (880.0, 1318.5)  # A5 then E6: up, "I'm listening"
DONE_TONES = (1318.5, 880.0)  # down, "got it"


def make_chime(tones: tuple[float, ...], *, rate: int = RATE, tone_s: float = 0.075) -> np.ndarray:
    """Two short sine tones with a soft attack and decay (no clicks), peak 0.5."""
    t = np.arange(int(rate * tone_s)) / rate
    envelope = np.minimum(1.0, t / 0.005) * np.exp(-t * 30.0)
    parts = [0.5 * envelope * np.sin(2 * np.pi * f * t) for f in tones]
    return np.concatenate([*parts, np.zeros(int(rate * 0.02))]).astype(np.float32)


@dataclass(frozen=True)
class Earcons:
    wake: np.ndarray
    done: np.ndarray
    rate: int

    @classmethod
    def load(cls, settings: EarconSettings, rate: int = RATE) -> Earcons:
        return cls(_sound(settings.wake_sound, "wake.wav", rate),
                   _sound(settings.done_sound, "done.wav", rate), rate)


def _sound(path: str, builtin: str, rate: int) -> np.ndarray:
    """The user's WAV, else the built-in one; a bad user file is logged and replaced."""
    if path:
        try:
            audio, file_rate = read_wav(Path(path).expanduser())
            return resample(audio, file_rate, rate)
        except (OSError, ValueError, EOFError) as exc:
            log.error("earcon %s cannot be read (%s); the built-in one plays instead", path, exc)
    with resources.as_file(resources.files("mavend.data.sounds") / builtin) as file:
        audio, file_rate = read_wav(file)
    return resample(audio, file_rate, rate)


def write_builtin(folder: Path) -> None:
    write_wav(folder / "wake.wav", make_chime(WAKE_TONES), RATE)
    write_wav(folder / "done.wav", make_chime(DONE_TONES), RATE)


if __name__ == "__main__":
    write_builtin(Path(__file__).resolve().parent.parent / "data" / "sounds")
