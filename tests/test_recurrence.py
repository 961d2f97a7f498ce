"""mavend.recurrence: a spoken repeat read into an RRULE, its first and next occurrences
(real dateutil arithmetic, the user's IANA zone), and the rule said back in words."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from mavend.recurrence import Series, parse_series
from tests.state_kit import TZ

# A Wednesday afternoon.
NOW = datetime(2026, 12, 2, 15, 30, tzinfo=TZ)


def series_of(said: str, now: datetime = NOW, *, alarm: bool = False) -> Series:
    spoken = parse_series(said, now, alarm=alarm)
    assert spoken is not None, said
    assert spoken.series is not None, (said, spoken.error)
    return spoken.series


@pytest.mark.parametrize(
    ("said", "rule", "first", "words"),
    [
        ("remind me every monday to put the bins out", "FREQ=WEEKLY;BYDAY=MO",
         "2026-12-07 09:00", "every Monday at 09:00"),
        ("every monday and thursday at 7 go to the gym", "FREQ=WEEKLY;BYDAY=MO,TH",
         "2026-12-03 07:00", "every Monday and Thursday at 07:00"),
        ("on tuesdays and fridays at half past six pm call gran", "FREQ=WEEKLY;BYDAY=TU,FR",
         "2026-12-04 18:30", "every Tuesday and Friday at 18:30"),
        ("every day at 8 pm take the tablets", "FREQ=DAILY", "2026-12-02 20:00",
         "every day at 20:00"),
        ("each weekday at seven thirty leave for work", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
         "2026-12-03 07:30", "every weekday at 07:30"),
        ("at weekends at 10 water the garden", "FREQ=WEEKLY;BYDAY=SA,SU",
         "2026-12-05 10:00", "every Saturday and Sunday at 10:00"),
        ("every other week on friday clean the car", "FREQ=WEEKLY;INTERVAL=2;BYDAY=FR",
         "2026-12-04 09:00", "every other Friday at 09:00"),
        ("on the first of every month pay the rent", "FREQ=MONTHLY;BYMONTHDAY=1",
         "2027-01-01 09:00", "on the 1st of every month at 09:00"),
        ("every three hours drink some water", "FREQ=HOURLY;INTERVAL=3",
         "2026-12-02 18:30", "every 3 hours"),
        # "every couple of hours": two (it was a one-off reminder in two hours)
        ("every couple of hours drink some water", "FREQ=HOURLY;INTERVAL=2",
         "2026-12-02 17:30", "every 2 hours"),
        ("every couple of weeks on friday clean the car", "FREQ=WEEKLY;INTERVAL=2;BYDAY=FR",
         "2026-12-04 09:00", "every other Friday at 09:00"),
        ("every 45 minutes stand up", "FREQ=MINUTELY;INTERVAL=45",
         "2026-12-02 16:15", "every 45 minutes"),
        ("every morning at 7 open the blinds", "FREQ=DAILY", "2026-12-03 07:00",
         "every day at 07:00"),
        ("every evening at 9 lock the back door", "FREQ=DAILY", "2026-12-02 21:00",
         "every day at 21:00"),
        ("every year on the 3rd of april mum's birthday", "FREQ=YEARLY;BYMONTH=4;BYMONTHDAY=3",
         "2027-04-03 09:00", "every year on 3 April at 09:00"),
        ("every monday five times physio", "FREQ=WEEKLY;BYDAY=MO;COUNT=5",
         "2026-12-07 09:00", "every Monday at 09:00, 5 times in all"),
        # a day said with the repeat is where it starts (was: the 2nd, today's date)
        ("on friday at noon pay the rent every month", "FREQ=MONTHLY",
         "2026-12-04 12:00", "on the 4th of every month at 12:00"),
        ("water the plants every week starting saturday", "FREQ=WEEKLY;BYDAY=SA",
         "2026-12-05 09:00", "every Saturday at 09:00"),
        ("take the vitamins every day from the 10th at 8", "FREQ=DAILY",
         "2026-12-10 08:00", "every day at 08:00"),
        # an hourly repeat that keeps to the hours said (was: all night long)
        ("drink water every two hours between 9 and 5",
         "FREQ=DAILY;BYHOUR=9,11,13,15,17;BYMINUTE=0", "2026-12-02 17:00",
         "every 2 hours from 09:00 to 17:00"),
        ("stretch every hour from 8am to 8pm",
         "FREQ=DAILY;BYHOUR=8,9,10,11,12,13,14,15,16,17,18,19,20;BYMINUTE=0",
         "2026-12-02 16:00", "every hour from 08:00 to 20:00"),
        ("check the baby every 30 minutes between 10 and 2",
         "FREQ=DAILY;BYHOUR=10,11,12,13;BYMINUTE=0,30", "2026-12-03 10:00",
         "every 30 minutes from 10:00 to 13:30"),
        # the days said after "except" are taken out (it was every weekday, first on the
        # Friday it named, "except friday" the alarm's name)
        ("every weekday except friday at 7 am go running", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH",
         "2026-12-03 07:00", "every Monday, Tuesday, Wednesday and Thursday at 07:00"),
        ("every day but not saturday or sunday at 9 check the post",
         "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", "2026-12-03 09:00", "every weekday at 09:00"),
        # "except weekends" took the weekends for the repeat: the opposite of what was said
        ("every day except weekends at 7 walk the dog", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
         "2026-12-03 07:00", "every weekday at 07:00"),
        ("every day except at the weekend at 8 take the bins", "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
         "2026-12-03 08:00", "every weekday at 08:00"),
        ("every day but not weekdays at 10 lie in", "FREQ=WEEKLY;BYDAY=SA,SU",
         "2026-12-05 10:00", "every Saturday and Sunday at 10:00"),
        # An nth weekday of the month: it was monthly on today's date, the weekday kept
        # in the task ("pay the council tax on the last friday", on the 2nd of each month).
        ("pay the council tax on the last friday of every month", "FREQ=MONTHLY;BYDAY=-1FR",
         "2026-12-25 09:00", "on the last Friday of every month at 09:00"),
        ("on the first monday of each month check the smoke alarms", "FREQ=MONTHLY;BYDAY=1MO",
         "2026-12-07 09:00", "on the first Monday of every month at 09:00"),
        ("every month on the second tuesday at 7 pm the quiz", "FREQ=MONTHLY;BYDAY=2TU",
         "2026-12-08 19:00", "on the second Tuesday of every month at 19:00"),
        ("the 3rd wednesday of the month at 10 book club", "FREQ=MONTHLY;BYDAY=3WE",
         "2026-12-16 10:00", "on the third Wednesday of every month at 10:00"),
        # It was said "on the 2nd of 3 months".
        ("change the filter every 3 months on the 10th at 9", "FREQ=MONTHLY;INTERVAL=3",
         "2026-12-10 09:00", "on the 10th of every 3 months at 09:00"),
        ("move about every hour during the day",
         "FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16,17;BYMINUTE=0", "2026-12-02 16:00",
         "every hour from 09:00 to 17:00"),
    ],
)
def test_spoken_repeats_become_rrules(said: str, rule: str, first: str, words: str) -> None:
    series = series_of(said)
    assert series.rule == rule
    assert f"{series.start:%Y-%m-%d %H:%M}" == first
    assert series.describe() == words
    # The first occurrence is a real one of the rule, and never in the past.
    assert series.first() == series.start and series.start > NOW


def test_an_end_is_an_until_on_the_last_day_said() -> None:
    christmas = series_of("every day until christmas open the advent calendar")
    assert christmas.rule == "FREQ=DAILY;UNTIL=20261225T225959Z"
    assert christmas.describe() == "every day at 09:00, until 25 December"
    occurrences = []
    moment = NOW
    while (moment := christmas.after(moment)) is not None:
        occurrences.append(moment)
    assert occurrences[0] == datetime(2026, 12, 3, 9, tzinfo=TZ)
    assert occurrences[-1] == datetime(2026, 12, 25, 9, tzinfo=TZ) and len(occurrences) == 23
    weeks = series_of("every day for three weeks at 9 take the antibiotics")
    assert weeks.after(NOW + timedelta(weeks=3)) is None
    assert weeks.after(NOW + timedelta(weeks=3) - timedelta(days=1)) is not None
    june = series_of("water the tomatoes every day until the end of june")
    assert june.describe() == "every day at 09:00, until 30 June 2027"


def test_a_count_ends_after_that_many() -> None:
    physio = series_of("every monday 5 times physio exercises")
    dues = [physio.start]
    while (nxt := physio.after(dues[-1])) is not None:
        dues.append(nxt)
    assert [f"{d:%d %b}" for d in dues] == ["07 Dec", "14 Dec", "21 Dec", "28 Dec", "04 Jan"]


@pytest.mark.parametrize(
    ("said", "says"),
    [
        ("remind me every 30 february to celebrate", "February never has a 30th"),
        ("every thirty first of april do something", "April never has a 31st"),
        ("every day until yesterday stretch", "yesterday has passed"),
        ("every day until today at noon ... every day at 9 pm water", None),
    ],
)
def test_a_rule_that_can_never_fire_is_one_sentence(said: str, says: str | None) -> None:
    spoken = parse_series(said, NOW)
    assert spoken is not None
    if says is None:  # "until today" at 15:30 with a 21:00 clock still has one occurrence
        assert spoken.series is not None
        return
    assert spoken.series is None and says in spoken.error
    assert spoken.error.count(".") == 1 and "nothing was set" in spoken.error


def test_an_end_before_the_first_occurrence_never_fires() -> None:
    late = datetime(2026, 12, 2, 23, 0, tzinfo=TZ)
    spoken = parse_series("every day at 8 until today feed the fish", late)
    assert spoken is not None and spoken.series is None
    assert "nothing was set" in spoken.error


def test_no_repeat_words_is_no_series() -> None:
    for said in ("remind me tomorrow at 5 to call the bank", "set a timer for ten minutes",
                 "what's the weather every", "wake me up at 6:30"):
        assert parse_series(said, NOW) is None, said


def test_the_clock_without_am_or_pm_reads_by_waking_hours_or_the_part_of_day() -> None:
    assert f"{series_of('every friday at 5 pay the cleaner').start:%H:%M}" == "17:00"
    assert f"{series_of('every friday at 8 pay the cleaner').start:%H:%M}" == "08:00"
    assert f"{series_of('every evening at 6 feed the cat').start:%H:%M}" == "18:00"
    assert f"{series_of('every morning at 6 feed the cat').start:%H:%M}" == "06:00"
    assert f"{series_of('every day at 6 wake me up', alarm=True).start:%H:%M}" == "06:00"
    assert f"{series_of('every day at 19:15 news').start:%H:%M}" == "19:15"
    # am/pm glued to the number is said as plainly as with a space between.
    assert f"{series_of('every tuesday at 7pm bins').start:%H:%M}" == "19:00"
    assert f"{series_of('every sunday at 11am call grandma').start:%H:%M}" == "11:00"
    assert f"{series_of('every friday at 8p.m. pay the cleaner').start:%H:%M}" == "20:00"


def test_the_rest_of_the_words_keep_the_task_and_the_clock() -> None:
    spoken = parse_series("remind me every monday at 7 pm to take out the bins", NOW)
    assert spoken is not None and spoken.series is not None
    assert spoken.rest == "remind me at 7 pm to take out the bins"
    assert spoken.clock_phrase == "at 7 pm"


def test_a_window_keeps_to_its_hours_day_after_day() -> None:
    series = series_of("drink water every two hours between 9 and 5")
    moment, fired = NOW, []
    for _ in range(7):
        moment = series.after(moment)
        fired.append(f"{moment:%d %H:%M}")
    assert fired == ["02 17:00", "03 09:00", "03 11:00", "03 13:00", "03 15:00", "03 17:00",
                     "04 09:00"]


def test_the_start_days_words_leave_the_task() -> None:
    spoken = parse_series("remind me to water the plants every week starting saturday", NOW)
    assert spoken is not None and spoken.rest == "remind me to water the plants"
    spoken = parse_series("remind me to drink water every hour between 9 and 5", NOW)
    assert spoken is not None and spoken.rest == "remind me to drink water"


def test_a_day_named_in_passing_is_no_start() -> None:
    spoken = parse_series("every day except sunday at 8 walk the dog", NOW)
    assert spoken is not None and spoken.series is not None
    assert f"{spoken.series.start:%Y-%m-%d %H:%M}" == "2026-12-03 08:00"
    left = parse_series("every monday except monday stretch", NOW)
    assert left is not None and left.series is None and "no day" in left.error


def test_a_window_that_is_no_window_sets_nothing() -> None:
    spoken = parse_series("drink water every hour between 5 pm and 9 am", NOW)
    assert spoken is not None and spoken.series is None and "which hours" in spoken.error


def test_occurrences_keep_their_wall_clock_across_a_clock_change() -> None:
    march = datetime(2027, 3, 25, 12, 0, tzinfo=TZ)  # summer time starts on 28 March
    daily = series_of("every day at 7 stretch", march)
    before = daily.after(datetime(2027, 3, 27, 6, 0, tzinfo=TZ))
    after = daily.after(before)
    assert (f"{before:%d %H:%M}", f"{after:%d %H:%M}") == ("27 07:00", "28 07:00")
    # The lost hour (02:00 on the 28th): 23 real hours apart, and the clock says 07:00.
    assert after.timestamp() - before.timestamp() == timedelta(hours=23).total_seconds()
    # Stored and read back with a fixed offset (as ISO text is), it still keeps 07:00.
    stored = Series.of(daily.rule, datetime.fromisoformat(daily.start.isoformat()), TZ)
    assert f"{stored.after(datetime(2027, 3, 30, 8, 0, tzinfo=TZ)):%H:%M}" == "07:00"
