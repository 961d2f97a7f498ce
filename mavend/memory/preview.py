"""What memory would change about a turn, shown without changing anything.

`mavend route` and the D-Bus `Route` print the router's own decision (the same
object as before memory existed, so the public fields keep their meaning) plus
one key, "memory": null when memory is off or nothing learned applies, else

    {"applies": "habit" | "repair" | "recall",
     "record": {...} | null,      the habit or repair that applies
     "without": {decision},       the router alone: no habit, no repair, no recall block
     "with": {decision},          what the turn would route to, memory on
     "recall_block": "..."}       what the LLM was shown ("" without an LLM)

"recall" means no habit or repair applied, but the recall block in the LLM's
prompt changed the route by itself. A turn that replies to the previous one
("no, I meant ...", an answer to a question) depends on that previous turn; a
preview routes the text as a fresh turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mavend.memory.habits import Verdict
from mavend.memory.plan import Plan
from mavend.memory.records import Repair, habit_name
from mavend.router.decision import Decision

HABIT = "habit"
REPAIR = "repair"
RECALL = "recall"


@dataclass(frozen=True)
class MemoryPreview:
    """What memory would do to one turn: which record applies, the decision without and with."""

    applies: str  # HABIT | REPAIR | RECALL
    record: dict[str, Any] | None  # None for RECALL: no single record decided it
    without: Decision
    with_: Decision
    recall_block: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "applies": self.applies,
            "record": self.record,
            "without": self.without.to_json(),
            "with": self.with_.to_json(),
            "recall_block": self.recall_block,
        }


@dataclass(frozen=True)
class RouteView:
    """The `route` answer: the router's own decision, and what memory would change."""

    decision: Decision
    memory: MemoryPreview | None = None

    def to_json(self) -> dict[str, Any]:
        return {**self.decision.to_json(), "memory": self.memory.to_json() if self.memory else None}

    def to_json_line(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)


def preview_of(plan: Plan, without: Decision) -> MemoryPreview | None:
    """The preview for a routed plan (read-only), or None when memory changes nothing."""
    if plan.repair is not None:
        applies, record = REPAIR, repair_record(plan.repair)
    elif plan.habit is not None:
        applies, record = HABIT, habit_record(plan.habit)
    elif _route(plan.decision) != _route(without):
        applies, record = RECALL, None
    else:
        return None
    return MemoryPreview(applies, record, without, plan.decision, plan.context)


def _route(decision: Decision) -> tuple[str, str, tuple[tuple[str, str], ...], bool]:
    # The route, not the whole decision: a reminder's time is read off the clock at
    # each routing, so two routings of "in ten minutes" differ by milliseconds.
    asks = decision.clarify is not None and decision.clarify.kind == "route"
    args = tuple(sorted(decision.slots.args.items()))
    return str(decision.intent), decision.slots.fn, args, asks


def habit_record(verdict: Verdict) -> dict[str, Any]:
    """The habit that applies: its best matching record and the evidence behind it."""
    match = verdict.match
    best = match.examples[0]
    return {
        "kind": HABIT,
        "id": best.id,
        "name": habit_name(str(match.intent)),
        "utterance": best.utterance,
        "intent": str(match.intent),
        "fn": match.fn or None,
        "action": verdict.action,  # "settle": it decides the route; "boost": confidence only
        "records": len(match.examples),
        "confirmed": match.confirmed,  # from the user's word: answers and corrections
        "corrected": match.corrected,
        "backed": match.backed,
        "support": round(match.support, 3),
    }


def repair_record(repair: Repair) -> dict[str, Any]:
    return {
        "kind": REPAIR,
        "id": repair.id,
        "name": repair.name,
        "signature": repair.signature.key(),
        "utterance": repair.utterance,
        "intent": repair.intent,
        "fn": repair.fn or None,
        "args": dict(repair.args),
        "successes": repair.successes,
        "failures": repair.failures,
    }


def describe_memory(memory: dict[str, Any] | None) -> str:
    """The `memory:` line of `mavend route` (from the JSON, so a daemon's answer reads the same)."""
    if not memory:
        return "memory:     nothing learned changes this turn"
    record = memory.get("record") or {}
    change = f"{_short(memory['without'])} -> {_short(memory['with'])}"
    if memory["applies"] == REPAIR:
        return (
            f"memory:     repair #{record['id']} {record['signature']} (your correction of"
            f" {record['utterance']!r}; worked {record['successes']}, failed"
            f" {record['failures']}): {change}"
        )
    if memory["applies"] == HABIT:
        return (
            f"memory:     habit #{record['id']} {record['name']} ({record['action']}: like"
            f" {record['utterance']!r}; {record['records']} matching records,"
            f" {record['confirmed']} from your answers or corrections): {change}"
        )
    return f"memory:     the recall block shown to the LLM: {change}"


def _short(decision: dict[str, Any]) -> str:
    clarify = decision.get("clarify")
    if clarify and clarify.get("kind") == "route":
        return f"asks ({decision['decided_by']})"
    fn = (decision.get("slots") or {}).get("fn")
    what = f"{decision['intent']} {fn}" if fn else str(decision["intent"])
    return f"{what} ({decision['decided_by']}, {decision['confidence']:.2f})"
