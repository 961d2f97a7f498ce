"""The wake word: openWakeWord's ONNX models score each 80 ms frame; a trigger decides.

`WakeModel` wraps `openwakeword.Model` on the ONNX path (never tflite: see the
README); `WakeTrigger` is the pure decision on top of the scores (threshold,
refractory period, optional VAD gating), unit-testable with made-up scores.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mavend.config import WakeWordSettings
from mavend.errors import ModelMissingError
from wakeword.audio import RingBuffer, rms_dbfs

log = logging.getLogger(__name__)

FRAME = 1280  # 80 ms at 16 kHz: openWakeWord's native step
FRAME_S = FRAME / 16000
FEATURE_MODELS = ("melspectrogram.onnx", "embedding_model.onnx")


@dataclass(frozen=True)
class WakeModelFiles:
    model: Path
    melspectrogram: Path
    embedding: Path

    @property
    def name(self) -> str:
        # "hey_jarvis_v0.1" -> "hey_jarvis": the name the config uses
        return re.sub(r"_v\d+(\.\d+)*$", "", self.model.stem)


def resolve_wake_model(name_or_path: str, models_dir: Path | None = None) -> WakeModelFiles:
    """A bundled model name (`hey_jarvis`) or a path to a custom `.onnx` wake-word model.

    The shared feature models always come from the pulled `openwakeword` model dir.
    """
    from mavend.models import require

    features = require("openwakeword", models_dir)
    melspec, embedding = (features / f for f in FEATURE_MODELS)
    candidate = Path(name_or_path).expanduser()
    if candidate.suffix == ".onnx" or candidate.is_absolute() or "/" in name_or_path:
        if not candidate.is_file():
            raise ModelMissingError(f"wake-word model file not found: {candidate}")
        return WakeModelFiles(candidate, melspec, embedding)
    if candidate.suffix == ".tflite":
        raise ModelMissingError("tflite wake-word models are not supported: use the .onnx file")
    matches = sorted(features.glob(f"{name_or_path}_v*.onnx")) or sorted(
        features.glob(f"{name_or_path}.onnx")
    )
    if not matches:
        have = sorted(
            p.stem for p in features.glob("*.onnx") if p.name not in FEATURE_MODELS
        )
        raise ModelMissingError(
            f"no wake-word model named {name_or_path!r} in {features} (have: {have}); "
            "set [wakeword] model to one of those or to a path to a custom .onnx, "
            "or run `mavend models pull`"
        )
    return WakeModelFiles(matches[-1], melspec, embedding)


class EnergyGate:
    """Is there sound clearly above the room's noise floor? Skips the wake model if not.

    The wake model costs ~3 ms of CPU per 80 ms frame when frames arrive one at
    a time (cold caches; 1.5 ms back to back), above the 3 % idle budget on its
    own. In a quiet room nobody can be saying the wake word, so while every
    frame stays within `open_db` of the noise floor (the 10th percentile of
    the last `floor_s` seconds' frame levels), inference is skipped; the gate
    stays open `hold_s` after the last loud frame. Speech at 5 dB SNR still
    has frames ~8 dB above the noise, and one loud frame is enough. When it
    opens, `WakeModel` rebuilds its features from the audio it kept, so the
    model sees the same input as if it had run all along.
    The gate starts open (no noise floor is known yet).
    """

    def __init__(self, open_db: float = 6.0, hold_s: float = 2.0, floor_s: float = 4.0):
        self.open_db = open_db
        self._hold = max(1, round(hold_s / FRAME_S))
        self._levels: deque[float] = deque(maxlen=max(2, round(floor_s / FRAME_S)))
        self.reset()

    def reset(self) -> None:
        self._levels.clear()
        self._open_for = self._levels.maxlen or 0

    def update(self, level_db: float) -> bool:
        level = max(level_db, -120.0)  # digital silence is -inf
        floor = float(np.percentile(self._levels, 10)) if self._levels else level
        self._levels.append(level)
        if level >= floor + self.open_db:
            self._open_for = self._hold
        elif self._open_for > 0:
            self._open_for -= 1
        return self._open_for > 0


class WakeModel:
    """Scores 1280-sample int16 frames with one openWakeWord model (ONNX runtime).

    The same three ONNX models and the same streaming arithmetic as
    `openwakeword.Model.predict` (mel spectrogram of the last 1760 samples,
    x/10 + 2; one 96-d embedding per frame from the last 76 mel frames; the
    wake head over the last 16 embeddings), with fixed-size numpy buffers.
    openwakeword's own streaming code copies a 10 s deque into a list on every
    frame, which cost a third of the listening loop's CPU here (0.7 of 2.4 ms
    a frame); a test checks that both give the same scores.

    With a `gate`, frames the gate calls quiet are not scored (0.0); the audio
    is kept, and when the gate opens the embeddings of the skipped frames are
    computed in one batch before scoring resumes.
    """

    MEL_CONTEXT = 480  # samples of the previous frame the mel model needs (3 hops)
    MEL_WINDOW = 76  # mel frames per embedding
    MEL_PER_FRAME = 8
    WARM_UP = 5  # openwakeword reports 0 for the first frames

    def __init__(self, files: WakeModelFiles, gate: EnergyGate | None = None):
        import onnxruntime as ort

        self.files = files
        self.name = files.name
        self.gate = gate
        options = ort.SessionOptions()
        # One thread each: a frame costs ~1.5 ms; more threads only add wake-ups.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1

        def session(path: Path):
            return ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )

        self._mel = session(files.melspectrogram)
        self._embed = session(files.embedding)
        self._head = session(files.model)
        self._head_input = self._head.get_inputs()[0].name
        self.features = int(self._head.get_inputs()[0].shape[1])  # 16 for the bundled heads
        # Enough audio to rebuild every embedding the head looks at: each needs
        # 76 mel frames (9.5 frames of audio) before it.
        frames = self.features + 10
        self._history = RingBuffer(self.MEL_CONTEXT + frames * FRAME)
        self.skipped_frames = 0  # frames the gate spared the model (for benchmarks)
        self.reset()

    def reset(self) -> None:
        self._audio = np.zeros(0, dtype=np.float32)
        self._mels = np.ones((self.MEL_WINDOW, 32), dtype=np.float32)
        # openwakeword starts from the embeddings of 4 s of random noise; a
        # fixed seed keeps runs repeatable.
        noise = np.random.default_rng(0).integers(-1000, 1000, 16000 * 4).astype(np.int16)
        self._features = self._embeddings(self._melspec(noise), self.features)
        self._frames = 0
        self._skipped = 0  # frames skipped since the gate last closed
        self._history.clear()
        if self.gate is not None:
            self.gate.reset()

    def _melspec(self, samples: np.ndarray) -> np.ndarray:
        out = self._mel.run(None, {"input": samples.astype(np.float32)[None, :]})[0]
        return np.squeeze(out).reshape(-1, 32) / 10 + 2

    def _embeddings(self, mels: np.ndarray, count: int) -> np.ndarray:
        """Embeddings of the last `count` frames, from mel frames ending with them."""
        ends = [len(mels) - self.MEL_PER_FRAME * j for j in range(count - 1, -1, -1)]
        windows = [mels[e - self.MEL_WINDOW : e] for e in ends if e >= self.MEL_WINDOW]
        if not windows:
            return np.zeros((0, 96), dtype=np.float32)
        batch = np.asarray(windows, dtype=np.float32)[..., None]
        return self._embed.run(None, {"input_1": batch})[0].reshape(-1, 96)

    def score(self, frame: np.ndarray) -> float:
        """The wake-word probability after this 80 ms frame (exactly FRAME samples)."""
        self._frames += 1
        self._history.append(frame)
        if self.gate is not None and not self.gate.update(rms_dbfs(frame)):
            self._skipped += 1
            self.skipped_frames += 1
            return 0.0
        if self._skipped:
            self._catch_up(self._skipped + 1)
            self._skipped = 0
        else:
            self._step(frame)
        head = self._head.run(None, {self._head_input: self._features[None, :, :]})[0]
        if self._frames <= self.WARM_UP:
            return 0.0
        return float(head.reshape(-1)[0])

    def _step(self, frame: np.ndarray) -> None:
        audio = np.concatenate([self._audio, frame.astype(np.float32)])
        self._audio = audio[-self.MEL_CONTEXT :]
        self._mels = np.concatenate([self._mels, self._melspec(audio)])[-self.MEL_WINDOW :]
        embedding = self._embeddings(self._mels, 1)
        self._features = np.concatenate([self._features, embedding])[-self.features :]

    def _catch_up(self, frames: int) -> None:
        """Rebuild the state for the last `frames` frames (the skipped ones and this one)."""
        count = min(frames, self.features)
        chunks = count + 10  # 76 mel frames before the first embedding: 9.5 frames of audio
        audio = self._history.last(self.MEL_CONTEXT + chunks * FRAME).astype(np.float32)
        chunks = (len(audio) - self.MEL_CONTEXT) // FRAME
        # Frame by frame, exactly as streaming does. Not as one long window, nor
        # one batch: the mel model clamps to the loudest value of its whole
        # input, which differs next to digital silence. (~0.1 ms a window.)
        mels = np.concatenate(
            [
                self._melspec(audio[i * FRAME : (i + 1) * FRAME + self.MEL_CONTEXT])
                for i in range(chunks)
            ]
        )
        self._audio = audio[-self.MEL_CONTEXT :]
        self._mels = np.concatenate([self._mels, mels])[-self.MEL_WINDOW :]
        embeddings = self._embeddings(mels, count)
        self._features = np.concatenate([self._features, embeddings])[-self.features :]


@dataclass(frozen=True)
class TriggerConfig:
    threshold: float = 0.5
    refractory_s: float = 2.0
    vad_threshold: float = 0.0  # 0 = no gating
    vad_window_s: float = 1.0  # gating looks at the VAD over this much recent audio
    # Fire this long after the threshold is crossed, not at once: the wake verifier
    # (`wakeword.verifier`) needs the audio just after openWakeWord's peak.
    confirm_s: float = 0.0

    @classmethod
    def from_settings(cls, settings: WakeWordSettings) -> TriggerConfig:
        from wakeword.verifier import CONFIRM_S

        return cls(
            threshold=settings.threshold,
            refractory_s=settings.refractory_s,
            vad_threshold=settings.vad_threshold,
            confirm_s=CONFIRM_S if settings.verifier != "none" else 0.0,
        )


class WakeTrigger:
    """Turns per-frame scores into wake events: one per utterance.

    Fires when the score reaches the threshold, then stays silent for
    `refractory_s` (openWakeWord scores stay high for several frames after the
    phrase) and while `hold()` says an utterance is being captured. With VAD
    gating, a score only counts if the VAD heard speech within the last
    `vad_window_s` (noise that fools the wake model rarely fools both).

    With `confirm_s`, a crossing fires on the first frame `confirm_s` after it,
    whatever that frame scores; `crossed` keeps the crossing's (peak score, time).
    """

    def __init__(self, config: TriggerConfig):
        self.config = config
        self._quiet_until = float("-inf")
        self._held = False
        self._vad: deque[float] = deque(maxlen=max(1, round(config.vad_window_s / 0.032)))
        self._pending: tuple[float, float] | None = None  # (peak score, crossing time)
        self.crossed: tuple[float, float] | None = None  # the last firing's (score, time)

    @property
    def gated(self) -> bool:
        return self.config.vad_threshold > 0

    def vad(self, probs: list[float]) -> None:
        self._vad.extend(probs)

    def update(self, score: float, t: float, threshold: float | None = None) -> bool:
        """`threshold`: this frame's, if not the configured one (barge-in)."""
        pending = self._pending
        if pending is not None:
            peak, crossed_t = max(pending[0], score), pending[1]
            if t + 1e-6 < crossed_t + self.config.confirm_s:
                self._pending = (peak, crossed_t)
                return False
            self._pending = None
            self.crossed = (peak, crossed_t)
            return True
        bar = self.config.threshold if threshold is None else threshold
        if self._held or t < self._quiet_until or score < bar:
            return False
        if self.gated and (not self._vad or max(self._vad) < self.config.vad_threshold):
            return False
        self._quiet_until = t + self.config.refractory_s
        if self.config.confirm_s > 0:
            self._pending = (score, t)
            return False
        self.crossed = (score, t)
        return True

    def hold(self, held: bool = True) -> None:
        """Suppress firing while the front end captures an utterance."""
        self._held = held

    def reset(self) -> None:
        self._quiet_until = float("-inf")
        self._held = False
        self._vad.clear()
        self._pending = None
        self.crossed = None
