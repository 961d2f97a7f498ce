"""The everyday-request suite: what people ask a speaker, judged by the end state.

Every case in tests/data/everyday/*.jsonl is said over D-Bus to the real daemon with the
real router (grammar, the real classifier, the real local LLM under the default policy)
and judged by the rows it leaves (act runs, pending reminders, list items, notes, facts)
and the facts in its reply (tests/everyday_kit.py). Nothing is scripted. The bar: 97 %
of all cases, 90 % of every family, and every negation case (the assistant never does
the opposite of what was said).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from mavend.state.store import MIGRATIONS
from tests.everyday_checks import TZ, check, read_state
from tests.everyday_kit import (
    FAMILIES,
    CaseResult,
    failure_text,
    load_cases,
    run_suite,
    table,
)

OVERALL_BAR = 0.97
FAMILY_BAR = 0.90
MUST_ALL_PASS = ("negation",)


def test_the_cases_are_many_varied_and_well_formed() -> None:
    """At least 300 cases, 20 a family, unique ids, every turn a non-empty utterance."""
    cases = load_cases()
    assert len(cases) >= 300, len(cases)
    for family in FAMILIES:
        mine = [c for c in cases if c.family == family]
        assert len(mine) >= 20, f"{family}: {len(mine)} cases"
        said = [t.say for c in mine for t in c.turns]
        assert all(s.strip() for s in said), family
    # Every case says what it must leave: an end state or the reply's facts.
    for case in cases:
        judged = dict(case.expect)
        for turn in case.turns:
            judged.update(turn.expect or {})
        assert judged, f"{case.id} checks nothing"


def database(tmp_path: Path, migrations: int = len(MIGRATIONS)) -> Path:
    """A database file with the project's own migrations (the first `migrations`)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "mavend.sqlite3"
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        for statements in MIGRATIONS[:migrations]:
            for statement in statements:
                db.execute(statement)
    return path


def add_reminder(path: Path, text: str, at: datetime, **columns: object) -> None:
    values = {"text": text, "kind": "reminder", "fire_at": at.isoformat(),
              "fire_ts": at.timestamp(), "tz": "Europe/Berlin",
              "created_at": at.isoformat(), **columns}
    names = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute(f"INSERT INTO reminders ({names}) VALUES ({marks})", list(values.values()))


def reply(text: str, outcome: str = "done") -> dict[str, object]:
    return {"reply": {"text": text, "outcome": outcome}}


def test_the_judge_sees_an_act_that_ran_after_a_negation(tmp_path: Path) -> None:
    path = database(tmp_path)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute(
            "INSERT INTO act_runs (at, at_ts, name, argv) VALUES ('', 0, 'lock_screen', '[]')"
        )
    problems = check({"nothing": True}, reply("Done: screen locked"), read_state(path),
                     datetime.now(TZ))
    assert problems[0] == "acts ran: ['lock_screen']", problems


def test_the_judge_reads_the_fire_time_not_the_reply(tmp_path: Path) -> None:
    """'wake me up at 6:30 tomorrow' left at 18:30: wrong, whatever the reply says."""
    path = database(tmp_path)
    now = datetime.now(TZ)
    evening = (now + timedelta(days=1)).replace(hour=18, minute=30, second=0, microsecond=0)
    add_reminder(path, "alarm", evening)
    want = {"reminders": [{"local": "06:30", "day": "+1"}]}
    problems = check(want, reply("Alarm set for 06:30 tomorrow."), read_state(path), now)
    assert any("fires at 18:30 not 06:30" in p for p in problems), problems
    morning = evening.replace(hour=6)
    path = database(tmp_path / "right")
    add_reminder(path, "alarm", morning)
    assert check(want, reply("Alarm set for 06:30 tomorrow."), read_state(path), now) == []


def test_the_judge_counts_a_series_occurrences(tmp_path: Path) -> None:
    """'every monday for three weeks': three Mondays, however the rule spells its end."""
    now = datetime(2026, 12, 2, 16, 0, tzinfo=TZ)  # a Wednesday
    monday = datetime(2026, 12, 7, 9, 0, tzinfo=TZ)
    want = {"reminders": [{"rule_has": ["FREQ=WEEKLY"], "byday": ["MO"],
                           "ends": {"days": 21, "count": 3}}]}
    verdicts = {}
    for rule in ("FREQ=WEEKLY;BYDAY=MO;COUNT=3", "FREQ=WEEKLY;BYDAY=MO;UNTIL=20261223T225959Z",
                 "FREQ=WEEKLY;BYDAY=MO;COUNT=4", "FREQ=WEEKLY;BYDAY=MO"):
        path = database(tmp_path / rule.replace(";", "_").replace("=", "-"))
        add_reminder(path, "water the cactus", monday, rule=rule, rule_start=monday.isoformat())
        verdicts[rule] = check(want, reply("Every Monday."), read_state(path), now) == []
    assert verdicts == {
        "FREQ=WEEKLY;BYDAY=MO;COUNT=3": True,
        "FREQ=WEEKLY;BYDAY=MO;UNTIL=20261223T225959Z": True,
        "FREQ=WEEKLY;BYDAY=MO;COUNT=4": False,
        "FREQ=WEEKLY;BYDAY=MO": False,
    }


def test_on_the_old_schema_a_repeat_or_a_list_fails_and_nothing_crashes(tmp_path: Path) -> None:
    path = database(tmp_path, migrations=4)  # before the rule column and the list tables
    now = datetime.now(TZ)
    add_reminder(path, "take out the bins", now + timedelta(days=3))
    want = {"reminders": [{"rule_has": ["FREQ=WEEKLY"]}], "lists": {"shopping": ["eggs"]}}
    problems = check(want, reply("OK."), read_state(path), now)
    assert any("no rule column (old schema)" in p for p in problems), problems
    assert any("no list tables (old schema)" in p for p in problems), problems
    assert check({"nothing": False, "lists": {"shopping": []}}, reply("OK."),
                 read_state(path), now) == []


def test_the_time_in_a_city_is_computed_when_checked() -> None:
    now = datetime.now(TZ)
    tokyo = now.astimezone(ZoneInfo("Asia/Tokyo"))
    right = f"It's {tokyo:%H:%M} in Tokyo."
    wrong = f"It's {(tokyo + timedelta(hours=8)):%H:%M} in Tokyo."
    state = None
    want = {"computed": {"time_in": "Asia/Tokyo"}}
    assert check(want, reply(right), state, now) == []  # type: ignore[arg-type]
    assert check(want, reply(wrong), state, now) != []  # type: ignore[arg-type]


@pytest.mark.models  # the real classifier and the real local LLM
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_everyday_requests_leave_the_right_end_state(tmp_path: Path, session_bus: str) -> None:
    started = time.monotonic()
    lines: list[str] = []

    def progress(result: CaseResult) -> None:
        if not result.passed:
            lines.append(failure_text(result))

    reports = run_suite(FAMILIES, workdir=tmp_path / "everyday", progress=progress)
    wall_s = time.monotonic() - started
    turns = sum(len(r.case.turns) for rep in reports for r in rep.results)
    llm_turns = sum(r.llm_turns for rep in reports for r in rep.results)
    print(f"\n{table(reports)}\nwall {wall_s:.0f} s, {turns} turns, {llm_turns} decided by the LLM")
    print("\n".join(lines))
    cases = sum(r.cases for r in reports)
    passed = sum(r.passed for r in reports)
    problems = []
    if passed < OVERALL_BAR * cases:
        problems.append(f"overall {passed}/{cases} under {OVERALL_BAR:.0%}")
    for report in reports:
        bar = 1.0 if report.family in MUST_ALL_PASS else FAMILY_BAR
        if report.rate < bar:
            problems.append(f"{report.family} {report.passed}/{report.cases} under {bar:.0%}")
    if problems:
        pytest.fail("\n".join([*problems, "", table(reports), *lines]), pytrace=False)
