"""The time resolver, family by family: clock times, weekdays, years.

Every phrase here was written for these tests, and every expected instant
worked out by hand from the rule of English it exercises (see the package
docstring of mavend.language.timeparse for the conventions: the nearest future
occurrence of a bare clock time, waking hours on a later day, "next friday" is
next week's...). The spans, parts of months and counts from tomorrow are in
test_timeparse_spans.py.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mavend.language.timeparse import find_time
from tests.timeparse_kit import MONTH_END, SAT_NIGHT, WED, YEAR_END, check, lon, ny

# --- clock times said as number pairs, "N to/past H", British "half seven" --------------

CLOCKS = [
    # At 14:20 a bare time is its next occurrence on a 12-hour clock.
    (WED, "remind me at seven thirty", lon(2025, 3, 12, 19, 30)),
    (WED, "eight fifteen", lon(2025, 3, 12, 20, 15)),
    (WED, "call the garage at 6 45 pm", lon(2025, 3, 12, 18, 45)),
    (WED, "ten oh five", lon(2025, 3, 12, 22, 5)),
    (WED, "at nine twenty", lon(2025, 3, 12, 21, 20)),
    (WED, "at two fifty", lon(2025, 3, 12, 14, 50)),
    (WED, "at two ten", lon(2025, 3, 13, 2, 10)),  # 02:10 and 14:10 have both passed
    (WED, "at eleven fifty nine", lon(2025, 3, 12, 23, 59)),
    (WED, "one fifteen", lon(2025, 3, 13, 1, 15)),
    (WED, "at twelve thirty", lon(2025, 3, 13, 12, 30)),  # twelve is noon
    (WED, "quarter to 5", lon(2025, 3, 12, 16, 45)),
    (WED, "twenty to nine", lon(2025, 3, 12, 20, 40)),
    (WED, "ten past eleven", lon(2025, 3, 12, 23, 10)),
    (WED, "5 minutes to 10 pm", lon(2025, 3, 12, 21, 55)),
    (WED, "five minutes past ten", lon(2025, 3, 12, 22, 5)),
    (WED, "half past seven", lon(2025, 3, 12, 19, 30)),
    (WED, "twenty five past three", lon(2025, 3, 12, 15, 25)),
    (WED, "at twenty-five past eight", lon(2025, 3, 12, 20, 25)),
    (WED, "a quarter to midnight", lon(2025, 3, 12, 23, 45)),
    (WED, "ten to noon", lon(2025, 3, 13, 11, 50)),
    (WED, "three minutes to six", lon(2025, 3, 12, 17, 57)),
    (WED, "a quarter after four", lon(2025, 3, 12, 16, 15)),
    (WED, "ten till six", lon(2025, 3, 12, 17, 50)),
    (WED, "at quarter to one", lon(2025, 3, 13, 0, 45)),
    (WED, "twenty past twelve", lon(2025, 3, 13, 12, 20)),
    # British "half seven" is half past seven
    (WED, "half seven", lon(2025, 3, 12, 19, 30)),
    (WED, "meet me at half four", lon(2025, 3, 12, 16, 30)),
    (WED, "at half six tomorrow", lon(2025, 3, 13, 18, 30)),  # a later day: 1-6 are pm
    (WED, "half eight tomorrow morning", lon(2025, 3, 13, 8, 30)),
    (WED, "tonight at half nine", lon(2025, 3, 12, 21, 30)),
    (WED, "monday at half ten", lon(2025, 3, 17, 10, 30)),
    (WED, "wake me at half six", lon(2025, 3, 13, 6, 30)),  # an alarm is a morning
    # with a day or a part of the day
    (WED, "at 7 30", lon(2025, 3, 12, 19, 30)),
    (WED, "seven thirty pm tomorrow", lon(2025, 3, 13, 19, 30)),
    (WED, "tomorrow at eight fifteen", lon(2025, 3, 13, 8, 15)),
    (WED, "quarter past nine tomorrow morning", lon(2025, 3, 13, 9, 15)),
    (WED, "friday at ten to seven in the evening", lon(2025, 3, 14, 18, 50)),
    (WED, "at seven in the evening", lon(2025, 3, 12, 19, 0)),
    (WED, "at 6 in the morning", lon(2025, 3, 13, 6, 0)),
    (WED, "nine o'clock tonight", lon(2025, 3, 12, 21, 0)),
    (WED, "set an alarm for six forty five", lon(2025, 3, 13, 6, 45)),
    (WED, "set an alarm for 6 45", lon(2025, 3, 13, 6, 45)),
    (WED, "wake me at quarter past seven", lon(2025, 3, 13, 7, 15)),
    # a dotted time that cannot be a date
    (WED, "at 4.45", lon(2025, 3, 12, 16, 45)),
    (WED, "tomorrow 7.45", lon(2025, 3, 13, 7, 45)),
    (WED, "at 19.15", lon(2025, 3, 12, 19, 15)),
    # the night the clocks go forward in London: 01:30 does not exist on Sunday
    (SAT_NIGHT, "at half one", datetime(2025, 3, 30, 1, 30, tzinfo=UTC)),
    (SAT_NIGHT, "at quarter to midnight", lon(2025, 3, 29, 23, 45)),
    (SAT_NIGHT, "ten past midnight", lon(2025, 3, 30, 0, 10)),
    (SAT_NIGHT, "tomorrow at half eight", lon(2025, 3, 30, 8, 30)),  # BST
    # month end and year end in New York
    (MONTH_END, "at twenty to eight", ny(2025, 1, 31, 19, 40)),
    (MONTH_END, "quarter past six", ny(2025, 2, 1, 6, 15)),
    (MONTH_END, "at ten oh five", ny(2025, 1, 31, 22, 5)),
    (MONTH_END, "tomorrow at half nine", ny(2025, 2, 1, 9, 30)),
    (YEAR_END, "at twenty five to midnight", ny(2025, 12, 31, 23, 35)),
    (YEAR_END, "at ten past one", ny(2026, 1, 1, 1, 10)),
    (YEAR_END, "at quarter to eleven", ny(2025, 12, 31, 22, 45)),
]


@pytest.mark.parametrize(("now", "text", "expected"), CLOCKS, ids=[t for _, t, _ in CLOCKS])
def test_clock_times(now: datetime, text: str, expected: datetime) -> None:
    check(now, text, expected)


# --- weekdays with modifiers and counts ------------------------------------------------

WEEKDAYS = [
    # WED is Wednesday 12 March 2025: this week runs Mon 10 - Sun 16.
    (WED, "this coming friday", lon(2025, 3, 14)),
    (WED, "this friday coming", lon(2025, 3, 14)),
    (WED, "next friday", lon(2025, 3, 21)),
    (WED, "friday next", lon(2025, 3, 21)),
    (WED, "monday next", lon(2025, 3, 17)),
    (WED, "friday after next", lon(2025, 3, 28)),
    (WED, "pay the rent the friday after next", lon(2025, 3, 28)),
    (WED, "wednesday after next", lon(2025, 3, 26)),
    (WED, "a week on tuesday", lon(2025, 3, 25)),
    (WED, "tuesday week", lon(2025, 3, 25)),
    (WED, "friday week", lon(2025, 3, 21)),
    (WED, "sunday week", lon(2025, 3, 23)),
    (WED, "a week on friday at 10am", lon(2025, 3, 21, 10)),
    (WED, "on thursday week at 3", lon(2025, 3, 20, 15)),
    (WED, "a fortnight on saturday", lon(2025, 3, 29)),
    (WED, "saturday fortnight", lon(2025, 3, 29)),
    (WED, "two fridays from now", lon(2025, 3, 21)),
    (WED, "three mondays from today", lon(2025, 3, 31)),
    (WED, "the second tuesday from now", lon(2025, 3, 25)),
    (WED, "the third friday from now", lon(2025, 3, 28)),
    (WED, "in two tuesdays", lon(2025, 3, 25)),
    (WED, "in two fridays at 4pm", lon(2025, 3, 21, 16)),
    (WED, "last friday of the month", lon(2025, 3, 28)),
    (WED, "the last friday in april", lon(2025, 4, 25)),
    (WED, "the first monday in april", lon(2025, 4, 7)),
    (WED, "the second thursday of next month", lon(2025, 4, 10)),
    (WED, "the friday after easter", lon(2025, 4, 25)),
    (WED, "the first monday after christmas", lon(2025, 12, 29)),
    (WED, "the tuesday before thanksgiving", lon(2025, 11, 25)),
    (WED, "a week from friday", lon(2025, 3, 21)),
    (WED, "two weeks from monday", lon(2025, 3, 31)),
    (WED, "monday in two weeks", lon(2025, 3, 24)),
    (WED, "friday the 21st", lon(2025, 3, 21)),
    # a weekday and a time, no "every" and no "at"
    (WED, "friday at 5", lon(2025, 3, 14, 17)),
    (WED, "thurs 5pm", lon(2025, 3, 13, 17)),
    (WED, "add the dentist to my calendar monday 10 15", lon(2025, 3, 17, 10, 15)),
    (WED, "monday 9am", lon(2025, 3, 17, 9)),
    (WED, "monday 9", lon(2025, 3, 17, 9)),
    (WED, "thursday 7 30 pm", lon(2025, 3, 13, 19, 30)),
    (WED, "saturday morning", lon(2025, 3, 15, 9)),
    (WED, "tuesday evening at 8", lon(2025, 3, 18, 20)),
    (WED, "next tuesday at twenty past two", lon(2025, 3, 18, 14, 20)),
    (WED, "on sunday", lon(2025, 3, 16)),
    # the weekday that is today
    (WED, "wednesday", lon(2025, 3, 19)),
    (WED, "wednesday at 6pm", lon(2025, 3, 12, 18)),
    (WED, "this wednesday", lon(2025, 3, 12, 15)),  # today, 09:00 has passed: next hour
    (WED, "next wednesday", lon(2025, 3, 19)),
    # Friday 31 January 2025: this week runs Mon 27 Jan - Sun 2 Feb.
    (MONTH_END, "friday", ny(2025, 2, 7)),
    (MONTH_END, "friday at 8pm", ny(2025, 1, 31, 20)),
    (MONTH_END, "next friday", ny(2025, 2, 7)),
    (MONTH_END, "friday after next", ny(2025, 2, 14)),
    (MONTH_END, "monday", ny(2025, 2, 3)),
    (MONTH_END, "tuesday week", ny(2025, 2, 11)),
    (MONTH_END, "the last friday of next month", ny(2025, 2, 28)),
    (MONTH_END, "the first tuesday of march", ny(2025, 3, 4)),
    # Wednesday 31 December 2025: this week runs Mon 29 Dec - Sun 4 Jan.
    (YEAR_END, "next monday", ny(2026, 1, 5)),
    (YEAR_END, "this saturday", ny(2026, 1, 3)),
    (YEAR_END, "a week on thursday", ny(2026, 1, 8)),
    (YEAR_END, "the second friday from now", ny(2026, 1, 9)),
    (YEAR_END, "the first monday of next month", ny(2026, 1, 5)),
]


@pytest.mark.parametrize(("now", "text", "expected"), WEEKDAYS, ids=[t for _, t, _ in WEEKDAYS])
def test_weekdays(now: datetime, text: str, expected: datetime) -> None:
    check(now, text, expected)


# --- a year said after the day and month ------------------------------------------------

YEARS = [
    (WED, "the fourth of july twenty twenty seven", lon(2027, 7, 4)),
    (WED, "march 3rd 2027", lon(2027, 3, 3)),
    (WED, "3 march 2027", lon(2027, 3, 3)),
    (WED, "the third of march, 2027", lon(2027, 3, 3)),
    (WED, "march the third, two thousand and twenty seven", lon(2027, 3, 3)),
    (WED, "march third twenty twenty seven at 5pm", lon(2027, 3, 3, 17)),
    (WED, "friday, march 5th 2027", lon(2027, 3, 5)),
    (WED, "the 5th of may 2026", lon(2026, 5, 5)),
    (WED, "may fifth twenty twenty six", lon(2026, 5, 5)),
    (WED, "january 1st, twenty twenty-eight", lon(2028, 1, 1)),
    (WED, "on the 1st of jan 2028", lon(2028, 1, 1)),
    (WED, "dec 31 2026", lon(2026, 12, 31)),
    (WED, "31 december 2026 at noon", lon(2026, 12, 31, 12)),
    (WED, "on the 14th of february 2026", lon(2026, 2, 14)),
    (WED, "the 2nd of december, 2025", lon(2025, 12, 2)),
    (WED, "the twenty first of april two thousand twenty six", lon(2026, 4, 21)),
    (WED, "april twenty first two thousand and twenty six at 10am", lon(2026, 4, 21, 10)),
    (WED, "sept 9 '27", lon(2027, 9, 9)),
    (WED, "march 3 '27", lon(2027, 3, 3)),
    (WED, "valentine's day 2027", lon(2027, 2, 14)),
    (WED, "christmas 2026", lon(2026, 12, 25)),
    # a month and a year: its first day
    (WED, "june 2027", lon(2027, 6, 1)),
    (WED, "in june of 2027", lon(2027, 6, 1)),
    (WED, "march 2028", lon(2028, 3, 1)),
    (WED, "march 4th of 2027", lon(2027, 3, 4)),
    (WED, "the 4th of march of 2027", lon(2027, 3, 4)),
    (WED, "march of next year", lon(2026, 3, 1)),
    # "next year" after a date or a month
    (WED, "march 3rd next year", lon(2026, 3, 3)),
    (WED, "the 3rd of march next year", lon(2026, 3, 3)),
    (WED, "next year on the 4th of july", lon(2026, 7, 4)),
    (WED, "in june next year", lon(2026, 6, 1)),
    # numeric dates: month first (US), day first when the first number is over 12,
    # and day first in the dotted European spelling
    (WED, "1/2/2027", lon(2027, 1, 2)),
    (WED, "11/3/2025", lon(2025, 11, 3)),
    (WED, "12/25/2026", lon(2026, 12, 25)),
    (WED, "25/12/2026", lon(2026, 12, 25)),
    (WED, "2027-01-02", lon(2027, 1, 2)),
    (WED, "2.1.2027", lon(2027, 1, 2)),
    # on New Year's Eve a date without a year is next year's
    (YEAR_END, "january 5th", ny(2026, 1, 5)),
    (YEAR_END, "january 5th 2026", ny(2026, 1, 5)),
    (YEAR_END, "march 3rd next year", ny(2026, 3, 3)),
    (YEAR_END, "next year", ny(2026, 1, 1)),
    (YEAR_END, "december 31st", ny(2025, 12, 31, 23)),  # today, past 09:00: the next hour
]


@pytest.mark.parametrize(("now", "text", "expected"), YEARS, ids=[t for _, t, _ in YEARS])
def test_years(now: datetime, text: str, expected: datetime) -> None:
    check(now, text, expected)


# --- words that look like these families but are no time --------------------------------

NOT_TIMES = [
    "cut the cake in half 2 times",
    "the tickets cost £4.50 each",
    "we march on regardless",
    "half the team was off",
    "I saw her yesterday",
    "yesterday at 5pm the bin was full",
    "the day before yesterday",
]


@pytest.mark.parametrize("text", NOT_TIMES)
def test_look_alikes_are_not_times(text: str) -> None:
    assert find_time(text, WED) is None
