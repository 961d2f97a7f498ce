"""The systemd unit mavend installs: what it is rendered from, and how.

The units are rendered from the two templates in ``mavend/data/systemd/``, with the
absolute path of the running ``mavend`` (a venv, pipx, a system install: whatever is
running is what the unit starts) and the directories this mavend actually uses
(`mavend.paths` and the config's ``[storage]``), so that the sandbox's writable paths and
the daemon's files always agree. ``systemd/mavend.service`` and
``systemd/mavend-system.service`` are these templates rendered for a default install
(``render_example``); a test keeps them identical. `mavend service install`
(mavend/cli/service.py) writes them.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import socket
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from mavend import addresses, paths
from mavend.errors import MavendError

if TYPE_CHECKING:  # mavend.config is imported late here (plan_for)
    from mavend.config import Settings

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
    # The hosts the config sends to (configured_hosts): none, and the unit allows
    # no IP at all. System units also list their addresses, resolved at install.
    network: tuple[str, ...] = ()
    network_addresses: tuple[str, ...] = ()
    # The host `[wyoming] listen` serves on ("" = not served): the unit opens IP for it.
    listen: str = ""
    # The host `[web] listen` serves the household's page on ("" = off): the same.
    page: str = ""
    # Where mavend itself lives under /tmp or /var/tmp (a checkout cloned there, its venv):
    # PrivateTmp=yes would hide it from the service, so each is bound in, read-only.
    tmp_paths: tuple[Path, ...] = ()


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
    values["tmp_binds"] = _tmp_binds(plan)
    text = template.format(header=header, command=command, memory_max=plan.memory_max, **values)
    return text


# A host as it may appear in a unit comment: a name or an address, nothing that could end
# the line or start another directive.
_HOST_WORD = re.compile(r"[A-Za-z0-9._:%-]{1,253}")


def _address_families(plan: UnitPlan) -> str:
    """The sandbox's network lines: AF_UNIX only, unless the config sends to a host."""
    system = plan.scope == "system"
    if not plan.network and not plan.listen and not plan.page:
        if system:
            return (
                "# AF_UNIX only: the journal and the notify socket. Nothing leaves the box.\n"
                "RestrictAddressFamilies=AF_UNIX\nIPAddressDeny=any"
            )
        return (
            "# No AF_INET/AF_INET6: nothing leaves the box. AF_NETLINK is for audio device "
            "discovery.\nRestrictAddressFamilies=AF_UNIX AF_NETLINK"
        )
    for host in (*plan.network, *plan.network_addresses, *filter(None, [plan.listen, plan.page])):
        if not _HOST_WORD.fullmatch(host):
            raise MavendError(f"cannot write {host!r} into a unit: not a host name or address")
    hosts = ", ".join(plan.network) or "nothing"
    served = f"; serves Wyoming on {plan.listen}" if plan.listen else ""
    served += f"; serves the page on {plan.page}" if plan.page else ""
    again = f"`mavend service install{' --system' if system else ''}` again after changing them"
    if system:
        allowed = ["localhost", *plan.network_addresses]
        beyond = [h for h in (plan.listen, plan.page) if h]
        if any(addresses.literal_host_is_private(h) is not True for h in beyond):
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


# What PrivateTmp=yes replaces with the service's own, empty folders.
PRIVATE_TMP_DIRS = (Path("/tmp"), Path("/var/tmp"))


def _tmp_binds(plan: UnitPlan) -> str:
    if not plan.tmp_paths:
        return ""
    words = " ".join(_quote(_path_word(path, home=False)) for path in plan.tmp_paths)
    return (
        "\n# mavend itself lives there, and PrivateTmp= would hide it: bound in, read-only."
        f"\nBindReadOnlyPaths={words}"
    )


def tmp_paths(command: tuple[str, ...]) -> tuple[Path, ...]:
    """The folders right below /tmp or /var/tmp that the service needs to run `command`:
    the executable (as given and resolved), a script's interpreter, this Python's prefix
    and the mavend package (an editable install's source)."""
    import mavend

    found: list[Path] = [Path(sys.prefix), Path(mavend.__file__).parent]
    for word in command:
        if not word.startswith("/"):
            continue
        found.append(Path(word))
        try:
            with open(word, "rb") as script:
                first = script.readline(512)
        except OSError:
            continue
        if first.startswith(b"#!"):
            interpreter = first[2:].split()
            if interpreter and interpreter[0].startswith(b"/"):
                found.append(Path(os.fsdecode(interpreter[0])))
    needed: list[Path] = []
    for path in found:
        for each in (Path(os.path.abspath(path)), Path(os.path.realpath(path))):
            for tmp in PRIVATE_TMP_DIRS:
                if each.is_relative_to(tmp) and each != tmp:
                    top = tmp / each.relative_to(tmp).parts[0]
                    if top not in needed:
                        needed.append(top)
    return tuple(needed)


def configured_hosts(settings: Settings) -> tuple[str, ...]:
    """The hosts the config sends to, in config order, each once: the remote LLM server,
    the MQTT broker, Home Assistant and a Wyoming speech server, each only when something
    uses it. The systemd units open IP for these and nothing else (`plan_for`)."""
    hosts: list[str] = []
    if settings.llm.backend == "openai":
        hosts.append(addresses.url_host(settings.llm.base_url))
    acts = settings.acts.allow
    if any(a.kind == "mqtt" for a in acts) or any(d.mqtt for d in settings.devices):
        hosts.append(settings.mqtt.host.strip("[]").lower())
    uses_ha = any(a.kind == "homeassistant" for a in acts) or any(
        d.homeassistant for d in settings.devices
    )
    if uses_ha and settings.homeassistant.url:
        hosts.append(addresses.url_host(settings.homeassistant.url))
    if settings.stt.backend == "wyoming":  # a Wyoming speech-to-text server
        hosts.append(addresses.tcp_uri(settings.stt.uri)[0])
    # Wyoming satellites: mavend connects to them, as Home Assistant does.
    hosts.extend(addresses.tcp_uri(satellite.uri)[0] for satellite in settings.satellites)
    return tuple(dict.fromkeys(h for h in hosts if h))


def listen_host(settings: Settings) -> str:
    """The host `[wyoming] listen` serves on, or "" when it is off."""
    listen = settings.wyoming.listen
    return addresses.tcp_uri(listen)[0] if listen else ""


def page_host(settings: Settings) -> str:
    """The host `[web] listen` serves the page on, or "" when the page is off."""
    return settings.web.host if settings.web.enabled else ""


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
    in_tmp = tmp_paths(command)
    models = os.environ.get("MAVEND_MODELS_DIR")
    models_dir = Path(models).expanduser().absolute() if models else None
    config_path = config.expanduser().absolute() if config is not None else None
    from mavend.config import load_settings

    if scope == "system":
        # The service reads /etc/mavend/config.toml (ConfigurationDirectory) unless --config.
        system_config = config or SYSTEM_CONFIG
        hosts: tuple[str, ...] = ()
        listen = page = ""
        if system_config.is_file():
            system_settings = load_settings(system_config)
            hosts = configured_hosts(system_settings)
            listen = listen_host(system_settings)
            page = page_host(system_settings)
        return UnitPlan(
            "system", command, config=config_path, models_dir=models_dir,
            network=hosts, network_addresses=resolve_hosts(hosts), listen=listen, page=page,
            tmp_paths=in_tmp,
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
        network=configured_hosts(settings),
        listen=listen_host(settings),
        page=page_host(settings),
        tmp_paths=in_tmp,
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
    target = directory or Path(__file__).resolve().parents[2] / "systemd"  # the checkout's
    written = []
    for scope, name in EXAMPLE_FILES.items():
        path = target / name
        path.write_text(render_example(scope))
        written.append(path)
    return written
