"""``mavend service install|uninstall|status``: mavend as a systemd unit.

`register` is called by ``mavend/cli.py``. The units are rendered here, from the two
templates in ``mavend/data/systemd/``, with the absolute path of the running ``mavend`` (a
venv, pipx, a system install: whatever is running is what the unit starts) and the
directories this mavend actually uses (`mavend.paths` and the config's ``[storage]``), so
that the sandbox's writable paths and the daemon's files always agree.
``systemd/mavend.service`` and ``systemd/mavend-system.service`` are these templates
rendered for a default install (``render_example``); a test keeps them identical.

Exit codes: 0 ok; 1 the unit could not be written; 2 usage; 3 the config is invalid;
5 systemctl or the (user) service manager is not available (the unit is written anyway,
and the message says how to enable it).
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from mavend import addresses, paths
from mavend.desktop import install_desktop_files, uninstall_desktop_files
from mavend.errors import DeviceError, MavendError

if TYPE_CHECKING:  # mavend.config is imported late here (plan_for), as before
    from mavend.config import Settings

UNIT_NAME = "mavend.service"
SYSTEM_UNIT_DIR = Path("/etc/systemd/system")
SYSTEMCTL_TIMEOUT_S = 30

# The installed name is always mavend.service; the system variant ships as
# systemd/mavend-system.service.
EXAMPLE_FILES = {"user": "mavend.service", "system": "mavend-system.service"}

_HEADER = (
    "# Written by `mavend service install{flag}`; mavend's systemd/README.md explains every\n"
    "# line. Change it with `systemctl{scope} edit mavend`, not here: a reinstall overwrites\n"
    "# this file.\n#\n"
)

# The unit templates ship as package data (mavend/data/systemd/*.service.in), str.format
# fields in braces; read once, when first rendered.
TEMPLATE_FILES = {"user": "mavend.service.in", "system": "mavend-system.service.in"}

DEFAULT_MEMORY_MAX = "3G"
SYSTEM_MODELS_DIR = Path("/usr/local/share/mavend/models")
SYSTEM_CONFIG = Path("/etc/mavend/config.toml")


@dataclass(frozen=True)
class UnitPlan:
    """What a unit is rendered from."""

    scope: str  # "user" or "system"
    command: tuple[str, ...]  # how to start mavend: [/abs/mavend] or [python, -m, mavend]
    config: Path | None = None  # --config PATH to pass to `mavend run`
    config_dir: Path | None = None  # user units: MAVEND_CONFIG_DIR
    data_dirs: tuple[Path, ...] = ()  # user units: writable (data dir, database folder)
    cache_dir: Path | None = None  # user units: writable, MAVEND_CACHE_DIR
    models_dir: Path | None = None  # MAVEND_MODELS_DIR when set at install (system: a default)
    memory_max: str = DEFAULT_MEMORY_MAX
    # The hosts the config sends to (addresses.configured_hosts): none, and the unit allows
    # no IP at all. System units also list their addresses, resolved at install.
    network: tuple[str, ...] = ()
    network_addresses: tuple[str, ...] = ()
    # The host `[wyoming] listen` serves on ("" = not served): the unit opens IP for it.
    listen: str = ""


# rendering -----------------------------------------------------------------------
@functools.cache
def unit_template(scope: str) -> str:
    return (resources.files("mavend.data") / "systemd" / TEMPLATE_FILES[scope]).read_text()


def render_unit(plan: UnitPlan) -> str:
    system = plan.scope == "system"
    header = _HEADER.format(
        flag=" --system" if system else " --user",
        scope="" if system else " --user",
    ).rstrip("\n")
    argv = [*plan.command]
    if plan.config is not None:
        argv += ["--config", str(plan.config)]
    command = " ".join(_exec_word(word, home=not system) for word in argv)
    env: list[tuple[str, Path]] = []
    if not system:
        if plan.config_dir is not None:
            env.append(("MAVEND_CONFIG_DIR", plan.config_dir))
        if plan.data_dirs:
            env.append(("MAVEND_DATA_DIR", plan.data_dirs[0]))
        if plan.cache_dir is not None:
            env.append(("MAVEND_CACHE_DIR", plan.cache_dir))
    if plan.models_dir is not None and not system:
        env.append(("MAVEND_MODELS_DIR", plan.models_dir))
    environment = "".join(
        "Environment=" + _quote(f"{name}={_path_word(path)}") + "\n" for name, path in env
    )
    if system:
        template = unit_template("system")
        models = plan.models_dir or SYSTEM_MODELS_DIR
        values = {
            "environment": environment,
            "system_models_dir": _quote(_path_word(models, home=False)),
        }
    else:
        writable = [*plan.data_dirs, *([plan.cache_dir] if plan.cache_dir else [])]
        rw_paths = " ".join(dict.fromkeys(_quote(_path_word(p)) for p in writable))
        if not rw_paths:
            raise MavendError("a user unit needs at least one writable directory")
        template = unit_template("user")
        values = {"environment": environment, "rw_paths": rw_paths}
    values["address_families"] = _address_families(plan)
    text = template.format(header=header, command=command, memory_max=plan.memory_max, **values)
    return text


# A host as it may appear in a unit comment: a name or an address, nothing that could end
# the line or start another directive.
_HOST_WORD = re.compile(r"[A-Za-z0-9._:%-]{1,253}")


def _address_families(plan: UnitPlan) -> str:
    """The sandbox's network lines: AF_UNIX only, unless the config sends to a host."""
    system = plan.scope == "system"
    if not plan.network and not plan.listen:
        if system:
            return (
                "# AF_UNIX only: the journal and the notify socket. Nothing leaves the box.\n"
                "RestrictAddressFamilies=AF_UNIX\nIPAddressDeny=any"
            )
        return (
            "# No AF_INET/AF_INET6: nothing leaves the box. AF_NETLINK is for audio device "
            "discovery.\nRestrictAddressFamilies=AF_UNIX AF_NETLINK"
        )
    for host in (*plan.network, *plan.network_addresses, *filter(None, [plan.listen])):
        if not _HOST_WORD.fullmatch(host):
            raise MavendError(f"cannot write {host!r} into a unit: not a host name or address")
    hosts = ", ".join(plan.network) or "nothing"
    served = f"; serves Wyoming on {plan.listen}" if plan.listen else ""
    again = f"`mavend service install{' --system' if system else ''}` again after changing them"
    if system:
        allowed = ["localhost", *plan.network_addresses]
        if plan.listen and addresses.literal_host_is_private(plan.listen) is not True:
            # Served beyond loopback: clients from the household's own networks only.
            allowed += [str(net) for net in addresses.PRIVATE_NETWORKS]
        return (
            f"# IP only to the hosts the config sends to: {hosts}{served}\n"
            f"# (resolved at install: {again}); localhost for the resolver.\n"
            "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6\n"
            f"IPAddressDeny=any\nIPAddressAllow={' '.join(dict.fromkeys(allowed))}"
        )
    return (
        f"# AF_INET/AF_INET6 only because the config sends to: {hosts}{served}\n"
        f"# ({again}). AF_NETLINK is for audio device discovery.\n"
        "RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_INET6"
    )


def listen_host(settings: Settings) -> str:
    """The host `[wyoming] listen` serves on, or "" when it is off."""
    listen = settings.wyoming.listen
    return addresses.tcp_uri(listen)[0] if listen else ""


def resolve_hosts(hosts: tuple[str, ...]) -> tuple[str, ...]:
    """Every address `hosts` resolve to now, for a system unit's IPAddressAllow=."""
    found: list[str] = []
    for host in hosts:
        try:
            infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        except (OSError, UnicodeError) as exc:
            raise MavendError(
                f"cannot resolve {host} for the system unit's IPAddressAllow= ({exc}); "
                "give its address in the config instead"
            ) from None
        found += [str(info[4][0]).split("%", 1)[0] for info in infos]
    return tuple(dict.fromkeys(found))


def _path_word(path: Path, *, home: bool = True) -> str:
    """A path for a unit file, `%` escaped; with `home`, `%h/...` under the home directory
    (user units only: in a system unit %h is root's home)."""
    path = Path(path)
    try:
        if not home:
            raise ValueError
        rel = path.relative_to(Path.home())
    except ValueError:
        return str(path).replace("%", "%%")
    return "%h" if str(rel) == "." else "%h/" + str(rel).replace("%", "%%")


def _quote(word: str) -> str:
    """Double-quote a unit-file word when it holds blanks or quotes."""
    if word and not any(c.isspace() or c in "\"'\\" for c in word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _exec_word(word: str, *, home: bool) -> str:
    """One ExecStart= word: specifiers and `$` escaped, a path under $HOME as `%h` (`home`)."""
    text = _path_word(Path(word), home=home) if word.startswith("/") else word.replace("%", "%%")
    return _quote(text.replace("$", "$$"))


def running_command() -> tuple[str, ...]:
    """How the unit should start this very mavend: its absolute executable path.

    `sys.argv[0]` is the console script when run as `mavend` (a venv's bin/, pipx's
    ~/.local/bin symlink, /usr/local/bin); under `python -m mavend` it is __main__.py,
    and then the script beside the interpreter, or the interpreter with `-m mavend`.
    """
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "mavend":
        found = argv0 if argv0.is_absolute() or "/" in sys.argv[0] else shutil.which("mavend")
        if found is not None:
            candidate = Path(os.path.abspath(found))
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return (str(candidate),)
    beside = Path(sys.executable).parent / "mavend"
    if beside.is_file() and os.access(beside, os.X_OK):
        return (os.path.abspath(beside),)
    return (os.path.abspath(sys.executable), "-m", "mavend")


def plan_for(
    scope: str,
    *,
    config: Path | None = None,
    command: tuple[str, ...] | None = None,
) -> UnitPlan:
    """The unit for this mavend and its directories, as this process sees them."""
    command = command or running_command()
    models = os.environ.get("MAVEND_MODELS_DIR")
    models_dir = Path(models).expanduser().absolute() if models else None
    config_path = config.expanduser().absolute() if config is not None else None
    from mavend.config import load_settings

    if scope == "system":
        # The service reads /etc/mavend/config.toml (ConfigurationDirectory) unless --config.
        system_config = config or SYSTEM_CONFIG
        hosts: tuple[str, ...] = ()
        listen = ""
        if system_config.is_file():
            system_settings = load_settings(system_config)
            hosts = addresses.configured_hosts(system_settings)
            listen = listen_host(system_settings)
        return UnitPlan(
            "system", command, config=config_path, models_dir=models_dir,
            network=hosts, network_addresses=resolve_hosts(hosts), listen=listen,
        )  # fmt: skip
    settings = load_settings(config)  # ConfigError (exit 3) if it is invalid
    data = settings.storage.data_path().expanduser().absolute()
    database_dir = settings.storage.database_path().expanduser().absolute().parent
    return UnitPlan(
        "user",
        command,
        config=config_path,
        config_dir=paths.config_dir().expanduser().absolute(),
        data_dirs=tuple(dict.fromkeys((data, database_dir))),
        cache_dir=paths.cache_dir().expanduser().absolute(),
        models_dir=models_dir,
        network=addresses.configured_hosts(settings),
        listen=listen_host(settings),
    )


def render_example(scope: str) -> str:
    """The unit shipped in systemd/: a default install (pipx-style ~/.local/bin/mavend for
    the user unit, /usr/local/bin/mavend for the system unit)."""
    home = Path.home()
    if scope == "system":
        return render_unit(UnitPlan("system", ("/usr/local/bin/mavend",)))
    return render_unit(
        UnitPlan(
            "user",
            (str(home / ".local/bin/mavend"),),
            config_dir=home / ".config/mavend",
            data_dirs=(home / ".local/share/mavend",),
            cache_dir=home / ".cache/mavend",
        )
    )


def write_examples(directory: Path | None = None) -> list[Path]:
    """Regenerate systemd/*.service from the templates (after editing them)."""
    target = directory or Path(__file__).resolve().parent.parent / "systemd"
    written = []
    for scope, name in EXAMPLE_FILES.items():
        path = target / name
        path.write_text(render_example(scope))
        written.append(path)
    return written


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
