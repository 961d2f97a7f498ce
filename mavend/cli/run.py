"""`mavend run`: the daemon, in this process (mavend/daemon/)."""

from __future__ import annotations

import argparse

from mavend.cli.common import command, settings_from


def register(commands: argparse._SubParsersAction) -> None:
    run = command(commands, "run", "run the assistant: microphone to reply (the daemon)")
    run.add_argument(
        "--no-audio",
        action="store_true",
        help="everything but the audio front end (headless boxes, tests)",
    )
    run.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    from mavend.daemon.malloc import cap_arenas

    cap_arenas()  # before the daemon's modules load and start their threads
    from mavend.daemon.lifecycle import run_daemon

    settings = settings_from(args)
    # Without a microphone the daemon still runs (reminders, the D-Bus API): it
    # says so once, points at `mavend doctor`, and keeps retrying the device.
    return run_daemon(settings, audio=not args.no_audio, config_path=args.config)
