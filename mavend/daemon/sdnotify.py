"""A small, dependency-free sd_notify(3) client: readiness, status and the watchdog.

systemd starts a `Type=notify` service with `$NOTIFY_SOCKET` set to an AF_UNIX datagram
socket (a path, or an abstract name written with a leading `@`); the service sends
newline-separated `KEY=VALUE` lines there: `READY=1` once it serves, `WATCHDOG=1` at least
every `$WATCHDOG_USEC` microseconds when `WatchdogSec=` is set, `STOPPING=1` when it shuts
down, `RELOADING=1` while it reloads, `STATUS=...` for `systemctl status`.

Outside systemd (no `$NOTIFY_SOCKET`) every method is a no-op that returns False. A
failure to send is logged once and never raised: losing a notification must not stop the
daemon (a missed `WATCHDOG=1` is what the watchdog is for).

    notifier = SystemdNotifier()
    notifier.ready(status="listening")
    asyncio.create_task(notifier.run_watchdog())   # pings from the event loop
    ...
    notifier.stopping()
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import time
from collections.abc import Mapping, MutableMapping

log = logging.getLogger("mavend.sdnotify")  # the name its journal lines have always had

NOTIFY_SOCKET = "NOTIFY_SOCKET"
WATCHDOG_USEC = "WATCHDOG_USEC"
WATCHDOG_PID = "WATCHDOG_PID"


def socket_address(value: str) -> str | bytes:
    """`$NOTIFY_SOCKET` as an address for `socket.sendto`: `@name` is the abstract `\\0name`.

    Raises ValueError for anything but an absolute path or an abstract name (systemd 254+
    also knows `vsock:`, which this client does not speak).
    """
    if value.startswith("@") and len(value) > 1:
        return b"\0" + os.fsencode(value[1:])
    if value.startswith("/"):
        return value
    raise ValueError(f"unsupported {NOTIFY_SOCKET} {value!r} (want a path or @abstract-name)")


def watchdog_usec(environ: Mapping[str, str] | None = None, pid: int | None = None) -> int | None:
    """The watchdog period in microseconds asked of this process, or None (sd_watchdog_enabled).

    None when `$WATCHDOG_USEC` is unset, not a positive integer, or when `$WATCHDOG_PID` names
    another process (the variables were inherited, not meant for us).
    """
    env = os.environ if environ is None else environ
    raw = env.get(WATCHDOG_USEC, "").strip()
    if not raw:
        return None
    try:
        usec = int(raw)
    except ValueError:
        return None
    if usec <= 0:
        return None
    owner = env.get(WATCHDOG_PID, "").strip()
    if owner:
        try:
            if int(owner) != (os.getpid() if pid is None else pid):
                return None
        except ValueError:
            return None
    return usec


class SystemdNotifier:
    """Sends sd_notify messages to `$NOTIFY_SOCKET`; every method is safe to call anywhere.

    `environ` defaults to `os.environ` (read once, here). With `unset_environment=True` the
    three variables are removed from `os.environ` after reading, so that child processes
    (allowlisted acts) do not inherit the service's notification socket or watchdog.
    Methods return True when the message was sent, False otherwise (no socket, or a failure,
    which is logged once as a warning).
    """

    def __init__(
        self,
        environ: Mapping[str, str] | None = None,
        *,
        unset_environment: bool = False,
    ) -> None:
        env = os.environ if environ is None else environ
        self._socket_value = env.get(NOTIFY_SOCKET) or None
        self._watchdog_usec = watchdog_usec(env)
        self._address: str | bytes | None = None
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._warned = False
        if self._socket_value is not None:
            try:
                self._address = socket_address(self._socket_value)
            except ValueError as exc:
                self._warn(str(exc))
        if unset_environment:
            target: MutableMapping[str, str] = os.environ
            for name in (NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID):
                target.pop(name, None)

    # state ------------------------------------------------------------------
    @property
    def enabled(self) -> bool:
        """True when there is a notification socket to send to."""
        return self._address is not None

    def watchdog_interval_s(self) -> float | None:
        """How often to send WATCHDOG=1: half the period systemd set, or None (no watchdog)."""
        if self._watchdog_usec is None or not self.enabled:
            return None
        return self._watchdog_usec / 2 / 1_000_000

    # messages ---------------------------------------------------------------
    def ready(self, status: str | None = None) -> bool:
        """READY=1: start-up is over (models loaded); `systemctl start` returns now."""
        return self.notify("READY=1", *_status(status))

    def reloading(self, status: str | None = None) -> bool:
        """RELOADING=1 (with MONOTONIC_USEC, as Type=notify-reload wants); send ready() after."""
        monotonic_usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.notify("RELOADING=1", f"MONOTONIC_USEC={monotonic_usec}", *_status(status))

    def stopping(self, status: str | None = None) -> bool:
        """STOPPING=1: shutdown has begun."""
        return self.notify("STOPPING=1", *_status(status))

    def status(self, text: str) -> bool:
        """STATUS=text: one line shown by `systemctl status`."""
        return self.notify(*_status(text))

    def watchdog_ping(self) -> bool:
        """WATCHDOG=1: still alive. Send it every `watchdog_interval_s()` seconds."""
        return self.notify("WATCHDOG=1")

    def extend_timeout(self, seconds: float) -> bool:
        """EXTEND_TIMEOUT_USEC: ask for `seconds` more to start or stop (a slow model load)."""
        return self.notify(f"EXTEND_TIMEOUT_USEC={max(0, round(seconds * 1_000_000))}")

    def notify(self, *lines: str) -> bool:
        """Send raw `KEY=VALUE` lines as one datagram. False when not sent."""
        if self._address is None or not lines:
            return False
        payload = "\n".join(lines).encode("utf-8", "replace")
        try:
            with self._lock:
                if self._sock is None:
                    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                    sock.setblocking(False)  # never stall the event loop on a full queue
                    self._sock = sock
                self._sock.sendto(payload, self._address)
        except OSError as exc:
            self._warn(f"cannot notify systemd at {self._socket_value}: {exc}")
            return False
        return True

    async def run_watchdog(self, interval_s: float | None = None) -> None:
        """Ping WATCHDOG=1 from the running event loop until cancelled.

        Returns at once when there is no watchdog. Because the pings come from the loop
        itself, a loop that hangs stops them, and systemd restarts the service.
        """
        interval = interval_s if interval_s is not None else self.watchdog_interval_s()
        if interval is None or interval <= 0:
            return
        while True:
            self.watchdog_ping()
            await asyncio.sleep(interval)

    def close(self) -> None:
        with self._lock:
            if self._sock is not None:
                self._sock.close()
                self._sock = None

    # helpers ----------------------------------------------------------------
    def _warn(self, message: str) -> None:
        if not self._warned:
            self._warned = True
            log.warning("%s (further systemd notification failures are not logged)", message)


def _status(text: str | None) -> tuple[str, ...]:
    if text is None:
        return ()
    return ("STATUS=" + " ".join(text.splitlines()),)
