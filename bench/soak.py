"""Soak (issue 7, test 4): the daemon for an hour of looping speech; RSS and CPU sampled.

    .venv/bin/python bench/soak.py [--minutes 60] [--interval 10] [--no-audio] [--json OUT]

Audio (the default): a private PulseAudio whose null sink is the default source
(a virtual microphone, tests/pulse.py) and `paplay` playing, in a loop, a WAV of
"hey jarvis" + a command, several times over (espeak-ng, tests/audio_fixtures.py);
the real `mavend run` listens to it: wake word, endpointing, STT, router, handlers.
`--no-audio`: `mavend run --no-audio`, fed the same commands as text turns on
stdin at the same pace (everything but the audio front end).

Both: private config and data dirs, a private session bus with a recording
notification server (reminders set by the loop fire and are delivered), the
models of the default profile (never downloaded here). Every `--interval`
seconds the daemon's RSS and CPU (% of one core since the last sample) are read
(psutil when installed, else /proc). The series, then a summary: RSS at the
start (the first sample after `--warmup-s`), at the end and at most, the RSS
slope per hour (least squares over the samples after the warm-up), mean CPU,
turns heard, reminders delivered; the machine and the settings. Exit 0 when the
slope is under `--max-slope-mib-h`, else 1.

Nothing is written outside a temporary directory (and `--json OUT`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mavend.config import Settings  # noqa: E402
from mavend.machine import describe_machine  # noqa: E402

MAVEND = Path(sys.executable).parent / "mavend"
READY = "mavend is running"
# Harmless commands: a timer that fires (delivery), a fact, a note, a question, chat.
COMMANDS = (
    "set a timer for two minutes",
    "what time is it",
    "i just drank a glass of water",
    "remember that the spare key is under the blue pot",
    "when did i last drink water",
    "tell me a joke",
)
TURN_GAP_S = 6.0  # silence after each command: a turn is done before the next starts


# ---------------------------------------------------------------- sampling


@dataclass(frozen=True)
class Sample:
    t_s: float  # since the daemon said it was running
    rss_mib: float
    cpu_pct: float  # of one core, since the previous sample
    threads: int


class ProcessProbe:
    """RSS, CPU time and threads of one process: psutil if installed, else /proc."""

    def __init__(self, pid: int):
        self.pid = pid
        try:
            import psutil

            self._ps = psutil.Process(pid)
            self.source = f"psutil {psutil.__version__}"
        except ImportError:
            self._ps = None
            self.source = "/proc"
        self._tick = os.sysconf("SC_CLK_TCK")

    def read(self) -> tuple[float, float, int]:
        """(RSS in MiB, CPU seconds so far, threads)."""
        if self._ps is not None:
            cpu = self._ps.cpu_times()
            return self._ps.memory_info().rss / 2**20, cpu.user + cpu.system, self._ps.num_threads()
        status = Path(f"/proc/{self.pid}/status").read_text()
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        rss_kib = int(fields["VmRSS"].split()[0])
        threads = int(fields["Threads"])
        stat = Path(f"/proc/{self.pid}/stat").read_text()
        after_name = stat.rsplit(")", 1)[1].split()
        utime, stime = int(after_name[11]), int(after_name[12])  # fields 14 and 15
        return rss_kib / 1024, (utime + stime) / self._tick, threads


def slope_per_hour(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MiB), in MiB per hour; 0 with under 2 points."""
    if len(points) < 2:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    if var == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var * 3600.0


# ------------------------------------------------------------ the environment


@contextlib.contextmanager
def session_bus(work: Path) -> Iterator[str]:
    daemon = shutil.which("dbus-daemon")
    if daemon is None:
        raise SystemExit("dbus-daemon is not installed: apt-get install dbus")
    from tests.conftest import BUS_CONFIG  # the tests' private session bus, as is

    config = work / "bus.conf"
    config.write_text(BUS_CONFIG.format(socket=work / "bus"))
    out = subprocess.run(
        [daemon, f"--config-file={config}", "--print-address=1", "--print-pid=1", "--fork"],
        capture_output=True,
        text=True,
        check=True,
        timeout=10,
    ).stdout.split()
    address, pid = out[0], int(out[1])
    try:
        yield address
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)


@contextlib.contextmanager
def notification_server(address: str) -> Iterator[object]:
    from tests.notify_server import NotificationServer

    server = NotificationServer(address).start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def virtual_microphone(work: Path) -> Iterator[object]:
    from tests.pulse import Pulse

    runtime = Path(tempfile.mkdtemp(prefix="mavend-soak-pulse-"))  # a short socket path
    pulse = Pulse(runtime_dir=runtime, log=work / "pulseaudio.log")
    try:
        yield pulse.start()
    finally:
        pulse.stop()
        shutil.rmtree(runtime, ignore_errors=True)


def speech_loop_wav(path: Path) -> float:
    """Every command once, each after "hey jarvis", with silence between; its length (s)."""
    from tests.audio_fixtures import RATE, command_clip, concat, silence, write_wav

    clips = [command_clip(c, tail_s=TURN_GAP_S) for c in COMMANDS]
    samples = concat(silence(1.0), *clips)
    write_wav(path, samples)
    return len(samples) / RATE


class Looper(threading.Thread):
    """Plays the WAV again and again (audio), or writes the commands to stdin (text)."""

    def __init__(self, *, pulse: object = None, wav: Path | None = None, stdin: object = None):
        super().__init__(name="soak-loop", daemon=True)
        self.pulse, self.wav, self.stdin = pulse, wav, stdin
        self.stop = threading.Event()
        self.loops = 0
        self.sent = 0

    def run(self) -> None:
        while not self.stop.is_set():
            if self.pulse is not None:
                player = self.pulse.play(self.wav)  # type: ignore[attr-defined]
                while player.poll() is None and not self.stop.wait(0.2):
                    pass
                if player.poll() is None:
                    player.terminate()
                    player.wait(5)
            else:
                for command in COMMANDS:
                    try:
                        self.stdin.write(command + "\n")  # type: ignore[attr-defined]
                        self.stdin.flush()  # type: ignore[attr-defined]
                    except (BrokenPipeError, ValueError):
                        return
                    self.sent += 1
                    if self.stop.wait(TURN_GAP_S):
                        return
            self.loops += 1


# ---------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=60.0, help="how long (default 60)")
    parser.add_argument("--interval", type=float, default=10.0, help="sample every S seconds")
    parser.add_argument(
        "--no-audio", action="store_true", help="`mavend run --no-audio`, text turns on stdin"
    )
    parser.add_argument(
        "--warmup-s", type=float, default=120.0, help="samples before this are not in the slope"
    )
    parser.add_argument("--max-slope-mib-h", type=float, default=5.0, help="the growth verdict")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the series and summary")
    parser.add_argument("--keep", action="store_true", help="keep the work dir (logs, database)")
    args = parser.parse_args(argv)
    audio = not args.no_audio
    # The recording notification server's loop is dropped, not drained, at the end.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)

    work = Path(tempfile.mkdtemp(prefix="mavend-soak-"))
    (work / "config").mkdir()
    (work / "config" / "config.toml").write_text("[notifications]\nretry_s = 5.0\n")
    env = {
        **os.environ,
        "MAVEND_CONFIG_DIR": str(work / "config"),
        "MAVEND_DATA_DIR": str(work / "data"),
    }
    env.pop("JOURNAL_STREAM", None)
    print(f"soak: machine: {describe_machine(load=True)}")
    settings = Settings()
    print(
        f"soak: settings: minutes={args.minutes:g} interval_s={args.interval:g} "
        f"mode={'audio (mavend run)' if audio else 'text (mavend run --no-audio)'} "
        f"commands={len(COMMANDS)} turn_gap_s={TURN_GAP_S:g} stt={settings.stt.model} "
        f"wakeword={settings.wakeword.model} llm={settings.router.llm_model} "
        f"(enabled={settings.router.llm_enabled}) classifier={settings.router.classifier_model}"
    )
    print(f"soak: work dir {work}")

    with contextlib.ExitStack() as stack:
        address = stack.enter_context(session_bus(work))
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        server = stack.enter_context(notification_server(address))
        pulse = None
        if audio:
            pulse = stack.enter_context(virtual_microphone(work))
            env.update(pulse.env)  # type: ignore[attr-defined]
            length = speech_loop_wav(work / "loop.wav")
            print(f"soak: looping {work / 'loop.wav'} ({length:.1f} s per loop)")
        log_path = work / "daemon.log"
        log_file = stack.enter_context(open(log_path, "w"))
        command = [str(MAVEND), "run"] + ([] if audio else ["--no-audio"])
        spawned = time.monotonic()
        daemon = subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.DEVNULL if audio else subprocess.PIPE,
            stdout=log_file if audio else subprocess.PIPE,
            stderr=log_file,
            text=True,
        )
        stack.callback(_stop, daemon)
        replies: list[str] = []
        if not audio:
            reader = threading.Thread(
                target=lambda: replies.extend(daemon.stdout), daemon=True, name="soak-replies"
            )
            reader.start()
        while READY not in log_path.read_text(errors="replace"):
            if daemon.poll() is not None or time.monotonic() - spawned > 300:
                print(log_path.read_text(errors="replace")[-3000:], file=sys.stderr)
                raise SystemExit(f"soak: the daemon did not start (rc {daemon.poll()})")
            time.sleep(0.1)
        ready_s = time.monotonic() - spawned
        print(f"soak: daemon pid {daemon.pid} ready in {ready_s:.1f} s")

        probe = ProcessProbe(daemon.pid)
        looper = Looper(pulse=pulse, wav=work / "loop.wav") if audio else Looper(stdin=daemon.stdin)
        looper.start()
        stack.callback(looper.stop.set)
        print(f"soak: sampling with {probe.source}")
        print(f"{'t_s':>8} {'rss_mib':>9} {'cpu_pct':>8} {'threads':>7}")
        samples: list[Sample] = []
        began = time.monotonic()
        _, cpu_last, _ = probe.read()
        t_last = began
        end = began + args.minutes * 60.0
        while True:
            next_at = min(t_last + args.interval, end)
            time.sleep(max(0.0, next_at - time.monotonic()))
            if daemon.poll() is not None:
                print(log_path.read_text(errors="replace")[-3000:], file=sys.stderr)
                raise SystemExit(f"soak: the daemon died (rc {daemon.returncode})")
            now = time.monotonic()
            rss, cpu, threads = probe.read()
            sample = Sample(
                round(now - began, 1),
                round(rss, 1),
                round((cpu - cpu_last) / max(now - t_last, 1e-9) * 100.0, 1),
                threads,
            )
            samples.append(sample)
            print(
                f"{sample.t_s:8.1f} {sample.rss_mib:9.1f} {sample.cpu_pct:8.1f} {threads:7d}",
                flush=True,
            )
            cpu_last, t_last = cpu, now
            if now >= end:
                break
        looper.stop.set()
        looper.join(15)
        log_text = log_path.read_text(errors="replace")
        heard = log_text.count(" heard ") if audio else len(replies)
        delivered = sum(1 for n in server.interface.received if n.summary.startswith("Timer"))  # type: ignore[attr-defined]
        errors = sum(1 for line in log_text.splitlines() if " ERROR " in line)

    after = [s for s in samples if s.t_s >= args.warmup_s] or samples
    slope = slope_per_hour([(s.t_s, s.rss_mib) for s in after])
    # A warming process (allocator arenas, caches filling to their caps) rises and then
    # levels off: the second half's slope says whether it is still growing.
    half = [s for s in samples if s.t_s >= samples[-1].t_s / 2] or samples
    late_slope = slope_per_hour([(s.t_s, s.rss_mib) for s in half])
    summary = {
        "mode": "audio" if audio else "text",
        "minutes": args.minutes,
        "interval_s": args.interval,
        "samples": len(samples),
        "ready_s": round(ready_s, 1),
        "rss_start_mib": after[0].rss_mib,
        "rss_end_mib": samples[-1].rss_mib,
        "rss_max_mib": max(s.rss_mib for s in samples),
        "rss_slope_mib_per_h": round(slope, 2),
        "slope_from_s": after[0].t_s,
        "rss_second_half_slope_mib_per_h": round(late_slope, 2),
        "cpu_mean_pct": round(statistics.fmean(s.cpu_pct for s in samples), 1),
        "cpu_max_pct": max(s.cpu_pct for s in samples),
        "threads_start": samples[0].threads,
        "threads_end": samples[-1].threads,
        "loops": looper.loops,
        "turns": heard,
        "timers_delivered": delivered,
        "error_log_lines": errors,
        "machine": describe_machine(),
    }
    verdict = "no growth" if slope < args.max_slope_mib_h else "GROWTH"
    print(
        f"soak: mode={summary['mode']} minutes={args.minutes:g} samples={len(samples)} "
        f"rss_start={summary['rss_start_mib']} MiB rss_end={summary['rss_end_mib']} MiB "
        f"rss_max={summary['rss_max_mib']} MiB slope={summary['rss_slope_mib_per_h']} MiB/h "
        f"(from t={summary['slope_from_s']} s), second half {round(late_slope, 2)} MiB/h "
        f"cpu_mean={summary['cpu_mean_pct']} % "
        f"cpu_max={summary['cpu_max_pct']} % threads={summary['threads_start']}->"
        f"{summary['threads_end']} turns={heard} timers_delivered={delivered} "
        f"error_log_lines={errors}: {verdict} (limit {args.max_slope_mib_h:g} MiB/h)"
    )
    if args.json is not None:
        args.json.write_text(
            json.dumps({"summary": summary, "series": [asdict(s) for s in samples]}, indent=1)
        )
    if args.keep:
        print(f"soak: kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if verdict == "no growth" else 1


def _stop(daemon: subprocess.Popen) -> None:
    if daemon.poll() is None:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait(10)


if __name__ == "__main__":
    raise SystemExit(main())
