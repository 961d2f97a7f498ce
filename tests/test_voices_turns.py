"""Who is speaking, used: each turn tagged with its voice, per-speaker facts and notes, and
`[voices] confirm_from = "enrolled"` (destructive acts and memory writes only for a voice
mavend knows).

End state asserted: the rows each voice's turns leave (notes, facts, turns, act runs,
the marker file the harmless destructive act writes) and the facts in the replies. The
routing is the real classifier's (USE), recall uses the real embedder; the voices are
hibari (the voice mavend ships) and espeak-ng, identified by the real speaker encoder.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
from pathlib import Path

import numpy as np
import pytest

from mavend.config import VoicesSettings, parse_settings
from mavend.daemon.speakers import SpeakerTags
from mavend.errors import ConfigError, UsageError
from mavend.handlers.common import TurnContext
from mavend.router.classifier import CentroidClassifier
from mavend.router.embedder import UseEmbedder
from mavend.state.store import Store
from mavend.voices import UNKNOWN, SpeakerId, VoicePrints
from mavend.voices.prints import voice_name
from tests.conftest import require_model
from tests.pulse import pulse_source  # noqa: F401
from tests.state_kit import kit_settings, make_assistant
from tests.test_voices import ENROLL, espeak, hibari

pytestmark = pytest.mark.models


@pytest.fixture(scope="module")
def embedder() -> UseEmbedder:
    return UseEmbedder(require_model("use-multilingual-int8"))


@pytest.fixture(scope="module")
def classifier(embedder: UseEmbedder, tmp_path_factory: pytest.TempPathFactory):
    return CentroidClassifier.load(embedder, cache_dir=tmp_path_factory.mktemp("classifier"))


def household(tmp_path: Path, classifier, embedder, **voices: object):
    settings = kit_settings(tmp_path, voices=VoicesSettings(enabled=True, **voices))
    return make_assistant(settings, classifier=classifier, embedder=embedder)


def said(assistant, text: str, speaker: str, session: str = "local"):
    return assistant.handle_text(text, session=session, context=TurnContext(speaker=speaker))


def rows(assistant, table: str) -> list[tuple]:
    with assistant.store.read() as conn:
        if table == "notes":
            return [tuple(r) for r in conn.execute("SELECT text, speaker FROM notes ORDER BY id")]
        return [tuple(r) for r in conn.execute(f"SELECT key, value, speaker FROM {table}")]


# --- per-speaker facts and notes ------------------------------------------------------
def test_each_voice_is_answered_from_its_own_notes(tmp_path: Path, classifier, embedder) -> None:
    a = household(tmp_path, classifier, embedder)
    assert said(a, "remember my locker code is 4512", "sam").reply.outcome == "done"
    assert said(a, "remember my locker code is 7781", "alex").reply.outcome == "done"
    assert said(a, "note that the wifi password is fish", "").reply.outcome == "done"
    assert rows(a, "notes") == [("my locker code is 4512", "sam"),
                                ("my locker code is 7781", "alex"),
                                ("the wifi password is fish", "")]
    sam = said(a, "what's my locker code", "sam").reply.text
    alex = said(a, "what's my locker code", "alex").reply.text
    assert "4512" in sam and "7781" not in sam
    assert "7781" in alex and "4512" not in alex
    # A voice nobody enrolled hears no one's locker code, but the household's notes.
    stranger = said(a, "what's my locker code", UNKNOWN).reply.text
    assert "4512" not in stranger and "7781" not in stranger and "don't know" in stranger
    assert "fish" in said(a, "what's the wifi password", UNKNOWN).reply.text
    assert "fish" in said(a, "what's the wifi password", "sam").reply.text


def test_each_voice_counts_only_its_own_log(tmp_path: Path, classifier, embedder) -> None:
    a = household(tmp_path, classifier, embedder)
    assert said(a, "I drank two coffees", "sam").reply.outcome == "done"
    assert rows(a, "facts") == [("coffee", "two", "sam")]  # a key in the singular
    assert "2 coffees" in said(a, "how many coffees did I have today", "sam").reply.text
    other = said(a, "how many coffees did I have today", "alex").reply.text
    # alex has logged none: said so ("You haven't logged any coffees today."), never sam's
    assert other == "You haven't logged any coffees today." or "nothing" in other.lower(), other
    assert "2" not in other and "two" not in other


def test_each_turn_is_logged_with_its_speaker(tmp_path: Path, classifier, embedder) -> None:
    a = household(tmp_path, classifier, embedder)
    turn = said(a, "what time is it", "sam")
    assert turn.speaker == "sam" and turn.to_json()["speaker"] == "sam"
    said(a, "what time is it", UNKNOWN)
    a.handle_text("what time is it")  # typed: nobody in particular
    with a.store.read() as conn:
        logged = [r[0] for r in conn.execute("SELECT speaker FROM turns ORDER BY id")]
    assert logged == ["sam", UNKNOWN, ""]


def test_forget_everything_about_me_erases_only_that_voices_rows(
    tmp_path: Path, classifier, embedder
) -> None:
    a = household(tmp_path, classifier, embedder)
    said(a, "remember my locker code is 4512", "sam")
    said(a, "remember my locker code is 7781", "alex")
    said(a, "note that the wifi password is fish", "")
    asked = said(a, "forget everything you know about me", "sam")
    assert asked.reply.outcome == "confirm" and "1 note" in asked.reply.text
    assert said(a, "yes", "sam").reply.outcome == "done"
    assert rows(a, "notes") == [("my locker code is 7781", "alex"),
                                ("the wifi password is fish", "")]


def test_undoing_a_voices_note_and_redoing_it_keeps_whose_it_is(
    tmp_path: Path, classifier, embedder
) -> None:
    a = household(tmp_path, classifier, embedder)
    said(a, "remember my locker code is 4512", "sam")
    assert said(a, "undo that", "sam").reply.outcome == "done"
    assert rows(a, "notes") == []
    assert said(a, "redo", "sam").reply.outcome == "done"  # an undo of the undo
    assert rows(a, "notes") == [("my locker code is 4512", "sam")]


# --- confirm_from = "enrolled" --------------------------------------------------------
def test_a_stranger_cannot_ask_for_a_destructive_act(tmp_path: Path, classifier,
                                                     embedder) -> None:
    a = household(tmp_path, classifier, embedder, confirm_from="enrolled")
    refused = said(a, "restart syncthing", UNKNOWN)
    assert refused.reply.outcome == "refused" and "voice I know" in refused.reply.text
    # Nothing waits on a yes: the owner's "yes" now confirms nothing.
    assert said(a, "yes", "sam").decision.decided_by != "confirmation"
    assert not (tmp_path / "marker.txt").exists()
    assert a.ctx.acts.runs() == []


def test_a_yes_in_another_enrolled_voice_runs_nothing(tmp_path: Path, classifier,
                                                     embedder) -> None:
    a = household(tmp_path, classifier, embedder, confirm_from="enrolled")
    assert said(a, "restart syncthing", "sam").reply.outcome == "confirm"
    other = said(a, "yes", "alex")
    assert other.reply.outcome == "refused" and "one who asked" in other.reply.text
    assert not (tmp_path / "marker.txt").exists()
    assert said(a, "restart syncthing", "sam").reply.outcome == "confirm"
    # A bare "yes" is too short to tell a voice by (tests below): unknown, it counts.
    assert said(a, "yes", UNKNOWN).reply.outcome == "done"
    assert (tmp_path / "marker.txt").read_text() == "syncthing"


def test_a_stranger_cannot_write_notes_or_facts(tmp_path: Path, classifier, embedder) -> None:
    a = household(tmp_path, classifier, embedder, confirm_from="enrolled")
    note = said(a, "note that the spare key is under the mat", UNKNOWN)
    fact = said(a, "I drank two coffees", UNKNOWN)
    assert note.reply.outcome == "refused" and fact.reply.outcome == "refused"
    assert rows(a, "notes") == [] and rows(a, "facts") == []
    # Typed turns (this box's own user) and enrolled voices are not refused.
    assert said(a, "note that the spare key is under the mat", "").reply.outcome == "done"
    assert said(a, "I drank two coffees", "sam").reply.outcome == "done"
    assert len(rows(a, "notes")) == 1 and rows(a, "facts") == [("coffee", "two", "sam")]


def test_with_anyone_a_strangers_note_is_the_households(tmp_path: Path, classifier,
                                                       embedder) -> None:
    a = household(tmp_path, classifier, embedder)  # confirm_from = "anyone"
    assert said(a, "note that the spare key is under the mat", UNKNOWN).reply.outcome == "done"
    assert rows(a, "notes") == [("the spare key is under the mat", "")]
    assert said(a, "restart syncthing", UNKNOWN).reply.outcome == "confirm"


def test_config_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"voices.*enabled = true"):
        parse_settings('[voices]\nconfirm_from = "enrolled"\n')
    with pytest.raises(ConfigError, match=r"voices\.confirm_from"):
        parse_settings('[voices]\nenabled = true\nconfirm_from = "owner"\n')
    with pytest.raises(ConfigError, match=r"voices\.threshold"):
        parse_settings("[voices]\nenabled = true\nthreshold = 1.5\n")


def test_unknown_is_no_voices_name() -> None:
    with pytest.raises(UsageError, match="does not know"):
        voice_name("Unknown")


# --- the turn's speaker, from its audio -------------------------------------------------
@pytest.fixture(scope="module")
def enrolled(tmp_path_factory: pytest.TempPathFactory):
    """sam = hibari, alex = espeak-ng en-us, enrolled from three sentences each."""
    tmp = tmp_path_factory.mktemp("voices")
    settings = kit_settings(tmp, voices=VoicesSettings(enabled=True))
    store = Store.open(settings)
    require_model("resemblyzer-encoder")
    require_model("silero-vad")
    identifier = SpeakerId.from_settings(settings, store)  # as the daemon has it
    say_hibari = hibari()
    voices = {"sam": say_hibari, "alex": lambda text: espeak(text, "en-us")}
    for name, say in voices.items():
        clips = [say(text) for text in ENROLL]
        identifier.prints.enroll(name, [identifier.embed(c) for c in clips],
                                 encoder="resemblyzer-encoder",
                                 seconds=sum(len(c) for c in clips) / 16_000)
    return settings, store, identifier, voices


def test_a_turn_is_tagged_with_the_enrolled_voice_that_said_it(enrolled) -> None:
    _settings, _store, identifier, voices = enrolled
    for name, say in voices.items():
        for command in ("hey jarvis, remind me to call the plumber at five",
                        "what's my locker code again"):
            heard = identifier.identify(say(command))
            assert heard.speaker == name, (name, command, heard)


def test_a_voice_nobody_enrolled_is_unknown(enrolled, tmp_path: Path) -> None:
    identifier = enrolled[2]
    settings = kit_settings(tmp_path, voices=VoicesSettings(enabled=True))
    sam_only = VoicePrints(Store.open(settings))
    sam = next(p for p in identifier.prints.all() if p.name == "sam")
    sam_only.enroll("sam", [sam.vector] * 3, encoder=sam.encoder, seconds=sam.seconds)
    stranger = espeak("hey jarvis, restart the music service please", "en-gb-scotland+f4")
    heard = SpeakerId(identifier.encoder, sam_only, settings, identifier.speech).identify(stranger)
    assert heard.speaker == UNKNOWN, heard


def test_too_little_speech_is_nobodys(enrolled) -> None:
    identifier = enrolled[2]
    heard = identifier.identify(np.zeros(8000, np.int16))
    assert heard.speaker == UNKNOWN and heard.score == -1.0


def test_a_bare_yes_is_too_short_to_tell_whose_it_is(enrolled) -> None:
    """Why the yes to a question is not held to the asker's voice (handlers/confirm.py):
    measured here, a bare "yes" scores below the threshold against every voiceprint."""
    identifier = enrolled[2]
    say_sam = enrolled[3]["sam"]
    heard = identifier.identify(np.concatenate([say_sam("yes"), np.zeros(8000, np.int16)]))
    assert heard.speaker == UNKNOWN, heard


def test_the_daemons_tags_for_each_kind_of_turn(enrolled) -> None:
    settings, store, identifier, voices = enrolled
    tags = SpeakerTags(settings, store)
    tags._identifier = identifier  # the module's enrolled household

    class Heard:  # a microphone transcript: its text and its audio
        def __init__(self, audio: np.ndarray | None) -> None:
            self.audio = audio

    said_by_sam = Heard(voices["sam"]("hey jarvis, remind me to call the plumber at five"))
    assert asyncio.run(tags.of_transcript(said_by_sam)) == "sam"
    assert asyncio.run(tags.of_transcript(Heard(None))) == UNKNOWN
    # A satellite's or a Wyoming client's turn is nobody known; typed turns nobody at all.
    assert tags.context("satellite:kitchen", TurnContext(room="kitchen")).speaker == UNKNOWN
    assert tags.context("wyoming:10.0.0.5", None).speaker == UNKNOWN
    assert tags.context("local", None) is None
    # A trusted satellite's audio is identified; another satellite's never is.
    from mavend.config import SatelliteSpec

    kitchen = SatelliteSpec(uri="tcp://127.0.0.1:10700", name="kitchen", trusted=True)
    porch = SatelliteSpec(uri="tcp://127.0.0.1:10701", name="porch")
    assert asyncio.run(tags.of_satellite(kitchen, said_by_sam.audio)) == "sam"
    assert asyncio.run(tags.of_satellite(porch, said_by_sam.audio)) == UNKNOWN
    assert asyncio.run(tags.of_satellite(kitchen, None)) == UNKNOWN
    off = SpeakerTags(kit_settings(Path("/nonexistent")), store)
    assert asyncio.run(off.of_transcript(said_by_sam)) == ""
    assert off.context("satellite:kitchen", None) is None


def test_doctor_says_when_no_enrolled_voice_can_confirm(tmp_path: Path, enrolled) -> None:
    from mavend.doctor.checks import check_voices

    nobody = kit_settings(tmp_path, voices=VoicesSettings(enabled=True, confirm_from="enrolled"))
    check = check_voices(nobody)
    assert not check.ok and "no voice is enrolled" in check.detail
    assert "mavend voices enroll" in check.fix
    settings = enrolled[0]
    check = check_voices(settings)
    assert check.ok and "2 enrolled (alex, sam)" in check.detail, check


# --- enrolling from the microphone (mavend/voices/record.py) -----------------------------
def test_sentences_are_cut_at_the_pauses_between_them() -> None:
    from mavend.voices.record import SentenceRecorder
    from wakeword.sources import ArraySource
    from wakeword.vad import SileroVad

    say = hibari()
    first, second = say(ENROLL[0]), say(ENROLL[1])
    pause = np.zeros(24_000, np.int16)  # 1.5 s: a person reading the next prompt
    stream = np.concatenate([pause, first, pause, second, pause])
    recorder = SentenceRecorder(ArraySource(stream).chunks(threading.Event()),
                                SileroVad(require_model("silero-vad")))
    takes = [recorder.take(), recorder.take()]
    for take, spoken in zip(takes, (first, second), strict=True):
        # The speech, not the pauses: within half a second of the sentence's length.
        assert abs(len(take) - len(spoken)) < 8_000, (len(take), len(spoken))
    with pytest.raises(UsageError, match="nothing was said"):
        recorder.take()


def test_enrolling_from_the_microphone(pulse_source, tmp_path: Path) -> None:  # noqa: F811
    """`mavend voices enroll sam`: Sam reads the prompts into the (PulseAudio null-sink)
    microphone; the voiceprint then knows Sam from a sentence not read at enrollment."""
    from mavend.voices.record import SENTENCES
    from tests.audio_fixtures import write_wav
    from tests.test_voices import MAVEND, ROOT

    require_model("silero-vad")
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\ndata_dir = "{tmp_path / "data"}"\n')
    say = hibari()
    pause = np.zeros(24_000, np.int16)
    reading = np.concatenate([pause, *[np.concatenate([say(s), pause]) for s in SENTENCES[:3]]])
    wav = write_wav(tmp_path / "reading.wav", reading)
    process = subprocess.Popen(
        [str(MAVEND), "--config", str(config), "voices", "enroll", "sam", "--sentences", "3"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env=os.environ.copy())
    assert process.stdout is not None
    assert process.stdout.readline().startswith("Enrolling sam")
    assert process.stdout.readline().startswith("[1/3] ")
    pulse_source.play(wav).wait(60)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert out.count("heard ") == 3 and "enrolled sam: 3 recordings" in out, out
    settings = parse_settings(config.read_text() + "[voices]\nenabled = true\n")
    store = Store.open(settings)
    try:
        voices = SpeakerId.from_settings(settings, store)
        sam = voices.identify(say(ENROLL[2]))
        stranger = voices.identify(espeak(ENROLL[2], "en-us"))
    finally:
        store.close()
    # Read through the microphone, checked on clean audio: the channel differs, so the
    # score is a little lower than an enrollment from files gives; a stranger is far.
    assert sam.score >= 0.8 and sam.score - stranger.score >= 0.2, (sam, stranger)
    assert stranger.speaker == UNKNOWN


def test_the_silences_around_speech_are_cut_before_embedding() -> None:
    from mavend.voices import SpeechOnly
    from wakeword.vad import SileroVad

    speech_only = SpeechOnly(SileroVad(require_model("silero-vad")))
    spoken = hibari()("could you turn the radio down a bit")
    quiet = np.zeros(32_000, np.int16)
    cut = speech_only(np.concatenate([quiet, spoken, quiet]))
    # The two seconds either side are gone; the speech stays, give or take ~0.1 s a side.
    assert abs(len(cut) - len(spoken)) < 0.3 * 16_000, (len(cut), len(spoken))
    # With too little speech found, the utterance is left whole (never emptied).
    assert len(speech_only(quiet)) == len(quiet)
