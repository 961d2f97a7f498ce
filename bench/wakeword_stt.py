"""Speech-to-text on spoken commands: accuracy, compute time and RTF per configuration.

    .venv/bin/python bench/wakeword_stt.py [--voices N] [--piper-voice ONNX] [--quick]
    .venv/bin/python bench/wakeword_stt.py --fit-min-s 3,6,10

Each clip is what the front end hands to Whisper: a short lead-in, "hey
jarvis", the command, a little silence. Configurations: the encoder window
(`full` 30 s as faster-whisper does, or `fit` to the utterance) times the
hint given (none, the wake phrase, the wake phrase + the grammar's vocabulary).

Reported: the share of stage-0 commands whose transcript the grammar routes to
the same command as the reference text; word error rate over all commands;
how many transcripts have the command's start twice (Whisper started it over);
the share of real commands the hallucination guard drops; the share of
noise-only clips that get past it; compute time p50/p95 and the real-time factor.
`--fit-min-s` compares only the default configuration padded to each minimum length,
with and without `wakeword.restarts.collapse_restart`, on clips with the wake phrase
and on the command alone (what a follow-up or a satellite's own wake word gives).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from wakeword_data import (
    LLM_ROUTED,
    STAGE0,
    STAGE0_OPEN,
    cached,
    condition,
    espeak_voices,
    machine,
    piper_voices,
    turn,
)

import wakeword.stt as stt_module
from mavend.clock import system_clock, user_timezone
from mavend.config import Settings
from mavend.models import require
from mavend.router import build_router
from tests.audio_fixtures import concat, noise, silence
from wakeword.restarts import collapse_restart
from wakeword.stt import (
    FIT_MIN_S,
    SpeechToText,
    command_text,
    guard,
    hotwords_for,
    normalize_words,
)
from wakeword.vad import SileroVad

WAKE_WORDS = ("hey jarvis", "jarvis")


def wer(ref: str, hyp: str) -> tuple[int, int]:
    r, h = ref.split(), hyp.split()
    d = list(range(len(h) + 1))
    for i in range(1, len(r) + 1):
        prev, d[0] = d[0], i
        for j in range(1, len(h) + 1):
            cur = min(d[j] + 1, d[j - 1] + 1, prev + (r[i - 1] != h[j - 1]))
            prev, d[j] = d[j], cur
    return d[len(h)], len(r)


def speech_seconds(vad: SileroVad, samples: np.ndarray) -> float:
    vad.reset()
    return sum(p >= 0.5 for p in vad.push(samples)) * 0.032


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--voices", type=int, default=8, help="espeak voices to use (max 8)")
    parser.add_argument("--piper-voice", type=Path, help="a Piper .onnx voice to add")
    parser.add_argument("--conditions", default="clean,snr10", help="comma-separated")
    parser.add_argument("--quick", action="store_true", help="a few clips, for a smoke run")
    parser.add_argument("--all-configs", action="store_true", help="also full window, no hint")
    parser.add_argument("--fit-min-s", metavar="S,S,...",
                        help="only the default configuration, padded to each of these minimum "
                             "lengths, with and without the start-over collapse")
    args = parser.parse_args(argv)

    settings = Settings()
    router = build_router(settings, clock=system_clock(user_timezone("")), use_llm=False,
                          use_classifier=False)
    grammar = router.grammar
    voices = espeak_voices()[: args.voices] + piper_voices(args.piper_voice)
    commands = STAGE0 + STAGE0_OPEN + LLM_ROUTED
    if args.quick:
        voices, commands = voices[:2], commands[:6] + LLM_ROUTED[:2]
    conditions = args.conditions.split(",")

    clips = []
    for vi, voice in enumerate(voices):
        for cond in conditions:
            for ci, command in enumerate(commands):
                key = f"stt|{voice.name}|{cond}|{command}"
                audio = cached(key, lambda v=voice, c=command, k=cond, s=vi * 100 + ci: concat(
                    silence(0.25), condition(turn(v, c), k, s), silence(0.15)))
                clips.append((voice.name, cond, command, audio))
    # The same commands without the wake phrase before them (as if it were cut out).
    bare = [
        (name, cond, command,
         cached(f"stt-bare|{name}|{cond}|{command}",
                lambda v=voice, c=command, k=cond, s=vi * 100 + ci: concat(
                    silence(0.15), condition(turn(v, c, wake=""), k, s), silence(0.15))))
        for vi, voice in enumerate(voices) for name in [voice.name]
        for cond in conditions for ci, command in enumerate(commands)
    ]
    quiet = [
        ("silence", np.zeros(32000, np.int16)),
        *[(f"pink noise {db} dBFS",
           np.clip(noise(2.0, seed=i) * 32768 * 10 ** (db / 20), -32768, 32767).astype(np.int16))
          for i, db in enumerate((-60, -50, -40, -35, -30))],
        *[(f"white noise {db} dBFS",
           np.clip(noise(2.0, seed=10 + i, kind="white") * 32768 * 10 ** (db / 20),
                   -32768, 32767).astype(np.int16))
          for i, db in enumerate((-60, -50, -40))],
        ("breath-like burst", np.clip(noise(0.3, seed=7) * 800, -32768, 32767).astype(np.int16)),
    ]
    vad = SileroVad(require("silero-vad"))
    speech_s = [speech_seconds(vad, c[3]) for c in clips]
    bare_speech_s = [speech_seconds(vad, c[3]) for c in bare]
    quiet_speech = [speech_seconds(vad, q[1]) for q in quiet]

    vocab = grammar.vocabulary()
    # None: built by SpeechToText from the vocabulary (the default: wake phrase +
    # the words Whisper's tokenizer splits, i.e. the rare ones).
    hints = {
        "none": "",
        "wake phrase": hotwords_for([], WAKE_WORDS),
        "wake + rare grammar words (default)": None,
        "wake + whole grammar vocabulary": hotwords_for(vocab, WAKE_WORDS),
    }
    print(f"# STT benchmark: {len(clips)} clips ({len(voices)} voices x {conditions} x "
          f"{len(commands)} commands), {len(quiet)} noise-only clips")
    print(f"# machine: {machine()}")
    if args.fit_min_s:
        return padding_study([float(v) for v in args.fit_min_s.split(",")], settings, grammar,
                             {"with the wake phrase": (clips, speech_s),
                              "command alone": (bare, bare_speech_s)}, quiet, quiet_speech)
    print(f"| window | hint | {HEADER}")
    print("|---|---|---|---|---|---|---|---|---|")
    for window in ("fit", "full"):
        for hint_name, hint in hints.items():
            if window == "full" and hint_name == "none" and not args.all_configs:
                continue  # the slow window: only the hints that matter
            row = run_config(window, hint, settings, grammar, clips, speech_s, quiet,
                             quiet_speech)
            print(f"| {window} | {hint_name} | {row}", flush=True)
    row = run_config("fit", None, settings, grammar, bare, bare_speech_s, quiet, quiet_speech)
    print(f"| fit | default, command alone (wake phrase cut from the audio) | {row}", flush=True)
    return 0


HEADER = ("stage-0 routed right | WER | started over | real commands dropped | "
          "noise passed | compute p50 / p95 ms | RTF p50 |")


def said_twice(command: str, text: str) -> bool:
    """The transcript has the command's start (its first two words) twice: a start-over."""
    start = " ".join(normalize_words(command).split()[:2])
    return f" {normalize_words(text)} ".count(f" {start} ") >= 2


def padding_study(minimums, settings, grammar, sets, quiet, quiet_speech) -> int:
    """The `fit` window's minimum length, and the start-over collapse, on both kinds of clip."""
    print(f"| audio | padded to | start-overs collapsed | {HEADER}")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, (clips, speech_s) in sets.items():
        for min_s in minimums:
            for collapse in (False, True):
                row = run_config("fit", None, settings, grammar, clips, speech_s, quiet,
                                 quiet_speech, fit_min_s=min_s, collapse=collapse)
                print(f"| {name} | {min_s:g} s | {'yes' if collapse else 'no'} | {row}",
                      flush=True)
    return 0


def run_config(window, hint, settings, grammar, clips, speech_s, quiet, quiet_speech, *,
               fit_min_s: float = FIT_MIN_S, collapse: bool = True) -> str:
    stt = SpeechToText.from_settings(settings.stt, hotwords=hint, window=window,
                                     wake_words=WAKE_WORDS, vocabulary=grammar.vocabulary(),
                                     fit_min_s=fit_min_s)
    # The collapse is part of `transcribe`; "without" measures what Whisper wrote.
    stt_module.collapse_restart = collapse_restart if collapse else (lambda text: text)
    stt.transcribe(np.zeros(16000, np.int16))  # warm up
    routed = stage0 = errors = words = dropped = restarted = 0
    times, rtfs = [], []
    for (_voice, _cond, command, audio), s in zip(clips, speech_s, strict=True):
        result = stt.transcribe(audio)
        times.append(result.compute_ms)
        rtfs.append(result.compute_ms / 1000 / result.audio_s)
        text = command_text(result.text, WAKE_WORDS)
        if not guard(result, s, text).keep:
            dropped += 1
        e, n = wer(normalize_words(command), normalize_words(text))
        errors, words = errors + e, words + n
        if said_twice(command, text):
            restarted += 1
        if command in STAGE0 or command in STAGE0_OPEN:
            stage0 += 1
            want, got = grammar.match(command), grammar.match(text)
            if got is not None and want is not None and (got.intent, got.name) == (
                want.intent, want.name
            ):
                routed += 1
    passed = 0
    for (_name, audio), s in zip(quiet, quiet_speech, strict=True):
        result = stt.transcribe(audio)
        if guard(result, s, command_text(result.text, WAKE_WORDS)).keep:
            passed += 1
    p95 = float(np.percentile(times, 95))
    return (f"{routed}/{stage0} ({100 * routed / stage0:.0f} %) | {100 * errors / words:.1f} % | "
            f"{restarted}/{len(clips)} | {dropped}/{len(clips)} | {passed}/{len(quiet)} | "
            f"{statistics.median(times):.0f} / {p95:.0f} | {statistics.median(rtfs):.3f} |")


if __name__ == "__main__":
    started = time.time()
    code = main()
    print(f"# took {time.time() - started:.0f} s")
    sys.exit(code)
