"""Mavend's own voice, as the microphone hears it: the playback reference.

While mavend speaks, the microphone stays open (the wake word must be able to stop a
reply) and hears the reply too. There is no echo canceller here; instead the speaker
tells this module exactly what it plays and when it will be heard, and the front end
asks three questions of it:

- `own_wake(t)`: did the reply itself say the wake word around `t`? As a sentence
  starts playing, `prepare` runs the wake model over the whole synthesized sentence
  (with the previous sentence's end as context; ~2 ms per 80 ms frame; until it is
  done the sentence counts as saying the wake word: the mic cannot hear a whole wake
  word in the first ~100 ms of a sentence, so nothing is lost). A sentence that
  scores `wake_threshold` anywhere, or whose text names the wake word, suppresses mic
  wakes for its entire play interval, `sentence_before_s` before its first block is
  heard to `sentence_after_s` after its last: by construction, whatever the error in
  the "heard at" estimate (underruns, latency) within those margins. A sentence
  without the wake word leaves the mic free: the user's wake word over it barges in.
  (`played` without a scan scores the audio live instead, frame by frame: a mic wake
  near a reference score above `wake_threshold` is ignored.)
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
import re
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
    # The mic's wake threshold while mavend speaks (if below [wakeword] threshold): the
    # user's wake word over the reply's echo scores lower (0.46 in a missed trial of
    # bench/self_wake_bench.py, loudspeaker looped into the mic).
    barge_in_threshold: float = 0.3
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
    # A sentence that says the wake word: mic wakes are ignored from this long before
    # its first block is heard to this long after its last (the latency estimate's
    # error, underruns, the detector's lag after the word's end, reverberation).
    sentence_before_s: float = 0.5
    sentence_after_s: float = 0.8
    # `prepare` scores a sentence after this much of the previous one (or silence):
    # the model's state as the mic's model would have it at the sentence's start.
    # (The first sentence of a reply follows silence: less of it will do, and it is
    # on the way to the reply's first sound.)
    scan_context_s: float = 1.04
    first_context_s: float = 0.48
    # ... and this much silence after it: the score peaks a few frames after the word.
    scan_tail_s: float = 0.4


@dataclass
class Scan:
    """A sentence scored by `PlaybackReference.prepare` before it is played."""

    scores: np.ndarray  # the wake score at the end of each 80 ms frame (16 kHz grid)
    levels: np.ndarray  # each frame's level, dBFS
    samples: int  # the sentence's length at 16 kHz
    peak: float  # the highest score over the sentence and the silence after it
    says_wake: bool  # the peak reached `wake_threshold`, or the text names the wake word
    interval: list[float] | None = None  # [from, to]: mic wakes ignored (once played)
    # Not scored yet (the sentence plays while it is scored, so scoring never delays the
    # reply's first sound): taken as saying the wake word until it is.
    pending: bool = False


def wake_words(model_name: str) -> tuple[str, ...]:
    """The words a reply must not say, from the wake model's name: "hey_jarvis" ->
    ("jarvis",) (a greeting alone is no wake word)."""
    words = [w for w in re.split(r"[^a-z]+", model_name.lower()) if w]
    names = [w for w in words if w not in ("hey", "hi", "ok", "okay", "v")]
    return tuple(names or words)


class PlaybackReference:
    """What mavend plays, on the monotonic clock, for the front end to compare with."""

    def __init__(
        self,
        scorer: Callable[[np.ndarray], float] | None = None,
        config: EchoConfig | None = None,
        reset_scorer: Callable[[], None] | None = None,
        wake_words: tuple[str, ...] = (),
    ):
        self.config = config or EchoConfig()
        self._scorer = scorer
        self._reset_scorer = reset_scorer
        self._words = re.compile(
            r"\b(" + "|".join(re.escape(w) for w in wake_words) + r")\b", re.IGNORECASE
        ) if wake_words else None
        self._context = np.zeros(0, np.float32)  # the end of the last sentence prepared
        self._suppress: deque[Scan] = deque(maxlen=64)  # played sentences that say it
        # Mic wake time minus its reference peak's heard time (seconds), for each
        # wake the reference explained: the alignment error, for benchmarks.
        self.offsets: deque[float] = deque(maxlen=1000)
        self.scans = self.scans_with_wake = 0  # sentences prepared; those that say it
        self.scan_s = 0.0  # time spent preparing them
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

    @staticmethod
    def pending_scan() -> Scan:
        """A sentence's scan before `prepare(..., into=it)` fills it in: it suppresses
        mic wakes like a sentence that says the wake word, until then."""
        empty = np.zeros(0, np.float32)
        return Scan(empty, empty, 0, 0.0, True, pending=True)

    def known(self, audio: np.ndarray, rate: int) -> Scan:
        """The scan of a sound mavend made itself (an earcon: two tones, never the wake
        word): its levels, for the echo, and no wake model run on it, so a reply queued
        behind it is not kept waiting for a scoring it does not need."""
        from mavend.tts.audio import resample

        samples = resample(audio, rate, RATE).astype(np.float32)
        frames = -(-len(samples) // FRAME)
        pcm = np.zeros(frames * FRAME, np.int16)
        pcm[: len(samples)] = np.clip(samples * 32767.0, -32768, 32767).astype(np.int16)
        levels = np.array([_dbfs(pcm[i * FRAME : (i + 1) * FRAME]) for i in range(frames)],
                          np.float32)
        return Scan(np.zeros(frames, np.float32), levels, len(samples), 0.0, False)

    def prepare(self, audio: np.ndarray, rate: int, text: str = "", *,
                first: bool = True, into: Scan | None = None) -> Scan:
        """Score a sentence (float32, as it will be played): the synthesis thread calls
        it, the playback thread hands the `Scan` to `played`. `first`: the first
        sentence of a reply (its context is silence, not the previous sentence's end).
        `into`: a `pending_scan()` already handed to the playback, filled in here."""
        from mavend.tts.audio import resample

        c = self.config
        began = time.perf_counter()
        samples = resample(audio, rate, RATE).astype(np.float32)
        context_len = round((c.first_context_s if first else c.scan_context_s) / FRAME_S) * FRAME
        context = np.zeros(context_len, np.float32)
        if not first and len(self._context):
            tail = self._context[-context_len:]
            context[context_len - len(tail):] = tail
        keep = round(c.scan_context_s / FRAME_S) * FRAME
        self._context = np.concatenate([self._context, samples])[-keep:]
        frames = -(-len(samples) // FRAME)
        tail_frames = round(c.scan_tail_s / FRAME_S)
        buffer = np.zeros(context_len + (frames + tail_frames) * FRAME, np.float32)
        buffer[:context_len] = context
        buffer[context_len : context_len + len(samples)] = samples
        pcm = np.clip(buffer * 32767.0, -32768, 32767).astype(np.int16)
        scores = np.zeros(frames + tail_frames, np.float32)
        first_frame = context_len // FRAME
        batch = getattr(self._scorer, "batch", None)
        if batch is not None:  # the same scores, the embeddings in one batch
            scores[:] = batch(pcm)[first_frame:]
        elif self._scorer is not None:
            if self._reset_scorer is not None:
                self._reset_scorer()
            for i in range(len(pcm) // FRAME):
                score = self._scorer(pcm[i * FRAME : (i + 1) * FRAME])
                if i >= first_frame:
                    scores[i - first_frame] = score
        levels = np.array([_dbfs(pcm[context_len + i * FRAME : context_len + (i + 1) * FRAME])
                           for i in range(frames)], np.float32)
        peak = float(scores.max(initial=0.0))
        named = bool(text and self._words is not None and self._words.search(text))
        says = named or peak >= c.wake_threshold
        if says:
            log.debug("a sentence says the wake word (%s, reference peak %.2f): mic wakes "
                      "are ignored while it plays", "named" if named else "scored", peak)
        self.scans += 1
        self.scans_with_wake += says
        self.scan_s += time.perf_counter() - began
        if into is None:
            return Scan(scores[:frames], levels, len(samples), peak, says)
        with self._lock:
            into.scores, into.levels, into.samples = scores[:frames], levels, len(samples)
            into.peak, into.says_wake, into.pending = peak, says, False
        return into

    def played(self, audio: np.ndarray, rate: int, heard_at: float,
               scan: Scan | None = None, offset: int = 0) -> None:
        """`audio` (float32 in [-1, 1], as sent to the device) will be heard from
        `heard_at` on. With `scan` (from `prepare`), `audio` is its sentence's samples
        from `offset` (at `rate`) on; without, it is scored live, frame by frame."""
        if scan is not None:
            self._played_scanned(audio, rate, heard_at, scan, offset)
            return
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

    def _played_scanned(self, audio: np.ndarray, rate: int, heard_at: float, scan: Scan,
                        offset: int) -> None:
        c = self.config
        first = offset * RATE // rate  # this block, on the sentence's 16 kHz grid
        last = (offset + len(audio)) * RATE // rate
        end = heard_at + len(audio) / rate
        level = _dbfs(np.clip(audio * 32767.0, -32768, 32767).astype(np.int16))
        with self._lock:
            self._heard_until = max(self._heard_until, end)
            self._carry = np.zeros(0, np.float32)
            if scan.pending:  # being scored: this block's level, no score
                self._frames.append((end, 0.0, level))
            else:
                if last >= scan.samples - 1:
                    last = len(scan.scores) * FRAME  # the last (partial) frame too
                for k in range(first // FRAME, min(len(scan.scores), last // FRAME)):
                    # the frames ending in (first, last]
                    t = heard_at + ((k + 1) * FRAME - first) / RATE
                    self._frames.append((t, float(scan.scores[k]), float(scan.levels[k])))
            if scan.says_wake:
                if scan.interval is None:
                    scan.interval = [heard_at - c.sentence_before_s, end + c.sentence_after_s]
                    self._suppress.append(scan)
                else:
                    scan.interval[0] = min(scan.interval[0], heard_at - c.sentence_before_s)
                    scan.interval[1] = max(scan.interval[1], end + c.sentence_after_s)

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
        """Is a mic wake at `t` the reply's own wake word? The sentence's peak score if
        `t` is in the play interval of a sentence that says it, else the reference's
        highest score near `t` if at or above the threshold; None: the user's."""
        c = self.config
        window = self._window(t - c.wake_before_s, t + c.wake_after_s)
        best_t, best = max(((ft, s) for ft, s, _ in window), key=lambda fs: fs[1],
                           default=(t, 0.0))
        if best >= c.wake_threshold:
            self.offsets.append(t - best_t)
        with self._lock:
            sentence = next((sc for sc in self._suppress if sc.says_wake and sc.interval
                             and sc.interval[0] <= t <= sc.interval[1]), None)
        if sentence is not None:
            return sentence.peak
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

    def batch(pcm: np.ndarray) -> np.ndarray:
        """The scores of a reset model fed `pcm` (int16, whole frames) frame by frame,
        exactly, with the embeddings (~all the time) in one batch: ~25 % faster."""
        n = len(pcm) // FRAME
        audio = pcm[: n * FRAME].astype(np.float32)
        with lock:
            model.reset()
            mels = [model._melspec(audio[max(0, i * FRAME - model.MEL_CONTEXT) : (i + 1) * FRAME])
                    for i in range(n)]  # one by one, as streaming (the mel model normalizes)
            rows = np.concatenate([model._mels, *mels])
            ends = np.cumsum([len(m) for m in mels]) + len(model._mels)
            windows = np.asarray([rows[e - model.MEL_WINDOW : e] for e in ends], np.float32)
            embeddings = model._embed.run(None, {"input_1": windows[..., None]})[0]
            features = np.concatenate([model._features, embeddings.reshape(-1, 96)])
            out = np.zeros(n, np.float32)
            for i in range(model.WARM_UP, n):
                window = features[i + 1 : i + 1 + model.features][None, :, :]
                out[i] = model._head.run(None, {model._head_input: window})[0].reshape(-1)[0]
            model.reset()
        return out

    score.batch = batch  # type: ignore[attr-defined]
    return score, reset
