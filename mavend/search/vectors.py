"""Stored sentence vectors, held in memory as one contiguous float32 matrix per table.

The matrix is read from the table once, then kept current incrementally: rows added
since are read by id, and a change among the older rows (a delete, or a vector
re-embedded by another process) shows in the count and id sum of the rows with the
current embedder's vectors, and is reconciled by id. Only vectors from the current
embedder (its fingerprint, stored per row) are held: another model's vectors live in
another space, and their rows wait for re-embedding (`mavend.search.reembed`).

float32, not float16: numpy has no half-precision BLAS, and converting 100,000 x 512
halves back per query cost 176 ms here against 24 ms for the float32 product (2
shared EPYC cores); the price is 2 KB a row (205 MB at 100,000 notes).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

import numpy as np

# SQLite's default limit on host parameters is 32766 (3.32+); stay far below it.
_IDS_PER_QUERY = 500


class VectorMatrix:
    """Vectors by row id: a float32 matrix grown in place, deleted rows masked out."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._matrix = np.empty((0, dim), dtype=np.float32)
        self._ids = np.empty(0, dtype=np.int64)
        self._alive = np.empty(0, dtype=bool)
        self._size = 0  # rows used in the matrix, dead ones included
        self._position: dict[int, int] = {}
        self.id_sum = 0  # of the live rows: with len(), how a change among them shows

    def __len__(self) -> int:
        return len(self._position)

    def __contains__(self, row_id: int) -> bool:
        return row_id in self._position

    def ids(self) -> np.ndarray:
        return self._ids[: self._size][self._alive[: self._size]]

    def put(self, ids: Sequence[int], vectors: np.ndarray) -> None:
        """Add or replace rows; a vector of another width is left out."""
        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1)
        if vectors.shape[1] != self.dim:
            return
        fresh = [i for i, row_id in enumerate(ids) if row_id not in self._position]
        for i, row_id in enumerate(ids):
            at = self._position.get(row_id)
            if at is not None:
                self._matrix[at] = vectors[i]
        if not fresh:
            return
        self._reserve(self._size + len(fresh))
        start, end = self._size, self._size + len(fresh)
        self._matrix[start:end] = vectors[fresh]
        self._ids[start:end] = [ids[i] for i in fresh]
        self._alive[start:end] = True
        for offset, i in enumerate(fresh):
            self._position[ids[i]] = start + offset
            self.id_sum += ids[i]
        self._size = end

    def drop(self, ids: Iterable[int]) -> None:
        for row_id in ids:
            at = self._position.pop(int(row_id), None)
            if at is not None:
                self._alive[at] = False
                self.id_sum -= int(row_id)
        if self._size > 1024 and len(self._position) < self._size // 2:
            self._compact()

    def nearest(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The k rows with the highest dot product with `query` (cosine: rows and query
        are unit length), best first."""
        if not self._position or k <= 0:
            return []
        scores = self._matrix[: self._size] @ np.asarray(query, dtype=np.float32)
        if len(self._position) < self._size:
            scores[~self._alive[: self._size]] = -np.inf
        k = min(k, len(self._position))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self._ids[i]), float(scores[i])) for i in top]

    def cosines(self, ids: Iterable[int], query: np.ndarray) -> dict[int, float]:
        """The dot product with `query` of those of `ids` that have a vector here."""
        known = [(row_id, self._position[row_id]) for row_id in ids if row_id in self._position]
        if not known:
            return {}
        rows = self._matrix[[at for _, at in known]] @ np.asarray(query, dtype=np.float32)
        return {row_id: float(score) for (row_id, _), score in zip(known, rows, strict=True)}

    def _reserve(self, needed: int) -> None:
        if needed <= len(self._matrix):
            return
        # A quarter more each time: amortized appends without doubling 200 MB.
        capacity = max(needed, len(self._matrix) + len(self._matrix) // 4 + 256)
        matrix = np.empty((capacity, self.dim), dtype=np.float32)
        matrix[: self._size] = self._matrix[: self._size]
        ids = np.zeros(capacity, dtype=np.int64)
        ids[: self._size] = self._ids[: self._size]
        alive = np.zeros(capacity, dtype=bool)
        alive[: self._size] = self._alive[: self._size]
        self._matrix, self._ids, self._alive = matrix, ids, alive

    def _compact(self) -> None:
        keep = np.flatnonzero(self._alive[: self._size])
        self._matrix[: len(keep)] = self._matrix[keep]
        self._ids[: len(keep)] = self._ids[keep]
        self._alive[: len(keep)] = True
        self._alive[len(keep) :] = False
        self._size = len(keep)
        self._position = {int(row_id): at for at, row_id in enumerate(self._ids[: self._size])}


class TableVectors:
    """One table's (notes or facts) vectors from one embedder, kept in step with the file."""

    def __init__(self, table: str, embedder: str, dim: int) -> None:
        if table not in ("notes", "facts"):
            raise ValueError(f"no vectors are kept for {table!r}")
        self.table, self.embedder = table, embedder
        self.matrix = VectorMatrix(dim)
        self.seen_up_to = 0  # every row with a lower or equal id has been looked at
        self.stale = 0  # rows without a vector from this embedder
        # Rows marked as this embedder's without a vector of its width (never written
        # by mavend): left out and counted stale, so that they don't look like a change.
        self._unusable: dict[int, None] = {}

    def sync(self, conn: sqlite3.Connection) -> None:
        """Read what changed in the table since the last sync."""
        table, name = self.table, self.embedder
        highest = int(conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0])
        if highest > self.seen_up_to:
            rows = conn.execute(
                f"SELECT id, embedding FROM {table} WHERE id > ? AND id <= ? AND embedder = ?",
                (self.seen_up_to, highest, name),
            )
            self._put_rows(rows)
        self.seen_up_to = max(self.seen_up_to, highest)
        # From the embedder index alone (it holds the ids): the rows' vectors, 2 KB each,
        # are not read.
        count, id_sum = conn.execute(
            f"SELECT count(*), coalesce(sum(id), 0) FROM {table} WHERE embedder = ? AND id <= ?",
            (name, self.seen_up_to),
        ).fetchone()
        held = len(self.matrix) + len(self._unusable)
        if (int(count), int(id_sum)) != (held, self.matrix.id_sum + sum(self._unusable)):
            self._reconcile(conn)
        # Through the embedder index: two range counts, each as long as its answer.
        self.stale = len(self._unusable) + int(
            conn.execute(
                f"SELECT (SELECT count(*) FROM {table} WHERE embedder < ?1)"
                f" + (SELECT count(*) FROM {table} WHERE embedder > ?1)",
                (name,),
            ).fetchone()[0]
        )

    def _reconcile(self, conn: sqlite3.Connection) -> None:
        """Rows deleted or re-embedded among those already seen: compare ids."""
        stored = np.fromiter(
            (
                r[0]
                for r in conn.execute(
                    f"SELECT id FROM {self.table} WHERE embedder = ? AND id <= ?",
                    (self.embedder, self.seen_up_to),
                )
            ),
            dtype=np.int64,
        )
        self._unusable = {}
        held = self.matrix.ids()
        self.matrix.drop(np.setdiff1d(held, stored, assume_unique=True).tolist())
        missing = np.setdiff1d(stored, held, assume_unique=True).tolist()
        for start in range(0, len(missing), _IDS_PER_QUERY):
            chunk = missing[start : start + _IDS_PER_QUERY]
            marks = ",".join("?" * len(chunk))
            self._put_rows(
                conn.execute(
                    f"SELECT id, embedding FROM {self.table} WHERE id IN ({marks})"
                    " AND embedder = ?",
                    (*chunk, self.embedder),
                )
            )

    def _put_rows(self, rows: Iterable[sqlite3.Row | tuple[int, bytes]]) -> None:
        width = self.matrix.dim * 4
        ids: list[int] = []
        blobs: list[bytes] = []
        for row_id, blob in rows:
            if blob is not None and len(blob) == width:
                ids.append(int(row_id))
                blobs.append(blob)
            else:
                self._unusable[int(row_id)] = None
            if len(ids) >= 4096:
                self._put_blobs(ids, blobs)
                ids, blobs = [], []
        self._put_blobs(ids, blobs)

    def _put_blobs(self, ids: list[int], blobs: list[bytes]) -> None:
        if ids:
            vectors = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), -1)
            self.matrix.put(ids, vectors)
