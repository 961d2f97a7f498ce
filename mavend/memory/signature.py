"""Failure signatures: what went wrong, coarse enough to meet again.

A signature is the normalized utterance pattern + the failing route (or act) +
a coarse error class. Deliberately low-cardinality: "Turn on the light!" and
"turn the light on" share a pattern, and every non-zero exit is one class, so
the same kind of failure finds the repair that worked last time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mavend.memory.text import content_words

# Error classes (the last part of a signature).
CORRECTED = "corrected"  # the user said "no, I meant ..." after a turn that ran
CLARIFY_ANSWERED = "clarify_answered"  # the router asked which intent; the user answered
ACT_PREFIX = "act_"  # an act failed, then was corrected: act_exit_status, act_timeout, ...

# Act error classes (mavend.handlers.act.run_argv) kept as they are; anything
# else an act reports collapses to one bucket so cardinality stays bounded.
_ACT_CLASSES = frozenset(
    {"exit_status", "not_found", "permission", "timeout", "signal", "os_error", "bad_argument"}
)
MAX_PATTERN_WORDS = 8


def pattern_of(utterance: str) -> str:
    """The utterance's content words, sorted, joined by '_' (numbers become '#')."""
    words = sorted(content_words(utterance))[:MAX_PATTERN_WORDS]
    return "_".join(words) or "_"


def route_of(intent: str, fn: str = "", *, clarify: bool = False) -> str:
    """'clarify' when the router asked; 'act:<fn>' / 'system:<fn>'; else the intent."""
    if clarify:
        return "clarify"
    return f"{intent}:{fn}" if fn and intent in ("act", "system") else intent


def error_class(outcome: str, reply_error: str, *, answered_clarify: bool) -> str:
    """The coarse class of a failure the next turn repaired."""
    if answered_clarify:
        return CLARIFY_ANSWERED
    if outcome in ("failed", "refused") and reply_error:
        cls = reply_error if reply_error in _ACT_CLASSES else "other"
        return ACT_PREFIX + cls
    return CORRECTED


@dataclass(frozen=True)
class FailureSignature:
    pattern: str
    route: str
    error_class: str

    def key(self) -> str:
        return f"{self.pattern}::{self.route}::{self.error_class}"

    def prefix(self) -> str:
        """What a new turn knows before it runs: pattern and route, not the error."""
        return f"{self.pattern}::{self.route}::"

    def to_json(self) -> dict[str, Any]:
        return {"pattern": self.pattern, "route": self.route, "error_class": self.error_class}

    @classmethod
    def from_json(cls, raw: object) -> FailureSignature | None:
        if not isinstance(raw, dict):
            return None
        parts = [raw.get(k) for k in ("pattern", "route", "error_class")]
        if not all(isinstance(p, str) and p for p in parts):
            return None
        return cls(*parts)  # type: ignore[arg-type]
