"""mavend's systemd units under a real systemd: install, READY, watchdog, reload, crash, stop.

`tests/systemd_box.py` boots the host's own systemd (``/lib/systemd/systemd --system``) as
PID 1 of private namespaces, with ``/etc``, ``/var`` and ``/home`` as throwaway overlays;
everything below happens inside that box, with this checkout's ``mavend``, once for the
system unit (root, `--system`) and once for the user unit (a user added in the box, its
`user@UID.service` manager started, every command run as that user):

* `mavend service install [--system] --now` writes the unit, runs the real
  ``systemctl [--user] daemon-reload`` and ``enable --now``, and exits 0: with
  `Type=notify` the start job only finishes on `READY=1`, so the unit is `active (running)`
  at once, with mavend's `STATUS=` line; the system unit as its dynamic user, the user unit
  in its own user namespace (`PrivateUsers=yes`: the uid maps to itself only) and with its
  D-Bus API on the user manager's session bus;
* the watchdog is armed (`WatchdogUSec`), pinged (`WatchdogTimestamp` moves on, the service
  outlives several periods) and enforced: a stopped (SIGSTOP) daemon misses its pings,
  systemd aborts it ("Watchdog timeout") and restarts it;
* `systemctl reload` (SIGHUP, RELOADING=1 then READY=1): same process, still running, the
  daemon logs "configuration reloaded", `ReloadResult=success`;
* `kill -9` of the main process: `Restart=on-failure` brings up a new one (`NRestarts`);
* `mavend service status` sees it installed, up to date and active;
* `systemctl stop`: a clean exit (status 0, `Result=success`); for the user unit, twice
  while a turn is still to write: a reminder (the test holds the database's write lock),
  then an allowlisted act that takes 8 s (its run is logged when it ends): the daemon
  waits for that turn, its row is kept and its reply given, then it exits;
* `mavend service uninstall` disables and removes it.

The units are the real ones, hardening included: nothing is switched off, and the sandbox
really is built (no capabilities, seccomp, read-only file system, private /tmp; the daemon
still starts, writes its database where the unit lets it and answers systemd). One limit
of the box, not of the units: `MemoryMax=` is accepted but only enforced where the cgroup2
hierarchy has the memory controller (a host that keeps it on cgroup v1, a hybrid layout,
has none to give the box). One drop-in, ``mavend.service.d/zz-test.conf``, only shortens
times so the test takes seconds instead of minutes: `WatchdogSec=2` (30: the daemon pings
every second instead of every 15 s), `RestartSec=1` (5), `TimeoutStartSec=20` (180: a
missing READY=1 fails in 20 s, within `mavend service install`'s 30 s systemctl timeout).

The checkout's venv must be readable by the dynamic user: where its interpreter sits in a
directory others cannot enter (a pyenv Python in /root), the box alone makes that one path
reachable (`SystemdBox(expose=...)`), as installing mavend under /opt would on a real box.

Needs root, systemd and dbus-user-session (scripts/setup.sh test installs them); it never
skips: a box that cannot
boot fails the test with the reason.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.systemd_box import BoxError, SystemdBox

ROOT = Path(__file__).resolve().parent.parent
MAVEND = Path(sys.executable).parent / "mavend"
UNIT = "mavend.service"
USER = "mavend-test"
HOME = f"/home/{USER}"

CONFIG = """\
[router]
llm_enabled = false

[notifications]
enabled = false
"""

DROP_IN = """\
[Service]
WatchdogSec=2
RestartSec=1
TimeoutStartSec=20
"""

# The user unit's one act takes 8 s: longer than the 4 s the daemon once waited at SIGTERM.
SLOW_ACT = """
[[acts.allow]]
name = "media_next"
argv = ["sleep", "8"]
description = "skip to the next track (a slow one)"
timeout_s = 15.0
"""

PROPS = ("ActiveState", "SubState", "MainPID", "NRestarts", "Result")


@pytest.fixture
def box(tmp_path: Path) -> Iterator[SystemdBox]:
    log = tmp_path / "box-console.log"
    expose = [Path(sys.executable), Path(sys.prefix), Path(sys.base_prefix), ROOT]
    try:
        systemd = SystemdBox(log, expose=expose)
        systemd.start()
    except BoxError as exc:
        pytest.fail(f"cannot boot a systemd to test the units in: {exc}")
    try:
        yield systemd
    finally:
        systemd.close()


@dataclass
class Scope:
    """Who installs and drives the unit: root and the system manager, or a user and theirs."""

    box: SystemdBox
    system: bool
    prefix: tuple[str, ...] = ()  # run as the user
    env: dict[str, str] = field(default_factory=dict)
    unit_dir: str = "/etc/systemd/system"
    config: str = "/etc/mavend/config.toml"

    @classmethod
    def user(cls, box: SystemdBox) -> Scope:
        home = box.run(["findmnt", "--noheadings", "--output", "FSTYPE", "/home"], check=False)
        assert home.stdout.strip() == "overlay", "the box has no private /home to add a user to"
        box.run(["useradd", "--create-home", "--home-dir", HOME, "--shell", "/bin/sh", USER])
        uid = box.run(["id", "-u", USER]).stdout.strip()
        box.systemctl("start", f"user@{uid}.service")  # its manager, as a login would
        return cls(
            box,
            system=False,
            prefix=("setpriv", f"--reuid={uid}", f"--regid={uid}", "--init-groups", "--"),
            env={"HOME": HOME, "USER": USER, "XDG_RUNTIME_DIR": f"/run/user/{uid}"},
            unit_dir=f"{HOME}/.config/systemd/user",
            config=f"{HOME}/.config/mavend/config.toml",
        )

    def write(self, path: str, text: str) -> None:
        self.box.write(path, text)
        if not self.system:
            self.box.run(["chown", "-R", f"{USER}:", HOME])

    def run(
        self, *argv: str, check: bool = False, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        return self.box.run([*self.prefix, *argv], env=self.env, check=check, timeout=timeout)

    def mavend(self, *args: str) -> subprocess.CompletedProcess[str]:
        scope = ["--system"] if self.system else []
        return self.run(str(MAVEND), "service", *args, *scope, timeout=60)

    def systemctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        user = [] if self.system else ["--user"]
        return self.run("systemctl", *user, "--no-pager", *args, check=check)

    def show(self, *props: str) -> dict[str, str]:
        out = self.systemctl("show", UNIT, *(f"--property={p}" for p in props)).stdout
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def journal(self) -> str:
        # (--user-unit= would only match entries of the caller's uid, root's)
        match = (
            ["-u", UNIT]
            if self.system
            else [f"_SYSTEMD_USER_UNIT={UNIT}", "+", f"USER_UNIT={UNIT}"]
        )
        argv = ["journalctl", "--no-pager", "-o", "short-monotonic", *match]
        return self.box.run(argv, check=False).stdout

    def lines(self, text: str) -> list[str]:
        return [line for line in self.journal().splitlines() if text in line]

    def until(
        self, what: str, check: Callable[[dict[str, str]], bool], timeout: float = 15
    ) -> dict[str, str]:
        deadline = time.monotonic() + timeout
        while True:
            state = self.show(*PROPS, "WatchdogTimestampMonotonic")
            if check(state):
                return state
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{what}: not within {timeout} s; {UNIT} is {state}\n{self.journal()}"
                )
            time.sleep(0.1)


def running(state: dict[str, str]) -> bool:
    return state["ActiveState"] == "active" and state["SubState"] == "running"


def exercise(scope: Scope) -> str:
    """Install, start, watchdog, reload, kill -9, hang, status, stop, uninstall; the first
    main PID."""
    box = scope.box
    scope.write(scope.config, CONFIG + ("" if scope.system else SLOW_ACT))
    scope.write(f"{scope.unit_dir}/{UNIT}.d/zz-test.conf", DROP_IN)

    # install: daemon-reload, enable --now; the start job returns on READY=1.
    started = time.monotonic()
    done = scope.mavend("install", "--now")
    assert done.returncode == 0, f"{done.stdout}{done.stderr}\n{scope.journal()}"
    assert "enabled and started" in done.stdout, done.stdout
    assert time.monotonic() - started < 20, scope.journal()
    assert scope.systemctl("is-enabled", UNIT).stdout.strip() == "enabled"
    state = scope.show(
        *PROPS,
        "StatusText",
        "Type",
        "WatchdogUSec",
        "FragmentPath",
        "DropInPaths",
        "MemoryMax",
        "ExecMainStartTimestampMonotonic",
    )
    assert running(state), f"{state}\n{scope.journal()}"
    assert state["Type"] == "notify" and state["StatusText"], state  # mavend's STATUS= line
    assert state["FragmentPath"] == f"{scope.unit_dir}/{UNIT}", state
    assert state["DropInPaths"].endswith("zz-test.conf"), state
    assert state["WatchdogUSec"] == "2s", state
    assert state["MemoryMax"] == str(3 << 30), state  # parsed; enforced: see above
    first = state["MainPID"]
    assert scope.lines(f"mavend[{first}]: mavend.daemon: mavend is running")
    uid = box.run(["awk", "/^Uid:/ {print $2}", f"/proc/{first}/status"]).stdout.strip()
    if scope.system:
        assert uid not in ("", "0"), f"DynamicUser=yes, yet mavend runs as uid {uid!r}"
    else:  # PrivateUsers=yes: a user namespace that maps the user's uid and nothing else
        uid_map = box.run(["cat", f"/proc/{first}/uid_map"]).stdout.split()
        assert uid_map == [uid, uid, "1"], f"uid {uid}, uid_map {uid_map}"

    # the watchdog: pinged from the event loop, the service outlives several periods.
    since = int(state["ExecMainStartTimestampMonotonic"])
    pinged = int(
        scope.until(
            "a WATCHDOG=1 ping", lambda s: int(s["WatchdogTimestampMonotonic"] or 0) > since
        )["WatchdogTimestampMonotonic"]
    )
    time.sleep(5)  # 2.5 watchdog periods
    state = scope.show(*PROPS, "WatchdogTimestampMonotonic")
    assert running(state) and state["MainPID"] == first and state["NRestarts"] == "0", state
    assert int(state["WatchdogTimestampMonotonic"]) > pinged + 2_000_000, state

    # reload: SIGHUP, RELOADING=1 ... READY=1, the same process.
    scope.systemctl("reload", UNIT)
    scope.until(
        "the reload",
        lambda s: (
            running(s)
            and bool(scope.lines(f"mavend[{first}]: mavend.daemon: configuration reloaded"))
        ),
    )
    state = scope.show(*PROPS, "ReloadResult")
    assert state["ReloadResult"] == "success" and state["MainPID"] == first, state

    # kill -9: Restart=on-failure starts a new one, which says READY=1 again.
    box.run(["kill", "-9", first])
    state = scope.until(
        "the restart after kill -9",
        lambda s: running(s) and s["NRestarts"] == "1" and s["MainPID"] not in ("0", first),
    )
    second = state["MainPID"]
    assert scope.lines("Main process exited, code=killed, status=9/KILL"), scope.journal()

    # a hung daemon (stopped: no pings) is aborted by the watchdog and restarted.
    box.run(["kill", "-STOP", second])
    scope.until(
        "the watchdog's restart of a stopped daemon",
        lambda s: running(s) and s["NRestarts"] == "2" and s["MainPID"] not in ("0", first, second),
    )
    assert scope.lines("Watchdog timeout"), scope.journal()

    # mavend's own view of it.
    status = scope.mavend("status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert "up to date" in status.stdout and "active: active" in status.stdout, status.stdout
    third = scope.show("MainPID")["MainPID"]

    if scope.system:
        # stop: SIGTERM, STOPPING=1, a clean exit.
        scope.systemctl("stop", UNIT)
    else:
        # stop while a turn waits to write: it finishes, its row is kept, then the exit.
        stop_during_a_write(scope, third, "remind me in 2 hours to water the basil",
                            "reminders", "text", "water the basil")
        # ... and while an act runs (8 s): its run is logged when it ends, then the exit.
        scope.systemctl("start", UNIT)
        third = scope.until("the start after the stop", running)["MainPID"]
        stop_during_a_write(scope, third, "skip this song", "act_runs", "name", "media_next")
    state = scope.show(*PROPS, "ExecMainStatus")
    assert state["ActiveState"] == "inactive" and state["SubState"] == "dead", state
    assert state["Result"] == "success" and state["ExecMainStatus"] == "0", state
    assert scope.lines(f"mavend[{third}]: mavend.daemon: mavend stopped"), scope.journal()

    done = scope.mavend("uninstall")
    assert done.returncode == 0, done.stdout + done.stderr
    assert box.run(["test", "-e", f"{scope.unit_dir}/{UNIT}"], check=False).returncode == 1
    assert scope.systemctl("is-enabled", UNIT, check=False).returncode != 0
    return first


# Run in the box as the user: holds the database's write lock (BEGIN IMMEDIATE), says one
# thing that writes a row, stops the unit while that turn waits for the lock, lets go once
# systemd is waiting for the daemon, and reports what came of it.
STOP_DURING_A_WRITE = """\
import json, sqlite3, subprocess, sys, time
db, mavend, said, table, column, words = sys.argv[1:7]
count = f"SELECT count(*) FROM {table} WHERE {column} LIKE ? AND {column} != ''"
held = sqlite3.connect(db, isolation_level=None, timeout=10)
held.execute("BEGIN IMMEDIATE")
before = held.execute(count, (f"%{words}%",)).fetchone()[0]
say = subprocess.Popen([mavend, "say", "--json", said], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
time.sleep(2.0)  # the turn is in the daemon, its write waiting on the lock
stop = subprocess.Popen(["systemctl", "--user", "stop", "mavend.service"])
time.sleep(0.5)
state = lambda: subprocess.run(
    ["systemctl", "--user", "show", "-p", "ActiveState", "--value", "mavend.service"],
    capture_output=True, text=True).stdout.strip()
waiting = state()  # "deactivating": systemd is waiting for the daemon's exit
held.execute("COMMIT")
held.close()
stop.wait(60)
out, err = say.communicate(timeout=60)
after = sqlite3.connect(db).execute(count, (f"%{words}%",)).fetchone()[0]
print(json.dumps({"before": before, "after": after, "waiting": waiting, "state": state(),
                  "say": say.returncode, "out": out, "err": err}))
"""


def stop_during_a_write(
    scope: Scope, pid: str, said: str, table: str, column: str, words: str
) -> None:
    """`systemctl stop` while the turn of `said` is still to write its row (`column` of
    `table` holding `words`): the row is kept, the reply given, the daemon waited for the
    turn and then exited cleanly."""
    script = f"{HOME}/stop_during_a_write.py"
    scope.write(script, STOP_DURING_A_WRITE)
    db = f"{HOME}/.local/share/mavend/mavend.sqlite3"
    env = {"DBUS_SESSION_BUS_ADDRESS": f"unix:path={scope.env['XDG_RUNTIME_DIR']}/bus"}
    done = scope.box.run(
        [*scope.prefix, sys.executable, script, db, str(MAVEND), said, table, column, words],
        env={**scope.env, **env}, timeout=120,
    )
    assert done.returncode == 0, f"{done.stdout}{done.stderr}\n{scope.journal()}"
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    journal = scope.journal()
    assert seen["waiting"] == "deactivating", f"{seen}\n{journal}"
    assert (seen["before"], seen["after"]) == (0, 1), f"{seen}\n{journal}"
    assert seen["say"] == 0 and seen["state"] == "inactive", f"{seen}\n{journal}"
    reply = json.loads(seen["out"])["reply"]["text"]
    assert "shutting down" not in reply.lower(), reply
    assert scope.lines(f"mavend[{pid}]: mavend.daemon: stopping: waiting up to"), journal
    assert scope.lines(f"mavend[{pid}]: mavend.daemon: mavend stopped"), journal


def test_the_system_unit_under_a_real_systemd(box: SystemdBox) -> None:
    scope = Scope(box, system=True)
    exercise(scope)
    assert scope.lines("D-Bus control API off")  # no session bus for a system service


def test_the_user_unit_under_a_real_user_manager(box: SystemdBox) -> None:
    scope = Scope.user(box)
    exercise(scope)
    assert scope.lines("D-Bus API: org.mavend.Assistant1")  # the user manager's bus
