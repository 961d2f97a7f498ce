"""The time resolver on examples written for these tests (not from any eval set)."""

from __future__ import annotations

import time as clock
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from mavend.language.timeparse import TimeResolution, find_time, local_zone, resolve_time

BERLIN = ZoneInfo("Europe/Berlin")
# A Wednesday afternoon in Berlin (CET, +01:00).
WED = datetime(2025, 3, 12, 14, 20, tzinfo=BERLIN)


def at(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0) -> datetime:
    return datetime(y, mo, d, h, mi, s, tzinfo=BERLIN)


def found(text: str, now: datetime = WED) -> TimeResolution:
    result = find_time(text, now)
    assert result is not None, text
    return result


def resolved(phrase: str, now: datetime = WED) -> TimeResolution:
    result = resolve_time(phrase, now)
    assert result is not None, phrase
    return result


# --- durations ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("phrase", "seconds"),
    [
        ("5 min", 300),
        ("for ten minutes", 600),
        ("45 secs", 45),
        ("an hour and a half", 5400),
        ("half an hour", 1800),
        ("3 hrs", 10800),
        ("1 hour, 20 minutes and 5 seconds", 4805),
        ("a couple of hours", 7200),
        ("twenty-five minutes", 1500),
        ("2.5 hours", 9000),
        ("a quarter of an hour", 900),
    ],
)
def test_durations_resolve_to_now_plus_the_span(phrase: str, seconds: int) -> None:
    r = resolved(phrase)
    assert r.kind == "duration"
    assert r.duration == timedelta(seconds=seconds)
    assert r.when == WED + timedelta(seconds=seconds)


def test_a_timer_inside_an_utterance() -> None:
    r = found("please start a 12 minute timer for the eggs")
    assert r.duration == timedelta(minutes=12)
    assert r.phrase == "12 minute"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("remind me in two and a half hours", at(2025, 3, 12, 16, 50)),
        ("remind me in an hour and a half", at(2025, 3, 12, 15, 50)),
        ("ping me 40 minutes from now", at(2025, 3, 12, 15, 0)),
        ("in 3 days", at(2025, 3, 15, 14, 20)),
        ("in a fortnight", at(2025, 3, 26, 14, 20)),
        ("this time tomorrow", at(2025, 3, 13, 14, 20)),
    ],
)
def test_relative_offsets(text: str, expected: datetime) -> None:
    r = found(text)
    assert r.when == expected
    assert r.kind == "datetime"
    assert r.duration == expected - WED


# --- clock times and the am/pm rule ---------------------------------------------


def test_at_five_pm() -> None:
    r = resolved("at five pm")
    assert (r.when, r.kind) == (at(2025, 3, 12, 17), "time")


def test_a_phrase_inside_a_longer_utterance() -> None:
    text = "remind me to call mom at five pm please"
    r = found(text)
    assert r.phrase == "at five pm"
    assert r.phrase in text
    assert r.when == at(2025, 3, 12, 17)


def test_the_phrase_is_verbatim_from_the_input() -> None:
    text = "Remind me TOMORROW at 7:30 to feed the cat"
    r = found(text)
    assert r.phrase == "TOMORROW at 7:30"
    assert r.when == at(2025, 3, 13, 7, 30)


@pytest.mark.parametrize(
    ("now_hm", "expected"),
    [
        ((10, 0), at(2025, 3, 12, 17)),  # morning: 5 pm today is next
        ((18, 0), at(2025, 3, 13, 5)),  # evening: 5 am tomorrow is next
        ((3, 0), at(2025, 3, 12, 5)),  # small hours: 5 am today is next
    ],
)
def test_a_bare_hour_is_its_nearest_future_occurrence(
    now_hm: tuple[int, int], expected: datetime
) -> None:
    now = WED.replace(hour=now_hm[0], minute=now_hm[1])
    assert found("remind me at five", now).when == expected


def test_a_bare_hour_on_a_later_day_follows_waking_hours() -> None:
    assert found("friday at 4").when == at(2025, 3, 14, 16)
    assert found("friday at 9").when == at(2025, 3, 14, 9)


def test_part_of_day_settles_am_or_pm() -> None:
    assert found("at 8 in the morning").when == at(2025, 3, 13, 8)
    assert found("at 8 in the evening").when == at(2025, 3, 12, 20)
    assert found("tonight at 11").when == at(2025, 3, 12, 23)


def test_an_alarm_with_a_bare_hour_is_a_morning() -> None:
    assert found("wake me up at six thirty tomorrow").when == at(2025, 3, 13, 6, 30)


def test_tomorrow_at_7_30() -> None:
    r = resolved("tomorrow at 7:30")
    assert (r.when, r.kind) == (at(2025, 3, 13, 7, 30), "datetime")


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("half past seven", at(2025, 3, 12, 19, 30)),
        ("a quarter past seven", at(2025, 3, 12, 19, 15)),
        ("twenty five to nine", at(2025, 3, 12, 20, 35)),
        ("ten to six in the morning", at(2025, 3, 13, 5, 50)),
        ("seven oh five pm", at(2025, 3, 12, 19, 5)),
        ("18:45", at(2025, 3, 12, 18, 45)),
        ("0930", None),  # four bare digits are a count or a year, not a time
        ("at 0930", at(2025, 3, 13, 9, 30)),
        ("4.15pm", at(2025, 3, 12, 16, 15)),
    ],
)
def test_clock_phrases(phrase: str, expected: datetime | None) -> None:
    r = resolve_time(phrase, WED)
    assert (r.when if r else None) == expected


def test_noon_and_midnight() -> None:
    assert resolved("noon").when == at(2025, 3, 13, 12)  # 12:00 has passed today
    assert resolved("at noon", WED.replace(hour=9)).when == at(2025, 3, 12, 12)
    assert resolved("midnight").when == at(2025, 3, 13, 0)
    assert resolved("midnight tonight").when == at(2025, 3, 13, 0)


# --- dates --------------------------------------------------------------------------


def test_a_date_without_time_gets_the_default_hour() -> None:
    r = resolved("tomorrow")
    assert (r.when, r.kind) == (at(2025, 3, 13, 9), "date")
    r = resolve_time("on friday", WED, default_time=time(8, 30))
    assert r is not None and r.when == at(2025, 3, 14, 8, 30)


def test_today_after_the_default_hour_is_the_next_full_hour() -> None:
    assert resolved("today").when == at(2025, 3, 12, 15)


def test_next_monday_is_in_next_week() -> None:
    assert resolved("next monday").when == at(2025, 3, 17, 9)
    assert resolved("next friday").when == at(2025, 3, 21, 9)
    assert resolved("this friday").when == at(2025, 3, 14, 9)


def test_a_weekday_said_on_that_weekday_means_next_week() -> None:
    assert resolved("wednesday").when == at(2025, 3, 19, 9)
    # ...unless a time is given that is still ahead today
    assert resolved("wednesday at 6pm").when == at(2025, 3, 12, 18)
    assert resolved("wednesday at 10am").when == at(2025, 3, 19, 10)
    # The clock reads as on any named day: "at 9" is 09:00, next week's when it has
    # passed (it was 21:00 today: "remind me on wednesday at 9" set for tonight)
    assert resolved("on wednesday at 9").when == at(2025, 3, 19, 9)
    assert resolved("at 8 on wednesday").when == at(2025, 3, 19, 8)
    assert resolved("wednesday at 3").when == at(2025, 3, 12, 15)  # still ahead today
    assert resolved("wednesday evening at 8").when == at(2025, 3, 12, 20)


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("march 20th", date(2025, 3, 20)),
        ("the 2nd of february", date(2026, 2, 2)),  # passed this year: next year
        ("on the 31st", date(2025, 3, 31)),
        ("on the eleventh", date(2025, 4, 11)),
        ("12/24", date(2025, 12, 24)),
        ("2027-01-15", date(2027, 1, 15)),
        ("feb 29", date(2028, 2, 29)),
        ("the second monday of june", date(2025, 6, 9)),
        ("the last day of april", date(2025, 4, 30)),
        ("christmas eve", date(2025, 12, 24)),
        ("two weeks from tomorrow", date(2025, 3, 27)),
        ("the day after tomorrow at half past ten", date(2025, 3, 14)),
        ("in three business days", date(2025, 3, 17)),
        ("thursday the 17th", date(2025, 4, 17)),
        ("saturday july 12th", date(2025, 7, 12)),
    ],
)
def test_dates(phrase: str, expected: date) -> None:
    assert resolved(phrase).when.date() == expected


def test_date_and_time_in_either_order() -> None:
    expected = at(2025, 6, 3, 16, 30)
    assert resolved("june the third at half past four").when == expected
    assert resolved("4:30 pm on the 3rd of june").when == expected


def test_prefer_future_false_keeps_today() -> None:
    r = resolve_time("today at 8am", WED, prefer_future=False)
    assert r is not None and r.when == at(2025, 3, 12, 8)
    assert resolved("today at 8am").when == at(2025, 3, 13, 8)


# --- time zones and DST ----------------------------------------------------------


def test_spring_forward_in_berlin_counts_real_hours() -> None:
    evening = at(2025, 3, 29, 22, 0)  # CET; clocks jump 02:00 -> 03:00 tonight
    r = resolved("in 6 hours", evening)
    assert r.when == at(2025, 3, 30, 5, 0)
    assert r.when.utcoffset() == timedelta(hours=2)
    assert r.when.astimezone(UTC) - evening.astimezone(UTC) == timedelta(hours=6)
    assert r.duration == timedelta(hours=6)


def test_calendar_days_keep_the_wall_clock_across_dst() -> None:
    morning = at(2025, 3, 29, 10, 0)
    assert resolved("in 1 day", morning).when == at(2025, 3, 30, 10, 0)
    assert resolved("tomorrow at 9", morning).when.utcoffset() == timedelta(hours=2)


def test_a_time_inside_the_dst_gap_moves_forward() -> None:
    r = resolved("tomorrow at 2:30am", at(2025, 3, 29, 10, 0))
    assert r.when == datetime(2025, 3, 30, 1, 30, tzinfo=UTC)  # 03:30 CEST


def test_fall_back_in_berlin() -> None:
    night = at(2025, 10, 26, 1, 30)  # CEST; at 03:00 clocks go back to 02:00
    r = resolved("in 2 hours", night)
    assert r.duration == timedelta(hours=2)
    assert r.when.astimezone(UTC) == datetime(2025, 10, 26, 1, 30, tzinfo=UTC)


def test_a_named_zone_is_converted_to_the_callers() -> None:
    r = resolved("thursday 3pm utc")
    assert r.when == at(2025, 3, 13, 16, 0)


def test_results_are_in_nows_zone() -> None:
    tokyo = datetime(2025, 3, 12, 9, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
    r = resolved("at 6pm", tokyo)
    assert r.when.tzinfo == tokyo.tzinfo
    assert r.when == datetime(2025, 3, 12, 18, 0, tzinfo=ZoneInfo("Asia/Tokyo"))


def test_a_naive_now_is_taken_as_local_time() -> None:
    naive = datetime(2025, 3, 12, 14, 20)
    r = resolved("in 10 minutes", naive)
    assert r.when.tzinfo is not None
    assert r.when.replace(tzinfo=None) == datetime(2025, 3, 12, 14, 30)
    assert local_zone() is not None


# --- things that are not times ---------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "banana",
        "what is the weather like",
        "I have 3 kids and 2 dogs",
        "call me at 555 1234",
        "the meeting is in room 5",
        "book a table for 4",
        "😀🎉",
        "\x00\x01\x02\x1b[31m",
    ],
)
def test_garbage_finds_nothing(text: str) -> None:
    assert find_time(text, WED) is None


def test_garbage_phrase_resolves_to_none() -> None:
    assert resolve_time("blue elephants", WED) is None
    assert resolve_time("", WED) is None


def test_emoji_and_control_characters_around_a_time() -> None:
    r = found("⏰ remind me\tin 10 min\x00 to stretch 🧘")
    assert r.when == WED + timedelta(minutes=10)
    assert r.phrase == "in 10 min"


def test_curly_quotes_and_punctuation() -> None:
    assert found("remind me at 5 o’clock!").when == at(2025, 3, 12, 17)


@pytest.mark.parametrize(
    "text",
    [
        "x" * 10_000,
        "1 " * 5_000,
        "at 5 " * 2_000,
        "1 hour and " * 1_000,
        "😀" * 10_000,
        "9" * 10_000,
    ],
)
def test_ten_thousand_characters_in_bounded_time(text: str) -> None:
    started = clock.perf_counter()
    find_time(text, WED)
    resolve_time(text, WED)
    assert clock.perf_counter() - started < 2.0


def test_absurd_numbers_do_not_raise() -> None:
    assert resolve_time("in 99999999999 years", WED) is None
    assert resolve_time("in 99999999999999999999 seconds", WED) is None


def test_latency_is_well_under_50_ms() -> None:
    texts = ["remind me to call mom at five pm", "set a timer for ten minutes",
             "remind me next monday at 9", "in two and a half hours"] * 25
    durations = []
    for text in texts:
        started = clock.perf_counter()
        find_time(text, WED)
        durations.append(clock.perf_counter() - started)
    durations.sort()
    assert durations[int(len(durations) * 0.95)] < 0.05


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("remind me this weekend", at(2025, 3, 15, 9)),
        ("remind me next weekend", at(2025, 3, 22, 9)),
        ("wake me at dawn", at(2025, 3, 13, 6)),
        ("remind me on the second to pay rent", at(2025, 4, 2, 9)),
        ("remind me on 21, 7pm", at(2025, 3, 21, 19)),
        ("remind me the day after christmas", at(2025, 12, 26, 9)),
        ("remind me 3 weeks after new year's day", at(2026, 1, 22, 9)),
        ("remind me in two weeks on monday", at(2025, 3, 24, 9)),
        ("remind me the first monday of next month", at(2025, 4, 7, 9)),
    ],
)
def test_more_utterances(text: str, expected: datetime) -> None:
    assert found(text).when == expected


@pytest.mark.parametrize(
    "text",
    [
        "clean the first floor",
        "the third time is the charm",
        "sign up for the class you mentioned 2 days ago",
    ],
)
def test_ordinals_and_the_past_are_not_reminder_times(text: str) -> None:
    assert find_time(text, WED) is None


@pytest.mark.parametrize(
    ("said", "when"),
    [
        # "tonight" said after its 20:00 was tomorrow night; it is tonight's, passed, and
        # the reminder asks when
        ("remind me tonight to lock the car", "2026-12-06 20:00"),
        ("remind me this evening to call dad", "2026-12-06 19:00"),
        ("remind me tonight at 11 to put the bins out", "2026-12-06 23:00"),
        ("remind me tomorrow night to take the bins", "2026-12-07 21:00"),
    ],
)
def test_a_part_of_today_said_late_stays_today(said: str, when: str) -> None:
    late = datetime(2026, 12, 6, 22, 35, tzinfo=ZoneInfo("Europe/Berlin"))
    found = find_time(said, late)
    assert found is not None and f"{found.when:%Y-%m-%d %H:%M}" == when
