"""An utterance being captured, and the speech-to-text thread that transcribes it.

The front end's audio thread fills an `Utterance` and hands `SttJob`s to the
`Transcriber`; the transcriber speculates at pauses, ends a whole command early
(`Whole.CLOSED` after the short pause, `Whole.FILLED` after the settled one), and
sends the `Transcript` (or `Dropped`, `Partial`) to the sink.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from wakeword.endpoint import Endpointer
from wakeword.events import Dropped, Event, EventSink, Partial, Timings, Transcript, Wake
from wakeword.sinks import Whole
from wakeword.stt import SpeechToText, SttResult, command_text, guard

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SpeechMark:
    """Where the command's speech was, and when (wall clock) it ended."""

    speech_start_t: float
    speech_end_t: float
    eos_monotonic: float
    speech_s: float


@dataclass
class Utterance:
    id: int
    wake: Wake | None
    start_index: int  # absolute sample index of audio[0]
    trim_index: int  # where speech-to-text starts (speech in the pre-roll, minus a lead-in)
    endpointer: Endpointer
    audio: list[np.ndarray] = field(default_factory=list)
    vad_index: int = 0  # absolute sample index of the next VAD window
    fed_index: int = 0  # absolute sample index up to which `audio` reaches
    capturing: bool = True
    echo_gated: bool = False  # some of its speech was taken for mavend's own echo
    muted: list[tuple[int, int]] = field(default_factory=list)  # echo windows (absolute)
    done: threading.Event = field(default_factory=threading.Event)
    # Shared with the speech-to-text thread (simple values: atomic under the GIL).
    segment_now: int = 0
    spec: tuple[int, SttResult, SpeechMark] | None = None
    quiet_segment: int = -1
    settled_segment: int = -1
    partial_segment: int = -1

    def samples(self) -> np.ndarray:
        """The audio to transcribe: from the speech found in the pre-roll to now.

        The wake phrase stays in: Whisper transcribes a command better with it
        (bench/wakeword_stt.py: 77 % of stage-0 commands routed right with it,
        60 % with it cut out) and the phrase is stripped from the text afterwards.
        """
        audio = np.concatenate(self.audio) if self.audio else np.zeros(0, np.int16)
        if self.muted:
            # Whisper hears the user, not mavend's echo around them (half-duplex).
            audio = audio.copy()
            for start, end in self.muted:
                audio[max(0, start - self.start_index) : max(0, end - self.start_index)] = 0
        return audio[max(0, self.trim_index - self.start_index) :]


@dataclass(frozen=True)
class SttJob:
    kind: str  # speculate, quiet, settled, final
    utt: Utterance
    segment: int
    speech: SpeechMark
    audio: np.ndarray | None = None
    reason: str = ""


class Transcriber:
    """The speech-to-text thread: jobs in, transcripts (or drops) out to the sink."""

    def __init__(
        self,
        stt: SpeechToText,
        sink: EventSink,
        wake_words: Sequence[str],
        is_complete: Callable[[str], Whole] | None,
        *,
        keep_audio: bool = False,
    ):
        self.stt = stt
        self.keep_audio = keep_audio
        self.sink = sink
        self.wake_words = wake_words
        self.is_complete = is_complete
        self._jobs: queue.Queue[SttJob | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    @property
    def speculates(self) -> bool:
        return self.is_complete is not None

    def ensure_started(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="wakeword-stt", daemon=True)
            self._thread.start()

    def submit(self, job: SttJob) -> None:
        self._jobs.put(job)

    def wait_idle(self) -> None:
        self._jobs.join()

    def close(self) -> None:
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join(10)
            self._thread = None

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                self._handle(job)
            except Exception as exc:  # one bad utterance must not stop the listener
                log.exception("speech-to-text failed")
                if job is not None and not job.utt.done.is_set():
                    self.sink(Dropped("", f"speech-to-text failed: {exc}", 0.0))
                    job.utt.done.set()
            finally:
                self._jobs.task_done()

    def _handle(self, job: SttJob) -> None:
        utt = job.utt
        if utt.done.is_set():
            return
        if job.kind == "speculate":
            if job.segment < utt.segment_now:
                return  # speech went on before we got to it
            result = self.stt.transcribe(job.audio)
            utt.spec = (job.segment, result, job.speech)
            log.debug("speculative transcript (segment %d): %r", job.segment, result.text)
            if utt.quiet_segment == job.segment:
                self._try_early(utt)
        elif job.kind in ("quiet", "settled"):
            if job.kind == "quiet":
                utt.quiet_segment = job.segment
            else:
                utt.settled_segment = job.segment
            if utt.spec is not None and utt.spec[0] == job.segment:
                self._try_early(utt)
        else:
            if utt.spec is not None and utt.spec[0] == job.segment:
                # Nothing but silence since the speculative transcript: reuse it.
                _, result, mark = utt.spec
            else:
                result, mark = self.stt.transcribe(job.audio), job.speech
            self._finish(utt, result, mark, job.reason)

    def _try_early(self, utt: Utterance) -> None:
        assert utt.spec is not None and self.is_complete is not None
        segment, result, mark = utt.spec
        text = self._command(utt, result.text)
        whole = self.is_complete(text)
        if whole is Whole.CLOSED:
            self._finish(utt, result, mark, "grammar")
        elif whole is Whole.FILLED and utt.settled_segment == segment:
            self._finish(utt, result, mark, "slots")
        elif text and utt.partial_segment != segment:
            # Not a closed command: the silence tail must pass. Say what we have,
            # so the consumer can start routing (an LLM call) meanwhile.
            utt.partial_segment = segment
            t = mark.speech_end_t + (time.monotonic() - mark.eos_monotonic)
            self.sink(Partial(utt.id, text, result.text, round(t, 3)))

    def _command(self, utt: Utterance, heard: str) -> str:
        return command_text(heard, self.wake_words, woken=utt.wake is not None)

    def _finish(self, utt: Utterance, result: SttResult, mark: SpeechMark, reason: str) -> None:
        now = time.monotonic()
        t_ready = mark.speech_end_t + (now - mark.eos_monotonic)
        text = self._command(utt, result.text)
        verdict = guard(result, mark.speech_s, text)
        if not verdict.keep:
            log.info("dropped %r: %s", result.text, verdict.reason)
            event: Event = Dropped(result.text, verdict.reason, round(t_ready, 3))
        else:
            event = Transcript(
                text=text,
                heard=result.text,
                confidence=round(result.confidence, 4),
                timings=Timings(
                    wake_detected=utt.wake.t if utt.wake else None,
                    speech_start=round(mark.speech_start_t, 3),
                    speech_end=round(mark.speech_end_t, 3),
                    transcript_ready=round(t_ready, 3),
                ),
                endpoint=reason,
                speech_end_monotonic=mark.eos_monotonic,
                stt=result.to_json(),
                utterance=utt.id,
                audio=utt.samples() if self.keep_audio else None,
            )
            log.info("transcript (%s, %.0f ms after speech): %r", reason,
                     (now - mark.eos_monotonic) * 1000, text)
        utt.done.set()
        self.sink(event)
