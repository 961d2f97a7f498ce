"""forget: erasing what mavend stored about the user, by voice; every one asks first.

    "forget everything (you know about me)"   notes, facts and what memory learned
    "delete all my notes"                     notes
    "clear my log" / "delete all my facts"    facts
    "forget what you learned"                 memory's habits and repairs

A bulk erasure is destructive: it waits for a clear yes from the session that asked
(handlers.confirm), and the yes erases only what existed when the question was asked
(the highest row id of each table is kept with the question), so a note saved in
between is not lost. Reminders and lists have their own bulk commands and are not
touched here. Exact patterns only: anything else routes as usual.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mavend.handlers.common import HandlerContext, Outcome, Reply, TurnContext, human_list
from mavend.handlers.confirm import Confirmations
from mavend.memory.engine import LAST_KEY, voice_scope
from mavend.router.grammar import normalize
from mavend.state.records import Speakers, speakers_clause

# The word index over a table (schema 7). It drops an erased row's words only when its
# segments merge, so an erasure merges them at once: the forgotten words leave the
# index in the same transaction (mavend.search).
WORD_INDEXES = {"notes": "notes_fts", "facts": "facts_fts"}
# The tables whose rows are kept per voice (schema 10's `speaker` column).
SPEAKER_TABLES = frozenset({"notes", "facts"})

# What each scope erases: tables, in the order they are named in the reply.
SCOPES: dict[str, tuple[str, ...]] = {
    "everything": ("notes", "facts", "memory"),
    "notes": ("notes",),
    "facts": ("facts",),
    "memory": ("memory",),
}
_NOUNS = {
    "notes": ("note", "notes"),
    "facts": ("logged fact", "logged facts"),
    "memory": ("learned habit", "learned habits"),
}

_ERASE = r"(?:forget|delete|erase|wipe|clear|remove|get rid of)"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("everything", re.compile(
        rf"^(?:please )?{_ERASE} (?:everything"
        r"(?: you(?: have|'ve)? (?:know|remember|stored|saved))?"
        r"|(?:all|everything) you (?:know|have stored|remember) about me)(?: about me)?$"
        r"|^(?:please )?wipe (?:all )?(?:my data|everything about me)$"
    )),
    ("notes", re.compile(rf"^(?:please )?{_ERASE} (?:all )?(?:of )?(?:my|the) notes$")),
    ("facts", re.compile(
        rf"^(?:please )?{_ERASE} (?:all )?(?:of )?(?:my|the) (?:facts|logs?|log entries)$"
    )),
    ("memory", re.compile(
        rf"^(?:please )?{_ERASE} (?:what|everything) you(?:'ve| have)? (?:learned|learnt)"
        r"(?: from me)?$|^(?:please )?(?:forget|delete|reset) (?:all )?(?:my|your) habits$"
    )),
)


@dataclass(frozen=True)
class ForgetCommand:
    scope: str  # a key of SCOPES


def parse_forget(said: str) -> ForgetCommand | None:
    """A spoken bulk erasure, or None. `said` is normalized, the wake word stripped."""
    said = normalize(said)
    for scope, pattern in _PATTERNS:
        if pattern.match(said):
            return ForgetCommand(scope)
    return None


class ForgetHandler:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx
        self.confirm = Confirmations(ctx)

    def command(self, command: ForgetCommand, context: TurnContext | None = None) -> Reply:
        tables = SCOPES[command.scope]
        speakers = self.ctx.erasable()
        counts, highest = self._counts(tables, speakers)
        if not any(counts.values()):
            return Reply("There's nothing stored to forget.", data={"forgot": {}})
        what = _described(counts)
        session = context.session if context is not None else ""
        return self.confirm.ask(
            session,
            f"forget.{command.scope}",
            {"upto": highest, "speakers": None if speakers is None else list(speakers)},
            f"Forget {what}? This can't be undone.",
            data={"counts": counts},
        )

    def confirmed(self, op: str, pending: Mapping[str, Any]) -> Reply:
        scope = op.partition(".")[2]
        upto = pending.get("upto") or {}
        if scope not in SCOPES or not isinstance(upto, Mapping):
            return Reply("That question has lapsed; ask again.", Outcome.REFUSED)
        erased: dict[str, int] = {}
        listed = pending.get("speakers")
        speakers = None if listed is None else tuple(str(name) for name in listed)
        with self.ctx.store.write("forgetting what was stored") as conn:
            for table in SCOPES[scope]:
                whose = _whose(table, speakers, self.ctx.settings.memory.scope)
                if whose is None:
                    continue
                limit = int(upto.get(table, 0))
                # Table names come from SCOPES, never from the question's payload.
                cursor = conn.execute(f"DELETE FROM {table} WHERE id <= ?{whose[0]}",
                                      (limit, *whose[1]))
                erased[table] = int(cursor.rowcount)
                if (index := WORD_INDEXES.get(table)) and cursor.rowcount:
                    conn.execute(f"INSERT INTO {index} ({index}) VALUES ('optimize')")
            if "memory" in SCOPES[scope]:
                # The turn memory would learn from next goes with what it learned.
                conn.execute("DELETE FROM session WHERE key = ?", (LAST_KEY,))
        said = _described(erased) if any(erased.values()) else "nothing (it was already gone)"
        return Reply(f"Done: I forgot {said}.", data={"forgot": erased})

    def _counts(
        self, tables: tuple[str, ...], speakers: Speakers
    ) -> tuple[dict[str, int], dict[str, int]]:
        counts: dict[str, int] = {}
        highest: dict[str, int] = {}
        with self.ctx.store.read() as conn:
            for table in tables:
                whose = _whose(table, speakers, self.ctx.settings.memory.scope)
                if whose is None:
                    continue
                query = f"SELECT count(*), coalesce(max(id), 0) FROM {table} WHERE 1{whose[0]}"
                row = conn.execute(query, whose[1]).fetchone()
                counts[table], highest[table] = int(row[0]), int(row[1])
        return counts, highest


def _whose(
    table: str, speakers: Speakers, memory_scope: str
) -> tuple[str, tuple[str, ...]] | None:
    """The rows of `table` one voice's erasure reaches: its own notes and facts, and the
    habits and repairs memory learned from it (an unknown voice: the household's); every
    row when voices are not told apart. None: none of this table."""
    if speakers is None:
        return "", ()
    if table in SPEAKER_TABLES:
        return speakers_clause(speakers)
    if table == "memory":
        (speaker,) = speakers
        return " AND scope = ?", (voice_scope(memory_scope, speaker) if speaker else memory_scope,)
    return None


def _described(counts: Mapping[str, int]) -> str:
    parts = []
    for table, count in counts.items():
        if count:
            one, many = _NOUNS[table]
            parts.append(f"{count} {one if count == 1 else many}")
    return human_list(parts)
