"""The microphone, through sounddevice (PortAudio).

The PortAudio callback runs on PortAudio's own thread and must never wait: it
copies the block into a queue, stamps the arrival time, and returns. Everything
else (down-mixing, resampling, inference) happens in the thread that iterates
`chunks()`.

The device is opened at 16 kHz mono when it offers that; otherwise at its own
rate and channel count, resampled and down-mixed here. When it vanishes
mid-run (unplugged, the sound server restarted) audio stops arriving: the
source notices, logs it, and reopens it with exponential backoff, reporting
`DeviceState` events (listening when audio first flows, lost, retrying,
restored) to whoever listens.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from mavend.config import AudioSettings
from mavend.errors import DeviceError
from wakeword.audio import RATE, StreamResampler, to_int16, to_mono
from wakeword.events import DeviceState
from wakeword.sources import AudioChunk

log = logging.getLogger(__name__)

QUEUE_BLOCKS = 64  # ~5 s of 80 ms blocks: room for a slow consumer, bounded memory
FIRST_AUDIO_S = 8.0  # PortAudio through PulseAudio delivers the first block after ~2 s
STALL_S = 2.0  # no audio for this long on an open stream: the device is gone
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 30.0
DOCTOR_HINT = "run `mavend doctor` to see what is missing"


@dataclass(frozen=True)
class StreamFormat:
    device: int
    name: str
    rate: int
    channels: int


def _sd():
    try:
        import sounddevice
    except OSError as exc:  # libportaudio2 is missing
        raise DeviceError(
            f"PortAudio is not installed ({exc}): sudo apt-get install libportaudio2; "
            + DOCTOR_HINT
        ) from exc
    return sounddevice


def refresh_devices() -> None:
    """Make PortAudio enumerate devices again (it lists them once, at initialisation).

    Needed after a sound server (re)starts; only safe with no stream open.
    """
    sd = _sd()
    try:
        sd._terminate()
    finally:
        sd._initialize()


def negotiate(device: str, want_rate: int = RATE) -> StreamFormat:
    """Pick the input device and the format to open it with; `DeviceError` if none."""
    sd = _sd()
    spec = device.strip()
    wanted: int | str | None = int(spec) if spec.isdigit() else (spec or None)
    try:
        info = sd.query_devices(wanted, kind="input")
    except (ValueError, sd.PortAudioError) as exc:
        which = f"input device {spec!r}" if spec else "default input device"
        raise DeviceError(f"no {which} ({exc}); {DOCTOR_HINT}") from exc
    index = int(info["index"])
    rates = [want_rate, int(info["default_samplerate"])]
    channels = [1, max(1, min(2, int(info["max_input_channels"])))]
    for rate in dict.fromkeys(rates):
        for count in dict.fromkeys(channels):
            try:
                sd.check_input_settings(index, channels=count, dtype="int16", samplerate=rate)
            except (ValueError, sd.PortAudioError):
                continue
            return StreamFormat(index, str(info["name"]), rate, count)
    raise DeviceError(
        f"input device {info['name']!r} accepts neither {want_rate} Hz nor its default "
        f"rate with 1 or 2 int16 channels; {DOCTOR_HINT}"
    )


class MicrophoneSource:
    """Live audio from an input device (`audio.device`: "" default, index, or name part)."""

    live = True

    def __init__(
        self,
        device: str = "",
        *,
        sample_rate: int = RATE,
        block_ms: int = 80,
        on_state: Callable[[DeviceState], None] | None = None,
        reconnect: bool = True,
    ):
        self.device = device
        self.sample_rate = sample_rate
        self.block_ms = block_ms
        self.on_state = on_state
        self.reconnect = reconnect
        self.name = f"microphone:{device or 'default'}"
        self.dropped_blocks = 0
        self.format: StreamFormat | None = None
        self._queue: queue.Queue[tuple[np.ndarray, float]] = queue.Queue(QUEUE_BLOCKS)
        self._stream = None
        self._finished = threading.Event()
        self._resampler: StreamResampler | None = None

    @classmethod
    def from_settings(cls, settings: AudioSettings, **kwargs) -> MicrophoneSource:
        return cls(
            settings.device, sample_rate=settings.sample_rate, block_ms=settings.block_ms,
            **kwargs,
        )

    # PortAudio's thread ------------------------------------------------------
    def _callback(self, indata, frames, time_info, status) -> None:
        # Copy and hand off; never block, never compute here.
        try:
            self._queue.put_nowait((indata.copy(), time.monotonic()))
        except queue.Full:
            self.dropped_blocks += 1

    def _on_finished(self) -> None:
        self._finished.set()

    # the consumer's thread ---------------------------------------------------
    def open(self) -> StreamFormat:
        """Open the device now: a `DeviceError` (pointing at `mavend doctor`) if it cannot."""
        if self._stream is not None:
            return self.format  # type: ignore[return-value]
        sd = _sd()
        refresh_devices()
        fmt = negotiate(self.device, self.sample_rate)
        self._drain()
        self._finished.clear()
        try:
            stream = sd.InputStream(
                device=fmt.device,
                samplerate=fmt.rate,
                channels=fmt.channels,
                dtype="int16",
                blocksize=max(1, fmt.rate * self.block_ms // 1000),
                callback=self._callback,
                finished_callback=self._on_finished,
            )
            stream.start()
        except (sd.PortAudioError, ValueError) as exc:
            raise DeviceError(
                f"cannot open input device {fmt.name!r} at {fmt.rate} Hz: {exc}; {DOCTOR_HINT}"
            ) from exc
        self._stream = stream
        self.format = fmt
        self._resampler = StreamResampler(fmt.rate, RATE) if fmt.rate != RATE else None
        if fmt.rate != RATE or fmt.channels != 1:
            log.info("input %r opened at %d Hz, %d ch: converting to 16 kHz mono",
                     fmt.name, fmt.rate, fmt.channels)
        else:
            log.info("input %r opened at 16 kHz mono", fmt.name)
        return fmt

    def close(self) -> None:
        stream, self._stream = self._stream, None
        if stream is None:
            return
        try:
            stream.abort()
            stream.close()
        except Exception as exc:  # a vanished device may fail to close: it is gone anyway
            log.debug("closing the input stream: %s", exc)

    def _drain(self) -> None:
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                return

    def chunks(self, stop: threading.Event) -> Iterator[AudioChunk]:
        self.open()
        opened = time.monotonic()
        last = None
        try:
            while not stop.is_set():
                try:
                    block, arrival = self._queue.get(timeout=0.1)
                except queue.Empty:
                    if self._stalled(opened, last):
                        if not self.reconnect:
                            raise DeviceError(f"input device stopped delivering audio; "
                                              f"{DOCTOR_HINT}") from None
                        if not self._reopen(stop):
                            return
                        opened, last = time.monotonic(), None
                    continue
                if last is None:  # audio flows: tell whoever waits for the microphone
                    self._emit(DeviceState("listening", self.format.name if self.format else ""))
                last = arrival
                samples = to_int16(to_mono(block))
                if self._resampler is not None:
                    samples = self._resampler.push(samples)
                if len(samples):
                    yield AudioChunk(samples, arrival)
        finally:
            self.close()

    def _stalled(self, opened: float, last: float | None) -> bool:
        now = time.monotonic()
        if self._finished.is_set():
            return True
        if last is None:
            return now - opened > FIRST_AUDIO_S
        return now - last > STALL_S

    def _reopen(self, stop: threading.Event) -> bool:
        """Reopen the device with exponential backoff; False if asked to stop first."""
        name = self.format.name if self.format else self.device or "default"
        log.warning("input device %r stopped delivering audio: reconnecting", name)
        self._emit(DeviceState("lost", name, "no audio from the device"))
        self.close()
        delay = BACKOFF_FIRST_S
        while not stop.is_set():
            try:
                fmt = self.open()
            except DeviceError as exc:
                log.warning("reconnecting to the input device failed (%s); retry in %.1f s",
                            exc, delay)
                self._emit(DeviceState("retrying", name, f"{exc}; next try in {delay:.1f} s"))
                if stop.wait(delay):
                    return False
                delay = min(delay * 2, BACKOFF_MAX_S)
                continue
            log.warning("input device %r is back", fmt.name)
            self._emit(DeviceState("restored", fmt.name))
            return True
        return False

    def _emit(self, state: DeviceState) -> None:
        if self.on_state is not None:
            self.on_state(state)
