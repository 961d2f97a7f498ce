"""Reminders, notifications, memory, storage, models and logging."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import (
    Field,
)

from mavend import paths
from mavend.config.base import (
    Name,
    Positive,
    Probability,
    _settings,
)


@_settings
class ReminderSettings:
    timezone: str = ""  # "" = the system's local zone; else an IANA name like "Europe/Berlin"
    default_hour: int = Field(default=9, ge=0, le=23)  # for "tomorrow" with no time of day
    snooze_minutes: int = Field(default=10, ge=1, le=1440)
    # Reminders missed while the daemon was down still fire at start-up, marked
    # late, if they are at most this old (seconds).
    misfire_grace_s: int = Field(default=7 * 24 * 3600, ge=1)


@_settings
class NotificationSettings:
    enabled: bool = True
    app_name: str = "mavend"
    # An icon-theme name ("mavend": `mavend service install` installs it) or a file:// URI.
    icon: str = "mavend"
    urgency: Literal["low", "normal", "critical"] = "normal"
    timeout_ms: int = Field(default=-1, ge=-1)  # -1 = the server's default
    max_body_chars: int = Field(default=1000, ge=20, le=100000)
    retry_s: Positive = 30.0


@_settings
class MemorySettings:
    enabled: bool = True
    scope: Name = "owner"  # whose habits this daemon learns and reads
    recall_max_items: int = Field(default=5, ge=0, le=50)
    recall_item_chars: int = Field(default=180, ge=20, le=2000)
    recall_max_chars: int = Field(default=600, ge=20, le=10000)
    habit_confidence: Probability = 0.7
    # User-confirmed records a habit needs before it may settle an unclear turn.
    habit_min_support: int = Field(default=2, ge=1, le=100)
    # A "no, I meant ..." counts as a correction of the previous turn within this many seconds.
    correction_window_s: Positive = 120.0
    # Habit records kept (the oldest are dropped first); repairs are few and all kept.
    max_records: int = Field(default=5000, ge=10, le=1000000)


@_settings
class StorageSettings:
    data_dir: str = ""  # "" = the XDG data dir (MAVEND_DATA_DIR overrides)
    database: str = "mavend.sqlite3"  # relative to data_dir

    def data_path(self) -> Path:
        return Path(self.data_dir).expanduser() if self.data_dir else paths.data_dir()

    def database_path(self) -> Path:
        db = Path(self.database).expanduser()
        return db if db.is_absolute() else self.data_path() / db


@_settings
class ModelSettings:
    dir: str = ""  # "" = MAVEND_MODELS_DIR, else the XDG cache dir
    profile: str = "default"

    def models_path(self) -> Path:
        return Path(self.dir).expanduser() if self.dir else paths.models_dir()


@_settings
class LoggingSettings:
    level: Literal["debug", "info", "warning", "error"] = "info"
