"""The `mavend` command line: one entry point, a subcommand per job, one module each.

    run        the daemon, in this process            say       text in, reply out
    route      the routing decision, no side effects  doctor    checks, each with its fix
    pause      pause and resume the running daemon    models    pull, list, verify models
    satellites the daemon's Wyoming satellites        reminders list, cancel, snooze
    listen     the microphone to decisions            memory    what memory learned
    service    mavend as a systemd unit               home      the devices table from HA
    eval       measure the router or the time resolver
    web        the household's page: its login link

Each command module has `register(commands)` and imports what it runs inside the
command, so `mavend --help` loads no model. What they share is in `common`.

Exit codes: 0 ok; 1 runtime failure; 2 usage; 3 config; 4 model missing or
bad; 5 device or service missing (see mavend/errors.py).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from mavend import __version__
from mavend.cli.common import EPILOG
from mavend.cli.logs import setup_logging
from mavend.errors import MavendError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mavend",
        description="mavend: a local, private voice assistant. Nothing leaves this box.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mavend {__version__}")
    parser.add_argument(
        "--config",
        type=Path,
        metavar="PATH",
        help="config file (default: $XDG_CONFIG_HOME/mavend/config.toml)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    from mavend.cli import (
        doctor,
        evaluate,
        home,
        listen,
        memory,
        models,
        pause,
        reminders,
        route,
        run,
        satellites,
        say,
        service,
        voices,
        web,
    )

    for module in (
        run, say, route, doctor, pause, models, satellites, reminders, listen, memory, service,
        home, evaluate, web, voices,
    ):  # fmt: skip
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging(verbose=args.verbose)
    try:
        return int(args.func(args) or 0)
    except MavendError as exc:
        print(f"mavend: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
