"""The wake verifier: microWakeWord's "hey jarvis" as a second check (wakeword/verifier.py).

With the real model file from the model cache (`mavend models pull`; a missing one
fails with that hint) and speech synthesized now: hibari (mavend's own natural voice)
and espeak-ng. microWakeWord does not hear most espeak voices at all (BENCHMARKS.md,
"Wake verifier"), which the front-end test below uses: openWakeWord fires on espeak's
en-gb "hey jarvis", the verifier turns it down.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from mavend.config import parse_settings
from mavend.errors import ConfigError, ModelMissingError
from tests.audio_fixtures import add_noise, concat, espeak, noise, silence, trim, write_wav
from tests.conftest import require_model
from wakeword import EventQueue, FileSource, FrontEnd, SourceEnded, Transcript, Wake
from wakeword.detector import FRAME, TriggerConfig, WakeTrigger
from wakeword.verifier import CONFIRM_S, MODEL_NAME, MicroVerifier

pytestmark = pytest.mark.models

RATE = 16000


@pytest.fixture(scope="module")
def verifier() -> MicroVerifier:
    return MicroVerifier(require_model(MODEL_NAME))


@pytest.fixture(scope="module")
def hibari():
    from hibari import Hibari

    from wakeword.audio import resample

    tts = Hibari(model=str(require_model("hibari-heart")), threads=1)

    def speak(text: str, speed: float = 1.0) -> np.ndarray:
        audio = np.clip(np.asarray(tts(text, speed=speed, seed=0), dtype=np.float32), -1, 1)
        return trim(resample(np.round(audio * 32767).astype(np.int16), int(tts.sample_rate),
                             RATE))

    return speak


def clip(speech: np.ndarray) -> np.ndarray:
    return concat(silence(1.0), speech, silence(0.4))


# the verifier on its own -----------------------------------------------------------------


def test_it_keeps_microwakewords_own_cut_offs(verifier: MicroVerifier) -> None:
    assert verifier.cutoff == pytest.approx(0.97)
    assert verifier.sliding_window == 5


@pytest.mark.parametrize("speed", [0.85, 1.0, 1.15])
def test_it_hears_hey_jarvis_in_a_natural_voice(verifier, hibari, speed: float) -> None:
    verdict = verifier.check(clip(hibari("Hey Jarvis, lock the screen.", speed)))
    assert verdict.accepted, verdict
    assert verdict.ms < 1000


@pytest.mark.parametrize("snr", [10, 0])
def test_it_hears_hey_jarvis_in_noise(verifier, hibari, snr: int) -> None:
    speech = clip(hibari("Hey Jarvis, what time is it?"))
    assert verifier.check(add_noise(speech, snr, seed=3)).accepted


def test_it_hears_an_espeak_voice_it_knows(verifier) -> None:
    assert verifier.check(clip(trim(espeak("hey jarvis", "en-029+f2", 160)))).accepted


@pytest.mark.parametrize(
    "text", ["Hey Travis, lock the screen.", "Hey Marvin, what time is it?",
             "Jarvis.", "The weather is nice today, let us go for a walk."]
)
def test_it_turns_down_near_misses_and_other_speech_in_a_natural_voice(
    verifier, hibari, text: str
) -> None:
    verdict = verifier.check(clip(hibari(text)))
    assert not verdict.accepted, verdict


@pytest.mark.parametrize(
    "text", ["hey travis", "hey marvin", "hey service", "set a timer for ten minutes"]
)
def test_it_turns_down_near_misses_in_espeak(verifier, text: str) -> None:
    assert not verifier.check(clip(trim(espeak(text, "en-us", 160)))).accepted


def test_it_turns_down_noise_and_silence(verifier) -> None:
    pink = np.round(noise(2.5, seed=1) * 3000).astype(np.int16)
    white = np.round(noise(2.5, seed=2, kind="white") * 3000).astype(np.int16)
    for audio in (pink, white, silence(2.5), silence(0.01)):
        verdict = verifier.check(audio)
        assert not verdict.accepted and verdict.score < 0.5, verdict


def test_only_the_window_before_the_check_counts(verifier, hibari) -> None:
    wake = clip(hibari("Hey Jarvis."))
    assert verifier.check(wake).accepted
    # The phrase 3 s before the end of the audio is outside the 2 s window.
    assert not verifier.check(concat(wake, silence(3.0))).accepted


def test_each_check_starts_from_a_fresh_state(verifier, hibari) -> None:
    speech = clip(hibari("Hey Jarvis, lock the screen."))
    first = verifier.check(speech).score
    verifier.check(clip(hibari("Something else entirely.")))
    assert verifier.check(speech).score == pytest.approx(first)


def test_a_missing_model_says_how_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(ModelMissingError, match="mavend models pull"):
        MicroVerifier(tmp_path)
    with pytest.raises(ModelMissingError, match=r"mavend models pull.*verifier = \"none\""):
        MicroVerifier.from_models(tmp_path)


# configuration --------------------------------------------------------------------------


def test_the_config_key_parses_and_sets_the_trigger_wait() -> None:
    micro = parse_settings('[wakeword]\nverifier = "micro"\n')
    none = parse_settings('[wakeword]\nverifier = "none"\n')
    assert micro.wakeword.verifier == "micro" and none.wakeword.verifier == "none"
    assert TriggerConfig.from_settings(micro.wakeword).confirm_s == CONFIRM_S
    assert TriggerConfig.from_settings(none.wakeword).confirm_s == 0.0


@pytest.mark.parametrize("value", ['"tflite"', '"Micro"', "true", "1"])
def test_a_malformed_verifier_names_the_key(value: str) -> None:
    with pytest.raises(ConfigError, match=r"wakeword\.verifier"):
        parse_settings(f"[wakeword]\nverifier = {value}\n")


def test_the_trigger_waits_and_reports_the_crossing() -> None:
    frame_s = FRAME / RATE
    trigger = WakeTrigger(TriggerConfig(threshold=0.5, confirm_s=0.24))
    scores = [0.0, 0.6, 0.9, 0.2, 0.0, 0.0, 0.7, 0.0]
    fired = [i for i, s in enumerate(scores) if trigger.update(s, (i + 1) * frame_s)]
    assert fired == [4]  # 3 frames (0.24 s) after the crossing at frame 1
    assert trigger.crossed == (0.9, pytest.approx(2 * frame_s))  # its peak, its time
    plain = WakeTrigger(TriggerConfig(threshold=0.5))
    assert [i for i, s in enumerate(scores) if plain.update(s, (i + 1) * frame_s)] == [1]


# the front end ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def settings():
    for name in ("openwakeword", "silero-vad", "whisper-tiny.en", MODEL_NAME):
        require_model(name)
    return parse_settings('[wakeword]\nverifier = "micro"\n[endpoint]\nno_speech_timeout_s = 2.0\n')


def run_file(settings, path: Path) -> tuple[list, FrontEnd]:
    events = EventQueue()
    with FrontEnd.from_settings(settings, sink=events) as front:
        front.run(FileSource(path))
        seen = []
        while not isinstance(event := events.get(timeout=30), SourceEnded):
            seen.append(event)
    return seen, front


def test_the_front_end_opens_nothing_when_the_verifier_turns_a_wake_down(
    settings, tmp_path: Path
) -> None:
    # openWakeWord hears espeak's en-gb "hey jarvis"; microWakeWord does not.
    speech = concat(trim(espeak("hey jarvis", "en-gb", 140)), silence(0.2),
                    trim(espeak("lock the screen", "en-gb", 140)))
    path = write_wav(tmp_path / "espeak.wav", concat(silence(1.0), speech, silence(1.5)))
    seen, front = run_file(settings, path)
    assert front.verifier is not None and front.verifier_rejects == 1
    assert [e for e in seen if isinstance(e, Wake | Transcript)] == []
    # Without the verifier the same file is a turn: the rejection was the verifier's.
    plain = dataclasses.replace(
        settings, wakeword=dataclasses.replace(settings.wakeword, verifier="none")
    )
    seen, front = run_file(plain, path)
    assert front.verifier is None
    assert len([e for e in seen if isinstance(e, Wake)]) == 1
    assert ["screen" in e.text.lower() for e in seen if isinstance(e, Transcript)] == [True]


def test_the_front_end_takes_a_verified_wake(settings, hibari, tmp_path: Path) -> None:
    speech = concat(hibari("Hey Jarvis."), silence(0.2), hibari("Lock the screen."))
    path = write_wav(tmp_path / "hibari.wav", concat(silence(1.0), speech, silence(1.5)))
    seen, front = run_file(settings, path)
    wakes = [e for e in seen if isinstance(e, Wake)]
    assert len(wakes) == 1 and front.verifier_rejects == 0
    assert 1.0 < wakes[0].t < 1.0 + len(speech) / RATE  # the crossing's time, not the check's
    assert ["screen" in e.text.lower() for e in seen if isinstance(e, Transcript)] == [True]


def test_the_front_end_fails_on_a_missing_verifier_model(settings, tmp_path: Path) -> None:
    empty = dataclasses.replace(settings, models=dataclasses.replace(settings.models,
                                                                     dir=str(tmp_path)))
    with pytest.raises(ModelMissingError, match=rf"{MODEL_NAME}.*mavend models pull"):
        FrontEnd.from_settings(empty, sink=EventQueue())
