"""Mavend against the real wyoming-satellite (PyPI 1.0.0, in .venv-satellite).

The satellite runs as a subprocess on 127.0.0.1 with `--mic-command` playing espeak-ng
speech at real-time pace and `--snd-command` appending what it is sent to a file (it
converts mavend's audio to its --snd-command-rate, 22050 Hz, itself). No --wake-uri:
the satellite streams all the time and mavend's wake word runs on the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from mavend.config import NotificationSettings, SatelliteSpec, Settings, SttSettings
from mavend.daemon.lifecycle import Daemon, DaemonOptions
from mavend.scheduler import Status
from tests.audio_fixtures import command_clip
from tests.satellite_kit import RealSatellite
from tests.state_kit import kit_router, kit_settings, real_clock

pytestmark = pytest.mark.usefixtures("audio_models")


@pytest.fixture
def audio_models() -> None:
    from mavend.models import require

    settings = Settings()
    for name in ("whisper-tiny.en", "silero-vad", "hibari-heart"):
        require(name, settings.models.models_path())  # fails naming `mavend models pull`


def satellite_settings(
    tmp_path: Path, *satellites: RealSatellite, rooms: dict[str, str]
) -> Settings:
    specs = tuple(SatelliteSpec(uri=s.uri, name=s.name, room=rooms[s.name]) for s in satellites)
    return kit_settings(tmp_path, satellites=specs,
                        notifications=NotificationSettings(enabled=False))


@contextlib.asynccontextmanager
async def serving(settings: Settings) -> AsyncIterator[Daemon]:
    daemon = Daemon(
        settings,
        router=kit_router(settings, real_clock()),
        options=DaemonOptions(stdin_turns=False, notify_replies=False, dbus_api=False,
                              poll_s=0.5),
    )
    await daemon.start()
    try:
        yield daemon
    finally:
        await daemon.stop()


async def until(condition: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def state(daemon: Daemon, name: str) -> str:
    return daemon.satellites.links[name].status.state.value


def reminders(daemon: Daemon) -> list:
    assert daemon.scheduler is not None
    return daemon.scheduler.book.list(statuses=None)


@functools.cache
def whisper() -> Any:
    from wakeword.stt import SpeechToText

    return SpeechToText.from_settings(SttSettings(), Settings().models.models_path())


def transcribe(audio) -> str:
    """faster-whisper tiny.en (the model cache's) on what the satellite played."""
    return whisper().transcribe(audio).text.lower() if len(audio) else ""


def test_a_spoken_timer_from_a_satellite_is_set_fires_and_is_announced_there(
    tmp_path: Path,
) -> None:
    study = RealSatellite("study", tmp_path, command_clip("set a timer for five seconds"))

    async def scenario() -> None:
        study.start()
        try:
            async with serving(satellite_settings(tmp_path, study,
                                                  rooms={"study": "study"})) as daemon:
                await until(lambda: state(daemon, "study") == "streaming", 30,
                            "the satellite to stream")
                study.go()
                saved = await until(lambda: reminders(daemon), 30, "the timer to be saved")
                assert saved[0].kind == "timer" and saved[0].origin == "study"
                # The reply ("Timer set for 5 seconds ...") arrives on the satellite.
                await until(lambda: study.snd_path.exists() and study.snd_path.stat().st_size
                            > 22050, 20, "the reply's audio in the satellite's snd file")
                await until(lambda: reminders(daemon)[0].status is not Status.PENDING, 30,
                            "the timer to fire")
                # The announcement ("Reminder: ...") follows the reply in the snd file.
                await until(lambda: "reminder" in transcribe(study.snd_audio()), 30,
                            "the announcement's audio in the satellite's snd file")
        finally:
            study.stop()

    asyncio.run(scenario())
    heard = transcribe(study.snd_audio())
    # The reply ("Timer set for 5 seconds, until ...": Whisper tiny sometimes writes
    # "timor"), then the announcement.
    assert "set for" in heard, heard
    assert heard.count("reminder") == 1, heard


def test_a_second_satellite_keeps_working_while_the_first_is_killed_and_restarted(
    tmp_path: Path,
) -> None:
    kitchen = RealSatellite("kitchen", tmp_path, command_clip("set a timer for two minutes"))
    study = RealSatellite("study", tmp_path, command_clip("set a timer for three minutes"))

    async def scenario() -> None:
        kitchen.start()
        study.start()
        try:
            settings = satellite_settings(tmp_path, kitchen, study,
                                          rooms={"kitchen": "kitchen", "study": "study"})
            async with serving(settings) as daemon:
                for name in ("kitchen", "study"):
                    await until(lambda n=name: state(daemon, n) == "streaming", 30,
                                f"{name} to stream")
                kitchen.stop()  # killed: its link fails and retries with backoff
                await until(lambda: state(daemon, "kitchen") in ("failed", "connecting"), 10,
                            "the kitchen link to notice")
                study.go()
                saved = await until(lambda: reminders(daemon), 30, "the study's timer")
                assert [(r.origin, r.kind) for r in saved] == [("study", "timer")]
                assert abs((saved[0].fire_at - saved[0].created_at).total_seconds() - 180) < 10
                status = {s["name"]: s for s in await daemon.satellites_status()}
                assert status["kitchen"]["state"] in ("failed", "connecting")
                assert status["kitchen"]["last_error"]
                assert status["study"]["turns"] == 1
                kitchen.start()  # back on the same port: the link reconnects by itself
                await until(lambda: state(daemon, "kitchen") == "streaming", 30,
                            "the kitchen to reconnect")
                kitchen.go()
                both = await until(lambda: len(reminders(daemon)) == 2 and reminders(daemon),
                                   30, "the kitchen's timer")
                lengths = {r.origin: round((r.fire_at - r.created_at).total_seconds() / 60)
                           for r in both}
                assert lengths == {"study": 3, "kitchen": 2}
        finally:
            kitchen.stop()
            study.stop()

    asyncio.run(scenario())
