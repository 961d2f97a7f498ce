"""Worker threads that all exist from the start.

`concurrent.futures.ThreadPoolExecutor` adds a thread whenever work arrives and none
is idle, up to its limit, and never gives one back. In a daemon that runs for months
that means its thread count (and with it one SQLite connection, its page cache and a
malloc arena per thread) steps up whenever the box is slow and jobs overlap: the
two-hour soak (bench/soak.py, issue 22) saw 7 -> 9 threads and 26 -> 30 fds that way.
A pool from `started_pool` starts every thread at once and runs `initializer` (open the
thread's database connection) in each, so what the daemon holds is counted at start.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait

log = logging.getLogger(__name__)

# Long enough for a loaded box; each thread only waits for its siblings to start.
START_TIMEOUT_S = 30.0


def started_pool(
    size: int, name: str, *, initializer: Callable[[], object] | None = None
) -> ThreadPoolExecutor:
    """A pool of exactly `size` threads, all running when this returns."""
    if size < 1:
        raise ValueError(f"a worker pool needs at least one thread, not {size}")
    pool = ThreadPoolExecutor(
        max_workers=size,
        thread_name_prefix=name,
        initializer=_guarded(initializer, name) if initializer else None,
    )
    # Each task waits until all `size` are running at once: a busy thread is never
    # reused for the next one, so the pool must start a thread per task.
    everyone = threading.Barrier(size)
    started = [pool.submit(everyone.wait, START_TIMEOUT_S) for _ in range(size)]
    wait(started)
    broken = [f.exception() for f in started if f.exception() is not None]
    if broken:  # a stalled box: the pool still works, it only starts threads later
        log.warning("%s: not every worker started together (%s)", name, broken[0])
    return pool


def _guarded(initializer: Callable[[], object], name: str) -> Callable[[], None]:
    # A failing initializer breaks a ThreadPoolExecutor for good; a connection that
    # cannot open now (a locked or full disk) is opened by the thread's first use.
    def run() -> None:
        try:
            initializer()
        except Exception as exc:
            log.warning("%s: preparing a worker failed (%s); it prepares on first use", name, exc)

    return run
