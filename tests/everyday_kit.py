"""The everyday-request suite's runner: cases through the real daemon over D-Bus.

Each case (tests/data/everyday/<family>.jsonl, one JSON object a line) is a few turns
said to the real daemon (`tests.state_kit.daemon_serving`) with the real router
(`mavend.router.build_available_router`: the grammar, the real classifier and the real
local LLM as the default policy asks them), over a private session bus, and the END
STATE it must leave (tests/everyday_checks.py says what an expectation may say): the
act_runs rows, the pending reminders, the open list items, the notes and facts, and the
reply's words. Never the intent label: a right label with a wrong outcome fails, a
different route to the right outcome passes.

    {"id": "neg-001", "family": "negation",
     "turns": [{"say": "don't lock the screen"}],
     "expect": {"nothing": true, "reply_max_chars": 80}}

A turn may carry its own "expect" (checked after that turn); the case's "expect" is
checked after the last turn. A turn with "wait_fired_s": N is followed by a wait (up to
N s) for a reminder to fire, so "snooze it" can follow the beep. Between cases every
row is deleted by SQL (the scheduler is asked to re-sync and its reminder jobs are
waited for), and memory is off in the settings, so no case sees another's state. A
case that raises (a D-Bus error) fails with the error.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.conftest import BUS_CONFIG
from tests.everyday_checks import TZ, check, fired_count, read_state, reset_state

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "everyday"
FAMILIES = (
    "negation",
    "confirm",
    "recurring",
    "manage",
    "timers",
    "times",
    "answers",
    "live",
    "lists",
    "later",
    "bare",
    "while",
)
REMINDER_JOB_PREFIX = "reminder-"  # mavend.scheduler.reminder.JOB_PREFIX, old and new


# cases ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Turn:
    say: str
    expect: Mapping[str, Any] | None = None
    # After this turn, wait up to this many seconds for a reminder to fire (a firings
    # row), as a person waits for the beep before saying "snooze it".
    wait_fired_s: float = 0.0


@dataclass(frozen=True)
class Case:
    id: str
    family: str
    turns: tuple[Turn, ...]
    expect: Mapping[str, Any]

    @staticmethod
    def from_json(row: Mapping[str, Any]) -> Case:
        turns = tuple(
            Turn(t["say"], t.get("expect"), float(t.get("wait_fired_s", 0))) for t in row["turns"]
        )
        if not turns:
            raise ValueError(f"case {row.get('id')}: no turns")
        return Case(str(row["id"]), str(row["family"]), turns, row.get("expect") or {})


def load_cases(families: Sequence[str] = FAMILIES, data_dir: Path = DATA) -> list[Case]:
    cases: list[Case] = []
    for family in families:
        path = data_dir / f"{family}.jsonl"
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                case = Case.from_json(json.loads(line))
            except (ValueError, KeyError) as exc:
                raise ValueError(f"{path}:{number}: {exc}") from exc
            if case.family != family:
                raise ValueError(f"{path}:{number}: family {case.family!r} in {family}.jsonl")
            cases.append(case)
    ids = [c.id for c in cases]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise ValueError(f"duplicate case ids: {sorted(duplicates)}")
    return cases


# running ----------------------------------------------------------------------------
@dataclass
class CaseResult:
    case: Case
    problems: list[str]
    replies: list[str] = field(default_factory=list)
    llm_turns: int = 0
    seconds: float = 0.0
    reset_s: float = 0.0  # deleting the rows until the scheduler held no job

    @property
    def passed(self) -> bool:
        return not self.problems


@dataclass
class FamilyReport:
    family: str
    results: list[CaseResult] = field(default_factory=list)

    @property
    def cases(self) -> int:
        return len(self.results)

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def rate(self) -> float:
        return self.passed / self.cases if self.cases else 0.0

    def failures(self) -> list[CaseResult]:
        return [r for r in self.results if not r.passed]


@contextlib.contextmanager
def private_session_bus(workdir: Path) -> Iterator[str]:
    """A private `dbus-daemon --session` for the bench (the tests use the fixture)."""
    program = shutil.which("dbus-daemon")
    if program is None:
        raise RuntimeError("dbus-daemon is not installed: apt-get install dbus")
    config = workdir / "bus.conf"
    config.write_text(BUS_CONFIG.format(socket=workdir / "bus"))
    proc = subprocess.run(
        [program, f"--config-file={config}", "--print-address=1", "--print-pid=1", "--fork"],
        capture_output=True,
        text=True,
        check=True,
        timeout=10,
    )
    address, pid = proc.stdout.split()[:2]
    before = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    os.environ["DBUS_SESSION_BUS_ADDRESS"] = address
    try:
        yield address
    finally:
        os.kill(int(pid), signal.SIGTERM)
        if before is None:
            os.environ.pop("DBUS_SESSION_BUS_ADDRESS", None)
        else:
            os.environ["DBUS_SESSION_BUS_ADDRESS"] = before


class SayClient:
    """`SayJson` over one session-bus connection, from the runner's own thread."""

    def __init__(self) -> None:
        from mavend.api import client as dbus_client

        self._loop = asyncio.new_event_loop()
        self._client = self._loop.run_until_complete(dbus_client.DaemonClient().connect())

    def say_json(self, text: str) -> dict[str, Any]:
        return self._loop.run_until_complete(self._client.say_json(text))

    def close(self) -> None:
        self._loop.run_until_complete(self._client.close())
        self._loop.close()


def everyday_settings(workdir: Path) -> Any:
    """The kit's settings (harmless allowlisted acts, Europe/Berlin), memory off. Mute and
    unmute succeed here (the state kit's mute is its failing act): the "while" family
    mutes for a while and checks the unmute left scheduled."""
    from dataclasses import replace

    from mavend.config import ActSpec, MemorySettings
    from tests.state_kit import PY, harmless_acts, kit_settings

    acts = harmless_acts(workdir / "marker.txt")
    sound = (
        ActSpec(name="mute", argv=(PY, "-c", "print('muted')"), description="mute the sound"),
        ActSpec(name="unmute", argv=(PY, "-c", "print('unmuted')"),
                description="unmute the sound"),
    )
    acts = replace(acts, allow=(*(a for a in acts.allow if a.name != "mute"), *sound))
    return kit_settings(workdir, memory=MemorySettings(enabled=False), acts=acts)


@contextlib.contextmanager
def everyday_daemon(workdir: Path) -> Iterator[EverydayRunner]:
    """The real daemon with the real router, serving on the session bus already set."""
    from mavend.router import build_available_router
    from tests.state_kit import daemon_serving, real_clock

    settings = everyday_settings(workdir)
    router, problems = build_available_router(settings, clock=real_clock())
    if problems:
        raise RuntimeError(
            "models missing for the everyday suite (run `make setup-test`): " + "; ".join(problems)
        )
    with daemon_serving(settings, router) as daemon:
        client = SayClient()
        try:
            yield EverydayRunner(daemon, settings.storage.database_path(), client)
        finally:
            client.close()


@dataclass
class EverydayRunner:
    daemon: Any
    database: Path
    client: SayClient

    def reset(self) -> None:
        """Delete every row a case can leave; wait for the scheduler to drop its jobs."""
        reset_state(self.database)
        scheduler = self.daemon.scheduler
        if scheduler is None:
            return
        scheduler.request_sync()
        deadline = time.monotonic() + 5
        while left := [j for j in scheduler.jobs() if j.startswith(REMINDER_JOB_PREFIX)]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the scheduler kept reminder jobs after the reset: {left}")
            time.sleep(0.02)

    def wait_fired(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if fired_count(self.database):
                return True
            time.sleep(0.1)
        return False

    def run_case(self, case: Case) -> CaseResult:
        started = time.monotonic()
        result = CaseResult(case, [])
        try:
            self.reset()
            result.reset_s = time.monotonic() - started
            last_turn: dict[str, Any] = {}
            start = moment = datetime.now(TZ)
            for number, turn in enumerate(case.turns, 1):
                moment = datetime.now(TZ)
                last_turn = self.client.say_json(turn.say)
                result.replies.append(str((last_turn.get("reply") or {}).get("text") or ""))
                decided_by = str((last_turn.get("decision") or {}).get("decided_by") or "")
                result.llm_turns += "llm" in decided_by
                if turn.expect:
                    state = read_state(self.database)
                    problems = check(turn.expect, last_turn, state, moment, start)
                    result.problems += [f"turn {number} ({turn.say!r}): {p}" for p in problems]
                if turn.wait_fired_s and not self.wait_fired(turn.wait_fired_s):
                    waited = f"nothing fired in {turn.wait_fired_s:g} s"
                    result.problems.append(f"turn {number} ({turn.say!r}): {waited}")
                    break
            if case.expect:
                state = read_state(self.database)
                result.problems += check(case.expect, last_turn, state, moment, start)
        except Exception as exc:
            result.problems.append(
                f"raised {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
            )
        result.seconds = time.monotonic() - started
        return result

    def run_family(self, family: str, cases: Sequence[Case]) -> FamilyReport:
        report = FamilyReport(family)
        for case in cases:
            report.results.append(self.run_case(case))
        return report


def run_suite(
    families: Sequence[str] = FAMILIES,
    *,
    data_dir: Path = DATA,
    workdir: Path | None = None,
    daemon_per_family: bool = False,
    progress: Any = None,
    case_ids: Sequence[str] = (),
    shuffle_seed: int | None = None,
) -> list[FamilyReport]:
    """Every family's cases through the daemon; the caller owns the session bus.

    One daemon for all families by default: the models load once (~15 s) and the reset
    between cases makes every case as independent as a fresh daemon would (a shuffled
    order, `shuffle_seed`, is how to see that). `case_ids`: only those cases."""
    cases = load_cases(families, data_dir)
    if case_ids:
        unknown = set(case_ids) - {c.id for c in cases}
        if unknown:
            raise ValueError(f"no such cases: {sorted(unknown)}")
        cases = [c for c in cases if c.id in case_ids]
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(cases)
    reports: list[FamilyReport] = []
    with contextlib.ExitStack() as stack:
        root = workdir or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        shared = None if daemon_per_family else stack.enter_context(everyday_daemon(root / "all"))
        for family in families:
            with contextlib.ExitStack() as own:
                runner = shared or own.enter_context(everyday_daemon(root / family))
                report = FamilyReport(family)
                for case in (c for c in cases if c.family == family):
                    result = runner.run_case(case)
                    report.results.append(result)
                    if progress is not None:
                        progress(result)
                reports.append(report)
    return reports


def table(reports: Sequence[FamilyReport]) -> str:
    lines = [f"{'family':<10} {'cases':>5} {'passed':>6} {'rate':>7}"]
    for r in reports:
        lines.append(f"{r.family:<10} {r.cases:>5} {r.passed:>6} {100 * r.rate:>6.1f}%")
    cases = sum(r.cases for r in reports)
    passed = sum(r.passed for r in reports)
    lines.append(f"{'all':<10} {cases:>5} {passed:>6} {100 * passed / max(cases, 1):>6.1f}%")
    return "\n".join(lines)


def failure_text(result: CaseResult) -> str:
    said = " | ".join(t.say for t in result.case.turns)
    body = "\n      ".join(result.problems)
    return f"  {result.case.id}: {said}\n      {body}"


def to_json(reports: Sequence[FamilyReport]) -> dict[str, Any]:
    return {
        "families": {
            r.family: {
                "cases": r.cases,
                "passed": r.passed,
                "rate": round(r.rate, 4),
                "failures": [
                    {"id": f.case.id, "turns": [t.say for t in f.case.turns],
                     "problems": f.problems, "replies": f.replies}
                    for f in r.failures()
                ],
            }
            for r in reports
        },
        "cases": sum(r.cases for r in reports),
        "passed": sum(r.passed for r in reports),
        "llm_turns": sum(x.llm_turns for r in reports for x in r.results),
        "turns": sum(len(x.case.turns) for r in reports for x in r.results),
        "reset_max_s": round(max((x.reset_s for r in reports for x in r.results), default=0), 3),
    }
