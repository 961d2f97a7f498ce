"""End of speech -> transcript and -> decision, and the idle listening loop's CPU.

    .venv/bin/python bench/frontend_latency.py [--llm N] [--no-early-stop] [--idle S]
        [--stt-model whisper-base]

Latency: each turn ("hey jarvis" + a command, espeak-ng voices) is fed to the
real front end at real-time pace, exactly as a microphone delivers it (80 ms
blocks stamped with their arrival time), and the router decides on the
transcript. "End of speech" is where the synthesized command's last sample
is (known, not estimated by the VAD), so the figures include the VAD's own
lag and the endpointing silence. Stage-0 commands are routed by the grammar;
LLM-routed ones are real utterances from ../shared/eval/router_dev.jsonl
that the grammar does not match, through the full cascade (classifier, LLM).

Idle CPU: the front end listens to a private PulseAudio null sink (silence)
through sounddevice for `--idle` seconds; the process's CPU time / wall time.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from wakeword_data import (
    EVAL,
    STAGE0,
    STAGE0_OPEN,
    espeak_voices,
    machine,
    piper_voices,
    turn,
)

from mavend.cli.listen import Decider
from mavend.clock import system_clock, user_timezone
from mavend.config import Settings
from mavend.router import build_router
from tests.audio_fixtures import concat, silence
from wakeword import ArraySource, EventQueue, FrontEnd, Partial, SourceEnded, Transcript

LEAD_S = 1.0
TAIL_S = 2.0


def percentiles(values: list[float]) -> str:
    if not values:
        return "n/a"
    return (f"{statistics.median(values):.0f} / {np.percentile(values, 95):.0f} "
            f"(n={len(values)})")


def run_turns(front: FrontEnd, events: EventQueue, router, turns, block: int) -> dict[str, list]:
    """Feed each turn at real-time pace; latencies from the true end of speech."""
    out: dict[str, list] = {"transcript": [], "decision": [], "missed": [], "endpoint": [],
                            "route_ms": [], "right": []}
    for label, samples, true_end_t, reference in turns:
        # As the daemon would: the front end in its threads, routing here as
        # soon as the transcript arrives.
        front.start(ArraySource(samples, name=label, realtime=True, block=block))
        transcript = None
        decider = Decider(router)  # as `mavend listen` does: a partial starts routing
        while not isinstance(event := events.get(timeout=120), SourceEnded):
            if isinstance(event, Partial):
                decider.start(event)
            elif isinstance(event, Transcript) and transcript is None:
                transcript = event
                decision, ready, reused = decider.decide(event)
                ready_wall = event.speech_end_monotonic + event.latency_ms / 1000
                decided = max(ready, ready_wall)
                route_ms = (decided - ready_wall) * 1000
        decider.close()
        if transcript is None:
            out["missed"].append(label)
            continue
        # Wall time of the true end of speech, from the VAD's end and its mapping.
        eos_wall = transcript.speech_end_monotonic - (transcript.timings.speech_end - true_end_t)
        ready_wall = transcript.speech_end_monotonic + transcript.latency_ms / 1000
        out["transcript"].append((ready_wall - eos_wall) * 1000)
        out["decision"].append((decided - eos_wall) * 1000)
        out["endpoint"].append(transcript.endpoint)
        out["route_ms"].append(route_ms)
        want, got = router.grammar.match(reference), router.grammar.match(transcript.text)
        out["right"].append(want is not None and got is not None
                            and (want.intent, want.name) == (got.intent, got.name))
        print(f"  {label}: {transcript.text!r} -> {decision.intent} ({decision.decided_by}"
              f"{', routed from the partial' if reused else ''}); "
              f"transcript {out['transcript'][-1]:.0f} ms, decision {out['decision'][-1]:.0f} ms "
              f"(VAD end {1000 * (transcript.timings.speech_end - true_end_t):+.0f} ms, "
              f"stt {transcript.stt.get('compute_ms', 0):.0f} ms) [{transcript.endpoint}]",
              flush=True)
    return out


def with_policy(settings: Settings, policy: str):
    """A warmed-up router with `router.policy = policy` (its LLM's prefix cached)."""
    router_settings = dataclasses.replace(settings.router, policy=policy)
    routed = build_router(dataclasses.replace(settings, router=router_settings),
                          clock=system_clock(user_timezone("")), use_llm=True)
    warm(routed)
    return routed


def warm(router) -> None:
    """As the daemon does before it says it is ready: models loaded, the LLM's fixed
    prompt prefix evaluated and cached (its first calls are seconds slow otherwise)."""
    router.warm_up()
    for text in ("what is on my calendar", "note that the milk is off", "how are you"):
        router.route(text)


def make_turns(commands: Sequence[str], voices, limit: int) -> list:
    turns = []
    for i, command in enumerate(commands[:limit]):
        voice = voices[i % len(voices)]
        spoken = turn(voice, command)
        samples = concat(silence(LEAD_S), spoken, silence(TAIL_S))
        turns.append((f"{voice.name} {command!r}", samples, LEAD_S + len(spoken) / 16000,
                      command))
    return turns


def llm_commands(router, count: int, seed: int = 7) -> list[str]:
    rows = [json.loads(line) for line in EVAL.read_text().splitlines() if line.strip()]
    texts = [r["text"] for r in rows if router.grammar.match(r["text"]) is None]
    random.Random(seed).shuffle(texts)
    return [t for t in texts if 3 <= len(t.split()) <= 10][:count]


def idle_cpu(settings: Settings, seconds: float, noise_dbfs: float | None = None,
             gate: bool = True) -> str:
    """CPU of this process while the front end listens to a real device.

    The device is a PulseAudio null sink: digital silence, or (`noise_dbfs`)
    pink noise played into it, like a room's steady background.
    """
    from tests.pulse import Pulse
    from wakeword import DeviceState, MicrophoneSource

    runtime = Path(tempfile.mkdtemp(prefix="mavend-bench-pulse-"))
    pulse = Pulse(runtime_dir=runtime, log=runtime / "pulse.log")
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    os.environ["PULSE_SERVER"] = f"unix:{pulse.socket}"
    pulse.start()
    events = EventQueue()
    front = FrontEnd.from_settings(settings, sink=events)
    if not gate:
        front.wake.gate = None  # score every frame, as a noisy room would make it
    try:
        front.start(MicrophoneSource.from_settings(settings.audio, on_state=events))
        while not (isinstance(e := events.get(timeout=30), DeviceState)
                   and e.state == "listening"):
            pass
        player = None
        if noise_dbfs is not None:
            from tests.audio_fixtures import noise, write_wav

            level = 32768 * 10 ** (noise_dbfs / 20)
            hiss = np.clip(noise(seconds + 10, seed=5) * level, -32768, 32767).astype(np.int16)
            player = pulse.play(write_wav(runtime / "noise.wav", hiss))
        time.sleep(4.0)  # settle (and let the gate learn the noise floor)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu0 = usage.ru_utime + usage.ru_stime
        wall0 = time.monotonic()
        time.sleep(seconds)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu = usage.ru_utime + usage.ru_stime - cpu0
        wall = time.monotonic() - wall0
        skipped = front.wake.skipped_frames
        if player is not None:
            player.terminate()
    finally:
        front.close()
        pulse.stop()
    what = "digital silence" if noise_dbfs is None else f"pink noise at {noise_dbfs:g} dBFS"
    return (f"{100 * cpu / wall:.2f} % of one core over {wall:.0f} s of {what} "
            f"(audio.block_ms = {settings.audio.block_ms}; the energy gate skipped "
            f"{skipped} frames in all{'' if gate else '; gate off'})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stage0", type=int, default=30, help="stage-0 turns")
    parser.add_argument("--llm", type=int, default=0, help="LLM-routed turns (0: skip)")
    parser.add_argument("--no-early-stop", action="store_true",
                        help="endpoint.grammar_early_stop = false")
    parser.add_argument("--idle", type=float, default=0, help="seconds of idle CPU measurement")
    parser.add_argument("--block-ms", type=int, default=None, help="audio.block_ms for --idle")
    parser.add_argument("--idle-noise", type=float, default=None, metavar="DBFS",
                        help="play pink noise at this level during --idle")
    parser.add_argument("--no-gate", action="store_true", help="--idle without the energy gate")
    parser.add_argument("--piper-voice", type=Path, help="a Piper .onnx voice to add")
    parser.add_argument("--only-piper", action="store_true", help="Piper voices only")
    parser.add_argument("--stt-model", default=None, help="[stt] model (default: tiny.en)")
    parser.add_argument("--policies", default="auto", metavar="NAME[,NAME]",
                        help="router.policy for the LLM-routed turns, each run on the same turns "
                        "(e.g. auto,vote: the shipped policy against the first wave's)")
    args = parser.parse_args(argv)

    settings = Settings()
    if args.no_early_stop:
        settings = dataclasses.replace(
            settings,
            endpoint=dataclasses.replace(settings.endpoint, grammar_early_stop=False))
    if args.block_ms:
        settings = dataclasses.replace(
            settings, audio=dataclasses.replace(settings.audio, block_ms=args.block_ms))
    if args.stt_model:
        settings = dataclasses.replace(
            settings, stt=dataclasses.replace(settings.stt, model=args.stt_model))
    print(f"# machine: {machine()}")
    print(f"# stt.model = {settings.stt.model}")
    print(f"# grammar_early_stop = {settings.endpoint.grammar_early_stop}, "
          f"silence_ms = {settings.endpoint.silence_ms}, "
          f"grammar_silence_ms = {settings.endpoint.grammar_silence_ms}")
    if args.idle:
        result = idle_cpu(settings, args.idle, args.idle_noise, gate=not args.no_gate)
        print(f"idle listening loop CPU: {result}", flush=True)

    if not (args.stage0 or args.llm):
        return 0
    router = build_router(settings, clock=system_clock(user_timezone("")),
                          use_llm=bool(args.llm))
    started = time.perf_counter()
    if args.llm:
        warm(router)
    else:
        router.warm_up()
    print(f"# router warm-up {time.perf_counter() - started:.1f} s", flush=True)
    events = EventQueue()
    front = FrontEnd.from_settings(settings, sink=events, grammar=router.grammar)
    voices = piper_voices(args.piper_voice) + ([] if args.only_piper else espeak_voices())
    block = settings.audio.block_ms * 16  # samples per chunk, as the microphone would give
    print(f"# audio.block_ms = {settings.audio.block_ms}")
    rows = []
    with front:
        if args.stage0:
            closed = [c for c in STAGE0 for _ in range(2)]
            turns = make_turns(closed, voices, args.stage0)
            print("## stage-0 commands (closed templates)")
            rows.append(("stage-0, closed", run_turns(front, events, router, turns, block)))
            turns = make_turns([c for c in STAGE0_OPEN for _ in range(4)], voices, 8)
            print("## stage-0 commands (open templates: remind / timer)")
            out = run_turns(front, events, router, turns, block)
            rows.append(("stage-0, open (wildcard)", out))
        if args.llm:
            turns = make_turns(llm_commands(router, args.llm), voices, args.llm)
            for policy in args.policies.split(","):
                routed = with_policy(settings, policy.strip())
                print(f"## grammar-miss utterances, router.policy = {policy} "
                      f"({routed.policy.name})")
                rows.append((f"grammar miss, policy {policy}",
                             run_turns(front, events, routed, turns, block)))
    print()
    print("| set | end of speech -> transcript p50 / p95 ms | -> decision p50 / p95 ms | "
          "routing after the transcript p50 ms | endpoint reasons | missed |")
    print("|---|---|---|---|---|---|")
    for name, out in rows:
        reasons = {r: out["endpoint"].count(r) for r in sorted(set(out["endpoint"]))}
        route = f"{statistics.median(out['route_ms']):.0f}" if out["route_ms"] else "n/a"
        print(f"| {name} | {percentiles(out['transcript'])} | {percentiles(out['decision'])} | "
              f"{route} | {reasons} | {len(out['missed'])} |")
        if name.startswith("stage-0"):
            right = [d for d, ok in zip(out["decision"], out["right"], strict=True) if ok]
            early = [d for d, r in zip(out["decision"], out["endpoint"], strict=True)
                     if r == "grammar"]
            print(f"|   of which routed to the right command | | {percentiles(right)} | | | |")
            print(f"|   of which ended early by the grammar | | {percentiles(early)} | | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
