"""Search over every note and fact: by words (SQLite FTS5) and by meaning (stored
vectors), queried together.

- Words: FTS5 indexes over notes and facts (schema 7), external-content tables kept
  by triggers, so an insert, an edit or a delete (forget's included) is in the index
  in the same transaction: it cannot drift (`words`).
- Meaning: each row's sentence vector is stored with the name of the embedder that made
  it. The current embedder's vectors are held in one float32 matrix per table, read
  once and kept current incrementally; a query is one matrix-vector product (`vectors`).
- A question takes the rows nearest in meaning and the rows sharing its words, each
  read from the file as it is now; the caller scores them (mavend.handlers.recall).
- When the embedder changes, rows whose stored vector is another model's are
  re-embedded in batches by a background job; meanwhile they are found by their words
  (`reembed`).

The one entry: `RecordSearch.of(store)`.
"""

from mavend.search.index import Hit, RecordSearch

__all__ = ["Hit", "RecordSearch"]
