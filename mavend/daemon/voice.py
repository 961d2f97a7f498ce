"""The daemon's voice service: the microphone, through the audio front end, to turns.

    MicrophoneSource -> FrontEnd (threads) --asyncio_sink--> events queue
      -> this task: Wake (logged), Partial (routing starts early),
         Transcript -> `on_transcript` (the daemon runs the turn),
         DeviceState / NoSpeech / Dropped (logged)

The front end's threads do the audio and the inference; this task only moves
events. A `Partial` starts routing in the router's worker thread while the
endpointing silence passes (`PrefetchingRouter`); the turn that follows reuses
that decision when the final transcript says the same.

Barge-in (with a `speaker`, `attach_speaker`): the speaker reports what it plays to a
`wakeword.echo.PlaybackReference` that the front end reads; the wake word over a reply
stops it (the front end calls `Speaker.interrupt` from its audio thread), the reply's
own "hey jarvis" does not wake it, and "stop" / "cancel" / "quiet" / "shut up" as
the first word of a follow-up turn stops playback and is not routed. A turn opened
without the wake word whose speech overlapped mavend's own voice is not routed either
(half-duplex): mavend never answers itself.

What can fail, and what happens:
- no microphone: one clear error (pointing at `mavend doctor`), then the
  service retries with backoff; everything else in the daemon keeps running;
- a missing model: one clear error (pointing at `mavend models pull`); the
  service stops, the rest of the daemon keeps running;
- the device vanishes mid-run: `MicrophoneSource` reconnects with backoff;
- the front end's thread dies: restarted with backoff, and logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import re
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any

from mavend.config import Settings
from mavend.errors import DeviceError, MavendError
from mavend.workers import started_pool

log = logging.getLogger("mavend.voice")  # the name its journal lines have always had

# Retrying a missing microphone: 2 s, 4 s, ... at most a minute apart.
RETRY_FIRST_S = 2.0
RETRY_MAX_S = 60.0

# The first words of a follow-up turn that only mean "be quiet".
_STOP = re.compile(r"^\W*(?:stop|cancel|quiet|shut up)\b", re.IGNORECASE)


def is_stop(text: str) -> bool:
    """"stop", "Cancel.", "quiet please", "shut up!": a barge-in, not a command."""
    return bool(_STOP.match(text))


class VoiceState(enum.Enum):
    OFF = "off"
    LOADING = "loading"
    WAITING_FOR_DEVICE = "waiting_for_device"
    LISTENING = "listening"
    PAUSED = "paused"
    FAILED = "failed"


class PrefetchingRouter:
    """The router, able to start a decision before the turn asks for it.

    `prefetch(text)` routes in the router's one worker thread; a later
    `route(text)` with the same text (and no extra arguments) takes that
    result instead of routing again. Every call into the real router goes
    through one lock: the LLM is not shared between threads. Anything else
    (`grammar`, `classifier`, `warm_up`, ...) is the real router's.
    """

    def __init__(self, router: Any, context_for: Callable[[Any, str], str] | None = None):
        self.inner = router
        # The LLM context (memory's recall block) the turn will route `text` with.
        self.context_for = context_for
        self._lock = threading.Lock()
        self._pool = started_pool(1, "mavend-prefetch")
        self._early: tuple[str, str, Future] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def prefetch(self, text: str) -> None:
        text = text.strip()
        if text:
            self._early = (text, "?", self._pool.submit(self._prefetched, text))

    def _prefetched(self, text: str) -> Any:
        started = time.monotonic()
        context = self.context_for(self.inner, text) if self.context_for else ""
        decision = self._route(text, context=context) if context else self._route(text)
        log.debug("routed the partial transcript %r in %.0f ms", text,
                  (time.monotonic() - started) * 1000)
        return context, decision

    def remember(self, text: str, decision: Any, context: str = "") -> None:
        """The next `route(text)` returns `decision` (made elsewhere) without routing."""
        done: Future = Future()
        done.set_result((context, decision))
        self._early = (text.strip(), context, done)

    def route(self, text: str, *, context: str = "") -> Any:
        early, self._early = self._early, None
        if early is not None and early[0] == text.strip():
            try:
                started = time.monotonic()
                used, decision = early[2].result()
                if used == context:
                    log.debug("the partial transcript's decision is used (waited %.0f ms)",
                              (time.monotonic() - started) * 1000)
                    return decision
                log.debug("the partial transcript was routed with another context")
            except Exception as exc:  # route again below: the error is raised there
                log.debug("the prefetched decision failed: %s", exc)
        elif early is not None:
            log.debug("the partial transcript %r is not the final one", early[0])
        return self._route(text, context=context) if context else self._route(text)

    def _route(self, text: str, **kwargs: Any) -> Any:
        with self._lock:
            return self.inner.route(text, **kwargs)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


TranscriptHandler = Callable[[Any], Awaitable[Any]]


class VoiceService:
    """One asyncio task: keeps the front end listening and hands transcripts on."""

    def __init__(
        self,
        settings: Settings,
        router: PrefetchingRouter,
        on_transcript: TranscriptHandler,
        *,
        on_event: Callable[[Any], None] = lambda event: None,
        front_end_factory: Callable[..., Any] | None = None,
        source_factory: Callable[..., Any] | None = None,
    ):
        self.settings = settings
        self.router = router
        self.on_transcript = on_transcript
        self.on_event = on_event
        self._front_end_factory = front_end_factory
        self._source_factory = source_factory
        self.state = VoiceState.OFF
        self.error = ""
        self.front: Any = None
        self._events: asyncio.Queue[Any] | None = None
        self._sink: Callable[[Any], None] | None = None
        # Exactly one of the two is set: waits on either end without polling.
        self._resumed = asyncio.Event()
        self._resumed.set()
        self._paused = asyncio.Event()
        # A pause with an end: the timer that resumes, and when (epoch seconds).
        self._resume_timer: asyncio.TimerHandle | None = None
        self.resumes_at: float | None = None
        self.speaker: Any = None  # mavend.tts.Speaker, for barge-in
        self.reference: Any = None  # wakeword.echo.PlaybackReference, shared with it

    def attach_speaker(self, speaker: Any) -> None:
        """Listen around what `speaker` plays: barge-in, and no waking on its voice."""
        self.speaker = speaker

    # control --------------------------------------------------------------
    @property
    def listening(self) -> bool:
        return self.state is VoiceState.LISTENING

    def pause(self, for_s: float | None = None) -> None:
        """Stop listening and let go of the microphone, until `resume()`, or for `for_s`
        seconds ("stop listening for twenty minutes"). A later pause replaces the end."""
        self._cancel_resume()
        if for_s is not None:
            loop = asyncio.get_running_loop()
            self._resume_timer = loop.call_later(max(0.0, for_s), self.resume)
            self.resumes_at = time.time() + max(0.0, for_s)
        if not self._resumed.is_set():
            return
        self._resumed.clear()
        self._paused.set()
        log.info("listening paused")
        if self.front is not None:
            # Stops the audio thread; the source closes the device on its way out.
            threading.Thread(target=self.front.stop, name="voice-pause", daemon=True).start()

    def resume(self) -> None:
        self._cancel_resume()
        if self._resumed.is_set():
            return
        log.info("listening resumed")
        self._paused.clear()
        self._resumed.set()

    def _cancel_resume(self) -> None:
        if self._resume_timer is not None:
            self._resume_timer.cancel()
        self._resume_timer = None
        self.resumes_at = None

    def listen_now(self) -> None:
        """Open a turn without the wake word: the user was just asked something. It
        waits `conversation.follow_up_s` for speech to start."""
        if self.front is not None and self.listening:
            self.front.listen_now(self.settings.conversation.follow_up_s)

    def follow_up(self, reply: Any) -> bool:
        """After a turn: if its reply expects an answer (a question, a clarification, a
        "Do you want me to ...?"), the answer needs no wake word. True if it opened."""
        from mavend.conversation import expects_answer

        if not expects_answer(reply):
            return False
        self.listen_now()
        return True

    async def load(self) -> bool:
        """Load the front end's models (in a thread). False, logged, if they are missing."""
        if self.front is not None:
            return True
        if self.state is VoiceState.FAILED:
            return False  # said once; a reload (SIGHUP) makes a new service
        self.state = VoiceState.LOADING
        loop = asyncio.get_running_loop()
        self._events = asyncio.Queue()
        from wakeword import asyncio_sink

        sink = asyncio_sink(loop, self._events)
        try:
            self.front = await asyncio.to_thread(self._build_front_end, sink)
        except MavendError as exc:  # a missing or broken model file
            self._fail(f"the audio front end cannot start: {exc}")
            return False
        return True

    async def run(self) -> None:
        """The service's task: listen until cancelled."""
        if not await self.load():
            return
        try:
            delay = RETRY_FIRST_S
            while True:
                await self._resumed.wait()
                source = await self._open_source(delay)
                if source is None:
                    delay = min(delay * 2, RETRY_MAX_S)
                    continue
                delay = RETRY_FIRST_S
                self.state = VoiceState.LISTENING
                self.front.start(source)
                ended_cleanly = await self._consume()
                if not self._resumed.is_set():
                    self.state = VoiceState.PAUSED
                    continue
                if not ended_cleanly:
                    # The audio thread died (logged by the front end): start it again.
                    self.state = VoiceState.WAITING_FOR_DEVICE
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, RETRY_MAX_S)
        finally:
            self.state = VoiceState.OFF
            await asyncio.to_thread(self._close)

    # internals ------------------------------------------------------------
    def _build_front_end(self, sink: Callable[[Any], None]) -> Any:
        started = time.monotonic()
        grammar = getattr(self.router, "grammar", None)
        filled = getattr(self.router, "slots_filled", None)
        factory = self._front_end_factory
        if factory is None:
            from wakeword import FrontEnd

            factory = FrontEnd.from_settings
        # [voices]: each transcript keeps its audio, to tell who spoke (mavend/daemon/speakers.py).
        extra = {"keep_audio": True} if self.settings.voices.enabled else {}
        front = factory(self.settings, sink=sink, grammar=grammar, slots_filled=filled, **extra)
        self._sink = sink
        self._link_echo(front)
        log.info("audio front end loaded in %.1f s", time.monotonic() - started)
        return front

    def _link_echo(self, front: Any) -> None:
        """Give the front end the speaker's playback reference, scored by a second
        instance of its own wake model; and a way to stop the speaker."""
        if self.speaker is None or not hasattr(front, "echo"):
            return
        from wakeword.echo import PlaybackReference, wake_scorer, wake_words

        files = getattr(getattr(front, "wake", None), "files", None)
        scorer, reset = wake_scorer(files) if files is not None else (None, None)
        words = wake_words(files.name) if files is not None else ()
        self.reference = PlaybackReference(scorer, reset_scorer=reset, wake_words=words)
        self.speaker.reference = self.reference
        front.echo = self.reference
        front.on_barge_in = self.speaker.interrupt

    async def _open_source(self, delay: float) -> Any | None:
        """The microphone, opened; None (after a wait) while it cannot be."""
        source = self._make_source()
        try:
            await asyncio.to_thread(source.open)
            return source
        except DeviceError as exc:
            if self.state is not VoiceState.WAITING_FOR_DEVICE:
                log.error(
                    "no microphone: %s. Reminders, notifications and the D-Bus API keep "
                    "running; listening starts when a microphone appears (retrying).",
                    exc,
                )
            else:
                log.debug("still no microphone (%s); next try in %.0f s", exc, delay)
            self.state = VoiceState.WAITING_FOR_DEVICE
            self.error = str(exc)
            with contextlib.suppress(TimeoutError):
                # A pause while waiting stops the retries until resumed.
                await asyncio.wait_for(self._paused.wait(), timeout=delay)
            return None

    def _make_source(self) -> Any:
        if self._source_factory is not None:
            return self._source_factory(self.settings.audio, on_state=self._sink)
        from wakeword import MicrophoneSource

        return MicrophoneSource.from_settings(self.settings.audio, on_state=self._sink)

    async def _consume(self) -> bool:
        """Events until the source ends: True if it ended (stopped), False if it died."""
        from wakeword import DeviceState, Partial, SourceEnded, Transcript, Wake

        assert self._events is not None
        while True:
            event = await self._events.get()
            self.on_event(event)
            if isinstance(event, SourceEnded):
                return True
            if isinstance(event, Wake):
                continue  # logged by the front end
            if isinstance(event, Partial):
                self.router.prefetch(event.text)
            elif isinstance(event, Transcript):
                await self._turn(event)
            elif isinstance(event, DeviceState):
                if event.state == "failed":
                    # The front end's audio thread is gone (it logged why).
                    await asyncio.to_thread(self.front.stop)
                    return False
                self.state = (
                    VoiceState.WAITING_FOR_DEVICE
                    if event.state in ("lost", "retrying")
                    else VoiceState.LISTENING
                )

    async def _turn(self, transcript: Any) -> None:
        if transcript.timings.wake_detected is None and not self._follow_up_turn(transcript):
            return
        try:
            await self.on_transcript(transcript)
        except Exception:  # one bad turn must not stop listening
            log.exception("the turn for %r failed", transcript.text)

    def _follow_up_turn(self, transcript: Any) -> bool:
        """A turn opened without the wake word: route it? Not "stop" (it stops
        playback), and not speech that overlapped mavend's own voice."""
        if is_stop(transcript.text):
            stopped = self.speaker.interrupt() if self.speaker is not None else False
            log.info("heard %r: %s", transcript.text,
                     "playback stopped" if stopped else "nothing was playing")
            return False
        reference = self.reference
        if reference is not None:
            timings = transcript.timings
            end = transcript.speech_end_monotonic
            start = end - (timings.speech_end - timings.speech_start)
            if reference.overlaps(start, end):
                log.info("not routed: %r was heard while mavend was speaking", transcript.text)
                return False
        return True

    def _fail(self, message: str) -> None:
        self.state = VoiceState.FAILED
        self.error = message
        log.error("%s. Everything else keeps running; `mavend doctor` says what is missing.",
                  message)

    def _close(self) -> None:
        if self.front is not None:
            self.front.close()
            self.front = None
