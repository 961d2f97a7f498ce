"""SIGHUP and the daemon's voices in other rooms (mavend/daemon/remote.py), on the real
daemon: real Whisper, wake word and VAD models for the satellites, real sockets.

A reload that leaves `[[satellites]]` and `[wyoming]` as they were keeps their
connections; one that adds, removes or changes them reconnects them with the new
settings; one that names a model that cannot load changes nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info

from mavend.config import Settings, WyomingSettings
from mavend.daemon.reload import Changes
from tests.satellite_kit import FakeSatellite, free_port
from tests.test_satellite_faults import TIMER, good_turn_answered, run, settings_for, until
from tests.test_satellite_faults import serving as serving_satellites
from tests.test_wyoming_server import serving as serving_wyoming
from tests.test_wyoming_server import wyoming_settings


def reload_with(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> None:
    """The config file SIGHUP re-reads now says `settings`."""
    monkeypatch.setattr("mavend.config.load_settings", lambda path=None: settings)


def test_sighup_keeps_unchanged_satellites_connected_and_reconnects_changed_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        kitchen = await FakeSatellite("kitchen", TIMER, every_s=600).start()
        hall = await FakeSatellite("hall", TIMER, every_s=600).start()
        settings = settings_for(tmp_path, kitchen=kitchen.uri)
        async with serving_satellites(settings) as daemon:
            await good_turn_answered(kitchen)
            first = daemon.satellites

            # Another notification setting; the satellites as they were: nobody reconnects.
            other = dataclasses.replace(settings, notifications=dataclasses.replace(
                settings.notifications, retry_s=settings.notifications.retry_s + 1))
            reload_with(monkeypatch, other)
            assert await daemon.reload()
            assert daemon.satellites is first and kitchen.connections == 1
            assert first.grammar is daemon.router.grammar  # new front ends: the new grammar

            # A second satellite: it connects, and its turn is answered.
            both = settings_for(tmp_path, kitchen=kitchen.uri, hall=hall.uri)
            reload_with(monkeypatch, both)
            assert await daemon.reload()
            assert daemon.satellites is not first
            assert set(daemon.satellites.links) == {"kitchen", "hall"}
            await good_turn_answered(hall)
            await until(lambda: kitchen.connections == 2, 20, "the kitchen to reconnect")

            # The kitchen taken out: its service stops, the hall goes on.
            reload_with(monkeypatch, settings_for(tmp_path, hall=hall.uri))
            assert await daemon.reload()
            assert set(daemon.satellites.links) == {"hall"}
            assert "satellite:kitchen" not in daemon.supervisor.running
            assert "satellite:hall" in daemon.supervisor.running
            assert [s["name"] for s in await daemon.satellites_status()] == ["hall"]
            await asyncio.sleep(1.0)
            assert kitchen.connections == 2  # not connected again

            # A wake model that cannot load: the reload fails, the hall stays connected.
            kept = daemon.satellites
            broken = dataclasses.replace(
                settings_for(tmp_path, hall=hall.uri),
                wakeword=dataclasses.replace(settings.wakeword,
                                             model=str(tmp_path / "missing.onnx")),
            )
            reload_with(monkeypatch, broken)
            assert not await daemon.reload()
            assert daemon.satellites is kept
            assert "satellite:hall" in daemon.supervisor.running

            # No satellites at all.
            reload_with(monkeypatch, dataclasses.replace(settings, satellites=()))
            assert await daemon.reload()
            assert daemon.satellites is None
            assert not [n for n in daemon.supervisor.running if n.startswith("satellite:")]
        for fake in (kitchen, hall):
            await fake.close()

    run(scenario)


async def describe(port: int) -> Info:
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Describe().event())
        event = await asyncio.wait_for(client.read_event(), 30)
    assert event is not None and Info.is_type(event.type), event
    return Info.from_event(event)


def test_sighup_restarts_the_wyoming_server_only_when_its_settings_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        settings = wyoming_settings(tmp_path)
        async with serving_wyoming(settings) as (daemon, port):
            server = daemon.wyoming
            assert (await describe(port)).handle

            reload_with(monkeypatch, settings)
            assert await daemon.reload()
            assert daemon.wyoming is server and (await describe(port)).handle

            moved = free_port()
            reload_with(monkeypatch, dataclasses.replace(
                settings, wyoming=WyomingSettings(listen=f"tcp://127.0.0.1:{moved}")))
            assert await daemon.reload()
            assert daemon.wyoming is not server
            await asyncio.wait_for(daemon.wyoming.ready.wait(), 30)
            assert daemon.wyoming.port == moved and (await describe(moved)).handle
            with pytest.raises(OSError):  # the old port is closed
                await describe(port)

            reload_with(monkeypatch, dataclasses.replace(settings, wyoming=WyomingSettings()))
            assert await daemon.reload()
            assert daemon.wyoming is None and "wyoming" not in daemon.supervisor.running
            with pytest.raises(OSError):
                await describe(moved)

    run(scenario)


def test_what_a_reload_restarts_follows_what_changed(tmp_path: Path) -> None:
    base = settings_for(tmp_path, kitchen="tcp://127.0.0.1:10700")
    replace = dataclasses.replace
    assert Changes.between(base, base) == Changes(False, False, False, False)
    # The voice: the speaker, the satellites (their replies) and the Wyoming server.
    louder = replace(base, tts=replace(base.tts, volume=0.5))
    assert Changes.between(base, louder) == Changes(True, False, True, True)
    # Earcons: only this box's speaker plays them.
    chimes = replace(base, earcons=replace(base.earcons, enabled=not base.earcons.enabled))
    assert Changes.between(base, chimes) == Changes(True, False, False, False)
    # The wake word's threshold: every front end, the satellites' too.
    keen = replace(base, wakeword=replace(base.wakeword, threshold=0.4))
    assert Changes.between(base, keen) == Changes(False, True, True, False)
    hall = settings_for(tmp_path, hall="tcp://127.0.0.1:10701")
    assert Changes.between(base, hall) == Changes(False, False, True, False)
    served = replace(base, wyoming=WyomingSettings(listen="tcp://127.0.0.1:10400"))
    assert Changes.between(base, served) == Changes(False, False, False, True)
