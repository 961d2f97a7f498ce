"""The habit layer: learned phrasings settle what the cascade could not.

Records (`records.Habit`) come from two places. After a routed turn the
router's own judgment is written back (source "routed", at the router's own
confidence), and only where memory left its route alone: what a habit or a
repair decided is never written, so a habit cannot grow from its own
decisions. And the user's word: an answer to the router's question
("confirmed") or a correction ("corrected"), at confidence 1.0.

On a later turn the records whose words overlap the utterance are recalled
and summed per (intent, fn). `verdict` then applies the seed's conservative
rules:

- a clear decision of another intent stands: a habit never overrides it, and
  no habit says "chat", so none can turn a task into no task;
- a question the router asked about the intent (clarify "route") is settled
  by a habit with at least `min_support` matching records from the user's
  word (confirmed or corrected; routed records never settle anything), at the
  bounded `habit_confidence` (a fragment such as "um" is never settled);
- a weak chat decision (no task found) is woken the same way; a weak decision
  of another intent only by a phrasing the user explicitly corrected before;
- a decision of the same intent is strengthened (confidence +0.05, capped)
  when one matching record is the user's word or a routed judgment made at
  `habit_confidence` or more, and an act with no function found takes the
  habit's (re-checked against the allowlist by the slot extractor).

Missing or unreadable data means no habit: the cascade's decision stands.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mavend.memory.records import CORRECTED, Habit
from mavend.memory.text import content_words, similar
from mavend.router.decision import Decision, Intent

# Added to a same-intent decision's confidence by a habit that backs it.
BOOST = 0.05
# The runner-up's support above this share of the winner's: too close to call.
AMBIGUOUS_SHARE = 0.5


@dataclass(frozen=True)
class HabitMatch:
    intent: Intent
    fn: str
    args: dict[str, str]
    support: float  # summed similarity-weighted evidence
    backed: int  # the user's records, or routed ones at trusted confidence: may boost
    confirmed: int  # records from the user's word (confirmed or corrected): may settle
    corrected: int  # records the user's own correction wrote ("no, I meant ...")
    examples: tuple[Habit, ...]  # the matching records, best first


@dataclass(frozen=True)
class Verdict:
    """What the habit layer wants: settle to an intent, or boost the same one."""

    action: str  # "settle" | "boost"
    match: HabitMatch
    confidence: float


def recall(
    utterance: str, habits: Sequence[Habit], *, trusted_confidence: float
) -> list[HabitMatch]:
    """Matching habits grouped by (intent, fn), strongest first."""
    words = content_words(utterance)
    groups: dict[tuple[str, str], list[tuple[float, Habit]]] = {}
    for habit in habits:
        if habit.intent == Intent.CHAT:
            continue  # non-task noise is not a habit
        score = similar(words, list(habit.words))
        if score <= 0.0:
            continue
        groups.setdefault((habit.intent, habit.fn), []).append((score, habit))
    matches = []
    for (intent, fn), found in groups.items():
        found.sort(key=lambda item: (-item[0], -item[1].id))
        support = sum(s * (1.0 if h.user_backed else h.confidence) for s, h in found)
        backed = sum(1 for _, h in found if h.user_backed or h.confidence >= trusted_confidence)
        confirmed = sum(1 for _, h in found if h.user_backed)
        corrected = sum(1 for _, h in found if h.source == CORRECTED)
        try:
            named = Intent(intent)
        except ValueError:
            continue
        matches.append(
            HabitMatch(
                named,
                fn,
                dict(found[0][1].args),
                support,
                backed,
                confirmed,
                corrected,
                tuple(h for _, h in found),
            )
        )
    matches.sort(key=lambda m: -m.support)
    return matches


def verdict(
    decision: Decision,
    matches: Sequence[HabitMatch],
    *,
    habit_confidence: float,
    min_support: int,
) -> Verdict | None:
    """What the habit layer does to this decision; None: the decision stands."""
    if not matches:
        return None
    best = matches[0]
    if len(matches) > 1 and matches[1].support > AMBIGUOUS_SHARE * best.support:
        return None  # the user's habits disagree about this phrasing
    if decision.decided_by in ("grammar", "gate") or decision.stage == 0:
        return None  # a command matched exactly, or a fragment with no request in it
    clarify = decision.clarify
    # Settling changes where a turn goes: only the user's own word may do that.
    if clarify is not None and clarify.kind == "route":
        if best.confirmed >= min_support:
            return Verdict("settle", best, habit_confidence)
        return None
    if (
        decision.intent == Intent.CHAT
        and best.intent != Intent.CHAT
        and decision.confidence < habit_confidence
        and best.confirmed >= min_support
    ):
        return Verdict("settle", best, habit_confidence)
    if decision.intent != best.intent and decision.confidence < habit_confidence and best.corrected:
        # Not confident, and the user has said before that this phrasing means something else.
        return Verdict("settle", best, habit_confidence)
    if decision.intent == best.intent and best.backed >= 1:
        return Verdict("boost", best, min(1.0, max(decision.confidence, habit_confidence) + BOOST))
    return None  # another intent, decided: it stands
