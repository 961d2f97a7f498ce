"""Satellites under load (issue 16): N fake Wyoming satellites on loopback, one daemon.

Each fake satellite (tests/satellite_kit.py, written with the `wyoming` package) is a
Wyoming server like wyoming-satellite: when the daemon connects it streams a
prerecorded utterance (espeak-ng: "hey jarvis, set a timer for <N> hours", a different N
per satellite, so every answer says whose it is) as audio-chunks at real-time pace every
`--every` seconds, silence between, and records what comes back. The daemon is the real
one (`mavend run --no-audio` in its own process, its own data dir, the default models):
mavend's wake word, endpointing and Whisper run on every stream.

Per run: turns sent, answered, lost (no reply within 15 s), answered to the wrong
satellite (a reply naming another satellite's N), latency from the end of the streamed
speech to the reply's text event (`synthesize`) p50/p95, and the daemon's CPU (its
utime+stime over the run's wall time, in cores).

    .venv/bin/python bench/satellite_load.py                       # 4 satellites, 10 min
    .venv/bin/python bench/satellite_load.py --minutes 2 --sweep 1,2,4,6,8
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.audio_fixtures import command_clip  # noqa: E402
from tests.satellite_kit import FakeSatellite  # noqa: E402

WORDS = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven"]
LOST_AFTER_S = 15.0


def config_text(satellites: list[FakeSatellite], data_dir: Path) -> str:
    lines = [
        "[storage]", f'data_dir = "{data_dir}"', "",
        "[notifications]", "enabled = false", "",
    ]
    for sat in satellites:
        lines += ["[[satellites]]", f'uri = "{sat.uri}"', f'name = "{sat.name}"',
                  f'room = "{sat.name}"', ""]
    return "\n".join(lines)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def one_run(count: int, minutes: float, every: float, workdir: Path) -> dict:
    satellites = []
    for i in range(count):
        clip = command_clip(f"set a timer for {WORDS[i]} hours")
        satellites.append(await FakeSatellite(f"room{i + 1}", clip, every_s=every).start())
    data_dir = workdir / f"data-{count}-{int(time.time())}"
    config = workdir / f"config-{count}.toml"
    config.write_text(config_text(satellites, data_dir))
    log_path = workdir / f"daemon-{count}.log"
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"}
    with open(log_path, "wb") as log_file:
        proc = subprocess.Popen(
            [str(ROOT / ".venv/bin/mavend"), "--config", str(config), "run", "--no-audio"],
            stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT, env=env,
        )
    try:
        deadline = time.monotonic() + 180
        while not all(s.streaming.is_set() for s in satellites):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the daemon did not connect (see {log_path})")
            await asyncio.sleep(0.2)
        # Staggered: satellite i's first turn starts i/N of a period later (the first
        # clips were already started on connect; drop those turns from the figures).
        started, cpu0 = time.monotonic(), cpu_seconds(proc.pid)
        await asyncio.sleep(minutes * 60)
        ended, cpu1 = time.monotonic(), cpu_seconds(proc.pid)
        await asyncio.sleep(LOST_AFTER_S)  # the last turns' replies
    finally:
        proc.terminate()
        proc.wait(30)
        for sat in satellites:
            await sat.close()
    return summarize(satellites, started, ended, (cpu1 - cpu0) / (ended - started), count)


def summarize(satellites: list[FakeSatellite], started: float, ended: float, cpu: float,
              count: int) -> dict:
    latencies: list[float] = []
    per_satellite: dict[str, int | None] = {}  # p50 each: no room waits more than another
    sent = answered = lost = wrong = misheard = 0
    turns: list[dict] = []
    for i, sat in enumerate(satellites):
        # Whisper writes numbers as digits. What mavend heard on this satellite's stream
        # (its `transcript` event) must be this satellite's request: another satellite's
        # number there is a turn answered to the wrong satellite; no number of anyone's is
        # a mishearing (espeak-ng's "five hours" -> "5 miles"), counted apart.
        mine = f"for {i + 2} hours"
        others = [f"for {j + 2} hours" for j in range(count) if j != i]
        own = sorted(t.reply_at - t.sent_end for t in sat.turns
                     if started <= t.sent_end <= ended and t.reply_at is not None)
        per_satellite[sat.name] = round(own[len(own) // 2] * 1000) if own else None
        for turn in sat.turns:
            if not started <= turn.sent_end <= ended:
                continue
            sent += 1
            if turn.reply is None or turn.reply_at is None:
                lost += 1
                continue
            answered += 1
            heard = (turn.transcript or "").lower()
            if mine not in heard:
                if any(other in heard for other in others):
                    wrong += 1
                else:
                    misheard += 1
            latencies.append(turn.reply_at - turn.sent_end)
            turns.append({"satellite": sat.name, "heard": turn.transcript, "reply": turn.reply,
                          "ms": round((turn.reply_at - turn.sent_end) * 1000)})
    latencies.sort()

    def pct(p: float) -> float | None:
        if not latencies:
            return None
        return round(latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000)

    return {
        "satellites": count, "minutes": round((ended - started) / 60, 2), "sent": sent,
        "answered": answered, "lost": lost, "wrong_satellite": wrong, "misheard": misheard,
        "p50_ms": pct(0.5), "p95_ms": pct(0.95),
        "mean_ms": round(statistics.mean(latencies) * 1000) if latencies else None,
        "daemon_cpu_cores": round(cpu, 2), "p50_ms_per_satellite": per_satellite,
        "turns": turns,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--satellites", type=int, default=4)
    parser.add_argument("--every", type=float, default=8.0, help="seconds between turns")
    parser.add_argument("--sweep", default="", help="satellite counts, e.g. 1,2,4,6,8")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/out/satellite_load.json")
    args = parser.parse_args()
    counts = [int(n) for n in args.sweep.split(",")] if args.sweep else [args.satellites]
    results = []
    with tempfile.TemporaryDirectory(prefix="mavend-satload-") as tmp:
        for count in counts:
            result = await one_run(count, args.minutes, args.every, Path(tmp))
            print(json.dumps({k: v for k, v in result.items() if k != "turns"}), flush=True)
            results.append(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"every_s": args.every, "runs": results}, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
