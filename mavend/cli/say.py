"""`mavend say TEXT`: text in, through the router and the handlers, reply out (the
running daemon answers when there is one)."""

from __future__ import annotations

import argparse
import json
import sys

from mavend.cli.common import LOCAL_HELP, command, daemon_serves, settings_from, unless_unavailable
from mavend.config import Settings


def register(commands: argparse._SubParsersAction) -> None:
    say = command(commands, "say", "text in, through the router and the handlers, reply out")
    say.add_argument("text", nargs="+", help="what you would have said")
    say.add_argument("--json", action="store_true", help="print the decision and the reply as JSON")
    say.add_argument("--local", action="store_true", help=LOCAL_HELP)
    say.add_argument(
        "--speak", action="store_true", help="also speak the reply ([tts] voice and device)"
    )
    say.set_defaults(func=cmd_say)


def cmd_say(args: argparse.Namespace) -> int:
    from mavend.assistant import open_assistant
    from mavend.daemon.lock import daemon_pid

    settings = settings_from(args)
    text = " ".join(args.text)
    if daemon_serves(args, settings):
        from mavend.api import client as dbus_client

        with unless_unavailable():
            served = dbus_client.say_json(text)
            return _spoken(args, settings, served, _print_turn(args, served, daemon_running=True))
    assistant = open_assistant(settings)
    try:
        turn = assistant.handle_text(text)
    finally:
        assistant.store.close()
    running = daemon_pid(assistant.store.path) is not None
    return _spoken(args, settings, turn.to_json(), _print_turn(args, turn.to_json(),
                                                               daemon_running=running))


def _spoken(args: argparse.Namespace, settings: Settings, turn: dict, code: int) -> int:
    """`say --speak`: say the reply here, after printing it. A missing voice or output
    device is one log line (mavend.tts); the exit code stays the reply's."""
    reply = turn["reply"]
    if getattr(args, "speak", False) and reply["text"]:
        from mavend.tts import Speaker

        speaker = Speaker.from_settings(settings)
        speaker.load()
        speaker.speak(reply["text"], reply.get("spoken", "")).result()
        speaker.close()
    return code


def _print_turn(args: argparse.Namespace, turn: dict, *, daemon_running: bool) -> int:
    from mavend.handlers import Outcome

    reply = turn["reply"]
    print(json.dumps(turn, ensure_ascii=False) if args.json else reply["text"])
    if "error" in reply["data"]:
        print(f"mavend: {reply['data']['error']}", file=sys.stderr)
    if "reminder_id" in reply["data"] and not daemon_running:
        # Saved either way; say when it will actually fire.
        print(
            "mavend: the daemon is not running: the reminder fires once `mavend run` starts",
            file=sys.stderr,
        )
    return 1 if Outcome(reply["outcome"]).is_failure else 0
