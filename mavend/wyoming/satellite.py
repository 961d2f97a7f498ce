"""Wyoming satellites: mavend connects to each one the way Home Assistant does.

A satellite (wyoming-satellite on a Pi, a mic and a speaker) is a Wyoming *server*;
mavend is its client. Per `[[satellites]]` entry, one asyncio task (`SatelliteLink.run`):

    connect tcp://host:port -> describe -> info (must carry `satellite`)
      -> run-satellite -> the satellite streams:
           run-pipeline(start_stage=wake)  mavend's own wake word on the audio
           run-pipeline(start_stage=asr)   the satellite heard its wake word itself:
                                           endpointing starts at once, no wake word
           audio-chunk ... [audio-stop]
      <- detection (mavend's wake word fired), transcript (what it heard),
         synthesize (the reply's text), audio-start / audio-chunk / audio-stop (the
         reply in mavend's voice, at the satellite's sound rate), error

The audio goes through the same front end as the local microphone (wake word,
endpointing, speech-to-text: wakeword/frontend.py), one per satellite with its own wake
and VAD state and one shared Whisper; the transcript through the same router and
handlers as a `satellite:<name>` session in the satellite's room. A reminder set there
remembers the satellite (`reminders.origin`) and is announced on it when it fires.

Failures stay with their satellite: a refused connection, garbage, an oversized event,
audio in a format that is refused, or a disconnect mid-turn is one log line naming the
satellite, the turn in progress is dropped, and the link reconnects after 2 s, 4 s, ...
60 s. The other satellites and the local microphone never wait on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from wyoming.asr import Transcript as WyTranscript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.ping import Ping, Pong
from wyoming.pipeline import PipelineStage, RunPipeline
from wyoming.satellite import RunSatellite
from wyoming.tts import Synthesize
from wyoming.wake import Detection

from mavend.addresses import tcp_uri
from mavend.config import SatelliteSpec
from mavend.wyoming.protocol import Limits, ProtocolError, read_event, write_event
from mavend.wyoming.satellite_audio import (
    AudioFormat,
    AudioRefused,
    Converter,
    StreamSource,
    reply_payloads,
)
from wakeword.events import DeviceState, Dropped, NoSpeech, Transcript, Wake

log = logging.getLogger(__name__)

# Reconnecting: 2 s, 4 s, ... at most a minute apart; back to 2 s after a good handshake.
RETRY_FIRST_S = 2.0
RETRY_MAX_S = 60.0
CONNECT_TIMEOUT_S = 5.0
INFO_TIMEOUT_S = 5.0
# An audio chunk is ~64 ms: a satellite's events are small. 1 MiB of audio in one event
# is a broken or hostile peer, not a microphone.
LIMITS = Limits(max_header=16 * 1024, max_data=64 * 1024, max_payload=1024 * 1024)


class SatelliteState(enum.Enum):
    CONNECTING = "connecting"  # opening the connection, describe/info
    CONNECTED = "connected"  # handshake done, no pipeline running
    STREAMING = "streaming"  # a pipeline is open: audio is arriving
    FAILED = "failed"  # the last attempt failed; retrying (see last_error)
    STOPPED = "stopped"


@dataclass
class SatelliteStatus:
    """What `mavend satellites` and the D-Bus `Satellites` method show."""

    name: str
    uri: str
    room: str
    state: SatelliteState = SatelliteState.CONNECTING
    last_error: str = ""
    wake: str = ""  # "satellite" (its own wake word) or "mavend" (ours on its stream)
    turns: int = 0
    connected_since: float | None = None  # time.time()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "uri": self.uri,
            "room": self.room,
            "state": self.state.value,
            "last_error": self.last_error,
            "wake": self.wake,
            "turns": self.turns,
            "connected_since": self.connected_since,
        }


class SatelliteError(Exception):
    """The satellite did something that ends this connection (the message says what)."""


# (text, satellite spec) -> the turn (a mavend.assistant.Turn): the daemon's submit.
TurnRunner = Callable[..., Awaitable[Any]]  # (text, spec, *, audio=None) -> Turn
# sink -> a FrontEnd (wakeword/frontend.py) sending its events to `sink`; one per
# pipeline, so nothing of one pipeline (a follow-up flag, a late transcript) leaks into
# the next. The factory keeps the link's wake and VAD models; Whisper is shared.
FrontEndFactory = Callable[[Callable[[Any], None]], Any]


@dataclass
class _Pipeline:
    """One `run-pipeline`: its audio source, the front end's run on it, its format."""

    start: str  # PipelineStage value: "wake" or "asr"
    source: StreamSource
    front_end: Any  # wakeword.frontend.FrontEnd
    thread: Any  # the front end's audio thread
    converter: Converter | None = None
    refused: bool = False  # its audio format was refused: ignore the rest of it
    ended: bool = False


@dataclass
class _Connection:
    writer: asyncio.StreamWriter
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one event sequence at a time
    alive: bool = True


class SatelliteLink:
    """One satellite: connect, handshake, stream, reply; reconnect with backoff."""

    def __init__(
        self,
        spec: SatelliteSpec,
        *,
        room: str,
        run_turn: TurnRunner,
        front_end: FrontEndFactory,
        voice: Any = None,  # mavend.tts.Voice, or None: replies as text only
        retry_first_s: float = RETRY_FIRST_S,
    ):
        self.spec = spec
        self.room = room
        self.run_turn = run_turn
        self.voice = voice
        self.status = SatelliteStatus(spec.name, spec.uri, room)
        self.retry_first_s = retry_first_s
        self._events: asyncio.Queue[Any] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._front_end = front_end
        self._conn: _Connection | None = None
        self._pipeline: _Pipeline | None = None
        self._turn_tasks: set[asyncio.Future] = set()
        self._logged = ""  # the failure last logged: a repeat is not logged again

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def connected(self) -> bool:
        return self._conn is not None and self._conn.alive and self.status.state in (
            SatelliteState.CONNECTED, SatelliteState.STREAMING)

    # the task ---------------------------------------------------------------------
    async def run(self) -> None:
        """Connect, serve, and reconnect after any failure, until cancelled."""
        self._loop = asyncio.get_running_loop()
        delay = self.retry_first_s
        try:
            while True:
                handshaken = await self._attempt()
                if handshaken:
                    delay = self.retry_first_s
                self._set(SatelliteState.FAILED)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_S)
        finally:
            self._set(SatelliteState.STOPPED)

    async def _attempt(self) -> bool:
        """One connection, start to end; True if the handshake completed."""
        self._set(SatelliteState.CONNECTING)
        handshaken = False
        writer: asyncio.StreamWriter | None = None
        try:
            host, port = tcp_uri(self.spec.uri)
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port), CONNECT_TIMEOUT_S
            )
            await self._handshake(reader, writer)
            handshaken = True
            await self._serve(reader)
            self._fail("disconnected")
        except asyncio.CancelledError:
            raise
        except (TimeoutError, OSError) as exc:
            self._fail(f"cannot connect: {_reason(exc)}" if not handshaken else _reason(exc))
        except (ProtocolError, SatelliteError) as exc:
            self._fail(str(exc))
        except Exception as exc:  # a bug here must not end the link: log it whole
            log.exception("satellite %s: unexpected error", self.name)
            self.status.last_error = f"{type(exc).__name__}: {exc}"
        finally:
            await self._drop_connection(writer)
        return handshaken

    async def _handshake(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._conn = _Connection(writer)
        await self._send(Describe().event())
        info = await asyncio.wait_for(self._read_info(reader), INFO_TIMEOUT_S)
        satellite = info.satellite
        if satellite is None:
            raise SatelliteError("it is not a satellite (its info has no `satellite`)")
        # Newer satellites say whether they detect the wake word; older ones (1.0) show
        # it by the pipeline's start stage, which is what decides it below either way.
        self.status.wake = "satellite" if satellite.active_wake_words else "mavend"
        await self._send(RunSatellite().event())
        self.status.connected_since = time.time()
        self.status.last_error = ""
        self._set(SatelliteState.CONNECTED)
        log.info("satellite %s: connected (%s, room %s)", self.name, self.spec.uri,
                 self.room or "-")

    async def _read_info(self, reader: asyncio.StreamReader) -> Info:
        while True:
            event = await read_event(reader, LIMITS)
            if event is None:
                raise SatelliteError("closed the connection before describing itself")
            if Info.is_type(event.type):
                try:
                    return Info.from_event(event)
                except Exception as exc:  # dataclasses_json raises whatever it meets
                    raise SatelliteError(f"its info is malformed ({exc})") from None

    async def _serve(self, reader: asyncio.StreamReader) -> None:
        consumer = asyncio.create_task(self._consume(), name=f"satellite-{self.name}-turns")
        try:
            while (event := await read_event(reader, LIMITS)) is not None:
                await self._on_event(event)
        finally:
            consumer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await consumer

    async def _drop_connection(self, writer: asyncio.StreamWriter | None) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.alive = False
        if self._pipeline is not None:
            if not self._pipeline.ended:
                log.info("satellite %s: the turn in progress is dropped", self.name)
            await self._end_pipeline()
        self._events = asyncio.Queue()  # what the old pipeline still says goes nowhere
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)

    # events from the satellite ------------------------------------------------------
    async def _on_event(self, event: Event) -> None:
        if AudioChunk.is_type(event.type):
            self._audio(event)
        elif RunPipeline.is_type(event.type):
            await self._run_pipeline(event)
        elif AudioStop.is_type(event.type):
            if self._pipeline is not None and self._pipeline.start == PipelineStage.WAKE.value:
                await self._end_pipeline()  # a VAD satellite stopped streaming
        elif AudioStart.is_type(event.type):
            self._audio_start(event)
        elif Ping.is_type(event.type):
            await self._send(Pong(text=Ping.from_event(event).text).event())
        elif Detection.is_type(event.type) and self._pipeline is not None:
            # The satellite's own wake word, during a wake-stage pipeline: listen now.
            self._pipeline.front_end.listen_now()
        # Anything else (played, streaming-started, timer events, ...) needs no answer.

    async def _run_pipeline(self, event: Event) -> None:
        try:
            start = PipelineStage(event.data.get("start_stage")).value
        except ValueError:
            start = str(event.data.get("start_stage"))
        if self._pipeline is not None:
            await self._end_pipeline()
        if start not in (PipelineStage.WAKE.value, PipelineStage.ASR.value):
            self._refuse(f"a pipeline starting at {start!r} (mavend starts at wake or asr)")
            return
        self.status.wake = "satellite" if start == PipelineStage.ASR.value else "mavend"
        source = StreamSource(f"satellite:{self.name}")
        front_end = self._front_end(self._sink_for(self._events))
        if start == PipelineStage.ASR.value:
            front_end.listen_now()  # the satellite heard the wake word: no wake here
        thread = front_end.start(source)
        self._pipeline = _Pipeline(start, source, front_end, thread)
        self._set(SatelliteState.STREAMING)

    def _audio_start(self, event: Event) -> None:
        pipeline = self._pipeline
        if pipeline is None or pipeline.refused:
            return
        try:
            pipeline.converter = Converter(AudioFormat.of(event.data))
        except AudioRefused as exc:
            self._refuse_audio(pipeline, str(exc))

    def _audio(self, event: Event) -> None:
        pipeline = self._pipeline
        if pipeline is None or pipeline.refused or pipeline.ended:
            return  # audio outside a pipeline (or after a refusal) is not listened to
        try:
            fmt = AudioFormat.of(event.data)
        except AudioRefused as exc:
            self._refuse_audio(pipeline, str(exc))
            return
        if pipeline.converter is None or pipeline.converter.fmt != fmt:
            if pipeline.converter is None and not fmt.native:
                log.info("satellite %s: audio is %s: converting to 16 kHz mono 16-bit",
                         self.name, fmt)
            pipeline.converter = Converter(fmt)
        pipeline.source.push(pipeline.converter.push(event.payload or b""))

    def _refuse_audio(self, pipeline: _Pipeline, why: str) -> None:
        pipeline.refused = True
        pipeline.source.end()
        self._refuse(f"its audio is refused: {why}")

    def _refuse(self, why: str) -> None:
        if why != self._logged:
            log.warning("satellite %s: %s; this turn ends", self.name, why)
            self._logged = why
        self.status.last_error = why
        self._spawn(self._send_quietly(Error(text=why, code="mavend-refused").event()))

    async def _end_pipeline(self) -> None:
        pipeline, self._pipeline = self._pipeline, None
        if pipeline is None:
            return
        pipeline.ended = True
        pipeline.source.end()
        # The front end finishes what it heard (an utterance in progress is transcribed)
        # and its threads end; the next pipeline starts a fresh one.
        await asyncio.to_thread(_finish, pipeline)
        if self._conn is not None:
            self._set(SatelliteState.CONNECTED)

    # events from the front end -------------------------------------------------------
    def _sink_for(self, events: asyncio.Queue[Any]) -> Callable[[Any], None]:
        """A front end's sink (its threads): events go to this connection's queue only."""
        loop = self._loop
        assert loop is not None

        def sink(event: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closing
                loop.call_soon_threadsafe(events.put_nowait, event)

        return sink

    async def _consume(self) -> None:
        events = self._events
        while True:
            event = await events.get()
            if isinstance(event, Wake):
                await self._send(Detection(name=event.model).event())
            elif isinstance(event, Transcript):
                self._spawn(self._turn(event))
                await self._asr_done()
            elif isinstance(event, NoSpeech | Dropped):
                # wyoming-satellite (1.x) goes back to its wake word on a transcript: an
                # empty one says "nothing heard" to every version.
                await self._send(WyTranscript(text="").event())
                await self._asr_done()
            elif isinstance(event, DeviceState) and event.state == "failed":
                log.error("satellite %s: its audio pipeline stopped: %s", self.name,
                          event.detail)

    async def _asr_done(self) -> None:
        pipeline = self._pipeline
        if pipeline is not None and pipeline.start == PipelineStage.ASR.value:
            await self._end_pipeline()  # one utterance per satellite-woken pipeline

    async def _turn(self, transcript: Transcript) -> None:
        """Route and handle the transcript, then answer on this satellite."""
        conn = self._conn
        await self._send(WyTranscript(text=transcript.text).event(), conn)
        # The utterance's audio when [voices] is on: the daemon tells who spoke.
        audio = getattr(transcript, "audio", None)
        extra = {"audio": audio} if audio is not None else {}
        turn = await self.run_turn(transcript.text, self.spec, **extra)
        self.status.turns += 1
        self._logged = ""  # working again: the next failure is news
        log.info("satellite %s: heard %r -> %s (%.0f ms from end of speech): %s",
                 self.name, transcript.text,
                 turn.decision.intent if turn.decision else "-",
                 (time.monotonic() - transcript.speech_end_monotonic) * 1000.0,
                 turn.reply.text)
        if conn is None or not conn.alive:
            log.info("satellite %s: disconnected before its reply: %r not delivered",
                     self.name, turn.reply.text)
            return
        await self.say(turn.reply.text, turn.reply.spoken, conn)

    # replies ---------------------------------------------------------------------------
    async def say(self, text: str, spoken: str = "", conn: _Connection | None = None) -> bool:
        """`synthesize` (the text, for a display) and the audio; False if not connected."""
        conn = conn or self._conn
        if conn is None or not conn.alive:
            return False
        audio = await asyncio.to_thread(self._synthesize, spoken or text)
        async with conn.lock:  # the text and its audio stay together
            try:
                await write_event(conn.writer, Synthesize(text=text).event())
                if audio:
                    rate = self.spec.snd_rate
                    await write_event(conn.writer, AudioStart(rate=rate, width=2, channels=1)
                                      .event())
                    for payload in audio:
                        await write_event(conn.writer, AudioChunk(
                            rate=rate, width=2, channels=1, audio=payload).event())
                    await write_event(conn.writer, AudioStop().event())
            except (OSError, RuntimeError) as exc:
                log.info("satellite %s: the reply was cut off: %s", self.name, _reason(exc))
                return False
        return True

    def _synthesize(self, text: str) -> list[bytes]:
        if self.voice is None or not text.strip():
            return []
        from mavend.tts.text import for_the_ear

        payloads: list[bytes] = []
        for sentence in for_the_ear(text).sentences:
            audio = self.voice.synthesize(sentence)
            payloads += reply_payloads(audio, self.voice.sample_rate, self.spec.snd_rate)
        return payloads

    # helpers ----------------------------------------------------------------------------
    async def _send(self, event: Event, conn: _Connection | None = None) -> None:
        conn = conn or self._conn
        if conn is None or not conn.alive:
            return
        async with conn.lock:
            await write_event(conn.writer, event)

    async def _send_quietly(self, event: Event) -> None:
        with contextlib.suppress(OSError, RuntimeError):
            await self._send(event)

    def _spawn(self, coro: Awaitable[Any]) -> None:
        self.keep(asyncio.ensure_future(coro))

    def keep(self, task: asyncio.Future) -> None:
        """Hold a reply task (asyncio keeps only weak references) and log how it ended."""
        self._turn_tasks.add(task)
        task.add_done_callback(self._turn_done)

    def _turn_done(self, task: asyncio.Future) -> None:
        self._turn_tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if isinstance(exc, OSError | RuntimeError):
            log.info("satellite %s: the turn's answer was cut off: %s", self.name, _reason(exc))
        elif exc is not None:
            log.error("satellite %s: the turn failed: %s: %s", self.name,
                      type(exc).__name__, exc)

    def _set(self, state: SatelliteState) -> None:
        self.status.state = state

    def _fail(self, why: str) -> None:
        """One log line per new reason: a satellite that stays down is not logged every retry."""
        if why != self._logged:
            log.warning("satellite %s (%s): %s; retrying", self.name, self.spec.uri, why)
            self._logged = why
        self.status.last_error = why


def _finish(pipeline: _Pipeline) -> None:
    pipeline.thread.join(30.0)
    pipeline.front_end.close()


def _reason(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
