"""Speech synthesized at test time (espeak-ng), shaped with sox and numpy.

Everything is 16 kHz mono int16 numpy arrays; `write_wav` puts one on disk.
The benchmarks (bench/wakeword_*.py) build their sets from the same helpers.
"""

from __future__ import annotations

import shutil
import subprocess
import wave
from pathlib import Path

import numpy as np

RATE = 16000

# espeak-ng voices that differ audibly (accent, pitch, formants).
VOICES = (
    "en-us",
    "en-us+f3",
    "en-gb",
    "en-gb-x-rp+m3",
    "en-gb-scotland",
    "en-029+f2",
    "en-us-nyc+m5",
    "en+f4",
)


def _need(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        raise RuntimeError(
            f"{program} is not installed: apt-get install espeak-ng sox (make test does)"
        )
    return path


def espeak(text: str, voice: str = "en-us", speed: int = 160, pitch: int = 50) -> np.ndarray:
    """`text` spoken by espeak-ng, as 16 kHz mono int16 (resampled by sox)."""
    wav = subprocess.run(
        [_need("espeak-ng"), "-v", voice, "-s", str(speed), "-p", str(pitch), "--stdout", text],
        capture_output=True,
        check=True,
        timeout=30,
    ).stdout
    return sox(wav, "-t", "wav", "-")


def sox(data: bytes, *input_args: str, effects: tuple[str, ...] = ()) -> np.ndarray:
    """Run audio bytes through sox to 16 kHz mono int16, with optional effects."""
    raw = subprocess.run(
        [_need("sox"), "-q", *input_args, "-r", str(RATE), "-c", "1", "-b", "16",
         "-e", "signed-integer", "-t", "raw", "-", *effects],
        input=data,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    return np.frombuffer(raw, dtype="<i2").copy()


def effect(samples: np.ndarray, *effects: str) -> np.ndarray:
    """Apply sox effects (e.g. "reverb", "50") to a 16 kHz signal."""
    return sox(samples.astype("<i2").tobytes(), "-t", "raw", "-r", str(RATE), "-c", "1",
               "-b", "16", "-e", "signed-integer", "-", effects=effects)


def reverb(samples: np.ndarray, amount: int = 50, room: int = 50) -> np.ndarray:
    # sox's reverb is stereo-capable; keep it wet but intelligible.
    return effect(samples, "reverb", str(amount), "50", str(room))


def silence(seconds: float) -> np.ndarray:
    return np.zeros(round(seconds * RATE), dtype=np.int16)


def concat(*parts: np.ndarray) -> np.ndarray:
    return np.concatenate([p.astype(np.int16) for p in parts])


def trim(samples: np.ndarray, threshold: int = 200) -> np.ndarray:
    """Cut leading and trailing near-silence (espeak pads its output)."""
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > threshold)
    if len(loud) == 0:
        return samples[:0]
    return samples[loud[0] : loud[-1] + 1]


def noise(seconds: float, seed: int = 0, kind: str = "pink") -> np.ndarray:
    """Noise at unit RMS (float64): white, or pink (1/f, like a room's hum and fans)."""
    rng = np.random.default_rng(seed)
    n = round(seconds * RATE)
    white = rng.standard_normal(n)
    if kind == "white":
        return white
    spectrum = np.fft.rfft(white)
    freqs = np.fft.rfftfreq(n, 1 / RATE)
    freqs[0] = freqs[1]
    pink = np.fft.irfft(spectrum / np.sqrt(freqs), n)
    return pink / np.sqrt(np.mean(pink**2))


def add_noise(samples: np.ndarray, snr_db: float, seed: int = 0, kind: str = "pink") -> np.ndarray:
    """Mix noise at `snr_db` relative to the *speech* level (voiced parts only)."""
    signal = samples.astype(np.float64)
    voiced = signal[np.abs(signal) > 200]
    level = np.sqrt(np.mean(voiced**2)) if len(voiced) else 1000.0
    mixed = signal + noise(len(samples) / RATE, seed, kind) * level / (10 ** (snr_db / 20))
    return np.clip(np.round(mixed), -32768, 32767).astype(np.int16)


def scale(samples: np.ndarray, gain: float) -> np.ndarray:
    return np.clip(np.round(samples.astype(np.float64) * gain), -32768, 32767).astype(np.int16)


def write_wav(path: Path, samples: np.ndarray, rate: int = RATE, channels: int = 1,
              sampwidth: int = 2) -> Path:
    """Write int16 samples (interleaved when `channels` > 1) as a PCM WAV."""
    with wave.open(str(path), "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(sampwidth)
        out.setframerate(rate)
        out.writeframes(samples.astype("<i2").tobytes())
    return path


def command_clip(
    command: str,
    *,
    voice: str = "en-us",
    speed: int = 160,
    wake: str = "hey jarvis",
    gap_s: float = 0.15,
    lead_s: float = 1.0,
    tail_s: float = 1.5,
) -> np.ndarray:
    """Silence, "hey jarvis", a short gap, the command, silence: one turn."""
    parts = [silence(lead_s)]
    if wake:
        parts += [trim(espeak(wake, voice, speed)), silence(gap_s)]
    parts += [trim(espeak(command, voice, speed)), silence(tail_s)]
    return concat(*parts)
