"""Who said each turn, as the daemon decides it: households of enrolled voices (issue 25).

    .venv/bin/python bench/speaker_turns.py [--households 40] [--size 3] [--conditions clean,snr10]

The deployed rule (`SpeakerId`: the nearest voiceprint at cosine >= [voices] threshold,
0.03 ahead of the next, else "unknown"), not a threshold swept after the fact. Voices:
bench/speaker_id.py's 18 (hibari, piper en_US-joe, 16 espeak-ng). Each household is
`--size` voices drawn at random (seeded), each enrolled from three sentences of its own
(as `mavend voices enroll` does); every one of the 18 voices then speaks turns as the
microphone hands them over ("hey jarvis, ..." with 0.3 s before and 0.7 s of silence
after), and short answers ("yes", "yes please", "no"). Reported per condition:

- an enrolled voice's turns: named right / unknown / taken for another enrolled voice;
- a stranger's turns (a voice not enrolled in that household): unknown (right) / taken
  for an enrolled voice (what `confirm_from = "enrolled"` must keep low);
- the same for the short answers, and the encoder's time per turn;
- *_natural: the turns of the two natural voices alone (as owner, as stranger).

The sentences are written for this bench (none is an eval row); nothing is tuned here.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from speaker_id import add_audio_arguments, embedder, voices  # noqa: E402
from wakeword_data import condition  # noqa: E402

from mavend.config.voices import DEFAULT_MARGIN, DEFAULT_THRESHOLD  # noqa: E402
from mavend.machine import describe_machine  # noqa: E402

ENROLL = (
    "good evening, I'd like to hear the news headlines",
    "we should book the car in for its service next month",
    "the children are at their grandmother's until sunday",
)
TURNS = (
    "hey jarvis, what's my locker code",
    "hey jarvis, note that the plumber is coming on friday",
    "hey jarvis, restart the music service",
    "hey jarvis, how many glasses of water did I have today",
    "hey jarvis, forget everything you know about me",
)
ANSWERS = ("yes", "yes please", "no")
NATURAL = ("hibari", "piper:joe")  # the natural voices: rows *_natural are theirs alone
RATE = 16_000


def as_turn(audio: np.ndarray) -> np.ndarray:
    """Padded as the front end hands an utterance over: a lead-in and the silence tail."""
    return np.concatenate([np.zeros(int(0.3 * RATE), np.int16), audio,
                           np.zeros(int(0.7 * RATE), np.int16)])


def identify(vector: np.ndarray, prints: dict[str, np.ndarray],
             threshold: float = DEFAULT_THRESHOLD) -> str | None:
    """`VoicePrints.identify`'s rule on in-memory voiceprints."""
    scores = sorted(((float(vector @ p), n) for n, p in prints.items()), reverse=True)
    best, name = scores[0]
    second = scores[1][0] if len(scores) > 1 else -1.0
    if best < threshold or best - second < DEFAULT_MARGIN:
        return None
    return name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--households", type=int, default=40)
    parser.add_argument("--size", type=int, default=3)
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument("--thresholds", default=str(DEFAULT_THRESHOLD),
                        help="comma-separated cosine thresholds to apply the rule at")
    add_audio_arguments(parser)
    args = parser.parse_args()
    embed = embedder(raw=args.raw)
    speakers = voices()
    names = list(speakers)
    print(f"# machine: {describe_machine(load=True)}")
    print(f"# audio: {'as it is (--raw)' if args.raw else 'silences cut by Silero VAD'}")
    print(f"# {len(names)} voices, {args.households} households of {args.size}, threshold "
          f"{DEFAULT_THRESHOLD}, margin {DEFAULT_MARGIN}")
    results = []
    for cond in args.conditions.split(","):
        enrolled_print: dict[str, np.ndarray] = {}
        turns: dict[str, list[np.ndarray]] = {}
        answers: dict[str, list[np.ndarray]] = {}
        compute, count = 0.0, 0
        for vi, name in enumerate(names):
            say = speakers[name]
            vectors = [embed(condition(say(t), cond, vi * 100 + i))
                       for i, t in enumerate(ENROLL)]
            mean = np.mean(vectors, axis=0)
            enrolled_print[name] = mean / np.linalg.norm(mean)
            for texts, out in ((TURNS, turns), (ANSWERS, answers)):
                out[name] = []
                for i, text in enumerate(texts):
                    audio = as_turn(condition(say(text), cond, vi * 100 + 50 + i))
                    started = time.perf_counter()
                    out[name].append(embed(audio))
                    compute += time.perf_counter() - started
                    count += 1
        for threshold in (float(t) for t in args.thresholds.split(",")):
            results.append(households(args, cond, threshold, names, enrolled_print, turns,
                                      answers, 1000 * compute / count))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1))
    return 0


def households(args, cond: str, threshold: float, names: list[str],
               enrolled_print: dict[str, np.ndarray], turns: dict[str, list[np.ndarray]],
               answers: dict[str, list[np.ndarray]], ms_per_turn: float) -> dict:
    """The rule at `threshold` over `args.households` random households."""
    rng = random.Random(args.seed)
    tally: dict[str, Counter] = {k: Counter() for k in
                                 ("own_turns", "stranger_turns", "own_answers",
                                  "stranger_answers", "own_turns_natural",
                                  "stranger_turns_natural")}
    for _ in range(args.households):
        household = rng.sample(names, args.size)
        prints = {n: enrolled_print[n] for n in household}
        for name in names:
            own = name in household
            for kind, vectors in (("turns", turns[name]), ("answers", answers[name])):
                key = f"{'own' if own else 'stranger'}_{kind}"
                keys = [key] + ([f"{key}_natural"] if kind == "turns" and
                                name in NATURAL else [])
                for vector in vectors:
                    found = identify(vector, prints, threshold)
                    if found is None:
                        verdict = "unknown"
                    elif own and found == name:
                        verdict = "right"
                    else:
                        verdict = "taken_for_another" if own else "taken_for_enrolled"
                    for k in keys:
                        tally[k][verdict] += 1
    row = {"condition": cond, "threshold": threshold, "voices": len(names),
           "households": args.households, "size": args.size,
           **{k: dict(v) for k, v in tally.items()}, "ms_per_turn": ms_per_turn}
    for key, counts in tally.items():
        total = sum(counts.values())
        parts = ", ".join(f"{k} {v} ({100 * v / total:.1f} %)" for k, v in
                          sorted(counts.items()))
        print(f"| {cond} | {threshold:.2f} | {key} | {total} | {parts} |", flush=True)
    print(f"| {cond} | encoder time per turn | {ms_per_turn:.1f} ms |", flush=True)
    return row


if __name__ == "__main__":
    raise SystemExit(main())
