"""The conversation's state between turns: the topic an ellipsis continues, per session.

One topic per session id, in the database's session table (like a pending "yes" and
memory's previous turn), so it spans processes: `mavend say "what's on my calendar
tomorrow"` then `mavend say "and on friday?"` continues, in-process or through the
daemon. A session is one place a person talks from: the local microphone, the local
`mavend say` and the D-Bus API are one (`DEFAULT_SESSION`: the same person at the
same box); a satellite will get its own id, so two rooms never continue each other.

The turn pipeline (`mavend.assistant`) calls `continue_turn` after routing and
`remember` after the handler; the decisions themselves come from `ellipsis` (pure).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from mavend.answers.followup import carried_on
from mavend.config import Settings
from mavend.conversation.corrections import corrected_note, is_note
from mavend.conversation.ellipsis import (
    Rebuilt,
    TimeFinder,
    Topic,
    continues,
    on_day_at_clock,
    parse_fragment,
    rebuild,
    topic_of,
    when_of,
)
from mavend.language.reminder_kinds import REQUEST_WORDS, reminder_kind
from mavend.language.timeparse import find_time
from mavend.router.decision import Clarify, Decision, Intent, Source, Stage
from mavend.smalltalk import asked_for, one_more
from mavend.state.records import SessionState
from mavend.state.store import Store

log = logging.getLogger(__name__)

DEFAULT_SESSION = "local"
KEY_PREFIX = "conversation.topic:"
# Who decided a continued turn: the daemon's continuation path, never the router.
DECIDED_BY = "continuation"
# Turns that leave no topic of their own and keep the previous one as it was: the
# answer to a pending "Do you want me to ...?" (the act asked about stays the topic).
_KEEPS_TOPIC = frozenset({"confirmation"})
# Turns that end the topic: a reminder command ("cancel my reminders") is no request
# an ellipsis could continue.
_ENDS_TOPIC = frozenset({"reminder-command"})


@dataclass(frozen=True)
class Continuation:
    """A continued turn: its decision, and the request in words it was rebuilt as."""

    decision: Decision
    text: str


class Conversation:
    """Continuation state for every session, over the shared session table."""

    def __init__(self, settings: Settings, store: Store, *, clock: Callable[[], datetime]):
        self.settings = settings
        self.window_s = settings.conversation.continuation_s
        self.clock = clock
        self.state = SessionState(store)

    # before the handler --------------------------------------------------------------
    def continue_turn(
        self, router: Any, session: str, utterance: str, said: str, decision: Decision
    ) -> Continuation | None:
        """The turn rebuilt from the session's previous one, or None when it stands alone.

        `decision` is the router's own for `said` (the utterance, wake word stripped):
        a strong one is never rewritten (see `ellipsis.continues`). Never raises: a
        failure here routes the turn as said."""
        try:
            return self._continue(router, session, utterance, said, decision)
        except Exception:
            log.exception("the continuation failed; the turn stands alone")
            return None

    def _continue(
        self, router: Any, session: str, utterance: str, said: str, decision: Decision
    ) -> Continuation | None:
        now = self.clock()
        topic = self.topic(session, now)
        if topic is None:
            return None
        if is_note(topic.intent) and 0 <= now.timestamp() - topic.at <= self.window_s:
            note = corrected_note(topic.task, said, marked=topic.intent == Intent.NOTE)
            if note:  # "actually it's under the red pot now"
                again = Rebuilt(Intent(topic.intent), note)  # a note stays one, a fact one
                continued = self._decide(router, utterance, topic, again)
                return Continuation(continued, note)
        if (summed := self._sum_carried_on(router, utterance, topic, said, now)) is not None:
            return summed
        if (again := self._one_more(router, utterance, topic, said, now)) is not None:
            return again
        finder = _finder(now)
        if topic.asked and topic.intent == Intent.REMINDER:
            # The answer to "What time should the alarm go off?" is read as an alarm's
            # time: "for 7 15" alone is no time, "set an alarm for 7 15" is.
            finder = _finder_after(now, REQUEST_WORDS[reminder_kind(topic.text)])
        fragment = parse_fragment(said, finder)
        grammar = getattr(router, "grammar", None)
        if not continues(
            topic,
            fragment,
            decision,
            now_ts=now.timestamp(),
            window_s=self.window_s,
            is_command=lambda text: grammar is not None and grammar.match(text) is not None,
        ):
            return None
        assert fragment is not None  # continues() is False without one
        rebuilt = rebuild(topic, fragment)
        if rebuilt is None:
            return None
        continued = self._decide(router, utterance, topic, rebuilt)
        log.info("%r continues %r as %r (%s)", said, topic.text, rebuilt.text, continued.intent)
        return Continuation(continued, rebuilt.text)

    def _sum_carried_on(
        self, router: Any, utterance: str, topic: Topic, said: str, now: datetime
    ) -> Continuation | None:
        """"and times two", "round that" right after a sum: worked out from its result.
        Only a question the calc skill reads (mavend.answers.followup); a request that
        merely says "it" is routed as said."""
        if not topic.sum or not 0 <= now.timestamp() - topic.at <= self.window_s:
            return None
        asked = carried_on(topic.sum, said)
        if asked is None:
            return None
        decision = router.decide_as(asked, Intent.QUERY, confidence=topic.confidence,
                                    decided_by=DECIDED_BY)
        decision = replace(decision, utterance=utterance, continued=True,
                           source=Source.GENERAL, source_anchored=False)
        log.info("%r carries on the sum %r as %r", said, topic.sum, asked)
        return Continuation(decision, asked)

    def _one_more(
        self, router: Any, utterance: str, topic: Topic, said: str, now: datetime
    ) -> Continuation | None:
        """"another one" right after a joke or a fun fact: the same request again (the
        teller skips what it told lately)."""
        if not 0 <= now.timestamp() - topic.at <= self.window_s or not one_more(said):
            return None
        if topic.intent not in (Intent.CHAT, Intent.QUERY) or asked_for(topic.text) is None:
            return None
        decision = router.decide_as(topic.text, Intent(topic.intent),
                                    confidence=topic.confidence, decided_by=DECIDED_BY)
        decision = replace(decision, utterance=utterance, continued=True)
        if decision.intent is Intent.QUERY:
            decision = replace(decision, source=Source.GENERAL, source_anchored=False)
        return Continuation(decision, topic.text)

    def _decide(self, router: Any, utterance: str, topic: Topic, rebuilt: Rebuilt) -> Decision:
        """Stage 2 for the rebuilt words, exactly as for a routed turn: the act and its
        values are checked against the allowlist, the time resolved from the words."""
        decision = router.decide_as(
            rebuilt.text,
            rebuilt.intent,
            confidence=topic.confidence,
            decided_by=DECIDED_BY,
            fn=rebuilt.fn,
            args=dict(rebuilt.args),
        )
        # The utterance stays the words as heard; `continued` tells handlers that the
        # slots (text included) come from the previous turn's topic.
        decision = replace(decision, utterance=utterance, continued=True)
        if rebuilt.intent is Intent.QUERY:
            # The destination the previous turn's decider named. Never anchored: only a
            # grammar matching the words said may anchor one; `personal` only narrows.
            decision = replace(
                decision,
                source=Source(topic.source),
                personal=decision.personal or topic.personal,
                source_anchored=False,
            )
        if rebuilt.intent is not Intent.REMINDER:
            return decision
        kept = when_of(rebuilt)
        if kept is not None and not decision.slots.has_time:
            return _with_time(decision, kept)
        if rebuilt.keep_clock and decision.slots.time is not None:
            at = on_day_at_clock(decision.slots.time, rebuilt.keep_clock)
            return _with_time(decision, at, now=self.clock())
        return decision

    # after the handler ---------------------------------------------------------------
    def remember(
        self, session: str, decision: Decision | None, said: str, *, rebuilt: str = ""
    ) -> None:
        """Keep what this turn leaves for the next one to continue. Never raises."""
        try:
            self._remember(session, decision, said, rebuilt)
        except Exception:  # the turn is done: a lost topic costs only an ellipsis
            log.exception("the conversation state could not be saved")

    def _remember(self, session: str, decision: Decision | None, said: str, rebuilt: str) -> None:
        now = self.clock()
        key = KEY_PREFIX + session
        if decision is None or decision.decided_by in _ENDS_TOPIC:
            self.state.pop(key)
            return
        if decision.decided_by in _KEEPS_TOPIC:
            self._touch(key, now)
            return
        topic = topic_of(
            decision,
            rebuilt or said,
            _finder(now),
            act_slots=self._act_slots,
            at=now.timestamp(),
        )
        if topic is None:
            if decision.clarify is not None and decision.clarify.kind == "route":
                return  # "sorry, should I ...?": the topic before it stays, unrefreshed
            self.state.pop(key)
            return
        self.state.put(key, topic.to_json(), expires_ts=now.timestamp() + self.window_s)

    def _touch(self, key: str, now: datetime) -> None:
        topic = Topic.from_json(self.state.get(key))
        if topic is not None:
            fresh = replace(topic, at=now.timestamp())
            self.state.put(key, fresh.to_json(), expires_ts=now.timestamp() + self.window_s)

    def topic(self, session: str, now: datetime | None = None) -> Topic | None:
        """The session's topic, if one is still within the window."""
        now = now or self.clock()
        return Topic.from_json(self.state.get(KEY_PREFIX + session, now_ts=now.timestamp()))

    def forget(self, session: str) -> None:
        self.state.pop(KEY_PREFIX + session)

    def _act_slots(self, fn: str) -> tuple[str, ...]:
        spec = self.settings.acts.get(fn)
        return tuple(spec.slots) if spec is not None else ()


def _finder(now: datetime) -> TimeFinder:
    return lambda text: find_time(text, now)


def _finder_after(now: datetime, request: str) -> TimeFinder:
    """Times read as said after `request` (the question's own request): the phrase found
    is always in the text itself, as `request` holds no time words."""
    return lambda text: find_time(text, now) or find_time(f"{request} {text}", now)


def _with_time(decision: Decision, when: datetime, *, now: datetime | None = None) -> Decision:
    """A rebuilt reminder at a time from the previous turn: its absolute time (resolved
    at capture; the fragment named none: "and dad too"), or its clock time on the day
    the fragment named. A time already past is asked about, as for any reminder."""
    slots = replace(decision.slots, time=when, has_time=True)
    clarify = decision.clarify
    if clarify is not None and clarify.kind == "slot":
        clarify = None  # the question was "when?": the previous time answers it
    if now is not None and when <= now:
        clarify = Clarify(
            f"{when:%H:%M on %A} has already passed. When should I remind you?",
            (Intent.REMINDER,),
            "slot",
        )
    stage = Stage.SLOTS if clarify is None else Stage.GATED
    return replace(decision, slots=slots, clarify=clarify, stage=stage)
