"""A turn's `Plan`: its decision, and what memory needs to learn from its outcome.

Made by `Memory.plan` (engine.py), read by `Memory.observe` and by the preview
(preview.py), which engine.py imports: so the plan is in a module of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mavend.memory.habits import Verdict
from mavend.memory.previous import LastTurn
from mavend.memory.records import Repair
from mavend.router.decision import Decision

# The owner's session at this box (mavend.conversation.DEFAULT_SESSION: that package
# imports the handlers, which import this module, so the name is repeated here).
LOCAL_SESSION = "local"
# What a plan is: the router's decision (maybe repaired or settled by a habit), a
# correction of the previous turn ("no, I meant ..."), or an answer to its question.
ROUTED_PLAN = "routed"
CORRECTION = "correction"
ANSWER = "clarify_answer"


@dataclass(frozen=True)
class Plan:
    """One turn's decision, and what memory needs to learn from its outcome."""

    said: str
    decision: Decision
    kind: str = ROUTED_PLAN
    route: str = ""  # routed: the router's own route (before any repair)
    pattern: str = ""
    repair: Repair | None = None  # routed: the repair applied
    # routed: the router's own decision, before any repair or habit touched it (the
    # seed's raw intent-layer judgment: what a habit record is made of)
    raw: Decision | None = None
    habit: Verdict | None = None  # routed: the habit verdict applied
    previous: LastTurn | None = None  # correction / answer: the turn it repairs
    context: str = ""  # the recall block the LLM saw
    router: Any = field(default=None, compare=False, repr=False)
    session: str = LOCAL_SESSION  # where it was said: its previous turn is kept there
    trusted: bool = True  # the owner's word: it may write habits, repairs, examples
