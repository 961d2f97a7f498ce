"""The daemon's services: named asyncio tasks, each restarted with a backoff when it
crashes, so one failing part (a satellite, the D-Bus API, the microphone) never stops the
others."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

log = logging.getLogger("mavend.supervisor")  # the name its journal lines have always had

Service = Callable[[], Awaitable[None]]

# A crashed service is restarted after 1 s, 2 s, 4 s, ... at most this far apart.
RESTART_MAX_S = 30.0
# A service that ran this long before crashing starts its backoff again.
RESTART_RESET_S = 60.0


class Supervisor:
    """Runs services by name; `restarts` counts each one's crashes."""

    def __init__(self) -> None:
        self.restarts: dict[str, int] = {}
        self._services: list[tuple[str, Service]] = []
        self._tasks: dict[str, asyncio.Task] = {}

    @property
    def running(self) -> list[str]:
        """The names of the services running now (a crashed one waiting to restart too)."""
        return [name for name, task in self._tasks.items() if not task.done()]

    def add(self, name: str, run: Service, *, start: bool = False) -> None:
        """Register a service; `start`: run it now (the daemon is already running)."""
        self._services.append((name, run))
        if start:
            self._start(name, run)

    def start_all(self, first: list[tuple[str, Service]]) -> None:
        """Start `first` (the daemon's own services, in order), then those added before
        (one added with `start` already runs: it is not started twice)."""
        self._services[:0] = first
        for name, run in self._services:
            if name in self._tasks and not self._tasks[name].done():
                continue
            self._start(name, run)

    async def replace(self, name: str, run: Service) -> None:
        """Stop the service called `name` (if running) and start `run` in its place."""
        await self.remove(name)
        self._services.append((name, run))
        self._start(name, run)

    async def remove(self, name: str) -> None:
        """Stop the service called `name` for good (a satellite taken out of the config)."""
        task = self._tasks.pop(name, None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._services = [(n, r) for n, r in self._services if n != name]

    async def stop_all(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        for task in list(self._tasks.values()):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()

    def _start(self, name: str, run: Service) -> None:
        self._tasks[name] = asyncio.create_task(self._supervise(name, run), name=name)

    async def _supervise(self, name: str, run: Service) -> None:
        """Run a service; when it crashes, log it and start it again after a backoff."""
        delay = 1.0
        while True:
            started = time.monotonic()
            try:
                await run()
                return  # finished on its own (stdin closed, a service with nothing to do)
            except asyncio.CancelledError:
                raise
            except Exception:
                if time.monotonic() - started > RESTART_RESET_S:
                    delay = 1.0
                self.restarts[name] = self.restarts.get(name, 0) + 1
                log.exception(
                    "the %s service crashed (restart %d in %.0f s); the others go on",
                    name,
                    self.restarts[name],
                    delay,
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, RESTART_MAX_S)
