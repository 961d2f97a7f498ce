"""forget: erasing what mavend stored about the user, by voice; every one asks first.

    "forget everything (you know about me)"   notes, facts and what memory learned
    "delete all my notes"                     notes
    "clear my log" / "delete all my facts"    facts
    "forget what you learned"                 memory's habits and repairs
    "forget the wifi password"                the one note or fact recall finds for it

One row is found the way a question finds it (handlers/recall.py, above its floor) and
said back in the question, so what goes is what the user hears; "undo that" brings it
back. Before, "forget the wifi password" was routed as a question and read it out.

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
from datetime import datetime
from typing import Any

from mavend.handlers.common import HandlerContext, Outcome, Reply, TurnContext, human_list
from mavend.handlers.confirm import Confirmations
from mavend.handlers.recall import Recall
from mavend.memory.engine import LAST_KEY, voice_scope
from mavend.replies import Change
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


# One row: "forget the wifi password", "forget what i said about the plumber", "delete
# the note about the boiler". A pronoun alone ("forget it", "forget about that") is no
# row: it takes a request back (router/negation.py).
_ONE = (
    re.compile(
        rf"^(?:please )?{_ERASE} (?:the |my )?(?:note|notes|entry|log entry|fact)"
        r" (?:about|on|saying|that says|with|for) (?P<what>.+)$"
    ),
    re.compile(
        r"^(?:please )?(?:forget|erase) (?:what i (?:said|told you) about |about )?"
        r"(?P<what>(?:my|the|our) (?!notes?$|facts?$|logs?$)\S.*)$"
    ),
    re.compile(r"^(?:please )?(?:forget|erase) what i (?:said|told you) about (?P<what>\S.+)$"),
    # "forget where my car is", "forget where i put the spare key": that row, found by
    # its thing ("Sorry, I can't help with that here.")
    re.compile(
        r"^(?:please )?(?:forget|erase) where (?:(?P<what>(?:my|the|our) \S.*?) (?:is|are|was|were)"
        r"|i (?:put|left|parked|hid) (?P<what2>(?:my|the|our) \S.*?))$"
    ),
)
# The newest row: "delete my last note", "forget the last thing i told you", "remove the
# note i just made" (it was refused as an act).
_LAST = re.compile(
    rf"^(?:please )?{_ERASE} (?:my |the )?(?:(?:last|latest|most recent|previous) "
    r"(?P<kind>note|entry|log entry|fact|thing i (?:said|told you))"
    r"|(?P<kind2>note|entry|fact) i just (?:made|added|saved|took|gave you))$"
)
_NOT_ONE = re.compile(
    r"^(?:it|that|this|them|those|these|about it|about that|me)$"
    # reminders, timers and lists have their own commands
    r"|\b(?:reminders?|alarms?|timers?|lists?)\b"
)


@dataclass(frozen=True)
class ForgetCommand:
    scope: str  # a key of SCOPES, "one" or "last"
    what: str = ""  # one: the words that find the row


def parse_forget(said: str) -> ForgetCommand | None:
    """A spoken bulk erasure, or None. `said` is normalized, the wake word stripped."""
    said = normalize(said)
    for scope, pattern in _PATTERNS:
        if pattern.match(said):
            return ForgetCommand(scope)
    if last := _LAST.match(said):
        kind = last["kind"] or last["kind2"]
        return ForgetCommand("last", "note" if kind == "note" else "")
    for pattern in _ONE:
        found = pattern.match(said)
        what = (found.groupdict().get("what") or found.groupdict().get("what2") or ""
                ) if found else ""
        if what and not _NOT_ONE.search(what):
            return ForgetCommand("one", what)
    return None


class ForgetHandler:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx
        self.confirm = Confirmations(ctx)
        self.recall = Recall(ctx)

    def command(self, command: ForgetCommand, context: TurnContext | None = None) -> Reply:
        if command.scope == "one":
            return self._one(command.what, context)
        if command.scope == "last":
            return self._last(command.what, context)
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

    def _one(self, what: str, context: TurnContext | None) -> Reply:
        found = [r for r in self.recall.search(what) if self._erasable(r.kind, r.id)]
        if not found:
            return Reply(f"I have nothing stored about {what}.", data={"forgot": {}})
        row = found[0]
        session = context.session if context is not None else ""
        return self.confirm.ask(
            session,
            "forget.one",
            {"kind": row.kind, "id": row.id},
            f"Forget “{row.text}”?",
            data={"kind": row.kind, "id": row.id},
        )

    def _last(self, kind: str, context: TurnContext | None) -> Reply:
        """The newest note (or note or fact, for "the last thing i told you") this voice may
        erase, asked about first."""
        rows: list[tuple[datetime, str, int, str]] = [
            (note.at, "note", note.id, note.text) for note, _, _ in self.ctx.notes.recent(20)
            if self._erasable("note", note.id)
        ]
        if kind != "note":
            rows += [(fact.at, "fact", fact.id, fact.utterance or fact.key)
                     for fact, _, _ in self.ctx.facts.recent(20)
                     if self._erasable("fact", fact.id)]
        if not rows:
            return Reply("There's no note to forget." if kind == "note"
                         else "There's nothing stored to forget.", data={"forgot": {}})
        _, row_kind, row_id, text = max(rows, key=lambda r: (r[0], r[2]))
        session = context.session if context is not None else ""
        return self.confirm.ask(
            session,
            "forget.one",
            {"kind": row_kind, "id": row_id},
            f"Forget “{text}”?",
            data={"kind": row_kind, "id": row_id},
        )

    def _erasable(self, kind: str, row_id: int) -> bool:
        """Whether this voice's erasure reaches the row (see `_whose`)."""
        table = "notes" if kind == "note" else "facts"
        whose = _whose(table, self.ctx.erasable(), self.ctx.settings.memory.scope)
        if whose is None:
            return False
        with self.ctx.store.read() as conn:
            query = f"SELECT 1 FROM {table} WHERE id = ?{whose[0]}"
            return conn.execute(query, (row_id, *whose[1])).fetchone() is not None

    def _forget_one(self, pending: Mapping[str, Any]) -> Reply:
        kind, row_id = str(pending.get("kind", "")), pending.get("id")
        if kind not in ("note", "fact") or not isinstance(row_id, int):
            return Reply("That question has lapsed; ask again.", Outcome.REFUSED)
        deleted = delete_row(self.ctx, kind, row_id)
        if deleted is None:
            return Reply("Done: it was already gone.", data={"forgot": {}})
        said, change = deleted
        return Reply(f"Done: I forgot “{said}”.", data={"forgot": {f"{kind}s": 1}},
                     changes=(change,))

    def confirmed(self, op: str, pending: Mapping[str, Any]) -> Reply:
        if op == "forget.one":
            return self._forget_one(pending)
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


def delete_row(ctx: HandlerContext, kind: str, row_id: int) -> tuple[str, Change] | None:
    """Delete one note or fact (`kind` "note" or "fact"): its words and the change for the
    journal, which "undo that" reverses; None when it was already gone. Voice and page
    deletes (mavend/web/actions.py) both come here."""
    with ctx.store.read() as conn:
        if kind == "note":
            row = conn.execute("SELECT text FROM notes WHERE id = ?", (row_id,)).fetchone()
        else:
            row = conn.execute(
                "SELECT key, value, utterance FROM facts WHERE id = ?", (row_id,)
            ).fetchone()
    if row is None or not (ctx.notes if kind == "note" else ctx.facts).delete(row_id):
        return None
    if kind == "note":
        said = row["text"]
        return said, Change("note.delete", f"deleted the note “{said}”", {"text": said})
    said = row["utterance"] or f"{row['key']}: {row['value']}"
    ref = {"key": row["key"], "value": row["value"], "utterance": row["utterance"]}
    return said, Change("fact.delete", f"deleted “{said}”", ref)


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
