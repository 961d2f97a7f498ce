"""The pulled multilingual-e5-small: its int8 graph against the numpy forward pass of the
same weights (bench/e5_numpy.py), and the embedders the classifier builds from it."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from mavend.errors import ModelMissingError
from mavend.router.embedder import E5_GRAPH, E5Embedder, HashingEmbedder, JoinedEmbedder
from tests.conftest import require_model

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.e5_numpy import E5Numpy  # noqa: E402

# Our own phrasings: commands, questions, statements, a fragment, other languages, a long one.
TEXTS = [
    "switch the kitchen lights off please",
    "uh remind me to put the bins out tomorrow at seven",
    "what's twelve percent of eighty",
    "don't turn the heating on",
    "my locker code is four four one nine",
    "add oat milk and eggs to the shopping list",
    "how far is the moon",
    "the thing with the",
    "mach das licht im flur aus",
    "¿qué hora es en tokio?",
    "so I was thinking that maybe later tonight if it is not too much trouble you could "
    "remind me to water the tomato plants in the greenhouse before it gets dark",
]


@pytest.fixture(scope="module")
def model_dir() -> Path:
    return require_model("multilingual-e5-small")


def test_the_int8_graph_agrees_with_numpy_on_the_real_weights(model_dir: Path) -> None:
    reference = E5Numpy(model_dir / "e5-small-q4.bin", model_dir / "tokenizer.json")
    want = np.concatenate([reference.embed([t]) for t in TEXTS])
    got = E5Embedder(model_dir).embed(TEXTS)
    assert got.shape == (len(TEXTS), 384) and got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = (got * want).sum(axis=1)
    # Measured: min 0.991-0.996, mean 0.997 (int8 weights and activations against float).
    assert cosines.min() > 0.985, dict(zip(TEXTS, cosines.round(4), strict=True))
    assert cosines.mean() > 0.995


def test_meaning_survives_the_conversion(model_dir: Path) -> None:
    e5 = E5Embedder(model_dir)
    a, b, c = e5.embed(["turn off the lights", "switch the lamps off", "what's the weather like"])
    assert a @ b > a @ c + 0.05


def test_an_embedding_is_a_function_of_its_text_alone(model_dir: Path) -> None:
    e5 = E5Embedder(model_dir)
    alone = e5.embed(["set a timer for ten minutes"])[0]
    among = e5.embed(["hello there", "set a timer for ten minutes", TEXTS[-1]])[1]
    np.testing.assert_array_equal(alone, among)


def test_a_folder_without_the_converted_graph_says_to_pull(model_dir: Path, tmp_path: Path):
    (tmp_path / "tokenizer.json").symlink_to(model_dir / "tokenizer.json")
    with pytest.raises(ModelMissingError, match=f"{E5_GRAPH}.*mavend models pull"):
        E5Embedder(tmp_path)


def test_the_joined_cosine_weighs_the_second_part_by_the_square_of_its_weight() -> None:
    first, second = HashingEmbedder(64), HashingEmbedder(32)
    joined = JoinedEmbedder(first, second, weight=2.0)
    texts = ["dim the hall light", "dim the hallway lights"]
    u, e, j = first.embed(texts), second.embed(texts), joined.embed(texts)
    assert j.shape == (2, 96)
    expected = (u[0] @ u[1] + 4.0 * (e[0] @ e[1])) / 5.0
    assert j[0] @ j[1] == pytest.approx(expected, abs=1e-6)
    with pytest.raises(ValueError):
        JoinedEmbedder(first, second, weight=0.0)


# ------------------------------------------------------------------ the router with e5 on

NOW = datetime(2026, 12, 3, 9, 0, tzinfo=ZoneInfo("Europe/Berlin"))


def test_the_router_joins_e5_when_configured_and_routes_with_it() -> None:
    from mavend.config import parse_settings
    from mavend.router import build_router
    from mavend.router.classifier import USE_E5_CALIBRATION
    from mavend.router.decision import Intent

    settings = parse_settings(
        '[router]\nllm_enabled = false\nclassifier_e5_model = "multilingual-e5-small"\n'
    )
    require_model("use-multilingual-int8")
    require_model("multilingual-e5-small")
    router = build_router(settings, clock=lambda: NOW)
    classifier = router.classifier.get()
    assert isinstance(classifier.embedder, JoinedEmbedder)
    assert classifier.embedder.dim == 512 + 384
    assert classifier.temperature == USE_E5_CALIBRATION.temperature
    assert classifier.general_margin == USE_E5_CALIBRATION.general_margin
    # Written for this test: casual, none of them a grammar command.
    for text, intent in [
        ("ugh it's way too dark in here can you do something about the lamp", Intent.ACT),
        ("jot down that the spare key is under the blue pot", Intent.NOTE),
        ("i ran five k this morning", Intent.FACT),
        ("so what's new with you", Intent.CHAT),
    ]:
        assert router.route(text).intent is intent, text


def test_an_e5_model_that_was_not_pulled_is_named_at_start(tmp_path: Path) -> None:
    from mavend.config import parse_settings
    from mavend.router import build_router

    settings = parse_settings(f'[router]\nclassifier_e5_model = "{tmp_path / "nope"}"\n')
    with pytest.raises(ModelMissingError, match="nope"):
        build_router(settings, clock=lambda: NOW, use_llm=False)


def test_recall_keeps_its_floor_with_e5_joined(tmp_path: Path) -> None:
    """Recall's floor was measured on USE's cosines. Joined at its weight, e5 put every
    pair of sentences near 0.7: "what's my credit score" recited the pill log, and "where's
    the nearest pharmacy" became "The nearest pharmacy is in Bay 42". End state: the
    unrelated questions get "I don't know" and the related ones their own row."""
    from mavend.assistant import Assistant
    from mavend.config import parse_settings
    from mavend.router import build_router
    from mavend.state.store import Store

    require_model("use-multilingual-int8")
    require_model("multilingual-e5-small")
    settings = parse_settings(
        '[router]\nllm_enabled = false\nclassifier_e5_model = "multilingual-e5-small"\n'
        f'[storage]\ndata_dir = "{tmp_path / "data"}"\n'
    )
    router = build_router(settings, clock=lambda: NOW)
    tz = ZoneInfo("Europe/London")
    a = Assistant(settings, Store.open(settings), router, clock=lambda: NOW, tz=tz,
                  chat_llm=lambda: None)
    try:
        assert isinstance(router.classifier.get().embedder, JoinedEmbedder)
        for said in ("my car is in bay 42", "i took my blood pressure pills",
                     "note that the plumber comes on friday"):
            assert a.handle_text(said).reply.outcome == "done", said
        for unrelated in ("what's my credit score", "what's our wifi password"):
            reply = a.handle_text(unrelated).reply
            assert reply.text == "I don't know: I have nothing stored about that.", reply
        for question, fact in (("where's my car", "bay 42"),
                               ("when is the plumber coming", "friday")):
            reply = a.handle_text(question).reply
            assert fact in reply.text.lower() and "pills" not in reply.text, (question, reply)
    finally:
        a.store.close()
