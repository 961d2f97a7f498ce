"""The device a follow-up means without naming it (`DeviceFocus`), and the answer to
"Which fan?" (`DeviceQuestion`): "turn it off", "close them", "make it
brighter", or a bare "brighter" / "a bit dimmer please" right after a device was worked.

    "turn on the bedroom lamp"  then  "make it brighter"  -> make the bedroom lamp brighter
    "open the kitchen blinds"   then  "close them"        -> close the kitchen blinds
    "turn on the office lights" then  "a bit dimmer"      -> make the office lights a bit dimmer

The focus is the devices of this session's last home act that was done, kept for the
conversation's continuation window (`[conversation] continuation_s`). The follow-up is
only ever rewritten into words: the result must be a home command the grammar knows, and
it runs through the router, the allowlist and the act's checks like any other. Words the
grammar already reads ("make it warmer": the room's heating) are never rewritten.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mavend.handlers.common import HandlerContext, Outcome, Reply
from mavend.home.devices import chosen
from mavend.router.around import command_around_a_time
from mavend.router.decision import Decision, Intent
from mavend.router.grammar import CommandGrammar, GrammarMatch, normalize

KEY = "device_focus:"  # + session: the words that name the devices just worked
CHOICE_KEY = "device_choice:"  # + session: a "Which fan?" question's devices

# The devices of the last act, as an object: "it", "them", "that one" ...
_PRONOUN = re.compile(r"\b(?:it|them|that one|this one|those|these|that|this)\b")
# A comparison with nothing to compare: the devices just worked, a step that way.
_BARE_STEP = re.compile(
    r"^(?:(?:a |just a )?(?:bit|little|touch|tad|notch) |slightly |much |even |a lot )?"
    r"(?P<way>brighter|dimmer|darker|warmer|cooler|louder|quieter|softer|faster|slower)"
    r"(?: (?:please|still|again|than that))*$"
)
# The acts whose devices a follow-up may mean: the home's own (generated device acts).
# An answer to "Which heating?" is short and names one: "the living room one", "turn
# down the one in the office". Two requests joined, or a long one, are a new request
# ("leave the kitchen light on but turn the ceiling one off in the living room" turned
# the living room's heating down).
_NOT_AN_ANSWER = re.compile(r"\b(?:but|and|then|also|instead|leave|keep)\b")
MAX_ANSWER_WORDS = 8
_HOME_ACTS = re.compile(r"^(?:device_\w+|light_set|lights_on|lights_off)$")


def referent(decision: Decision, reply: Reply) -> str:
    """How the devices of a done home act are said again ("the bedroom lamp", "the
    lights in the kitchen"), or "" when the turn left nothing to point back at."""
    data: Mapping[str, Any] = reply.data if isinstance(reply.data, dict) else {}
    act = str(data.get("act") or "")
    devices = [str(d) for d in data.get("devices") or []]
    if reply.outcome != Outcome.DONE or not _HOME_ACTS.match(act) or not devices:
        return ""
    if act in ("device_which", "device_read", "device_state"):
        return ""  # a question read them; "turn them off" after it is ambiguous enough
    if len(devices) == 1:
        return f"the {devices[0]}"
    args = decision.slots.args if decision.slots is not None else {}
    room = str(args.get("room") or "")
    word = "lights" if act.startswith("lights_") else str(args.get("device") or "")
    if not word:
        return ""
    if not room:
        return f"all the {word}" if act.startswith("lights_") else f"the {word}"
    return f"the {word}" if room in word else f"the {word} in the {room}"


def with_referent(said: str, named: str) -> str:
    """`said` with the devices put in for its pronoun (or in front of a bare "brighter"),
    or "" when it has neither."""
    if (step := _BARE_STEP.match(said)) is not None:
        return f"make {named} {step.group(0)}"
    if _PRONOUN.search(said) is None:
        return ""
    return _PRONOUN.sub(named, said, count=1)


def _the_box_or_the_device(match: GrammarMatch) -> bool:
    """ "turn it up" / "turn it down" read alone as the box's own volume: right after a
    lamp, a fan or the heating was worked, "it" is that device (it turned the volume up
    and left the lamp as it was)."""
    return match.intent is Intent.SYSTEM and match.name in ("louder", "quieter")


class DeviceFocus:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx
        self._followed: dict[str, str] = {}  # session -> the focus its turn just used

    def keep(self, session: str, decision: Decision | None, reply: Reply) -> None:
        """After a done home act: its devices are in focus for the continuation window.
        Any other act, or a home act that did nothing, ends it; other turns leave it.
        A follow-up keeps the focus it used: "brighter" works the one kitchen light that
        dims, and "turn them off" after it is still every kitchen light."""
        used = self._followed.pop(session, "")
        if decision is None or decision.intent is not Intent.ACT:
            return
        key = KEY + session
        named = used if used and reply.outcome == Outcome.DONE else referent(decision, reply)
        if not named:
            self.ctx.session.pop(key)
            return
        expires = self.ctx.now().timestamp() + self.ctx.settings.conversation.continuation_s
        self.ctx.session.put(key, {"named": named}, expires_ts=expires)

    def follow_up(self, said: str, session: str, grammar: CommandGrammar | None) -> str:
        """The words `said` stands for, with the devices in focus named, when those words
        are a home command the grammar knows and `said` alone is not; else ""."""
        if grammar is None:
            return ""
        focus = self.ctx.session.get(KEY + session, now_ts=self.ctx.now().timestamp())
        if not isinstance(focus, dict) or not focus.get("named"):
            return ""
        said = normalize(said)
        rewritten = with_referent(said, str(focus["named"]))
        if not rewritten:
            return ""
        if (alone := grammar.match(said)) is not None and not _the_box_or_the_device(alone):
            return ""
        found = grammar.match(rewritten)
        if found is None or found.intent is not Intent.ACT:
            return ""
        self._followed[session] = str(focus["named"])
        return rewritten


class DeviceQuestion:
    """ "Which fan: the one in the loft or the study?" and its answer ("the study one")."""

    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx

    def keep(self, session: str, reply: Reply) -> None:
        """After the question: what the answer picks from, for the continuation window."""
        data = reply.data if isinstance(reply.data, dict) else {}
        if reply.outcome == Outcome.ASKED and data.get("choices") and data.get("act"):
            expires = self.ctx.now().timestamp() + self.ctx.settings.conversation.continuation_s
            self.ctx.session.put(CHOICE_KEY + session, data, expires_ts=expires)

    def answer(
        self, said: str, session: str, grammar: CommandGrammar | None
    ) -> tuple[str, dict[str, str]] | None:
        """The act and its arguments again, on the device the answer names; None when no
        question is open or `said` answers none. Any turn drops the question."""
        key = CHOICE_KEY + session
        # A read first: most turns follow no question, and a pop is a write transaction.
        asked = self.ctx.session.get(key, now_ts=self.ctx.now().timestamp())
        if not isinstance(asked, dict):
            return None
        self.ctx.session.pop(key)
        if grammar is not None and command_around_a_time(grammar, said, self.ctx.now()):
            return None  # "the sun is in my eyes in the bedroom": a request of its own
        if len(said.split()) > MAX_ANSWER_WORDS or _NOT_AN_ANSWER.search(said):
            return None
        name = chosen(asked.get("choices") or [], said)
        if not name:
            return None
        args = {k: v for k, v in (asked.get("args") or {}).items() if k != "room"}
        return str(asked["act"]), {**args, "device": name}
