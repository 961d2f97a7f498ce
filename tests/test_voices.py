"""The speaker encoder (mavend/voices/): resemblyzer's trained weights read without torch,
the mel front end as librosa computes it, and voices told apart.

Voices: hibari (the voice mavend ships) and espeak-ng voices; each says sentences of our
own. The measured equal error rate is bench/speaker_id.py's, not asserted here."""

from __future__ import annotations

import io
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
    from wakeword.audio import resample

    voice = Voice.load(require_model("hibari-heart"))

    def say(text: str) -> np.ndarray:
        pcm = (np.clip(voice.synthesize(text), -1, 1) * 32767).astype(np.int16)
        return resample(pcm, voice.sample_rate, 16_000)

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
