"""A spoken conversation, timed end to end: end of speech -> first reply audio, and CPU.

    .venv/bin/python bench/conversation_bench.py [--stage0 20] [--llm 20] [--json OUT]

`mavend -v run` (the shipped settings: LLM on, policy auto, earcons on, hibari voice;
only desktop notifications off) runs as a subprocess on a private PulseAudio with two
null sinks (tests/roundtrip_kit.py): each turn, "hey jarvis, <command>" synthesized by
espeak-ng (voices in rotation) is played into the microphone sink; the reply plays into
the speaker sink. Both sinks' monitors are recorded with every sample on the monotonic
clock, so:

- end of speech = the last speech sample on the microphone's monitor (what the daemon
  itself reads, so the VAD's lag and the endpointing silence are inside the figure);
- first sound = the first loud 10 ms block on the speaker's monitor after it (the "done"
  earcon, played when listening ends);
- first reply audio = the first loud block after the first quiet one that follows that
  earcon's onset (the earcon has no quiet block inside it; when the reply is ready while
  it plays, the earcon fades out and the reply, with its 20 ms quiet lead, starts);
- CPU while speaking = the daemon's utime + stime (/proc/<pid>/stat, sampled every
  20 ms) over the reply's playback, / wall time (1.0 = one core); the idle listening
  loop's CPU over IDLE_S seconds before the first turn is the baseline in the same run.

Stage-0 turns are grammar commands; LLM turns are our own statements and questions the
grammar does not match and the classifier is less than `classifier_confident` sure of,
so the vote policy asks the LLM (checked after the run on what the daemon transcribed:
the classifier alone re-routes each transcript). Utterances are written for this bench,
not taken from ../shared/eval. A reply that asks something opens a follow-up window;
the next turn waits it out, so every turn starts with the wake word.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tests.audio_fixtures import VOICES, command_clip, write_wav  # noqa: E402
from tests.roundtrip_kit import (  # noqa: E402
    BLOCK,
    CpuSampler,
    Rig,
    bursts,
    end_of_speech,
    loud_blocks,
)

IDLE_S = 10.0
CONFIG = """
[notifications]
enabled = false

[[acts.allow]]
name = "lock_screen"
argv = ["true"]
"""

STAGE0 = (
    "what time is it",
    "set a timer for two hours",
    "what day is it today",
    "remind me to call the vet at nine tomorrow",
    "lock the screen",
    "what's the date today",
    "set a timer for forty five minutes",
    "what's on my calendar tomorrow",
    "remind me to water the ferns in three hours",
    "what's the time",
    "what can you do",
    "set a timer for ninety minutes",
    "remind me to check the post in an hour",
    "what's today's date",
)
LLM = (
    "make a note that the car needs new wipers",
    "the plants got watered this morning",
    "my bike tyre pressure is forty psi",
    "put oat milk on the shopping list",
    "write down that the wifi password changed",
    "nudge me about the bins on wednesday evening",
    "i fed the cat at seven",
    "the smoke alarm battery got replaced today",
    "my sister's flight lands at nine tonight",
    "the recycling goes out every other tuesday",
    "pick up the dry cleaning after work",
    "the car service is booked for the twelfth",
    "the heating engineer said the pump is fine",
    "the tomatoes need more sun",
    "the landlord wants the meter reading",
    "the cheque from aunt mary arrived",
    "the fish tank filter needs cleaning",
    "the garage door sticks when it rains",
    "my phone charger is in the car",
    "the bread maker needs a new paddle",
    "the dentist moved my appointment to thursday",
    "jot down that the boiler was serviced today",
)
ENDPOINT = re.compile(r"transcript \((?P<reason>\w+), \d+ ms after speech\)")
HEARD = re.compile(r"heard (?P<text>'.*'|\".*\") -> (?P<intent>\S+) \((?P<ms>\d+) ms from end "
                   r"of speech\): (?P<reply>.*)")


@dataclass
class TurnResult:
    kind: str
    said: str
    voice: str
    heard: str = ""
    intent: str = ""
    reply: str = ""
    daemon_decision_ms: float | None = None  # the daemon's own log: VAD end -> decision
    first_sound_ms: float | None = None
    first_reply_ms: float | None = None
    reply_s: float | None = None
    cpu_speaking: float | None = None
    llm_failed: bool = False
    routed: str = ""  # how the heard words route: stage0, llm (the LLM is asked), classifier
    endpoint: str = ""  # what ended listening: grammar (closed), slots (filled), silence
    missed: str = ""


def reply_onset(loud: np.ndarray, earcons: bool) -> int | None:
    """The reply's first loud block (a sample offset) among `loud`, the loud blocks from
    the first sound on: with earcons, the first one after a quiet block."""
    if not earcons:
        return int(loud[0]) if loud.size else None
    after_gap = np.flatnonzero(np.diff(loud) > BLOCK) + 1
    return int(loud[after_gap[0]]) if after_gap.size else None


def percentiles(values: list[float]) -> dict[str, float | int]:
    if not values:
        return {"n": 0}
    return {"n": len(values), "p50": round(statistics.median(values)),
            "p95": round(float(np.percentile(values, 95))), "max": round(max(values))}


def run_turn(rig: Rig, sampler: CpuSampler, kind: str, text: str, voice: str,
             workdir: Path, index: int, earcons: bool) -> TurnResult:
    assert rig.daemon is not None and rig.mic is not None and rig.out is not None
    result = TurnResult(kind, text, voice)
    wav = write_wav(workdir / f"turn{index}.wav",
                    command_clip(text, voice=voice, lead_s=0.5, tail_s=0.3))
    log_before = len(rig.daemon.text())
    started = time.monotonic()
    player = rig.play(wav)
    player.wait(30)
    new_log = ""

    def heard() -> re.Match | None:
        nonlocal new_log
        new_log = rig.daemon.text()[log_before:]
        return HEARD.search(new_log)

    deadline = time.monotonic() + 60
    match = None
    while time.monotonic() < deadline and not (match := heard()):
        if "no speech after the wake word" in new_log or "dropped " in new_log:
            break
        time.sleep(0.05)
    eos = end_of_speech(rig.mic, started, time.monotonic())
    if match is None:
        result.missed = ("not woken" if "wake word" not in new_log else
                         "no transcript/turn") + f": {new_log[-300:]!r}"
        time.sleep(2.0)
        return result
    result.heard, result.intent = ast.literal_eval(match["text"]), match["intent"]
    result.reply, result.daemon_decision_ms = match["reply"], float(match["ms"])
    result.llm_failed = "LLM route failed" in new_log
    if ended := ENDPOINT.search(new_log):
        result.endpoint = ended["reason"]
    if eos is None:
        result.missed = "end of speech not found on the microphone's monitor"
        return result
    # The reply follows the turn's log line at once (synthesis of one sentence): wait
    # for sound after the earcon (or any sound, without earcons), then quiet.
    reply_start = None
    deadline = time.monotonic() + 45
    while time.monotonic() < deadline:
        sounds = bursts(rig.out, eos)
        if sounds:
            first = rig.out.index_at(sounds[0].start)
            onset = reply_onset(loud_blocks(rig.out.samples()[first:]), earcons)
            if onset is not None:
                reply_start = rig.out.time_at(first + onset)
                # (`sounds` is an earlier snapshot: it must already hold the reply)
                if sounds[-1].end > reply_start and time.monotonic() - sounds[-1].end >= 1.0:
                    break
        time.sleep(0.1)
    if reply_start is None:
        result.missed = "no reply on the speaker" + (" (only the earcon)" if sounds else "")
        return result
    result.first_sound_ms = (sounds[0].start - eos) * 1000
    reply_end = sounds[-1].end
    result.first_reply_ms = (reply_start - eos) * 1000
    result.reply_s = reply_end - reply_start
    result.cpu_speaking = sampler.between(reply_start, reply_end)
    # A reply that asks something opens a follow-up window (8 s): wait it out, so the
    # next turn is a fresh one with its wake word.
    time.sleep(9.0 if "?" in result.reply or "Say yes" in result.reply else 1.0)
    return result


def classify_routes(results: list[TurnResult]) -> None:
    """How was what the daemon heard routed? The grammar (stage 0), or would the shipped
    vote policy ask the LLM: the classifier alone re-routes each transcript
    (deterministic); below `classifier_confident` the LLM is asked. A misheard stage-0
    command counts where it really went."""
    from mavend.clock import system_clock, user_timezone
    from mavend.config import Settings
    from mavend.router import build_router

    settings = Settings()
    router = build_router(settings, clock=system_clock(user_timezone("")), use_llm=False)
    for r in results:
        if not r.heard:
            continue
        decision = router.route(r.heard)
        if decision.decided_by == "grammar":
            r.routed = "stage0"
        elif (decision.decided_by == "classifier"
              and decision.confidence < settings.router.classifier_confident):
            r.routed = "llm"
        else:
            r.routed = decision.decided_by


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stage0", type=int, default=20)
    parser.add_argument("--llm", type=int, default=20)
    parser.add_argument("--json", type=Path, help="write every turn here")
    parser.add_argument("--no-earcons", action="store_true",
                        help="[earcons] enabled = false: the first sound is the reply")
    args = parser.parse_args()


    load_start = os.getloadavg()
    workdir = Path(tempfile.mkdtemp(prefix="conversation-bench-"))
    rig = Rig(workdir)
    turns = [("stage0", STAGE0[i % len(STAGE0)]) for i in range(args.stage0)]
    turns += [("llm", LLM[i % len(LLM)]) for i in range(args.llm)]
    results: list[TurnResult] = []
    t0 = time.monotonic()
    try:
        rig.start(CONFIG + ("\n[earcons]\nenabled = false\n" if args.no_earcons else ""))
        assert rig.daemon is not None and rig.daemon.proc is not None
        print(f"daemon ready in {time.monotonic() - t0:.0f} s (pid {rig.daemon.proc.pid})",
              flush=True)
        sampler = CpuSampler(rig.daemon.proc.pid)
        time.sleep(3.0)  # let start-up work settle
        idle_from = time.monotonic()
        time.sleep(IDLE_S)
        idle_to = time.monotonic()
        time.sleep(0.1)  # a sample after the window's end
        idle_cpu = sampler.between(idle_from, idle_to)
        for i, (kind, text) in enumerate(turns):
            voice = VOICES[i % len(VOICES)]
            r = run_turn(rig, sampler, kind, text, voice, workdir, i, not args.no_earcons)
            results.append(r)
            print(json.dumps(asdict(r)), flush=True)
        sampler.stop()
    finally:
        rig.stop()
    load_end = os.getloadavg()
    classify_routes(results)

    summary: dict[str, object] = {
        "turns": len(results),
        "idle_listening_cpu": None if idle_cpu is None else round(idle_cpu, 3),
        "load_average_start_end": [round(load_start[0], 2), round(load_end[0], 2)],
        "wall_s": round(time.monotonic() - t0),
    }
    for kind in ("stage0", "llm"):
        rows = [r for r in results if r.kind == kind]
        # Measured where the heard words really went (a misheard command may reach the LLM).
        ok = [r for r in results if r.first_reply_ms is not None and r.routed == kind]
        cpu = [r.cpu_speaking for r in ok if r.cpu_speaking is not None]
        summary[kind] = {
            "turns": len(rows),
            "missed": [f"{r.said}: {r.missed}" for r in rows if r.missed],
            "measured": len(ok),
            "routed_elsewhere": [f"{r.heard} ({r.routed})" for r in rows
                                 if r.heard and r.routed != kind],
            "llm_failed": sum(r.llm_failed for r in ok),
            "first_sound_ms": percentiles([r.first_sound_ms for r in ok
                                           if r.first_sound_ms is not None]),
            "first_reply_ms": percentiles([r.first_reply_ms for r in ok]),
            "daemon_decision_ms": percentiles([r.daemon_decision_ms for r in ok
                                               if r.daemon_decision_ms is not None]),
            "reply_s_median": round(statistics.median([r.reply_s for r in ok if r.reply_s]), 2)
            if ok else None,
            "cpu_while_speaking": {"p50": round(statistics.median(cpu), 3),
                                   "max": round(max(cpu), 3)} if cpu else None,
            "intents": {i: sum(r.intent == i for r in ok) for i in sorted({r.intent for r in ok})},
            # What ended listening: the grammar (closed), filled slots, or the silence.
            "first_reply_ms_by_endpoint": {
                e: percentiles([r.first_reply_ms for r in ok if r.endpoint == e])
                for e in sorted({r.endpoint for r in ok})
            },
        }
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary,
                                         "turns": [asdict(r) for r in results]}, indent=1))


if __name__ == "__main__":
    main()
