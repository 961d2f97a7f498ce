"""`mavend pause` and `mavend resume`: the running daemon stops and starts listening."""

from __future__ import annotations

import argparse

from mavend.cli.common import command, settings_from


def register(commands: argparse._SubParsersAction) -> None:
    pause = command(commands, "pause", "the running daemon stops listening (the microphone)")
    pause.set_defaults(func=cmd_pause)
    resume = command(commands, "resume", "the running daemon listens again")
    resume.set_defaults(func=cmd_resume)


def cmd_pause(args: argparse.Namespace) -> int:
    from mavend.api import client as dbus_client

    settings_from(args)  # a bad config is still reported, as everywhere
    dbus_client.pause()  # DaemonUnavailable: exit 5
    print("paused: the daemon is not listening (`mavend resume` to listen again)")
    return 0


def cmd_resume(args: argparse.Namespace) -> int:
    from mavend.api import client as dbus_client

    settings_from(args)
    dbus_client.resume()
    print("resumed: the daemon is listening")
    return 0
