"""One daemon per database: an exclusive lock on a file beside it, holding the pid.

`mavend say` and the other commands ask `daemon_pid` whether a daemon is running (and
then talk to it over D-Bus instead of opening the database themselves).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from typing import IO

from mavend.errors import MavendError


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


class DaemonLock:
    """`take(database)` for the daemon's lifetime, `release()` when it stops."""

    def __init__(self) -> None:
        self._file: IO[str] | None = None

    def take(self, database: Path) -> None:
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
        self._file = handle

    def release(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.truncate(0)
            self._file.close()
            self._file = None
