"""A whole spoken round trip, for real (issue 14, item 5).

`mavend -v run` runs as a subprocess on a private PulseAudio with two null sinks
(tests/roundtrip_kit.py): espeak-ng says "hey jarvis, ..." into the microphone sink,
mavend hears, routes and answers out loud with its hibari voice into the second,
speaker sink, whose monitor is recorded and transcribed by faster-whisper tiny.en.
The sinks are separate, so mavend never hears itself. Earcons and everything else are
at their defaults; only the LLM is off (both commands are grammar commands) and
notifications (no desktop here).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.audio_fixtures import command_clip, write_wav
from tests.conftest import require_model
from tests.roundtrip_kit import Rig, load_whisper, transcribe

pytestmark = pytest.mark.models

TZ = "Europe/Berlin"
CONFIG = f"""
[router]
llm_enabled = false

[reminders]
timezone = "{TZ}"

[notifications]
enabled = false
"""

NUMBERS = {
    0: "zero", 1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven",
    8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen",
    14: "fourteen", 15: "fifteen", 16: "sixteen", 17: "seventeen", 18: "eighteen",
    19: "nineteen", 20: "twenty", 21: "twenty one", 22: "twenty two", 23: "twenty three",
}


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    for name in ("openwakeword", "silero-vad", "whisper-tiny.en", "use-multilingual-int8",
                 "hibari-heart"):
        require_model(name)
    rig = Rig(tmp_path_factory.mktemp("roundtrip"))
    try:
        yield rig.start(CONFIG)
    finally:
        rig.stop()


@pytest.fixture(scope="module")
def whisper():
    return load_whisper(require_model("whisper-tiny.en"))


def said(rig: Rig, tmp_path: Path, name: str, command: str) -> float:
    """Play "hey jarvis, <command>" into the microphone; the monotonic time it started."""
    wav = write_wav(tmp_path / f"{name}.wav", command_clip(command, lead_s=0.5, tail_s=0.5))
    started = time.monotonic()
    player = rig.play(wav)
    assert player.wait(30) == 0, player.stderr.read() if player.stderr else ""
    return started


def hour_said(text: str, hour: int) -> bool:
    """Whisper writes a spoken time as "23:05", "2305", "2,305", "11.05" or in words."""
    # "twenty-two thirty-nine" comes back as "2,239": a thousands comma, not two numbers.
    digits = re.sub(r"\D", " ", re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)).split()
    spelled = re.sub(r"[^a-z ]", " ", text.replace("-", " "))
    for h in {hour, hour % 12 or 12}:
        if any(d == str(h) or (len(d) in (3, 4) and d[:-2] == str(h)) for d in digits):
            return True
        if re.search(rf"\b{NUMBERS[h]}\b", spelled):
            return True
    return False


def test_what_time_is_it_is_answered_out_loud(rig: Rig, whisper, tmp_path: Path) -> None:
    before = datetime.now(ZoneInfo(TZ))
    assert rig.daemon is not None
    turns = rig.daemon.text().count("heard ")
    started = said(rig, tmp_path, "time", "what time is it")
    rig.daemon.wait(lambda: rig.daemon.text().count("heard ") > turns, 60, "the turn")
    sounds = rig.wait_reply(started, 60)
    after = datetime.now(ZoneInfo(TZ))
    log = rig.daemon.text()
    assert "-> query" in log, log[-3000:]
    assert sounds, f"nothing was played on the speaker sink\n{log[-3000:]}"
    # The wake chime, the done chime, then the reply: the reply is the last sound.
    text = transcribe(whisper, sounds[-1].audio)
    assert hour_said(text, before.hour) or hour_said(text, after.hour), (text, log[-2000:])
    assert before.strftime("%A").lower() in text or after.strftime("%A").lower() in text, text
    # Generous: the whole round trip, not a latency figure (bench/conversation_bench.py).
    assert sounds[-1].start - started < 30


def test_a_timer_is_set_out_loud_and_its_firing_is_heard(rig: Rig, whisper,
                                                         tmp_path: Path) -> None:
    assert rig.daemon is not None
    turns = rig.daemon.text().count("heard ")
    # Ten seconds, not five: the reply ("Timer set for 9 seconds, until ...": the time
    # is fixed when the words were heard) lasts ~3 s, and the firing must be its own sound.
    started = said(rig, tmp_path, "timer", "set a timer for ten seconds")
    rig.daemon.wait(lambda: rig.daemon.text().count("heard ") > turns, 60, "the timer turn")
    # Chimes, "Timer set for ... seconds, until ...", then, ten seconds on, "Reminder: ...".
    rig.daemon.wait(lambda: "fired: timer" in rig.daemon.text(), 60, "the timer to fire")
    sounds = rig.wait_reply(started, 30, quiet_s=1.5, count=2)
    log = rig.daemon.text()
    assert "-> reminder" in log, log[-3000:]
    heard = [(s, transcribe(whisper, s.audio)) for s in sounds]
    heard_text = " | ".join(t for _, t in heard)
    # Whisper hears "Timer set" as "timer set", "time or set", "timers set".
    set_reply = [s for s, t in heard if re.search(r"set for \w+ seconds", t)]
    firing = [s for s, t in heard if "reminder" in t]
    assert set_reply, heard_text
    assert firing, (heard_text, log[-2000:])
    # The firing is its own sound, about ten seconds after the reply that set it.
    gap = timedelta(seconds=firing[-1].start - set_reply[0].start)
    assert timedelta(seconds=5) < gap < timedelta(seconds=30), (gap, heard_text)
    assert "timer" in heard[-1][1] and heard[-1][0] is firing[-1], heard_text
