"""`mavend run` with [voices]: the microphone's turns tagged with who said them.

A private PulseAudio's null sink is the microphone (tests/pulse.py). Sam is enrolled
(hibari's voice, three sentences); an espeak-ng voice nobody enrolled is the stranger.
With `confirm_from = "enrolled"`, Sam's spoken note is kept as Sam's, and the
stranger's spoken destructive act is refused and never runs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mavend.config import Settings, parse_settings
from mavend.handlers import Outcome
from mavend.state.store import Store
from mavend.voices import UNKNOWN, SpeakerId
from tests.audio_fixtures import concat, silence, trim, write_wav
from tests.conftest import require_model
from tests.pulse import Pulse, pulse_source  # noqa: F401
from tests.test_daemon_audio import (
    CONFIG,
    Recorder,
    listening_daemon,
    play,
    synchronously,
    until,
)
from tests.test_voices import ENROLL, espeak, hibari

pytestmark = pytest.mark.models

VOICES = """
[voices]
enabled = true
confirm_from = "enrolled"
"""


@pytest.fixture
def audio_models() -> None:
    for name in ("openwakeword", "silero-vad", "whisper-tiny.en", "use-multilingual-int8",
                 "resemblyzer-encoder", "hibari-heart"):
        require_model(name)


def enroll(settings: Settings, name: str, clips: list[np.ndarray]) -> None:
    store = Store.open(settings)
    try:
        voices = SpeakerId.from_settings(settings, store)  # as `mavend voices enroll` does
        voices.prints.enroll(name, [voices.embed(c) for c in clips],
                             encoder="resemblyzer-encoder",
                             seconds=sum(len(c) for c in clips) / 16_000)
    finally:
        store.close()


def turn_clip(say, command: str) -> np.ndarray:
    """"hey jarvis", the pause a person leaves for the chime, the command."""
    return concat(silence(1.0), trim(say("hey jarvis")), silence(0.6), trim(say(command)),
                  silence(1.5))


@synchronously
async def test_spoken_turns_are_told_apart_by_voice(
    pulse_source: Pulse, audio_models: None, tmp_path: Path  # noqa: F811
) -> None:
    settings = parse_settings(CONFIG + VOICES, "test.toml")
    say_sam = hibari()
    enroll(settings, "sam", [say_sam(text) for text in ENROLL])
    note = write_wav(tmp_path / "note.wav",
                     turn_clip(say_sam, "note that my locker code is four five one two"))
    stranger = write_wav(tmp_path / "stranger.wav",
                         turn_clip(lambda t: espeak(t, "en-us"), "restart the music service"))
    recorder = Recorder()
    async with listening_daemon(recorder, settings) as daemon:
        await play(pulse_source, note)
        await until(lambda: recorder.turns, 30, "Sam's spoken note")
        await until(lambda: not daemon.speaker.busy, 30, "the reply to end")
        await play(pulse_source, stranger)
        await until(lambda: len(recorder.turns) > 1, 30, "the stranger's command")
        assert daemon.store is not None
        with daemon.store.read() as conn:
            notes = [tuple(r) for r in conn.execute("SELECT text, speaker FROM notes")]
            logged = [r[0] for r in conn.execute("SELECT speaker FROM turns ORDER BY id")]
        runs = daemon.assistant.ctx.acts.runs("restart_service")
    kept, refused = recorder.turns[0], recorder.turns[1]
    assert kept.speaker == "sam" and kept.reply.outcome == Outcome.DONE, kept.to_json()
    assert len(notes) == 1 and "locker" in notes[0][0] and notes[0][1] == "sam", notes
    assert refused.speaker == UNKNOWN, refused.to_json()
    assert refused.reply.outcome == Outcome.REFUSED, refused.to_json()
    assert runs == []
    assert logged == ["sam", UNKNOWN]
