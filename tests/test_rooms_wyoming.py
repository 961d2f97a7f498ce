"""The Wyoming service serves only the peers `[wyoming] allow` names (issue 22, item 4).

The real daemon (no audio, no D-Bus) serves Wyoming on 127.0.0.1; the clients connect
from two other loopback addresses (all of 127.0.0.0/8 is this box on Linux), binding
their source address: 127.0.0.2 is allowed, 127.0.0.3 is not. The refused one gets no
reply, runs nothing and changes no row of the SQLite file.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import pytest
from wyoming.asr import Transcript
from wyoming.event import Event
from wyoming.handle import Handled
from wyoming.info import Describe

from mavend.config import Settings, WyomingSettings, parse_settings
from mavend.errors import ConfigError
from mavend.wyoming.protocol import encode_event, read_event
from mavend.wyoming.server import _own_network
from tests.state_kit import kit_settings
from tests.test_wyoming_server import TIMEOUT, serving

ALLOWED, REFUSED = "127.0.0.2", "127.0.0.3"


def settings(tmp_path: Path) -> Settings:
    wyoming = WyomingSettings(listen="tcp://127.0.0.1:0", allow=(ALLOWED,), synthesize=False)
    return kit_settings(tmp_path, wyoming=wyoming)


def dump(path: Path) -> dict[str, list[str]]:
    """Every row of every table: what "nothing is stored" is checked against."""
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: sorted(map(repr, conn.execute(f'SELECT * FROM "{t}"'))) for t in tables}


async def exchange(port: int, source: str, *events: Event) -> Event | None:
    """Connect from `source` and send `events`: the first event back (None: the
    connection was closed without a word)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    try:
        for event in events:
            writer.write(encode_event(event))
        await writer.drain()
        return await asyncio.wait_for(read_event(reader), TIMEOUT)
    except ConnectionResetError:
        return None
    finally:
        writer.close()


def test_a_peer_not_allowed_gets_no_reply_and_nothing_is_stored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mavend.wyoming.server")
    config = settings(tmp_path)
    database = config.storage.database_path()
    submitted: list[str] = []

    async def main() -> tuple[object, object, object, dict, dict, int]:
        async with serving(config) as (daemon, port):
            submit = daemon.submit_text

            async def spy(text: str, **kwargs):
                submitted.append(text)
                return await submit(text, **kwargs)

            daemon.submit_text = spy  # type: ignore[method-assign]
            allowed = await exchange(
                port, ALLOWED, Transcript("set a timer for ten minutes").event()
            )
            before = dump(database)
            five = Transcript("set a timer for five minutes").event()
            refused = await exchange(port, REFUSED, Describe().event(), five)
            again = await exchange(port, REFUSED, Transcript("yes").event())
            await asyncio.sleep(0.2)
            after = dump(database)
            return allowed, refused, again, before, after, daemon.wyoming.refused

    allowed, refused, again, before, after, count = asyncio.run(main())
    assert isinstance(allowed, Event) and Handled.is_type(allowed.type), allowed
    assert "10 minutes" in (Handled.from_event(allowed).text or "")
    assert refused is None and again is None  # closed without a word
    assert submitted == ["set a timer for ten minutes"]  # the refused peer ran nothing
    assert len(before["reminders"]) == 1
    assert after == before  # not a row changed, in any table
    assert count == 2
    warnings = [r for r in caplog.records if REFUSED in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING  # once per address


def test_allow_defaults_to_loopback_and_names_a_bad_entry() -> None:
    default = parse_settings("").wyoming
    assert default.listen == "" and default.allow == ("127.0.0.0/8", "::1/128")
    assert default.allowed("127.0.0.1") and default.allowed("::1")
    assert default.allowed("::ffff:127.0.0.5")  # an IPv4-mapped peer of a dual-stack socket
    assert not default.allowed("192.168.1.20") and not default.allowed("")
    # Without a host, listen is loopback.
    assert parse_settings('[wyoming]\nlisten = "tcp://:10400"\n').wyoming.listen == (
        "tcp://127.0.0.1:10400"
    )
    lan = parse_settings('[wyoming]\nallow = ["192.168.1.20", "10.0.0.0/24", "fd00::/8"]\n')
    assert lan.wyoming.allow == ("192.168.1.20/32", "10.0.0.0/24", "fd00::/8")
    assert lan.wyoming.allowed("10.0.0.7") and not lan.wyoming.allowed("10.0.1.7")
    assert not lan.wyoming.allowed("127.0.0.1")  # loopback only when listed
    text = '[wyoming]\nlisten = "tcp://0.0.0.0:10400"\n\nallow = ["192.168.1.20", "kitchen.lan"]\n'
    with pytest.raises(ConfigError) as info:
        parse_settings(text, "c.toml")
    message = str(info.value)
    assert "c.toml:4" in message and "`wyoming.allow[1]`" in message and "kitchen.lan" in message
    # Networks beyond the household are accepted, and warned about at start.
    assert [_own_network(n) for n in ("127.0.0.0/8", "192.168.1.0/24", "fd00::/8")] == [True] * 3
    assert not _own_network("0.0.0.0/0") and not _own_network("8.8.8.8/32")
    for bad in ('"127.0.0.1"', '["10.0.0.0/33"]', "[10]"):
        with pytest.raises(ConfigError, match=r"c\.toml:2: `wyoming\.allow"):
            parse_settings(f"[wyoming]\nallow = {bad}\n", "c.toml")
