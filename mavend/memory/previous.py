"""Each session's previous turn: what "no, I meant ..." said there corrects.

One entry per session (the local microphone and `mavend say` are one, each satellite
and each Wyoming client its own), all under one key of the session table, `LAST_KEY`:
forgetting memory (`mavend memory forget --all`, "forget what you learned") drops every
session's at once. A turn *takes* its session's entry before anything else happens (a
"yes", a reminder command, a list item: any turn of the session ends it), so a
correction only ever reaches the turn just before it in the same session, never a turn
said in another room. Entries expire after `[memory] correction_window_s`.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from mavend.state.store import Store

LAST_KEY = "memory.last"
# Sessions kept at once (Home Assistant opens one per conversation): the soonest to
# expire go first.
MAX_SESSIONS = 64


@dataclass(frozen=True)
class LastTurn:
    """The previous turn, as memory needs it to read "no, I meant ..."."""

    said: str  # the text of that turn, as logged
    utterance: str  # the utterance it decided about (the original, for a correction)
    intent: str
    fn: str
    args: dict[str, str]
    route: str  # the router's own route for `utterance`: the signature's middle
    pattern: str
    candidates: tuple[str, ...]  # the intents a route question named; () otherwise
    outcome: str
    error_class: str
    habit_id: int
    repair: str  # the repair applied on or stored by that turn ("" none)
    applied: bool  # the repair was applied (credited once the next turn is no correction)
    before_turn: int  # the id of the logged turn before it

    @classmethod
    def from_json(cls, raw: object) -> LastTurn | None:
        if not isinstance(raw, dict):
            return None
        try:
            return cls(
                said=str(raw["said"]),
                utterance=str(raw["utterance"]),
                intent=str(raw["intent"]),
                fn=str(raw["fn"]),
                args={str(k): str(v) for k, v in dict(raw["args"]).items()},
                route=str(raw["route"]),
                pattern=str(raw["pattern"]),
                candidates=tuple(str(c) for c in raw["candidates"]),
                outcome=str(raw["outcome"]),
                error_class=str(raw["error_class"]),
                habit_id=int(raw["habit_id"]),
                repair=str(raw["repair"]),
                applied=bool(raw["applied"]),
                before_turn=int(raw["before_turn"]),
            )
        except (KeyError, TypeError, ValueError):
            return None


class PreviousTurns:
    """SQL for the `LAST_KEY` row: {session: {"turn": ..., "expires": ts}}."""

    def __init__(self, store: Store):
        self.store = store

    def take(self, session: str, *, now_ts: float) -> dict[str, Any] | None:
        """Remove and return `session`'s previous turn (None: none, or expired). Atomic:
        two turns of a session cannot both take it."""
        with self.store.read() as conn:
            if session not in _entries(conn):
                return None  # most turns: nothing to take, no write
        with self.store.write("taking the previous turn") as conn:
            entries = _entries(conn)
            entry = entries.pop(session, None)
            _save(conn, _live(entries, now_ts))
        if entry is None or float(entry["expires"]) < now_ts:
            return None
        turn = entry["turn"]
        return turn if isinstance(turn, dict) else None

    def put(self, session: str, turn: dict[str, Any], *, now_ts: float, expires_ts: float) -> None:
        with self.store.write("remembering the previous turn") as conn:
            entries = _live(_entries(conn), now_ts)
            entries[session] = {"turn": turn, "expires": expires_ts}
            _save(conn, entries)

    def sessions(self, *, now_ts: float) -> list[str]:
        """The sessions with a previous turn now (tests, `mavend memory`)."""
        with self.store.read() as conn:
            return sorted(_live(_entries(conn), now_ts))


def _entries(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    row = conn.execute("SELECT value FROM session WHERE key = ?", (LAST_KEY,)).fetchone()
    if row is None:
        return {}
    try:
        value = json.loads(row[0])
    except (TypeError, ValueError):
        return {}
    if not isinstance(value, dict):
        return {}
    # Anything else (the one-turn format before sessions, a stray row) counts as none.
    return {
        str(session): entry
        for session, entry in value.items()
        if isinstance(entry, dict)
        and isinstance(entry.get("expires"), int | float)
        and isinstance(entry.get("turn"), dict)
    }


def _live(entries: dict[str, dict[str, Any]], now_ts: float) -> dict[str, dict[str, Any]]:
    live = {s: e for s, e in entries.items() if float(e["expires"]) >= now_ts}
    if len(live) <= MAX_SESSIONS:
        return live
    keep = sorted(live, key=lambda s: float(live[s]["expires"]), reverse=True)[:MAX_SESSIONS]
    return {s: live[s] for s in keep}


def _save(conn: sqlite3.Connection, entries: dict[str, dict[str, Any]]) -> None:
    if not entries:
        conn.execute("DELETE FROM session WHERE key = ?", (LAST_KEY,))
        return
    expires = max(float(e["expires"]) for e in entries.values())
    conn.execute(
        "INSERT INTO session (key, value, expires_ts) VALUES (?, ?, ?)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_ts = excluded.expires_ts",
        (LAST_KEY, json.dumps(entries), expires),
    )
