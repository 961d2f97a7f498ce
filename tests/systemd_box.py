"""A real systemd, booted as PID 1 of its own namespaces: a throwaway box for unit tests.

`SystemdBox` starts ``/lib/systemd/systemd --system`` the way a container manager would,
with nothing but util-linux (`unshare`, `nsenter`, `setpriv`) and the host's own files:

* new PID, mount, UTS, IPC, network and cgroup namespaces: systemd is PID 1 in there, sets
  its own hostname, sees only its own processes and loopback;
* a private cgroup: a fresh child of the host's cgroup2 hierarchy (``/sys/fs/cgroup`` on a
  unified host, ``/sys/fs/cgroup/unified`` on a hybrid one) is the box's cgroup root, so
  systemd runs in unified mode and creates its slices below it and nowhere else;
* the host's root file system, but ``/etc``, ``/var`` and ``/home`` are overlays with their
  writable layer on a tmpfs (``systemctl enable``, ``/etc/mavend``, ``/var/lib/private``,
  the journal, a user added with `useradd` all land there and vanish with the box);
  ``/run``, ``/tmp``, ``/dev`` (a few device nodes, a private devpts, the console: a pty
  the harness copies to `log`) are fresh (but an `expose` path under ``/tmp``, a checkout
  cloned there and its venv, is bind-mounted into the fresh one from the host's); ``/sys``
  and ``/proc/sys`` are read-only;
* capabilities a container does not get are dropped from the bounding set (loading kernel
  modules, setting the clock, raw I/O, ...), so units that would do that skip themselves;
* it boots ``mavend-box.target``: sysinit.target (journald, tmpfiles) and sockets.target,
  nothing of multi-user.target (whatever the host enables there stays off).

Commands run in the box with `run` (``nsenter --all`` into its namespaces; they stay in the
caller's cgroup). `close()` kills the box's PID 1 with SIGKILL, which makes the kernel kill
every process in its PID namespace; the mount namespace goes with the last of them, and the
cgroup directories are removed. If the harness itself is killed, parent-death signals
(`setpriv --pdeathsig`, `unshare --kill-child`) take the box down with it and the next box
removes the empty cgroup left behind. Every step has a timeout. Root is required (mounts,
namespaces): `SystemdBox.start` raises `BoxError` saying what blocks it.

Directories on the host that other users cannot enter (a Python under ``/root/.pyenv``, a
checkout under a 0750 home) would keep a `DynamicUser=` service from running the venv's
interpreter; `expose` paths are made reachable inside the box only, by mounting a tmpfs
over each such directory that holds just the needed entries, bind-mounted from the host.
"""

from __future__ import annotations

import contextlib
import os
import pty
import secrets
import shlex
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

SYSTEMD = Path("/lib/systemd/systemd")
BOOT_UNIT = "mavend-box.target"
# What a container does not get (systemd-nspawn drops these too).
DROPPED_CAPS = (
    "sys_module",
    "sys_time",
    "sys_rawio",
    "mac_admin",
    "mac_override",
    "syslog",
    "wake_alarm",
    "block_suspend",
    "sys_pacct",
)
# The unit the box boots: sysinit (journald, tmpfiles, ...) and sockets, no getty, no
# multi-user.target.
BOOT_TARGET = """\
[Unit]
Description=mavend test box
Requires=sysinit.target sockets.target
After=sysinit.target sockets.target
AllowIsolate=yes
"""

_INNER = r"""
set -eu
mount --make-rprivate /
mount -t tmpfs -o mode=0755 mavend-box-run /run
B=/run/.box
mkdir -p $B/etc/u $B/etc/w $B/var/u $B/var/w $B/home/u $B/home/w $B/dev $B/host
: > $B/console
mount --bind "$CONSOLE" $B/console
mount -t overlay overlay -o lowerdir=/etc,upperdir=$B/etc/u,workdir=$B/etc/w /etc
mount -t overlay overlay -o lowerdir=/var,upperdir=$B/var/u,workdir=$B/var/w /var
if [ -d /home ]; then
  mount -t overlay overlay -o lowerdir=/home,upperdir=$B/home/u,workdir=$B/home/w /home
fi
mkdir -p $B/host/tmp && mount --bind /tmp $B/host/tmp
mount -t tmpfs -o mode=1777,nosuid,nodev mavend-box-tmp /tmp
__KEEP_TMP__
__EXPOSE__
mount -t proc -o nosuid,nodev,noexec proc /proc
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs /sys
mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 /sys/fs/cgroup
D=$B/dev
mount -t tmpfs -o mode=0755,nosuid mavend-box-dev $D
mknod -m 666 $D/null c 1 3; mknod -m 666 $D/zero c 1 5; mknod -m 666 $D/full c 1 7
mknod -m 666 $D/random c 1 8; mknod -m 666 $D/urandom c 1 9; mknod -m 666 $D/tty c 5 0
mkdir $D/pts $D/shm
ln -s pts/ptmx $D/ptmx; ln -s /proc/self/fd $D/fd; ln -s /proc/self/fd/0 $D/stdin
ln -s /proc/self/fd/1 $D/stdout; ln -s /proc/self/fd/2 $D/stderr
: > $D/console
mount --move $D /dev
mount --move $B/console /dev/console
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts /dev/pts
mount -t tmpfs -o mode=1777,nosuid,nodev shm /dev/shm
mkdir -p /etc/systemd/system
printf '%s' "$BOOT_TARGET" > /etc/systemd/system/__BOOT_UNIT__
exec </dev/console >/dev/console 2>&1
exec env -i container=mavend-box PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  setpriv --bounding-set __CAPS__ \
  __SYSTEMD__ --system --unit=__BOOT_UNIT__ --log-target=journal --show-status=no
"""


class BoxError(RuntimeError):
    """The box could not be started (the message says what blocks it)."""


def _cgroup2_root() -> tuple[Path, str]:
    """The host's cgroup2 mount and this process's cgroup2 path in it."""
    mount = None
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        pre, _, post = line.partition(" - ")
        if post.split()[:1] == ["cgroup2"]:
            mount = Path(pre.split()[4])
            break
    if mount is None:
        raise BoxError("no cgroup2 file system is mounted on the host (needed for the box)")
    own = ""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            own = line[3:]
    return mount, own.strip("/")


def _hidden_steps(paths: Iterable[Path]) -> dict[Path, set[str]]:
    """For every directory on the way to `paths` that others cannot enter, the entries
    below it that must stay reachable."""
    needed: dict[Path, set[str]] = {}
    for path in paths:
        path = Path(os.path.realpath(path))
        for parent in [*reversed(path.parents)][1:] + ([path] if path.is_dir() else []):
            try:
                mode = parent.stat().st_mode
            except OSError:
                continue
            if not mode & stat.S_IXOTH:
                child = path.relative_to(parent).parts[:1]
                if child:
                    needed.setdefault(parent, set()).add(child[0])
    return needed


def _kept_in_tmp(paths: Iterable[Path]) -> list[str]:
    """The entries right below /tmp that `paths` (as given, and resolved) lie in: a checkout
    or a venv under /tmp must not vanish under the box's fresh /tmp."""
    kept: list[str] = []
    for path in paths:
        for each in (Path(os.path.abspath(path)), Path(os.path.realpath(path))):
            parts = each.parts
            if len(parts) > 2 and parts[:2] == ("/", "tmp") and parts[2] not in kept:
                kept.append(parts[2])
    return kept


def _keep_tmp_script(paths: Iterable[Path]) -> str:
    lines = []
    for name in _kept_in_tmp(paths):
        n = shlex.quote(name)
        lines.append(
            f"if [ -d $B/host/tmp/{n} ]; then mkdir /tmp/{n}; else : > /tmp/{n}; fi; "
            f"mount --bind $B/host/tmp/{n} /tmp/{n}"
        )
    return "\n".join(lines)


def _expose_script(paths: Iterable[Path]) -> str:
    lines = []
    for n, (directory, children) in enumerate(sorted(_hidden_steps(paths).items())):
        d = shlex.quote(str(directory))
        lines.append(f"mkdir -p $B/host/{n} && mount --bind {d} $B/host/{n}")
        lines.append(f"mount -t tmpfs -o mode=0755 mavend-box-expose {d}")
        for child in sorted(children):
            c = shlex.quote(child)
            lines.append(
                f"if [ -d $B/host/{n}/{c} ]; then mkdir {d}/{c}; else : > {d}/{c}; fi; "
                f"mount --bind $B/host/{n}/{c} {d}/{c}"
            )
    return "\n".join(lines)


class SystemdBox:
    """``with SystemdBox() as box: box.systemctl("start", "x.service")``."""

    def __init__(
        self, log: Path, *, expose: Sequence[Path] = (), boot_timeout_s: float = 40
    ) -> None:
        self.log = log
        self.expose = tuple(expose)
        self.boot_timeout_s = boot_timeout_s
        self.pid: int | None = None  # the box's systemd (PID 1 inside), as the host sees it
        self._proc: subprocess.Popen[bytes] | None = None
        self._cgroup: Path | None = None
        self._master: int | None = None
        self._reader: threading.Thread | None = None

    # lifecycle ------------------------------------------------------------------
    def __enter__(self) -> SystemdBox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self) -> None:
        if os.geteuid() != 0:
            raise BoxError("the systemd box needs root (mount and PID namespaces)")
        for tool in ("unshare", "nsenter", "setpriv", "systemctl"):
            if shutil.which(tool) is None:
                raise BoxError(f"{tool} is not installed (util-linux / systemd)")
        if not os.access(SYSTEMD, os.X_OK):
            raise BoxError(f"{SYSTEMD} is missing: apt-get install systemd")
        mount, own = _cgroup2_root()
        self._remove_stale(mount / own)
        self._cgroup = mount / own / f"mavend-box-{os.getpid()}-{secrets.token_hex(3)}"
        try:
            self._cgroup.mkdir()
        except OSError as exc:
            raise BoxError(f"cannot create the box's cgroup {self._cgroup}: {exc}") from exc

        master, slave = pty.openpty()
        self._master = master
        self._reader = threading.Thread(target=self._read_console, daemon=True)
        self._reader.start()
        console = os.ttyname(slave)
        script = (
            _INNER.replace("__KEEP_TMP__", _keep_tmp_script(self.expose))
            .replace("__EXPOSE__", _expose_script(self.expose))
            .replace("__BOOT_UNIT__", BOOT_UNIT)
            .replace("__CAPS__", ",".join(f"-{c}" for c in DROPPED_CAPS))
            .replace("__SYSTEMD__", str(SYSTEMD))
        )
        # Join the box's cgroup first, then unshare: the new cgroup namespace is rooted there.
        wrapper = 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"'
        argv = [
            "sh",
            "-c",
            wrapper,
            "sh",
            str(self._cgroup),
            "setpriv",
            "--pdeathsig",
            "KILL",  # the harness dies: so does the box
            "unshare",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount",
            "--uts",
            "--ipc",
            "--net",
            "--cgroup",
            "--propagation",
            "private",
            "bash",
            "-c",
            script,
        ]
        env = {
            "PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"),
            "CONSOLE": console,
            "BOOT_TARGET": BOOT_TARGET,
        }
        self._proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=slave,
            stderr=slave,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.pid = self._find_pid1()
        self._wait_booted()

    def _find_pid1(self) -> int:
        assert self._proc is not None
        deadline = time.monotonic() + 10
        children = Path(f"/proc/{self._proc.pid}/task/{self._proc.pid}/children")
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                code = self._proc.returncode
                raise BoxError(f"the box exited at once ({code}):\n{self.console()}")
            try:
                pids = children.read_text().split()
            except OSError:
                pids = []
            if pids:
                return int(pids[0])
            time.sleep(0.05)
        raise BoxError(f"no PID 1 in the box after 10 s:\n{self.console()}")

    def _wait_booted(self) -> None:
        """Until systemd answers and its boot job is done (`is-system-running` is not
        `initializing`/`starting`)."""
        started = time.monotonic()
        deadline = started + self.boot_timeout_s
        state = ""
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                raise BoxError(
                    f"systemd in the box exited ({self._proc.returncode}):\n{self.console()}"
                )
            done = self.run(["systemctl", "is-system-running"], timeout=10, check=False)
            state = done.stdout.strip()
            if state in ("running", "degraded"):
                return
            if state in ("maintenance", "stopping"):  # ("offline": not answering yet)
                break  # the boot failed (rescue mode) or systemd is going away
            time.sleep(0.2)
        raise BoxError(
            f"systemd in the box did not boot: `systemctl is-system-running` says {state!r} "
            f"after {time.monotonic() - started:.1f} s:\n{self.console()}"
        )

    def close(self) -> None:
        """Kill everything in the box, remove its cgroup. Safe to call twice."""
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            self.pid = None
        if self._proc is not None:
            try:  # unshare returns once its child, the box's PID 1, is gone
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self._proc.pid, signal.SIGKILL)
                self._proc.wait(10)
            self._proc = None
        if self._cgroup is not None:
            self._remove_cgroup(self._cgroup)
            self._cgroup = None
        if self._master is not None:
            if self._reader is not None:
                self._reader.join(2)
            with contextlib.suppress(OSError):
                os.close(self._master)
            self._master = None

    @classmethod
    def _remove_stale(cls, parent: Path) -> None:
        """The (empty) cgroups of boxes whose harness was killed: its box died with it
        (parent-death signals), but nobody was left to remove the directories."""
        for stale in parent.glob("mavend-box-*-*"):
            owner = stale.name.split("-")[2]
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                with contextlib.suppress(BoxError):
                    cls._remove_cgroup(stale, timeout=1)

    @staticmethod
    def _remove_cgroup(root: Path, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while root.exists():
            dirs = sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts))
            for path in [*dirs, root]:
                with contextlib.suppress(OSError):
                    path.rmdir()
            if not root.exists() or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        if root.exists():
            raise BoxError(f"the box's cgroup {root} is still busy after {timeout} s")

    def _read_console(self) -> None:
        assert self._master is not None
        with open(self.log, "ab") as out:
            while True:
                try:
                    data = os.read(self._master, 65536)
                except OSError:
                    return
                if not data:
                    return
                out.write(data)
                out.flush()

    def console(self, tail: int = 60) -> str:
        try:
            lines = self.log.read_text(errors="replace").replace("\r", "").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-tail:])

    # talking to it ------------------------------------------------------------
    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float = 30,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a command inside the box (all its namespaces, its root and cgroup)."""
        if self.pid is None:
            raise BoxError("the box is not running")
        base = {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LANG": "C.UTF-8",
            "SYSTEMD_PAGER": "",
            "SYSTEMD_COLORS": "0",
        }
        done = subprocess.run(
            ["nsenter", "-t", str(self.pid), "-a", "--", *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**base, **(env or {})},
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"`{' '.join(argv)}` in the box exited {done.returncode}:\n"
                f"{done.stdout}{done.stderr}"
            )
        return done

    def systemctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self.run(["systemctl", "--no-pager", *args], check=check)

    def show(self, unit: str, *props: str) -> dict[str, str]:
        done = self.systemctl("show", unit, *(f"--property={p}" for p in props))
        return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)

    def journal(self, unit: str) -> str:
        return self.run(
            ["journalctl", "--no-pager", "-o", "short-monotonic", "-u", unit], check=False
        ).stdout

    def write(self, path: str, text: str) -> None:
        """Write a file inside the box (its /etc and /var are the box's own)."""
        if self.pid is None:
            raise BoxError("the box is not running")
        subprocess.run(
            [
                "nsenter",
                "-t",
                str(self.pid),
                "-a",
                "--",
                "sh",
                "-c",
                'mkdir -p "$(dirname "$1")" && cat > "$1"',
                "sh",
                path,
            ],
            input=text,
            text=True,
            check=True,
            timeout=15,
            capture_output=True,
        )
