"""mavend's desktop entry and icon, installed for the user.

Notification servers identify an application by its desktop entry: mavend sends
the `desktop-entry` hint "mavend" with every notification (`mavend.desktop.notify`), and
GNOME and KDE look up `mavend.desktop` to name the sender, show its icon, group
its notifications and list it in their notification settings. `mavend service
install` (user scope) writes both files to the XDG data home; `uninstall`
removes them. Packagers install `mavend/data/desktop/*` to the system data dirs
themselves.
"""

from __future__ import annotations

import os
import tempfile
from importlib import resources
from pathlib import Path

import platformdirs

from mavend.errors import MavendError

APP_ID = "mavend"  # the desktop file's name without ".desktop", and the icon's name

# (file in the package's data/desktop, where it goes under the XDG data home)
_FILES = (
    (f"{APP_ID}.desktop", Path("applications") / f"{APP_ID}.desktop"),
    # Scalable, so one file serves every size; hicolor is the theme every theme falls back to.
    (f"{APP_ID}.svg", Path("icons") / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"),
)


def data_home() -> Path:
    """$XDG_DATA_HOME, or ~/.local/share."""
    return Path(platformdirs.user_data_dir())


def install_desktop_files(home: Path | None = None) -> list[Path]:
    """Write the desktop entry and the icon under `home` (the XDG data home); their paths.

    Raises MavendError when a file cannot be written.
    """
    home = data_home() if home is None else home
    package = resources.files("mavend.data") / "desktop"
    written = []
    for name, relative in _FILES:
        target = home / relative
        try:
            _write_atomically(target, (package / name).read_bytes())
        except OSError as exc:
            raise MavendError(f"cannot write {target}: {exc.strerror or exc}") from exc
        written.append(target)
    return written


def uninstall_desktop_files(home: Path | None = None) -> list[Path]:
    """Remove what `install_desktop_files` wrote; the paths that were there.

    Raises MavendError when one cannot be removed.
    """
    home = data_home() if home is None else home
    removed = []
    for _, relative in _FILES:
        target = home / relative
        try:
            target.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise MavendError(f"cannot remove {target}: {exc.strerror or exc}") from exc
        removed.append(target)
    return removed


def _write_atomically(target: Path, data: bytes) -> None:
    # A desktop environment watches these folders: it must never read half a file.
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
