"""The changes table: what each turn changed, grouped by turn, per session."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo

from mavend.replies import Change
from mavend.state.store import Store, iso


@dataclass(frozen=True)
class ChangedTurn:
    """One turn's changes, as recorded."""

    turn: int
    session: str
    at: datetime
    said: str
    changes: tuple[Change, ...]
    undone: bool
    undo_of: int | None  # the turn this one took back, if it was an undo


class UndoJournal:
    """One write per turn that changed something; reads are per session."""

    def __init__(self, store: Store, tz: tzinfo):
        self.store, self.tz = store, tz

    def record(
        self,
        session: str,
        said: str,
        changes: Sequence[Change],
        at: datetime,
        *,
        undo_of: int | None = None,
    ) -> int:
        """Record a turn's changes (and, for an undo, mark the turn it took back);
        returns the turn's number, 0 when nothing changed."""
        if not changes:
            return 0
        at = at.astimezone(self.tz)
        with self.store.write("recording what changed") as conn:
            (last,) = conn.execute("SELECT COALESCE(MAX(turn), 0) FROM changes").fetchone()
            turn = int(last) + 1
            rows = [
                (turn, session, iso(at), at.timestamp(), said[:500], c.kind, c.summary,
                 json.dumps(dict(c.ref), ensure_ascii=False), int(c.undoable), undo_of)
                for c in changes
            ]  # fmt: skip
            conn.executemany(
                "INSERT INTO changes (turn, session, at, at_ts, said, kind, summary, ref,"
                " undoable, undo_of) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            if undo_of is not None:
                conn.execute(
                    "UPDATE changes SET undone_at = ? WHERE turn = ? AND undone_at IS NULL",
                    (iso(at), undo_of),
                )
        return turn

    def recent(self, session: str, limit: int, *, undone: bool = False) -> list[ChangedTurn]:
        """This session's latest turns that changed something, newest first; taken-back
        ones only when `undone`."""
        with self.store.read() as conn:
            turns = [
                r[0]
                for r in conn.execute(
                    "SELECT DISTINCT turn FROM changes WHERE session = ?"
                    + ("" if undone else " AND undone_at IS NULL")
                    + " ORDER BY turn DESC LIMIT ?",
                    (session, limit),
                )
            ]
            return [t for t in (self._turn(conn, turn) for turn in turns) if t is not None]

    def latest(self, limit: int) -> list[ChangedTurn]:
        """Every session's latest turns that changed something, newest first (the page)."""
        with self.store.read() as conn:
            turns = [
                r[0]
                for r in conn.execute(
                    "SELECT DISTINCT turn FROM changes ORDER BY turn DESC LIMIT ?", (limit,)
                )
            ]
            return [t for t in (self._turn(conn, turn) for turn in turns) if t is not None]

    def get(self, turn: int) -> ChangedTurn | None:
        with self.store.read() as conn:
            return self._turn(conn, turn)

    def _turn(self, conn, turn: int) -> ChangedTurn | None:
        rows = conn.execute("SELECT * FROM changes WHERE turn = ? ORDER BY id", (turn,)).fetchall()
        if not rows:
            return None
        first = rows[0]
        return ChangedTurn(
            turn=turn,
            session=first["session"],
            at=datetime.fromisoformat(first["at"]),
            said=first["said"],
            changes=tuple(
                Change(r["kind"], r["summary"], json.loads(r["ref"]), bool(r["undoable"]))
                for r in rows
            ),
            undone=first["undone_at"] is not None,
            undo_of=first["undo_of"],
        )
