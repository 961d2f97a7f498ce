"""Mavend as a Wyoming service (mavend/wyoming/server.py), driven by the `wyoming`
package's own AsyncTcpClient: the client Home Assistant's Wyoming integration uses.

The real daemon (no audio, no D-Bus) runs in the test's event loop with `[wyoming]
listen` on 127.0.0.1 (port 0: the kernel picks one), the real grammar and SQLite file.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.handle import Handled, NotHandled
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize

from mavend.config import Settings, WyomingSettings, parse_settings
from mavend.daemon.lifecycle import Daemon, DaemonOptions
from mavend.errors import ConfigError
from mavend.wyoming.protocol import encode_event
from tests.conftest import require_model
from tests.state_kit import kit_router, kit_settings, real_clock
from tests.test_personal_boundary import DONT_KNOW, AlwaysGeneral

TIMEOUT = 30.0


def wyoming_settings(tmp_path: Path, **wyoming: object) -> Settings:
    return kit_settings(
        tmp_path, wyoming=WyomingSettings(listen="tcp://127.0.0.1:0", **wyoming)
    )


@contextlib.asynccontextmanager
async def serving(settings: Settings) -> AsyncIterator[tuple[Daemon, int]]:
    router = kit_router(settings, real_clock(), llm=AlwaysGeneral())
    daemon = Daemon(settings, router=router, options=DaemonOptions(
        stdin_turns=False, notify_replies=False, dbus_api=False, poll_s=0.5))
    await daemon.start()
    try:
        assert daemon.wyoming is not None, "[wyoming] listen did not start the service"
        await asyncio.wait_for(daemon.wyoming.ready.wait(), TIMEOUT)
        yield daemon, daemon.wyoming.port
    finally:
        await daemon.stop()


async def ask(port: int, event: Event) -> Event:
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(event)
        reply = await asyncio.wait_for(client.read_event(), TIMEOUT)
    assert reply is not None, "the server closed the connection without an answer"
    return reply


def test_describe_announces_a_handle_program_home_assistant_parses(tmp_path: Path) -> None:
    async def main() -> Info:
        async with serving(wyoming_settings(tmp_path, synthesize=False)) as (_, port):
            reply = await ask(port, Describe().event())
        assert Info.is_type(reply.type)
        return Info.from_event(reply)

    info = asyncio.run(main())
    (handle,) = info.handle
    assert handle.name == "mavend" and handle.installed and handle.version
    assert handle.models[0].languages == ["en"]
    assert info.tts == [] and info.asr == []  # synthesize off: no tts announced


def test_a_timer_said_to_home_assistant_is_set_and_a_personal_question_stays_home(
    tmp_path: Path,
) -> None:
    async def main() -> tuple[Event, Event, Event, list]:
        async with serving(wyoming_settings(tmp_path, synthesize=False)) as (daemon, port):
            context = {"conversation_id": "01HS6SP2XD1E5HEHVDZE8R2WMR"}
            timer = await ask(port, Transcript("set a timer for ten minutes",
                                               context=context).event())
            personal = await ask(port, Transcript("what's my locker code").event())
            unsure = await ask(port, Transcript("").event())
            assert daemon.scheduler is not None
            reminders = await asyncio.to_thread(daemon.scheduler.book.list)
        return timer, personal, unsure, reminders

    timer, personal, unsure, reminders = asyncio.run(main())
    assert Handled.is_type(timer.type), timer
    handled = Handled.from_event(timer)
    assert (handled.text or "").startswith("Timer set for 10 minutes"), handled.text
    assert handled.context == {"conversation_id": "01HS6SP2XD1E5HEHVDZE8R2WMR"}
    assert len(reminders) == 1, reminders
    # The hostile LLM routes it to general knowledge; the boundary answers from home.
    assert Handled.is_type(personal.type) and Handled.from_event(personal).text == DONT_KNOW
    assert NotHandled.is_type(unsure.type)


def test_turns_run_in_a_session_per_peer_and_conversation(tmp_path: Path) -> None:
    sessions: list[str] = []

    async def main() -> None:
        async with serving(wyoming_settings(tmp_path, synthesize=False)) as (daemon, port):
            submit = daemon.submit_text

            async def spy(text: str, **kwargs):
                sessions.append(kwargs["session"])
                return await submit(text, **kwargs)

            daemon.submit_text = spy  # type: ignore[method-assign]
            await ask(port, Transcript("what time is it", context={"conversation_id": "c1"})
                      .event())
            await ask(port, Transcript("what time is it",
                                       context={"conversation_id": "bad id\n"}).event())

    asyncio.run(main())
    assert sessions == ["wyoming:127.0.0.1:c1", "wyoming:127.0.0.1"]


def test_garbage_and_oversized_events_from_one_client_do_not_stop_another(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mavend.wyoming.server")

    async def hostile(port: int, wire: bytes) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(wire)
            await writer.drain()
            writer.write_eof()  # done sending: the server answers what it can, then hangs up
            return await asyncio.wait_for(reader.read(), TIMEOUT)  # until the server hangs up
        except (ConnectionError, OSError):
            return b""
        finally:
            writer.close()

    async def stalled(port: int) -> None:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b'{"type": "transcript", "data_length": 100}\n{"te')  # and then nothing
        await writer.drain()
        await asyncio.sleep(3.0)
        writer.close()

    async def main() -> list[Event]:
        async with serving(wyoming_settings(tmp_path, synthesize=False)) as (_, port):
            stall = asyncio.create_task(stalled(port))
            garbage = [
                b"\x00\xff" * 70_000,
                b'{"type": "audio-chunk", "payload_length": 99999999999}\n' + b"\0" * 4096,
                b'{"type": "x", "data_length": -3}\n',
                b"[" * 60_000 + b"\n",
                b'{"type": "transcript", "data": {"text": ["not", "text"]}}\n',
                encode_event(Transcript("x" * 5000).event()),
            ]
            hostile_runs = [asyncio.create_task(hostile(port, w)) for w in garbage]
            answers = []
            for _ in range(3):  # a well-behaved client meanwhile, three times
                answers.append(await ask(port, Transcript("set a timer for five minutes")
                                         .event()))
            answered = await asyncio.gather(*hostile_runs)
            await stall
            # Oversized text and a non-string text are answered, not dropped.
            assert b"not-handled" in answered[4] and b"not-handled" in answered[5]
            return answers

    answers = asyncio.run(main())
    assert all(Handled.is_type(a.type) for a in answers), answers
    broke = [r for r in caplog.records if "broke the protocol" in r.getMessage()]
    # One line per bad client: four broken events, and the one that stalled mid-event.
    assert len(broke) == 5, [r.getMessage() for r in broke]


def test_synthesize_answers_with_mavends_voice(tmp_path: Path) -> None:
    require_model("hibari-heart")

    async def main() -> tuple[Info, list[Event]]:
        async with serving(wyoming_settings(tmp_path)) as (_, port):
            info = Info.from_event(await ask(port, Describe().event()))
            events = []
            async with AsyncTcpClient("127.0.0.1", port) as client:
                await client.write_event(Synthesize(text="Timer set for ten minutes.").event())
                while True:
                    event = await asyncio.wait_for(client.read_event(), TIMEOUT)
                    assert event is not None
                    events.append(event)
                    if AudioStop.is_type(event.type):
                        break
        return info, events

    info, events = asyncio.run(main())
    assert info.tts and info.tts[0].voices[0].languages == ["en"]
    start = AudioStart.from_event(events[0])
    assert (start.rate, start.width, start.channels) == (24000, 2, 1)
    chunks = [AudioChunk.from_event(e) for e in events[1:-1]]
    seconds = sum(c.samples for c in chunks) / 24000
    assert 1.0 < seconds < 5.0, seconds


def test_the_listen_address_is_checked_when_the_config_is_read() -> None:
    assert parse_settings('[wyoming]\nlisten = "tcp://0.0.0.0:10400"\n').wyoming.listen
    for bad in ("10400", "http://127.0.0.1:10400", "tcp://127.0.0.1", "tcp://h:1/x"):
        with pytest.raises(ConfigError, match=r"wyoming\.listen"):
            parse_settings(f'[wyoming]\nlisten = "{bad}"\n')
