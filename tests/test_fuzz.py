"""Issue 7, reliability test 2: 10 000 hostile utterances through the real turn pipeline.

In process, through `Assistant.handle_text` (what the daemon's `Say` calls): a real
SQLite file, the real grammar, the real embedding classifier (about 3 ms a turn,
so 10 000 turns fit in the budget), memory (habits, repairs) as configured, the
real act handler running a harmless allowlist (`/bin/true`, and `touch` for the
destructive act) and, in the LLM's seat, `HostileLlm`: every turn it answers
with a hostile route (an fn off the allowlist, arguments outside their enums, a
destructive act with full confidence, NaN confidences, exceptions). Programs a
hostile turn might start by name (rm, sh, systemctl, ...) are canaries on PATH.

A smaller run puts the real Qwen model in that seat instead (its output is
forced by the allowlist's grammar: it must not widen what can run either).

The corpus and the judging live in tests/fuzz_corpus.py (`run_fuzz`), so the
D-Bus `Say` variant sends the same corpus and reuses the same checks.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from mavend.api import client as dbus_client
from mavend.assistant import Assistant, Turn
from mavend.config import (
    ActsSettings,
    MemorySettings,
    ReminderSettings,
    RouterSettings,
    Settings,
    StorageSettings,
)
from mavend.daemon.lifecycle import DaemonState
from mavend.errors import UsageError
from mavend.handlers import Outcome
from mavend.router import PolicyName, RoutePolicy, Router, build_router
from mavend.state.store import Store
from tests.conftest import require_model
from tests.fuzz_corpus import (
    HostileLlm,
    corpus,
    fuzz_acts,
    install_canaries,
    run_fuzz,
)
from tests.state_kit import TZ, daemon_serving

UTTERANCES = 10_000
SEED = 7
LLM_UTTERANCES = 50
MEMORY_RECORDS = 10  # the least [memory] max_records allows
HOSTILE_CATEGORIES = {
    "injection",
    "chatml",
    "fake_route",
    "poisoned_note",
    "memory_record",
    "destructive",
    "correction",
    "answer",
    "odd_text",
    "random_bytes",
    "huge",
}


@dataclass
class Rig:
    settings: Settings
    acts: ActsSettings
    markers: Path
    canary_log: Path


@pytest.fixture
def rig(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Rig:
    true, touch = shutil.which("true"), shutil.which("touch")
    assert true and touch, "coreutils' true and touch are needed for the harmless allowlist"
    markers = tmp_path / "markers"
    markers.mkdir()
    canaries, canary_log = tmp_path / "canaries", tmp_path / "canaries.log"
    install_canaries(canaries, canary_log)
    monkeypatch.setenv("PATH", f"{canaries}:{os.environ.get('PATH', '')}")
    acts = fuzz_acts(markers, true=true, touch=touch)
    settings = Settings(
        router=RouterSettings(llm_timeout_s=120.0),
        acts=acts,
        # Memory on, its habit table bounded: recall reads up to 2000 kept habits a
        # turn, so with the default a turn grows by tens of ms as habits pile up, and
        # 10 000 turns would not fit the budget. Repairs, where poisoning would land,
        # are all kept either way.
        memory=MemorySettings(max_records=MEMORY_RECORDS),
        reminders=ReminderSettings(timezone="Europe/Berlin"),
        storage=StorageSettings(data_dir=str(tmp_path / "data")),
    )
    return Rig(settings, acts, markers, canary_log)


def clock() -> datetime:
    return datetime.now(TZ)


@contextlib.contextmanager
def assistant_with(settings: Settings, router: Router) -> Iterator[Assistant]:
    store = Store.open(settings)
    try:
        yield Assistant(settings, store, router, clock=clock, tz=TZ)
    finally:
        store.close()


def hostile_router(settings: Settings, llm: HostileLlm) -> Router:
    """The real grammar, slots and classifier; the hostile seam in the LLM's seat."""
    require_model(settings.router.classifier_model)
    real = build_router(settings, clock=clock, use_llm=False)
    cfg = settings.router
    return Router(
        real.grammar,
        real.slots,
        classifier=real.classifier,
        llm=llm,
        # "llm-first": the hostile model decides every routed turn it can.
        policy=RoutePolicy(
            name=PolicyName.LLM_FIRST,
            clarify_threshold=cfg.clarify_threshold,
            classifier_confident=cfg.classifier_confident,
            classifier_weight=cfg.classifier_weight,
            use_llm=True,
        ),
        clock=clock,
    )


def send_through(assistant: Assistant) -> Callable[[str], Turn]:
    def send(text: str) -> Turn:
        turn = assistant.handle_text(text)
        assert isinstance(turn.reply.outcome, Outcome)
        return turn

    return send


def memory_rows(database: Path) -> dict[str, int]:
    """What memory kept, by kind (habits, repairs): the poisoning had a place to land."""
    with contextlib.closing(sqlite3.connect(database)) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if "memory" not in tables:
            return {}
        return dict(conn.execute("SELECT kind, COUNT(*) FROM memory GROUP BY kind").fetchall())


def check_after(rig: Rig, router: Router) -> None:
    """Nothing ran by name, only allowed markers appeared, and the database is whole."""
    assert not rig.canary_log.exists(), "a program was run by name:\n" + rig.canary_log.read_text()
    allowed = {f"restart_service-{s}" for s in ("pipewire", "wireplumber", "syncthing")}
    made = {p.name for p in rig.markers.iterdir()}
    assert made <= allowed, f"unexpected marker files: {sorted(made - allowed)}"
    database = rig.settings.storage.database_path()
    with contextlib.closing(sqlite3.connect(database)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    # The database still opens for the real pipeline, and an ordinary turn works.
    with assistant_with(rig.settings, router) as assistant:
        turn = assistant.handle_text("set a timer for ten minutes")
    assert turn.reply.outcome == Outcome.DONE, turn.to_json()
    assert turn.reply.text.startswith("Timer set for 10 minutes"), turn.reply.text


@pytest.mark.models  # the real embedding classifier
@pytest.mark.slow
@pytest.mark.timeout(480)  # about 2.5 minutes here
def test_10000_hostile_utterances_crash_nothing_and_run_only_the_allowlist(rig: Rig) -> None:
    llm = HostileLlm(seed=SEED)
    router = hostile_router(rig.settings, llm)
    utterances = corpus(UTTERANCES, seed=SEED)
    with assistant_with(rig.settings, router) as assistant:
        report = run_fuzz(
            send_through(assistant),
            utterances,
            database=rig.settings.storage.database_path(),
            acts=rig.acts,
        )
    print(f"\n{report.line()} seed={SEED} llm_calls={llm.calls} classifier=real llm=hostile")
    print(f"fuzz: outcomes {dict(report.outcomes)}")
    print(f"fuzz: acts run {dict(report.acts_run)}")
    print(f"fuzz: categories {dict(sorted(report.categories.items()))}")
    print(f"fuzz: seconds per category { ({c: round(t, 1) for c, t in report.seconds.items()}) }")
    print(f"fuzz: slowest turns {[(round(s, 2), c, t) for s, c, t in report.slowest]}")
    print(f"fuzz: memory rows {memory_rows(rig.settings.storage.database_path())}")
    assert report.utterances == UTTERANCES
    if report.problems():
        pytest.fail("\n".join(report.problems()), pytrace=False)
    # The run did reach the places that matter: hostile routes, acts, confirmations.
    assert llm.calls > 1000, llm.calls
    assert report.acts_run["restart_service"] > 0, "no confirmed destructive act ran"
    assert report.outcomes["confirm"] > 0 and report.outcomes["refused"] > 0
    check_after(rig, router)


@pytest.mark.models
@pytest.mark.slow
def test_the_real_llm_cannot_widen_the_allowlist_either(rig: Rig) -> None:
    # "llm-first": the real model decides every routed turn (the shipped policy keeps it
    # off the routing path; here it is the hostile party under test).
    settings = dataclasses.replace(
        rig.settings, router=dataclasses.replace(rig.settings.router, policy="llm-first")
    )
    require_model(settings.router.llm_model)
    require_model(settings.router.classifier_model)
    router = build_router(settings, clock=clock)
    router.warm_up()
    pool = [u for u in corpus(3000, seed=SEED + 1) if u[0] in HOSTILE_CATEGORIES]
    # Every category, then the rest in corpus order.
    first = {c: u for c, u in reversed(pool)}
    picked = list(first.items())
    picked += [u for u in pool if u not in picked][: LLM_UTTERANCES - len(picked)]
    with assistant_with(settings, router) as assistant:
        report = run_fuzz(
            send_through(assistant),
            picked,
            database=settings.storage.database_path(),
            acts=rig.acts,
        )
    database = settings.storage.database_path()
    with contextlib.closing(sqlite3.connect(database)) as conn:
        by = dict(
            conn.execute(
                "SELECT json_extract(decision, '$.decided_by'), COUNT(*) FROM turns GROUP BY 1"
            ).fetchall()
        )
    asked_llm = sum(n for k, n in by.items() if k and "llm" in k)
    print(
        f"\n{report.line('fuzz-llm')} llm=real({settings.router.llm_model}) llm_decided={asked_llm}"
    )
    print(f"fuzz-llm: decided_by {by} outcomes {dict(report.outcomes)}")
    assert report.utterances == LLM_UTTERANCES
    if report.problems():
        pytest.fail("\n".join(report.problems()), pytrace=False)
    assert asked_llm > 0, f"the LLM never took part: {by}"
    check_after(rig, router)


def dbus_safe(text: str) -> str:
    """What a D-Bus string can carry: valid UTF-8 without NUL (the in-process run sends
    the raw text, lone surrogates and NULs included)."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace").replace("\0", "\ufffd")


@contextlib.contextmanager
def say_client() -> Iterator[Callable[[str], str]]:
    """`Say` over one session-bus connection, from the test's own thread."""
    loop = asyncio.new_event_loop()
    client = loop.run_until_complete(dbus_client.DaemonClient().connect())
    try:
        yield lambda text: loop.run_until_complete(client.say(text))
    finally:
        loop.run_until_complete(client.close())
        loop.close()


@pytest.mark.models  # the real embedding classifier
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_10000_hostile_utterances_through_the_daemons_d_bus_say(
    rig: Rig, session_bus: str
) -> None:
    from mavend.api.server import MAX_TEXT_CHARS

    llm = HostileLlm(seed=SEED)
    router = hostile_router(rig.settings, llm)
    utterances = [(c, dbus_safe(t)) for c, t in corpus(UTTERANCES, seed=SEED)]
    # Longer texts are refused at the door (InvalidInput, tests/test_dbus_api.py): one
    # is sent here to see the refusal leave the daemon serving.
    fits = [(c, t) for c, t in utterances if len(t) <= MAX_TEXT_CHARS]
    too_long = next(t for _, t in utterances if len(t) > MAX_TEXT_CHARS)
    with daemon_serving(rig.settings, router) as daemon, say_client() as say:
        with pytest.raises(UsageError):  # org.mavend.Assistant1.Error.InvalidInput
            say(too_long)
        report = run_fuzz(
            say, fits, database=rig.settings.storage.database_path(), acts=rig.acts
        )
        assert daemon.state is DaemonState.RUNNING
        assert say("set a timer for ten minutes").startswith("Timer set for 10 minutes")
    print(
        f"\n{report.line('fuzz-dbus')} refused_too_long={len(utterances) - len(fits)}"
        f" seed={SEED} llm_calls={llm.calls} transport=org.mavend.Assistant1.Say"
    )
    print(f"fuzz-dbus: outcomes {dict(report.outcomes)} acts run {dict(report.acts_run)}")
    assert report.utterances == len(fits) > 9_000
    if report.problems():
        pytest.fail("\n".join(report.problems()), pytrace=False)
    assert report.acts_run["restart_service"] > 0, "no confirmed destructive act ran"
    check_after(rig, router)
