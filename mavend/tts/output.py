"""Playback through sounddevice: the default output device or `[tts] device`.

One `OutputStream` per reply (opened when its first audio is ready, closed after its
last): a device that appears later is used, and nothing holds the sound card while
mavend is quiet. Blocking writes, from the speaker's playback thread only.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from mavend.errors import DeviceError

log = logging.getLogger(__name__)


def _sd() -> Any:
    try:
        import sounddevice
    except OSError as exc:  # libportaudio2 missing
        raise DeviceError(
            f"PortAudio is not installed ({exc}): apt-get install libportaudio2"
        ) from exc
    return sounddevice


def find_output(device: str = "") -> tuple[int, int]:
    """(device index, its default rate) or DeviceError: no output device."""
    sd = _sd()
    wanted: int | str | None = int(device) if device.isdigit() else (device or None)
    try:
        info = sd.query_devices(wanted, kind="output")
    except (ValueError, sd.PortAudioError) as exc:
        which = f"output device {device!r}" if device else "default output device"
        raise DeviceError(f"no {which} ({exc})") from exc
    return int(info["index"]), int(info["default_samplerate"])


class Output:
    """An open output stream at `rate` (falling back to the device's own rate)."""

    def __init__(self, device: str, rate: int):
        sd = _sd()
        index, native = find_output(device)
        self.rate = rate
        self.stream: Any = None
        for candidate in dict.fromkeys((rate, native)):
            try:
                self.stream = sd.OutputStream(
                    device=index, samplerate=candidate, channels=1, dtype="float32"
                )
                self.rate = candidate
                break
            except sd.PortAudioError as exc:
                error = exc
        if self.stream is None:
            raise DeviceError(f"cannot open the output device: {error}")
        # Seconds from a write to the sound (as PortAudio estimates it): the echo
        # reference times what the microphone will hear with it.
        self.latency = float(getattr(self.stream, "latency", 0.0) or 0.0)
        self.stream.start()

    def write(self, audio: np.ndarray, rate: int) -> bool:
        """Play `audio` (mono float32 at `rate`); returns when it is queued: True if the
        stream had run dry before it (PortAudio inserted silence: an underflow).
        DeviceError when the device is gone."""
        from mavend.tts.audio import resample

        sd = _sd()
        data = resample(audio, rate, self.rate).reshape(-1, 1)
        try:
            return bool(self.stream.write(np.ascontiguousarray(data, dtype=np.float32)))
        except (sd.PortAudioError, OSError) as exc:
            raise DeviceError(f"the output device failed: {exc}") from exc

    def close(self, *, drain: bool = True) -> None:
        stream, self.stream = self.stream, None
        if stream is None:
            return
        try:
            if drain:
                stream.stop()  # plays what was written, then stops
            else:
                stream.abort()
        except Exception as exc:  # closing a vanished device: nothing left to do
            log.debug("closing the output stream: %s", exc)
        finally:
            try:
                stream.close()
            except Exception as exc:
                log.debug("closing the output stream: %s", exc)
