"""`[stt] backend = "wyoming"`: speech-to-text on another machine (mavend/wyoming/asr.py),
against the real wyoming-faster-whisper (PyPI; the dev extra) started here on 127.0.0.1
with mavend's own pulled tiny.en directory as its model and --local-files-only: it never
downloads, and nothing leaves loopback. Then every way such a server fails.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from mavend import addresses
from mavend.config import Settings, SttSettings, parse_settings
from mavend.errors import ConfigError
from mavend.system import unit
from mavend.system.unit import UnitPlan, render_unit
from mavend.wyoming.asr import WyomingTranscriber
from tests.audio_fixtures import command_clip, espeak, write_wav
from tests.conftest import require_model
from tests.state_kit import kit_settings
from wakeword import EventQueue, FrontEnd
from wakeword.events import Dropped, SourceEnded, Transcript
from wakeword.sources import FileSource
from wakeword.stt import normalize_words


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def whisper_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """wyoming-faster-whisper on 127.0.0.1, its model mavend's whisper-tiny.en directory."""
    try:
        import wyoming_faster_whisper  # noqa: F401
    except ImportError:
        pytest.fail("wyoming-faster-whisper is not installed: pip install -e '.[dev]' "
                    "(make test does)")
    model = require_model("whisper-tiny.en")
    data = tmp_path_factory.mktemp("wfw-data")
    uri = f"tcp://127.0.0.1:{free_port()}"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}  # and --local-files-only: never a download
    proc = subprocess.Popen(
        [sys.executable, "-m", "wyoming_faster_whisper", "--uri", uri, "--model", str(model),
         "--data-dir", str(data), "--download-dir", str(data), "--local-files-only",
         "--stt-library", "faster-whisper", "--language", "en", "--compute-type", "int8",
         "--beam-size", "1", "--cpu-threads", "1"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        host, port = addresses.tcp_uri(uri)
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, f"wyoming-faster-whisper exited:\n{proc.stdout.read()}"
            with contextlib.suppress(OSError), socket.create_connection((host, port), 1):
                break
            assert time.monotonic() < deadline, "wyoming-faster-whisper did not start in 90 s"
            time.sleep(0.2)
        yield uri
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wyoming_stt(tmp_path: Path, uri: str, **stt: object) -> Settings:
    return kit_settings(tmp_path, stt=SttSettings(backend="wyoming", uri=uri, **stt))


def front_end_events(settings: Settings, wav: Path) -> list[object]:
    events = EventQueue()
    with FrontEnd.from_settings(settings, sink=events) as front:
        front.run(FileSource(wav))
    seen = []
    while True:
        event = events.get(timeout=60)
        seen.append(event)
        if isinstance(event, SourceEnded):
            return seen


def test_a_spoken_command_is_transcribed_by_wyoming_faster_whisper(
    tmp_path: Path, whisper_server: str
) -> None:
    wav = tmp_path / "timer.wav"
    write_wav(wav, command_clip("set a timer for ten minutes", gap_s=0.6))
    events = front_end_events(wyoming_stt(tmp_path, whisper_server), wav)
    transcripts = [e for e in events if isinstance(e, Transcript)]
    assert len(transcripts) == 1, events
    words = normalize_words(transcripts[0].text)
    assert "timer" in words and ("10 minutes" in words or "ten minutes" in words), words
    assert "jarvis" not in words  # the wake phrase is stripped as for the local model


def test_the_transcriber_alone_sends_only_the_command(whisper_server: str) -> None:
    result = WyomingTranscriber(whisper_server).transcribe(espeak("what time is it"))
    assert normalize_words(result.text) == "what time is it", result
    assert 1.0 < result.audio_s < 3.0 and result.confidence > 0.5


# --------------------------------------------------------------------- failures


class FakeServer:
    """A Wyoming 'ASR server' on loopback that misbehaves as told."""

    def __init__(self, answer: bytes, *, hang: bool = False):
        self.answer = answer
        self.hang = hang
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.uri = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                received = b""
                with contextlib.suppress(OSError):
                    while b'"audio-stop"' not in received:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        received += chunk
                if self.hang:
                    time.sleep(3)
                    continue
                with contextlib.suppress(OSError):
                    conn.sendall(self.answer)

    def close(self) -> None:
        self.sock.close()


BROKEN = {
    "garbage": b"\x00\xffnot an event\n",
    "closes": b"",
    "oversized": b'{"type": "transcript", "data_length": 999999999}\n',
    "error": b'{"type": "error", "data": {"text": "model exploded"}}\n',
    "no text": b'{"type": "transcript", "data": {"text": 5}}\n',
}


@pytest.mark.parametrize("how", sorted(BROKEN))
def test_a_broken_server_ends_the_turn_with_one_line_naming_it(
    how: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = FakeServer(BROKEN[how])
    caplog.set_level(logging.DEBUG, logger="mavend.wyoming.asr")
    try:
        stt = WyomingTranscriber(server.uri, timeout_s=5)
        samples = np.zeros(16000, np.int16)
        first, second = stt.transcribe(samples), stt.transcribe(samples)
    finally:
        server.close()
    assert first.text == second.text == ""
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(errors) == 1 and server.uri in errors[0].getMessage(), errors


def test_refused_and_silent_servers_time_out_and_recovery_is_said() -> None:
    silent = FakeServer(b"", hang=True)
    stt = WyomingTranscriber(silent.uri, timeout_s=0.5)
    started = time.monotonic()
    assert stt.transcribe(np.zeros(1600, np.int16)).text == ""
    assert time.monotonic() - started < 2.5
    silent.close()
    refused = WyomingTranscriber(f"tcp://127.0.0.1:{free_port()}", timeout_s=2)
    assert refused.transcribe(np.zeros(1600, np.int16)).text == ""
    good = FakeServer(b'{"type": "transcript", "data": {"text": " hello "}}\n')
    try:
        stt.uri, stt.port = good.uri, addresses.tcp_uri(good.uri)[1]
        assert stt.transcribe(np.zeros(1600, np.int16)).text == "hello"
        assert not stt._failing
    finally:
        good.close()


def test_listening_goes_on_when_the_server_is_down(tmp_path: Path) -> None:
    """Two commands to a front end whose server refuses: both are dropped (no crash, no
    stall), and the source is read to its end."""
    settings = wyoming_stt(tmp_path, f"tcp://127.0.0.1:{free_port()}", timeout_s=2.0)
    wav = tmp_path / "two.wav"
    clip = np.concatenate([command_clip("what time is it", gap_s=0.6),
                           command_clip("set a timer for ten minutes", gap_s=0.6)])
    write_wav(wav, clip)
    events = front_end_events(settings, wav)
    dropped = [e for e in events if isinstance(e, Dropped)]
    assert len(dropped) == 2 and not any(isinstance(e, Transcript) for e in events), events


# --------------------------------------------------------------------- config and unit


def test_the_uri_must_be_on_the_own_network_unless_allowed() -> None:
    with pytest.raises(ConfigError, match=r"8\.8\.8\.8 is not a loopback or private address"):
        parse_settings('[stt]\nbackend = "wyoming"\nuri = "tcp://8.8.8.8:10300"\n')
    allowed = parse_settings(
        '[stt]\nbackend = "wyoming"\nallow_remote = true\nuri = "tcp://8.8.8.8:10300"\n')
    assert unit.configured_hosts(allowed) == ("8.8.8.8",)
    private = parse_settings('[stt]\nbackend = "wyoming"\nuri = "tcp://192.168.1.20:10300"\n')
    assert unit.configured_hosts(private) == ("192.168.1.20",)
    with pytest.raises(ConfigError, match='needs a uri'):
        parse_settings('[stt]\nbackend = "wyoming"\n')
    with pytest.raises(ConfigError, match="tcp://host:port"):
        parse_settings('[stt]\nuri = "http://192.168.1.20:10300"\n')
    assert unit.configured_hosts(Settings()) == ()


def test_the_unit_opens_ip_for_a_speech_server_and_for_the_wyoming_service() -> None:
    closed = render_unit(UnitPlan("system", ("/usr/local/bin/mavend",)))
    assert "RestrictAddressFamilies=AF_UNIX\n" in closed
    served = render_unit(UnitPlan("system", ("/usr/local/bin/mavend",), listen="127.0.0.1"))
    assert "AF_INET AF_INET6" in served and "IPAddressAllow=localhost\n" in served
    lan = render_unit(UnitPlan("system", ("/usr/local/bin/mavend",), listen="0.0.0.0"))
    assert "192.168.0.0/16" in lan and "serves Wyoming on 0.0.0.0" in lan
    user = render_unit(UnitPlan("user", ("/bin/mavend",), data_dirs=(Path("/tmp/d"),),
                                network=("192.168.1.20",)))
    assert "AF_INET AF_INET6" in user and "sends to: 192.168.1.20" in user

