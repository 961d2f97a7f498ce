"""The front end with the real models on speech synthesized now (espeak-ng).

openWakeWord, Silero VAD and faster-whisper are loaded from the pulled model
cache; a missing model fails with the `mavend models pull` hint. The router is
the real one without its LLM (stage-0 grammar decisions need no LLM).
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from mavend.clock import system_clock, user_timezone
from mavend.config import Settings, parse_settings
from mavend.errors import ModelMissingError
from mavend.router import build_router
from tests.audio_fixtures import (
    add_noise,
    command_clip,
    concat,
    espeak,
    scale,
    silence,
    trim,
    write_wav,
)
from tests.conftest import require_model
from wakeword import (
    ArraySource,
    Dropped,
    EventQueue,
    FileSource,
    FrontEnd,
    NoSpeech,
    Partial,
    SourceEnded,
    Transcript,
    Wake,
    asyncio_sink,
)
from wakeword.detector import EnergyGate, WakeModel, resolve_wake_model
from wakeword.endpoint import EndpointConfig, Endpointer, Step
from wakeword.stt import normalize_words
from wakeword.vad import WINDOW_S, SileroVad

pytestmark = pytest.mark.models

# Shorter than the defaults so the no-speech cases do not idle for 5 s each.
TEST_CONFIG = """
[endpoint]
no_speech_timeout_s = 2.0
"""


@pytest.fixture(scope="module")
def settings() -> Settings:
    for name in ("openwakeword", "silero-vad", "whisper-tiny.en"):
        require_model(name)
    return parse_settings(TEST_CONFIG)


@pytest.fixture(scope="module")
def router(settings: Settings):
    return build_router(
        settings, clock=system_clock(user_timezone("UTC")), use_llm=False, use_classifier=False
    )


@pytest.fixture(scope="module")
def front(settings: Settings, router):
    events = EventQueue()
    front_end = FrontEnd.from_settings(
        settings, sink=events, grammar=router.grammar, slots_filled=router.slots_filled
    )
    with front_end:
        yield front_end, events


def listen(front, samples: np.ndarray) -> list:
    """Run one clip through the front end; every event it produced, in order."""
    front_end, events = front
    front_end.run(ArraySource(samples, name="clip"))
    out = []
    while not isinstance(event := events.get(timeout=30), SourceEnded):
        out.append(event)
    return out


def of(kind, events: list) -> list:
    return [e for e in events if isinstance(e, kind)]


def max_wake_score(model: WakeModel, samples: np.ndarray) -> float:
    model.reset()
    padded = concat(silence(1.0), samples, silence(1.0))
    return max(model.score(padded[i : i + 1280]) for i in range(0, len(padded) - 1279, 1280))


@pytest.fixture(scope="module")
def wake_model(settings: Settings) -> WakeModel:
    return WakeModel(resolve_wake_model("hey_jarvis"))


# the wake word -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("voice", "speed"),
    [("en-us", 150), ("en-us+f3", 175), ("en-gb", 140), ("en-gb-scotland", 160)],
)
def test_the_wake_word_fires_on_hey_jarvis(wake_model, voice: str, speed: int) -> None:
    assert max_wake_score(wake_model, espeak("hey jarvis", voice, speed)) >= 0.5


def test_the_wake_word_does_not_fire_on_other_speech(wake_model) -> None:
    other = [
        "the weather is nice today, let us go for a walk in the park",
        "hey marvin, could you pass me the salt",
        "hey harvey, how was the meeting",
        "I parked the car on level three next to the elevator",
        "set a timer for ten minutes",
    ]
    for voice in ("en-us", "en-gb"):
        speech = concat(*(concat(trim(espeak(t, voice)), silence(0.5)) for t in other))
        assert max_wake_score(wake_model, speech) < 0.5, voice


def test_streaming_scores_equal_openwakeword_with_and_without_the_energy_gate() -> None:
    from openwakeword import Model

    files = resolve_wake_model("hey_jarvis")
    reference = Model(
        wakeword_models=[str(files.model)],
        inference_framework="onnx",
        melspec_model_path=str(files.melspectrogram),
        embedding_model_path=str(files.embedding),
    )
    plain, gated = WakeModel(files), WakeModel(files, gate=EnergyGate())
    rng = np.random.default_rng(4)
    hum = (rng.standard_normal(16000 * 14) * 40).astype(np.int16)
    speech = concat(
        silence(6.0), trim(espeak("hey jarvis, lock the screen", "en-us", 150)), silence(2.0),
        trim(espeak("hey jarvis", "en-gb", 160)), silence(3.0),
    )
    clip = speech + hum[: len(speech)]  # a quiet room, so the gate closes
    ours, theirs, with_gate = [], [], []
    for i in range(0, len(clip) - 1279, 1280):
        frame = clip[i : i + 1280]
        theirs.append(float(next(iter(reference.predict(frame).values()))))
        ours.append(plain.score(frame))
        with_gate.append(gated.score(frame))
    ours, theirs, with_gate = map(np.array, (ours, theirs, with_gate))
    # openwakeword starts from random features: compare once they are flushed.
    np.testing.assert_allclose(ours[20:], theirs[20:], atol=1e-4)
    assert gated.skipped_frames > 20  # the gate did skip the quiet stretches...
    scored = with_gate > 0
    np.testing.assert_allclose(with_gate[scored], ours[scored], atol=1e-4)  # ...exactly
    assert np.flatnonzero(with_gate >= 0.5).tolist() == np.flatnonzero(ours >= 0.5).tolist()
    assert (ours >= 0.5).any()


# the whole front end ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "voice", "intent", "name", "endpoint"),
    [
        ("lock the screen", "en-us+f3", "act", "lock_screen", "grammar"),
        ("pause the music", "en-us", "act", "media_pause", "grammar"),
        ("set a timer for ten minutes", "en-us+f3", "reminder", "timer", "slots"),
        ("remind me to call the plumber tomorrow", "en-us", "reminder", "remind", "silence"),
    ],
)
def test_the_command_after_the_wake_word_is_transcribed_and_routed(
    front, router, command, voice, intent, name, endpoint
) -> None:
    events = listen(front, command_clip(command, voice=voice, speed=175))
    wakes, transcripts = of(Wake, events), of(Transcript, events)
    assert len(wakes) == 1 and wakes[0].model == "hey_jarvis"
    assert len(transcripts) == 1, events
    transcript = transcripts[0]
    assert "jarvis" not in transcript.text.lower()  # the wake phrase is stripped
    match = router.grammar.match(transcript.text)
    assert match is not None, transcript
    assert (match.intent.value, match.name) == (intent, name)
    decision = router.route(transcript.text)
    assert decision.intent.value == intent and decision.stage == 0
    # A closed command ends on the grammar; one that ends on its time, resolved, after a
    # longer pause ("slots"); an open one ("... tomorrow": "at nine" may follow) waits
    # for the silence tail (more words could still be coming).
    assert transcript.endpoint == endpoint
    # An open one is announced first, as a partial, while the silence tail passes.
    partials = of(Partial, events)
    if endpoint in ("silence", "slots"):
        assert [(p.utterance, p.text) for p in partials] == [
            (transcript.utterance, transcript.text)]
        assert events.index(partials[0]) < events.index(transcript)
    else:
        assert partials == []
    t = transcript.timings
    assert t.wake_detected <= t.speech_end <= t.transcript_ready
    assert 0 < transcript.confidence <= 1


@pytest.mark.parametrize(
    ("first", "pause_s", "rest", "endpoint", "whole"),
    [
        # (Each ends on "slots" in the end: the whole command is filled, after its time.)
    # A short breath after a whole, resolved command: it goes on, nothing is cut.
        ("set a timer for ten minutes", 0.25, "and thirty seconds", "slots", True),
        # A pause past grammar_slot_silence_ms (450) but short of silence_ms (700) after
        # a whole, resolved command ends it there: the price of answering sooner.
        ("set a timer for ten minutes", 0.65, "and thirty seconds", "slots", False),
        # The same pause where the command is not whole yet (no time) cuts nothing.
        ("remind me to call", 0.65, "the plumber at five", "slots", True),
    ],
)
def test_a_pause_ends_a_command_early_only_once_its_slots_are_filled(
    front, first, pause_s, rest, endpoint, whole
) -> None:
    clip = concat(
        command_clip(first, voice="en-us", speed=175, tail_s=0.0),
        silence(pause_s),
        trim(espeak(rest, "en-us", 175)),
        silence(1.5),
    )
    transcripts = of(Transcript, listen(front, clip))
    assert transcripts, "no transcript"
    transcript = transcripts[0]
    assert transcript.endpoint == endpoint, transcript
    word = max(rest.split(), key=len)  # "seconds", "plumber" (Whisper writes 30, 5)
    assert (word in transcript.text.lower()) is whole, transcript.text


@pytest.mark.parametrize("block", [512, 700, 8000])
def test_any_device_block_size_gives_the_same_command(front, block: int) -> None:
    front_end, events = front
    clip = command_clip("lock the screen", voice="en-us+f3", speed=175)
    front_end.run(ArraySource(clip, block=block))
    seen = []
    while not isinstance(event := events.get(timeout=30), SourceEnded):
        seen.append(event)
    assert ["screen" in t.text.lower() for t in of(Transcript, seen)] == [True]


def test_a_pause_between_the_wake_word_and_the_command(front) -> None:
    clip = command_clip("lock the screen", voice="en-us+f3", speed=175, gap_s=1.2)
    transcripts = of(Transcript, listen(front, clip))
    assert [t.text.rstrip(".").lower() for t in transcripts] == ["lock the screen"]


def test_speech_without_the_wake_word_produces_nothing(front) -> None:
    clip = concat(silence(0.5), trim(espeak("lock the screen and pause the music")), silence(1))
    assert listen(front, clip) == []


def test_two_turns_in_one_stream_fire_twice(front) -> None:
    clip = concat(
        command_clip("lock the screen", voice="en-us+f3", speed=175),
        command_clip("pause the music", voice="en-us", speed=175),
    )
    events = listen(front, clip)
    assert len(of(Wake, events)) == 2
    texts = [t.text.lower() for t in of(Transcript, events)]
    assert len(texts) == 2 and "screen" in texts[0] and "music" in texts[1]


def test_the_wake_word_alone_is_no_speech(front) -> None:
    clip = concat(silence(1.0), trim(espeak("hey jarvis", "en-us+f3", 175)), silence(3.0))
    events = listen(front, clip)
    assert len(of(Wake, events)) == 1
    assert len(of(NoSpeech, events)) == 1 and not of(Transcript, events)


def test_near_silence_after_the_wake_word_is_not_a_command(front) -> None:
    rng = np.random.default_rng(3)
    hum = (rng.standard_normal(16000 * 3) * 60).astype(np.int16)  # a quiet room
    clicks = silence(3.0)
    clicks[::8000] = 12000  # a few clicks
    clip = concat(silence(1.0), trim(espeak("hey jarvis", "en-us+f3", 175)), hum + clicks)
    events = listen(front, clip)
    assert len(of(Wake, events)) == 1
    assert not of(Transcript, events), events
    assert of(NoSpeech, events) or of(Dropped, events)


def test_a_follow_up_turn_needs_no_wake_word(front) -> None:
    front_end, _events = front
    front_end.listen_now()
    events = listen(front, concat(silence(0.3), trim(espeak("yes", "en-us+f3", 150)), silence(1)))
    transcripts = of(Transcript, events)
    assert not of(Wake, events)
    assert len(transcripts) == 1 and transcripts[0].timings.wake_detected is None
    assert transcripts[0].text.strip(".!").lower() == "yes"


def test_a_follow_up_that_says_the_name_again_is_just_the_command(front) -> None:
    # After a question people often say the name anyway: it is not part of the command.
    front_end, _events = front
    front_end.listen_now()
    said = concat(silence(0.3), trim(espeak("hey jarvis", "en-us", 170)), silence(0.15),
                  trim(espeak("lock the screen", "en-us", 170)), silence(1))
    transcripts = of(Transcript, listen(front, said))
    assert len(transcripts) == 1, transcripts
    assert normalize_words(transcripts[0].text) == "lock the screen", transcripts


@pytest.mark.parametrize(
    ("command", "voice", "heard"),
    [
        # tiny.en, given these alone, wrote them two or more times over (bench/wakeword_stt.py
        # --fit-min-s: "What time is it? what time is it", "Volume up volume up volume ...").
        ("what time is it", "en-us", "what time is it"),
        ("turn on the kitchen light", "en-us", "turn on the kitchen light"),
        ("volume up", "en-gb", "volume up"),
    ],
)
def test_a_follow_up_command_is_heard_once(front, command: str, voice: str, heard: str) -> None:
    # No wake phrase in the audio (a follow-up, or a satellite that heard its own wake
    # word): where Whisper most often starts the command over.
    front_end, _events = front
    front_end.listen_now()
    events = listen(front, concat(silence(0.1), trim(espeak(command, voice, 140)), silence(1)))
    transcripts = of(Transcript, events)
    assert len(transcripts) == 1, events
    assert normalize_words(transcripts[0].text) == heard


# bad input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "distort",
    [
        pytest.param(lambda x: np.clip(x.astype(np.int32) + 8000, -32768, 32767).astype(np.int16),
                     id="dc-offset"),
        pytest.param(lambda x: scale(x, 3.0), id="very-loud"),
        pytest.param(lambda x: add_noise(x, 10, seed=1), id="noise-10dB"),
    ],
)
def test_distorted_audio_still_routes(front, distort) -> None:
    events = listen(front, distort(command_clip("lock the screen", voice="en-us+f3", speed=175)))
    texts = [t.text.lower() for t in of(Transcript, events)]
    assert texts and "screen" in texts[0], events


@pytest.mark.parametrize(
    "distort",
    [
        pytest.param(lambda x: scale(x, 40.0), id="clipped-hard"),
        pytest.param(lambda x: scale(x, 0.003), id="very-quiet"),
        pytest.param(lambda x: np.full_like(x, 32767), id="full-scale-dc"),
        pytest.param(lambda x: np.zeros(0, np.int16), id="empty"),
    ],
)
def test_pathological_audio_does_not_crash(front, distort) -> None:
    events = listen(front, distort(command_clip("lock the screen", voice="en-us+f3", speed=175)))
    # A Partial is one of the front end's events too: a pause of 300 ms in the distorted
    # speech (hard clipping makes one here) yields what was said so far.
    expected = (Wake, Partial, Transcript, NoSpeech, Dropped)
    assert all(isinstance(e, expected) for e in events), events


class _BusyStt:
    """The real model on a box busy with something else: every transcription takes
    `delay_s` longer."""

    def __init__(self, stt, delay_s: float):
        self._stt = stt
        self.delay_s = delay_s

    def transcribe(self, audio):
        time.sleep(self.delay_s)
        return self._stt.transcribe(audio)

    def __getattr__(self, name: str):
        return getattr(self._stt, name)


def test_a_recording_is_cut_the_same_on_a_busy_box(front) -> None:
    # Pauses that each start a speculative transcript, then speech again: on a busy box
    # the transcriber used to reach the second one after speech had resumed, drop it,
    # and hear "lock the screen" and the words after it as one utterance.
    voice = "en-us+f3"
    clip = concat(
        silence(1.0), trim(espeak("hey jarvis", voice)), silence(0.15),
        trim(espeak("lock", voice)), silence(0.3), trim(espeak("the screen", voice)),
        silence(0.45), trim(espeak("thank you so much", voice)), silence(1.5),
    )
    front_end, _events = front
    quick = of(Transcript, listen(front, clip))
    transcriber = front_end._transcriber  # the one seam to slow it: a test-only swap
    real = transcriber.stt
    transcriber.stt = _BusyStt(real, delay_s=1.5)
    try:
        busy = of(Transcript, listen(front, clip))
    finally:
        transcriber.stt = real
    assert [(t.text, t.endpoint) for t in busy] == [(t.text, t.endpoint) for t in quick]
    assert len(quick) == 1 and "screen" in quick[0].text.lower(), quick


def test_a_stereo_44k_wav_file_is_resampled_and_routed(front, tmp_path: Path) -> None:
    import scipy.signal

    clip = command_clip("lock the screen", voice="en-us+f3", speed=175)
    at_44k = scipy.signal.resample_poly(clip.astype(float), 441, 160)
    stereo = np.repeat(np.round(at_44k).astype(np.int16)[:, None], 2, axis=1)
    path = write_wav(tmp_path / "stereo.wav", stereo.reshape(-1), rate=44100, channels=2)
    front_end, events = front
    front_end.run(FileSource(path))
    seen = []
    while not isinstance(event := events.get(timeout=30), SourceEnded):
        seen.append(event)
    assert event.source == str(path)
    assert ["screen" in t.text.lower() for t in of(Transcript, seen)] == [True]


# endpointing with the real VAD ----------------------------------------------------------


def test_the_real_vad_ends_the_utterance_near_where_speech_ends(settings) -> None:
    vad = SileroVad(require_model("silero-vad"))
    speech = trim(espeak("please turn the volume down a little", "en-us", 160))
    clip = concat(silence(0.5), speech, silence(2.0))
    true_end = (len(clip) - 2.0 * 16000) / 16000
    endpointer = Endpointer(EndpointConfig(silence_ms=700, grammar_early_stop=False), 0.0)
    ended_at = None
    for i, prob in enumerate(vad.push(clip)):
        if endpointer.update(prob, (i + 1) * WINDOW_S) is Step.END:
            ended_at = (i + 1) * WINDOW_S
            break
    assert ended_at is not None
    assert abs(endpointer.speech_end_t - true_end) < 0.25
    assert abs(endpointer.speech_start_t - 0.5) < 0.25
    assert ended_at - endpointer.speech_end_t == pytest.approx(0.7, abs=0.04)


# configuration of the wake word ---------------------------------------------------------


def test_a_custom_wake_model_by_path(settings, router, tmp_path: Path) -> None:
    bundled = resolve_wake_model("hey_jarvis").model
    custom = tmp_path / "my_word.onnx"
    shutil.copy(bundled, custom)
    custom_settings = dataclasses.replace(
        settings, wakeword=dataclasses.replace(settings.wakeword, model=str(custom))
    )
    events = EventQueue()
    with FrontEnd.from_settings(custom_settings, sink=events, grammar=router.grammar) as fe:
        fe.run(ArraySource(command_clip("lock the screen", voice="en-us+f3", speed=175)))
        seen = []
        while not isinstance(event := events.get(timeout=30), SourceEnded):
            seen.append(event)
    assert [w.model for w in of(Wake, seen)] == ["my_word"]


def test_an_unknown_wake_model_names_the_ones_there_are() -> None:
    with pytest.raises(ModelMissingError, match="hey_jarvis"):
        resolve_wake_model("okay_computer")
    with pytest.raises(ModelMissingError, match="not found"):
        resolve_wake_model("/nonexistent/wake.onnx")


def test_vad_gating_still_lets_the_wake_word_through(settings, router) -> None:
    gated = dataclasses.replace(
        settings, wakeword=dataclasses.replace(settings.wakeword, vad_threshold=0.5)
    )
    events = EventQueue()
    with FrontEnd.from_settings(gated, sink=events, grammar=router.grammar) as fe:
        fe.run(ArraySource(command_clip("lock the screen", voice="en-us+f3", speed=175)))
        seen = []
        while not isinstance(event := events.get(timeout=30), SourceEnded):
            seen.append(event)
    assert len(of(Wake, seen)) == 1 and len(of(Transcript, seen)) == 1


# the daemon's side: an asyncio consumer -------------------------------------------------


def test_events_reach_an_asyncio_loop_that_keeps_running(front, settings, router) -> None:
    async def main() -> tuple[list, int]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        tick_task = asyncio.create_task(ticker())
        fe = FrontEnd.from_settings(settings, sink=asyncio_sink(loop, queue),
                                    grammar=router.grammar)
        fe.start(ArraySource(command_clip("lock the screen", voice="en-us+f3", speed=175)))
        seen = []
        while not isinstance(event := await asyncio.wait_for(queue.get(), 60), SourceEnded):
            seen.append(event)
        ticks_during = ticks
        tick_task.cancel()
        fe.close()
        return seen, ticks_during

    seen, ticks = asyncio.run(main())
    assert [type(e) for e in seen] == [Wake, Transcript]
    # The loop kept running its own tasks while the models worked in threads.
    assert ticks > 10
