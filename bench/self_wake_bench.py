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
"""

from __future__ import annotations

import argparse
import contextlib
import json
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
from wakeword import EventQueue, FrontEnd, MicrophoneSource, NoSpeech, Transcript, Wake  # noqa: E402
from wakeword.echo import PlaybackReference, wake_scorer  # noqa: E402

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
    reference = PlaybackReference(scorer, reset_scorer=reset)
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


def self_wakes(speaker: Speaker, events: EventQueue, front: FrontEnd, minutes: float) -> dict:
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
    }


def barge_ins(pulse: Pulse, speaker: Speaker, events: EventQueue, trials: int, tmp: Path) -> dict:
    lead, wake = silence(0.3), trim(espeak("hey jarvis"))
    wav = write_wav(tmp / "wake.wav", concat(lead, wake, silence(1.0)))
    wake_end_s = (len(lead) + len(wake)) / 16000
    detect_ms, spoken_ms, missed = [], [], 0
    for _ in range(trials):
        speaker.last_interrupt = None
        done = speaker.speak(LONG_REPLY)
        time.sleep(1.5)
        started = time.monotonic()
        pulse.play(wav).wait(30)
        with contextlib.suppress(TimeoutError):  # not stopped: counted as missed below
            done.result(timeout=10)
        interrupt = speaker.last_interrupt
        if interrupt is None:
            missed += 1
            done.result(timeout=60)
        else:
            detect_ms.append((interrupt[1] - interrupt[0]) * 1000)
            spoken_ms.append((interrupt[1] - (started + wake_end_s)) * 1000)
        deadline = time.monotonic() + 15  # the turn after the wake ends (no speech)
        while time.monotonic() < deadline:
            try:
                if isinstance(events.get(timeout=0.5), NoSpeech | Transcript):
                    break
            except queue.Empty:
                continue
        time.sleep(2.2)  # the trigger's refractory period
        drain(events)
    return {"trials": trials, "missed": missed,
            "detect_to_stopped_ms": _pct(detect_ms), "wake_end_to_stopped_ms": _pct(spoken_ms)}


def _pct(values: list[float]) -> dict:
    if not values:
        return {}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 1), "p95": round(p95, 1),
            "max": round(ordered[-1], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--volume", type=float, default=0.35)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mavend-bench-"))
    pulse = Pulse(runtime_dir=Path(tempfile.mkdtemp(prefix="mavend-pulse-")), log=tmp / "pa.log")
    os.environ.update({"XDG_RUNTIME_DIR": str(pulse.runtime_dir),
                       "PULSE_SERVER": f"unix:{pulse.socket}"})
    pulse.start()
    try:
        front, speaker, events, _ = build(args.volume)
        time.sleep(2.0)
        result = {"self_wake": self_wakes(speaker, events, front, args.minutes)}
        result["barge_in"] = barge_ins(pulse, speaker, events, args.trials, tmp)
        front.close()
    finally:
        pulse.stop()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
