"""Whisper base (issue 25): pulled and pinned like the other models, loaded by the same
`SpeechToText`, and hearing a natural voice (hibari, synthesized now) in English and,
being multilingual, in the language it is told."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import resample_poly

from mavend.config import SttSettings
from mavend.models import get_profile
from tests.conftest import require_model
from wakeword.stt import SpeechToText, normalize_words

pytestmark = pytest.mark.models

COMMANDS = (
    "Set a timer for ten minutes.",
    "Turn off the kitchen light.",
    "Remind me to call the dentist tomorrow at nine.",
    "What time is it?",
)


@pytest.fixture(scope="module")
def spoken() -> list[np.ndarray]:
    """Each command in the hibari voice, as 16 kHz int16 (what the microphone gives)."""
    from mavend.tts.voice import Voice

    voice = Voice.load(require_model("hibari-heart"))
    clips = []
    for text in COMMANDS:
        audio = voice.synthesize(text)
        assert voice.sample_rate == 24_000
        at_16k = resample_poly(audio, 2, 3)
        clips.append((np.clip(at_16k, -1.0, 1.0) * 32767).astype(np.int16))
    return clips


def test_the_profile_adds_whisper_base_to_the_default_models() -> None:
    default = {m.name for m in get_profile("default").models}
    base = {m.name for m in get_profile("whisper-base").models}
    assert base == default | {"whisper-base"}
    spec = get_profile("whisper-base").model("whisper-base")
    model_bin = next(f for f in spec.files if f.name == "model.bin")
    assert model_bin.sha256 == "905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57"
    assert model_bin.size == 145_217_607
    assert sum(p.size or 0 for p in model_bin.parts) == model_bin.size


def test_whisper_base_hears_a_natural_voice(spoken: list[np.ndarray]) -> None:
    stt = SpeechToText.from_settings(SttSettings(model="whisper-base"))
    assert stt._model.model.is_multilingual  # the same class runs a multilingual model
    heard = [normalize_words(stt.transcribe(clip).text) for clip in spoken]
    expected = [normalize_words(text) for text in COMMANDS]
    right = sum(h == e for h, e in zip(heard, expected, strict=True))
    assert right >= len(COMMANDS) - 1, list(zip(heard, expected, strict=True))


def test_whisper_base_transcribes_in_the_language_it_is_told(
    spoken: list[np.ndarray],
) -> None:
    """English audio with language = "en" is English text, not a translation or a guess."""
    stt = SpeechToText.from_settings(SttSettings(model="whisper-base", language="en"))
    text = stt.transcribe(spoken[1]).text
    assert all(ord(ch) < 128 for ch in text), text
    assert "kitchen" in text.lower()


def test_a_household_of_two_languages_is_heard_in_each(spoken: list[np.ndarray]) -> None:
    """[stt] languages = ["en", "ru"]: each utterance in the likelier of the two, never a
    third; English stays English. (Russian here is espeak-ng's voice, the only one on the
    box: Whisper base understands little of it, but knows which language it is.)"""
    from tests.audio_fixtures import espeak

    stt = SpeechToText.from_settings(SttSettings(model="whisper-base", languages=("en", "ru")))
    only_english = SpeechToText.from_settings(SttSettings(model="whisper-base", language="en"))
    for clip in spoken:  # English is heard as English, word for word as when told so
        heard = stt.transcribe(clip)
        assert heard.language == "en"
        assert heard.to_json()["language"] == "en"
        assert heard.text == only_english.transcribe(clip).text
    russian = stt.transcribe(espeak("напомни мне через десять минут позвонить маме", voice="ru"))
    assert russian.language == "ru"
    assert sum("а" <= ch.lower() <= "я" for ch in russian.text) > 10, russian.text
    assert "минут" in russian.text


def test_languages_need_a_multilingual_model() -> None:
    from mavend.errors import ConfigError

    with pytest.raises(ConfigError, match=r"needs a multilingual model.*whisper-tiny\.en"):
        SpeechToText.from_settings(SttSettings(model="whisper-tiny.en", languages=("en", "ru")))
    one = SpeechToText.from_settings(SttSettings(model="whisper-tiny.en", languages=("en",)))
    assert one.languages == ()  # one language is just `language`
    russian = SpeechToText.from_settings(SttSettings(model="whisper-base", languages=("ru",)))
    assert (russian.language, russian.languages) == ("ru", ())  # that one, not "en"


def test_likeliest_picks_among_the_households_languages() -> None:
    from wakeword.stt import likeliest

    scores = [("<|uk|>", 0.5), ("<|ru|>", 0.3), ("<|en|>", 0.1)]
    assert likeliest(scores, ("en", "ru")) == "ru"  # Ukrainian is not spoken here
    assert likeliest([("de", 0.9)], ("en", "ru")) == "en"  # neither scored: the first
