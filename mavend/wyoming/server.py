"""Mavend as a Wyoming service: Home Assistant's conversation agent, and its voice.

    describe    -> info       a `handle` program (mavend, English) and, with [wyoming]
                              synthesize, a `tts` program (the [tts] voice, 24 kHz)
    transcript  -> handled    the text runs as one turn through the daemon's text path
                or not-handled (router, memory, reminders, the personal boundary), in the
                              session `wyoming:<peer host>[:<conversation id>]`
    synthesize  -> audio-start, audio-chunk..., audio-stop (16-bit mono PCM)
    ping        -> pong

Off unless `[wyoming] listen` is set. A peer whose address is not in `[wyoming] allow`
(default: loopback) is disconnected before anything it sent is read. One task serves;
every connection is its own task, and every read is bounded (mavend/wyoming/protocol.py)
and timed, so one client that sends garbage, oversized events or nothing at all is dropped
(one log line naming it) while the others are served. Turns and synthesis run in worker
threads, never on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.handle import Handled, NotHandled
from wyoming.info import (
    Attribution,
    HandleModel,
    HandleProgram,
    Info,
    TtsProgram,
    TtsVoice,
)
from wyoming.ping import Pong

from mavend import __version__, addresses
from mavend.config import Settings
from mavend.errors import MavendError
from mavend.handlers.common import Outcome
from mavend.wyoming.protocol import Limits, ProtocolError, read_event, write_event

log = logging.getLogger(__name__)

MAX_TEXT = 2000  # characters of one transcript or synthesize text; more is refused
MAX_CONNECTIONS = 32  # a client that opens more is turned away, the others kept
IDLE_TIMEOUT_S = 120.0  # a connection that sends nothing (or half an event) this long
SAMPLES_PER_CHUNK = 1024  # what wyoming-piper sends: ~43 ms at 24 kHz
LANGUAGES = ["en"]
ATTRIBUTION = Attribution(name="mavend", url="https://pypi.org/project/mavend/")
# Turns that did not do what was asked: Home Assistant shows these as failures.
_FAILED = (Outcome.REFUSED, Outcome.FAILED, Outcome.UNAVAILABLE)
_CONVERSATION_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


class TurnRunner(Protocol):
    """The daemon's text path (mavend.daemon.lifecycle.Daemon.submit_text)."""

    async def submit_text(self, text: str, *, notify: bool = ..., session: str = ...) -> Any: ...


@dataclass(frozen=True)
class Listen:
    host: str
    port: int

    @classmethod
    def parse(cls, uri: str) -> Listen:
        host, port = addresses.tcp_uri(uri)
        return cls(host, port)

    @property
    def loopback(self) -> bool:
        return self.host in ("localhost", "127.0.0.1", "::1") or self.host.startswith("127.")


class WyomingServer:
    """`run()` serves until cancelled (the daemon supervises it as the "wyoming" service)."""

    def __init__(
        self,
        daemon: TurnRunner,
        settings: Settings,
        *,
        voice: Any = None,
        limits: Limits | None = None,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        max_connections: int = MAX_CONNECTIONS,
    ):
        self.daemon = daemon
        self.settings = settings
        self.listen = Listen.parse(settings.wyoming.listen)
        self.limits = limits or Limits()
        self.idle_timeout_s = idle_timeout_s
        self.max_connections = max_connections
        self._voice = voice  # a mavend.tts.Voice; loaded on first use when None
        self._voice_path: Path | None = None
        self._voice_lock = asyncio.Lock()
        self._connections: set[asyncio.Task] = set()
        self.port: int | None = None  # the bound port (listen port 0 picks one: tests)
        self.served = 0  # connections accepted so far (status)
        self.refused = 0  # connections from peers not in [wyoming] allow
        self._refused_hosts: set[str] = set()  # each is logged once
        self.ready = asyncio.Event()

    @property
    def connections(self) -> int:
        return len(self._connections)

    # serving ----------------------------------------------------------------
    async def run(self) -> None:
        self._check_voice()
        server = await asyncio.start_server(
            self._accept, self.listen.host, self.listen.port, limit=self.limits.max_header
        )
        self.port = server.sockets[0].getsockname()[1]
        where = f"tcp://{self.listen.host}:{self.port}"
        allow = ", ".join(self.settings.wyoming.allow)
        if self.listen.loopback:
            log.info("serving Wyoming on %s (this box only), to %s", where, allow)
        else:
            # Whoever is allowed and reaches the port can run turns: acts, reminders, questions.
            log.warning(
                "serving Wyoming on %s: NOT loopback; the peers in [wyoming] allow (%s) who "
                "reach this port can run turns as you (acts, reminders, your notes)",
                where, allow,
            )
        outside = [n for n in self.settings.wyoming.allow if not _own_network(n)]
        if outside:
            log.warning(
                "[wyoming] allow admits addresses outside your own network (%s): anyone "
                "there who reaches the port can run turns as you", ", ".join(outside),
            )
        self.ready.set()
        try:
            async with server:
                await server.serve_forever()
        finally:
            self.ready.clear()
            for task in list(self._connections):
                task.cancel()
            for task in list(self._connections):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = _peer(writer)
        host = _host(writer)
        if not self.settings.wyoming.allowed(host):
            # Before anything it sent is read: it runs, confirms and teaches nothing.
            self.refused += 1
            if host not in self._refused_hosts:
                self._refused_hosts.add(host)
                log.warning(
                    "Wyoming client %s refused: not in [wyoming] allow (%s); further "
                    "connections from it are refused without a log line",
                    host, ", ".join(self.settings.wyoming.allow),
                )
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            return
        if len(self._connections) >= self.max_connections:
            log.warning("Wyoming client %s turned away: %d connections open", peer,
                        len(self._connections))
            writer.close()
            return
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self.served += 1
        try:
            await self._serve(reader, writer, peer)
        finally:
            self._connections.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, peer: str
    ) -> None:
        log.debug("Wyoming client %s connected", peer)
        try:
            while True:
                event = await asyncio.wait_for(read_event(reader, self.limits),
                                               self.idle_timeout_s)
                if event is None:
                    return
                await self._dispatch(event, writer, peer)
        except ProtocolError as exc:
            log.warning("Wyoming client %s broke the protocol, disconnected: %s", peer, exc)
        except TimeoutError:
            log.info("Wyoming client %s idle for %.0f s, disconnected", peer,
                     self.idle_timeout_s)
        except (ConnectionError, OSError) as exc:
            log.info("Wyoming client %s went away: %s", peer, exc)

    async def _dispatch(self, event: Event, writer: asyncio.StreamWriter, peer: str) -> None:
        kind = event.type
        if kind == "describe":
            await write_event(writer, self.info().event())
        elif kind == "transcript":
            await write_event(writer, await self._transcript(event, peer))
        elif kind == "synthesize":
            await self._synthesize(event, writer, peer)
        elif kind == "ping":
            await write_event(writer, Pong(text=_text(event.data.get("text")) or None).event())
        else:
            # Wyoming peers ignore what they do not serve (audio a satellite streams, ...).
            log.debug("Wyoming client %s: ignored a %r event", peer, kind[:40])

    # describe -----------------------------------------------------------------
    def info(self) -> Info:
        description = "mavend: a local, private voice assistant (router, memory, reminders)"
        handle = HandleProgram(
            name="mavend", attribution=ATTRIBUTION, installed=True,
            description=description, version=__version__,
            models=[HandleModel(
                name="mavend", attribution=ATTRIBUTION, installed=True,
                description="mavend's router: grammar, classifier and local LLM",
                version=__version__, languages=list(LANGUAGES),
            )],
            # Mavend runs its own allowlisted acts, not Home Assistant's entities.
            supports_home_control=False,
        )  # fmt: skip
        tts: list[TtsProgram] = []
        if self.settings.wyoming.synthesize and (self._voice_path or self._voice is not None):
            name = self.settings.tts.voice
            tts.append(TtsProgram(
                name="mavend-tts", attribution=ATTRIBUTION, installed=True,
                description="mavend's own voice (hibari)", version=__version__,
                voices=[TtsVoice(
                    name=name, attribution=Attribution(name="hibari-tts",
                                                       url="https://pypi.org/project/hibari-tts/"),
                    installed=True, description=f"{name} (24 kHz)", version=None,
                    languages=list(LANGUAGES),
                )],
            ))  # fmt: skip
        return Info(handle=[handle], tts=tts)

    # transcript -> handled ------------------------------------------------------
    async def _transcript(self, event: Event, peer: str) -> Event:
        # Not Transcript.from_event: it raises KeyError on a transcript without text.
        text = _text(event.data.get("text")).strip()
        context = event.data.get("context")
        context = context if isinstance(context, dict) else None
        if not text:
            return NotHandled(text="I heard nothing to do.").event()
        if len(text) > MAX_TEXT:
            log.warning("Wyoming client %s: a transcript of %d characters refused", peer, len(text))
            return NotHandled(text="That is too long for me.").event()
        session = _session(peer, context)
        try:
            turn = await self.daemon.submit_text(text, notify=False, session=session)
        except MavendError as exc:
            return NotHandled(text=f"mavend cannot answer now: {exc}").event()
        reply = turn.reply
        understood = not (turn.decision is not None and turn.decision.clarify is not None
                          and turn.decision.clarify.kind == "route")
        if reply.outcome in _FAILED or not understood:
            return NotHandled(text=reply.text, context=context).event()
        return Handled(text=reply.text, context=context).event()

    # synthesize -> audio ----------------------------------------------------------
    async def _synthesize(self, event: Event, writer: asyncio.StreamWriter, peer: str) -> None:
        text = _text(event.data.get("text")).strip()
        if not text or len(text) > MAX_TEXT:
            await write_event(writer, Error(text="synthesize needs 1 to 2000 characters of text",
                                            code="bad-request").event())
            return
        voice = await self._load_voice() if self.settings.wyoming.synthesize else None
        if voice is None:
            await write_event(writer, Error(text="mavend has no voice loaded",
                                            code="no-voice").event())
            return
        from mavend.tts import for_the_ear

        rate = int(voice.sample_rate)
        await write_event(writer, AudioStart(rate=rate, width=2, channels=1).event())
        spoken = for_the_ear(text, max_sentences=self.settings.tts.max_sentences)
        for sentence in spoken.sentences:
            audio = await asyncio.to_thread(voice.synthesize, sentence)
            pcm = _pcm16(audio)
            step = SAMPLES_PER_CHUNK * 2
            for start in range(0, len(pcm), step):
                chunk = AudioChunk(rate=rate, width=2, channels=1, audio=pcm[start:start + step])
                await write_event(writer, chunk.event())
        await write_event(writer, AudioStop().event())
        log.debug("Wyoming client %s: synthesized %d sentences", peer, len(spoken.sentences))

    def _check_voice(self) -> None:
        """Find the voice file now, so `info` announces tts only when it can be served."""
        if not self.settings.wyoming.synthesize or self._voice is not None:
            return
        from mavend.models import require

        try:
            self._voice_path = require(self.settings.tts.voice,
                                       self.settings.models.models_path())
        except MavendError as exc:
            log.error("Wyoming synthesize is off: %s", exc)

    async def _load_voice(self) -> Any:
        async with self._voice_lock:
            if self._voice is None and self._voice_path is not None:
                from mavend.tts import Voice

                try:
                    self._voice = await asyncio.to_thread(Voice.load, self._voice_path)
                except MavendError as exc:
                    log.error("Wyoming synthesize: %s", exc)
                    self._voice_path = None
            return self._voice


def _peer(writer: asyncio.StreamWriter) -> str:
    name = writer.get_extra_info("peername")
    if isinstance(name, tuple) and len(name) >= 2:
        host = str(name[0])
        return f"[{host}]:{name[1]}" if ":" in host else f"{host}:{name[1]}"
    return "unknown"


def _own_network(network: str) -> bool:
    """Whether every address of `network` is loopback, private or link-local."""
    net = ipaddress.ip_network(network)
    ends = (net.network_address, net.broadcast_address)
    return all(addresses.address_is_private(address) for address in ends)


def _host(writer: asyncio.StreamWriter) -> str:
    """The peer's IP address ("" when the transport does not say)."""
    name = writer.get_extra_info("peername")
    return str(name[0]) if isinstance(name, tuple) and name else ""


def _session(peer: str, context: Any) -> str:
    """`wyoming:<host>`, narrowed by Home Assistant's conversation id when it sends one:
    HA opens a connection per turn, so the connection cannot carry a conversation."""
    host = peer.rsplit(":", 1)[0]
    conversation = context.get("conversation_id") if isinstance(context, dict) else None
    if isinstance(conversation, str) and _CONVERSATION_ID.fullmatch(conversation):
        return f"wyoming:{host}:{conversation}"
    return f"wyoming:{host}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _pcm16(audio: np.ndarray) -> bytes:
    clipped = np.clip(np.asarray(audio, dtype=np.float32), -1.0, 1.0)
    return (clipped * 32767.0).astype("<i2").tobytes()
