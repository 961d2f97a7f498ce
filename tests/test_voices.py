"""The speaker encoder (mavend/voices/): resemblyzer's trained weights read without torch,
the mel front end as librosa computes it, and voices told apart.

Voices: hibari (the voice mavend ships) and espeak-ng voices; each says sentences of our
own. The measured equal error rate is bench/speaker_id.py's, not asserted here."""

from __future__ import annotations

import io
import json
import pickle
import struct
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

from mavend.voices import CheckpointError, SpeakerEncoder, load_state_dict
from mavend.voices.checkpoint import MAGIC, PROTOCOL
from mavend.voices.encoder import mel_frames
from tests.conftest import require_model

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def weights() -> Path:
    return require_model("resemblyzer-encoder")


@pytest.fixture(scope="module")
def encoder(weights: Path) -> SpeakerEncoder:
    return SpeakerEncoder.load(weights)


def test_the_weights_load_without_torch(weights: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from mavend.voices import load_state_dict\n"
        f"state = load_state_dict(Path({str(weights)!r}), 'model_state')\n"
        "print(sorted(k for k in state if k.startswith('lstm.weight')), "
        "state['lstm.weight_ih_l0'].shape, state['linear.weight'].shape, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True).stdout
    assert out.strip() == (
        "['lstm.weight_hh_l0', 'lstm.weight_hh_l1', 'lstm.weight_hh_l2', 'lstm.weight_ih_l0', "
        "'lstm.weight_ih_l1', 'lstm.weight_ih_l2'] (1024, 40) (256, 256) False"
    )


class _RunsCode:
    """Pickles as a call of subprocess.run: what a hostile checkpoint would hold."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (subprocess.run, (["touch", str(self.marker)],))


def test_a_checkpoint_that_would_run_code_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    hostile = tmp_path / "hostile.pt"
    with hostile.open("wb") as f:
        for part in (MAGIC, PROTOCOL, {"little_endian": True}):
            pickle.dump(part, f, protocol=2)
        pickle.dump({"model_state": {"w": _RunsCode(marker)}}, f, protocol=2)
        pickle.dump([], f, protocol=2)
    with pytest.raises(CheckpointError, match="refusing to load"):
        load_state_dict(hostile, "model_state")
    assert not marker.exists()


def test_a_truncated_or_foreign_file_is_a_clear_error(tmp_path: Path, weights: Path) -> None:
    cut = tmp_path / "cut.pt"
    cut.write_bytes(weights.read_bytes()[: 5_000_000])
    with pytest.raises(CheckpointError, match=r"truncated|EOFError|struct"):
        load_state_dict(cut, "model_state")
    other = tmp_path / "other.pt"
    other.write_bytes(pickle.dumps(12345) + struct.pack("<q", 0))
    with pytest.raises(CheckpointError, match="not a legacy PyTorch checkpoint"):
        load_state_dict(other)


def test_the_mel_frames_are_librosas() -> None:
    # librosa.feature.melspectrogram(y, sr=16000, n_fft=400, hop_length=160, n_mels=40,
    # pad_mode="reflect"), librosa 0.11, on this signal: the values it gave.
    t = np.arange(16_000) / 16_000
    wav = (0.3 * np.sin(2 * np.pi * 220 * t) + 0.2 * np.sin(2 * np.pi * 1330 * t)
           + 0.05 * np.sin(2 * np.pi * 3700 * t)).astype(np.float32)
    mel = mel_frames(wav)
    assert mel.shape == (101, 40)
    np.testing.assert_allclose(mel[50, [1, 2, 3, 16]],
                               [2.77689266, 12.96684933, 2.59934783, 3.88067722], rtol=1e-4)
    np.testing.assert_allclose(mel[0, [1, 2, 3]], [6.91183233, 5.00526428, 3.33719468],
                               rtol=1e-4)
    assert float(mel.sum()) == pytest.approx(2466.524658, rel=1e-4)


SENTENCES = (
    "could you put the kettle on for me",
    "what's the weather going to be like on saturday",
    "remind me to water the plants after dinner",
    "I think I left the back door open again",
)


def espeak(text: str, voice: str) -> np.ndarray:
    from wakeword.audio import resample

    out = subprocess.run(["espeak-ng", "-v", voice, "-s", "160", "--stdout", text],
                         capture_output=True, check=True).stdout
    with wave.open(io.BytesIO(out)) as w:
        pcm = np.frombuffer(w.readframes(w.getnframes()), np.int16)
        return resample(pcm, w.getframerate(), 16_000)


def hibari() -> callable:
    from mavend.tts.voice import Voice
    from wakeword.audio import resample, to_int16

    voice = Voice.load(require_model("hibari-heart"))

    def say(text: str) -> np.ndarray:
        return resample(to_int16(voice.synthesize(text)), voice.sample_rate, 16_000)

    return say


def test_each_voice_is_nearer_itself_than_any_other(encoder: SpeakerEncoder) -> None:
    say_hibari = hibari()
    voices = {
        "hibari": say_hibari,
        "espeak en-us": lambda text: espeak(text, "en-us"),
        "espeak en-gb-scotland+f4": lambda text: espeak(text, "en-gb-scotland+f4"),
    }
    embeddings = {name: [encoder.embed(say(s)) for s in SENTENCES] for name, say in voices.items()}
    for name, own in embeddings.items():
        assert all(abs(float(np.linalg.norm(e)) - 1) < 1e-5 for e in own)
        same = [float(a @ b) for i, a in enumerate(own) for b in own[i + 1:]]
        for other, theirs in embeddings.items():
            if other == name:
                continue
            across = [float(a @ b) for a in own for b in theirs]
            # Every pair of one voice is nearer than every pair across two.
            assert min(same) > max(across), (name, other, min(same), max(across))


def test_an_utterance_shorter_than_a_window_is_embedded(encoder: SpeakerEncoder) -> None:
    short = espeak("stop", "en-us")
    assert len(short) < 16_000
    vector = encoder.embed(short)
    assert vector.shape == (256,) and abs(float(np.linalg.norm(vector)) - 1) < 1e-5


# --- enrolling and telling voices apart (mavend voices, mavend/voices/prints.py) ----------
MAVEND = Path(sys.executable).parent / "mavend"
ENROLL = ("good morning, what's on today", "could you turn the radio down a bit",
          "I'll be back from work around six")


def write_wav(path: Path, pcm: np.ndarray, rate: int = 16_000) -> Path:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.astype(np.int16).tobytes())
    return path


def mavend(config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(MAVEND), "--config", str(config), "voices", *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


@pytest.fixture
def household(tmp_path: Path) -> Path:
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\ndata_dir = "{tmp_path / "data"}"\n')
    return config


def test_an_enrolled_voice_is_told_from_another(tmp_path: Path, household: Path,
                                                encoder: SpeakerEncoder) -> None:
    from mavend.config import load_settings
    from mavend.state.store import Store
    from mavend.voices import SpeakerId

    say = hibari()
    files = [write_wav(tmp_path / f"sam{i}.wav", say(text)) for i, text in enumerate(ENROLL)]
    enrolled = mavend(household, "enroll", "Sam", "--audio-file", *map(str, files))
    assert enrolled.returncode == 0, enrolled.stderr
    assert enrolled.stdout.startswith("enrolled sam: 3 recordings")
    listed = mavend(household, "list", "--json")
    (row,) = [json.loads(line) for line in listed.stdout.splitlines()]
    assert (row["name"], row["recordings"], row["encoder"]) == ("sam", 3, "resemblyzer-encoder")
    store = Store.open(load_settings(household))
    try:
        voices = SpeakerId.from_settings(load_settings(household), store)  # as the daemon
        sam = voices.prints.identify(voices.embed(say(SENTENCES[0])))
        stranger = voices.prints.identify(voices.embed(espeak(SENTENCES[0], "en-us")))
    finally:
        store.close()
    assert sam.name == "sam", sam
    assert stranger.name is None, stranger  # another voice is nobody, not the nearest one


def test_recordings_of_two_voices_are_refused_and_nothing_is_stored(
    tmp_path: Path, household: Path
) -> None:
    say = hibari()
    files = [write_wav(tmp_path / "a.wav", say(ENROLL[0])),
             write_wav(tmp_path / "b.wav", say(ENROLL[1])),
             write_wav(tmp_path / "c.wav", espeak(ENROLL[2], "en-gb-scotland+f4"))]
    refused = mavend(household, "enroll", "sam", "--audio-file", *map(str, files))
    assert refused.returncode == 2, refused
    assert "recording 3 does not sound like the others" in refused.stderr
    assert mavend(household, "list", "--json").stdout == ""


def test_a_bad_recording_or_name_is_a_clear_error(tmp_path: Path, household: Path) -> None:
    junk = tmp_path / "junk.wav"
    junk.write_bytes(b"RIFF not really a wav")
    short = write_wav(tmp_path / "short.wav", np.zeros(4000))
    bad = mavend(household, "enroll", "sam", "--audio-file", str(junk), str(short), str(short))
    assert bad.returncode == 2 and "junk.wav: not a readable WAV file" in bad.stderr
    short_only = mavend(household, "enroll", "sam", "--audio-file", *[str(short)] * 3)
    assert short_only.returncode == 2 and "a few seconds expected" in short_only.stderr
    named = mavend(household, "enroll", "sam; drop table", "--audio-file", str(short))
    assert named.returncode == 2 and "a voice's name" in named.stderr
    gone = mavend(household, "forget", "nobody")
    assert gone.returncode == 1 and "no voice called 'nobody'" in gone.stderr


def test_forgetting_a_voice_removes_it(tmp_path: Path, household: Path) -> None:
    say = hibari()
    files = [write_wav(tmp_path / f"{i}.wav", say(text)) for i, text in enumerate(ENROLL)]
    assert mavend(household, "enroll", "robin", "--audio-file", *map(str, files)).returncode == 0
    forgot = mavend(household, "forget", "Robin")
    assert forgot.returncode == 0, forgot.stderr
    assert mavend(household, "list", "--json").stdout == ""
