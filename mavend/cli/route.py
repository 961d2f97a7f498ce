"""`mavend route TEXT`: the routing decision, and what memory would change; no side effects."""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from mavend.cli.common import (
    LOCAL_HELP,
    command,
    daemon_serves,
    describe_decision,
    parse_now,
    settings_from,
    unless_unavailable,
)
from mavend.config import Settings

if TYPE_CHECKING:
    from mavend.memory.preview import RouteView

log = logging.getLogger("mavend")


def register(commands: argparse._SubParsersAction) -> None:
    route = command(commands, "route", "show the routing decision for TEXT; no side effects")
    route.add_argument("text", nargs="+", help="the utterance to route")
    route.add_argument("--json", action="store_true", help="one JSON object on one line")
    route.add_argument(
        "--now",
        metavar="ISO",
        help="route as if it were this time (ISO 8601; local zone if none given)",
    )
    route.add_argument(
        "--no-llm", action="store_true", help="skip the LLM stage (grammar and classifier only)"
    )
    route.add_argument(
        "--local", action="store_true", help=LOCAL_HELP + " (--now, --no-llm imply it)"
    )
    route.set_defaults(func=cmd_route)


def cmd_route(args: argparse.Namespace) -> int:
    from mavend.clock import fixed_clock, system_clock, user_timezone
    from mavend.router import build_router

    settings = settings_from(args)
    if not (args.now or args.no_llm) and daemon_serves(args, settings):
        from mavend.api import client as dbus_client

        with unless_unavailable():
            answer = dbus_client.route(" ".join(args.text))
            print(json.dumps(answer, ensure_ascii=False) if args.json else describe_route(answer))
            return 0
    tz = user_timezone(settings.reminders.timezone)
    clock = fixed_clock(parse_now(args.now), tz) if args.now else system_clock(tz)
    router = build_router(settings, clock=clock, use_llm=False if args.no_llm else None)
    view = _route_view(settings, router, clock, " ".join(args.text))
    print(view.to_json_line() if args.json else describe_route(view.to_json()))
    return 0


def _route_view(
    settings: Settings, router: Any, clock: Callable[[], datetime], text: str
) -> RouteView:
    """The router's decision and what memory would change, from the database and scope
    `mavend say` uses. Read-only; with no database yet (or memory off), the router alone."""
    from mavend.errors import StorageError
    from mavend.memory import Memory
    from mavend.memory.preview import RouteView
    from mavend.state.store import Store

    # Opening a missing database would create it: `route` has no side effects.
    if not settings.memory.enabled or not settings.storage.database_path().exists():
        return RouteView(router.route(text))
    try:
        store = Store.open(settings)
    except StorageError as exc:
        log.warning("routing without memory: %s", exc)
        return RouteView(router.route(text))
    try:
        memory = Memory(settings.memory, store, acts=settings.acts, clock=clock)
        return memory.route_view(router, text)
    finally:
        store.close()


def describe_route(answer: dict) -> str:
    """`mavend route` for people: the decision, then what memory changes about it."""
    from mavend.memory.preview import describe_memory

    return describe_decision(answer) + "\n" + describe_memory(answer.get("memory"))
