"""stdlib logging, shaped for where mavend runs.

Under systemd (`JOURNAL_STREAM` set) the journal adds its own timestamps, so
lines carry only a syslog priority prefix (`<6>`) that journald turns into a
level: every line, tracebacks included. In a terminal, lines carry a timestamp and the level name.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TextIO

# syslog priorities, as sd-daemon(3) prefixes: journald reads them off stderr.
_SYSLOG_PRIORITY = {
    logging.DEBUG: 7,
    logging.INFO: 6,
    logging.WARNING: 4,
    logging.ERROR: 3,
    logging.CRITICAL: 2,
}


class JournalFormatter(logging.Formatter):
    """Every line carries the record's priority: journald reads stderr line by
    line, so an unprefixed traceback line would be logged at the default level
    (info) and `journalctl -p err` would show an error without its traceback."""

    def format(self, record: logging.LogRecord) -> str:
        prefix = f"<{_SYSLOG_PRIORITY.get(record.levelno, 6)}>"
        text = f"{record.name}: {super().format(record)}"
        return "\n".join(prefix + line for line in text.split("\n"))


def under_systemd() -> bool:
    return bool(os.environ.get("JOURNAL_STREAM"))


# The stream log lines are written to: stderr through a file descriptor of its own.
_stream: TextIO | None = None


def log_stream() -> TextIO:
    """stderr, written through a duplicate of file descriptor 2 where it has one.

    sounddevice points fd 2 at /dev/null while PortAudio initialises (to hush ALSA's
    device probing), and the microphone's retries re-initialise it
    (wakeword.capture.refresh_devices): a line any other thread logged in that window
    was lost, "mavend is running" among them, one start in three with no microphone.
    A duplicate keeps pointing at the real stderr (the journal: same stream, same
    JOURNAL_STREAM identity) whatever fd 2 points at for a moment.
    """
    global _stream
    if _stream is not None:
        return _stream
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by a test, or closed
        return sys.stderr
    if fd != 2:
        return sys.stderr
    _stream = os.fdopen(
        os.dup(fd), "w", buffering=1, encoding=sys.stderr.encoding or "utf-8",
        errors="backslashreplace",
    )
    return _stream


def setup_logging(level: str = "info", *, verbose: bool = False) -> None:
    """Configure the root logger once; `verbose` (-v) forces debug."""
    handler = logging.StreamHandler(log_stream())
    if under_systemd():
        handler.setFormatter(JournalFormatter("%(message)s"))
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%H:%M:%S")
        )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else getattr(logging, level.upper()))
    # Third-party libraries are chatty at debug; keep them at warning unless asked.
    for noisy in ("faster_whisper", "apscheduler", "urllib3", "filelock"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if verbose else logging.WARNING)
