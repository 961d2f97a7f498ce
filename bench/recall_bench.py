"""Recall bench: `Recall.search` over a long-used file (100,000 notes by default).

Notes are generated here from templates (people, places, things, numbers, days: a
varied vocabulary, never taken from shared/eval). The FIRST note written (the oldest
row, id 1) is the one the probe questions ask about. Vectors: the first `--real`
notes are embedded with the real USE-multilingual model (one session.run per text,
as the daemon does); the rest, when `--real` is below `--notes`, are copies of real
vectors of other generated notes with noise, so the matrix holds realistic
neighbours. By default every note is embedded for real (cached under --cache, keyed
by the generator's seed and count, so a rerun skips it).

Figures (JSON on stdout, a table on stderr):
- cold: the first question (the vector matrix read from the file, 2 KB a row);
- warm p50/p95 of the whole `Recall.search` for a question, including its own
  embedding, and excluding it (the question's vector looked up, not computed);
- after a write: the first question after a note is saved (the incremental sync);
- right answer: where note 1 ranks for each probe question, by words and by meaning;
- agreement: top-5 against the old scoring applied to every row (no 2,000 cap), for
  the timed questions (the candidates are an approximation of "every row").

    flock /tmp/mavend-heavy.lock .venv/bin/python bench/recall_bench.py
    .venv/bin/python bench/recall_bench.py --notes 20000 --real 2000 --queries 100
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mavend.config import Settings, StorageSettings  # noqa: E402
from mavend.handlers.common import HandlerContext, content_stems, fingerprint  # noqa: E402
from mavend.handlers.recall import (  # noqa: E402
    MIN_SCORE,
    WORD_BONUS,
    Recall,
    Recalled,
    superseded_out,
)
from mavend.models import require  # noqa: E402
from mavend.router.embedder import UseEmbedder  # noqa: E402
from mavend.search import RecordSearch  # noqa: E402
from mavend.state.records import vector_blob  # noqa: E402
from mavend.state.store import Store  # noqa: E402

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 3, 10, 14, 0, tzinfo=TZ)
FIRST_NOTE = "the spare key for the garden shed is taped under the blue watering can"
PROBES = {  # question -> how it reaches note 1
    "where did I hide the key to the shed": "meaning",
    "what did I note about the watering can": "words",
    "where is the spare shed key": "both",
}


def words(text: str, sep: str = "|") -> list[str]:
    return [w.strip() for w in text.replace("\n", "").split(sep) if w.strip()]


PEOPLE = words(
    """anna|ben|carla|david|emma|felix|greta|hannah|ivan|julia|karl|lena|marco|nina|
oskar|paula|quentin|rosa|stefan|tina|uwe|vera|walter|yusuf|zoe|grandma|grandpa|my aunt|
my uncle|the neighbour|my boss|the plumber|the dentist|the landlord|my sister|my brother"""
)
PLACES = words(
    """kitchen drawer|hall cupboard|garage shelf|attic box|basement|glovebox|desk drawer|
bedside table|bathroom cabinet|bookshelf|wardrobe|office|balcony|cellar|car boot|backpack|
blue folder|red suitcase|toolbox|pantry|fridge door|piano|sofa cushion|laundry basket"""
)
THINGS = words(
    """passport|charger|headphones|warranty card|birth certificate|tax papers|spare battery|
bike pump|camera|insurance letter|winter tyres|christmas lights|drill|hdmi cable|sunglasses|
umbrella|keyring|usb stick|receipt|rental contract|vaccination card|pay slips|screwdriver"""
)
FOODS = words(
    """lasagne|curry|pancakes|sushi|goulash|risotto|tacos|pho|falafel|apple pie|ramen|
paella|dumplings|chili|quiche|borscht|pesto pasta|banana bread|miso soup|shakshuka"""
)
DAYS = words("monday|tuesday|wednesday|thursday|friday|saturday|sunday")
SHOPS = words("bakery|pharmacy|hardware store|post office|library|garden centre|market")
TEMPLATES: tuple[Callable[[random.Random], str], ...] = (
    lambda r: f"the {r.choice(THINGS)} is in the {r.choice(PLACES)}",
    lambda r: f"I put the {r.choice(THINGS)} in the {r.choice(PLACES)}",
    lambda r: f"{r.choice(PEOPLE)}'s phone number is {r.randint(100, 999)} {r.randint(1000, 9999)}",
    lambda r: f"{r.choice(PEOPLE)} likes {r.choice(FOODS)} but not {r.choice(FOODS)}",
    lambda r: f"{r.choice(PEOPLE)}'s birthday is on the {r.randint(1, 28)}th",
    lambda r: f"parked on level {r.randint(1, 9)} row {r.choice('ABCDEFGH')}{r.randint(1, 40)}",
    lambda r: f"the code for the {r.choice(PLACES)} lock is {r.randint(1000, 9999)}",
    lambda r: f"lent my {r.choice(THINGS)} to {r.choice(PEOPLE)} on {r.choice(DAYS)}",
    lambda r: f"{r.choice(PEOPLE)} owes me {r.randint(5, 200)} euros for the {r.choice(FOODS)}",
    lambda r: f"the {r.choice(SHOPS)} closes at {r.randint(4, 8)} pm on {r.choice(DAYS)}s",
    lambda r: f"recipe idea: {r.choice(FOODS)} with {r.choice(FOODS)} on the side",
    lambda r: f"gift idea for {r.choice(PEOPLE)}: a new {r.choice(THINGS)}",
    lambda r: f"{r.choice(PEOPLE)} recommended the {r.choice(SHOPS)} near the station",
    lambda r: (
        f"the wifi password for the {r.choice(PLACES)} repeater is "
        f"{r.choice(FOODS).replace(' ', '')}{r.randint(10, 99)}"
    ),
    lambda r: f"meter reading {r.randint(10000, 99999)} on {r.choice(DAYS)}",
    lambda r: f"{r.choice(PEOPLE)} is allergic to {r.choice(FOODS)}",
    lambda r: f"return the {r.choice(THINGS)} to the {r.choice(SHOPS)} by {r.choice(DAYS)}",
)
QUESTION_TEMPLATES: tuple[Callable[[random.Random], str], ...] = (
    lambda r: f"where is my {r.choice(THINGS)}",
    lambda r: f"what is {r.choice(PEOPLE)}'s phone number",
    lambda r: f"what does {r.choice(PEOPLE)} like to eat",
    lambda r: f"when is {r.choice(PEOPLE)}'s birthday",
    lambda r: "where did I park",
    lambda r: f"who did I lend the {r.choice(THINGS)} to",
    lambda r: f"how much does {r.choice(PEOPLE)} owe me",
    lambda r: f"when does the {r.choice(SHOPS)} close",
    lambda r: f"what gift did I want for {r.choice(PEOPLE)}",
    lambda r: f"what is {r.choice(PEOPLE)} allergic to",
)


def generate(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [FIRST_NOTE] + [rng.choice(TEMPLATES)(rng) for _ in range(count - 1)]


def real_vectors(
    embedder: UseEmbedder, texts: list[str], real: int, cache: Path, seed: int
) -> tuple[np.ndarray, float]:
    """Vectors for every text, and the seconds per real embedding (0.0: from the cache)."""
    key = hashlib.sha256(f"{seed}:{len(texts)}:{real}:{embedder.fingerprint}".encode()).hexdigest()
    path = cache / f"recall_bench_{key[:16]}.npy"
    if path.is_file():
        return np.load(path), 0.0
    start = time.perf_counter()
    done = embedder.embed(texts[:real])
    per_row = (time.perf_counter() - start) / max(real, 1)
    if real < len(texts):
        rng = np.random.default_rng(seed)
        picks = rng.integers(0, real, size=len(texts) - real)
        noisy = done[picks] + rng.normal(0, 0.02, size=(len(picks), done.shape[1]))
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        done = np.vstack([done, noisy.astype(np.float32)])
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, done)
    return done, per_row


def seed_store(store: Store, texts: list[str], vectors: np.ndarray, name: str) -> None:
    step = timedelta(days=3 * 365) / len(texts)
    start = NOW - timedelta(days=3 * 365)
    rows = []
    for i, text in enumerate(texts):
        at = start + i * step
        rows.append(
            (text, at.isoformat(timespec="seconds"), at.timestamp(), vector_blob(vectors[i]), name)
        )
    with store.write() as conn:
        conn.executemany(
            "INSERT INTO notes (text, at, at_ts, embedding, embedder) VALUES (?, ?, ?, ?, ?)",
            rows,
        )


class LookedUp:
    """The real embedder, but a question embedded before is looked up: 'excluding'."""

    def __init__(self, inner: UseEmbedder, known: dict[str, np.ndarray]) -> None:
        self.inner, self.known = inner, known
        self.dim, self.fingerprint = inner.dim, inner.fingerprint

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack(
            [self.known[t] if t in self.known else self.inner.embed([t])[0] for t in texts]
        )


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return (time.perf_counter() - start) * 1000.0, out


def quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[max(0, round(0.95 * len(ordered)) - 1)], 2),
        "max_ms": round(ordered[-1], 2),
    }


def old_scoring_top(
    question: str, query: np.ndarray, vectors: np.ndarray, stems: list[set[str]], limit: int,
    texts: list[str] | None = None,
) -> list[int]:
    """The ranking before the index, applied to every row (ids are positions + 1); with
    `texts`, less the rows a newer one corrects (`superseded_out`, as `Recall.search`)."""
    wanted = content_stems(question)
    cosines = vectors @ query
    # Only rows that can reach the floor need their word bonus.
    rows = np.flatnonzero(cosines + 2 * WORD_BONUS >= MIN_SCORE)
    scored = []
    for i in rows:
        score = float(cosines[i]) + WORD_BONUS * min(len(wanted & stems[i]), 2)
        if score >= MIN_SCORE:
            scored.append((-score, -i, int(i) + 1))
    scored.sort()
    if texts is None:
        return [row_id for _, _, row_id in scored[:limit]]
    step = timedelta(days=3 * 365) / len(texts)
    start = NOW - timedelta(days=3 * 365)
    rows = [Recalled("note", row_id, texts[row_id - 1], start + step * (row_id - 1), -score)
            for score, _, row_id in scored[: limit * 10]]
    return [r.id for r in superseded_out(rows)[:limit]]


def reembed_phase(
    recall_plain: Recall, recall_cached: Recall, questions: list[str], count: int
) -> dict[str, object]:
    """Mark the oldest `count` notes as another model's, then time questions while the
    background job re-embeds them (the job starts on the first question)."""
    if count <= 0:
        return {}
    store = recall_plain.ctx.store
    with store.write() as conn:
        conn.execute("UPDATE notes SET embedder = 'another-model' WHERE id <= ?", (count,))
    started = time.perf_counter()
    ms, _ = timed(lambda: recall_plain.search(questions[0]))
    during = [ms]
    job = RecordSearch.of(store)._job
    i = 1
    while job is not None and job.running():
        question = questions[i % len(questions)]
        ms, _ = timed(lambda q=question: recall_cached.search(q))
        during.append(ms)
        i += 1
        time.sleep(0.05)  # questions a few times a second: far more than a household asks
    took = time.perf_counter() - started
    with store.read() as conn:
        left = conn.execute(
            "SELECT count(*) FROM notes WHERE embedder = 'another-model'"
        ).fetchone()[0]
    return {
        "rows": count,
        "job_s": round(took, 1),
        "rows_left": int(left),
        "first_question_ms": round(during[0], 1),
        "questions_during_job": len(during),
        "during_job_excluding_question_embedding": quantiles(during),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=100_000)
    parser.add_argument("--real", type=int, default=None, help="notes embedded for real (all)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--reembed", type=int, default=5000, help="oldest notes marked as another model's"
    )
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "mavend-bench")
    args = parser.parse_args()
    real = args.notes if args.real is None else min(args.real, args.notes)

    embedder = UseEmbedder(require("use-multilingual-int8"))
    embedder.warm_up()
    texts = generate(args.notes, args.seed)
    start = time.perf_counter()
    vectors, per_row = real_vectors(embedder, texts, real, args.cache, args.seed)
    embed_s = time.perf_counter() - start
    name = fingerprint(embedder)

    rng = random.Random(args.seed + 1)
    questions = [rng.choice(QUESTION_TEMPLATES)(rng) for _ in range(args.queries)]
    known = {q: embedder.embed([q])[0] for q in {*questions, *PROBES}}

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(storage=StorageSettings(data_dir=tmp))
        store = Store.open(settings)
        start = time.perf_counter()
        seed_store(store, texts, vectors, name)
        seed_s = time.perf_counter() - start
        plain = HandlerContext(settings, store, TZ, lambda: NOW, embedder=lambda: embedder)
        cached = HandlerContext(
            settings, store, TZ, lambda: NOW, embedder=lambda: LookedUp(embedder, known)
        )
        # One Recall each, held as the daemon's query handler holds its own.
        recall_plain, recall_cached = Recall(plain), Recall(cached)
        cold_ms, _ = timed(lambda: recall_plain.search(questions[0]))
        including, excluding, tops = [], [], {}
        for question in questions:
            ms, found = timed(lambda q=question: recall_plain.search(q))
            including.append(ms)
            ms, found = timed(lambda q=question: recall_cached.search(q))
            excluding.append(ms)
            tops[question] = [r.id for r in found]
        probes = {}
        for question, how in PROBES.items():
            found = recall_plain.search(question)
            ids = [r.id for r in found]
            probes[question] = {
                "reaches_by": how,
                "rank_of_first_note": ids.index(1) + 1 if 1 in ids else None,
                "top": found[0].text if found else None,
            }
        after_write = []
        for i in range(10):
            plain.notes.add(
                f"bench note {i}: the {THINGS[i]} is in the {PLACES[i]}",
                NOW,
                embedding=embedder.embed([f"bench note {i}"])[0],
                embedder=name,
            )
            ms, _ = timed(lambda q=questions[i]: recall_cached.search(q))
            after_write.append(ms)
        stems = [content_stems(t) for t in texts]
        agree = 0
        for question in questions:
            old = old_scoring_top(question, known[question], vectors, stems, 5, texts)
            agree += old == tops[question]
        reembedding = reembed_phase(recall_plain, recall_cached, questions, args.reembed)
        store.close()

    report = {
        "notes": args.notes,
        "embedded_for_real": real,
        "embedder": name,
        "vector_dim": int(vectors.shape[1]),
        "matrix_mb": round(vectors.nbytes / 2**20, 1),
        "real_embedding_ms_per_note": round(per_row * 1000, 3) if per_row else "cached",
        "vectors_s": round(embed_s, 1),
        "seed_s": round(seed_s, 1),
        "queries": len(questions),
        "cold_first_query_ms": round(cold_ms, 1),
        "including_question_embedding": quantiles(including),
        "excluding_question_embedding": quantiles(excluding),
        "first_query_after_a_write": quantiles(after_write),
        "questions_answered": sum(bool(t) for t in tops.values()),
        "top5_same_as_old_scoring_over_every_row": f"{agree}/{len(questions)}",
        "reembedding": reembedding,
        "probes": probes,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
