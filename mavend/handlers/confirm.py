"""A pending yes/no: destructive acts and bulk operations ask first.

One question per session at a time, kept in the session table (so `mavend say yes` in
another process can answer it) with an expiry of `[acts] confirm_timeout_s`. The
session's next turn either answers it (a whole-utterance yes or no, `assistant.YES` /
`assistant.NO`) or drops it; a yes said in another session never reaches it, and with
`[voices] confirm_from = "enrolled"` neither does a yes in another voice.

What waits is named by `op`: "act" (an allowlisted act and its checked arguments), or
"<room>.<operation>" for a bulk one ("reminders.cancel", "lists.clear", ...), with a
JSON `payload` the room that asked reads back when the yes comes (`TurnHandler.confirmed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mavend.handlers.common import UNKNOWN_SPEAKER as UNKNOWN
from mavend.handlers.common import HandlerContext, Outcome, Reply

CONFIRM_KEY = "confirm"


def confirm_key(session: str = "") -> str:
    """Where a session's pending yes/no is kept: a "yes" said in another room (another
    satellite, a Wyoming client) never confirms it, and their turns never drop it."""
    return CONFIRM_KEY if session in ("", "local") else f"{CONFIRM_KEY}:{session}"


def pending_op(pending: Mapping[str, Any]) -> str:
    """The operation a stored question waits on ("act" for rows written before ops)."""
    return str(pending.get("op") or "act")


def yes_from_another_voice(pending: Mapping[str, Any], speaker: str, confirm_from: str) -> bool:
    """With `confirm_from = "enrolled"`, a yes said in another enrolled voice than the
    one that asked does not count. A yes no voice was found in does: a bare "yes" is too
    short to tell a voice by (it scores under the threshold against every voiceprint,
    tests/test_voices_turns.py), and the question was asked, in this session, moments
    before, by the voice that may ask it."""
    asker = str(pending.get("speaker") or "")
    if confirm_from != "enrolled" or not asker or speaker in ("", asker):
        return False
    return speaker != UNKNOWN


def op_room(op: str) -> str:
    """'reminders.cancel' -> 'reminders'; 'act' -> 'act'."""
    return op.partition(".")[0]


class Confirmations:
    """Asks a session's yes/no question and keeps what waits on it."""

    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx

    @property
    def timeout_s(self) -> float:
        return self.ctx.settings.acts.confirm_timeout_s

    def ask(
        self,
        session: str,
        op: str,
        payload: Mapping[str, Any],
        question: str,
        *,
        room: str = "",
        data: Mapping[str, Any] | None = None,
    ) -> Reply:
        """Store the question and return it (Outcome.CONFIRM). `question` is the words
        before "Say yes within N seconds." ("Cancel all 3 timers?").

        With `[voices] confirm_from = "enrolled"`, a voice no enrollment matches is
        refused here and nothing waits: what asks first is what a stranger may not do.
        The question remembers who asked; only their yes runs it."""
        refused = self.ctx.voice_refusal("do that")
        if refused is not None:
            return refused
        now = self.ctx.now()
        value = {"op": op, **dict(payload), "asked_at": now.timestamp(), "room": room,
                 "speaker": self.ctx.speaker}
        expires = now.timestamp() + self.timeout_s
        self.ctx.session.put(confirm_key(session), value, expires_ts=expires)
        return Reply(
            f"{question} Say yes within {self.timeout_s:g} seconds.",
            Outcome.CONFIRM,
            data={"confirm": op, **dict(data or {})},
        )

    def drop(self, session: str) -> bool:
        """Forget the session's question; True when there was one."""
        return self.ctx.session.pop(confirm_key(session)) is not None
