"""How many threads the in-process LLM should use now, given what else keeps the cores busy.

llama.cpp's CPU threads meet at a spinning barrier after every operation of the graph.
When another process holds one of the two cores, the thread that lost its core holds up
the other at each barrier until the scheduler gives it back, and a decode step that took
~45 ms takes several times as long (BENCHMARKS.md, "The LLM on a shared box"). One thread
has no barrier to wait at. So before each call the router asks `ThreadChooser` for a count:
all of `[router] llm_threads` on an idle box, one fewer for each core other processes kept
busy over the last second.

"Others" is the whole box's busy time (/proc/stat) less this process's own
(/proc/self/stat), so the daemon's own threads never count against it. Niced processes
(the `nice` column) are left out: the scheduler gives way to us over them, and they do
not hold a barrier up the way an equal process does. The thread count changes speed, not
output: every row of a matrix product is computed by one thread either way, and the
contention bench checks that routes and replies are the same for 1 and 2 threads.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# Readings are taken this often by a daemon thread (two small /proc reads), and the
# busy share is averaged over WINDOW_S: long enough to see a steady competitor, short
# enough that a build started a moment ago counts at the next turn.
SAMPLE_EVERY_S = 0.25
WINDOW_S = 1.0
# A core counts as taken once others used this much of it over the window: below it a
# short burst (a cron job's start, a log rotation) would cost every turn a thread.
TAKEN_FROM = 0.35

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True)
class CpuReading:
    at: float  # time.monotonic()
    box_busy: float  # seconds of non-niced CPU time, all cores, since boot
    own: float  # seconds of CPU time of this process since it started


def read_cpu(stat: Path = Path("/proc/stat"), own: Path = Path("/proc/self/stat")) -> CpuReading:
    """One reading; OSError when /proc cannot be read (not Linux, a locked-down container)."""
    at = time.monotonic()
    first = stat.read_text().split("\n", 1)[0].split()
    if not first or first[0] != "cpu":
        raise OSError(f"{stat} does not start with a cpu line")
    # user nice system idle iowait irq softirq steal ...: busy without nice, idle, iowait.
    values = [int(v) for v in first[1:9]]
    user, _nice, system, _idle, _iowait, irq, softirq, steal = (values + [0] * 8)[:8]
    # The process's fields start after the command name, which is in parentheses and may
    # hold spaces: utime and stime are fields 14 and 15 of the whole line.
    text = own.read_text()
    fields = text[text.rindex(")") + 2 :].split()
    utime, stime = int(fields[11]), int(fields[12])
    busy = user + system + irq + softirq + steal
    return CpuReading(at, busy / _TICKS, (utime + stime) / _TICKS)


def others_busy_cores(old: CpuReading, new: CpuReading) -> float:
    """Cores other processes kept busy between two readings (0.0 when none elapsed)."""
    wall = new.at - old.at
    if wall <= 0:
        return 0.0
    others = (new.box_busy - old.box_busy) - (new.own - old.own)
    return max(0.0, others / wall)


def threads_for(max_threads: int, cores: int, others_busy: float) -> int:
    """Threads to use: one fewer for each core others hold, never fewer than one."""
    free = cores - math.floor(others_busy + (1.0 - TAKEN_FROM))
    return max(1, min(max_threads, free))


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class ThreadChooser:
    """The thread count for the next LLM call: `max_threads` when adaptation is off or
    /proc is not readable. Readings are taken by one daemon thread (`background`)."""

    def __init__(
        self,
        max_threads: int,
        *,
        adaptive: bool = True,
        cores: int | None = None,
        reader: Callable[[], CpuReading] = read_cpu,
        background: bool = True,
    ) -> None:
        self.max_threads = max_threads
        self.cores = cores or usable_cores()
        self._reader = reader
        self._readings: deque[CpuReading] = deque(maxlen=int(WINDOW_S / SAMPLE_EVERY_S) + 2)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.adaptive = adaptive and max_threads > 1 and self._readable()
        if self.adaptive and background:
            # From the start, so the first call already has a second of readings.
            self._thread = threading.Thread(target=self._run, name="mavend-cpu-share", daemon=True)
            self._thread.start()

    def _readable(self) -> bool:
        try:
            self._readings.append(self._reader())
        except (OSError, ValueError, IndexError):
            return False
        return True

    def others_busy(self) -> float:
        """Cores other processes used over about the last second (0.0 until two readings)."""
        with self._lock:
            if len(self._readings) < 2:
                return 0.0
            newest = self._readings[-1]
            oldest = next(
                (r for r in self._readings if newest.at - r.at <= WINDOW_S + SAMPLE_EVERY_S),
                self._readings[0],
            )
        return others_busy_cores(oldest, newest)

    def choose(self) -> int:
        if not self.adaptive:
            return self.max_threads
        self._sample()  # the freshest reading, so a competitor of the last 0.25 s counts
        return threads_for(self.max_threads, self.cores, self.others_busy())

    def _sample(self) -> None:
        try:
            reading = self._reader()
        except (OSError, ValueError, IndexError):
            return
        with self._lock:
            self._readings.append(reading)

    def close(self) -> None:
        """Stop sampling (the router closed); `choose` gives `max_threads` from now on."""
        self.adaptive = False
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2 * SAMPLE_EVERY_S)

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_EVERY_S):
            self._sample()
