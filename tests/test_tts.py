"""Spoken replies and earcons, for real: the hibari voice from the model cache, played
through sounddevice into a private PulseAudio null sink ("spk"), recorded from its
monitor with parec and transcribed by faster-whisper tiny.en."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from mavend.config import EarconSettings, Settings, TtsSettings
from mavend.errors import ModelMissingError
from mavend.tts import Outcome, Speaker, Voice, for_the_ear
from tests.conftest import ROOT, require_model
from tests.pulse import Pulse, _need, pulse_source  # noqa: F401

RATE = 16000


# ---------------------------------------------------------------- text for the ear


def test_markup_emoji_and_control_characters_are_not_read() -> None:
    spoken = for_the_ear("**Done**: turned on the [lights](http://x.io/a).\x07 🎉\n")
    assert spoken.text == "Done: turned on the lights."
    assert spoken.dropped == ["control characters", "emoji and symbols"]


def test_another_script_is_dropped_and_named() -> None:
    spoken = for_the_ear("Привет мир, good night. 日本語 ok.")
    assert spoken.text == "good night. ok."
    assert spoken.dropped == ["CJK text", "Cyrillic text"]


def test_symbols_are_spelled_out() -> None:
    assert for_the_ear("It's 20°C & 50% humid — nice.").text == (
        "It's 20 degrees Celsius and 50 percent humid, nice."
    )


def test_a_long_reply_is_cut_to_a_few_sentences_and_more() -> None:
    many = " ".join(f"Item number {i} is here." for i in range(500))  # ~12,000 characters
    spoken = for_the_ear(many, max_sentences=3)
    assert spoken.cut and len(spoken.sentences) == 4
    assert spoken.sentences[-1] == "And more."
    one_endless = for_the_ear("word " * 2000)
    assert len(one_endless.text) < 450 and one_endless.text.endswith(", and more.")


def test_abbreviations_do_not_end_sentences() -> None:
    assert for_the_ear("Dr. Smith is in. See you.").sentences == ["Dr. Smith is in.", "See you."]


def test_a_list_of_reminders_is_summarised_for_the_ear() -> None:
    from mavend.assistant import open_assistant

    assistant = open_assistant(Settings())
    try:
        names = ("anna", "ben", "carl", "dora", "emil", "fay", "gus", "hana")
        for hours, name in enumerate(names, start=1):
            turn = assistant.handle_text(f"remind me to call {name} in {hours} hours")
            assert "reminder_id" in turn.reply.data, turn.reply.text
        reply = assistant.handle_text("what are my reminders").reply
    finally:
        assistant.store.close()
    assert reply.text.startswith("You have 8 reminders:"), reply.text
    assert re.fullmatch(r"You have 8 reminders; the next is call anna at [^;]+\.", reply.spoken), (
        reply.spoken
    )
    assert reply.to_json()["spoken"] == reply.spoken


# ---------------------------------------------------------------- the voice and its faults


def test_a_missing_voice_model_is_a_clear_error(tmp_path: Path, caplog) -> None:
    with pytest.raises(ModelMissingError, match="mavend models pull"):
        Voice.load(tmp_path / "hibari.onnx")
    speaker = Speaker(TtsSettings(), EarconSettings(enabled=False), tmp_path / "empty-cache")
    with caplog.at_level(logging.WARNING, logger="mavend.tts"):
        assert speaker.load() is False
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "spoken replies are off" in errors[0].getMessage()
    assert "mavend models pull" in errors[0].getMessage()
    assert speaker.speak("hello").result(5) is Outcome.NO_VOICE


def test_no_output_device_is_one_log_line_and_the_reply_completes(caplog) -> None:
    require_model("hibari-heart")
    speaker = Speaker(TtsSettings(device="no-such-speaker"), EarconSettings())
    with caplog.at_level(logging.INFO, logger="mavend.tts"):
        assert speaker.load() is True
        outcomes = [speaker.speak(f"Reply {i}.").result(10) for i in range(3)]
        outcomes.append(speaker.earcon("wake").result(10))
    speaker.close()
    assert outcomes == [Outcome.NO_DEVICE] * 4
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1, lines
    assert "no output device 'no-such-speaker'" in lines[0] and "notifications only" in lines[0]


# ---------------------------------------------------------------- heard through PulseAudio


@pytest.fixture
def speaker_sink(pulse_source: Pulse) -> Pulse:  # noqa: F811
    """A second null sink, "spk", as the default output: what mavend says goes there."""
    pulse_source.pactl("load-module", "module-null-sink", "sink_name=spk", "rate=24000",
                       "channels=1")
    pulse_source.pactl("set-default-sink", "spk")
    # PortAudio lists devices once, when it starts; the microphone source refreshes the
    # list when it opens (the daemon's order), here we do it ourselves.
    from wakeword.capture import refresh_devices

    refresh_devices()
    return pulse_source


class Recorder:
    def __init__(self, pulse: Pulse, path: Path):
        self.path = path
        self.proc = subprocess.Popen(
            [_need("parec", "pulseaudio-utils"), "-d", "spk.monitor", "--format=s16le",
             f"--rate={RATE}", "--channels=1"],
            env=pulse.env, stdout=path.open("wb"), stderr=subprocess.PIPE,
        )
        time.sleep(0.3)

    def stop(self) -> np.ndarray:
        time.sleep(0.5)
        self.proc.terminate()
        self.proc.wait(10)
        return np.fromfile(self.path, dtype="<i2").astype(np.float32) / 32768.0


@pytest.fixture
def recorder(speaker_sink: Pulse, tmp_path: Path) -> Iterator[Recorder]:
    rec = Recorder(speaker_sink, tmp_path / "out.raw")
    yield rec
    if rec.proc.poll() is None:
        rec.proc.kill()
        rec.proc.wait(5)


@pytest.fixture(scope="module")
def whisper():
    from faster_whisper import WhisperModel

    return WhisperModel(str(require_model("whisper-tiny.en")), device="cpu",
                        compute_type="int8", cpu_threads=2)


def heard(whisper, audio: np.ndarray) -> str:
    assert np.abs(audio).max() > 0.05, "nothing was played into the sink"
    segments, _ = whisper.transcribe(audio, language="en", beam_size=1)
    return " ".join(s.text for s in segments).lower()


def loaded_speaker(**tts) -> Speaker:
    require_model("hibari-heart")
    speaker = Speaker(TtsSettings(**tts), EarconSettings())
    assert speaker.load()
    return speaker


def test_say_speak_says_the_time(recorder: Recorder, speaker_sink: Pulse, whisper) -> None:
    require_model("hibari-heart")
    before = datetime.now()
    result = subprocess.run(
        [sys.executable, "-m", "mavend", "say", "--local", "--speak", "what time is it"],
        env={**os.environ, **speaker_sink.env}, capture_output=True, text=True, timeout=120,
        cwd=ROOT,
    )
    after = datetime.now()
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("It's "), result.stdout
    text = heard(whisper, recorder.stop())
    digits = re.sub(r"\D", "", text)
    assert any(str(h) in digits for h in {before.hour, after.hour}), (text, result.stdout)
    assert before.strftime("%A").lower() in text or after.strftime("%A").lower() in text, text


def test_a_reply_streams_sentence_by_sentence(recorder: Recorder, whisper) -> None:
    speaker = loaded_speaker()
    started = time.monotonic()
    done = speaker.speak("The kitchen lights are on. The oven timer has ten minutes left. "
                         "Your sister arrives on Friday.")
    assert done.result(60) is Outcome.SPOKEN
    text = heard(whisper, recorder.stop())
    speaker.close()
    for words in ("kitchen lights", "oven timer", "friday"):
        assert words in text, text
    assert time.monotonic() - started < 30


def test_unsayable_text_completes_with_one_log_line(recorder: Recorder, whisper, caplog) -> None:
    speaker = loaded_speaker()
    with caplog.at_level(logging.INFO, logger="mavend.tts"):
        outcome = speaker.speak("Okay 🎉\x07\x1b[31m, Привет мир. The door is locked.").result(60)
    speaker.close()
    assert outcome is Outcome.SPOKEN
    lines = [r.getMessage() for r in caplog.records if "spoken reply" in r.getMessage()]
    assert len(lines) == 1, lines
    assert "control characters" in lines[0] and "Cyrillic text" in lines[0]
    text = heard(whisper, recorder.stop())
    assert "door is locked" in text, text


def test_a_10000_character_reply_is_cut_and_ends_with_and_more(recorder: Recorder, whisper,
                                                               caplog) -> None:
    speaker = loaded_speaker(max_sentences=2)
    reply = " ".join(f"Note {i} says buy more apples." for i in range(330))
    assert len(reply) > 10_000
    with caplog.at_level(logging.INFO, logger="mavend.tts"):
        started = time.monotonic()
        assert speaker.speak(reply).result(60) is Outcome.SPOKEN
    speaker.close()
    assert time.monotonic() - started < 20
    assert any("cut to 3 sentences" in r.getMessage() for r in caplog.records)
    text = heard(whisper, recorder.stop())
    assert "apples" in text and "and more" in text, text


def test_an_earcon_is_heard_on_the_wake_word(recorder: Recorder) -> None:
    from wakeword import Wake

    speaker = loaded_speaker()
    speaker.on_voice_event(Wake(model="hey_jarvis", score=0.99, t=0.0))
    assert speaker.earcon("done").result(20) is Outcome.SPOKEN
    audio = recorder.stop()
    speaker.close()
    loud = np.flatnonzero(np.abs(audio) > 0.1)
    assert loud.size > 0.1 * RATE, "the chimes were not heard"
    assert (loud[-1] - loud[0]) / RATE < 3.0  # two short chimes, not a long sound


def test_the_device_vanishing_mid_reply_is_one_log_line(speaker_sink: Pulse, caplog) -> None:
    speaker = loaded_speaker(max_sentences=20)
    reply = " ".join(f"Sentence number {i} is read out slowly." for i in range(20))
    with caplog.at_level(logging.WARNING, logger="mavend.tts"):
        done = speaker.speak(reply)
        time.sleep(2.5)
        speaker_sink.kill()
        outcome = done.result(30)
    speaker.close()
    assert outcome in (Outcome.DEVICE_FAILED, Outcome.NO_DEVICE)
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1, lines
    assert "output device" in lines[0]


def test_the_done_chime_gives_way_to_a_reply_that_is_ready(recorder: Recorder, whisper,
                                                          tmp_path: Path) -> None:
    # The chime says "I heard you"; a reply ready while it plays says that better, and
    # must not wait for the chime's end (end of speech -> first reply audio). A long
    # chime of the user's own (one second) makes the cut plain on a busy box too.
    from mavend.tts.audio import write_wav
    from mavend.tts.earcons import make_chime

    long_chime = np.concatenate([make_chime((660.0,), tone_s=0.05)] * 10)
    write_wav(tmp_path / "long.wav", long_chime, 24000)
    require_model("hibari-heart")
    speaker = Speaker(TtsSettings(), EarconSettings(done_sound=str(tmp_path / "long.wav")))
    assert speaker.load()
    speaker.earcon("done")
    assert speaker.speak("The door is locked.").result(60) is Outcome.SPOKEN
    audio = recorder.stop()
    speaker.close()
    assert speaker.chimes_cut == 1
    assert "door is locked" in heard(whisper, audio)
    # On the sink: the chime (ten 70 ms pips), then the reply well before the chime's
    # second is over. The reply is the first sound longer than a pip (50 ms).
    block = RATE // 100
    peaks = np.abs(audio[: audio.size // block * block]).reshape(-1, block).max(1)
    loud = peaks > 0.01
    onset = int(np.flatnonzero(loud)[0])
    runs = np.split(np.flatnonzero(loud), np.flatnonzero(np.diff(np.flatnonzero(loud)) > 1) + 1)
    reply = next(int(run[0]) for run in runs if run.size > 8)
    assert (reply - onset) * 10 < 600, (onset, reply)


def test_the_built_in_done_chime_is_written_in_time_so_a_reply_can_cut_it(
    recorder: Recorder,
) -> None:
    # The sound server would take the whole 170 ms chime at once, and a reply ready 30 ms
    # in would wait for all of it: the chime is written 10 ms at a time, in time.
    speaker = loaded_speaker()
    # The wake chime first, so the sink and the recording are running when it counts.
    assert speaker.earcon("wake").result(20) is Outcome.SPOKEN
    time.sleep(0.4)
    speaker.earcon("done")
    assert speaker.speak("The door is locked.").result(60) is Outcome.SPOKEN
    audio = recorder.stop()
    speaker.close()
    assert speaker.chimes_cut == 1
    block = RATE // 100
    peaks = np.abs(audio[: audio.size // block * block]).reshape(-1, block).max(1)
    loud = np.flatnonzero(peaks > 0.01)
    # The done chime: the first sound after 300 ms of quiet (after the wake chime).
    onset = int(loud[np.flatnonzero(np.diff(loud) > 30)[0] + 1])
    gap = onset + int(np.flatnonzero(peaks[onset:] <= 0.01)[0])
    reply = gap + int(np.flatnonzero(peaks[gap:] > 0.01)[0])
    # The whole chime and the voice's 20 ms lead would put the reply at 190 ms or later.
    assert (reply - onset) * 10 < 170, (onset, gap, reply)
