"""Satellites for tests and the load bench: the real wyoming-satellite as a subprocess,
and a small fake one written with the `wyoming` package.

The real one (PyPI wyoming-satellite 1.0.0, which pins wyoming 1.4.1) lives in its own
venv, `.venv-satellite`, made by `scripts/setup.sh test`. Its `--mic-command` is
`satellite_mic.py`: real-time paced silence, and a clip each time a "go" file appears
(audio a satellite reads before mavend connects is thrown away, so a test says when).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event
from wyoming.info import Attribution, Describe, Info, Satellite
from wyoming.pipeline import PipelineStage, RunPipeline
from wyoming.satellite import RunSatellite
from wyoming.tts import Synthesize
from wyoming.wake import Detection

from mavend.wyoming.protocol import read_event, write_event

ROOT = Path(__file__).resolve().parent.parent
SATELLITE_VENV = Path(os.environ.get("MAVEND_SATELLITE_VENV", ROOT / ".venv-satellite"))
MIC_SCRIPT = Path(__file__).with_name("satellite_mic.py")


def satellite_program() -> list[str]:
    """How to start wyoming-satellite 1.0.0: `python -m wyoming_satellite` (the PyPI
    release's `wyoming-satellite` console script points at a `run` it does not have)."""
    python = SATELLITE_VENV / "bin" / "python"
    if not (SATELLITE_VENV / "bin" / "wyoming-satellite").exists():
        raise AssertionError(
            f"{SATELLITE_VENV} has no wyoming-satellite: `scripts/setup.sh test` (or "
            "`make test`) installs wyoming-satellite 1.0.0 there"
        )
    return [str(python), "-m", "wyoming_satellite"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class RealSatellite:
    """`wyoming-satellite` on 127.0.0.1: mic = paced raw PCM, snd = a file."""

    name: str
    workdir: Path
    clip: np.ndarray  # 16 kHz mono int16: played once per go()
    port: int = field(default_factory=free_port)
    extra: tuple[str, ...] = ()
    proc: subprocess.Popen | None = None

    @property
    def uri(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    @property
    def snd_path(self) -> Path:
        return self.workdir / f"{self.name}-snd.raw"

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}-satellite.log"

    def start(self) -> RealSatellite:
        self.workdir.mkdir(parents=True, exist_ok=True)
        clip_path = self.workdir / f"{self.name}-clip.raw"
        clip_path.write_bytes(self.clip.astype("<i2").tobytes())
        mic = shlex.join([sys.executable, str(MIC_SCRIPT), str(clip_path), str(self._go)])
        snd = shlex.join(["sh", "-c", f"cat >> {shlex.quote(str(self.snd_path))}"])
        argv = [
            *satellite_program(), "--uri", self.uri, "--name", self.name,
            "--no-zeroconf", "--mic-command", mic, "--snd-command", snd, "--debug",
            *self.extra,
        ]
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=open(self.log_path, "ab"),  # noqa: SIM115
        )
        wait_port(self.port, 30, f"wyoming-satellite {self.name}", self.proc)
        return self

    @property
    def _go(self) -> Path:
        return self.workdir / f"{self.name}-go"

    def go(self) -> None:
        """Play the clip once (the mic script picks the file up within 50 ms)."""
        self._go.touch()

    def played(self) -> bool:
        return not self._go.exists()

    def snd_audio(self, rate_out: int = 16000, rate_in: int = 22050) -> np.ndarray:
        from wakeword.audio import resample

        raw = self.snd_path.read_bytes() if self.snd_path.exists() else b""
        pcm = np.frombuffer(raw[: len(raw) // 2 * 2], dtype="<i2")
        return resample(pcm, rate_in, rate_out)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def wait_port(port: int, timeout: float, what: str, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"{what} exited with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} did not listen on port {port} within {timeout} s")


# --------------------------------------------------------------------- the fake satellite
@dataclass
class FakeTurn:
    sent_end: float  # monotonic: the end of the utterance's speech was sent
    transcript: str | None = None
    reply: str | None = None
    reply_at: float | None = None
    audio_bytes: int = 0


class FakeSatellite:
    """A Wyoming satellite server (as wyoming-satellite is) that, once mavend has
    connected and sent run-satellite, streams `clip` at real-time pace every `every_s`
    seconds (silence between) and records what comes back.

    `wake`: "mavend" streams always (run-pipeline from the wake stage); "satellite"
    sends run-pipeline at the asr stage before each clip, as a satellite with its own
    wake word does."""

    CHUNK = 1024  # samples: 64 ms, as wyoming-satellite's default

    def __init__(self, name: str, clip: np.ndarray, *, every_s: float = 6.0,
                 speech_end_s: float | None = None, wake: str = "mavend",
                 rate: int = 16000, width: int = 2, channels: int = 1):
        self.name = name
        self.clip = clip.astype("<i2")
        self.every_s = every_s
        # Where the speech in the clip ends (the latency's start): default its last loud sample.
        self.speech_end_s = speech_end_s if speech_end_s is not None else _speech_end(clip)
        self.wake = wake
        self.fmt = (rate, width, channels)
        self.turns: list[FakeTurn] = []
        self.events: list[str] = []
        self.connections = 0
        self.port = 0
        self._server: asyncio.base_events.Server | None = None
        self.streaming = asyncio.Event()

    async def start(self, port: int = 0) -> FakeSatellite:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    @property
    def uri(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        streamer: asyncio.Task | None = None
        try:
            while (event := await read_event(reader)) is not None:
                self.events.append(event.type)
                if Describe.is_type(event.type):
                    await write_event(writer, self.info())
                elif RunSatellite.is_type(event.type) and streamer is None:
                    streamer = asyncio.create_task(self._stream(writer))
                else:
                    self._record(event)
        except (ConnectionError, OSError):
            pass
        finally:
            if streamer is not None:
                streamer.cancel()
            writer.close()

    def info(self) -> Event:
        return Info(satellite=Satellite(
            name=self.name, description=self.name, installed=True, version="0",
            attribution=Attribution(name="test", url=""),
            active_wake_words=["hey_jarvis"] if self.wake == "satellite" else None,
        )).event()

    def _record(self, event: Event) -> None:
        turn = self.turns[-1] if self.turns else None
        if turn is None:
            return
        if Transcript.is_type(event.type):
            turn.transcript = Transcript.from_event(event).text
        elif Synthesize.is_type(event.type) and turn.reply is None:
            turn.reply = Synthesize.from_event(event).text
            turn.reply_at = time.monotonic()
        elif AudioChunk.is_type(event.type):
            turn.audio_bytes += len(event.payload or b"")
        elif Detection.is_type(event.type) or AudioStart.is_type(event.type):
            pass

    async def _stream(self, writer: asyncio.StreamWriter) -> None:
        rate, width, channels = self.fmt
        audio = _encode(self.clip, rate, width, channels)
        silence = _encode(np.zeros(self.CHUNK, np.int16), rate, width, channels)
        step = self.CHUNK * rate // 16000 * width * channels
        chunk_s = self.CHUNK / 16000
        start = time.monotonic()
        sent = 0  # chunks sent: the pace
        self.streaming.set()

        async def chunk(data: bytes) -> None:
            nonlocal sent
            await write_event(writer, AudioChunk(rate=rate, width=width, channels=channels,
                                                 audio=data).event())
            sent += 1
            delay = start + sent * chunk_s - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)

        if self.wake == "mavend":
            await write_event(writer, RunPipeline(start_stage=PipelineStage.WAKE,
                                                  end_stage=PipelineStage.TTS).event())
        while True:
            if self.wake == "satellite":
                await write_event(writer, RunPipeline(start_stage=PipelineStage.ASR,
                                                      end_stage=PipelineStage.TTS).event())
            clip_start = time.monotonic()
            # Recorded before it is sent: a reply may come during the clip's silent tail.
            self.turns.append(FakeTurn(sent_end=clip_start + self.speech_end_s))
            for i in range(0, len(audio), step):
                await chunk(audio[i : i + step])
            until = clip_start + self.every_s
            while time.monotonic() < until:
                await chunk(silence)


def _encode(samples: np.ndarray, rate: int, width: int, channels: int) -> bytes:
    from wakeword.audio import resample

    pcm = resample(samples.astype(np.int16), 16000, rate) if rate != 16000 else samples
    pcm = pcm.astype(np.int16)
    if width == 1:
        data = ((pcm.astype(np.int32) >> 8) + 128).astype(np.uint8)
    elif width == 4:
        data = pcm.astype("<i4") << 16
    else:
        data = pcm.astype("<i2")
    return np.repeat(data[:, None], channels, axis=1).tobytes()


def _speech_end(clip: np.ndarray, threshold: int = 500) -> float:
    loud = np.nonzero(np.abs(clip.astype(np.int32)) > threshold)[0]
    return (int(loud[-1]) + 1) / 16000 if len(loud) else len(clip) / 16000


__all__ = ["AudioStop", "FakeSatellite", "FakeTurn", "RealSatellite", "free_port", "wait_port"]
