"""The real sounddevice path: a private PulseAudio's null sink is the default input.

A WAV is played into it with `paplay` while mavend listens on the default
input device, through PortAudio and ALSA's pulse plugin, as on a desktop.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mavend.config import Settings
from mavend.errors import DeviceError
from tests.audio_fixtures import command_clip, write_wav
from tests.conftest import require_model
from tests.pulse import Pulse, pulse_source  # noqa: F401
from tests.test_wakeword_cli import LAUNCHER
from wakeword import DeviceState, EventQueue, FrontEnd, MicrophoneSource, Transcript

pytestmark = pytest.mark.models


@pytest.fixture
def lock_wav(tmp_path: Path) -> Path:
    for name in ("openwakeword", "silero-vad", "whisper-tiny.en"):
        require_model(name)
    return write_wav(tmp_path / "lock.wav",
                     command_clip("lock the screen", voice="en-us+f3", speed=175))


def wait_for(events: EventQueue, kind, timeout: float, **fields):
    """The next event of `kind` (with `fields`), skipping others; fail after `timeout`."""
    deadline = time.monotonic() + timeout
    seen = []
    while (left := deadline - time.monotonic()) > 0:
        try:
            event = events.get(timeout=left)
        except queue.Empty:
            break
        seen.append(event)
        if isinstance(event, kind) and all(getattr(event, k) == v for k, v in fields.items()):
            return event
    pytest.fail(f"no {kind.__name__} {fields} within {timeout} s; saw {seen}")


def test_mavend_listen_hears_a_wav_played_into_the_default_input(
    pulse_source: Pulse, lock_wav: Path  # noqa: F811
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, "listen", "--json", "--no-act", "--no-llm"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in process.stdout], daemon=True).start()
    seen = []
    try:
        deadline = time.monotonic() + 90
        played = False
        decision = None
        while decision is None and time.monotonic() < deadline:
            try:
                event = json.loads(lines.get(timeout=1))
            except queue.Empty:
                assert process.poll() is None, process.stderr.read()
                continue
            seen.append(event)
            if event["event"] == "device" and event["state"] == "listening" and not played:
                pulse_source.play(lock_wav).wait(30)  # audio flows: speak
                played = True
            elif event["event"] == "decision":
                decision = event
    finally:
        process.terminate()
        process.wait(10)
    assert decision is not None, (seen, process.stderr.read())
    # A partial transcript comes when the speaker pauses 300 ms mid-utterance;
    # whether the recording's pauses reach that depends on how fast the box
    # decodes, so one may come, between the wake and the final transcript.
    kinds = [e["event"] for e in seen if e["event"] != "device"]
    assert kinds in (["wake", "transcript", "decision"],
                     ["wake", "partial", "transcript", "decision"]), kinds
    assert (decision["intent"], decision["slots"]["fn"]) == ("act", "lock_screen")


def test_the_microphone_comes_back_after_the_sound_server_restarts(
    pulse_source: Pulse, lock_wav: Path  # noqa: F811
) -> None:
    events = EventQueue()
    front = FrontEnd.from_settings(Settings(), sink=events)
    front.start(MicrophoneSource("", on_state=events))
    try:
        wait_for(events, DeviceState, 30, state="listening")
        pulse_source.kill()  # the device vanishes mid-run
        wait_for(events, DeviceState, 30, state="lost")
        pulse_source.start()
        wait_for(events, DeviceState, 60, state="restored")
        wait_for(events, DeviceState, 30, state="listening")
        pulse_source.play(lock_wav).wait(30)
        transcript = wait_for(events, Transcript, 30)
        assert "screen" in transcript.text.lower()
    finally:
        front.close()


def test_a_named_device_that_does_not_exist_is_a_device_error(
    pulse_source: Pulse,  # noqa: F811
) -> None:
    with pytest.raises(DeviceError, match="mavend doctor"):
        MicrophoneSource("no-such-microphone").open()
