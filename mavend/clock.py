"""The user's clock: timezone-aware `now` in the configured (or local) zone."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import tzlocal

from mavend.errors import ConfigError


def user_timezone(name: str = "") -> tzinfo:
    """The IANA zone `name`, or the system's local zone when empty."""
    if not name:
        return tzlocal.get_localzone()
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"reminders.timezone: unknown time zone {name!r}") from exc


def system_clock(tz: tzinfo) -> Callable[[], datetime]:
    return lambda: datetime.now(tz)


def fixed_clock(at: datetime, tz: tzinfo) -> Callable[[], datetime]:
    """A clock stopped at `at` (naive values are read in `tz`): for --now and tests."""
    moment = at if at.tzinfo else at.replace(tzinfo=tz)
    return lambda: moment
