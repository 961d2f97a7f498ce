"""Migration 7: the FTS5 word indexes over notes and facts, kept by triggers."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

import numpy as np

from mavend.state.records import FactLog, NoteBook
from mavend.state.store import MIGRATIONS, Store
from tests.state_kit import TZ

NOW = datetime(2026, 3, 10, 14, 0, tzinfo=TZ)


def version_6_file(path: Path) -> None:
    """A state file as mavend left it at schema 6, with notes and facts in it."""
    conn = sqlite3.connect(path)
    for migration in MIGRATIONS[:6]:
        for statement in migration:
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 6")
    vector = np.ones(4, dtype=np.float32).tobytes()
    conn.executemany(
        "INSERT INTO notes (text, at, at_ts, embedding, embedder) VALUES (?, ?, ?, ?, ?)",
        [
            (
                "the spare key is under the blue flowerpot",
                NOW.isoformat(),
                NOW.timestamp(),
                vector,
                "old-model",
            ),
            ("my passport is in the desk drawer", NOW.isoformat(), NOW.timestamp(), None, ""),
        ],
    )
    conn.execute(
        "INSERT INTO facts (key, value, at, at_ts, utterance) VALUES (?, ?, ?, ?, ?)",
        ("watered_plants", "done", NOW.isoformat(), NOW.timestamp(), "I watered the plants"),
    )
    conn.commit()
    conn.close()


def matches(store: Store, table: str, query: str) -> list[int]:
    with store.read() as conn:
        return [
            r[0]
            for r in conn.execute(
                f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid", (query,)
            )
        ]


def test_a_version_6_store_migrates_and_its_old_rows_are_found_by_word(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    version_6_file(path)
    store = Store(path)
    assert store.version() >= 7
    assert matches(store, "notes_fts", "flowerpots") == [1]  # porter: plural finds singular
    assert matches(store, "notes_fts", "passport") == [2]
    assert matches(store, "facts_fts", "water") == [1]  # key, value and utterance
    # The stored vectors and embedder names are untouched by the migration.
    ((_old, vector, name),) = [row for row in NoteBook(store, TZ).recent() if row[0].id == 1]
    assert name == "old-model" and vector is not None and vector.tolist() == [1.0] * 4
    store.close()


def test_inserts_edits_and_deletes_keep_the_word_index_exact(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.sqlite3")
    notes, facts = NoteBook(store, TZ), FactLog(store, TZ)
    first = notes.add("the bike lock code is 4711", NOW)
    second = notes.add("the wifi password is on the fridge", NOW)
    fact = facts.add("coffees", "two", NOW, utterance="I drank two coffees")
    assert matches(store, "notes_fts", "bike") == [first.id]
    assert matches(store, "facts_fts", "coffee") == [fact.id]
    # A vector cached later is no edit of the words: the index is left as it was.
    notes.set_embedding(first.id, np.ones(3, dtype=np.float32), "m")
    with store.write() as conn:
        conn.execute("UPDATE notes SET text = 'the bike is in the shed' WHERE id = ?", (second.id,))
        # forget's erasure: a plain DELETE on the table
        conn.execute("DELETE FROM facts WHERE id <= ?", (fact.id,))
    assert matches(store, "notes_fts", "wifi") == []
    assert matches(store, "notes_fts", "bike") == [first.id, second.id]
    assert matches(store, "facts_fts", "coffee") == []
    with store.read() as conn:
        # FTS5's own check that the index equals its content table.
        conn.execute("INSERT INTO notes_fts (notes_fts, rank) VALUES ('integrity-check', 1)")
        conn.execute("INSERT INTO facts_fts (facts_fts, rank) VALUES ('integrity-check', 1)")
    store.close()
