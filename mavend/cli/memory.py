"""`mavend memory list|forget ID|--all`: what the assistant learned, and deleting it."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from typing import Any

from mavend.errors import UsageError

EPILOG = """habits: how you phrase things and what they meant; repairs: a failure signature
(utterance pattern::failing route::error class) and the route your correction showed.
exit codes: 0 ok, 1 no such record or a storage error, 2 usage, 3 configuration."""


def register(commands: argparse._SubParsersAction) -> None:
    memory = commands.add_parser(
        "memory",
        help="show or forget learned habits and repairs",
        description="show or forget what mavend learned from your turns (habits, repairs)",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = memory.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list", help="show what was learned", description="show what was learned", epilog=EPILOG
    )
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    listing.set_defaults(func=cmd_list)
    forget = actions.add_parser(
        "forget",
        help="delete one record, or everything learned",
        description="delete one record (ID from `mavend memory list`), or everything with --all "
        "(also the classifier examples your corrections added)",
        epilog=EPILOG,
    )
    forget.add_argument("id", type=int, nargs="?", metavar="ID", help="the record's id")
    forget.add_argument("--all", action="store_true", help="forget everything learned")
    forget.set_defaults(func=cmd_forget)


def _open(args: argparse.Namespace):
    from mavend.cli.common import settings_from
    from mavend.memory.records import MemoryTable
    from mavend.state.store import Store

    settings = settings_from(args)
    store = Store.open(settings)
    return settings, store, MemoryTable(store)


def describe_row(row: sqlite3.Row) -> dict[str, Any]:
    """One record for the user, with whether routing may read it."""
    from mavend.memory.records import own_habit, own_repair

    record: dict[str, Any] = {
        "id": row["id"],
        "kind": row["kind"],
        "scope": row["scope"],
        "utterance": row["utterance"],
        "intent": row["intent"],
        "fn": row["fn"] or None,
        "args": json.loads(row["args"] or "{}") if _is_json(row["args"]) else {},
        "source": row["source"],
        "at": row["at"],
    }
    habit = own_habit(row)
    repair = own_repair(row)
    record["trusted"] = habit is not None or repair is not None
    if repair is not None:
        record["signature"] = repair.signature.key()
        record["successes"] = repair.successes
        record["failures"] = repair.failures
    return record


def _is_json(text: str) -> bool:
    try:
        return isinstance(json.loads(text or "{}"), dict)
    except ValueError:
        return False


def line(record: dict[str, Any]) -> str:
    target = record["intent"] + (f" {record['fn']}" if record["fn"] else "")
    if record["args"]:
        target += " " + " ".join(f"{k}={v}" for k, v in sorted(record["args"].items()))
    text = f'{record["id"]:>5}  {record["kind"]:<6}  {record["scope"]:<8}  "{record["utterance"]}"'
    text += f" -> {target}"
    if "signature" in record:
        text += f"  [{record['signature']}; worked {record['successes']}, failed "
        text += f"{record['failures']}]"
    else:
        text += f"  ({record['source']}, {record['at']})"
    if not record["trusted"]:
        text += "  IGNORED: not written by mavend's memory"
    return text


def cmd_list(args: argparse.Namespace) -> int:
    settings, store, table = _open(args)
    try:
        records = [describe_row(r) for r in table.rows()]
    finally:
        store.close()
    if args.json:
        for record in records:
            print(json.dumps(record, ensure_ascii=False))
        return 0
    if not settings.memory.enabled:
        print("memory is off ([memory] enabled = false): nothing is learned or recalled")
    if not records:
        print("nothing learned yet")
        return 0
    for record in records:
        print(line(record))
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    from mavend.memory.engine import LAST_KEY
    from mavend.router.classifier import USER_EXAMPLES_FILENAME
    from mavend.state.records import SessionState

    if args.all == (args.id is not None):
        raise UsageError("give either one ID or --all")
    settings, store, table = _open(args)
    try:
        if args.all:
            count = table.delete_all()
            SessionState(store).pop(LAST_KEY)
            examples = settings.storage.data_path() / USER_EXAMPLES_FILENAME
            removed = examples.exists()
            examples.unlink(missing_ok=True)
            print(f"forgot {count} record{'s' if count != 1 else ''}")
            if removed:
                print(f"removed the classifier examples learned from corrections ({examples})")
            return 0
        if not table.delete(args.id):
            print(f"mavend: no memory record {args.id} (see `mavend memory list`)", file=sys.stderr)
            return 1
        print(f"forgot record {args.id}")
        return 0
    finally:
        store.close()
