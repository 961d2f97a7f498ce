"""The voice: hibari (Apache-2.0), its G2P in-process and its ONNX acoustic model.

The model file is the registry's (`mavend models pull` fetches and verifies it), so
hibari never downloads anything: `Hibari(model=path)` skips its own voice download.
Chosen by measurement over Piper (bench/tts_bench.py; README "Spoken replies").
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import numpy as np

from mavend.errors import ModelError, ModelMissingError
from mavend.tts.audio import trim_silence

log = logging.getLogger(__name__)


class Voice:
    """`synthesize(sentence)` -> mono float32 at `sample_rate`. One caller at a time."""

    def __init__(self, engine: object, sample_rate: int, model: Path):
        self._engine = engine
        self.sample_rate = sample_rate
        self.model = model
        self._lock = threading.Lock()  # onnxruntime is thread-safe; hibari's G2P caches are not

    @classmethod
    def load(cls, model: Path, *, threads: int = 1) -> Voice:
        """Load and warm up (about 0.5 s); a missing or broken model raises ModelError."""
        if not model.is_file():
            raise ModelMissingError(
                f"the voice model {model} is missing: run `mavend models pull`"
            )
        started = time.monotonic()
        try:
            from hibari import Hibari

            # threads=1: two cores are shared with the wake word, speech-to-text and the LLM,
            # and one thread already synthesizes ~100x faster than real time.
            engine = Hibari(model=str(model), threads=threads)
            engine("Ready.", seed=0)  # loads the G2P (lexicon, tagger) now, not on a turn
        except ImportError as exc:
            raise ModelError(f"hibari-tts is not installed ({exc}): pip install mavend") from exc
        except Exception as exc:  # onnxruntime raises its own unrelated types
            raise ModelError(f"cannot load the voice {model}: {exc}") from exc
        log.debug("voice %s loaded in %.2f s", model.name, time.monotonic() - started)
        return cls(engine, int(engine.sample_rate), model)

    def synthesize(self, sentence: str) -> np.ndarray:
        with self._lock:
            audio = self._engine(sentence, seed=0)  # type: ignore[operator]
        audio = np.clip(np.asarray(audio, dtype=np.float32), -1.0, 1.0)
        return trim_silence(audio, self.sample_rate)
