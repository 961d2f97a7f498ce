"""An act asked for later is never run now ("lock the screen in ten minutes").

Mavend schedules it (a row of kind "act" that the daemon runs then: tests/test_timed_acts.py
fires one); a two-way act (play or pause) gets a reminder instead, with the reason said.
Judged by what is left: the act's marker file (did the program run?) and the reminders
table, through the real router (grammar and classifier, no LLM).
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from mavend.assistant import Assistant
from mavend.config import ActSlot, ActSpec, ActsSettings
from mavend.router import build_router
from mavend.state.store import Store
from tests.conftest import require_model
from tests.state_kit import TZ, MovableClock, kit_settings

NOW = datetime(2026, 12, 2, 14, 0, tzinfo=TZ)
WRITE = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text(sys.argv[2])"


def acts(marker: Path) -> ActsSettings:
    """Programs that leave a mark when they run."""
    return ActsSettings(allow=(
        ActSpec(name="lock_screen", argv=(sys.executable, "-c", WRITE, str(marker), "locked"),
                description="lock the screen"),
        ActSpec(name="volume_set",
                argv=(sys.executable, "-c", WRITE, str(marker), "volume {level}"),
                description="set the volume to a level in percent",
                slots={"level": ActSlot(type="int", min=0, max=100)}),
        ActSpec(name="volume_up", argv=(sys.executable, "-c", WRITE, str(marker), "up"),
                description="turn the volume up"),
        ActSpec(name="media_play_pause",
                argv=(sys.executable, "-c", WRITE, str(marker), "paused"),
                description="play or pause the media player"),
    ))


@pytest.fixture
def assistant(tmp_path: Path) -> Iterator[Assistant]:
    settings = kit_settings(tmp_path, acts=acts(tmp_path / "ran.txt"))
    require_model(settings.router.classifier_model)
    router = build_router(settings, clock=lambda: NOW, use_llm=False)
    store = Store.open(settings)
    yield Assistant(settings, store, router, clock=MovableClock(NOW), tz=TZ)
    store.close()


def ran(assistant: Assistant) -> str | None:
    marker = Path(assistant.settings.storage.data_dir).parent / "ran.txt"
    return marker.read_text() if marker.exists() else None


def reminders(assistant: Assistant) -> list[tuple[str, str, str]]:
    with contextlib.closing(sqlite3.connect(assistant.store.path)) as conn:
        rows = conn.execute("SELECT kind, fire_at, text FROM reminders ORDER BY id").fetchall()
    return [(kind, datetime.fromisoformat(at).astimezone(TZ).strftime("%Y-%m-%d %H:%M"), text)
            for kind, at, text in rows]


@pytest.mark.parametrize(
    ("said", "when", "task"),
    [
        ("lock the screen in ten minutes", "2026-12-02 14:10", "lock the screen"),
        ("set the volume to 30 percent at 9 pm", "2026-12-02 21:00",
         "set the volume to 30 percent"),
        ("lock the screen at half past three", "2026-12-02 15:30", "lock the screen"),
        # the classifier's act, its name found in the words around the time
        ("could you lock my screen in 20 minutes", "2026-12-02 14:20", "lock my screen"),
        # a system command that runs an act ("louder" runs volume_up)
        ("louder at 9 pm please", "2026-12-02 21:00", "louder"),
    ],
)
def test_an_act_for_later_is_not_run_now_and_is_scheduled(
    assistant: Assistant, said: str, when: str, task: str
) -> None:
    turn = assistant.handle_text(said)
    assert ran(assistant) is None, turn.reply.text  # nothing ran
    # Routed as the act it is scheduled; routed as a reminder it is one (nothing runs now
    # either way, and the time and the words are the same).
    kind = "act" if turn.decision.intent != "reminder" else "reminder"
    assert reminders(assistant) == [(kind, when, task)]
    if kind == "act":
        assert turn.reply.text.startswith(f"OK, I'll {task} at "), turn.reply.text
        assert turn.reply.data["scheduled_act"]["fn"] in ("lock_screen", "volume_set",
                                                          "volume_up")


def test_a_two_way_act_for_later_gets_a_reminder(assistant: Assistant) -> None:
    turn = assistant.handle_text("pause the music in 5 minutes")
    assert ran(assistant) is None
    assert reminders(assistant) == [("reminder", "2026-12-02 14:05", "pause the music")]
    assert "it works both ways, so I did nothing now" in turn.reply.text
    assert "I'll remind you to pause the music" in turn.reply.text
    assert turn.reply.data["ran"] is None


def test_an_act_for_now_still_runs(assistant: Assistant) -> None:
    assistant.handle_text("lock the screen")
    assert ran(assistant) == "locked" and reminders(assistant) == []


def test_undo_takes_the_scheduled_act_back(assistant: Assistant) -> None:
    assistant.handle_text("lock the screen in ten minutes")
    undone = assistant.handle_text("undo that")
    assert undone.reply.outcome == "done", undone.reply.text
    with contextlib.closing(sqlite3.connect(assistant.store.path)) as conn:
        assert conn.execute("SELECT status FROM reminders").fetchall() == [("cancelled",)]
    assert ran(assistant) is None


def test_the_router_names_the_act_and_leaves_the_time_in_the_words(assistant: Assistant) -> None:
    decision = assistant.router.route("lock the screen in ten minutes")
    assert (decision.intent, decision.slots.fn, decision.decided_by) == (
        "act", "lock_screen", "grammar:timed")
    assert decision.utterance == "lock the screen in ten minutes"
    # how long, not when: the grammar's own command, for now
    assert assistant.router.route("set the volume to 30 percent").decided_by == "grammar"
