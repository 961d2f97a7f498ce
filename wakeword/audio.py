"""Sample-level helpers: format conversion, framing, the pre-roll ring, resampling.

Everything downstream of a source works on 16 kHz mono int16: openWakeWord
wants 1280-sample frames of it, Silero 512-sample windows, Whisper float32 of
the same samples. These helpers are pure and stateful only where streaming
needs it (a framer's remainder, a resampler's filter context, a DC blocker's
last sample), so they can be unit-tested on synthetic signals.
"""

from __future__ import annotations

import math

import numpy as np

RATE = 16000  # the pipeline's one sample rate
INT16_MAX = 32767


def seconds(samples: int) -> float:
    return samples / RATE


def to_int16(samples: np.ndarray) -> np.ndarray:
    """Any PCM array (int8/16/32, uint8, float in [-1, 1]) -> int16, clipped, not wrapped."""
    array = np.asarray(samples)
    if array.dtype == np.int16:
        return array
    if array.dtype == np.uint8:  # 8-bit WAV is unsigned, centred on 128
        return ((array.astype(np.int16) - 128) << 8).astype(np.int16)
    if np.issubdtype(array.dtype, np.integer):
        shift = 8 * array.dtype.itemsize - 16
        return (array.astype(np.int64) >> shift).astype(np.int16)
    floats = np.nan_to_num(array.astype(np.float64), nan=0.0, posinf=1.0, neginf=-1.0)
    return np.clip(np.round(floats * 32768.0), -32768, INT16_MAX).astype(np.int16)


def to_mono(samples: np.ndarray) -> np.ndarray:
    """(frames,) or (frames, channels) -> (frames,), averaging the channels."""
    array = np.asarray(samples)
    if array.ndim == 1:
        return array
    if array.ndim != 2:
        raise ValueError(f"audio must be 1-D or (frames, channels), not shape {array.shape}")
    if array.shape[1] == 1:
        return array[:, 0]
    if np.issubdtype(array.dtype, np.integer):
        # Sum in a wider type so loud stereo does not wrap around.
        return (array.astype(np.int64).sum(axis=1) // array.shape[1]).astype(array.dtype)
    return array.mean(axis=1).astype(array.dtype)


def to_float32(samples: np.ndarray) -> np.ndarray:
    """int16 -> float32 in [-1, 1), as Whisper and Silero expect."""
    return samples.astype(np.float32) / 32768.0


def resample(samples: np.ndarray, rate_in: int, rate_out: int = RATE) -> np.ndarray:
    """One-shot polyphase resampling of a whole int16 signal."""
    if rate_in == rate_out or len(samples) == 0:
        return to_int16(samples)
    g = math.gcd(rate_in, rate_out)
    from scipy.signal import resample_poly  # ~0.8 s to import: only where audio is resampled

    out = resample_poly(samples.astype(np.float64), rate_out // g, rate_in // g)
    return np.clip(np.round(out), -32768, INT16_MAX).astype(np.int16)


class StreamResampler:
    """Resamples a stream block by block, the same as `resample` on the whole.

    resample_poly has no state, so each call sees a window with `pad` input
    samples of context on both sides; the right context is held back until the
    next block arrives (that is the latency: a few ms). `pad` is a multiple of
    the decimation factor so every window starts on an output-sample boundary.
    """

    def __init__(self, rate_in: int, rate_out: int = RATE):
        g = math.gcd(rate_in, rate_out)
        self.up, self.down = rate_out // g, rate_in // g
        # resample_poly's default FIR half-length is 10 * max(up, down) taps at
        # the upsampled rate: that many / up input samples either side.
        context = math.ceil(10 * max(self.up, self.down) / self.up) + 1
        self.pad = math.ceil(context / self.down) * self.down
        self._buffer = np.zeros(self.pad, dtype=np.float64)  # silence before the start

    def push(self, block: np.ndarray) -> np.ndarray:
        self._buffer = np.concatenate([self._buffer, block.astype(np.float64)])
        ready = (len(self._buffer) - 2 * self.pad) // self.down * self.down
        if ready <= 0:
            return np.zeros(0, dtype=np.int16)
        window = self._buffer[: ready + 2 * self.pad]
        from scipy.signal import resample_poly

        out = resample_poly(window, self.up, self.down)
        first = self.pad * self.up // self.down
        out = out[first : first + ready * self.up // self.down]
        self._buffer = self._buffer[ready:]
        return np.clip(np.round(out), -32768, INT16_MAX).astype(np.int16)


class DcBlocker:
    """A one-pole high-pass (~13 Hz at 16 kHz) that removes a DC offset.

    A microphone with a DC offset pushes speech into clipping and shifts the
    lowest mel bins; the filter costs microseconds per frame.
    """

    def __init__(self, pole: float = 0.995):
        self._b = np.array([1.0, -1.0])
        self._a = np.array([1.0, -pole])
        self._state = np.zeros(1)
        self._primed = False

    def __call__(self, samples: np.ndarray) -> np.ndarray:
        if len(samples) == 0:
            return samples
        x = samples.astype(np.float64)
        if not self._primed:
            # Start in the steady state of the first sample's level (y = 0,
            # z = -x0), so a constant offset does not ring as a step at the start.
            self._state = np.array([-x[0]])
            self._primed = True
        from scipy.signal import lfilter

        y, self._state = lfilter(self._b, self._a, x, zi=self._state)
        return np.clip(np.round(y), -32768, INT16_MAX).astype(np.int16)


class Framer:
    """Cuts a stream of arbitrary-sized blocks into frames of exactly `size` samples."""

    def __init__(self, size: int):
        if size <= 0:
            raise ValueError("frame size must be positive")
        self.size = size
        self._pending = np.zeros(0, dtype=np.int16)

    @property
    def pending(self) -> int:
        return len(self._pending)

    def push(self, block: np.ndarray) -> list[np.ndarray]:
        data = np.concatenate([self._pending, block]) if len(self._pending) else block
        count = len(data) // self.size
        frames = [data[i * self.size : (i + 1) * self.size] for i in range(count)]
        self._pending = data[count * self.size :].copy()
        return frames

    def reset(self) -> None:
        self._pending = np.zeros(0, dtype=np.int16)


class RingBuffer:
    """The last `capacity` samples of the stream, addressed by absolute sample index.

    The listener writes every frame here while idle so that, when the wake word
    fires, the audio *before* the detection (the wake word itself and a command
    spoken straight after it) is still there: the pre-roll.
    """

    def __init__(self, capacity: int):
        if capacity <= 0:
            raise ValueError("capacity must be positive")
        self.capacity = capacity
        self._data = np.zeros(capacity, dtype=np.int16)
        self.total = 0  # samples ever written; the next sample's absolute index

    def append(self, samples: np.ndarray) -> None:
        n = len(samples)
        if n >= self.capacity:
            self._data[:] = samples[-self.capacity :]
            self.total += n
            # Keep the ring's physical layout consistent with `total`.
            self._data = np.roll(self._data, self.total % self.capacity)
            return
        start = self.total % self.capacity
        end = start + n
        if end <= self.capacity:
            self._data[start:end] = samples
        else:
            split = self.capacity - start
            self._data[start:] = samples[:split]
            self._data[: end - self.capacity] = samples[split:]
        self.total += n

    @property
    def oldest(self) -> int:
        """Absolute index of the oldest sample still held."""
        return max(0, self.total - self.capacity)

    def since(self, index: int) -> np.ndarray:
        """Samples from absolute `index` (clamped to what is held) to now, oldest first."""
        index = max(index, self.oldest)
        count = self.total - index
        if count <= 0:
            return np.zeros(0, dtype=np.int16)
        start = index % self.capacity
        end = start + count
        if end <= self.capacity:
            return self._data[start:end].copy()
        return np.concatenate([self._data[start:], self._data[: end - self.capacity]])

    def last(self, count: int) -> np.ndarray:
        return self.since(self.total - count)

    def clear(self) -> None:
        self._data[:] = 0
        self.total = 0


def rms_dbfs(samples: np.ndarray) -> float:
    """Level of an int16 block in dB relative to full scale (-inf for digital silence)."""
    if len(samples) == 0:
        return float("-inf")
    rms = float(np.sqrt(np.mean(samples.astype(np.float64) ** 2)))
    return 20 * math.log10(rms / 32768.0) if rms > 0 else float("-inf")
