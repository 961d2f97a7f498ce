"""mavend's desktop entry and icon: valid as shipped (checked by the real
`desktop-file-validate`: apt-get install desktop-file-utils, which `make test`
does), and installed and removed by `mavend service install|uninstall`."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from mavend.desktop.entry import APP_ID, install_desktop_files, uninstall_desktop_files
from tests.test_service import fake_home, fake_systemctl, mavend

DATA = Path(__file__).resolve().parent.parent / "mavend" / "data" / "desktop"
ENTRY = DATA / f"{APP_ID}.desktop"
ICON = DATA / f"{APP_ID}.svg"


def test_the_desktop_entry_passes_desktop_file_validate() -> None:
    validate = shutil.which("desktop-file-validate")
    if validate is None:
        pytest.fail(
            "desktop-file-validate is not installed: apt-get install desktop-file-utils "
            "(scripts/setup.sh test does)"
        )
    done = subprocess.run([validate, str(ENTRY)], capture_output=True, text=True, timeout=30)
    # Not one error, and not one hint or warning either.
    assert done.returncode == 0 and not (done.stdout + done.stderr).strip(), done.stdout


def test_the_desktop_entry_says_what_notification_servers_read() -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read_string(ENTRY.read_text(encoding="utf-8"))
    entry = parser["Desktop Entry"]
    assert (entry["Type"], entry["Name"], entry["Exec"]) == ("Application", "mavend", "mavend run")
    assert entry["Icon"] == APP_ID  # the icon installed next to it, by name
    assert entry["X-GNOME-UsesNotifications"] == "true"  # listed in GNOME's settings
    assert entry["NoDisplay"] == "true"  # a daemon: not in the menus
    assert entry["Categories"] == "Utility;" and entry["Comment"]


def test_the_icon_is_a_square_scalable_svg() -> None:
    root = ET.parse(ICON).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox") == "0 0 128 128"
    assert root.get("width") == root.get("height") == "128"


def test_install_writes_both_files_and_uninstall_removes_them(tmp_path: Path) -> None:
    share = tmp_path / "share"
    entry = share / "applications" / "mavend.desktop"
    icon = share / "icons" / "hicolor" / "scalable" / "apps" / "mavend.svg"
    assert install_desktop_files(share) == [entry, icon]
    assert entry.read_bytes() == ENTRY.read_bytes() and icon.read_bytes() == ICON.read_bytes()
    assert install_desktop_files(share) == [entry, icon]  # again: the same, no leftovers
    assert sorted(p.name for p in entry.parent.iterdir()) == ["mavend.desktop"]
    assert uninstall_desktop_files(share) == [entry, icon]
    assert not entry.exists() and not icon.exists()
    assert uninstall_desktop_files(share) == []


def test_service_install_and_uninstall_install_and_remove_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    share = tmp_path / "xdg-data"
    monkeypatch.setenv("XDG_DATA_HOME", str(share))
    monkeypatch.setenv("MAVEND_CACHE_DIR", str(tmp_path / "cache"))
    entry = share / "applications" / "mavend.desktop"
    icon = share / "icons" / "hicolor" / "scalable" / "apps" / "mavend.svg"
    home = fake_home(tmp_path)
    path = f"{fake_systemctl(tmp_path)}:{os.environ['PATH']}"

    done = mavend("service", "install", "--no-enable", path=path, home=home, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"wrote {entry} {icon}" in done.stdout
    assert entry.read_bytes() == ENTRY.read_bytes() and icon.read_bytes() == ICON.read_bytes()

    gone = mavend("service", "uninstall", path=path, home=home, tmp_path=tmp_path)
    assert gone.returncode == 0, gone.stderr
    assert f"removed {entry}" in gone.stdout and f"removed {icon}" in gone.stdout
    assert not entry.exists() and not icon.exists()
