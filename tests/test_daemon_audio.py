"""`mavend run` with the microphone: the real front end inside the real daemon.

A private PulseAudio's null sink is the default input (tests/pulse.py); WAVs
synthesized with espeak-ng are played into it. The daemon hears the wake word,
transcribes, routes and acts: a timer is saved, a destructive act asks and a
spoken "yes" without the wake word confirms it. Without any microphone the
daemon says so once, points at `mavend doctor`, and keeps running.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from mavend.config import Settings, parse_settings
from mavend.daemon.lifecycle import Daemon, DaemonOptions, Observer
from mavend.daemon.voice import VoiceState
from mavend.handlers import Outcome
from mavend.scheduler import ReminderBook
from tests.audio_fixtures import command_clip, write_wav
from tests.conftest import require_model
from tests.pulse import Pulse, pulse_source  # noqa: F401
from tests.state_kit import TZ
from tests.test_daemon import MAVEND

pytestmark = pytest.mark.models

CONFIG = """
[router]
llm_enabled = false

[reminders]
timezone = "Europe/Berlin"

[notifications]
enabled = false

# Spoken replies and earcons are on, and the null sink they play into is the
# microphone: mavend hears itself, as through a loudspeaker next to the mic (barge-in:
# mavend/tts/ + wakeword/echo.py). Its question must not be taken as its own answer.
[tts]
enabled = true

[earcons]
enabled = true

[[acts.allow]]
name = "restart_service"
argv = ["true", "{service}"]
destructive = true
[acts.allow.slots.service]
type = "enum"
values = ["music"]

[[acts.allow]]
name = "lock_screen"
argv = ["true"]
"""


def synchronously(test: Callable[..., Any]) -> Callable[..., Any]:
    """Run an async test on its own event loop (fixtures resolve as for the original)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> Any:
        return asyncio.run(test(*args, **kwargs))

    return run


class Recorder(Observer):
    def __init__(self) -> None:
        self.turns: list = []
        self.transcripts: list[str] = []

    def transcript(self, text: str, confidence: float) -> None:
        self.transcripts.append(text)

    def decision(self, turn) -> None:
        self.turns.append(turn)


@pytest.fixture
def audio_models() -> None:
    for name in ("openwakeword", "silero-vad", "whisper-tiny.en", "use-multilingual-int8"):
        require_model(name)


@contextlib.asynccontextmanager
async def listening_daemon(
    recorder: Recorder, settings: Settings | None = None
) -> AsyncIterator[Daemon]:
    """The daemon on the microphone (`settings`: CONFIG's when None), listening."""
    daemon = Daemon(
        settings or parse_settings(CONFIG, "test.toml"),
        options=DaemonOptions(audio=True, stdin_turns=False, notify_replies=False, poll_s=0.1),
    )
    daemon.observers.append(recorder)
    await daemon.start()
    try:
        await until(lambda: daemon.listening, 30, "the microphone to deliver audio")
        yield daemon
    finally:
        started = time.monotonic()
        await daemon.stop()
        print(f"lifecycle: stop with the microphone open took {time.monotonic() - started:.2f} s")
        assert time.monotonic() - started <= 5.0


async def until(condition: Callable[[], object], timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := condition():
            return value
        await asyncio.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def spoken(command: str) -> Any:
    """"hey jarvis", then the command after the pause a person leaves for the chime
    (mavend's wake earcon plays into this same microphone)."""
    return command_clip(command, gap_s=0.6)


async def play(pulse: Pulse, wav: Path) -> None:
    player = pulse.play(wav)
    await asyncio.to_thread(player.wait, 30)


@synchronously
async def test_a_spoken_timer_is_heard_routed_and_saved(
    pulse_source: Pulse, audio_models: None, tmp_path: Path  # noqa: F811
) -> None:
    wav = write_wav(tmp_path / "timer.wav", spoken("set a timer for ten minutes"))
    recorder = Recorder()
    async with listening_daemon(recorder) as daemon:
        await play(pulse_source, wav)
        await until(lambda: recorder.turns, 30, "the spoken turn")
        turn = recorder.turns[0]
        assert daemon.store is not None
        pending = ReminderBook(daemon.store, TZ).pending()
    assert "timer" in recorder.transcripts[0].lower()
    assert turn.decision.intent == "reminder", turn.to_json()
    assert turn.reply.outcome == Outcome.DONE, turn.to_json()
    assert len(pending) == 1
    left = (pending[0].fire_at - datetime.now(TZ)).total_seconds()
    assert 8 * 60 < left <= 10 * 60, pending[0].to_json()


@synchronously
async def test_a_destructive_act_is_confirmed_by_a_spoken_yes_without_the_wake_word(
    pulse_source: Pulse, audio_models: None, tmp_path: Path  # noqa: F811
) -> None:
    ask = write_wav(tmp_path / "ask.wav", spoken("restart the music service"))
    yes = write_wav(tmp_path / "yes.wav", command_clip("yes", wake="", lead_s=0.3))
    recorder = Recorder()
    async with listening_daemon(recorder) as daemon:
        await play(pulse_source, ask)
        await until(lambda: recorder.turns, 30, "the spoken command")
        asked = recorder.turns[0]
        assert asked.reply.outcome == Outcome.CONFIRM, asked.to_json()
        # The question is said out loud, into this same microphone, and is not taken
        # as its own answer; the user answers once it has been said.
        await until(lambda: daemon.speaker.busy, 10, "the question to be spoken")
        await until(lambda: not daemon.speaker.busy, 30, "the question to end")
        assert len(recorder.turns) == 1, [t.to_json() for t in recorder.turns]
        await play(pulse_source, yes)
        await until(lambda: len(recorder.turns) > 1, 30, "the spoken yes")
        confirmed = recorder.turns[1]
        assert daemon.assistant is not None
        runs = daemon.assistant.ctx.acts.runs("restart_service")
    assert confirmed.decision.decided_by == "confirmation", confirmed.to_json()
    assert confirmed.reply.outcome == Outcome.DONE, confirmed.to_json()
    assert len(runs) == 1 and json.loads(runs[0]["argv"]) == ["true", "music"], runs


@synchronously
async def test_pause_lets_go_of_the_microphone_and_resume_listens_again(
    pulse_source: Pulse, audio_models: None, tmp_path: Path  # noqa: F811
) -> None:
    wav = write_wav(tmp_path / "lock.wav", spoken("lock the screen"))
    recorder = Recorder()
    async with listening_daemon(recorder) as daemon:
        await daemon.pause()
        await until(lambda: daemon.voice.state is VoiceState.PAUSED, 10, "the pause")
        assert not daemon.listening
        await play(pulse_source, wav)
        await asyncio.sleep(1.5)
        assert recorder.turns == []  # nothing is heard while paused
        # PulseAudio lists no recording stream: the device is really let go.
        outputs = pulse_source.pactl("list", "short", "source-outputs").stdout
        assert outputs.strip() == "", outputs
        await daemon.resume()
        await until(lambda: daemon.listening, 30, "listening again")
        await play(pulse_source, wav)
        await until(lambda: recorder.turns, 30, "the turn after resume")
    assert recorder.turns[0].decision.slots.fn == "lock_screen"


def test_run_without_a_microphone_says_so_once_and_keeps_running(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG)
    log = tmp_path / "run.log"
    env_extra = {"PULSE_SERVER": "unix:/nonexistent", "AUDIODEV": "none"}
    with open(log, "w") as err:
        process = subprocess.Popen(
            [str(MAVEND), "--config", str(config), "run"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            env={**os.environ, **env_extra},
        )
    try:
        deadline = time.monotonic() + 60
        # Said, and running (the models load after the microphone is looked for: on a slow
        # box that takes longer than the first retry's wait below).
        while time.monotonic() < deadline and not all(
            said in log.read_text() for said in ("no microphone", "mavend is running")
        ):
            assert process.poll() is None, log.read_text()
            time.sleep(0.2)
        time.sleep(2.5)  # the first retry passes
        assert process.poll() is None, log.read_text()  # still running
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(10) == 0, log.read_text()
        stopped_s = time.monotonic() - started
        print(f"lifecycle: SIGTERM -> exit 0 in {stopped_s:.2f} s (audio, no microphone)")
        assert stopped_s <= 5.0
    finally:
        if process.poll() is None:
            process.kill()
    text = log.read_text()
    assert "mavend is running" in text, text
    assert text.count("no microphone") == 1, text
    assert "mavend doctor" in text, text

