"""``mavend service install|uninstall|status``: mavend as a systemd unit.

`register` is called by ``mavend/cli/__init__.py``. The unit is rendered by
`mavend.system.unit`; here it is written, enabled, removed and reported on.

Exit codes: 0 ok; 1 the unit could not be written; 2 usage; 3 the config is invalid;
5 systemctl or the (user) service manager is not available (the unit is written anyway,
and the message says how to enable it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from mavend.desktop.entry import install_desktop_files, uninstall_desktop_files
from mavend.errors import DeviceError, MavendError
from mavend.system.unit import plan_for, render_unit

UNIT_NAME = "mavend.service"
SYSTEM_UNIT_DIR = Path("/etc/systemd/system")
SYSTEMCTL_TIMEOUT_S = 30


# installing ------------------------------------------------------------------------
def unit_dir(scope: str, override: Path | None = None) -> Path:
    if override is not None:
        return override
    if scope == "system":
        return SYSTEM_UNIT_DIR
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def write_unit(path: Path, text: str) -> bool:
    """Write atomically; False when the file already had exactly this text."""
    try:
        if path.read_text() == text:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except PermissionError as exc:
        hint = " (run it with sudo)" if path.is_relative_to(SYSTEM_UNIT_DIR) else ""
        raise MavendError(f"cannot write {path}: {exc.strerror}{hint}") from exc
    except OSError as exc:
        raise MavendError(f"cannot write {path}: {exc}") from exc
    return True


def systemctl(scope: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run systemctl; DeviceError (exit 5) when it or the service manager is not there."""
    exe = shutil.which("systemctl")
    if exe is None:
        raise DeviceError("systemctl is not installed (this box does not run systemd)")
    argv = [exe, *(["--user"] if scope == "user" else []), *args]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=SYSTEMCTL_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise DeviceError(f"`{' '.join(argv[1:])}` did not answer in {exc.timeout} s") from exc
    except OSError as exc:
        raise DeviceError(f"cannot run systemctl: {exc}") from exc
    return done


def _systemctl_checked(scope: str, *args: str) -> None:
    done = systemctl(scope, *args)
    if done.returncode != 0:
        manager = "your user's service manager" if scope == "user" else "systemd"
        raise DeviceError(
            f"`systemctl{' --user' if scope == 'user' else ''} {' '.join(args)}` failed: "
            f"{_failure(done)} ({manager} is not reachable from here?)"
        )


def _failure(done: subprocess.CompletedProcess[str]) -> str:
    """What systemctl said last, or its exit status when it said nothing."""
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit {done.returncode}"


def closed_to_others(*paths: Path) -> Path | None:
    """The first folder or file on the way to any of `paths` (links followed) that a
    user other than its owner cannot pass through or read; None when all are open."""
    for path in paths:
        target = path.resolve()
        for step in (*reversed(target.parents), target):
            try:
                mode = step.stat().st_mode
            except OSError:
                return step
            needed = 0o001 if step != target or step.is_dir() else 0o004
            if not mode & needed:
                return step
    return None


def _enable_hint(scope: str, now: bool) -> str:
    ctl = "systemctl --user" if scope == "user" else "sudo systemctl"
    return f"{ctl} daemon-reload && {ctl} enable {'--now ' if now else ''}mavend"


def userns_warning() -> str | None:
    """Why the user unit's sandbox (PrivateUsers=yes) may fail on this kernel, or None."""
    checks = {
        "/proc/sys/kernel/unprivileged_userns_clone": "0",
        "/proc/sys/user/max_user_namespaces": "0",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns": "1",
    }
    for name, bad in checks.items():
        try:
            if Path(name).read_text().strip() == bad:
                return (
                    f"{name} is {bad}: the user unit's sandbox needs unprivileged user "
                    "namespaces; if mavend fails at step USER or NAMESPACE, see "
                    "systemd/README.md (PrivateUsers=no drop-in)"
                )
        except OSError:
            continue
    return None


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
        print(f"to enable it: {_enable_hint(scope, now=True)}")
        return 0
    try:
        _systemctl_checked(scope, "daemon-reload")
    except DeviceError as exc:
        raise DeviceError(
            f"{exc}\n  the unit is written; enable it where systemd runs: "
            f"{_enable_hint(scope, now=True)}"
        ) from None
    # systemd answered the reload: a failure now is the service's own (it did not start).
    done = systemctl(scope, "enable", *(["--now"] if args.now else []), UNIT_NAME)
    if done.returncode != 0:
        user = "--user " if scope == "user" else ""
        raise MavendError(
            f"mavend.service is installed but did not start: {_failure(done)}\n"
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
            _systemctl_checked(scope, "disable", "--now", UNIT_NAME)
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
            _systemctl_checked(scope, "daemon-reload")
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
