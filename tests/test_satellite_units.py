"""Satellites, the parts that need no audio models: the config, the audio formats, the
reminder's origin, fair turns, and the `mavend satellites` table."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from mavend.cli.satellites import table
from mavend.config import NotificationSettings, SatelliteSpec, Settings
from mavend.daemon.lifecycle import Daemon, DaemonOptions
from mavend.handlers.common import TurnContext
from mavend.system import unit
from mavend.wyoming.satellite_audio import AudioFormat, AudioRefused, Converter, reply_payloads
from tests.state_kit import kit_router, kit_settings, make_assistant, real_clock


# config ----------------------------------------------------------------------------------
def test_a_satellite_entry_is_checked_and_its_host_opens_ip_in_the_unit() -> None:
    settings = Settings(satellites=(
        SatelliteSpec(uri="tcp://192.168.1.31:10700", name="kitchen", room="kitchen"),
        SatelliteSpec(uri="tcp://sat.example.org:10700", name="study", allow_remote=True),
    ))
    assert unit.configured_hosts(settings) == ("192.168.1.31", "sat.example.org")
    assert settings.satellites[0].snd_rate == 22050


@pytest.mark.parametrize(("values", "says"), [
    ({"uri": "tcp://8.8.8.8:10700", "name": "x"}, "not a loopback or private address"),
    ({"uri": "http://10.0.0.2:10700", "name": "x"}, "tcp://host:port"),
    ({"uri": "tcp://10.0.0.2", "name": "x"}, "tcp://host:port"),
    ({"uri": "tcp://10.0.0.2:10700", "name": "Kitchen!"}, "pattern"),
    ({"uri": "tcp://10.0.0.2:10700", "name": "x", "room": "Big Room"}, "pattern"),
])
def test_a_bad_satellite_entry_is_refused_with_the_reason(values: dict, says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        SatelliteSpec(**values)


def test_two_satellites_cannot_share_a_name() -> None:
    spec = SatelliteSpec(uri="tcp://127.0.0.1:10700", name="kitchen")
    with pytest.raises(ValidationError, match="kitchen twice"):
        Settings(satellites=(spec, spec))


# audio -------------------------------------------------------------------------------------
def test_wide_fast_stereo_audio_is_converted_to_16_khz_mono_16_bit() -> None:
    t = np.arange(48000) / 48000
    tone = (0.5 * np.sin(2 * np.pi * 440 * t) * 2**31).astype("<i4")
    stereo = np.stack([tone, tone], axis=1).tobytes()
    converter = Converter(AudioFormat.of({"rate": 48000, "width": 4, "channels": 2}))
    pieces = [stereo[i : i + 3001] for i in range(0, len(stereo), 3001)]
    out = np.concatenate([converter.push(piece) for piece in pieces])
    assert out.dtype == np.int16 and abs(len(out) - 16000) < 64  # a second, in odd-sized pieces
    assert 0.3 < np.abs(out[1000:15000]).max() / 32768 < 0.55
    spectrum = np.abs(np.fft.rfft(out[:16000 // 2 * 2].astype(float)))
    assert abs(np.argmax(spectrum) * 16000 / len(out[:16000 // 2 * 2]) - 440) < 5


@pytest.mark.parametrize("data", [
    {"rate": 16000, "width": 3, "channels": 1},
    {"rate": 4000, "width": 2, "channels": 1},
    {"rate": 16000, "width": 2, "channels": 0},
    {"rate": "16000", "width": 2, "channels": 1},
    {"width": 2, "channels": 1},
    {"rate": True, "width": 2, "channels": 1},
])
def test_a_format_mavend_cannot_use_is_refused(data: dict) -> None:
    with pytest.raises(AudioRefused):
        AudioFormat.of(data)


def test_the_reply_is_resampled_to_the_satellites_sound_rate() -> None:
    second = np.zeros(24000, np.float32)
    payloads = reply_payloads(second, 24000, 22050)
    assert sum(len(p) for p in payloads) == 2 * 22050
    assert all(len(p) == 4096 for p in payloads[:-1])


# the reminder's origin -----------------------------------------------------------------------
def test_a_reminder_set_on_a_satellite_remembers_it_and_a_local_one_does_not(
    tmp_path: Path,
) -> None:
    assistant = make_assistant(kit_settings(tmp_path))
    assistant.handle_text("set a timer for ten minutes", session="satellite:study",
                          context=TurnContext(room="study", satellite="study"))
    assistant.handle_text("set a timer for five minutes")
    book = assistant.ctx.reminders
    assert [(r.text, r.origin) for r in book.list()] == [
        ("timer for 5 minutes", None), ("timer for 10 minutes", "study")]
    assert book.list()[1].to_json()["origin"] == "study"


# fair turns ----------------------------------------------------------------------------------
class SlowRouter:
    """The kit's router, each route taking `delay_s` (a busy LLM)."""

    def __init__(self, inner, delay_s: float):
        self.inner, self.delay_s = inner, delay_s
        self.order: list[str] = []
        self.busy = threading.Lock()

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def route(self, text: str, **kwargs):
        assert self.busy.acquire(blocking=False), "two turns routed at once"
        try:
            self.order.append(text)
            time.sleep(self.delay_s)
            return self.inner.route(text, **kwargs)
        finally:
            self.busy.release()


def test_turns_from_several_rooms_queue_first_come_first_served(tmp_path: Path) -> None:
    settings = kit_settings(tmp_path, notifications=NotificationSettings(enabled=False))
    router = SlowRouter(kit_router(settings, real_clock()), delay_s=0.2)
    daemon = Daemon(settings, router=router,
                    options=DaemonOptions(stdin_turns=False, dbus_api=False,
                                          notify_replies=False))
    rooms = ["kitchen", "study", "bedroom", "hall"]
    said = [f"remember that the {room} window is {n}" for n in range(3) for room in rooms]

    async def scenario() -> list[float]:
        await daemon.start()
        try:
            waits: list[float] = []

            async def turn(i: int, text: str) -> None:
                await asyncio.sleep(0.01 * i)  # arrival order: the list's
                started = time.monotonic()
                await daemon.submit_text(text, notify=False, session=f"satellite:{i % 4}",
                                         context=TurnContext(room=rooms[i % 4]))
                waits.append(time.monotonic() - started)

            await asyncio.gather(*(turn(i, text) for i, text in enumerate(said)))
            return waits
        finally:
            await daemon.stop()

    waits = asyncio.run(scenario())
    assert [t.removeprefix("remember that ") for t in router.order] == [
        t.removeprefix("remember that ") for t in said]
    # FIFO: the last of twelve waited for the eleven before it, and no longer.
    assert max(waits) < 12 * 0.2 + 1.0


# the table -------------------------------------------------------------------------------------
def test_the_satellites_table_shows_state_and_the_last_error() -> None:
    lines = table([
        {"name": "kitchen", "uri": "tcp://10.0.0.5:10700", "room": "kitchen",
         "state": "streaming", "turns": 3, "last_error": "", "connected_since": time.time() - 30},
        {"name": "study", "uri": "tcp://10.0.0.6:10700", "room": "", "state": "failed",
         "turns": 0, "last_error": "cannot connect: Connection refused"},
    ])
    assert lines[1].split()[:6] == ["kitchen", "tcp://10.0.0.5:10700", "kitchen", "streaming",
                                     "30s", "3"]
    assert lines[2].split()[:5] == ["study", "tcp://10.0.0.6:10700", "-", "failed", "0"]
    assert lines[2].endswith("cannot connect: Connection refused")


def test_the_example_configs_commented_satellite_parses() -> None:
    from mavend.config import parse_settings

    text = (Path(__file__).resolve().parent.parent / "config.example.toml").read_text()
    start = text.index("# [[satellites]]")
    block = []
    for line in text[start:].splitlines():
        if not line.startswith("# "):
            break
        block.append(line[2:])
    settings = parse_settings("\n".join(block) + "\n", "config.example.toml")
    assert [(s.name, s.room, s.snd_rate) for s in settings.satellites] == [
        ("kitchen", "kitchen", 22050)]
