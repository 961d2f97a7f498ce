"""The daemon, headless for now (`mavend run --no-audio`).

Services, one asyncio task each: reminder delivery (notifications, with
retries) and text turns from stdin (one per line; the reply is printed and
shown as a notification). The reminder scheduler runs APScheduler's own
threads. SIGTERM or SIGINT stops everything cleanly (exit 0).

A lock file next to the database keeps a second daemon from running on the
same state; `mavend say` reads it to tell the user whether a reminder will
fire now or at the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import fcntl
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from mavend.assistant import Assistant, Turn
from mavend.clock import system_clock, user_timezone
from mavend.config import Settings
from mavend.errors import MavendError
from mavend.notify import Notification, Notifier, NotifyUnavailable
from mavend.scheduler import ReminderDelivery, ReminderScheduler
from mavend.store import Store

log = logging.getLogger(__name__)


class DaemonState(enum.Enum):
    NEW = "new"
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"


@dataclass(frozen=True)
class DaemonOptions:
    stdin_turns: bool = True  # read text turns from stdin, one per line
    notify_replies: bool = True  # show each turn's reply as a notification
    poll_s: float = 1.0  # how often the scheduler looks for reminders set by others


class AlreadyRunning(MavendError):
    pass


def lock_path(database: Path) -> Path:
    return database.with_name(database.name + ".daemon.lock")


def daemon_pid(database: Path) -> int | None:
    """The pid of the daemon that holds this database's lock, or None."""
    path = lock_path(database)
    try:
        with open(path) as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return int(handle.read().strip() or 0) or None
            return None
    except (OSError, ValueError):
        return None


class Daemon:
    def __init__(
        self,
        settings: Settings,
        *,
        router: Any = None,
        router_factory: Callable[[Callable[[], Any]], Any] | None = None,
        options: DaemonOptions | None = None,
        stdin: IO[str] | None = None,
    ):
        self.settings = settings
        self.options = options or DaemonOptions()
        self.state = DaemonState.NEW
        self.tz = user_timezone(settings.reminders.timezone)
        self.clock = system_clock(self.tz)
        self._router = router
        self._router_factory = router_factory
        self._stdin = stdin
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self._lock_file: IO[str] | None = None
        self.store: Store | None = None
        self.scheduler: ReminderScheduler | None = None
        self.notifier: Notifier | None = None
        self.delivery: ReminderDelivery | None = None
        self.assistant: Assistant | None = None

    # lifecycle -----------------------------------------------------------
    async def run(self) -> int:
        """Start, wait for SIGTERM/SIGINT, stop. The CLI's `run --no-audio`."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop)
        try:
            await self.start()
            log.info("mavend is running (no audio); stop with SIGTERM")
            await self._stop.wait()
        finally:
            await self.stop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)
        return 0

    def request_stop(self) -> None:
        self._stop.set()

    async def start(self) -> None:
        self.state = DaemonState.STARTING
        settings = self.settings
        self.store = Store.open(settings)
        self._take_lock(self.store.path)
        loop = asyncio.get_running_loop()
        self.notifier = Notifier(settings.notifications)
        self.scheduler = ReminderScheduler(
            self.store,
            settings,
            self.tz,
            on_fired=lambda firing: loop.call_soon_threadsafe(self._wake_delivery),
            clock=self.clock,
            poll_s=self.options.poll_s,
        )
        self.delivery = ReminderDelivery(
            self.scheduler.book,
            self.notifier,
            settings,
            on_change=self.scheduler.request_sync,
            clock=self.clock,
        )
        router = self._router or await asyncio.to_thread(self._build_router)
        self.assistant = Assistant(
            settings,
            self.store,
            router,
            clock=self.clock,
            tz=self.tz,
            on_reminders_changed=self.scheduler.request_sync,
        )
        await asyncio.to_thread(self.scheduler.start)
        self._tasks.append(asyncio.create_task(self.delivery.run(), name="delivery"))
        if self.options.stdin_turns:
            self._tasks.append(asyncio.create_task(self._stdin_turns(), name="stdin-turns"))
        self.state = DaemonState.RUNNING

    async def stop(self) -> None:
        if self.state in (DaemonState.STOPPING, DaemonState.STOPPED):
            return
        self.state = DaemonState.STOPPING
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        if self.scheduler is not None:
            await asyncio.to_thread(self.scheduler.stop)
        if self.notifier is not None:
            await self.notifier.close()
        if self.store is not None:
            self.store.close()
        self._release_lock()
        self.state = DaemonState.STOPPED
        log.info("mavend stopped")

    # turns ---------------------------------------------------------------
    async def submit_text(self, text: str) -> Turn:
        """One text turn, as if it had been spoken; its reply is also shown."""
        if self.assistant is None or self.state != DaemonState.RUNNING:
            raise MavendError("the daemon is not running")
        turn = await asyncio.to_thread(self.assistant.handle_text, text)
        if self.options.notify_replies and turn.reply.text and self.notifier is not None:
            await self._show_reply(turn.reply.text)
        return turn

    async def _show_reply(self, text: str) -> None:
        assert self.notifier is not None
        if not self.settings.notifications.enabled:
            return
        try:
            await self.notifier.notify(Notification(summary="mavend", body=text))
        except NotifyUnavailable as exc:
            # A reply is of the moment: it is printed, and not queued for later.
            log.warning("the reply could not be shown: %s", exc)

    async def _stdin_turns(self) -> None:
        lines: asyncio.Queue[str | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        source = self._stdin or sys.stdin

        def read() -> None:
            # A plain thread, not the executor: a blocked readline must not
            # hold up the loop's shutdown.
            for line in source:
                loop.call_soon_threadsafe(lines.put_nowait, line)
            loop.call_soon_threadsafe(lines.put_nowait, None)

        threading.Thread(target=read, name="stdin-turns", daemon=True).start()
        while (line := await lines.get()) is not None:
            if not line.strip():
                continue
            turn = await self.submit_text(line.strip())
            print(turn.reply.text, flush=True)
        log.debug("stdin closed; text turns over (the daemon keeps running)")

    # helpers -------------------------------------------------------------
    def _build_router(self) -> Any:
        if self._router_factory is not None:
            return self._router_factory(self.clock)
        from mavend.router import build_router

        # Models load on first use: reminders and notifications do not wait for them.
        return build_router(self.settings, clock=self.clock)

    def _wake_delivery(self) -> None:
        if self.delivery is not None:
            self.delivery.wake.set()

    def _take_lock(self, database: Path) -> None:
        path = lock_path(database)
        handle = open(path, "a+")  # noqa: SIM115 - held open for the daemon's lifetime
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            pid = handle.read().strip()
            handle.close()
            raise AlreadyRunning(
                f"another mavend daemon (pid {pid or '?'}) is already running on {database}"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._lock_file = handle

    def _release_lock(self) -> None:
        if self._lock_file is not None:
            with contextlib.suppress(OSError):
                self._lock_file.truncate(0)
            self._lock_file.close()
            self._lock_file = None


def run_headless(settings: Settings) -> int:
    """`mavend run --no-audio`: the daemon without the audio front end."""
    return asyncio.run(Daemon(settings).run())
