"""What every `mavend` command shares: the exit codes' epilog, loading the settings
(and with them the log level), `--now`, and asking the running daemon instead.

The command modules import this; it imports none of them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
from collections.abc import Iterator
from datetime import datetime

from mavend.cli.logs import setup_logging
from mavend.config import Settings, load_settings
from mavend.errors import UsageError

log = logging.getLogger("mavend")

EPILOG = """exit codes:
  0  ok                      4  a model is missing or fails verification
  1  runtime failure         5  a device or service is missing (microphone, session bus)
  2  usage error
  3  configuration error
"""
LOCAL_HELP = "run in this process even when a daemon is running (default: the daemon answers)"


def command(commands: argparse._SubParsersAction, name: str, help_text: str):
    return commands.add_parser(
        name,
        help=help_text,
        description=help_text,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def settings_from(args: argparse.Namespace) -> Settings:
    settings = load_settings(args.config)
    if not args.verbose:
        setup_logging(settings.logging.level)
    return settings


def parse_now(value: str) -> datetime:
    try:
        return datetime.fromisoformat(value)
    except ValueError as exc:
        raise UsageError(f"--now: not an ISO 8601 time: {value!r}") from exc


def describe_decision(d: dict) -> str:
    slots = {k: v for k, v in d["slots"].items() if v not in (None, "", {}, False)}
    lines = [
        f"intent:     {d['intent']}  (stage {d['stage']}, {d['decided_by']}, "
        f"confidence {d['confidence']:.2f})",
        f"slots:      {json.dumps(slots, ensure_ascii=False)}",
    ]
    if d["clarify"]:
        lines.append(f"clarify:    {d['clarify']['question']}")
    if d["source"]:
        lines.append(f"source:     {d['source']}{' (anchored)' if d['source_anchored'] else ''}")
    if d.get("continued"):
        lines.append("continued:  rebuilt from the previous turn (an ellipsis)")
    return "\n".join(lines)


def daemon_serves(args: argparse.Namespace, settings: Settings) -> bool:
    """Whether a running daemon should answer: it holds this config's database and the
    D-Bus name (the same process), and --local was not given. Its models are warm and
    its state is the one that counts; a daemon on another database is not asked."""
    if getattr(args, "local", False):
        return False
    from mavend.daemon.lock import daemon_pid

    holder = daemon_pid(settings.storage.database_path())
    if holder is None:
        return False  # no daemon on this database: no need to look at the bus
    from mavend.api.client import daemon_pid_on_bus

    return daemon_pid_on_bus() == holder


@contextlib.contextmanager
def unless_unavailable() -> Iterator[None]:
    """Goes on past DaemonUnavailable: the call never reached a daemon, so run it here."""
    from mavend.api.client import DaemonUnavailable

    try:
        yield
    except DaemonUnavailable as exc:
        log.debug("the daemon went away; running here: %s", exc)
