"""`mavend satellites`: the running daemon's Wyoming satellites and their state."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

_HELP = "the Wyoming satellites the running daemon connects to, and their state"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "satellites",
        help=_HELP,
        description=f"{_HELP}: connecting, connected, streaming or failed (with the last "
        "error). Asks the running daemon over D-Bus (exit 5 without one).",
    )
    parser.add_argument("--json", action="store_true", help="one JSON array")
    parser.set_defaults(func=cmd_satellites)


def cmd_satellites(args: argparse.Namespace) -> int:
    from mavend.api import client as dbus_client
    from mavend.cli.common import settings_from

    settings = settings_from(args)  # a bad config is still reported, as everywhere
    satellites = dbus_client.satellites()  # DaemonUnavailable: exit 5
    if args.json:
        print(json.dumps(satellites, ensure_ascii=False))
        return 0
    if not satellites:
        configured = len(settings.satellites)
        print("no satellites" + (" (the daemon runs an older config: reload it)"
                                 if configured else ": add [[satellites]] to the config"))
        return 0
    for line in table(satellites):
        print(line)
    return 0


def table(satellites: list[dict[str, Any]]) -> list[str]:
    rows = [("NAME", "URI", "ROOM", "STATE", "TURNS", "LAST ERROR")]
    for s in satellites:
        state = s.get("state", "?")
        if state in ("connected", "streaming") and s.get("connected_since"):
            state += f" {_age(time.time() - float(s['connected_since']))}"
        rows.append((s.get("name", ""), s.get("uri", ""), s.get("room", "") or "-", state,
                     str(s.get("turns", 0)), s.get("last_error", "") or "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1]
            for row in rows]


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.0f}h"
