"""Mavend's own voice, as the microphone hears it: the playback reference.

While mavend speaks, the microphone stays open (the wake word must be able to stop a
reply) and hears the reply too. There is no echo canceller here; instead the speaker
tells this module exactly what it plays and when it will be heard, and the front end
asks three questions of it:

- `own_wake(t)`: did the reply itself say the wake word around `t`? The same wake
  model scores the played audio (resampled to 16 kHz) on its own timeline; a mic wake
  within a window around a reference score above `wake_threshold` is the speaker's
  own "hey jarvis", not the user's, and is ignored.
- `active(t)`: is mavend audible (or about to be: a reply is queued)? The follow-up
  window waits for it, and a barge-in wake stops it.
- `explains(level_db, t)`: is a mic level during playback no louder than the echo of
  what is playing would be? Echo is not speech (half-duplex VAD for turns opened
  without the wake word); a voice clearly above the echo is.

Times are `time.monotonic()` seconds: the front end converts its audio clock with its
chunk arrival times, the speaker adds the output stream's latency to its write times.
Thread-safe: the speaker's playback thread writes, the front end's audio thread reads.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from bisect import bisect_left
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)

RATE = 16000
FRAME = 1280  # the wake model's 80 ms step
FRAME_S = FRAME / RATE


@dataclass(frozen=True)
class EchoConfig:
    # A reference wake score at or above this marks the reply's own wake word; lower
    # than the mic's trigger threshold: the clean reference scores at least as high.
    wake_threshold: float = 0.2
    # How far a mic wake may be from the reference's own (alignment error, the
    # detector's lag, room reverberation).
    wake_before_s: float = 1.2
    wake_after_s: float = 0.6
    # Audible this long after the last sample's estimated time (room decay, and error
    # in the latency estimate).
    tail_s: float = 0.35
    # `explains`: the mic is echo unless it is this much louder than the reference
    # (scaled by the learned coupling) anywhere within `level_span_s` of `t`.
    margin_db: float = 8.0
    level_span_s: float = 0.12


class PlaybackReference:
    """What mavend plays, on the monotonic clock, for the front end to compare with."""

    def __init__(
        self,
        scorer: Callable[[np.ndarray], float] | None = None,
        config: EchoConfig | None = None,
        reset_scorer: Callable[[], None] | None = None,
    ):
        self.config = config or EchoConfig()
        self._scorer = scorer
        self._reset_scorer = reset_scorer
        self._lock = threading.Lock()
        self._pending = 0  # jobs queued or playing
        self._heard_until = float("-inf")
        # (heard time of a frame's end, its wake score, its level in dBFS); ~2 min kept.
        self._frames: deque[tuple[float, float, float]] = deque(maxlen=1500)
        self._carry = np.zeros(0, dtype=np.float32)
        self._carry_t = 0.0
        # Echo level relative to the reference, learned from explained frames (0 dB:
        # the worst case, a loopback; a room lowers it).
        self.coupling_db = 0.0

    # the speaker's side -------------------------------------------------------
    def expect(self) -> None:
        """A reply or an earcon was queued: mavend is about to be audible."""
        with self._lock:
            self._pending += 1

    def finished(self) -> None:
        """A queued reply or earcon is done (played, dropped or interrupted)."""
        with self._lock:
            self._pending = max(0, self._pending - 1)

    def played(self, audio: np.ndarray, rate: int, heard_at: float) -> None:
        """`audio` (float32 in [-1, 1], as sent to the device) will be heard from
        `heard_at` on. Scores it with the wake model, frame by frame."""
        from mavend.tts.audio import resample

        samples = resample(audio, rate, RATE)
        end = heard_at + len(samples) / RATE
        with self._lock:
            self._heard_until = max(self._heard_until, end)
            if not len(self._carry) or abs(self._carry_t - heard_at) > 0.05:
                # A gap (a new reply, an underrun): start a fresh frame grid.
                self._carry, self._carry_t = np.zeros(0, np.float32), heard_at
                start = heard_at
            else:
                start = self._carry_t - len(self._carry) / RATE
            buffer = np.concatenate([self._carry, samples])
            whole = len(buffer) // FRAME * FRAME
            self._carry = buffer[whole:]
            self._carry_t = end
        self._score(buffer[:whole], start)

    def _score(self, buffer: np.ndarray, start: float) -> None:
        pcm = np.clip(buffer * 32767.0, -32768, 32767).astype(np.int16)
        for i in range(0, len(pcm), FRAME):
            frame = pcm[i : i + FRAME]
            score = self._scorer(frame) if self._scorer is not None else 0.0
            level = _dbfs(frame)
            with self._lock:
                self._frames.append((start + (i + FRAME) / RATE, score, level))
            if score >= self.config.wake_threshold:
                log.debug("the reply says the wake word (reference score %.2f)", score)

    def stopped(self, at: float | None = None) -> None:
        """Playback was cut (barge-in): nothing more will be heard after `at`."""
        at = time.monotonic() if at is None else at
        with self._lock:
            self._heard_until = min(self._heard_until, at)
            self._carry = np.zeros(0, np.float32)
        if self._reset_scorer is not None:
            self._reset_scorer()

    # the front end's side -----------------------------------------------------
    def active(self, t: float | None = None) -> bool:
        """Mavend is audible at `t` (now by default), or has something queued."""
        t = time.monotonic() if t is None else t
        with self._lock:
            return self._pending > 0 or t < self._heard_until + self.config.tail_s

    def overlaps(self, start: float, end: float) -> bool:
        """Was mavend audible at any moment in [start, end]?"""
        with self._lock:
            if start >= self._heard_until + self.config.tail_s:
                return False
            frames = list(self._frames)
        return any(start - FRAME_S <= ft <= end + self.config.tail_s for ft, _, _ in frames)

    @property
    def heard_until(self) -> float:
        with self._lock:
            return self._heard_until

    def own_wake(self, t: float) -> float | None:
        """The reference's highest wake score near `t`, if at or above the threshold:
        a mic wake there is the reply's own wake word."""
        c = self.config
        best = max((s for _, s, _ in self._window(t - c.wake_before_s, t + c.wake_after_s)),
                   default=0.0)
        return best if best >= c.wake_threshold else None

    def explains(self, level_db: float, t: float) -> bool:
        """True if a mic window of `level_db` at `t` is no louder than mavend's echo."""
        c = self.config
        if not self.active(t):
            return False
        levels = [lv for _, _, lv in self._window(t - c.level_span_s, t + c.level_span_s)]
        if not levels:
            # Queued or just started, its frames not on the timeline yet (the latency
            # estimate is off by more than the span): take the mic for the reply.
            return True
        reference = max(levels)
        if reference <= -80.0:
            return False  # the reply is silent here: whatever the mic hears is not it
        level_db = max(level_db, -120.0)  # digital silence is -inf
        excess = level_db - (reference + self.coupling_db)
        if excess < c.margin_db:
            if level_db > -90.0 and reference > -60.0:
                # Explained: learn how loud the echo is, slowly (a room is quieter
                # than a loopback; never above 0 dB, which would hide the user).
                delta = level_db - reference
                self.coupling_db = min(0.0, max(-40.0, 0.98 * self.coupling_db + 0.02 * delta))
            return True
        return False

    def _window(self, start: float, end: float) -> list[tuple[float, float, float]]:
        with self._lock:
            frames = list(self._frames)
        times = [ft for ft, _, _ in frames]
        lo = bisect_left(times, start)
        hi = bisect_left(times, end + FRAME_S)
        return frames[lo:hi]


def _dbfs(frame: np.ndarray) -> float:
    rms = float(np.sqrt(np.mean(frame.astype(np.float64) ** 2))) if len(frame) else 0.0
    return 20 * math.log10(rms / 32768.0) if rms > 0 else -120.0


def wake_scorer(files) -> tuple[Callable[[np.ndarray], float], Callable[[], None]]:
    """A second instance of the front end's wake model, for the reference (its own
    feature buffers: the reference is a separate stream). `files`: WakeModelFiles."""
    from wakeword.detector import WakeModel

    model = WakeModel(files)
    lock = threading.Lock()

    def score(frame: np.ndarray) -> float:
        with lock:
            return model.score(frame)

    def reset() -> None:
        with lock:
            model.reset()

    return score, reset
