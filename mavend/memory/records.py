"""The memory table: habit and repair records, and the guard on reading them back.

Rows live in the shared SQLite file (`mavend.state.store`, migration 2). Every row
this module writes carries a structured JSON `marker` naming the writer, and a
`name` that must agree with it. Reading back, a row counts only if both check
out: a row that merely *looks* like a repair (the right name prefix, no marker;
a marker whose signature disagrees with the name) never reaches routing or a
prompt, whoever put it there.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mavend.memory.signature import FailureSignature
from mavend.memory.text import stored_content_words
from mavend.state.store import Store, iso

WRITER = "mavend.memory"
MARKER_VERSION = 1
HABIT = "habit"
REPAIR = "repair"
HABIT_PREFIX = "habit::"
REPAIR_PREFIX = "repair::"

# Where a habit record came from: the router's own judgement, or the user's word.
ROUTED = "routed"
CONFIRMED = "confirmed"  # the user answered the router's question
CORRECTED = "corrected"  # the user corrected the turn ("no, I meant ...")
USER_SOURCES = (CONFIRMED, CORRECTED)

_COLUMNS = (
    "id, kind, name, scope, utterance, intent, fn, args, confidence, source, marker,"
    " successes, failures, at, at_ts, updated_ts"
)


@dataclass(frozen=True)
class Habit:
    """One judged intent: what was said and what it turned out to mean."""

    id: int
    scope: str
    utterance: str
    intent: str
    fn: str
    args: dict[str, str]
    confidence: float
    source: str
    at: str
    words: tuple[str, ...] = field(default=(), compare=False)

    @property
    def user_backed(self) -> bool:
        return self.source in USER_SOURCES


@dataclass(frozen=True)
class Repair:
    """Failure signature -> the route and slots that fixed it, with its record."""

    id: int
    scope: str
    signature: FailureSignature
    utterance: str
    intent: str
    fn: str
    args: dict[str, str]
    successes: int
    failures: int
    at: str

    @property
    def name(self) -> str:
        return REPAIR_PREFIX + self.signature.key()

    @property
    def live(self) -> bool:
        """Applied only while it has worked more often than it failed."""
        return self.successes > self.failures


def habit_name(intent: str) -> str:
    return f"{HABIT_PREFIX}{intent}"


def _marker(kind: str, **fields: Any) -> str:
    return json.dumps({"writer": WRITER, "v": MARKER_VERSION, "kind": kind, **fields})


def _read_marker(row: sqlite3.Row) -> dict[str, Any] | None:
    raw = row["marker"]
    if not raw:
        return None
    try:
        marker = json.loads(raw)
    except (TypeError, ValueError):
        return None
    if not isinstance(marker, dict):
        return None
    if marker.get("writer") != WRITER or marker.get("v") != MARKER_VERSION:
        return None
    if marker.get("kind") != row["kind"]:
        return None
    return marker


def _args(raw: str) -> dict[str, str] | None:
    try:
        value = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return None
    if not isinstance(value, dict):
        return None
    return {str(k): str(v) for k, v in value.items()}


def own_habit(row: sqlite3.Row) -> Habit | None:
    """The row as a Habit, or None unless this module wrote it (marker + name agree)."""
    if row["kind"] != HABIT:
        return None
    marker = _read_marker(row)
    if marker is None:
        return None
    intent, fn = row["intent"], row["fn"]
    if marker.get("intent") != intent or marker.get("fn") != fn:
        return None
    if row["name"] != habit_name(intent):
        return None
    args = _args(row["args"])
    if args is None:
        return None
    return Habit(
        row["id"],
        row["scope"],
        row["utterance"],
        intent,
        fn,
        args,
        float(row["confidence"]),
        row["source"],
        row["at"],
        stored_content_words(row["utterance"]),
    )


def own_repair(row: sqlite3.Row) -> Repair | None:
    """The row as a Repair, or None unless this module wrote it.

    A name with the right prefix is not enough (anyone can write that): the
    structured marker must be present, name a signature, and the name must be
    exactly that signature's key; the target must agree with the marker too.
    """
    if row["kind"] != REPAIR:
        return None
    marker = _read_marker(row)
    if marker is None:
        return None
    signature = FailureSignature.from_json(marker.get("signature"))
    if signature is None or row["name"] != REPAIR_PREFIX + signature.key():
        return None
    if marker.get("intent") != row["intent"] or marker.get("fn") != row["fn"]:
        return None
    args = _args(row["args"])
    if args is None:
        return None
    return Repair(
        row["id"],
        row["scope"],
        signature,
        row["utterance"],
        row["intent"],
        row["fn"],
        args,
        int(row["successes"]),
        int(row["failures"]),
        row["at"],
    )


# A habit or a repair is about how a command is phrased: a spoken command is a
# few dozen words. Longer text (a pasted document) is kept only this far.
MAX_UTTERANCE_CHARS = 500


class MemoryTable:
    """SQL for the `memory` table. Writes are one IMMEDIATE transaction each."""

    def __init__(self, store: Store):
        self.store = store

    # habits --------------------------------------------------------------
    def add_habit(
        self,
        *,
        scope: str,
        utterance: str,
        intent: str,
        fn: str,
        args: Mapping[str, str],
        confidence: float,
        source: str,
        now: datetime,
        keep: int,
    ) -> int:
        with self.store.write("remembering a habit") as conn:
            cursor = conn.execute(
                f"INSERT INTO memory ({_COLUMNS.partition(', ')[2]})"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?, ?)",
                (
                    HABIT,
                    habit_name(intent),
                    scope,
                    utterance[:MAX_UTTERANCE_CHARS],
                    intent,
                    fn,
                    json.dumps(dict(args), ensure_ascii=False),
                    float(confidence),
                    source,
                    _marker(HABIT, intent=intent, fn=fn),
                    iso(now),
                    now.timestamp(),
                    now.timestamp(),
                ),
            )
            # Bounded: the oldest habits of this scope go first.
            conn.execute(
                "DELETE FROM memory WHERE kind = ? AND scope = ? AND id NOT IN"
                " (SELECT id FROM memory WHERE kind = ? AND scope = ?"
                " ORDER BY at_ts DESC, id DESC LIMIT ?)",
                (HABIT, scope, HABIT, scope, keep),
            )
        return int(cursor.lastrowid or 0)

    def scopes_under(self, scope: str) -> list[str]:
        """`scope` and its enrolled voices' scopes ("owner", "owner:sam", ...)."""
        with self.store.read() as conn:
            found = {r[0] for r in conn.execute(
                "SELECT DISTINCT scope FROM memory WHERE scope = ? OR substr(scope, 1, ?) = ?",
                (scope, len(scope) + 1, scope + ":"),
            )}
        return [scope, *sorted(found - {scope})]

    def habits(self, scope: str, limit: int) -> list[Habit]:
        with self.store.read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM memory WHERE kind = ? AND scope = ?"
                " ORDER BY at_ts DESC, id DESC LIMIT ?",
                (HABIT, scope, limit),
            ).fetchall()
        return [h for h in (own_habit(r) for r in rows) if h is not None]

    # repairs -------------------------------------------------------------
    def repairs(self, scope: str) -> list[Repair]:
        with self.store.read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM memory WHERE kind = ? AND scope = ?"
                " ORDER BY updated_ts DESC, id DESC",
                (REPAIR, scope),
            ).fetchall()
        return [r for r in (own_repair(row) for row in rows) if r is not None]

    def repair(self, scope: str, signature: FailureSignature) -> Repair | None:
        with self.store.read() as conn:
            return _find_repair(conn, scope, signature)

    def store_repair(
        self,
        *,
        scope: str,
        signature: FailureSignature,
        utterance: str,
        intent: str,
        fn: str,
        args: Mapping[str, str],
        now: datetime,
    ) -> Repair:
        """One repair per signature: a new one is stored with one success; an existing
        one with the same target is credited, one with another target is kept as is.

        The look-up and the write are one IMMEDIATE transaction: two processes storing
        the same correction at once (the daemon and `mavend say`) store one repair with
        two successes, never two repairs."""
        with self.store.write("remembering a repair") as conn:
            existing = _find_repair(conn, scope, signature)
            if existing is not None:
                if (existing.intent, existing.fn, existing.args) != (intent, fn, dict(args)):
                    return existing
                return _count(conn, existing, success=True, now=now) or existing
            cursor = conn.execute(
                f"INSERT INTO memory ({_COLUMNS.partition(', ')[2]})"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 1.0, ?, ?, 1, 0, ?, ?, ?)",
                (
                    REPAIR,
                    REPAIR_PREFIX + signature.key(),
                    scope,
                    utterance[:MAX_UTTERANCE_CHARS],
                    intent,
                    fn,
                    json.dumps(dict(args), ensure_ascii=False),
                    CORRECTED,
                    _marker(REPAIR, signature=signature.to_json(), intent=intent, fn=fn),
                    iso(now),
                    now.timestamp(),
                    now.timestamp(),
                ),
            )
        return Repair(
            int(cursor.lastrowid or 0),
            scope,
            signature,
            utterance,
            intent,
            fn,
            dict(args),
            1,
            0,
            iso(now),
        )

    def credit(self, repair: Repair, *, success: bool, now: datetime) -> Repair | None:
        """Count an outcome; a repair that has failed as often as it worked is dropped.

        Returns the updated repair, or None when it was dropped (or is gone)."""
        with self.store.write("counting a repair's outcome") as conn:
            return _count(conn, repair, success=success, now=now)

    # the user's view -------------------------------------------------------
    def rows(self) -> list[sqlite3.Row]:
        with self.store.read() as conn:
            return conn.execute(f"SELECT {_COLUMNS} FROM memory ORDER BY id").fetchall()

    def delete(self, record_id: int) -> bool:
        with self.store.write("forgetting a memory") as conn:
            return conn.execute("DELETE FROM memory WHERE id = ?", (record_id,)).rowcount > 0

    def delete_all(self) -> int:
        with self.store.write("forgetting all memory") as conn:
            return int(conn.execute("DELETE FROM memory").rowcount)


def _find_repair(
    conn: sqlite3.Connection, scope: str, signature: FailureSignature
) -> Repair | None:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM memory WHERE kind = ? AND scope = ? AND name = ? ORDER BY id",
        (REPAIR, scope, REPAIR_PREFIX + signature.key()),
    ).fetchall()
    return next((r for r in (own_repair(row) for row in rows) if r is not None), None)


def _count(
    conn: sqlite3.Connection, repair: Repair, *, success: bool, now: datetime
) -> Repair | None:
    """In the caller's transaction: one outcome counted; the repair dropped (None) once
    it has failed as often as it worked."""
    column = "successes" if success else "failures"
    conn.execute(
        f"UPDATE memory SET {column} = {column} + 1, updated_ts = ? WHERE id = ?",
        (now.timestamp(), repair.id),
    )
    row = conn.execute(f"SELECT {_COLUMNS} FROM memory WHERE id = ?", (repair.id,)).fetchone()
    updated = own_repair(row) if row is not None else None
    if updated is not None and updated.failures >= updated.successes:
        conn.execute("DELETE FROM memory WHERE id = ?", (repair.id,))
        return None
    return updated
