"""Memory you can see: what memory would change about a turn, shown read-only.

`Memory.route_view`, `mavend route` (in this process, with the real models) and
the D-Bus `Route` of the real daemon on a private dbus-daemon (tests/conftest.py).
Real SQLite files throughout; "writes nothing" is checked against every row of
every table. The classifier is scripted where a test must know what it says.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mavend.api import client as dbus_client
from mavend.assistant import Assistant
from mavend.cli import main
from mavend.config import MemorySettings, NotificationSettings, Settings
from mavend.memory.records import MemoryTable
from mavend.memory.signature import FailureSignature, pattern_of, route_of
from mavend.router.decision import Intent
from mavend.state.store import Store
from tests.scripted import LOW, NOW, Classified, ScriptedClassifier
from tests.state_kit import (
    MovableClock,
    daemon_serving,
    kit_router,
    kit_settings,
    make_assistant,
    real_clock,
)

CALL_MOM = "remember to call mom in ten minutes"


def dump(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, in order: what "writes nothing" is checked against."""
    with store.read() as conn:
        tables = [
            str(row[0])
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        return {
            # Sorted by value, not rowid: the full-text index's shadow tables have no rowid.
            table: sorted(
                (tuple(row) for row in conn.execute(f'SELECT * FROM "{table}"')), key=repr
            )
            for table in sorted(tables)
        }


def classifier() -> ScriptedClassifier:
    """A weak "note" for CALL_MOM (a reminder, really); knows nothing about the rest."""
    weak_note = Classified(
        Intent.NOTE, 0.6, {**dict.fromkeys(Intent, 0.3), Intent.NOTE: 0.6, Intent.REMINDER: 0.56}
    )
    return ScriptedClassifier({CALL_MOM: weak_note}, LOW)


def teach(say: Any) -> None:
    """Two answered questions (a "jot down" habit) and one correction (a repair)."""
    for item in ("milk", "eggs"):
        say(f"jot down {item}")  # asked: note or something else?
        say("take a note")
    say(CALL_MOM)
    say("no, I meant set a reminder")


def test_route_view_shows_the_habit_and_the_repair_and_writes_nothing(tmp_path: Path) -> None:
    settings = kit_settings(tmp_path, memory=MemorySettings(habit_min_support=2))
    a = make_assistant(settings, clock=MovableClock(NOW), classifier=classifier())
    teach(a.handle_text)
    repaired = a.handle_text(CALL_MOM)  # the repair applies; the next turn credits it
    assert repaired.decision is not None and repaired.decision.decided_by == "repair"
    before = dump(a.store)
    # (each answered question stored a repair too, for its own "jot down ..." pattern)
    (repair,) = [r for r in MemoryTable(a.store).repairs("owner") if r.utterance == CALL_MOM]

    habit = a.memory.route_view(a.router, "jot down butter")
    asks = habit.decision.clarify
    assert asks is not None and asks.kind == "route"  # the router alone asks
    assert habit.memory is not None and habit.memory.applies == "habit"
    assert habit.memory.without == habit.decision
    assert habit.memory.with_.intent == Intent.NOTE
    assert habit.memory.with_.decided_by == "habit"
    record = habit.memory.record or {}
    assert record["action"] == "settle" and record["name"] == "habit::note"
    assert (record["records"], record["confirmed"]) == (2, 2)
    confirmed = {r["id"] for r in MemoryTable(a.store).rows() if r["source"] == "confirmed"}
    assert record["id"] in confirmed

    fixed = a.memory.route_view(a.router, CALL_MOM)
    assert fixed.decision.intent == Intent.NOTE and fixed.decision.decided_by == "classifier"
    assert fixed.memory is not None and fixed.memory.applies == "repair"
    assert fixed.memory.with_.intent == Intent.REMINDER
    assert fixed.memory.with_.decided_by == "repair" and fixed.memory.with_.slots.has_time
    record = fixed.memory.record or {}
    assert (record["id"], record["successes"], record["failures"]) == (repair.id, 1, 0)
    assert record["signature"] == f"{pattern_of(CALL_MOM)}::note::corrected"

    grammar = a.memory.route_view(a.router, "lock the screen")
    assert grammar.memory is None and grammar.decision.decided_by == "grammar"
    payload = json.loads(fixed.to_json_line())
    assert payload["memory"]["applies"] == "repair"
    assert payload["memory"]["with"]["intent"] == "reminder"
    assert {k: v for k, v in payload.items() if k != "memory"} == fixed.decision.to_json()
    assert json.loads(grammar.to_json_line())["memory"] is None

    # Nothing written: no record, no credit for the repair, the previous turn untouched...
    assert dump(a.store) == before
    # ...so a correction still reads the turn before the previews.
    again = a.handle_text("no, I meant take a note")
    assert again.decision is not None and again.decision.decided_by == "correction"
    assert again.decision.utterance == CALL_MOM and again.decision.intent == Intent.NOTE


def test_route_view_with_memory_off_is_the_router_alone(tmp_path: Path) -> None:
    settings = kit_settings(tmp_path, memory=MemorySettings(enabled=False))
    a: Assistant = make_assistant(settings, clock=MovableClock(NOW), classifier=classifier())
    view = a.memory.route_view(a.router, CALL_MOM)
    assert view.memory is None and view.decision == a.router.route(CALL_MOM)
    assert a.memory.preview(a.router, CALL_MOM) is None


@pytest.mark.models  # `mavend route` builds the real router (the USE classifier)
def test_mavend_route_shows_memory_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = "2026-03-10T14:00:00+01:00"
    database = Settings().storage.database_path()  # the one `mavend say` uses
    assert main(["route", "--json", "--no-llm", "--now", now, CALL_MOM]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["memory"] is None
    assert not database.exists()  # no database yet: `route` does not make one
    # A repair for exactly this turn's pattern and route, as a correction stores it.
    asks = bool(plain["clarify"]) and plain["clarify"]["kind"] == "route"
    route = route_of(plain["intent"], plain["slots"]["fn"] or "", clarify=asks)
    target = "reminder" if plain["intent"] != "reminder" else "note"
    store = Store.open(Settings())
    repair = MemoryTable(store).store_repair(
        scope="owner",
        signature=FailureSignature(pattern_of(CALL_MOM), route, "corrected"),
        utterance=CALL_MOM,
        intent=target,
        fn="",
        args={},
        now=NOW,
    )
    before = dump(store)

    assert main(["route", "--json", "--no-llm", "--now", now, CALL_MOM]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    shown = json.loads(lines[0])
    memory = shown.pop("memory")
    assert shown == {k: v for k, v in plain.items() if k != "memory"}  # the contract as before
    assert memory["applies"] == "repair" and memory["without"] == shown
    assert memory["with"]["intent"] == target and memory["with"]["decided_by"] == "repair"
    assert memory["record"]["id"] == repair.id and memory["record"]["kind"] == "repair"
    assert memory["recall_block"] == ""  # no LLM, no recall block

    assert main(["route", "--no-llm", "--now", now, CALL_MOM]) == 0
    readable = capsys.readouterr().out
    assert readable.startswith(f"intent:     {plain['intent']}")
    assert f"memory:     repair #{repair.id} {route_signature(route)}" in readable
    assert dump(store) == before
    store.close()


def route_signature(route: str) -> str:
    return f"{pattern_of(CALL_MOM)}::{route}::corrected"


def test_dbus_route_of_the_real_daemon_shows_memory(
    tmp_path: Path, session_bus: str, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = kit_settings(
        tmp_path,
        memory=MemorySettings(habit_min_support=2),
        notifications=NotificationSettings(enabled=False),
    )
    # The daemon's own clock (real time) for the router too: the reminder is in the future.
    router = kit_router(settings, real_clock(), classifier=classifier())
    with daemon_serving(settings, router) as daemon:
        teach(dbus_client.say)
        assert daemon.store is not None
        before = dump(daemon.store)

        habit = dbus_client.route("jot down butter")
        assert habit["clarify"]["kind"] == "route"  # the router's own decision, as before
        memory = habit["memory"]
        assert memory["applies"] == "habit" and memory["record"]["confirmed"] == 2
        assert memory["with"]["intent"] == "note" and memory["with"]["decided_by"] == "habit"
        assert memory["without"] == {k: v for k, v in habit.items() if k != "memory"}

        fixed = dbus_client.route(CALL_MOM)
        assert fixed["intent"] == "note" and fixed["memory"]["applies"] == "repair"
        assert fixed["memory"]["with"]["intent"] == "reminder"
        assert dbus_client.route("lock the screen")["memory"] is None

        # `mavend route` asks this daemon (it holds the database and the name).
        assert main(["route", "--json", "jot down butter"]) == 0
        assert json.loads(capsys.readouterr().out)["memory"] == memory
        assert main(["route", "jot down butter"]) == 0
        readable = capsys.readouterr().out
        assert "memory:     habit #" in readable and "-> note (habit, 0.70)" in readable
        assert dump(daemon.store) == before  # Route wrote nothing
