"""RecordSearch: every note and fact, found by words and by meaning together."""

from __future__ import annotations

import sqlite3
import threading
import weakref
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np

from mavend.search import words as fts
from mavend.search.reembed import BATCH, Embedder, FactText, Reembedder, store_vectors
from mavend.search.vectors import TableVectors
from mavend.state.records import Fact, Note, Speakers, speakers_clause
from mavend.state.store import Store, parse_iso

KINDS = {"note": "notes", "fact": "facts"}


@dataclass(frozen=True)
class Hit:
    """A row found; `cosine` is None when the row has no vector from the query's embedder."""

    kind: str  # note | fact
    record: Note | Fact
    cosine: float | None

    @property
    def id(self) -> int:
        return self.record.id


_INSTANCES: weakref.WeakKeyDictionary[Store, RecordSearch] = weakref.WeakKeyDictionary()
_INSTANCES_LOCK = threading.Lock()


class RecordSearch:
    """The search over one store's notes and facts (one per Store: `RecordSearch.of`)."""

    def __init__(self, store: Store) -> None:
        # Weakly: the registry of instances must not keep a closed store alive.
        self._store = weakref.ref(store)
        self._lock = threading.RLock()
        self._vectors: dict[str, TableVectors] = {}
        # Per connection: (PRAGMA data_version, total_changes) when last in step with it.
        self._seen: dict[sqlite3.Connection, tuple[int, int]] = {}
        self._job: Reembedder | None = None
        self._writing = 0  # writes of vectors in flight

    @classmethod
    def of(cls, store: Store) -> RecordSearch:
        with _INSTANCES_LOCK:
            found = _INSTANCES.get(store)
            if found is None:
                found = _INSTANCES[store] = cls(store)
            return found

    @property
    def store(self) -> Store:
        store = self._store()
        if store is None:
            raise RuntimeError("the store this search was for is gone")
        return store

    # finding ---------------------------------------------------------------
    def find(
        self,
        words: Collection[str],
        *,
        query: np.ndarray | None = None,
        embedder: str = "",
        nearest: int = 100,
        by_words: int = 100,
        speakers: Speakers = None,
    ) -> list[Hit]:
        """The `nearest` rows of each kind closest to `query` (with `embedder`'s vectors),
        and those sharing the words (`mavend.search.words.word_hits`), each row once, read
        from the file as it is now (a row deleted meanwhile is not returned). `speakers`:
        only the rows kept for them (another voice's rows are left out of the candidates,
        so a household of a few voices keeps nearly all of its `nearest`)."""
        ids: dict[str, dict[int, float | None]] = {kind: {} for kind in KINDS}
        with self._lock, self.store.read() as conn:
            if query is not None:
                self._sync(conn, embedder, len(query))
                for kind, table in KINDS.items():
                    vectors = self._vectors[table]
                    ids[kind].update(vectors.matrix.nearest(query, nearest))
            for kind in KINDS:
                hits = fts.word_hits(conn, kind, words, by_words)
                by_word = [i for i in hits if i not in ids[kind]]
                if query is not None and by_word:
                    cosines = self._vectors[KINDS[kind]].matrix.cosines(by_word, query)
                    ids[kind].update({i: cosines.get(i) for i in by_word})
                else:
                    ids[kind].update(dict.fromkeys(by_word))
            return [
                Hit(kind, record, ids[kind][record.id])
                for kind in KINDS
                for record in _records(conn, kind, list(ids[kind]), speakers)
            ]

    def fact_groups(self, words: Collection[str], *, speakers: Speakers = None) -> list[Fact]:
        """The newest fact of each key and value holding one of the words (any age), among
        the rows `speakers` may read."""
        with self.store.read() as conn:
            ids = fts.fact_groups(conn, words, speakers)
            return [r for r in _records(conn, "fact", ids) if isinstance(r, Fact)]

    def stale(self, embedder: str, dim: int) -> int:
        """Rows without a vector from `embedder` (their recall is by words until embedded)."""
        with self._lock, self.store.read() as conn:
            self._sync(conn, embedder, dim)
            return sum(v.stale for v in self._vectors.values())

    def stale_records(self, embedder: str, limit: int) -> list[tuple[str, Note | Fact]]:
        """Up to `limit` rows of each kind without a vector from `embedder`."""
        out: list[tuple[str, Note | Fact]] = []
        with self.store.read() as conn:
            for kind, table in KINDS.items():
                ids = [
                    r[0]
                    for r in conn.execute(
                        f"SELECT id FROM {table} WHERE embedder < ?1 OR embedder > ?1"
                        " OR (embedder = ?1 AND embedding IS NULL) ORDER BY id DESC LIMIT ?2",
                        (embedder, limit),
                    )
                ]
                out += [(kind, record) for record in _records(conn, kind, ids)]
        return out

    # vectors ---------------------------------------------------------------
    def save_vectors(
        self, kind: str, ids: Sequence[int], vectors: np.ndarray, embedder: str
    ) -> None:
        """Store rows' vectors (from `embedder`) in the file, and in the matrix."""
        self._save(KINDS[kind], list(ids), vectors, embedder)

    def reembed_in_background(
        self, embedder: Embedder, name: str, fact_text: FactText, *, batch: int = BATCH
    ) -> Reembedder:
        """Start (once at a time) the job giving every stale row `name`'s vector."""
        with self._lock:
            job = self._job
            if job is None or not job.running() or job.name != name:
                if job is not None:
                    job.stop()

                def save(table: str, ids: list[int], vectors: np.ndarray) -> list[int]:
                    return self._save(table, ids, vectors, name)

                job = self._job = Reembedder(
                    self.store, embedder, name, fact_text, save, batch=batch
                )
                job.start()
            return job

    def close(self) -> None:
        with self._lock:
            job = self._job
            self._vectors.clear()
            self._seen.clear()
        if job is not None:
            job.stop()

    def _save(self, table: str, ids: list[int], vectors: np.ndarray, embedder: str) -> list[int]:
        # While the write is in flight the file is ahead of the matrix; a sync then would
        # compare every id to catch up, so syncs wait for the matrix to hear of it.
        with self._lock:
            self._writing += 1
        try:
            kept = store_vectors(self.store, table, ids, vectors, embedder)
        finally:
            with self._lock:
                self._writing -= 1
        with self._lock:
            held = self._vectors.get(table)
            if held is not None and held.embedder == embedder and kept:
                position = {row_id: i for i, row_id in enumerate(ids)}
                held.matrix.put(kept, vectors[[position[i] for i in kept]])
                held.stale = max(0, held.stale - len(kept))
        return kept

    def _sync(self, conn: sqlite3.Connection, embedder: str, dim: int) -> None:
        """Bring the matrices in step with the file, if anything was committed since."""
        fresh = False
        for table in KINDS.values():
            held = self._vectors.get(table)
            if held is None or held.embedder != embedder or held.matrix.dim != dim:
                self._vectors[table] = TableVectors(table, embedder, dim)
                fresh = True
        mark = (int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes)
        if not fresh and (self._seen.get(conn) == mark or self._writing):
            # In step, or a write of vectors is in flight (`_save`): the matrix still
            # answers, and a row deleted meanwhile is not returned (`find` reads each row).
            return
        for held in self._vectors.values():
            held.sync(conn)
        if fresh:
            self._seen.clear()
        self._seen[conn] = mark


def _records(
    conn: sqlite3.Connection, kind: str, ids: list[int], speakers: Speakers = None
) -> list[Note | Fact]:
    out: list[Note | Fact] = []
    whose, values = speakers_clause(speakers)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        if kind == "note":
            rows = conn.execute(
                f"SELECT id, text, at, speaker FROM notes WHERE id IN ({marks}){whose}",
                (*chunk, *values),
            )
            out += [Note(r[0], r[1], parse_iso(r[2]), r[3]) for r in rows]
        else:
            rows = conn.execute(
                "SELECT id, key, value, at, utterance, speaker FROM facts"
                f" WHERE id IN ({marks}){whose}",
                (*chunk, *values),
            )
            out += [Fact(r[0], r[1], r[2], parse_iso(r[3]), r[4], r[5]) for r in rows]
    return out
