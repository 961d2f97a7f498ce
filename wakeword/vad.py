"""Silero VAD (v6 ONNX interface), one 512-sample window (32 ms) at a time."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from wakeword.audio import RATE, Framer, to_float32

WINDOW = 512  # samples per call at 16 kHz: what the v6 model is trained on
_CONTEXT = 64  # the model sees the previous window's last 64 samples too
WINDOW_S = WINDOW / RATE


class SileroVad:
    """Speech probability per window. Stateful (an RNN): `reset()` between streams."""

    def __init__(self, path: Path):
        import onnxruntime as ort

        options = ort.SessionOptions()
        # One thread: a window costs well under a millisecond, and the other
        # core belongs to speech-to-text.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._sr = np.array(RATE, dtype=np.int64)
        self._framer = Framer(WINDOW)
        self.reset()

    def reset(self) -> None:
        self._state = np.zeros((2, 1, 128), dtype=np.float32)
        self._context = np.zeros((1, _CONTEXT), dtype=np.float32)
        self._framer.reset()

    def window(self, samples: np.ndarray) -> float:
        """Speech probability of exactly one 512-sample int16 window."""
        x = np.concatenate([self._context, to_float32(samples)[None, :]], axis=1)
        prob, self._state = self._session.run(
            None, {"input": x, "state": self._state, "sr": self._sr}
        )
        self._context = x[:, -_CONTEXT:]
        return float(prob[0, 0])

    def push(self, samples: np.ndarray) -> list[float]:
        """Probabilities of every whole window completed by `samples` (the rest waits)."""
        return [self.window(w) for w in self._framer.push(samples)]

    @property
    def pending(self) -> int:
        """Samples pushed but not yet part of a whole window."""
        return self._framer.pending
