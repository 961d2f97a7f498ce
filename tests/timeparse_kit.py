"""Shared by the time-resolver family tests: zones, reference times and the check."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from mavend.language.timeparse import find_time

LONDON = ZoneInfo("Europe/London")
NEW_YORK = ZoneInfo("America/New_York")


def lon(y: int, mo: int, d: int, h: int = 9, mi: int = 0) -> datetime:
    return datetime(y, mo, d, h, mi, tzinfo=LONDON)


def ny(y: int, mo: int, d: int, h: int = 9, mi: int = 0) -> datetime:
    return datetime(y, mo, d, h, mi, tzinfo=NEW_YORK)


# Reference times. A date said without a time of day fires at 09:00.
WED = lon(2025, 3, 12, 14, 20)  # Wednesday afternoon, GMT
SAT_NIGHT = lon(2025, 3, 29, 23, 10)  # Saturday; at 01:00 GMT tonight clocks go to 02:00 BST
MONTH_END = ny(2025, 1, 31, 18, 45)  # Friday evening, the last day of January
YEAR_END = ny(2025, 12, 31, 22, 30)  # Wednesday, New Year's Eve
FALL_BACK = ny(2025, 11, 1, 23, 30)  # Saturday, EDT; at 02:00 tonight clocks go back to 01:00


def check(now: datetime, text: str, expected: datetime | None) -> None:
    got = find_time(text, now)
    if expected is None:
        assert got is None, (text, got)
        return
    assert got is not None, text
    # Instants compared in UTC: Python never finds a time in a repeated hour
    # (a DST fold) equal to one in another zone.
    assert got.when.astimezone(UTC) == expected.astimezone(UTC), (
        text, got.when.isoformat(), expected.isoformat()
    )
    if expected.tzinfo is not UTC:  # the wall clock too, not only the instant
        assert got.when.utcoffset() == expected.utcoffset(), text
    assert got.phrase and got.phrase in text
