"""A second, independent check of a wake: microWakeWord's "hey jarvis" over the audio
around openWakeWord's trigger.

openWakeWord (`wakeword.detector`) listens all the time. With `[wakeword] verifier =
"micro"` its trigger fires `CONFIRM_S` after the score crosses the threshold; the
front end then hands this verifier the last `window_s` seconds from its pre-roll
ring, and the wake counts only if microWakeWord hears the phrase too. The two models
share nothing: another feature front end (TFLite Micro's 40 channels every 10 ms),
another network (a streaming int8 TFLite net), other training data, so a sound that
fools one rarely fools both. microWakeWord peaks a little after the end of the phrase
and openWakeWord a little before it: hence the wait (BENCHMARKS.md, "Wake verifier").

The model and its cut-offs (`hey_jarvis.tflite`, `hey_jarvis.json`) are the model
cache's (`micro-wakeword-hey-jarvis` in `mavend.models.registry`, taken out of the
pymicro-wakeword wheel and pinned by sha256); the TFLite C runtime and the feature
front end are the installed `pymicro-wakeword` package (a dependency, with
`pymicro-features`), driven through its own classes. microWakeWord's defaults are
kept: a detection is a mean of the last 5 outputs above 0.97 (`hey_jarvis.json`).

The streaming model keeps state between invocations, so each check starts from a
fresh model and front end: the answer depends only on the window. A check costs a
few ms of CPU and runs only when openWakeWord fires.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mavend.errors import ModelError, ModelMissingError

log = logging.getLogger(__name__)

MODEL_NAME = "micro-wakeword-hey-jarvis"  # the registry's name
RATE = 16000
VERIFIERS = ("none", "micro")
# How long after openWakeWord's crossing the check runs (the audio it needs past the
# crossing), and how much audio before that it looks at.
CONFIRM_S = 0.24
WINDOW_S = 2.0


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    score: float  # the highest sliding-window mean in the window
    ms: float  # wall time of the check


class MicroVerifier:
    """Does microWakeWord hear "hey jarvis" in this audio? `check(samples)` says.

    `samples`: 16 kHz mono int16 ending `CONFIRM_S` after the trigger; only the last
    `window_s` seconds are used. `cutoff` and `sliding_window` default to the
    model's own (0.97 and 5 outputs, one output per 30 ms).
    """

    def __init__(
        self,
        model_dir: Path,
        *,
        window_s: float = WINDOW_S,
        cutoff: float | None = None,
        sliding_window: int | None = None,
    ):
        model_dir = Path(model_dir)
        config_path = model_dir / "hey_jarvis.json"
        for needed in (config_path, model_dir / "hey_jarvis.tflite"):
            if not needed.is_file():
                raise ModelMissingError(
                    f"the wake verifier's file {needed} is missing: run `mavend models pull` "
                    f"(model {MODEL_NAME}), or set [wakeword] verifier = \"none\""
                )
        try:
            from pymicro_wakeword import MicroWakeWord, MicroWakeWordFeatures
            from pymicro_wakeword.microwakeword import _MODULE_LIB_DIR
        except ImportError as exc:
            raise ModelError(
                f"pymicro-wakeword is not installed ({exc}): pip install mavend, "
                "or set [wakeword] verifier = \"none\""
            ) from exc
        library = next(iter(sorted(Path(_MODULE_LIB_DIR).glob("*tensorflowlite_c.*"))), None)
        if library is None:
            raise ModelError(
                f"pymicro-wakeword has no TFLite runtime in {_MODULE_LIB_DIR} "
                "(no wheel for this platform?); set [wakeword] verifier = \"none\""
            )
        config = json.loads(config_path.read_text())
        micro = config["micro"]
        self.cutoff = float(micro["probability_cutoff"] if cutoff is None else cutoff)
        self.sliding_window = int(
            micro["sliding_window_size"] if sliding_window is None else sliding_window
        )
        self.window_s = window_s
        self.model_path = model_dir / config["model"]
        try:
            self._model = MicroWakeWord(
                id=Path(config["model"]).stem,
                wake_word=config["wake_word"],
                tflite_model=self.model_path,
                probability_cutoff=self.cutoff,
                sliding_window_size=self.sliding_window,
                trained_languages=config.get("trained_languages", []),
                libtensorflowlite_c_path=library,
            )
        except (OSError, RuntimeError, ValueError) as exc:
            raise ModelError(f"TFLite cannot load {self.model_path}: {exc}") from exc
        self._features_class = MicroWakeWordFeatures
        self._lock = threading.Lock()
        self.checks = 0
        self.rejected = 0

    @classmethod
    def from_models(cls, models_dir: Path | None = None, **options) -> MicroVerifier:
        """From the model cache (`mavend models pull`); never downloads."""
        from mavend.models import require

        try:
            path = require(MODEL_NAME, models_dir)
        except ModelMissingError as exc:
            raise ModelMissingError(
                f"{exc} ([wakeword] verifier = \"micro\" needs it: run `mavend models pull`, "
                "or set [wakeword] verifier = \"none\")"
            ) from exc
        return cls(path, **options)

    def means(self, samples: np.ndarray) -> np.ndarray:
        """What the library reports for each 10 ms feature frame of `samples`, from a fresh
        state: the mean of the last `sliding_window` outputs after each inference (one per
        3 frames), 0.0 in between and until that many outputs exist."""
        audio = np.ascontiguousarray(samples, dtype="<i2").tobytes()
        with self._lock:
            self._model.reset()  # the library reloads the model: fresh streaming state
            features = self._features_class()
            means = [self._model.process_streaming_prob(f) or 0.0
                     for f in features.process_streaming(audio)]
        return np.asarray(means, dtype=np.float32)

    def score(self, samples: np.ndarray) -> float:
        """The highest sliding mean over the last `window_s` seconds (0.0 if too short)."""
        means = self.means(samples[-round(self.window_s * RATE) :])
        return float(means.max()) if len(means) else 0.0

    def check(self, samples: np.ndarray) -> Verdict:
        started = time.perf_counter()
        score = self.score(samples)
        accepted = score > self.cutoff  # microWakeWord: "prob <= cutoff" is no detection
        ms = (time.perf_counter() - started) * 1000
        self.checks += 1
        if not accepted:
            self.rejected += 1
        return Verdict(accepted, score, ms)

    def close(self) -> None:
        self._model.close()
