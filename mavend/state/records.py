"""The assistant's records in the state database: facts, notes (with their embeddings),
the turn log, what each act did, and the session's small state (a pending confirmation,
the listening flag). Each is a thin class over `mavend.state.store.Store`'s transactions.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

import numpy as np

from mavend.state.store import Store, iso, parse_iso

log = logging.getLogger("mavend.records")  # the name its journal lines have always had


def vector_blob(vector: np.ndarray | None) -> bytes | None:
    if vector is None:
        return None
    return np.asarray(vector, dtype=np.float32).tobytes()


def blob_vector(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)


# Whose rows a turn may read (mavend/voices/): None = every row (typed, [voices] off);
# otherwise the speaker column's values it may see ('' = the household's rows).
Speakers = tuple[str, ...] | None


def speakers_clause(speakers: Speakers, column: str = "speaker") -> tuple[str, tuple[str, ...]]:
    """" AND speaker IN (?, ?)" and its values, or nothing when every row may be read."""
    if speakers is None:
        return "", ()
    if not speakers:
        return " AND 0", ()
    return f" AND {column} IN ({','.join('?' * len(speakers))})", tuple(speakers)


@dataclass(frozen=True)
class Fact:
    id: int
    key: str
    value: str
    at: datetime
    utterance: str = ""
    speaker: str = ""  # the enrolled voice it is kept for; '' = the household's


@dataclass(frozen=True)
class Note:
    id: int
    text: str
    at: datetime
    speaker: str = ""


class FactLog:
    """Structured first-person state: key, value, time."""

    def __init__(self, store: Store, tz: tzinfo):
        self.store, self.tz = store, tz

    def add(
        self,
        key: str,
        value: str,
        at: datetime,
        *,
        utterance: str = "",
        embedding: np.ndarray | None = None,
        embedder: str = "",
        speaker: str = "",
    ) -> Fact:
        at = at.astimezone(self.tz)
        with self.store.write("saving a fact") as conn:
            cursor = conn.execute(
                "INSERT INTO facts (key, value, at, at_ts, utterance, embedding, embedder,"
                " speaker) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key, value, iso(at), at.timestamp(), utterance, vector_blob(embedding), embedder,
                 speaker),
            )
        return Fact(int(cursor.lastrowid or 0), key, value, at, utterance, speaker)

    def edit(self, fact_id: int, value: str) -> bool:
        """A logged value corrected (the page's edit); False when it is gone."""
        with self.store.write("changing a fact") as conn:
            return conn.execute(
                "UPDATE facts SET value = ? WHERE id = ?", (value, fact_id)
            ).rowcount > 0

    def delete(self, fact_id: int) -> bool:
        """Take one logged fact back ("undo that"); False when it was already gone."""
        with self.store.write("taking a fact back") as conn:
            return conn.execute("DELETE FROM facts WHERE id = ?", (fact_id,)).rowcount > 0

    def keys(self) -> list[str]:
        with self.store.read() as conn:
            return [r[0] for r in conn.execute("SELECT DISTINCT key FROM facts ORDER BY key")]

    def latest(self, key: str) -> Fact | None:
        rows = self.between(key, None, None, newest_first=True, limit=1)
        return rows[0] if rows else None

    def between(
        self,
        key: str,
        start: datetime | None,
        end: datetime | None,
        *,
        newest_first: bool = False,
        limit: int = 10000,
        speakers: Speakers = None,
    ) -> list[Fact]:
        order = "DESC" if newest_first else "ASC"
        whose, values = speakers_clause(speakers)
        with self.store.read() as conn:
            rows = conn.execute(
                "SELECT id, key, value, at, utterance, speaker FROM facts WHERE key = ?"
                " AND at_ts >= ? AND at_ts < ?" + whose + " ORDER BY at_ts "
                + order
                + ", id "
                + order
                + " LIMIT ?",
                (
                    key,
                    start.timestamp() if start else float("-inf"),
                    end.timestamp() if end else float("inf"),
                    *values,
                    limit,
                ),
            ).fetchall()
        return [self._fact(r) for r in rows]

    def recent(self, limit: int = 500) -> list[tuple[Fact, np.ndarray | None, str]]:
        """The newest facts with their stored embeddings (for recall)."""
        with self.store.read() as conn:
            rows = conn.execute(
                "SELECT id, key, value, at, utterance, speaker, embedding, embedder FROM facts"
                " ORDER BY at_ts DESC, id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [(self._fact(r), blob_vector(r["embedding"]), r["embedder"]) for r in rows]

    def set_embedding(self, fact_id: int, vector: np.ndarray, embedder: str) -> None:
        with self.store.write("caching an embedding") as conn:
            conn.execute(
                "UPDATE facts SET embedding = ?, embedder = ? WHERE id = ?",
                (vector_blob(vector), embedder, fact_id),
            )

    def _fact(self, row: sqlite3.Row) -> Fact:
        return Fact(row["id"], row["key"], row["value"], parse_iso(row["at"]), row["utterance"],
                    row["speaker"])


class NoteBook:
    """Free text to recall later, with its sentence embedding."""

    def __init__(self, store: Store, tz: tzinfo):
        self.store, self.tz = store, tz

    def add(
        self,
        text: str,
        at: datetime,
        *,
        embedding: np.ndarray | None = None,
        embedder: str = "",
        speaker: str = "",
    ) -> Note:
        at = at.astimezone(self.tz)
        with self.store.write("saving a note") as conn:
            cursor = conn.execute(
                "INSERT INTO notes (text, at, at_ts, embedding, embedder, speaker)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (text, iso(at), at.timestamp(), vector_blob(embedding), embedder, speaker),
            )
        return Note(int(cursor.lastrowid or 0), text, at, speaker)

    def edit(
        self, note_id: int, text: str, *, embedding: np.ndarray | None = None, embedder: str = ""
    ) -> bool:
        """New words for a note (the page's edit), with their embedding; False if gone."""
        with self.store.write("changing a note") as conn:
            return conn.execute(
                "UPDATE notes SET text = ?, embedding = ?, embedder = ? WHERE id = ?",
                (text, vector_blob(embedding), embedder, note_id),
            ).rowcount > 0

    def delete(self, note_id: int) -> bool:
        """Take one note back ("undo that"); False when it was already gone."""
        with self.store.write("taking a note back") as conn:
            return conn.execute("DELETE FROM notes WHERE id = ?", (note_id,)).rowcount > 0

    def recent(self, limit: int = 2000) -> list[tuple[Note, np.ndarray | None, str]]:
        with self.store.read() as conn:
            rows = conn.execute(
                "SELECT id, text, at, speaker, embedding, embedder FROM notes"
                " ORDER BY at_ts DESC, id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [
            (
                Note(r["id"], r["text"], parse_iso(r["at"]), r["speaker"]),
                blob_vector(r["embedding"]),
                r["embedder"],
            )
            for r in rows
        ]

    def set_embedding(self, note_id: int, vector: np.ndarray, embedder: str) -> None:
        with self.store.write("caching an embedding") as conn:
            conn.execute(
                "UPDATE notes SET embedding = ?, embedder = ? WHERE id = ?",
                (vector_blob(vector), embedder, note_id),
            )


@dataclass(frozen=True)
class LoggedTurn:
    id: int
    at: datetime
    utterance: str
    intent: str
    reply: str
    outcome: str
    error_class: str


class TurnLog:
    """Every turn: utterance, decision, reply, outcome and a coarse error class."""

    def __init__(self, store: Store, tz: tzinfo):
        self.store, self.tz = store, tz

    def add(
        self,
        at: datetime,
        utterance: str,
        *,
        intent: str,
        decision: dict[str, Any] | None,
        reply: str,
        outcome: str,
        error_class: str = "",
        duration_ms: float = 0.0,
        speaker: str = "",
    ) -> int:
        at = at.astimezone(self.tz)
        with self.store.write("logging the turn") as conn:
            cursor = conn.execute(
                "INSERT INTO turns (at, at_ts, utterance, intent, decision, reply, outcome,"
                " error_class, duration_ms, speaker) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    iso(at),
                    at.timestamp(),
                    utterance,
                    intent,
                    json.dumps(decision, ensure_ascii=False) if decision is not None else None,
                    reply,
                    outcome,
                    error_class,
                    duration_ms,
                    speaker,
                ),
            )
        return int(cursor.lastrowid or 0)

    def last(self, *, skip_outcomes: Sequence[str] = ()) -> LoggedTurn | None:
        marks = ",".join("?" for _ in skip_outcomes) or "''"
        with self.store.read() as conn:
            row = conn.execute(
                "SELECT id, at, utterance, intent, reply, outcome, error_class FROM turns"
                f" WHERE outcome NOT IN ({marks}) ORDER BY id DESC LIMIT 1",
                tuple(skip_outcomes),
            ).fetchone()
        if row is None:
            return None
        return LoggedTurn(
            row["id"],
            parse_iso(row["at"]),
            row["utterance"],
            row["intent"],
            row["reply"],
            row["outcome"],
            row["error_class"],
        )

    def count(self) -> int:
        with self.store.read() as conn:
            return int(conn.execute("SELECT count(*) FROM turns").fetchone()[0])


class ActLog:
    """What each act ran, its exit code, its output and its error class."""

    OUTPUT_CHARS = 4000  # enough to diagnose; a chatty program must not bloat the file

    def __init__(self, store: Store, tz: tzinfo):
        self.store, self.tz = store, tz

    def add(
        self,
        at: datetime,
        name: str,
        argv: Sequence[str],
        *,
        exit_code: int | None,
        error_class: str,
        stdout: str,
        stderr: str,
        duration_ms: float,
    ) -> int:
        at = at.astimezone(self.tz)
        with self.store.write("logging an act") as conn:
            cursor = conn.execute(
                "INSERT INTO act_runs (at, at_ts, name, argv, exit_code, error_class, stdout,"
                " stderr, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    iso(at),
                    at.timestamp(),
                    name,
                    json.dumps(list(argv)),
                    exit_code,
                    error_class,
                    stdout[-self.OUTPUT_CHARS :],
                    stderr[-self.OUTPUT_CHARS :],
                    duration_ms,
                ),
            )
        return int(cursor.lastrowid or 0)

    def runs(self, name: str | None = None) -> list[dict[str, Any]]:
        with self.store.read() as conn:
            rows = conn.execute(
                "SELECT * FROM act_runs WHERE (? IS NULL OR name = ?) ORDER BY id",
                (name, name),
            ).fetchall()
        return [dict(r) for r in rows]


# The session table holds one row per conversation (a Home Assistant conversation id, a
# Wyoming peer, a satellite) and per key kind (a pending yes/no, the reminder or list in
# focus, the topic). Conversations come and go; the table must not grow with them.
SESSION_MAX_ROWS = 1000  # per-conversation rows kept at most (the least recently written go)
SESSION_PRUNE_BATCH = 64  # rows one write deletes at most: a write stays a few ms


class SessionState:
    """Small shared state between turns and processes (a pending confirmation).

    Bounded: past `SESSION_MAX_ROWS` rows of conversations (keys with a ":"), each `put`
    deletes the least recently written ones (at most `SESSION_PRUNE_BATCH`); the
    daemon-wide rows ("listening", "confirm", "memory.last") are never counted or evicted.
    `prune(now_ts)` deletes every expired row too: the daemon runs it at start and every
    few minutes, with its own clock (a row's expiry is in the clock of whoever wrote it,
    so `put` never judges expiry). A row's rowid is its write order: `put` replaces it."""

    def __init__(self, store: Store, *, max_rows: int = SESSION_MAX_ROWS):
        self.store = store
        self.max_rows = max_rows

    def put(self, key: str, value: Any, *, expires_ts: float | None = None) -> None:
        with self.store.write("saving the session state") as conn:
            # REPLACE (not an upsert): the row gets a new rowid, so rowid order is the
            # order of the last writes and the oldest conversation is the smallest.
            conn.execute(
                "INSERT OR REPLACE INTO session (key, value, expires_ts) VALUES (?, ?, ?)",
                (key, json.dumps(value), expires_ts),
            )
            (count,) = conn.execute(
                "SELECT count(*) FROM session WHERE instr(key, ':') > 0"
            ).fetchone()
            over = min(int(count) - self.max_rows, SESSION_PRUNE_BATCH)
            if over > 0:
                conn.execute(
                    "DELETE FROM session WHERE rowid IN (SELECT rowid FROM session"
                    " WHERE instr(key, ':') > 0 ORDER BY rowid LIMIT ?)",
                    (over,),
                )

    def prune(self, now_ts: float) -> int:
        """Delete every row expired at `now_ts` and the conversations' rows past the bound
        (the least recently written); how many rows went."""
        with self.store.write("pruning the session state") as conn:
            gone = conn.execute(
                "DELETE FROM session WHERE expires_ts IS NOT NULL AND expires_ts < ?",
                (now_ts,),
            ).rowcount
            gone += conn.execute(
                "DELETE FROM session WHERE rowid IN (SELECT rowid FROM session"
                " WHERE instr(key, ':') > 0 ORDER BY rowid DESC LIMIT -1 OFFSET ?)",
                (self.max_rows,),
            ).rowcount
        return int(gone)

    def count(self) -> int:
        with self.store.read() as conn:
            return int(conn.execute("SELECT count(*) FROM session").fetchone()[0])

    def get(self, key: str, *, now_ts: float | None = None) -> Any | None:
        """The value, or None when absent or (given `now_ts`) expired."""
        entry = self.get_with_expiry(key)
        if entry is None:
            return None
        value, expires = entry
        if now_ts is not None and expires is not None and expires < now_ts:
            return None
        return value

    def get_with_expiry(self, key: str) -> tuple[Any, float | None] | None:
        with self.store.read() as conn:
            row = conn.execute(
                "SELECT value, expires_ts FROM session WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else (json.loads(row["value"]), row["expires_ts"])

    def pop(self, key: str) -> Any | None:
        """Remove and return the value, atomically: two turns cannot both take it."""
        with self.store.write("updating the session state") as conn:
            row = conn.execute("SELECT value FROM session WHERE key = ?", (key,)).fetchone()
            conn.execute("DELETE FROM session WHERE key = ?", (key,))
        return None if row is None else json.loads(row["value"])
