"""Barge-in on real PulseAudio: mavend's voice plays into the same null sink that is
its microphone (a loudspeaker next to the mic, with no echo canceller).

- the wake word said over a long reply stops it, and the turn after it is a normal one;
- a reply that itself says "hey jarvis" does not wake mavend;
- "stop" as the first word of a follow-up turn stops playback and is not routed.

Timing bounds here are generous (1.5 s); the 300 ms figure is bench/self_wake_bench.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np

from mavend.config import parse_settings
from mavend.daemon import Daemon, DaemonOptions
from mavend.tts.speaker import Outcome as Spoken
from tests.audio_fixtures import command_clip, concat, espeak, silence, trim, write_wav
from tests.pulse import Pulse, pulse_source  # noqa: F401
from tests.test_daemon_audio import CONFIG, Recorder, audio_models, play, synchronously, until

__all__ = ["audio_models"]  # a fixture, used by name

# The speaker a little quieter than the user's voice at the mic, as in a room where
# the user is nearer the microphone than the loudspeaker is.
BARGE_CONFIG = CONFIG.replace(
    "[tts]\nenabled = true\n", "[tts]\nenabled = true\nvolume = 0.25\nmax_sentences = 8\n"
)

LONG_REPLY = (
    "Here is the weather for the whole week. On Monday it will be sunny with a high of "
    "twenty one degrees. On Tuesday clouds come in from the west, and there may be light "
    "rain in the afternoon. On Wednesday the wind picks up and it gets colder."
)
OWN_WAKE_REPLY = "I am Jarvis, hey jarvis is my name. Hey Jarvis, hey Jarvis, that is me."


@contextlib.asynccontextmanager
async def daemon_with_voice(recorder: Recorder) -> AsyncIterator[Daemon]:
    settings = parse_settings(BARGE_CONFIG, "test.toml")
    daemon = Daemon(
        settings,
        options=DaemonOptions(audio=True, stdin_turns=False, notify_replies=False, poll_s=0.1),
    )
    daemon.observers.append(recorder)
    await daemon.start()
    try:
        await until(lambda: daemon.listening, 30, "the microphone to deliver audio")
        assert daemon.speaker is not None and daemon.speaker.voice is not None
        assert daemon.voice is not None and daemon.voice.reference is not None
        yield daemon
    finally:
        await daemon.stop()


async def speaking(daemon: Daemon, text: str):
    """Start saying `text`; returns its Future once it is audible."""
    done = daemon.speaker.speak(text)
    await until(lambda: daemon.voice.reference.heard_until > time.monotonic(), 10,
                "the reply to start playing")
    return done


@synchronously
async def test_the_wake_word_over_a_long_reply_stops_it_and_starts_a_normal_turn(
    pulse_source: Pulse, audio_models: None, tmp_path: Path  # noqa: F811
) -> None:
    wake = trim(espeak("hey jarvis"))
    lead = silence(0.3)
    command = trim(espeak("set a timer for ten minutes"))
    clip = concat(lead, wake, silence(0.6), command, silence(1.5))
    wav = write_wav(tmp_path / "barge.wav", clip)
    wake_end_s = (len(lead) + len(wake)) / 16000
    recorder = Recorder()
    async with daemon_with_voice(recorder) as daemon:
        reply = await speaking(daemon, LONG_REPLY)
        await asyncio.sleep(1.0)
        player = pulse_source.play(wav)
        started = time.monotonic()
        outcome = await asyncio.wait_for(asyncio.wrap_future(reply), 10)
        await asyncio.to_thread(player.wait, 30)
        await until(lambda: recorder.turns, 30, "the turn after the barge-in")
        interrupt = daemon.speaker.last_interrupt
        front = daemon.voice.front
    assert outcome is Spoken.INTERRUPTED
    assert front.barge_ins == 1 and front.own_wakes == 0
    assert interrupt is not None
    stopped_after_wake = interrupt[1] - (started + wake_end_s)
    print(f"barge-in: stopped {stopped_after_wake * 1000:.0f} ms after the wake word's end "
          f"(paplay start included), {(interrupt[1] - interrupt[0]) * 1000:.0f} ms after "
          "the detection")
    assert stopped_after_wake <= 1.5
    turn = recorder.turns[0]
    assert turn.decision.intent == "reminder", turn.to_json()
    assert "timer" in recorder.transcripts[0].lower(), recorder.transcripts


@synchronously
async def test_a_reply_that_says_hey_jarvis_does_not_wake_mavend(
    pulse_source: Pulse, audio_models: None  # noqa: F811
) -> None:
    recorder = Recorder()
    async with daemon_with_voice(recorder) as daemon:
        scores: list[float] = []
        front = daemon.voice.front
        score = front.wake.score

        def watched(frame: np.ndarray) -> float:
            value = score(frame)
            scores.append(value)
            return value

        front.wake.score = watched
        for _ in range(2):
            outcome = await asyncio.wait_for(
                asyncio.wrap_future(daemon.speaker.speak(OWN_WAKE_REPLY)), 30
            )
            assert outcome is Spoken.SPOKEN  # never cut short by its own wake word
        await asyncio.sleep(1.5)
    # The microphone did hear the wake word (this is no test otherwise) ...
    assert max(scores) >= 0.5, max(scores)
    assert front.own_wakes >= 1
    # ... and nothing woke: no barge-in, no turn.
    assert front.barge_ins == 0
    assert recorder.turns == [] and recorder.transcripts == []


@synchronously
async def test_stop_in_a_follow_up_turn_stops_playback_and_is_not_routed(
    pulse_source: Pulse, audio_models: None, tmp_path: Path  # noqa: F811
) -> None:
    ask = write_wav(tmp_path / "ask.wav", command_clip("restart the music service", gap_s=0.6))
    stop = write_wav(tmp_path / "stop.wav", command_clip("stop", wake="", lead_s=0.2))
    recorder = Recorder()
    async with daemon_with_voice(recorder) as daemon:
        await play(pulse_source, ask)
        await until(lambda: recorder.turns, 30, "the spoken command")
        assert recorder.turns[0].reply.text.endswith("?") or "yes" in recorder.turns[0].reply.text
        await until(lambda: daemon.speaker.busy, 10, "the question to be spoken")
        await until(lambda: not daemon.speaker.busy, 30, "the question to end")
        await until(lambda: daemon.voice.front.in_follow_up, 5, "the follow-up window")
        # The follow-up window is open; the user says "stop", and while it is being
        # transcribed something long starts playing (a reminder firing, say).
        player = pulse_source.play(stop)
        await asyncio.sleep(0.6)  # "stop" has just been said
        reply = daemon.speaker.speak(LONG_REPLY)
        await asyncio.to_thread(player.wait, 30)
        outcome = await asyncio.wait_for(asyncio.wrap_future(reply), 10)
        await asyncio.sleep(1.0)
        assert daemon.assistant is not None
        runs = daemon.assistant.ctx.acts.runs("restart_service")
    assert outcome is Spoken.INTERRUPTED
    assert len(recorder.turns) == 1, [t.to_json() for t in recorder.turns]  # "stop": not routed
    assert runs == []
