"""Recall searches every note and fact, however old (mavend.search): by words and by
meaning, kept in step with inserts, deletes, forget and a change of embedder.

Thousands of synthetic rows with random unit vectors stand in for a long-used file; the
rows a question should find are embedded for real by the deterministic HashingEmbedder,
which is also the turn's embedder. Real SQLite files, the real assistant pipeline.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from mavend.assistant import Assistant
from mavend.handlers.common import fingerprint
from mavend.handlers.fact import FactQueries
from mavend.router.decision import Intent
from mavend.router.embedder import HashingEmbedder
from mavend.state.records import vector_blob
from mavend.state.store import Store
from tests.scripted import Route, ScriptedLlm
from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant, wait_for

NOW = datetime(2026, 3, 10, 14, 0, tzinfo=TZ)
FIRST = NOW - timedelta(days=900)  # when the oldest row was written
OLDEST = "the spare key is under the blue flowerpot"
QUESTION = "where is the spare key"
FILLER = [
    "oat",
    "milk",
    "bread",
    "butter",
    "tomatoes",
    "garlic",
    "dentist",
    "tuesday",
    "plumber",
    "invoice",
    "cinema",
    "tickets",
    "birthday",
    "cake",
    "sister",
    "brother",
    "garden",
    "hose",
    "bicycle",
    "pump",
    "printer",
    "toner",
    "library",
    "book",
    "parcel",
    "neighbour",
    "recipe",
    "lasagne",
    "insurance",
    "letter",
    "boiler",
    "service",
]
SCRIPT = {
    QUESTION: Route(Intent.QUERY),
    "where did I put the spare key": Route(Intent.QUERY),
}


def assistant(tmp_path: Path, embedder: object) -> Assistant:
    return make_assistant(
        kit_settings(tmp_path), clock=MovableClock(NOW), llm=ScriptedLlm(SCRIPT), embedder=embedder
    )


def filler_text(rng: np.random.Generator, i: int) -> str:
    return f"note {i}: " + " ".join(rng.choice(FILLER, size=6))


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def seed_notes(
    store: Store,
    texts: Sequence[str],
    vectors: np.ndarray | None,
    embedder: str,
    *,
    start: datetime = FIRST,
) -> None:
    """Notes written one after another from `start` on (the first text is the oldest)."""
    step = (NOW - timedelta(hours=1) - start) / max(len(texts), 1)
    rows = []
    for i, text in enumerate(texts):
        at = start + i * step
        vector = vector_blob(vectors[i]) if vectors is not None else None
        rows.append((text, at.isoformat(timespec="seconds"), at.timestamp(), vector, embedder))
    with store.write() as conn:
        conn.executemany(
            "INSERT INTO notes (text, at, at_ts, embedding, embedder) VALUES (?, ?, ?, ?, ?)",
            rows,
        )


def test_the_oldest_of_20000_notes_is_recalled_by_meaning(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    a = assistant(tmp_path, embedder)
    rng = np.random.default_rng(7)
    texts = [OLDEST] + [filler_text(rng, i) for i in range(1, 20_000)]
    vectors = np.vstack([embedder.embed([OLDEST]), unit_rows(rng, len(texts) - 1, embedder.dim)])
    seed_notes(a.store, texts, vectors, fingerprint(embedder))
    turn = a.handle_text(QUESTION)
    assert turn.reply.data["recalled"][0] == "note:1"
    assert turn.reply.text.startswith("You noted") and OLDEST in turn.reply.text
    assert a.handle_text("where did I put the spare key").reply.data["recalled"][0] == ("note:1")


def test_without_an_embedder_the_oldest_note_is_recalled_by_its_words(tmp_path: Path) -> None:
    a = assistant(tmp_path, None)
    rng = np.random.default_rng(8)
    seed_notes(a.store, [OLDEST] + [filler_text(rng, i) for i in range(1, 20_000)], None, "")
    turn = a.handle_text(QUESTION)
    assert turn.reply.data["recalled"] == ["note:1"]


def test_a_fact_logged_first_is_still_answered(tmp_path: Path) -> None:
    a = assistant(tmp_path, None)
    a.ctx.facts.add("watered", "the plants", FIRST, utterance="I watered the plants")
    with a.store.write() as conn:  # three years of coffees since
        conn.executemany(
            "INSERT INTO facts (key, value, at, at_ts, utterance) VALUES (?, ?, ?, ?, ?)",
            [
                (
                    "coffees",
                    "two",
                    (at := FIRST + timedelta(hours=8 * i)).isoformat(),
                    at.timestamp(),
                    "I drank two coffees",
                )
                for i in range(1, 2600)
            ],
        )
    reply = FactQueries(a.ctx).answer("when did I last water the plants")
    assert reply is not None and reply.data == {"fact_id": 1}
    assert reply.text.startswith("You last watered the plants at")


def test_deletes_forget_and_other_processes_keep_recall_in_step(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    a = assistant(tmp_path, embedder)
    name = fingerprint(embedder)
    rng = np.random.default_rng(9)
    texts = [OLDEST, "a spare key for the shed is on the hook"]
    texts += [filler_text(rng, i) for i in range(2, 5000)]
    vectors = np.vstack([embedder.embed(texts[:2]), unit_rows(rng, len(texts) - 2, embedder.dim)])
    seed_notes(a.store, texts, vectors, name)
    assert set(a.handle_text(QUESTION).reply.data["recalled"][:2]) == {"note:1", "note:2"}
    # Another process (`mavend say`, its own connection) saves one note and erases one.
    other = Store(a.store.path)
    with other.write() as conn:
        conn.execute("DELETE FROM notes WHERE id = 1")
        conn.execute(
            "INSERT INTO notes (text, at, at_ts, embedding, embedder) VALUES (?, ?, ?, ?, ?)",
            (
                "the spare key for the car is in the kitchen drawer",
                NOW.isoformat(),
                NOW.timestamp(),
                vector_blob(embedder.embed(["spare key car kitchen"])[0]),
                name,
            ),
        )
    other.close()
    recalled = a.handle_text(QUESTION).reply.data["recalled"]
    assert "note:1" not in recalled and {"note:2", "note:5001"} <= set(recalled)
    # Forget, by voice: asked, confirmed, and nothing is recalled after it.
    assert a.handle_text("delete all my notes").reply.outcome == "confirm"
    assert a.handle_text("yes").reply.data["forgot"] == {"notes": 5000}
    after = a.handle_text(QUESTION).reply
    assert after.data.get("recalled", []) == [] and "key" not in after.text
    with a.store.read() as conn:
        conn.execute("INSERT INTO notes_fts (notes_fts, rank) VALUES ('integrity-check', 1)")
        # The forgotten words are gone from the word index's own pages too.
        leftovers = conn.execute(
            "SELECT count(*) FROM notes_fts_data WHERE instr(block, 'flowerpot') > 0"
        ).fetchone()[0]
    assert leftovers == 0


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder under a new name, counting the texts each thread embeds."""

    fingerprint = "hashing:v2:256"

    def __init__(self) -> None:
        super().__init__()
        self.fingerprint = CountingEmbedder.fingerprint
        self.by_thread: dict[str, int] = {}
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            name = threading.current_thread().name
            self.by_thread[name] = self.by_thread.get(name, 0) + len(texts)
        return super().embed(texts)


def test_a_new_embedder_re_embeds_old_rows_in_the_background(tmp_path: Path) -> None:
    old = HashingEmbedder(dim=128)  # another model: its vectors are of no use to the new one
    new = CountingEmbedder()
    a = assistant(tmp_path, new)
    rng = np.random.default_rng(10)
    texts = [OLDEST] + [filler_text(rng, i) for i in range(1, 600)]
    seed_notes(a.store, texts, old.embed(texts), fingerprint(old))
    a.ctx.facts.add("watered", "the plants", FIRST, utterance="I watered the plants")
    turn = a.handle_text(QUESTION)
    # Found during the turn by its words, embedded then; the rest is left to the job.
    assert turn.reply.data["recalled"][0] == "note:1"
    assert new.by_thread[threading.current_thread().name] <= 1 + 32

    def stale() -> int:
        with a.store.read() as conn:
            return sum(
                conn.execute(
                    f"SELECT count(*) FROM {t} WHERE embedder != ?", (new.fingerprint,)
                ).fetchone()[0]
                for t in ("notes", "facts")
            )

    wait_for(lambda: stale() == 0, 30, "the background job to re-embed every row")
    assert new.by_thread.get("mavend-reembed", 0) >= 600 - 32
    with a.store.read() as conn:
        text, blob = conn.execute("SELECT text, embedding FROM notes WHERE id = 300").fetchone()
    np.testing.assert_allclose(np.frombuffer(blob, dtype=np.float32), new.embed([text])[0])
    # The job's vectors are held in memory too: the next turn embeds only its question.
    before = new.by_thread[threading.current_thread().name]
    recalled = a.handle_text("where did I put the spare key").reply.data["recalled"]
    assert recalled[0] == "note:1"
    assert new.by_thread[threading.current_thread().name] == before + 1
