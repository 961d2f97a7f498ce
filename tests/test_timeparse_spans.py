"""The time resolver, family by family: days counted from tomorrow or yesterday,
parts of months, weeks and years, and fractions of hours and minutes.

Every phrase here was written for these tests, and every expected instant
worked out by hand from the rule of English it exercises (the conventions for
parts of a month or a week are in mavend/language/timeparse/parts.py). Clock
times, weekdays and years are in test_timeparse_families.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from mavend.language.timeparse import find_time
from tests.timeparse_kit import FALL_BACK, MONTH_END, SAT_NIGHT, WED, YEAR_END, check, lon, ny

# --- days counted from tomorrow or yesterday -------------------------------------------

FROM_TOMORROW = [
    (WED, "the day after tomorrow", lon(2025, 3, 14)),
    (WED, "day after tomorrow at 6", lon(2025, 3, 14, 18)),
    (WED, "the day after tomorrow in the evening", lon(2025, 3, 14, 19)),
    (WED, "the day after the day after tomorrow", lon(2025, 3, 15)),
    (WED, "two days after tomorrow", lon(2025, 3, 15)),
    (WED, "four days after tomorrow", lon(2025, 3, 17)),
    (WED, "three days from tomorrow", lon(2025, 3, 16)),
    (WED, "2 days from tomorrow at 9am", lon(2025, 3, 15, 9)),
    (WED, "a week from tomorrow", lon(2025, 3, 20)),
    (WED, "a week from tomorrow at noon", lon(2025, 3, 20, 12)),
    (WED, "a fortnight from tomorrow", lon(2025, 3, 27)),
    (WED, "a month from tomorrow", lon(2025, 4, 13)),
    (WED, "a week from yesterday", lon(2025, 3, 18)),
    (WED, "ten days from yesterday", lon(2025, 3, 21)),
    (WED, "two days after yesterday", lon(2025, 3, 13)),
    (WED, "three weeks from yesterday", lon(2025, 4, 1)),
    # British: "tomorrow week", "a week today"
    (WED, "tomorrow week", lon(2025, 3, 20)),
    (WED, "tomorrow week at 10am", lon(2025, 3, 20, 10)),
    (WED, "a week tomorrow", lon(2025, 3, 20)),
    (WED, "two weeks tomorrow", lon(2025, 3, 27)),
    (WED, "a week today", lon(2025, 3, 19)),
    (WED, "a fortnight tomorrow", lon(2025, 3, 27)),
    (WED, "tomorrow fortnight", lon(2025, 3, 27)),
    # the past is no time for a reminder
    (WED, "the day before yesterday", None),
    (WED, "yesterday", None),
    (WED, "I forgot yesterday, remind me tomorrow at 8", lon(2025, 3, 13, 8)),
    # across a month end and a year end
    (MONTH_END, "the day after tomorrow", ny(2025, 2, 2)),
    (MONTH_END, "a week from yesterday", ny(2025, 2, 6)),
    (MONTH_END, "tomorrow week", ny(2025, 2, 8)),
    (MONTH_END, "three days from tomorrow", ny(2025, 2, 4)),
    (MONTH_END, "a month from tomorrow", ny(2025, 3, 1)),
    (YEAR_END, "the day after tomorrow", ny(2026, 1, 2)),
    (YEAR_END, "a week tomorrow", ny(2026, 1, 8)),
    (YEAR_END, "two days after yesterday", ny(2026, 1, 1)),
    # the morning after the clocks go forward
    (SAT_NIGHT, "tomorrow at 9", lon(2025, 3, 30, 9)),
    (SAT_NIGHT, "a week tomorrow at 9am", lon(2025, 4, 6, 9)),
]


@pytest.mark.parametrize(
    ("now", "text", "expected"), FROM_TOMORROW, ids=[t for _, t, _ in FROM_TOMORROW]
)
def test_days_counted_from_tomorrow_or_yesterday(
    now: datetime, text: str, expected: datetime | None
) -> None:
    check(now, text, expected)


# --- ordinal weeks and parts of months, weeks and years ---------------------------------

PARTS = [
    (WED, "the first week of june", lon(2025, 6, 1)),
    (WED, "the second week of next month", lon(2025, 4, 8)),
    (WED, "the third week of april", lon(2025, 4, 15)),
    (WED, "the last week of march", lon(2025, 3, 25)),
    (WED, "the last week of february", lon(2026, 2, 22)),  # this year's has passed
    (WED, "the second week of june 2026", lon(2026, 6, 8)),
    (WED, "the first weekend of april", lon(2025, 4, 5)),
    (WED, "the last weekend of the month", lon(2025, 3, 29)),
    (WED, "mid march", lon(2025, 3, 15)),
    (WED, "late march", lon(2025, 3, 21)),
    (WED, "early april", lon(2025, 4, 1)),
    (WED, "in mid april", lon(2025, 4, 15)),
    (WED, "by mid-april", lon(2025, 4, 15)),
    (WED, "in late june", lon(2025, 6, 21)),
    (WED, "the middle of june", lon(2025, 6, 15)),
    (WED, "early next month", lon(2025, 4, 1)),
    (WED, "mid next month", lon(2025, 4, 15)),
    (WED, "late next month", lon(2025, 4, 21)),
    (WED, "the middle of next month", lon(2025, 4, 15)),
    (WED, "early in the month", lon(2025, 4, 1)),  # this month's start has passed
    (WED, "the end of the month", lon(2025, 3, 31)),
    (WED, "renew it by the end of the month", lon(2025, 3, 31)),
    (WED, "the end of the month at 5pm", lon(2025, 3, 31, 17)),
    (WED, "the end of next month", lon(2025, 4, 30)),
    (WED, "the end of june", lon(2025, 6, 30)),
    (WED, "the beginning of next month", lon(2025, 4, 1)),
    (WED, "the start of next month", lon(2025, 4, 1)),
    (WED, "the beginning of june", lon(2025, 6, 1)),
    (WED, "the start of the month", lon(2025, 4, 1)),
    (WED, "the last day of the month", lon(2025, 3, 31)),
    (WED, "the last day of next month", lon(2025, 4, 30)),
    (WED, "the middle of next week", lon(2025, 3, 19)),
    (WED, "the end of the week", lon(2025, 3, 14)),
    (WED, "end of next week", lon(2025, 3, 21)),
    (WED, "the beginning of next week", lon(2025, 3, 17)),
    (WED, "early next week", lon(2025, 3, 17)),
    (WED, "the week after next", lon(2025, 3, 24)),
    (WED, "the month after next", lon(2025, 5, 1)),
    (WED, "the end of the year", lon(2025, 12, 31)),
    (WED, "the beginning of next year", lon(2026, 1, 1)),
    (WED, "mid next year", lon(2026, 7, 1)),
    (WED, "by the end of 2026", lon(2026, 12, 31)),
    (WED, "early 2027", lon(2027, 1, 1)),
    # Friday 31 January: the middle of this week (Wed 29) has passed
    (MONTH_END, "the middle of the week", ny(2025, 2, 5)),
    (MONTH_END, "midweek", ny(2025, 2, 5)),
    (MONTH_END, "the end of the month", ny(2025, 1, 31, 19)),  # today, past 09:00
    (MONTH_END, "the end of next month", ny(2025, 2, 28)),
    (MONTH_END, "the first week of next month", ny(2025, 2, 1)),
    (MONTH_END, "the last week of next month", ny(2025, 2, 22)),
    (MONTH_END, "mid february", ny(2025, 2, 15)),
    (YEAR_END, "the end of the year", ny(2025, 12, 31, 23)),
    (YEAR_END, "the beginning of next year", ny(2026, 1, 1)),
    (YEAR_END, "early next month", ny(2026, 1, 1)),
    (YEAR_END, "the end of next week", ny(2026, 1, 9)),
]


@pytest.mark.parametrize(("now", "text", "expected"), PARTS, ids=[t for _, t, _ in PARTS])
def test_parts_of_months_weeks_and_years(now: datetime, text: str, expected: datetime) -> None:
    check(now, text, expected)


# --- fractions of hours and minutes ------------------------------------------------------

MIN = timedelta(minutes=1)

FRACTIONS = [
    (WED, "in half an hour", WED + 30 * MIN),
    (WED, "in a half hour", WED + 30 * MIN),
    (WED, "in a half-hour", WED + 30 * MIN),
    (WED, "half an hour from now", WED + 30 * MIN),
    (WED, "in 0.5 hours", WED + 30 * MIN),
    (WED, "in half a minute", WED + timedelta(seconds=30)),
    (WED, "in a quarter of an hour", WED + 15 * MIN),
    (WED, "in a quarter hour", WED + 15 * MIN),
    (WED, "a quarter of an hour from now", WED + 15 * MIN),
    (WED, "in three quarters of an hour", WED + 45 * MIN),
    (WED, "in 3/4 of an hour", WED + 45 * MIN),
    (WED, "in an hour and a half", WED + 90 * MIN),
    (WED, "in one and a half hours", WED + 90 * MIN),
    (WED, "in 1.5 hours", WED + 90 * MIN),
    (WED, "in 1 1/2 hours", WED + 90 * MIN),
    (WED, "in one point five hours", WED + 90 * MIN),
    (WED, "in one point two five hours", WED + 75 * MIN),
    (WED, "in one and a quarter hours", WED + 75 * MIN),
    (WED, "in an hour and three quarters", WED + 105 * MIN),
    (WED, "in two and three quarter hours", WED + 165 * MIN),
    (WED, "in 2 and a half hours", WED + 150 * MIN),
    (WED, "in 3 and a quarter hours", WED + 195 * MIN),
    (WED, "in two and a half minutes", WED + timedelta(seconds=150)),
    (WED, "in 2.5 minutes", WED + timedelta(seconds=150)),
    (WED, "in one and a half minutes", WED + timedelta(seconds=90)),
    (WED, "in a minute and a half", WED + timedelta(seconds=90)),
    (WED, "in ninety seconds", WED + timedelta(seconds=90)),
    (WED, "in a couple of hours", WED + 120 * MIN),
    (WED, "in a couple minutes", WED + 2 * MIN),
    (WED, "in a few minutes", WED + 3 * MIN),  # "a few" is three
    (WED, "in a few hours", WED + 180 * MIN),
    (WED, "in half a day", lon(2025, 3, 13, 2, 20)),
    (WED, "in a day and a half", lon(2025, 3, 14, 2, 20)),
    (WED, "in a couple of days", lon(2025, 3, 14, 14, 20)),
    # real time across the clock change: 23:10 GMT + 90 min is before it, + 150 after
    (SAT_NIGHT, "in an hour and a half", lon(2025, 3, 30, 0, 40)),
    (SAT_NIGHT, "in two and a half hours", datetime(2025, 3, 30, 1, 40, tzinfo=UTC)),
    (SAT_NIGHT, "in three quarters of an hour", lon(2025, 3, 29, 23, 55)),
    (FALL_BACK, "in an hour and a half", datetime(2025, 11, 2, 5, 0, tzinfo=UTC)),  # 01:00 EDT
    (FALL_BACK, "in two and a half hours", datetime(2025, 11, 2, 6, 0, tzinfo=UTC)),  # 01:00 EST
    (FALL_BACK, "tomorrow at half nine", ny(2025, 11, 2, 9, 30)),  # EST
]


@pytest.mark.parametrize(("now", "text", "expected"), FRACTIONS, ids=[t for _, t, _ in FRACTIONS])
def test_fractions_of_hours_and_minutes(now: datetime, text: str, expected: datetime) -> None:
    check(now, text, expected)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("three quarters of an hour", 2700),
        ("for an hour and a half", 5400),
        ("an hour and a quarter", 4500),
        ("two hours and a quarter", 8100),
        ("set a timer for two and a half minutes", 150),
        ("a timer for one and three quarter hours", 6300),
    ],
)
def test_fractions_in_plain_spans(text: str, seconds: int) -> None:
    got = find_time(text, WED)
    assert got is not None and got.kind == "duration", text
    assert got.duration == timedelta(seconds=seconds)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("mute for the next hour", 3600),
        ("keep the fan on over the next hour", 3600),
        ("lights off for the next day", 86400),
        ("mute for the hour", 3600),
    ],
)
def test_for_the_next_unit_is_a_while_of_one(text: str, seconds: int) -> None:
    got = find_time(text, WED)
    assert got is not None and got.kind == "duration", text
    assert got.duration == timedelta(seconds=seconds)


def test_in_the_next_hour_is_a_deadline_not_a_while() -> None:
    # "call me back in the next hour": some time within it, no instant to set.
    assert find_time("remind me in the next hour to call", WED) is None
