"""mavend's systemd unit on this box: where it goes, writing it, and systemctl.

`mavend service` (mavend/cli/service.py) is the command; the unit itself is rendered by
`mavend.system.unit`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from mavend.errors import DeviceError, MavendError

UNIT_NAME = "mavend.service"
SYSTEM_UNIT_DIR = Path("/etc/systemd/system")
SYSTEMCTL_TIMEOUT_S = 30


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


def systemctl_checked(scope: str, *args: str) -> None:
    done = systemctl(scope, *args)
    if done.returncode != 0:
        manager = "your user's service manager" if scope == "user" else "systemd"
        raise DeviceError(
            f"`systemctl{' --user' if scope == 'user' else ''} {' '.join(args)}` failed: "
            f"{what_failed(done)} ({manager} is not reachable from here?)"
        )


def what_failed(done: subprocess.CompletedProcess[str]) -> str:
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


def enable_hint(scope: str, now: bool) -> str:
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
