"""Audio between a satellite and mavend's pipeline: formats in, the voice out.

In: a satellite streams `audio-chunk`s in whatever format its microphone gives
(wyoming-satellite: `--mic-command-rate/width/channels`, 16 kHz 16-bit mono by
default). The front end wants 16 kHz mono int16, so other rates are resampled
(stream-wise, no clicks at block edges), other channel counts averaged and 8- or
32-bit samples narrowed; a format nothing sensible can come from is refused.

Out: the reply, synthesized by mavend's own voice (24 kHz float), resampled to the
satellite's sound rate (wyoming-satellite's `--snd-command-rate`, 22050 by default) and
cut into 16-bit mono `audio-chunk` payloads.

`StreamSource` is the front end's `AudioSource` for a network stream: the
connection's task pushes converted blocks, the front end's audio thread reads them.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from wakeword.audio import RATE, StreamResampler, resample, to_int16, to_mono
from wakeword.sources import AudioChunk

# What a satellite may stream. Speech below 8 kHz is not intelligible to Whisper;
# above 96 kHz or 8 channels is no microphone a satellite has.
MIN_RATE, MAX_RATE = 8000, 96000
MAX_CHANNELS = 8
WIDTHS = (1, 2, 4)  # bytes per sample: unsigned 8-bit, signed 16 and 32-bit (Wyoming's)
# Reply audio: ~100 ms per chunk at 22.05 kHz, as Home Assistant sends TTS audio.
REPLY_CHUNK_SAMPLES = 2048
_DTYPES = {1: np.dtype("u1"), 2: np.dtype("<i2"), 4: np.dtype("<i4")}


class AudioRefused(Exception):
    """Audio in a format mavend will not convert (the message says why)."""


@dataclass(frozen=True)
class AudioFormat:
    rate: int
    width: int
    channels: int

    def __str__(self) -> str:
        return f"{self.rate} Hz, {8 * self.width}-bit, {self.channels} channel(s)"

    @property
    def native(self) -> bool:
        return (self.rate, self.width, self.channels) == (RATE, 2, 1)

    @classmethod
    def of(cls, data: dict[str, Any]) -> AudioFormat:
        """The format an `audio-chunk`/`audio-start` event announces, checked."""
        values = [data.get(key) for key in ("rate", "width", "channels")]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            raise AudioRefused(
                "its audio does not say its rate, width and channels as integers"
            )
        fmt = cls(*values)
        if not MIN_RATE <= fmt.rate <= MAX_RATE:
            raise AudioRefused(f"{fmt}: the rate must be {MIN_RATE}-{MAX_RATE} Hz")
        if fmt.width not in WIDTHS:
            raise AudioRefused(f"{fmt}: samples must be 8, 16 or 32-bit")
        if not 1 <= fmt.channels <= MAX_CHANNELS:
            raise AudioRefused(f"{fmt}: 1 to {MAX_CHANNELS} channels")
        return fmt


class Converter:
    """One stream's audio -> 16 kHz mono int16 blocks (state: the resampler's context)."""

    def __init__(self, fmt: AudioFormat):
        self.fmt = fmt
        self._frame = fmt.width * fmt.channels
        self._leftover = b""
        self._resampler = StreamResampler(fmt.rate, RATE) if fmt.rate != RATE else None

    def push(self, payload: bytes) -> np.ndarray:
        data = self._leftover + payload
        usable = len(data) // self._frame * self._frame
        data, self._leftover = data[:usable], data[usable:]
        if self.fmt.native:
            return np.frombuffer(data, dtype="<i2").copy()
        samples = np.frombuffer(data, dtype=_DTYPES[self.fmt.width])
        mono = to_int16(to_mono(samples.reshape(-1, self.fmt.channels)))
        return self._resampler.push(mono) if self._resampler is not None else mono


def reply_payloads(audio: np.ndarray, rate_in: int, rate_out: int) -> list[bytes]:
    """Float audio in [-1, 1] at `rate_in` -> 16-bit mono PCM chunks at `rate_out`."""
    pcm = to_int16(audio)
    if rate_in != rate_out:
        pcm = resample(pcm, rate_in, rate_out)
    raw = pcm.astype("<i2").tobytes()
    step = 2 * REPLY_CHUNK_SAMPLES
    return [raw[i : i + step] for i in range(0, len(raw), step)]


class StreamSource:
    """An `AudioSource` fed by the connection's task: `push` blocks, `end()` when done.

    Live: each block carries its arrival time, so latencies are measured from when
    the satellite's audio arrived, not from when the audio thread got to it."""

    live = True

    def __init__(self, name: str):
        self.name = name
        self._blocks: queue.Queue[AudioChunk | None] = queue.Queue()

    def push(self, samples: np.ndarray) -> None:
        if len(samples):
            self._blocks.put(AudioChunk(samples, arrival=time.monotonic()))

    def end(self) -> None:
        self._blocks.put(None)

    def chunks(self, stop: threading.Event) -> Iterator[AudioChunk]:
        while not stop.is_set():
            try:
                block = self._blocks.get(timeout=0.2)
            except queue.Empty:
                continue
            if block is None:
                return
            yield block


class LockedStt:
    """One speech-to-text model shared by every satellite, one utterance at a time.

    Two cores: two Whisper decodes at once take as long as two in a row, and each
    would hold twice the memory; queueing them keeps each satellite's latency honest."""

    def __init__(self, stt: Any):
        self._stt = stt
        self._lock = threading.Lock()

    def transcribe(self, samples: np.ndarray) -> Any:
        with self._lock:
            return self._stt.transcribe(samples)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stt, name)
