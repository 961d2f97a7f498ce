"""Speech-to-text on another machine: a Wyoming ASR server (`[stt] backend = "wyoming"`).

`WyomingTranscriber` has the interface the front end's transcriber thread uses from
`wakeword.stt.SpeechToText`: `transcribe(samples) -> SttResult`, blocking, 16 kHz int16.
One connection per utterance, as Home Assistant does it:

    transcribe {language} · audio-start · audio-chunk ... · audio-stop  ->  transcript

Only the command's audio is sent (never the idle microphone: the wake word is heard here).
Any failure (refused, timed out, garbage, a server that closes) ends that turn: one log
line naming the server for a run of failures, an empty result that the front end drops,
and listening goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time

import numpy as np
from wyoming.asr import Transcribe
from wyoming.audio import AudioChunk, AudioStart, AudioStop

from mavend import addresses
from mavend.config import SttSettings
from mavend.wyoming.protocol import Limits, ProtocolError, read_event, write_event
from wakeword.stt import SttResult, compression_ratio

log = logging.getLogger(__name__)

RATE = 16000
CHUNK_SAMPLES = 1600  # 100 ms per audio-chunk
# A Wyoming transcript carries no scores. These stand for "a server heard words": the
# front end's guard still drops empty text, and the confidence reads as fairly sure.
REMOTE_LOGPROB = -0.25
# A transcript is text: a server that answers with megabytes is broken.
LIMITS = Limits(max_header=64 * 1024, max_data=256 * 1024, max_payload=64 * 1024)
_FAILED = SttResult("", -10.0, 1.0, 0.0, 0.0, 0.0)


class SttServerError(Exception):
    """The Wyoming server did not give a transcript (the message says why)."""


class WyomingTranscriber:
    """A Wyoming ASR server in the seat of faster-whisper. Thread-safe (no shared state
    but the failure flag), though the front end calls it from one thread."""

    def __init__(self, uri: str, *, language: str = "en", timeout_s: float = 15.0):
        self.uri = uri
        self.host, self.port = addresses.tcp_uri(uri)
        self.language = language
        self.timeout_s = timeout_s
        self._failing = False
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: SttSettings) -> WyomingTranscriber:
        return cls(settings.uri, language=settings.language, timeout_s=settings.timeout_s)

    def transcribe(self, samples: np.ndarray) -> SttResult:
        """Transcribe 16 kHz int16 audio. Blocks: call it from a worker thread."""
        started = time.perf_counter()
        try:
            text = asyncio.run(self._ask(samples))
        except (SttServerError, ProtocolError, OSError, TimeoutError) as exc:
            self._failed(exc)
            return _FAILED
        self._recovered()
        return SttResult(
            text=text,
            avg_logprob=REMOTE_LOGPROB,
            no_speech_prob=0.0,
            compression_ratio=compression_ratio(text),
            audio_s=len(samples) / RATE,
            compute_ms=(time.perf_counter() - started) * 1000.0,
        )

    async def _ask(self, samples: np.ndarray) -> str:
        return await asyncio.wait_for(self._exchange(samples), self.timeout_s)

    async def _exchange(self, samples: np.ndarray) -> str:
        reader, writer = await asyncio.open_connection(
            self.host, self.port, limit=LIMITS.max_header
        )
        try:
            await write_event(writer, Transcribe(language=self.language).event())
            await write_event(writer, AudioStart(rate=RATE, width=2, channels=1).event())
            pcm = np.asarray(samples, dtype="<i2").tobytes()
            step = CHUNK_SAMPLES * 2
            for start in range(0, len(pcm), step):
                chunk = AudioChunk(rate=RATE, width=2, channels=1, audio=pcm[start:start + step])
                await write_event(writer, chunk.event())
            await write_event(writer, AudioStop().event())
            return await _transcript(reader)
        finally:
            writer.close()
            # The server may already have dropped the connection: nothing to tidy then.
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    def _failed(self, exc: BaseException) -> None:
        with self._lock:
            first, self._failing = not self._failing, True
        reason = str(exc) or type(exc).__name__
        if isinstance(exc, TimeoutError):
            reason = f"no transcript within {self.timeout_s:g} s"
        if first:  # once per run of failures, not once per utterance
            log.error("speech-to-text server %s failed, this turn is dropped: %s",
                      self.uri, reason)
        else:
            log.debug("speech-to-text server %s still failing: %s", self.uri, reason)

    def _recovered(self) -> None:
        with self._lock:
            was, self._failing = self._failing, False
        if was:
            log.info("speech-to-text server %s answers again", self.uri)


async def _transcript(reader: asyncio.StreamReader) -> str:
    """The text of the first `transcript` event; streaming chunks and others are skipped."""
    while True:
        event = await read_event(reader, LIMITS)
        if event is None:
            raise SttServerError("the server closed the connection without a transcript")
        if event.type == "transcript":
            text = event.data.get("text")
            if not isinstance(text, str):
                raise SttServerError("a transcript without text")
            return text.strip()
        if event.type == "error":
            raise SttServerError(f"the server says: {str(event.data.get('text'))[:200]}")
