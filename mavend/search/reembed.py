"""Re-embedding, off the turn path: rows whose stored vector is missing or another
model's get the current embedder's, a batch at a time, in a background thread.

Each batch is one transaction, and the thread pauses between batches so that a turn
on two cores is not starved. A row deleted meanwhile is simply not updated (its UPDATE
matches nothing). Until the job is done, recall finds those rows by their words.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from mavend.state.records import vector_blob
from mavend.state.store import Store

log = logging.getLogger(__name__)

BATCH = 64
PAUSE_S = 0.02  # between batches: ~1.5 ms per row embedding here, so ~25% idle


class Embedder(Protocol):
    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


# Which text a row is embedded from, per table: (id, text) rows in id order.
_STALE = {
    "notes": "SELECT id, text FROM notes WHERE (embedder != ? OR embedding IS NULL) AND id > ?"
    " ORDER BY id LIMIT ?",
    "facts": "SELECT id, key, value, utterance FROM facts"
    " WHERE (embedder != ? OR embedding IS NULL) AND id > ? ORDER BY id LIMIT ?",
}

FactText = Callable[[str, str, str], str]  # (key, value, utterance) -> the text to embed


def stale_rows(
    conn: sqlite3.Connection, table: str, embedder: str, after: int, limit: int, fact_text: FactText
) -> list[tuple[int, str]]:
    rows = conn.execute(_STALE[table], (embedder, after, limit)).fetchall()
    if table == "notes":
        return [(int(r[0]), str(r[1])) for r in rows]
    return [(int(r[0]), fact_text(r[1], r[2], r[3])) for r in rows]


def store_vectors(
    store: Store, table: str, ids: Sequence[int], vectors: np.ndarray, embedder: str
) -> list[int]:
    """Write the vectors in one transaction; the ids of the rows still there."""
    if table not in _STALE:
        raise ValueError(f"no vectors are kept for {table!r}")
    kept = []
    with store.write("saving re-embedded vectors") as conn:
        for row_id, vector in zip(ids, vectors, strict=True):
            cursor = conn.execute(
                f"UPDATE {table} SET embedding = ?, embedder = ? WHERE id = ?",
                (vector_blob(vector), embedder, row_id),
            )
            if cursor.rowcount:
                kept.append(row_id)
    return kept


class Reembedder:
    """The background job. `save(table, ids, vectors)` stores a batch and returns the ids
    of the rows still there (RecordSearch's, which also holds them in memory)."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        name: str,
        fact_text: FactText,
        save: Callable[[str, list[int], np.ndarray], list[int]],
        *,
        batch: int = BATCH,
        pause_s: float = PAUSE_S,
    ) -> None:
        self.store, self.embedder, self.name = store, embedder, name
        self.fact_text, self.save = fact_text, save
        self.batch, self.pause_s = batch, pause_s
        self.done = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="mavend-reembed", daemon=True)
        self._thread.start()

    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    def run_batch(self, table: str, after: int) -> int:
        """Re-embed one batch of `table` past id `after`; the last id done (0: none left)."""
        with self.store.read() as conn:
            rows = stale_rows(conn, table, self.name, after, self.batch, self.fact_text)
        if not rows:
            return 0
        vectors = self.embedder.embed([text for _, text in rows])
        self.done += len(self.save(table, [i for i, _ in rows], vectors))
        return rows[-1][0]

    def _run(self) -> None:
        try:
            for table in ("notes", "facts"):
                after = 0
                while not self._stop.is_set():
                    after = self.run_batch(table, after)
                    if not after:
                        break
                    self._stop.wait(self.pause_s)
            log.info("re-embedded %d rows with %s", self.done, self.name)
        except Exception:  # the rows keep their old vectors and are found by word meanwhile
            log.exception("re-embedding stopped after %d rows", self.done)
