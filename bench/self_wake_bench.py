"""False wakes on mavend's own voice, and barge-in stop latency, on real PulseAudio.

A private PulseAudio whose null sink is both mavend's speaker and its microphone (the
worst case: the loudspeaker's sound reaches the mic undamped). The real front end
listens while the real speaker (hibari) says replies in a loop for `--minutes`, a
third of them containing the wake word ("I am Jarvis, hey jarvis is my name"). Every
`Wake` event is a false wake. Then `--trials` barge-ins: a long reply plays, "hey
jarvis" (espeak-ng) is played into the mic over it, and we time wake detection ->
output stream stopped, and end of the spoken wake word -> stopped (that one includes
paplay's own start-up latency, so it is an upper bound).

    .venv/bin/python bench/self_wake_bench.py [--minutes 10] [--trials 20] [--volume 0.35]
        [--spread] [--log FILE]   # --minutes 0: the barge-in trials only; --trials 0: none
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import queue
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mavend.config import parse_settings  # noqa: E402
from mavend.tts import Speaker  # noqa: E402
from tests.audio_fixtures import concat, espeak, silence, trim, write_wav  # noqa: E402
from tests.pulse import Pulse  # noqa: E402
from wakeword import (  # noqa: E402
    Dropped,
    EventQueue,
    FrontEnd,
    MicrophoneSource,
    NoSpeech,
    Transcript,
    Wake,
)
from wakeword.echo import PlaybackReference, wake_scorer, wake_words  # noqa: E402

REPLIES = (
    "I am Jarvis, hey jarvis is my name.",
    "It's five past three in the afternoon.",
    "Timer set for ten minutes. I will remind you when it is done.",
    "Hey Jarvis is what you say to wake me. Then tell me what you need.",
    "Do you want me to restart the music service? Say yes within fifteen seconds.",
    "You have three reminders; the next is call mum at five.",
    "Jarvis here. Hey, Jarvis is listening. Say hey jarvis and a command.",
    "The kitchen light is on, and the heating is set to twenty one degrees.",
    "Sorry, should I set a reminder or take a note?",
)
LONG_REPLY = (
    "Here is the weather for the whole week. On Monday it will be sunny with a high of "
    "twenty one degrees. On Tuesday clouds come in from the west, and there may be light "
    "rain in the afternoon. On Wednesday the wind picks up and it gets colder."
)


def build(volume: float) -> tuple[FrontEnd, Speaker, EventQueue, PlaybackReference]:
    settings = parse_settings(f"[tts]\nvolume = {volume}\nmax_sentences = 8\n", "bench.toml")
    events = EventQueue()
    front = FrontEnd.from_settings(settings, sink=events)
    speaker = Speaker.from_settings(settings)
    speaker.load()
    scorer, reset = wake_scorer(front.wake.files)
    reference = PlaybackReference(scorer, reset_scorer=reset,
                                  wake_words=wake_words(front.wake.files.name))
    speaker.reference, front.echo, front.on_barge_in = reference, reference, speaker.interrupt
    front.start(MicrophoneSource.from_settings(settings.audio, on_state=events))
    return front, speaker, events, reference


def drain(events: EventQueue) -> list:
    out = []
    while True:
        try:
            out.append(events.get(timeout=0))
        except queue.Empty:
            return out


def self_wakes(speaker: Speaker, events: EventQueue, front: FrontEnd,
               reference: PlaybackReference, minutes: float) -> dict:
    end = time.monotonic() + minutes * 60
    said = with_wake = 0
    wakes: list[str] = []
    started = time.monotonic()
    while time.monotonic() < end:
        reply = REPLIES[said % len(REPLIES)]
        speaker.speak(reply).result(timeout=60)
        said += 1
        with_wake += "jarvis" in reply.lower()
        for event in drain(events):
            if isinstance(event, Wake):
                wakes.append(reply)
    time.sleep(1.5)
    wakes += ["(after)" for e in drain(events) if isinstance(e, Wake)]
    hours = (time.monotonic() - started) / 3600
    return {
        "replies": said, "with_wake_word": with_wake, "minutes": round(hours * 60, 2),
        "false_wakes": len(wakes), "false_wakes_per_hour": round(len(wakes) / hours, 2),
        "own_wakes_ignored": front.own_wakes, "woken_by": wakes[:10],
        "sentences": reference.scans, "sentences_saying_it": reference.scans_with_wake,
        "scan_ms_per_sentence": round(1000 * reference.scan_s / max(1, reference.scans), 1),
        # mic wake minus the reference's own peak, on the monotonic clock
        "alignment_s": _pct(list(reference.offsets), 3),
        "underruns_reanchored": speaker.underruns,
    }


def watch_scores(front: FrontEnd) -> list[tuple[float, float]]:
    """(monotonic time, mic wake score) of every frame from now on."""
    scores: list[tuple[float, float]] = []
    score = front.wake.score

    def watched(frame):
        value = score(frame)
        scores.append((time.monotonic(), value))
        return value

    front.wake.score = watched
    return scores


def barge_ins(pulse: Pulse, front: FrontEnd, speaker: Speaker, events: EventQueue, trials: int,
              tmp: Path, spread: bool = False) -> dict:
    lead, wake = silence(0.3), trim(espeak("hey jarvis"))
    wav = write_wav(tmp / "wake.wav", concat(lead, wake, silence(1.0)))
    wake_end_s = (len(lead) + len(wake)) / 16000
    detect_ms, spoken_ms, missed, misses, wake_scores = [], [], 0, [], []
    scores = watch_scores(front)
    for trial in range(trials):
        own, barged = front.own_wakes, front.barge_ins
        speaker.last_interrupt = None
        done = speaker.speak(LONG_REPLY)
        time.sleep(into_reply(trial, spread))
        started = time.monotonic()
        pulse.play(wav).wait(30)
        with contextlib.suppress(TimeoutError):  # not stopped: counted as missed below
            done.result(timeout=10)
        interrupt = speaker.last_interrupt
        if interrupt is None:
            missed += 1
            near = [s for t, s in scores if started - 0.5 <= t <= started + wake_end_s + 2.0]
            misses.append({"trial": trial, "outcome": done.result(timeout=60).value,
                           "max_mic_score": round(max(near, default=0.0), 3),
                           "own_wakes": front.own_wakes - own,
                           "barge_ins": front.barge_ins - barged})
            logging.getLogger("bench").info("trial %d missed: %s", trial, misses[-1])
        else:
            detect_ms.append((interrupt[1] - interrupt[0]) * 1000)
            spoken_ms.append((interrupt[1] - (started + wake_end_s)) * 1000)
        deadline = time.monotonic() + 15  # the turn after the wake ends (no speech)
        while time.monotonic() < deadline:
            try:
                event = events.get(timeout=0.5)
                if isinstance(event, Wake):
                    wake_scores.append(event.score)
                if isinstance(event, NoSpeech | Transcript | Dropped):
                    break
            except queue.Empty:
                continue
        time.sleep(2.2)  # the trigger's refractory period
        drain(events)
        scores.clear()
    return {"trials": trials, "spread": spread, "missed": missed, "misses": misses,
            "wake_scores": sorted(wake_scores),
            "detect_to_stopped_ms": _pct(detect_ms), "wake_end_to_stopped_ms": _pct(spoken_ms)}


def into_reply(trial: int, spread: bool) -> float:
    """When the wake word is played, in seconds after the reply was queued: always 1.5 s,
    or (`--spread`) stepped over 1-6 s, so that it falls on every part of the reply's
    speech and pauses (0.37 s steps: no two trials of the first 13 alike)."""
    return 1.0 + (trial * 0.37) % 5.0 if spread else 1.5


def _pct(values: list[float], digits: int = 1) -> dict:
    if not values:
        return {}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), digits), "p95": round(p95, digits),
            "min": round(ordered[0], digits), "max": round(ordered[-1], digits)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--volume", type=float, default=0.35)
    parser.add_argument("--spread", action="store_true",
                        help="step the wake word over 1-6 s into the reply (default: 1.5 s)")
    parser.add_argument("--log", type=Path, help="log (INFO) to this file")
    args = parser.parse_args()
    if args.log:
        logging.basicConfig(filename=args.log, level=logging.INFO,
                            format="%(asctime)s %(threadName)s %(name)s: %(message)s")
    tmp = Path(tempfile.mkdtemp(prefix="mavend-bench-"))
    pulse = Pulse(runtime_dir=Path(tempfile.mkdtemp(prefix="mavend-pulse-")), log=tmp / "pa.log")
    os.environ.update({"XDG_RUNTIME_DIR": str(pulse.runtime_dir),
                       "PULSE_SERVER": f"unix:{pulse.socket}"})
    pulse.start()
    try:
        front, speaker, events, reference = build(args.volume)
        time.sleep(2.0)
        result = {}
        if args.minutes > 0:
            result["self_wake"] = self_wakes(speaker, events, front, reference, args.minutes)
        if args.trials > 0:
            result["barge_in"] = barge_ins(pulse, front, speaker, events, args.trials, tmp,
                                           args.spread)
        front.close()
    finally:
        pulse.stop()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
