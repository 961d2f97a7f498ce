"""`Memory`: habits and repairs wired around one turn.

    take_previous(session)   first thing in a turn: that session's previous turn (any
                             turn of the session ends it: mavend/memory/previous.py)
    plan(router, utterance)  before the handler: is this a reply to the previous turn
                             (a correction, a clarify answer)? else route, then
                             apply a repair for the signature, else merge habits
    observe(plan, reply)     after the handler: write the router's own judgment (never
                             memory's), store or credit a repair, teach the classifier,
                             remember the turn for its session
    route_view(router, u)    read-only: the router's decision, and what memory would
                             change about it (`mavend route`, D-Bus Route)

State that spans turns (each session's previous turn, for "no, I meant ...") lives in
the session table, so it spans processes like the rest (`mavend say` twice works).

Whose word counts: a plan is made for a session, trusted or not (the assistant decides:
the owner's local session, satellites marked `trusted`). Every session reads the owner's
habits and repairs, and may correct its own previous turn; only a trusted one writes:
habit records, repairs and their credit, classifier examples. An untrusted room (a
guest, Home Assistant, a satellite not marked trusted) never reaches the owner's memory,
the seed's scope rule: habits are read from, and written to, the owner's scope only.
Nothing memory decides widens what may run: every decision it makes goes
through the router's slot extractor (the allowlist, typed slots) and then the
normal handler, which asks before any destructive act.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from datetime import datetime
from typing import Any

from mavend.config import ActsSettings, MemorySettings
from mavend.memory import dialogue, habits
from mavend.memory.plan import ANSWER, CORRECTION, LOCAL_SESSION, ROUTED_PLAN, Plan
from mavend.memory.preview import MemoryPreview, RouteView, preview_of
from mavend.memory.previous import LAST_KEY, LastTurn, PreviousTurns
from mavend.memory.recall_block import BlockLimits, build_block
from mavend.memory.records import (
    CONFIRMED,
    CORRECTED,
    ROUTED,
    Habit,
    MemoryTable,
    Repair,
)
from mavend.memory.signature import FailureSignature, error_class, pattern_of, route_of
from mavend.memory.text import content_words, tokens
from mavend.router.decision import Decision, Intent
from mavend.state.store import Store

log = logging.getLogger(__name__)

__all__ = ["LAST_KEY", "LOCAL_SESSION", "LastTurn", "Memory", "Plan"]
# Habit records read per turn (newest first): bounded work on every turn.
RECALL_ROWS = 2000
# Reply outcomes that mean the route was right: it did what was asked, asks to
# confirm it, or was routed right but needs something that is off (the LLM, for
# a general question). "failed" and "refused" are failures of the turn.
SUCCESS = frozenset({"done", "confirm", "unavailable"})
FAILURE = frozenset({"failed", "refused"})


def voice_scope(scope: str, speaker: str) -> str:
    """Where an enrolled voice's habits and repairs are kept: "owner:sam". Each voice
    learns its own way of putting things ([voices], mavend/voices/)."""
    return f"{scope}:{speaker}"


class Memory:
    """Habit recall and repair recall for routing. Disabled: every method a no-op."""

    def __init__(
        self,
        settings: MemorySettings,
        store: Store,
        *,
        acts: ActsSettings,
        clock: Callable[[], datetime],
        scope: str | None = None,
    ):
        self.settings = settings
        self.enabled = settings.enabled
        self.scope = scope or settings.scope
        self.store = store
        self.acts = acts
        self.clock = clock
        self.table = MemoryTable(store)
        self.previous = PreviousTurns(store)

    def in_scope(self, scope: str) -> Memory:
        """This memory reading and writing `scope`'s habits and repairs instead (one
        enrolled voice's: `voice_scope`); the table and the previous turns are shared."""
        if scope == self.scope:
            return self
        scoped = copy.copy(self)
        scoped.scope = scope
        return scoped

    # before the handler ------------------------------------------------------
    def take_previous(self, session: str = LOCAL_SESSION) -> LastTurn | None:
        """`session`'s previous turn, taken: call it first in every turn of the session
        (whatever the turn turns out to be), and hand it to `plan`. Never raises."""
        if not self.enabled:
            return None
        try:
            raw = self.previous.take(session, now_ts=self.clock().timestamp())
        except Exception:  # memory must never cost a turn
            log.exception("memory could not read the previous turn")
            return None
        return LastTurn.from_json(raw)

    def plan(
        self,
        router: Any,
        said: str,
        *,
        session: str = LOCAL_SESSION,
        previous: LastTurn | None = None,
        trusted: bool = True,
    ) -> Plan:
        """The decision for this turn, said in `session` after `previous` (its own
        previous turn, from `take_previous`). `trusted`: the owner's word, which memory
        learns from. Any memory failure routes the turn plainly."""
        if not self.enabled:
            return Plan(said, router.route(said), router=router, session=session, trusted=trusted)
        try:
            plan = self._plan(router, said, previous, trusted=trusted)
        except Exception:  # memory must never cost a turn
            log.exception("memory failed; routing without it")
            plan = Plan(said, router.route(said), router=router)
        return replace(plan, session=session, trusted=trusted)

    def _plan(self, router: Any, said: str, last: LastTurn | None, *, trusted: bool) -> Plan:
        if last is not None:
            reply = self._reply_to(router, said, last)
            if reply is not None:
                return reply
            if last.applied and last.repair and trusted:
                self._credit(last.repair, success=True)  # it was not corrected: it worked
        return self._route(router, said)

    def context_for(
        self,
        router: Any,
        said: str,
        *,
        habits_: Sequence[Habit] | None = None,
        repairs: Sequence[Repair] | None = None,
    ) -> str:
        """The recall block this turn's LLM prompt would get ("" for none). Read-only:
        the daemon computes it early, to route a partial transcript exactly as the turn will."""
        if not self.enabled or getattr(router, "llm", None) is None:
            return ""
        try:
            if habits_ is None:
                habits_ = self.table.habits(self.scope, RECALL_ROWS)
            if repairs is None:
                repairs = self.table.repairs(self.scope)
            return self.recall_block(said, repairs=list(repairs), habits=list(habits_))
        except Exception:  # memory must never cost a turn
            log.exception("memory recall failed")
            return ""

    def _route(self, router: Any, said: str) -> Plan:
        habits_ = self.table.habits(self.scope, RECALL_ROWS)
        repairs = self.table.repairs(self.scope)
        context = self.context_for(router, said, habits_=habits_, repairs=repairs)
        decision = router.route(said, context=context) if context else router.route(said)
        asks = decision.clarify is not None and decision.clarify.kind == "route"
        route = route_of(str(decision.intent), decision.slots.fn, clarify=asks)
        pattern = pattern_of(said)
        plan = Plan(
            said,
            decision,
            ROUTED_PLAN,
            route,
            pattern,
            raw=decision,
            context=context,
            router=router,
        )
        if not content_words(said):
            return plan  # "um": nothing to recall for it
        # A repair is the user's own word about this very pattern, so it applies even
        # where the gate took the words for a fragment ("is the oven still on").
        # A command the grammar matched whole, with nothing to ask, is the user's exact
        # words for a known command: no repair learned from another phrasing of the same
        # pattern ("set a timer for nan minutes", then a correction) may turn it into
        # something else.
        exact = decision.decided_by == "grammar" and decision.clarify is None
        repair = None if exact else _best_repair(repairs, pattern, route)
        if repair is not None:
            repaired = self._decide_as(
                router,
                said,
                Intent(repair.intent),
                fn=repair.fn,
                args=repair.args,
                confidence=max(decision.confidence, self.settings.habit_confidence),
                decided_by="repair",
            )
            return replace(plan, decision=repaired, repair=repair)
        if decision.decided_by == "gate":
            return plan  # a habit never settles a fragment
        matches = habits.recall(said, habits_, trusted_confidence=self.settings.habit_confidence)
        verdict = habits.verdict(
            decision,
            matches,
            habit_confidence=self.settings.habit_confidence,
            min_support=self.settings.habit_min_support,
        )
        if verdict is None:
            return plan
        match = verdict.match
        if verdict.action == "settle" or (
            decision.intent == Intent.ACT and not decision.slots.has_fn and match.fn
        ):
            by = "habit" if verdict.action == "settle" else f"{decision.decided_by}+habit"
            settled = self._decide_as(
                router,
                said,
                match.intent,
                fn=match.fn,
                args={},
                confidence=verdict.confidence,
                decided_by=by,
            )
            return replace(plan, decision=settled, habit=verdict)
        boosted = replace(
            decision,
            confidence=verdict.confidence,
            decided_by=f"{decision.decided_by}+habit",
        )
        return replace(plan, decision=boosted, habit=verdict)

    # read-only: what memory would change ------------------------------------------
    def route_view(self, router: Any, said: str) -> RouteView:
        """The router's own decision for `said`, and what memory would change about it.

        Writes nothing: no record, no repair credit, no session state, no classifier
        example (a plan writes only in `observe`; the credit in `_plan` is skipped here).
        `said` is routed as a fresh turn, not as a reply to the previous one.
        """
        if not self.enabled:
            return RouteView(router.route(said))
        try:
            plan = self._route(router, said)
            # With an LLM the plan's own routing saw the recall block: route once more
            # without it for the router alone.
            without = router.route(said) if plan.context else (plan.raw or plan.decision)
            return RouteView(without, preview_of(plan, without))
        except Exception:  # memory must never cost a routing
            log.exception("memory preview failed; routing without it")
            return RouteView(router.route(said))

    def preview(self, router: Any, said: str) -> MemoryPreview | None:
        """What memory would change about `said` (None: off, or nothing applies). Read-only."""
        return self.route_view(router, said).memory

    def _reply_to(self, router: Any, said: str, last: LastTurn) -> Plan | None:
        """A correction of, or an answer to, the previous turn; None when it is neither."""
        if last.candidates:
            known = {str(i) for i in Intent}
            candidates = [Intent(c) for c in last.candidates if c in known]
            intent = dialogue.parse_clarify_answer(said, candidates)
            if intent is not None:
                decision = self._decide_as(
                    router, last.utterance, intent, confidence=1.0, decided_by="clarify-answer"
                )
                return Plan(said, decision, ANSWER, previous=last, router=router)
        correction = dialogue.parse_correction(said)
        if correction is None:
            return None
        if correction.intent is not None:
            decision = self._decide_as(
                router,
                last.utterance,
                correction.intent,
                confidence=1.0,
                decided_by="correction",
            )
            return Plan(said, decision, CORRECTION, previous=last, router=router)
        fixed = self._slot_fix(last, correction.rest)
        if fixed is not None:
            decision = self._decide_as(
                router,
                last.utterance,
                Intent.ACT,
                fn=last.fn,
                args=fixed,
                confidence=1.0,
                decided_by="correction",
            )
            return Plan(said, decision, CORRECTION, previous=last, router=router)
        if len(tokens(correction.text)) < 2:
            return None  # "no, kitchen" with nothing to apply it to: route it as said
        routed = self._route(router, correction.text).decision
        return Plan(said, routed, CORRECTION, previous=last, router=router)

    def _slot_fix(self, last: LastTurn, rest: str) -> dict[str, str] | None:
        """The previous act's arguments with the values named in `rest`, or None."""
        if last.intent != Intent.ACT or not last.fn:
            return None
        spec = self.acts.get(last.fn)
        if spec is None or not spec.slots:
            return None
        words = tokens(rest)
        said = " ".join(words)
        changed = dict(last.args)
        found = False
        for name, slot in spec.slots.items():
            if slot.type == "enum":
                value = next(
                    (v for v in slot.values if f" {' '.join(tokens(v))} " in f" {said} "), None
                )
            elif slot.type == "int":
                value = next((w for w in words if w.isdigit()), None)
            else:
                value = None
            if value is not None and value != changed.get(name):
                changed[name] = value
                found = True
        return changed if found else None

    def _decide_as(
        self,
        router: Any,
        utterance: str,
        intent: Intent,
        *,
        fn: str = "",
        args: Mapping[str, str] | None = None,
        confidence: float,
        decided_by: str,
    ) -> Decision:
        return router.decide_as(
            utterance,
            intent,
            fn=fn,
            args=_hint_args(self.acts, fn, dict(args or {}), utterance),
            confidence=confidence,
            decided_by=decided_by,
        )

    # the recall block ----------------------------------------------------------
    def recall_block(
        self,
        utterance: str,
        *,
        repairs: list[Repair] | None = None,
        habits: list[Habit] | None = None,
    ) -> str:
        """The bounded block for the LLM prompt ("" when off or nothing relevant)."""
        if not self.enabled:
            return ""
        if repairs is None:
            repairs = self.table.repairs(self.scope)
        if habits is None:
            habits = self.table.habits(self.scope, RECALL_ROWS)
        limits = BlockLimits(
            self.settings.recall_max_items,
            self.settings.recall_item_chars,
            self.settings.recall_max_chars,
        )
        return build_block(utterance, repairs, habits, limits)

    # after the handler -----------------------------------------------------------
    def observe(self, plan: Plan, outcome: str, reply_error: str = "") -> None:
        """Learn from how the turn ended. Never raises."""
        if not self.enabled:
            return
        try:
            self._observe(plan, str(outcome), reply_error)
        except Exception:
            log.exception("memory could not learn from this turn")

    def _observe(self, plan: Plan, outcome: str, reply_error: str) -> None:
        now = self.clock()
        decision = plan.decision
        habit_id, repair_name, applied = 0, "", False
        # Only the owner's word is learned from: an untrusted session's turn writes no
        # habit, no repair and no credit, and teaches the classifier nothing.
        learns = plan.trusted
        if plan.kind == ROUTED_PLAN or plan.previous is None:
            utterance, route, pattern = plan.said, plan.route, plan.pattern
            if plan.repair is not None and learns:
                if outcome in FAILURE:
                    self._credit(plan.repair.name, success=False)
                else:
                    repair_name, applied = plan.repair.name, True
            judged = _judgment(plan)
            if judged is not None and outcome not in FAILURE and learns:
                habit_id = self._add_habit(utterance, judged, judged.confidence, ROUTED, now)
        else:
            prev = plan.previous
            utterance, route, pattern = prev.utterance, prev.route, prev.pattern
            if outcome in SUCCESS and learns:
                repair_name = self._learn_repair(plan, prev, now)
                if prev.habit_id:
                    self.table.delete(prev.habit_id)  # it recorded the wrong meaning
                if _is_task(decision):
                    source = CONFIRMED if plan.kind == ANSWER else CORRECTED
                    habit_id = self._add_habit(prev.utterance, decision, 1.0, source, now)
                self._teach(plan.router, prev, decision)
        asks = decision.clarify is not None and decision.clarify.kind == "route"
        last = LastTurn(
            said=plan.said,
            utterance=utterance,
            intent=str(decision.intent),
            fn=decision.slots.fn,
            args=dict(decision.slots.args),
            route=route,
            pattern=pattern,
            candidates=tuple(str(c) for c in decision.clarify.candidates) if asks else (),
            outcome=outcome,
            error_class=reply_error,
            habit_id=habit_id,
            repair=repair_name,
            applied=applied,
            before_turn=self._last_turn_id(),
        )
        self.previous.put(
            plan.session,
            asdict(last),
            now_ts=now.timestamp(),
            expires_ts=now.timestamp() + self.settings.correction_window_s,
        )

    def _learn_repair(self, plan: Plan, prev: LastTurn, now: datetime) -> str:
        if prev.repair and plan.kind == CORRECTION:
            self._credit(prev.repair, success=False)  # the repair it used was wrong again
        if prev.pattern == "_":
            return ""
        signature = FailureSignature(
            prev.pattern,
            prev.route,
            error_class(prev.outcome, prev.error_class, answered_clarify=plan.kind == ANSWER),
        )
        decision = plan.decision
        repair = self.table.store_repair(
            scope=self.scope,
            signature=signature,
            utterance=prev.utterance,
            intent=str(decision.intent),
            fn=decision.slots.fn,
            args=dict(decision.slots.args),
            now=now,
        )
        return repair.name

    def _add_habit(
        self, utterance: str, decision: Decision, confidence: float, source: str, now: datetime
    ) -> int:
        return self.table.add_habit(
            scope=self.scope,
            utterance=utterance,
            intent=str(decision.intent),
            fn=decision.slots.fn if decision.intent == Intent.ACT else "",
            args=dict(decision.slots.args) if decision.intent == Intent.ACT else {},
            confidence=confidence,
            source=source,
            now=now,
            keep=self.settings.max_records,
        )

    def correct(self, router: Any, utterance: str, intent: Intent) -> bool:
        """"That was wrong: it was <intent>", about a past turn (the household's page, the
        owner's): the lesson a spoken "no, I meant ..." teaches the classifier, the
        utterance with its right label, so the next identical turn goes there. False
        when memory is off (nothing is learned)."""
        if not self.enabled:
            return False
        return self._add_example(router, utterance, intent)

    def _teach(self, router: Any, prev: LastTurn, decision: Decision) -> None:
        """Append the corrected utterance, with its right label, to the classifier's examples."""
        if str(decision.intent) == prev.intent and not prev.candidates:
            return  # the label was right (a slot was wrong): nothing to teach
        self._add_example(router, prev.utterance, decision.intent)

    def _add_example(self, router: Any, utterance: str, intent: Intent) -> bool:
        try:
            classifier = getattr(router, "classifier", None)
            add = getattr(classifier, "add_example", None) if classifier is not None else None
            if add is None:
                return False
            grammar = getattr(router, "grammar", None)
            text = grammar.strip_wake_word(utterance) if grammar is not None else utterance
            add(text, intent)
            return True
        except Exception:  # a missing model or a read-only data dir: the repair still stands
            log.warning("could not add the corrected example to the classifier", exc_info=True)
            return False

    def _credit(self, name: str, *, success: bool) -> None:
        repair = next((r for r in self.table.repairs(self.scope) if r.name == name), None)
        if repair is not None:
            self.table.credit(repair, success=success, now=self.clock())

    # the previous turn -------------------------------------------------------------
    def _last_turn_id(self) -> int:
        with self.store.read() as conn:
            row = conn.execute("SELECT max(id) FROM turns").fetchone()
        return int(row[0] or 0)


def _best_repair(repairs: list[Repair], pattern: str, route: str) -> Repair | None:
    found = [
        r
        for r in repairs
        if r.live and r.signature.pattern == pattern and r.signature.route == route
    ]
    if not found:
        return None
    return max(found, key=lambda r: (r.successes - r.failures, r.id))


def _hint_args(acts: ActsSettings, fn: str, args: dict[str, str], utterance: str) -> dict[str, str]:
    """A learned act's arguments as hints; a number the user says now beats a learned one."""
    spec = acts.get(fn) if fn else None
    if spec is None:
        return {}
    said_number = any(t.isdigit() for t in tokens(utterance))
    return {
        name: value
        for name, value in args.items()
        if name in spec.slots and not (spec.slots[name].type == "int" and said_number)
    }


def _judgment(plan: Plan) -> Decision | None:
    """The habit record a routed turn writes: the router's own judgment, never memory's.

    What memory decided is not evidence for memory: a habit-settled turn written back
    would add support to the habit that settled it, and a boosted one would be stored
    at the boosted confidence. So the raw decision is written, at the router's own
    confidence, and only where memory left its route alone. Where a repair or a habit
    replaced the route, nothing is: the raw route there is a question, no task, or a
    meaning the user's own correction already contradicted for this phrasing (written
    back, it would count against that correction); the repair keeps its own count.
    """
    raw = plan.raw or plan.decision
    if plan.repair is not None or not _is_task(raw):
        return None
    if plan.decision.continued:
        # An ellipsis ("and dad at six") was rebuilt from the previous turn by the
        # daemon: the fragment's own judgment is why it was (weak, or no request in
        # it), and the rebuilt meaning is not the router's. Neither is evidence.
        return None
    if (raw.intent, raw.slots.fn) != (plan.decision.intent, plan.decision.slots.fn):
        return None
    return raw


def _is_task(decision: Decision) -> bool:
    """Worth learning: a routed request, not chat, not a question about what was meant."""
    if decision.intent == Intent.CHAT or decision.decided_by == "gate":
        return False
    if decision.clarify is not None and decision.clarify.kind == "route":
        return False
    return bool(content_words(decision.utterance))
