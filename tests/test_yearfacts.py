"""Where a day falls in its year, worked out: ISO weeks at the year's edges, leap years,
the last day of a month."""

from __future__ import annotations

from datetime import datetime

import pytest

from mavend.answers import yearfacts
from tests.state_kit import TZ


def asked(text: str, day: str) -> str:
    question = yearfacts.parse(text)
    assert question is not None, text
    return yearfacts.answer(question, datetime.fromisoformat(day).replace(tzinfo=TZ)).text


@pytest.mark.parametrize(
    ("text", "day", "said"),
    [
        # ISO 8601: 1 January 2027 is a Friday, so it is still week 53 of 2026
        ("what week is it", "2027-01-01T10:00", "It's week 53 of 2026."),
        ("what week number is it", "2027-01-04T10:00", "It's week 1 of 2027."),
        ("what day of the year is it", "2028-12-31T10:00", "Today is day 366 of 366 in 2028."),
        ("how many days are left in the month", "2027-02-28T10:00",
         "Today is the last day of February."),
        ("how many days left in the year", "2026-12-30T10:00",
         "There is 1 day left in 2026 after today."),
        ("how many weeks are left in the year", "2026-12-17T10:00",
         "There are 2 weeks left in 2026 after today."),
        ("which quarter is it", "2027-04-01T10:00", "It's the second quarter of 2027."),
    ],
)
def test_year_facts(text: str, day: str, said: str) -> None:
    assert asked(text, day) == said


@pytest.mark.parametrize(
    "text", ["what week is the bin collection", "what day is it", "how many days left on my "
             "timer", "what day of the week is christmas"])
def test_other_questions_are_not_year_facts(text: str) -> None:
    assert yearfacts.parse(text) is None
