"""The router's output: one deterministic decision per utterance.

Follows the seed router spec: stage 0 grammar wins outright; otherwise a route
decider (LLM, classifier fallback) names the intent (1), slots are extracted (2)
and a confidence gate may turn the decision into a question (3).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


class Intent(enum.StrEnum):
    """The save-where axis: what the daemon does with the utterance."""

    ACT = "act"  # do something now, from the allowlist
    REMINDER = "reminder"  # has a future fire time (timers included)
    FACT = "fact"  # structured first-person state: key + value
    NOTE = "note"  # free text to recall later, no predicate reads it
    QUERY = "query"  # a question, answered from stored state or knowledge
    CHAT = "chat"  # conversation, no side effect
    SYSTEM = "system"  # control of the assistant itself


class Stage(enum.IntEnum):
    GRAMMAR = 0  # exact match against grammars/
    ROUTED = 1  # intent named by the LLM or the classifier
    SLOTS = 2  # slots extracted for the intent
    GATED = 3  # the confidence gate decided to ask instead


class Source(enum.StrEnum):
    """Where a query's answer lives: the second half of a query's route, named by the
    decider that routed it (a grammar's metadata, the LLM's `source` field, the
    classifier's source head), never guessed from the text afterwards. "" on every
    other intent. What the query handler does with each is in mavend/handlers/query.py.
    """

    UNKNOWN = ""  # no decider named one: the handler walks its whole chain
    FACTS = "facts"  # the user's structured state (keys and values, home state)
    NOTES = "notes"  # what the user asked to be remembered, in free text
    REMINDERS = "reminders"  # the user's reminders, timers and alarms
    CLOCK = "clock"  # the time and date here, now
    GENERAL = "general"  # world knowledge: the LLM's own today, a remote backend later


# Sources whose answer is the user's own data: a decider naming one of these marks the
# question personal (a narrowing judgment: any decider may make it).
PERSONAL_SOURCES = frozenset({Source.FACTS, Source.NOTES, Source.REMINDERS})


@dataclass(frozen=True)
class Slots:
    """Per-intent arguments. A slot that does not parse leaves its has_* False."""

    time: datetime | None = None  # absolute, timezone-aware fire time
    has_time: bool = False
    fn: str = ""  # an allowlisted act name; empty when nothing on the list matched
    args: dict[str, str] = field(default_factory=dict)
    has_fn: bool = False
    key: str = ""
    value: str = ""
    has_key: bool = False
    text: str = ""
    # reminders: "timer", "alarm" or "reminder", read from the words the slots came
    # from (a follow-up's rebuilt words, not the bare "ten minutes" said)
    kind: str = ""

    def to_json(self) -> dict[str, Any]:
        kind = {"kind": self.kind} if self.kind else {}
        return {
            "time": self.time.isoformat() if self.time else None,
            "has_time": self.has_time,
            "fn": self.fn or None,
            "args": dict(self.args),
            "has_fn": self.has_fn,
            "key": self.key or None,
            "value": self.value or None,
            "has_key": self.has_key,
            "text": self.text,
            **kind,
        }


@dataclass(frozen=True)
class Clarify:
    """The assistant asks instead of acting.

    kind "route": the gate could not tell what the user wants; the question
    names the top candidates. kind "slot": the intent is clear but a detail is
    missing or not allowed ("When should I remind you?", "Which service?").
    """

    question: str
    candidates: tuple[Intent, ...] = ()
    kind: str = "route"

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "candidates": [str(c) for c in self.candidates],
            "kind": self.kind,
        }


@dataclass(frozen=True)
class Decision:
    utterance: str
    stage: Stage
    intent: Intent
    confidence: float
    slots: Slots = field(default_factory=Slots)
    clarify: Clarify | None = None
    source: Source = Source.UNKNOWN
    # A stage-0 grammar named the destination by a literal pattern ("look it up in
    # my notes", "search the web for ...") and its grammar marks it `anchored`. Only
    # the router sets it, only there, and never from `stage`: a grammar match without
    # a named destination ("set a timer ...") is not anchored. It is what lets a
    # personal question reach general knowledge; a model's or a softmax's guess must
    # never widen where an answer may come from.
    source_anchored: bool = False
    # The question is about the user (queries only): a decider named a personal
    # source, or the words refer to the speaker or their household. Any judgment may
    # set it, none may clear it; unless `source_anchored`, a personal question is
    # answered from the user's own data or not at all, never by general knowledge.
    personal: bool = False
    # Rebuilt from the previous turn (an ellipsis) rather than routed; set by
    # the daemon's continuation path, never by the router.
    continued: bool = False
    # Which decider named the intent: grammar, llm, classifier, habit, repair, gate.
    decided_by: str = ""
    # How long each stage took (ms), set by the router: the turn log and the page show
    # it. Not part of the decision's identity, nor of `mavend route --json`.
    stage_ms: Mapping[str, float] = field(default_factory=dict, compare=False, repr=False)

    @property
    def needs_clarify(self) -> bool:
        return self.clarify is not None

    def to_json(self) -> dict[str, Any]:
        """The `mavend route --json` object; field names are a public contract."""
        return {
            "utterance": self.utterance,
            "intent": str(self.intent),
            "stage": int(self.stage),
            "confidence": round(float(self.confidence), 4),
            "clarify": self.clarify.to_json() if self.clarify else None,
            "slots": self.slots.to_json(),
            "source": str(self.source) or None,
            "source_anchored": self.source_anchored,
            "personal": self.personal,
            "continued": self.continued,
            "decided_by": self.decided_by,
        }

    def to_json_line(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)
