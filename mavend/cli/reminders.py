"""`mavend reminders list|cancel ID|snooze ID [MINUTES]`.

These change the shared database only; a running daemon notices within a
second and reschedules, and a stopped one picks the change up at its start.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime

from mavend.errors import UsageError

EPILOG = """times are shown in the configured time zone ([reminders] timezone).
exit codes: 0 ok, 1 no such reminder or a storage error, 2 usage, 3 configuration."""


def register(commands: argparse._SubParsersAction) -> None:
    reminders = commands.add_parser(
        "reminders",
        help="list, cancel or snooze reminders",  # a series is listed with its rule
        description="list, cancel or snooze reminders (and timers)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = reminders.add_subparsers(dest="reminders_command", metavar="ACTION", required=True)

    listing = actions.add_parser(
        "list", help="show pending reminders", description="show pending reminders", epilog=EPILOG
    )
    listing.add_argument("--all", action="store_true", help="also fired, done, cancelled, missed")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(func=cmd_list)

    cancel = actions.add_parser(
        "cancel", help="cancel a reminder", description="cancel a reminder", epilog=EPILOG
    )
    cancel.add_argument(
        "id", type=int, metavar="ID", help="the reminder's id (see list); a series ends whole"
    )
    cancel.set_defaults(func=cmd_cancel)

    snooze = actions.add_parser(
        "snooze",
        help="fire a reminder again MINUTES from now",
        description="fire a reminder again MINUTES from now (pending, fired or done)",
        epilog=EPILOG,
    )
    snooze.add_argument("id", type=int, metavar="ID", help="the reminder's id (see list)")
    snooze.add_argument(
        "minutes",
        type=int,
        nargs="?",
        metavar="MINUTES",
        help="default: [reminders] snooze_minutes",
    )
    snooze.set_defaults(func=cmd_snooze)


def _book(args: argparse.Namespace):
    from mavend.cli.common import settings_from
    from mavend.clock import user_timezone
    from mavend.scheduler import ReminderBook
    from mavend.state.store import Store

    settings = settings_from(args)
    tz = user_timezone(settings.reminders.timezone)
    return settings, tz, ReminderBook(Store.open(settings), tz)


def cmd_list(args: argparse.Namespace) -> int:
    from mavend.scheduler import Status, spoken_time

    _, tz, book = _book(args)
    reminders = book.list(statuses=None if args.all else (Status.PENDING,))
    now = datetime.now(tz)
    if args.json:
        for reminder in reminders:
            print(json.dumps(reminder.to_json(), ensure_ascii=False))
        return 0
    if not reminders:
        print("no reminders" if args.all else "no pending reminders")
        return 0
    for r in reminders:
        status = "" if r.status == "pending" else f"  [{r.status}]"
        when = spoken_time(r.fire_at, now)
        if r.paused_left is not None:  # its fire time stands still until it resumes
            when, status = "paused", f"{status}  [paused, {r.paused_left:.0f} s left]"
        repeats = f"  (repeats {r.series.describe()})" if r.series is not None else ""
        print(f"{r.id:>4}  {r.due}  ({when})  {r.text}{repeats}{status}")
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    _, _, book = _book(args)
    reminder = book.cancel(args.id)
    print(f"cancelled reminder {reminder.id}: {reminder.text}")
    return 0


def cmd_snooze(args: argparse.Namespace) -> int:
    settings, tz, book = _book(args)
    minutes = args.minutes if args.minutes is not None else settings.reminders.snooze_minutes
    if minutes <= 0:
        raise UsageError("MINUTES must be a positive whole number")
    reminder = book.snooze(args.id, minutes, now=datetime.now(tz))
    print(f"reminder {reminder.id} ({reminder.text}) now fires at {reminder.due}")
    return 0
