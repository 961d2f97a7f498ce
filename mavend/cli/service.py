"""``mavend service install|uninstall|status``: mavend as a systemd unit.

The unit is rendered by `mavend.system.unit` and written, enabled, removed and reported
on with `mavend.system.install`; this module is the command that says what it did.

Exit codes: 0 ok; 1 the unit could not be written; 2 usage; 3 the config is invalid;
5 systemctl or the (user) service manager is not available (the unit is written anyway,
and the message says how to enable it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mavend.desktop.entry import install_desktop_files, uninstall_desktop_files
from mavend.errors import DeviceError, MavendError
from mavend.system.install import (
    UNIT_NAME,
    closed_to_others,
    enable_hint,
    systemctl,
    systemctl_checked,
    unit_dir,
    userns_warning,
    what_failed,
    write_unit,
)
from mavend.system.unit import plan_for, render_unit


def cmd_install(args: argparse.Namespace) -> int:
    scope = "system" if args.system else "user"
    plan = plan_for(scope, config=args.config)
    text = render_unit(plan)
    path = unit_dir(scope, args.unit_dir) / UNIT_NAME
    if args.print:
        print(f"# {path}", file=sys.stderr)
        sys.stdout.write(text)
        return 0
    if scope == "system":
        blocked = closed_to_others(Path(plan.command[0]), Path(sys.executable), Path(__file__))
        if blocked is not None:
            print(
                f"mavend: warning: {blocked} is closed to other users; the system service "
                "runs as a dynamic user that cannot reach mavend or its Python through it "
                "(install mavend under /opt or /usr/local instead)",
                file=sys.stderr,
            )
    if scope == "user":
        for directory in (*plan.data_dirs, plan.cache_dir):
            if directory is not None:
                directory.mkdir(parents=True, exist_ok=True)
        warning = userns_warning()
        if warning:
            print(f"mavend: warning: {warning}", file=sys.stderr)
    changed = write_unit(path, text)
    print(f"{'wrote' if changed else 'unchanged'} {path} (ExecStart={plan.command[0]})")
    if scope == "user" and args.unit_dir is None:  # notifications: mavend's name and icon
        try:
            print("wrote " + " ".join(str(p) for p in install_desktop_files()))
        except MavendError as exc:  # cosmetic: the service works without them
            print(f"mavend: warning: {exc}", file=sys.stderr)
    if args.no_enable or args.unit_dir is not None:
        print(f"to enable it: {enable_hint(scope, now=True)}")
        return 0
    try:
        systemctl_checked(scope, "daemon-reload")
    except DeviceError as exc:
        raise DeviceError(
            f"{exc}\n  the unit is written; enable it where systemd runs: "
            f"{enable_hint(scope, now=True)}"
        ) from None
    # systemd answered the reload: a failure now is the service's own (it did not start).
    done = systemctl(scope, "enable", *(["--now"] if args.now else []), UNIT_NAME)
    if done.returncode != 0:
        user = "--user " if scope == "user" else ""
        raise MavendError(
            f"mavend.service is installed but did not start: {what_failed(done)}\n"
            f"  see `systemctl {user}status mavend` and `journalctl {user}-u mavend`"
        )
    ctl = "systemctl --user" if scope == "user" else "systemctl"
    started = "enabled and started" if args.now else f"enabled (start it: {ctl} start mavend)"
    print(
        f"mavend.service {started}; logs: journalctl {'--user ' if scope == 'user' else ''}"
        "-u mavend -f"
    )
    return 0


def cmd_uninstall(args: argparse.Namespace) -> int:
    scope = "system" if args.system else "user"
    path = unit_dir(scope, args.unit_dir) / UNIT_NAME
    problem: DeviceError | None = None
    if args.unit_dir is None:
        try:
            systemctl_checked(scope, "disable", "--now", UNIT_NAME)
        except DeviceError as exc:
            problem = exc
    if path.exists():
        try:
            path.unlink()
        except OSError as exc:
            raise MavendError(f"cannot remove {path}: {exc.strerror}") from exc
        print(f"removed {path}")
    else:
        print(f"{path} is not there (nothing to remove)")
    if problem is None and args.unit_dir is None:
        try:
            systemctl_checked(scope, "daemon-reload")
        except DeviceError as exc:
            problem = exc
    if scope == "user" and args.unit_dir is None:
        for removed in uninstall_desktop_files():
            print(f"removed {removed}")
    if problem is not None:
        raise DeviceError(f"{problem}\n  the unit file is removed; the service may still run")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """Is the unit installed, is it what install would write now, and is it running?"""
    scope = "system" if args.system else "user"
    path = unit_dir(scope, args.unit_dir) / UNIT_NAME
    if not path.exists():
        print(
            f"not installed ({path} is missing): mavend service install"
            f"{' --system' if args.system else ''}"
        )
        return 1
    current = render_unit(plan_for(scope, config=args.config))
    same = path.read_text() == current
    print(f"installed: {path}")
    print(
        "up to date"
        if same
        else "differs from what `mavend service install` would write "
        "now (moved venv? new release?): run it again"
    )
    try:
        enabled = systemctl(scope, "is-enabled", UNIT_NAME).stdout.strip() or "unknown"
        active = systemctl(scope, "is-active", UNIT_NAME).stdout.strip() or "unknown"
    except DeviceError as exc:
        print(f"systemd: not reachable ({exc})")
        return 5
    print(f"enabled: {enabled}\nactive: {active}")
    return 0 if same and active == "active" else 1


# command line ----------------------------------------------------------------------
_EPILOG = (
    "User units go to $XDG_CONFIG_HOME/systemd/user, the system unit to /etc/systemd/system. "
    "Exit codes: 0 ok, 1 not written, 2 usage, 3 bad config, 5 systemctl or the service "
    "manager is not available (the unit is written anyway). See systemd/README.md."
)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    service = subparsers.add_parser(
        "service",
        help="install mavend as a systemd service (user or system unit)",
        description="Write, enable, remove and check mavend's systemd unit. The unit starts "
        "this very mavend executable, by its absolute path.",
        epilog=_EPILOG,
    )
    sub = service.add_subparsers(dest="service_command", metavar="COMMAND", required=True)

    def common(parser: argparse.ArgumentParser) -> None:
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument(
            "--user",
            action="store_true",
            help="a user unit (the default): your session bus and audio server",
        )
        scope.add_argument(
            "--system",
            action="store_true",
            help="a headless system unit (`run --no-audio`, a dynamic user; needs root)",
        )
        parser.add_argument(
            "--unit-dir",
            type=Path,
            metavar="DIR",
            help="use DIR instead of the standard unit folder (packaging); no systemctl",
        )

    install = sub.add_parser(
        "install",
        help="write the unit, reload systemd and enable it",
        description="Render the unit for this mavend, write it, run `systemctl daemon-reload` "
        "and `systemctl enable`.",
        epilog=_EPILOG,
    )
    common(install)
    install.add_argument("--no-enable", action="store_true", help="only write the unit file")
    install.add_argument("--now", action="store_true", help="also start it (enable --now)")
    install.add_argument(
        "--print",
        "--dry-run",
        dest="print",
        action="store_true",
        help="print the unit to stdout and write nothing",
    )
    install.set_defaults(func=cmd_install)

    uninstall = sub.add_parser(
        "uninstall", help="disable and stop the service, remove the unit", epilog=_EPILOG
    )
    common(uninstall)
    uninstall.set_defaults(func=cmd_uninstall)

    status = sub.add_parser(
        "status",
        help="is the unit installed, up to date, enabled and running",
        description="Exit 0 when the unit is installed, up to date and active; 1 otherwise; "
        "5 when systemd is not reachable.",
        epilog=_EPILOG,
    )
    common(status)
    status.set_defaults(func=cmd_status)
