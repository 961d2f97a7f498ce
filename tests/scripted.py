"""Scripted seams for the router: a fixed clock, a scripted LLM and classifier."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from mavend import paths
from mavend.config import Settings
from mavend.router import PolicyName, RoutePolicy, Router
from mavend.router.decision import Intent
from mavend.router.grammar import CommandGrammar
from mavend.router.slots import SlotExtractor

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 3, 10, 14, 0, tzinfo=TZ)  # a Tuesday


@dataclass(frozen=True)
class Route:
    intent: Intent
    confidence: float = 0.9
    fn: str = ""
    args: dict[str, str] = field(default_factory=dict)
    time_phrase: str = ""
    key: str = ""
    value: str = ""
    text: str = ""
    source: str = ""  # query: where the answer lives, as the LLM's "source" field says
    # (intent, probability) pairs, as the real LLM stage reads them from its logits
    alternatives: tuple[tuple[Intent, float], ...] = ()


@dataclass(frozen=True)
class Classified:
    intent: Intent
    confidence: float
    scores: dict[Intent, float] = field(default_factory=dict)
    # Out-of-scope labels ("unsupported", "fragment") and their probabilities, if any.
    extra: dict[str, float] = field(default_factory=dict)
    source: str = ""  # the source head's answer for a query, "" when it names none

    @property
    def probabilities(self) -> dict[str, float]:
        """The scripted scores, read as each label's probability."""
        raw = {str(i): s for i, s in self.scores.items()} | self.extra
        return raw or {str(self.intent): self.confidence}


class ScriptedLlm:
    """Answers from a script; an Exception in the script is raised."""

    def __init__(self, script: dict[str, Route | Exception]):
        self.script = script
        self.calls: list[str] = []

    def route(self, utterance: str, *, context: str = "") -> Route:
        self.calls.append(utterance)
        answer = self.script.get(utterance, RuntimeError("not in script"))
        if isinstance(answer, Exception):
            raise answer
        return answer


class ScriptedClassifier:
    def __init__(self, script: dict[str, Classified], default: Classified):
        self.script, self.default = script, default

    def classify(self, text: str) -> Classified:
        return self.script.get(text, self.default)


# A classifier that knows nothing: every intent equally far.
LOW = Classified(Intent.CHAT, 0.2, dict.fromkeys(Intent, 0.2))


def make_router(
    llm: ScriptedLlm | None = None,
    classifier: ScriptedClassifier | None = None,
    **policy: Any,
) -> Router:
    """A router over scripted seams. The policy defaults to "vote" (both deciders are
    asked), so a test of the LLM's handling sees the LLM; pass name=... for another."""
    policy.setdefault("name", PolicyName.VOTE)
    settings = Settings()
    grammar = CommandGrammar.from_dir(
        paths.grammars_dir(), settings.acts, settings.router.wake_words
    )
    return Router(
        grammar,
        SlotExtractor(settings.acts),
        classifier=classifier,
        llm=llm,
        policy=RoutePolicy(**policy),
        clock=lambda: NOW,
    )
