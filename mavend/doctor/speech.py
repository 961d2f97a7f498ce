"""Which speech model this box can afford: `mavend doctor` times a real decode.

Whisper base hears fewer words wrong than tiny.en (BENCHMARKS.md, "Hearing"), for about
twice the compute. Whether that compute fits depends on the box, and only a decode on it
says so: the check synthesizes a spoken command with the voice mavend ships (hibari),
decodes it with each Whisper model that is pulled, as the daemon sets them up, and names
the strongest one whose decode of a command stays within `BUDGET_MS`.

The check never changes the config: a box under load one minute is not slower for good,
and the owner decides. It fails only when the configured model itself is far over the
budget (a turn would wait on hearing), and says what to set.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mavend.config import Settings, SttSettings
from mavend.doctor.check import Check

# Compute for one spoken command after its end: the endpoint silence is already waited,
# so a decode past a quarter second is a delay a speaker notices before the reply starts.
BUDGET_MS = 250.0
# The configured model beyond this many budgets: a failing check, not advice.
OVER_BUDGET = 2.0
# Weakest first: the strongest one that fits is named.
MODELS = ("whisper-tiny.en", "whisper-base")
PULL = {"whisper-tiny.en": "mavend models pull",
        "whisper-base": "mavend models pull --profile whisper-base"}
# What the clip says (our own sentence): a wake phrase and a command with a time.
SAMPLE = "hey jarvis, set a timer for ten minutes"
DECODES = 3


@dataclass(frozen=True)
class Timed:
    model: str
    ms: float | None  # the median decode of the clip; None: not pulled here


def check_speech_model(settings: Settings) -> Check:
    stt = settings.stt
    if stt.backend == "wyoming":
        return Check("speech model", True, f"a Wyoming server at {stt.uri} transcribes: "
                                           "not timed here")
    clip = _sample_clip(settings.models.models_path())
    names = [stt.model, *(m for m in MODELS if m != stt.model)]
    timed = [_time_decode(stt, name, clip, settings.models.models_path()) for name in names]
    return _verdict(stt.model, timed, len(clip) / 16_000)


def _verdict(configured: str, timed: list[Timed], clip_s: float) -> Check:
    own = timed[0]
    if own.ms is None:
        return Check("speech model", False, f"{configured} is not pulled",
                     PULL.get(configured, "mavend models pull"))
    figures = "; ".join(
        f"{t.model} {t.ms:.0f} ms" if t.ms is not None else f"{t.model} not pulled"
        for t in timed
    )
    said = (f"a {clip_s:.1f} s command decodes in {figures} (budget {BUDGET_MS:.0f} ms)")
    fitting = [t for t in timed if t.ms is not None and t.ms <= BUDGET_MS and t.model in MODELS]
    best = max(fitting, key=lambda t: MODELS.index(t.model), default=None)
    if own.ms > OVER_BUDGET * BUDGET_MS:
        fix = (f'set [stt] model = "{best.model}"' if best is not None
               else "give mavend a faster box, or transcribe on another machine ([stt] "
                    'backend = "wyoming")')
        return Check("speech model", False, f"{said}: {configured} is too slow here", fix)
    if best is None or best.model == configured or configured not in MODELS:
        return Check("speech model", True, f"{said}: keep {configured}{_to_pull(timed)}")
    stronger = MODELS.index(best.model) > MODELS.index(configured)
    if stronger:
        advice = (f'{best.model} fits this box and mishears fewer words: set [stt] model = '
                  f'"{best.model}" to use it')
    else:
        advice = f"{configured} is over budget here; {best.model} fits"
    return Check("speech model", True, f"{said}: {advice}{_to_pull(timed)}")


def _to_pull(timed: list[Timed]) -> str:
    missing = [f"`{PULL[t.model]}` to time {t.model}" for t in timed
               if t.ms is None and t.model in PULL]
    return f" ({'; '.join(missing)})" if missing else ""


def _time_decode(stt: SttSettings, name: str, clip: np.ndarray, models_dir: Path) -> Timed:
    from mavend.errors import ModelError
    from wakeword.stt import SpeechToText

    try:
        model = SpeechToText.from_settings(
            dataclasses.replace(stt, model=name), models_dir, wake_words=("hey jarvis",)
        )
    except ModelError:
        return Timed(name, None)
    model.transcribe(clip)  # the first decode allocates
    times = []
    for _ in range(DECODES):
        started = time.perf_counter()
        model.transcribe(clip)
        times.append((time.perf_counter() - started) * 1000)
    return Timed(name, statistics.median(times))


def _sample_clip(models_dir: Path) -> np.ndarray:
    """The sample command in the shipped voice, 16 kHz int16, with a little silence."""
    from mavend.models import require
    from mavend.tts.voice import Voice
    from wakeword.audio import resample, to_int16

    voice = Voice.load(require("hibari-heart", models_dir))
    speech = resample(to_int16(voice.synthesize(SAMPLE)), voice.sample_rate, 16_000)
    pad = np.zeros(4_000, dtype=np.int16)
    return np.concatenate([pad, speech, pad])
