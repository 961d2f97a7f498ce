"""Where mavend keeps its files: XDG base directories via platformdirs.

Each can be overridden by an environment variable so tests and services can
point mavend at private directories without touching the user's home.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import PlatformDirs

APP_NAME = "mavend"
_dirs = PlatformDirs(APP_NAME, appauthor=False)


def _override(var: str, default: str) -> Path:
    value = os.environ.get(var)
    return Path(value).expanduser() if value else Path(default)


def config_dir() -> Path:
    return _override("MAVEND_CONFIG_DIR", _dirs.user_config_dir)


def default_config_path() -> Path:
    return config_dir() / "config.toml"


def data_dir() -> Path:
    return _override("MAVEND_DATA_DIR", _dirs.user_data_dir)


def cache_dir() -> Path:
    return _override("MAVEND_CACHE_DIR", _dirs.user_cache_dir)


def keep_recent(kept: Path, pattern: str, count: int) -> None:
    """Of the cache files matching `pattern` beside `kept`, keep the `count` most recently
    used (`kept` among them) and delete the rest. Two settings used in turn (USE alone and
    joined to e5; a home's acts and none) each found theirs gone when only one was kept."""
    others = [p for p in kept.parent.glob(pattern) if p != kept]
    others.sort(key=_mtime, reverse=True)
    for stale in others[max(count - 1, 0):]:
        stale.unlink(missing_ok=True)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # deleted by another process meanwhile
        return 0.0


def models_dir() -> Path:
    """The model cache; `MAVEND_MODELS_DIR` overrides it (tests, shared boxes)."""
    value = os.environ.get("MAVEND_MODELS_DIR")
    return Path(value).expanduser() if value else cache_dir() / "models"


def grammars_dir() -> Path:
    """The packaged command grammars (`grammars/` in the source tree)."""
    from mavend import grammars  # the top-level grammars/ folder, mapped into the package

    return Path(grammars.__path__[0])
