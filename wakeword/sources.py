"""Where audio comes from: files, raw PCM on a stream (stdin), or the microphone.

A source yields `AudioChunk`s of 16 kHz mono int16, whatever it reads:
other rates are resampled, other channel counts averaged, other sample formats
converted. What cannot be read is an `AudioInputError` that says why.

A *live* source (the microphone) stamps each chunk with the monotonic time it
arrived; a file has no such time and the front end supplies one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

import numpy as np

from mavend.errors import MavendError
from wakeword.audio import RATE, StreamResampler, resample, to_int16, to_mono

log = logging.getLogger(__name__)

CHUNK = 1280  # samples per chunk from a file or stream: the wake model's frame


class AudioInputError(MavendError):
    """An audio file or stream that cannot be read (the message says why)."""

    exit_code = 1


@dataclass(frozen=True)
class AudioChunk:
    samples: np.ndarray  # int16, mono, 16 kHz
    arrival: float | None = None  # time.monotonic() when the last sample arrived (live only)


class AudioSource(Protocol):
    """Anything the front end can listen to."""

    name: str
    live: bool  # True: real time, chunks carry arrival times; False: read as fast as wanted

    def chunks(self, stop: threading.Event) -> Iterator[AudioChunk]:
        """Yield audio until the source ends or `stop` is set."""
        ...


def read_audio_file(path: Path) -> np.ndarray:
    """A whole audio file as 16 kHz mono int16.

    WAV (any PCM or float format, any rate, any channel count) is read with
    scipy; anything else is decoded with PyAV (which faster-whisper brings).
    """
    if not path.is_file():
        raise AudioInputError(f"{path}: no such file")
    if path.suffix.lower() in (".wav", ".wave"):
        try:
            return _read_wav(path)
        except AudioInputError:
            raise
        except Exception as exc:  # a WAV scipy cannot parse: try the general decoder
            log.debug("%s: scipy could not read it (%s); trying PyAV", path, exc)
    return _decode_any(path)


def _read_wav(path: Path) -> np.ndarray:
    import warnings

    from scipy.io import wavfile

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", wavfile.WavFileWarning)  # odd chunks we skip
        rate, data = wavfile.read(str(path))
    if data.size == 0:
        return np.zeros(0, dtype=np.int16)
    if data.ndim == 2 and data.shape[1] == 0:
        raise AudioInputError(f"{path}: the WAV has no channels")
    mono = to_int16(to_mono(data))
    if rate != RATE:
        log.info("%s: %d Hz, %s channel(s): resampling to %d Hz mono", path, rate,
                 1 if data.ndim == 1 else data.shape[1], RATE)
        if rate < 4000:
            raise AudioInputError(f"{path}: sample rate {rate} Hz is too low for speech")
        mono = resample(mono, rate, RATE)
    return mono


def _decode_any(path: Path) -> np.ndarray:
    try:
        from faster_whisper.audio import decode_audio

        floats = decode_audio(str(path), sampling_rate=RATE)
    except Exception as exc:
        raise AudioInputError(f"{path}: not an audio file this can read ({exc})") from exc
    return to_int16(floats)


class ArraySource:
    """Audio already in memory (tests, benchmarks, a decoded file)."""

    live = False

    def __init__(self, samples: np.ndarray, name: str = "<array>", *, realtime: bool = False,
                 block: int = CHUNK):
        self.samples = to_int16(samples)
        self.name = name
        self.realtime = realtime  # pace like a microphone (benchmarks)
        self.block = block  # samples per chunk, as a device's blocksize
        if realtime:
            self.live = True

    def chunks(self, stop: threading.Event) -> Iterator[AudioChunk]:
        import time

        started = time.monotonic()
        for i in range(0, len(self.samples), self.block):
            if stop.is_set():
                return
            block = self.samples[i : i + self.block]
            if not self.realtime:
                yield AudioChunk(block)
                continue
            due = started + (i + len(block)) / RATE
            delay = due - time.monotonic()
            if delay > 0:
                stop.wait(delay)
            yield AudioChunk(block, arrival=max(due, time.monotonic()))


class FileSource(ArraySource):
    """An audio file, decoded once, then fed like any other source."""

    def __init__(self, path: Path, *, realtime: bool = False):
        super().__init__(read_audio_file(path), name=str(path), realtime=realtime)
        self.path = path


class RawPcmSource:
    """Raw little-endian int16 PCM from a binary stream (`mavend listen` reads stdin)."""

    live = False

    def __init__(self, stream: BinaryIO, *, rate: int = RATE, channels: int = 1,
                 name: str = "<stdin>"):
        if channels < 1:
            raise AudioInputError("raw PCM needs at least one channel")
        self.stream = stream
        self.rate = rate
        self.channels = channels
        self.name = name

    def chunks(self, stop: threading.Event) -> Iterator[AudioChunk]:
        frame_bytes = 2 * self.channels
        block = CHUNK * frame_bytes * max(1, self.rate // RATE)
        resampler = StreamResampler(self.rate, RATE) if self.rate != RATE else None
        leftover = b""
        while not stop.is_set():
            data = self.stream.read(block)
            if not data:
                break
            data = leftover + data
            usable = len(data) // frame_bytes * frame_bytes
            data, leftover = data[:usable], data[usable:]
            samples = np.frombuffer(data, dtype="<i2").reshape(-1, self.channels)
            mono = to_mono(samples).astype(np.int16)
            if resampler is not None:
                mono = resampler.push(mono)
            if len(mono):
                yield AudioChunk(mono)
        if leftover:
            log.warning("%s: dropped %d trailing byte(s) (not a whole sample frame)",
                        self.name, len(leftover))
