"""The everyday-request suite: what people ask a speaker, judged by the end state.

Every case in tests/data/everyday/*.jsonl is said over D-Bus to the real daemon with the
real router (grammar, the real classifier, the real local LLM under the default policy)
and judged by the rows it leaves (act runs, pending reminders, list items, notes, facts)
and the facts in its reply (tests/everyday_kit.py). Nothing is scripted. The bar: 97 %
of all cases, 90 % of every family, and every negation case (the assistant never does
the opposite of what was said).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

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
