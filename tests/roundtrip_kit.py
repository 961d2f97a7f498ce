"""A whole spoken round trip, for real: one private PulseAudio, two null sinks.

    vsink  the microphone: WAVs are played into it (`paplay -d vsink`); its monitor is
           the default source, so `mavend run` hears them.
    spk    the speaker: the default sink, so mavend's replies (sounddevice -> PortAudio
           -> ALSA's pulse plugin) play into it; its monitor is recorded.

The two never meet: mavend cannot hear itself. `mavend run` is a real subprocess
(its own /proc/<pid>/stat, its own log). Both monitors are recorded with `parec`
and every sample gets a time on the monotonic clock: each read from the pipe is
stamped when it arrives, and the stream's offset is the smallest
(arrival - samples so far / rate) seen, i.e. its least-delayed delivery. End of
speech is the last loud sample on the microphone's monitor; first reply audio the
first loud 10 ms block on the speaker's.

Used by tests/test_roundtrip.py and bench/conversation_bench.py.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tests.pulse import SINK, Pulse, _need

RATE = 16000
SPEAKER = "spk"
LOUD_MIC = 200  # int16: what audio_fixtures.trim calls speech (espeak's padding is 0)
LOUD_OUT = 0.01  # float: a 10 ms block above this on the speaker's monitor is sound
BLOCK = RATE // 100  # 10 ms

ROOT = Path(__file__).resolve().parent.parent


class Capture:
    """`parec` of one source, 16 kHz mono int16, every sample placed on the monotonic clock."""

    def __init__(self, pulse: Pulse, source: str):
        self.source = source
        self._data = bytearray()
        self._lock = threading.Lock()
        self._offset = float("inf")  # monotonic time of sample 0 (least-delayed estimate)
        self.proc = subprocess.Popen(
            [_need("parec", "pulseaudio-utils"), "-d", source, "--format=s16le",
             f"--rate={RATE}", "--channels=1", "--latency-msec=10"],
            env=pulse.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        self._reader = threading.Thread(target=self._read, name=f"parec-{source}", daemon=True)
        self._reader.start()
        deadline = time.monotonic() + 10
        while not self._data and time.monotonic() < deadline:
            time.sleep(0.02)
        if not self._data:
            raise RuntimeError(f"parec delivered nothing from {source}")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while chunk := os.read(fd, 4096):
            now = time.monotonic()
            with self._lock:
                self._data += chunk
                self._offset = min(self._offset, now - (len(self._data) // 2) / RATE)

    def samples(self) -> np.ndarray:
        with self._lock:
            data = bytes(self._data[: len(self._data) // 2 * 2])
        return np.frombuffer(data, dtype="<i2")

    def time_at(self, index: int) -> float:
        return self._offset + index / RATE

    def index_at(self, t: float) -> int:
        return max(0, round((t - self._offset) * RATE))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._reader.join(5)


def loud_blocks(samples: np.ndarray, threshold: float = LOUD_OUT) -> np.ndarray:
    """Indices (in samples) of the 10 ms blocks whose peak is above `threshold`."""
    n = len(samples) // BLOCK
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    peaks = np.abs(samples[: n * BLOCK].astype(np.float32) / 32768.0).reshape(n, BLOCK).max(1)
    return np.flatnonzero(peaks > threshold) * BLOCK


@dataclass
class Burst:
    """One stretch of sound on the speaker: [start, end] on the monotonic clock."""

    start: float
    end: float
    audio: np.ndarray  # float32, 16 kHz


def bursts(capture: Capture, since: float, gap_s: float = 0.8) -> list[Burst]:
    """The sounds on `capture` after `since`, split where it was quiet for `gap_s`."""
    first = capture.index_at(since)
    samples = capture.samples()[first:]
    loud = loud_blocks(samples)
    out: list[Burst] = []
    if loud.size == 0:
        return out
    splits = np.flatnonzero(np.diff(loud) > gap_s * RATE) + 1
    for run in np.split(loud, splits):
        a, b = int(run[0]), int(run[-1]) + BLOCK
        out.append(Burst(capture.time_at(first + a), capture.time_at(first + b),
                         samples[a:b].astype(np.float32) / 32768.0))
    return out


def end_of_speech(capture: Capture, since: float, until: float) -> float | None:
    """The time of the last speech sample played into the microphone in [since, until]."""
    a, b = capture.index_at(since), capture.index_at(until)
    window = capture.samples()[a:b]
    loud = np.flatnonzero(np.abs(window.astype(np.int32)) > LOUD_MIC)
    return None if loud.size == 0 else capture.time_at(a + int(loud[-1]))


class CpuSampler:
    """utime + stime of a process from /proc/<pid>/stat, sampled every `every_s`."""

    def __init__(self, pid: int, every_s: float = 0.02):
        self.pid = pid
        self.every_s = every_s
        self.samples: list[tuple[float, float]] = []  # (monotonic, CPU seconds)
        self._tick = os.sysconf("SC_CLK_TCK")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)
        self._thread.start()

    def cpu_s(self) -> float:
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self._tick  # utime, stime

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.samples.append((time.monotonic(), self.cpu_s()))
            except (OSError, IndexError, ValueError):
                return
            self._stop.wait(self.every_s)

    def between(self, start: float, end: float) -> float | None:
        """CPU seconds / wall seconds over [start, end] (1.0 = one core busy)."""
        before = [s for s in self.samples if s[0] <= start]
        after = [s for s in self.samples if s[0] >= end]
        if not before or not after or after[0][0] - before[-1][0] <= 0:
            return None
        (t0, c0), (t1, c1) = before[-1], after[0]
        return (c1 - c0) / (t1 - t0)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)


@dataclass
class Daemon:
    """`mavend -v run` as a subprocess, with its own config, data dir and log."""

    config: str
    home: Path
    pulse: Pulse
    proc: subprocess.Popen | None = None
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.log = self.home / "mavend.log"

    def start(self, timeout: float = 240) -> Daemon:
        cfg = self.home / "config.toml"
        cfg.write_text(self.config)
        env = {
            **self.pulse.env,
            "MAVEND_CONFIG_DIR": str(self.home / "config"),
            "MAVEND_DATA_DIR": str(self.home / "data"),
            "XDG_DATA_HOME": str(self.home / "xdg-data"),
            "PYTHONUNBUFFERED": "1",
        }
        for name in ("JOURNAL_STREAM", "DBUS_SESSION_BUS_ADDRESS", "NOTIFY_SOCKET"):
            env.pop(name, None)
        with open(self.log, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "mavend", "--config", str(cfg), "-v", "run"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env,
                cwd=ROOT,
            )
        # Ready: it says so, and its microphone stream is open on the private server.
        self.wait(lambda: "mavend is running" in self.text() and self._recording(), timeout,
                  "the daemon to start listening")
        return self

    def _recording(self) -> bool:
        return bool(self.pulse.pactl("list", "short", "source-outputs").stdout.strip())

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait(self, condition: Callable[[], object], timeout: float, what: str) -> object:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"mavend exited ({self.proc.returncode}) waiting for "
                                     f"{what}:\n{self.text()[-3000:]}")
            if value := condition():
                return value
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}:\n{self.text()[-3000:]}")

    def stop(self) -> int | None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return None if proc is None else proc.returncode
        proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait(5)


class Rig:
    """The private sound server with both sinks; the daemon; both recordings."""

    def __init__(self, home: Path):
        self.home = home
        self.runtime = Path(tempfile.mkdtemp(prefix="mavend-rt-"))  # short: a socket path
        self.pulse = Pulse(runtime_dir=self.runtime, log=home / "pulseaudio.log")
        self.daemon: Daemon | None = None
        self.mic: Capture | None = None
        self.out: Capture | None = None

    def start(self, config: str) -> Rig:
        self.home.mkdir(parents=True, exist_ok=True)
        self.pulse.start()  # vsink, its monitor the default source
        self.pulse.pactl("load-module", "module-null-sink", f"sink_name={SPEAKER}",
                         "rate=24000", "channels=1")
        self.pulse.pactl("set-default-sink", SPEAKER)
        self.daemon = Daemon(config, self.home, self.pulse).start()
        # Recorders only now: the daemon's readiness is its own source-output appearing.
        self.mic = Capture(self.pulse, f"{SINK}.monitor")
        self.out = Capture(self.pulse, f"{SPEAKER}.monitor")
        return self

    def play(self, wav: Path) -> subprocess.Popen:
        """Say `wav` into the microphone (returns at once)."""
        return self.pulse.play(wav)

    def wait_reply(self, since: float, timeout: float, quiet_s: float = 1.2,
                   count: int = 1, min_s: float = 0.6) -> list[Burst]:
        """Wait until `count` sounds of at least `min_s` (speech, not a 0.17 s earcon)
        have played on the speaker after `since`, then `quiet_s` of silence; all the
        sounds since (earcons included), or what there was at the deadline."""
        assert self.out is not None
        deadline = time.monotonic() + timeout
        found: list[Burst] = []
        while time.monotonic() < deadline:
            found = bursts(self.out, since)
            long = [b for b in found if b.end - b.start >= min_s]
            if len(long) >= count and time.monotonic() - found[-1].end >= quiet_s:
                return found
            time.sleep(0.1)
        return found

    def stop(self) -> None:
        for capture in (self.mic, self.out):
            if capture is not None:
                capture.stop()
        if self.daemon is not None:
            self.daemon.stop()
        self.pulse.stop()
        shutil.rmtree(self.runtime, ignore_errors=True)


def load_whisper(model_dir: Path):
    from faster_whisper import WhisperModel

    return WhisperModel(str(model_dir), device="cpu", compute_type="int8", cpu_threads=2)


def transcribe(whisper, audio: np.ndarray) -> str:
    segments, _ = whisper.transcribe(audio.astype(np.float32), language="en", beam_size=1)
    return " ".join(s.text.strip() for s in segments).lower()
