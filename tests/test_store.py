"""The state database: a real SQLite file, its migrations, its errors."""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from mavend.errors import StorageCorruptError, StorageError, StorageLockedError
from mavend.state.records import FactLog, NoteBook, SessionState, TurnLog
from mavend.state.store import PAGE_CACHE_KIB, Store, schema_version
from tests.state_kit import TZ

NOW = datetime(2026, 3, 10, 14, 0, tzinfo=TZ)


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def test_a_new_database_is_migrated_in_wal_mode(tmp_path: Path) -> None:
    store = Store(tmp_path / "deep" / "state.sqlite3")
    assert store.version() == schema_version() >= 1
    assert {"facts", "notes", "turns", "act_runs", "reminders", "firings", "session"} <= tables(
        store.path
    )
    with store.read() as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


def test_every_threads_connection_has_a_bounded_page_cache(tmp_path: Path) -> None:
    # The long soak (issue 22) grew with each connection's default 2 MiB cache.
    store = Store(tmp_path / "state.sqlite3")
    sizes: list[int] = []

    def read_cache_size() -> None:
        with store.read() as conn:
            sizes.append(int(conn.execute("PRAGMA cache_size").fetchone()[0]))

    read_cache_size()
    worker = threading.Thread(target=read_cache_size)
    worker.start()
    worker.join()
    store.close()
    assert sizes == [-PAGE_CACHE_KIB, -PAGE_CACHE_KIB]
    assert PAGE_CACHE_KIB < 2000  # below SQLite's default


def test_reopening_keeps_the_data_and_does_not_migrate_twice(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    store = Store(path)
    FactLog(store, TZ).add("coffees", "two", NOW, utterance="I drank two coffees")
    store.close()
    again = Store(path)
    assert again.version() == schema_version()
    (fact,) = [f for f, _, _ in FactLog(again, TZ).recent()]
    assert (fact.key, fact.value, fact.at) == ("coffees", "two", NOW)
    assert fact.at.utcoffset() == timedelta(hours=1)  # stored in the user's zone
    again.close()


def test_a_database_from_a_newer_mavend_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {schema_version() + 1}")
    with pytest.raises(StorageError, match="newer than this mavend"):
        Store(path)


def test_a_corrupt_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    path.write_bytes(b"this is not a database, just text " * 200)
    with pytest.raises(StorageCorruptError) as caught:
        Store(path)
    message = str(caught.value)
    assert str(path) in message and "damaged" in message and "Move the file aside" in message
    assert caught.value.exit_code == 1


def test_a_locked_database_is_a_clear_error_and_nothing_is_written(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.sqlite3", timeout_s=0.2)
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        with pytest.raises(StorageLockedError, match=r"locked by another process.*nothing was"):
            NoteBook(store, TZ).add("buy milk", NOW)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert NoteBook(store, TZ).recent() == []
    NoteBook(store, TZ).add("buy milk", NOW)  # and it works once the lock is gone
    assert len(NoteBook(store, TZ).recent()) == 1
    store.close()


def test_each_thread_writes_through_its_own_connection(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.sqlite3")
    facts = FactLog(store, TZ)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(20):
                facts.add(f"k{n}", str(i), NOW + timedelta(seconds=i))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(facts.recent(limit=1000)) == 80
    assert facts.keys() == ["k0", "k1", "k2", "k3"]
    store.close()


def test_facts_by_key_and_time_range(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.sqlite3")
    facts = FactLog(store, TZ)
    for hours in (-30, -2, -1):
        facts.add("coffees", "one", NOW + timedelta(hours=hours))
    facts.add("water", "a glass of", NOW)
    midnight = NOW.replace(hour=0)
    today = facts.between("coffees", midnight, None)
    assert [f.at for f in today] == [NOW - timedelta(hours=2), NOW - timedelta(hours=1)]
    assert facts.latest("coffees").at == NOW - timedelta(hours=1)
    assert facts.latest("tea") is None
    store.close()


def test_notes_keep_their_embeddings(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.sqlite3")
    notes = NoteBook(store, TZ)
    vector = np.arange(8, dtype=np.float32) / 10
    note = notes.add("passport in the top drawer", NOW, embedding=vector, embedder="test:8")
    notes.add("no vector yet", NOW)
    (second, no_vec, _), (first, vec, name) = notes.recent()
    assert first.id == note.id and name == "test:8"
    np.testing.assert_array_equal(vec, vector)
    assert no_vec is None
    notes.set_embedding(second.id, vector, "test:8")
    assert notes.recent()[0][1] is not None
    store.close()


def test_session_values_expire_and_pop_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.sqlite3")
    session = SessionState(store)
    session.put("confirm", {"act": "x"}, expires_ts=100.0)
    assert session.get("confirm", now_ts=99.0) == {"act": "x"}
    assert session.get("confirm", now_ts=101.0) is None
    assert session.pop("confirm") == {"act": "x"}
    assert session.pop("confirm") is None
    store.close()


def test_turns_log_the_decision_and_outcome(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.sqlite3")
    turns = TurnLog(store, TZ)
    assert turns.last() is None
    turns.add(
        NOW, "lock it", intent="act", decision={"intent": "act"}, reply="Done.", outcome="done"
    )
    turns.add(
        NOW,
        "mute",
        intent="act",
        decision=None,
        reply="failed",
        outcome="failed",
        error_class="exit_status",
    )
    last = turns.last()
    assert (last.utterance, last.outcome, last.error_class) == ("mute", "failed", "exit_status")
    assert turns.last(skip_outcomes=("failed",)).reply == "Done."
    assert turns.count() == 2
    store.close()
