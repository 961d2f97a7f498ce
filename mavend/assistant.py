"""The turn pipeline shared by `mavend say` and the daemon.

    text -> (a pending "yes"?) -> (a reminder command?) -> router -> handler -> reply -> turn log

State that spans turns lives in the database, not in this object, so it spans
processes too: a destructive act asked about by one `mavend say` is confirmed
by the next ("yes"), and "repeat" repeats the last logged reply.

Every turn is said in a session (`session_trusted` says whose word it is): memory keeps
each session's previous turn apart, and learns only from the owner's.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import tzinfo
from typing import Any

from mavend.config import Settings
from mavend.conversation import DEFAULT_SESSION, Continuation, Conversation
from mavend.conversation.corrections import changed_value
from mavend.conversation.devices import DeviceFocus, DeviceQuestion
from mavend.errors import MavendError, StorageError, storage_class, storage_reason
from mavend.handlers import (
    HandlerContext,
    Outcome,
    Reply,
    TurnHandler,
    parse_command,
    parse_forget,
)
from mavend.handlers.common import UNKNOWN_SPEAKER, ChatLlm, Clock, Embedder, TurnContext
from mavend.handlers.confirm import confirm_key, pending_op, yes_from_another_voice
from mavend.handlers.reminder_task import pending_task, task_answer
from mavend.language.disfluency import said_once
from mavend.language.script import ENGLISH_ONLY, EnglishOnlyNotice
from mavend.lists import parse_list_command, split_list_command
from mavend.lists.focus import ListFocus
from mavend.lists.handler import ListHandler
from mavend.lists.repair import repaired_add
from mavend.memory import Memory, voice_scope
from mavend.memory.engine import ROUTED_PLAN, LastTurn
from mavend.replies import joined_replies, with_notice
from mavend.router.decision import Decision, Intent, Slots, Stage
from mavend.router.grammar import normalize
from mavend.router.joined import two_commands, two_questions
from mavend.router.negation import instead_said, reminder_rewrite, said_again, withdrawal
from mavend.router.several import each_time
from mavend.scheduler import ScheduledAct
from mavend.state.store import Store
from mavend.undo import UndoHandler, UndoJournal, parse_undo

log = logging.getLogger(__name__)

# Whole utterances (normalized) that answer a pending "Do you want me to ...?".
_YES = "yes|yeah|yep|yup|yes please|sure|do it|go ahead|confirm|ok|okay|yes do it|please do"
_NO = "no|nope|don't|dont|do not|cancel|stop|never mind|nevermind|no thanks|forget it|abort"
# The same answers in Russian ("Cancel all 2 timers? Say yes" is answered "да").
_YES += "|да|ага|угу|да давай|давай|да пожалуйста|подтверждаю|конечно|ок|окей"
_NO += "|нет|неа|не надо|не нужно|отмена|стоп|нет спасибо|не"
YES = frozenset(_YES.split("|"))
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
NO = frozenset(_NO.split("|"))


def session_trusted(settings: Settings, session: str) -> bool:
    """Whether what is said in `session` is the owner's word, for memory to learn from.

    The local session (this box's microphone, stdin, `mavend say`, and the D-Bus API: the
    session bus is the user's own, and whatever can call it can write the database too)
    is; a satellite is when its `[[satellites]]` entry says `trusted = true`; a Wyoming
    client (`wyoming:<host>[:<conversation>]`, Home Assistant) and anything else never is.
    """
    if session == DEFAULT_SESSION:
        return True
    kind, _, name = session.partition(":")
    if kind == "satellite":
        return any(s.name == name and s.trusted for s in settings.satellites)
    return False


@dataclass(frozen=True)
class Turn:
    utterance: str
    decision: Decision | None
    reply: Reply
    duration_ms: float
    speaker: str = ""  # TurnContext.speaker: an enrolled voice, "unknown", or ""

    def to_json(self) -> dict[str, Any]:
        return {
            "utterance": self.utterance,
            "decision": self.decision.to_json() if self.decision else None,
            "reply": self.reply.to_json(),
            "duration_ms": round(self.duration_ms, 1),
            "speaker": self.speaker,
        }


class Assistant:
    """One turn at a time: route, handle, log. Thread-safe."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        router: Any,
        *,
        clock: Clock,
        tz: tzinfo,
        embedder: Callable[[], Embedder | None] | None = None,
        chat_llm: Callable[[], ChatLlm | None] | None = None,
        on_reminders_changed: Callable[[], None] = lambda: None,
    ):
        self.settings = settings
        self.store = store
        self.router = router
        grammar = getattr(router, "grammar", None)
        system_commands = [
            name.partition(".")[2]
            for name in (grammar.intent_names if grammar is not None else [])
            if name.startswith("system.")
        ]
        self.ctx = HandlerContext(
            settings=settings,
            store=store,
            tz=tz,
            clock=clock,
            embedder=embedder or router_embedder(router),
            chat_llm=chat_llm or router_chat_llm(router),
            on_reminders_changed=on_reminders_changed,
            system_commands=system_commands,
        )
        self.handler = TurnHandler(self.ctx)
        self.lists = ListHandler(self.ctx)
        self.list_focus = ListFocus(self.ctx, self.lists)
        self.device_focus = DeviceFocus(self.ctx)
        self.device_question = DeviceQuestion(self.ctx)
        self.handler.rooms["lists"] = (Intent.NOTE, self.lists.confirmed)
        self.memory = Memory(settings.memory, store, acts=settings.acts, clock=self.ctx.now)
        # Follow-ups and ellipsis: the previous turn's topic, per session (in the database).
        self.conversation = Conversation(settings, store, clock=self.ctx.now)
        # What each turn changed, per session: "what did you just do?", "undo that".
        self.undo = UndoHandler(self.ctx, UndoJournal(store, tz))
        self._lock = threading.Lock()
        self._english_only = EnglishOnlyNotice()
        self._previous: LastTurn | None = None  # this turn's session's previous turn
        self._memory = self.memory  # the turn's: an enrolled voice's own (`_memory_of`)

    def handle_text(
        self, text: str, *, session: str = DEFAULT_SESSION, context: TurnContext | None = None
    ) -> Turn:
        """One turn. `session`: where it was said from; an ellipsis ("and on friday?")
        continues only the previous turn of the same session. `context`: the room and
        satellite it was heard in (None: this box's microphone, `[audio] room`)."""
        started = time.monotonic()
        # Undecodable bytes (a stray byte in argv or on stdin) arrive as lone
        # surrogates, which SQLite cannot store: they become U+FFFD here.
        text = LONE_SURROGATE.sub("\ufffd", text)
        speaker = context.speaker if context is not None else ""
        with self._lock:
            self.ctx.speaker = speaker  # the handlers' view of who is asking, this turn
            self._memory = self._memory_of(speaker)
            decision: Decision | None = None
            # Taken by any turn of the session: a correction reaches only the turn just
            # before it, said in the same place.
            self._previous = self.memory.take_previous(session)
            try:
                decision, reply = self._turn(text, session, context)
                self.device_focus.keep(session, decision, reply)
            except StorageError as exc:
                log.error("turn failed: %s", exc)
                reply = Reply(
                    f"Sorry, I couldn't save that: {storage_reason(exc)}. Nothing was saved.",
                    Outcome.FAILED,
                    storage_class(exc),
                    {"error": str(exc)},
                )
            except MavendError as exc:
                log.error("turn failed: %s", exc)
                reply = Reply(f"Sorry, that failed: {exc}", Outcome.FAILED, type(exc).__name__)
            except Exception:  # a bug in one handler must not end the daemon
                log.exception("turn failed")
                reply = Reply("Sorry, something went wrong.", Outcome.FAILED, "internal")
            finally:
                self.ctx.speaker = ""
            if self._english_only.due(text, session):
                reply = with_notice(reply, ENGLISH_ONLY)
            duration = (time.monotonic() - started) * 1000.0
            self._log(text, decision, reply, duration, speaker)
            self._keep_changes(session, text, reply)
        return Turn(text, decision, reply, duration, speaker)

    def run_scheduled(self, act: ScheduledAct) -> str:
        """Run a scheduled act whose time has come (the daemon's reminder delivery), between
        turns, and say how it went."""
        what = self.handler.timed.words_for(act)
        with self._lock:
            try:
                return self.handler.acts.run_scheduled(act.fn, act.args, act.room, what)
            except MavendError as exc:
                log.error("scheduled act %s failed: %s", act.fn, exc)
                return f"I couldn't {what}: {exc}"

    # the pipeline --------------------------------------------------------
    def _turn(
        self, text: str, session: str, context: TurnContext | None = None
    ) -> tuple[Decision | None, Reply]:
        utterance = text.strip()
        said = self._plain(utterance)
        if (once := said_once(said)) != said:  # the command written twice by the recogniser
            utterance = said = once
        if fixed := said_again(said, self.ctx.now()):  # "... for ten minutes no fifteen"
            utterance = said = fixed
        if not said:
            return None, Reply("I didn't catch anything.", Outcome.ASKED)
        # Every handler learns the session: a question asked here is answered only here.
        context = replace(context or TurnContext(), session=session)
        confirmed = self._confirmation(utterance, said, session)
        if confirmed is not None:
            self.conversation.remember(session, confirmed[0], said)
            return confirmed
        chose = self._device_choice(utterance, said, session, context)
        if chose is not None:  # "the study one", after "Which fan: ...?"
            self.conversation.remember(session, chose[0], said)
            return chose
        answered = self._task_answer(utterance, said, session)
        if answered is not None:  # "the washing", after "What should I remind you about?"
            self.conversation.remember(session, answered, said)
            return answered, self.handler.handle(answered, context)
        days = self.handler.reminders.days(said, session)
        if days is not None:  # "don't wake me up on weekends": the series keeps its weekdays
            decision = self._stage0(utterance, Intent.REMINDER, said, "reminder-command")
            self.conversation.remember(session, decision, said)
            return decision, self.handler.command(days, context)
        withdrawn = self._withdrawn(utterance)
        if withdrawn is not None:  # "don't ...", "never mind": nothing runs, at any stage
            self.conversation.remember(session, withdrawn, said)
            negated = withdrawn.slots.fn == "withdrawn" and withdrawn.slots.args.get(
                "kind") == "negated"
            instead = instead_said(withdrawn.slots.text) if negated else ""
            if repaired := repaired_add(said):  # "add eggs to the list no wait oat milk"
                return self._turn(repaired, session, context)
            if negated and (ended := parse_command(said)) and ended.kind == "alarm":
                # "don't wake me up tomorrow": that day's alarm skipped (it said "OK, I
                # won't wake you up tomorrow", and the alarm rang)
                decision = self._stage0(utterance, Intent.REMINDER, said, "reminder-command")
                return decision, self.handler.command(ended, context)
            if instead and parse_command(instead) is not None:
                # "don't set it for 6, set it for 7": the reminder command wanted runs ("set
                # it for 7" moves the alarm just set); the words taken back run nothing. (A
                # device said instead is the cascade's; anything else is said again.)
                return self._turn(instead, session, context)
            if negated and (late := self.undo.already_done(session, withdrawn.slots.text)):
                # "don't cancel it" just after it was cancelled: the cancel is taken back
                return replace(withdrawn, decided_by="negation:undo"), late
            return withdrawn, self.handler.handle(withdrawn, context)
        undo = parse_undo(said)
        if undo is not None:  # "what did you just do?", "undo that": this session's turns
            decision = self._stage0(utterance, Intent.SYSTEM, said, "undo-command")
            return decision, self.undo.command(undo, session)
        # "don't forget to call mum at five" is a reminder; "set another one for 3
        # minutes" after a timer, a timer
        rewritten = reminder_rewrite(said) or self.handler.reminders.another_like(said, session)
        if rewritten is not None:
            utterance = said = rewritten
        grammar = getattr(self.router, "grammar", None)
        if referred := self.device_focus.follow_up(said, session, grammar):
            utterance = said = referred  # "turn it off" after "turn on the bedroom lamp"
        several = each_time(grammar, said, self.ctx.now()) if grammar is not None else None
        if several is not None:  # "set an alarm for 6 and 6 30": two alarms
            return self._in_turn(several, session, context)
        # A reminder command, or a bare "cancel the dentist" when a dentist reminder is set.
        command = (parse_command(said) or self.handler.reminders.claim(said)
                   or self.handler.reminders.timer_minutes(said, session)
                   or self.handler.reminders.time_again(said, session))
        if command is not None and (fresh := self.handler.reminders.set_instead(command, said)):
            return self._turn(fresh, session, context)  # "set the alarm for 8", none set
        if command is not None:
            decision = self._stage0(utterance, Intent.REMINDER, said, "reminder-command")
            self.conversation.remember(session, decision, said)
            return decision, self.handler.command(command, context)
        # The raw words too: their commas separate items ("coffee, sugar and tea bags").
        listed = (self.list_focus.taken_back(said, session)  # "take that off", after an add
                  or parse_list_command(said, utterance=utterance)
                  or self.list_focus.follow_up(said, utterance, session))
        if listed is not None:  # "add eggs and milk to the shopping list"
            intent = Intent.QUERY if listed.is_question else Intent.NOTE
            decision = self._stage0(utterance, intent, said, "list-command")
            self.conversation.remember(session, decision, said)
            reply = self.lists.command(listed, context)
            self.list_focus.keep(session, listed, reply)
            return decision, reply
        split = split_list_command(said, utterance=utterance)
        if split is not None:  # "add eggs to the list and set a timer": both, in order
            listed_reply = self.lists.command(split.command, context)
            self.list_focus.keep(session, split.command, listed_reply)  # "i bought the eggs"
            decision, other = self._turn(split.rest_naming_items(), session, context)
            first, second = (listed_reply, other) if split.list_first else (other, listed_reply)
            return decision, joined_replies(first, second)
        both = two_commands(grammar, said, self.ctx.now()) if grammar is not None else None
        if both is None and grammar is not None:  # "what's the weather and what time is it"
            both = two_questions(grammar, getattr(self.router, "answers", None), said)
        if both is not None:  # "wake me at 6:30 and remind me to take my pills at 8"
            return self._in_turn(both, session, context)
        forget = parse_forget(said)
        if forget is not None:  # "forget everything": asks first, like any bulk erasure
            decision = self._stage0(utterance, Intent.SYSTEM, said, "forget-command")
            return decision, self.handler.forget.command(forget, context)
        if changed := changed_value(said, self.handler.notes.kept):
            # "change the wifi password to X" with one kept: "the wifi password is now X"
            decision = self._stage0(utterance, Intent.NOTE, changed, "note-change")
            return decision, self.handler.handle(decision, context)
        decision, reply, continued = self._routed(utterance, said, session, context)
        self.device_question.keep(session, reply)
        rebuilt = continued.text if continued is not None else ""
        self.conversation.remember(session, decision, said, rebuilt=rebuilt)
        return decision, reply

    def _routed(
        self, utterance: str, said: str, session: str, context: TurnContext | None = None
    ) -> tuple[Decision, Reply, Continuation | None]:
        """Route (through memory, when on), continue an ellipsis, handle."""
        if self.memory.enabled:
            # Habits and repairs: may settle or repair the route, learns from the reply.
            previous, self._previous = self._previous, None  # the first plan's only
            plan = self._memory.plan(
                self.router,
                utterance,
                session=session,
                previous=previous,
                # A voice [voices] confirm_from = "enrolled" turns away teaches nothing.
                trusted=session_trusted(self.settings, session)
                and self.ctx.voice_refusal("learn") is None,
            )
            continued = None
            # A correction, a clarify answer or a repair is the user's own word about
            # the previous turn or this phrasing: it is never read as an ellipsis.
            if plan.kind == ROUTED_PLAN and plan.repair is None:
                own = plan.raw or plan.decision  # the router's judgment, not a habit's
                continued = self.conversation.continue_turn(
                    self.router, session, utterance, said, own
                )
                if continued is not None:
                    plan = replace(plan, decision=continued.decision)
            reply = self.handler.handle(plan.decision, context)
            self._memory.observe(plan, reply.outcome, reply.error_class)
            return plan.decision, reply, continued
        decision = self.router.route(utterance)
        continued = self.conversation.continue_turn(
            self.router, session, utterance, said, decision
        )
        if continued is not None:
            decision = continued.decision
        return decision, self.handler.handle(decision, context), continued

    def _memory_of(self, speaker: str) -> Memory:
        """The memory a turn reads and teaches: an enrolled voice's own habits and
        repairs ([voices] enabled), else the household's."""
        if not self.settings.voices.enabled or speaker in ("", UNKNOWN_SPEAKER):
            return self.memory
        return self.memory.in_scope(voice_scope(self.memory.scope, speaker))

    def _confirmation(
        self, utterance: str, said: str, session_id: str
    ) -> tuple[Decision, Reply] | None:
        """A yes/no to this session's pending destructive act; any other turn of the
        session drops the question (turns of other sessions leave it alone)."""
        session = self.ctx.session
        key = confirm_key(session_id)
        entry = session.get_with_expiry(key)
        if entry is None:
            return None
        pending, expires = entry
        # "yes, yes" / "no no no": people repeat themselves (and Whisper sometimes does).
        said = " ".join(dict.fromkeys(said.split()))
        taken = session.pop(key)  # atomic: only one turn can take it
        if taken is None or (said not in YES and said not in NO):
            return None  # the user moved on: the question lapses, this turn routes normally
        act = pending_op(pending) == "act"
        decision = _settled(
            utterance,
            said,
            "confirmation",
            fn=str(pending.get("act", "")) if act else "",
            args=dict(pending.get("args") or {}) if act else {},
        )
        if said in NO:
            return decision, Reply("OK, I won't.")
        if yes_from_another_voice(pending, self.ctx.speaker, self.settings.voices.confirm_from):
            return decision, Reply(
                "That yes has to come from the one who asked. Nothing was done.",
                Outcome.REFUSED,
                "another_voice",
            )
        if expires is not None and expires < self.ctx.now().timestamp():
            timeout = self.settings.acts.confirm_timeout_s
            return decision, Reply(
                f"Too late: a yes counts for {timeout:g} seconds. Ask again if you still want it.",
                Outcome.REFUSED,
                "confirm_expired",
            )
        intent, reply = self.handler.confirmed(pending)
        return replace(decision, intent=intent), reply

    def _device_choice(
        self, utterance: str, said: str, session: str, context: TurnContext
    ) -> tuple[Decision, Reply] | None:
        """The answer to this session's "Which fan?": the act again, on the one it names."""
        grammar = getattr(self.router, "grammar", None)
        picked = self.device_question.answer(said, session, grammar)
        if picked is None:
            return None
        decision = _settled(utterance, said, "choice", *picked)
        return decision, self.handler.handle(decision, context)

    def _task_answer(self, utterance: str, said: str, session: str) -> Decision | None:
        """This session's answer to "What should I remind you about?", unless the words
        are a request of their own (a command, "never mind"); any turn drops the question."""
        when = pending_task(self.ctx, session)
        grammar = getattr(self.router, "grammar", None)
        if when is None or withdrawal(said) is not None or (
                grammar is not None and grammar.match(said) is not None):
            return None
        return task_answer(utterance, said, when)

    @staticmethod
    def _stage0(utterance: str, intent: Intent, said: str, decided_by: str) -> Decision:
        """The decision of a command read by an exact pattern before the router."""
        return Decision(
            utterance=utterance,
            stage=Stage.GRAMMAR,
            intent=intent,
            confidence=1.0,
            slots=Slots(text=said),
            decided_by=decided_by,
        )

    def _withdrawn(self, utterance: str) -> Decision | None:
        withdrawn = getattr(self.router, "withdrawn", None)
        if withdrawn is not None:
            return withdrawn(utterance, self.router.grammar.match(utterance))
        return None

    def _in_turn(
        self, requests: Sequence[str], session: str, context: TurnContext | None
    ) -> tuple[Decision | None, Reply]:
        """Several requests said as one, each its own turn, in order: the last decision,
        and every reply."""
        decision, reply = self._turn(requests[0], session, context)
        room = _device_room(decision)
        for request in requests[1:]:
            # "close the curtains in the living room and open the blinds": the blinds
            # there, not every blind in the house (a room the half names is its own)
            here = replace(context or TurnContext(), room=room) if room and self._a_device_act(
                request) else context
            decision, more = self._turn(request, session, here)
            reply = joined_replies(reply, more)
        return decision, reply

    def _a_device_act(self, request: str) -> bool:
        grammar = getattr(self.router, "grammar", None)
        found = grammar.match(self._plain(request)) if grammar is not None else None
        act = self.ctx.settings.acts.get(found.name) if found is not None else None
        return act is not None and act.kind == "device" and not found.slots.get("room")

    def _plain(self, utterance: str) -> str:
        grammar = getattr(self.router, "grammar", None)
        said = normalize(utterance)
        return normalize(grammar.strip_wake_word(said)) if grammar is not None else said

    def _log(
        self, text: str, decision: Decision | None, reply: Reply, duration: float, speaker: str
    ) -> None:
        try:
            self.ctx.turns.add(
                self.ctx.now(),
                text,
                intent=str(decision.intent) if decision else "",
                decision=self._logged(decision) if decision else None,
                reply=reply.text,
                outcome=str(reply.outcome),
                error_class=reply.error_class,
                duration_ms=duration,
                speaker=speaker,
            )
        except StorageError as exc:
            log.error("the turn could not be logged: %s", exc)


    def _logged(self, decision: Decision) -> dict[str, Any]:
        """The decision as the turn log keeps it: `route --json`'s fields, each stage's
        time and, when the LLM was asked, where it ran ("local" or the remote "openai")."""
        logged = decision.to_json()
        if decision.stage_ms:
            logged["stage_ms"] = {k: round(v, 2) for k, v in decision.stage_ms.items()}
            if "llm" in decision.stage_ms:
                logged["llm"] = self.settings.llm.backend
        return logged

    def _keep_changes(self, session: str, text: str, reply: Reply) -> None:
        try:
            self.undo.record(session, text, reply)
        except StorageError as exc:
            log.error("what the turn changed could not be recorded: %s", exc)


def _device_room(decision: Decision | None) -> str:
    """The room a device command named ("... in the living room"), or ""."""
    if decision is None or decision.intent is not Intent.ACT:
        return ""
    return str(decision.slots.args.get("room", ""))


def router_embedder(router: Any) -> Callable[[], Embedder | None]:
    """The classifier's sentence embedder (loaded on first use), or None without one.

    Of a joined embedder (USE and e5), its first part, USE: recall's floor was measured on
    USE's cosines (mavend/handlers/recall.py). e5 puts any two English sentences near
    0.7, and joined at its weight it lifted "what's my credit score" to 0.73 against "i
    took my blood pressure pills": every stored row was recalled for every question."""

    def get() -> Embedder | None:
        classifier = getattr(router, "classifier", None)
        if classifier is None:
            return None
        try:
            embedder = getattr(classifier, "embedder", None)
        except Exception as exc:  # a missing model: notes are kept without embeddings
            log.warning("no sentence embedder: %s", exc)
            return None
        parts = getattr(embedder, "parts", None)
        return parts[0] if parts else embedder

    return get


def router_chat_llm(router: Any) -> Callable[[], ChatLlm | None]:
    """The router's LLM for free replies (loaded on first use), or None when off."""

    def get() -> ChatLlm | None:
        llm = getattr(router, "llm", None)
        if llm is None:
            return None
        try:
            return llm if callable(getattr(llm, "complete_chat", None)) else None
        except Exception as exc:
            log.warning("no LLM for replies: %s", exc)
            return None

    return get


def open_assistant(
    settings: Settings,
    *,
    router: Any = None,
    clock: Clock | None = None,
    on_reminders_changed: Callable[[], None] = lambda: None,
) -> Assistant:
    """The real wiring: the database, the user's clock and the router (models load lazily)."""
    from mavend.clock import system_clock, user_timezone

    tz = user_timezone(settings.reminders.timezone)
    clock = clock or system_clock(tz)
    store = Store.open(settings)
    try:
        if router is None:
            from mavend.router import build_available_router

            router, problems = build_available_router(settings, clock=clock)
            for problem in problems:
                log.warning("routing without a model: %s. Grammar commands still work.", problem)
    except BaseException:
        store.close()
        raise
    return Assistant(
        settings, store, router, clock=clock, tz=tz, on_reminders_changed=on_reminders_changed
    )


def _settled(
    utterance: str, said: str, decided_by: str, fn: str = "", args: dict[str, str] | None = None
) -> Decision:
    """An act decided by an answer to this session's own question (a yes, a choice)."""
    return Decision(
        utterance=utterance,
        stage=Stage.GRAMMAR,
        intent=Intent.ACT,
        confidence=1.0,
        slots=Slots(fn=fn, args=dict(args or {}), has_fn=bool(fn), text=said),
        decided_by=decided_by,
    )
