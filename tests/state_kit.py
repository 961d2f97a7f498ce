"""Shared pieces for the state, handler, reminder and daemon tests.

Real components throughout: a real SQLite file, the real grammar and slot
extractor, real subprocesses for acts (harmless programs: the Python running
the tests, `false`, `sleep`). Only the models are scripted.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from mavend import paths
from mavend.api import client as dbus_client
from mavend.assistant import Assistant
from mavend.config import (
    ActSlot,
    ActSpec,
    ActsSettings,
    LlmSettings,
    NotificationSettings,
    ReminderSettings,
    Settings,
    StorageSettings,
)
from mavend.daemon.lifecycle import Daemon, DaemonOptions
from mavend.router import PolicyName, RoutePolicy, Router, answers_recognizer
from mavend.router.grammar import CommandGrammar
from mavend.router.slots import SlotExtractor
from mavend.state.store import Store

TZ = ZoneInfo("Europe/Berlin")
PY = sys.executable


def harmless_acts(marker: Path) -> ActsSettings:
    """An allowlist of harmless programs, one per behaviour under test."""
    write_marker = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text(sys.argv[2])"
    return ActsSettings(
        confirm_timeout_s=15.0,
        allow=(
            ActSpec(
                name="lock_screen",
                argv=(PY, "-c", "print('screen locked')"),
                description="lock the screen",
            ),
            ActSpec(
                name="restart_service",
                argv=(PY, "-c", write_marker, str(marker), "{service}"),
                description="restart a user service",
                destructive=True,
                slots={"service": ActSlot(type="enum", values=("pipewire", "syncthing"))},
            ),
            ActSpec(
                name="volume_set",
                argv=(PY, "-c", "import sys; print('volume', sys.argv[1])", "{level}%"),
                description="set the volume to a level in percent",
                slots={"level": ActSlot(type="int", min=0, max=100)},
            ),
            ActSpec(name="mute", argv=("false",), description="mute or unmute the sound"),
            ActSpec(
                name="media_next",
                argv=("mavend-test-no-such-program",),
                description="skip to the next track",
            ),
            ActSpec(
                name="media_previous",
                argv=("sleep", "30"),
                description="go back to the previous track",
                timeout_s=0.3,
            ),
            ActSpec(
                name="volume_up",
                argv=(PY, "-c", "print('volume up')"),
                description="turn the volume up",
            ),
        ),
    )


# The model's own knowledge said as an answer: tests of what reaches the model (the
# personal boundary, the prompt) need it reached; with the shipped 0.5B, "auto" is off.
WORLD_ON = LlmSettings(general_knowledge="on")


def kit_settings(tmp_path: Path, **sections: object) -> Settings:
    values: dict[str, object] = {
        "acts": harmless_acts(tmp_path / "marker.txt"),
        "reminders": ReminderSettings(timezone="Europe/Berlin"),
        "notifications": NotificationSettings(retry_s=0.2),
        "storage": StorageSettings(data_dir=str(tmp_path / "data")),
    }
    values.update(sections)
    return Settings(**values)  # type: ignore[arg-type]


def kit_router(
    settings: Settings,
    clock: Callable[[], datetime],
    *,
    llm: object = None,
    classifier: object = None,
) -> Router:
    grammar = CommandGrammar.from_dir(
        paths.grammars_dir(), settings.acts, settings.router.wake_words
    )
    return Router(
        grammar,
        SlotExtractor(settings.acts),
        classifier=classifier,  # type: ignore[arg-type]
        llm=llm,  # type: ignore[arg-type]
        # "vote": a scripted LLM in a test is always asked unless the classifier is sure.
        policy=RoutePolicy(name=PolicyName.VOTE, use_llm=llm is not None),
        clock=clock,
        answers=answers_recognizer(settings),
        snap=settings.router.grammar_snap,
    )


def real_clock() -> Callable[[], datetime]:
    return lambda: datetime.now(TZ)


@dataclass
class MovableClock:
    """A clock the test sets; starts at `at`."""

    at: datetime

    def __call__(self) -> datetime:
        return self.at


@dataclass
class ChatReply:
    text: str
    latency_ms: float = 1.0
    truncated: bool = False


@dataclass
class ScriptedChat:
    """An LLM seam for replies: answers in order, records every prompt."""

    answers: list[str] = field(default_factory=list)
    calls: list[list[dict[str, str]]] = field(default_factory=list)

    def complete_chat(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int = 96,
        timeout_s: float | None = None,
    ) -> ChatReply:
        self.calls.append([dict(m) for m in messages])
        return ChatReply(self.answers.pop(0) if self.answers else "I don't know.")


def make_assistant(
    settings: Settings,
    *,
    clock: Callable[[], datetime] | None = None,
    llm: object = None,
    classifier: object = None,
    embedder: object = None,
    chat: ScriptedChat | None = None,
    store: Store | None = None,
) -> Assistant:
    clock = clock or real_clock()
    router = kit_router(settings, clock, llm=llm, classifier=classifier)
    return Assistant(
        settings,
        store or Store.open(settings),
        router,
        clock=clock,
        tz=TZ,
        embedder=lambda: embedder,  # type: ignore[arg-type,return-value]
        chat_llm=lambda: chat,
    )


def wait_for(condition: Callable[[], object], timeout: float, what: str) -> object:
    """Poll until `condition()` is truthy; fail the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


@contextlib.contextmanager
def daemon_serving(settings: Settings, router: Any) -> Iterator[Daemon]:
    """The real daemon (no audio) on its own event loop in a thread, its API on the bus."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="daemon-loop", daemon=True)
    thread.start()
    daemon = Daemon(
        settings,
        router=router,
        options=DaemonOptions(stdin_turns=False, notify_replies=False, poll_s=0.5),
    )
    try:
        asyncio.run_coroutine_threadsafe(daemon.start(), loop).result(60)
        deadline = time.monotonic() + 30
        while not dbus_client.daemon_available():
            assert time.monotonic() < deadline, "the daemon's D-Bus API did not come up"
            time.sleep(0.1)
        yield daemon
    finally:
        asyncio.run_coroutine_threadsafe(daemon.stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def reminder_rows(assistant: Assistant) -> list[sqlite3.Row]:
    """Every row of the assistant's reminders table, oldest first (the end state)."""
    with contextlib.closing(sqlite3.connect(assistant.store.path)) as conn:
        conn.row_factory = sqlite3.Row
        return conn.execute("SELECT * FROM reminders ORDER BY id").fetchall()


def local_fire_at(row: sqlite3.Row) -> str:
    """A reminder row's fire time in the kit's zone, to the minute."""
    return datetime.fromisoformat(row["fire_at"]).astimezone(TZ).strftime("%Y-%m-%d %H:%M")
