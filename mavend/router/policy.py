"""Which decider's answer counts, and when to ask instead: the routing policy.

The one place that turns the classifier's and the LLM's answers into a pick.
Four policies, chosen per model profile in config (`router.policy`; "auto"
takes the one measured best for the configured LLM, `MEASURED_POLICY`):

- `classifier`: the classifier decides alone; the LLM is not on the routing
  path (it keeps its other jobs). The fastest; the choice for a model not measured.
- `llm-first`: the design's order: the LLM decides, the classifier only when
  the LLM fails (error, timeout, no model).
- `vote`: the classifier decides when it is sure (probability at least
  `classifier_confident`); otherwise both vote, `classifier_weight` for the
  classifier and the rest for the LLM. Best on the dev file with the 0.5B model, but
  not on held-out phrasing, so "auto" no longer picks it (see MEASURED_POLICY).
- `tie-break`: the classifier decides unless its two best intents are within
  `tie_margin` of each other; then the LLM, shown the bank's examples nearest
  to the utterance, chooses between those two only.

With every policy a most probable out-of-scope label (`unsupported`,
`fragment`) makes the router ask, and a pick below `clarify_threshold` (a
calibrated probability) makes it ask; the LLM never widens either.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from mavend.router.decision import Intent


class PolicyName(enum.StrEnum):
    CLASSIFIER = "classifier"
    LLM_FIRST = "llm-first"
    VOTE = "vote"
    TIE_BREAK = "tie-break"


# "auto" takes a policy with the LLM on the routing path only where it measured better than
# the classifier alone on the dev file AND on held-out phrasing (issue 24). With the 0.5B
# model, `mavend eval router ... --mode cascade --policies classifier,vote`: on dev
# (../shared/eval/router_dev.jsonl) vote 89.0 % strict against the classifier's 87.1 %, but
# on our own held-out utterances (tests/data/router_own, 690 rows) vote 89.0 % against
# 89.4 %, and outside the project on the held-out two thirds 87.6 % against 89.1 %; beside
# one busy process a third of its calls ran into the deadline. The 1.5B in the design's
# order (`llm-first`, behind llama-cpp-python's own server) scored 83.0 % strict on a third
# of the dev file and 66.5 % on a third of our own rows, against 91.5 % and 92.6 % for the
# classifier (USE joined with e5) on the same rows. So both local models get the classifier
# (BENCHMARKS.md, "Router, third wave"). `vote`, `tie-break` and `llm-first` stay for a
# config (or a stronger model elsewhere) that names them. A model not listed gets the
# classifier until it is measured.
MEASURED_POLICY: dict[str, PolicyName] = {
    "qwen2.5-0.5b-instruct-q4_k_m": PolicyName.CLASSIFIER,
    "qwen2.5-1.5b-instruct-q4_k_m": PolicyName.CLASSIFIER,
}


def resolve_policy(configured: str, llm_model: str) -> PolicyName:
    """The policy a config value names; "auto" is the measured one for `llm_model`."""
    if configured == "auto":
        return MEASURED_POLICY.get(llm_model, PolicyName.CLASSIFIER)
    return PolicyName(configured)


class LlmRouteLike(Protocol):
    intent: Intent
    confidence: float


class ClassifierResultLike(Protocol):
    intent: Intent
    confidence: float
    scores: dict[Intent, float]

    @property
    def probabilities(self) -> dict[str, float]: ...


@dataclass(frozen=True)
class Pick:
    intent: Intent
    confidence: float
    decided_by: str
    ranking: tuple[Intent, ...]  # most likely first: the candidates a question names
    out_of_scope: bool = False  # the most probable label was `unsupported` or `fragment`


@dataclass(frozen=True)
class RoutePolicy:
    name: PolicyName = PolicyName.CLASSIFIER
    clarify_threshold: float = 0.35
    classifier_confident: float = 0.9
    classifier_weight: float = 0.7
    tie_margin: float = 0.15
    use_llm: bool = True

    @property
    def llm_on_route(self) -> bool:
        return self.use_llm and self.name is not PolicyName.CLASSIFIER

    def needs_llm(self, classifier: ClassifierResultLike | None) -> bool:
        """Should the LLM be asked to route this turn?"""
        if classifier is None:
            return self.use_llm  # no classifier (its model is missing): the LLM routes
        if not self.llm_on_route:
            return False
        if self.name is PolicyName.LLM_FIRST:
            return True
        if self.name is PolicyName.VOTE:
            return classifier.confidence < self.classifier_confident
        return self.tie(classifier) is not None

    def tie(self, classifier: ClassifierResultLike) -> tuple[Intent, Intent] | None:
        """The classifier's two best intents when they are within `tie_margin`."""
        probs = _probabilities(classifier)
        ranked = sorted(probs, key=lambda label: -probs[label])
        if len(ranked) < 2 or probs[ranked[0]] - probs[ranked[1]] >= self.tie_margin:
            return None
        first, second = ranked[:2]
        if first not in _INTENT_NAMES or second not in _INTENT_NAMES:
            return None  # an out-of-scope label among the two: ask, never let the LLM pick
        return Intent(first), Intent(second)

    def pick(
        self, llm: LlmRouteLike | None, classifier: ClassifierResultLike | None
    ) -> Pick | None:
        """The winning intent, or None when nobody could decide."""
        if llm is not None and self.name is PolicyName.LLM_FIRST:
            dist = _llm_distribution(llm)
            return _pick_from(dist, "llm")
        if classifier is None:
            return _pick_from(_llm_distribution(llm), "llm") if llm is not None else None
        probs = _probabilities(classifier)
        if llm is not None and self.name is PolicyName.VOTE:
            return self._vote(probs, _llm_distribution(llm))
        if llm is not None and self.name is PolicyName.TIE_BREAK:
            pair = self.tie(classifier)
            if pair is not None:
                return _tie_break(probs, _llm_distribution(llm), pair)
        return _pick_from(probs, "classifier")

    def _vote(self, clf: dict[str, float], llm: dict[str, float]) -> Pick:
        w = self.classifier_weight
        labels = set(clf) | set(llm)
        mixed = {label: w * clf.get(label, 0.0) + (1 - w) * llm.get(label, 0.0) for label in labels}
        return _pick_from(mixed, "llm+classifier")


_INTENT_NAMES = frozenset(str(i) for i in Intent)


def _probabilities(classifier: ClassifierResultLike) -> dict[str, float]:
    probs = getattr(classifier, "probabilities", None)
    if probs:
        return dict(probs)
    return {str(classifier.intent): classifier.confidence}


def _llm_distribution(llm: LlmRouteLike) -> dict[str, float]:
    alternatives: Sequence[tuple[object, float]] = getattr(llm, "alternatives", ())
    if alternatives:
        return {str(i): float(p) for i, p in alternatives}
    return {str(llm.intent): llm.confidence}


def _tie_break(
    clf: dict[str, float], llm: dict[str, float], pair: tuple[Intent, Intent]
) -> Pick:
    """The LLM chooses between the classifier's two best; the pair keeps its total mass."""
    a, b = (str(i) for i in pair)
    total = clf.get(a, 0.0) + clf.get(b, 0.0)
    la, lb = llm.get(a, 0.0), llm.get(b, 0.0)
    share = la / (la + lb) if la + lb > 0 else 0.5
    mixed = dict(clf)
    mixed[a], mixed[b] = total * share, total * (1.0 - share)
    return _pick_from(mixed, "classifier+llm tie-break")


def _pick_from(dist: dict[str, float], decided_by: str) -> Pick | None:
    if not dist:
        return None
    best = max(dist, key=dist.__getitem__)
    ranking = tuple(
        Intent(label) for label in sorted(dist, key=lambda k: -dist[k]) if label in _INTENT_NAMES
    )
    if best not in _INTENT_NAMES:
        intent = ranking[0] if ranking else Intent.CHAT
        return Pick(intent, dist[best], decided_by, ranking, out_of_scope=True)
    return Pick(Intent(best), dist[best], decided_by, ranking)
