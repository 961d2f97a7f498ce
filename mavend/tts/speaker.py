"""Spoken replies and earcons: the one way mavend makes sound.

    speaker = Speaker.from_settings(settings)
    speaker.load()                      # blocking: the voice, the earcons, the output device
    done = speaker.speak("It's 17:05.") # returns at once; a Future of the outcome
    speaker.earcon("wake")

Two threads, so a reply streams by sentence: `tts-synth` shapes the text for the ear
and synthesizes sentence after sentence; `tts-play` opens the output when the first
sentence is ready and plays each while the next is synthesized. Nothing here runs on
the event loop, and nothing blocks listening.

What can fail, and what happens (each is one log line; the turn completes):
- no output device: "no audio output device ... replies are notifications only",
  logged when it is first seen missing (again only after it came back and went);
- the device vanishes mid-reply: "the output device failed mid-reply", the rest of
  that reply is dropped;
- the voice model is missing or broken: `load()` logs it; replies are not spoken;
- text the voice cannot say (emoji, control characters, other scripts): dropped, one
  line naming what.

The "done" chime yields: when a reply's first sentence is ready while it plays, it fades
out (`FADE_S`) and the reply starts, instead of the reply waiting for the chime's end.

Barge-in: `interrupt()` (any thread) stops what is playing within one playback block
(`BLOCK_S`) and drops everything queued before it; the output stream is aborted, not
drained. With a `reference` (wakeword.echo.PlaybackReference) every sentence is
scored by it as it starts playing (`prepare`: a sentence that says the wake word, or
is not scored yet, cannot wake mavend while it plays), and every block played is
reported to it with the moment it will be heard, so the front end can tell mavend's own
voice from the user's.
That moment is re-anchored after the stream runs dry (between sentences, or when the
box is too busy to keep up: PortAudio reports the underflow on the next write).
"""

from __future__ import annotations

import enum
import logging
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from mavend.config import EarconSettings, Settings, TtsSettings
from mavend.errors import DeviceError, MavendError
from mavend.tts.earcons import Earcons
from mavend.tts.output import Output, find_output
from mavend.tts.text import Spoken, for_the_ear
from mavend.tts.voice import Voice

log = logging.getLogger(__name__)


class Outcome(enum.Enum):
    SPOKEN = "spoken"
    NOTHING_TO_SAY = "nothing_to_say"
    NO_DEVICE = "no_device"
    DEVICE_FAILED = "device_failed"
    NO_VOICE = "no_voice"  # the model is missing, or speech is off
    INTERRUPTED = "interrupted"  # barge-in: the wake word or "stop" cut it short


# Playback is written in blocks this long: an interrupt waits at most one block (plus
# the stream's abort), well inside the 300 ms barge-in budget.
BLOCK_S = 0.04
# A chime that gives way to a reply is written in blocks this long, in time (see
# `_reply_ready`), and fades out over FADE_S (a cut would click).
CHIME_BLOCK_S = 0.01
FADE_S = 0.01


@dataclass
class _Job:
    done: Future = field(default_factory=Future)
    failed: Outcome | None = None
    chunks: int = 0
    generation: int = 0  # `Speaker.interrupt()` drops jobs of older generations


@dataclass
class _Chunk:
    job: _Job
    audio: np.ndarray
    rate: int
    scan: Any = None  # the reference's wakeword.echo.Scan of it
    speech: bool = False  # a sentence of a reply (not an earcon)
    yields: bool = False  # an earcon that stops when a reply's sentence is waiting


@dataclass(frozen=True)
class _Sound:
    """An earcon to play; `yields`: it gives way to a reply that is ready."""

    audio: np.ndarray
    yields: bool = False


_END = object()


class Speaker:
    def __init__(self, tts: TtsSettings, earcons: EarconSettings, models_dir: Path | None = None):
        self.settings = tts
        self.earcon_settings = earcons
        self.models_dir = models_dir
        self.voice: Voice | None = None
        self.earcons: Earcons | None = None
        self._jobs: queue.Queue[Any] = queue.Queue()
        self._chunks: queue.Queue[Any] = queue.Queue()
        self._device_missing = False
        self._threads: list[threading.Thread] = []
        self.reference: Any = None  # a wakeword.echo.PlaybackReference, when listening
        self._generation = 0
        # (monotonic time interrupt() was called, time the stream was stopped), last one.
        self.last_interrupt: tuple[float, float] | None = None
        self._interrupted_at: float | None = None
        # (when the stream's first sample is heard, samples written since)
        self._clock: tuple[float, int] = (0.0, 0)
        self.underruns = 0  # re-anchored after PortAudio reported an underflow
        # A reply's sentence is synthesized and waits to play: the "done" chime yields.
        self._speech_waiting = threading.Event()
        self.chimes_cut = 0  # "done" chimes that gave way to a reply (benchmarks, tests)

    @classmethod
    def from_settings(cls, settings: Settings) -> Speaker:
        return cls(settings.tts, settings.earcons, settings.models.models_path())

    # setup ----------------------------------------------------------------
    def load(self) -> bool:
        """Load the voice and the earcons, look for the output; True if speech works.
        Never raises for a missing model or device: it logs one line and carries on."""
        if self.settings.enabled:
            try:
                from mavend.models import require

                self.voice = Voice.load(require(self.settings.voice, self.models_dir))
            except MavendError as exc:
                log.error("spoken replies are off: %s", exc)
        if self.earcon_settings.enabled:
            self.earcons = Earcons.load(self.earcon_settings)
        self.device_ready()
        self._start_threads()
        return self.voice is not None

    def device_ready(self) -> bool:
        """Is there an output device? Logs the change when it goes missing."""
        try:
            find_output(self.settings.device)
        except DeviceError as exc:
            if not self._device_missing:
                log.warning("%s: replies are shown as notifications only, not spoken", exc)
            self._device_missing = True
            return False
        if self._device_missing:
            log.info("an audio output device is back: replies are spoken again")
        self._device_missing = False
        return True

    def _start_threads(self) -> None:
        if self._threads:
            return
        for name, target in (("tts-synth", self._synth_loop), ("tts-play", self._play_loop)):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def close(self) -> None:
        """Stop after what is queued (threads are daemons: exit never waits on audio)."""
        if self._threads:
            self._jobs.put(None)

    # the public entry -----------------------------------------------------
    def speak(self, text: str, spoken: str = "") -> Future:
        """Say `spoken` if given (a handler's summary for the ear), else `text`. Returns
        a Future of the `Outcome`, resolved when the reply has been played."""
        job = _Job(generation=self._generation)
        if self.voice is None:
            job.done.set_result(Outcome.NO_VOICE)
            return job.done
        self._queue(job, spoken or text)
        return job.done

    def _queue(self, job: _Job, what: str | _Sound) -> None:
        if self.reference is not None:
            self.reference.expect()  # audible from now on, for the follow-up window
        self._jobs.put((job, what))

    @property
    def busy(self) -> bool:
        """Something is queued or playing."""
        return self.reference.active() if self.reference is not None else False

    def interrupt(self) -> bool:
        """Barge-in: stop playing now and drop everything queued so far. Safe from any
        thread and cheap (the audio thread calls it). True if something was playing."""
        self._generation += 1
        self._interrupted_at = time.monotonic()
        self._speech_waiting.clear()  # what was waiting is dropped
        return self.busy

    def earcon(self, which: str) -> Future:
        """Play the "wake" or "done" chime (queued behind any reply). The "done" chime
        says "I heard you": when the reply is ready while it plays, the reply says that
        better, so the chime fades out and the reply starts (it is not kept waiting)."""
        job = _Job(generation=self._generation)
        if self.earcons is None:
            job.done.set_result(Outcome.NO_VOICE)
            return job.done
        if which == "wake":
            self._queue(job, _Sound(self.earcons.wake))
        else:
            self._queue(job, _Sound(self.earcons.done, yields=True))
        return job.done

    def on_voice_event(self, event: Any) -> None:
        """The front end's events: a chime on the wake word and when listening ends."""
        kind = getattr(event, "kind", "")
        if kind == "wake":
            self.earcon("wake")
        elif kind in ("transcript", "no_speech", "dropped"):
            self.earcon("done")

    # threads ----------------------------------------------------------------
    def _synth_loop(self) -> None:
        while (item := self._jobs.get()) is not None:
            job, what = item
            try:
                self._synthesize(job, what)
            except Exception:  # a bug in one reply must not silence the next
                log.exception("speaking a reply failed")
                job.failed = job.failed or Outcome.NOTHING_TO_SAY
            self._chunks.put((_END, job))
        self._chunks.put(None)

    def _stale(self, job: _Job) -> bool:
        """An `interrupt()` came after this job was queued."""
        if job.generation < self._generation:
            job.failed = job.failed or Outcome.INTERRUPTED
        return job.failed is not None

    def _synthesize(self, job: _Job, what: str | _Sound) -> None:
        if self._stale(job):
            return
        if not self.device_ready():
            job.failed = Outcome.NO_DEVICE
            return
        volume = float(self.settings.volume)
        if isinstance(what, _Sound):  # an earcon
            assert self.earcons is not None
            chunk = _Chunk(job, what.audio * volume, self.earcons.rate, yields=what.yields)
            self._put(chunk, "", first=True)
            return
        shaped = self._shape(what)
        assert self.voice is not None
        first = True
        for sentence in shaped.sentences:
            if self._stale(job):  # interrupted, or the device went away
                return
            audio = self.voice.synthesize(sentence)
            if audio.size:
                chunk = _Chunk(job, audio * volume, self.voice.sample_rate, speech=True)
                # Before the put: the player clears it as it takes the chunk, so it is
                # never left set with nothing waiting.
                self._speech_waiting.set()
                self._put(chunk, sentence, first=first)
                first = False

    def _put(self, chunk: _Chunk, text: str, *, first: bool) -> None:
        """Queue a sentence for playback, then have the reference score it (does it say
        the wake word?) in this thread: playback never waits on the wake model, and the
        sentence counts as saying it until scored."""
        reference = self.reference
        if reference is None or not hasattr(reference, "prepare"):
            self._chunks.put(chunk)
            return
        if not chunk.speech and hasattr(reference, "known"):  # an earcon: our own tones
            chunk.scan = reference.known(chunk.audio, chunk.rate)
            self._chunks.put(chunk)
            return
        chunk.scan = reference.pending_scan()
        self._chunks.put(chunk)
        try:
            reference.prepare(chunk.audio, chunk.rate, text, first=first, into=chunk.scan)
        except Exception:  # left pending: its wakes stay suppressed; the reply plays on
            log.exception("scoring a sentence for the wake word failed")

    def _shape(self, text: str) -> Spoken:
        shaped = for_the_ear(text, max_sentences=self.settings.max_sentences)
        notes = list(shaped.dropped)
        if shaped.cut:
            notes.append(f"cut to {len(shaped.sentences)} sentences")
        if notes:
            log.info("spoken reply: %s (%d characters in, %d said)",
                     "; ".join(f"dropped {n}" if not n.startswith("cut") else n for n in notes),
                     len(text), len(shaped.text))
        return shaped

    def _play_loop(self) -> None:
        output: Output | None = None
        while (item := self._chunks.get()) is not None:
            if isinstance(item, tuple):  # (_END, job): the job's last chunk was queued
                job = item[1]
                if output is not None and job.generation < self._generation:
                    self._cut(output)
                    output = None
                elif output is not None and self._chunks.empty():
                    output.close()
                    output = None
                self._finish(job)
                continue
            output = self._play(item, output)
            if output is not None and item.job.generation < self._generation:
                self._cut(output)
                output = None
        if output is not None:
            output.close(drain=False)

    def _play(self, chunk: _Chunk, output: Output | None) -> Output | None:
        job = chunk.job
        if chunk.speech:
            self._speech_waiting.clear()  # (set again when the next one is ready)
        if self._stale(job):
            return output
        try:
            if output is None:
                output = Output(self.settings.device, chunk.rate)
                self._clock = (time.monotonic() + output.latency, 0)
            block = max(1, int((CHIME_BLOCK_S if chunk.yields else BLOCK_S) * chunk.rate))
            for i in range(0, len(chunk.audio), block):
                if self._stale(job):
                    break  # interrupt(): `_cut` aborts the stream right after
                if chunk.yields and self._reply_ready(output, chunk.rate, block):
                    self._fade_out(output, chunk, i)
                    break
                self._write(output, chunk, i, block)
            job.chunks += 1
            return output
        except DeviceError as exc:
            what = "mid-reply" if job.chunks else "at the start of a reply"
            log.warning("%s %s; the rest of this reply is not spoken", exc, what)
            job.failed = Outcome.DEVICE_FAILED
            if output is not None:
                output.close(drain=False)
            return None

    def _write(self, output: Output, chunk: _Chunk, offset: int, block: int) -> None:
        """Write one block; tell the reference when it will be heard."""
        audio, rate = chunk.audio[offset : offset + block], chunk.rate
        start, written = self._clock
        now = time.monotonic()
        heard_at = start + written / rate
        if heard_at < now + output.latency - 0.02:
            # The stream ran dry (synthesis was slower): it restarts from now.
            start, written = now + output.latency, 0
            heard_at = start
        if output.write(audio, rate) and heard_at > now + output.latency:
            # PortAudio inserted silence since the last write (the box was too busy
            # to write in time) although the count said otherwise: re-anchor.
            self.underruns += 1
            start, written = now + output.latency, 0
            heard_at = start
        self._clock = (start, written + len(audio))
        if self.reference is not None:
            if chunk.scan is not None:
                self.reference.played(audio, rate, heard_at, chunk.scan, offset)
            else:
                self.reference.played(audio, rate, heard_at)

    def _reply_ready(self, output: Output, rate: int, block: int) -> bool:
        """Is a reply's sentence waiting? Checked before each block of a yielding chime,
        which is written in time rather than ahead (PortAudio and the sound server would
        take all of it at once, and the reply could only start after all of it): at most
        one block is queued beyond the output's latency, so the reply starts within
        about a block and the fade of being ready."""
        start, written = self._clock  # (samples at the chunk's rate, as `_write` counts)
        ahead = start + (written - block) / rate - time.monotonic() - output.latency
        if ahead > 0:
            self._speech_waiting.wait(ahead)
        return self._speech_waiting.is_set()

    def _fade_out(self, output: Output, chunk: _Chunk, offset: int) -> None:
        """End a yielding chime at `offset` with a short fade, for the reply after it."""
        end = min(len(chunk.audio), offset + max(1, int(FADE_S * chunk.rate)))
        faded = chunk.audio[:end].copy()
        faded[offset:] *= np.linspace(1.0, 0.0, end - offset, dtype=np.float32)
        self._write(output, replace(chunk, audio=faded), offset, end - offset)
        self.chimes_cut += 1
        log.debug("the done chime gave way to the reply after %.0f ms",
                  offset / chunk.rate * 1000)

    def _cut(self, output: Output) -> None:
        """After an `interrupt()`: abort the stream (what it buffered is dropped)."""
        requested, self._interrupted_at = self._interrupted_at, None
        output.close(drain=False)
        stopped = time.monotonic()
        if requested is not None:
            self.last_interrupt = (requested, stopped)
            log.info("barge-in: playback stopped %.0f ms after the interrupt",
                     (stopped - requested) * 1000)
        if self.reference is not None:
            self.reference.stopped(stopped)

    def _finish(self, job: _Job) -> None:
        self._stale(job)
        outcome = job.failed or (Outcome.SPOKEN if job.chunks else Outcome.NOTHING_TO_SAY)
        if self.reference is not None:
            self.reference.finished()
        if not job.done.done():
            job.done.set_result(outcome)
