"""`mavend home import [--dry-run | --output PATH]`: the devices table from Home Assistant."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from mavend.errors import MavendError, UsageError

IMPORT_HELP = "read Home Assistant's lights and switches into a [[devices]] table to review"
IMPORT_EPILOG = """Reads GET /api/states and the areas (POST /api/template, which needs an
administrator's long-lived token) from [homeassistant] url and token_file in the config.

Your config is never edited. --dry-run prints the table; --output PATH writes it to a new
file (--force to replace one); you review it and paste it into your config. With neither,
the summary says what would be imported and how to get the table.

Imported: light (dimmable from supported_color_modes), switch (a plug when its
device_class is outlet) and input_boolean. Every other domain is counted in one line:
mavend cannot control it yet. Names are the friendly names, lower-cased and made
sayable; a shared name gets its room ("bedroom lamp"). Aliases: the name without its
room ("ceiling light"), and hyphenated words joined.

Exposure to Assist: the REST API does not carry it (it is the WebSocket command
homeassistant/expose_entity/list, admin only), so without --exposed every light and
switch is imported. To keep only the exposed ones, save that command's answer to a file,
e.g. in the browser's console on a Home Assistant page:
  copy(JSON.stringify(await document.querySelector("home-assistant").hass.callWS(
    {type: "homeassistant/expose_entity/list"})))
and pass it as --exposed FILE. Entity aliases from Home Assistant's registry are not
visible to a REST client either.

exit codes: 0 ok, 1 Home Assistant refused or failed (nothing written), 2 usage,
3 configuration (no [homeassistant] url or token file, unreadable --exposed)."""


def register(commands: argparse._SubParsersAction) -> None:
    home = commands.add_parser(
        "home",
        help="the home's devices: import them from Home Assistant",
        description="the home's devices: import them from Home Assistant",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = home.add_subparsers(dest="home_command", metavar="ACTION", required=True)
    importing = actions.add_parser(
        "import",
        help=IMPORT_HELP,
        description=IMPORT_HELP,
        epilog=IMPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = importing.add_mutually_exclusive_group()
    where.add_argument(
        "--dry-run", action="store_true", help="print the table on stdout; write nothing"
    )
    where.add_argument(
        "--output", type=Path, metavar="PATH", help="write the table to PATH (a new file)"
    )
    importing.add_argument("--force", action="store_true", help="with --output: replace PATH")
    importing.add_argument(
        "--exposed",
        type=Path,
        metavar="FILE",
        help="keep only entities exposed to Assist (the answer to homeassistant/"
        "expose_entity/list, saved as JSON)",
    )
    importing.add_argument(
        "--no-areas",
        action="store_true",
        help="skip the area template (a non-admin token): devices get no room",
    )
    importing.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="seconds to wait for each answer (default: [homeassistant] timeout_s)",
    )
    importing.set_defaults(func=cmd_import)


def cmd_import(args: argparse.Namespace) -> int:
    from mavend.cli.common import settings_from
    from mavend.home.importer import import_home, read_exposed, to_toml

    if args.force and args.output is None:
        raise UsageError("--force goes with --output PATH")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    if args.output is not None and args.output.exists() and not args.force:
        raise UsageError(f"{args.output} exists: choose a new file, or add --force to replace it")
    settings = settings_from(args)
    ha_settings = settings.homeassistant
    if args.timeout is not None:
        ha_settings = dataclasses.replace(ha_settings, timeout_s=args.timeout)
    exposed = read_exposed(args.exposed) if args.exposed is not None else None
    imported = import_home(ha_settings, exposed=exposed, with_areas=not args.no_areas)
    table = to_toml(imported, ha_settings.url)
    for line in imported.summary():
        print(line, file=sys.stderr)
    if args.dry_run:
        sys.stdout.write(table)
        return 0
    if args.output is None:
        print(
            "Nothing was written: --dry-run prints the table, --output PATH writes it to a "
            "file; review it, then add it to your config (mavend never edits it).",
            file=sys.stderr,
        )
        return 0
    temporary = args.output.with_name(f".{args.output.name}.tmp")
    try:
        temporary.write_text(table, encoding="utf-8")
        temporary.replace(args.output)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise MavendError(f"cannot write {args.output}: {exc.strerror or exc}") from exc
    print(
        f"Wrote {len(imported.devices)} devices to {args.output}: review them, then add them "
        "to your config (`mavend doctor` checks it); your config was not changed.",
        file=sys.stderr,
    )
    return 0
