"""The router cascade: grammar, then a route decider, then slots, then the gate.

Pure given its seams: a command grammar, a classifier (over an embedder), an
optional LLM and a clock. No audio, no daemon, no I/O of its own, so it is
unit-testable in milliseconds with a deterministic embedder and a scripted LLM.

The routing policy (which decider's answer counts) lives in
`mavend.router.policy` and nowhere else.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol

from mavend.language.timeparse import bare_today, find_time, lasts
from mavend.router.around import after_reason, said_instead
from mavend.router.decision import Clarify, Decision, Intent, Slots, Source, Stage
from mavend.router.gate import UNSUPPORTED_QUESTION, clarify_question, is_fragment
from mavend.router.grammar import CommandGrammar, GrammarMatch, normalize, strip_politeness
from mavend.router.negation import retimed, said_again, withdrawal
from mavend.router.personal import judge_personal, may_share_personal
from mavend.router.policy import ClassifierResultLike, Pick, PolicyName, RoutePolicy
from mavend.router.slots import SlotExtractor, SlotHints
from mavend.router.statement import asks_whether, is_statement, logs_done
from mavend.smalltalk import is_feeling

log = logging.getLogger(__name__)

# A while said with a hedge between "for" and its length ("for like twenty minutes"); the
# length itself stands in as "\0".
_HEDGED_FOR = re.compile(
    r"\bfor (?:(?:like|about|around|roughly|approximately|maybe|say|just|only|the next|next"
    r"|another|a further)\s+)*\0"
)
# Asking for quiet, which for a while is the sound muted: "be quiet", "keep it down", "hush"
# (matched once the politeness around it is off: grammar.strip_politeness).
_QUIET = re.compile(
    r"(?:(?:be|keep|stay|go) (?:quiet|silent)|keep it down|hush|shush|shut up|silence"
    r"|no (?:sound|noise)|quiet)"
)

# Beyond this many characters an utterance is not a spoken request; the
# deciders see a bounded prefix (the gate still sees the whole thing).
MAX_UTTERANCE_CHARS = 1000


class LlmRouteLike(Protocol):
    intent: Intent
    confidence: float
    fn: str
    args: dict[str, str]
    time_phrase: str
    key: str
    value: str
    text: str
    source: str  # queries: where the answer lives (a Source value), "" if none named


class RouteLlm(Protocol):
    """The LLM seam: raises an exception on any failure (the cascade falls through)."""

    def route(self, utterance: str, *, context: str = "") -> LlmRouteLike: ...


class IntentClassifier(Protocol):
    def classify(self, text: str) -> ClassifierResultLike: ...


Clock = Callable[[], datetime]

# How many of the bank's nearest examples the LLM is shown for a tie-break.
TIE_BREAK_EXAMPLES = 8


@dataclass
class RouteTrace:
    """Per-stage timings of one turn, for the evaluation harness and logs."""

    stage_ms: dict[str, float] = field(default_factory=dict)
    llm_error: str = ""

    def timed(self, stage: str, started: float) -> None:
        self.stage_ms[stage] = (time.perf_counter() - started) * 1000.0


class Router:
    def __init__(
        self,
        grammar: CommandGrammar,
        slots: SlotExtractor,
        *,
        classifier: IntentClassifier | None = None,
        llm: RouteLlm | None = None,
        policy: RoutePolicy | None = None,
        clock: Clock,
        answers: Callable[[str], str | None] | None = None,
        snap: bool = False,
    ):
        self.grammar = grammar
        self.slots = slots
        self.classifier = classifier
        self.llm = llm
        self.policy = policy or RoutePolicy()
        self.clock = clock
        # mavend.answers' recognizer: the skill whose shape a question has ("calc",
        # "clock", "live", ...), or None. Deterministic and cheap, like a grammar.
        self.answers = answers
        # Stage 0 again for a command one misheard word off the grammar (router.snap).
        self.snap = snap

    def warm_up(self) -> None:
        """Load the models now (the daemon does this before it reports ready)."""
        for component in (self.classifier, self.llm):
            warm = getattr(component, "warm_up", None)
            if warm is not None:
                warm()

    def route(self, utterance: str, *, context: str = "") -> Decision:
        decision, trace = self.route_traced(utterance, context=context)
        return replace(decision, stage_ms=dict(trace.stage_ms)) if trace.stage_ms else decision

    def decide_as(
        self,
        utterance: str,
        intent: Intent,
        *,
        confidence: float,
        decided_by: str,
        fn: str = "",
        args: dict[str, str] | None = None,
    ) -> Decision:
        """`utterance` as `intent`, named by someone else (memory: a habit, a repair, the
        user's own correction). Stages 2-3 run as for a routed turn: `fn` and `args` are
        hints the slot extractor checks against the allowlist, never trusted."""
        text = self.grammar.strip_wake_word(utterance.strip())[:MAX_UTTERANCE_CHARS]
        hints = SlotHints(fn=fn, args=dict(args or {}))
        now = self.clock()
        return self._with_slots(utterance, text, intent, confidence, decided_by, now, hints)

    def _with_slots(
        self,
        utterance: str,
        text: str,
        intent: Intent,
        confidence: float,
        decided_by: str,
        now: datetime,
        hints: SlotHints,
        named: tuple[str, ...] = (),
    ) -> Decision:
        """Stage 2 (slots, checked against the allowlist) and the slot question, if any.

        `named`: the sources the deciders named, the deciding one first. The decision
        takes the first (a query's source is the decider's, never guessed from the
        text); every one of them counts toward `personal`, which only narrows."""
        result = self.slots.extract(intent, text, now, hints)
        query = intent is Intent.QUERY
        decision = Decision(
            utterance=utterance,
            stage=Stage.SLOTS,
            intent=intent,
            confidence=confidence,
            slots=result.slots,
            source=Source(named[0]) if query and named else Source.UNKNOWN,
            # A chat reply is general knowledge too: a chat turn that asks about the
            # user is judged by its words (personal.py), behind the same boundary.
            personal=intent in (Intent.QUERY, Intent.CHAT) and judge_personal(text, named, intent),
            decided_by=decided_by,
        )
        if result.question:
            return _with_clarify(decision, Clarify(result.question, (intent,), "slot"))
        return decision

    def route_traced(self, utterance: str, *, context: str = "") -> tuple[Decision, RouteTrace]:
        trace = RouteTrace()
        now = self.clock()
        started = time.perf_counter()
        if fixed := said_again(normalize(utterance), now):
            # "set a timer for ten minutes no fifteen": routed as said the second time
            log.info("heard %r as %r", utterance, fixed)
            utterance = fixed
        match = self.grammar.match(utterance)
        trace.timed("grammar", started)
        # A withdrawn or negated command runs nothing, whichever stage would have taken
        # it ("set a timer for ten minutes, never mind" matches the timer grammar).
        withdrawn = self.withdrawn(utterance, match, now)
        if withdrawn is not None:
            return withdrawn, trace
        if match is not None:
            return self._from_grammar(utterance, match, now), trace
        timed = self._timed_command(utterance, now)
        if timed is not None:
            trace.timed("grammar", started)
            return timed, trace
        reasoned = after_reason(self.grammar, utterance)
        if reasoned is not None:
            trace.timed("grammar", started)
            decision = self._from_grammar(utterance, reasoned, now)
            return replace(decision, decided_by="grammar:after-reason"), trace
        text = self.grammar.strip_wake_word(utterance.strip())
        computed = self._computed(utterance, text)
        if computed is not None:
            trace.timed("answers", started)
            return computed, trace
        if is_feeling(text):  # "i'm so tired today": a kind word back, not a note kept
            trace.timed("grammar", started)
            return _feeling(utterance, text), trace
        snapped = self.grammar.snap(utterance) if self.snap else None
        if snapped is not None:
            trace.timed("snap", started)
            log.info("heard %r as %r", snapped.heard, snapped.meant)
            decision = self._from_grammar(utterance, snapped.match, now)
            return replace(decision, decided_by="grammar:snap"), trace
        if is_fragment(text):
            return _clarify(utterance, Intent.CHAT, 0.0, (), "gate"), trace
        decision = self._from_deciders(utterance, text[:MAX_UTTERANCE_CHARS], now, context, trace)
        return decision, trace

    def withdrawn(
        self, utterance: str, match: GrammarMatch | None = None, now: datetime | None = None
    ) -> Decision | None:
        """The decision for a withdrawn or negated command (mavend.router.negation), or
        None. A system command the grammar knows ("never mind" is stop) stays itself. A
        self-repair whose second version is a whole command the grammar knows ("turn on
        the kitchen light no wait turn on the hall light") is that command; one that is a
        fragment ("... no wait ten minutes") still runs nothing and asks again."""
        if match is not None and match.intent is Intent.SYSTEM:
            return None
        text = normalize(self.grammar.strip_wake_word(normalize(utterance)))
        taken_back = withdrawal(text)
        if taken_back is None:
            return None
        if taken_back.kind == "repair" and taken_back.then:
            again = self.grammar.match(taken_back.then)
            if again is not None and withdrawal(taken_back.then) is None:
                decision = self._from_grammar(taken_back.then, again, now or self.clock())
                return replace(decision, decided_by="grammar:repair")
            # "set a timer for 5 minutes actually no make it 10": the first version with
            # the time said again ("... for 10 minutes")
            fixed = retimed(taken_back.first, taken_back.then, now or self.clock())
            again = self.grammar.match(fixed) if fixed else None
            if again is not None and withdrawal(fixed) is None:
                decision = self._from_grammar(fixed, again, now or self.clock())
                return replace(decision, decided_by="grammar:repair")
        if taken_back.kind == "negated" and (instead := said_instead(self.grammar,
                                                                     taken_back.what)):
            # "don't turn the lamp on, turn it off": what is wanted instead runs
            decision = self._from_grammar(instead[0], instead[1], now or self.clock())
            return replace(decision, decided_by="grammar:repair")
        return Decision(
            utterance=utterance,
            stage=Stage.GRAMMAR,
            intent=Intent.SYSTEM,
            confidence=1.0,
            slots=Slots(
                fn="withdrawn",
                has_fn=True,
                args={"kind": taken_back.kind},
                text=taken_back.what,
            ),
            decided_by="negation",
        )

    def _timed_command(self, utterance: str, now: datetime) -> Decision | None:
        """"lock the screen in ten minutes", "mute for an hour": an act the grammar knows,
        with a time around it, to come or to last. The decision is the act's, for the whole
        words, so that the handler sees the time (mavend.handlers.timed): a later act is not
        run now, and a while's end is not dropped. "Be quiet for twenty minutes" asks for
        the sound off for a while: that is mute, not stop."""
        said = normalize(self.grammar.strip_wake_word(normalize(utterance)))
        found = find_time(said, now)
        if found is None:
            return None
        phrase = normalize(found.phrase)
        if bare_today(found):
            # "i'm cold today", "turn the heating up today": now, not at 09:00 (the day's
            # default hour, which made "OK, I'll i'm cold at 09:00 today")
            rest = " ".join(f" {said} ".replace(" today ", " ", 1).split())
            match = self.grammar.match(rest) if rest else None
            if match is not None and match.intent is Intent.ACT:
                return self._from_grammar(utterance, match, now)
            return None
        if found.when <= now:
            return None
        lasting = lasts(found)
        if found.kind == "duration" and not phrase.startswith("for "):
            # "for like twenty minutes", "for about an hour": the hedge is the while's too
            hedged = _HEDGED_FOR.search(said.replace(phrase, "\0"))
            if hedged is None:
                return None  # "ten minutes" alone: no act with a time around it
            phrase = hedged.group(0).replace("\0", phrase)
        if f" {phrase} " not in f" {said} ":
            return None
        rest = " ".join(f" {said} ".replace(f" {phrase} ", " ", 1).split())
        match = self.grammar.match(rest) if rest else None
        if match is not None and match.intent is Intent.ACT:
            return replace(self._from_grammar(utterance, match, now), decided_by="grammar:timed")
        if lasting and _QUIET.fullmatch(strip_politeness(rest)):
            return Decision(
                utterance=utterance,
                stage=Stage.GRAMMAR,
                intent=Intent.ACT,
                confidence=1.0,
                slots=Slots(fn="mute", has_fn=True, text=rest),
                decided_by="grammar:timed",
            )
        return None

    def _computed(self, utterance: str, text: str) -> Decision | None:
        """A question mavend works out or looks up itself (mavend.answers): a sum, a unit,
        the time in a city, days until a date, a live fact from a configured source. It
        is a query whose answer never comes from a model: the LLM cannot guess it."""
        skill = self.answers(text) if self.answers is not None else None
        if skill is None:
            return None
        source = Source.CLOCK if skill in ("clock", "dates", "yearfacts") else Source.GENERAL
        return Decision(
            utterance=utterance,
            stage=Stage.GRAMMAR,
            intent=Intent.QUERY,
            confidence=1.0,
            slots=Slots(text=text.strip()),
            source=source,
            personal=judge_personal(text, (source,)),
            decided_by=f"answers:{skill}",
        )

    def slots_filled(self, utterance: str) -> bool:
        """Is `utterance` a stage-0 command that takes a time, ends on that time, and has
        it resolved with nothing left to ask? ("set a timer for two hours", "remind me to
        call mum at five", "what's on my calendar tomorrow"). The front end lets such a
        command end after a shorter pause than free speech (`grammar_slot_silence_ms`).

        Conservative on purpose, since a cut is worse than a wait: the time must be the
        last words (a task after it could go on), and a reminder's time must name a time
        of day or a span (after a bare "tomorrow" an "at nine" often follows), a timer's
        a span with its unit."""
        match = self.grammar.match(utterance)
        if match is None or not set(match.slots) & _TIME_SLOTS or set(match.slots) - _TIME_SLOTS:
            return False
        reminders = match.intent is Intent.QUERY and match.source is Source.REMINDERS
        if match.intent is not Intent.REMINDER and not reminders:
            return False
        now = self.clock()
        decision = self._from_grammar(utterance, match, now)
        found = self.slots.time_of(match.text, now, _grammar_hints(match))
        if decision.clarify is not None or found is None:
            return False
        if match.intent is Intent.REMINDER and found.kind == "date":
            return False
        if match.name == "timer" and found.kind != "duration":  # "for two" ... minutes?
            return False
        if match.name == "remind" and not decision.slots.text:  # remind me ... to what?
            return False
        return normalize(match.text).endswith(normalize(found.phrase))

    # stage 0 -------------------------------------------------------------
    def _from_grammar(self, utterance: str, match: GrammarMatch, now: datetime) -> Decision:
        hints = _grammar_hints(match)
        result = self.slots.extract(match.intent, match.text, now, hints)
        clarify = Clarify(result.question, (match.intent,), "slot") if result.question else None
        slots = result.slots
        query = match.intent is Intent.QUERY
        if query and match.slots.get("question"):  # "search the web for {question}"
            slots = replace(slots, text=match.slots["question"])
        return Decision(
            utterance=utterance,
            stage=Stage.GRAMMAR,
            intent=match.intent,
            confidence=1.0,
            slots=slots,
            clarify=clarify,
            # The grammar's own metadata, and nothing else: a match that names no
            # destination ("set a timer ...") anchors nothing.
            source=match.source if query else Source.UNKNOWN,
            source_anchored=query and match.anchored,
            personal=query and judge_personal(slots.text or match.text, (match.source,)),
            decided_by="grammar",
        )

    # stages 1-3 ----------------------------------------------------------
    def _from_deciders(
        self, utterance: str, text: str, now: datetime, context: str, trace: RouteTrace
    ) -> Decision:
        classified = self._classify(text, trace)
        routed = None
        if self.policy.needs_llm(classified):
            # Memory's recalled lines and a tie-break's examples (which include the
            # user's corrections) are stored data: a model server sees them only with
            # [llm] share_personal = true (router.personal.may_share_personal).
            shown = (
                self._llm_context(text, classified, context)
                if may_share_personal(self.llm)
                else ""
            )
            routed = self._ask_llm(text, shown, trace)
        picked = self.policy.pick(routed, classified)
        if picked is None:
            return _clarify(utterance, Intent.CHAT, 0.0, (), "gate")
        if (picked.intent is Intent.QUERY or picked.out_of_scope) and is_statement(text):
            # "my dentist is doctor patel", "our plumber is dave from pipeworks": a value
            # to keep, neither a question nor something out of reach (statement.py).
            picked = replace(
                picked,
                intent=Intent.NOTE,
                decided_by=f"{picked.decided_by}+statement",
                out_of_scope=False,
            )
        if (picked.intent in (Intent.ACT, Intent.QUERY) or picked.out_of_scope) \
                and logs_done(text):
            # "i descaled the coffee machine this morning": a thing done, to log (it was
            # "I can't do that: it isn't on my list of allowed actions")
            # The sentence form decides, not the score the deciders gave another intent.
            picked = replace(picked, intent=Intent.FACT, decided_by=f"{picked.decided_by}+done",
                             confidence=max(picked.confidence, self.policy.clarify_threshold),
                             out_of_scope=False)
        if picked.intent is Intent.ACT and asks_whether(text):
            # "are all the switches turned on upstairs?" shares its words with the command
            # to turn them on: a question about a state is answered, never acted on.
            picked = replace(
                picked, intent=Intent.QUERY, decided_by=f"{picked.decided_by}+question"
            )
        intent, confidence, decided_by = picked.intent, picked.confidence, picked.decided_by
        candidates = picked.ranking[:3]
        if picked.out_of_scope:
            return _decline(utterance, picked)
        if confidence < self.policy.clarify_threshold:
            return _clarify(utterance, intent, confidence, candidates, decided_by)

        started = time.perf_counter()
        hints = (
            _hints_from_llm(routed)
            if routed is not None and routed.intent == intent
            else SlotHints()
        )
        named = _named_sources(decided_by, routed, classified)
        decision = self._with_slots(
            utterance, text, intent, confidence, decided_by, now, hints, named
        )
        trace.timed("slots", started)
        return decision

    def _llm_context(
        self, text: str, classified: ClassifierResultLike | None, context: str
    ) -> str:
        """The LLM's per-turn context: memory recall, plus for a tie-break the bank's
        examples nearest to the utterance among the two tied intents."""
        if classified is None or self.policy.name is not PolicyName.TIE_BREAK:
            return context
        pair = self.policy.tie(classified)
        near = getattr(self.classifier, "examples_near", None)
        if pair is None or near is None:
            return context
        examples = near(text, [str(i) for i in pair], TIE_BREAK_EXAMPLES)
        shown = "; ".join(f'"{t}" is {label}' for t, label in examples)
        return f"{context} similar requests: {shown}".strip()

    def _classify(self, text: str, trace: RouteTrace) -> ClassifierResultLike | None:
        if self.classifier is None:
            return None
        started = time.perf_counter()
        try:
            return self.classifier.classify(text)
        except Exception:  # a broken embedder must not break the turn
            log.exception("classifier failed; routing without it")
            return None
        finally:
            trace.timed("classifier", started)

    def _ask_llm(self, text: str, context: str, trace: RouteTrace) -> LlmRouteLike | None:
        if self.llm is None:
            return None
        started = time.perf_counter()
        try:
            return self.llm.route(text, context=context)
        except Exception as exc:  # any LLM failure falls through to the classifier
            trace.llm_error = f"{type(exc).__name__}: {exc}"
            log.warning("LLM route failed, falling back to the classifier: %s", trace.llm_error)
            return None
        finally:
            trace.timed("llm", started)


_TIME_SLOTS = frozenset({"when", "task"})


def _grammar_hints(match: GrammarMatch) -> SlotHints:
    return SlotHints(
        fn=match.name if match.intent in (Intent.ACT, Intent.SYSTEM) else "",
        args=match.slots,
        time_phrase=match.slots.get("when", ""),
        time_from_grammar=True,
        task=_whole_task(match.text, match.slots.get("task", "")),
    )


# "remind me i have a meeting at 3": the clause keeps its subject.
_CLAUSE_SUBJECTS = frozenset(
    {"i", "i'm", "i've", "i'll", "we", "we're", "we've", "we'll", "it's", "there's"}
)


def _whole_task(text: str, task: str) -> str:
    """The template's {task} as whole words of `text`: hassil may start a capture inside
    a word ("i" + "t's bin day" for "it's bin day"), and a clause after "remind me" keeps
    its subject ("i have a meeting", not "have a meeting")."""
    at = text.rfind(task) if task else -1
    if at < 0:
        return task
    start = text.rfind(" ", 0, at) + 1  # back to the start of the word the capture began in
    before = text[:start].split()
    if len(before) >= 2 and before[-1] in _CLAUSE_SUBJECTS and before[-2] == "me":
        start -= len(before[-1]) + 1
    return text[start:]


def _named_sources(
    decided_by: str, routed: LlmRouteLike | None, classified: ClassifierResultLike | None
) -> tuple[str, ...]:
    """The sources the deciders named for a query, the one that decided first."""
    from_llm = routed.source if routed is not None and routed.intent is Intent.QUERY else ""
    # The classifier's source head judges every utterance, whatever its own top intent.
    from_classifier = getattr(classified, "source", "") if classified is not None else ""
    first, second = (
        (from_llm, from_classifier) if "llm" in decided_by else (from_classifier, from_llm)
    )
    return tuple(s for s in (first, second) if s)


def _hints_from_llm(routed: LlmRouteLike) -> SlotHints:
    return SlotHints(
        fn=routed.fn,
        fn_from_model=True,
        args=dict(routed.args),
        time_phrase=routed.time_phrase,
        key=routed.key,
        value=routed.value,
        text=routed.text,
    )


def _clarify(
    utterance: str,
    intent: Intent,
    confidence: float,
    candidates: tuple[Intent, ...],
    decided_by: str,
) -> Decision:
    return Decision(
        utterance=utterance,
        stage=Stage.GATED,
        intent=intent,
        confidence=confidence,
        slots=Slots(text=utterance.strip()),
        clarify=Clarify(clarify_question(candidates), candidates),
        decided_by=decided_by,
    )


def _decline(utterance: str, picked: Pick) -> Decision:
    """An out-of-scope turn: nothing is written or run; the reply says so and asks."""
    candidates = picked.ranking[:2]
    return Decision(
        utterance=utterance,
        stage=Stage.GATED,
        intent=picked.intent,
        confidence=picked.confidence,
        slots=Slots(text=utterance.strip()),
        clarify=Clarify(UNSUPPORTED_QUESTION, candidates),
        decided_by=picked.decided_by,
    )


def _with_clarify(decision: Decision, clarify: Clarify) -> Decision:
    return replace(decision, stage=Stage.GATED, clarify=clarify)


def _feeling(utterance: str, text: str) -> Decision:
    """A feeling said on its own (mavend.smalltalk): chat, answered without the model."""
    return Decision(
        utterance=utterance,
        stage=Stage.GRAMMAR,
        intent=Intent.CHAT,
        confidence=1.0,
        slots=Slots(text=text.strip()),
        decided_by="smalltalk:feeling",
    )
