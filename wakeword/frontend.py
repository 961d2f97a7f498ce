"""The front end: audio in, `Event`s out (wake, transcript, ...), to one sink.

Threads and hand-offs:

    source (PortAudio callback -> queue, or a file)
      -> audio thread: DC blocker, 80 ms frames, wake word, pre-roll ring,
         VAD + endpointer while an utterance is open       --Job-->  queue
      -> speech-to-text thread (`wakeword.transcriber`): Whisper, hallucination
         guard, wake-phrase strip
      -> sink(event)   (a thread-safe callable: a queue, or asyncio's
                        call_soon_threadsafe; `asyncio_sink` builds one)

Neither thread ever waits on the consumer, and the consumer (the daemon's event
loop) never runs inference. The sink is the one interface: in the daemon it
feeds an asyncio queue; as its own process (`mavend listen --json`) it writes
JSON lines that `wakeword.events.read_events` turns back into the same events.

Grammar-aware endpointing: at the first short pause (~100 ms) after speech the
audio so far is transcribed speculatively. If, once 300 ms of silence have
passed, that partial transcript is already a complete stage-0 command (one the
grammar matches and that does not accept more words), the utterance ends there
instead of after the full silence tail. Otherwise it is sent as a `Partial`
(the consumer can start routing it while the silence tail passes), and reused
as the transcript when the tail ends with no new speech, so the common case
pays no speech-to-text time after the endpoint. A recording (a source that is not
live) waits for each transcription before its next chunk, so where it is cut does not
depend on how busy the CPU is; a microphone cannot wait and does not.

While mavend speaks (`echo`, a `wakeword.echo.PlaybackReference` fed by the speaker),
the wake detector keeps running: a wake during a sentence that says the wake word (the
reference scores each as it starts playing) is ignored; any other is a barge-in, at a
lower threshold (`on_barge_in` stops playback at once, and the utterance starts at the
wake, not in the pre-roll full of the reply). A follow-up window waits until mavend is
silent, and a turn opened without the wake word counts only speech louder than the
reply's echo.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mavend.config import Settings
from wakeword.audio import RATE, DcBlocker, Framer, RingBuffer, rms_dbfs
from wakeword.detector import FRAME, TriggerConfig, WakeModel, WakeTrigger
from wakeword.echo import PlaybackReference
from wakeword.endpoint import EndpointConfig, Endpointer, Step
from wakeword.events import DeviceState, EventSink, NoSpeech, SourceEnded, Wake
from wakeword.sinks import (  # noqa: F401  (re-exported)
    EventQueue,
    Whole,
    asyncio_sink,
    command_checker,
)
from wakeword.sources import AudioSource
from wakeword.stt import SpeechToText
from wakeword.transcriber import SpeechMark, SttJob, Transcriber, Utterance
from wakeword.vad import WINDOW, SileroVad
from wakeword.verifier import MicroVerifier

log = logging.getLogger(__name__)

# Keep this much audio before the speech the VAD found in the pre-roll: the
# VAD is a little late on soft onsets ("h" of "hey").
LEAD_IN_S = 0.25
# A follow-up turn (no wake word) keeps this much audio from before it opened.
FOLLOW_UP_LEAD_S = 0.3


class FrontEnd:
    """Wake word -> endpointing -> speech-to-text, on any `AudioSource`."""

    def __init__(
        self,
        *,
        wake: WakeModel,
        vad: SileroVad,
        stt: SpeechToText,
        sink: EventSink,
        trigger: TriggerConfig | None = None,
        endpoint: EndpointConfig | None = None,
        preroll_s: float = 1.5,
        wake_words: Sequence[str] = ("hey jarvis", "jarvis"),
        is_complete: Callable[[str], Whole] | None = None,
        keep_audio: bool = False,
        verifier: MicroVerifier | None = None,
    ):
        self.wake = wake
        # A second model that must hear the wake word too (wakeword/verifier.py); the
        # trigger should then wait `CONFIRM_S` (TriggerConfig.confirm_s) before firing.
        self.verifier = verifier
        self.verifier_rejects = 0  # wakes the verifier turned down (benchmarks)
        self.vad = vad
        self.sink = sink
        self.trigger = WakeTrigger(trigger or TriggerConfig())
        self.endpoint = endpoint or EndpointConfig()
        self.preroll = int(preroll_s * RATE)
        self.wake_words = tuple(wake_words)
        self._stop = threading.Event()
        self._follow_up = threading.Event()
        # How long a follow-up turn waits for speech (None: the endpoint's no-speech timeout).
        self._follow_up_s: float | None = None
        self._thread: threading.Thread | None = None
        self._ids = itertools.count(1)
        # keep_audio: each Transcript carries its utterance's audio (who is speaking).
        self._transcriber = Transcriber(
            stt, sink, self.wake_words, is_complete, keep_audio=keep_audio
        )
        # Mavend's own playback, and what stops it (set by the voice service).
        self.echo: PlaybackReference | None = None
        self.on_barge_in: Callable[[], object] | None = None
        self.own_wakes = 0  # wakes ignored as the reply's own wake word (benchmarks)
        self.barge_ins = 0
        self._lockstep = False  # set per source by `run`
        self._reset()

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        sink: EventSink,
        grammar=None,
        slots_filled: Callable[[str], bool] | None = None,
        keep_audio: bool = False,
        **stt_options,
    ) -> FrontEnd:
        """The real models, from the model cache (never downloaded here).

        `grammar` (the router's stage-0 `CommandGrammar`) gives speech-to-text
        its vocabulary and enables grammar-aware endpointing; `slots_filled` (the
        router's `slots_filled`) lets a command with its slots filled end early too.
        """
        from mavend.models import require
        from wakeword.detector import EnergyGate, resolve_wake_model

        models_dir = settings.models.models_path()
        vocabulary = grammar.vocabulary() if grammar is not None else []
        early = grammar is not None and settings.endpoint.grammar_early_stop
        wake_settings = settings.wakeword
        gate = EnergyGate(wake_settings.energy_gate_db) if wake_settings.energy_gate else None
        verifier = None
        if wake_settings.verifier == "micro":
            verifier = MicroVerifier.from_models(models_dir)  # missing: says to pull it
        stt_options.setdefault("window", settings.stt.encoder_window)
        if settings.stt.backend == "wyoming":  # a server elsewhere: mavend/wyoming/asr.py
            from mavend.wyoming.asr import WyomingTranscriber

            stt: Any = WyomingTranscriber.from_settings(settings.stt)
        else:
            stt = SpeechToText.from_settings(
                settings.stt,
                models_dir,
                wake_words=settings.router.wake_words,
                vocabulary=vocabulary,
                **stt_options,
            )
        return cls(
            wake=WakeModel(resolve_wake_model(wake_settings.model, models_dir), gate=gate),
            vad=SileroVad(require("silero-vad", models_dir)),
            stt=stt,
            sink=sink,
            trigger=TriggerConfig.from_settings(settings.wakeword),
            endpoint=EndpointConfig.from_settings(settings.endpoint),
            preroll_s=settings.wakeword.preroll_s,
            wake_words=settings.router.wake_words,
            is_complete=command_checker(grammar, slots_filled) if early else None,
            keep_audio=keep_audio,
            verifier=verifier,
        )

    # control -------------------------------------------------------------------
    def run(self, source: AudioSource) -> None:
        """Listen to `source` until it ends (or `stop()`); every utterance in it is
        finished and its events sent before this returns. Blocks the caller."""
        self._transcriber.ensure_started()
        self._reset()
        # A recording is heard the same on any box: its audio waits for each
        # transcription (see `_step`). A microphone cannot wait, so it does not.
        self._lockstep = not source.live
        try:
            for chunk in source.chunks(self._stop):
                self._chunk(chunk.samples, chunk.arrival)
            self._end_of_stream()
        finally:
            self._transcriber.wait_idle()
        self.sink(SourceEnded(source.name))

    def start(self, source: AudioSource) -> threading.Thread:
        """Listen in a background thread (the daemon's way); `stop()` ends it."""
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run_guarded, args=(source,), name="wakeword-audio", daemon=True
        )
        self._thread.start()
        return self._thread

    def _run_guarded(self, source: AudioSource) -> None:
        try:
            self.run(source)
        except Exception as exc:  # tell the consumer instead of dying silently
            log.exception("the audio front end stopped")
            self.sink(DeviceState("failed", source.name, f"{type(exc).__name__}: {exc}"))

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def close(self) -> None:
        self.stop()
        self._transcriber.close()

    def __enter__(self) -> FrontEnd:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def listen_now(self, window_s: float | None = None) -> None:
        """Open a turn without the wake word (a follow-up: "yes" to a confirmation).

        `window_s`: the turn ends as no speech if none starts within it (None: the
        endpoint's `no_speech_timeout_s`, as after a wake word)."""
        self._follow_up_s = window_s
        self._follow_up.set()

    @property
    def in_follow_up(self) -> bool:
        """A turn without the wake word is open (waiting for, or hearing, an answer)."""
        utt = self._utt
        return utt is not None and utt.wake is None and not utt.done.is_set()

    # the audio thread ------------------------------------------------------------
    def _reset(self) -> None:
        # The pre-roll, plus a frame and a chunk: a wake fires at the end of a
        # frame, and the rest of that chunk is already in.
        self._ring = RingBuffer(max(self.preroll, FRAME) + 2 * FRAME + RATE)
        self._framer = Framer(FRAME)
        self._dc = DcBlocker()
        self._received = 0  # samples received (the audio clock)
        self._index = 0  # samples through the framer (end of the last frame)
        self._clock = (0.0, time.monotonic())  # (audio t, monotonic) of the latest chunk end
        self._pace: tuple[float, float] | None = None
        self._utt: Utterance | None = None
        self.wake.reset()
        self.vad.reset()
        self.trigger.reset()

    def _chunk(self, samples: np.ndarray, arrival: float | None) -> None:
        samples = self._dc(samples)
        self._ring.append(samples)
        self._received += len(samples)
        t_end = self._received / RATE
        self._clock = (t_end, arrival if arrival is not None else self._paced(t_end))
        for frame in self._framer.push(samples):
            self._frame(frame)  # the wake word, in whole 80 ms frames
        utt = self._utt
        if utt is not None and utt.capturing and not utt.done.is_set():
            # Endpointing follows every chunk, not every 80 ms frame: with
            # smaller blocks (audio.block_ms) the end is noticed sooner.
            new = samples[max(0, len(samples) - (self._received - utt.fed_index)) :]
            utt.fed_index = self._received
            if len(new):
                utt.audio.append(new)
                self._endpoint(utt, new)

    def _paced(self, t_end: float) -> float:
        """The arrival time of a chunk of a non-live source.

        Between a wake and its transcript, a file is fed at real-time pace, so
        the endpointing silence really passes and latencies are what a
        microphone would see; elsewhere it is read as fast as the CPU allows.
        """
        now = time.monotonic()
        if self._utt is None:
            self._pace = None
            return now
        if self._pace is None:
            self._pace = (t_end, now)
            return now
        due = self._pace[1] + (t_end - self._pace[0])
        if due > now:
            self._stop.wait(due - now)
        # A chunk read late (the feed waited for a transcription) still "arrived"
        # when a microphone would have delivered it: latencies keep the wait.
        return due

    def _monotonic_at(self, t: float) -> float:
        t_ref, wall_ref = self._clock
        return wall_ref - (t_ref - t)

    def _frame(self, frame: np.ndarray) -> None:
        self._index += FRAME
        t = self._index / RATE
        score = self.wake.score(frame)  # always: keeps the model's feature buffers current
        utt = self._utt
        if utt is not None and utt.done.is_set():
            self._close_utterance()
            utt = None
        if utt is not None:
            return
        if self.trigger.gated:
            self.trigger.vad(self.vad.push(frame))
        if self._follow_up.is_set() and not self._speaking(self._monotonic_at(t)):
            # The window opens once the reply (and its earcon) is over, not while
            # mavend is still asking: it would hear its own question as the answer.
            self._follow_up.clear()
            self._open(None, t)
        elif self.trigger.update(score, t, self._barge_in_bar(t)):
            self._wake(score, t)

    def _speaking(self, at: float) -> bool:
        return self.echo is not None and self.echo.active(at)

    def _barge_in_bar(self, t: float) -> float | None:
        """Over mavend's voice the user's wake word scores lower: a lower threshold
        then (the reply's own wake word is suppressed whatever it scores)."""
        echo = self.echo
        if echo is None or not echo.active(self._monotonic_at(t)):
            return None
        return min(self.trigger.config.threshold, echo.config.barge_in_threshold)

    def _wake(self, score: float, t: float) -> None:
        now = t  # this frame's end; with confirm_s the crossing was that much earlier
        if self.trigger.crossed is not None:
            score, t = self.trigger.crossed
        at = self._monotonic_at(t)
        echo = self.echo
        own = echo.own_wake(at) if echo is not None else None
        if own is not None:
            self.own_wakes += 1
            log.info("ignored a wake word at %.2f s (score %.3f): mavend's own reply said "
                     "it (reference score %.3f)", t, score, own)
            return
        barge_in = self._speaking(at)
        if self.verifier is not None and not barge_in:
            # Not over mavend's own voice: the echo in the mix was never measured with
            # the verifier, and a missed barge-in cannot be said again over the reply.
            held = self._ring.since(self._index - round(self.verifier.window_s * RATE))
            verdict = self.verifier.check(held[: len(held) - (self._received - self._index)])
            if not verdict.accepted:
                self.verifier_rejects += 1
                log.info("wake word at %.2f s (score %.3f) turned down by the verifier "
                         "(%.3f, %.1f ms)", t, score, verdict.score, verdict.ms)
                return
            log.debug("verifier: %.3f in %.1f ms", verdict.score, verdict.ms)
        if barge_in:
            detected = time.monotonic()
            if self.on_barge_in is not None:
                self.on_barge_in()  # returns at once; playback stops within a block
            self.barge_ins += 1
            log.info("barge-in: wake word over mavend's own voice (%.0f ms after the frame)",
                     (detected - at) * 1000)
        wake = Wake(self.wake.name, round(score, 4), round(t, 3))
        log.info("wake word %s (score %.3f) at %.2f s", wake.model, score, t)
        self.sink(wake)
        self._open(wake, now, barge_in=barge_in)

    def _endpoint(self, utt: Utterance, samples: np.ndarray) -> None:
        for prob in self.vad.push(samples):
            utt.vad_index += WINDOW
            if utt.wake is None and prob > 0 and self._is_echo(utt.vad_index):
                # Half-duplex: in a turn opened without the wake word, mavend's own
                # voice is not speech; only a voice louder than its echo is.
                prob = 0.0
                utt.echo_gated = True
                utt.muted.append((utt.vad_index - WINDOW, utt.vad_index))
            step = utt.endpointer.update(prob, utt.vad_index / RATE)
            if step is Step.ONSET and utt.echo_gated:
                # Transcribe from the user's onset, not from the echo before it.
                utt.trim_index = max(utt.trim_index, utt.vad_index - int(LEAD_IN_S * RATE))
            self._step(utt, step)
            if not utt.capturing or utt.done.is_set():
                return

    def _is_echo(self, end_index: int) -> bool:
        echo = self.echo
        if echo is None:
            return False
        at = self._monotonic_at(end_index / RATE)
        if not echo.active(at):
            return False
        return echo.explains(rms_dbfs(self._ring.since(end_index - WINDOW)[:WINDOW]), at)

    def _open(self, wake: Wake | None, t: float, *, barge_in: bool = False) -> None:
        lead = self.preroll if wake is not None else int(FOLLOW_UP_LEAD_S * RATE)
        start = max(self._ring.oldest, self._index - lead)
        pre = self._ring.since(start)  # up to the end of the current chunk
        # Run the VAD over the pre-roll: it warms the VAD's state and finds where
        # the wake word's speech began, so silence before it is not transcribed.
        self.vad.reset()
        probs = self.vad.push(pre)
        first = next(
            (i for i, p in enumerate(probs) if p >= self.endpoint.vad_threshold), None
        )
        lead_in = int(LEAD_IN_S * RATE)
        trim = start if first is None else max(start, start + first * WINDOW - lead_in)
        if barge_in:
            # The pre-roll is full of mavend's own reply: start at the wake word's end.
            trim = max(trim, self._index)
        self.trigger.hold(True)
        self._utt = Utterance(
            id=next(self._ids),
            wake=wake,
            start_index=start,
            trim_index=trim,
            endpointer=Endpointer(self._endpoint_for(wake), t),
            audio=[pre],
            vad_index=start + len(probs) * WINDOW,
            fed_index=self._received,
        )

    def _endpoint_for(self, wake: Wake | None) -> EndpointConfig:
        window = self._follow_up_s if wake is None else None
        if window is None:
            return self.endpoint
        return dataclasses.replace(self.endpoint, no_speech_timeout_s=window)

    def _step(self, utt: Utterance, step: Step) -> None:
        ep = utt.endpointer
        utt.segment_now = ep.segment
        if step is Step.NONE or step is Step.ONSET:
            return
        if step is Step.NO_SPEECH:
            utt.capturing = False
            log.info("no speech after the wake word")
            self.sink(NoSpeech(utt.wake.t if utt.wake else None, round(utt.vad_index / RATE, 3)))
            utt.done.set()
            return
        mark = SpeechMark(
            speech_start_t=ep.speech_start_t or 0.0,
            speech_end_t=ep.speech_end_t or 0.0,
            eos_monotonic=self._monotonic_at(ep.speech_end_t or 0.0),
            speech_s=ep.speech_s,
        )
        if step is Step.PAUSED and self._transcriber.speculates:
            self._transcriber.submit(SttJob("speculate", utt, ep.segment, mark, utt.samples()))
        elif step is Step.QUIET and self._transcriber.speculates:
            self._transcriber.submit(SttJob("quiet", utt, ep.segment, mark))
        elif step is Step.SETTLED and self._transcriber.speculates:
            self._transcriber.submit(SttJob("settled", utt, ep.segment, mark))
        elif step is Step.END:
            utt.capturing = False
            log.debug("end of utterance (%s) at %.2f s", ep.ended, utt.vad_index / RATE)
            self._transcriber.submit(
                SttJob("final", utt, ep.segment, mark, utt.samples(), reason=ep.ended)
            )
        else:
            return
        if self._lockstep:
            # Where a recording is cut, and whether a speculative transcript is in
            # time to end a command early, must not depend on how busy the CPU is:
            # a loaded box used to let the file run on past a pause the transcriber
            # had not reached, and heard a different utterance.
            self._transcriber.wait_idle()

    def _close_utterance(self) -> None:
        self._utt = None
        self.trigger.hold(False)

    def _end_of_stream(self) -> None:
        utt = self._utt
        if utt is not None and utt.capturing and not utt.done.is_set():
            self._step(utt, utt.endpointer.finish("end_of_stream"))
