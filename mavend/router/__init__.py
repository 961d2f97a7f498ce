"""The router: one transcript in, one deterministic `Decision` out.

    grammar (stage 0) -> classifier / LLM (stage 1) -> slots (stage 2) -> gate (stage 3)

`build_router(settings)` wires the real components; `Router` takes any seams
(tests pass a deterministic embedder and a scripted LLM).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from mavend.config import Settings
from mavend.models import model_path
from mavend.router.cascade import Router, RouteTrace
from mavend.router.decision import Clarify, Decision, Intent, Slots, Source, Stage
from mavend.router.grammar import CommandGrammar
from mavend.router.policy import PolicyName, RoutePolicy, resolve_policy
from mavend.router.slots import SlotExtractor

__all__ = [
    "Clarify",
    "CommandGrammar",
    "Decision",
    "Intent",
    "PolicyName",
    "RoutePolicy",
    "RouteTrace",
    "Router",
    "Slots",
    "Source",
    "Stage",
    "answers_recognizer",
    "build_available_router",
    "build_router",
    "model_path",
]

log = logging.getLogger(__name__)


def build_router(
    settings: Settings,
    *,
    clock: Callable[[], datetime],
    use_llm: bool | None = None,
    use_classifier: bool = True,
    grammars_dir: Path | None = None,
) -> Router:
    """The real cascade: loads the grammar, the embedder and (optionally) the LLM."""
    from mavend import paths

    router_cfg = settings.router
    grammar = CommandGrammar.from_dir(
        grammars_dir or paths.grammars_dir(), settings.acts, router_cfg.wake_words
    )
    models_dir = settings.models.models_path()
    # Model files are checked now (a missing one is a clear error at once);
    # they are loaded on first use, so a grammar command routes instantly.
    # The daemon calls `warm_up()` to load them before it says it is ready.
    classifier = None
    if use_classifier:
        embedder_path = model_path(router_cfg.classifier_model, models_dir)
        e5_dir = (
            model_path(router_cfg.classifier_e5_model, models_dir)
            if router_cfg.classifier_e5_model
            else None
        )
        classifier = Lazy(lambda: _load_classifier(settings, embedder_path, e5_dir))
    want_llm = router_cfg.llm_enabled if use_llm is None else use_llm
    llm = None
    if want_llm:
        from mavend.router.llm.backend import llm_loader

        # The local model file, or the remote server's address and key: checked now.
        llm = Lazy(llm_loader(settings, prefix_cache_dir=paths.cache_dir()))
    policy = RoutePolicy(
        name=resolve_policy(router_cfg.policy, _policy_model(settings)),
        clarify_threshold=router_cfg.clarify_threshold,
        tie_margin=router_cfg.tie_margin,
        classifier_confident=router_cfg.classifier_confident,
        classifier_weight=router_cfg.classifier_weight,
        use_llm=llm is not None,
    )
    return Router(
        grammar,
        SlotExtractor(settings.acts),
        classifier=classifier,
        llm=llm,
        policy=policy,
        clock=clock,
        answers=answers_recognizer(settings),
        snap=settings.router.grammar_snap,
    )


def answers_recognizer(settings: Settings) -> Callable[[str], str | None]:
    """mavend.answers' recognizer for stage 0 (cheap: no I/O, no table loads)."""
    from mavend.answers import Answers
    from mavend.clock import user_timezone

    return Answers(settings, user_timezone(settings.reminders.timezone)).recognize


def build_available_router(
    settings: Settings, *, clock: Callable[[], datetime]
) -> tuple[Router, list[str]]:
    """`build_router`, leaving out the models that are missing or broken.

    For the daemon and `mavend say`: without the classifier or the LLM the
    grammar still routes its commands and anything else is asked about, so a
    missing model costs what it must and no more. Returns the router and one
    message per model left out.
    """
    from mavend.errors import ModelError

    problems: list[str] = []
    for use_llm, use_classifier in ((None, True), (False, True), (None, False), (False, False)):
        try:
            router = build_router(
                settings, clock=clock, use_llm=use_llm, use_classifier=use_classifier
            )
        except ModelError as exc:
            if str(exc) not in problems:
                problems.append(str(exc))
            continue
        return router, problems
    raise AssertionError("a grammar-only router needs no model")  # pragma: no cover


class Lazy:
    """Loads a model-backed component on first use, once, thread-safely."""

    def __init__(self, load: Callable[[], object]):
        self._load = load
        self._value: object | None = None
        self._lock = threading.Lock()

    def get(self) -> object:
        if self._value is None:
            with self._lock:
                if self._value is None:
                    self._value = self._load()
        return self._value

    def warm_up(self) -> None:
        target = self.get()
        if hasattr(target, "warm_up"):
            target.warm_up()

    def route(self, utterance: str, *, context: str = ""):
        return self.get().route(utterance, context=context)  # type: ignore[attr-defined]

    def classify(self, text: str):
        return self.get().classify(text)  # type: ignore[attr-defined]

    def __getattr__(self, name: str):
        return getattr(self.get(), name)


def _load_classifier(settings: Settings, path: Path, e5_dir: Path | None = None):
    from threadpoolctl import threadpool_limits

    from mavend.router.classifier import (
        USE_CALIBRATION,
        USE_E5_CALIBRATION,
        USER_EXAMPLES_FILENAME,
        CentroidClassifier,
        UseEmbedder,
    )
    from mavend.router.embedder import E5_WEIGHT, E5Embedder, JoinedEmbedder

    # One BLAS thread for the process. The classifier's one big product (the
    # utterance against ~7,600 examples) took 4.3 ms when OpenBLAS woke a second
    # thread right after onnxruntime's run, 0.9 ms on one (bench/classifier_bench.py);
    # nothing else in mavend does BLAS work large enough to gain from two.
    threadpool_limits(1, user_api="blas")

    from mavend import paths

    embedder = UseEmbedder(path)
    calibration = USE_CALIBRATION
    if e5_dir is not None:
        embedder = JoinedEmbedder(embedder, E5Embedder(e5_dir), E5_WEIGHT)
        calibration = USE_E5_CALIBRATION
    # Corrections are appended to the user's file and survive restarts. The bank's
    # embeddings (~9,000 rows, ~10 s to compute) are derived data: cached in the cache dir.
    user_file = settings.storage.data_path() / USER_EXAMPLES_FILENAME
    return CentroidClassifier.load(
        embedder,
        user_file=user_file,
        cache_dir=paths.cache_dir(),
        temperature=calibration.temperature,
        general_margin=calibration.general_margin,
    )


def _policy_model(settings: Settings) -> str:
    from mavend.router.llm.backend import policy_model

    return policy_model(settings)
