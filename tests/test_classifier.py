"""The stage-1 intent classifier: unit tests on HashingEmbedder, integration on USE.

Integration tests (marked `models`) need the pulled Universal Sentence Encoder;
without it they fail with a message naming `mavend models pull`.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mavend.config import Settings
from mavend.errors import ModelMissingError
from mavend.router.classifier import (
    CACHES_KEPT,
    LABELS,
    OUT_OF_SCOPE,
    CentroidClassifier,
    ClassifierResult,
    Example,
    append_example,
    builtin_examples_dir,
    cached_embeddings,
    load_examples,
)
from mavend.router.decision import Intent
from mavend.router.embedder import MAX_CHARS, HashingEmbedder, UseEmbedder, prepare_text
from mavend.router.examples import SOURCES, builtin_example_files

A, R, F, N, Q, C, S = (
    Intent.ACT,
    Intent.REMINDER,
    Intent.FACT,
    Intent.NOTE,
    Intent.QUERY,
    Intent.CHAT,
    Intent.SYSTEM,
)

SMALL = [
    Example("turn on the kitchen lights", A),
    Example("switch off the bedroom lamp", A),
    Example("play some jazz music", A),
    Example("set a timer for ten minutes", R),
    Example("remind me to call mom tomorrow", R),
    Example("i drank a glass of water", F),
    Example("i slept six hours", F),
    Example("remember that the key is under the pot", N),
    Example("add milk to my shopping list", N),
    Example("what is the weather today", Q),
    Example("when did i last water the plants", Q),
    Example("how are you doing", C),
    Example("tell me a joke", C),
    Example("stop", S),
    Example("be quiet please", S),
]

ODD_INPUTS = [
    "",
    "   \t\n ",
    "x" * 10_000,
    "turn on the lights " * 600,
    "\x00\x01\x02 stop \x1b[31m",
    "\x00",
    "🙂🎉🔥",
    "\u200b\u200d",
    "play 🎵 music ♫ now",
    "ВКЛЮЧИ СВЕТ!!!",
    "?",
]


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def write_jsonl(path: Path, examples: list[Example]) -> Path:
    path.write_text(
        "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in examples),
        encoding="utf-8",
    )
    return path


# ----------------------------------------------------------------------- embedders


def test_hashing_embedder_is_deterministic_and_normalized() -> None:
    texts = ["turn on the lights", "", "🙂", "x" * 5000]
    a = HashingEmbedder().embed(texts)
    b = HashingEmbedder().embed(texts)
    assert a.shape == (4, 256) and a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)


def test_prepare_text_bounds_and_cleans() -> None:
    assert prepare_text("  hello\x00 world\u200b  ") == "hello world"
    long = prepare_text("word " * 1000)
    assert 0 < len(long) <= MAX_CHARS and not long.endswith(" ")
    assert len(prepare_text("x" * 10_000)) == MAX_CHARS  # no word boundary: hard cut


def test_missing_model_file_names_the_pull_command(tmp_path: Path) -> None:
    with pytest.raises(ModelMissingError, match="mavend models pull"):
        UseEmbedder(tmp_path / "absent.onnx")


# ----------------------------------------------------------------------- classifier


def test_pure_centroid_picks_the_nearest_centroid() -> None:
    emb = HashingEmbedder()
    clf = CentroidClassifier(emb, SMALL, neighbours=0)
    vectors = emb.embed([e.text for e in SMALL])
    centroids = {i: unit(vectors[[e.intent == i for e in SMALL]].mean(axis=0)) for i in Intent}
    for text in ["turn the lights on please", "set a ten minute timer", "what's the weather"]:
        q = emb.embed([text])[0]
        cosines = {i: float(c @ q) for i, c in centroids.items()}
        best = max(cosines, key=cosines.__getitem__)
        result = clf.classify(text)
        assert result.intent == best
        assert result.scores == pytest.approx(cosines, abs=1e-5)
        # The probabilities are a softmax of the cosines at the calibrated temperature.
        exp = {i: np.exp((c - cosines[best]) / clf.temperature) for i, c in cosines.items()}
        assert result.confidence == pytest.approx(exp[best] / sum(exp.values()), abs=1e-5)
        assert sum(result.probabilities.values()) == pytest.approx(1.0)
        assert result.label == str(best) and not result.out_of_scope


def test_score_is_the_cosine_to_the_winning_local_centroid() -> None:
    emb = HashingEmbedder()
    clf = CentroidClassifier(emb, SMALL, neighbours=2, local_weight=0.7)
    vectors = emb.embed([e.text for e in SMALL])
    for text in ["switch the lights off", "remind me to call dad", "tell me something funny"]:
        q = emb.embed([text])[0]
        result = clf.classify(text)
        rows = vectors[[e.intent == result.intent for e in SMALL]]
        top2 = rows[np.argsort(-(rows @ q))[:2]].mean(axis=0)
        expected = unit(0.3 * unit(rows.mean(axis=0)) + 0.7 * top2)
        np.testing.assert_allclose(clf.centroid_for(text, result.intent), expected, atol=1e-5)
        assert result.scores[result.intent] == pytest.approx(float(expected @ q), abs=1e-5)
        assert result.scores[result.intent] == max(result.scores.values())
        assert result.confidence == max(result.probabilities.values())
        assert result.nearest in {e.text for e in SMALL if e.intent == result.intent}


def test_an_exact_example_wins_with_confidence_one() -> None:
    result = CentroidClassifier(HashingEmbedder(), SMALL).classify("Stop!")
    assert (result.intent, result.confidence, result.nearest) == (S, 1.0, "stop")


def test_add_example_fixes_a_misroute_and_persists(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    builtin = write_jsonl(tmp_path / "builtin.jsonl", SMALL)
    user = tmp_path / "data" / "intent_examples.user.jsonl"
    clf = CentroidClassifier.load(emb, builtin=builtin, user_file=user)
    text = "water the plants at six"
    assert clf.classify(text).intent == Q, "precondition: the text starts out misrouted"

    clf.add_example(text, R)
    assert clf.classify(text).intent == R
    assert json.loads(user.read_text(encoding="utf-8").splitlines()[-1])["intent"] == "reminder"

    reloaded = CentroidClassifier.load(emb, builtin=builtin, user_file=user)
    again = reloaded.classify(text)
    assert again.intent == R
    assert again.scores == pytest.approx(clf.classify(text).scores, abs=1e-6)


def test_incremental_centroid_equals_a_rebuild() -> None:
    emb = HashingEmbedder()
    grown = CentroidClassifier(emb, SMALL, neighbours=0)
    extra = [Example("dim the hallway light", A), Example("what time is it", Q)]
    for e in extra:
        grown.add_example(e.text, e.intent)
    rebuilt = CentroidClassifier(emb, [*SMALL, *extra], neighbours=0)
    for text in ["light in the hall", "what's the time", "hello there"]:
        assert grown.classify(text).scores == pytest.approx(rebuilt.classify(text).scores, abs=1e-6)


def test_user_file_is_append_only(tmp_path: Path) -> None:
    user = tmp_path / "user.jsonl"
    append_example(user, Example("first", C))
    append_example(user, Example("second", S))
    before = user.read_bytes()
    clf = CentroidClassifier(HashingEmbedder(), SMALL, user_file=user)
    clf.add_example("third", Q)
    after = user.read_bytes()
    assert after.startswith(before)
    assert [json.loads(x)["text"] for x in after.decode().splitlines()] == [
        "first",
        "second",
        "third",
    ]


def test_a_torn_last_line_is_skipped_and_not_glued_to(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    user = tmp_path / "user.jsonl"
    append_example(user, Example("kept", N))
    with open(user, "ab") as fh:
        fh.write(b'{"text": "torn by a cra')  # a crash mid-append
    append_example(user, Example("after the crash", Q))
    builtin = write_jsonl(tmp_path / "builtin.jsonl", SMALL[:1])
    with caplog.at_level(logging.WARNING):
        examples = load_examples(builtin, user)
    assert [e.text for e in examples[1:]] == ["kept", "after the crash"]
    assert "bad example line" in caplog.text


def test_a_bad_builtin_line_raises(tmp_path: Path) -> None:
    bad = tmp_path / "builtin.jsonl"
    bad.write_text('{"text": "ok", "intent": "act"}\n{"text": "x", "intent": "dance"}\n')
    with pytest.raises(ValueError, match=":2:"):
        load_examples(bad, None)


@pytest.mark.parametrize("text", ODD_INPUTS, ids=range(len(ODD_INPUTS)))
def test_odd_inputs_give_a_result_never_an_exception(text: str) -> None:
    result = CentroidClassifier(HashingEmbedder(), SMALL).classify(text)
    assert isinstance(result, ClassifierResult) and result.intent in set(Intent)
    assert -1.0 <= result.confidence <= 1.0 and np.isfinite(result.confidence)
    if not text.strip("\x00\u200b\u200d \t\n"):
        assert result.confidence == 0.0


def test_concurrent_classify_and_add_example() -> None:
    clf = CentroidClassifier(HashingEmbedder(), SMALL)
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            for i in range(200):
                clf.classify(f"turn on light number {i}")
        except BaseException as exc:  # collected for the assert below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for i in range(50):
        clf.add_example(f"new example {i}", Q)
    for t in threads:
        t.join()
    assert not errors
    assert len(clf.examples) == len(SMALL) + 50


def test_embedding_cache_round_trips(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    first, hit = cached_embeddings(emb, SMALL, tmp_path)
    assert not hit and len(list(tmp_path.glob("intent-embeddings-*.npy"))) == 1
    second, hit = cached_embeddings(emb, SMALL, tmp_path)
    assert hit
    np.testing.assert_array_equal(first, second)

    changed = [*SMALL, Example("one more", C)]
    _, hit = cached_embeddings(emb, changed, tmp_path)
    assert not hit
    # The last few used are kept: two embedders used in turn each find their own again.
    assert len(list(tmp_path.glob("intent-embeddings-*.npy"))) == 2
    assert cached_embeddings(emb, SMALL, tmp_path)[1]
    for n in range(CACHES_KEPT + 2):
        cached_embeddings(emb, [*SMALL, Example(f"more {n}", C)], tmp_path)
    assert len(list(tmp_path.glob("intent-embeddings-*.npy"))) == CACHES_KEPT
    assert not cached_embeddings(emb, SMALL, tmp_path)[1]  # the oldest went

    for cache in tmp_path.glob("intent-embeddings-*.npy"):
        cache.write_bytes(b"garbage")
    vectors, hit = cached_embeddings(emb, changed, tmp_path)
    assert not hit and vectors.shape == (len(changed), emb.dim)


# ----------------------------------------------------------------------- shipped examples


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def test_shipped_bank_is_well_formed() -> None:
    files = builtin_example_files()
    assert {f.stem for f in files} == set(LABELS)  # one file per label, every label
    rows = []
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        file_rows = [json.loads(line) for line in lines]  # every line valid JSON
        assert all(row["intent"] == path.stem for row in file_rows), path
        assert all(set(row) <= {"text", "intent", "fn", "source"} for row in file_rows), path
        # Every query names where its answer lives (the source head's examples); no
        # other label has a source.
        assert all(("source" in row) == (path.stem == "query") for row in file_rows), path
        assert {row.get("source") for row in file_rows} <= {None, *SOURCES}, path
        rows += file_rows
    counts = Counter(row["intent"] for row in rows)
    assert sum(counts[str(i)] for i in Intent) >= 3000, counts
    assert min(counts.values()) >= 200, counts
    texts = [_norm(row["text"]) for row in rows]
    dupes = [t for t, n in Counter(texts).items() if n > 1]
    assert not dupes
    assert len(load_examples(builtin_examples_dir(), None)) == len(rows)


def test_every_allowlisted_act_has_examples() -> None:
    acts = Counter(
        row.get("fn")
        for line in (builtin_examples_dir() / "act.jsonl").read_text("utf-8").splitlines()
        for row in [json.loads(line)]
    )
    for act in Settings().acts.allow:
        # volume_up/down and mute are reached through system commands ("louder", "mute");
        # unmute through the grammar ("unmute", "turn the sound back on")
        if act.name not in ("volume_up", "volume_down", "mute", "unmute"):
            assert acts[act.name] >= 30, act.name


# ----------------------------------------------------------------------- real model

# Written for these tests, phrased apart from the bank (none is in it: checked below).
OWN_TEST_DIR = Path(__file__).parent / "data" / "router_own"


def own_test_rows() -> list[tuple[str, str]]:
    rows = []
    for path in sorted(OWN_TEST_DIR.glob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            row = json.loads(line)
            rows.append((row["text"], row["intent"]))
    return rows


@pytest.fixture(scope="module")
def use_path() -> Path:
    """The pulled model, or a failed test that says how to get it (never a skip)."""
    from mavend.models import require

    try:
        return require("use-multilingual-int8")
    except ModelMissingError as exc:
        pytest.fail(f"{exc}\nrun `mavend models pull` (make test does)")


@pytest.fixture(scope="module")
def use(use_path: Path) -> UseEmbedder:
    return UseEmbedder(use_path)


@pytest.mark.models
def test_use_embeddings_are_unit_512d(use: UseEmbedder) -> None:
    vectors = use.embed(["turn on the lights", "включи свет", "", "🙂", "x" * 10_000])
    assert vectors.shape == (5, 512) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert use.embed([]).shape == (0, 512)


@pytest.mark.models
def test_use_paraphrases_are_closer_than_unrelated(use: UseEmbedder) -> None:
    a, b, c, ru = use.embed(
        [
            "turn on the kitchen lights",
            "switch the lights in the kitchen on",
            "how tall is mount everest",
            "включи свет на кухне",
        ]
    )
    assert a @ b > a @ c + 0.3
    assert a @ ru > a @ c + 0.3  # multilingual: the Russian paraphrase is close too


@pytest.mark.models
def test_use_classifies_our_held_out_utterances(use: UseEmbedder, tmp_path: Path) -> None:
    clf = CentroidClassifier.load(use, cache_dir=tmp_path)
    shipped = {_norm(e.text) for e in clf.examples}
    rows = own_test_rows()
    assert len(rows) >= 600
    right = Counter()
    total = Counter()
    for text, label in rows:
        assert _norm(text) not in shipped, f"{text!r} is a shipped example"
        result = clf.classify(text)
        # Both out-of-scope labels lead to the same behaviour: ask, write nothing.
        got = "out of scope" if result.out_of_scope else result.label
        want = "out of scope" if label in OUT_OF_SCOPE else label
        total[want] += 1
        right[want] += got == want
    accuracy = sum(right.values()) / len(rows)
    print(f"own held-out set: {accuracy:.1%} of {len(rows)}; per label", {
        k: f"{right[k] / n:.0%}" for k, n in total.items()
    })
    # Measured 89 % (USE, k=5, w=0.7, 7,592 bank rows); a drop below 85 % is a regression.
    assert accuracy >= 0.85
    assert min(right[k] / n for k, n in total.items()) >= 0.6


SOURCE_TEST_FILE = Path(__file__).parent / "data" / "router_source" / "queries.jsonl"


@pytest.mark.models
def test_the_source_head_names_where_our_own_questions_are_answered(
    use: UseEmbedder, tmp_path: Path
) -> None:
    clf = CentroidClassifier.load(use, cache_dir=tmp_path)
    rows = [json.loads(line) for line in SOURCE_TEST_FILE.read_text("utf-8").splitlines()]
    judged = [(row, clf.classify(row["text"])) for row in rows]
    queries = [(row, result) for row, result in judged if result.intent is Intent.QUERY]
    assert all(result.source in SOURCES for _, result in judged)
    right = sum(result.source == row["answer_source"] for row, result in queries)
    # Measured 84.6 % of 370 (GENERAL_MARGIN 0.04); below 80 % is a regression.
    assert right / len(queries) >= 0.80, f"{right} of {len(queries)}"
    # The head errs toward the user's own data: few personal questions called general.
    personal = [(row, r) for row, r in queries if row["personal"]]
    called_general = sum(r.source == "general" for _, r in personal)
    assert called_general / len(personal) <= 0.06, f"{called_general} of {len(personal)}"


@pytest.mark.models
def test_use_cache_round_trips(use: UseEmbedder, tmp_path: Path) -> None:
    user = tmp_path / "intent_examples.user.jsonl"
    cold = CentroidClassifier.load(use, user_file=user)
    caches = list(tmp_path.glob("intent-embeddings-*.npy"))
    assert len(caches) == 1
    builtin = load_examples(builtin_examples_dir(), None)
    vectors, hit = cached_embeddings(use, builtin, tmp_path)
    assert hit and vectors.shape == (len(builtin), 512)
    np.testing.assert_allclose(vectors, use.embed([e.text for e in builtin]), atol=1e-5)
    warm = CentroidClassifier.load(use, user_file=user)
    text = "could you dim the lights a bit"
    assert warm.classify(text).scores == pytest.approx(cold.classify(text).scores, abs=1e-5)


@pytest.mark.models
def test_use_is_thread_safe_and_batch_consistent(use: UseEmbedder) -> None:
    texts = [f"set a timer for {n} minutes" for n in range(1, 9)]
    batch = use.embed(texts)
    # An embedding depends on its text only, never on its batch-mates.
    singles = np.stack([use.embed([t])[0] for t in texts])
    np.testing.assert_array_equal(batch, singles)
    results: dict[int, np.ndarray] = {}

    def worker(n: int) -> None:
        results[n] = use.embed(texts)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for vectors in results.values():
        np.testing.assert_allclose(vectors, batch, atol=1e-5)
    # A NUL would end the graph's C-string input early; it is cleaned away first.
    np.testing.assert_allclose(use.embed(["\x00stop"])[0], use.embed(["stop"])[0], atol=1e-6)
