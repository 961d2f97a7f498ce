"""The time resolver on the families issue 24 names: clock times as two bare numbers,
minutes to or past a British half hour, a year after the day and month with "in", "coming"
with a weekday, dates with slashes, dots or dashes and the month as a word, fraction
glyphs, and "N <weekdays> later".

Every phrase was written for these tests, typed or said the way people do, and every
expected instant worked out by hand (conventions: mavend.language.timeparse's docstring). A
date without a time of day fires at 09:00.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.timeparse_kit import MONTH_END, SAT_NIGHT, WED, YEAR_END, check, lon, ny

# WED is Wednesday 12 March 2025, 14:20 in London; MONTH_END Friday 31 January 2025,
# 18:45 in New York; YEAR_END Wednesday 31 December 2025, 22:30 in New York; SAT_NIGHT
# Saturday 29 March 2025, 23:10 in London (clocks go forward at 01:00).

BARE_PAIRS = [
    (WED, "at ten twenty", lon(2025, 3, 12, 22, 20)),
    (WED, "remind me at eleven forty five", lon(2025, 3, 12, 23, 45)),
    (WED, "wake me up at six fifty", lon(2025, 3, 13, 6, 50)),
    (WED, "set an alarm for seven ten", lon(2025, 3, 13, 7, 10)),
    (WED, "call mum ten twenty tomorrow", lon(2025, 3, 13, 10, 20)),
    (WED, "the meeting is at three forty", lon(2025, 3, 12, 15, 40)),
    (WED, "friday nine thirty", lon(2025, 3, 14, 9, 30)),
    (WED, "at four oh five", lon(2025, 3, 12, 16, 5)),
    (WED, "um at like five fifteen", lon(2025, 3, 12, 17, 15)),
    (WED, "remind me ten twenty to take the bins out", lon(2025, 3, 12, 22, 20)),
    (WED, "dentist thursday at two forty", lon(2025, 3, 13, 14, 40)),
    (MONTH_END, "at eight fifteen", ny(2025, 1, 31, 20, 15)),
    (MONTH_END, "tomorrow at nine forty", ny(2025, 2, 1, 9, 40)),
    (MONTH_END, "at six fifty five", ny(2025, 1, 31, 18, 55)),  # still ahead tonight
    (YEAR_END, "at eleven fifty five", ny(2025, 12, 31, 23, 55)),
    (YEAR_END, "at twelve ten", ny(2026, 1, 1, 12, 10)),  # twelve is noon
]

HALF_HOURS = [
    (WED, "five past half three", lon(2025, 3, 12, 15, 35)),
    (WED, "ten to half four", lon(2025, 3, 12, 16, 20)),
    (WED, "twenty past half six", lon(2025, 3, 12, 18, 50)),
    (WED, "at five to half ten", lon(2025, 3, 12, 22, 25)),
    (WED, "ten past half eight tomorrow morning", lon(2025, 3, 13, 8, 40)),
    (WED, "five to half seven pm", lon(2025, 3, 12, 19, 25)),
    (WED, "pick me up at ten past half five", lon(2025, 3, 12, 17, 40)),
    (WED, "friday at five minutes to half nine", lon(2025, 3, 14, 9, 25)),
    (WED, "wake me at twenty to half seven", lon(2025, 3, 13, 7, 10)),
]

YEAR_WITH_IN = [
    (WED, "on the 5th of march in 2027", lon(2027, 3, 5)),
    (WED, "june 3rd in 2026", lon(2026, 6, 3)),
    (WED, "the tenth of may in twenty twenty six", lon(2026, 5, 10)),
    (WED, "on 4 july in 2026 at noon", lon(2026, 7, 4, 12, 0)),
    (WED, "renew the passport on march 1st in 2027", lon(2027, 3, 1)),
    (WED, "march the 3rd in 2027", lon(2027, 3, 3)),
    (WED, "the 9th of june in 2026 at half two", lon(2026, 6, 9, 14, 30)),
    (WED, "1st of may in 2026 in the evening", lon(2026, 5, 1, 19, 0)),
    (MONTH_END, "on february 2nd in 2027", ny(2027, 2, 2)),
    # "in" before a count is still a count
    (WED, "on the 14th in 2 hours", lon(2025, 3, 12, 16, 20)),
    (WED, "in 2 hours", lon(2025, 3, 12, 16, 20)),
]

COMING = [
    (WED, "this coming friday", lon(2025, 3, 14)),
    (WED, "coming monday", lon(2025, 3, 17)),
    (WED, "this coming saturday at 10", lon(2025, 3, 15, 10, 0)),
    (WED, "on the coming tuesday", lon(2025, 3, 18)),
    (WED, "this coming wednesday", lon(2025, 3, 19)),  # said on a Wednesday: not today
    (WED, "coming wednesday at 6pm", lon(2025, 3, 19, 18, 0)),
    (WED, "the upcoming thursday", lon(2025, 3, 13)),
    (WED, "this wednesday at 6pm", lon(2025, 3, 12, 18, 0)),  # "this" may be today
    (MONTH_END, "this coming friday", ny(2025, 2, 7)),
    (SAT_NIGHT, "this coming sunday at 9", lon(2025, 3, 30, 9, 0)),  # after the change: BST
]

SEPARATED_DATES = [
    (WED, "5-mar-2027", lon(2027, 3, 5)),
    (WED, "on 5/mar", lon(2026, 3, 5)),  # 5 March 2025 has passed
    (WED, "mar-20", lon(2025, 3, 20)),
    (WED, "20.march.2027", lon(2027, 3, 20)),
    (WED, "2027-03-05", lon(2027, 3, 5)),
    (WED, "on 05-Apr", lon(2025, 4, 5)),
    (WED, "Apr.5", lon(2025, 4, 5)),
    (WED, "april/5", lon(2025, 4, 5)),
    (WED, "5 apr. 2026", lon(2026, 4, 5)),
    (WED, "on 15.04.", lon(2025, 4, 15)),
    (WED, "12-apr-26", lon(2026, 4, 12)),
    (WED, "due 3 sept, 2026", lon(2026, 9, 3)),
    (WED, "sat 14-jun-2025", lon(2025, 6, 14)),
    (WED, "14/june", lon(2025, 6, 14)),
    (WED, "the gas bill 28-Mar", lon(2025, 3, 28)),
    (WED, "on 5 march, 10 am", lon(2026, 3, 5, 10, 0)),
    (WED, "5 mar 10am", lon(2026, 3, 5, 10, 0)),
    (MONTH_END, "Feb-14", ny(2025, 2, 14)),
    (YEAR_END, "on 2-jan", ny(2026, 1, 2)),
]

GLYPHS = [
    (WED, "in ½ hour", lon(2025, 3, 12, 14, 50)),
    (WED, "in 1½ hours", lon(2025, 3, 12, 15, 50)),
    (WED, "in ¾ of an hour", lon(2025, 3, 12, 15, 5)),
    (WED, "in 2¼ hours", lon(2025, 3, 12, 16, 35)),
    (WED, "in ¼ hour", lon(2025, 3, 12, 14, 35)),
    (WED, "in 1 ½ hours", lon(2025, 3, 12, 15, 50)),
    (WED, "remind me in ½ an hour", lon(2025, 3, 12, 14, 50)),
    (WED, "in 1½ days", lon(2025, 3, 14, 2, 20)),
    (WED, "in ⅓ of an hour", lon(2025, 3, 12, 14, 40)),
    (YEAR_END, "in 1½ hours", ny(2026, 1, 1, 0, 0)),
]

WEEKDAYS_LATER = [
    (WED, "two fridays later", lon(2025, 3, 21)),
    (WED, "3 mondays later", lon(2025, 3, 31)),
    (WED, "two tuesdays later at 6pm", lon(2025, 3, 25, 18, 0)),
    (WED, "a friday later", lon(2025, 3, 14)),
    (MONTH_END, "two saturdays later", ny(2025, 2, 8)),
]


APART = [
    # The day and the hour said apart, with the task between them.
    (WED, "remind me on friday to call bob at 3", lon(2025, 3, 14, 15, 0)),
    (WED, "tomorrow call the plumber at 9", lon(2025, 3, 13, 9, 0)),
    (WED, "on march 20 party at 8 pm", lon(2025, 3, 20, 20, 0)),
    (WED, "at 8 pm party on march 20", lon(2025, 3, 20, 20, 0)),
    (WED, "remind me on friday to call bob in the evening", lon(2025, 3, 14, 19, 0)),
    (WED, "um four saturdays later football at two", lon(2025, 4, 5, 14, 0)),
    (WED, "in 1⅓ hours", lon(2025, 3, 12, 15, 40)),
    (WED, "in 2 2/3 hours", lon(2025, 3, 12, 17, 0)),
    # an hour that names a thing is not when; two hours for one day: neither is taken
    (WED, "remind me tomorrow to check the 3 oclock train", lon(2025, 3, 13, 9, 0)),
    (WED, "remind me about my 9 am meeting tomorrow", lon(2025, 3, 13, 9, 0)),
    (WED, "tomorrow take the pills at 7 and at 8", lon(2025, 3, 13, 9, 0)),
]
EVENINGS = [
    # Dinner, drinks, the theatre: a bare hour is the evening (a later day read 7-11 as the
    # morning: "dinner with sam on friday at 8" was 08:00); a meeting keeps the morning,
    # an alarm wins, and am said stays am.
    (WED, "remind me about dinner with sam on friday at 8", lon(2025, 3, 14, 20, 0)),
    (WED, "drinks at 7 on saturday", lon(2025, 3, 15, 19, 0)),
    (WED, "the cinema at seven thirty tomorrow", lon(2025, 3, 13, 19, 30)),
    (WED, "book the table for supper thursday at 8", lon(2025, 3, 13, 20, 0)),
    (WED, "meeting at 8 on friday", lon(2025, 3, 14, 8, 0)),
    (WED, "wake me at 7 on friday for dinner prep", lon(2025, 3, 14, 7, 0)),
    (WED, "dinner at 8 am on friday", lon(2025, 3, 14, 8, 0)),
]


@pytest.mark.parametrize(
    ("now", "text", "expected"),
    [*APART, *BARE_PAIRS, *HALF_HOURS, *YEAR_WITH_IN, *COMING, *SEPARATED_DATES, *GLYPHS,
     *WEEKDAYS_LATER, *EVENINGS],
)  # fmt: skip
def test_the_families(now: datetime, text: str, expected: datetime) -> None:
    check(now, text, expected)


@pytest.mark.parametrize(
    "text",
    [
        "in 2030 minutes or so",
        "see you in 2030 or so minutes",
    ],
)
def test_a_count_after_in_is_not_read_as_a_year(text: str) -> None:
    from mavend.language.timeparse import find_time

    got = find_time(text, WED)
    assert got is None or got.when.year == 2025, (text, got)


def test_the_day_and_the_hour_apart_name_both_spans() -> None:
    from mavend.language.timeparse import find_time

    found = find_time("remind me on friday to call bob at 3", WED)
    assert found is not None and (found.phrase, found.also) == ("on friday", "at 3")
    alone = find_time("remind me on friday to call bob", WED)
    assert alone is not None and alone.also == ""
