"""Words: the FTS5 indexes over notes and facts (schema 7, kept by triggers).

Each of the question's words is one OR'd term; the tokenizer (porter, unicode61)
stems both sides, so "passports" finds "passport". A word that is in more than
COMMON rows tells little and costs much to rank (bm25 touches every matching row):
it is left out of the ranked query, and only its newest rows are taken. Probing a
word's row count stops at COMMON + 1 rows (0.15 ms at 2,000 here), so a question
costs a few milliseconds at 100,000 notes whatever it says.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable

from mavend.state.records import Speakers, speakers_clause

# The tables and the columns a question's words are looked up in.
TABLES = {"note": "notes_fts", "fact": "facts_fts"}
COMMON = 1000


def term(word: str) -> str:
    """One word as an FTS5 string: quoted, so no word is read as an operator."""
    return '"' + word.replace('"', '""') + '"'


def any_of(words: Iterable[str], columns: Collection[str] = ()) -> str:
    """An FTS5 expression matching rows holding any of the words ("" for none)."""
    terms = " OR ".join(term(w) for w in sorted(set(words)) if w.strip(' "'))
    if not terms or not columns:
        return terms
    return "{" + " ".join(columns) + "} : (" + terms + ")"


def rows_with(conn: sqlite3.Connection, table: str, expression: str, limit: int) -> int:
    """How many rows match, counted up to `limit` (the count stops there)."""
    return int(
        conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)",
            (expression, limit),
        ).fetchone()[0]
    )


def word_hits(conn: sqlite3.Connection, kind: str, words: Collection[str], limit: int) -> list[int]:
    """Ids of the rows of `kind` that share words with the question: the best `limit`
    by bm25 over its rarer words, then the newest `limit` holding any of its words."""
    table = TABLES[kind]
    words = [w for w in words if any_of([w])]
    if not words or limit <= 0:
        return []
    rare = [w for w in words if rows_with(conn, table, any_of([w]), COMMON + 1) <= COMMON]
    found: dict[int, None] = {}
    if expression := any_of(rare):
        for (row_id,) in conn.execute(
            f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT ?",
            (expression, limit),
        ):
            found[int(row_id)] = None
    if len(rare) < len(words) and (expression := any_of(words)):
        for (row_id,) in conn.execute(
            f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT ?",
            (expression, limit),
        ):
            found[int(row_id)] = None
    return list(found)


def fact_groups(
    conn: sqlite3.Connection, words: Collection[str], speakers: Speakers = None
) -> list[int]:
    """The id of the newest fact of each distinct key and value where the key or the
    value holds one of the words, among the rows `speakers` may read: what
    `FactQueries` picks its fact from."""
    expression = any_of(words, columns=("key", "value"))
    if not expression:
        return []
    whose, values = speakers_clause(speakers)
    rows = conn.execute(
        "SELECT key, value, max(at_ts) FROM facts WHERE id IN"
        " (SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?)" + whose
        + " GROUP BY key, value",
        (expression, *values),
    ).fetchall()
    return [
        int(
            conn.execute(
                "SELECT max(id) FROM facts WHERE key = ? AND value = ? AND at_ts = ?" + whose,
                (*tuple(row), *values),
            ).fetchone()[0]
        )
        for row in rows
    ]
