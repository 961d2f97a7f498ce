"""stdlib logging, shaped for where mavend runs.

Under systemd (`JOURNAL_STREAM` set) the journal adds its own timestamps, so
lines carry only a syslog priority prefix (`<6>`) that journald turns into a
level: every line, tracebacks included. In a terminal, lines carry a timestamp and the level name.
"""

from __future__ import annotations

import logging
import os
import sys

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


def setup_logging(level: str = "info", *, verbose: bool = False) -> None:
    """Configure the root logger once; `verbose` (-v) forces debug."""
    handler = logging.StreamHandler(sys.stderr)
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
