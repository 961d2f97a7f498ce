"""The `mavend` command line: one entry point, a subcommand per job.

Exit codes: 0 ok; 1 runtime failure; 2 usage; 3 config; 4 model missing or
bad; 5 device or service missing (see mavend/errors.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mavend import __version__
from mavend.cli.logs import setup_logging
from mavend.config import Settings, load_settings
from mavend.errors import MavendError, UsageError

if TYPE_CHECKING:
    from mavend.memory.preview import RouteView

log = logging.getLogger("mavend")

EPILOG = """exit codes:
  0  ok                      4  a model is missing or fails verification
  1  runtime failure         5  a device or service is missing (microphone, session bus)
  2  usage error
  3  configuration error
"""
LOCAL_HELP = "run in this process even when a daemon is running (default: the daemon answers)"


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

    run = _command(commands, "run", "run the assistant: microphone to reply (the daemon)")
    run.add_argument(
        "--no-audio",
        action="store_true",
        help="everything but the audio front end (headless boxes, tests)",
    )
    run.set_defaults(func=cmd_run)

    say = _command(commands, "say", "text in, through the router and the handlers, reply out")
    say.add_argument("text", nargs="+", help="what you would have said")
    say.add_argument("--json", action="store_true", help="print the decision and the reply as JSON")
    say.add_argument("--local", action="store_true", help=LOCAL_HELP)
    say.add_argument(
        "--speak", action="store_true", help="also speak the reply ([tts] voice and device)"
    )
    say.set_defaults(func=cmd_say)

    route = _command(commands, "route", "show the routing decision for TEXT; no side effects")
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

    doctor = _command(commands, "doctor", "check models, audio, D-Bus, storage and the LLM")
    doctor.add_argument("--json", action="store_true", help="one JSON object per check")
    doctor.set_defaults(func=cmd_doctor)

    pause = _command(commands, "pause", "the running daemon stops listening (the microphone)")
    pause.set_defaults(func=cmd_pause)
    resume = _command(commands, "resume", "the running daemon listens again")
    resume.set_defaults(func=cmd_resume)

    from mavend.cli.models import register as register_models

    register_models(commands)
    from mavend.cli.satellites import register as register_satellites

    register_satellites(commands)

    from mavend.cli.reminders import register as register_reminders

    register_reminders(commands)

    from mavend.cli.listen import register as register_listen

    register_listen(commands)

    from mavend.cli.memory import register as register_memory

    register_memory(commands)

    from mavend.cli.service import register as register_service

    register_service(commands)

    from mavend.cli.home import register as register_home

    register_home(commands)

    evaluate = _command(commands, "eval", "measure the router or the time resolver on a dataset")
    eval_commands = evaluate.add_subparsers(dest="eval_command", metavar="WHAT", required=True)
    from mavend.router.eval_time import register as register_eval_time
    from mavend.router.evaluate import register as register_eval_router

    register_eval_router(eval_commands)
    register_eval_time(eval_commands)
    return parser


def _command(commands: argparse._SubParsersAction, name: str, help_text: str):
    return commands.add_parser(
        name,
        help=help_text,
        description=help_text,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


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


def settings_from(args: argparse.Namespace) -> Settings:
    settings = load_settings(args.config)
    if not args.verbose:
        setup_logging(settings.logging.level)
    return settings


# commands ------------------------------------------------------------------
def cmd_route(args: argparse.Namespace) -> int:
    from mavend.clock import fixed_clock, system_clock, user_timezone
    from mavend.router import build_router

    settings = settings_from(args)
    if not (args.now or args.no_llm) and _daemon_serves(args, settings):
        from mavend.api import client as dbus_client

        with _unless_unavailable():
            answer = dbus_client.route(" ".join(args.text))
            print(json.dumps(answer, ensure_ascii=False) if args.json else describe_route(answer))
            return 0
    tz = user_timezone(settings.reminders.timezone)
    clock = fixed_clock(_parse_now(args.now), tz) if args.now else system_clock(tz)
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


def _parse_now(value: str) -> datetime:
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


def describe_route(answer: dict) -> str:
    """`mavend route` for people: the decision, then what memory changes about it."""
    from mavend.memory.preview import describe_memory

    return describe_decision(answer) + "\n" + describe_memory(answer.get("memory"))


def cmd_say(args: argparse.Namespace) -> int:
    from mavend.assistant import open_assistant
    from mavend.daemon.lock import daemon_pid

    settings = settings_from(args)
    text = " ".join(args.text)
    if _daemon_serves(args, settings):
        from mavend.api import client as dbus_client

        with _unless_unavailable():
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


def _daemon_serves(args: argparse.Namespace, settings: Settings) -> bool:
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
def _unless_unavailable() -> Iterator[None]:
    """Goes on past DaemonUnavailable: the call never reached a daemon, so run it here."""
    from mavend.api.client import DaemonUnavailable

    try:
        yield
    except DaemonUnavailable as exc:
        log.debug("the daemon went away; running here: %s", exc)


def cmd_run(args: argparse.Namespace) -> int:
    from mavend.daemon.lifecycle import run_daemon

    settings = settings_from(args)
    # Without a microphone the daemon still runs (reminders, the D-Bus API): it
    # says so once, points at `mavend doctor`, and keeps retrying the device.
    return run_daemon(settings, audio=not args.no_audio, config_path=args.config)


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


def cmd_doctor(args: argparse.Namespace) -> int:
    from mavend.cli.doctor import run_checks

    settings = settings_from(args)
    checks = run_checks(settings)
    for check in checks:
        print(json.dumps(check.to_json()) if args.json else check.line())
    return 0 if all(c.ok for c in checks) else 1
