"""Barge-in on real PulseAudio: mavend's voice plays into the same null sink that is
its microphone (a loudspeaker next to the mic, with no echo canceller).

- the wake word said over a long reply stops it, and the turn after it is a normal one;
- a reply that itself says "hey jarvis" does not wake mavend;
- "stop" as the first word of a follow-up turn stops playback and is not routed;
- (no PulseAudio) a sentence that says the wake word, at its very start or its very
  end, suppresses mic wakes over its whole play interval, underruns included; one that
  does not leaves the wake word free to barge in.

Timing bounds here are generous (1.5 s); the 300 ms figure is bench/self_wake_bench.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from mavend.config import parse_settings
from mavend.daemon.lifecycle import Daemon, DaemonOptions
from mavend.tts.speaker import Outcome as Spoken
from tests.audio_fixtures import command_clip, concat, espeak, silence, trim, write_wav
from tests.conftest import require_model
from tests.pulse import Pulse, pulse_source  # noqa: F401
from tests.test_daemon_audio import CONFIG, Recorder, audio_models, play, synchronously, until
from wakeword.detector import resolve_wake_model
from wakeword.echo import PlaybackReference, Scan, wake_scorer, wake_words

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


def watch_scores(daemon: Daemon) -> list[float]:
    """Every wake score the microphone's model gives from now on."""
    scores: list[float] = []
    front = daemon.voice.front
    score = front.wake.score

    def watched(frame: np.ndarray) -> float:
        value = score(frame)
        scores.append(value)
        return value

    front.wake.score = watched
    return scores


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
        scores = watch_scores(daemon)
        reply = await speaking(daemon, LONG_REPLY)
        await asyncio.sleep(1.0)
        # Said over the reply, the wake word is masked by its syllables now and then
        # (bench/self_wake_bench.py counts how often; its best score can stay under the
        # 0.3 bar). A person says it again when mavend talks on, and so does this test:
        # twice at most, each try timed on its own.
        tries = 0
        while not reply.done() and tries < 2:
            tries += 1
            player = pulse_source.play(wav)
            started = time.monotonic()
            await until_done(reply, len(clip) / 16000)
            await asyncio.to_thread(player.wait, 30)
        front = daemon.voice.front
        if not reply.done():
            pytest.fail(f"the reply was not interrupted after {tries} tries: the mic's best "
                        f"wake score {max(scores, default=0.0):.3f}, own wakes "
                        f"{front.own_wakes}, barge-ins {front.barge_ins}")
        outcome = reply.result()
        await until(lambda: recorder.turns, 30, "the turn after the barge-in")
        interrupt = daemon.speaker.last_interrupt
    assert outcome is Spoken.INTERRUPTED
    assert front.barge_ins == 1 and front.own_wakes == 0
    assert interrupt is not None
    stopped_after_wake = interrupt[1] - (started + wake_end_s)
    print(f"barge-in on try {tries}: stopped {stopped_after_wake * 1000:.0f} ms after the "
          f"wake word's end (paplay start included), "
          f"{(interrupt[1] - interrupt[0]) * 1000:.0f} ms after the detection")
    assert stopped_after_wake <= 1.5
    turn = recorder.turns[0]
    assert turn.decision.intent == "reminder", turn.to_json()
    assert "timer" in recorder.transcripts[0].lower(), recorder.transcripts


async def until_done(future, timeout: float) -> None:
    """Wait up to `timeout` s for a speaker's Future to be done."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), timeout)


@synchronously
async def test_a_reply_that_says_hey_jarvis_does_not_wake_mavend(
    pulse_source: Pulse, audio_models: None  # noqa: F811
) -> None:
    recorder = Recorder()
    async with daemon_with_voice(recorder) as daemon:
        scores = watch_scores(daemon)
        front = daemon.voice.front
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


def _reference() -> PlaybackReference:
    require_model("openwakeword")
    files = resolve_wake_model("hey_jarvis")
    scorer, reset = wake_scorer(files)
    return PlaybackReference(scorer, reset_scorer=reset, wake_words=wake_words(files.name))


def _play(reference: PlaybackReference, audio: np.ndarray, scan: Scan, start: float,
          *, underrun_at: float = -1.0, underrun_s: float = 0.0) -> float:
    """Report `audio` (16 kHz) played in 40 ms blocks from `start`, as the speaker does;
    after `underrun_at` s the stream ran dry for `underrun_s` (re-anchored later).
    Returns when its last sample is heard."""
    block, heard = 640, start
    for offset in range(0, len(audio), block):
        if underrun_s and offset / 16000 >= underrun_at:
            heard, underrun_s = heard + underrun_s, 0.0
        part = audio[offset : offset + block]
        reference.played(part, 16000, heard, scan, offset)
        heard += len(part) / 16000
    return heard


def test_a_sentence_that_says_the_wake_word_cannot_wake_mavend_while_it_plays() -> None:
    reference = _reference()
    wake = trim(espeak("hey jarvis"))
    rest = trim(espeak("the kitchen light is on and the heating is on too"))
    at_start = concat(wake, silence(0.15), rest).astype(np.float32) / 32768 * 0.5
    at_end = concat(rest, silence(0.15), wake).astype(np.float32) / 32768 * 0.5
    start = 1000.0
    for audio, underrun in ((at_start, 0.0), (at_end, 0.0), (at_end, 0.3)):
        # No text: the wake model alone must find the wake word, at either end.
        scan = reference.prepare(audio, 16000)
        assert scan.says_wake and scan.peak >= reference.config.wake_threshold, scan.peak
        end = _play(reference, audio, scan, start, underrun_at=1.0, underrun_s=underrun)
        # Covered from before the first sample is heard to well after the last (the
        # detector fires after the word ends; the "heard at" estimate may be off).
        for t in np.arange(start - 0.45, end + 0.75, 0.02):
            assert reference.own_wake(float(t)) is not None, (t - start, end - start)
        assert reference.own_wake(start - 0.7) is None
        # (the reference's frame scores explain a wake up to `wake_before_s` after them)
        assert reference.own_wake(end + reference.config.wake_before_s + 0.3) is None
        start = end + 5.0
    # Played while it is being scored (the speaker does not wait): suppressed until
    # scored, then only if it says the wake word.
    plain = trim(espeak("the kitchen light is on")).astype(np.float32) / 32768 * 0.5
    for audio, says in ((plain, False), (at_end, True)):
        scan = reference.pending_scan()
        _play(reference, audio[:3200], scan, start)
        assert reference.own_wake(start + 0.1) is not None
        reference.prepare(audio, 16000, into=scan)
        assert not scan.pending and scan.says_wake is says
        assert (reference.own_wake(start + 0.1) is not None) is says
        start += 10.0
    # The text alone is enough: the reply names the wake word however it sounds.
    mumbled = (rest.astype(np.float32) / 32768 * 0.5)
    scan = reference.prepare(mumbled, 16000, "Jarvis here.")
    assert scan.says_wake
    assert not reference.prepare(mumbled, 16000, "The light is on.").says_wake


def test_an_earcon_is_known_without_the_wake_model_and_its_echo_is_explained() -> None:
    # The chimes are mavend's own two tones: no wake model runs on them (a reply queued
    # behind the done chime waited ~70 ms for that scoring), but their levels are kept.
    from mavend.tts.earcons import DONE_TONES, make_chime

    reference = _reference()
    chime = make_chime(DONE_TONES, rate=16000)
    known = reference.known(chime, 16000)
    scanned = reference.prepare(chime, 16000, first=True)
    assert not known.says_wake and not scanned.says_wake  # the model agrees: no wake word
    assert known.samples == scanned.samples and len(known.levels) == len(scanned.levels)
    assert np.allclose(known.levels, scanned.levels, atol=0.5)
    start = 2000.0
    _play(reference, chime, known, start)
    assert reference.active(start + 0.05)
    assert reference.own_wake(start + 0.1) is None  # a chime never hides the user's wake


def test_the_batched_scan_scores_exactly_as_the_streaming_model() -> None:
    require_model("openwakeword")
    scorer, reset = wake_scorer(resolve_wake_model("hey_jarvis"))
    pcm = concat(silence(0.5), trim(espeak("the light is on and hey jarvis what time is it")))
    pcm = pcm[: len(pcm) // 1280 * 1280]
    reset()
    streamed = np.array([scorer(pcm[i : i + 1280]) for i in range(0, len(pcm), 1280)])
    batched = scorer.batch(pcm)
    assert streamed.max() >= 0.5
    np.testing.assert_allclose(batched, streamed, atol=1e-4)


def test_the_users_wake_word_over_a_sentence_without_it_still_barges_in() -> None:
    reference = _reference()
    reply = trim(espeak("on tuesday clouds come in from the west and there may be rain"))
    audio = reply.astype(np.float32) / 32768 * 0.5
    scan = reference.prepare(audio, 16000, "On Tuesday clouds come in from the west.")
    assert not scan.says_wake, scan.peak
    start = 2000.0
    end = _play(reference, audio, scan, start, underrun_at=1.0, underrun_s=0.3)
    for t in np.arange(start - 0.5, end + 1.0, 0.02):
        # The user's wake word at any moment of it is not mavend's own: a barge-in.
        assert reference.own_wake(float(t)) is None, t - start
    assert reference.active(start + 0.5) and reference.active(end)
    # ... and that holds right after a sentence that said it, once its interval is over.
    # (A sentence right after one that ENDS with the wake word is suppressed as well:
    # the model's score is still high at its start. Here the word is 1.2 s before.)
    said = concat(trim(espeak("hey jarvis")), silence(1.2)).astype(np.float32) / 32768 * 0.5
    own = reference.prepare(said, 16000, first=True)
    after = _play(reference, said, own, end + 0.1)
    assert reference.own_wake(after) is not None
    nxt = reference.prepare(audio, 16000, "On Tuesday clouds come in.", first=False)
    assert not nxt.says_wake, nxt.peak
    later = _play(reference, audio, nxt, after + 0.05)
    assert reference.own_wake(after + 1.0) is None and reference.own_wake(later - 0.2) is None
