"""`mavend service install|uninstall|status` and the shipped units, checked by
`systemd-analyze verify` (the real one; it must be installed: apt-get install systemd).

No systemd runs here, so `systemctl` is either absent from PATH or a small recording
stand-in; the units themselves are verified by systemd's own parser."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from mavend.cli.service import closed_to_others
from mavend.system.unit import (
    EXAMPLE_FILES,
    UnitPlan,
    render_example,
    render_unit,
    tmp_paths,
)

ROOT = Path(__file__).resolve().parent.parent
MAVEND = Path(sys.executable).parent / "mavend"
SYSTEMD_DIR = ROOT / "systemd"


def systemd_analyze() -> str:
    found = shutil.which("systemd-analyze")
    if found is None:
        pytest.fail(
            "systemd-analyze is not installed: apt-get install systemd (scripts/setup.sh test "
            "does); the unit files cannot be verified without it"
        )
    return found


def verify(unit: Path, *, user: bool, home: Path, tmp_path: Path) -> None:
    """`systemd-analyze [--user] verify UNIT`: exit 0 and not one complaint about it."""
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}
    done = subprocess.run(
        [systemd_analyze(), *(["--user"] if user else []), "verify", "--man=no", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    complaints = [line for line in (done.stdout + done.stderr).splitlines() if unit.name in line]
    assert done.returncode == 0 and not complaints, done.stdout + done.stderr


def fake_home(tmp_path: Path) -> Path:
    """A home with ~/.local/bin/mavend pointing at the real executable (the user unit's
    default ExecStart), so that verify finds a real program there."""
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True, exist_ok=True)
    link = home / ".local" / "bin" / "mavend"
    if not link.exists():
        link.symlink_to(MAVEND)
    return home


def fake_systemctl(tmp_path: Path, *, rc: int = 0, stderr: str = "") -> Path:
    """A `systemctl` stand-in that records its arguments: a bin dir to put first on PATH."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "systemctl"
    record = tmp_path / "systemctl.calls"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{record}"\n'
        f"{'echo ' + repr(stderr) + ' >&2' if stderr else ''}\n"
        f"exit {rc}\n"
    )
    script.chmod(0o755)
    return bin_dir


def calls(tmp_path: Path) -> list[str]:
    record = tmp_path / "systemctl.calls"
    return record.read_text().splitlines() if record.exists() else []


def mavend(
    *args: str, path: str, home: Path, tmp_path: Path, xdg_config: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path, "HOME": str(home)}
    env["XDG_CONFIG_HOME"] = str(xdg_config or tmp_path / "xdg-config")
    return subprocess.run([str(MAVEND), *args], capture_output=True, text=True, timeout=60, env=env)


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MAVEND_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MAVEND_MODELS_DIR", raising=False)
    return tmp_path


# the shipped units ---------------------------------------------------------------
def test_the_shipped_units_are_the_rendered_templates() -> None:
    for scope, name in EXAMPLE_FILES.items():
        assert (SYSTEMD_DIR / name).read_text() == render_example(scope), (
            f"systemd/{name} is stale: regenerate it with `.venv/bin/python -c "
            "'from mavend.system.unit import write_examples; write_examples()'`"
        )


def test_the_shipped_user_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    verify(SYSTEMD_DIR / "mavend.service", user=True, home=fake_home(tmp_path), tmp_path=tmp_path)


def test_the_shipped_system_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    # Its ExecStart is /usr/local/bin/mavend; verify wants a real program there.
    text = (SYSTEMD_DIR / "mavend-system.service").read_text()
    assert "ExecStart=/usr/local/bin/mavend run --no-audio\n" in text
    unit = tmp_path / "system" / "mavend.service"
    unit.parent.mkdir()
    unit.write_text(text.replace("/usr/local/bin/mavend", str(MAVEND)))
    verify(unit, user=False, home=fake_home(tmp_path), tmp_path=tmp_path)


def test_the_units_carry_the_contract() -> None:
    user = (SYSTEMD_DIR / "mavend.service").read_text().splitlines()
    system = (SYSTEMD_DIR / "mavend-system.service").read_text().splitlines()
    for lines in (user, system):
        for line in (
            "Type=notify",
            "Restart=on-failure",
            "RestartPreventExitStatus=2 3 4",
            "WatchdogSec=30",
            "TimeoutStopSec=30",
            "NoNewPrivileges=yes",
            "ProtectSystem=strict",
            "ProtectHome=read-only",
            "PrivateTmp=yes",
            "MemoryMax=3G",
        ):
            assert line in lines
        families = next(x for x in lines if x.startswith("RestrictAddressFamilies="))
        assert "AF_UNIX" in families and "AF_INET" not in families
    # The user unit's writable paths are where mavend.paths puts data and cache by default.
    assert "ReadWritePaths=%h/.local/share/mavend %h/.cache/mavend" in user
    assert "WantedBy=default.target" in user
    for line in (
        "DynamicUser=yes",
        "StateDirectory=mavend",
        "CacheDirectory=mavend",
        "ConfigurationDirectory=mavend",
        "Environment=MAVEND_DATA_DIR=%S/mavend",
        "Environment=MAVEND_CACHE_DIR=%C/mavend",
        "Environment=MAVEND_CONFIG_DIR=%E/mavend",
        "WantedBy=multi-user.target",
    ):
        assert line in system


def test_odd_paths_are_quoted_and_escaped() -> None:
    text = render_unit(
        UnitPlan(
            "user",
            ("/opt/my venv/bin/mavend",),
            config=Path("/etc/100%/$x.toml"),
            data_dirs=(Path("/srv/data dir"),),
            cache_dir=Path("/var/cache/m"),
        )
    )
    assert 'ExecStart="/opt/my venv/bin/mavend" --config /etc/100%%/$$x.toml run\n' in text
    assert 'ReadWritePaths="/srv/data dir" /var/cache/m\n' in text
    assert 'Environment="MAVEND_DATA_DIR=/srv/data dir"\n' in text


def test_a_system_unit_never_writes_a_home_path_as_percent_h() -> None:
    home_exe = str(Path.home() / "venv" / "bin" / "mavend")
    text = render_unit(UnitPlan("system", (home_exe,), models_dir=Path.home() / "models"))
    assert f"ExecStart={home_exe} run --no-audio\n" in text
    assert f"Environment=MAVEND_MODELS_DIR={Path.home() / 'models'}\n" in text
    assert "%h" not in text


# install ---------------------------------------------------------------------------
def test_install_writes_a_verified_unit_that_starts_this_mavend_and_enables_it(
    tmp_path: Path, dirs: Path
) -> None:
    home = fake_home(tmp_path)
    path = f"{fake_systemctl(tmp_path)}:{os.environ['PATH']}"
    done = mavend("service", "install", "--user", "--now", path=path, home=home, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    unit = tmp_path / "xdg-config" / "systemd" / "user" / "mavend.service"
    text = unit.read_text()
    assert f"ExecStart={MAVEND} run\n" in text
    assert f"Environment=MAVEND_DATA_DIR={tmp_path / 'data'}\n" in text
    assert f"Environment=MAVEND_CACHE_DIR={tmp_path / 'cache'}\n" in text
    assert f"ReadWritePaths={tmp_path / 'data'} {tmp_path / 'cache'}\n" in text
    assert (tmp_path / "data").is_dir() and (tmp_path / "cache").is_dir()
    assert calls(tmp_path) == ["--user daemon-reload", "--user enable --now mavend.service"]
    assert "enabled and started" in done.stdout
    verify(unit, user=True, home=home, tmp_path=tmp_path)

    # Again: nothing changes on disk.
    again = mavend("service", "install", "--now", path=path, home=home, tmp_path=tmp_path)
    assert again.returncode == 0 and "unchanged" in again.stdout
    assert unit.read_text() == text


def test_a_default_install_under_home_is_the_shipped_unit_but_for_exec_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = fake_home(tmp_path)
    for name in ("MAVEND_DATA_DIR", "MAVEND_CACHE_DIR", "MAVEND_CONFIG_DIR", "MAVEND_MODELS_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    done = mavend(
        "service", "install", "--print",
        path=os.environ["PATH"], home=home, tmp_path=tmp_path, xdg_config=home / ".config",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shipped = (SYSTEMD_DIR / "mavend.service").read_text()
    expected = shipped.replace("%h/.local/bin/mavend run", f"{MAVEND} run")
    # A checkout under /tmp (CI may clone it there) is bound into the service's private
    # /tmp: two lines more, right after PrivateTmp=yes, and nothing else differs.
    lines = done.stdout.splitlines(keepends=True)
    binds = [i for i, line in enumerate(lines) if line.startswith("BindReadOnlyPaths=")]
    assert bool(binds) == bool(tmp_paths((str(MAVEND), "run"))), done.stdout
    if binds:
        assert lines[binds[0] - 2] == "PrivateTmp=yes\n"
        del lines[binds[0] - 1 : binds[0] + 1]
    assert "".join(lines) == expected
    assert str(home / ".config" / "systemd" / "user" / "mavend.service") in done.stderr
    assert not (home / ".config" / "systemd").exists()  # --print writes nothing


def test_install_passes_the_config_file_on(tmp_path: Path, dirs: Path) -> None:
    config = tmp_path / "my config.toml"
    config.write_text("[storage]\ndata_dir = '" + str(tmp_path / "elsewhere") + "'\n")
    done = mavend(
        "--config", str(config), "service", "install", "--no-enable",
        path=os.environ["PATH"], home=fake_home(tmp_path), tmp_path=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "xdg-config" / "systemd" / "user" / "mavend.service").read_text()
    assert f'ExecStart={MAVEND} --config "{config}" run\n' in text
    # The config's data_dir is where the database goes: the sandbox must let it be written.
    assert f"ReadWritePaths={tmp_path / 'elsewhere'} {tmp_path / 'cache'}\n" in text


HOME_BY_MQTT = """
[mqtt]
host = "192.168.1.5"

[[devices]]
name = "desk lamp"
room = "study"
mqtt = "zigbee2mqtt/desk_lamp"
"""


def test_a_config_that_sends_to_a_host_opens_ip_for_it_and_names_it(
    tmp_path: Path, dirs: Path
) -> None:
    config = tmp_path / "home.toml"
    config.write_text(HOME_BY_MQTT)
    home = fake_home(tmp_path)
    done = mavend(
        "--config", str(config), "service", "install", "--no-enable",
        path=os.environ["PATH"], home=home, tmp_path=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    unit = tmp_path / "xdg-config" / "systemd" / "user" / "mavend.service"
    lines = unit.read_text().splitlines()
    assert "RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_INET6" in lines
    assert any("config sends to: 192.168.1.5" in line for line in lines)
    verify(unit, user=True, home=home, tmp_path=tmp_path)


def test_an_unused_broker_opens_nothing(tmp_path: Path, dirs: Path) -> None:
    # [mqtt] alone (no device, no mqtt act) sends nothing: the unit stays AF_UNIX only.
    config = tmp_path / "idle.toml"
    config.write_text('[mqtt]\nhost = "192.168.1.5"\n')
    done = mavend(
        "--config", str(config), "service", "install", "--print",
        path=os.environ["PATH"], home=fake_home(tmp_path), tmp_path=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "RestrictAddressFamilies=AF_UNIX AF_NETLINK\n" in done.stdout


def test_a_system_unit_allows_only_the_configured_addresses(tmp_path: Path) -> None:
    text = render_unit(
        UnitPlan(
            "system", (str(MAVEND),), network=("ha.lan", "192.168.1.5"),
            network_addresses=("192.168.1.7", "192.168.1.5"),
        )
    )  # fmt: skip
    lines = text.splitlines()
    assert "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6" in lines
    assert "IPAddressDeny=any" in lines
    assert "IPAddressAllow=localhost 192.168.1.7 192.168.1.5" in lines
    unit = tmp_path / "system" / "mavend.service"
    unit.parent.mkdir()
    unit.write_text(text)
    verify(unit, user=False, home=fake_home(tmp_path), tmp_path=tmp_path)


def test_a_host_that_could_inject_unit_lines_is_refused(tmp_path: Path, dirs: Path) -> None:
    config = tmp_path / "evil.toml"
    config.write_text(
        HOME_BY_MQTT.replace('"192.168.1.5"', '"x\\nExecStartPre=/bin/sh -c evil"')
    )
    done = mavend(
        "--config", str(config), "service", "install", "--print",
        path=os.environ["PATH"], home=fake_home(tmp_path), tmp_path=tmp_path,
    )  # fmt: skip
    assert done.returncode != 0
    assert "cannot write" in done.stderr and "ExecStartPre" not in done.stdout


def test_an_invalid_config_stops_install_with_exit_3(tmp_path: Path, dirs: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[storage]\nno_such_key = 1\n")
    done = mavend(
        "--config", str(config), "service", "install", "--no-enable",
        path=os.environ["PATH"], home=fake_home(tmp_path), tmp_path=tmp_path,
    )  # fmt: skip
    assert done.returncode == 3 and "no_such_key" in done.stderr
    assert not (tmp_path / "xdg-config" / "systemd").exists()


def test_without_systemctl_the_unit_is_written_and_the_message_says_how_to_enable(
    tmp_path: Path, dirs: Path
) -> None:
    bare = tmp_path / "bare-bin"
    bare.mkdir()
    done = mavend("service", "install", path=str(bare), home=fake_home(tmp_path), tmp_path=tmp_path)
    assert done.returncode == 5, done.stderr
    assert (tmp_path / "xdg-config" / "systemd" / "user" / "mavend.service").exists()
    assert "systemctl is not installed" in done.stderr
    assert "systemctl --user daemon-reload && systemctl --user enable --now mavend" in done.stderr


def test_without_a_user_manager_the_unit_is_written_and_exit_is_5(
    tmp_path: Path, dirs: Path
) -> None:
    bus_error = "Failed to connect to bus: No medium found"
    path = f"{fake_systemctl(tmp_path, rc=1, stderr=bus_error)}:{os.environ['PATH']}"
    done = mavend("service", "install", path=path, home=fake_home(tmp_path), tmp_path=tmp_path)
    assert done.returncode == 5
    assert bus_error in done.stderr and "the unit is written" in done.stderr
    assert (tmp_path / "xdg-config" / "systemd" / "user" / "mavend.service").exists()
    assert calls(tmp_path) == ["--user daemon-reload"]


def test_no_enable_writes_only(tmp_path: Path, dirs: Path) -> None:
    path = f"{fake_systemctl(tmp_path)}:{os.environ['PATH']}"
    done = mavend(
        "service", "install", "--no-enable", path=path, home=fake_home(tmp_path), tmp_path=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert calls(tmp_path) == []
    assert "to enable it: systemctl --user daemon-reload" in done.stdout


def test_system_install_into_a_unit_dir_is_verified(tmp_path: Path, dirs: Path) -> None:
    unit_dir = tmp_path / "units"
    done = mavend(
        "service", "install", "--system", "--unit-dir", str(unit_dir),
        path=os.environ["PATH"], home=fake_home(tmp_path), tmp_path=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    unit = unit_dir / "mavend.service"
    assert f"ExecStart={MAVEND} run --no-audio\n" in unit.read_text()
    verify(unit, user=False, home=fake_home(tmp_path), tmp_path=tmp_path)


def test_user_and_system_together_is_a_usage_error(tmp_path: Path, dirs: Path) -> None:
    done = mavend(
        "service", "install", "--user", "--system",
        path=os.environ["PATH"], home=fake_home(tmp_path), tmp_path=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2


# status and uninstall ----------------------------------------------------------------
def test_status_and_uninstall(tmp_path: Path, dirs: Path) -> None:
    home = fake_home(tmp_path)
    path = f"{fake_systemctl(tmp_path)}:{os.environ['PATH']}"
    missing = mavend("service", "status", path=path, home=home, tmp_path=tmp_path)
    assert missing.returncode == 1 and "not installed" in missing.stdout

    assert mavend("service", "install", path=path, home=home, tmp_path=tmp_path).returncode == 0
    status = mavend("service", "status", path=path, home=home, tmp_path=tmp_path)
    assert "up to date" in status.stdout, status.stdout + status.stderr

    unit = tmp_path / "xdg-config" / "systemd" / "user" / "mavend.service"
    unit.write_text(unit.read_text().replace(str(MAVEND), "/old/venv/bin/mavend"))
    stale = mavend("service", "status", path=path, home=home, tmp_path=tmp_path)
    assert stale.returncode == 1 and "differs" in stale.stdout

    (tmp_path / "systemctl.calls").unlink()
    gone = mavend("service", "uninstall", path=path, home=home, tmp_path=tmp_path)
    assert gone.returncode == 0, gone.stderr
    assert not unit.exists()
    assert calls(tmp_path) == ["--user disable --now mavend.service", "--user daemon-reload"]


def test_a_folder_closed_to_other_users_is_named() -> None:
    # The system unit runs as a dynamic user: it must pass every folder on the way.
    # (Not under tmp_path: pytest keeps its own base folder closed to others.)
    with tempfile.TemporaryDirectory() as base:
        top = Path(base)
        closed = top / "home"
        script = closed / "venv" / "bin" / "mavend"
        script.parent.mkdir(parents=True)
        script.write_text("#!/bin/sh\n")
        for folder in (top, closed, closed / "venv", script.parent):
            folder.chmod(0o755)
        script.chmod(0o755)
        link = top / "link-to-mavend"
        link.symlink_to(script)
        assert closed_to_others(link) is None
        closed.chmod(0o700)
        assert closed_to_others(link) == closed  # found through the link
        closed.chmod(0o755)
        script.chmod(0o700)
        assert closed_to_others(script) == script
