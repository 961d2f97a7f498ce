"""Shared fixtures. Real things are started for real: a private dbus-daemon,
real SQLite files in tmp dirs, the real pulled models (never fetched here)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def private_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own config and data dirs; the model cache is shared."""
    monkeypatch.setenv("MAVEND_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("MAVEND_DATA_DIR", str(tmp_path / "data"))
    # `mavend service install` writes its desktop entry and icon here, not in the real home.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.delenv("JOURNAL_STREAM", raising=False)
    return tmp_path


def require_model(name: str) -> Path:
    """The path of a pulled model, or a failed test that says how to get it."""
    from mavend.errors import ModelMissingError
    from mavend.models import require

    try:
        return require(name)
    except ModelMissingError as exc:
        pytest.fail(f"model {name!r} is missing: {exc}\nrun `mavend models pull` (make test does)")


BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


@pytest.fixture
def session_bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A private `dbus-daemon --session`, its address exported for the test."""
    daemon = shutil.which("dbus-daemon")
    if daemon is None:
        pytest.fail("dbus-daemon is not installed: apt-get install dbus (make test does)")
    # Our own config: a session bus with no service directories, so nothing is
    # D-Bus-activated behind the test's back (a dunst on the box, say).
    config = tmp_path / "bus.conf"
    config.write_text(BUS_CONFIG.format(socket=tmp_path / "bus"))
    proc = subprocess.run(
        [daemon, f"--config-file={config}", "--print-address=1", "--print-pid=1", "--fork"],
        capture_output=True,
        text=True,
        check=True,
        timeout=10,
    )
    address, pid = proc.stdout.split()[:2]
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    try:
        yield address
    finally:
        os.kill(int(pid), signal.SIGTERM)


@pytest.fixture
def no_session_bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "no-runtime"))


@pytest.fixture
def notification_server(session_bus: str) -> Iterator[object]:
    """A recording org.freedesktop.Notifications on the private session bus."""
    from tests.notify_server import NotificationServer

    server = NotificationServer(session_bus).start()
    try:
        yield server
    finally:
        server.stop()
